"""Streamable HTTP server (and the legacy HTTP+SSE transport) on the standard library.

``serve_http`` blocks until SIGINT/SIGTERM; ``start_http`` returns a running
``HttpServerHandle`` (tests, embedding). Four modules share the work: this
one holds the configuration and the session table; ``listener`` the listening
socket and its connection threads (shared with ``wsgi``'s server);
``http_core`` answers one request (carried by ``http_handler`` or ``wsgi``);
``http_session`` decides which stream carries each message. Spec: basic/transports#streamable-http
(2025-11-25, 2025-03-26), 2024-11-05 basic/transports#http-with-sse, security_best_practices.

Rules:

1. Sessions: ``Mcp-Session-Id`` values come from ``os.urandom`` (``new_session_id``:
   192 random bits, URL-safe base64: visible ASCII). A session ends on DELETE,
   after ``idle_timeout`` seconds with no request and no open stream, or at
   shutdown. At most ``max_sessions`` live at once: a new one evicts the
   session idle the longest (many clients never send DELETE); only when every
   session has a request running or a stream open is the new one refused
   (503). #session-management.
2. DNS-rebinding protection (#security-warning), always on. ``Host`` must
   name this server: with ``allowed_hosts``, one of its patterns (``["*"]``
   accepts any, and only when the application says so); else on a loopback
   bind a loopback name (localhost, 127.0.0.1, [::1], any port); else one of
   the server's own names with the listening port: the bound address, the
   machine's hostname (``socket.gethostname()``) and, on a wildcard bind
   (0.0.0.0, ::), the local address the connection arrived on (over loopback
   also the loopback names and 0.0.0.0, the readiness line's URL). A name a proxy or a port mapping puts
   in ``Host`` must be listed in ``allowed_hosts``. An ``Origin``, when
   present, must be listed in ``allowed_origins``, or else be the request's
   own origin (the same host and port as ``Host``), or a loopback origin on a
   connection over loopback; else 403. Bind 127.0.0.1 unless told otherwise.
3. Threads: one per open connection (``mcp-http-conn-N``), plus at most
   ``workers`` shared ``mcp-http-worker-N`` threads that run every request's
   handler (``workers.WorkerPool``, on demand, ended after a while idle); a
   session has no thread of its own (session rule 9). ``shutdown()`` stops
   accepting, closes every session (ending every stream), shuts every
   connection's socket and joins every thread it started.
4. ``serve_http`` prints one readiness line with the real URL (port 0 picks
   a free port) and installs SIGINT/SIGTERM handlers only on the main thread.
5. The listening socket's accept queue (``backlog``) defaults to
   ``socket.SOMAXCONN``, at least 128 (the kernel may cap it, e.g. Linux
   ``net.core.somaxconn``). With socketserver's 5, clients connecting at once
   while the accepting thread waits for the CPU overflow it (dropped handshakes).
"""
from __future__ import annotations

import threading
from secrets import token_urlsafe

from mcp_ref.errors import get_logger
from mcp_ref.session.workers import WorkerPool
from mcp_ref.transports.http.server.handler import McpRequestHandler
from mcp_ref.transports.http.server.origin import HostChecks
from mcp_ref.transports.http.server.events import EventStore, InMemoryEventStore
from mcp_ref.transports.http.server.listener import DEFAULT_BACKLOG, ConnectionServer, ServerHandle, serve_until_stopped
from mcp_ref.transports.http.server.session import HttpSessionTransport, LegacySseTransport

log = get_logger("mcp_ref.http")

__all__ = ["serve_http", "start_http", "HttpServerHandle", "HttpApp", "EventStore", "InMemoryEventStore"]

def new_session_id() -> str:
    """Rule 1: a fresh ``Mcp-Session-Id``, 192 bits from the OS's CSPRNG as URL-safe base64
    (``[A-Za-z0-9_-]``, 32 characters; tokens.py).
    Spec: basic/transports#session-management (SHOULD be globally unique and cryptographically secure)."""
    return token_urlsafe(24)


