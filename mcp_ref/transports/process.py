"""The server a stdio client runs: spawning it, its stderr, and the shutdown ladder.

``StdioClientTransport`` (transports/stdio.py) is the client's end of the pipes; this
mix-in is what it does with the child process around them. Nothing here is on the
way of a message. Rules (Spec: basic/transports#stdio, basic/lifecycle#shutdown,
security_best_practices):

1. The server is spawned with pipes (on POSIX in its own
   process group); its stderr is drained on a thread into a bounded buffer
   and a callback, so a chatty server never blocks on a full pipe.
   Least privilege (Spec: security_best_practices, "Local MCP Server
   Compromise"): the child's environment is a small safe set of the parent's
   variables (``SAFE_ENV_VARS``) plus what ``env=`` names, not the whole of
   ``os.environ``, so a secret of the host does not reach every server;
   ``inherit_env=True`` passes everything, as a deliberate choice.
2. The shutdown ladder: close the child's stdin, wait; SIGTERM (the whole
   group), wait; SIGKILL, wait. The child is always reaped: no zombies. What
   is left of its process group afterwards (grandchildren) is killed.
   The ladder closes the child's stdin only once what was written has drained
   (transports/stdio.py rule 4); a child that reads nothing while the queue
   waits goes straight to SIGTERM.
3. End of the server's stdout is the end of the connection, at once: the
   exit code is not waited for (a server may close stdout and live on). It
   reaches ``ConnectionClosed`` when the process has ended (``late_details``:
   the first look at the error grants the exit ``LATE_EXIT_GRACE``).
4. ``subprocess`` is imported when a child is spawned, not with this module, which
   transports/stdio.py (a server's transport too) imports. Fast path; it holds server
   peak RSS <= 1.5x the floor: a stdio server never spawns, and ``subprocess`` is
   0.6 of its 15 MB.
"""
from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections import deque
from typing import Any, Callable, Sequence

__all__ = ["ChildProcess", "SAFE_ENV_VARS", "default_environment"]

LATE_EXIT_GRACE = 0.1      # seconds an exit code may take to follow the end of stdout (rule 3)

# What a spawned server inherits by default (rule 1): enough to find programs, a home
# directory and a temporary directory, and to run at all on Windows; no credentials.
SAFE_ENV_VARS = ("APPDATA", "HOMEDRIVE", "HOMEPATH", "LOCALAPPDATA", "PATH", "PATHEXT", "PROCESSOR_ARCHITECTURE",
                 "SYSTEMDRIVE", "SYSTEMROOT", "TEMP", "USERNAME", "USERPROFILE") if os.name == "nt" \
    else ("HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER")


def default_environment() -> dict:
    """The safe variables of ``SAFE_ENV_VARS`` that are set here. A value starting with
    ``()`` (an exported shell function) is left out: a shell would run it as code."""
    return {name: os.environ[name] for name in SAFE_ENV_VARS
            if name in os.environ and not os.environ[name].startswith("()")}


class ChildProcess:
    """The child-process half of ``StdioClientTransport`` (a mix-in: it holds ``_writer``,
    the ``PipeWriter`` of the child's stdin, and the ladder's timeouts)."""

    _writer: Any
    close_timeout: float
    terminate_timeout: float

    def _spawn(self, argv: Sequence[str], env: dict | None, cwd: str | None, inherit_env: bool,
               on_stderr: Callable[[str], None] | None, stderr_lines: int) -> None:
        """Rule 1: start the server with pipes, in its own process group, and its stderr pump."""
        import subprocess                           # rule 4
        # By default our own stderr, written as text (no descriptor needed, as in Jupyter).
        self._on_stderr = on_stderr or (lambda line: sys.stderr.write(line + "\n"))
        self.stderr_tail: deque[str] = deque(maxlen=stderr_lines)
        self._late_grace_used = False
        self._closed = False
        self._close_lock = threading.Lock()
        full_env = {**(os.environ if inherit_env else default_environment()), **(env or {})}
        self.process = subprocess.Popen(
            list(argv), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=full_env,
            cwd=cwd, start_new_session=(os.name == "posix"))
        self._pump = threading.Thread(target=self._drain_stderr, name="mcp-stderr", daemon=True)
        self._pump.start()

    def _drain_stderr(self) -> None:
        stream = self.process.stderr
        assert stream is not None                   # Popen(stderr=PIPE)
        with contextlib.suppress(OSError, ValueError):
            for raw in iter(stream.readline, b""):
                line = raw.decode("utf-8", "replace").rstrip("\r\n")
                self.stderr_tail.append(line)
                with contextlib.suppress(Exception):
                    self._on_stderr(line)

    def close_details(self) -> dict:
        """Exit code and stderr tail for ConnectionClosed, without waiting for the child
        (rule 3): while it runs, ``late`` tells them once it has ended."""
        return self._ended_details() or \
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
        """The shutdown ladder (rule 2). Idempotent; returns once the child is reaped."""
        with self._close_lock:
            if self._closed:
                return
            self._closed = True
        # Closes stdin once the queue drained; a child that takes nothing meanwhile is not
        # waiting for its EOF either (transports/stdio.py rule 4).
        drained = self._writer.close(self.close_timeout)
        if not drained or not self._wait(self.close_timeout):
            self._signal("SIGTERM")
            if not self._wait(self.terminate_timeout):
                self._signal("SIGKILL")
                self._wait(None)
        if os.name == "posix":
            # What is left of the group (a grandchild still holding our pipes) goes with
            # the server: no orphans, and no pipe that never reaches EOF.
            self._signal("SIGKILL")
        self._pump.join(timeout=1.0)
        if not drained:                         # its write fails now that the reader is gone
            self._writer.close(1.0)
        # stderr is left to a pump still reading it: closing it would block.
        for stream in filter(None, (self.process.stdout, None if self._pump.is_alive() else self.process.stderr)):
            with contextlib.suppress(OSError, ValueError):
                stream.close()

    def _wait(self, timeout) -> bool:
        import subprocess                           # rule 4 (loaded by _spawn already)
        try:
            self.process.wait(timeout=timeout)
            return True
        except subprocess.TimeoutExpired:
            return False

    def _signal(self, name: str) -> None:
        """``SIGTERM`` or ``SIGKILL`` to the child's whole group (no orphaned grandchildren);
        on Windows both are ``terminate()`` (``kill()`` is the same call there)."""
        with contextlib.suppress(OSError):      # ProcessLookupError, PermissionError: gone, or not ours
            if os.name == "posix":
                os.killpg(self.process.pid, getattr(signal, name))
            else:
                self.process.terminate()
