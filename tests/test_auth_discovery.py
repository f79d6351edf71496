"""Discovery order and checks, against a scripted HTTP session (no network).

Spec: basic/authorization#protected-resource-metadata-discovery-requirements (the
challenge's URL, else path-inserted then root), #authorization-server-metadata-discovery
(OAuth then OpenID, path-inserted then appended), 2026-07-28
authorization-server-discovery (the issuer must match), 2025-03-26
basic/authorization#fallbacks-for-servers-without-metadata-discovery.
"""
import pytest

from mcp_ref.auth import DiscoveryError
from mcp_ref.auth.discovery import (authorization_server_metadata_urls, check_endpoint, find_authorization_server,
                                    find_resource_metadata, legacy_authorization_server, require_pkce)
from mcp_ref.auth.oauth import application_type, auth_method
from mcp_ref.auth.pkce import challenge_for


class Answer:
    def __init__(self, document):
        self.status_code = 200 if document is not None else 404
        self._document = document

    def json(self):
        if isinstance(self._document, str):
            raise ValueError("not JSON")
        return self._document

    def close(self):
        pass


class Scripted:
    """``get(url)`` answers from ``documents``; every URL asked is kept in ``asked``."""

    def __init__(self, documents):
        self.documents, self.asked, self.headers = documents, [], []

    def get(self, url, headers=None, timeout=None, allow_redirects=True):
        self.asked.append(url)
        self.headers.append(headers or {})
        return Answer(self.documents.get(url))


SERVER = "https://mcp.example.com/public/mcp"
PRM = {"resource": SERVER, "authorization_servers": ["https://auth.example.com"]}


@pytest.mark.req("AUTH-7", "AUTH-13")
def test_resource_metadata_path_inserted_then_root():
    http = Scripted({"https://mcp.example.com/.well-known/oauth-protected-resource": PRM})
    assert find_resource_metadata(http, SERVER, None, {"MCP-Protocol-Version": "2025-11-25"}) == PRM
    assert http.asked == ["https://mcp.example.com/.well-known/oauth-protected-resource/public/mcp",
                          "https://mcp.example.com/.well-known/oauth-protected-resource"]
    assert http.headers[0]["MCP-Protocol-Version"] == "2025-11-25"


@pytest.mark.req("AUTH-13", "AUTH-18")
def test_the_challenge_url_comes_first_and_alone():
    named = "https://mcp.example.com/meta"
    http = Scripted({named: PRM})
    assert find_resource_metadata(http, SERVER, {"resource_metadata": named}) == PRM
    assert http.asked == [named]
    with pytest.raises(DiscoveryError, match="could not be read"):
        find_resource_metadata(Scripted({}), SERVER, {"resource_metadata": named})


def test_no_resource_metadata_anywhere_means_a_2025_03_26_server():
    http = Scripted({"https://mcp.example.com/.well-known/oauth-protected-resource": "<html>"})
    assert find_resource_metadata(http, SERVER, None) is None
    metadata = legacy_authorization_server(Scripted({}), SERVER)
    assert metadata["authorization_endpoint"] == "https://mcp.example.com/authorize"
    assert metadata["token_endpoint"] == "https://mcp.example.com/token"
    assert metadata["registration_endpoint"] == "https://mcp.example.com/register"
    found = {"issuer": "https://mcp.example.com", "authorization_endpoint": "https://mcp.example.com/a"}
    http = Scripted({"https://mcp.example.com/.well-known/oauth-authorization-server": found})
    assert legacy_authorization_server(http, SERVER) == found
    assert http.asked == ["https://mcp.example.com/.well-known/oauth-authorization-server"]   # the path is dropped


@pytest.mark.parametrize("issuer", ["https://mcp.example.com/oauth", "https://elsewhere.example", None])
def test_2025_03_26_metadata_at_the_base_url_is_taken_whatever_issuer_it_names(issuer):
    """No protected resource metadata: no issuer was learned to compare with; the document
    at the authorization base URL is the authorization server's (2025-03-26)."""
    found = {"authorization_endpoint": "https://mcp.example.com/oauth/authorize",
             "token_endpoint": "https://mcp.example.com/oauth/token"}
    if issuer is not None:
        found["issuer"] = issuer
    http = Scripted({"https://mcp.example.com/.well-known/oauth-authorization-server": found})
    metadata = legacy_authorization_server(http, SERVER)
    assert metadata["authorization_endpoint"] == "https://mcp.example.com/oauth/authorize"
    assert metadata["issuer"] == (issuer or "https://mcp.example.com")


@pytest.mark.parametrize("resource", ["https://other.example/public/mcp", "https://mcp.example.com/public/mcpx",
                                      "https://mcp.example.com/private", None])
@pytest.mark.req("AUTH-7")
def test_a_resource_that_is_not_this_server_is_refused(resource):
    http = Scripted({"https://mcp.example.com/.well-known/oauth-protected-resource/public/mcp":
                     {**PRM, "resource": resource}})
    with pytest.raises(DiscoveryError, match="not this MCP server"):
        find_resource_metadata(http, SERVER, None)


@pytest.mark.parametrize("resource", [SERVER, "https://MCP.example.com/public/mcp/", "https://mcp.example.com",
                                      "https://mcp.example.com/public"])
