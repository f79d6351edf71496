"""Finding the authorization server: protected resource metadata (RFC 9728), then
authorization server metadata (RFC 8414 / OpenID Connect Discovery).

Spec: basic/authorization#authorization-server-discovery,
#protected-resource-metadata-discovery-requirements,
#authorization-server-metadata-discovery, #authorization-code-protection;
2026-07-28 authorization-server-discovery (the ``issuer`` check); 2025-03-26
basic/authorization#server-metadata-discovery and #fallbacks-for-servers-without-metadata-discovery.

Rules:

1. Protected resource metadata: the ``resource_metadata`` URL of the 401's
   challenge when there is one, else the well-known URIs, path-inserted first, then
   the root. Its ``resource`` must name the MCP server (the same URI, or a parent
   path at the same origin), else ``DiscoveryError`` before any authorization
   request; ``authorization_servers`` must list at least one issuer.
2. No document at any of them (and none named): a 2025-03-26 server. The
   authorization server is the MCP server's origin (its path dropped, the
   authorization base URL); its metadata is
   ``<origin>/.well-known/oauth-authorization-server``, else the default
   ``/authorize``, ``/token``, ``/register`` endpoints. That document is taken
   whatever ``issuer`` it names (one with a path, another host): the client learned
   no issuer to compare it with, 2025-03-26 locates the metadata by the base URL
   alone. Its ``issuer`` (the origin when it has none) is what the RFC 9207 ``iss``
   of the authorization response is compared with; credentials are kept under the
   authorization base URL, not under the claimed issuer (providers rule 3), so a
   server cannot claim another authorization server's stored credentials.
3. Authorization server metadata for an issuer with a path: OAuth path-inserted,
   OpenID path-inserted, OpenID path-appended; without a path: OAuth, then OpenID.
   The first JSON object wins; its ``issuer`` must equal the issuer used to build
   the URL, character for character (2026-07-28, RFC 8414 section 3.3), else the
   document is refused. This is every issuer named by protected resource metadata.
4. For the authorization code flow, ``code_challenge_methods_supported`` must
   include ``S256`` (absent = no PKCE: refuse). Authorization server endpoints must
   be https, except on a loopback host (tests, local development).
"""
from __future__ import annotations

from urllib.parse import urlsplit

from mcp_ref.auth.challenge import resource_covers, well_known_resource_metadata
from mcp_ref.auth.exceptions import DiscoveryError
from mcp_ref.auth.ssrf import UnsafeAddressError, guarded_get, guarded_post

__all__ = ["find_resource_metadata", "authorization_server_metadata_urls", "find_authorization_server",
           "authorization_base_url", "legacy_authorization_server", "require_pkce", "check_endpoint", "fetch_json",
           "LOOPBACK_HOSTS"]

LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "::1")
TIMEOUT = 10.0


def fetch_json(http, url: str, headers=None, *, error=None, what: str = "", **post) -> tuple:
    """``(status, the JSON body or None)`` of a GET of ``url``, or of a POST with ``post``
    (``data=``, ``json=``), under the SSRF policy (ssrf.py). Unreachable: ``error`` naming the
    ``what`` endpoint when given, else ``(None, None)``."""
    headers = {"Accept": "application/json", **(headers or {})}
    try:
        response = guarded_post(http, url, headers=headers, timeout=TIMEOUT, **post) if post else \
            guarded_get(http, url, headers=headers, timeout=TIMEOUT)
    except UnsafeAddressError:
        raise                                   # ssrf.py: refused, not merely absent or unreachable
    except Exception as exc:
        if error is None:
            return None, None
        raise error(f"the {what} endpoint {url} could not be reached: {type(exc).__name__}", url=url) from None
    try:
        return response.status_code, response.json()
    except ValueError:
        return response.status_code, None
    finally:
        response.close()


def _documents(http, urls, headers=None):
    """``(url, document)`` for each of ``urls`` that answers a JSON object, in order; any other
    answer (not there, not JSON, unreachable) is skipped."""
    for url in urls:
        status, document = fetch_json(http, url, headers)
        if status == 200 and isinstance(document, dict):
            yield url, document


