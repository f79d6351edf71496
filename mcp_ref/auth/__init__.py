"""OAuth 2.1 authorization for MCP over HTTP (stdio carries no credentials).

Server side (``resource_server``): a token verifier, 401/403 challenges, the
protected resource metadata. Client side (``providers``, ``grants``): ``OAuthClientProvider``
(authorization code + PKCE, for a user), ``ClientCredentialsProvider`` and
``JwtBearerGrantProvider`` (machines), passed as ``Client.http(url, auth=provider)``.
Only requests and the standard library; signing (``private_key_jwt``, identity
assertions) is the application's callback. Spec: basic/authorization.

The package loads whole on its first use: by the HTTP client, by an HTTP server given
``auth=``, or by the application; ``import mcp_ref`` and the stdio transports never load it.
"""
from mcp_ref.auth.challenge import canonical_resource, parse_challenges
from mcp_ref.auth.exceptions import (AuthorizationDenied, AuthorizationError, DiscoveryError, InsufficientScope,
                                     RegistrationError, TokenError)
from mcp_ref.auth.grants import ClientCredentialsProvider, JwtBearerGrantProvider
from mcp_ref.auth.loopback import LoopbackUserAgent
from mcp_ref.auth.providers import OAuthClientProvider
from mcp_ref.auth.resource_server import AccessToken, StaticTokenVerifier, TokenVerifier
from mcp_ref.auth.storage import InMemoryStorage, TokenStorage

__all__ = ["OAuthClientProvider", "ClientCredentialsProvider", "JwtBearerGrantProvider", "TokenStorage",
           "InMemoryStorage", "LoopbackUserAgent",
           "AccessToken", "TokenVerifier", "StaticTokenVerifier",
           "AuthorizationError", "DiscoveryError", "RegistrationError", "TokenError", "AuthorizationDenied",
           "InsufficientScope", "canonical_resource", "parse_challenges"]
