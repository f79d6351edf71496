"""The MCP server as an OAuth 2.1 resource server (auth.resource_server, http_handler rule 7).

Spec: basic/authorization#access-token-usage, #token-handling, #error-handling,
#scope-challenge-handling, #authorization-server-location (RFC 9728 metadata at
the well-known URIs), security_best_practices#token-passthrough, #session-hijacking.
Driven with raw requests, so every status and header is checked as sent.
"""
import time

import pytest

requests = pytest.importorskip("requests", reason="the HTTP tests drive the server with requests")

from mcp_ref import Context, Server  # noqa: E402
from mcp_ref.auth import AccessToken, StaticTokenVerifier, parse_challenges  # noqa: E402
from mcp_ref.auth.challenge import canonical_resource, resource_covers, well_known_resource_metadata  # noqa: E402
from mcp_ref.transports.http.server.app import start_http  # noqa: E402

AS = "https://auth.example.com"
HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


def protected_server() -> Server:
    server = Server("protected", version="1.0")

    @server.tool
    def whoami(ctx: Context) -> str:
        return f"{ctx.subject} {' '.join(ctx.scopes)}"

    @server.tool
    def delete_all() -> str:
        return "deleted"
    return server


class Verifier:
    """A verifier as an application writes one: known tokens, audience as issued."""

    def __init__(self):
        self.tokens = {}

    def verify(self, token, resource):
        return self.tokens.get(token)


@pytest.fixture
def served():
    handles = []

    def start(**options):
        verifier = options.pop("verifier", None) or Verifier()
        options.setdefault("resource_metadata", {"authorization_servers": [AS], "scopes_supported": ["mcp"]})
        handle = start_http(protected_server(), ("127.0.0.1", 0), auth=verifier, response_mode="json", **options)
        handle.verifier = verifier
        handles.append(handle)
        if isinstance(verifier, Verifier):
            good = AccessToken("alice", ("mcp",), time.time() + 600, handle.url)
            verifier.tokens.update({
                "good": good,
                "admin": good._replace(scopes=("mcp", "admin")),
                "bob": AccessToken("bob", ("mcp", "admin"), None, [handle.url, "https://other.example"]),
                "expired": good._replace(expires_at=time.time() - 1),
                "elsewhere": good._replace(audience="https://other.example/mcp"),
                "no-audience": good._replace(audience=None),
            })
        return handle
    yield start
    for handle in handles:
        handle.shutdown()


def rpc(id_, method, params=None):
    message = {"jsonrpc": "2.0", "id": id_, "method": method}
    if params is not None:
        message["params"] = params
    return message


INIT = rpc(0, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                             "clientInfo": {"name": "raw", "version": "1"}})


def post(url, message, token=None, session_id=None, http=requests):
    headers = dict(HEADERS)
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    if session_id is not None:
        headers["Mcp-Session-Id"] = session_id
        headers["MCP-Protocol-Version"] = "2025-11-25"
    return http.post(url, json=message, headers=headers, timeout=10)


def open_session(url, token):
    response = post(url, INIT, token)
    assert response.status_code == 200, response.text
    session_id = response.headers["Mcp-Session-Id"]
    assert post(url, {"jsonrpc": "2.0", "method": "notifications/initialized"}, token, session_id).status_code == 202
    return session_id


def challenge(response):
    [(scheme, params)] = parse_challenges(response.headers["WWW-Authenticate"])
    assert scheme == "bearer"
    return params


@pytest.mark.req("AUTH-1", "AUTH-12", "AUTH-14", "AUTH-50", "AUTH-59", "TRN-11")
def test_no_token_gets_401_with_resource_metadata_and_scope(served):
    handle = served()
    response = post(handle.url, INIT)
    assert response.status_code == 401
    params = challenge(response)
    assert params["resource_metadata"] == f"{handle.base_url}/.well-known/oauth-protected-resource/mcp"
    assert params["scope"] == "mcp"
    assert "error" not in params                   # RFC 6750 §3.1: no error code without a token
    assert response.json()["error"]["message"].startswith("Unauthorized")
    assert requests.get(handle.url, headers={"Accept": "text/event-stream"}, timeout=10).status_code == 401
    assert requests.delete(handle.url, timeout=10).status_code == 401


