"""The MCP client as an OAuth 2.1 client, end to end against tests/oauth_server.py.

Spec: basic/authorization (2025-11-25): #authorization-server-discovery,
#client-registration-approaches, #scope-selection-strategy, #step-up-authorization-flow,
#resource-parameter-implementation, #authorization-code-protection, #token-handling;
2026-07-28 basic/authorization (iss check, application_type, issuer-keyed credentials);
2025-03-26 basic/authorization#fallbacks-for-servers-without-metadata-discovery.
"""
import threading
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest

requests = pytest.importorskip("requests", reason="the HTTP tests need requests")
pytest.importorskip("requests", reason="the HTTP client needs requests")

from oauth_server import AuthServer  # noqa: E402

from mcp_ref import Client, Context, Server  # noqa: E402
from mcp_ref.auth import (AuthorizationDenied, AuthorizationError, ClientCredentialsProvider,  # noqa: E402
                          DiscoveryError, InMemoryStorage, InsufficientScope, JwtBearerGrantProvider,
                          OAuthClientProvider, RegistrationError)
from mcp_ref.transports.http.server.app import start_http  # noqa: E402

REDIRECT = "http://localhost:3000/callback"


def protected_server() -> Server:
    server = Server("protected", version="1.0")

    @server.tool
    def whoami(ctx: Context) -> str:
        return f"{ctx.subject} {' '.join(sorted(ctx.scopes))}"

    @server.tool
    def delete_all() -> str:
        return "deleted"
    return server


@pytest.fixture
def world():
    """``world(**as_switches) -> (auth_server, mcp_handle)``; MCP options via ``mcp={...}``."""
    made = []

    def build(mcp=None, **switches):
        switches.setdefault("scopes_supported", ["mcp", "admin", "offline_access"])
        auth = AuthServer(**switches)
        options = {"resource_metadata": {"authorization_servers": [auth.issuer], "scopes_supported": ["mcp"]},
                   "required_scopes": {"*": ["mcp"], "tool:delete_all": ["admin"]}}
        options.update(mcp or {})
        handle = start_http(protected_server(), ("127.0.0.1", 0), auth=auth.verify, **options)
        made.append((auth, handle))
        return auth, handle
    build.extra = []
    yield build
    for handle in build.extra:
        handle.shutdown()
    for auth, handle in made:
        handle.shutdown()
        auth.close()


def user_client(auth, **options):
    options.setdefault("client_name", "auth tests")
    return OAuthClientProvider(redirect_uri=REDIRECT, user_agent=auth.user_agent, **options)


def refused(url, provider, error, match):
    """Connecting fails with ``error``; the client is closed either way."""
    client = Client.http(url, auth=provider)
    try:
        with pytest.raises(error, match=match):
            client.connect()
    finally:
        client.close()


def text(result):
    return result.content[0].text


@pytest.mark.req("AUTH-1", "AUTH-7", "AUTH-15", "AUTH-16", "AUTH-18", "AUTH-38", "AUTH-39", "AUTH-40",
                  "AUTH-41", "AUTH-42", "AUTH-43", "AUTH-47", "AUTH-48", "AUTH-49", "AUTH-64", "AUTH-65",
                  "AUTH-67", "AUTH-68", "AUTH-70", "AUTH-76", "AUTH-77", "AUTH-83", "AUTH-85", "AUTH-97")
