"""The request of ``http.server`` as ``http_core`` reads it: the body (``Content-Length``
or chunked, under ``max_body``), whether the client is still there, and the
headers read once. ``SocketRequest`` is built by ``McpRequestHandler``
(transports/http/server/handler.py), which writes the answer. Spec: basic/transports#streamable-http;
RFC 9112 sections 6 and 7.1 (message body, chunked transfer coding).

Rules:

1. A POST body comes with ``Content-Length`` or ``Transfer-Encoding: chunked``
   (RFC 9112 §6, §7.1), decoded here under the ``max_body`` limit: 413 as
   soon as the announced chunks exceed it, before reading them. Neither header
   → 411; both, conflicting ``Content-Length`` values, malformed chunk framing
   (strict CRLF, hex sizes) or ``chunked`` not last → 400; another transfer
   coding → 501. Chunk extensions and trailer fields are read and ignored;
   the framing around the data may add no more than ``max(max_body, 64 KiB)``
   bytes (413 beyond). After any refusal the connection is closed (the body
   stays unread).
2. The client has gone when its end of the socket is at EOF (a peek, without
   reading; TLS takes no flags, so there it is never known before a write
   fails).
3. A body the answer did not need, left unread, is dropped: transports/http/server/handler.py
   rule 6 asks ``unread_length`` before the answer and reads that many bytes
   after it. Only a ``Content-Length`` body within ``max_body`` can be; a
   chunked one, a larger one, an invalid length, or a body whose reading was
   begun and refused cannot, and the connection closes.
"""
from __future__ import annotations

import select
import socket
from typing import Optional

from mcp_ref.transports.http.server.types import BodyRefused, HttpRequest, read_sized

MAX_CHUNK_LINE = 4096          # bytes of one chunk-size line (with extensions) or trailer line, CRLF included
FRAMING_MIN = 64 * 1024        # chunk framing allowed beyond the data, at least (rule 1)
_HEX = frozenset(b"0123456789abcdefABCDEF")
UNREAD, BEGUN, READ = "unread", "begun", "read"   # SocketRequest.body_state (rule 3)


