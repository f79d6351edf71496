"""OAuth 2.1 authorization for MCP over HTTP (stdio carries no credentials).

Server side (``resource_server``): a token verifier, 401/403 challenges, the
protected resource metadata. Client side (``providers``, ``grants``): ``OAuthClientProvider``
(authorization code + PKCE, for a user), ``ClientCredentialsProvider`` and
``JwtBearerGrantProvider`` (machines), passed as ``Client.http(url, auth=provider)``.
Only requests and the standard library; signing (``private_key_jwt``, identity
assertions) is the application's callback. Spec: basic/authorization.

The names below load with their module on first use (PEP 562): an HTTP server
needs only ``resource_server``, and importing the client side (grants,
providers, discovery, storage...) with it was a tenth of its start-up
(bench/bench_http.py, cold start; issue 17).
"""
from __future__ import annotations

_WHERE = {"canonical_resource": "challenge", "parse_challenges": "challenge",
          "AuthorizationDenied": "exceptions", "AuthorizationError": "exceptions",
          "DiscoveryError": "exceptions", "InsufficientScope": "exceptions",
          "RegistrationError": "exceptions", "TokenError": "exceptions",
          "LoopbackUserAgent": "loopback", "ClientCredentialsProvider": "grants",
          "JwtBearerGrantProvider": "grants", "OAuthClientProvider": "providers",
          "AccessToken": "resource_server", "StaticTokenVerifier": "resource_server",
          "TokenVerifier": "resource_server", "InMemoryStorage": "storage", "TokenStorage": "storage"}

__all__ = ["OAuthClientProvider", "ClientCredentialsProvider", "JwtBearerGrantProvider", "TokenStorage",
           "InMemoryStorage", "LoopbackUserAgent",
           "AccessToken", "TokenVerifier", "StaticTokenVerifier",
           "AuthorizationError", "DiscoveryError", "RegistrationError", "TokenError", "AuthorizationDenied",
           "InsufficientScope", "canonical_resource", "parse_challenges"]


def __getattr__(name: str):
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module
    value = getattr(import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list:
    return sorted(set(globals()) | set(__all__))
