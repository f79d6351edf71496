"""What the rooms of ``Session`` share: its attributes and the methods one room calls in another.

Rules:
1. ``Session`` (session/__init__.py) is one class written in rooms, each a mix-in: outbound.py,
   inbound.py, notices.py, batches.py and closing.py. Each room inherits ``SessionState``, so a
   name one room uses and another sets is declared here once, with its type, and a type checker
   reads every room as part of one session.
2. Declarations only: the attributes are set in ``Session.__init__``, and each method is
   defined in the room named beside it (those one room calls in another); the method
   declarations exist for type checkers alone and never run. Nothing here changes what a session does.
"""
from __future__ import annotations

import queue
import threading
from typing import TYPE_CHECKING, Any, Callable, Iterator

if TYPE_CHECKING:
    from mcp_ref.errors import ConnectionClosed
    from mcp_ref.jsonrpc.messages import Request
    from mcp_ref.session.pool import Pool
    from mcp_ref.session.workers import Lane

__all__ = ["SessionState"]


class SessionState:
    """The state of one ``Session``, as every room sees it (the rules are session/__init__.py's)."""

    # Set by Session.__init__ from its arguments.
    transport: Any
    max_inbound: int                       # rule 3
    default_timeout: float
    protocol_version: str | None           # set by Server/Client once negotiated
    _handle_request: Callable
    _handle_notification: Callable | None
    _context_class: type                   # a RequestContext class (session/inbound.py)
    _on_close_cb: Callable | None
    _name: str
    _eof_grace: float                      # rule 5
    _ping_interval: float | None
    # Its life.
    closed: bool
    close_error: ConnectionClosed | None
    _closed_event: threading.Event
    _closing_thread: threading.Thread | None
    # The tables (rule 6: touched under _lock) and the write lock.
    _lock: threading.Lock
    _send_lock: threading.Lock
    _ids: Iterator[int]
    _outbound: dict                        # id -> outbound.Pending (requests we sent)
    _inbound: dict                         # id -> RequestContext (requests we serve)
    _replying: int                         # served requests whose answer is being sent
    _listening: dict                       # progress token -> fn (listen_progress)
    # Who runs what: the pool (rules 1, 3), the helper threads (rules 4, 8), or lanes (rule 9).
    _pool: Pool | None
    _notices: queue.Queue | None
    _control: queue.Queue | None
    _helpers: list[threading.Thread]
    _jobs: Lane | None
    _serial: Lane | None
    _noticing: threading.Thread | None

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
