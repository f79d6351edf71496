"""The HTTP server reads a request's head strictly and within bounds (transports/http/server/handler.py
rule 3: ``http.server``'s parser and the checks after it;
RFC 9112 §2-5 and §9.3, RFC 9110 §5 and §10.1.1, RFC 6585 §5).

Each test sends raw bytes on a socket: a request line or header field that is
malformed, too large, folded, split by a bare CR, or sent a byte at a time; two
``Host`` fields; ``Content-Length`` and ``Transfer-Encoding`` as read by the body
rules; the persistence rules of HTTP/1.0 and 1.1; ``Expect: 100-continue``. A
refused head is answered with its status and the connection closed; the server
keeps serving. Bounded by socket timeouts; nothing asserts how long anything took.
Spec: basic/transports#streamable-http (every client message is an HTTP POST).
"""
import json
import socket

import pytest

from helpers import WAIT, http_tools_server, rpc
from mcp_ref.transports.http.server.handler import MAX_FIELDS, MAX_HEAD
from mcp_ref.transports.http.server.app import start_http

BODY = json.dumps(rpc(0, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                        "clientInfo": {"name": "head", "version": "1"}})).encode()


@pytest.fixture
def server():
    handle = start_http(http_tools_server("head"), ("127.0.0.1", 0), response_mode="json")
    try:
        yield handle
    finally:
        handle.shutdown()


class Conn:
    """One connection on a plain socket: send bytes, read whole responses."""

    def __init__(self, handle):
        self.sock = socket.create_connection(("127.0.0.1", handle.port), timeout=WAIT)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.reader = self.sock.makefile("rb")

    def response(self):
        """``(status, headers, body)`` of the next response; ``None`` when the server closed."""
        line = self.reader.readline()
        if not line:
            return None
        status = int(line.split(b" ", 2)[1])
        headers = {}
        while True:
            line = self.reader.readline()
            if line in (b"\r\n", b""):
                break
            name, value = line.decode("latin-1").split(":", 1)
            headers[name.strip().lower()] = value.strip()
        return status, headers, self.reader.read(int(headers.get("content-length", "0")))

    def closed_by_server(self) -> bool:
        try:
            return self.reader.read(1) == b""      # a socket timeout fails the test
        except ConnectionResetError:               # closed with bytes of ours unread
            return True

    def close(self) -> None:
        self.reader.close()
        self.sock.close()


def head(handle, fields=(), version="HTTP/1.1", line=None, host=True, body=BODY, eol="\r\n") -> bytes:
    """A POST of ``body`` to /mcp; ``fields`` are extra ``(name, value)`` pairs or raw lines."""
    lines = [line or f"POST /mcp {version}"]
    if host:
        lines.append(f"Host: 127.0.0.1:{handle.port}")
    lines += ["Content-Type: application/json", "Accept: application/json, text/event-stream"]
    if body is not None:
        lines.append(f"Content-Length: {len(body)}")
    lines += [f if isinstance(f, str) else f"{f[0]}: {f[1]}" for f in fields]
    return (eol.join(lines) + eol + eol).encode("latin-1")


def exchange(handle, data: bytes, shut: bool = False):
    """Send ``data`` on a fresh connection; the response and whether the server closed the
    connection after it (asked only when the response says ``Connection: close``)."""
    conn = Conn(handle)
    try:
        conn.sock.sendall(data)
        if shut:
            conn.sock.shutdown(socket.SHUT_WR)
        response = conn.response()
        assert response is not None, "the server closed the connection without answering"
        return response, response[1].get("connection", "").lower() == "close" and conn.closed_by_server()
    finally:
        conn.close()


def assert_refused(handle, data: bytes, status: int, mention: str, shut: bool = False) -> None:
    (got, headers, body), closed = exchange(handle, data, shut)
    assert got == status, body
    assert mention.lower().encode() in body.lower(), body
    assert headers.get("connection", "").lower() == "close" and closed
    assert_served(handle)


def assert_served(handle, data: bytes = None, body: bytes = BODY) -> dict:
    """A well-formed request (or the head ``data``), then ``body``, on a fresh connection is
    answered 200."""
    (status, headers, body), _ = exchange(handle, (data or head(handle)) + body)
    assert status == 200, body
    return json.loads(body)


# ---------------------------------------------------------------------- rule 1: the request line
def test_a_request_line_over_64_kib_gets_414(server):
    (status, _, _), closed = exchange(server, b"POST /" + b"a" * 70000 + b" HTTP/1.1\r\n\r\n")
    assert status == 414 and closed
    assert_served(server)