def test_end_to_end_discovery_registration_code_token_step_up_refresh(world):
    auth, handle = world()
    provider = user_client(auth)
    with Client.http(handle.url, auth=provider) as client:
        assert text(client.call_tool("whoami")) == "alice mcp offline_access"
        [registration] = auth.requests_to("/register")
        assert registration["application_type"] == "native"            # a loopback redirect
        assert registration["redirect_uris"] == [REDIRECT] and registration["client_name"] == "auth tests"
        assert registration["token_endpoint_auth_method"] == "none"
        [authorize] = auth.requests_to("/authorize")
        assert authorize["resource"] == handle.url                      # RFC 8707, the canonical URI
        assert authorize["code_challenge_method"] == "S256" and len(authorize["code_challenge"]) == 43
        assert authorize["scope"] == "mcp offline_access"               # challenge scope + offline_access
        assert authorize["state"] and authorize["response_type"] == "code" and authorize["redirect_uri"] == REDIRECT
        [code_grant] = auth.requests_to("/token")
        assert code_grant["grant_type"] == "authorization_code" and code_grant["resource"] == handle.url
        assert code_grant["code_verifier"] and code_grant["_authorization"] is None
        assert code_grant["redirect_uri"] == REDIRECT
        # Step-up: delete_all needs admin; the new request asks the union of the scopes.
        assert text(client.call_tool("delete_all")) == "deleted"
        assert auth.authorizations == 2
        assert auth.requests_to("/authorize")[-1]["scope"] == "mcp offline_access admin"
        assert text(client.call_tool("whoami")) == "alice admin mcp offline_access"
        # Expiry: the server refuses the token; the refresh token gets a new one, no user.
        old_refresh = provider.storage.get_tokens(provider.issuer, provider.resource)["refresh_token"]
        auth.expire_all()
        assert text(client.call_tool("whoami")) == "alice admin mcp offline_access"
        refresh = auth.requests_to("/token")[-1]
        assert refresh["grant_type"] == "refresh_token" and refresh["resource"] == handle.url
        assert auth.authorizations == 2
        new_refresh = provider.storage.get_tokens(provider.issuer, provider.resource)["refresh_token"]
        assert new_refresh != old_refresh and old_refresh not in auth.refresh_tokens   # rotated
    assert "access_token" not in repr(provider) and new_refresh not in repr(provider.storage)


@pytest.mark.req("AUTH-48", "AUTH-49", "AUTH-50", "AUTH-51", "AUTH26-36")
def test_the_token_reaches_the_get_stream_and_the_delete(world):
    auth, handle = world()
    refusals, targets = [], []
    authenticate = handle.app.guard.authenticate

    def spying(target, authorization):
        outcome = authenticate(target, authorization)
        refusals.append(getattr(outcome, "status", None))
        targets.append(target)
        return outcome
    handle.app.guard.authenticate = spying
    # A legacy session (2026-07-28 has no session, no GET stream and no DELETE).
    with Client.http(handle.url, auth=user_client(auth), protocol_version="2025-11-25") as client:
        client.list_tools()
        assert client.session.transport.get_status == 200          # the GET stream was let in
        assert handle.app.session_count == 1
    assert handle.app.session_count == 0                           # the DELETE was let in too
    assert refusals[0] == 401 and refusals[1:] == [None] * (len(refusals) - 1)
    assert not [t for t in targets if "access_token" in t or "?" in t]      # the header only, never the query


def free_port():
    import socket
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.mark.req("AUTH-49", "AUTH-50")
@pytest.mark.parametrize("how", ["connect", "sse"])
def test_client_connect_and_legacy_sse_take_a_provider(world, how):
    auth, handle = world()
    provider = user_client(auth)
    if how == "sse":        # the legacy endpoints are not /mcp: the resource is the whole origin
        port = free_port()
        handle.shutdown()
        handle = start_http(protected_server(), ("127.0.0.1", port), auth=auth.verify,
                            resource_metadata={"authorization_servers": [auth.issuer],
                                               "resource": f"http://127.0.0.1:{port}"})
        world.extra.append(handle)
    if how == "connect":
        client = Client.connect(handle.url, auth=provider)
    else:
        client = Client.sse(handle.sse_url, auth=provider)
    with client:
        assert text(client.call_tool("whoami")).startswith("alice")
    assert provider.server_url == (handle.url if how == "connect" else handle.sse_url)


