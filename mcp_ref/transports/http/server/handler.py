"""The standard library's ``http.server`` carrying MCP: HTTP/1.1 framing around ``http_core``.

The Streamable HTTP rules live in ``http_core`` (shared with the WSGI adapter,
``wsgi``); this module only reads a request off the socket (transports/http/server/body.py:
``SocketRequest``) and writes the answer back. ``http_server`` owns
configuration and sessions (``self.app``). Spec: basic/transports#streamable-http; RFC 9112.

Rules:

1. A response is written in one write (status line, ``Server``, ``Date``, the
   core's headers, ``Content-Length``), or, for an SSE body, as HTTP/1.1
   chunks, one per event, ending with the last chunk. ``Connection: close``
   goes with any response after which the connection is closed.
2. An idle SSE stream learns that its client has gone by peeking at the
   socket (EOF; transports/http/server/body.py rule 2); that, or a write that fails, ends the
   body (``SseBody.close``) and the connection.
3. One shortcut (``http_session`` rule 7): the lone JSON answer to a POST is
   written by the thread that sends it (``HttpRequest.send_now``).
4. The request head is read by ``http_head`` (RFC 9112 §2-5; its rules), not by
   ``http.server``'s email-based parser, which took a quarter of the server's
   CPU per small call (bench/bench_http.py). ``http.server`` still reads the
   request line (414 beyond 64 KiB), refuses unknown methods (501) and runs the
   keep-alive loop; a refused head is answered by its ``send_error`` and closes
   the connection.
5. A connection that stalls is closed: a read that waits ``timeout`` seconds
   (300) for a byte ends it (an idle keep-alive connection, a head or body sent
   a byte at a time and then stopped), and so does a write that takes longer
   in total. On Linux the kernel keeps these clocks (``SO_RCVTIMEO``,
   ``SO_SNDTIMEO`` on a blocking socket; ``KernelTimedReader`` and
   ``KernelTimedWriter`` turn its ``EAGAIN`` into ``TimeoutError``, as a Python
   socket timeout would raise): a Python socket timeout makes CPython ``poll``
   before every ``recv`` and ``send``, three extra system calls per small call
   (``strace -c -f``: 6 per call against the floor's 3; bench/README.md,
   "Issue 17, target 7, fifth pass"). It also made the non-blocking peek of rule 2
   (``MSG_DONTWAIT``) wait for readability up to the timeout: an idle GET stream
   stopped sending keepalives and events, and a 2026-07-28 POST answered on
   an SSE stream waited for its client to send a byte. Elsewhere, and over TLS,
   the socket keeps CPython's timeout.
6. No request leaves its body on the connection (RFC 9112 §6.3 and §9.3;
   §11.2, request smuggling). An answer written before the body was read
   (the request was refused by a check that needs no body: ``Host``,
   ``Origin``, authorization, 404, 405, 406, ...; or it went to a route that
   takes none) is followed by reading the body and dropping it, when it has a
   ``Content-Length`` within ``max_body`` (transports/http/server/body.py rule 3); any other
   unread body (chunked, larger, an invalid length, its reading begun and
   refused) closes the connection (``Connection: close`` on the answer). The
   refusals of ``http.server`` itself (``send_error``: a refused head, 414,
   501) always close it. Otherwise the unread body would be taken for the
   next request: a web page could send a refused request whose body is an
   MCP request of its choosing, which would then run.
"""
import io
import socket
import struct
import sys
import time
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler

from mcp_ref.errors import get_logger
from mcp_ref.transports.http.sse import chunk
from mcp_ref.transports.http.server.body import SocketRequest
from mcp_ref.transports.http.server.core import HttpResponse, handle_request
from mcp_ref.transports.http.server.head import HeadRefused, read_head

log = get_logger("mcp_ref.http")

__all__ = ["McpRequestHandler"]

_date_cache = [0, ""]


def _http_date() -> str:
    """The Date header, formatted once per second."""
    now = int(time.time())
    if _date_cache[0] != now:
        _date_cache[:] = [now, formatdate(now, usegmt=True)]
    return _date_cache[1]


