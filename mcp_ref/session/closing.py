"""How a session ends (session/__init__.py rule 5): at the peer's EOF, on ``close``, when a
write fails, or when ``ping`` goes unanswered.

``Closing`` is a mix-in of ``Session`` (session/__init__.py), whose tables and threads it
ends: every pending request fails once with ``ConnectionClosed``, every
request being served is cancelled, the pool and helper threads stop, the
transport closes, and ``on_close`` is called, once, whichever thread gets
there first. At the peer's EOF the requests already read may first finish
within ``eof_grace``. Spec: basic/lifecycle#shutdown, basic/utilities/ping.
"""
from __future__ import annotations

import contextlib
import logging
import threading
import time

from mcp_ref.errors import ConnectionClosed, McpError, RequestTimeout, SessionError
from mcp_ref.session.notices import _STOP
from mcp_ref.session.state import SessionState

log = logging.getLogger("mcp_ref.session")


class Closing(SessionState):
    """The closing half of ``Session`` (a mix-in)."""

    def _let_finish(self, reason: str) -> None:
        """The peer's input ended (rule 5): nothing more will be read, but the requests
        already read may still finish and be answered, for at most ``eof_grace`` seconds."""
        if self._eof_grace <= 0:
            return
        with self._lock:                           # a stream only the peer could end (subscriptions/listen)
            streams = [ctx for ctx in self._inbound.values() if ctx.ends_with_input]
        for ctx in streams:
            ctx._cancel()
        deadline = time.monotonic() + self._eof_grace
        while time.monotonic() < deadline:
            with self._lock:
                due = self._inbound or self._replying     # queued requests are in _inbound too
            if not due or self._closed_event.wait(0.005):
                return
        log.info("%s: %s; requests still running after %.1f s are cancelled", self._name, reason,
                 self._eof_grace)

    def _on_close(self, reason: str) -> None:
        """Rule 5, once: fail every pending request with ConnectionClosed, cancel every
        request being served, stop the pool and helpers, close the transport, then
        call ``on_close``. Any thread may get here first; the others find it done."""
        with self._lock:
            if self.closed:
                return
            self.closed = True
            self._closing_thread = threading.current_thread()
            outbound, self._outbound = self._outbound, {}
            self._listening = {}
            inbound = list(self._inbound.values())
            helper_queues = (self._notices, self._control)
        details: dict = {}
        # The exit code and stderr of a stdio server; a transport may not have them, or fail to tell.
        with contextlib.suppress(Exception):
            details = self.transport.close_details() or {}
        self.close_error = ConnectionClosed(reason, exit_code=details.get("exit_code"),
                                            stderr_tail=details.get("stderr_tail", ""),
                                            late_details=details.get("late"))
        for waiter in outbound.values():
            waiter.settle(self.close_error)
        for ctx in inbound:
            ctx._cancel()
        if self._pool is not None:
            self._pool.stop()
        for q in helper_queues:
            if q is not None:
                q.put(_STOP)
        if self._jobs is not None:
            self._jobs.close()                    # requests not started never start (rule 5)
        try:
            self.transport.close()
        except Exception:
            log.debug("%s: transport close failed", self._name, exc_info=True)
        self._closed_event.set()
        if self._on_close_cb is not None:
            try:
                self._on_close_cb(self)
            except Exception:
                log.exception("%s: on_close callback failed", self._name)

    def _keepalive(self) -> None:
        """Spec: basic/utilities/ping: a peer that does not answer may be disconnected."""
        while not self._closed_event.wait(self._ping_interval):
            try:
                self.ping(timeout=self._ping_interval)
            except RequestTimeout:
                log.warning("%s: the peer did not answer ping; closing", self._name)
                self._on_close("the peer did not answer ping")
                return
            except McpError:
                continue                            # an answer, even an error, proves liveness
            except SessionError:
                return