@pytest.mark.parametrize("issuer_path, where", [("", "oauth"), ("", "oidc"), ("/tenant1", "oauth"),
                                                ("/tenant1", "oidc"), ("/tenant1", "oidc-append")])
@pytest.mark.req("AUTH-9", "AUTH-20", "AUTH-21", "AUTH-22", "AUTH26-10")
def test_authorization_server_metadata_at_each_well_known_location(world, issuer_path, where):
    auth, handle = world(issuer_path=issuer_path, metadata=where)
    with Client.http(handle.url, auth=user_client(auth)) as client:
        assert text(client.call_tool("whoami")).startswith("alice")


@pytest.mark.req("AUTH-76", "AUTH-78", "AUTH-79", "AUTH-80", "AUTH-81", "AUTH-67")
@pytest.mark.parametrize("pkce", [None, ["plain"]])
def test_no_s256_no_authorization(world, pkce):
    auth, handle = world(pkce=pkce)
    refused(handle.url, user_client(auth), DiscoveryError, "S256")
    assert auth.authorizations == 0 and not auth.requests_to("/authorize")


@pytest.mark.req("AUTH-9", "AUTH-56", "ASD26-10", "ASD26-11", "ASD26-12")
def test_metadata_claiming_another_issuer_is_refused(world):
    auth, handle = world(claimed_issuer="https://honest.example")
    refused(handle.url, user_client(auth), DiscoveryError, "issuer")
    assert auth.authorizations == 0


@pytest.mark.req("AUTH-7", "AUTH-42")
def test_resource_mismatch_is_refused_before_any_authorization_request(world):
    auth, handle = world(mcp={"resource_metadata": {"authorization_servers": ["http://127.0.0.1:1"],
                                                    "resource": "https://other.example/mcp"}})
    refused(handle.url, user_client(auth), DiscoveryError, "other.example")
    assert auth.log == []


@pytest.mark.req("AUTH-23", "AUTH-37", "AUTH26-11")
def test_pre_registered_client_secret_basic(world):
    auth, handle = world(dcr=False, clients={"pre": {"secret": "s3cret", "method": "client_secret_basic",
                                                     "redirect_uris": [REDIRECT]}})
    with Client.http(handle.url, auth=user_client(auth, client_id="pre", client_secret="s3cret")) as client:
        assert text(client.call_tool("whoami")).startswith("alice")
    [grant] = auth.requests_to("/token")
    assert grant["_authorization"].startswith("Basic ") and "client_secret" not in grant


def test_pre_registered_client_secret_post(world):
    auth, handle = world(dcr=False, auth_methods=("client_secret_post",),
                         clients={"pre": {"secret": "s3cret", "method": "client_secret_post"}})
    with Client.http(handle.url, auth=user_client(auth, client_id="pre", client_secret="s3cret")) as client:
        client.list_tools()
    [grant] = auth.requests_to("/token")
    assert grant["client_secret"] == "s3cret" and grant["_authorization"] is None


@pytest.mark.req("AUTH-5", "AUTH-23", "AUTH-24", "AUTH-25", "AUTH-29", "AUTH-36", "AUTH26-11")
def test_client_id_metadata_document_when_advertised(world):
    auth, handle = world(cimd=True)
    url = "https://client.example/mcp-client.json"
    with Client.http(handle.url, auth=user_client(auth, client_metadata_url=url)) as client:
        client.list_tools()
    assert auth.requests_to("/authorize")[0]["client_id"] == url
    assert auth.requests_to("/register") == []


@pytest.mark.req("AUTH-23", "AUTH-36", "AUTH-25", "AUTH26-11")
def test_client_id_metadata_document_not_advertised_falls_back_to_registration(world):
    auth, handle = world(cimd=False)
    with Client.http(handle.url, auth=user_client(auth, client_metadata_url="https://c.example/m.json")) as client:
        client.list_tools()
    assert len(auth.requests_to("/register")) == 1


