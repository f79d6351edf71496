"""What comes in: the reader loop, routing, and serving (the inbound half of ``Session``),
and ``RequestContext``, what a handler knows of the request it serves.

``Inbound`` is a mix-in: ``Session`` (session/__init__.py) is the only class that uses it,
and holds the tables and locks these methods read (``_lock``, ``_inbound``,
``_outbound``, ``_pool``...). It is a module of its own so that each half reads in
one sitting: session/outbound.py has what a caller uses (request, notify, writing) and
this one what the peer sends. The rules are session/__init__.py's; each is named where
it is kept. Spec: basic/index, basic/utilities/cancellation,
basic/utilities/ping.

The way in, for one request: the reading thread runs ``_read`` (receive a
frame) ``-> _route -> _on_request`` (a job); while another worker could take
reading over (``pool.here``, session/pool.py P3) the same thread then runs the job:
``_serve`` (the handler) ``-> _reply -> _send``; else a worker does. For one reply:
``_read -> _route -> _on_response`` (session/outbound.py) ``-> Pending.settle`` (the caller
waiting in ``Pending.result`` wakes). What this module hands aside, each read by its
name: notifications (session/notices.py, rule 4), batches (session/batches.py, rule 7) and
answers that need no handler (the control thread, rule 8).

``RequestContext``: the session makes one per request it serves and hands it to the
handler (a server's ``Context`` extends it). Its rules (Spec: basic/utilities/cancellation,
basic/utilities/progress):

C1. A handler's ``cancelled`` Event is set when the peer cancels the request or
    the session closes; a handler polls it or calls ``check_cancelled()``.
    Nested requests a handler sends to the peer are cancelled with it.
    Fast path; it holds seq. latency <= 2x the floor: the Event is made on first use.
C2. ``report_progress`` sends ``notifications/progress`` only when the caller
    gave a token, with strictly increasing values, and never after the
    request finished.

A ``RequestContext`` uses only the public methods of the session it is handed
(``notify``, ``start_request``, ``protocol_version``).
"""
from __future__ import annotations

import contextlib
import logging
import threading
from typing import TYPE_CHECKING

from mcp_ref.protocol import lifecycle
from mcp_ref.errors import INTERNAL_ERROR, INVALID_REQUEST, InvalidMessage, McpError, RequestCancelled, SessionError
from mcp_ref.jsonrpc.messages import (EncodeError, ErrorObject, ErrorResponse, Request, Response, error_response,
                                     is_request_id, replace_unencodable)
from mcp_ref.session.state import SessionState

if TYPE_CHECKING:
    from mcp_ref.session.batches import _Batch

log = logging.getLogger("mcp_ref.session")


