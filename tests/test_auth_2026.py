"""The authorization rows new in 2026-07-28 (RFC 9207 ``iss`` check, registration
failures, refresh tokens kept confidential), checked on the client's own functions
(rows of spec_notes/traceability-2026-07-28.md)."""
import pytest

from mcp_ref.auth import OAuthClientProvider
from mcp_ref.auth.discovery import check_endpoint
from mcp_ref.auth.exceptions import AuthorizationDenied, DiscoveryError, RegistrationError
from mcp_ref.auth.oauth import register_client
from mcp_ref.auth.storage import InMemoryStorage

REDIRECT = "http://localhost:3000/cb"
ISSUER = "https://as.example"


def provider():
    return OAuthClientProvider(redirect_uri=REDIRECT, user_agent=lambda url: url)


@pytest.mark.req("AUTH26-25")
def test_an_error_response_from_another_issuer_is_refused_unread():
    redirect = f"{REDIRECT}?error=access_denied&error_description=CALL+0800-EVIL&state=s&iss=https://evil.example"
    with pytest.raises(AuthorizationDenied, match="issuer") as refused:
        provider()._read_redirect(redirect, "s", ISSUER, {})
    assert "EVIL" not in str(refused.value) and "access_denied" not in str(refused.value)
    # the same error from the right issuer is shown
    with pytest.raises(AuthorizationDenied, match="access_denied"):
        provider()._read_redirect(redirect.replace("https://evil.example", ISSUER), "s", ISSUER, {})


@pytest.mark.req("AUTH26-24", "AUTH26-22")
@pytest.mark.parametrize("iss", ["https://AS.example", "https://as.example/", "https://as.example:443",
                                 "HTTPS://as.example", "https://as%2Eexample"])
def test_iss_is_compared_as_a_plain_string(iss):
    from urllib.parse import quote
    redirect = f"{REDIRECT}?code=c&state=s&iss={quote(iss, safe='')}"
    with pytest.raises(AuthorizationDenied, match="issuer"):
        provider()._read_redirect(redirect, "s", ISSUER, {})
    assert provider()._read_redirect(f"{REDIRECT}?code=c&state=s&iss={quote(ISSUER, safe='')}",
                                     "s", ISSUER, {}) == "c"


class _Refusing:
    def __init__(self, status, body):
        self.status, self.body = status, body

    def post(self, url, json=None, **kwargs):
        outer = self

        class Response:
            status_code = outer.status

            def json(self):
                return outer.body

            def close(self):
                pass
        self.sent = json
        return Response()


@pytest.mark.req("REG26-19", "REG26-20", "REG26-16", "AUTH26-46")
def test_a_registration_refused_for_its_redirect_uri_is_a_clear_error():
    http = _Refusing(400, {"error": "invalid_redirect_uri", "error_description": "web clients need https"})
    with pytest.raises(RegistrationError) as refused:
        register_client(http, {"registration_endpoint": "https://as.example/register"},
                        redirect_uri=REDIRECT, client_name="c", scope=None)
    text = str(refused.value)
    assert "invalid_redirect_uri" in text and "web clients need https" in text
    assert REDIRECT in text and "application_type native" in text
    assert http.sent["application_type"] == "native"
    assert "refresh_token" in http.sent["grant_types"]                      # AUTH26-46


@pytest.mark.req("AUTH26-45")
def test_refresh_tokens_stay_out_of_reprs_and_go_only_to_https_endpoints():
    storage = InMemoryStorage()
    storage.set_tokens(ISSUER, "https://mcp.example", {"access_token": "AT-secret", "refresh_token": "RT-secret"})
    client = provider()
    client.storage = storage
    for shown in (repr(storage), repr(client)):
        assert "RT-secret" not in shown and "AT-secret" not in shown
    assert storage.get_tokens(ISSUER, "https://mcp.example")["refresh_token"] == "RT-secret"
    assert storage.get_tokens("https://other.example", "https://mcp.example") is None      # per issuer
    with pytest.raises(DiscoveryError):
        check_endpoint("http://as.example/token", "token_endpoint")
    assert check_endpoint("https://as.example/token", "token_endpoint")
