"""The ``auth`` scenario (rules in __init__.py): the OAuth 2.1 flow of an MCP client,
offline. A protected MCP server and a tiny authorization server (``_AuthServer``
below: metadata, registration, authorize, token, with PKCE checked) listen on
127.0.0.1; the user and their browser are played by ``_AuthServer.browser``. Each
HTTP exchange is noted as ``METHOD path <- status`` with the headers the flow
reads, and the notes are printed from the scenario's thread once each step is over
(rule 3: the client's transport sends from threads of its own). Spec 2026-07-28 (and 2025-11-25):
basic/authorization (#authorization-server-discovery, #dynamic-client-registration,
#authorization-code-protection, #step-up-authorization-flow).

This authorization server is for the scenario only: one user, tokens in memory,
no expiry, loopback only. It is not an example of running one.
"""
from __future__ import annotations

import contextlib
import json
import queue
import secrets
from http import HTTPStatus
from urllib.parse import parse_qs, urlencode, urlsplit

from mcp_ref.server.server import Context, Server
from mcp_ref.cli.scenarios.show import WAIT
from mcp_ref.cli.wire import fit

REDIRECT = "http://127.0.0.1:8765/callback"         # never listened on: the browser is played here


class _AuthServer:
    """Metadata (RFC 8414), registration (RFC 7591), authorize and token (OAuth 2.1 with
    PKCE S256 required), on 127.0.0.1; ``verify(token, resource)`` for the MCP server."""

    def __init__(self, note):
        from mcp_ref.transports.http.server.wsgi import start_wsgi
        self.codes, self.tokens, self.clients, self.note = {}, {}, set(), note
        self.routes = {("GET", "/.well-known/oauth-authorization-server"): lambda body: (200, self.metadata()),
                       ("POST", "/register"): self.register,
                       ("POST", "/token"): lambda body: self.token({k: v[0] for k, v in parse_qs(body).items()})}
        self.handle = start_wsgi(self)              # its thread and port; a context manager that stops it
        self.issuer = self.handle.base_url

    def __call__(self, environ, start_response) -> list:
        """The server itself, a WSGI application: a JSON answer to each route, 404 elsewhere."""
        body = environ["wsgi.input"].read(int(environ.get("CONTENT_LENGTH") or 0)).decode()
        route = self.routes.get((environ["REQUEST_METHOD"], environ["PATH_INFO"]))
        status, answer = route(body) if route else (404, {"error": "not_found"})
        start_response(f"{status} {HTTPStatus(status).phrase}", [("Content-Type", "application/json")])
        return [json.dumps(answer).encode()]

    def metadata(self) -> dict:
        return {"issuer": self.issuer, "authorization_endpoint": self.issuer + "/authorize",
                "token_endpoint": self.issuer + "/token", "registration_endpoint": self.issuer + "/register",
                "response_types_supported": ["code"], "grant_types_supported": ["authorization_code"],
                "code_challenge_methods_supported": ["S256"], "token_endpoint_auth_methods_supported": ["none"],
                "scopes_supported": ["mcp", "admin"], "authorization_response_iss_parameter_supported": True}

    def register(self, body: str) -> tuple:
        client_id = "client-" + secrets.token_hex(4)
        self.clients.add(client_id)
        return 201, {**json.loads(body), "client_id": client_id}

    def browser(self, url: str) -> str:
        """The user's browser: opens the authorization URL, the user consents, and the
        server redirects back with a code (bound to the PKCE challenge and the resource)."""
        query = {k: v[0] for k, v in parse_qs(urlsplit(url).query).items()}
        if query.get("client_id") not in self.clients or query.get("code_challenge_method") != "S256":
            raise ValueError("the scenario's authorization server wants a registered client and PKCE S256")
        code = secrets.token_urlsafe(16)
        self.codes[code] = query
        self.note("browser: GET /authorize  " + " ".join(f"{k}={query.get(k)}" for k in (
            "code_challenge_method", "code_challenge", "resource", "scope", "client_id", "response_type", "state")))
        self.note("    the user consents; 302 to redirect_uri with code, state and iss")
        return f"{query['redirect_uri']}?" + urlencode({"code": code, "state": query["state"], "iss": self.issuer})

    def token(self, form: dict) -> tuple:
        from mcp_ref.auth import AccessToken
        from mcp_ref.auth.pkce import challenge_for
        asked = self.codes.pop(form.get("code"), None)
        challenge = challenge_for(form.get("code_verifier", ""))
        if asked is None or challenge != asked["code_challenge"] or form.get("resource") != asked.get("resource"):
            return 400, {"error": "invalid_grant"}
        token = secrets.token_urlsafe(24)
        self.tokens[token] = AccessToken("ada", tuple(asked.get("scope", "").split()), audience=asked.get("resource"))
        return 200, {"access_token": token, "token_type": "Bearer", "scope": asked.get("scope", "")}

    def verify(self, token: str, resource: str):
        return self.tokens.get(token)


