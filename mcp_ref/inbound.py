"""What comes in: the reader loop, routing, and serving (the inbound half of ``Session``).

``Inbound`` is a mix-in: ``Session`` (session.py) is the only class that uses it,
and holds the tables and locks these methods read (``_lock``, ``_inbound``,
``_outbound``, ``_pool``...). It is a module of its own so that each half reads in
one sitting: session.py has what a caller uses (request, notify, close) and
this one what the peer sends. The rules are session.py's; each is named where
it is kept. Spec: basic/index, basic/utilities/cancellation,
basic/utilities/progress, basic/utilities/ping.

The way in, for one request read by the thread holding the reading role::

    _read  (receive a frame)  ->  _route  ->  _on_request  ->  a job
        -> pool.place(job)  ->  _serve  (the handler)  ->  _reply  ->  _send

and for one reply: ``_read -> _route -> _on_response -> waiter.settle`` (the
caller waiting in ``Pending.result`` wakes). Progress and notifications go to
one ordered helper (``_notice``, rule 4).
"""
from __future__ import annotations

import threading
import time

from . import lifecycle
from .calls import _Batch, _call_progress
from .errors import (INTERNAL_ERROR, INVALID_REQUEST, InvalidMessage, McpError, MessageTooLarge, RequestCancelled,
                     SessionError, get_logger)
from .messages import (EncodeError, ErrorObject, ErrorResponse, Notification, Request, Response, is_request_id,
                       replace_unencodable)
from .pool import HANDED, QUEUED

log = get_logger("mcp_ref.session")

TYPE_CHECKING = False
if TYPE_CHECKING:          # names for annotations only
    import queue

    from .calls import RequestContext

_STOP = object()           # the end marker of a helper's queue


