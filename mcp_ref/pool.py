"""Who runs a served request: a bounded pool of worker threads.

The session's reader thread (inbound.py ``_read``) reads a message, routes it,
and puts the job a request needs here; a free worker runs it. The pool knows
nothing of MCP: a job is a callable. Spec: basic/index (requests may be in
flight both ways at once).

Rules (session.py rule 3 is kept here):

P1. At most ``max_workers`` jobs run at once. A worker thread is started when
    a job arrives and no worker is idle, up to that bound; after that, jobs
    wait in arrival order until a worker is free. Workers stay for the next
    job (a thread start per request would cost more than the request).
P2. ``stop`` ends the pool: workers finish the jobs already queued, then exit.
    Jobs submitted after ``stop`` are dropped (the session is closing).
"""
from __future__ import annotations

import threading
from collections import deque

__all__ = ["Pool"]


class Pool:
    """The worker threads of one session (named ``<name>-worker-N``)."""

    def __init__(self, name: str, max_workers: int):
        self._name = name
        self._max_workers = max(1, max_workers)
        self._cv = threading.Condition()
        self._jobs: deque = deque()
        self._threads: list = []
        self._idle = 0                 # workers waiting and not yet woken for a job
        self._stopped = False

    def submit(self, job) -> None:
        """Queue ``job``; wake an idle worker, or start one (P1)."""
        with self._cv:
            if self._stopped:
                return                                   # P2
            self._jobs.append(job)
            if self._idle:
                self._idle -= 1
                self._cv.notify()
            elif len(self._threads) < self._max_workers:
                thread = threading.Thread(target=self._run, name=f"{self._name}-worker-{len(self._threads)}",
                                          daemon=True)
                self._threads.append(thread)
                thread.start()

    def stop(self) -> None:
        """P2: no more jobs; the workers drain the queue, then exit."""
        with self._cv:
            self._stopped = True
            self._cv.notify_all()

    def threads(self) -> list:
        """The worker threads started so far (for close to join)."""
        return list(self._threads)

    def _run(self) -> None:
        """A worker: run queued jobs until the pool stops and the queue is empty."""
        while True:
            with self._cv:
                while not self._jobs:
                    if self._stopped:
                        return
                    self._idle += 1
                    self._cv.wait()
                job = self._jobs.popleft()
            job()
