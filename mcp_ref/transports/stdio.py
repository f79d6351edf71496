"""The stdio transport: newline-delimited JSON over a child process's pipes.

Rules (Spec: basic/transports#stdio, basic/lifecycle#shutdown):

1. One message per line, UTF-8, no embedded newlines; flushed after every
   message. Lines longer than ``max_message_size`` are skipped whole and
   reported as ``InvalidMessage`` with their size and the limit: the session
   answers a request -32600 and reads on; a reply whose id its head shows
   fails that request at once (``MessageTooLarge``).
2. Server side: nothing but MCP messages may reach stdout. While serving,
   ``sys.stdout`` points at stderr and file descriptor 1 is redirected to
   stderr too (so a stray ``print`` or a child process cannot corrupt the
   stream); the protocol writes to a private duplicate of the original
   stdout. Both are restored on close.
3. Client side: the server is a child process (transports/process.py: spawning
   it with a safe environment, draining its stderr, the shutdown ladder, the
   end of its stdout); this module has what goes over its pipes.
4. Writes go through a ``PipeWriter`` (below): a peer that stops reading
   blocks no caller (its requests time out), a server still exits when its
   input ends, and ``close`` still returns. The shutdown ladder closes the
   child's stdin once what was written has drained; a child that reads nothing
   while the queue waits goes straight to SIGTERM. The writer's own rules:

   W1. ``write`` never waits on the pipe. An owned pipe or socket is made
       non-blocking and, with nothing queued, the caller writes the line
       itself; what the pipe does not take is queued for one daemon thread,
       started on the first line it must write, which waits for room with
       ``poll`` and writes the queue in order. A terminal or a file is never
       switched (the mode belongs to the open file, shared with the shell):
       the thread writes every line there, and where the mode cannot be set
       (Windows pipes). An owned pipe is blocking again once closed.
       Fast path; it holds seq. latency <= 2x and server CPU per small call
       <= 3x the floor (a hop to the thread per line costs a fifth of a call).
   W2. The queue is bounded (``max_queued`` bytes; one line always fits an
       empty queue): past it ``write`` raises ``PeerNotReading`` and the
       session closes, rather than holding memory for a peer that reads nothing.
   W3. A failed write (the peer closed its end) is kept and raised by the
       next ``write``; the session then closes with it.
   W4. ``close(stall)`` lets the queue drain while the peer takes some of it
       every ``stall`` seconds (a long line goes in pieces of ``WRITE_PIECE``
       bytes, so progress shows), then closes an owned stream. It returns
       whether the queue drained; when not, the thread is blocked in the write
       and the caller must not close the stream under it (the descriptor could
       be reused): it ends the peer instead (client: the shutdown ladder;
       server: the process exits, and the thread is a daemon).
   W5. An owned stream (the child's stdin, the server's private stdout) is
       written with ``os.write`` on its descriptor, so no buffered file object
       is left locked by a blocked thread; a stream passed in by the caller is
       written with its own ``write``/``flush`` and left open.
"""
from __future__ import annotations

import contextlib
import os
import select
import stat
import sys
import threading
from collections import deque
from typing import Callable, Sequence

from mcp_ref.errors import InvalidMessage
from mcp_ref.jsonrpc.messages import decode, encode_line, oversized
from mcp_ref.jsonrpc.peek import PEEK_CHARS
from mcp_ref.transports.process import SAFE_ENV_VARS, ChildProcess, default_environment

__all__ = ["StdioServerTransport", "StdioClientTransport", "DEFAULT_MAX_MESSAGE_SIZE", "SAFE_ENV_VARS",
           "default_environment", "PipeWriter", "PeerNotReading", "MAX_QUEUED"]

DEFAULT_MAX_MESSAGE_SIZE = 16 * 1024 * 1024
DRAIN_STALL = 2.0          # seconds a closing server waits for a reader that takes nothing (rule 4)
MAX_QUEUED = 64 * 1024 * 1024     # bytes written but not yet taken by the peer (W2)
WRITE_PIECE = 64 * 1024           # the most one os.write is given, so ``written`` moves (W4)
def _read_message(stream, limit: int):
    """Read lines until one holds a message; None at EOF."""
    while True:
        line = stream.readline(limit + 1)
        if not line:
            return None
        if len(line) > limit and not line.endswith(b"\n"):
            head, size = line[:PEEK_CHARS], len(line)     # the head may show a reply's id
            while line and not line.endswith(b"\n"):   # skip the rest of the frame
                line = stream.readline(65536)
                size += len(line)
            raise oversized(head, size - line.endswith(b"\n"), limit)
        try:
            return decode(line)
        except InvalidMessage:
            if line.strip():
                raise                       # a blank line is skipped, anything else reported


