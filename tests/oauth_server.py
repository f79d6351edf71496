"""A small OAuth 2.1 authorization server for the tests only (stdlib ``http.server``).

It issues tokens the MCP server under test accepts (``verify`` is its token
verifier) and plays the browser and the user (``user_agent``). Switches cover the
variants the client must handle; every request is recorded in ``log`` as
``(method, path, params)`` so tests can check what the client sent.

Switches (constructor keywords):

* ``issuer_path``: "" or e.g. "/tenant1"; ``metadata``: where the metadata is served:
  "oauth" (RFC 8414, path-inserted), "oidc" (OpenID, path-inserted), "oidc-append"
  (OpenID, path appended) or None (nowhere); ``claimed_issuer``: an ``issuer`` value
  that differs from the real one.
* ``pkce``: the ``code_challenge_methods_supported`` list, or None (absent).
* ``dcr``: a registration endpoint; ``cimd``: ``client_id_metadata_document_supported``;
  ``clients``: pre-registered ``{client_id: {"secret": ..., "method": ...}}``.
* ``auth_methods``: ``token_endpoint_auth_methods_supported``.
* ``iss``: the ``iss`` the redirect carries: "right", "wrong" or None; ``advertise_iss``.
* ``refresh``/``rotate``: refresh tokens issued / rotated; ``ttl``: access token life (s).
* ``scopes_supported``; ``consent``: a function (requested scopes) -> granted scopes.
* ``assertions``: accepted JWT bearer assertions ``{assertion: subject}``;
  ``client_assertion``: a function (client_id, assertion) -> bool for private_key_jwt.
* ``default_endpoints``: serve
  /authorize, /token, /register at the root (the 2025-03-26 fallbacks);
  ``proxy_to``: forward every other path to this origin (an MCP server made to
  look like a 2025-03-26 server that is its own authorization server).

``POST /introspect`` (RFC 7662) answers for the tokens it issued, so a verifier in
another process (the official SDK's server in the interop tests) can check them.
"""
import base64
import hashlib
import json
import secrets
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote_plus, urlencode, urlsplit

import requests

from mcp_ref.auth import AccessToken


