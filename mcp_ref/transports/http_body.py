"""Bytes in and out of one HTTP request to the MCP server: the body read
(``Content-Length`` or chunked, under ``max_body``: rule 1 of http_handler.py)
and the response written (JSON, or an SSE stream with keepalive comments).

``BodyIO`` is a mix-in of ``McpRequestHandler`` (http_handler.py), which
decides what to read and what to answer. Spec: basic/transports#streamable-http;
RFC 9112 sections 6 and 7.1 (message body, chunked transfer coding).
"""
import queue
import socket
import time
from email.utils import formatdate
from http import HTTPStatus
from typing import Optional

from .. import lifecycle
from ..errors import INTERNAL_ERROR, INVALID_REQUEST
from ..messages import ErrorObject, ErrorResponse, encode
from ._sse import chunk, format_comment
from .http_session import CANCELLED

SESSION_HEADER = "Mcp-Session-Id"          # the headers of basic/transports
VERSION_HEADER = "MCP-Protocol-Version"
MODERN_POLL = 0.2             # seconds between looks at a 2026-07-28 client's connection (rule 8)
MAX_CHUNK_LINE = 4096          # bytes of one chunk-size line (with extensions) or trailer line, CRLF included
FRAMING_MIN = 64 * 1024        # chunk framing allowed beyond the data, at least (rule 1)
_HEX = frozenset(b"0123456789abcdefABCDEF")

_date_cache = [0, ""]


def _chunk_size(line: bytes) -> Optional[int]:
    """The size of a ``chunk-size [chunk-ext] CRLF`` line, None when malformed. Strict:
    CRLF only, no bare CR, 1*HEXDIG with nothing before it (whitespace is allowed only
    before ``;``); extensions are not interpreted."""
    if len(line) > MAX_CHUNK_LINE or not line.endswith(b"\r\n") or b"\r" in line[:-2]:
        return None
    size, semicolon, _extensions = line[:-2].partition(b";")
    if semicolon:
        size = size.rstrip(b" \t")
    if not size or not _HEX.issuperset(size):
        return None
    return int(size, 16)


def _http_date() -> str:
    """The Date header, formatted once per second."""
    now = int(time.time())
    if _date_cache[0] != now:
        _date_cache[:] = [now, formatdate(now, usegmt=True)]
    return _date_cache[1]


