"""What the peer tells us on the side: cancellations, progress, other notifications,
and the helper threads that run user callbacks in wire order (session/__init__.py rule 4).

``Notices`` is a mix-in of ``Session`` (session/__init__.py): the reader (session/inbound.py
``_route``) hands each notification here. A cancellation sets the served
request's ``cancelled`` (session/inbound.py rule C1); progress restarts a waiting caller's
timeout (session/outbound.py rule 2) and queues its callback; any other notification
goes to the session's ``handle_notification``. User code never runs on the
reading thread: callbacks run in order on one ``notify`` helper (or, in
delivered mode, on the shared pool's serial lane, session/__init__.py rule 9).
Spec: basic/utilities/cancellation, basic/utilities/progress.

The helper threads (notify, control, keepalive) are started here by
name, so ``close`` joins every one of them (session/closing.py).
"""
from __future__ import annotations

import logging
import queue
import threading
import time
from typing import TYPE_CHECKING

from mcp_ref.jsonrpc.messages import is_request_id
from mcp_ref.session.state import SessionState

if TYPE_CHECKING:
    from mcp_ref.session.outbound import ProgressCallback, RequestId

log = logging.getLogger("mcp_ref.session")

MAX_PROGRESS_LISTENERS = 1024   # listen_progress beyond this forgets the oldest token
_STOP = object()           # the end marker of a helper's queue


class Notices(SessionState):
    """The notification half of ``Session`` (a mix-in)."""

    def listen_progress(self, fn: ProgressCallback, token: RequestId | None = None) -> RequestId:
        """Deliver ``notifications/progress`` for ``token`` (None: a fresh one from the request
        ids, never in use) to ``fn(progress, total, message)`` until ``stop_listening`` or close."""
        with self._lock:
            if self.closed:
                raise self._closed_error()
            token = next(self._ids) if token is None else token
            self._listening[token] = fn
            full = len(self._listening) > MAX_PROGRESS_LISTENERS
            if full:                                       # bounded: forget the oldest
                del self._listening[next(iter(self._listening))]
        if full:
            log.warning("%s: more than %d progress listeners; the oldest was forgotten", self._name,
                        MAX_PROGRESS_LISTENERS)
        return token

    def stop_listening(self, token: RequestId) -> None:
        """Forget ``token``'s listener; progress the reader already queued is still delivered."""
        with self._lock:
            self._listening.pop(token, None)


    def cancel_inbound(self, request_id, reason: str | None = None) -> None:
        """Cancel a request we are serving, as the peer's ``notifications/cancelled`` would
        (for a transport whose cancellation signal is not a message: 2026-07-28 Streamable
        HTTP, where the client closing the response stream cancels the request)."""
        self._on_cancelled({"requestId": request_id, "reason": reason or "no reason given"})

    def _on_cancelled(self, params: dict) -> None:
        """Spec: basic/utilities/cancellation: unknown, late or malformed cancels are ignored;
        initialize is never cancelled."""
        request_id = params.get("requestId")
        if not is_request_id(request_id):
            return
        with self._lock:
            ctx = self._inbound.get(request_id)
        if ctx is not None and ctx.method != "initialize":
            log.debug("%s: peer cancelled %s (id %r): %s", self._name, ctx.method, request_id,
                      params.get("reason", "no reason given"))
            ctx._cancel()
            ctx._abandon_nested()

    def _on_progress(self, params: dict) -> None:
        """Spec: basic/utilities/progress: restart a waiting caller's timeout when it
        asked for that, and queue its callback (rule 4); a token nobody waits for
        goes to a ``listen_progress`` listener, else it is ignored."""
        token = params.get("progressToken")
        if not is_request_id(token):
            return
        with self._lock:
            waiter = self._outbound.get(token)
            listener = self._listening.get(token) if waiter is None else None
        if waiter is None:
            if listener is not None:
                self._notice(lambda: listener(params.get("progress"), params.get("total"), params.get("message")))
            return
        waiter.heard_at = time.monotonic()
        if waiter.on_progress is not None:
            self._notice(lambda: _call_progress(waiter, params))

    def _notice(self, job) -> None:
        """Queue user code (a progress callback, a notification handler) to run in wire
        order on the one notify thread, or on the shared pool's serial lane (rule 9)."""
        if self._serial is not None:                # rule 9: in order, on the shared pool
            self._serial.submit(lambda: self._run_notice(job))
            return
        self._helper_queue("_notices", "notify").put(job)

    def _run_notice(self, job) -> None:
        """Run one queued callback on the serial lane, remembering the thread (rule 4)."""
        self._noticing = threading.current_thread()
        try:
            job()
        finally:
            self._noticing = None

    # ------------------------------------------------------------------ helper threads
    def _start_helper(self, role: str, target) -> None:
        """Start a named helper thread (notify, control, keepalive); close joins it."""
        thread = threading.Thread(target=target, name=f"{self._name}-{role}", daemon=True)
        self._helpers.append(thread)
        thread.start()

    def _control_put(self, job) -> None:
        """Rule 8: an answer that needs no handler (``ping``, an error for a bad frame)
        is written on the control thread, whatever the workers are doing."""
        self._helper_queue("_control", "control").put(job)

    def _helper_queue(self, attr: str, role: str) -> queue.Queue:
        """The queue of a helper thread, started on first use. Under the lock, so a
        helper started while the session closes still gets its stop marker."""
        with self._lock:
            q = getattr(self, attr)
            if q is None:
                q = queue.Queue()
                setattr(self, attr, q)
                self._start_helper(role, lambda: self._drain(q))
                if self.closed:
                    q.put(_STOP)
            return q

    def _drain(self, q: queue.Queue) -> None:
        """A helper thread: run what the queue holds, in order, until the stop marker.
        A failing callback is logged and does not stop the others (rule 4)."""
        for job in iter(q.get, _STOP):
            try:
                job()
            except Exception:
                log.exception("%s: callback failed", self._name)


def _call_progress(waiter, params: dict) -> None:
    """Run a caller's progress callback (on the notify thread, session rule 4),
    unless the request was abandoned meanwhile."""
    if waiter.settled:
        return                                     # abandoned (timeout, cancel, close)
    waiter.on_progress(params.get("progress"), params.get("total"), params.get("message"))