def test_no_registration_possible_is_a_registration_error(world):
    auth, handle = world(dcr=False)
    refused(handle.url, user_client(auth), RegistrationError, "client_id")


@pytest.mark.parametrize("iss, advertise, ok", [("wrong", True, False), ("wrong", False, False),
                                                (None, True, False), (None, False, True), ("right", False, True)])
@pytest.mark.req("AUTH-67", "AUTH26-19", "AUTH26-22", "AUTH26-24", "CHG26-7")
def test_iss_in_the_authorization_response(world, iss, advertise, ok):
    auth, handle = world(iss=iss, advertise_iss=advertise)
    client = Client.http(handle.url, auth=user_client(auth))
    try:
        if ok:
            client.connect()
        else:
            with pytest.raises(AuthorizationDenied, match="iss"):
                client.connect()
            assert auth.requests_to("/token") == []                    # the code never left the client
    finally:
        client.close()


@pytest.mark.req("AUTH-67", "AUTH-85")
def test_tampered_state_is_refused(world):
    auth, handle = world()

    def tampering(url):
        redirected = urlsplit(auth.user_agent(url))
        query = {k: v[0] for k, v in parse_qs(redirected.query).items()}
        query["state"] = "forged"
        return redirected._replace(query=urlencode(query)).geturl()
    provider = OAuthClientProvider(redirect_uri=REDIRECT, user_agent=tampering)
    refused(handle.url, provider, AuthorizationDenied, "state")
    assert auth.requests_to("/token") == []


@pytest.mark.req("AUTH-67", "AUTH26-25")
def test_redirect_elsewhere_and_error_responses_are_refused(world):
    auth, handle = world()
    provider = OAuthClientProvider(redirect_uri=REDIRECT, user_agent=lambda url: "http://localhost:3000/other?code=x")
    refused(handle.url, provider, AuthorizationDenied, "redirect_uri")


@pytest.mark.req("AUTH-25", "AUTH-26", "AUTH-27", "AUTH-73", "AUTH-75")
def test_redirect_uri_must_be_https_or_localhost():
    with pytest.raises(ValueError, match="localhost"):
        OAuthClientProvider(redirect_uri="http://client.example/callback", user_agent=lambda url: url)
    for url in ("http://client.example/meta.json", "https://client.example", "https://client.example/"):
        with pytest.raises(ValueError, match="https URL with a path"):
            OAuthClientProvider(redirect_uri=REDIRECT, user_agent=lambda url: url, client_metadata_url=url)
    OAuthClientProvider(redirect_uri=REDIRECT, user_agent=lambda url: url,
                        client_metadata_url="https://client.example/meta.json")
    OAuthClientProvider(redirect_uri="https://client.example/callback", user_agent=lambda url: url)
    OAuthClientProvider(redirect_uri="http://127.0.0.1:9/cb", user_agent=lambda url: url)


@pytest.mark.req("AUTH-64", "AUTH-66")
def test_step_up_retry_limit(world):
    auth, handle = world(consent=lambda scopes: [s for s in scopes if s != "admin"])   # never grants admin
    with Client.http(handle.url, auth=user_client(auth)) as client:
        with pytest.raises(InsufficientScope, match="insufficient scope"):
            client.call_tool("delete_all")
        assert auth.authorizations == 1 + OAuthClientProvider.max_retries
        assert text(client.call_tool("whoami")).startswith("alice")      # the session lives on


@pytest.mark.req("AUTH26-47")
def test_expired_token_without_refresh_reauthorizes(world):
    auth, handle = world(refresh=False)
    with Client.http(handle.url, auth=user_client(auth)) as client:
        client.list_tools()
        auth.expire_all()
        client.list_tools()
    assert auth.authorizations == 2