class SocketRequest(HttpRequest):
    """An ``HttpRequest`` read off a ``BaseHTTPRequestHandler`` (rules 1 to 3)."""

    def __init__(self, handler):
        super().__init__(handler.command, handler.path, handler.fields,
                         lambda: handler.connection.getsockname()[0])     # the Host check of a wildcard bind
        self.handler = handler
        self.body_state = UNREAD

    def read_body(self, limit: int) -> bytes:
        """Rule 1."""
        self.body_state = BEGUN
        codings = [c.strip().lower() for value in self.handler.headers.get_all("transfer-encoding", ())
                   for c in value.split(",") if c.strip()]
        length = self._content_length()
        if codings:
            if length is not None:    # RFC 9112 §6.3: a request smuggling risk; refuse rather than guess
                raise BodyRefused(400, "Bad Request: both Transfer-Encoding and Content-Length")
            if self.handler.request_version == "HTTP/1.0":        # RFC 9112 §6.1: faulty framing
                raise BodyRefused(400, "Bad Request: Transfer-Encoding in an HTTP/1.0 request")
            if codings[-1] != "chunked" or "chunked" in codings[:-1]:
                raise BodyRefused(400, "Bad Request: chunked must be the last transfer coding, once")
            if len(codings) > 1:
                raise BodyRefused(501, f"Not Implemented: transfer coding {', '.join(codings[:-1])!r}; send "
                                       "the body chunked or with a Content-Length")
            body = self._read_chunked(limit)
        elif length is None:
            raise BodyRefused(411, "Length Required: send the body with a Content-Length or "
                                   "Transfer-Encoding: chunked")
        else:
            body = read_sized(self.handler.rfile.read, length, limit)
        self.body_state = READ
        return body

    def _content_length(self) -> Optional[int]:
        """The Content-Length (several equal ones count as one); None without one, -1 when
        invalid (not digits, or values that differ)."""
        lengths = {v.strip() for v in self.handler.headers.get_all("content-length", ())}
        if not lengths:
            return None
        length = lengths.pop() if len(lengths) == 1 else ""
        return int(length) if length.isdigit() and length.isascii() else -1

    def _read_chunked(self, limit: int) -> bytes:
        """Decode a chunked body (rule 1; RFC 9112 §7.1):
        ``*(hex-size [;ext] CRLF data CRLF) 0 [;ext] CRLF *(trailer CRLF) CRLF``."""
        framing = max(limit, FRAMING_MIN)
        framing_left = framing                           # size lines, CRLFs and trailers together
        too_much_framing = f"Payload Too Large: the chunk framing exceeds {framing} bytes"
        rfile, body = self.handler.rfile, bytearray()
        while True:
            line = rfile.readline(MAX_CHUNK_LINE + 1)
            if not line:
                raise BodyRefused(400, "Bad Request: the chunked body ended before its last chunk")
            framing_left -= len(line)
            if framing_left < 0:
                raise BodyRefused(413, too_much_framing)
            # chunk-size [chunk-ext] CRLF, strictly: CRLF only, no bare CR, 1*HEXDIG with nothing before
            # it (whitespace only before ";"); extensions are not interpreted.
            digits, semicolon, _extensions = line[:-2].partition(b";")
            digits = digits.rstrip(b" \t") if semicolon else digits
            if (len(line) > MAX_CHUNK_LINE or not line.endswith(b"\r\n") or b"\r" in line[:-2]
                    or not digits or not _HEX.issuperset(digits)):
                raise BodyRefused(400, f"Bad Request: malformed chunk size line {line[:40]!r}")
            size = int(digits, 16)
            if size == 0:
                break
            if len(body) + size > limit:
                raise BodyRefused(413, f"Payload Too Large: the limit is {limit} bytes")
            data = rfile.read(size)
            if len(data) < size:
                raise BodyRefused(400, "Bad Request: the chunked body ended inside a chunk")
            if rfile.read(2) != b"\r\n":
                raise BodyRefused(400, "Bad Request: a chunk's data is not followed by CRLF")
            framing_left -= 2
            body += data
        while True:                                        # the trailer section, ignored
            line = rfile.readline(MAX_CHUNK_LINE + 1)
            framing_left -= len(line)
            if line == b"\r\n":
                return bytes(body)
            if framing_left < 0:
                raise BodyRefused(413, too_much_framing)
            if not line.endswith(b"\r\n") or b":" not in line or b"\r" in line[:-2]:
                raise BodyRefused(400, "Bad Request: malformed trailer section of a chunked body")

    def unread_length(self, limit: int) -> Optional[int]:
        """Rule 3: the bytes of body still on the connection, to be dropped: 0 when the body
        was read or none was sent; None when it cannot be dropped (chunked, beyond ``limit``,
        an invalid length, a reading begun and refused): the connection must close."""
        if self.body_state != UNREAD:
            return 0 if self.body_state == READ else None
        if "transfer-encoding" in self.headers:
            return None
        length = self._content_length()
        return 0 if length is None else (length if 0 <= length <= limit else None)    # none: no body (§6.3)

    def client_gone(self) -> bool:
        return peer_closed(self.handler.connection)


def peer_closed(sock) -> bool:
    """Rule 2: EOF waiting to be read on ``sock``. ``poll`` first, without waiting: under a
    socket timeout the peek itself would wait for a byte (transports/http/server/handler.py rule 5)."""
    poller = select.poll()
    poller.register(sock, select.POLLIN)
    if not poller.poll(0):
        return False
    try:
        return sock.recv(1, socket.MSG_PEEK) == b""
    except (BlockingIOError, ValueError):      # nothing to read; or TLS, which takes no flags
        return False
    except OSError:
        return True