class HttpApp(HostChecks):
    """The configuration and session table shared by every connection (see ``serve_http``)."""

    def __init__(self, server, *, host: str = "127.0.0.1", path: str = "/mcp", stateless: bool = False,
                 json_response: bool = False, response_mode: str | None = None,
                 allowed_origins=None, allowed_hosts=None, enable_get: bool = True,
                 max_sessions: int = 1000, idle_timeout: float = 1800.0, max_body: int = 4 * 1024 * 1024,
                 event_store=None, resumable: bool = True,
                 retry_interval: int = 1000, poll_interval: float | None = None, keepalive: float = 15.0,
                 legacy_sse: bool = True, sse_path: str = "/sse", messages_path: str = "/messages",
                 workers: int = 128, auth=None, resource_metadata: dict | None = None, required_scopes=None):
        if response_mode is None:
            response_mode = "json" if json_response else "auto"
        if response_mode not in ("auto", "json", "sse"):
            raise ValueError(f"response_mode must be auto, json or sse, not {response_mode!r}")
        self.server = server
        self.path, self.sse_path, self.messages_path, self.legacy_sse = path, sse_path, messages_path, legacy_sse
        self.stateless, self.response_mode, self.enable_get = stateless, response_mode, enable_get
        self.max_sessions, self.idle_timeout, self.max_body = max_sessions, idle_timeout, max_body
        self.retry_interval, self.poll_interval, self.keepalive = retry_interval, poll_interval, keepalive
        self.event_store = (event_store or InMemoryEventStore()) if resumable and not stateless else None
        HostChecks.__init__(self, host, allowed_origins, allowed_hosts)        # rule 2
        self._sessions: dict = {}
        self._stateless: set = set()          # stateless mode: the sessions of POSTs in progress
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._reaper: threading.Thread | None = None
        self.pool = WorkerPool(workers, name="mcp-http-worker")
        self.unknown_session_hint = ""        # added to a 404 for an unknown session (the WSGI adapter's)
        # Authorization (auth.resource_server): None serves without tokens.
        self.guard = None
        if auth is not None:
            from mcp_ref.auth.resource_server import ResourceGuard   # the auth room loads with its first use
            self.guard = ResourceGuard(auth, resource_metadata, required_scopes)
        elif resource_metadata is not None or required_scopes is not None:
            raise ValueError("resource_metadata and required_scopes need auth= (a token verifier)")

    # ------------------------------------------------------------------ sessions
    def start(self) -> None:
        if not self.stateless and self.idle_timeout:
            self._reaper = threading.Thread(target=self._reap_loop, name="mcp-http-reaper", daemon=True)
            self._reaper.start()

    def new_session(self, legacy: bool = False, owner=None):
        """A new session and its transport; when ``max_sessions`` are live the longest-idle
        one is evicted, and None is returned only when none is idle (rule 1)."""
        evicted = None
        with self._lock:
            if len(self._sessions) >= self.max_sessions:
                evicted = max(self._sessions.values(), key=lambda t: t.idle_for(), default=None)
                if evicted is None or evicted.idle_for() == 0.0:    # busy, as every other: a request, a stream open
                    return None
                del self._sessions[evicted.session_id]         # its id gets 404 from now on
            session_id = new_session_id()                     # rule 1
            transport = (LegacySseTransport(session_id, on_close=self._forget) if legacy
                         else HttpSessionTransport(session_id, event_store=self.event_store, on_close=self._forget))
            self._sessions[session_id] = transport
        if evicted is not None:
            log.info("HTTP session evicted after %.0f s idle: max_sessions (%d) reached", evicted.idle_for(),
                     self.max_sessions)
            self.terminate(evicted, "session evicted (max_sessions reached)")
        return self._serve(transport, owner)

    def _serve(self, transport, owner):
        """Start the MCP session on ``transport``, owned by ``owner`` (an ``AccessToken``: core.py rule 7)."""
        transport.auth = owner
        transport.session = self.server.serve(transport, executor=self.pool)
        return transport

    def stateless_session(self, owner=None):
        """Stateless mode: a fresh transport and session for one POST (closed by the caller)."""
        transport = HttpSessionTransport(None, on_close=self._forget)
        transport.task_owner = self                # 2026-07-28 tasks outlive the POST (server/tasks/extension.py rule 10)
        with self._lock:
            self._stateless.add(transport)
        return self._serve(transport, owner)

    def lookup(self, session_id: str | None, legacy: bool = False):
        with self._lock:
            transport = self._sessions.get(session_id)
        if transport is None or transport.closed or isinstance(transport, LegacySseTransport) != legacy:
            return None
        return transport

    def terminate(self, transport, reason: str) -> None:
        session = transport.session
        if session is not None:
            session.close(reason)
        else:
            transport.close()

    def _forget(self, transport) -> None:
        with self._lock:
            self._stateless.discard(transport)
            if self._sessions.get(session_id := transport.session_id) is transport:
                del self._sessions[session_id]

    def _reap_loop(self) -> None:
        """Close the sessions idle for longer than ``idle_timeout`` (rule 1), every quarter of it."""
        interval = max(0.05, min(60.0, self.idle_timeout / 4))
        while not self._stop.wait(interval):
            self._reap()

    def _reap(self) -> None:
        """One round of the reaper. A call of its own, so the expired sessions it held are
        let go when it returns, not kept by the loop's variables until the next round."""
        with self._lock:
            expired = [t for t in self._sessions.values() if t.idle_for() > self.idle_timeout]
        for transport in expired:
            log.info("HTTP session expired after %.0f s idle", self.idle_timeout)
            try:
                self.terminate(transport, "session expired (idle)")
            except Exception:
                log.exception("session reaper failed")

    def close(self) -> None:
        self._stop.set()
        with self._lock:
            transports = list(self._sessions.values()) + list(self._stateless)
        for transport in transports:
            self.terminate(transport, "server shutting down")
        if self._reaper is not None:
            self._reaper.join(2.0)
        self.server.tasks.ext.closed(self)         # server/tasks/extension.py rule 10
        self.pool.close()

    @property
    def session_count(self) -> int:
        with self._lock:
            return len(self._sessions)

