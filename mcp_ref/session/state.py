"""What the rooms of ``Session`` share: its state, set in one ``__init__``, and the methods one
room calls in another.

Rules:
1. ``Session`` (session/__init__.py) is one class written in rooms, each a mix-in: outbound.py,
   inbound.py, notices.py, batches.py and closing.py. Each room inherits ``SessionState``, whose
   ``__init__`` (``Session``'s, its arguments documented there) sets every attribute once, with
   its type, so a type checker reads every room as part of one session.
2. Each method declared below is defined in the room named beside it (those one room calls in
   another); the declarations exist for type checkers alone and never run.
"""
from __future__ import annotations

import itertools
import queue
import threading
from typing import TYPE_CHECKING, Any, Callable

from mcp_ref.errors import ConnectionClosed
from mcp_ref.session.pool import Pool
from mcp_ref.session.workers import Lane

if TYPE_CHECKING:
    from mcp_ref.jsonrpc.messages import Request

__all__ = ["SessionState", "DEFAULT_TIMEOUT", "MAX_INBOUND"]

DEFAULT_TIMEOUT = 60.0     # seconds an outgoing request waits (session/outbound.py rule 2)
MAX_INBOUND = 1000         # session/__init__.py rule 3: the peer's requests in flight at once


class SessionState:
    """The state of one ``Session``, as every room sees it (the rules are session/__init__.py's)."""

    def __init__(self, transport, handle_request: Callable, handle_notification: Callable | None = None,
                 *, timeout: float = DEFAULT_TIMEOUT, max_workers: int = 16, context_class: type | None = None,
                 on_close: Callable | None = None, ping_interval: float | None = None, name: str = "mcp",
                 eof_grace: float = 0.0, executor=None, max_inbound: int = MAX_INBOUND):
        self.transport = transport
        self.max_inbound = max_inbound          # rule 3
        self.default_timeout = timeout
        self.protocol_version: str | None = None   # set by Server/Client once negotiated
        self._handle_request = handle_request
        self._handle_notification = handle_notification
        if context_class is not None:               # else Session's, RequestContext (session/__init__.py)
            self._context_class: type = context_class
        self._on_close_cb = on_close
        self._name = name
        self._eof_grace = eof_grace                 # rule 5
        self._ping_interval = ping_interval
        # Its life.
        self.closed = False
        self.close_error: ConnectionClosed | None = None
        self._closed_event = threading.Event()
        self._closing_thread: threading.Thread | None = None
        self._started = False
        # The tables (rule 6: touched under _lock) and the write lock.
        self._lock = threading.Lock()
        self._send_lock = threading.Lock()
        self._ids = itertools.count(1)
        self._outbound: dict = {}              # id -> outbound.Pending (requests we sent)
        self._inbound: dict = {}               # id -> RequestContext (requests we serve)
        self._replying = 0                     # served requests whose answer is being sent
        self._listening: dict = {}             # progress token -> fn (listen_progress)
        # Who runs what: the pool (rules 1, 3), the helper threads (rules 4, 8), or lanes (rule 9).
        self._pool: Pool | None = None
        self._notices: queue.Queue | None = None
        self._control: queue.Queue | None = None
        self._helpers: list[threading.Thread] = []
        self._jobs: Lane | None = None
        self._serial: Lane | None = None
        self._noticing: threading.Thread | None = None   # the pool thread running rule 4's work
        if executor is not None:
            self._jobs, self._serial = Lane(executor, max_workers), Lane(executor, 1)
        else:
            self._pool = Pool(name, max_workers + 1)   # rule 3: the handlers and the one reading

    if TYPE_CHECKING:
        # outbound.py
        def ping(self, timeout: float | None = None) -> None: ...
        def _send(self, message: Any, related_id: Any = None) -> None: ...
        def _closed_error(self) -> ConnectionClosed: ...
        def _on_response(self, message: Any) -> None: ...

        # inbound.py
        def _reply_job(self, reply: Any, batch: Any = None) -> Callable[[], None]: ...
        def _route(self, message: Any) -> Callable[[], None] | None: ...
        def _on_request(self, request: Request, batch: Any = None) -> Callable[[], None] | None: ...

        # notices.py
        def _notice(self, job: Callable[[], None]) -> None: ...
        def _start_helper(self, role: str, target: Callable[[], None]) -> None: ...
        def _control_put(self, job: Callable[[], None]) -> None: ...

        # batches.py
        def _route_batch(self, items: list) -> Callable[[], None] | None: ...

        # closing.py
        def _let_finish(self, reason: str) -> None: ...
        def _on_close(self, reason: str) -> None: ...
