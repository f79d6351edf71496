"""One call each way: what a handler knows (``RequestContext``) and what a caller
holds (``Pending``). The session (session.py) makes both; it owns the threads.

Rules (Spec: basic/utilities/cancellation, basic/utilities/progress,
basic/lifecycle#timeouts):

1. A handler's ``cancelled`` Event is set when the peer cancels the request or
   the session closes; a handler polls it or calls ``check_cancelled()``.
   Nested requests a handler sends to the peer are cancelled with it.
2. ``report_progress`` sends ``notifications/progress`` only when the caller
   gave a token, with strictly increasing values, and never after the
   request finished.
3. A caller's ``Pending.result()`` waits on its own waiter, so the waiting
   thread is its own timer: on timeout it raises ``RequestTimeout`` and sends
   ``notifications/cancelled`` (never for ``initialize``). With
   ``reset_on_progress`` each progress notification restarts the timeout,
   up to a hard maximum.
4. A reply that arrives after the caller stopped waiting is dropped by the
   session (the waiter is forgotten first).
5. Another thread cancels a request through a ``CancelToken`` given as
   ``cancel=`` to any request method (the caller's Stop button): the token
   cancels every request in flight that carries it, as ``Pending.cancel``
   does, and a request started with a cancelled token is not sent.

This module starts no threads and does no I/O of its own, and imports no
session: a ``RequestContext`` is handed the session it serves and uses only its
public methods (``notify``, ``start_request``, ``protocol_version``); a
``Pending`` is handed the three callables it needs (``notify``, ``forget``,
``before_blocking``) when the session makes it.
"""
from __future__ import annotations

import threading
import time
from _thread import allocate_lock as _allocate_lock

from . import lifecycle
from .errors import McpError, RequestCancelled, RequestTimeout, SessionError
from .messages import ErrorResponse, Response, is_request_id

TYPE_CHECKING = False
if TYPE_CHECKING:          # names for annotations only
    from .messages import Request

__all__ = ["RequestContext", "Pending", "CancelToken"]

# Makes RequestContext.cancelled once, whichever thread asks first, and guards the
# short lists of on_cancel callbacks and nested requests (no I/O, no user code under it).
_EVENT_LOCK = threading.Lock()


class _Waiter:
    """A request we sent. The reader settles it with the reply; so do cancel and close.
    ``ordered``: settle after queued progress callbacks (see _on_response).

    Two bare locks, not a ``threading.Event``: ``_done`` is held from the start and
    released by the one ``settle`` that wins ``_once``; the caller waits by acquiring
    it. An Event is a Condition over a lock and makes another lock for every wait:
    per request that was a measurable share of the client's CPU with many threads
    calling at once (issue 17, the client under concurrency)."""
    __slots__ = ("method", "on_progress", "_done", "_once", "settled", "reply", "heard_at", "ordered")

    def __init__(self, method: str, on_progress=None):
        self.method, self.on_progress = method, on_progress
        self._done = _allocate_lock()
        self._done.acquire()
        self._once = _allocate_lock()
        self.settled = False                 # True once ``reply`` is final
        self.reply = None
        self.heard_at = time.monotonic()
        self.ordered = False

    def settle(self, reply) -> None:
        """Record the reply and wake the caller; the first settle wins (a reply,
        a timeout, a cancellation or close), later ones are ignored (rule 4)."""
        if self._once.acquire(False):        # the first settle wins; later ones are dropped
            self.reply = reply
            self.settled = True
            self._done.release()

    def wait(self, timeout: float) -> bool:
        """Block until settled, at most ``timeout`` seconds; whether it is."""
        if self._done.acquire(True, timeout):
            self._done.release()             # stays open for any later look
        return self.settled


