"""What passes between an HTTP adapter and ``http_core``: the request, the response, and
the SSE body a response may stream.

``http_handler`` (``http.server``) and ``wsgi`` (PEP 3333) build an
``HttpRequest``; ``http_core`` answers with an ``HttpResponse``. Spec:
basic/transports#streamable-http, #listening-for-messages-from-the-server,
#resumability-and-redelivery; 2026-07-28 basic/transports/streamable-http#cancellation.

Rules:

1. ``HttpResponse.headers`` are end-to-end headers only; each adapter adds its
   framing (``Content-Length``, chunked encoding, ``Connection``, ``Date``).
2. An SSE body (``SseBody``) yields each event's bytes as it comes, on the
   request's own thread; an idle stream asks the adapter whether its client
   is still there and yields a comment every ``keepalive`` seconds. With
   ``poll_interval`` the response ends after that long, after a ``retry``
   event (SEP-1699 polling); the stream itself lives on. ``close()`` before
   the end (the client went away; a WSGI server always calls it) detaches
   the connection: the event last yielded counts as not delivered (the
   standalone stream keeps it for the next GET; a replay may repeat it, and
   event ids let the client drop the repeat). Whatever ends the body, its
   finishers run once (the request's end: ``transport.leave``, closing a
   stateless, modern or legacy session).
3. 2026-07-28 (``modern``): a client that closes the connection cancels the
   request (``cancel_pending``: the handler's ``ctx.cancelled`` is set, nothing
   more is sent). ``next_item`` asks ``client_gone()`` every ``MODERN_POLL``
   seconds while it waits; a body closed before its last response (a write
   failed) cancels too. An adapter that cannot see the socket (most WSGI
   servers) learns of the client leaving only when a write fails: a JSON
   answer's request then runs to its end, an SSE one is cancelled at the next
   event or keepalive comment.
"""
from __future__ import annotations

import collections
from queue import Empty
import time
from typing import Callable, Optional

from mcp_ref.errors import INVALID_REQUEST, get_logger
from mcp_ref.jsonrpc.messages import ErrorObject, ErrorResponse, encode
from mcp_ref.transports.http.sse import format_comment, format_event
from mcp_ref.transports.http.server.session import CANCELLED, CLOSE, STOP

log = get_logger("mcp_ref.http")

__all__ = ["HttpRequest", "HttpResponse", "BodyRefused", "SseBody", "error",
           "json_response", "next_item", "MODERN_POLL", "SESSION_HEADER", "VERSION_HEADER"]

SESSION_HEADER = "Mcp-Session-Id"          # the headers of basic/transports
VERSION_HEADER = "MCP-Protocol-Version"
READ_SIZE = 64 * 1024        # bytes asked of a body at a time
MODERN_POLL = 0.2             # seconds between looks at a 2026-07-28 client's connection (rule 3)


