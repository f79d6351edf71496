"""The stdio transport: newline-delimited JSON over a child process's pipes.

Rules (Spec: basic/transports#stdio, basic/lifecycle#shutdown):

1. One message per line, UTF-8, no embedded newlines; flushed after every
   message. Lines longer than ``max_message_size`` are skipped whole and
   reported as ``InvalidMessage`` (the session answers -32600 and reads on).
2. Server side: nothing but MCP messages may reach stdout. While serving,
   ``sys.stdout`` points at stderr and file descriptor 1 is redirected to
   stderr too (so a stray ``print`` or a child process cannot corrupt the
   stream); the protocol writes to a private duplicate of the original
   stdout. Both are restored on close.
3. Client side: the server is spawned with pipes (on POSIX in its own
   process group); its stderr is drained on a thread into a bounded buffer
   and a callback, so a chatty server never blocks on a full pipe.
4. Client shutdown ladder: close the child's stdin, wait; SIGTERM (the whole
   group), wait; SIGKILL, wait. The child is always reaped: no zombies. What
   is left of its process group afterwards (grandchildren) is killed.
"""
from __future__ import annotations

import os
import sys
import threading

from ..errors import INVALID_REQUEST, InvalidMessage
from ..messages import decode, encode

__all__ = ["StdioServerTransport", "StdioClientTransport", "DEFAULT_MAX_MESSAGE_SIZE"]

TYPE_CHECKING = False
if TYPE_CHECKING:          # names for annotations only
    from typing import Callable, Sequence

# The client's modules (subprocess, signal, collections) are imported where the
# client uses them: a stdio server never spawns anything, and its start-up time
# is measured (bench/bench_stdio.py).

DEFAULT_MAX_MESSAGE_SIZE = 16 * 1024 * 1024


def _read_message(stream, limit: int):
    """Read lines until one holds a message; None at EOF."""
    while True:
        line = stream.readline(limit + 1)
        if not line:
            return None
        if len(line) > limit and not line.endswith(b"\n"):
            size = len(line)
            while line and not line.endswith(b"\n"):   # skip the rest of the frame
                line = stream.readline(65536)
                size += len(line)
            raise InvalidMessage(INVALID_REQUEST, f"Invalid Request: message of {size} bytes exceeds the "
                                                  f"limit of {limit} bytes")
        line = line.strip()
        if line:
            return decode(line)


class StdioServerTransport:
    """The server's end: reads stdin, writes stdout (see rule 2)."""

    def __init__(self, stdin=None, stdout=None, *, max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
                 guard_stdout: bool = True):
        self.max_message_size = max_message_size
        self._stdin = stdin if stdin is not None else sys.stdin.buffer
        self._restore = None
        if stdout is None:
            stdout = self._protect_stdout() if guard_stdout else sys.stdout.buffer
        self._stdout = stdout
        self.closed = False

    def _protect_stdout(self):
        saved_sys_stdout = sys.stdout
        try:
            sys.stdout.flush()
            fd = sys.stdout.fileno()
            private = os.fdopen(os.dup(fd), "wb")
            saved_fd = os.dup(fd)
            os.dup2(sys.stderr.fileno(), fd)
        except (AttributeError, OSError, ValueError):   # no real descriptor (embedded, captured)
            private, saved_fd, fd = sys.stdout.buffer, None, None
        sys.stdout = sys.stderr

        def restore():
            sys.stdout = saved_sys_stdout
            if saved_fd is not None:
                os.dup2(saved_fd, fd)
                os.close(saved_fd)
                private.close()
        self._restore = restore
        return private

    def send(self, message, related_id=None) -> None:
        self._stdout.write(encode(message).encode("utf-8") + b"\n")
        self._stdout.flush()

    def receive(self):
        if self.closed:
            return None
        return _read_message(self._stdin, self.max_message_size)

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        if self._restore is not None:
            try:
                self._stdout.flush()
            except (OSError, ValueError):
                pass
            restore, self._restore = self._restore, None
            restore()


def _pass_through(line: str) -> None:
    """Default stderr sink: our own stderr, written as text (works without a descriptor, as in Jupyter)."""
    try:
        sys.stderr.write(line if line.endswith("\n") else line + "\n")
    except (OSError, ValueError, AttributeError):
        pass


