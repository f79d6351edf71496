"""The MCP client as an OAuth 2.1 client: providers passed as ``Client.http(url, auth=...)``.

Spec: basic/authorization (2025-11-25; 2025-03-26 and 2025-06-18 for older servers;
2026-07-28 for the ``iss`` check, ``application_type`` and issuer-keyed credentials),
security_best_practices.

Rules:

1. A provider is a ``requests`` auth object bound to one MCP server URL (``bind``;
   ``Client.http`` does it). It puts ``Authorization: Bearer`` on every request to
   that server's origin (each POST, the GET stream, the DELETE; never elsewhere, never
   in a URL) and watches the answers: on 401 it authorizes and re-sends the request,
   on 403 ``insufficient_scope`` it steps up and re-sends. At most ``max_retries``
   rounds per request, then ``AuthorizationError`` (401) or ``InsufficientScope``
   (403). A DELETE (closing) never starts an interactive flow.
2. One flow at a time per provider (a lock); a request that failed with a token
   older than the current one is simply re-sent.
3. On 401: discovery (``discovery`` rules; ``issuer``, the key of what is stored,
   is the validated metadata's issuer, or for a 2025-03-26 server without protected
   resource metadata its authorization base URL), then a stored token for this issuer and
   resource that differs from the refused one, then the refresh token, then the
   grant (authorization code for ``OAuthClientProvider``). An expired token is
   refreshed before it is sent. Refresh tokens rotate: a new one replaces the old.
4. Scopes: the challenge's ``scope``, else the metadata's ``scopes_supported``, else
   none (the constructor's ``scope`` is added); on step-up the union of what was
   asked before and the challenge; ``offline_access`` only when the authorization
   server lists it.
5. Authorization code: PKCE S256, ``state`` and ``resource`` on the request; the
   redirect the ``user_agent`` callback returns must go to ``redirect_uri``, carry
   the same ``state`` and pass the RFC 9207 ``iss`` check against the issuer
   recorded from the validated metadata (2026-07-28 table) before its code or
   error is used. ``redirect_uri`` is https or http on a loopback host.
6. Client identity, by priority: pre-registered ``client_id`` (bound to the first
   issuer it is used with; another issuer later is an error), a Client ID Metadata
   Document URL when the server advertises ``client_id_metadata_document_supported``,
   Dynamic Client Registration; each kept in ``storage`` under the issuer.
"""
from __future__ import annotations

import threading
import time
from urllib.parse import parse_qs, urlencode, urlsplit

from mcp_ref.auth.challenge import bearer_challenge, canonical_resource, split_scopes
from mcp_ref.auth.discovery import (LOOPBACK_HOSTS, authorization_base_url, check_endpoint, find_authorization_server,
                        find_resource_metadata, legacy_authorization_server, require_pkce)
from mcp_ref.auth.exceptions import (AuthorizationDenied, AuthorizationError, InsufficientScope, RegistrationError,
                                     TokenError)
from mcp_ref.auth.oauth import register_client, token_request
from mcp_ref.auth.pkce import challenge_for, new_state, new_verifier, same_secret
from mcp_ref.auth.storage import InMemoryStorage
from mcp_ref.errors import require

__all__ = ["OAuthClientProvider"]

REFRESH_MARGIN = 30.0          # seconds before expiry a token counts as expired


def _origin(url: str) -> tuple:
    return urlsplit(canonical_resource(url))[:2]           # scheme and host, without a default port


def _bearer_of(request) -> str | None:
    value = request.headers.get("Authorization", "")
    return value[7:] if value[:7].lower() == "bearer " else None


