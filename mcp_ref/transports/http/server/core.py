"""The Streamable HTTP rules for one request to the MCP server, whatever server carries it.

Two thin adapters feed this module: ``http_handler`` (the standard library's
``http.server``, used by ``serve_http``) and ``wsgi`` (any PEP 3333 server:
gunicorn, uWSGI, waitress, mod_wsgi, wsgiref). An adapter builds an
``HttpRequest`` (method, target, headers, a body reader, a way to tell that the
client has gone) and gets back an ``HttpResponse`` (status, headers, and a body
that is bytes or an ``SseBody`` iterator: ``http_types``); it adds only its own
framing. So the rules below live in one place: this module holds the checks and
``POST /mcp``; mixed in is transports/http/server/routes.py (authorization, reading a POST's
body, ``GET``/``DELETE /mcp``, the legacy endpoints, stateless POST). ``http_server`` owns
configuration and sessions (``self.app``); ``http_session`` routes messages to
streams. Spec: basic/transports#streamable-http, #sending-messages-to-the-server,
#listening-for-messages-from-the-server, #resumability-and-redelivery,
#protocol-version-header, 2024-11-05 basic/transports#http-with-sse.

Rules:

1. Checks come first, in this order: ``Host`` and ``Origin`` → 403; a POST
   body that is not JSON → 415, refused by the adapter's body reader (too
   large → 413, no length → 411, bad framing → 400, another transfer coding
   → 501; ``http_body`` rules), ``Accept`` admitting neither JSON nor SSE →
   406, bad JSON → 400 with a parse error. Every error body is a JSON-RPC
   error without id; no stack trace leaves the process. After a refused body
   the connection is closed (``HttpResponse.close``: the body stays unread).
2. POST of requests → one ``application/json`` body or a ``text/event-stream``
   (auto: SSE when something is sent before the result; a client accepting
   only one type gets that type); POST of notifications/responses → 202. A
   batch is split here (only when the session negotiated 2025-03-26); a batch
   holding ``initialize`` → 400 in every revision, with or without a session
   (2025-03-26 basic/lifecycle#initialization: it "MUST NOT be part of a
   JSON-RPC batch").
3. A POST without ``Mcp-Session-Id`` must be ``initialize`` (400 otherwise); an
   unknown id → 404 (the client starts a new session); ``MCP-Protocol-Version``
   unsupported → 400 on every request, ``initialize`` included (no session is
   created), absent → 2025-03-26 (stateless mode: the session's revision;
   stateful: the session knows its own).
4. GET → the standalone stream, or with ``Last-Event-ID`` a replay of the one
   stream that id names, then live events; 405 when GET is disabled.
   DELETE ends the session (204); its id then gets 404.
5. SSE: the answer's body is an ``SseBody`` (``http_types`` rule 2), iterated
   by the adapter on the request's own thread; the request ends when it ends.
   An idle stream checks that its client is still there and sends a comment
   every ``keepalive`` seconds. With ``poll_interval`` a connection is closed
   after that long, after a ``retry`` event (SEP-1699 polling).
6. Legacy: GET ``/sse`` → first event ``endpoint`` (``/messages?session_id=...``),
   then ``message`` events; POST there → 202. The session ends with the stream.
7. Authorization (``auth.resource_server`` rules; only with ``auth=``): after the
   Host/Origin check, GET of a protected resource metadata path → the document
   (no token needed); every MCP path needs a valid Bearer token (401/400 with
   ``WWW-Authenticate``; the unread POST body is dropped after it so the
   connection stays usable: handler.py rule 6); a POST whose requests need scopes the token lacks → 403
   ``insufficient_scope`` before anything reaches the session; a session id
   created by another subject → 404. The token's ``AccessToken`` is the
   transport's ``auth`` (``Context.auth``).
8. 2026-07-28: a POST without ``Mcp-Session-Id`` that is modern (transports/http/modern.py
   rule 1) is checked there and answered without a session; the legacy rules
   above apply to everything else, so one endpoint serves both eras. A client
   that closes the connection of such a request cancels it (the handler's
   ``ctx.cancelled`` is set; nothing more is sent for it): ``http_types`` rule 3.
"""
from urllib.parse import urlsplit

from mcp_ref.protocol import lifecycle
from mcp_ref.errors import INTERNAL_ERROR, MISSING_REQUIRED_CLIENT_CAPABILITY, InvalidMessage, McpError, get_logger
from mcp_ref.jsonrpc.messages import ErrorObject, ErrorResponse, Request, encode, error_response
from mcp_ref.transports.http.sse import accepts, format_event
from mcp_ref.transports.http.modern import header_problem, is_modern_post, param_annotations, param_problem, status_for
from mcp_ref.transports.http.server.routes import Routes
from mcp_ref.transports.http.server.session import CANCELLED, STOP
from mcp_ref.transports.http.server.types import (SESSION_HEADER, BodyRefused, HttpRequest, HttpResponse, SseBody,
                                                  error, json_response, next_item)

