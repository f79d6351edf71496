"""Writing to a pipe whose reader may stop reading: the stdio transport's writer.

Spec: basic/transports#stdio, basic/lifecycle#timeouts and #shutdown.

A pipe holds about 64 kB. When the peer stops reading (it is stuck, or a
bug), a plain ``write`` blocks for good: the caller never reaches its request
timeout, a server never notices that its input ended, and ``close`` blocks
behind the write. So:

1. ``write`` never waits on the pipe: what the pipe does not take now is
   queued, and one daemon thread, started on the first line it must write,
   writes the queue in order. A request written to a deaf peer then fails
   with its own timeout (``RequestTimeout``), like any other.
   Fast path; it holds seq. latency <= 2x and server CPU per small call <= 3x the floor.
   An owned pipe or socket is made non-blocking, and with nothing queued
   ``write`` writes the line itself on the caller's
   thread; only the rest (none, unless the pipe is full) goes to the thread,
   which waits for room with ``poll``. The mode belongs to the open file, so
   it is put back to blocking when the writer closes it, and a terminal or a
   file is never switched: the thread writes every line there (and wherever
   the mode cannot be set: Windows pipes).
2. The queue is bounded (``max_queued`` bytes; one line always fits into an
   empty queue): past the bound ``write`` raises ``PeerNotReading`` and the
   session closes, rather than holding memory for a peer that reads nothing.
3. A failed write (the peer closed its end) is kept and raised by the next
   ``write``; the session then closes with it.
4. ``close(stall)`` lets what is queued drain as long as the peer takes some
   of it every ``stall`` seconds (a slow reader gets every line; a long line
   is written in pieces of ``WRITE_PIECE`` bytes so that its progress shows),
   then the writer closes the stream it owns. It returns whether the queue
   drained. When it did not, the thread is still blocked in the write: the
   caller must not close the stream under it (the descriptor number could be
   reused); it ends the peer instead (client: the shutdown ladder, after
   which the write fails at once; server: the process exits, and the thread
   is a daemon).
5. An owned stream (``owned=True``: the child's stdin, the server's private
   stdout) is written with ``os.write`` on its descriptor, so no buffered file
   object is left locked by a blocked thread (the interpreter would abort at
   exit trying to flush it), and closed by the writer. A stream passed in by
   the caller is written with its own ``write``/``flush`` and left open.
"""
from __future__ import annotations

import os
import select
import stat
import threading
from collections import deque

__all__ = ["PipeWriter", "PeerNotReading", "MAX_QUEUED"]

MAX_QUEUED = 64 * 1024 * 1024     # bytes written but not yet taken by the peer (rule 2)
WRITE_PIECE = 64 * 1024           # the most one os.write is given, so ``written`` moves (rule 4)


def _pipe_or_socket(fd: int) -> bool:
    """Whether ``fd`` is a pipe or a socket (not a terminal, a file, or closed)."""
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


class PeerNotReading(OSError):
    """The peer has left ``max_queued`` bytes unread: it has stopped reading (rule 2)."""


class PipeWriter:
    """Writes lines to ``stream`` on its own thread (see the module's rules)."""

    def __init__(self, stream, *, owned: bool, name: str = "mcp-stdio-writer", max_queued: int = MAX_QUEUED):
        self._stream, self._owned, self._name, self.max_queued = stream, owned, name, max_queued
        self._fd: int | None = None
        if owned:
            try:
                self._fd = stream.fileno()
            except (AttributeError, OSError, ValueError):   # no descriptor: its own write
                pass
        self._poll: select.poll | None = None      # rule 1's fast path: set when the descriptor is made non-blocking
        if self._fd is not None and hasattr(select, "poll") and _pipe_or_socket(self._fd):
            try:
                os.set_blocking(self._fd, False)
                self._poll = select.poll()             # how the thread waits for room
                self._poll.register(self._fd, select.POLLOUT)
            except OSError:                            # not here (Windows pipes): the thread writes all
                self._poll = None
        self.written = 0                  # bytes the peer has taken (rule 4 watches it move)
        self._queue: deque = deque()
        self._queued = 0                  # bytes in the queue, the line being written included
        self._ready = threading.Condition()
        self._closing = False
        self._error: OSError | ValueError | None = None
        self._thread: threading.Thread | None = None

    def write(self, data: bytes | memoryview) -> None:
        """Queue one line for the thread (rule 1); raises the error of an earlier write
        (rule 3), ``PeerNotReading`` (rule 2), or ``ValueError`` once closed."""
        with self._ready:
            if self._error is not None:
                raise self._error
            if self._closing:
                raise ValueError("write to a closed stdio stream")
            if self._queue and self._queued + len(data) > self.max_queued:
                raise PeerNotReading(f"the peer has not read {self._queued} bytes written to it (the limit is "
                                     f"{self.max_queued}): it has stopped reading")
            if self._poll is not None and self._fd is not None and not self._queue:   # rule 1: write what fits now
                try:
                    done = os.write(self._fd, data)
                except BlockingIOError:
                    done = 0
                except OSError as exc:
                    self._error = exc                          # rule 3
                    raise
                self.written += done
                if done == len(data):
                    return
                data = memoryview(data)[done:]
            self._queue.append(data)
            self._queued += len(data)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name=self._name, daemon=True)
                self._thread.start()
            self._ready.notify()

    def _run(self) -> None:
        """The writer thread: write the queue in order until closed and drained (rule 1)."""
        while True:
            with self._ready:
                while not self._queue and not self._closing:
                    self._ready.wait()
                if not self._queue:
                    break
                data = self._queue[0]
            try:
                self._write(data)
            except (OSError, ValueError) as exc:
                with self._ready:
                    self._error = exc              # rule 3
                    self._queue.clear()
                    self._queued = 0
                break
            with self._ready:
                self._queue.popleft()
                self._queued -= len(data)
        self._close_stream()

    def _write(self, data: bytes | memoryview) -> None:
        if self._fd is None:
            self._stream.write(data)
            self._stream.flush()
            self.written += len(data)
            return
        view = memoryview(data)
        while view:
            try:
                done = os.write(self._fd, view[:WRITE_PIECE])  # blocks while the pipe is full
            except BlockingIOError:                            # non-blocking (rule 1): wait for room
                assert self._poll is not None                  # only rule 1 makes the descriptor non-blocking
                self._poll.poll()
                continue
            self.written += done
            view = view[done:]

    def _close_stream(self) -> None:
        with self._ready:
            closing = self._closing and self._owned
        if closing:
            try:
                if self._poll is not None and self._fd is not None:
                    os.set_blocking(self._fd, True)            # rule 1: as we found it
                self._stream.close()
            except (OSError, ValueError):
                pass

    def close(self, stall: float | None) -> bool:
        """Stop taking lines, let the queue drain while the peer reads (at least one
        write every ``stall`` seconds), and close an owned stream (rule 4). True when
        the queue drained; False when the thread is blocked in a write."""
        with self._ready:
            self._closing = True
            self._ready.notify_all()
            thread = self._thread
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