class BodyRefused(Exception):
    """Raised by an adapter's body reader: the body cannot be read (``http_core`` rule 1)."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status, self.message = status, message


def read_sized(read, length: int, limit: int) -> bytes:
    """A body of ``length`` bytes (a Content-Length, -1 when invalid) read with ``read(n)``
    (which may return less); raises ``BodyRefused`` for an invalid length, one over ``limit``,
    or a body that ends early."""
    if length < 0:
        raise BodyRefused(400, "Bad Request: invalid Content-Length")
    if length > limit:
        raise BodyRefused(413, f"Payload Too Large: the limit is {limit} bytes")
    body = read_up_to(read, length)
    if len(body) < length:
        raise BodyRefused(400, "Bad Request: the body ended before its Content-Length")
    return body


def read_up_to(read, size: int) -> bytes:
    """``size`` bytes, or fewer at the end of the body (``read`` may return less)."""
    parts, left = [], size
    while left > 0 and (data := read(min(left, READ_SIZE))):
        parts.append(data)
        left -= len(data)
    return b"".join(parts)


class HttpRequest:
    """One request as the core sees it; adapters fill it in and override the readers.

    ``target`` is the path (as the client named it, mount point included) and query;
    ``headers`` maps lower-case names to values.
    """

    def __init__(self, method: str, target: str, headers: dict, local_address: Optional[Callable] = None):
        self.method, self.target, self.headers = method, target, headers
        self.local_address = local_address       # () -> the address the connection arrived on

    def read_body(self, limit: int) -> bytes:
        """The body, at most ``limit`` bytes; raises ``BodyRefused``."""
        raise NotImplementedError

    def client_gone(self) -> bool:
        """True when the client has certainly closed the connection (rules 2 and 3)."""
        return False


class HttpResponse:
    """Status, headers (end to end only) and body: bytes, or an ``SseBody`` to iterate."""

    def __init__(self, status: int, headers=(), body=b"", close: bool = False, sent: bool = False):
        self.status, self.headers, self.body = status, list(headers), body
        self.close = close               # close the connection after it (a refused body stays unread)
        self.sent = sent                 # nobody to write to (the client hung up)

    @property
    def streamed(self) -> bool:
        return not isinstance(self.body, bytes)


def error(status: int, message: str, headers=(), close: bool = False, code: int = INVALID_REQUEST) -> HttpResponse:
    """``http_core`` rule 1: a JSON-RPC error without id; never a stack trace."""
    return json_response(status, ErrorResponse(None, ErrorObject(code, message)), headers, close)


def json_response(status: int, payload, headers=(), close: bool = False) -> HttpResponse:
    """A JSON body: ``payload`` a message, or a list of them."""
    return HttpResponse(status, [("Content-Type", "application/json")] + list(headers),
                        encode(payload).encode("utf-8"), close)


def cancel_pending(transport, stream) -> None:
    """Rule 3: the client left; cancel what it asked of this stream (Spec 2026-07-28:
    basic/transports/streamable-http#cancellation)."""
    for request_id in list(stream.pending):
        transport.session.cancel_inbound(request_id, "the client closed the response stream")


def next_item(request: HttpRequest, conn, transport, stream, modern: bool, timeout: Optional[float] = None):
    """The connection's next item (``http_session`` rule 6); ``queue.Empty`` after ``timeout``.
    Modern (rule 3): ``CANCELLED`` once the client is seen gone, its requests cancelled."""
    if not modern:
        return conn.get(timeout=timeout)
    end = None if timeout is None else time.monotonic() + timeout
    while True:
        wait = MODERN_POLL if end is None else max(0.0, min(MODERN_POLL, end - time.monotonic()))
        try:
            return conn.get(timeout=wait)
        except Empty:
            if request.client_gone():
                cancel_pending(transport, stream)
                return CANCELLED
            if end is not None and time.monotonic() >= end:
                raise


class SseBody:
    """An SSE response body (rule 2): iterating yields the priming event (``priming``, its id),
    ``prelude``, a replay (``items``), then ``conn``'s events as they come, until the stream's
    last response, CLOSE, STOP or the polling deadline (``conn`` None: the replay is all).
    ``stream`` None: the 2024-11-05 legacy stream, each message an ``event: message``.
    ``resume_id``: without a priming event, the id the client resumed from (``Last-Event-ID``)."""

    def __init__(self, request: HttpRequest, app, transport, stream, conn, items=(), priming=None, prelude=(),
                 modern: bool = False, resume_id=None):
        self.request, self.app, self.transport, self.stream, self.conn = request, app, transport, stream, conn
        self.items = collections.deque(items)
        self.resume_id, self.modern = priming or resume_id, modern
        self.deadline = time.monotonic() + app.poll_interval if app.poll_interval and stream is not None else None
        self._prelude = collections.deque(prelude)
        if priming is not None:
            self._prelude.appendleft(format_event("", id=priming, retry=app.retry_interval))
        self._finishers: list = []
        self._ending = False             # the next step ends the body
        self._done = False
        self.finished = False            # the stream's last response was yielded, or its requests cancelled
        self._unsent = None              # the item last yielded, until the next step asks for more

    def open_now(self) -> None:
        """Start with a comment when nothing else is ready: a WSGI server sends the headers
        only with the first bytes of the body (PEP 3333)."""
        if not self._prelude:
            self._prelude.append(format_comment("stream open"))

    def on_end(self, finisher: Callable) -> None:
        self._finishers.append(finisher)

    def __iter__(self):
        return self

    def __next__(self) -> bytes:
        if self._prelude:
            return self._prelude.popleft()
        self._unsent = None
        data = None if self._done or self._ending else self._step()
        if data is None:
            self._end(clean=True)
            raise StopIteration
        return data

    def close(self) -> None:
        """End the body now (the client went away, or the server stopped iterating)."""
        self._end(clean=False)

    def _step(self) -> Optional[bytes]:
        """The next event's bytes; None ends the body."""
        if self.items:
            item = self.items.popleft()
        elif self.conn is None:
            return None
        else:
            wait = self.app.keepalive
            if self.deadline is not None:
                wait = max(0.0, min(wait, self.deadline - time.monotonic()))
            try:
                item = next_item(self.request, self.conn, self.transport, self.stream, self.modern, wait)
            except Empty:
                if self.deadline is not None and time.monotonic() >= self.deadline:
                    if self.resume_id is not None:      # SEP-1699 polling: the client comes back
                        self._ending = True
                        return format_event("", retry=self.app.retry_interval)
                    self.deadline = None                # nothing to resume from: keep the connection
                if self.request.client_gone():          # rule 2: an idle stream whose client has left ends
                    self._end(clean=False)
                    return None
                return format_comment("keepalive")
        if item is STOP or item is CANCELLED:
            self.finished = item is CANCELLED
            return None
        if item is CLOSE:
            self._ending = True
            return format_event("", retry=self.app.retry_interval)
        event_id, message, final = item
        self._unsent = item
        self.resume_id = event_id or self.resume_id
        if final:
            self.finished = True
            self._ending = True
        return format_event(encode(message), event=None if self.stream is not None else "message", id=event_id)

    def _end(self, clean: bool) -> None:
        if self._done:
            return
        self._done = True
        try:
            self._release(clean)
        finally:
            for finisher in self._finishers:
                try:
                    finisher()
                except Exception:
                    log.exception("ending an SSE response failed")

    def _release(self, clean: bool) -> None:
        """Give the connection back to the session (a finished POST stream ends)."""
        if self.conn is None or self.stream is None:
            return
        if self.modern and not self.finished:          # rule 3: the client left before the answer
            cancel_pending(self.transport, self.stream)
        unsent = () if clean or self._unsent is None else [self._unsent]
        self.transport.detach(self.stream, self.conn, unsent, done=self.finished)