class HttpServerHandle(ServerHandle):
    """A running HTTP server (from ``start_http``): ``url``, ``sse_url``, ``port``, ``shutdown()``."""

    def __init__(self, httpd: ConnectionServer, app: HttpApp):
        super().__init__(httpd, app, app.path, "mcp-http-server")
        self.sse_url = self.base_url + app.sse_path


def start_http(server, address=("127.0.0.1", 0), *, ssl_context=None, backlog: int = DEFAULT_BACKLOG,
               **options) -> HttpServerHandle:
    """Serve ``server`` over HTTP on a background thread; returns at once, listening.
    ``address`` ``(host, 0)`` picks a free port (see ``handle.port``); ``ssl_context``
    (an ``ssl.SSLContext`` with a certificate) serves HTTPS; ``backlog`` is the accept
    queue (rule 5). Options: ``serve_http``'s."""
    host, port = address
    app = HttpApp(server, host=host, **options)
    httpd = ConnectionServer((host, int(port)), McpRequestHandler, ssl_context, backlog)
    httpd.app = app                                        # type: ignore[attr-defined]  # McpRequestHandler.app
    app.port, app.scheme = httpd.server_address[1], "https" if ssl_context is not None else "http"
    handle = HttpServerHandle(httpd, app)
    if app.guard is not None:
        if app.wildcard and not app.guard.metadata.get("resource"):
            httpd.server_close()
            raise ValueError("a server bound to every address needs resource_metadata={'resource': ...}: "
                             "the URL clients use, which its tokens' audience names")
        app.guard.bind(handle.url)
    app.start()
    return handle.start()


def serve_http(server, address=("127.0.0.1", 8000), *, ready=None, **options) -> None:
    """Serve ``server`` over Streamable HTTP (and legacy HTTP+SSE) until SIGINT/SIGTERM.

    Options: ``path="/mcp"``, ``stateless=False``, ``json_response=False`` (True:
    always one JSON body; ``response_mode="sse"``: always SSE),
    ``allowed_origins``/``allowed_hosts`` (lists; ``"host:*"`` for any port),
    ``enable_get=True``, ``max_sessions=1000`` (beyond: the longest-idle session
    is evicted), ``idle_timeout=1800`` s,
    ``max_body=4 MiB``, ``event_store`` (default in memory; ``resumable=False``
    turns resumption off), ``retry_interval=1000`` ms, ``poll_interval=None`` s,
    ``keepalive=15`` s, ``legacy_sse=True``, ``sse_path="/sse"``,
    ``messages_path="/messages"``, ``ssl_context`` (HTTPS), ``backlog`` (the
    accept queue, default ``socket.SOMAXCONN``, at least 128), ``workers=128``
    (threads running requests, shared by all sessions; each session runs at most
    the ``Server``'s ``max_workers`` at once), ``auth`` (a token verifier: every
    request then needs a Bearer token; see ``auth.resource_server``) with
    ``resource_metadata`` (RFC 9728; ``authorization_servers`` required) and
    ``required_scopes`` (a list, or a dict keyed by ``"*"``, a method or
    ``"tool:NAME"``). ``ready``: a callable given the handle, or
    an Event to set, once listening; ``handle.shutdown()`` also ends the call
    (the way out when not on the main thread, where no signal handler is
    installed). A readiness line with the real URL is printed on stdout.
    """
    handle = start_http(server, address, **options)
    log.info("serving MCP over HTTP at %s", handle.url)
    serve_until_stopped(handle, f"mcp_ref: serving MCP at {handle.url} (legacy SSE at {handle.sse_url})", ready)
