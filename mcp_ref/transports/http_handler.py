"""One HTTP request to the MCP server: the checks, then POST, GET or DELETE.

``http_server`` owns configuration and sessions (``self.app``); ``http_session``
routes messages to streams. This module is the checks and ``POST /mcp``; mixed in
are http_body.py (reading the body, writing the answer) and http_routes.py
(authorization, ``GET``/``DELETE /mcp``, the legacy endpoints). Spec: basic/transports#streamable-http,
#sending-messages-to-the-server, #listening-for-messages-from-the-server,
#resumability-and-redelivery, #protocol-version-header, 2024-11-05
basic/transports#http-with-sse.

Rules:

1. Checks come first, in this order: ``Host`` and ``Origin`` → 403; a POST
   body that is not JSON → 415, too large → 413, ``Accept`` admitting neither
   JSON nor SSE → 406, bad JSON → 400 with a parse error. Every error body is
   a JSON-RPC error without id; no stack trace leaves the process.
   A POST body comes with ``Content-Length`` or ``Transfer-Encoding: chunked``
   (RFC 9112 §6, §7.1), decoded here under the same ``max_body`` limit: 413 as
   soon as the announced chunks exceed it, before reading them. Neither header
   → 411; both, conflicting ``Content-Length`` values, malformed chunk framing
   (strict CRLF, hex sizes) or ``chunked`` not last → 400; another transfer
   coding → 501. Chunk extensions and trailer fields are read and ignored;
   the framing around the data may add no more than ``max(max_body, 64 KiB)``
   bytes (413 beyond). After any refusal the connection is closed (the body
   stays unread).
2. POST of requests → one ``application/json`` body or a ``text/event-stream``
   (auto: SSE when something is sent before the result; a client accepting
   only one type gets that type); POST of notifications/responses → 202. A
   batch is split here (only when the session negotiated 2025-03-26); a batch
   holding ``initialize`` → 400 in every revision, with or without a session
   (2025-03-26 basic/lifecycle#initialization: it "MUST NOT be part of a
   JSON-RPC batch").
3. A POST without ``Mcp-Session-Id`` must be ``initialize`` (400 otherwise); an
   unknown id → 404; ``MCP-Protocol-Version`` unsupported → 400 on every
   request, ``initialize`` included (no session is created), absent →
   2025-03-26 (stateless mode: the session's revision; stateful: the session
   knows its own).
4. GET → the standalone stream, or with ``Last-Event-ID`` a replay of the one
   stream that id names, then live events; 405 when GET is disabled.
   DELETE ends the session (204); its id then gets 404.
5. SSE uses HTTP/1.1 chunked encoding; an idle stream checks that its client
   is still there and sends a comment every ``keepalive`` seconds. With
   ``poll_interval`` a connection is closed after that long, after a
   ``retry`` event (SEP-1699 polling); the stream itself lives on.
6. Legacy: GET ``/sse`` → first event ``endpoint`` (``/messages?session_id=...``),
   then ``message`` events; POST there → 202. The session ends with the stream.
7. Authorization (``auth.resource_server`` rules; only with ``auth=``): after the
   Host/Origin check, GET of a protected resource metadata path → the document
   (no token needed); every MCP path needs a valid Bearer token (401/400 with
   ``WWW-Authenticate``, the POST body read and dropped so the connection stays
   usable); a POST whose requests need scopes the token lacks → 403
   ``insufficient_scope`` before anything reaches the session; a session id
   created by another subject → 404. The token's ``AccessToken`` is the
   transport's ``auth`` (``Context.auth``).
8. 2026-07-28: a POST without ``Mcp-Session-Id`` that is modern (http_modern.py
   rule 1) is checked there and answered without a session; the legacy rules
   above apply to everything else, so one endpoint serves both eras. A client
   that closes the connection of such a request cancels it (the handler's
   ``ctx.cancelled`` is set; nothing more is sent for it), noticed within
   ``MODERN_POLL`` seconds.
"""
import logging
import queue
import time
from http.server import BaseHTTPRequestHandler
from typing import Optional
from urllib.parse import urlsplit

from .. import lifecycle
from ..errors import INTERNAL_ERROR, INVALID_REQUEST, MISSING_REQUIRED_CLIENT_CAPABILITY, InvalidMessage, McpError
from ..messages import ErrorObject, ErrorResponse, Request, decode, encode
from ._sse import accepts, format_event
from .http_modern import header_problem, is_modern_post, param_annotations, param_problem, status_for
from .http_body import SESSION_HEADER, BodyIO
from .http_routes import OtherRoutes
from .http_session import CANCELLED, CLOSE, STOP, WRITTEN

