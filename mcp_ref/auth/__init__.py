"""OAuth 2.1 authorization for MCP over HTTP (stdio carries no credentials).

Server side (``resource_server``): a token verifier, 401/403 challenges, the
protected resource metadata. Client side (``providers``, ``grants``): ``OAuthClientProvider``
(authorization code + PKCE, for a user), ``ClientCredentialsProvider`` and
``JwtBearerGrantProvider`` (machines), passed as ``Client.http(url, auth=provider)``.
Only requests and the standard library; signing (``private_key_jwt``, identity
assertions) is the application's callback. Spec: basic/authorization.
"""
from .challenge import canonical_resource, parse_challenges
from .exceptions import (AuthorizationDenied, AuthorizationError, DiscoveryError, InsufficientScope,
                         RegistrationError, TokenError)
from .loopback import LoopbackUserAgent
from .grants import ClientCredentialsProvider, JwtBearerGrantProvider
from .providers import OAuthClientProvider
from .resource_server import AccessToken, StaticTokenVerifier, TokenVerifier
from .storage import InMemoryStorage, TokenStorage

__all__ = ["OAuthClientProvider", "ClientCredentialsProvider", "JwtBearerGrantProvider", "TokenStorage",
           "InMemoryStorage", "LoopbackUserAgent",
           "AccessToken", "TokenVerifier", "StaticTokenVerifier",
           "AuthorizationError", "DiscoveryError", "RegistrationError", "TokenError", "AuthorizationDenied",
           "InsufficientScope", "canonical_resource", "parse_challenges"]
