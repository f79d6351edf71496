"""Who runs a job: the leader/follower pool of a session that reads its own transport.

The session (session/inbound.py) reads a message, routes it, and when routing gives a
job (a request to serve, a small control reply) it asks the pool where that
job runs. The pool answers with one of three places, and owns the threads
that take turns at reading. It knows nothing of MCP: a job is a callable,
and so is the threads' loop, which the session hands in (session/inbound.py ``_work``). Spec: basic/index
(requests may be in flight both ways at once), basic/utilities/ping.

Rules (session/__init__.py rules 1, 3 and 8 are kept here):

P1. Reading first. A free thread takes the reading role before it takes a
    queued job, so replies, cancellations and pings are always read
    (``next_turn``; the thread's loop is the session's ``_work``, session/inbound.py).
P2. Inline. The reader runs the job it read on its own thread, then reads on,
    when another thread could take the reading role over: an idle one, or
    room to start one (``place``). A sequential exchange then uses one
    thread and no wake-ups.
P3. Takeover. An inline job that runs longer than ``INLINE_TAKEOVER`` loses
    the reading role to another thread; the ``standby`` thread watches for
    that (``_standby``), polling only while jobs flow and sleeping untimed
    when the session is idle. Not while the job writes its answer and the
    transport says nothing waits to be read (session rule 10, ``replying``).
P4. Before blocking. A job that is about to wait on the peer (a nested
    request) hands the reading role on at once, so the reply can be read
    (``before_blocking``).
P5. Slow (session rule 8). A job whose (method, name or uri) ran longer than
    ``SLOW_AFTER`` last time is marked ``slow`` when routed; the reader hands
    the reading role on first and then runs it (``place`` returns
    ``HANDED``). Blocking handlers then start as fast as they are read.
    ``learn`` remembers and forgets, at most ``MAX_SLOW_KEYS`` of them.
P6. Saturated. With every thread busy the reader does not serve: requests go
    to a backlog that finishing threads drain, and control jobs (``ping``,
    errors for bad frames) to the session's control thread, so ``ping`` is
    answered whatever the handlers do (``place`` returns ``QUEUED``).
P7. Stop. ``stop`` ends reading; followers drain the backlog, then exit. At
    most ``max_workers + 1`` threads ever run: the handlers and the reader.

The thread roles::

                        transport.receive()
                               |
        +----------------------v-----------------------+
        | mcp-worker-K  (the leader: holds reading)    |
        |   read -> route -> job -> pool.place(job)    |
        |      INLINE : run it here, then read on      | P2
        |      HANDED : give reading away, run it,     | P5, P4
        |               then join the followers        |
        |      QUEUED : backlog, or the control thread | P6
        +----------------------+-----------------------+
                               | reading role handed on (P3, P4, P5)
        +----------------------v-----------------------+
        | mcp-worker-0..N  (followers, waiting)        |
        |   take the reading role first (P1),          |
        |   else a backlog job, else wait              |
        +----------------------------------------------+
        mcp-standby : takes reading from an inline job older than 2 ms (P3)
        mcp-control : answers ping and bad frames when all are busy (P6)

Why serve inline at all: handing each request from a reader thread to a
worker costs a thread wake-up and a context switch per call, which roughly
doubles the round trip over a pipe (``bench/bench_stdio.py``).
"""
from __future__ import annotations

import threading
import time
from collections import deque

__all__ = ["Pool", "READ", "INLINE", "HANDED", "QUEUED", "INLINE_TAKEOVER", "SLOW_AFTER"]

TYPE_CHECKING = False
if TYPE_CHECKING:          # names for annotations only
    from typing import Callable

INLINE_TAKEOVER = 0.002          # P3: seconds an inline job keeps the reading role
STANDBY_IDLE_CHECKS = 25         # P3: ~50 ms without jobs and the standby sleeps untimed
SLOW_AFTER = INLINE_TAKEOVER     # P5: a job that ran this long is remembered as slow
MAX_SLOW_KEYS = 1024             # P5: most (method, target) pairs remembered as slow