log = logging.getLogger("mcp_ref.http")

__all__ = ["McpRequestHandler"]




INITIALIZE_IN_BATCH = "Bad Request: initialize must not be part of a JSON-RPC batch; send it alone"



def _holds_initialize(message) -> bool:
    """A batch (a list) holding an ``initialize`` request (rule 2)."""
    return isinstance(message, list) and any(isinstance(m, Request) and m.method == "initialize"
                                             for m in message)


class McpRequestHandler(BodyIO, OtherRoutes, BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "mcp_ref"
    sys_version = ""
    disable_nagle_algorithm = True
    timeout = 300                      # an idle keep-alive connection is closed after this

    @property
    def app(self):
        return self.server.app

    def log_message(self, format, *args) -> None:
        if log.isEnabledFor(logging.DEBUG):
            log.debug("%s - %s", self.address_string(), format % args)

    def _header(self, name: str, default=None):
        """A request header by lower-case name (one pass over the headers per request).
        Read raw (``raw_items``, as the request carried it): ``items`` and ``get_all``
        run the email package's header policy on every header, which cost more per
        call than the rest of the POST handling (bench/bench_http.py, server CPU)."""
        if self._headers is None:
            self._headers = {key.lower(): value for key, value in self.headers.raw_items()}
        return self._headers.get(name, default)

    # ------------------------------------------------------------------ dispatch
    def do_POST(self):
        self._dispatch({self.app.path: self._post_mcp, self.app.messages_path: self._post_legacy})

    def do_GET(self):
        self._dispatch({self.app.path: self._get_mcp, self.app.sse_path: self._get_legacy})

    def do_DELETE(self):
        self._dispatch({self.app.path: self._delete_mcp})

    def do_PUT(self):
        self._dispatch({})

    do_PATCH = do_OPTIONS = do_PUT

    def _dispatch(self, routes: dict) -> None:
        self._head_sent = False
        self._headers = None
        self._access, self._body_read = None, False
        app = self.app
        try:
            host = self._header("host")
            if not app.host_allowed(host, self._local_address):
                return self._error(403, INVALID_REQUEST, "Forbidden: Host header not allowed")
            if not app.origin_allowed(self._header("origin"), host, self._local_address):
                return self._error(403, INVALID_REQUEST, "Forbidden: Origin not allowed")
            path = urlsplit(self.path).path
            if app.guard is not None and not self._authorized(path):     # rule 7
                return
            handler = routes.get(path)
            if handler is None:
                known = path in (app.path, app.messages_path, app.sse_path)
                if known:
                    return self._error(405, INVALID_REQUEST, "Method Not Allowed", [("Allow", self._allow(path))])
                return self._error(404, INVALID_REQUEST, "Not Found")
            handler()
        except OSError:                                   # the client went away
            self.close_connection = True
        except Exception:
            log.exception("HTTP %s %s failed", self.command, self.path)
            self.close_connection = True
            if not self._head_sent:
                self._error(500, INTERNAL_ERROR, "Internal error")

    # ------------------------------------------------------------------ POST /mcp
    def _post_mcp(self) -> None:
        app = self.app
        json_ok, sse_ok = accepts(self._header("accept"))
        body = self._read_body()
        if body is None:
            return
        if not (json_ok or sse_ok):
            return self._error(406, INVALID_REQUEST, "Not Acceptable: Accept must admit application/json "
                                                     "or text/event-stream")
        try:
            message = decode(body)
        except InvalidMessage as bad:
            return self._error(400, bad.code, bad.message)
        if self._scopes_refused(message):
            return
        if self._header("mcp-session-id") is None and is_modern_post(message, self._header("mcp-protocol-version")):
            return self._post_modern(message, json_ok, sse_ok)                # rule 8
        if app.stateless:
            return self._post_stateless(message, json_ok, sse_ok)
        session_id = self._header("mcp-session-id")
        created = False
        if session_id is None:
            if _holds_initialize(message):
                return self._error(400, INVALID_REQUEST, INITIALIZE_IN_BATCH)
            if not (isinstance(message, Request) and message.method == "initialize"):
                return self._error(400, INVALID_REQUEST, f"Bad Request: the {SESSION_HEADER} header is required "
                                                         "(send initialize first)")
            if not self._version_ok():                              # rule 3 holds for initialize too
                return
            transport = app.new_session(owner=self._access)
            if transport is None:
                return self._unavailable()
            created = True
        else:
            transport = app.lookup(session_id)
            if transport is None or not self._owned(transport):
                return self._error(404, INVALID_REQUEST, "Not Found: unknown or expired session")
            if not self._version_ok():
                return
        transport.enter()
        try:
            replies = self._post_messages(transport, message, json_ok, sse_ok,
                                          [(SESSION_HEADER, transport.session_id)] if created else [])
        finally:
            transport.leave()
        if created and replies and isinstance(replies[0], ErrorResponse):
            app.terminate(transport, "initialize failed")          # no session for a failed handshake

    def _post_messages(self, transport, message, json_ok: bool, sse_ok: bool, headers) -> Optional[list]:
        """Push one POST's messages to the session and write the answer (rule 2).
        Returns the JSON-RPC replies written as JSON, else None."""
        batch = isinstance(message, list)
        items = message if batch else [message]
        if batch:
            version = getattr(transport.session, "protocol_version", None)
            if _holds_initialize(message):
                self._error(400, INVALID_REQUEST, INITIALIZE_IN_BATCH)
                return None
            if not lifecycle.batches_allowed(version):
                self._error(400, INVALID_REQUEST, f"Bad Request: JSON-RPC batches are not supported in "
                                                  f"protocol revision {version or '(not negotiated)'}")
                return None
        errors = [ErrorResponse(b.id, ErrorObject(b.code, b.message)) for b in items if isinstance(b, InvalidMessage)]
        requests = [m for m in items if isinstance(m, Request)]
        if not requests:
            for item in items:
                if not isinstance(item, InvalidMessage):
                    transport.push(item)
            return self._json(400, errors) if errors else self._head(202)
        mode = {"auto": None, "json": "json", "sse": "sse"}[self.app.response_mode]
        if not sse_ok:
            mode = "json"
        elif not json_ok:
            mode = "sse"
        stream = transport.open_post([r.id for r in requests], mode, sse_ok)
        if stream is None:
            if transport.closed:
                return self._error(404, INVALID_REQUEST, "Not Found: the session has ended")
            return self._error(400, INVALID_REQUEST, "Bad Request: a request with this id is already in progress")
        if not batch and not errors and stream.mode != "sse":
            stream.conn.direct = lambda answer: self._direct(answer, headers)   # http_session rule 7
        for item in items:
            if not isinstance(item, InvalidMessage):
                transport.push(item)
        return self._answer(transport, stream, batch, errors, headers)

    def _direct(self, answer, headers) -> None:
        """Called on the thread that sends a lone JSON answer (a pool worker): write it now."""
        self._direct_answer = answer
        status = 200
        if getattr(self, "_modern", False) and isinstance(answer, ErrorResponse) and \
                answer.error.code == MISSING_REQUIRED_CLIENT_CAPABILITY:
            status = status_for(answer.error.code)      # rule 8: 400, as the spec says
        try:
            self._json(status, answer, headers)
        except Exception as exc:                  # the client went away: never the session's problem
            log.debug("writing an answer failed: %s", exc)
            self.close_connection = True

    def _answer(self, transport, stream, batch: bool, errors: list, headers) -> Optional[list]:
        """Wait for the POST's answer: one JSON body, or an SSE stream (rule 4 of http_session)."""
        conn = stream.conn
        first = None
        if stream.mode != "sse":
            first = self._next(conn, transport, stream)
            if first is CANCELLED:                 # rule 8: the client hung up; nobody to answer
                transport.end_post(stream)
                self.close_connection = True
                return None
            if first is WRITTEN:
                transport.end_post(stream)
                return [self._direct_answer]
            if stream.mode != "sse":
                replies = list(errors)
                item = first
                while isinstance(item, tuple):
                    replies.append(item[1])
                    if item[2]:
                        break
                    item = self._next(conn, transport, stream)
                else:
                    if item is STOP:
                        replies += [ErrorResponse(rid, ErrorObject(INTERNAL_ERROR, "the session closed "
                                                                   "before answering"))
                                    for rid in sorted(stream.pending, key=str)]
                transport.end_post(stream)
                if not replies:                    # every request was cancelled by the client
                    self._head(202)
                    return None
                self._json(200, replies if batch else replies[0], headers)
                return replies
        self._head(200, [("Content-Type", "text/event-stream")] + list(headers), stream=True)
        if stream.priming_id is not None:
            self._event(format_event("", id=stream.priming_id, retry=self.app.retry_interval))
        for error in errors:
            self._event(format_event(encode(error)))
        self._pump(transport, stream, conn, [first] if first is not None else [], stream.priming_id)
        return None

    def _pump(self, transport, stream, conn, items: list, resume_id: Optional[str]) -> None:
        """Write ``items`` (a replay, or a first message), then the connection's events until
        the stream's last response, CLOSE, STOP or the polling deadline (rule 5); then end the
        HTTP response. ``conn`` None: a finished stream, the replay is all there is."""
        app = self.app
        deadline = time.monotonic() + app.poll_interval if app.poll_interval else None
        finished, item = False, None
        try:
            while True:
                if item is None and (items or conn is None):
                    if not items:
                        break
                    item = items.pop(0)
                if item is None:
                    wait = app.keepalive
                    if deadline is not None:
                        wait = max(0.0, min(wait, deadline - time.monotonic()))
                    try:
                        item = self._next(conn, transport, stream, wait)
                    except queue.Empty:
                        if deadline is not None and time.monotonic() >= deadline:
                            if resume_id is not None:         # SEP-1699 polling: the client comes back
                                self._event(format_event("", retry=app.retry_interval))
                                break
                            deadline = None                   # nothing to resume from: keep the connection
                        self._keepalive()
                        continue
                if item is STOP:
                    break
                if item is CANCELLED:
                    finished = True
                    break
                if item is CLOSE:
                    self._event(format_event("", retry=app.retry_interval))
                    break
                event_id, message, final = item
                self._event(format_event(encode(message), id=event_id))
                resume_id = event_id or resume_id
                item = None
                if final:
                    finished = True
                    break
            self._event(b"")
        except OSError:
            if conn is not None:
                transport.detach(stream, conn, [item] if isinstance(item, tuple) else ())
            raise
        if conn is None:
            return
        if finished and not stream.standalone:
            transport.end_post(stream)
        else:
            transport.detach(stream, conn)

    # ------------------------------------------------------------------ modern POST (2026-07-28)
    def _post_modern(self, message, json_ok: bool, sse_ok: bool) -> None:
        """Rule 8: one request, checked (http_modern.py rules 2 to 4), then served on a
        session of its own that ends with the response."""
        if isinstance(message, list):
            return self._error(400, INVALID_REQUEST, "Bad Request: JSON-RPC batches are not part of protocol "
                                                     "revision 2026-07-28")
        if isinstance(message, InvalidMessage):
            return self._json(400, ErrorResponse(message.id, ErrorObject(message.code, message.message)))
        if not isinstance(message, Request):
            return self._head(202)
        try:
            self.app.server.check_modern_request(message.method, message.params,
                                                 lambda version: self._modern_header_problem(message, version))
        except McpError as exc:
            return self._json(status_for(exc.code), ErrorResponse(message.id, ErrorObject(exc.code, exc.message,
                                                                                           exc.data)))
        if message.method == "subscriptions/listen":     # a stream by nature, whatever the response mode
            if not sse_ok:
                return self._error(406, INVALID_REQUEST, "Not Acceptable: subscriptions/listen answers with "
                                                         "text/event-stream")
            json_ok = False
        transport = self.app.stateless_session(owner=self._access)
        self._modern = True
        try:
            self._post_messages(transport, message, json_ok, sse_ok, [])
        finally:
            self._modern = False
            transport.session.close("request done")

    def _modern_header_problem(self, message, version: str):
        """http_modern.py rules 3 and 6: the standard headers, then a tool's Mcp-Param-* headers."""
        problem = header_problem(self._header, message, version)
        if problem is not None or message.method != "tools/call":
            return problem
        params = message.params if isinstance(message.params, dict) else {}
        name = params.get("name")
        tool = self.app.server.tools.get(name) if isinstance(name, str) else None
        try:
            annotations = param_annotations(tool.input_schema) if tool is not None else {}
        except ValueError as exc:                 # our own tool is invalid: nothing to check against
            log.warning("tool %r: %s", name, exc)
            return None
        return param_problem(self._header, annotations, params.get("arguments") or {})
