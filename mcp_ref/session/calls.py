"""What a handler knows of the request it serves: ``RequestContext``.

The session (session/__init__.py) makes one per request of the peer's it serves and
hands it to the handler; the caller's side of a call (``Pending``,
``CancelToken``) is session/outbound.py.

Rules (Spec: basic/utilities/cancellation, basic/utilities/progress):

1. A handler's ``cancelled`` Event is set when the peer cancels the request or
   the session closes; a handler polls it or calls ``check_cancelled()``.
   Nested requests a handler sends to the peer are cancelled with it.
   Fast path; it holds seq. latency <= 2x the floor: the Event is made on first use.
2. ``report_progress`` sends ``notifications/progress`` only when the caller
   gave a token, with strictly increasing values, and never after the
   request finished.

This module starts no threads and does no I/O of its own, and imports no
session: a ``RequestContext`` is handed the session it serves and uses only its
public methods (``notify``, ``start_request``, ``protocol_version``).
"""
from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from mcp_ref.protocol import lifecycle
from mcp_ref.errors import RequestCancelled, SessionError
from mcp_ref.jsonrpc.messages import is_request_id

if TYPE_CHECKING:
    from mcp_ref.jsonrpc.messages import Request

__all__ = ["RequestContext"]

# Makes RequestContext.cancelled once, whichever thread asks first, and guards the
# short lists of on_cancel callbacks and nested requests (no I/O, no user code under it).
_EVENT_LOCK = threading.Lock()


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
        self._cancelled: threading.Event | None = None     # the Event, made on first use (see ``cancelled``)
        # A request that ends only when the peer cancels it (2026-07-28 subscriptions/listen):
        # cancelled at once when the peer's input ends, not awaited (session/__init__.py rule 5).
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
        """Set when the request is cancelled (rule 1). Made on first use: most requests
        finish without anyone asking, and an Event costs a small call 3 µs."""
        if self._cancelled is None:
            with _EVENT_LOCK:
                if self._cancelled is None:
                    self._cancelled = threading.Event()
        return self._cancelled

    def is_cancelled(self) -> bool:
        """True once the request was cancelled (without making the Event)."""
        return self._cancelled is not None and self._cancelled.is_set()

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
