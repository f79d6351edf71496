"""The HTTP server reads POST bodies sent with ``Transfer-Encoding: chunked``.

Rule 1 of ``mcp_ref.transports.http.server.handler``; RFC 9112 §6 (message body
length) and §7.1 (chunked transfer coding: hex size, optional extensions
after ``;``, CRLF, data, CRLF, a zero-size last chunk, optional trailer
fields, a final CRLF). Spec: basic/transports#sending-messages-to-the-server
(every client message is a POST; the spec names no body framing, so this is
plain HTTP/1.1).

* a chunked ``initialize`` (``http.client``, ``requests`` with a generator, a
  raw socket with extensions and trailers, one-byte chunks) starts a session
  that then works; the body is consumed exactly, so the connection stays
  usable for the next request;
* the same ``max_body`` limit as for ``Content-Length``: 413 as soon as the
  announced chunks exceed it, before their data is sent, and for framing that
  outgrows its own allowance;
* malformed framing → 400; ``chunked`` not last → 400; another transfer
  coding → 501; ``Transfer-Encoding`` with ``Content-Length`` or in HTTP/1.0
  → 400; neither header → 411;
* every refusal is a JSON-RPC error without id, closes the connection, and
  the server keeps working;
* the legacy ``/messages`` endpoint reads chunked bodies too.

Raw-socket tests send nothing beyond the point where the server must answer,
so no unread bytes are left behind when it closes the connection.
"""
import http.client
import json
import socket

import pytest

requests = pytest.importorskip("requests", reason="the HTTP tests drive the server with requests")

from helpers import WAIT, http_tools_server, rpc  # noqa: E402
from mcp_ref.transports.http.sse import EventParser  # noqa: E402
from mcp_ref.transports.http.server.body import FRAMING_MIN, MAX_CHUNK_LINE  # noqa: E402
from mcp_ref.transports.http.server.app import start_http  # noqa: E402

MAX_BODY = 1000
HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


@pytest.fixture
def server():
    """A server with ``max_body=1000`` answering JSON; shut down after the test."""
    handle = start_http(http_tools_server("chunked"), ("127.0.0.1", 0), max_body=MAX_BODY, response_mode="json",
                        keepalive=0.2)
    try:
        yield handle
    finally:
        handle.shutdown()


# ---------------------------------------------------------------------- helpers
def initialize(id_=0, version="2025-11-25") -> dict:
    return rpc(id_, "initialize", {"protocolVersion": version, "capabilities": {},
                                   "clientInfo": {"name": "chunked-client", "version": "1"}})


def encode(message) -> bytes:
    return json.dumps(message, separators=(",", ":")).encode()


def chunked(body: bytes, size: int = 7, extension: str = "", trailers=()) -> bytes:
    """``body`` in the chunked coding, ``size`` bytes a chunk (sizes in upper-case hex)."""
    out = b""
    for start in range(0, len(body), size):
        piece = body[start:start + size]
        out += f"{len(piece):X}{extension}\r\n".encode() + piece + b"\r\n"
    out += f"0{extension}\r\n".encode()
    for trailer in trailers:
        out += trailer.encode() + b"\r\n"
    return out + b"\r\n"


class Raw:
    """One HTTP/1.1 connection on a plain socket: send bytes, read whole responses."""

    def __init__(self, handle):
        self.handle = handle
        self.sock = socket.create_connection((handle.host, handle.port), timeout=WAIT)
        self.reader = self.sock.makefile("rb")

    def head(self, headers, version: str = "HTTP/1.1", path: str = "/mcp") -> bytes:
        """A POST's request line and headers; ``headers`` a dict or a list of pairs (repeats)."""
        lines = [f"POST {path} {version}", f"Host: 127.0.0.1:{self.handle.port}",
                 "Content-Type: application/json", "Accept: application/json, text/event-stream"]
        pairs = headers.items() if isinstance(headers, dict) else headers
        lines += [f"{name}: {value}" for name, value in pairs]
        return ("\r\n".join(lines) + "\r\n\r\n").encode()

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def response(self):
        """``(status, headers, body)`` of the next response (bodies come with Content-Length)."""
        line = self.reader.readline()
        assert line, "the server closed the connection without answering"
        status = int(line.split(b" ", 2)[1])
        headers = {}
        while True:
            line = self.reader.readline()
            if line in (b"\r\n", b""):
                break
            name, value = line.decode("latin-1").split(":", 1)
            headers[name.strip().lower()] = value.strip()
        body = self.reader.read(int(headers.get("content-length", "0")))
        return status, headers, body

    def closed_by_server(self) -> bool:
        return self.reader.read(1) == b""          # a socket timeout fails the test

    def close(self) -> None:
        self.reader.close()
        self.sock.close()


