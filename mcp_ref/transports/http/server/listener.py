"""The listening side both HTTP servers share: a thread per connection, each one tracked
so that shutdown ends it, a handle that runs the server in the background, and the loop
that waits for SIGINT/SIGTERM. ``app.py`` (``serve_http``: ``http.server`` carrying
``McpRequestHandler``) and ``wsgi.py`` (``serve_wsgi``: ``wsgiref`` carrying any WSGI
application) each add only their request handler. The rules are app.py's rules 3 to 5.
"""
import contextlib
import itertools
import signal
import socket
import socketserver
import threading
import time
from http.server import HTTPServer

from mcp_ref.errors import get_logger

log = get_logger("mcp_ref.http")

__all__ = ["ConnectionServer", "ServerHandle", "serve_until_stopped", "DEFAULT_BACKLOG"]

DEFAULT_BACKLOG = max(socket.SOMAXCONN, 128)   # connections the kernel may hold before accept() (app.py rule 5)


class ConnectionServer(HTTPServer):
    """A server with a thread per connection (``<thread_name>-N``), each one tracked so that
    shutdown ends it (app.py rule 3); the base of ``serve_http``'s server and of ``wsgi``'s."""

    daemon_threads = True
    allow_reuse_address = True
    thread_name = "mcp-http-conn"

    def __init__(self, address, handler, ssl_context=None, backlog: int = DEFAULT_BACKLOG):
        self.ssl_context = ssl_context
        if backlog < 1:
            raise ValueError(f"backlog must be at least 1, not {backlog!r}")
        self.request_queue_size = backlog          # app.py rule 5: socketserver's default is 5
        self._connections: dict = {}               # connection thread -> its socket
        self._connections_lock = threading.Lock()
        self._numbers = itertools.count(1)
        if ":" in address[0]:
            self.address_family = socket.AF_INET6
        super().__init__((address[0].strip("[]"), int(address[1])), handler)

    def server_bind(self) -> None:
        socketserver.TCPServer.server_bind(self)          # no getfqdn(): it may wait on DNS
        self.server_name, self.server_port = str(self.server_address[0]), self.server_address[1]

    def get_request(self):
        sock, client_address = self.socket.accept()
        if self.ssl_context is not None:          # the handshake runs on the connection's thread
            sock = self.ssl_context.wrap_socket(sock, server_side=True, do_handshake_on_connect=False)
        return sock, client_address

    def process_request(self, request, client_address) -> None:
        thread = threading.Thread(target=self._serve_connection, args=(request, client_address),
                                  name=f"{self.thread_name}-{next(self._numbers)}", daemon=True)
        with self._connections_lock:
            self._connections[thread] = request
        thread.start()

    def _serve_connection(self, request, client_address) -> None:
        try:
            if self.ssl_context is not None:
                request.settimeout(30.0)
                request.do_handshake()
            self.finish_request(request, client_address)
        except Exception:
            self.handle_error(request, client_address)
        finally:
            self.shutdown_request(request)
            with self._connections_lock:
                self._connections.pop(threading.current_thread(), None)

    def handle_error(self, request, client_address) -> None:
        log.debug("HTTP connection from %s failed", client_address, exc_info=True)

    def close_connections(self, timeout: float = 2.0) -> None:
        """app.py rule 3: stop reading every connection (an idle keep-alive one ends at once; one
        finishing a response writes its end first), then cut what is left."""
        with self._connections_lock:
            connections = list(self._connections.items())
        deadline = time.monotonic() + timeout
        for how in (socket.SHUT_RD, socket.SHUT_RDWR):
            for _, sock in connections:
                with contextlib.suppress(OSError):
                    sock.shutdown(how)
            for thread, _ in connections:
                thread.join(max(0.0, deadline - time.monotonic()) / 2)
            connections = [(t, s) for t, s in connections if t.is_alive()]


class ServerHandle:
    """A running server (from ``start_http`` or ``wsgi.start_wsgi``): ``url``, ``port``,
    ``shutdown()``; a context manager."""

    def __init__(self, httpd: ConnectionServer, app, path: str, thread_name: str):
        self.httpd, self.app = httpd, app
        self.host, self.port = httpd.server_name, httpd.server_port      # set by server_bind
        host = f"[{self.host}]" if ":" in self.host else self.host
        scheme = "https" if httpd.ssl_context is not None else "http"
        self.base_url = f"{scheme}://{host}:{self.port}"
        self.url = self.base_url + path
        self._thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.1},
                                        name=thread_name, daemon=True)
        self._closed = False
        self.stopping = threading.Event()        # set by shutdown() (or a signal, in serve_until_stopped)

    def start(self):
        self._thread.start()
        return self

    def shutdown(self) -> None:
        """Stop accepting, close every session and stream (when the application has ``close``),
        end every connection thread. Idempotent."""
        if self._closed:
            return
        self._closed = True
        self.stopping.set()
        self.httpd.shutdown()
        close = getattr(self.app, "close", None)
        if close is not None:
            close()
        self.httpd.close_connections()
        self._thread.join(2.0)
        self.httpd.server_close()

    close = shutdown

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.shutdown()


def serve_until_stopped(handle: ServerHandle, line: str, ready=None) -> None:
    """Print ``line`` (the readiness line), tell ``ready`` (a callable given the handle, or an
    Event to set), then wait for SIGINT/SIGTERM (handlers on the main thread only: app.py rule 4) or
    ``handle.shutdown()``; shut the handle down."""
    previous = {}
    if threading.current_thread() is threading.main_thread():
        for signum in (signal.SIGINT, signal.SIGTERM):
            previous[signum] = signal.signal(signum, lambda *_: handle.stopping.set())
    try:
        print(line, flush=True)
        if ready is not None:
            ready.set() if hasattr(ready, "set") else ready(handle)
        while not handle.stopping.wait(0.5):
            pass
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        handle.shutdown()
