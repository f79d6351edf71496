"""The MCP server as an OAuth 2.1 resource server: token checks, scope checks, metadata.

Spec: basic/authorization#access-token-usage, #token-handling, #error-handling,
#scope-challenge-handling, #authorization-server-location (RFC 9728),
security_best_practices#token-passthrough, #session-hijacking.

Rules:

1. The application supplies a verifier: ``verify(token, resource) -> AccessToken | None``
   (an object with that method, or a plain function). It decodes or introspects the
   token; this module then checks what every token must satisfy: it is known (not
   None), not expired (``expires_at``), and its ``audience`` names this server's
   canonical URI (``resource``). A token for another audience is refused like a bad
   one: the server never accepts or passes on a token meant for someone else.
2. Every request to the MCP endpoints (Streamable HTTP and the legacy ones) needs
   ``Authorization: Bearer <token>``. Missing or invalid → 401 with
   ``WWW-Authenticate: Bearer resource_metadata="…", scope="…"`` (``error="invalid_token"``
   when a token was sent). A token in the query string (``access_token=``) → 400
   ``invalid_request``, even next to a good header (RFC 6750 §2.3 is not allowed).
3. Scopes: ``required_scopes`` is a list (needed by every request) or a dict whose
   keys are ``"*"`` (every request), a method (``"tools/call"``,
   ``"resources/read"``, ...) or ``"tool:NAME"`` (one tool). A request needing
   scopes the token lacks → 403 ``error="insufficient_scope"`` naming every scope
   the operation needs, in one challenge. Scope hierarchies are the verifier's: it
   returns the effective scopes.
4. The protected resource metadata (RFC 9728) is served at both well-known URIs:
   ``/.well-known/oauth-protected-resource<path>`` and the root one, without
   authentication. ``authorization_servers`` is required; ``resource`` defaults to
   the server's URL; ``bearer_methods_supported`` is ``["header"]``.
5. A session belongs to the subject whose token created it; another subject's
   token on that session id gets 404, as an unknown session would (nothing is
   revealed about it).
"""
from __future__ import annotations

import time
from typing import NamedTuple, Protocol
from urllib.parse import parse_qs, urlsplit

from mcp_ref.auth.challenge import canonical_resource, format_challenge, split_scopes, well_known_resource_metadata

__all__ = ["AccessToken", "TokenVerifier", "StaticTokenVerifier", "ResourceGuard", "Refusal"]


class AccessToken(NamedTuple):
    """What a verifier learnt from a token. ``scopes`` is a tuple of strings;
    ``expires_at`` seconds since the epoch (None: no expiry); ``audience`` a string or a
    list of strings (RFC 7519 ``aud``); ``claims`` anything else the application keeps."""

    subject: str
    scopes: tuple = ()
    expires_at: float | None = None
    audience: object = None
    client_id: str | None = None
    claims: dict | None = None


class TokenVerifier(Protocol):
    """The interface (rule 1). Subclass it, or pass any function ``(token, resource)``."""

    def verify(self, token: str, resource: str) -> AccessToken | None: ...


class StaticTokenVerifier(TokenVerifier):
    """Fixed tokens for tests and demos: ``{"token": AccessToken(...)}`` or
    ``{"token": {"subject": ..., "scopes": [...], ...}}``. An entry without an
    ``audience`` is issued for whichever server asks (so a demo works on any port);
    a real verifier always checks the audience the authorization server wrote."""

    def __init__(self, tokens: dict):
        self.tokens = {token: AccessToken(**dict(value, scopes=tuple(value.get("scopes", ()))))
                       if isinstance(value, dict) else value for token, value in tokens.items()}

    def verify(self, token: str, resource: str) -> AccessToken | None:
        access = self.tokens.get(token)
        if access is not None and access.audience is None:
            access = access._replace(audience=resource)
        return access


class Refusal(NamedTuple):
    """A refused request: the HTTP status, the ``WWW-Authenticate`` value, a message."""

    status: int
    challenge: str
    message: str