def post(url, message, session_id=None, **kwargs):
    headers = dict(HEADERS)
    if session_id is not None:
        headers["Mcp-Session-Id"] = session_id
    return requests.post(url, data=encode(message) if isinstance(message, dict) else message, headers=headers,
                         timeout=WAIT, **kwargs)


def new_session(handle) -> str:
    response = post(handle.url, initialize())
    assert response.status_code == 200, response.text
    session_id = response.headers["Mcp-Session-Id"]
    assert post(handle.url, {"jsonrpc": "2.0", "method": "notifications/initialized"}, session_id).status_code == 202
    return session_id


def assert_server_works(handle, session_id: str) -> None:
    """A fresh connection: a tool call in the session is answered."""
    answer = post(handle.url, rpc("check", "tools/call", {"name": "add", "arguments": {"a": 40, "b": 2}}),
                  session_id)
    assert answer.status_code == 200, answer.text
    assert answer.json()["result"]["content"][0]["text"] == "42"


def assert_refused(raw: Raw, status: int, mention: str) -> dict:
    """The response is ``status`` with a JSON-RPC error without id mentioning ``mention``,
    and the server then closes the connection."""
    got, headers, body = raw.response()
    assert got == status, body
    assert headers.get("connection", "").lower() == "close"
    error = json.loads(body)
    assert error["jsonrpc"] == "2.0" and error["id"] is None and error["error"]["code"] == -32600, error
    assert mention in error["error"]["message"], error
    assert raw.closed_by_server(), "the connection stayed open after a refused body"
    return error


# ---------------------------------------------------------------------- accepted
def test_a_chunked_initialize_with_http_client_starts_a_working_session(server):
    conn = http.client.HTTPConnection(server.host, server.port, timeout=WAIT)
    try:
        body = encode(initialize())
        conn.request("POST", "/mcp", body=(body[i:i + 16] for i in range(0, len(body), 16)), headers=HEADERS,
                     encode_chunked=True)
        response = conn.getresponse()
        answer = json.loads(response.read())
        assert response.status == 200, answer
        assert answer["id"] == 0 and answer["result"]["protocolVersion"] == "2025-11-25"
        session_id = response.getheader("Mcp-Session-Id")
        assert session_id
        # The same connection carries the next (chunked) requests: the body was consumed exactly.
        conn.request("POST", "/mcp", body=iter([encode({"jsonrpc": "2.0", "method": "notifications/initialized"})]),
                     headers={**HEADERS, "Mcp-Session-Id": session_id}, encode_chunked=True)
        response = conn.getresponse()
        assert response.status == 202 and response.read() == b""
        conn.request("POST", "/mcp", body=iter([encode(rpc(1, "tools/call",
                                                            {"name": "add", "arguments": {"a": 1, "b": 2}}))]),
                     headers={**HEADERS, "Mcp-Session-Id": session_id}, encode_chunked=True)
        response = conn.getresponse()
        assert json.loads(response.read())["result"]["content"][0]["text"] == "3"
    finally:
        conn.close()


def test_requests_with_a_generator_sends_chunked_and_is_answered(server):
    body = encode(initialize())
    seen = []

    def pieces():
        for i in range(0, len(body), 10):
            seen.append(i)
            yield body[i:i + 10]
    response = post(server.url, pieces())
    assert response.request.headers.get("Transfer-Encoding") == "chunked"
    assert "Content-Length" not in response.request.headers
    assert len(seen) > 1
    assert response.status_code == 200 and response.json()["result"]["serverInfo"]["name"] == "chunked"
    assert_server_works(server, response.headers["Mcp-Session-Id"])


@pytest.mark.parametrize("size, extension, trailers", [
    (1, "", ()),                                                # one byte per chunk
    (64, ';name=value;flag;quoted="a b"', ()),                  # extensions, ignored
    (30, " ; ext", ()),                                         # whitespace before ';'
    (5000, "", ("X-Checksum: abc", "X-Other:  two words")),     # one chunk, trailer fields
], ids=["one-byte-chunks", "extensions", "space-before-extension", "trailers"])
def test_a_raw_chunked_body_with_extensions_and_trailers(server, size, extension, trailers):
    raw = Raw(server)
    try:
        raw.send(raw.head({"Transfer-Encoding": "chunked"}) + chunked(encode(initialize()), size, extension, trailers))
        status, headers, body = raw.response()
        assert status == 200, body
        assert json.loads(body)["result"]["protocolVersion"] == "2025-11-25"
        session_id = headers["mcp-session-id"]
        # Keep-alive: the next request on the same connection is read from the right place.
        raw.send(raw.head({"Transfer-Encoding": "chunked", "Mcp-Session-Id": session_id})
                 + chunked(encode(rpc(1, "ping")), size, extension, trailers))
        status, _, body = raw.response()
        assert status == 200 and json.loads(body) == {"jsonrpc": "2.0", "id": 1, "result": {}}
    finally:
        raw.close()