class Inbound(SessionState):
    """The inbound half of ``Session``: methods for the session itself, never called
    from outside (``deliver`` excepted: a transport in delivered mode calls it)."""

    # ------------------------------------------------------------------ reading
    def _read(self) -> None:
        """The reading loop (rule 1), a job of the pool: receive, route, and hand each job
        on: a request to the pool (rule 3; ``Pool.here``: it may run here), an answer that needs no
        handler to the control thread (rule 8). Returns once reading is over (the session
        is then closed), or once a worker has taken reading over (this one serves on)."""
        reason = "the peer closed the connection"
        pool = self._pool
        assert pool is not None                    # only a session with a pool reads (rule 9: deliver)
        while True:
            try:
                message = self.transport.receive()
            except InvalidMessage as bad:          # a bad frame is routed too: answered, or a bad reply
                message = bad
            except Exception as exc:              # the transport broke
                reason = f"transport failed: {exc}"
                break
            if message is None:
                self._let_finish(reason)
                break
            job = self._route(message)
            if job is None:
                continue
            if getattr(job, "control", False):
                self._control_put(job)             # rule 8
            elif pool.here(job, self._read):       # rule 3 (session/pool.py P3): run it on this thread
                job()
                if not pool.done(job):
                    return                         # a worker reads on: this thread is a worker again
        self._on_close(reason)

    def _reply_job(self, reply, batch: _Batch | None = None):
        """A job that only writes ``reply``: marked ``control`` so it runs on the control
        thread (rule 8), not on a worker. Counted in ``_replying`` until written, so the
        EOF grace waits for it (rule 5)."""
        with self._lock:
            self._replying += 1

        def job():
            try:
                self._reply(reply, None, batch)
            finally:
                with self._lock:
                    self._replying -= 1
        job.control = True                         # type: ignore[attr-defined]  # a mark, read with getattr
        return job

    # ------------------------------------------------------------------ routing (reader only)
    def _route(self, message):
        """Route one message (or a frame that failed to decode); return a job when it
        needs a thread, else None."""
        if type(message) is Request:
            return self._on_request(message)
        if isinstance(message, list):
            return self._route_batch(message)
        if isinstance(message, (Response, ErrorResponse)):
            self._on_response(message)
            return None
        if isinstance(message, InvalidMessage):
            if message.is_response:                # never answer a response (rule 5 of messages)
                # Malformed, undecodable or oversized: fail the request it names, not left to time out (rule 7).
                log.warning("%s: malformed response from the peer (id %r): %s", self._name, message.id, message.message)
                if message.id is not None:
                    self._on_response(message)
                return None
            return self._reply_job(error_response(message))
        handle = self._handle_notification
        if message.method == "notifications/cancelled":
            self._on_cancelled(message.params or {})
        elif message.method == "notifications/progress":
            self._on_progress(message.params or {})
        elif handle is not None:                   # user code: on the notify thread (rule 4)
            self._notice(lambda: handle(message.method, message.params or {}))
        return None

    def _on_request(self, request: Request, batch: _Batch | None = None):
        """Register the request (duplicate ids are refused, rule 2 of messages) and
        return the job that serves it; ``ping`` is answered without a handler (rule 8)."""
        if request.method == "ping" and not lifecycle.is_modern_request(request.params):
            # Spec: basic/utilities/ping: answer promptly (2026-07-28 has no ping: the handler says -32601)
            return self._reply_job(Response(request.id, {}), batch)
        ctx = self._context_class(self, request)
        with self._lock:
            if self.closed:
                # Rule 5: read after close (a transport may still hold buffered lines).
                # Registered now, it would miss close's cancellation and run on.
                return None
            refused = request.id in self._inbound or len(self._inbound) >= self.max_inbound
            if not refused:
                self._inbound[request.id] = ctx
        if refused:
            if request.id in self._inbound:
                return self._reply_job(ErrorResponse(request.id, ErrorObject(
                    INVALID_REQUEST, f"Invalid Request: id {request.id!r} is already in use")), batch)
            return self._reply_job(ErrorResponse(request.id, ErrorObject(    # session/__init__.py rule 3
                INTERNAL_ERROR, f"Server overloaded: {self.max_inbound} requests of yours are already in "
                f"flight (the limit); retry when some have been answered", {"limit": self.max_inbound})), batch)
        params = request.params
        target = (params.get("name") or params.get("uri")) if type(params) is dict else None
        key = (request.method, target if type(target) is str else None)
        job = lambda: self._serve(ctx, request, batch)      # noqa: E731
        job.key = key          # type: ignore[attr-defined]  # rule 9: the shared pool learns which are fast
        return job

    # ------------------------------------------------------------------ serving (handler threads)
    def _serve(self, ctx: RequestContext, request: Request, batch: _Batch | None = None) -> None:
        """Run the handler for one request (rule 3) and send its answer: a result, an
        McpError's error, -32603 for anything else (logged), or nothing when the
        request was cancelled (Spec: receivers SHOULD NOT respond)."""
        reply: Response | ErrorResponse | None
        try:
            result = self._handle_request(ctx, request.method, request.params or {})
            if not isinstance(result, dict):       # a result is an object on the wire
                raise TypeError(f"the handler returned {type(result).__name__}, not a dict")
            reply = Response(request.id, result)
        except RequestCancelled:
            reply = None
        except McpError as exc:
            reply = ErrorResponse(request.id, ErrorObject(exc.code, exc.message, exc.data))
        except Exception:
            log.exception("%s: handler for %s (id %r) failed", self._name, request.method, request.id)
            reply = ErrorResponse(request.id, ErrorObject(INTERNAL_ERROR, "Internal error"))
        finally:
            ctx.finished = True
            with self._lock:
                self._inbound.pop(request.id, None)
                self._replying += 1                # until sent: the EOF grace waits for it (rule 5)
        try:
            cancelled = ctx._cancelled             # the Event, made only once asked for (rule C1)
            if cancelled is not None and cancelled.is_set():     # Spec: receivers SHOULD NOT respond
                reply = None
            self._reply(reply, request.id, batch)
        finally:
            with self._lock:
                self._replying -= 1

    def _reply(self, reply, related_id, batch: _Batch | None) -> None:
        """Send ``reply``, or add it to its batch; an answer JSON cannot carry becomes
        a -32603 error (messages rule 7), and a closed session sends nothing."""
        if batch is not None:
            reply = batch.add(reply)
            if not reply:
                return
        if reply is None or self.closed:
            return
        try:
            self._send(reply, related_id)
        except EncodeError as exc:                # the handler's result is not JSON
            log.error("%s: reply to id %r not sent: %s", self._name, related_id, exc)
            self._reply(replace_unencodable(reply), related_id, None)
        except SessionError:
            pass


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

    # Set on the instance when they change (most requests never change them):
    _cancelled: threading.Event | None = None     # the Event, made on first use (see ``cancelled``)
    # A request that ends only when the peer cancels it (2026-07-28 subscriptions/listen):
    # cancelled at once when the peer's input ends, not awaited (session/__init__.py rule 5).
    ends_with_input = False
    finished = False
    _nested: set | None = None    # Pending requests sent on behalf of this one
    _on_cancel: list | None = None    # see on_cancel
    _last_progress: float | None = None

    def __init__(self, session, request: Request):
        self.session = session
        self.request_id = request.id
        self.method = request.method
        self.params = params = request.params or {}
        meta = params.get("_meta")
        self.meta = meta if isinstance(meta, dict) else {}
        # Spec: a token is a string or an integer; echoed exactly as received.
        token = self.meta.get("progressToken")
        self.progress_token = token if is_request_id(token) else None

    @property
    def protocol_version(self) -> str | None:
        """The revision this request is served in (the session's; a server's Context
        answers a 2026-07-28 request's own)."""
        return self.session.protocol_version

    @property
    def cancelled(self) -> threading.Event:
        """Set when the request is cancelled (rule C1). Made on first use: most requests
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
                self._on_cancel = [*(self._on_cancel or ()), fn]
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
            self._nested = {*(self._nested or ()), pending}
        if self.cancelled.is_set():
            self._abandon_nested()
        try:
            return pending.result()
        except RequestCancelled:
            if self.cancelled.is_set():
                with contextlib.suppress(SessionError):
                    self.session.notify("notifications/cancelled", {
                        "requestId": pending.id, "reason": f"the {self.method} request it serves was cancelled"})
            raise
        finally:
            with _EVENT_LOCK:
                self._nested.discard(pending)

    def _abandon_nested(self) -> None:
        """Settle the waiters of nested requests with RequestCancelled (no I/O; any thread)."""
        with _EVENT_LOCK:
            nested = list(self._nested or ())
        for pending in nested:
            pending.settle(RequestCancelled(f"{pending.method} (id {pending.id}) cancelled: "
                                            f"the {self.method} request it serves was cancelled"))
