"""What comes in: the reader loop, routing, and serving (the inbound half of ``Session``).

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
``_read -> _route -> _on_response -> waiter.settle`` (the caller waiting in
``Pending.result`` wakes). What this module hands aside, each read by its
name: notifications (session/notices.py, rule 4), batches (session/batches.py, rule 7) and
answers that need no handler (the control thread, rule 8).
"""
from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING

from mcp_ref.protocol import lifecycle
from mcp_ref.errors import (INTERNAL_ERROR, INVALID_REQUEST, InvalidMessage, McpError, MessageTooLarge,
                            RequestCancelled, SessionError)
from mcp_ref.jsonrpc.messages import EncodeError, ErrorObject, ErrorResponse, Request, Response, replace_unencodable
from mcp_ref.session.state import SessionState

if TYPE_CHECKING:
    from mcp_ref.session.batches import _Batch
    from mcp_ref.session.calls import RequestContext

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

    def _work(self) -> None:
        """A thread of the pool (rule 3): run jobs, the reading loop among them, until the
        pool stops; how long each took tells the pool which keys are slow (session/pool.py P3)."""
        pool = self._pool
        assert pool is not None                    # the pool's own threads run this
        job = pool.next_job()
        while job is not None:
            began = time.monotonic()
            job()
            job = pool.next_job(job, time.monotonic() - began)

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

    def _on_response(self, message) -> None:
        """Settle the waiter of the request this reply answers (rule 7 for a null id);
        a reply to a request we stopped waiting for is dropped (session/outbound.py rule 3)."""
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
            cancelled = ctx._cancelled             # the Event, made only once asked for (calls.py rule 1)
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
