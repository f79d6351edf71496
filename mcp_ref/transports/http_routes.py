"""The routes of the MCP endpoint besides ``POST /mcp``: the authorization check
every request passes (rule 7 of http_handler.py), ``GET /mcp`` (the server's
stream) and ``DELETE /mcp`` (ending a session), and the legacy HTTP+SSE
endpoints of 2024-11-05 (rule 6).

``OtherRoutes`` is a mix-in of ``McpRequestHandler`` (http_handler.py).
Spec: basic/transports#listening-for-messages-from-the-server,
#session-management, basic/authorization, 2024-11-05 basic/transports#http-with-sse.
"""
import json
import logging
import queue
from urllib.parse import parse_qs, urlsplit

from .. import lifecycle
from ..messages import ErrorObject, ErrorResponse
from ..errors import INVALID_REQUEST, InvalidMessage
from ..messages import Request, decode, encode
from ._sse import accepts, format_event
from ..auth.resource_server import Refusal

from .http_body import SESSION_HEADER

log = logging.getLogger("mcp_ref.http")


class OtherRoutes:
    """Authorization, GET and DELETE /mcp, the legacy endpoints (a mix-in)."""

    # ------------------------------------------------------------------ authorization (rule 7)
    def _authorized(self, path: str) -> bool:
        """True when the request may go on; else it has been answered."""
        app, guard = self.app, self.app.guard
        if path in guard.metadata_paths:
            if self.command != "GET":
                self._error(405, INVALID_REQUEST, "Method Not Allowed", [("Allow", "GET")])
            else:
                self._head(200, [("Content-Type", "application/json"), ("Cache-Control", "max-age=300")],
                           json.dumps(guard.metadata).encode("utf-8"))
            return False
        if path not in (app.path, app.messages_path, app.sse_path):
            return True
        access = guard.authenticate(self.path, self._header("authorization"))
        if isinstance(access, Refusal):
            self._refuse_auth(access)
            return False
        self._access = access
        return True

    def _refuse_auth(self, refusal: Refusal) -> None:
        """401/400/403 with its challenge. A POST body not read yet is read and dropped
        (a client retries on this connection after authorizing); one too large closes it."""
        if self.command == "POST" and not self._body_read:
            length = (self._header("content-length") or "").strip()
            if length.isdigit() and length.isascii() and int(length) <= self.app.max_body \
                    and not self.headers.get("Transfer-Encoding"):
                self.rfile.read(int(length))
            else:
                self.close_connection = True
        self._error(refusal.status, INVALID_REQUEST, refusal.message, [("WWW-Authenticate", refusal.challenge)])

    def _scopes_refused(self, message) -> bool:
        """Rule 7: a 403 when the requests of ``message`` need scopes the token lacks."""
        if self._access is None:
            return False
        items = message if isinstance(message, list) else [message]
        refusal = self.app.guard.check_scopes(self._access, [m for m in items if isinstance(m, Request)])
        if refusal is None:
            return False
        self._body_read = True
        self._refuse_auth(refusal)
        return True

    def _owned(self, transport) -> bool:
        """Rule 7: a session answers only the subject that created it."""
        if self._access is None:
            return True
        if getattr(transport, "subject", None) != self._access.subject:
            return False
        transport.auth = self._access               # the latest token of its subject (Context.auth)
        return True

    def _local_address(self) -> str:
        """The address this connection arrived on (the Host check of a wildcard bind)."""
        return self.connection.getsockname()[0]

    def _allow(self, path: str) -> str:
        app = self.app
        if path == app.path:
            return "POST" if app.stateless else ("GET, POST, DELETE" if app.enable_get else "POST, DELETE")
        return "POST" if path == app.messages_path else "GET"

    # ------------------------------------------------------------------ GET /mcp, DELETE /mcp
    def _session_for_get_or_delete(self):
        session_id = self._header("mcp-session-id")
        if session_id is None:
            self._error(400, INVALID_REQUEST, f"Bad Request: the {SESSION_HEADER} header is required")
            return None
        transport = self.app.lookup(session_id)
        if transport is None or not self._owned(transport):
            self._error(404, INVALID_REQUEST, "Not Found: unknown or expired session")
            return None
        return transport if self._version_ok() else None

    def _get_mcp(self) -> None:
        app = self.app
        if app.stateless or not app.enable_get:
            return self._error(405, INVALID_REQUEST, "Method Not Allowed: no SSE stream at this endpoint",
                               [("Allow", self._allow(app.path))])
        if not accepts(self._header("accept"))[1]:
            return self._error(406, INVALID_REQUEST, "Not Acceptable: Accept must admit text/event-stream")
        transport = self._session_for_get_or_delete()
        if transport is None:
            return
        last_event_id = self._header("last-event-id")
        transport.enter()
        try:
            if last_event_id:
                resumed = transport.resume(last_event_id)
                if resumed is None:
                    return self._error(400, INVALID_REQUEST, "Bad Request: unknown or expired Last-Event-ID")
                stream, conn, items, finished = resumed
                priming = None
            else:
                stream, conn, items, priming = transport.attach_standalone()
                finished = False
            self._head(200, [("Content-Type", "text/event-stream")], stream=True)
            if priming is not None:
                self._event(format_event("", id=priming, retry=app.retry_interval))
            self._pump(transport, stream, None if finished else conn, items, priming or last_event_id)
        finally:
            transport.leave()

    def _delete_mcp(self) -> None:
        if self.app.stateless:
            return self._error(405, INVALID_REQUEST, "Method Not Allowed: stateless server",
                               [("Allow", "POST")])
        transport = self._session_for_get_or_delete()
        if transport is not None:
            self.app.terminate(transport, "terminated by the client (HTTP DELETE)")
            self._head(204)

    # ------------------------------------------------------------------ legacy HTTP+SSE (rule 6)
    def _get_legacy(self) -> None:
        app = self.app
        if not app.legacy_sse:
            return self._error(404, INVALID_REQUEST, "Not Found")
        if not accepts(self._header("accept"))[1]:
            return self._error(406, INVALID_REQUEST, "Not Acceptable: Accept must admit text/event-stream")
        transport = app.new_session(legacy=True, owner=self._access)
        if transport is None:
            return self._unavailable()
        try:
            self._head(200, [("Content-Type", "text/event-stream")], stream=True)
            self._event(format_event(f"{app.messages_path}?session_id={transport.session_id}", event="endpoint"))
            while True:
                try:
                    item = transport.conn.queue.get(timeout=app.keepalive)
                except queue.Empty:
                    self._keepalive()
                    continue
                if not isinstance(item, tuple):
                    break
                self._event(format_event(encode(item[1]), event="message"))
            self._event(b"")
        finally:
            app.terminate(transport, "the SSE stream ended")

    def _post_legacy(self) -> None:
        app = self.app
        if not app.legacy_sse:
            return self._error(404, INVALID_REQUEST, "Not Found")
        session_id = parse_qs(urlsplit(self.path).query).get("session_id", [None])[0]
        transport = app.lookup(session_id, legacy=True) if session_id is not None else None
        if transport is None or not self._owned(transport):
            self.close_connection = True        # rule 1: the body stays unread, so the connection ends
            if session_id is None:
                return self._error(400, INVALID_REQUEST, "Bad Request: session_id is required")
            return self._error(404, INVALID_REQUEST, "Not Found: unknown or expired session")
        body = self._read_body()
        if body is None:
            return
        try:
            message = decode(body)
        except InvalidMessage as bad:
            return self._error(400, bad.code, bad.message)
        if self._scopes_refused(message):
            return
        transport.push(message)
        self._head(202)

    # ------------------------------------------------------------------ stateless POST
    def _post_stateless(self, message, json_ok: bool, sse_ok: bool) -> None:
        """Stateless mode (rule 3): a fresh session per POST, pre-initialized unless it is the initialize."""
        if not self._version_ok():
            return
        version = self._header("mcp-protocol-version") or lifecycle.HTTP_DEFAULT_REVISION
        items = message if isinstance(message, list) else [message]
        if not any(isinstance(m, Request) for m in items):       # nothing to answer, no session to tell
            errors = [ErrorResponse(b.id, ErrorObject(b.code, b.message)) for b in items
                      if isinstance(b, InvalidMessage)]
            return self._json(400, errors) if errors else self._head(202)
        transport = self.app.stateless_session(owner=self._access)
        session = transport.session
        if not (isinstance(message, Request) and message.method == "initialize"):
            session.state = lifecycle.READY
            session.protocol_version = version
        try:
            self._post_messages(transport, message, json_ok, sse_ok, [])
        finally:
            session.close("stateless request done")