def test_client_credentials_with_a_secret(world):
    auth, handle = world(clients={"robot": {"secret": "s3cret", "method": "client_secret_basic"}})
    provider = ClientCredentialsProvider("robot", client_secret="s3cret", scope="admin")
    with Client.http(handle.url, auth=provider) as client:
        assert text(client.call_tool("whoami")) == "robot admin mcp"
        assert text(client.call_tool("delete_all")) == "deleted"
    [grant] = auth.requests_to("/token")
    assert grant["grant_type"] == "client_credentials" and grant["resource"] == handle.url
    assert auth.authorizations == 0


def test_client_credentials_with_private_key_jwt(world):
    audiences = []

    def sign(audience):
        audiences.append(audience)
        return "signed-for:" + audience
    auth, handle = world(auth_methods=("private_key_jwt",), clients={"robot": {"method": "private_key_jwt"}})
    auth.client_assertion = lambda client_id, assertion: assertion == "signed-for:" + auth.issuer
    with Client.http(handle.url, auth=ClientCredentialsProvider("robot", client_assertion=sign)) as client:
        assert text(client.call_tool("whoami")) == "robot mcp"
    assert audiences == [auth.issuer]


def test_client_credentials_step_up(world):
    auth, handle = world(auth_methods=("client_secret_post",),
                         clients={"robot": {"secret": "s", "method": "client_secret_post"}})
    with Client.http(handle.url, auth=ClientCredentialsProvider("robot", client_secret="s")) as client:
        assert text(client.call_tool("delete_all")) == "deleted"
    assert [g["scope"] for g in auth.requests_to("/token")] == ["mcp", "mcp admin"]


def test_jwt_bearer_grant(world):
    auth, handle = world(assertions={"id-jag-for-carol": "carol"},
                         clients={"app": {"secret": "s", "method": "client_secret_basic"}})
    asked = []

    def assertion(issuer, resource):
        asked.append((issuer, resource))
        return "id-jag-for-carol"
    with Client.http(handle.url, auth=JwtBearerGrantProvider("app", client_secret="s", assertion=assertion)) as client:
        assert text(client.call_tool("whoami")) == "carol mcp"
    assert asked == [(auth.issuer, handle.url)]
    [grant] = auth.requests_to("/token")
    assert grant["grant_type"] == "urn:ietf:params:oauth:grant-type:jwt-bearer"


def test_refused_grant_is_a_token_error(world):
    auth, handle = world(clients={"robot": {"secret": "right", "method": "client_secret_basic"}})
    refused(handle.url, ClientCredentialsProvider("robot", client_secret="wrong"), AuthorizationError, "invalid_client")


def _legacy_world(world, **switches):
    """A 2025-03-26 server: one origin for MCP and OAuth, no protected resource metadata."""
    auth = AuthServer(metadata=switches.pop("metadata", None), **switches)
    handle = start_http(protected_server(), ("127.0.0.1", 0), auth=auth.verify, response_mode="json",
                        resource_metadata={"authorization_servers": [auth.issuer], "resource": auth.base + "/mcp"})
    auth.proxy_to = handle.base_url
    return auth, handle


@pytest.mark.parametrize("metadata", [None, "oauth"])
def test_2025_03_26_server_metadata_at_origin_or_default_endpoints(world, metadata):
    auth, handle = _legacy_world(world, default_endpoints=metadata is None, metadata=metadata)
    try:
        with Client.http(auth.base + "/mcp", auth=user_client(auth), open_get_stream=False) as client:
            assert text(client.call_tool("whoami")) == "alice "
        paths = [path for _, path, _ in auth.log]
        assert "/.well-known/oauth-protected-resource/mcp" in paths
        assert "/.well-known/oauth-authorization-server" in paths
        assert {"/register", "/authorize", "/token"} <= set(paths)
    finally:
        handle.shutdown()
        auth.close()


