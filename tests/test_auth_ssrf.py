"""OAuth metadata is not fetched from private, link-local or reserved addresses, nor
through a redirect to one (mcp_ref/auth/ssrf.py). Offline: name resolution is
replaced by a table, the HTTP session by a script.
Spec: 2025-11-25 security_best_practices #server-side-request-forgery-ssrf;
2026-07-28 basic/authorization/security-considerations.
"""
import socket

import pytest

from mcp_ref.auth import ssrf
from mcp_ref.auth.discovery import find_authorization_server, find_resource_metadata
from mcp_ref.auth.exceptions import DiscoveryError
from mcp_ref.auth.ssrf import AddressPolicy, UnsafeAddressError, check_url, guarded_get

ADDRESSES = {
    "mcp.example.com": ["93.184.216.34"],
    "auth.example.com": ["93.184.216.35"],
    "internal.example.com": ["10.0.0.1"],
    "metadata.example.com": ["169.254.169.254"],
    "split.example.com": ["93.184.216.36", "192.168.1.10"],       # one good address is not enough
    "localhost": ["127.0.0.1"],
}


@pytest.fixture(autouse=True)
def offline_dns(monkeypatch):
    def getaddrinfo(host, port, *args, **kwargs):
        if host not in ADDRESSES:
            raise socket.gaierror("no such host")
        return [(socket.AF_INET6 if ":" in a else socket.AF_INET, socket.SOCK_STREAM, 6, "", (a, 0))
                for a in ADDRESSES[host]]
    monkeypatch.setattr(ssrf.socket, "getaddrinfo", getaddrinfo)


class Answer:
    def __init__(self, status, document=None, location=None):
        self.status_code, self.document = status, document
        self.headers = {"Location": location} if location else {}

    def json(self):
        if self.document is None:
            raise ValueError("not JSON")
        return self.document

    def close(self):
        pass


class Session:
    """A requests-like session: answers from a table, never follows a redirect itself."""

    def __init__(self, answers, policy=None):
        self.answers, self.asked = answers, []
        if policy is not None:
            self.address_policy = policy

    def get(self, url, headers=None, timeout=None, **options):
        assert options.get("allow_redirects") is False
        self.asked.append(url)
        return self.answers.get(url) or Answer(404)


SERVER = "https://mcp.example.com/mcp"
PRM = {"resource": SERVER, "authorization_servers": ["https://auth.example.com"]}


@pytest.mark.req("SEC-9", "SEC-11")
@pytest.mark.parametrize("host", ["internal.example.com", "metadata.example.com", "split.example.com",
                                  "10.0.0.1", "169.254.169.254", "[fd00::1]", "[::ffff:10.0.0.1]", "0.0.0.0",
                                  "100.64.0.1"])
def test_a_metadata_url_reaching_a_private_or_reserved_address_is_refused(host):
    http = Session({})
    with pytest.raises(UnsafeAddressError) as refused:
        find_resource_metadata(http, SERVER, {"resource_metadata": f"https://{host}/.well-known/x"})
    assert isinstance(refused.value, DiscoveryError) and http.asked == []
    with pytest.raises(UnsafeAddressError):
        find_authorization_server(http, f"https://{host}")
    assert http.asked == []


@pytest.mark.req("SEC-9", "SEC-11")
def test_public_and_loopback_hosts_are_fetched_and_an_unknown_host_just_fails():
    named = "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"
    http = Session({named: Answer(200, PRM)})
    assert find_resource_metadata(http, SERVER, {"resource_metadata": named}) == PRM
    assert check_url("http://localhost:8000/x") and check_url("http://127.0.0.1/x") and check_url("http://[::1]/")
    assert check_url("https://nowhere.invalid/x")               # rule 4: the fetch fails by itself
    with pytest.raises(UnsafeAddressError):
        check_url("http://localhost/x", AddressPolicy(allow_loopback=False))
    for url in ("file:///etc/passwd", "ftp://auth.example.com/", "https:///nohost"):
        with pytest.raises(UnsafeAddressError):
            check_url(url)


@pytest.mark.req("SEC-11")
def test_the_caller_can_allow_a_private_network():
    url = "https://internal.example.com/.well-known/oauth-authorization-server"
    document = {"issuer": "https://internal.example.com", "authorization_endpoint": "https://internal.example.com/a",
                "token_endpoint": "https://internal.example.com/t", "code_challenge_methods_supported": ["S256"]}
    http = Session({url: Answer(200, document)}, policy=AddressPolicy(allow_private=True))
    assert find_authorization_server(http, "https://internal.example.com") == document
    assert check_url("http://metadata.example.com/", AddressPolicy(allowed_hosts=frozenset({"metadata.example.com"})))


@pytest.mark.req("SEC-12")
def test_redirects_are_followed_only_to_checked_targets():
    start = "https://auth.example.com/.well-known/oauth-authorization-server"
    good = "https://mcp.example.com/as-metadata"
    http = Session({start: Answer(302, location="/moved"),
                    "https://auth.example.com/moved": Answer(301, location=good),
                    good: Answer(200, {"ok": True})})
    assert guarded_get(http, start).document == {"ok": True}
    assert http.asked == [start, "https://auth.example.com/moved", good]
    for target in ("http://169.254.169.254/latest/meta-data/", "https://internal.example.com/",
                   "http://mcp.example.com/downgraded"):
        http = Session({start: Answer(307, location=target)})
        with pytest.raises(UnsafeAddressError):
            guarded_get(http, start)
        assert http.asked == [start]                            # the target was never requested
    loop = Session({start: Answer(302, location=start)})
    with pytest.raises(UnsafeAddressError):
        guarded_get(loop, start)
    assert len(loop.asked) == ssrf.MAX_REDIRECTS + 1


