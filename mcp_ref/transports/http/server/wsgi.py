"""The MCP endpoint as a WSGI application (PEP 3333): mount it in Flask or Django, serve it
with gunicorn, uWSGI, waitress, mod_wsgi, or the standard library's ``wsgiref``.

``WsgiApp`` (``Server.wsgi_app(path="/mcp", **options)``) is a thin adapter
around ``http_core``, the same request handler ``serve_http`` uses: the
same options, status codes, headers and bodies. ``start_wsgi`` and
``serve_wsgi`` run any WSGI application on ``wsgiref`` with a thread per
connection: the no-dependency server. Spec: basic/transports#streamable-http,
#session-management; PEP 3333.

Rules:

1. The request: the path is ``SCRIPT_NAME + PATH_INFO`` (the mount point
   included, so ``path`` is what clients see: ``DispatcherMiddleware`` at
   ``/mcp`` and ``path="/mcp"`` agree); the body is read from ``wsgi.input``
   by ``CONTENT_LENGTH`` (over ``max_body`` → 413), or to its end when the
   server has decoded a chunked body (``wsgi.input_terminated``), else 411.
   Framing (chunked encoding, ``Connection``, ``Date``) is the server's: the
   application sends no hop-by-hop header, and ``Content-Length`` with every
   body that is not a stream. So is a body left unread by a refusal: the
   server must not read it as the next request; ``wsgiref`` answers one
   request per connection and closes it.
2. An SSE response is an iterable yielding each event as it comes, on the
   server's thread for the request (the connection thread); the session's
   work still runs on the application's ``workers`` pool. It ends when the
   session closes, when the stream's last response is sent, or when the
   server calls ``close()`` (the client went away: a write failed). A
   stream with nothing to send at once starts with a comment: a WSGI server
   sends the headers only with the first bytes of the body. With
   gunicorn, use threaded workers (``-k gthread``) for SSE: a sync worker
   holds one request at a time and is killed after ``--timeout`` seconds.
3. ``Host`` (DNS rebinding): without ``allowed_hosts`` only loopback names are
   accepted (any port); behind a real name, list it. With ``auth=``,
   ``resource_metadata`` must name the ``resource`` (the URL clients use):
   the application cannot learn it from a request it has not checked yet.
4. Sessions live in the memory of one process. With several worker
   processes, route every request of a session to the process that created
   it (sticky routing by the ``Mcp-Session-Id`` header), or serve
   ``stateless=True``. A request reaching a process that does not know its
   session gets 404, saying so; an MCP client then starts a new session
   (basic/transports#session-management).
5. The session reaper and the worker pool start with the first request in
   each process (after a fork, not before). ``close()`` ends every session.
6. A client leaving: a WSGI application sees no socket, so the client's
   leaving is known only when a write fails and the server closes the body
   (``http_types`` rules 2 and 3), except under gunicorn, whose
   ``gunicorn.socket`` lets an idle stream and a waiting 2026-07-28 request
   look for EOF as the built-in server does. So, without it, a 2026-07-28
   request answered as SSE is cancelled at the next event or keepalive
   comment after its client left; one answered as JSON runs to its end (its
   answer then goes nowhere).
"""
import os
import threading
from http import HTTPStatus
from typing import Optional
from urllib.parse import quote
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer

from mcp_ref.transports.http.server.core import BodyRefused, HttpRequest, handle_request
from mcp_ref.transports.http.server.app import HttpApp
from mcp_ref.transports.http.server.body import peer_closed
from mcp_ref.transports.http.server.handler import McpRequestHandler
from mcp_ref.transports.http.server.listener import ConnectionServer, ServerHandle, serve_until_stopped
from mcp_ref.transports.http.server.types import error, read_sized, read_up_to

__all__ = ["WsgiApp", "wsgi_app", "start_wsgi", "serve_wsgi", "WsgiServerHandle"]

UNKNOWN_HERE = (" (this server process does not know it: with several worker processes, route each session "
                "to one process by its Mcp-Session-Id, or serve stateless; start a new session)")