def find_resource_metadata(http, server_url: str, challenge: dict | None, headers=None) -> dict | None:
    """Rule 1: the validated document, or None when there is none at all (rule 2)."""
    named = (challenge or {}).get("resource_metadata")
    urls = [named] if named else well_known_resource_metadata(server_url)
    for url, document in _documents(http, urls, headers):
        resource = document.get("resource")
        if not isinstance(resource, str) or not resource_covers(resource, server_url):
            raise DiscoveryError(f"the protected resource metadata at {url} names the resource {resource!r}, "
                                 f"not this MCP server ({server_url}): refusing to authorize for it", url=url)
        servers = document.get("authorization_servers")
        if not isinstance(servers, list) or not servers or not all(isinstance(s, str) for s in servers):
            raise DiscoveryError(f"the protected resource metadata at {url} lists no authorization_servers",
                                 url=url)
        return document
    if named:
        raise DiscoveryError(f"the server named protected resource metadata at {named}, but it could not be "
                             "read", url=named)
    return None


def authorization_server_metadata_urls(issuer: str) -> list:
    """Rule 3's order."""
    origin, path = authorization_base_url(issuer), urlsplit(issuer).path.rstrip("/")
    urls = [f"{origin}/.well-known/oauth-authorization-server{path}",
            f"{origin}/.well-known/openid-configuration{path}"]
    return urls + [f"{origin}{path}/.well-known/openid-configuration"] if path else urls


def find_authorization_server(http, issuer: str, headers=None) -> dict:
    """Rule 3: the metadata of ``issuer``; ``DiscoveryError`` when none is usable."""
    check_endpoint(issuer, "issuer")
    refused = []
    for url, document in _documents(http, authorization_server_metadata_urls(issuer), headers):
        if document.get("issuer") == issuer:
            return document
        refused.append(f"{url} claims issuer {document.get('issuer')!r}")
    detail = f" ({'; '.join(refused)})" if refused else ""
    raise DiscoveryError(f"no authorization server metadata for the issuer {issuer}{detail}", url=issuer)


def authorization_base_url(server_url: str) -> str:
    """Rule 2: the MCP server URL with its path discarded (2025-03-26 #authorization-base-url)."""
    parts = urlsplit(server_url)
    return f"{parts.scheme}://{parts.netloc}"


def legacy_authorization_server(http, server_url: str, headers=None) -> dict:
    """Rule 2: a 2025-03-26 server, its own authorization server."""
    origin = authorization_base_url(server_url)
    for _, document in _documents(http, [f"{origin}/.well-known/oauth-authorization-server"], headers):
        issuer = document.get("issuer")
        return {**document, "issuer": issuer if isinstance(issuer, str) and issuer else origin}
    return {"issuer": origin, "authorization_endpoint": origin + "/authorize", "token_endpoint": origin + "/token",
            "registration_endpoint": origin + "/register", "code_challenge_methods_supported": ["S256"]}


def require_pkce(metadata: dict) -> None:
    """Rule 4."""
    methods = metadata.get("code_challenge_methods_supported")
    if not isinstance(methods, list) or "S256" not in methods:
        raise DiscoveryError(f"the authorization server {metadata.get('issuer')} does not advertise PKCE with "
                             f"S256 (code_challenge_methods_supported: {methods!r}): refusing to authorize",
                             url=str(metadata.get("issuer", "")))


def check_endpoint(url, what: str) -> str:
    """Rule 4: an https URL, or http on a loopback host."""
    parts = urlsplit(url) if isinstance(url, str) else None
    if parts is None or not parts.hostname or parts.scheme not in ("https", "http") or \
            (parts.scheme == "http" and parts.hostname not in LOOPBACK_HOSTS):
        raise DiscoveryError(f"the authorization server's {what} {url!r} is not an https URL", url=str(url))
    return url