class RequestContext:
    """What a handler knows about the request it serves.

    ``cancelled`` is a ``threading.Event`` set when the peer cancels the
    request or the session closes; long handlers poll it or call
    ``check_cancelled()``. ``report_progress`` is a no-op when the caller sent
    no progress token. Spec: basic/utilities/progress, cancellation.
    """

    def __init__(self, session, request: Request):
        self.session = session
        self.request_id = request.id
        self.method = request.method
        self.params = params = request.params or {}
        meta = params.get("_meta")
        if isinstance(meta, dict):
            self.meta = meta
            # Spec: a token is a string or an integer; echoed exactly as received.
            token = meta.get("progressToken")
            self.progress_token = token if is_request_id(token) else None
        else:
            self.meta, self.progress_token = {}, None
        self._cancelled = None             # the Event, made on first use (see ``cancelled``)
        # A request that ends only when the peer cancels it (2026-07-28 subscriptions/listen):
        # cancelled at once when the peer's input ends, not awaited (session.py rule 5).
        self.ends_with_input = False
        self.finished = False
        self._nested: set | None = None    # Pending requests sent on behalf of this one
        self._on_cancel: list | None = None    # see on_cancel
        self._last_progress: float | None = None

    @property
    def protocol_version(self) -> str | None:
        """The revision this request is served in (the session's; a server's Context
        answers a 2026-07-28 request's own)."""
        return self.session.protocol_version

    @property
    def cancelled(self) -> threading.Event:
        """Set when the request is cancelled. Made on first use: most requests finish
        without anyone asking, and an Event per request is a measurable share of a
        call's cost (bench/bench_stdio.py)."""
        event = self._cancelled
        if event is None:
            with _EVENT_LOCK:
                event = self._cancelled
                if event is None:
                    event = self._cancelled = threading.Event()
        return event

    def is_cancelled(self) -> bool:
        """True once the request was cancelled (without making the Event)."""
        event = self._cancelled
        return event is not None and event.is_set()

    def on_cancel(self, fn) -> None:
        """Call ``fn()`` once when this request is cancelled (at once if it already is),
        so a wait the library controls can wake instead of polling ``cancelled``.
        ``fn`` runs on the thread that noticed the cancellation (the reader, or the
        one closing the session): it must only wake something, never block."""
        with _EVENT_LOCK:
            if not self.is_cancelled():
                if self._on_cancel is None:
                    self._on_cancel = []
                self._on_cancel.append(fn)
                return
        fn()

    def _cancel(self) -> None:
        """Mark the request cancelled and run the ``on_cancel`` callbacks (the session
        and the task registry call this)."""
        self.cancelled.set()
        with _EVENT_LOCK:
            callbacks, self._on_cancel = self._on_cancel, None
        for fn in callbacks or ():
            fn()

    def check_cancelled(self) -> None:
        """Raise ``RequestCancelled`` when the request was cancelled."""
        if self.is_cancelled():
            raise RequestCancelled(f"request {self.request_id!r} ({self.method}) was cancelled")

    def report_progress(self, progress: float, total: float | None = None,
                        message: str | None = None) -> None:
        """Send ``notifications/progress`` for this request.

        Raises:
            ValueError: ``progress`` did not increase (the spec requires it to).
        """
        if self.progress_token is None or self.finished:
            return
        if self._last_progress is not None and not progress > self._last_progress:
            raise ValueError(f"progress must increase: {progress} after {self._last_progress}")
        self._last_progress = progress
        params = {"progressToken": self.progress_token, "progress": progress}
        if total is not None:
            params["total"] = total
        if message is not None and lifecycle.at_least(self.protocol_version, "2025-03-26"):
            params["message"] = message            # the field arrived in 2025-03-26
        self.notify("notifications/progress", params)

    def notify(self, method: str, params: dict | None = None) -> None:
        """Send a notification related to this request (HTTP puts it on this request's stream)."""
        self.session.notify(method, params, related_id=self.request_id)

    def request(self, method: str, params: dict | None = None, **options) -> dict:
        """Send a request to the peer on behalf of this request and wait for its result.

        When this request is cancelled (by the peer, or by close) while the
        nested one is in flight, the nested one is cancelled too: the waiter
        is settled by whoever cancels (no I/O there), and this thread sends
        ``notifications/cancelled`` for it and raises ``RequestCancelled``.
        """
        self.check_cancelled()
        pending = self.session.start_request(method, params, related_id=self.request_id, **options)
        with _EVENT_LOCK:
            if self._nested is None:
                self._nested = set()
            self._nested.add(pending)
        if self.cancelled.is_set():
            self._abandon_nested()
        try:
            return pending.result()
        except RequestCancelled:
            if self.cancelled.is_set():
                try:
                    self.session.notify("notifications/cancelled", {
                        "requestId": pending.id, "reason": f"the {self.method} request it serves was cancelled"})
                except SessionError:
                    pass
            raise
        finally:
            with _EVENT_LOCK:
                self._nested.discard(pending)

    def _abandon_nested(self) -> None:
        """Settle the waiters of nested requests with RequestCancelled (no I/O; any thread)."""
        with _EVENT_LOCK:
            nested = list(self._nested or ())
        for pending in nested:
            pending._waiter.settle(RequestCancelled(f"{pending._waiter.method} (id {pending.id}) cancelled: "
                                                    f"the {self.method} request it serves was cancelled"))


