"""Server side of one HTTP session: routing messages to streams, event store, resumption.

``http_server`` owns the sockets; this module owns what goes on which stream.
Spec: basic/transports#streamable-http, basic/transports#multiple-connections,
basic/transports#resumability-and-redelivery, 2024-11-05 basic/transports#http-with-sse.

Rules:

1. One ``HttpSessionTransport`` per MCP session is the Session's transport:
   ``push()`` hands what a POST carried to ``session.deliver`` on the POST's
   own thread (the session has no reader thread: session rule 9, so an idle
   session holds no thread); ``send()`` routes.
2. Routing: a response goes to the stream of the POST that carried its
   request; a request or notification with ``related_id`` goes to that
   request's stream while it is unfinished and may carry SSE; everything else
   goes to the standalone stream (GET). Each message goes on exactly one
   stream, never broadcast.
3. A stream is logical and outlives its connections. When resumability is on,
   a message is stored in the event store before it is queued for the
   connection writing the stream. Without a connection it waits: in the store
   (a POST stream, until a GET with ``Last-Event-ID``) or in the backlog (the
   standalone stream, until the next GET).
4. A POST stream in auto mode is decided under the lock by its first message:
   the final response first → one JSON body; anything else → SSE. A priming
   event id (revision 2025-11-25 or later) is reserved when SSE is decided,
   before any message of the stream is stored, so replay after it is complete.
5. ``open_get(last_event_id)`` replays only the stream the id names, and only a
   stream of this session; replay and attaching the new connection happen
   under the routing lock, so nothing is lost or duplicated in between. A new
   connection on a stream replaces the old one (a client that reconnects knows
   better than a server that has not yet noticed the old one died).
6. The HTTP response writing a stream reads its queue (``stream.conn``),
   whose items are ``(event_id, message, final)`` tuples, ``CLOSE`` (end this
   response; the stream stays resumable), ``STOP`` (the session closed or the
   connection was replaced), or ``CANCELLED``.
"""
from __future__ import annotations

import collections
from queue import SimpleQueue
import threading
import time
from typing import Any, Optional

from mcp_ref.protocol import lifecycle
from mcp_ref.errors import get_logger
from mcp_ref.jsonrpc.messages import ErrorResponse, Notification, Response, encode_line, is_request_id
from mcp_ref.transports.http.server.events import new_stream_id

log = get_logger("mcp_ref.http")

__all__ = ["HttpSessionTransport", "LegacySseTransport", "CLOSE", "STOP", "CANCELLED"]

CLOSE = object()              # end the HTTP response, keep the stream (close_stream, polling)
STOP = object()               # end the HTTP response: the session closed or a new connection took over
CANCELLED = object()          # end the HTTP response: the client cancelled every request of the POST
PRIMING_SINCE = "2025-11-25"  # Spec 2025-11-25: POST SSE streams start with a priming event
FINISHED_KEPT = 256           # finished SSE streams kept for late resumption, per session


class _Stream:
    """A logical SSE stream (rule 3): a POST's (``request_ids``) or the standalone one."""

    def __init__(self, stream_id: str, request_ids=(), mode: Optional[str] = "sse"):
        self.id = stream_id
        self.request_ids = tuple(request_ids)
        self.standalone = not self.request_ids
        self.pending = set(request_ids)       # requests of this POST not yet answered
        self.mode = mode                      # "json" (or the client accepts only JSON), "sse", None (auto: rule 4)
        self.conn: Optional[SimpleQueue] = None    # the queue of the HTTP response writing it (rule 6)
        self.finished = False                 # the last response has been routed
        self.retired = False                  # finished and released (see _retire)
        self.priming_id: Optional[str] = None
        # The standalone stream's (every use asks ``standalone`` first); a POST's has none.
        self.backlog: collections.deque = collections.deque(maxlen=10000 if self.standalone else 0)


class _SessionTransport:
    """What both session transports hold for the HTTP layer (app.py): the session, who
    authorized it (core.py rule 7), and how busy it is (idle ones are reaped)."""

    def __init__(self, session_id: Optional[str], on_close, active: int = 0):
        self.session_id = session_id
        self.session: Any = None              # the ServerSession, set by the HTTP layer (app.py) before a push
        self.auth: Any = None                 # the AccessToken that authorized the session (set by app.py)
        self.closed = False
        self.last_active = time.monotonic()
        self.active = active                  # HTTP requests of this session being served
        self._on_close = on_close
        self._lock = threading.Lock()

    def push(self, message) -> None:
        """A message the client POSTed, for the session (rule 1)."""
        self.session.deliver(message)

    def close(self) -> None:
        """Idempotent: every stream's connection is told to stop (``STOP``), then ``on_close``."""
        with self._lock:
            if self.closed:
                return
            self.closed = True
            self._end_streams()
        self._on_close(self)

    def _end_streams(self) -> None:
        raise NotImplementedError

    def idle_for(self) -> float:
        """Seconds since the last HTTP request ended (0 while one is being served)."""
        return 0.0 if self.active else time.monotonic() - self.last_active

    def enter(self) -> None:
        with self._lock:
            self.active += 1

    def leave(self) -> None:
        with self._lock:
            self.active -= 1
            self.last_active = time.monotonic()


