"""One end of an MCP connection: correlation, concurrency, cancellation, progress.

The session is shared by Client and Server and knows no roles: methods are
strings, params and results are dicts. It touches the outside world only
through a transport (see ``transports``). What a handler and a caller hold for
one call (``RequestContext``, ``Pending``) is in calls.py. Spec: basic/index,
basic/lifecycle#timeouts, basic/utilities/cancellation,
basic/utilities/progress, basic/utilities/ping.

Rules:

1. The thread that reads the transport only reads and routes. It settles the
   waiters of responses, records progress and cancellations, and queues
   everything else. It never runs user code and never writes while it holds
   the reading role.
2. Every outgoing request has a fresh integer id (never reused) and a
   timeout. The waiting thread is its own timer: it waits on its waiter's
   Event. On timeout it raises ``RequestTimeout`` and sends
   ``notifications/cancelled``; a reply that arrives later is dropped.
3. Incoming requests run on a bounded pool of handler threads, so many calls
   are in flight both ways and a handler may itself send a request to the
   peer and wait (replies are settled by the reader, which is never a
   handler). A cancelled request gets no response. Who runs a job -- the
   reader itself (inline), a follower, the control thread -- is pool.py's
   policy: the session asks it (``Pool.place``) and keeps none of it. At
   most ``max_inbound`` of the peer's requests are in flight at once; one
   more is answered at once with -32603 naming the limit, so a peer cannot
   make the session hold unbounded memory (inbound.py ``_on_request``).
4. Progress callbacks and notification handlers (user code) run in wire
   order on one ``mcp-notify`` thread; so do ``listen_progress`` listeners, for a token
   that outlives its request's answer (basic/utilities/tasks#task-progress-notifications).
5. ``close`` fails every pending request once with ``ConnectionClosed``,
   cancels every inbound request, and stops every thread it started. All
   threads are daemons, so a script can always exit. When the peer ends its
   input (EOF) with requests of ours still being served, the session first
   waits up to ``eof_grace`` seconds (0 by default; a stdio server's is 1 s)
   for them to be answered, and never longer: ``printf ... | server`` gets
   every answer due, and a stuck handler cannot keep the process alive. A
   close already under way (the peer hung up and the reader is shutting the
   transport down) is waited for, so ``close`` returns with nothing left
   running.
6. Tables are touched under ``self._lock``; no user code and no I/O runs
   under it. Writes are serialised by ``self._send_lock``.
7. Replies that cannot be matched by id are not left to time out: a reply
   that failed to decode or was too large fails the request its head names
   (``messages`` rule 6); an error with a null id (the peer could not read a
   request) fails the one pending request, or is logged when several are;
   the elements of a batch of replies are routed one by one, in any revision.
8. A request like one that ran longer than ``pool.SLOW_AFTER`` before (the
   same method and the same ``name`` or ``uri`` param: a tool that waits on
   the network, say) is not served inline: routing marks its job ``slow``,
   and the pool hands the reading role on first, then runs it (pool.py P5).
   So requests to blocking handlers start as fast as they are read and keep
   the whole pool busy (``bench/bench_growth.py``, requests in flight).
9. Delivered mode (``executor=``, a ``workers.WorkerPool``): the session starts
   no thread of its own. The transport hands each message to ``deliver`` on
   its own thread (HTTP: the connection that carried it), which routes it as
   the reader would; requests run on the shared pool, at most ``max_workers``
   at once (``workers.Lane``), and rule 4's work runs there one job at a time,
   in order. An idle session then holds no thread at all. A request the
   transport offers to serve ``here`` (HTTP: a lone JSON POST) whose handler is
   known fast runs on the transport's thread instead (``workers`` rule 4).
10. A reader serving inline that has finished the handler and is writing
   its answer keeps the reading role past ``INLINE_TAKEOVER`` while the
   transport says no input is waiting (``transport.input_waiting()``: stdio
   asks ``select``; pool.py P3). Why: a large answer takes tens of ms to encode and
   write; handing the role on then moved every next request to another
   thread, and the last request's megabytes were freed at once each time, so
   the C allocator gave them back to the system and faulted them in again on
   every call (~1.4x the floor's CPU at 1-4 MB, almost all of it system
   time: ``bench/bench_growth.py``, payload). Kept on one thread, the last
   request stays referenced until the next is read, as in the floor's loop,
   and its memory is reused (peak memory: about one payload more). Nothing
   that matters is left unread: a peer blocked writing to us has filled the
   pipe, which ``select`` sees, and the role is handed on as before; lines
   already buffered were written in full, so their writer is free to read
   our answer. A transport without ``input_waiting``, or one that cannot
   tell, is handed on as before.
The reader loop (``_read``) is plain: receive, route (``_route``), and hand
the job to the pool, which says where it runs (pool.py draws the thread
roles). This module holds what a caller uses (the public API, writing,
closing); the inbound half (the reader loop, routing, serving) is inbound.py
and the closing (rule 5) closing.py, both mixed in. Each reads in one sitting.
"""
from __future__ import annotations

