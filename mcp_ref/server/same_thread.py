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
        from concurrent.futures import Future      # here: only a server with same_thread tools needs it
        job: Future = Future()                      # pending (queued), running, then done or cancelled
        woken = threading.Event()
        job.add_done_callback(lambda _: woken.set())
        with self._cv:
            self._jobs.append((job, fn, kwargs, ctx))
            if self.thread is None:
                self.thread = threading.Thread(target=self._run, name=SAME_THREAD_NAME, daemon=True)
                self.thread.start()
            self._cv.notify()                        # an idle thread takes it
        ctx.on_cancel(woken.set)                    # the call ended, or the request was cancelled
        woken.wait()
        if job.cancel():                            # cancelled while queued: it never starts, nor waits in the queue
            with self._cv:                           # (unless the thread has just taken it)
                for entry in self._jobs:
                    if entry[0] is job:
                        self._jobs.remove(entry)
                        break
        if job.cancelled() or not job.done():       # a running one is dropped
            raise RequestCancelled(f"request {ctx.request_id!r} ({ctx.method}) was cancelled")
        return job.result()

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
                job, fn, kwargs, ctx = jobs.popleft()
            if ctx.is_cancelled():
                job.cancel()                            # cancelled while queued: skipped
            if job.set_running_or_notify_cancel():
                current.ctx = ctx                       # for the logging bridge (server._run_handler)
                try:
                    job.set_result(fn(**kwargs))
                except BaseException as exc:            # handed to the handler, as if raised there
                    job.set_exception(exc)
                finally:
                    current.ctx = None
            job = fn = kwargs = ctx = None