class BodyIO:
    """Reading the request body and writing the response (a mix-in)."""

    def _header_all(self, name: str) -> list:
        """Every value of a request header (lower-case name), in order."""
        return [value for key, value in self.headers.raw_items() if key.lower() == name]

    # ------------------------------------------------------------------ writing
    def _head(self, status: int, headers=(), body: bytes = b"", *, stream: bool = False) -> None:
        """Write the status line, headers and (unless ``stream``) the whole body in one write."""
        lines = [f"HTTP/1.1 {status} {HTTPStatus(status).phrase}", "Server: mcp_ref",
                 f"Date: {_http_date()}"]
        lines += [f"{name}: {value}" for name, value in headers]
        if stream:
            lines += ["Transfer-Encoding: chunked", "Cache-Control: no-cache, no-transform",
                      "X-Accel-Buffering: no"]
        else:
            lines.append(f"Content-Length: {len(body)}")
        if self.close_connection:
            lines.append("Connection: close")
        self._head_sent = True
        self.wfile.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body)
        self.log_request(status)

    def _json(self, status: int, payload, headers=()) -> None:
        body = encode(payload).encode("utf-8")
        self._head(status, [("Content-Type", "application/json")] + list(headers), body)

    def _error(self, status: int, code: int, message: str, headers=()) -> None:
        """Rule 1: a JSON-RPC error without id; never a stack trace."""
        self._json(status, ErrorResponse(None, ErrorObject(code, message)), headers)

    def _unavailable(self) -> None:
        self._error(503, INTERNAL_ERROR, "Service Unavailable: too many sessions", [("Retry-After", "5")])

    def _event(self, data: bytes) -> None:
        self.wfile.write(chunk(data))

    def _keepalive(self) -> None:
        """Rule 5: on an idle stream, notice a client that has gone (EOF), else send a comment."""
        if self._peer_gone():
            raise ConnectionResetError("the client closed the stream")
        self._event(format_comment("keepalive"))

    def _peer_gone(self) -> bool:
        """Whether the client closed its end of the connection (EOF waiting to be read)."""
        try:
            return self.connection.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b""
        except (BlockingIOError, ValueError):      # nothing to read; or TLS, which takes no flags
            return False
        except OSError:
            return True

    def _next(self, conn, transport, stream, timeout: Optional[float] = None):
        """The connection's next item. In a 2026-07-28 request, a client that closes the
        connection cancels the request (rule 8; Spec 2026-07-28:
        basic/transports/streamable-http#cancellation): checked every ``MODERN_POLL`` s."""
        if not getattr(self, "_modern", False):
            return conn.queue.get(timeout=timeout) if timeout is not None else conn.queue.get()
        end = None if timeout is None else time.monotonic() + timeout
        while True:
            wait = MODERN_POLL if end is None else max(0.0, min(MODERN_POLL, end - time.monotonic()))
            try:
                return conn.queue.get(timeout=wait)
            except queue.Empty:
                if self._peer_gone():
                    for request_id in list(stream.pending):
                        transport.session.cancel_inbound(request_id, "the client closed the response stream")
                    return CANCELLED
                if end is not None and time.monotonic() >= end:
                    raise

    # ------------------------------------------------------------------ reading
    def _read_body(self) -> Optional[bytes]:
        """The request body, or None after answering 415/411/413/400/501 (rule 1). A refused
        body stays unread, so the connection is closed after the answer."""
        ctype = self._header("content-type", "")
        if ctype.split(";")[0].strip().lower() != "application/json":
            return self._refuse(415, "Unsupported Media Type: Content-Type must be application/json")
        codings = [c.strip().lower() for value in self._header_all("transfer-encoding")
                   for c in value.split(",") if c.strip()]
        lengths = {v.strip() for v in self._header_all("content-length")}
        if codings:
            if lengths:          # RFC 9112 §6.3: a request smuggling risk; refuse rather than guess
                return self._refuse(400, "Bad Request: both Transfer-Encoding and Content-Length")
            if self.request_version == "HTTP/1.0":        # RFC 9112 §6.1: faulty framing
                return self._refuse(400, "Bad Request: Transfer-Encoding in an HTTP/1.0 request")
            if codings[-1] != "chunked" or "chunked" in codings[:-1]:
                return self._refuse(400, "Bad Request: chunked must be the last transfer coding, once")
            if len(codings) > 1:
                return self._refuse(501, f"Not Implemented: transfer coding "
                                         f"{', '.join(codings[:-1])!r}; send the body chunked or with a "
                                         "Content-Length")
            return self._read_chunked()
        if not lengths:
            return self._refuse(411, "Length Required: send the body with a Content-Length or "
                                     "Transfer-Encoding: chunked")
        length = lengths.pop() if len(lengths) == 1 else ""
        if not (length.isdigit() and length.isascii()):
            return self._refuse(400, "Bad Request: invalid Content-Length")
        size = int(length)
        if size > self.app.max_body:
            return self._refuse(413, f"Payload Too Large: the limit is {self.app.max_body} bytes")
        return self.rfile.read(size)

    def _read_chunked(self) -> Optional[bytes]:
        """Decode a chunked body (rule 1; RFC 9112 §7.1):
        ``*(hex-size [;ext] CRLF data CRLF) 0 [;ext] CRLF *(trailer CRLF) CRLF``."""
        limit = self.app.max_body
        framing = max(limit, FRAMING_MIN)
        framing_left = framing                           # size lines, CRLFs and trailers together
        too_much_framing = f"Payload Too Large: the chunk framing exceeds {framing} bytes"
        rfile, body = self.rfile, bytearray()
        while True:
            line = rfile.readline(MAX_CHUNK_LINE + 1)
            if not line:
                return self._refuse(400, "Bad Request: the chunked body ended before its last chunk")
            framing_left -= len(line)
            if framing_left < 0:
                return self._refuse(413, too_much_framing)
            size = _chunk_size(line)
            if size is None:
                return self._refuse(400, f"Bad Request: malformed chunk size line {line[:40]!r}")
            if size == 0:
                break
            if len(body) + size > limit:
                return self._refuse(413, f"Payload Too Large: the limit is {limit} bytes")
            data = rfile.read(size)
            if len(data) < size:
                return self._refuse(400, "Bad Request: the chunked body ended inside a chunk")
            if rfile.read(2) != b"\r\n":
                return self._refuse(400, "Bad Request: a chunk's data is not followed by CRLF")
            framing_left -= 2
            body += data
        while True:                                        # the trailer section, ignored
            line = rfile.readline(MAX_CHUNK_LINE + 1)
            framing_left -= len(line)
            if line == b"\r\n":
                return bytes(body)
            if framing_left < 0:
                return self._refuse(413, too_much_framing)
            if not line.endswith(b"\r\n") or b":" not in line or b"\r" in line[:-2]:
                return self._refuse(400, "Bad Request: malformed trailer section of a chunked body")

    def _refuse(self, status: int, message: str) -> None:
        self.close_connection = True
        self._error(status, INVALID_REQUEST, message)

    def _version_ok(self) -> bool:
        """Rule 3."""
        version = self._header("mcp-protocol-version")
        if version is not None and not lifecycle.is_supported(version):
            self._error(400, INVALID_REQUEST, f"Bad Request: unsupported {VERSION_HEADER}: {version!r} "
                                              f"(supported: {', '.join(lifecycle.LEGACY_REVISIONS)})")
            return False
        return True