class PeerNotReading(OSError):
    """The peer has left ``max_queued`` bytes unread: it has stopped reading (W2)."""


class PipeWriter:
    """Writes lines to ``stream``, never waiting on the pipe (rule 4, W1-W5)."""

    def __init__(self, stream, *, owned: bool, max_queued: int = MAX_QUEUED):
        self._stream, self._owned, self.max_queued = stream, owned, max_queued
        self._fd: int | None = None
        if owned:
            with contextlib.suppress(AttributeError, OSError, ValueError):   # no descriptor: its own write
                self._fd = stream.fileno()
        self._poll: select.poll | None = None      # W1's fast path: set when the descriptor is made non-blocking
        if self._fd is not None and hasattr(select, "poll"):
            try:
                mode = os.fstat(self._fd).st_mode
                if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode):     # a pipe or a socket, not a terminal or a file
                    os.set_blocking(self._fd, False)
                    self._poll = select.poll()         # how the thread waits for room
                    self._poll.register(self._fd, select.POLLOUT)
            except OSError:                            # closed, or not here (Windows pipes): the thread writes all
                self._poll = None
        self.written = 0                  # bytes the peer has taken (rule 4 watches it move)
        self._queue: deque = deque()
        self._queued = 0                  # bytes in the queue, the line being written included
        self._lock = threading.RLock()                 # taken directly: a Condition's ``with`` is Python code
        self._ready = threading.Condition(self._lock)
        self._closing = False
        self._error: OSError | ValueError | None = None
        self._thread: threading.Thread | None = None

    def write(self, data: bytes | memoryview) -> None:
        """Queue one line for the thread (W1); raises the error of an earlier write
        (W3), ``PeerNotReading`` (W2), or ``ValueError`` once closed."""
        with self._lock:
            if self._error is not None:
                raise self._error
            if self._closing:
                raise ValueError("write to a closed stdio stream")
            if self._queue and self._queued + len(data) > self.max_queued:
                raise PeerNotReading(f"the peer has not read {self._queued} bytes written to it (the limit is "
                                     f"{self.max_queued}): it has stopped reading")
            if self._poll is not None and self._fd is not None and not self._queue:   # W1: write what fits now
                try:
                    done = os.write(self._fd, data)
                except BlockingIOError:
                    done = 0
                except OSError as exc:
                    self._error = exc                          # W3
                    raise
                self.written += done
                if done == len(data):
                    return
                data = memoryview(data)[done:]
            self._queue.append(data)
            self._queued += len(data)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="mcp-stdio-writer", daemon=True)
                self._thread.start()
            self._ready.notify()

    def _run(self) -> None:
        """The writer thread: write the queue in order until closed and drained (W1)."""
        while True:
            with self._lock:
                self._ready.wait_for(lambda: self._queue or self._closing)
                if not self._queue:
                    break
                data = self._queue[0]
            try:
                self._write(data)
            except (OSError, ValueError) as exc:
                with self._lock:
                    self._error = exc              # W3
                    self._queue.clear()
                    self._queued = 0
                break
            with self._lock:
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
            except BlockingIOError:                            # non-blocking (W1): wait for room
                assert self._poll is not None                  # only W1 makes the descriptor non-blocking
                self._poll.poll()
                continue
            self.written += done
            view = view[done:]

    def _close_stream(self) -> None:
        if self._closing and self._owned:
            with contextlib.suppress(OSError, ValueError):
                if self._poll is not None and self._fd is not None:
                    os.set_blocking(self._fd, True)            # W1: as we found it
                self._stream.close()

    def close(self, stall: float | None) -> bool:
        """Stop taking lines, let the queue drain while the peer reads (at least one
        write every ``stall`` seconds), and close an owned stream (W4). True when
        the queue drained; False when the thread is blocked in a write."""
        with self._lock:
            self._closing = True
            self._ready.notify_all()
            thread = self._thread
        if thread is not None:
            before = -1
            while thread.is_alive() and self.written != before:    # the peer took some since the last look
                before = self.written
                thread.join(stall)
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


