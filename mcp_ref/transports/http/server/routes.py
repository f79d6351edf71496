"""The routes of the MCP endpoint besides ``POST /mcp``: the authorization check
every request passes (rule 7 of transports/http/server/core.py), ``GET /mcp`` (the server's
stream) and ``DELETE /mcp`` (ending a session), the legacy HTTP+SSE
endpoints of 2024-11-05 (rule 6), and stateless POST (rule 3); and the reading of a
POST's body and message, which both POST endpoints share (rules 1 and 7).

``Routes`` is a mix-in of ``http_core._Core``: each method returns the
``HttpResponse`` (``http_types``) its adapter writes. Spec:
basic/transports#listening-for-messages-from-the-server, #session-management,
basic/authorization, 2024-11-05 basic/transports#http-with-sse.
"""
from __future__ import annotations

import json
from urllib.parse import parse_qs, urlsplit
from typing import Any, Callable, Optional

from mcp_ref.protocol import lifecycle
from mcp_ref.errors import INTERNAL_ERROR, InvalidMessage
from mcp_ref.jsonrpc.messages import Request, decode, error_response
from mcp_ref.transports.http.sse import accepts, format_event
from mcp_ref.transports.http.server.types import (SESSION_HEADER, VERSION_HEADER, BodyRefused, HttpRequest,
                                                  HttpResponse, SseBody, error, json_response)


