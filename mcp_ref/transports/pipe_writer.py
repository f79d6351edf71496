"""Writing to a pipe whose reader may stop reading: the stdio transport's writer.

Spec: basic/transports#stdio, basic/lifecycle#timeouts and #shutdown.

A pipe holds about 64 kB. When the peer stops reading (it is stuck, or a
bug), a plain ``write`` blocks for good: the caller never reaches its request
timeout, a server never notices that its input ended, and ``close`` blocks
behind the write. So:

1. ``write`` queues the line and returns; one daemon thread, started on the
   first line it must write, writes the queue in order. A request written to a deaf peer
   then fails with its own timeout (``RequestTimeout``), like any other.
   Fast path: an owned descriptor is put in non-blocking mode, and with
   nothing queued the caller writes the line itself: what the pipe takes now
   is written, only the rest (none, unless the pipe is full) is queued. It
   saves the hop to the thread (about a fifth of a small call's time over
   stdio), and costs no more than the write: an earlier version asked
   ``poll`` first whether the pipe had room, and that one call per line was
   3-5 % of a small call (``bench/bench_stdio.py``, latency 1.46x -> 1.53x
   the floor). The thread waits for room with ``poll``. Only a pipe or a
   socket is made non-blocking, and made blocking again when the writer closes
   it: the mode belongs to the open file, which a terminal shares with the
   shell that started us. Anything else, and where the mode cannot be set
   (Windows pipes), the thread writes every line.
   Large lines (Linux): a line longer than the pipe holds would leave its
   rest to the thread, which then wakes each time the reader takes a few
   kilobytes (a poll and a write per wake-up: about 40 per megabyte). So
   the first such line grows the pipe (``F_SETPIPE_SZ``) to the power of
   two that holds it, at most ``GROW_PIPE_TO`` (1 MiB, the size an
   unprivileged process may ask for by default), and the caller writes it
   whole. Server CPU per echo call went from 1.15x to 0.91x the stdlib
   floor at 1 MB, from 1.21x to 1.02x at 100 kB, from 1.19x to 1.10x at
   4 MB (``bench/bench_growth.py``, payload curve; bench/README.md). Only a pipe that carries such
   a line grows, once; the kernel counts the space against the user's pipe
   allowance (``fs.pipe-user-pages-soft``, 64 MiB), and a refusal (the
   allowance is spent, or no ``F_SETPIPE_SZ`` here) leaves the pipe as it
   was and is not asked again: the thread writes the rest as before.
2. The queue is bounded (``max_queued`` bytes; one line always fits into an
   empty queue): past the bound ``write`` raises ``PeerNotReading`` and the
   session closes, rather than holding memory for a peer that reads nothing.
3. A failed write (the peer closed its end) is kept and raised by the next
   ``write``; the session then closes with it.
4. ``close(stall)`` lets what is queued drain as long as the peer takes some
   of it every ``stall`` seconds (a slow reader gets every line), then the
   writer closes the stream it owns. It returns whether the queue drained.
   When it did not, the thread is still blocked in the write: the caller must
   not close the stream under it (the descriptor number could be reused); it
   ends the peer instead (client: the shutdown ladder, after which the write
   fails at once; server: the process exits, and the thread is a daemon).
5. An owned stream (``owned=True``: the child's stdin, the server's private
   stdout) is written with ``os.write`` on its descriptor, so no buffered file
   object is left locked by a blocked thread (the interpreter would abort at
   exit trying to flush it), and closed by the writer. A stream passed in by
   the caller is written with its own ``write``/``flush`` and left open.
6. Write combining: ``write`` may be called from many threads at once (the
   stdio transports say ``concurrent_send``, so the session does not
   serialise them). One write is in progress at a time (``_writing``): a
   line that arrives meanwhile is queued and ``write`` returns; the caller
   writing takes everything queued in one ``os.write`` when its own is done,
   until nothing is left (or the pipe is full: then the thread has the
   rest). The lock is not held during the ``os.write``, which is what lets
   others queue. So N callers at once leave in fewer than N writes, and the
   peer, which reads in chunks, reads them with one read and one wake-up.
   Measured (``bench/bench_client_threads.py``, 2 shared vCPUs, 5+5 runs
   alternating with the tree before): ``Client.call_tool`` from 16 and 64
   threads sends 0.4-0.55 writes per call; the client's CPU per call fell
   from 86-89 to 71-83 µs, its server's from 50-58 to 40-49 µs; the rate
   stayed within the noise (about 0.2x the raw pipelined client: the
   thread wake-ups set it, bench/README.md). The one lock on the way of a
   line is a plain lock, the Condition over it used only to wait: that is
   what keeps a lone line's cost where it was (``bench/bench_stdio.py``,
   sequential latency 1.44x the floor, against 1.44-1.50x before).
   A failed combined write is the error of every line in it: rule 3, and
   the session closes, failing each request pending once with
   ``ConnectionClosed``.
"""
from __future__ import annotations

