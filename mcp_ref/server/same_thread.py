"""Tools registered with ``same_thread=True`` (rule 6 of tools.py): code tied to
one thread (a GUI toolkit, a library that is not thread-safe) runs on one
thread of the server, ``SAME_THREAD_NAME``, one call at a time, while the
session's handler thread waits and still sees cancellation. The thread stops
after the last session that used it closes.
"""
from __future__ import annotations

import threading
from collections import deque
from typing import Any, Callable

from mcp_ref.errors import RequestCancelled
from mcp_ref.server.utilities import current

__all__ = ["SameThread", "SAME_THREAD_NAME"]

# Rule 6: the thread that runs every same_thread tool of a server.
SAME_THREAD_NAME = "mcp-server-same-thread"


# ---------------------------------------------------------------------- the same thread (rule 6)
_QUEUED, _RUNNING, _DONE, _SKIPPED = range(4)


class _Job:
    """One same_thread call: what to run, and how it ended (set before ``done``)."""
    __slots__ = ("fn", "kwargs", "ctx", "state", "value", "error", "done")

    def __init__(self, fn: Callable, kwargs: dict, ctx):
        self.fn, self.kwargs, self.ctx = fn, kwargs, ctx
        self.state = _QUEUED                         # changed under SameThread's lock
        self.value = self.error = None
        self.done = threading.Event()


class SameThread:
    """The one thread that runs a server's ``same_thread`` tools (rule 6).

    Why: some code must always run on the same OS thread (a COM apartment, a
    tkinter root, a thread-local database connection, a library that is not
    thread-safe), while the session serves each request on whichever pool
    thread read it (session/__init__.py). So those calls go through one queue to one
    daemon thread, named ``mcp-server-same-thread``, in the order they reach
    it, one at a time.

    Lifetime: started on the first call; it runs while ``keep()`` (the server
    has an open session) and ends once its queue is empty and ``keep()`` is
    false. ``wake()`` (called when a session closes) makes it look again, so
    no thread outlives the last session. A later call starts a new thread:
    state a tool keeps per thread (``threading.local``) is then made anew.

    Cancellation (Spec: basic/utilities/cancellation): a call whose request was
    cancelled before it started is skipped; one cancelled while it runs runs to
    its end (a Python thread cannot be stopped) and its result is dropped, as
    the session drops an ordinary handler's answer to a cancelled request.
    """

    def __init__(self, keep: Callable[[], bool]):
        self._keep = keep
        self._cv = threading.Condition(threading.Lock())
        self._jobs: deque = deque()
        self.thread: threading.Thread | None = None      # the running thread, or None

    def call(self, fn: Callable, kwargs: dict, ctx) -> Any:
        """Run ``fn(**kwargs)`` on the thread and return what it returned (or raise
        what it raised), on behalf of the request of ``ctx``.

        The session keeps reading while the calling handler waits (a handler that runs on
        the reading thread has reading taken over: session/pool.py P3), so replies,
        cancellations and pings are read meanwhile. A cancellation wakes the wait
        (``ctx.on_cancel``).

        Raises:
            RequestCancelled: the request was cancelled (or its session closed)
                before the call ended.
        """
        job = _Job(fn, kwargs, ctx)
        with self._cv:
            self._jobs.append(job)
            if self.thread is None:
                self.thread = threading.Thread(target=self._run, name=SAME_THREAD_NAME, daemon=True)
                self.thread.start()
            self._cv.notify()                        # an idle thread takes it
        done = job.done
        if not done.is_set():
            ctx.on_cancel(done.set)                 # the call ended, or the request was cancelled
            done.wait()
            if job.state != _DONE and ctx.is_cancelled():
                with self._cv:
                    if job.state == _QUEUED:            # not started: it never will
                        job.state = _SKIPPED
                        self._jobs.remove(job)
        if job.state != _DONE:
            raise RequestCancelled(f"request {ctx.request_id!r} ({ctx.method}) was cancelled")
        if job.error is not None:
            error, job.error = job.error, None
            raise error
        return job.value

    def wake(self) -> None:
        """Make an idle thread check ``keep()`` again (a session closed)."""
        with self._cv:
            self._cv.notify()

    def _run(self) -> None:
        cv, jobs = self._cv, self._jobs
        while True:
            with cv:
                while not jobs:
                    if not self._keep():
                        self.thread = None              # under the lock: the next call starts another
                        return
                    cv.wait()
                job = jobs.popleft()
                job.state = _SKIPPED if job.ctx.is_cancelled() else _RUNNING     # skipped: cancelled while queued
            if job.state == _RUNNING:
                current.ctx = job.ctx                   # for the logging bridge (server._run_handler)
                try:
                    job.value = job.fn(**job.kwargs)
                except BaseException as exc:            # handed to the handler, as if raised there
                    job.error = exc
                finally:
                    current.ctx = None
                    job.kwargs = None
                    job.state = _DONE
            job.done.set()
            job = None