import itertools
import threading

from .calls import CancelToken, Pending, RequestContext, _Waiter
from .errors import ConnectionClosed, InvalidMessage, SessionError, get_logger
from .closing import Closing
from .inbound import Inbound
from .messages import EncodeError, ErrorObject, ErrorResponse, Notification, Request, unencodable_text
from .pool import Pool

log = get_logger("mcp_ref.session")

__all__ = ["Session", "RequestContext", "Pending", "DEFAULT_TIMEOUT", "MAX_TOTAL_FACTOR"]

TYPE_CHECKING = False
if TYPE_CHECKING:          # names for annotations only: typing would cost start-up time
    import queue
    from typing import Callable
    ProgressCallback = Callable[[float, "float | None", "str | None"], None]
    RequestId = int | str

DEFAULT_TIMEOUT = 60.0
MAX_PROGRESS_LISTENERS = 1024   # listen_progress beyond this forgets the oldest token
MAX_TOTAL_FACTOR = 10      # hard cap on a progress-extended wait, in multiples of its timeout
MAX_INBOUND = 1000         # rule 3: the peer's requests in flight at once


class Session(Inbound, Closing):
    """One end of an MCP connection. See the module docstring for the rules.

    Args:
        transport: any object with ``send``/``receive``/``close``.
        handle_request: ``fn(ctx, method, params) -> dict`` run on a handler
            thread; raise ``McpError`` to answer an error.
        handle_notification: ``fn(method, params)`` run on ``mcp-notify``.
        timeout: default seconds for outgoing requests.
        max_workers: most requests served at once.
        context_class: the RequestContext subclass handed to ``handle_request``.
        on_close: ``fn(session)`` called once, after pending requests failed.
        ping_interval: when set, ping the peer this often; a missed ping closes.
        eof_grace: at the peer's EOF, seconds to let requests already read finish
            and be answered before closing (rule 5).
        executor: a ``workers.WorkerPool``: no threads of our own, the transport
            calls ``deliver`` (rule 9).
    """

    def __init__(self, transport, handle_request: Callable, handle_notification: Callable | None = None,
                 *, timeout: float = DEFAULT_TIMEOUT, max_workers: int = 16, context_class=RequestContext,
                 on_close: Callable | None = None, ping_interval: float | None = None, name: str = "mcp",
                 eof_grace: float = 0.0, executor=None, max_inbound: int = MAX_INBOUND):
        self.transport = transport
        self.max_inbound = max_inbound          # rule 3
        self.default_timeout = timeout
        self.protocol_version: str | None = None   # set by Server/Client once negotiated
        self.closed = False
        self.close_error: ConnectionClosed | None = None
        self._handle_request = handle_request
        self._handle_notification = handle_notification
        self._context_class = context_class
        self._on_close_cb = on_close
        self._name = name
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._send_lock = threading.Lock()
        self._outbound: dict = {}              # id -> _Waiter (requests we sent)
        self._inbound: dict = {}               # id -> RequestContext (requests we serve)
        self._replying = 0                     # served requests whose answer is being sent
        self._eof_grace = eof_grace
        self._listening: dict = {}             # progress token -> fn (listen_progress)
        self._pool: Pool | None = None         # rule 3: who runs a job (None: rule 9)
        self._notices: queue.Queue | None = None
        self._control: queue.Queue | None = None
        self._helpers: list = []
        self._closed_event = threading.Event()
        self._closing_thread: threading.Thread | None = None
        self._ping_interval = ping_interval
        self._started = False
        self._jobs = self._serial = None             # rule 9: lanes of the shared pool
        self._noticing: threading.Thread | None = None   # the pool thread running rule 4's work
        if executor is not None:
            from .workers import Lane
            self._jobs, self._serial = Lane(executor, max_workers), Lane(executor, 1)
        else:
            self._pool = Pool(name, max_workers, self._read, self._control_put, self._start_helper,
                              input_waiting=getattr(transport, "input_waiting", None))   # rule 10

    # ------------------------------------------------------------------ public API
    def start(self) -> "Session":
        """Start reading. Call once, after the handlers are in place."""
        with self._lock:
            if self._started:
                return self
            self._started = True
        if self._pool is not None:
            self._pool.start()
        if self._ping_interval:
            self._start_helper("keepalive", self._keepalive)
        return self

    def request(self, method: str, params: dict | None = None, *, timeout: float | None = None,
                on_progress: ProgressCallback | None = None, reset_timeout_on_progress: bool = False,
                max_total_timeout: float | None = None, related_id: RequestId | None = None,
                cancel: CancelToken | None = None) -> dict:
        """Send a request and block until its result.

        A progress token (the request id) is attached when ``on_progress`` is
        given or ``reset_timeout_on_progress`` is asked for: without a token
        the peer could never reset the timeout. ``cancel``: a ``CancelToken``
        another thread may cancel the request with (calls.py rule 5).

        Raises:
            McpError: the peer answered an error (the subclass for its code).
            RequestTimeout: no reply within ``timeout`` (a cancellation was sent).
            RequestCancelled: ``cancel`` was cancelled (a cancellation was sent,
                unless the request never was).
            ConnectionClosed: the connection closed before the reply.
        """
        if cancel is not None and cancel.cancelled:
            raise cancel.error(method)
        pending = self.start_request(method, params, timeout=timeout, on_progress=on_progress,
                                     reset_timeout_on_progress=reset_timeout_on_progress,
                                     max_total_timeout=max_total_timeout, related_id=related_id)
        return pending.result() if cancel is None else cancel.run(pending)

    def start_request(self, method: str, params: dict | None = None, *, timeout: float | None = None,
                      on_progress: ProgressCallback | None = None, reset_timeout_on_progress: bool = False,
                      max_total_timeout: float | None = None,
                      related_id: RequestId | None = None) -> Pending:
        """Send a request and return a ``Pending`` handle without waiting."""
        request_id = next(self._ids)
        waiter = _Waiter(method, on_progress)
        # From a callback on the notify thread (or lane), ordering would wait on ourselves.
        me = threading.current_thread()
        waiter.ordered = on_progress is not None and me.name != f"{self._name}-notify" and me is not self._noticing
        if on_progress is not None or reset_timeout_on_progress:
            params = dict(params or {})
            params["_meta"] = {**(params.get("_meta") or {}), "progressToken": request_id}
        with self._lock:
            if self.closed:
                raise self._closed_error()
            self._outbound[request_id] = waiter
        try:
            self._send(Request(request_id, method, params), related_id)
        except BaseException:
            self._forget(request_id)
            raise
        timeout = self.default_timeout if timeout is None else timeout
        if reset_timeout_on_progress and max_total_timeout is None:
            # Spec: basic/lifecycle#timeouts: always enforce a maximum, even with progress.
            max_total_timeout = timeout * MAX_TOTAL_FACTOR
        return Pending(request_id, waiter, timeout, reset_timeout_on_progress, max_total_timeout,
                       notify=self.notify, forget=self._forget, before_blocking=self._before_blocking)

    def notify(self, method: str, params: dict | None = None, *, related_id: RequestId | None = None) -> None:
        """Send a notification. Raises ConnectionClosed when closed."""
        self._send(Notification(method, params), related_id)

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

    def ping(self, timeout: float | None = None) -> None:
        """Spec: basic/utilities/ping. Raises RequestTimeout or ConnectionClosed."""
        self.request("ping", timeout=timeout)

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

    def deliver(self, message, here=None) -> None:
        """Rule 9: route one message the transport received, on the caller's thread. Replies
        and cancellations settle here, small control replies (``ping``) are written here, a
        request is queued for the pool. Never blocks on user code, except with ``here``: a
        request known fast then runs on the caller's thread (``workers`` rule 4), and
        ``here()`` is called if it is about to wait on the peer."""
        if self._jobs is None:
            raise RuntimeError("deliver() is for a session made with executor=; this one reads its transport")
        if self.closed:
            return
        if isinstance(message, InvalidMessage):
            if message.is_response:
                self._on_bad_response(message)
                return
            job = self._reply_job(ErrorResponse(message.id, ErrorObject(message.code, message.message)))
        else:
            job = self._route(message)
        if job is None:
            return
        if getattr(job, "control", False):
            job()
        else:
            self._jobs.submit(job, here)

    def wait_closed(self, timeout: float | None = None) -> bool:
        """Block until the session has closed (the peer went away or close() ran)."""
        return self._closed_event.wait(timeout)

    @property
    def in_flight(self) -> int:
        """How many of the peer's requests are being served now (rule 3)."""
        with self._lock:
            return len(self._inbound)

    # ------------------------------------------------------------------ writing
    def _send(self, message, related_id=None) -> None:
        """Write one message under the send lock (rule 6). An encoding error leaves the
        session as it was (nothing was written); a broken transport closes it."""
        if self.closed:
            raise self._closed_error()
        try:
            with self._send_lock:
                self.transport.send(message, related_id)
        except (SessionError, EncodeError):      # nothing was written: the session is fine
            raise
        except UnicodeEncodeError as exc:        # text UTF-8 cannot carry; nothing was written either
            raise unencodable_text(exc) from None
        except Exception as exc:                 # broken pipe, closed socket
            self._on_close(f"send failed: {exc}")
            raise self._closed_error() from exc

    def _closed_error(self) -> ConnectionClosed:
        """The ConnectionClosed the session closed with (its reason, the exit code)."""
        return self.close_error or ConnectionClosed("session closed")

    def _forget(self, request_id) -> None:
        """Drop the waiter of a request nobody waits for any more (calls.py rule 4)."""
        with self._lock:
            self._outbound.pop(request_id, None)