def test_the_same_resource_or_a_parent_is_accepted(resource):
    http = Scripted({"https://mcp.example.com/.well-known/oauth-protected-resource/public/mcp":
                     {**PRM, "resource": resource}})
    assert find_resource_metadata(http, SERVER, None)["resource"] == resource


@pytest.mark.req("AUTH-7")
def test_resource_metadata_without_authorization_servers_is_refused():
    http = Scripted({"https://mcp.example.com/.well-known/oauth-protected-resource/public/mcp":
                     {"resource": SERVER}})
    with pytest.raises(DiscoveryError, match="authorization_servers"):
        find_resource_metadata(http, SERVER, None)


@pytest.mark.req("AUTH-9", "AUTH-20", "AUTH-21", "AUTH-22")
def test_authorization_server_metadata_order():
    assert authorization_server_metadata_urls("https://auth.example.com/tenant1") == [
        "https://auth.example.com/.well-known/oauth-authorization-server/tenant1",
        "https://auth.example.com/.well-known/openid-configuration/tenant1",
        "https://auth.example.com/tenant1/.well-known/openid-configuration"]
    assert authorization_server_metadata_urls("https://auth.example.com") == [
        "https://auth.example.com/.well-known/oauth-authorization-server",
        "https://auth.example.com/.well-known/openid-configuration"]


@pytest.mark.req("AUTH-9", "ASD26-10", "ASD26-11", "ASD26-12")
def test_the_issuer_must_be_the_one_asked_for():
    issuer = "https://auth.example.com/tenant1"
    liar = {"issuer": "https://honest.example", "code_challenge_methods_supported": ["S256"]}
    honest = {"issuer": issuer, "code_challenge_methods_supported": ["S256"]}
    http = Scripted({"https://auth.example.com/.well-known/oauth-authorization-server/tenant1": liar,
                     "https://auth.example.com/tenant1/.well-known/openid-configuration": honest})
    assert find_authorization_server(http, issuer) == honest      # the liar is skipped
    with pytest.raises(DiscoveryError, match="honest.example"):
        find_authorization_server(Scripted({"https://auth.example.com/.well-known/oauth-authorization-server/"
                                            "tenant1": liar}), issuer)


@pytest.mark.req("AUTH-73", "AUTH-74", "AUTH-76", "AUTH-78", "AUTH-79", "AUTH-80", "AUTH-81", "AUTH-67", "SEC-10")
def test_pkce_and_https_checks():
    require_pkce({"code_challenge_methods_supported": ["plain", "S256"]})
    for methods in (None, [], ["plain"]):
        with pytest.raises(DiscoveryError, match="S256"):
            require_pkce({"issuer": "x", "code_challenge_methods_supported": methods})
    check_endpoint("http://localhost:9000/token", "token_endpoint")
    with pytest.raises(DiscoveryError, match="https"):
        check_endpoint("http://auth.example.com/token", "token_endpoint")


@pytest.mark.req("AUTH-76", "AUTH-77")
def test_pkce_s256_matches_rfc_7636_appendix_b():
    assert challenge_for("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk") == \
        "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"


@pytest.mark.req("REG26-16", "REG26-17", "REG26-18")
def test_token_endpoint_method_and_application_type():
    assert auth_method({}, {"client_id": "a", "client_secret": "s"}) == "client_secret_basic"
    assert auth_method({"token_endpoint_auth_methods_supported": ["client_secret_post"]},
                       {"client_id": "a", "client_secret": "s"}) == "client_secret_post"
    assert auth_method({}, {"client_id": "a"}) == "none"
    assert auth_method({"token_endpoint_auth_methods_supported": ["private_key_jwt", "client_secret_basic"]},
                       {"client_id": "a", "client_secret": "s"}, client_assertion=str) == "private_key_jwt"
    assert auth_method({}, {"client_id": "a", "token_endpoint_auth_method": "client_secret_post"}) == \
        "client_secret_post"
    assert application_type("http://localhost:3000/cb") == "native"
    assert application_type("com.example.app:/cb") == "native"
    assert application_type("https://app.example.com/cb") == "web"


@pytest.mark.req("AUTH-15", "AUTH-16", "AUTH-19", "AUTH-38", "AUTH-39", "AUTH-64", "AUTH26-14", "AUTH26-15")
def test_scope_selection_challenge_first_then_scopes_supported_then_step_up_union():
    """The challenge's scope is asked as it is, whatever ``scopes_supported`` says (no
    subset or superset assumed); without one, the resource's ``scopes_supported``;
    without either, no scope; a step-up asks the union of what was asked and the new
    challenge, never ``scopes_supported`` wholesale."""
    from mcp_ref.auth import OAuthClientProvider
    provider = OAuthClientProvider(redirect_uri="http://localhost:3000/cb", user_agent=lambda url: url)
    provider.resource_metadata = {"scopes_supported": ["read", "write"]}
    provider.metadata = {"scopes_supported": ["read"]}
    assert provider._choose_scope({"scope": "files:rw admin"}, step_up=False) == "files:rw admin"
    assert provider._choose_scope({}, step_up=False) == "read write"
    provider.resource_metadata = {}
    assert provider._choose_scope({}, step_up=False) is None
    assert provider._choose_scope({"scope": "a"}, step_up=False) == "a"
    assert provider._choose_scope({"scope": "b"}, step_up=True) == "a b"
    assert provider._choose_scope({}, step_up=True) == "a b"          # nothing new asked: what it had