class ResourceGuard:
    """Rules 1 to 4 for one MCP endpoint. ``resource_metadata`` is the RFC 9728 document
    (``authorization_servers`` required; ``resource`` filled in by ``bind``)."""

    def __init__(self, verifier, resource_metadata: dict | None, required_scopes=None):
        if verifier is None:
            raise ValueError("auth needs a token verifier")
        self._verify = verifier.verify if hasattr(verifier, "verify") else verifier
        if not callable(self._verify):
            raise TypeError("auth is a TokenVerifier or a function (token, resource) -> AccessToken | None")
        metadata = dict(resource_metadata or {})
        servers = metadata.get("authorization_servers")
        if not servers or not isinstance(servers, (list, tuple)) or not all(isinstance(s, str) for s in servers):
            raise ValueError("resource_metadata needs 'authorization_servers': the issuer URLs of the "
                             "authorization servers that issue tokens for this server (RFC 9728 §2)")
        metadata.setdefault("bearer_methods_supported", ["header"])
        self.metadata = metadata
        scopes = required_scopes if isinstance(required_scopes, dict) else {"*": required_scopes}
        self.scopes = {key: tuple(split_scopes(value)) for key, value in scopes.items()}
        self.resource, self.metadata_url, self.metadata_paths = "", "", ()     # set by bind

    def bind(self, server_url: str) -> None:
        """Fix the resource URI (the configured ``resource``, else ``server_url``) and the
        well-known paths the metadata is served at (rule 4)."""
        self.resource = canonical_resource(self.metadata.get("resource") or server_url)
        self.metadata["resource"] = self.metadata.get("resource") or self.resource
        urls = well_known_resource_metadata(self.resource)
        self.metadata_url = urls[0]
        self.metadata_paths = tuple(urlsplit(url).path for url in urls)

    def _challenge(self, **params) -> str:
        scope = " ".join(self.scopes.get("*") or self.metadata.get("scopes_supported") or ()) or None
        params.setdefault("scope", scope)
        return format_challenge(error=params.pop("error", None), resource_metadata=self.metadata_url, **params)

    def authenticate(self, target: str, authorization: str | None):
        """Rules 1 and 2 for one request (``target``: the request line's path and query):
        an ``AccessToken``, or a ``Refusal``."""
        query = urlsplit(target).query
        if query and "access_token" in parse_qs(query, keep_blank_values=True):
            return Refusal(400, self._challenge(error="invalid_request",
                                                error_description="access tokens are not accepted in the URI "
                                                                  "query; send an Authorization header"),
                           "Bad Request: access tokens are not accepted in the query string")
        scheme, _, token = (authorization or "").strip().partition(" ")
        token = token.strip()
        if scheme.lower() != "bearer" or not token:
            return Refusal(401, self._challenge(), "Unauthorized: a Bearer access token is required")
        try:
            access = self._verify(token, self.resource)
        except Exception as exc:                       # a failing verifier refuses; it never crashes
            return Refusal(401, self._challenge(error="invalid_token", error_description="token check failed"),
                           f"Unauthorized: the access token could not be checked ({type(exc).__name__})")
        problem = self._problem(access)
        if problem:
            return Refusal(401, self._challenge(error="invalid_token", error_description=problem),
                           f"Unauthorized: {problem}")
        return access

    def _problem(self, access) -> str:
        if not isinstance(access, AccessToken):
            return "the access token is invalid"
        if access.expires_at is not None and time.time() >= access.expires_at:
            return "the access token has expired"
        audience = access.audience
        audiences = [audience] if isinstance(audience, str) else list(audience or ())  # type: ignore[call-overload]
        if not any(isinstance(a, str) and canonical_resource(a) == self.resource for a in audiences):
            return "the access token was not issued for this server (audience)"
        return ""

    def check_scopes(self, access: AccessToken, messages) -> Refusal | None:
        """Rule 3: a 403 naming every scope the requests need (in a stable order), when the token lacks one."""
        needed = list(self.scopes.get("*", ())) if messages else []
        for message in messages:
            needed += self.scopes.get(message.method, ())
            if message.method == "tools/call":
                needed += self.scopes.get(f"tool:{(message.params or {}).get('name')}", ())
        needed = list(dict.fromkeys(needed))
        missing = [s for s in needed if s not in set(access.scopes)]
        if not missing:
            return None
        return Refusal(403, self._challenge(error="insufficient_scope", scope=" ".join(needed),
                                            error_description=f"this request needs the scope {' '.join(missing)}"),
                       f"Forbidden: insufficient scope (needs {' '.join(needed)})")