@pytest.mark.parametrize("line", ["POST  /mcp HTTP/1.1", "POST /mcp  HTTP/1.1", "POST\t/mcp HTTP/1.1",
                                  "POST /mcp http/1.1", "POST /mcp HTTP/1.1 x", "GET /mcp",
                                  "POST /m\x01cp HTTP/1.1", "POST /caf\xe9 HTTP/1.1", "PO(ST /mcp HTTP/1.1",
                                  "POST /mcp HTTP/1.10", "POST /mcp HTTP/1"],
                         ids=["two-spaces", "two-spaces-after", "tab", "lower-case-version", "four-words",
                              "http-0.9", "control-in-target", "non-ascii-target", "method-not-a-token",
                              "two-digit-minor", "no-minor"])
def test_a_malformed_request_line_gets_400(server, line):
    assert_refused(server, head(server, line=line), 400, "bad request")


@pytest.mark.parametrize("version", ["HTTP/2.0", "HTTP/0.9", "HTTP/3.0"])
def test_a_version_other_than_1_x_gets_505(server, version):
    assert_refused(server, head(server, version=version), 505, "HTTP Version")


def test_a_1_x_minor_version_is_served_as_1_1(server):
    assert assert_served(server, head(server, version="HTTP/1.2"))["id"] == 0


# ---------------------------------------------------------------------- rule 2: field lines
def test_obsolete_line_folding_gets_400(server):
    assert_refused(server, head(server, ["X-Note: one", " two"]), 400, "obsolete line folding")


def test_a_bare_cr_cannot_smuggle_a_second_field(server):
    """The email parser split a line at a bare CR: ``X-Note: a<CR>Host: evil`` made a second Host."""
    assert_refused(server, head(server, host=False, fields=[f"Host: 127.0.0.1:{server.port}\rX: y"]),
                   400, "bare CR")


@pytest.mark.parametrize("field", ["Content-Type : application/json", "X-Note\t: a", "No colon here",
                                   ": no name", "X(Note): a", "Caf\xe9: a"],
                         ids=["space-before-colon", "tab-before-colon", "no-colon", "empty-name",
                              "name-not-a-token", "non-ascii-name"])
def test_a_field_name_that_is_not_a_token_before_its_colon_gets_400(server, field):
    assert_refused(server, head(server, [field]), 400, "must be a token")


@pytest.mark.parametrize("value", ["a\x00b", "a\x1bb", "a\x7fb"], ids=["nul", "escape", "delete"])
def test_a_control_byte_in_a_field_value_gets_400(server, value):
    assert_refused(server, head(server, [("X-Note", value)]), 400, "control character")


def test_non_ascii_bytes_in_a_value_are_kept_as_latin_1(server):
    """obs-text is allowed in a value (RFC 9110 §5.5); the core sees it as Latin-1: an Origin
    naming the server with a non-ASCII byte added is refused by the origin check (403)."""
    assert assert_served(server, head(server, [("X-Note", "caf\xe9 \xff")]))["id"] == 0
    (status, _, body), _ = exchange(server, head(server, [("Origin", "http://127.0.0.1\xe9")]))
    assert status == 403 and b"Origin" in body


def test_field_lines_ending_in_a_bare_lf_are_read(server):
    assert assert_served(server, head(server, eol="\n"))["id"] == 0


def test_optional_whitespace_around_a_value_is_not_part_of_it(server):
    data = head(server, body=None, fields=[("Content-Length", f" \t{len(BODY)} \t")])
    assert assert_served(server, data)["id"] == 0


def test_a_request_cut_short_is_not_served(server):
    data = head(server)[:-2]                          # no empty line: the client stops sending
    assert_refused(server, data, 400, "ended before its Content-Length", shut=True)


def test_a_head_sent_a_byte_at_a_time_is_answered(server):
    data = head(server) + BODY
    conn = Conn(server)
    try:
        for byte in data:
            conn.sock.sendall(bytes([byte]))
        status, _, body = conn.response()
        assert status == 200 and json.loads(body)["id"] == 0
    finally:
        conn.close()


