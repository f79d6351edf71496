"""One end of an MCP connection: correlation, concurrency, cancellation, progress.

The session is shared by Client and Server and knows no roles: methods are
strings, params and results are dicts. It touches the outside world only
through a transport (see ``transports``). Spec: basic/index,
basic/lifecycle#timeouts, basic/utilities/cancellation,
basic/utilities/progress, basic/utilities/ping.

``Session`` is one class built from rooms, each a mix-in in a module of its
own that reads in one sitting; this module holds the rules, and starting and
closing (the tables the rules govern are set in session/state.py)::

    session/outbound.py   what goes out: request, notify, writing; Pending, CancelToken
    session/inbound.py    what comes in: the reader loop, routing, serving a request
                  and sending its answer
    session/notices.py    cancellations, progress and other notifications; the helper
                  threads that run user callbacks in order (rule 4)
    session/batches.py    JSON-RPC batches (2025-03-26, rule 7)
    session/closing.py    how a session ends (rule 5)
    session/pool.py       the bounded pool of worker threads that serve requests (rule 3)
    session/inbound.py    (also RequestContext: what a handler knows of its request)
    session/state.py      SessionState: what the rooms share, set once in its ``__init__``

Rules:

1. One thread at a time holds the reading role (``_read``, a job of the pool):
   it reads the transport and routes: it settles the waiters of responses,
   records progress and cancellations, and hands everything else on. A request
   it runs itself, on the same thread, while another worker could take reading
   over; a request still running at the standby's next check (2-4 ms) has
   reading taken from it and handed to a worker (session/pool.py P3). So replies,
   cancellations and pings are always read, whatever a handler does.
   Spec: basic/index.
2. Every outgoing request has a fresh integer id (never reused) and a
   timeout. The waiting thread is its own timer: on timeout it raises
   ``RequestTimeout`` and sends ``notifications/cancelled``; a reply that
   arrives later is dropped (session/outbound.py rules 1-3). Spec: basic/lifecycle#timeouts.
3. Incoming requests run on a bounded pool of worker threads (session/pool.py, at
   most ``max_workers`` at once; the pool holds one thread more, the one
   reading), so many calls are in flight both ways and a handler may itself
   send a request to the peer and wait (the reading thread, never the handler
   waiting, settles the reply). A cancelled request gets no response. At
   most ``max_inbound`` of the peer's requests are in flight (running or
   queued) at once; one more is answered at once with -32603 naming the
   limit, so a peer cannot make the session hold unbounded memory (session/inbound.py
   ``_on_request``). Spec: basic/utilities/cancellation.
4. Progress callbacks and notification handlers (user code) run in wire
   order on one ``mcp-notify`` thread; so do ``listen_progress`` listeners, for a token
   that outlives its request's answer (basic/utilities/tasks#task-progress-notifications).
   Spec: basic/utilities/progress.
5. ``close`` fails every pending request once with ``ConnectionClosed``,
   cancels every inbound request, and stops every thread it started. All
   threads are daemons, so a script can always exit. When the peer ends its
   input (EOF) with requests of ours still being served, the session first
   waits up to ``eof_grace`` seconds (0 by default; a stdio server's is 1 s)
   for them to be answered, and never longer: ``printf ... | server`` gets
   every answer due, and a stuck handler cannot keep the process alive. A
   close already under way (the peer hung up and the reader is shutting the
   transport down) is waited for, so ``close`` returns with nothing left
   running. Spec: basic/lifecycle#shutdown.
6. Tables are touched under ``self._lock``; no user code and no I/O runs
   under it. Writes are serialised by ``self._send_lock``: whoever produced
   a message (a worker its answer, a caller its request, the control thread
   a ping's answer) writes it through ``transport.send``, which must not
   block for good on a peer that stops reading (stdio: transports/stdio.py rule 4).
   Spec: basic/transports.
7. Replies that cannot be matched by id are not left to time out: a reply
   that failed to decode or was too large fails the request its head names
   (``messages`` rule 6); an error with a null id (the peer could not read a
   request) fails the one pending request, or is logged when several are;
   the elements of a batch of replies are routed one by one, in any revision.
   Spec: basic/index#responses.
8. Answers that need no handler (``ping``, the error for a bad frame) are
   written by one ``<name>-control`` thread, so ``ping`` is answered even when
   every worker is busy. Spec: basic/utilities/ping.
9. Delivered mode (``executor=``, a ``workers.WorkerPool``): the session starts
   no thread of its own. The transport hands each message to ``deliver`` on
   its own thread (HTTP: the connection that carried it), which routes it as
   the reader would; requests run on the shared pool, at most ``max_workers``
   at once (``workers.Lane``), and rule 4's work runs there one job at a time,
   in order. An idle session then holds no thread at all.
   Spec: basic/transports#streamable-http.

The reading loop (``_read``, session/inbound.py): receive, route (``_route``), and hand
the job to the pool (``Pool.here``: run here or queued, rule 3) or to the
control thread (rule 8).
"""
from __future__ import annotations