class AuthServer:
    def __init__(self, *, issuer_path="", metadata="oauth", claimed_issuer=None, pkce=("S256",), dcr=True,
                 cimd=False, clients=None, auth_methods=("none", "client_secret_basic", "client_secret_post",
                                                         "private_key_jwt"),
                 iss="right", advertise_iss=True, refresh=True, rotate=True, ttl=3600, scopes_supported=None,
                 consent=None, assertions=None, client_assertion=None, default_endpoints=False, proxy_to=None,
                 subject="alice"):
        self.issuer_path, self.metadata_at, self.claimed_issuer = issuer_path, metadata, claimed_issuer
        self.pkce, self.dcr, self.cimd = pkce, dcr, cimd
        self.clients = {cid: dict(info) for cid, info in (clients or {}).items()}
        self.auth_methods, self.iss, self.advertise_iss = auth_methods, iss, advertise_iss
        self.refresh, self.rotate, self.ttl = refresh, rotate, ttl
        self.scopes_supported, self.consent, self.subject = scopes_supported, consent, subject
        self.assertions = assertions or {}
        self.client_assertion = client_assertion
        self.default_endpoints, self.proxy_to = default_endpoints, proxy_to
        self.log, self.codes, self.tokens, self.refresh_tokens = [], {}, {}, {}
        self.authorizations = 0
        self._lock = threading.Lock()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self.httpd.daemon_threads = True
        self.httpd.auth = self
        self.base = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.issuer = self.base + issuer_path
        self._thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.1},
                                        name="test-oauth-server", daemon=True)
        self._thread.start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()
        self._thread.join(5)

    # -------------------------------------------------------------- what the tests use
    def endpoint(self, name):
        return (self.base if self.default_endpoints else self.issuer) + "/" + name

    def document(self):
        doc = {"issuer": self.claimed_issuer or self.issuer, "authorization_endpoint": self.endpoint("authorize"),
               "token_endpoint": self.endpoint("token"), "response_types_supported": ["code"],
               "grant_types_supported": ["authorization_code", "refresh_token", "client_credentials",
                                         "urn:ietf:params:oauth:grant-type:jwt-bearer"],
               "token_endpoint_auth_methods_supported": list(self.auth_methods)}
        if self.pkce is not None:
            doc["code_challenge_methods_supported"] = list(self.pkce)
        if self.dcr:
            doc["registration_endpoint"] = self.endpoint("register")
        if self.cimd:
            doc["client_id_metadata_document_supported"] = True
        if self.advertise_iss:
            doc["authorization_response_iss_parameter_supported"] = True
        if self.scopes_supported is not None:
            doc["scopes_supported"] = list(self.scopes_supported)
        return doc

    def metadata_paths(self):
        path = self.issuer_path
        return {"oauth": [f"/.well-known/oauth-authorization-server{path}"],
                "oidc": [f"/.well-known/openid-configuration{path}"],
                "oidc-append": [f"{path}/.well-known/openid-configuration"]}.get(self.metadata_at, [])

    def verify(self, token, resource):
        """The MCP server's token verifier: what this server issued, as issued."""
        with self._lock:
            return self.tokens.get(token)

    def user_agent(self, url):
        """The browser and the user: follow the authorization URL, return the redirect."""
        self.authorizations += 1
        response = requests.get(url, allow_redirects=False, timeout=10)
        assert response.status_code == 302, response.text
        return response.headers["Location"]

    def requests_to(self, path):
        return [params for method, p, params in self.log if p == path]

    def issue(self, subject, scopes, resource, client_id, refresh=True):
        access = secrets.token_urlsafe(16)
        with self._lock:
            self.tokens[access] = AccessToken(subject, tuple(scopes), time.time() + self.ttl, resource, client_id)
        answer = {"access_token": access, "token_type": "Bearer", "expires_in": self.ttl}
        if scopes:
            answer["scope"] = " ".join(scopes)
        if refresh and self.refresh:
            rt = secrets.token_urlsafe(16)
            with self._lock:
                self.refresh_tokens[rt] = (subject, tuple(scopes), resource, client_id)
            answer["refresh_token"] = rt
        return answer

    def expire_all(self):
        with self._lock:
            for token, access in list(self.tokens.items()):
                self.tokens[token] = access._replace(expires_at=time.time() - 1)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    @property
    def auth(self):
        return self.server.auth

    def _send(self, status, body=None, headers=()):
        data = json.dumps(body).encode() if body is not None else b""
        self.send_response(status)
        if body is not None:
            self.send_header("Content-Type", "application/json")
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _oauth_error(self, error, description="", status=400):
        self._send(status, {"error": error, "error_description": description})

    def _route(self, name):
        return urlsplit(self.path).path == self.auth.endpoint(name)[len(self.auth.base):]

    def do_GET(self):
        auth, parts = self.auth, urlsplit(self.path)
        params = {k: v[0] for k, v in parse_qs(parts.query).items()}
        auth.log.append(("GET", parts.path, params))
        if parts.path in auth.metadata_paths():
            return self._send(200, auth.document())
        if self._route("authorize"):
            return self._authorize(params)
        if auth.proxy_to and not parts.path.startswith("/.well-known/"):
            return self._proxy()
        self._send(404, {"error": "not_found"})

    def do_DELETE(self):
        if self.auth.proxy_to:
            return self._proxy()
        self._send(404, {"error": "not_found"})

    def _read(self):
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def do_POST(self):
        auth, path = self.auth, urlsplit(self.path).path
        if auth.proxy_to and not (self._route("token") or self._route("register")):
            return self._proxy()
        body = self._read()
        if self._route("register") and auth.dcr:
            request = json.loads(body)
            auth.log.append(("POST", path, request))
            return self._register(request)
        if path == "/introspect":                        # RFC 7662, for a verifier in another process
            form = {k: v[0] for k, v in parse_qs(body.decode()).items()}
            access = auth.verify(form.get("token"), None)
            if access is None:
                return self._send(200, {"active": False})
            return self._send(200, {"active": True, "sub": access.subject, "scope": " ".join(access.scopes),
                                    "exp": int(access.expires_at), "aud": access.audience,
                                    "client_id": access.client_id})
        if self._route("token"):
            form = {k: v[0] for k, v in parse_qs(body.decode()).items()}
            auth.log.append(("POST", path, {**form, "_authorization": self.headers.get("Authorization")}))
            return self._token(form)
        self._send(404, {"error": "not_found"})

    def _proxy(self):
        """Forward to the MCP server (2025-03-26 style: one origin for both)."""
        body = self._read() if self.command == "POST" else None
        headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "content-length")}
        response = requests.request(self.command, self.auth.proxy_to + self.path, data=body, headers=headers,
                                    timeout=30)
        keep = [(k, v) for k, v in response.headers.items()
                if k.lower() in ("content-type", "mcp-session-id")]
        if "WWW-Authenticate" in response.headers:
            keep.append(("WWW-Authenticate", "Bearer"))       # a 2025-03-26 server names no metadata
        self.send_response(response.status_code)
        for name, value in keep:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(response.content)))
        self.end_headers()
        self.wfile.write(response.content)

    # ------------------------------------------------------------------ endpoints
    def _register(self, request):
        auth = self.auth
        client_id = "dcr-" + secrets.token_hex(4)
        method = request.get("token_endpoint_auth_method", "client_secret_basic")
        info = {"client_id": client_id, "redirect_uris": request["redirect_uris"],
                "token_endpoint_auth_method": method}
        if method != "none":
            info["client_secret"] = secrets.token_urlsafe(12)
        auth.clients[client_id] = {"secret": info.get("client_secret"), "method": method,
                                   "redirect_uris": request["redirect_uris"]}
        self._send(201, info)

    def _authorize(self, params):
        auth = self.auth
        redirect = params.get("redirect_uri", "")
        client = auth.clients.get(params.get("client_id"))
        if client is None and not (auth.cimd and params.get("client_id", "").startswith("https://")):
            return self._send(400, {"error": "unknown client"})
        if client is not None and client.get("redirect_uris") and redirect not in client["redirect_uris"]:
            return self._send(400, {"error": "redirect_uri not registered"})
        if params.get("code_challenge_method") != "S256" or not params.get("code_challenge"):
            return self._send(400, {"error": "PKCE S256 required"})
        requested = (params.get("scope") or "").split()
        granted = auth.consent(requested) if auth.consent else requested
        code = secrets.token_urlsafe(16)
        auth.codes[code] = {"client_id": params["client_id"], "redirect_uri": redirect, "scope": granted,
                            "challenge": params["code_challenge"], "resource": params.get("resource")}
        answer = {"code": code, "state": params.get("state")}
        if auth.iss == "right":
            answer["iss"] = auth.issuer
        elif auth.iss == "wrong":
            answer["iss"] = "https://evil.example"
        self._send(302, headers=[("Location", redirect + "?" + urlencode(answer))])

    def _client_auth(self, form):
        """The client, authenticated as its registration says; None after answering 401."""
        auth = self.auth
        header = self.headers.get("Authorization")
        if header and header.startswith("Basic "):
            client_id, _, secret = base64.b64decode(header[6:]).decode().partition(":")
            client_id, secret, method = unquote_plus(client_id), unquote_plus(secret), "client_secret_basic"
        elif "client_assertion" in form:
            client_id, secret, method = form.get("client_id"), None, "private_key_jwt"
            if form.get("client_assertion_type") != "urn:ietf:params:oauth:client-assertion-type:jwt-bearer" or \
                    not (auth.client_assertion and auth.client_assertion(client_id, form["client_assertion"])):
                return self._oauth_error("invalid_client", "bad client assertion", 401)
        elif "client_secret" in form:
            client_id, secret, method = form.get("client_id"), form["client_secret"], "client_secret_post"
        else:
            client_id, secret, method = form.get("client_id"), None, "none"
        client = auth.clients.get(client_id)
        if client is None and method == "none" and auth.cimd and (client_id or "").startswith("https://"):
            return client_id
        if client is None or method not in auth.auth_methods or client.get("method", method) != method or \
                (method in ("client_secret_basic", "client_secret_post") and secret != client.get("secret")):
            return self._oauth_error("invalid_client", f"client authentication failed ({method})", 401)
        return client_id

    def _token(self, form):
        auth = self.auth
        client_id = self._client_auth(form)
        if client_id is None:
            return
        grant = form.get("grant_type")
        if grant == "authorization_code":
            code = auth.codes.pop(form.get("code"), None)
            if code is None or code["client_id"] != client_id or code["redirect_uri"] != form.get("redirect_uri"):
                return self._oauth_error("invalid_grant", "unknown code")
            verifier = form.get("code_verifier", "")
            digest = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
            if digest != code["challenge"]:
                return self._oauth_error("invalid_grant", "PKCE verification failed")
            if form.get("resource") != code["resource"]:
                return self._oauth_error("invalid_target", "resource differs from the authorization request")
            return self._send(200, auth.issue(auth.subject, code["scope"], form.get("resource"), client_id))
        if grant == "refresh_token":
            with auth._lock:
                held = auth.refresh_tokens.get(form.get("refresh_token"))
                if held is not None and auth.rotate:
                    del auth.refresh_tokens[form["refresh_token"]]
            if held is None or held[3] != client_id:
                return self._oauth_error("invalid_grant", "unknown refresh token")
            answer = auth.issue(held[0], held[1], form.get("resource") or held[2], client_id, refresh=auth.rotate)
            return self._send(200, answer)
        if grant == "client_credentials":
            scopes = (form.get("scope") or "").split()
            return self._send(200, auth.issue(client_id, scopes, form.get("resource"), client_id, refresh=False))
        if grant == "urn:ietf:params:oauth:grant-type:jwt-bearer":
            subject = auth.assertions.get(form.get("assertion"))
            if subject is None:
                return self._oauth_error("invalid_grant", "assertion refused")
            scopes = (form.get("scope") or "").split()
            return self._send(200, auth.issue(subject, scopes, form.get("resource"), client_id, refresh=False))
        self._oauth_error("unsupported_grant_type", grant or "")
