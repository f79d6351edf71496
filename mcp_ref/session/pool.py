"""Who runs a served request: a bounded pool of worker threads.

The session's reading loop (session/inbound.py ``_read``) is itself a job here: it
reads a message, routes it, and asks ``here`` whether it runs the job a
request needs itself or the job is queued for a free worker (P3). Each
thread runs ``_work``: the next job, then the next. The pool knows nothing of
MCP: a job is a callable. Spec: basic/index (requests may be in flight both
ways at once).

Rules (session/__init__.py rule 3 is kept here):

P1. At most ``max_workers`` jobs run at once. A worker thread is started when
    a job arrives and no worker is idle, up to that bound; after that, jobs
    wait in arrival order until a worker is free. Workers stay for the next
    job (a thread start per request would cost more than the request).
P2. ``stop`` ends the pool: workers finish the jobs already queued, then exit.
    Jobs submitted after ``stop`` are dropped (the session is closing).
P3. Fast path; it holds seq. latency <= 2x and server CPU per small call <= 3x the floor.
    The reading thread runs a request itself, waking no one (``here``, then
    ``done``), while another worker could take reading over (an idle one, or
    room to start one); else the job is queued (P1). A ``<name>-standby``
    thread checks every ``TAKEOVER`` seconds and hands reading to a worker
    when the same job is still running (a slow or blocked handler; a handler
    waiting on the peer gets its reply read within two checks). It remembers
    that job's ``key`` (method and tool name or uri): a job of that key is
    queued for a worker, so slow tools run side by side as the pool allows,
    until one runs there in under ``TAKEOVER`` (a fast job the OS paused is
    marked slow for one call). It sleeps untimed after ``STANDBY_NAPS``
    checks with nothing served, until the next ``here``.
"""
from __future__ import annotations

import threading
import time
from collections import deque

__all__ = ["Pool", "TAKEOVER"]

TAKEOVER = 0.002     # P3: seconds between the standby's checks
STANDBY_NAPS = 25    # P3: checks with nothing served before the standby sleeps untimed
MAX_SLOW_KEYS = 1024  # P3: most keys remembered as slow (then the memory starts afresh)


class Pool:
    """The worker threads of one session (named ``<name>-worker-N``)."""

    def __init__(self, name: str, max_workers: int):
        self._name = name
        self._max_workers = max(1, max_workers)
        self._lock = lock = threading.RLock()          # taken directly: a Condition's ``with`` is Python code
        self._cv = threading.Condition(lock)           # workers wait here
        self._wake = threading.Condition(lock)         # the standby waits here (P3)
        self._jobs: deque = deque()
        self._threads: list = []
        self._idle = 0                 # workers waiting and not yet woken for a job
        self._stopped = False
        self._inline = None            # P3: the job the reading thread runs (None once handed on)
        self._slow: set = set()        # P3: keys of jobs reading was taken from
        self._standby: threading.Thread | None = None
        self._asleep = False           # P3: the standby waits untimed

    def submit(self, job) -> None:
        """Queue ``job``; wake an idle worker, or start one (P1)."""
        with self._lock:
            if self._stopped:
                return                                   # P2
            self._jobs.append(job)
            if self._idle:
                self._idle -= 1
                self._cv.notify()
            elif len(self._threads) < self._max_workers:
                thread = threading.Thread(target=self._work, name=f"{self._name}-worker-{len(self._threads)}",
                                          daemon=True)
                self._threads.append(thread)
                thread.start()

    def here(self, job, read) -> bool:
        """P3: whether the reading thread runs ``job`` itself now (then it calls ``done``
        after); if not, the job is queued for a worker."""
        with self._lock:
            here = (not self._stopped and getattr(job, "key", None) not in self._slow
                    and (self._idle > 0 or len(self._threads) < self._max_workers))
            if here:
                self._inline = job
                if self._standby is None:
                    self._standby = threading.Thread(target=self._watch, args=(read,), name=f"{self._name}-standby",
                                                     daemon=True)
                    self._standby.start()
                elif self._asleep:
                    self._asleep = False
                    self._wake.notify()
        if not here:
            self.submit(job)
        return here

    def done(self, job) -> bool:
        """P3: ``job``, run on the reading thread, has returned. Whether that thread still
        reads: False when the standby handed ``read`` to a worker meanwhile."""
        with self._lock:
            if self._inline is not job:                # handed on (and maybe a new reader serving)
                return False
            self._inline = None
        return True

    def _watch(self, read) -> None:
        """The standby (P3): take reading from a job that runs on the reading thread too long."""
        seen, naps = None, 0
        with self._lock:
            while not self._stopped:
                if naps >= STANDBY_NAPS:
                    self._asleep = True
                    self._wake.wait()
                    naps = 0
                self._wake.wait(TAKEOVER)
                if self._inline is not None and self._inline is seen:   # one whole check: hand reading on
                    if len(self._slow) >= MAX_SLOW_KEYS:
                        self._slow.clear()
                    self._slow.add(getattr(seen, "key", None))          # its key goes to a worker for now
                    self._inline = None
                    self.submit(read)
                    self._jobs.rotate(1)                          # reading first: it answers ping
                seen, naps = self._inline, 0 if self._inline else naps + 1

    def stop(self) -> None:
        """P2: no more jobs; the workers drain the queue, then exit."""
        with self._lock:
            self._stopped = True
            self._cv.notify_all()
            self._wake.notify_all()

    def threads(self) -> list:
        """The worker threads (and the standby) started so far (for close to join)."""
        return self._threads + ([self._standby] if self._standby is not None else [])

    def _work(self) -> None:
        """A worker thread: run jobs, the session's reading loop among them, until the pool
        stops; how long each took tells the pool which keys are slow (P3)."""
        job = self.next_job()
        while job is not None:
            began = time.monotonic()
            job()
            job = self.next_job(job, time.monotonic() - began)

    def next_job(self, ran=None, took: float = 0.0):
        """For a worker: the next queued job, waiting for one; None once the pool has
        stopped and the queue is empty (the worker then ends). ``ran`` is the job it
        ran last, which took ``took`` seconds: a slow key that ran fast is forgotten (P3)."""
        with self._lock:
            if ran is not None and took < TAKEOVER:
                self._slow.discard(getattr(ran, "key", None))
            while not self._jobs:
                if self._stopped:
                    return None
                self._idle += 1
                self._cv.wait()
            return self._jobs.popleft()