@pytest.mark.parametrize("token, problem", [("nonsense", "invalid"), ("expired", "expired"),
                                            ("elsewhere", "audience"), ("no-audience", "audience")])
@pytest.mark.req("AUTH-52", "AUTH-53", "AUTH-54", "AUTH-55", "AUTH-57", "AUTH-58", "AUTH-69", "AUTH-93",
                  "AUTH-94", "AUTH-95")
@pytest.mark.req("SEC-8", "SEC-14")
def test_bad_tokens_get_401_invalid_token(served, token, problem):
    handle = served()
    response = post(handle.url, INIT, token)
    assert response.status_code == 401
    params = challenge(response)
    assert params["error"] == "invalid_token"
    assert problem in params["error_description"]
    assert params["resource_metadata"].endswith("/.well-known/oauth-protected-resource/mcp")


@pytest.mark.req("AUTH-53", "AUTH-95", "SEC-8")
def test_a_token_with_this_server_among_its_audiences_is_accepted(served):
    handle = served()
    assert post(handle.url, INIT, "bob").status_code == 200


@pytest.mark.req("AUTH-12", "AUTH-52", "AUTH-59", "AUTH-94")
def test_other_schemes_and_empty_bearer_are_refused(served):
    handle = served()
    for header in ("Basic YWxpY2U6c2VjcmV0", "Basic good", "MAC good", "Bearer", "Bearer   ", "good"):
        response = requests.post(handle.url, json=INIT, headers={**HEADERS, "Authorization": header}, timeout=10)
        assert response.status_code == 401, header
        assert "error" not in challenge(response), header    # no Bearer token given: no error code (RFC 6750 §3.1)
    response = requests.post(handle.url, json=INIT, headers={**HEADERS, "Authorization": "bEaReR good"}, timeout=10)
    assert response.status_code == 200                 # the scheme is case-insensitive (RFC 9110 §11.1)


@pytest.mark.req("AUTH-51", "AUTH-59")
def test_token_in_query_string_is_refused_even_with_a_good_header(served):
    handle = served()
    response = post(handle.url + "?access_token=good", INIT, "good")
    assert response.status_code == 400
    assert challenge(response)["error"] == "invalid_request"
    assert post(handle.url + "?access_token=", INIT, "good").status_code == 400     # even empty
    assert post(handle.url + "?other=1", INIT, "good").status_code == 200


def test_a_refused_post_keeps_the_connection_usable(served):
    handle = served()
    with requests.Session() as http:
        assert post(handle.url, INIT, http=http).status_code == 401
        assert post(handle.url, INIT, "good", http=http).status_code == 200


@pytest.mark.req("AUTH-6", "AUTH-10", "AUTH-11")
def test_protected_resource_metadata_at_both_well_known_uris(served):
    handle = served()
    for path in ("/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"):
        response = requests.get(handle.base_url + path, timeout=10)
        assert response.status_code == 200
        assert response.headers["Content-Type"] == "application/json"
        document = response.json()
        assert document["resource"] == handle.url
        assert document["authorization_servers"] == [AS]
        assert document["scopes_supported"] == ["mcp"]
        assert document["bearer_methods_supported"] == ["header"]
    assert requests.post(handle.base_url + "/.well-known/oauth-protected-resource", timeout=10).status_code == 405


@pytest.mark.req("AUTH-10", "AUTH-53", "AUTH-57")
def test_configured_resource_is_the_audience_and_the_metadata(served):
    handle = served(resource_metadata={"authorization_servers": [AS], "resource": "https://MCP.example.com/mcp/"})
    assert requests.get(handle.base_url + "/.well-known/oauth-protected-resource/mcp",
                        timeout=10).json()["resource"] == "https://MCP.example.com/mcp/"
    assert post(handle.url, INIT, "good").status_code == 401           # audience: the local URL
    handle.verifier.tokens["public"] = AccessToken("alice", ("mcp",), None, "https://mcp.example.com/mcp")
    assert post(handle.url, INIT, "public").status_code == 200


