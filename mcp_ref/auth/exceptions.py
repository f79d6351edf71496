"""The errors of the OAuth flows (client side). Spec: basic/authorization.

Every one is a ``SessionError``: a local condition, never a JSON-RPC answer. Each
carries ``status`` (the HTTP status that started the flow, when there was one),
``body`` and ``url``, so the HTTP transports fail a request with it as they
would with an ``HttpError``.
"""
from __future__ import annotations

from mcp_ref.errors import SessionError

__all__ = ["AuthorizationError", "DiscoveryError", "RegistrationError", "TokenError", "InsufficientScope",
           "AuthorizationDenied"]


class AuthorizationError(SessionError):
    """The client could not obtain (or keep) an access token for the MCP server."""

    def __init__(self, message: str, *, status: int | None = None, body: str = "", url: str = "", error=None):
        super().__init__(message)
        self.status, self.body, self.url, self.error = status, body, url, error


class DiscoveryError(AuthorizationError):
    """No usable protected resource metadata or authorization server metadata (a missing
    document, a ``resource`` or ``issuer`` that does not match, no S256 PKCE)."""


class RegistrationError(AuthorizationError):
    """No client identity for the authorization server (registration refused or impossible)."""


class TokenError(AuthorizationError):
    """The token endpoint refused a grant (``.error`` is its OAuth error code)."""


class AuthorizationDenied(AuthorizationError):
    """The authorization response was an error, or failed a check (``state``, ``iss``)."""


class InsufficientScope(AuthorizationError):
    """The server still answers 403 ``insufficient_scope`` after the step-up retries."""