import os
import select
import stat
import sys
import threading
from collections import deque

__all__ = ["PipeWriter", "PeerNotReading", "MAX_QUEUED", "GROW_PIPE_TO"]

MAX_QUEUED = 64 * 1024 * 1024     # bytes written but not yet taken by the peer (rule 2)
GROW_PIPE_TO = 1024 * 1024        # largest size a pipe is grown to for a long line (rule 1)
PIPE_SIZE = 64 * 1024             # what a new pipe holds on Linux, until asked (rule 1)
# fcntl names these from Python 3.10; the numbers are Linux's own.
_SET_PIPE_SIZE, _GET_PIPE_SIZE = (1031, 1032) if sys.platform.startswith("linux") else (None, None)


def _pipe_or_socket(fd: int) -> str | None:
    """What ``fd`` is: "pipe", "socket", or None (a terminal, a file, or closed)."""
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return None
    return "pipe" if stat.S_ISFIFO(mode) else "socket" if stat.S_ISSOCK(mode) else None


class PeerNotReading(OSError):
    """The peer has left ``max_queued`` bytes unread: it has stopped reading (rule 2)."""


class PipeWriter:
    """Writes lines to ``stream`` on its own thread (see the module's rules)."""

    def __init__(self, stream, *, owned: bool, name: str = "mcp-stdio-writer", max_queued: int = MAX_QUEUED):
        self._stream, self._owned, self._name, self.max_queued = stream, owned, name, max_queued
        self._fd = self._poll = None
        if owned:
            try:
                self._fd = stream.fileno()
            except (AttributeError, OSError, ValueError):   # no descriptor: its own write
                pass
        self._room = None                 # what the pipe holds, while growing it is worth a try (rule 1)
        kind = _pipe_or_socket(self._fd) if self._fd is not None and hasattr(select, "poll") else None
        if kind is not None:
            try:
                os.set_blocking(self._fd, False)       # rule 1's fast path
            except OSError:                            # not here: the thread writes
                pass
            else:
                self._poll = select.poll()             # how the thread waits for room
                self._poll.register(self._fd, select.POLLOUT)
                if kind == "pipe" and _SET_PIPE_SIZE is not None:
                    self._room = PIPE_SIZE
        self.written = 0                  # bytes the peer has taken (rule 4 watches it move)
        self._queue: deque = deque()
        self._queued = 0
        # One lock for the queue and the flags; ``with self._lock`` (a C lock) on the way of
        # every line, the Condition over it only where the thread or close waits.
        self._lock = threading.Lock()
        self._ready = threading.Condition(self._lock)
        self._writing = False             # a write is in progress, by a caller or the thread (rule 6)
        self._closing = False
        self._error = None
        self._thread = None

    def write(self, data: bytes) -> None:
        """Write one line, or queue it (rules 1 and 6); raises the error of an earlier write
        (rule 3), ``PeerNotReading`` (rule 2), or ``ValueError`` once closed."""
        with self._lock:
            if self._error is not None:
                raise self._error
            if self._closing:
                raise ValueError("write to a closed stdio stream")
            if self._queue and self._queued + len(data) > self.max_queued:
                raise PeerNotReading(f"the peer has not read {self._queued} bytes written to it (the limit is "
                                     f"{self.max_queued}): it has stopped reading")
            if self._writing or self._queue or self._poll is None:
                self._queue.append(data)               # the writer at work takes it (rule 6)
                self._queued += len(data)
                if not self._writing:
                    self._start_thread()
                return
            self._writing = True
        while True:                                    # rule 6: write what is pending, then what came meanwhile
            if self._room is not None and len(data) > self._room:
                self._grow(len(data))
            try:
                done = self._write_now(data)
            except BlockingIOError:                    # the pipe is full: the thread waits for room
                done = 0
            except OSError as exc:
                with self._lock:
                    self._error = exc
                    self._writing = False
                    self._queue.clear()
                    self._queued = 0
                    self._ready.notify_all()
                raise
            with self._lock:
                if done < len(data):
                    self._queue.appendleft(memoryview(data)[done:] if done else data)
                    self._queued += len(data) - done
                    self._writing = False
                    self._start_thread()
                    return
                if not self._queue:
                    self._writing = False
                    if self._closing:
                        self._ready.notify_all()       # close waits for this write
                    return
                data = self._queue[0] if len(self._queue) == 1 else b"".join(self._queue)   # no copy of a lone line
                self._queue.clear()
                self._queued = 0

    def _start_thread(self) -> None:
        """Wake the thread for what is queued (started on first need); under ``_lock``."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name=self._name, daemon=True)
            self._thread.start()
        self._ready.notify_all()

    def _grow(self, size: int) -> None:
        """Let the pipe hold a line of ``size`` bytes, or as much of it as rule 1 allows."""
        import fcntl
        try:
            room = fcntl.fcntl(self._fd, _GET_PIPE_SIZE)
            if room < size:
                room = fcntl.fcntl(self._fd, _SET_PIPE_SIZE, min(1 << (size - 1).bit_length(), GROW_PIPE_TO))
        except OSError:                    # refused: not asked again
            room = GROW_PIPE_TO
        self._room = room if room < GROW_PIPE_TO else None

    def _run(self) -> None:
        while True:
            with self._lock:
                while (not self._queue or self._writing) and not self._closing:
                    self._ready.wait()
                while self._writing:                   # a caller's write in progress (rule 6)
                    self._ready.wait()
                if not self._queue:
                    break
                data = self._queue[0]
                self._writing = True
            try:
                self._write(data)
            except (OSError, ValueError) as exc:
                with self._lock:
                    self._error = exc
                    self._queue.clear()
                    self._queued = 0
                    self._writing = False
                break
            with self._lock:
                self._queue.popleft()
                self._queued -= len(data)
                self._writing = False
        self._close_stream()

    def _write_now(self, data: bytes) -> int:
        done = os.write(self._fd, data)
        self.written += done
        return done

    def _write(self, data: bytes) -> None:
        if self._fd is None:
            self._stream.write(data)
            self._stream.flush()
            self.written += len(data)
            return
        view = memoryview(data)
        while view:
            try:
                view = view[self._write_now(view):]
            except BlockingIOError:
                self._poll.poll()              # wait for room (or for the peer to go: the write fails)

    def _close_stream(self) -> None:
        with self._lock:
            closing = self._closing and self._owned
        if closing:
            try:
                if self._poll is not None:
                    os.set_blocking(self._fd, True)    # rule 1: as we found it
                self._stream.close()
            except (OSError, ValueError):
                pass

    def close(self, stall: float | None) -> bool:
        """Stop taking lines, let the queue drain while the peer reads (at least one
        write every ``stall`` seconds), and close an owned stream (rule 4). True when
        the queue drained; False when the thread is blocked in a write."""
        with self._lock:
            self._closing = True
            self._ready.notify_all()
            while self._writing and self._thread is None:   # a caller's write (never blocks: rule 1)
                self._ready.wait()
            thread = self._thread                  # the caller may have left the rest to it
        if thread is not None:
            while True:
                before = self.written
                thread.join(stall)
                if not thread.is_alive() or self.written == before:
                    break
            if thread.is_alive():
                return False
        self._close_stream()              # also when the thread ended on an error
        return True

    @property
    def stuck(self) -> bool:
        """Whether the thread is still running (blocked in a write) after ``close``."""
        return self._thread is not None and self._thread.is_alive()

    def join(self, timeout: float | None) -> None:
        """Wait for the thread (after the peer has gone, a blocked write fails at once)."""
        if self._thread is not None:
            self._thread.join(timeout)