# What ``next_turn`` gives a free thread besides a job.
READ = "read"            # P1: take the reading role and run the reader loop

# Where ``place`` puts a job.
INLINE = "inline"        # P2: the caller (the reader) runs it now and keeps reading after
HANDED = "handed"        # P5: the caller runs it now, but has given the reading role away
QUEUED = "queued"        # P6: someone else runs it; the caller reads on


class Pool:
    """The leader/follower pool of one session.

    Args:
        name: prefix of the thread names (``<name>-worker-N``, ``<name>-standby``).
        max_workers: most jobs run at once; one more thread may be reading.
        work: ``fn()``, the body of every pool thread (the session's
            ``_work``, session/inbound.py): it asks ``next_turn`` what to do, runs the
            reader loop or a job, and returns when ``next_turn`` says it is over.
        control: ``fn(job)`` runs a control job elsewhere when all are busy (P6).
        start_helper: ``fn(role, target)`` starts a named helper thread the
            session joins on close (the standby).

    For a thread of the pool: ``next_turn``. For the reader: ``place``, ``inline_done``,
    ``reading_over``.
    For a job: ``before_blocking``. For the session: ``start``, ``stop``,
    ``learn``, ``slow``, ``busy``, ``threads``.
    """

    def __init__(self, name: str, max_workers: int, work: Callable, control: Callable, start_helper: Callable,
                 input_waiting: Callable | None = None):
        self._name, self._work, self._control, self._start_helper = name, work, control, start_helper
        self._lock = lock = threading.Lock()     # taken bare on the hot path (no Condition layer)
        self._cv = threading.Condition(lock)            # followers wait here
        self._standby_cv = threading.Condition(lock)    # the standby waits here
        self._max_threads = max(1, max_workers) + 1     # P7: handlers + the one reading
        self._threads: list = []
        self._idle = 0                 # followers waiting in next_turn
        self._leading = False          # someone holds the reading role
        self._reading_done = False     # P7
        self._backlog: deque = deque()
        self._inline_thread: threading.Thread | None = None   # the reader serving inline (P2)
        self._inline_since: float | None = None
        self._inline_count = 0
        self._standby_asleep = False
        self._inline_replying = False  # P3, session rule 10: the inline job is writing its answer
        self._input_waiting = input_waiting
        self.slow: dict = {}           # P5: (method, name or uri) -> True

    # ------------------------------------------------------------------ the session's side
    def start(self) -> None:
        """Start the first worker (it becomes the reader) and the standby."""
        with self._lock:
            self._spawn_locked()
        self._start_helper("standby", self._standby)

    def stop(self) -> None:
        """P7: no more reading; followers finish the backlog and exit."""
        with self._lock:
            self._reading_done = True
            self._cv.notify_all()
            self._standby_cv.notify_all()

    def busy(self) -> bool:
        """True while jobs wait in the backlog."""
        return bool(self._backlog)

    def threads(self) -> list:
        """The worker threads started so far (for close to join)."""
        return list(self._threads)

    def learn(self, key, elapsed: float) -> None:
        """P5: remember ``key`` as slow when its job ran ``SLOW_AFTER`` or longer, and
        forget it when it got fast again."""
        slow = elapsed >= SLOW_AFTER
        if slow == (key in self.slow):
            return
        with self._lock:
            if slow:
                self.slow[key] = True
                if len(self.slow) > MAX_SLOW_KEYS:
                    del self.slow[next(iter(self.slow))]
            else:
                self.slow.pop(key, None)

    # ------------------------------------------------------------------ the reader's side
    def place(self, job) -> str:
        """Where ``job`` runs: ``INLINE``, ``HANDED`` (run by the caller) or ``QUEUED``."""
        with self._lock:
            # P2: serve inline only when someone could take the reading role over.
            if self._idle or len(self._threads) < self._max_threads:
                if getattr(job, "slow", False):
                    self._release_locked()                 # P5: hand reading on, then run it
                    return HANDED
                self._inline_thread, self._inline_since = threading.current_thread(), time.monotonic()
                self._inline_count += 1
                if self._standby_asleep:
                    self._standby_cv.notify()              # P3: watch this one
                return INLINE
            if not getattr(job, "control", False):
                self._backlog.append(job)                  # P6: all busy, keep reading
                return QUEUED
        self._control(job)                                 # P6: ping is answered anyway
        return QUEUED

    def inline_done(self) -> bool:
        """After an inline job: True when the caller still holds the reading role."""
        with self._lock:
            if self._inline_thread is threading.current_thread():
                self._inline_thread = self._inline_since = None
                self._inline_replying = False
                return True
            return False

    def reading_over(self) -> None:
        """The reader saw the end of its input: nobody reads again (P7)."""
        with self._lock:
            self._reading_done = True
            self._leading = False
            self._cv.notify_all()

    def replying(self, on: bool) -> bool:
        """Session rule 10 (P3): the inline job is writing its answer (``on``), or is
        done writing. Returns whether the caller is the thread serving inline."""
        if self._inline_thread is not threading.current_thread():
            return False
        self._inline_replying = on
        return True

    def before_blocking(self) -> None:
        """P4: called before a wait the library controls (a request to the peer): a
        reader serving inline hands its role on at once, so the reply can be read."""
        if self._inline_thread is threading.current_thread():
            with self._lock:
                if self._inline_thread is threading.current_thread() and not self._reading_done:
                    self._release_locked()

    # ------------------------------------------------------------------ the threads
    def _spawn_locked(self) -> None:
        index = len(self._threads)
        thread = threading.Thread(target=self._work, name=f"{self._name}-worker-{index}", daemon=True)
        self._threads.append(thread)
        thread.start()

    def _release_locked(self) -> None:
        """Take the reading role from the thread serving inline and give it to another
        (P3, P4, P5): wake an idle follower, or start one."""
        self._inline_thread = self._inline_since = None
        self._inline_replying = False
        self._leading = False
        if self._idle:
            self._cv.notify()
        elif len(self._threads) < self._max_threads:
            self._spawn_locked()

    def next_turn(self):
        """What a free thread of the pool does next (P1): ``READ`` (it now holds the
        reading role), a job from the backlog, or None when reading is over and the
        backlog empty (P7: the thread exits). Waits while there is nothing to do."""
        with self._lock:
            while True:
                if not self._leading and not self._reading_done:
                    self._leading = True           # P1: reading first, replies must be read
                    return READ
                if self._backlog:
                    return self._backlog.popleft()
                if self._reading_done:
                    return None                    # P7
                self._idle += 1
                self._cv.wait()
                self._idle -= 1

    def _standby(self) -> None:
        """Thread ``standby`` (P3): takes the reading role from an inline job that runs
        longer than ``INLINE_TAKEOVER``, so a slow or blocked handler never stops
        replies, cancellations and pings from being read."""
        quiet = 0
        seen = -1
        with self._lock:
            while not self._reading_done:
                since = self._inline_since
                if since is not None and time.monotonic() - since >= INLINE_TAKEOVER and not (
                        self._inline_replying and self._input_waiting is not None and not self._input_waiting()):
                    self._release_locked()             # (session rule 10: an answer being written keeps it)
                if self._inline_count != seen or self._inline_since is not None:
                    seen, quiet = self._inline_count, 0
                else:
                    quiet += 1
                if quiet > STANDBY_IDLE_CHECKS:
                    self._standby_asleep = True
                    self._standby_cv.wait()
                    self._standby_asleep = False
                    quiet = 0
                else:
                    self._standby_cv.wait(INLINE_TAKEOVER)
