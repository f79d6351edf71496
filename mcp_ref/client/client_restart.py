"""Stdio auto-restart: a server that exited is respawned on the next request, a
bounded number of times in a row.

A local server that crashes now and then (a tool that segfaults or runs out of
memory) should not force the host to rebuild its client. Restarting is opt-in
(``Client.stdio(argv, auto_restart=N)``) because a respawned server has lost
its state: subscriptions, the log level, whatever its tools kept.

Rules (Spec: basic/lifecycle, basic/transports#stdio):

1. Requests in flight when the server exits fail at once with
   ``ConnectionClosed`` (with its exit code and stderr tail), as without
   restarts. They are never resent: a ``tools/call`` may not be idempotent.
2. The next request (any public request method) respawns the server with the
   same command line, environment, directory and options, and runs the
   handshake again (the same requested revision, capabilities and callbacks)
   before sending. What the client learnt from the old server is forgotten
   first (``server_info``, ``server_capabilities``, ``protocol_version``,
   ``instructions``, the cached tools and their checks); a revision we do not
   speak or a missing capability fails as on a first connect.
3. Each respawn uses one of the N; a request the server answers (a result, or
   an error answer: the server is alive) restores N. With none left, requests
   raise ``ConnectionClosed`` saying the restart limit was reached, with the
   last exit code and stderr tail.
4. One respawn per exit: callers that found the same dead session wait for
   the one that respawns, then use its session (or get its failure).
5. ``close()`` wins: a respawn racing with it shuts its new server down, and
   ``close()`` returns only after that, so no process, thread or pipe
   survives. A respawned server that fails the handshake is shut down too.
"""
from __future__ import annotations

import threading

from mcp_ref.errors import ConnectionClosed, McpError, get_logger

log = get_logger("mcp_ref.client")

__all__ = ["Restarter"]


class Restarter:
    """The respawn policy of one stdio client (the rules above).

    ``spawn()`` makes a new transport, that is a new server process; ``limit``
    is N; ``on_restart(attempt)`` is called before each respawn. ``lock``
    serialises respawns, and ``Client.close`` takes it to wait for one."""

    def __init__(self, limit: int, spawn, on_restart=None):
        self.limit = limit
        self.left = limit
        self.spawn = spawn
        self.on_restart = on_restart
        self.lock = threading.RLock()        # reentrant: on_restart may call client.close()

    def request(self, client, method: str, params: dict | None, options: dict) -> dict:
        """``Session.request`` on a live session (rule 2); an answer restores the count (rule 3)."""
        try:
            result = client._live_session().request(method, params, **options)
        except McpError:                     # an error answer: the server is alive too
            self.left = self.limit
            raise
        self.left = self.limit
        return result

    def revive(self, client, dead):
        """Replace ``dead``, the client's closed session, by a respawned server's."""
        with self.lock:
            if client.session is not dead or client._closing:
                return client.session        # respawned (or closed) by another caller meanwhile: rule 4
            dead.close("restarting the server")         # already closed: this joins its threads
            dead.wait_closed()                           # and this waits for its old server to be reaped
            error = dead.close_error or ConnectionClosed("connection closed")
            if self.left <= 0:
                raise ConnectionClosed(f"{error.reason}; restart limit reached: the server was restarted "
                                       f"{self.limit} time(s) in a row without a successful request",
                                       exit_code=error.exit_code, stderr_tail=error.stderr_tail)
            self.left -= 1
            attempt = self.limit - self.left
            if self.on_restart is not None:
                try:
                    self.on_restart(attempt)
                except Exception:
                    log.exception("on_restart callback %r failed", self.on_restart)
            if client._closing:                          # closed by on_restart: spawn nothing
                raise ConnectionClosed("client closed")
            try:
                transport = self.spawn()
            except OSError as exc:
                raise ConnectionClosed(f"{error.reason}; the server could not be restarted: {exc}",
                                       exit_code=error.exit_code, stderr_tail=error.stderr_tail) from exc
            session = client._new_session(transport)
            with client._lock:
                client._starting = session               # a close() from here on shuts it down
            try:
                if client._closing:                      # closed before, not seeing this session
                    raise ConnectionClosed("client closed")
                client._on_tools_list_changed(None)      # the cached tools and their checks
                client.server_info = client.protocol_version = client.instructions = None
                client.server_capabilities = {}
                client._handshake(session)
            except BaseException:
                session.close("the restarted server failed the handshake")
                raise
            finally:
                with client._lock:
                    client._starting = None
                    closing = client._closing
                    if not closing:                      # published even when failed: rule 4
                        client.session, client.transport = session, transport
            if closing:
                session.close("client closed")
                raise ConnectionClosed("client closed")
            log.info("restarted the stdio server (%d of %d in a row)", attempt, self.limit)
            return session