@pytest.mark.req("AUTH-59", "AUTH-60", "AUTH-61", "AUTH-62", "AUTH26-51", "AUTH26-52", "AUTH26-58", "CACHE26-19")
def test_required_scopes_per_method_and_per_tool_give_403(served):
    handle = served(required_scopes={"*": ["mcp"], "tool:delete_all": ["admin"], "prompts/list": ["prompts"]})
    session = open_session(handle.url, "good")
    answer = post(handle.url, rpc(1, "tools/call", {"name": "whoami", "arguments": {}}), "good", session)
    assert answer.status_code == 200
    assert answer.json()["result"]["content"][0]["text"] == "alice mcp"
    refused = post(handle.url, rpc(2, "tools/call", {"name": "delete_all", "arguments": {}}), "good", session)
    assert refused.status_code == 403
    params = challenge(refused)
    assert params["error"] == "insufficient_scope"
    assert params["scope"] == "mcp admin"          # every scope the operation needs, in one challenge
    assert params["resource_metadata"].endswith("/.well-known/oauth-protected-resource/mcp")
    assert post(handle.url, rpc(3, "prompts/list"), "good", session).status_code == 403
    # Step-up: a token with more scopes, same subject, same session; the tool sees the new scopes.
    answer = post(handle.url, rpc(4, "tools/call", {"name": "delete_all", "arguments": {}}), "admin", session)
    assert answer.status_code == 200 and answer.json()["result"]["content"][0]["text"] == "deleted"
    answer = post(handle.url, rpc(5, "tools/call", {"name": "whoami", "arguments": {}}), "admin", session)
    assert answer.json()["result"]["content"][0]["text"] == "alice mcp admin"


@pytest.mark.req("AUTH-60", "AUTH-61")
def test_required_scopes_as_a_list_hold_for_every_request(served):
    handle = served(required_scopes=["mcp", "extra"])
    response = post(handle.url, INIT, "good")
    assert response.status_code == 403
    assert challenge(response)["scope"] == "mcp extra"
    assert challenge(post(handle.url, INIT))["scope"] == "mcp extra"      # the 401 names them too


@pytest.mark.req("SEC-18")
def test_a_session_is_bound_to_its_subject(served):
    handle = served()
    session = open_session(handle.url, "good")
    stolen = post(handle.url, rpc(1, "tools/list"), "bob", session)
    assert stolen.status_code == 404                     # as an unknown session: nothing revealed
    assert requests.delete(handle.url, headers={"Authorization": "Bearer bob", "Mcp-Session-Id": session},
                           timeout=10).status_code == 404
    assert post(handle.url, rpc(2, "tools/list"), "good", session).status_code == 200


@pytest.mark.req("AUTH-50", "AUTH-93", "TRN-11", "SEC-14")
def test_legacy_sse_endpoints_need_a_token_too(served):
    handle = served()
    assert requests.get(handle.sse_url, headers={"Accept": "text/event-stream"}, timeout=10).status_code == 401
    assert requests.post(handle.base_url + "/messages?session_id=x", json=INIT, timeout=10).status_code == 401


def test_static_verifier_fills_the_audience(served):
    handle = served(verifier=StaticTokenVerifier({"demo": {"subject": "demo", "scopes": ["mcp"]}}))
    assert post(handle.url, INIT, "demo").status_code == 200
    assert post(handle.url, INIT, "other").status_code == 401


@pytest.mark.req("AUTH-52", "AUTH-54")
def test_a_failing_verifier_refuses(served):
    def broken(token, resource):
        raise RuntimeError("introspection endpoint down")
    handle = served(verifier=broken)
    response = post(handle.url, INIT, "good")
    assert response.status_code == 401 and challenge(response)["error"] == "invalid_token"
    assert "introspection" not in response.text