import logging
import threading

from mcp_ref.session.batches import Batches
from mcp_ref.session.closing import Closing
from mcp_ref.session.inbound import Inbound, RequestContext
from mcp_ref.session.notices import Notices
from mcp_ref.session.outbound import MAX_TOTAL_FACTOR, Outbound, Pending
from mcp_ref.session.state import DEFAULT_TIMEOUT

log = logging.getLogger("mcp_ref.session")

__all__ = ["Session", "RequestContext", "Pending", "DEFAULT_TIMEOUT", "MAX_TOTAL_FACTOR"]


class Session(Outbound, Inbound, Notices, Batches, Closing):
    """One end of an MCP connection. See the module docstring for the rules.

    Args (kept by ``SessionState.__init__``, session/state.py, where every room reads them):
        transport: any object with ``send``/``receive``/``close``.
        handle_request: ``fn(ctx, method, params) -> dict`` run on a handler
            thread; raise ``McpError`` to answer an error.
        handle_notification: ``fn(method, params)`` run on ``mcp-notify``.
        timeout: default seconds for outgoing requests.
        max_workers: most requests served at once.
        context_class: the RequestContext subclass handed to ``handle_request``
            (None: ``RequestContext``).
        on_close: ``fn(session)`` called once, after pending requests failed.
        ping_interval: when set, ping the peer this often; a missed ping closes.
        eof_grace: at the peer's EOF, seconds to let requests already read finish
            and be answered before closing (rule 5).
        executor: a ``workers.WorkerPool``: no threads of our own, the transport
            calls ``deliver`` (rule 9).
    """

    _context_class: type = RequestContext          # what a handler is handed, unless context_class says

    # ------------------------------------------------------------------ public API
    def start(self) -> "Session":
        """Start reading. Call once, after the handlers are in place."""
        with self._lock:
            if self._started:
                return self
            self._started = True
        if self._pool is not None:
            self._pool.submit(self._read)                # rule 1
        if self._ping_interval:
            self._start_helper("keepalive", self._keepalive)
        return self

    def close(self, reason: str = "session closed") -> None:
        """Fail what is pending, stop the threads, close the transport. Idempotent."""
        self._on_close(reason)
        me = threading.current_thread()
        if self._closing_thread is not me:
            # Rule 5: another thread is closing the transport (for stdio, the shutdown
            # ladder, bounded by its timeouts): wait for it rather than leave it running.
            self._closed_event.wait()
        workers = self._pool.threads() if self._pool is not None else []
        for thread in workers + self._helpers:
            if thread is not me:
                thread.join(timeout=2.0)
                if thread.is_alive():
                    log.warning("%s thread %s did not stop (a handler ignores cancellation)",
                                self._name, thread.name)

    def deliver(self, message) -> None:
        """Rule 9: route one message the transport received, on the caller's thread. Replies
        and cancellations settle here, small control replies (``ping``) are written here, a
        request is queued for the pool. Never blocks on user code."""
        if self._jobs is None:
            raise RuntimeError("deliver() is for a session made with executor=; this one reads its transport")
        if self.closed:
            return
        job = self._route(message)
        if job is None:
            return
        if getattr(job, "control", False):
            job()
        else:
            self._jobs.submit(job)

    def wait_closed(self, timeout: float | None = None) -> bool:
        """Block until the session has closed (the peer went away or close() ran)."""
        return self._closed_event.wait(timeout)

    @property
    def in_flight(self) -> int:
        """How many of the peer's requests are being served now (rule 3)."""
        with self._lock:
            return len(self._inbound)