class Inbound:
    """The inbound half of ``Session``: methods for the session itself, never called
    from outside (``deliver`` excepted: a transport in delivered mode calls it)."""

    def cancel_inbound(self, request_id, reason: str | None = None) -> None:
        """Cancel a request we are serving, as the peer's ``notifications/cancelled`` would
        (for a transport whose cancellation signal is not a message: 2026-07-28 Streamable
        HTTP, where the client closing the response stream cancels the request)."""
        params = {"requestId": request_id}
        if reason:
            params["reason"] = reason
        self._on_cancelled(params)

    # ------------------------------------------------------------------ reading
    def _start_helper(self, role: str, target) -> None:
        """Start a named helper thread (standby, notify, control, keepalive); close joins it."""
        thread = threading.Thread(target=target, name=f"{self._name}-{role}", daemon=True)
        self._helpers.append(thread)
        thread.start()

    def _read(self) -> bool:
        """The reader loop (rule 1), run by the pool thread holding the reading role:
        read, route, and ask the pool where the job runs (rule 3).

        Returns True when the pool took the reading role from us (the job ran
        long, waited on the peer, or is known slow), so the caller becomes a
        follower; False once reading is over (the session closes).
        """
        reason = "the peer closed the connection"
        receive, route, place, pool = self.transport.receive, self._route, self._pool.place, self._pool
        while True:
            try:
                message = receive()
            except InvalidMessage as bad:
                if bad.is_response:                # never answer a response (rule 5 of messages)
                    self._on_bad_response(bad)
                    continue
                job = self._reply_job(ErrorResponse(bad.id, ErrorObject(bad.code, bad.message)))
            except Exception as exc:              # the transport broke
                reason = f"transport failed: {exc}"
                break
            else:
                if message is None:
                    self._let_finish(reason)
                    break
                job = route(message)
            if job is None:
                continue
            where = place(job)
            if where is QUEUED:
                continue
            if where is HANDED:                    # rule 8: reading was handed on first
                job()
                return True
            try:
                job()                              # INLINE: served on the reading thread
            finally:
                still_reading = pool.inline_done()
            if not still_reading:
                return True
        pool.reading_over()
        self._on_close(reason)
        return False

    def _before_blocking(self) -> None:
        """Called before a wait the library controls (a request to the peer): a reader
        serving inline hands its role on at once, so the reply can be read (pool P4)."""
        pool = self._pool
        if pool is not None:
            pool.before_blocking()
        elif self._jobs is not None:               # rule 9: a job run on an HTTP connection's thread
            self._jobs.before_blocking()

    def _control_put(self, job) -> None:
        """Rule 3: a control reply (``ping``, an error for a bad frame) found the pool saturated."""
        self._helper_queue("_control", "control", lambda j: j()).put(job)

    def _helper_queue(self, attr: str, role: str, run) -> "queue.Queue":
        """The queue of a helper thread, started on first use. Under the lock, so a
        helper started while the session closes still gets its stop marker."""
        with self._lock:
            q = getattr(self, attr)
            if q is None:
                import queue
                q = queue.Queue()
                setattr(self, attr, q)
                self._start_helper(role, lambda: self._drain(q, run))
                if self.closed:
                    q.put(_STOP)
            return q

    def _drain(self, q: "queue.Queue", run) -> None:
        """A helper thread: run what the queue holds, in order, until the stop marker.
        A failing callback is logged and does not stop the others (rule 4)."""
        while True:
            item = q.get()
            if item is _STOP:
                return
            try:
                run(item)
            except Exception:
                log.exception("%s: callback failed", self._name)

    def _reply_job(self, reply, batch: _Batch | None = None):
        """A job that only writes ``reply``: marked ``control`` so a saturated pool
        hands it to the control thread instead of the backlog (rule 3, ping)."""
        def job():
            self._reply(reply, None, batch)
        job.control = True
        return job

    # ------------------------------------------------------------------ routing (reader only)
    def _route(self, message):
        """Route one message; return a job when it needs a thread, else None."""
        if type(message) is Request:
            return self._on_request(message)
        if isinstance(message, list):
            return self._route_batch(message)
        if isinstance(message, (Response, ErrorResponse)):
            self._on_response(message)
            return None
        if message.method == "notifications/cancelled":
            self._on_cancelled(message.params or {})
        elif message.method == "notifications/progress":
            self._on_progress(message.params or {})
        else:
            self._notice(self._call_notification_handler, message)
        return None

    def _route_batch(self, items: list):
        # Rule 7: replies are routed whatever the revision; a batch reply to a single
        # request still answers it. Malformed replies are never answered.
        """A JSON array (2025-03-26 only, rule 7): replies are settled one by one; the
        requests run as one job whose answers go back as one array (``_Batch``)."""
        rest = []
        for item in items:
            if isinstance(item, (Response, ErrorResponse)):
                self._on_response(item)
            elif isinstance(item, InvalidMessage) and item.is_response:
                self._on_bad_response(item)
            else:
                rest.append(item)
        if not rest:
            return None
        items = rest
        if not lifecycle.batches_allowed(self.protocol_version):
            return self._reply_job(ErrorResponse(None, ErrorObject(
                INVALID_REQUEST, f"Invalid Request: JSON-RPC batches are not supported in protocol revision "
                                 f"{self.protocol_version or '(not negotiated)'}")))
        replies = [ErrorResponse(b.id, ErrorObject(b.code, b.message)) for b in items
                   if isinstance(b, InvalidMessage)]
        requests = [m for m in items if isinstance(m, Request)]
        batch = _Batch(len(requests), replies)
        for message in items:
            if not isinstance(message, (Request, InvalidMessage)):
                self._route(message)
        if not requests:
            return self._reply_job(replies) if replies else None
        jobs = [self._on_request(request, batch) for request in requests]
        jobs = [job for job in jobs if job is not None]
        if not jobs:
            return None

        def run_all():
            for job in jobs:
                job()
        return run_all

    def _on_request(self, request: Request, batch: _Batch | None = None):
        """Register the request (duplicate ids are refused, rule 2 of messages) and
        return the job that serves it; ``ping`` is answered without a handler.
        The job is marked ``slow`` when its (method, name or uri) ran long before (rule 8)."""
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
            return self._reply_job(ErrorResponse(request.id, ErrorObject(    # session.py rule 3
                INTERNAL_ERROR, f"Server overloaded: {self.max_inbound} requests of yours are already in "
                f"flight (the limit); retry when some have been answered", {"limit": self.max_inbound})), batch)
        params = request.params
        target = (params.get("name") or params.get("uri")) if type(params) is dict else None
        key = (request.method, target if type(target) is str else None)
        job = lambda: self._serve(ctx, request, batch, key)      # noqa: E731
        job.key = key                              # rule 9: the shared pool learns which are fast
        if self._pool is not None and key in self._pool.slow:
            job.slow = True                        # rule 8
        return job

    def _on_response(self, message) -> None:
        """Settle the waiter of the request this reply answers (rule 7 for a null id);
        a reply to a request we stopped waiting for is dropped (calls.py rule 4)."""
        request_id = message.id
        if isinstance(request_id, str) and request_id.isdigit():
            request_id = int(request_id)           # a peer that echoes our ids as strings
        with self._lock:
            waiter = self._outbound.pop(request_id, None)
            pending = len(self._outbound)
            if waiter is None and request_id is None and pending == 1:
                # Rule 7: the peer could not read a request of ours; with one in
                # flight, it is that one.
                request_id, waiter = self._outbound.popitem()
        if waiter is None:
            if request_id is None:
                error = getattr(message, "error", None)
                log.warning("%s: the peer could not read a request (%d pending): %s (code %s)", self._name,
                            pending, getattr(error, "message", "?"), getattr(error, "code", "?"))
            else:
                log.debug("%s: dropped a reply to unknown or abandoned id %r", self._name, message.id)
            return
        if waiter.ordered and (self._notices is not None or self._serial is not None):
            # Settle after the progress callbacks already queued, so the caller
            # has seen every progress notification by the time it has the result.
            self._notice(lambda w: w.settle(message), waiter)
        else:
            waiter.settle(message)

    def _on_bad_response(self, bad: InvalidMessage) -> None:
        """A malformed, undecodable or oversized reply: fail the request it names (if any)
        instead of letting it time out (rule 7)."""
        log.warning("%s: malformed response from the peer (id %r): %s", self._name, bad.id, bad.message)
        if bad.id is None:
            return
        if bad.size is None:
            self._on_response(ErrorResponse(bad.id, ErrorObject(
                bad.code, f"the peer sent a malformed response: {bad.message}")))
            return
        request_id = int(bad.id) if isinstance(bad.id, str) and bad.id.isdigit() else bad.id
        with self._lock:
            waiter = self._outbound.pop(request_id, None)
        if waiter is not None:
            waiter.settle(MessageTooLarge(
                f"the reply to {waiter.method} (id {bad.id!r}) is {bad.size} bytes, over the limit of {bad.limit} "
                f"bytes (max_message_size); it was skipped unread", size=bad.size, limit=bad.limit))

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
                self._notice(lambda p: listener(p.get("progress"), p.get("total"), p.get("message")), params)
            return
        waiter.heard_at = time.monotonic()
        if waiter.on_progress is not None:
            self._notice(_call_progress, (waiter, params))

    def _notice(self, run, item) -> None:
        """Queue user code (a progress callback, a notification handler) to run in wire
        order on the one notify thread, or on the shared pool's serial lane (rule 9)."""
        if self._serial is not None:                # rule 9: in order, on the shared pool
            self._serial.submit(lambda: self._run_notice(run, item))
            return
        self._helper_queue("_notices", "notify", lambda it: it[0](it[1])).put((run, item))

    def _run_notice(self, run, item) -> None:
        """Run one queued callback on the serial lane, remembering the thread (rule 4)."""
        self._noticing = threading.current_thread()
        try:
            run(item)
        finally:
            self._noticing = None

    def _call_notification_handler(self, message: Notification) -> None:
        """Hand a notification to the handler the session was given (on the notify thread)."""
        if self._handle_notification is not None:
            self._handle_notification(message.method, message.params or {})

    # ------------------------------------------------------------------ serving (handler threads)
    def _serve(self, ctx: RequestContext, request: Request, batch: _Batch | None = None, key=None) -> None:
        """Run the handler for one request (rule 3) and send its answer: a result, an
        McpError's error, -32603 for anything else (logged), or nothing when the
        request was cancelled (Spec: receivers SHOULD NOT respond)."""
        started = time.monotonic()
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
            if self._pool is not None:
                self._pool.learn(key, time.monotonic() - started)   # rule 8
            with self._lock:
                self._inbound.pop(request.id, None)
                self._replying += 1                # until sent: the EOF grace waits for it (rule 5)
        pool = self._pool
        inline = pool is not None and pool.replying(True)   # rule 10: while this answer is written
        try:
            if ctx.is_cancelled():                 # Spec: receivers SHOULD NOT respond
                reply = None
            self._reply(reply, request.id, batch)
        finally:
            if inline:
                pool.replying(False)               # the next job of a batch is user code again
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
