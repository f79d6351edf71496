"""Threads shared by many sessions: a bounded pool whose threads live only while there is work.

A stdio session has one peer and one pipe, so it keeps its own reader and pool
(session/__init__.py). An HTTP server may hold a thousand sessions, most of them idle
(clients that never send DELETE stay until ``idle_timeout``); one reader per
session would cost a thread per session for nothing. There each HTTP request
delivers its messages to the session on its own connection thread, and the
session's jobs run here. Spec: basic/transports#streamable-http,
basic/transports#session-management.

Rules:

1. ``WorkerPool(max_threads)`` runs callables on at most ``max_threads``
   threads, all started on demand. A thread with nothing to do for
   ``idle_exit`` seconds ends, so an idle server holds no worker thread.
   Beyond ``max_threads`` jobs wait in arrival order.
2. ``Lane(pool, limit)`` is one session's share of a pool: at most ``limit``
   of its jobs run at once (a session's ``max_workers``), the rest wait in
   order; ``Lane(pool, 1)`` runs jobs one at a time in submission order. A
   lane's next job runs on the thread that finished the previous one.
3. A job's exception is logged, never raised into the pool. ``close()`` drops
   what has not started and refuses new work; the pool's ``close()`` also joins
   its threads (a job that ignores cancellation is waited for ``timeout`` s).
4. A new thread is started outside the pool's lock: ``Thread.start()`` waits until
   the new thread runs, and while it waited under the lock, every connection
   submitting a job and every worker fetching its next one waited too. In a burst
   (``bench/bench_http_sessions.py``, 500 sessions calling at once) the pool then
   grew to all 128 threads, and the burst took a third longer. A thread that
   ``close()`` finds not yet started ends without running its job (rule 3).
"""
import itertools
import logging
import threading
from collections import deque

__all__ = ["WorkerPool", "Lane", "IDLE_EXIT"]

IDLE_EXIT = 2.0        # seconds a worker waits for a job before it ends


log = logging.getLogger("mcp_ref.session.workers")


class WorkerPool:
    """At most ``max_threads`` threads named ``<name>-N``, started on demand (rule 1)."""

    def __init__(self, max_threads: int = 128, *, name: str = "mcp-worker", idle_exit: float = IDLE_EXIT):
        if max_threads < 1:
            raise ValueError(f"max_threads must be at least 1, not {max_threads!r}")
        self.max_threads, self.name, self.idle_exit = max_threads, name, idle_exit
        self._cv = threading.Condition()
        self._jobs: deque = deque()
        self._threads: set = set()
        self._idle = 0                      # threads waiting for a job
        self._numbers = itertools.count(1)
        self._closed = False

    def submit(self, job) -> None:
        """Run ``job()`` on a pool thread: an idle one, a new one, or the first to finish."""
        with self._cv:
            if self._closed:
                raise RuntimeError("the worker pool is closed")
            if self._idle > len(self._jobs) or len(self._threads) >= self.max_threads:
                self._jobs.append(job)                    # an idle thread takes it, or the first to finish
                self._cv.notify()
                return
            thread = threading.Thread(target=self._work, args=(job,), daemon=True,
                                      name=f"{self.name}-{next(self._numbers)}")
            self._threads.add(thread)
        thread.start()              # rule 4: outside the lock (start() waits for the thread to run)

    @property
    def thread_count(self) -> int:
        with self._cv:
            return len(self._threads)

    def close(self, timeout: float = 2.0) -> None:
        """Drop the jobs not started, end idle threads, join the busy ones (rule 3)."""
        with self._cv:
            self._closed = True
            self._jobs.clear()
            self._cv.notify_all()
            threads = list(self._threads)
        me = threading.current_thread()
        for thread in threads:
            if thread is not me and thread.ident is not None:     # rule 4: one not started yet ends at once
                thread.join(timeout)
                if thread.is_alive():
                    log.warning("worker %s did not stop (a handler ignores cancellation)", thread.name)

    def _work(self, job) -> None:
        me = threading.current_thread()
        with self._cv:
            if self._closed:                              # rule 4: closed before this thread started
                self._threads.discard(me)
                return
        while True:
            try:
                job()
            except Exception:
                log.exception("%s: job failed", me.name)
            job = None
            with self._cv:
                while not self._jobs:
                    if self._closed:
                        self._threads.discard(me)
                        return
                    self._idle += 1
                    woken = self._cv.wait(self.idle_exit)
                    self._idle -= 1
                    if not woken and not self._jobs:          # rule 1: idle too long
                        self._threads.discard(me)
                        return
                job = self._jobs.popleft()


class Lane:
    """One session's share of a pool: at most ``limit`` jobs at once, the rest in order (rule 2)."""

    def __init__(self, pool: WorkerPool, limit: int):
        self.pool, self.limit = pool, max(1, limit)
        self._lock = threading.Lock()
        self._waiting: deque = deque()
        self._running = 0
        self._closed = False

    def submit(self, job) -> None:
        """Rule 2."""
        with self._lock:
            if self._closed:
                return
            if self._running >= self.limit:
                self._waiting.append(job)
                return
            self._running += 1
        try:
            self.pool.submit(lambda: self._run(job))
        except RuntimeError:                               # the pool closed: nothing will run
            with self._lock:
                self._running -= 1

    @property
    def busy(self) -> bool:
        """True while a job runs or waits."""
        with self._lock:
            return bool(self._running or self._waiting)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            self._waiting.clear()

    def _run(self, job) -> None:
        while True:
            try:
                job()
            except Exception:
                log.exception("job failed")
            with self._lock:
                if not self._waiting:
                    self._running -= 1
                    return
                job = self._waiting.popleft()