class Pending:
    """An outgoing request in flight: ``result()`` waits, ``cancel()`` abandons it.

    The session hands in what it needs of the session: ``notify`` (to send
    ``notifications/cancelled``), ``forget`` (drop the waiter, rule 4) and
    ``before_blocking`` (let the pool hand the reading role on, pool.py P4).
    """

    def __init__(self, request_id: int, waiter: _Waiter, timeout: float, reset_on_progress: bool,
                 max_total: float | None, *, notify, forget, before_blocking):
        self.id, self._waiter = request_id, waiter
        self._notify, self._forget, self._before_blocking = notify, forget, before_blocking
        self._timeout, self._reset, self._max_total = timeout, reset_on_progress, max_total
        self._start = time.monotonic()

    def result(self) -> dict:
        """Block until the reply. Raises McpError, RequestTimeout, RequestCancelled, ConnectionClosed."""
        waiter = self._waiter
        if not waiter.settled:
            self._before_blocking()
        try:
            while not waiter.settled:
                since = waiter.heard_at if self._reset else self._start
                deadline = since + self._timeout
                if self._max_total is not None:
                    deadline = min(deadline, self._start + self._max_total)
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    elapsed = time.monotonic() - self._start
                    self.cancel(f"timed out after {elapsed:.3g} s")
                    raise RequestTimeout(waiter.method, self._timeout)
                waiter.wait(remaining)
        except BaseException:
            if not waiter.settled:               # Ctrl-C in a script, for example
                self.cancel("the caller stopped waiting")
            raise
        finally:
            self._forget(self.id)
        reply = waiter.reply
        if isinstance(reply, Response):
            return reply.result
        if isinstance(reply, ErrorResponse):
            error = reply.error
            raise McpError.from_error({"code": error.code, "message": error.message, "data": error.data})
        raise reply                               # a SessionError settled locally

    def cancel(self, reason: str | None = None) -> None:
        """Abandon the request: the waiter fails with RequestCancelled and the peer
        is sent ``notifications/cancelled`` (never for ``initialize``)."""
        waiter = self._waiter
        if waiter.settled:
            return
        waiter.settle(RequestCancelled(f"{waiter.method} (id {self.id}) cancelled"
                                       + (f": {reason}" if reason else "")))
        self._forget(self.id)
        if waiter.method != "initialize":
            params = {"requestId": self.id}
            if reason:
                params["reason"] = reason
            try:
                self._notify("notifications/cancelled", params)
            except SessionError:
                pass


class CancelToken:
    """Cancels requests in flight from any thread (rule 5).

    Pass it as ``cancel=`` to a request method (``client.call_tool(...,
    cancel=token)``, ``Session.request``); ``token.cancel(reason)`` from
    another thread then sends ``notifications/cancelled`` with ``reason`` for
    every request in flight that carries it, and each waiting caller raises
    ``RequestCancelled``. A reply that comes later is dropped. A request
    started after the token was cancelled raises at once and is not sent.
    One token may serve several requests (every page of ``list_tools()``, a
    batch of calls): cancelling is final. Spec: basic/utilities/cancellation.
    """

    def __init__(self):
        self._lock = threading.Lock()
        self._pending: set = set()
        self._event = threading.Event()
        self.reason: str | None = None

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    def cancel(self, reason: str = "cancelled by the caller") -> None:
        """Cancel every request carrying this token, now and later. Idempotent: the
        first reason is the one sent. Safe from any thread, also before any request."""
        with self._lock:
            if self._event.is_set():
                return
            self.reason = reason
            self._event.set()
            pending = list(self._pending)
        for handle in pending:
            handle.cancel(reason)

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the token is cancelled (True) or ``timeout`` passes (False)."""
        return self._event.wait(timeout)

    def error(self, method: str) -> RequestCancelled:
        """What a request raises when it was not sent because the token was cancelled."""
        return RequestCancelled(f"{method} not sent: cancelled" + (f": {self.reason}" if self.reason else ""))

    def run(self, pending: "Pending") -> dict:
        """Wait for ``pending`` unless the token is (or becomes) cancelled, which cancels it."""
        with self._lock:
            live = not self._event.is_set()
            if live:
                self._pending.add(pending)
        if not live:
            pending.cancel(self.reason)
        try:
            return pending.result()
        finally:
            with self._lock:
                self._pending.discard(pending)

    def __repr__(self) -> str:
        return f"CancelToken(cancelled={self.cancelled}, reason={self.reason!r})"


def _call_progress(item) -> None:
    """Run a caller's progress callback (on the notify thread, session rule 4),
    unless the request was abandoned meanwhile."""
    waiter, params = item
    if waiter.settled:
        return                                     # abandoned (timeout, cancel, close)
    waiter.on_progress(params.get("progress"), params.get("total"), params.get("message"))


class _Batch:
    """Collects the replies to the requests of one inbound batch (2025-03-26)."""

    def __init__(self, expected: int, replies: list):
        self.expected, self.replies, self.lock = expected, replies, threading.Lock()

    def add(self, reply) -> list | None:
        """Count one reply of the batch (None: a notification's, or a cancelled request's);
        returns every reply once the last one is in, else None."""
        with self.lock:
            if reply is not None:
                self.replies.append(reply)
            self.expected -= 1
            return self.replies if self.expected == 0 else None