class StdioClientTransport:
    """The client's end: spawns the server and talks over its stdin/stdout.

    Args:
        argv: the command line. On Windows, resolve ``npx``-style shims with
            ``shutil.which`` (``npx.cmd``) before passing them.
        env: variables added to (or overriding) the inherited environment.
        cwd: working directory of the child.
        on_stderr: called with each stderr line (text); default passes it
            through to our stderr. ``None`` keeps the default; pass
            ``lambda line: None`` to silence.
        stderr_lines: how many stderr lines to keep for error reports.
        close_timeout / terminate_timeout: the waits of the shutdown ladder.
    """

    def __init__(self, argv: Sequence[str], *, env: dict | None = None, cwd: str | None = None,
                 on_stderr: Callable[[str], None] | None = None, stderr_lines: int = 50,
                 max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE, close_timeout: float = 2.0,
                 terminate_timeout: float = 2.0):
        if isinstance(argv, (str, bytes)):
            raise TypeError("argv must be a list of strings, not one string")
        self.argv = list(argv)
        self.max_message_size = max_message_size
        self.close_timeout = close_timeout
        self.terminate_timeout = terminate_timeout
        self._on_stderr = on_stderr or _pass_through
        import subprocess
        from collections import deque
        self.stderr_tail = deque(maxlen=stderr_lines)
        self._eof = False
        self._closed = False
        self._close_lock = threading.Lock()
        full_env = dict(os.environ)
        if env:
            full_env.update(env)
        self.process = subprocess.Popen(
            self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=full_env,
            cwd=cwd, start_new_session=(os.name == "posix"))
        self._pump = threading.Thread(target=self._drain_stderr, name="mcp-stderr", daemon=True)
        self._pump.start()

    def _drain_stderr(self) -> None:
        stream = self.process.stderr
        try:
            for raw in iter(stream.readline, b""):
                line = raw.decode("utf-8", "replace").rstrip("\r\n")
                self.stderr_tail.append(line)
                try:
                    self._on_stderr(line)
                except Exception:
                    pass
        except (OSError, ValueError):
            pass

    def send(self, message, related_id=None) -> None:
        stdin = self.process.stdin
        stdin.write(encode(message).encode("utf-8") + b"\n")
        stdin.flush()

    def receive(self):
        try:
            message = _read_message(self.process.stdout, self.max_message_size)
        except (OSError, ValueError):
            message = None
        if message is None:
            self._eof = True
        return message

    def close_details(self) -> dict:
        """Exit code and stderr tail, for ConnectionClosed (waits briefly only when the child hung up)."""
        code = self.process.poll()
        if code is None and self._eof:
            import subprocess
            try:
                code = self.process.wait(timeout=0.5)
            except subprocess.TimeoutExpired:
                code = None
        if code is not None:
            self._pump.join(timeout=0.5)
        return {"exit_code": code, "stderr_tail": "\n".join(self.stderr_tail)}

    def close(self) -> None:
        """The shutdown ladder (rule 4). Idempotent; returns once the child is reaped."""
        with self._close_lock:
            if self._closed:
                return
            self._closed = True
        import signal
        proc = self.process
        try:
            proc.stdin.close()
        except (OSError, ValueError):
            pass
        if not self._wait(self.close_timeout):
            self._signal(signal.SIGTERM if os.name == "posix" else None)
            if not self._wait(self.terminate_timeout):
                self._signal(signal.SIGKILL if os.name == "posix" else "kill")
                self._wait(None)
        if os.name == "posix":
            # What is left of the group (a grandchild still holding our pipes) goes with
            # the server: no orphans, and no pipe that never reaches EOF.
            self._signal(signal.SIGKILL)
        self._pump.join(timeout=1.0)
        for stream in (proc.stdout, proc.stderr):
            if stream is proc.stderr and self._pump.is_alive():
                continue                        # still read by the pump: closing it would block
            try:
                stream.close()
            except (OSError, ValueError):
                pass

    def _wait(self, timeout) -> bool:
        import subprocess
        try:
            self.process.wait(timeout=timeout)
            return True
        except subprocess.TimeoutExpired:
            return False

    def _signal(self, sig) -> None:
        proc = self.process
        try:
            if os.name == "posix":
                os.killpg(proc.pid, sig)        # the whole group: no orphaned grandchildren
            elif sig == "kill":
                proc.kill()
            else:
                proc.terminate()
        except (ProcessLookupError, PermissionError, OSError):
            pass