@pytest.mark.req("AUTH-2", "AUTH-11")
def test_configuration_errors_are_clear():
    with pytest.raises(ValueError, match="authorization_servers"):
        start_http(protected_server(), ("127.0.0.1", 0), auth=Verifier())
    with pytest.raises(ValueError, match="need auth"):
        start_http(protected_server(), ("127.0.0.1", 0), resource_metadata={"authorization_servers": [AS]})
    with pytest.raises(ValueError, match="resource"):
        start_http(protected_server(), ("0.0.0.0", 0), auth=Verifier(),
                   resource_metadata={"authorization_servers": [AS]})
    with pytest.raises(TypeError, match="stdio"):
        protected_server().run(auth=Verifier())


def test_unprotected_server_is_unchanged():
    handle = start_http(protected_server(), ("127.0.0.1", 0), response_mode="json")
    try:
        assert post(handle.url, INIT).status_code == 200
        assert requests.get(handle.base_url + "/.well-known/oauth-protected-resource", timeout=10).status_code == 404
    finally:
        handle.shutdown()


@pytest.mark.req("AUTH-13", "AUTH-18", "AUTH-43", "AUTH-45", "AUTH-46")
def test_challenge_parsing_and_resource_uris():
    header = 'Basic realm="x", Bearer error="insufficient_scope", scope="a b", resource_metadata="https://h/x\\"y"'
    assert parse_challenges(header) == [("basic", {"realm": "x"}),
                                        ("bearer", {"error": "insufficient_scope", "scope": "a b",
                                                    "resource_metadata": 'https://h/x"y'})]
    assert parse_challenges("Bearer") == [("bearer", {})]
    assert parse_challenges('Bearer realm="x", ===') == [("bearer", {"realm": "x"})]    # lenient: garbage ends it
    assert parse_challenges("=== Bearer") == []
    assert parse_challenges(' , Basic realm="x" ,, Bearer scope="a"') == [("basic", {"realm": "x"}),
                                                                         ("bearer", {"scope": "a"})]
    assert parse_challenges('Bearer scope="a", mac id="x"') == [("bearer", {"scope": "a"}), ("mac", {"id": "x"})]
    assert canonical_resource("HTTP://H.example:80/mcp/") == "http://h.example/mcp"
    assert canonical_resource("http://h.example:443/mcp") == "http://h.example:443/mcp"
    assert canonical_resource("HTTPS://MCP.Example.com:443/Mcp/#frag") == "https://mcp.example.com/Mcp"
    assert canonical_resource("http://[::1]:8000/") == "http://[::1]:8000"
    assert resource_covers("https://h.example", "https://h.example/mcp")
    assert resource_covers("https://h.example/a", "https://h.example/a/mcp")
    assert not resource_covers("https://h.example/a", "https://h.example/ab")
    assert not resource_covers("https://other.example/mcp", "https://h.example/mcp")
    assert well_known_resource_metadata("https://h.example/public/mcp") == [
        "https://h.example/.well-known/oauth-protected-resource/public/mcp",
        "https://h.example/.well-known/oauth-protected-resource"]
    assert well_known_resource_metadata("https://h.example") == [
        "https://h.example/.well-known/oauth-protected-resource"]


@pytest.mark.req("AUTH-93", "AUTH-96", "SEC-14")
def test_stateless_mode_checks_tokens_and_the_tool_sees_them(served):
    handle = served(stateless=True, required_scopes={"tool:delete_all": ["admin"]})
    call = rpc(1, "tools/call", {"name": "whoami", "arguments": {}})
    assert post(handle.url, call).status_code == 401
    answer = post(handle.url, call, "admin")
    assert answer.status_code == 200 and answer.json()["result"]["content"][0]["text"] == "alice mcp admin"
    refused = post(handle.url, rpc(2, "tools/call", {"name": "delete_all", "arguments": {}}), "good")
    assert refused.status_code == 403 and challenge(refused)["scope"] == "admin"


@pytest.mark.req("AUTH-2")
def test_context_has_no_auth_off_http():
    from mcp_ref import Client
    from mcp_ref.transports import memory_pair
    client_end, server_end = memory_pair()
    session = protected_server().serve(server_end)
    try:
        with Client(client_end) as client:
            assert client.call_tool("whoami").content[0].text == "None "
    finally:
        session.close("done")
