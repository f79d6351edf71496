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