class _Provider:
    """Rules 1 to 4, common to the three grants; ``_grant(scope)`` is the authorization code's
    own, the machines' grants (grants.py) name their token request's ``_form(scope)``."""

    max_retries = 2

    def __init__(self, *, client_id=None, client_secret=None, scope=None, storage=None):
        self.client_id, self._client_secret = client_id, client_secret
        self.scope = split_scopes(scope)
        self.storage = storage if storage is not None else InMemoryStorage()
        self.server_url = None
        self.resource = None              # what ``resource`` carries (RFC 8707)
        self.issuer = None
        self.metadata = None              # the authorization server's
        self.resource_metadata = None
        self._requested: list = []        # scopes asked for so far (rule 4)
        self._lock = threading.RLock()
        self._http = None

    def __repr__(self) -> str:            # never a secret or a token
        return f"<{type(self).__name__} for {self.server_url or '(unbound)'} issuer={self.issuer}>"

    # ------------------------------------------------------------------ binding, requests' protocol
    def bind(self, url: str) -> "_Provider":
        """Bind to the MCP server at ``url`` (rule 1); binding again to another URL is an error."""
        if self.server_url is not None and canonical_resource(url) != canonical_resource(self.server_url):
            raise ValueError(f"this auth provider is bound to {self.server_url}; use another one for {url}")
        self.server_url = url
        if self.resource is None:
            self.resource = canonical_resource(url)
        return self

    def _session(self):
        if self._http is None:
            requests = require("requests", "requests", "the OAuth client")
            self._http = requests.Session()
            self._http.headers["User-Agent"] = "mcp_ref"
        return self._http

    def __call__(self, request):
        if self.server_url is None:
            self.bind(request.url)
        if _origin(request.url) != _origin(self.server_url):
            return request                                 # tokens go to their server only
        token = self._token()
        if token is not None:
            request.headers["Authorization"] = f"Bearer {token}"
        request.register_hook("response", self._on_response)
        return request

    def _token(self, refresh: bool = True) -> str | None:
        """The current access token; an expired one is refreshed first (rule 3)."""
        with self._lock:
            tokens = self._tokens()
            expires_at = (tokens or {}).get("expires_at")
            if refresh and expires_at is not None and time.time() >= expires_at - REFRESH_MARGIN:
                if self._refresh(tokens):
                    tokens = self._tokens()
            return tokens["access_token"] if tokens else None

    def _tokens(self):
        return None if self.issuer is None else self.storage.get_tokens(self.issuer, self.resource)

    def _on_response(self, response, **kwargs):
        """Rule 1: authorize or step up, and re-send, as often as ``max_retries``."""
        for rounds in range(self.max_retries + 1):             # the last round only reports
            status = response.status_code
            challenge = bearer_challenge(response.headers) if status in (401, 403) else None
            step_up = status == 403 and (challenge or {}).get("error") == "insufficient_scope"
            request = response.request
            if not (status == 401 or step_up) or request.method == "DELETE":
                return response
            if rounds == self.max_retries:
                response.close()
                if status == 403:
                    raise InsufficientScope(f"{self.server_url} still refuses the request for insufficient scope "
                                            f"(needs {(challenge or {}).get('scope')!r}) after {self.max_retries} "
                                            "authorizations", status=403, url=self.server_url)
                raise AuthorizationError(f"{self.server_url} still answers 401 after {self.max_retries} "
                                         "authorizations", status=401, url=self.server_url)
            sent = _bearer_of(request)
            version = request.headers.get("MCP-Protocol-Version")
            headers = {"MCP-Protocol-Version": version} if version else {}
            try:
                with self._lock:
                    current = self._tokens()
                    if current is None or same_secret(current.get("access_token"), sent) or sent is None:
                        self._respond(status, challenge or {}, sent, headers)
                    token = self._token(refresh=False)
                if token is None:
                    raise AuthorizationError(f"no access token for {self.server_url}", status=status,
                                             url=self.server_url)
                response.content                               # read to the end: the connection is reused
            finally:
                response.close()
            retry = request.copy()
            retry.headers["Authorization"] = f"Bearer {token}"
            new = response.connection.send(retry, **kwargs)        # the adapter: new.request is retry
            new.history.append(response)
            response = new

    # ------------------------------------------------------------------ the flow (rules 3, 4)
    def _respond(self, status: int, challenge: dict, sent, headers) -> None:
        try:
            self._discover(challenge, headers)
            if status == 401:
                stored = self._tokens()                        # another token on hand, or a refreshed one
                if stored is not None and (not same_secret(stored.get("access_token"), sent) or self._refresh(stored)):
                    return
            self._grant(self._choose_scope(challenge, step_up=status == 403))
        except AuthorizationError:
            raise
        except Exception as exc:                               # requests errors, bad documents
            raise AuthorizationError(f"authorizing with {self.issuer or self.server_url} failed: "
                                     f"{type(exc).__name__}: {exc}", status=status, url=self.server_url) from None

    def _discover(self, challenge: dict, headers) -> None:
        """``discovery`` rules 1 to 3; fixes ``issuer``, ``metadata`` and ``resource``."""
        http = self._session()
        document = find_resource_metadata(http, self.server_url, challenge, headers)
        self.resource_metadata = document
        if document is None:                                   # 2025-03-26: the server's origin
            metadata = legacy_authorization_server(http, self.server_url, headers)
            key = authorization_base_url(self.server_url)      # not the issuer it claims (discovery rule 2)
        else:
            self.resource = document["resource"]
            metadata = find_authorization_server(http, document["authorization_servers"][0], headers)
            key = metadata["issuer"]
        self._use_issuer(key)
        self.metadata = metadata

    def _use_issuer(self, issuer: str) -> None:
        if self.client_id is not None and self.issuer not in (None, issuer):   # pre-registered: one issuer (rule 6)
            raise RegistrationError(f"the pre-registered client {self.client_id!r} belongs to {self.issuer}, "
                                    f"but {self.server_url} now names the authorization server {issuer}: "
                                    "register with it and pass its credentials")
        self.issuer = issuer

    def _choose_scope(self, challenge: dict, step_up: bool) -> str | None:
        """Rule 4."""
        asked = split_scopes(challenge.get("scope"))
        if not asked and not step_up:
            asked = split_scopes((self.resource_metadata or {}).get("scopes_supported"))
        scopes = list(dict.fromkeys((self._requested if step_up else []) + self.scope + asked))
        offered = (self.metadata or {}).get("scopes_supported") or []
        if self._wants_refresh and "offline_access" in offered and "offline_access" not in scopes:
            scopes.append("offline_access")
        if "offline_access" in scopes and "offline_access" not in offered:
            scopes.remove("offline_access")
        self._requested = scopes
        return " ".join(scopes) or None

    _wants_refresh = False
    client_assertion = None               # ``private_key_jwt``: ClientCredentialsProvider's callback

    def _identity(self, scope=None, register: bool = True) -> dict:
        """The client's credentials (``OAuthClientProvider``: rule 6)."""
        return {"client_id": self.client_id, "client_secret": self._client_secret}

    def _store(self, tokens: dict, previous: dict | None = None) -> None:
        if previous and "refresh_token" not in tokens and previous.get("refresh_token"):
            tokens["refresh_token"] = previous["refresh_token"]       # not rotated: keep the old one
        self.storage.set_tokens(self.issuer, self.resource, tokens)

    def _refresh(self, tokens: dict) -> bool:
        """Rule 3: False when there is no refresh token or the server refuses it (then forgotten)."""
        refresh_token = tokens.get("refresh_token")
        if not refresh_token or self.metadata is None:
            return False
        try:
            new = token_request(self._session(), self.metadata, self._identity(register=False),
                                {"grant_type": "refresh_token", "refresh_token": refresh_token,
                                 "resource": self.resource}, self.client_assertion)
        except (TokenError, RegistrationError):
            self.storage.set_tokens(self.issuer, self.resource, None)
            return False
        self._store(new, tokens)
        return True

    def _grant(self, scope) -> None:
        self._store(token_request(self._session(), self.metadata, self._identity(), self._form(scope),
                                  self.client_assertion))

    def _form(self, scope) -> dict:
        raise NotImplementedError