def test_hex_sizes_in_either_case_and_with_leading_zeros(server):
    body = encode(initialize())
    raw = Raw(server)
    try:
        split = len(body) // 2
        first, second = body[:split], body[split:]
        framed = (f"000{len(first):x}\r\n".encode() + first + b"\r\n"
                  + f"{len(second):X}\r\n".encode() + second + b"\r\n" + b"0000\r\n\r\n")
        raw.send(raw.head({"Transfer-Encoding": "chunked"}) + framed)
        status, _, answer = raw.response()
        assert status == 200 and json.loads(answer)["id"] == 0
    finally:
        raw.close()


def test_a_body_exactly_at_the_limit_is_accepted(server):
    session_id = new_session(server)
    message = rpc("x", "ping", {"_meta": {"pad": ""}})
    message["params"]["_meta"]["pad"] = "p" * (MAX_BODY - len(encode(message)))
    body = encode(message)
    assert len(body) == MAX_BODY
    response = post(server.url, (body[i:i + 100] for i in range(0, len(body), 100)), session_id)
    assert response.status_code == 200 and response.json()["result"] == {}


# ---------------------------------------------------------------------- 413
def test_a_chunked_body_over_the_limit_gets_413_before_its_data_is_sent(server):
    session_id = new_session(server)
    raw = Raw(server)
    try:
        # 2 x 400 bytes are read; the third chunk announces 400 more (1200 > 1000): the server
        # answers at once, without waiting for data that is never sent.
        raw.send(raw.head({"Transfer-Encoding": "chunked", "Mcp-Session-Id": session_id})
                 + (b"190\r\n" + b"a" * 400 + b"\r\n") * 2 + b"190\r\n")
        assert_refused(raw, 413, f"the limit is {MAX_BODY} bytes")
    finally:
        raw.close()
    assert_server_works(server, session_id)


def test_a_huge_announced_chunk_gets_413_at_once(server):
    session_id = new_session(server)
    raw = Raw(server)
    try:
        raw.send(raw.head({"Transfer-Encoding": "chunked"}) + b"FFFFFFFFFFFFFFFFFFFF\r\n")
        assert_refused(raw, 413, "Payload Too Large")
    finally:
        raw.close()
    assert_server_works(server, session_id)


def test_chunk_framing_beyond_its_allowance_gets_413(server):
    """One-byte chunks with long extensions: the data stays tiny, the framing does not."""
    session_id = new_session(server)
    line = b"1;" + b"x" * (MAX_CHUNK_LINE - 4) + b"\r\n"          # the longest line allowed
    assert len(line) == MAX_CHUNK_LINE
    allowance = max(MAX_BODY, FRAMING_MIN)
    per_chunk = len(line) + 2                                      # the size line and the CRLF after the data
    full = allowance // per_chunk
    while full * per_chunk + len(line) <= allowance:               # the next size line must overflow
        full += 1
    assert full < MAX_BODY                                         # the data alone stays under the limit
    raw = Raw(server)
    try:
        raw.send(raw.head({"Transfer-Encoding": "chunked"}) + (line + b"{\r\n") * full + line)
        assert_refused(raw, 413, f"chunk framing exceeds {allowance} bytes")
    finally:
        raw.close()
    assert_server_works(server, session_id)


def test_content_length_over_the_limit_still_gets_413(server):
    session_id = new_session(server)
    raw = Raw(server)
    try:
        raw.send(raw.head({"Content-Length": str(MAX_BODY + 1)}))
        assert_refused(raw, 413, f"the limit is {MAX_BODY} bytes")
    finally:
        raw.close()
    assert_server_works(server, session_id)


# ---------------------------------------------------------------------- 400, 411, 501
MALFORMED = {
    "not-hex": b"zz\r\n",
    "0x-prefix": b"0x5\r\n",
    "sign": b"+5\r\n",
    "negative": b"-1\r\n",
    "space-before-size": b" 5\r\n",
    "space-without-extension": b"5 \r\n",
    "empty-size": b"\r\n",
    "bare-lf": b"5\n",
    "bare-cr-in-extension": b"5;a\rb\r\n",
    "no-crlf-after-data": b"3\r\nabcXY",
    "trailer-without-colon": b"3\r\nabc\r\n0\r\nno colon here\r\n",
    "size-line-too-long": b"0" * MAX_CHUNK_LINE + b"1\r\n",
}