class _WsgiRequest(HttpRequest):
    """Rule 1: an ``HttpRequest`` from a WSGI environ."""

    def __init__(self, environ: dict):
        headers = {key[5:].replace("_", "-").lower(): value for key, value in environ.items()
                   if key.startswith("HTTP_")}
        for key in ("CONTENT_TYPE", "CONTENT_LENGTH"):
            if environ.get(key):
                headers[key.replace("_", "-").lower()] = environ[key]
        target = quote(environ.get("SCRIPT_NAME", "") + environ.get("PATH_INFO", ""), safe="/;=,@:!$&'()*+~")
        if environ.get("QUERY_STRING"):
            target += "?" + environ["QUERY_STRING"]
        super().__init__(environ["REQUEST_METHOD"].upper(), target or "/", headers)
        self.environ = environ

    def read_body(self, limit: int) -> bytes:
        stream = self.environ["wsgi.input"]
        length = (self.environ.get("CONTENT_LENGTH") or "").strip()
        if length:
            return read_sized(stream.read, int(length) if length.isdigit() and length.isascii() else -1, limit)
        if self.environ.get("wsgi.input_terminated"):       # a chunked body the server decodes
            body = read_up_to(stream.read, limit + 1)
            if len(body) > limit:
                raise BodyRefused(413, f"Payload Too Large: the limit is {limit} bytes")
            return body
        raise BodyRefused(411, "Length Required: send the body with a Content-Length")

    def client_gone(self) -> bool:
        """Rule 6: gunicorn hands over its socket: EOF there means the client has gone."""
        sock = self.environ.get("gunicorn.socket")      # without it, a failed write tells (the server closes the body)
        return sock is not None and peer_closed(sock)


class WsgiApp:
    """The MCP endpoint as a PEP 3333 application (see the module rules). Options:
    ``serve_http``'s, but for the socket ones (``ssl_context``, ``backlog``: the
    WSGI server's business)."""

    def __init__(self, server, *, path: str = "/mcp", **options):
        if "host" in options:
            raise TypeError("wsgi_app takes no host: the WSGI server binds; list the names clients use in "
                            "allowed_hosts")
        self.app = HttpApp(server, path=path, **options)
        self.app.unknown_session_hint = UNKNOWN_HERE
        guard = self.app.guard
        if guard is not None:
            if not guard.metadata.get("resource"):
                raise ValueError("wsgi_app with auth= needs resource_metadata={'resource': ...}: the URL "
                                 "clients use, which its tokens' audience names")
            guard.bind(guard.metadata["resource"])
        self.path = path
        self._pid: Optional[int] = None
        self._lock = threading.Lock()

    def __call__(self, environ, start_response):
        with self._lock:                          # rule 5: once per process, on its first request
            if self._pid != os.getpid():
                self._pid = os.getpid()
                self.app.start()
        try:
            response = handle_request(self.app, _WsgiRequest(environ))
        except OSError:                     # the body could not be read: the client has gone
            response = error(400, "Bad Request: the body could not be read")
        status = f"{response.status} {HTTPStatus(response.status).phrase}"
        headers = [(name, str(value)) for name, value in response.headers]
        if response.streamed:
            response.body.open_now()
        elif response.status != 204:
            headers.append(("Content-Length", str(len(response.body))))
        start_response(status, headers)
        return response.body if response.streamed else [response.body]   # rule 2: a stream is iterated, then closed

    @property
    def session_count(self) -> int:
        return self.app.session_count

    def close(self) -> None:
        """End every session of this process (their streams end too)."""
        self.app.close()


def wsgi_app(server, path: str = "/mcp", **options) -> WsgiApp:
    """``server`` (a ``Server``) as a WSGI application answering at ``path``."""
    return WsgiApp(server, path=path, **options)


class _QuietHandler(WSGIRequestHandler):
    log_message = McpRequestHandler.log_message          # at debug level, as serve_http's


class _WsgiServer(ConnectionServer, WSGIServer):
    """``wsgiref`` with a thread per connection (``mcp-wsgi-conn-N``), tracked as ``serve_http``'s are."""

    thread_name = "mcp-wsgi-conn"

    def server_bind(self) -> None:
        super().server_bind()
        self.setup_environ()


class WsgiServerHandle(ServerHandle):
    """A running ``wsgiref`` server (from ``start_wsgi``): ``url``, ``port``, ``shutdown()``."""

    def __init__(self, httpd: _WsgiServer, app):
        super().__init__(httpd, app, getattr(app, "path", None) or "/", "mcp-wsgi-server")


def start_wsgi(app, address=("127.0.0.1", 0)) -> WsgiServerHandle:
    """Serve the WSGI application ``app`` with ``wsgiref`` (a thread per connection) in the
    background; returns at once, listening. ``(host, 0)`` picks a free port."""
    httpd = _WsgiServer(address, _QuietHandler)
    httpd.set_app(app)
    return WsgiServerHandle(httpd, app).start()


def serve_wsgi(app, address=("127.0.0.1", 8000), *, ready=None) -> None:
    """``start_wsgi`` until SIGINT/SIGTERM (or ``handle.shutdown()``); prints a readiness line.
    ``ready``: a callable given the handle, or an Event to set, once listening."""
    handle = start_wsgi(app, address)
    serve_until_stopped(handle, f"mcp_ref: serving WSGI at {handle.url}", ready)