class StdioServerTransport:
    """The server's end: reads stdin, writes stdout (see rule 2)."""

    def __init__(self, stdin=None, stdout=None, *, max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
                 guard_stdout: bool = True):
        self.max_message_size = max_message_size
        self._stdin = stdin if stdin is not None else sys.stdin.buffer
        self._saved: tuple | None = None           # (sys.stdout, saved descriptor, descriptor): close restores them
        private = False                 # whether stdout is our own duplicate (rule 2), the writer's to close
        if stdout is None:
            stdout, private = self._protect_stdout() if guard_stdout else (sys.stdout.buffer, False)
        self._writer = PipeWriter(stdout, owned=private)
        self.closed = False

    def _protect_stdout(self):
        """``(the stream to write the protocol to, whether it is our own duplicate)``."""
        try:
            sys.stdout.flush()
            fd = sys.stdout.fileno()
            private = os.fdopen(os.dup(fd), "wb")
            saved_fd = os.dup(fd)
            os.dup2(sys.stderr.fileno(), fd)
        except (AttributeError, OSError, ValueError):   # no real descriptor (embedded, captured)
            private, saved_fd, fd = sys.stdout.buffer, None, None
        self._saved = (sys.stdout, saved_fd, fd)
        sys.stdout = sys.stderr
        return private, saved_fd is not None

    def send(self, message, related_id=None) -> None:
        self._writer.write(encode_line(message))

    def receive(self):
        if self.closed:
            return None
        return _read_message(self._stdin, self.max_message_size)

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        self._writer.close(DRAIN_STALL)     # owned: closed by the writer, or left to a blocked write
        if self._saved is not None:
            sys.stdout, saved_fd, fd = self._saved
            if saved_fd is not None:
                os.dup2(saved_fd, fd)
                os.close(saved_fd)


class StdioClientTransport(ChildProcess):
    """The client's end: spawns the server and talks over its stdin/stdout.

    Args:
        argv: the command line. On Windows, resolve ``npx``-style shims with
            ``shutil.which`` (``npx.cmd``) before passing them.
        env: variables for the child, added to the safe set of transports/process.py rule 1
            (``default_environment()``); name here what the server needs
            (an API key, ``PYTHONPATH``).
        inherit_env: start from the whole of ``os.environ`` instead of the
            safe set (every secret of this process reaches the server).
        cwd: working directory of the child.
        on_stderr: called with each stderr line (text); default passes it
            through to our stderr. ``None`` keeps the default; pass
            ``lambda line: None`` to silence.
        stderr_lines: how many stderr lines to keep for error reports.
        max_message_size: the longest line read, in bytes (rule 1).
        close_timeout / terminate_timeout: the waits of the shutdown ladder.
    """

    def __init__(self, argv: Sequence[str], *, env: dict | None = None, cwd: str | None = None,
                 on_stderr: Callable[[str], None] | None = None, stderr_lines: int = 50,
                 max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE, close_timeout: float = 2.0,
                 terminate_timeout: float = 2.0, inherit_env: bool = False):
        if isinstance(argv, (str, bytes)):
            raise TypeError("argv must be a list of strings, not one string")
        if isinstance(max_message_size, bool) or not isinstance(max_message_size, int) or max_message_size < 1:
            raise ValueError(f"max_message_size must be a number of bytes >= 1, not {max_message_size!r}")
        self.argv = list(argv)
        self.max_message_size = max_message_size
        self.close_timeout, self.terminate_timeout = close_timeout, terminate_timeout     # the ladder's waits
        self._spawn(self.argv, env, cwd, inherit_env, on_stderr, stderr_lines)     # transports/process.py rule 1
        self._writer = PipeWriter(self.process.stdin, owned=True)

    def send(self, message, related_id=None) -> None:
        self._writer.write(encode_line(message))

    def receive(self):
        try:
            return _read_message(self.process.stdout, self.max_message_size)
        except (OSError, ValueError):        # the pipe closed under the reader: the end, as at EOF
            return None