# ---------------------------------------------------------------------- rule 3: bounds
def test_a_header_section_over_its_bound_gets_431(server):
    """Two lines, each under the old per-line bound, together over ``MAX_HEAD``."""
    half = "x" * (MAX_HEAD // 2)
    assert_refused(server, head(server, [("X-A", half), ("X-B", half)]), 431, "exceeds")


def test_one_field_line_over_the_bound_gets_431(server):
    assert_refused(server, head(server, [("X-A", "x" * (MAX_HEAD + 10))]), 431, "Line too long")


def test_a_header_section_at_its_bound_is_read_and_one_byte_more_refused(server):
    def fields_bytes(data):                          # all but the request line and the empty line
        return len(data) - len(data.split(b"\r\n", 1)[0]) - 2 - 2
    room = MAX_HEAD - fields_bytes(head(server, [("X-A", "")]))
    data = head(server, [("X-A", "x" * room)])
    assert fields_bytes(data) == MAX_HEAD
    assert assert_served(server, data)["id"] == 0
    assert_refused(server, head(server, [("X-A", "x" * (room + 1))]), 431, "exceeds")


def test_more_fields_than_the_bound_get_431(server):
    fixed = len(head(server).split(b"\r\n")) - 3                 # the request line and the empty line
    assert assert_served(server, head(server, [("X-N", "1")] * (MAX_FIELDS - fixed)))["id"] == 0
    assert_refused(server, head(server, [("X-N", "1")] * (MAX_FIELDS - fixed + 1)), 431, "Too many headers")


# ---------------------------------------------------------------------- rule 4: Host
def test_two_host_fields_get_400(server):
    """Which one would the rebinding check trust? (Before, the last one won.)"""
    assert_refused(server, head(server, [("Host", "evil.example")]), 400, "more than one Host")
    data = head(server, host=False, fields=[("Host", "evil.example"), ("Host", f"127.0.0.1:{server.port}")])
    assert_refused(server, data, 400, "more than one Host")


@pytest.mark.parametrize("version", ["HTTP/1.1", "HTTP/1.0"])
def test_a_missing_host_is_refused(server, version):
    (status, _, body), _ = exchange(server, head(server, host=False, version=version))
    assert status == 403 and b"Host" in body


# ---------------------------------------------------------------------- the body's fields, as read here
def test_repeated_identical_content_lengths_are_one(server):
    data = head(server, body=None, fields=[("Content-Length", len(BODY))] * 2)
    assert assert_served(server, data)["id"] == 0


@pytest.mark.parametrize("values", [["5", "6"], ["5, 5"], ["+5"], ["0x5"], ["5 5"], ["\xb5"]],
                         ids=["different", "list", "sign", "hex", "two-numbers", "non-ascii"])
def test_an_invalid_content_length_gets_400(server, values):
    data = head(server, body=None, fields=[("Content-Length", v) for v in values])
    (status, headers, body), closed = exchange(server, data)
    assert status == 400 and b"invalid Content-Length" in body and closed


def test_a_chunked_body_is_read_and_content_length_beside_it_refused(server):
    chunked = f"{len(BODY):x}\r\n".encode() + BODY + b"\r\n0\r\n\r\n"
    assert assert_served(server, head(server, body=None, fields=[("Transfer-Encoding", "chunked")]), chunked)
    data = head(server, fields=[("Transfer-Encoding", "chunked")])
    (status, _, body), closed = exchange(server, data)
    assert status == 400 and b"both Transfer-Encoding and Content-Length" in body and closed


# ---------------------------------------------------------------------- rule 5: persistence
def two_requests(handle, fields=(), version="HTTP/1.1"):
    """Send one request; the second response on the same connection, or None when closed."""
    conn = Conn(handle)
    try:
        conn.sock.sendall(head(handle, fields, version) + BODY)
        status, headers, _ = conn.response()
        assert status == 200
        if headers.get("connection", "").lower() == "close":
            assert conn.closed_by_server()
            return None
        conn.sock.sendall(head(handle, fields, version) + BODY)
        return conn.response()
    finally:
        conn.close()


@pytest.mark.parametrize("version, fields, kept", [
    ("HTTP/1.1", [], True),
    ("HTTP/1.1", [("Connection", "close")], False),
    ("HTTP/1.1", [("Connection", "TE, Close")], False),
    ("HTTP/1.1", [("Connection", "keep-alive"), ("Connection", "close")], False),
    ("HTTP/1.0", [], False),
    ("HTTP/1.0", [("Connection", "keep-alive")], True),
    ("HTTP/1.0", [("Connection", "Keep-Alive, TE")], True),
], ids=["1.1", "1.1-close", "1.1-close-in-a-list", "1.1-close-in-a-second-field", "1.0", "1.0-keep-alive",
        "1.0-keep-alive-in-a-list"])
def test_the_connection_persists_by_version_and_connection_options(server, version, fields, kept):
    second = two_requests(server, fields, version)
    assert (second is not None) == kept
    if kept:
        assert second[0] == 200


# ---------------------------------------------------------------------- rule 6: Expect
def test_expect_100_continue_gets_the_interim_response_before_the_body(server):
    conn = Conn(server)
    try:
        conn.sock.sendall(head(server, [("Expect", "100-continue")]))
        assert conn.reader.readline().startswith(b"HTTP/1.1 100 ")
        assert conn.reader.readline() == b"\r\n"
        conn.sock.sendall(BODY)
        status, _, body = conn.response()
        assert status == 200 and json.loads(body)["id"] == 0
    finally:
        conn.close()


def test_expect_from_an_http_1_0_client_gets_no_interim_response(server):
    conn = Conn(server)
    try:
        conn.sock.sendall(head(server, [("Expect", "100-continue")], version="HTTP/1.0") + BODY)
        status, _, body = conn.response()
        assert status == 200 and json.loads(body)["id"] == 0
    finally:
        conn.close()