log = get_logger("mcp_ref.http")

__all__ = ["handle_request", "HttpRequest", "HttpResponse", "BodyRefused"]

INITIALIZE_IN_BATCH = "Bad Request: initialize must not be part of a JSON-RPC batch; send it alone"


def _holds_initialize(message) -> bool:
    """A batch (a list) holding an ``initialize`` request (rule 2)."""
    return isinstance(message, list) and any(isinstance(m, Request) and m.method == "initialize" for m in message)


def handle_request(app, request: HttpRequest) -> HttpResponse:
    """Answer one request to ``app`` (an ``http_server.HttpApp``). Never raises for a bad
    request; an unexpected failure is logged and answered 500. An ``OSError`` (the client
    went away while its body was read) is the adapter's to handle."""
    return _Core(app, request).handle()


class _Core(Routes):
    """The rules for one request (see the module docstring)."""

    def __init__(self, app, request: HttpRequest):
        self.app, self.request, self.headers = app, request, request.headers
        self.access, self.modern = None, False

    def handle(self) -> HttpResponse:
        app, request, headers = self.app, self.request, self.headers
        try:
            host = headers.get("host")
            if not app.host_allowed(host, request.local_address):
                return error(403, "Forbidden: Host header not allowed")
            if not app.origin_allowed(headers.get("origin"), host, request.local_address):
                return error(403, "Forbidden: Origin not allowed")
            path = urlsplit(request.target).path
            if app.guard is not None and (refused := self._authorize(path)) is not None:      # rule 7
                return refused
            routes = {("POST", app.path): self._post_mcp, ("GET", app.path): self._get_mcp,
                      ("DELETE", app.path): self._delete_mcp}
            if app.legacy_sse:                                          # rule 6
                routes.update({("POST", app.messages_path): self._post_legacy, ("GET", app.sse_path): self._get_legacy})
            handler = routes.get((request.method, path))
            if handler is None:
                if any(path == known for _, known in routes):
                    return error(405, "Method Not Allowed", [("Allow", self._allow(path))])
                return error(404, "Not Found")
            return handler()
        except OSError:                                   # the client went away
            raise
        except Exception:
            log.exception("HTTP %s %s failed", request.method, request.target)
            return error(500, "Internal error", close=True, code=INTERNAL_ERROR)

    # ------------------------------------------------------------------ POST /mcp
    def _post_mcp(self) -> HttpResponse:
        app, headers = self.app, self.headers
        json_ok, sse_ok = accepts(headers.get("accept"))
        body = self._read_body()
        if isinstance(body, HttpResponse):
            return body
        if not (json_ok or sse_ok):
            return error(406, "Not Acceptable: Accept must admit application/json or text/event-stream")
        message = self._message_of(body)
        if isinstance(message, HttpResponse):
            return message
        session_id = headers.get("mcp-session-id")
        if session_id is None and is_modern_post(message, headers.get("mcp-protocol-version")):
            return self._post_modern(message, json_ok, sse_ok)                # rule 8
        if app.stateless:
            return self._post_stateless(message, json_ok, sse_ok)
        created = session_id is None
        if created:
            if _holds_initialize(message):
                return error(400, INITIALIZE_IN_BATCH)
            if not (isinstance(message, Request) and message.method == "initialize"):
                return error(400, f"Bad Request: the {SESSION_HEADER} header is required (send initialize first)")
        else:
            transport = app.lookup(session_id)
            if transport is None or not self._owned(transport):
                return self._unknown_session()
        if (refused := self._version_refused()) is not None:          # rule 3, initialize included
            return refused
        if created:
            transport = app.new_session(owner=self.access)
            if transport is None:
                return self._unavailable()
        transport.enter()
        response, replies = self._serve_post(transport, message, json_ok, sse_ok, transport.leave,
                                             [(SESSION_HEADER, transport.session_id)] if created else [])
        if created and replies and isinstance(replies[0], ErrorResponse):
            app.terminate(transport, "initialize failed")          # no session for a failed handshake
        return response

    def _serve_post(self, transport, message, json_ok: bool, sse_ok: bool, finisher, headers=()) -> tuple:
        """``_post_messages``, then ``finisher`` once the answer is done: at the end of an SSE body, else now."""
        response = replies = None
        try:
            response, replies = self._post_messages(transport, message, json_ok, sse_ok, headers)
        finally:
            if response is not None and isinstance(response.body, SseBody):
                response.body.on_end(finisher)
            else:
                finisher()
        return response, replies

    def _post_messages(self, transport, message, json_ok: bool, sse_ok: bool, headers) -> tuple:
        """Push one POST's messages to the session; ``(response, replies)``, the replies being
        the JSON-RPC answers given as JSON (rule 2), else None."""
        batch = isinstance(message, list)
        items = message if batch else [message]
        if batch:
            version = getattr(transport.session, "protocol_version", None)
            if _holds_initialize(message):
                return error(400, INITIALIZE_IN_BATCH), None
            if not lifecycle.batches_allowed(version):
                return error(400, f"Bad Request: JSON-RPC batches are not supported in protocol revision "
                                  f"{version or '(not negotiated)'}"), None
        errors = [error_response(b) for b in items if isinstance(b, InvalidMessage)]
        requests = [m for m in items if isinstance(m, Request)]
        if requests:                       # their stream first, so that no answer finds none
            mode = {"auto": None, "json": "json", "sse": "sse"}[self.app.response_mode]
            if not sse_ok:
                mode = "json"
            elif not json_ok:
                mode = "sse"
            stream = transport.open_post([r.id for r in requests], mode)
            if stream is None:
                if transport.closed:
                    return error(404, "Not Found: the session has ended"), None
                return error(400, "Bad Request: a request with this id is already in progress"), None
        for item in items:
            if not isinstance(item, InvalidMessage):
                transport.push(item)
        if not requests:
            return (json_response(400, errors) if errors else HttpResponse(202)), None
        return self._answer(transport, stream, batch, errors, headers)

    def _answer(self, transport, stream, batch: bool, errors: list, headers) -> tuple:
        """Wait for the POST's answer: one JSON body, or an SSE stream (rule 4 of http_session)."""
        conn = stream.conn
        # Auto mode: the first item decides (http_session rule 4); it is then JSON or SSE for good.
        first = None if stream.mode == "sse" else next_item(self.request, conn, transport, stream, self.modern)
        if first is CANCELLED:                     # rule 8: the client hung up; nobody to answer
            transport.detach(stream, conn, done=True)
            return HttpResponse(202, close=True, sent=True), None
        if stream.mode != "sse":
            replies, item = list(errors), first
            while isinstance(item, tuple):
                replies.append(item[1])
                if item[2]:
                    break
                item = next_item(self.request, conn, transport, stream, self.modern)
            if item is STOP:
                replies += [ErrorResponse(rid, ErrorObject(INTERNAL_ERROR, "the session closed before answering"))
                            for rid in sorted(stream.pending, key=str)]
            transport.detach(stream, conn, done=True)
            if not replies:                        # every request was cancelled by the client
                return HttpResponse(202), None
            # A lone answer is 200, but 400 for a 2026-07-28 request the client lacks a capability for (rule 8).
            code = replies[0].error.code if not batch and isinstance(replies[0], ErrorResponse) else None
            status = status_for(code) if self.modern and code == MISSING_REQUIRED_CLIENT_CAPABILITY else 200
            return json_response(status, replies if batch else replies[0], headers), replies
        body = SseBody(self.request, self.app, transport, stream, conn, [first] if first is not None else [],
                       stream.priming_id, [format_event(encode(e)) for e in errors], modern=self.modern)
        return self._sse(body, headers), None

    # ------------------------------------------------------------------ modern POST (2026-07-28)
    def _post_modern(self, message, json_ok: bool, sse_ok: bool) -> HttpResponse:
        """Rule 8: one request, checked (transports/http/modern.py rules 2 to 4), then served on a
        session of its own that ends with the response."""
        if isinstance(message, list):
            return error(400, "Bad Request: JSON-RPC batches are not part of protocol revision 2026-07-28")
        if isinstance(message, InvalidMessage):
            return json_response(400, error_response(message))
        if not isinstance(message, Request):
            return HttpResponse(202)
        try:
            self.app.server.check_modern_request(message.method, message.params,
                                                 lambda version: self._modern_header_problem(message, version))
        except McpError as exc:
            refusal = ErrorResponse(message.id, ErrorObject(exc.code, exc.message, exc.data))
            return json_response(status_for(exc.code), refusal)
        if message.method == "subscriptions/listen":     # a stream by nature, whatever the response mode
            if not sse_ok:
                return error(406, "Not Acceptable: subscriptions/listen answers with text/event-stream")
            json_ok = False
        transport = self.app.stateless_session(owner=self.access)
        self.modern = True
        response, _ = self._serve_post(transport, message, json_ok, sse_ok,
                                       lambda: transport.session.close("request done"))
        return response

    def _modern_header_problem(self, message, version: str):
        """transports/http/modern.py rules 3 and 6: the standard headers, then a tool's Mcp-Param-* headers."""
        header = self.headers.get
        problem = header_problem(header, message, version)
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
        return param_problem(header, annotations, params.get("arguments") or {})