class OAuthClientProvider(_Provider):
    """A user's client: the authorization code grant with PKCE (rules 5, 6).

    ``redirect_uri``: where the authorization server sends the browser back;
    ``user_agent(authorization_url) -> redirected_url`` shows the URL to the user
    (a browser) and returns the URL it was redirected to (``redirect_uri?code=..
    &state=..``). ``client_id``/``client_secret``: pre-registered;
    ``client_metadata_url``: an https Client ID Metadata Document URL; ``client_name``:
    for Dynamic Client Registration; ``scope``: added to what the server asks;
    ``storage``: see ``auth.storage`` (in memory by default).
    """

    _wants_refresh = True

    def __init__(self, *, redirect_uri, user_agent, client_name=None, client_id=None, client_secret=None,
                 client_metadata_url=None, scope=None, storage=None):
        super().__init__(client_id=client_id, client_secret=client_secret, scope=scope, storage=storage)
        parts = urlsplit(redirect_uri or "")
        if not parts.scheme or (parts.scheme == "http" and parts.hostname not in LOOPBACK_HOSTS):
            raise ValueError(f"redirect_uri must be https, or http on localhost (basic/authorization"
                             f"#communication-security), not {redirect_uri!r}")
        if client_metadata_url is not None:
            meta = urlsplit(client_metadata_url)
            if meta.scheme != "https" or meta.path in ("", "/"):
                raise ValueError(f"client_metadata_url must be an https URL with a path, not {client_metadata_url!r}")
        if not callable(user_agent):
            raise TypeError("user_agent is a function (authorization_url) -> the URL redirected to")
        self.redirect_uri, self.user_agent = redirect_uri, user_agent
        self.client_name = client_name or "mcp_ref client"
        self.client_metadata_url = client_metadata_url

    def _identity(self, scope=None, register: bool = True) -> dict:
        """Rule 6."""
        if self.client_id is not None:
            return super()._identity()
        stored = self.storage.get_client(self.issuer)
        if stored is not None:
            return stored
        metadata = self.metadata
        if self.client_metadata_url and metadata.get("client_id_metadata_document_supported") is True:
            return {"client_id": self.client_metadata_url, "token_endpoint_auth_method": "none"}
        if not register:
            raise RegistrationError(f"no client registration for {self.issuer}")
        if not metadata.get("registration_endpoint"):
            raise RegistrationError(f"the authorization server {self.issuer} offers neither Client ID Metadata "
                                    "Documents nor Dynamic Client Registration: pass client_id (and client_secret) "
                                    "from a registration made beforehand")
        client = register_client(self._session(), metadata, redirect_uri=self.redirect_uri,
                                 client_name=self.client_name, scope=scope)
        self.storage.set_client(self.issuer, client)
        return client

    def _grant(self, scope) -> None:
        """Rule 5."""
        metadata = self.metadata
        require_pkce(metadata)
        endpoint = check_endpoint(metadata.get("authorization_endpoint"), "authorization_endpoint")
        client = self._identity(scope)
        verifier, state, issuer = new_verifier(), new_state(), metadata["issuer"]
        params = {"response_type": "code", "client_id": client["client_id"], "redirect_uri": self.redirect_uri,
                  "state": state, "code_challenge": challenge_for(verifier), "code_challenge_method": "S256",
                  "resource": self.resource, "scope": scope}
        query = urlencode({k: v for k, v in params.items() if v is not None})
        url = endpoint + ("&" if urlsplit(endpoint).query else "?") + query
        code = self._read_redirect(self.user_agent(url), state, issuer, metadata)
        self._store(token_request(self._session(), metadata, client,
                                  {"grant_type": "authorization_code", "code": code, "redirect_uri": self.redirect_uri,
                                   "code_verifier": verifier, "resource": self.resource}))

    def _read_redirect(self, redirected, state: str, issuer: str, metadata: dict) -> str:
        """Rule 5: the code, once the redirect passed every check."""
        if not isinstance(redirected, str):
            raise AuthorizationDenied("the user_agent callback returned no redirect URL")
        got, want = urlsplit(redirected), urlsplit(self.redirect_uri)
        if (got.scheme, got.netloc, got.path) != (want.scheme, want.netloc, want.path):
            raise AuthorizationDenied(f"the authorization response went to {got.scheme}://{got.netloc}{got.path}, "
                                      f"not the redirect_uri {self.redirect_uri}")
        query = {key: values[0] for key, values in parse_qs(got.query, keep_blank_values=True).items()}
        iss = query.get("iss")
        if iss is not None and iss != issuer:                  # RFC 9207 §2.4: simple string comparison
            raise AuthorizationDenied(f"the authorization response names the issuer {iss!r}, not {issuer!r}: "
                                      "refused (mix-up protection, RFC 9207)")
        if iss is None and metadata.get("authorization_response_iss_parameter_supported") is True:
            raise AuthorizationDenied(f"the authorization server {issuer} promises an iss parameter, but the "
                                      "authorization response has none: refused (RFC 9207)")
        if not same_secret(query.get("state"), state):
            raise AuthorizationDenied("the authorization response's state does not match the request's: refused")
        if "error" in query:
            detail = f": {query['error_description']}" if query.get("error_description") else ""
            raise AuthorizationDenied(f"authorization refused: {query['error']}{detail}")
        if not query.get("code"):
            raise AuthorizationDenied("the authorization response carries no code")
        return query["code"]
