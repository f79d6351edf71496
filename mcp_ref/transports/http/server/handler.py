"""The standard library's ``http.server`` carrying MCP: HTTP/1.1 framing around ``http_core``.

The Streamable HTTP rules live in ``http_core`` (shared with the WSGI adapter,
``wsgi``); this module only reads a request off the socket (transports/http/server/body.py:
``SocketRequest``) and writes the answer back. ``http_server`` owns
configuration and sessions (``self.server.app``). Spec: basic/transports#streamable-http; RFC 9112.

Rules:

1. A response is written in one write (status line, ``Server``, ``Date``, the
   core's headers, ``Content-Length``), or, for an SSE body, as HTTP/1.1
   chunks, one per event, ending with the last chunk. ``Connection: close``
   goes with any response after which the connection is closed.
2. An idle SSE stream learns that its client has gone by peeking at the
   socket (EOF; transports/http/server/body.py rule 2); that, or a write that fails, ends the
   body (``SseBody.close``) and the connection.
3. The request head is read by ``http.server`` (``parse_request``: the request
   line, 414 beyond 64 KiB, 505 for HTTP/2 and later, 501 for an unknown
   method; ``http.client.parse_headers``: 431 for a line over 64 KiB or more
   than ``MAX_FIELDS`` lines, Expect: 100-continue). ``head_problem`` then
   refuses what that lenient parser lets through (RFC 9112 §2-5, RFC 9110
   §5.5): a request line not ``method SP target SP HTTP/1.x`` (400; other
   majors 505), a field name not a token, a line that is no field, a folded
   line (§5.2), a bare CR that split a line (``LineReader``; §2.2), a control
   byte in a value (400), more than one ``Host`` (400: which one would the
   rebinding check of ``http_server`` rule 2 trust?), field lines over
   ``MAX_HEAD`` bytes together (431). ``Connection`` is read as a token list
   (§9.3: ``close``; an HTTP/1.0 request persists only with ``keep-alive``).
   A refused head is answered by ``send_error`` and closes the connection.
4. The request's header values reach the core in a dict of lower-case names
   (the last value of a repeated name), without surrounding whitespace.
5. A connection that stalls is closed: each read and write of the socket
   waits at most ``timeout`` seconds (300; Python's socket timeout): an idle
   keep-alive connection, a head or body sent a byte at a time and then
   stopped. Rule 2's peek first asks ``poll`` with no wait whether anything
   is there: a peek under a socket timeout would wait for a byte (an idle GET
   stream would stop its keepalives; a POST answered on SSE would wait for its
   client to send something).
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
import re
from email.message import Message
from http.server import BaseHTTPRequestHandler
from typing import Optional

from mcp_ref.errors import get_logger
from mcp_ref.transports.http.server.body import SocketRequest
from mcp_ref.transports.http.server.core import handle_request
from mcp_ref.transports.http.server.types import read_up_to
from mcp_ref.transports.http.sse import chunk

log = get_logger("mcp_ref.http")

__all__ = ["McpRequestHandler", "MAX_HEAD", "MAX_FIELDS"]

MAX_HEAD = 65536               # bytes of the field lines together, CRLFs included (rule 3)
MAX_FIELDS = 99                # http.client's bound: 100 lines, the empty one included (rule 3)
_REQUEST_LINE = re.compile(rb"[!#$%&'*+\-.^_`|~0-9A-Za-z]+ [\x21-\x7e]+ HTTP/([0-9])\.[0-9]\r?\n")
_NAME = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")         # a token (RFC 9110 §5.6.2)
_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")


def head_problem(request_line: bytes, fields: Message, bare_cr: bool) -> Optional[tuple]:
    """Rule 3: ``(status, reason)`` for a head ``http.server`` read but RFC 9112 refuses."""
    line = _REQUEST_LINE.fullmatch(request_line)
    if line is None:
        return 400, f"Bad Request: malformed request line {request_line[:80]!r}"
    if line.group(1) != b"1":
        return 505, f"HTTP Version Not Supported: {request_line.split()[-1].decode('ascii')}"
    if fields.defects or fields.get_payload():
        return 400, "Bad Request: a header field name must be a token followed by ':' with no whitespace"
    if bare_cr:
        return 400, "Bad Request: a bare CR in a header field"
    for name, value in fields.items():
        if not _NAME.fullmatch(name):
            return 400, f"Bad Request: a header field name must be a token followed by ':': {name[:80]!r}"
        if "\n" in value:
            return 400, f"Bad Request: obsolete line folding (RFC 9112 §5.2) in {name!r}"
        if _CONTROL.search(value):
            return 400, f"Bad Request: a control character in a header field value ({name!r})"
    if sum(len(name) + len(value) + 4 for name, value in fields.items()) > MAX_HEAD:     # "name: value\r\n"
        return 431, f"Request Header Fields Too Large: the header section exceeds {MAX_HEAD} bytes"
    if len(fields.get_all("host") or ()) > 1:
        return 400, "Bad Request: more than one Host header field"
    return None


class LineReader(io.BufferedReader):
    """The connection's reader; notes a line with a bare CR (rule 3: the email parser
    behind ``http.server`` splits a line there, making two fields of one)."""

    bare_cr = False

    def readline(self, size: Optional[int] = -1) -> bytes:
        line = super().readline(size)
        if b"\r" in line[:-2] or line[-2:] == b"\r":
            self.bare_cr = True
        return line


class McpRequestHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "mcp_ref"
    sys_version = ""
    disable_nagle_algorithm = True
    timeout = 300                      # an idle keep-alive connection is closed after this

    fields: dict = {}                  # the request's header values, lower-case names (rule 4)

    def setup(self) -> None:
        """Rule 5 (Python's socket timeout) and rule 3's ``LineReader``."""
        super().setup()
        self.rfile = LineReader(self.rfile.detach())  # type: ignore[attr-defined]

    def parse_request(self) -> bool:
        """Rule 3: ``http.server``'s parse, then the checks it lacks; False when refused."""
        self.rfile.bare_cr = False  # type: ignore[attr-defined]
        if not super().parse_request():
            return False
        problem = head_problem(self.raw_requestline, self.headers, self.rfile.bare_cr)  # type: ignore[attr-defined]
        if problem is not None:
            self.send_error(problem[0], explain=problem[1])
            return False
        connection = {token.strip().lower() for value in self.headers.get_all("connection") or ()
                      for token in value.split(",")}                      # rule 3, RFC 9112 §9.3
        self.close_connection = "close" in connection or (
            self.request_version == "HTTP/1.0" and "keep-alive" not in connection)
        self.fields = {name.lower(): value.strip(" \t") for name, value in self.headers.items()}
        return True

    def send_error(self, code: int, message: Optional[str] = None, explain: Optional[str] = None) -> None:
        """Rule 6: ``http.server``'s own refusals close the connection (a body stays unread)."""
        self.close_connection = True
        self.request_version = "HTTP/1.1"         # a status line even for an "HTTP/0.9" request
        super().send_error(code, message, explain)

    def log_message(self, format, *args) -> None:
        log.debug("%s - %s", self.address_string(), format % args)

    def do_POST(self) -> None:
        """Rules 1 and 6: the core's answer, written; then a body it left unread is dropped."""
        request = SocketRequest(self)
        try:
            app = self.server.app                          # type: ignore[attr-defined]  # set by start_http
            response = handle_request(app, request)
            if response.close:
                self.close_connection = True
            if response.sent:
                return
            unread = 0 if self.close_connection else request.unread_length(app.max_body)           # rule 6
            if unread is None:
                self.close_connection = True
            if not response.streamed:
                self._head(response.status, response.headers, response.body)
            else:
                try:
                    self._head(response.status, response.headers, stream=True)
                    for data in response.body:
                        self.wfile.write(chunk(data))
                    self.wfile.write(chunk(b""))
                finally:
                    response.body.close()
            if unread:
                read_up_to(self.rfile.read, unread)        # rule 6: dropped after the answer
        except OSError:                                   # the client went away
            self.close_connection = True
        except Exception:                                 # a stream failed after its head was sent
            log.exception("HTTP %s %s failed", self.command, self.path)
            self.close_connection = True

    do_GET = do_DELETE = do_PUT = do_PATCH = do_OPTIONS = do_POST

    def _head(self, status: int, headers=(), body: bytes = b"", *, stream: bool = False) -> None:
        """Write the status line, headers and (unless ``stream``) the whole body in one write."""
        lines = [f"HTTP/1.1 {status} {self.responses[status][0]}", "Server: mcp_ref",
                 f"Date: {self.date_time_string()}"]
        lines += [f"{name}: {value}" for name, value in headers]
        lines.append("Transfer-Encoding: chunked" if stream else f"Content-Length: {len(body)}")
        if self.close_connection:
            lines.append("Connection: close")
        self.wfile.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body)
        self.log_request(status)