_TIMEVAL = struct.Struct("ll")         # struct timeval on 64-bit Linux: tv_sec, tv_usec
KERNEL_TIMEOUTS = sys.platform.startswith("linux") and _TIMEVAL.size == 16     # rule 5


def _timeval(seconds: float) -> bytes:
    """``seconds`` as a ``struct timeval``; never zero, which would mean no timeout."""
    whole = int(seconds)
    return _TIMEVAL.pack(whole, max(int((seconds - whole) * 1e6), 0 if whole else 1))


class KernelTimedReader(io.RawIOBase):
    """Rule 5: reads of a blocking socket whose kernel ends a wait (``SO_RCVTIMEO``) with
    ``EAGAIN``, raised here as the ``TimeoutError`` a Python socket timeout raises."""

    def __init__(self, sock: socket.socket):
        self._sock = sock

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        try:
            return self._sock.recv_into(buffer)
        except BlockingIOError:
            raise TimeoutError("timed out") from None

    def fileno(self) -> int:
        return self._sock.fileno()


class KernelTimedWriter(io.BufferedIOBase):
    """Rule 5: writes to that socket, each within ``timeout`` seconds in total, as
    ``sendall`` under a Python socket timeout. A blocking ``send`` returns once all is
    queued, or with what it sent when ``SO_SNDTIMEO`` (or a signal) stops it: the rest
    is sent with the kernel's clock set to the time left."""

    def __init__(self, sock: socket.socket, timeout: float):
        self._sock, self.timeout = sock, timeout

    def writable(self) -> bool:
        return True

    def write(self, data) -> int:
        start = time.monotonic()
        size = data.nbytes if isinstance(data, memoryview) else len(data)
        sent = self._send(data)
        if sent < size:
            with memoryview(data) as view, view.cast("B") as rest:
                try:
                    while sent < size:
                        left = self.timeout - (time.monotonic() - start)
                        if left <= 0:
                            raise TimeoutError("timed out")
                        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO, _timeval(left))
                        sent += self._send(rest[sent:])
                finally:
                    self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO, _timeval(self.timeout))
        return size

    def _send(self, data) -> int:
        try:
            return self._sock.send(data)
        except BlockingIOError:
            raise TimeoutError("timed out") from None

    def fileno(self) -> int:
        return self._sock.fileno()


class McpRequestHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "mcp_ref"
    sys_version = ""
    disable_nagle_algorithm = True
    timeout = 300                      # an idle keep-alive connection is closed after this

    head = None                        # the RequestHead of the request being served (rule 4)
    reading = None                     # its SocketRequest, until an answer is written (rule 6)

    @property
    def app(self):
        return self.server.app

    def setup(self) -> None:
        """Rule 5: the stall timeouts kept by the kernel where it can, else CPython's."""
        sock = self.request
        if not (KERNEL_TIMEOUTS and self.timeout and type(sock) is socket.socket and sock.gettimeout() is None):
            return super().setup()
        try:
            for option in (socket.SO_RCVTIMEO, socket.SO_SNDTIMEO):
                sock.setsockopt(socket.SOL_SOCKET, option, _timeval(self.timeout))
        except OSError:
            return super().setup()
        self.connection = sock
        if self.disable_nagle_algorithm:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, True)
        self.rfile = io.BufferedReader(KernelTimedReader(sock))
        self.wfile = KernelTimedWriter(sock, self.timeout)

    @property
    def headers(self) -> "HeadFields":
        """The request's header fields, names in any case (what ``http.server`` kept here)."""
        return HeadFields(self.head.fields if self.head is not None else [])

    def parse_request(self) -> bool:
        """Rule 4: the head by ``http_head``; False when it was refused (and answered)."""
        self.command, self.request_version, self.close_connection = None, "HTTP/1.1", True
        line = self.raw_requestline
        self.requestline = str(line, "latin-1").rstrip("\r\n")
        if not self.requestline:
            return False                              # as http.server: an empty line ends the connection
        try:
            head = read_head(line, self.rfile)
        except HeadRefused as refused:
            self.send_error(refused.status, explain=refused.message)
            return False
        self.head = head
        self.command, self.path, self.request_version = head.method, head.target, head.version
        self.close_connection = head.close
        if head.expect_continue:
            return self.handle_expect_100()
        return True

    def send_error(self, code, message=None, explain=None) -> None:
        """Rule 6: ``http.server``'s own refusals close the connection (a body stays unread)."""
        self.close_connection = True
        super().send_error(code, message, explain)

    def log_message(self, format, *args) -> None:
        if log.isEnabledFor(10):                         # logging.DEBUG
            log.debug("%s - %s", self.address_string(), format % args)

    def log_request(self, code="-", size="-") -> None:
        """Every response is logged at debug level: its line is formatted only then."""
        if log.isEnabledFor(10):
            super().log_request(code, size)

    def do_POST(self):
        self._dispatch()

    def do_GET(self):
        self._dispatch()

    def do_DELETE(self):
        self._dispatch()

    do_PUT = do_PATCH = do_OPTIONS = do_POST

    def _dispatch(self) -> None:
        request = self.reading = SocketRequest(self)
        request.send_now = self._write_response
        try:
            response = handle_request(self.app, request)
            if response.close:
                self.close_connection = True
            if not response.sent:
                self._write_response(response)
        except OSError:                                   # the client went away
            self.close_connection = True
        except Exception:                                 # a stream failed after its head was sent
            log.exception("HTTP %s %s failed", self.command, self.path)
            self.close_connection = True

    def _local_address(self) -> str:
        """The address this connection arrived on (the Host check of a wildcard bind)."""
        return self.connection.getsockname()[0]

    def _write_response(self, response: HttpResponse) -> None:
        """Rules 1 and 6 (on a pool worker for rule 3's shortcut)."""
        if response.close:
            self.close_connection = True
        reading, self.reading = self.reading, None
        unread = 0
        if reading is not None and not self.close_connection:
            unread = reading.unread_length(self.app.max_body)             # rule 6
            if unread is None:
                self.close_connection = True
        try:
            if not response.streamed:
                self._head(response.status, response.headers, response.body)
            else:
                body = response.body
                try:
                    self._head(response.status, response.headers, stream=True)
                    write = self.wfile.write
                    for data in body:
                        write(chunk(data))
                    write(chunk(b""))
                finally:
                    body.close()
            if unread:
                reading.drop_body(unread)                                 # rule 6, after the answer
        except OSError:
            self.close_connection = True
            raise

    def _head(self, status: int, headers=(), body: bytes = b"", *, stream: bool = False) -> None:
        """Write the status line, headers and (unless ``stream``) the whole body in one write."""
        lines = [f"HTTP/1.1 {status} {self.responses[status][0]}", "Server: mcp_ref",
                 f"Date: {_http_date()}"]
        lines += [f"{name}: {value}" for name, value in headers]
        lines.append("Transfer-Encoding: chunked" if stream else f"Content-Length: {len(body)}")
        if self.close_connection:
            lines.append("Connection: close")
        self.wfile.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body)
        self.log_request(status)


class HeadFields:
    """A read-only view of a request's header fields with case-insensitive names: ``get``
    and ``[]`` give the first value (``None`` when absent), as ``http.client.HTTPMessage`` did."""

    __slots__ = ("fields",)

    def __init__(self, fields: list):
        self.fields = fields

    def get_all(self, name: str, default=None):
        name = name.lower()
        return [value for key, value in self.fields if key == name] or default

    def get(self, name: str, default=None):
        return (self.get_all(name) or [default])[0]

    __getitem__ = get

    def __contains__(self, name: str) -> bool:
        return self.get_all(name) is not None

    def items(self) -> list:
        """``(name, value)`` pairs in order, names in lower case."""
        return list(self.fields)