@pytest.mark.req("SEC-23", "SEC-24", "SEC-25", "SEC-26", "SEC-27", "SEC-32")
def test_authorization_urls_are_https_or_loopback_http_and_nothing_else():
    from mcp_ref.auth.discovery import check_endpoint
    for url in ("javascript:alert(1)", "data:text/html,<script>x</script>", "file:///etc/passwd",
                "vbscript:msgbox", "ftp://auth.example.com/authorize", "https://", "//auth.example.com/a", 42, None):
        with pytest.raises(DiscoveryError):
            check_endpoint(url, "authorization_endpoint")
    with pytest.raises(DiscoveryError, match="https"):
        check_endpoint("http://auth.example.com/authorize", "authorization_endpoint")
    for url in ("https://auth.example.com/authorize", "http://localhost:9000/a", "http://127.0.0.1/a"):
        assert check_endpoint(url, "authorization_endpoint") == url


@pytest.mark.req("SEC-28", "SEC-29", "SEC-30")
def test_the_authorization_url_is_opened_by_the_platform_never_by_a_shell():
    import webbrowser
    from pathlib import Path

    from mcp_ref.auth import loopback
    agent = loopback.LoopbackUserAgent("http://localhost:8765/callback")
    assert agent.open_browser is webbrowser.open
    source = Path(loopback.__file__).read_text(encoding="utf-8")
    assert not any(call in source for call in ("subprocess", "os.system", "os.popen", "shell=True"))


class Poster(Session):
    """The session a token request or a registration uses: records each POST."""

    def __init__(self, answers, policy=None):
        super().__init__(answers, policy)
        self.posted = []

    def post(self, url, **options):
        assert options.get("allow_redirects") is False          # a POST never follows a redirect
        self.posted.append(url)
        return self.answers.get(url) or Answer(404)


def _metadata(host: str) -> dict:
    return {"issuer": "https://auth.example.com", "token_endpoint": f"https://{host}/token",
            "registration_endpoint": f"https://{host}/register", "code_challenge_methods_supported": ["S256"]}


@pytest.mark.req("SEC-9", "SEC-11")
@pytest.mark.parametrize("host", ["internal.example.com", "metadata.example.com", "split.example.com",
                                  "169.254.169.254", "[fd00::1]", "100.64.0.1"])
def test_the_token_request_and_the_registration_are_refused_before_a_private_address(host):
    from mcp_ref.auth.oauth import register_client, token_request
    http = Poster({})
    client = {"client_id": "c1", "token_endpoint_auth_method": "none"}
    for grant in ({"grant_type": "authorization_code", "code": "x", "code_verifier": "v"},
                  {"grant_type": "refresh_token", "refresh_token": "r"}):
        with pytest.raises(UnsafeAddressError):
            token_request(http, _metadata(host), client, grant)
    with pytest.raises(UnsafeAddressError):
        register_client(http, _metadata(host), redirect_uri="http://localhost:8765/cb", client_name="x", scope=None)
    assert http.posted == []                                    # nothing was sent


@pytest.mark.req("SEC-11")
def test_the_token_request_reaches_public_loopback_and_allowed_private_endpoints():
    from mcp_ref.auth.oauth import register_client, token_request
    tokens = Answer(200, {"access_token": "t", "token_type": "Bearer"})
    client = {"client_id": "c1", "token_endpoint_auth_method": "none"}
    for host, policy in (("auth.example.com", None), ("localhost", None),
                         ("internal.example.com", AddressPolicy(allow_private=True))):
        http = Poster({f"https://{host}/token": tokens,
                       f"https://{host}/register": Answer(201, {"client_id": "c2"})}, policy)
        assert token_request(http, _metadata(host), client, {"grant_type": "client_credentials"})["access_token"] == "t"
        assert register_client(http, _metadata(host), redirect_uri="http://localhost:8765/cb", client_name="x",
                               scope=None)["client_id"] == "c2"
        assert http.posted == [f"https://{host}/token", f"https://{host}/register"]


@pytest.mark.req("SEC-9", "SEC-11")
def test_a_provider_never_posts_its_grant_to_a_private_token_endpoint():
    """The whole flow: metadata that names a private token endpoint ends in a refusal, not a POST."""
    from mcp_ref.auth import AuthorizationError, ClientCredentialsProvider
    provider = ClientCredentialsProvider("c1", client_secret="s").bind(SERVER)
    http = Poster({"https://mcp.example.com/.well-known/oauth-protected-resource/mcp": Answer(200, PRM),
                   "https://auth.example.com/.well-known/oauth-authorization-server":
                       Answer(200, _metadata("metadata.example.com"))})
    provider._http = http
    with pytest.raises(AuthorizationError) as refused:
        provider._respond(401, {}, None, {})
    assert isinstance(refused.value, UnsafeAddressError) and http.posted == []