class HttpSessionTransport(_SessionTransport):
    """The Transport of one Streamable HTTP session, server side (see the module rules).

    Args:
        session_id: the ``Mcp-Session-Id`` (None in stateless mode).
        event_store: an ``EventStore``; None turns resumability off.
        on_close: ``fn(transport)`` called once when the transport closes.
    """

    def __init__(self, session_id: Optional[str], *, on_close, event_store=None):
        super().__init__(session_id, on_close)
        self.event_store = event_store
        self._streams: dict = {}              # stream id -> _Stream (ours: rule 5)
        self._by_request: dict = {}           # request id -> the unfinished _Stream carrying its answer
        self._finished: collections.deque = collections.deque()
        self.standalone = self._new_stream((), "sse")

    # ------------------------------------------------------------------ Transport interface
    def send(self, message, related_id=None) -> None:
        """Route one message (rule 2). Never a batch reply: the HTTP layer pushes a batch's
        messages one by one (transports/http/server/core.py rule 2)."""
        encode_line(message)          # what cannot be written (a lone surrogate) fails here, not in a handler
        with self._lock:
            if self.closed:
                raise ConnectionError("the HTTP session is closed")
            if isinstance(message, (Response, ErrorResponse)):
                stream = self._by_request.pop(message.id, None)
                if stream is None:
                    log.debug("no stream waits for the response to %r; dropped", message.id)
                    return
                stream.pending.discard(message.id)
                stream.finished = not stream.pending
                if stream.finished and stream.mode is None:
                    stream.mode = "json"               # rule 4: the answer came first
            else:
                stream = self._by_request.get(related_id)
                if stream is None or stream.mode == "json":
                    stream = self.standalone
            if stream.mode is None:
                self._start_sse(stream)                # rule 4: something came before the answer
            self._deliver(stream, message)

    def _end_streams(self) -> None:
        for stream in self._streams.values():
            if stream.conn is not None:
                stream.conn.put(STOP)
                stream.conn = None
            self._forget(stream.id)

    # ------------------------------------------------------------------ used by the HTTP layer
    def push(self, message) -> None:
        """A message the client POSTed, for the session (rule 1). A
        cancellation also ends the cancelled request's HTTP response: the session will not
        answer it, and a late answer is dropped (Spec: basic/utilities/cancellation)."""
        self.session.deliver(message)
        if isinstance(message, Notification) and message.method == "notifications/cancelled":
            request_id = (message.params or {}).get("requestId")
            with self._lock:
                stream = self._by_request.pop(request_id, None) if is_request_id(request_id) else None
                if stream is not None:
                    stream.pending.discard(request_id)
                    if not stream.pending:
                        stream.finished = True
                        if stream.conn is not None:
                            stream.conn.put(CANCELLED)
                        else:
                            self._retire(stream)

    @property
    def priming(self) -> bool:
        """Rule 4: priming events exist from 2025-11-25, as negotiated by the session."""
        version = getattr(self.session, "protocol_version", None)
        return self.event_store is not None and lifecycle.at_least(version, PRIMING_SINCE)

    def open_post(self, request_ids, mode: Optional[str]) -> Optional[_Stream]:
        """The stream for one POST's requests, with its connection; None when an id is in use."""
        with self._lock:
            if self.closed or any(rid in self._by_request for rid in request_ids):
                return None
            stream = self._new_stream(request_ids, mode)
            stream.conn = SimpleQueue()
            for rid in request_ids:
                self._by_request[rid] = stream
            if mode == "sse":
                self._start_sse(stream)
            return stream

    def open_get(self, last_event_id: Optional[str]):
        """A GET: ``(stream, conn, items, priming event id)``. Without ``Last-Event-ID``, the
        standalone stream and its backlog (a priming id only when the backlog is empty: backlog
        items carry ids). With one (rule 5), the stream it names and its events after that id
        (``conn`` None: the stream is finished, the replay is all); None when the id is unknown,
        expired or not this session's."""
        with self._lock:
            if last_event_id is None:
                stream = self.standalone
                items = list(stream.backlog)
                priming = self.event_store.store(stream.id, None) if not items and self.priming else None
            else:
                found = self.event_store.replay_after(last_event_id) if self.event_store is not None else None
                if not found or found[0] not in self._streams:
                    return None
                stream, priming = self._streams[found[0]], None
                items = [(event_id, message, False) for event_id, message in found[1]]
            conn = None if stream.finished else self._attach(stream)
            stream.backlog.clear()            # handed over, or replayed (every backlog item was stored)
            return stream, conn, items, priming

    def detach(self, stream: _Stream, conn: SimpleQueue, unsent=(), done: bool = False) -> None:
        """A connection ended (done, failed or replaced). A POST's answer written in full
        (``done``) releases its stream; the standalone stream keeps what the connection did
        not write, for the next GET."""
        with self._lock:
            if stream.conn is conn:
                stream.conn = None
            if done:
                self._retire(stream)
            elif stream.standalone and not self.closed:
                leftover = list(unsent)
                while not conn.empty():          # nobody else puts to it: every put holds our lock
                    leftover.append(conn.get_nowait())
                stream.backlog.extendleft(reversed([item for item in leftover if isinstance(item, tuple)]))

    def close_stream(self, related_id) -> bool:
        """End the HTTP response carrying request ``related_id`` now; the handler keeps running
        and what it sends later is delivered when the client resumes (GET + Last-Event-ID).
        False (a no-op) when that request has no resumable SSE stream."""
        with self._lock:
            stream = self._by_request.get(related_id)
            if stream is None or self.event_store is None or stream.mode == "json":
                return False
            if stream.mode is None:
                self._start_sse(stream)
            if stream.conn is not None:
                stream.conn.put(CLOSE)
                stream.conn = None
            return True

    # ------------------------------------------------------------------ internals (under the lock)
    def _new_stream(self, request_ids, mode) -> _Stream:
        stream = _Stream(new_stream_id(), request_ids, mode)
        self._streams[stream.id] = stream
        return stream

    def _start_sse(self, stream: _Stream) -> None:
        """Rule 4: the stream is SSE; its priming event id is reserved before any message is stored."""
        stream.mode = "sse"
        if self.priming:
            stream.priming_id = self.event_store.store(stream.id, None)

    def _attach(self, stream: _Stream) -> SimpleQueue:
        if stream.conn is not None:
            stream.conn.put(STOP)       # rule 5: the new connection takes over
        stream.conn = SimpleQueue()
        return stream.conn

    def _retire(self, stream: _Stream) -> None:
        """A finished POST stream releases its request ids; an SSE one stays replayable
        while it is among the last ``FINISHED_KEPT`` (rule 5), then the store forgets it."""
        if stream.retired:
            return
        stream.retired = True
        for rid in stream.request_ids:
            if self._by_request.get(rid) is stream:
                del self._by_request[rid]
        if stream.mode != "sse" or self.event_store is None:
            self._streams.pop(stream.id, None)
            return
        self._finished.append(stream.id)
        if len(self._finished) > FINISHED_KEPT:
            old = self._finished.popleft()
            self._streams.pop(old, None)
            self._forget(old)

    def _forget(self, stream_id: str) -> None:
        """Tell the event store a stream is no longer needed (``forget`` is optional: ``EventStore``)."""
        forget = getattr(self.event_store, "forget", None)
        if forget is not None:
            forget(stream_id)

    def _deliver(self, stream: _Stream, message) -> None:
        stored = self.event_store is not None and stream.mode == "sse"      # rule 3: stored before it is queued
        event_id = self.event_store.store(stream.id, message) if stored else None
        item = (event_id, message, stream.finished and not stream.standalone)
        if stream.conn is not None:
            stream.conn.put(item)
        elif stream.standalone:
            stream.backlog.append(item)
        else:
            if event_id is None:
                log.debug("stream %s has no connection and no store; message dropped", stream.id)
            if item[2]:
                self._retire(stream)              # answered while disconnected: kept for replay


class LegacySseTransport(_SessionTransport):
    """The Transport of one 2024-11-05 HTTP+SSE session: every message is a ``message``
    event on the session's one GET stream; POSTs ``push()`` what the client sends to
    ``session.deliver`` (rule 1)."""

    def __init__(self, session_id: str, *, on_close):
        super().__init__(session_id, on_close, active=1)   # the GET stream is open for the whole session
        self.conn: SimpleQueue = SimpleQueue()

    def send(self, message, related_id=None) -> None:
        encode_line(message)          # as HttpSessionTransport.send
        with self._lock:
            if self.closed:
                raise ConnectionError("the SSE session is closed")
            self.conn.put((None, message, False))

    def _end_streams(self) -> None:
        self.conn.put(STOP)

