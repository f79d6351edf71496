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
3. Client side: the server is spawned with pipes (on POSIX in its own
   process group); its stderr is drained on a thread into a bounded buffer
   and a callback, so a chatty server never blocks on a full pipe.
   Least privilege (Spec: security_best_practices, "Local MCP Server
   Compromise"): the child's environment is a small safe set of the parent's
   variables (``SAFE_ENV_VARS``) plus what ``env=`` names, not the whole of
   ``os.environ``, so a secret of the host does not reach every server;
   ``inherit_env=True`` passes everything, as a deliberate choice.
4. Client shutdown ladder: close the child's stdin, wait; SIGTERM (the whole
   group), wait; SIGKILL, wait. The child is always reaped: no zombies. What
   is left of its process group afterwards (grandchildren) is killed.
5. Writes go through a ``PipeWriter`` (pipe_writer.py): a peer that stops
   reading blocks no caller (its requests time out), a server still exits when
   its input ends, and ``close`` still returns. The shutdown ladder closes the
   child's stdin once what was written has drained; a child that reads nothing
   while the queue waits goes straight to SIGTERM.
6. End of the server's stdout is the end of the connection, at once: the
   exit code is not waited for (a server may close stdout and live on). It
   reaches ``ConnectionClosed`` when the process has ended (``late_details``:
   the first look at the error grants the exit ``LATE_EXIT_GRACE``).
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from collections import deque
from typing import Callable, Sequence

from mcp_ref.errors import InvalidMessage
from mcp_ref.jsonrpc.messages import decode, encode_line, oversized
from mcp_ref.jsonrpc.peek import PEEK_CHARS
from mcp_ref.transports.pipe_writer import PipeWriter

__all__ = ["StdioServerTransport", "StdioClientTransport", "DEFAULT_MAX_MESSAGE_SIZE", "SAFE_ENV_VARS",
           "default_environment"]

DEFAULT_MAX_MESSAGE_SIZE = 16 * 1024 * 1024
DRAIN_STALL = 2.0          # seconds a closing server waits for a reader that takes nothing (rule 5)
LATE_EXIT_GRACE = 0.1      # seconds an exit code may take to follow the end of stdout (rule 6)
# What a spawned server inherits by default (rule 3): enough to find programs, a home
# directory and a temporary directory, and to run at all on Windows; no credentials.
SAFE_ENV_VARS = ("APPDATA", "HOMEDRIVE", "HOMEPATH", "LOCALAPPDATA", "PATH", "PATHEXT", "PROCESSOR_ARCHITECTURE",
                 "SYSTEMDRIVE", "SYSTEMROOT", "TEMP", "USERNAME", "USERPROFILE") if os.name == "nt" \
    else ("HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER")


def default_environment() -> dict:
    """The safe variables of ``SAFE_ENV_VARS`` that are set here. A value starting with
    ``()`` (an exported shell function) is left out: a shell would run it as code."""
    env = {}
    for name in SAFE_ENV_VARS:
        value = os.environ.get(name)
        if value is not None and not value.startswith("()"):
            env[name] = value
    return env


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


class StdioServerTransport:
    """The server's end: reads stdin, writes stdout (see rule 2)."""

    def __init__(self, stdin=None, stdout=None, *, max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
                 guard_stdout: bool = True):
        self.max_message_size = max_message_size
        self._stdin = stdin if stdin is not None else sys.stdin.buffer
        self._restore = None
        self._private = False           # whether stdout is our own duplicate (rule 2), the writer's to close
        if stdout is None:
            stdout = self._protect_stdout() if guard_stdout else sys.stdout.buffer
        self._stdout = stdout
        self._writer = PipeWriter(stdout, owned=self._private)
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
        self._private = saved_fd is not None

        def restore():
            sys.stdout = saved_sys_stdout
            if saved_fd is not None:
                os.dup2(saved_fd, fd)
                os.close(saved_fd)
        self._restore = restore
        return private

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
        if self._restore is not None:
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
        env: variables for the child, added to the safe set of rule 3
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
        self.close_timeout = close_timeout
        self.terminate_timeout = terminate_timeout
        self._on_stderr = on_stderr or _pass_through
        self.stderr_tail: deque[str] = deque(maxlen=stderr_lines)
        self._eof = False
        self._late_grace_used = False
        self._closed = False
        self._close_lock = threading.Lock()
        full_env = dict(os.environ) if inherit_env else default_environment()
        if env:
            full_env.update(env)
        self.process = subprocess.Popen(
            self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=full_env,
            cwd=cwd, start_new_session=(os.name == "posix"))
        self._pump = threading.Thread(target=self._drain_stderr, name="mcp-stderr", daemon=True)
        self._pump.start()
        self._writer = PipeWriter(self.process.stdin, owned=True)

    def _drain_stderr(self) -> None:
        stream = self.process.stderr
        assert stream is not None                   # Popen(stderr=PIPE)
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
        self._writer.write(encode_line(message))

    def receive(self):
        try:
            message = _read_message(self.process.stdout, self.max_message_size)
        except (OSError, ValueError):
            message = None
        if message is None:
            self._eof = True
        return message

    def close_details(self) -> dict:
        """Exit code and stderr tail for ConnectionClosed, without waiting for the child
        (rule 6): while it runs, ``late`` tells them once it has ended."""
        details = self._ended_details()
        return details if details is not None else \
            {"exit_code": None, "stderr_tail": "\n".join(self.stderr_tail), "late": self._late_details}

    def _late_details(self) -> dict | None:
        """``_ended_details`` for an error looked at after the connection ended. The first
        look grants the child ``LATE_EXIT_GRACE`` seconds to finish exiting (its stdout
        closes a moment before its exit status can be read); later looks do not wait."""
        if not self._late_grace_used and self.process.poll() is None:
            self._late_grace_used = True
            self._wait(LATE_EXIT_GRACE)
        return self._ended_details()

    def _ended_details(self) -> dict | None:
        """Exit code and stderr tail once the child has ended (None while it runs). Its
        last stderr lines are read first (the pump ends at EOF, which comes with the exit
        unless a grandchild holds the pipe: hence the bound)."""
        code = self.process.poll()
        if code is None:
            return None
        self._pump.join(timeout=0.5)
        return {"exit_code": code, "stderr_tail": "\n".join(self.stderr_tail)}

    def close(self) -> None:
        """The shutdown ladder (rule 4). Idempotent; returns once the child is reaped."""
        with self._close_lock:
            if self._closed:
                return
            self._closed = True
        proc = self.process
        # Closes stdin once the queue drained; a child that takes nothing meanwhile is not
        # waiting for its EOF either (rule 5).
        drained = self._writer.close(self.close_timeout)
        if not drained or not self._wait(self.close_timeout):
            self._signal(signal.SIGTERM if os.name == "posix" else None)
            if not self._wait(self.terminate_timeout):
                self._signal(signal.SIGKILL if os.name == "posix" else "kill")
                self._wait(None)
        if os.name == "posix":
            # What is left of the group (a grandchild still holding our pipes) goes with
            # the server: no orphans, and no pipe that never reaches EOF.
            self._signal(signal.SIGKILL)
        self._pump.join(timeout=1.0)
        if not drained:                         # its write fails now that the reader is gone
            self._writer.close(1.0)
        for stream in (proc.stdout, proc.stderr):
            if stream is None or (stream is proc.stderr and self._pump.is_alive()):
                continue                        # still read by the pump: closing it would block
            try:
                stream.close()
            except (OSError, ValueError):
                pass

    def _wait(self, timeout) -> bool:
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