class Routes:
    """Authorization, reading a POST, GET and DELETE /mcp, the legacy endpoints, stateless POST (a mix-in)."""

    app: Any             # the HttpApp (app.py imports this module through core.py); set by _Core
    request: HttpRequest
    headers: dict
    _serve_post: Callable[..., tuple]

    # ------------------------------------------------------------------ authorization (rule 7)
    def _authorize(self, path: str) -> Optional[HttpResponse]:
        """None when the request may go on; else its answer. Called only with ``auth=``, so
        the auth room loads with its first use."""
        from mcp_ref.auth.resource_server import Refusal
        app, guard = self.app, self.app.guard
        if path in guard.metadata_paths:
            if self.request.method != "GET":
                return error(405, "Method Not Allowed", [("Allow", "GET")])
            return HttpResponse(200, [("Content-Type", "application/json"), ("Cache-Control", "max-age=300")],
                                json.dumps(guard.metadata).encode("utf-8"))
        if path not in (app.path, app.messages_path, app.sse_path):
            return None
        access = guard.authenticate(self.request.target, self.headers.get("authorization"))
        if isinstance(access, Refusal):             # 401/400 with its challenge
            return error(access.status, access.message, [("WWW-Authenticate", access.challenge)])
        self.access = access
        return None

    def _read_body(self):
        """The request body, or the ``HttpResponse`` refusing it (rule 1 of http_core)."""
        ctype = self.headers.get("content-type", "")
        if ctype.split(";")[0].strip().lower() != "application/json":
            return error(415, "Unsupported Media Type: Content-Type must be application/json", close=True)
        try:
            body = self.request.read_body(self.app.max_body)
        except BodyRefused as refused:
            return error(refused.status, refused.message, close=True)
        return body

    def _message_of(self, body: bytes):
        """A POST body's message, or the answer refusing it: bad JSON → 400 with the parse
        error, scopes the token lacks → 403 (rule 7 of http_core)."""
        try:
            message = decode(body)
        except InvalidMessage as bad:
            return error(400, bad.message, code=bad.code)
        if self.access is not None:
            items = message if isinstance(message, list) else [message]
            refusal = self.app.guard.check_scopes(self.access, [m for m in items if isinstance(m, Request)])
            if refusal is not None:
                return error(refusal.status, refusal.message, [("WWW-Authenticate", refusal.challenge)])
        return message

    def _owned(self, transport) -> bool:
        """Rule 7: a session answers only the subject that created it."""
        if self.access is None:
            return True
        if getattr(transport.auth, "subject", None) != self.access.subject:
            return False
        transport.auth = self.access                # the latest token of its subject (Context.auth)
        return True

    def _unknown_session(self, close: bool = False) -> HttpResponse:
        """Rule 3: 404; the client starts a new session (``wsgi`` adds why it may happen)."""
        return error(404, "Not Found: unknown or expired session" + self.app.unknown_session_hint, close=close)

    def _allow(self, path: str) -> str:
        app = self.app
        if path == app.path:
            return "POST" if app.stateless else ("GET, POST, DELETE" if app.enable_get else "POST, DELETE")
        return "POST" if path == app.messages_path else "GET"

    def _unavailable(self) -> HttpResponse:
        return error(503, "Service Unavailable: too many sessions", [("Retry-After", "5")], code=INTERNAL_ERROR)

    def _sse(self, body: SseBody, headers=()) -> HttpResponse:
        """Rule 5: an SSE answer; intermediaries must neither cache nor buffer it."""
        return HttpResponse(200, [("Content-Type", "text/event-stream"), ("Cache-Control", "no-cache, no-transform"),
                                  ("X-Accel-Buffering", "no")] + list(headers), body)

    def _version_refused(self) -> Optional[HttpResponse]:
        """Rule 3."""
        version = self.headers.get("mcp-protocol-version")
        if version is not None and not lifecycle.is_supported(version):
            return error(400, f"Bad Request: unsupported {VERSION_HEADER}: {version!r} "
                              f"(supported: {', '.join(lifecycle.LEGACY_REVISIONS)})")
        return None

    # ------------------------------------------------------------------ GET /mcp, DELETE /mcp
    def _session_for_get_or_delete(self):
        """The session's transport, or the ``HttpResponse`` refusing the request."""
        session_id = self.headers.get("mcp-session-id")
        if session_id is None:
            return error(400, f"Bad Request: the {SESSION_HEADER} header is required")
        transport = self.app.lookup(session_id)
        if transport is None or not self._owned(transport):
            return self._unknown_session()
        return self._version_refused() or transport

    def _get_mcp(self) -> HttpResponse:
        app = self.app
        if app.stateless or not app.enable_get:
            return error(405, "Method Not Allowed: no SSE stream at this endpoint", [("Allow", self._allow(app.path))])
        if not accepts(self.headers.get("accept"))[1]:
            return error(406, "Not Acceptable: Accept must admit text/event-stream")
        transport = self._session_for_get_or_delete()
        if isinstance(transport, HttpResponse):
            return transport
        last_event_id = self.headers.get("last-event-id")
        opened = transport.open_get(last_event_id or None)
        if opened is None:
            return error(400, "Bad Request: unknown or expired Last-Event-ID")
        stream, conn, items, priming = opened
        body = SseBody(self.request, app, transport, stream, conn, items, priming, resume_id=last_event_id)
        transport.enter()                        # busy (not reaped) until the stream ends
        body.on_end(transport.leave)
        return self._sse(body)

    def _delete_mcp(self) -> HttpResponse:
        if self.app.stateless:
            return error(405, "Method Not Allowed: stateless server", [("Allow", "POST")])
        transport = self._session_for_get_or_delete()
        if isinstance(transport, HttpResponse):
            return transport
        self.app.terminate(transport, "terminated by the client (HTTP DELETE)")
        return HttpResponse(204)

    # ------------------------------------------------------------------ legacy HTTP+SSE (rule 6)
    def _get_legacy(self) -> HttpResponse:
        app = self.app
        if not accepts(self.headers.get("accept"))[1]:
            return error(406, "Not Acceptable: Accept must admit text/event-stream")
        transport = app.new_session(legacy=True, owner=self.access)
        if transport is None:
            return self._unavailable()
        endpoint = format_event(f"{app.messages_path}?session_id={transport.session_id}", event="endpoint")
        body = SseBody(self.request, app, transport, None, transport.conn, prelude=[endpoint])
        body.on_end(lambda: app.terminate(transport, "the SSE stream ended"))
        return self._sse(body)

    def _post_legacy(self) -> HttpResponse:
        app = self.app
        session_id = parse_qs(urlsplit(self.request.target).query).get("session_id", [None])[0]
        if session_id is None:                # rule 1: the body stays unread, so the connection ends
            return error(400, "Bad Request: session_id is required", close=True)
        transport = app.lookup(session_id, legacy=True)
        if transport is None or not self._owned(transport):
            return self._unknown_session(close=True)
        body = self._read_body()
        if isinstance(body, HttpResponse):
            return body
        message = self._message_of(body)
        if isinstance(message, HttpResponse):
            return message
        transport.push(message)
        return HttpResponse(202)

    # ------------------------------------------------------------------ stateless POST
    def _post_stateless(self, message, json_ok: bool, sse_ok: bool) -> HttpResponse:
        """Stateless mode (rule 3): a fresh session per POST, pre-initialized unless it is the initialize."""
        if (refused := self._version_refused()) is not None:
            return refused
        items = message if isinstance(message, list) else [message]
        if not any(isinstance(m, Request) for m in items):       # nothing to answer, no session to tell
            errors = [error_response(b) for b in items if isinstance(b, InvalidMessage)]
            return json_response(400, errors) if errors else HttpResponse(202)
        transport = self.app.stateless_session(owner=self.access)
        session = transport.session
        if not (isinstance(message, Request) and message.method == "initialize"):
            session.state = lifecycle.READY
            session.protocol_version = self.headers.get("mcp-protocol-version") or lifecycle.HTTP_DEFAULT_REVISION
        response, _ = self._serve_post(transport, message, json_ok, sse_ok,
                                       lambda: session.close("stateless request done"))
        return response