@pytest.mark.req("TRN-17")
@pytest.mark.parametrize("framed", list(MALFORMED.values()), ids=list(MALFORMED))
def test_malformed_chunk_framing_gets_400(server, framed):
    session_id = new_session(server)
    raw = Raw(server)
    try:
        raw.send(raw.head({"Transfer-Encoding": "chunked", "Mcp-Session-Id": session_id}) + framed)
        assert_refused(raw, 400, "Bad Request")
    finally:
        raw.close()
    assert_server_works(server, session_id)


@pytest.mark.parametrize("framed, mention", [
    (b"5\r\nab", "ended inside a chunk"),
    (b"5\r\nabcde\r\n", "ended before its last chunk"),
], ids=["inside-a-chunk", "before-the-last-chunk"])
def test_a_chunked_body_cut_short_gets_400(server, framed, mention):
    session_id = new_session(server)
    raw = Raw(server)
    try:
        raw.send(raw.head({"Transfer-Encoding": "chunked"}) + framed)
        raw.sock.shutdown(socket.SHUT_WR)                         # the client stops sending
        assert_refused(raw, 400, mention)
    finally:
        raw.close()
    assert_server_works(server, session_id)


@pytest.mark.req("TRN-17")
@pytest.mark.parametrize("headers, version, status, mention", [
    ({}, "HTTP/1.1", 411, "Length Required"),
    ({"Transfer-Encoding": "chunked", "Content-Length": "10"}, "HTTP/1.1", 400,
     "both Transfer-Encoding and Content-Length"),
    ({"Transfer-Encoding": "chunked"}, "HTTP/1.0", 400, "HTTP/1.0"),
    ({"Transfer-Encoding": "chunked, gzip"}, "HTTP/1.1", 400, "chunked must be the last transfer coding"),
    ({"Transfer-Encoding": "chunked, chunked"}, "HTTP/1.1", 400, "chunked must be the last transfer coding"),
    ({"Transfer-Encoding": "gzip"}, "HTTP/1.1", 400, "chunked must be the last transfer coding"),
    ({"Transfer-Encoding": "gzip, chunked"}, "HTTP/1.1", 501, "transfer coding 'gzip'"),
    ({"Content-Length": "abc"}, "HTTP/1.1", 400, "invalid Content-Length"),
], ids=["no-length-411", "both-headers", "http-1.0", "chunked-not-last", "chunked-twice", "gzip-only",
        "gzip-then-chunked-501", "bad-content-length"])
def test_body_framing_headers_are_checked_before_any_body_is_read(server, headers, version, status, mention):
    session_id = new_session(server)
    raw = Raw(server)
    try:
        raw.send(raw.head(headers, version))                       # no body at all: none is read
        assert_refused(raw, status, mention)
    finally:
        raw.close()
    assert_server_works(server, session_id)


def test_two_different_content_lengths_get_400(server):
    session_id = new_session(server)
    raw = Raw(server)
    try:
        raw.send(raw.head([("Content-Length", "2"), ("Content-Length", "3")]))
        assert_refused(raw, 400, "invalid Content-Length")
    finally:
        raw.close()
    assert_server_works(server, session_id)


# ---------------------------------------------------------------------- legacy endpoint
def test_the_legacy_messages_endpoint_reads_chunked_bodies(server):
    stream = requests.get(server.sse_url, headers={"Accept": "text/event-stream"}, stream=True, timeout=WAIT)
    try:
        assert stream.status_code == 200
        parser, events = EventParser(), []
        chunks = stream.iter_content(chunk_size=None)
        while not events:
            events += parser.feed(next(chunks))
        assert events[0].event == "endpoint"
        endpoint = server.base_url + events[0].data
        body = encode(initialize(version="2024-11-05"))
        accepted = requests.post(endpoint, data=(body[i:i + 20] for i in range(0, len(body), 20)),
                                 headers={"Content-Type": "application/json"}, timeout=WAIT)
        assert accepted.request.headers.get("Transfer-Encoding") == "chunked"
        assert accepted.status_code == 202
        messages = [e for e in events[1:] if e.event == "message"]
        while not messages:
            messages += [e for e in parser.feed(next(chunks)) if e.event == "message"]
        answer = json.loads(messages[0].data)
        assert answer["id"] == 0 and answer["result"]["protocolVersion"] == "2024-11-05"
    finally:
        stream.close()