@pytest.mark.parametrize("claimed", ["/oauth", "https://elsewhere.example"])
def test_2025_03_26_metadata_at_the_base_url_is_taken_whatever_issuer_it_names(world, claimed):
    """No protected resource metadata: the client learned no issuer to compare with, so the
    document at the authorization base URL (the server's origin) is taken as it is, an
    issuer with a path or another one (2025-03-26 basic/authorization#authorization-base-url);
    its endpoints are used, and the credentials are kept under the authorization base URL."""
    auth, handle = _legacy_world(world, metadata="oauth", iss=None, advertise_iss=False)
    auth.claimed_issuer = auth.base + claimed if claimed.startswith("/") else claimed
    storage = InMemoryStorage()
    try:
        with Client.http(auth.base + "/mcp", auth=user_client(auth, storage=storage), open_get_stream=False) as client:
            assert text(client.call_tool("whoami")) == "alice "
        paths = [path for _, path, _ in auth.log]
        assert "/.well-known/oauth-authorization-server" in paths
        assert {"/register", "/authorize", "/token"} <= set(paths)
        assert storage.get_client(auth.base)["client_id"].startswith("dcr-")
        assert storage.get_client(auth.claimed_issuer) is None
    finally:
        handle.shutdown()
        auth.close()


def test_2025_03_26_metadata_claiming_an_issuer_does_not_reach_its_stored_credentials(world):
    """Credentials stored for an authorization server are not handed to a 2025-03-26 server
    whose metadata merely claims that issuer: it registers anew under its own base URL."""
    auth, handle = _legacy_world(world, metadata="oauth", iss=None, advertise_iss=False,
                                 claimed_issuer="https://victim.example")
    storage = InMemoryStorage()
    storage.set_client("https://victim.example", {"client_id": "victim-client", "client_secret": "victim-secret"})
    try:
        with Client.http(auth.base + "/mcp", auth=user_client(auth, storage=storage), open_get_stream=False) as client:
            client.list_tools()
        assert all("victim" not in json_text for json_text in map(repr, auth.log))
        assert len(auth.requests_to("/register")) == 1
    finally:
        handle.shutdown()
        auth.close()


def test_metadata_with_an_issuer_path_not_named_by_the_resource_metadata_is_refused(world):
    """With protected resource metadata naming the authorization server, the strict
    issuer check (RFC 8414 section 3.3) stays: an issuer with another path is refused."""
    auth, handle = world()
    auth.claimed_issuer = auth.base + "/oauth"
    refused(handle.url, user_client(auth), DiscoveryError, "issuer")
    assert auth.authorizations == 0 and not auth.requests_to("/authorize")


@pytest.mark.req("AUTH-56", "AUTH-70", "ASD26-3", "REG26-21", "CHG26-8")
def test_credentials_are_kept_per_issuer_and_shared_through_storage(world):
    auth, handle = world()
    storage = InMemoryStorage()
    with Client.http(handle.url, auth=user_client(auth, storage=storage)) as client:
        client.list_tools()
    assert storage.get_client(auth.issuer)["client_id"].startswith("dcr-")
    with Client.http(handle.url, auth=user_client(auth, storage=storage)) as client:   # a later run
        client.list_tools()
    assert auth.authorizations == 1 and len(auth.requests_to("/register")) == 1


@pytest.mark.req("REG26-21", "REG26-22", "REG26-23", "CHG26-8")
def test_pre_registered_credentials_belong_to_one_issuer():
    provider = OAuthClientProvider(redirect_uri=REDIRECT, user_agent=lambda url: url, client_id="pre")
    provider._use_issuer("https://as-one.example")
    with pytest.raises(RegistrationError, match="as-two"):
        provider._use_issuer("https://as-two.example")


