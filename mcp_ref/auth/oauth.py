"""Talking to the authorization server: registration and the token endpoint.

Spec: basic/authorization#client-registration-approaches (and 2026-07-28
client-registration: ``application_type``), #dynamic-client-registration (RFC 7591),
#token-handling; OAuth 2.1 §2.4 (client authentication), §4.3 (refresh);
RFC 7523 (``private_key_jwt`` and the JWT bearer grant).

Rules:

1. Client authentication at the token endpoint: the registration's
   ``token_endpoint_auth_method`` when it has one; else, with a secret,
   ``client_secret_basic`` unless the metadata lists only ``client_secret_post``;
   with a ``client_assertion`` callback, ``private_key_jwt`` (its audience is the
   issuer); else ``none`` (``client_id`` in the form). Basic credentials are
   form-encoded before base64 (RFC 6749 §2.3.1).
2. Every token request carries ``resource`` (RFC 8707). A token response must be
   JSON with ``access_token`` and ``token_type`` Bearer; ``expires_in`` becomes
   ``expires_at``. Errors become ``TokenError`` with the OAuth ``error`` code; the
   token itself is never put in a message.
3. Registration (RFC 7591) asks for the authorization code and refresh grants, the
   client's redirect URI, ``application_type`` (``native`` for a loopback or custom
   scheme redirect, else ``web``) and a token endpoint method the server lists
   (``none`` first: a public client).
4. Both POSTs go out under the SSRF policy (ssrf.py rule 6, through
   ``discovery.fetch_json``): an endpoint that is, or resolves to, a private or
   reserved address is refused (``UnsafeAddressError``) before anything is sent,
   and a redirect is never followed.
"""
from __future__ import annotations

import base64
import time
from urllib.parse import quote_plus, urlsplit

from mcp_ref.auth.discovery import LOOPBACK_HOSTS, check_endpoint, fetch_json
from mcp_ref.auth.exceptions import RegistrationError, TokenError

__all__ = ["auth_method", "token_request", "register_client", "application_type", "JWT_BEARER", "ASSERTION_TYPE"]

JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"
ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"


def auth_method(metadata: dict, client: dict, client_assertion=None) -> str:
    """Rule 1."""
    method = client.get("token_endpoint_auth_method")
    if method:
        return method
    supported = metadata.get("token_endpoint_auth_methods_supported") or ["client_secret_basic"]
    if client_assertion is not None and ("private_key_jwt" in supported or not client.get("client_secret")):
        return "private_key_jwt"
    if client.get("client_secret"):
        return "client_secret_basic" if "client_secret_basic" in supported else "client_secret_post"
    return "none"


def token_request(http, metadata: dict, client: dict, form: dict, client_assertion=None) -> dict:
    """POST ``form`` to the token endpoint with the client's authentication (rules 1, 2)."""
    endpoint = check_endpoint(metadata.get("token_endpoint"), "token_endpoint")
    form = {key: value for key, value in form.items() if value is not None}
    headers: dict = {}
    method = auth_method(metadata, client, client_assertion)
    client_id, secret = str(client.get("client_id")), client.get("client_secret") or ""
    if method in ("client_secret_basic", "client_secret_post") and not secret:
        raise TokenError(f"{method} needs a client_secret")
    if method == "client_secret_basic":
        pair = f"{quote_plus(client_id)}:{quote_plus(secret)}".encode("utf-8")
        headers["Authorization"] = "Basic " + base64.b64encode(pair).decode("ascii")
    elif method == "client_secret_post":
        form.update(client_id=client_id, client_secret=secret)
    elif method == "private_key_jwt":
        if client_assertion is None:
            raise TokenError("private_key_jwt needs a client_assertion callback")
        form.update(client_id=client_id, client_assertion_type=ASSERTION_TYPE,
                    client_assertion=client_assertion(metadata["issuer"]))
    elif method == "none":
        form["client_id"] = client_id
    else:
        raise TokenError(f"unsupported token endpoint authentication method {method!r}")
    status, body = fetch_json(http, endpoint, headers, error=TokenError, what="token", data=form)
    if status != 200 or not isinstance(body, dict):
        fields = body if isinstance(body, dict) else {}
        error, described = fields.get("error"), fields.get("error_description")
        raise TokenError(f"the token endpoint refused the {form.get('grant_type')} grant: HTTP {status}" +
                         (f" {error}" if error else "") + (f": {described}" if isinstance(described, str) else ""),
                         status=status, url=endpoint, error=error)
    if not isinstance(body.get("access_token"), str) or str(body.get("token_type", "")).lower() != "bearer":
        raise TokenError(f"the token endpoint {endpoint} answered without a Bearer access_token", url=endpoint)
    expires_in = body.get("expires_in")
    if isinstance(expires_in, (int, float)) and not isinstance(expires_in, bool):
        body["expires_at"] = time.time() + float(expires_in)
    return body


def application_type(redirect_uri: str) -> str:
    """Rule 3 (2026-07-28 client-registration#application-type-and-redirect-uri-constraints)."""
    parts = urlsplit(redirect_uri)
    if parts.scheme not in ("http", "https") or parts.hostname in LOOPBACK_HOSTS:
        return "native"
    return "web"


def register_client(http, metadata: dict, *, redirect_uri: str, client_name: str, scope: str | None) -> dict:
    """Rule 3: Dynamic Client Registration; returns the client information."""
    endpoint = check_endpoint(metadata.get("registration_endpoint"), "registration_endpoint")
    supported = metadata.get("token_endpoint_auth_methods_supported") or ["none"]
    method = next((m for m in ("none", "client_secret_basic", "client_secret_post") if m in supported), "none")
    request = {"client_name": client_name, "redirect_uris": [redirect_uri],
               "grant_types": ["authorization_code", "refresh_token"], "response_types": ["code"],
               "token_endpoint_auth_method": method, "application_type": application_type(redirect_uri)}
    if scope:
        request["scope"] = scope
    status, body = fetch_json(http, endpoint, error=RegistrationError, what="registration", json=request)
    if status not in (200, 201) or not isinstance(body, dict) or not isinstance(body.get("client_id"), str):
        fields = body if isinstance(body, dict) else {}
        detail = f": {fields['error']} {fields.get('error_description') or ''}".rstrip() if fields.get("error") else ""
        raise RegistrationError(f"dynamic client registration at {endpoint} failed: HTTP {status}"
                                f"{detail} (redirect_uri {redirect_uri}, application_type "
                                f"{request['application_type']})", status=status, url=endpoint)
    body.setdefault("token_endpoint_auth_method", method)
    return body
