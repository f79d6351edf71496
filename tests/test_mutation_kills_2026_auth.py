"""Authorization rows of the 2026-07-28 matrix that scripts/mutate.py showed the flow
tests did not pin (spec_notes/traceability-2026-07-28.md; figures in bench/README.md)."""
import pytest

requests = pytest.importorskip("requests")

from mcp_ref.auth import DiscoveryError, RegistrationError  # noqa: E402
from mcp_ref.auth.oauth import register_client  # noqa: E402
from test_auth_client import refused, user_client, world  # noqa: E402,F401  (world: the fixture)


class _Answer:
    def __init__(self, status, body):
        self.status_code, self._body = status, body

    def json(self):
        if self._body is None:
            raise ValueError("no JSON")
        return self._body

    def close(self):
        pass


class _Registrar:
    """A registration endpoint that answers ``status`` and ``body``; keeps what it was sent."""

    def __init__(self, status, body):
        self.answer, self.sent = _Answer(status, body), []

    def post(self, url, json=None, **options):
        self.sent.append((url, json))
        return self.answer


METADATA = {"issuer": "https://as.example", "registration_endpoint": "https://as.example/register",
            "token_endpoint_auth_methods_supported": ["none"]}


@pytest.mark.req("AUTH26-11", "REG26-16")
def test_dynamic_registration_gives_a_client_id_or_fails():
    ok = _Registrar(201, {"client_id": "c-1"})
    client = register_client(ok, METADATA, redirect_uri="http://127.0.0.1:8765/cb", client_name="t", scope=None)
    assert client["client_id"] == "c-1"
    assert ok.sent[0][0] == "https://as.example/register"
    assert ok.sent[0][1]["application_type"] == "native"                  # a loopback redirect: a native app
    web = _Registrar(200, {"client_id": "c-2"})
    register_client(web, METADATA, redirect_uri="https://app.example/cb", client_name="t", scope="read")
    assert web.sent[0][1]["application_type"] == "web" and web.sent[0][1]["scope"] == "read"
    for status, body in ((400, {"error": "invalid_client_metadata"}), (201, {"no": "id"}), (500, None), (201, [1])):
        with pytest.raises(RegistrationError):
            register_client(_Registrar(status, body), METADATA, redirect_uri="https://app.example/cb",
                            client_name="t", scope=None)


@pytest.mark.req("AUTH26-10", "ASD26-10", "ASD26-11", "ASD26-12")
def test_metadata_under_another_issuer_is_never_used(world):  # noqa: F811
    auth, handle = world(claimed_issuer="https://honest.example")
    refused(handle.url, user_client(auth), DiscoveryError, "issuer")
    assert auth.authorizations == 0


def _provider(**options):
    from mcp_ref.auth import OAuthClientProvider
    return OAuthClientProvider(redirect_uri="http://127.0.0.1:8765/cb", user_agent=lambda url: url, **options)


@pytest.mark.req("AUTH26-47")
def test_no_refresh_token_means_no_refresh_request_and_a_refused_one_is_forgotten(monkeypatch):
    import mcp_ref.auth.providers as providers
    from mcp_ref.auth import TokenError
    provider = _provider()
    provider.metadata = {"issuer": "https://as.example", "token_endpoint": "https://as.example/token"}
    provider.issuer, provider.resource = "https://as.example", "https://mcp.example/mcp"
    monkeypatch.setattr(provider, "_session", lambda: None)
    monkeypatch.setattr(provider, "_identity", lambda **options: {"client_id": "c"})

    def never(*args, **kwargs):
        raise AssertionError("a refresh was attempted without a refresh token")
    monkeypatch.setattr(providers, "token_request", never)
    assert provider._refresh({"access_token": "a"}) is False
    assert provider._refresh({"access_token": "a", "refresh_token": ""}) is False

    def refuse(*args, **kwargs):
        raise TokenError("invalid_grant")
    monkeypatch.setattr(providers, "token_request", refuse)
    provider.storage.set_tokens(provider.issuer, provider.resource, {"access_token": "a", "refresh_token": "r"})
    assert provider._refresh({"access_token": "a", "refresh_token": "r"}) is False
    assert provider.storage.get_tokens(provider.issuer, provider.resource) is None


@pytest.mark.req("ASD26-3", "REG26-21", "REG26-22", "CHG26-8")
def test_pre_registered_credentials_stay_with_the_issuer_they_were_first_used_with():
    provider = _provider(client_id="pre-registered", client_secret="s")
    provider._use_issuer("https://as-one.example")
    provider._use_issuer("https://as-one.example")                      # the same one again: fine
    assert provider.issuer == "https://as-one.example"
    with pytest.raises(RegistrationError):
        provider._use_issuer("https://as-two.example")
    registering = _provider()                                           # dynamic: any issuer, its own credentials
    registering._use_issuer("https://as-one.example")
    registering._use_issuer("https://as-two.example")
    assert registering.issuer == "https://as-two.example"


@pytest.mark.req("REG26-22", "REG26-21", "AUTH26-11", "ASD26-3")
def test_a_registration_is_reused_with_its_own_issuer_and_made_anew_for_another(monkeypatch):
    import mcp_ref.auth.providers as providers
    made = []

    def register(http, metadata, **options):
        made.append(metadata["issuer"])
        return {"client_id": f"for-{metadata['issuer']}"}
    monkeypatch.setattr(providers, "register_client", register)
    provider = _provider()
    provider.storage.set_client("https://as-one.example", {"client_id": "kept"})
    provider._use_issuer("https://as-one.example")
    provider.metadata = {"issuer": "https://as-one.example", "registration_endpoint": "https://as-one.example/r"}
    assert provider._identity()["client_id"] == "kept" and made == []
    provider._use_issuer("https://as-two.example")
    provider.metadata = {"issuer": "https://as-two.example", "registration_endpoint": "https://as-two.example/r"}
    assert provider._identity()["client_id"] == "for-https://as-two.example"
    assert made == ["https://as-two.example"]
    assert provider.storage.get_client("https://as-two.example") == {"client_id": "for-https://as-two.example"}
    assert provider.storage.get_client("https://as-one.example") == {"client_id": "kept"}


@pytest.mark.req("AUTH26-36")
def test_a_provider_used_on_its_own_binds_to_the_server_it_is_first_sent_to(world):  # noqa: F811
    """Outside ``Client.http`` (which binds it first) the provider binds itself on its first
    request, and from then on every request to that server carries the token."""
    import json

    from conftest import MODERN_REVISION
    from test_modern_server import meta
    auth, handle = world()
    provider = user_client(auth)
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": meta()}
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json",
               "MCP-Protocol-Version": MODERN_REVISION, "Mcp-Method": "tools/list"}
    with requests.Session() as session:
        first = session.post(handle.url, data=json.dumps(body), headers=headers, auth=provider, timeout=30)
        again = session.post(handle.url, data=json.dumps(body), headers=headers, auth=provider, timeout=30)
    assert provider.server_url == handle.url
    assert first.status_code == 200 and again.status_code == 200
    assert again.request.headers["Authorization"].startswith("Bearer ")