@pytest.mark.req("AUTH-42", "AUTH-56", "AUTH-43")
def test_binding_and_pass_through(world):
    auth, handle = world()
    provider = user_client(auth).bind(handle.url)
    assert provider.resource == handle.url                       # the canonical server URI, until metadata says
    with pytest.raises(ValueError, match="bound"):
        provider.bind("https://elsewhere.example/mcp")
    basic = requests.auth.HTTPBasicAuth("user", "pass")          # any requests auth still passes through
    client = Client.http(handle.url, auth=basic)
    try:
        with pytest.raises(Exception, match="401"):
            client.connect()
    finally:
        client.close()


@pytest.mark.req("AUTH-49", "AUTH-56")
def test_tokens_go_to_the_bound_origin_only(world):
    auth, handle = world()
    provider = user_client(auth)
    with Client.http(handle.url, auth=provider) as client:
        client.list_tools()
    prepared = requests.Request("GET", "https://elsewhere.example/x").prepare()
    assert "Authorization" not in provider(prepared).headers


def test_loopback_user_agent_catches_the_redirect(world):
    port = free_port()
    redirect = f"http://localhost:{port}/callback"
    auth, handle = world()
    from mcp_ref.auth import LoopbackUserAgent

    def browser(url):                       # what the system browser does: follow the redirects
        threading.Thread(target=requests.get, args=(url,), kwargs={"timeout": 10}, daemon=True).start()
    provider = OAuthClientProvider(redirect_uri=redirect, user_agent=LoopbackUserAgent(redirect, open_browser=browser,
                                                                                       timeout=20))
    with Client.http(handle.url, auth=provider) as client:
        assert text(client.call_tool("whoami")).startswith("alice")
    with pytest.raises(ValueError, match="loopback"):
        LoopbackUserAgent("https://app.example.com/cb")


@pytest.mark.req("AUTH-42", "AUTH-43", "AUTH-40", "AUTH-41")
def test_the_resource_asked_for_is_the_metadata_resource_when_it_is_a_parent(world):
    """The protected resource metadata names the server's origin as the resource: the
    authorization and token requests ask for it (and the server takes the token),
    rather than the MCP endpoint's own URI."""
    auth = AuthServer(scopes_supported=["mcp"])
    port = free_port()
    origin = f"http://127.0.0.1:{port}"
    handle = start_http(protected_server(), ("127.0.0.1", port), auth=auth.verify,
                        resource_metadata={"authorization_servers": [auth.issuer], "resource": origin})
    world.extra.append(handle)
    try:
        with Client.http(handle.url, auth=user_client(auth)) as client:
            assert text(client.call_tool("whoami")).startswith("alice")
        assert auth.requests_to("/authorize")[0]["resource"] == origin
        assert auth.requests_to("/token")[0]["resource"] == origin
    finally:
        auth.close()


@pytest.mark.req("AUTH-16", "AUTH-18", "AUTH26-14")
def test_the_401_challenge_scope_is_asked_not_scopes_supported(world):
    """The endpoint needs ``mcp admin`` (its challenge says so) while its metadata lists
    only ``mcp``: the first authorization asks what the challenge names."""
    auth, handle = world(mcp={"required_scopes": {"*": ["mcp", "admin"]}})
    with Client.http(handle.url, auth=user_client(auth)) as client:
        assert text(client.call_tool("whoami")) == "alice admin mcp offline_access"
    assert [r["scope"] for r in auth.requests_to("/authorize")] == ["mcp admin offline_access"]


@pytest.mark.req("AUTH-18")
def test_a_delete_refused_for_its_token_starts_no_authorization(world):
    """Closing sends DELETE; a 401 to it ends there (the session is being left), with no
    user interaction and no refresh."""
    auth, handle = world(refresh=False)
    client = Client.http(handle.url, auth=user_client(auth), protocol_version="2025-11-25", open_get_stream=False)
    try:
        client.connect()
        client.list_tools()
        assert auth.authorizations == 1
        auth.expire_all()
    finally:
        client.close()
    assert auth.authorizations == 1
    assert handle.app.session_count == 1                   # the refused DELETE ended nothing