def _shown(note, response) -> None:
    """``METHOD path (JSON-RPC method) -> status`` and the headers and body fields the flow reads."""
    request, path, method = response.request, urlsplit(response.request.url).path, ""
    if request.body and request.headers.get("Content-Type", "").startswith("application/json"):
        with contextlib.suppress(ValueError, AttributeError):
            method = json.loads(request.body).get("method", "")
    if method == "subscriptions/listen":
        return                                   # the long-lived listen: not part of the flow
    bearer = "  Authorization: Bearer …" if request.headers.get("Authorization") else ""
    note(f"{request.method} {path}{f' ({method})' if method else ''}{bearer}  <- {response.status_code}")
    if response.headers.get("WWW-Authenticate"):
        note(f"    WWW-Authenticate: {response.headers['WWW-Authenticate']}")
    if path.startswith("/.well-known/") or path == "/register":
        data = response.json()
        keys = ("resource", "authorization_servers", "scopes_supported", "registration_endpoint",
                "code_challenge_methods_supported", "client_id")
        note("    " + json.dumps({k: data[k] for k in keys if k in data}))
    if path == "/token":
        form = {k: v[0] for k, v in parse_qs(request.body or "").items()}
        note(f"    grant_type={form.get('grant_type')} code_verifier=<{len(form.get('code_verifier', ''))} "
                  f"chars> resource={form.get('resource')}  -> scope {response.json().get('scope')!r}")


def auth(show) -> None:
    from mcp_ref.auth import OAuthClientProvider
    from mcp_ref.client.client import Client
    from mcp_ref.transports.http.server.app import start_http
    server = Server("scenario-auth", version="1.0")

    @server.tool
    def whoami(ctx: Context) -> str:
        """Who the token says the caller is."""
        return f"{ctx.subject}: {' '.join(sorted(ctx.scopes))}"

    @server.tool
    def reset() -> str:
        """An admin-only tool."""
        return "reset done"

    notes: queue.SimpleQueue = queue.SimpleQueue()
    note = notes.put

    def flush() -> None:                        # rule 3: printed from the scenario's thread
        while not notes.empty():
            line = notes.get()
            show.transcript.emit(line if show.transcript.full else fit("", line, show.transcript.width))

    class Provider(OAuthClientProvider):            # notes every response of the flow, retries included
        def _session(self):
            session = super()._session()
            session.hooks["response"] = [lambda response, **kw: _shown(note, response)]
            return session

        def _on_response(self, response, **kwargs):
            _shown(note, response)
            final = super()._on_response(response, **kwargs)
            if final is not response:
                _shown(note, final)
            return final

    authority = _AuthServer(note)
    with authority.handle, start_http(
            server, auth=authority.verify, required_scopes={"*": ["mcp"], "tool:reset": ["admin"]},
            resource_metadata={"authorization_servers": [authority.issuer], "scopes_supported": ["mcp"]}) as handle:
        show.say("auth.servers", url=handle.url, issuer=authority.issuer)
        provider = Provider(redirect_uri=REDIRECT, user_agent=authority.browser, client_name="mcp_ref scenario")
        show.step("auth.flow")
        with Client.http(handle.url, auth=provider, timeout=WAIT, protocol_version=show.version) as client:
            flush()
            for step, tool in (("auth.whoami", "whoami"), ("auth.step-up", "reset")):
                show.step(step)
                result = client.call_tool(tool).text
                flush()
                show.say("result: " + result)
