"""Request smuggling through an early refusal: a request the server answers before reading
its body must not leave that body on the connection, to be read as the next request.

Each case sends, over a raw socket, a request the server refuses (bad ``Origin``, bad
``Host``, unknown path, unsupported method, no token, body too large, ...) whose body is
itself a complete request that would run: a 2026-07-28 ``tools/call`` of ``bump``, a tool
whose only effect is to count its calls. The client reads the refusal, then sends a
probe (``GET /probe``, ``Connection: close``) and reads until the server closes. A
safe server either read and dropped the body (the probe is answered: 404) or closed
the connection (nothing more comes back); the smuggled call never runs. Spec: RFC 9112
§6.3, §9.3, §11.2 (request smuggling); transports/http/server/handler.py rule 6.
"""
import json
import re
import socket
import time

import pytest

from mcp_ref import Server
from mcp_ref.auth import AccessToken
from mcp_ref.transports.http.modern import encode_value
from mcp_ref.transports.http.server.app import start_http
from mcp_ref.transports.http.server.wsgi import WsgiApp, start_wsgi

MODERN = "2026-07-28"
MAX_BODY = 1024                 # the plain server's body limit: the smuggled request fits, a padded one does not
WAIT = 20.0
META = {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "smuggler", "version": "1"}}
STATUS_LINE = re.compile(rb"HTTP/1\.[01] (\d{3}) ")


def counting_server(calls: list) -> Server:
    server = Server("smuggling", version="1.0")

    @server.tool
    def bump() -> str:
        """Count a call."""
        calls.append(time.monotonic())
        return "bumped"
    return server


class Verifier:
    def __init__(self):
        self.tokens = {}

    def verify(self, token, resource):
        return self.tokens.get(token)


@pytest.fixture
def served():
    """``served(kind)`` → (port, calls): a server of that kind counting ``bump`` calls."""
    handles = []

    def start(kind: str):
        calls = []
        if kind == "plain":
            handle = start_http(counting_server(calls), ("127.0.0.1", 0), max_body=MAX_BODY)
        elif kind == "auth":
            verifier = Verifier()
            handle = start_http(counting_server(calls), ("127.0.0.1", 0), auth=verifier,
                                resource_metadata={"authorization_servers": ["https://auth.example.com"]})
            verifier.tokens["good"] = AccessToken("alice", ("mcp",), time.time() + 600, handle.url)
        elif kind == "wsgi":
            handle = start_wsgi(WsgiApp(counting_server(calls), max_body=MAX_BODY), ("127.0.0.1", 0))
        else:
            raise ValueError(kind)
        handles.append(handle)
        return handle.port, calls
    yield start
    for handle in handles:
        handle.shutdown()


# ---------------------------------------------------------------------- the raw requests
def smuggled(port: int, kind: str, pad: int = 0) -> bytes:
    """The request hidden in a body: one that would run ``bump`` (with a valid token on
    the ``auth`` server), ``pad`` bytes of padding in a header."""
    body = json.dumps({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                       "params": {"name": "bump", "arguments": {}, "_meta": META}}).encode()
    lines = ["POST /mcp HTTP/1.1", f"Host: 127.0.0.1:{port}", "Content-Type: application/json",
             "Accept: application/json, text/event-stream", f"MCP-Protocol-Version: {MODERN}",
             "Mcp-Method: tools/call", f"Mcp-Name: {encode_value('bump')}"]
    if kind == "auth":
        lines.append("Authorization: Bearer good")
    if pad:
        lines.append("X-Pad: " + "p" * pad)
    lines.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


def outer(method: str, target: str, headers: list, body: bytes, chunked: bool = False) -> bytes:
    """A request carrying ``body`` (with ``Content-Length``, or as one chunk)."""
    if chunked:
        framing = ["Transfer-Encoding: chunked"]
        body = b"%x\r\n" % len(body) + body + b"\r\n0\r\n\r\n"
    else:
        framing = [f"Content-Length: {len(body)}"]
    return ("\r\n".join([f"{method} {target} HTTP/1.1", *headers, *framing]) + "\r\n\r\n").encode() + body


def probe(port: int) -> bytes:
    return f"GET /probe HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n".encode()


def read_response(sock: socket.socket, data: bytes = b"") -> tuple:
    """One response with a ``Content-Length`` body: ``(status, response bytes, what came after)``."""
    while b"\r\n\r\n" not in data:
        piece = sock.recv(65536)
        assert piece, f"the connection ended before a response head: {data!r}"
        data += piece
    head, _, rest = data.partition(b"\r\n\r\n")
    status = STATUS_LINE.match(head)
    assert status is not None, head
    length = re.search(rb"(?im)^content-length:\s*(\d+)\s*$", head)
    assert length is not None, f"not a refusal (a body without Content-Length): {head!r}"
    size = int(length.group(1))
    while len(rest) < size:
        piece = sock.recv(65536)
        assert piece, "the connection ended inside a response body"
        rest += piece
    return int(status.group(1)), head + b"\r\n\r\n" + rest[:size], rest[size:]


def read_to_end(sock: socket.socket) -> bytes:
    data = b""
    while True:
        try:
            piece = sock.recv(65536)
        except (ConnectionResetError, BrokenPipeError):
            return data
        if not piece:
            return data
        data += piece


def attack(port: int, request: bytes) -> tuple:
    """Send ``request``; read its answer; send the probe; read until the server closes.
    ``(first status, the statuses of everything that came after)``."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=WAIT)
    try:
        sock.sendall(request)
        status, _, extra = read_response(sock)
        try:
            sock.sendall(probe(port))
        except (ConnectionResetError, BrokenPipeError):
            pass
        extra += read_to_end(sock)
    finally:
        sock.close()
    return status, [int(s) for s in re.findall(rb"(?m)^HTTP/1\.[01] (\d{3}) ", extra)]


def settle(calls: list) -> list:
    """The calls of ``bump`` once a smuggled call would have run (the probe was answered
    after it, on the same connection; this only covers a worker finishing late)."""
    time.sleep(0.05)
    return calls


# ---------------------------------------------------------------------- the cases
def ok(port, kind):
    """The headers of a request the checks would let through (but for what a case changes)."""
    lines = [f"Host: 127.0.0.1:{port}", "Accept: application/json, text/event-stream"]
    if kind == "auth":
        lines.append("Authorization: Bearer good")
    return lines


CASES = {
    # name: (server kind, expected status, method, target, headers(port, kind), body type, pad the smuggled request)
    "bad-origin-403": ("plain", 403, "POST", "/mcp",
                       lambda p, k: ok(p, k) + ["Origin: http://evil.example", "Content-Type: text/plain"]),
    "bad-host-403": ("plain", 403, "POST", "/mcp",
                     lambda p, k: [f"Host: evil.example:{p}", "Content-Type: application/json"]),
    "unknown-path-404": ("plain", 404, "POST", "/nowhere", lambda p, k: ok(p, k) + ["Content-Type: text/plain"]),
    "put-405": ("plain", 405, "PUT", "/mcp", lambda p, k: ok(p, k) + ["Content-Type: application/json"]),
    "unknown-method-501": ("plain", 501, "BREW", "/mcp", lambda p, k: ok(p, k)),
    "duplicate-host-400": ("plain", 400, "POST", "/mcp",
                           lambda p, k: ok(p, k) + [f"Host: 127.0.0.1:{p}", "Content-Type: application/json"]),
    "too-large-413": ("plain", 413, "POST", "/mcp", lambda p, k: ok(p, k) + ["Content-Type: application/json"]),
    "content-type-415": ("plain", 415, "POST", "/mcp", lambda p, k: ok(p, k) + ["Content-Type: text/plain"]),
    "get-without-session-400": ("plain", 400, "GET", "/mcp", lambda p, k: ok(p, k)),
    "get-accept-406": ("plain", 406, "GET", "/mcp", lambda p, k: [f"Host: 127.0.0.1:{p}", "Accept: application/json"]),
    "delete-without-session-400": ("plain", 400, "DELETE", "/mcp", lambda p, k: ok(p, k)),
    "legacy-post-no-session-400": ("plain", 400, "POST", "/messages",
                                   lambda p, k: ok(p, k) + ["Content-Type: application/json"]),
    "legacy-post-unknown-session-404": ("plain", 404, "POST", "/messages?session_id=nope",
                                        lambda p, k: ok(p, k) + ["Content-Type: application/json"]),
    "legacy-get-accept-406": ("plain", 406, "GET", "/sse",
                              lambda p, k: [f"Host: 127.0.0.1:{p}", "Accept: application/json"]),
    "legacy-put-405": ("plain", 405, "PUT", "/sse", lambda p, k: ok(p, k)),
    "auth-no-token-401": ("auth", 401, "POST", "/mcp", lambda p, k: ok(p, "plain") + ["Content-Type: text/plain"]),
    "auth-legacy-no-token-401": ("auth", 401, "POST", "/messages?session_id=x",
                                 lambda p, k: ok(p, "plain") + ["Content-Type: application/json"]),
    "auth-metadata-post-405": ("auth", 405, "POST", "/.well-known/oauth-protected-resource/mcp",
                               lambda p, k: ok(p, "plain") + ["Content-Type: application/json"]),
    "auth-metadata-get-200": ("auth", 200, "GET", "/.well-known/oauth-protected-resource/mcp",
                              lambda p, k: ok(p, "plain")),
    "auth-bad-origin-403": ("auth", 403, "POST", "/mcp",
                            lambda p, k: ok(p, k) + ["Origin: http://evil.example", "Content-Type: text/plain"]),
    "wsgi-bad-origin-403": ("wsgi", 403, "POST", "/mcp",
                            lambda p, k: ok(p, k) + ["Origin: http://evil.example", "Content-Type: text/plain"]),
    "wsgi-unknown-path-404": ("wsgi", 404, "POST", "/nowhere", lambda p, k: ok(p, k) + ["Content-Type: text/plain"]),
    "wsgi-put-405": ("wsgi", 405, "PUT", "/mcp", lambda p, k: ok(p, k)),
}
CHUNKED = ("bad-origin-403", "unknown-path-404", "put-405", "auth-no-token-401", "legacy-post-no-session-400",
           "wsgi-bad-origin-403")


@pytest.mark.parametrize("chunked", [False, True], ids=["length", "chunked"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_a_refused_request_does_not_smuggle_its_body(served, case, chunked):
    if chunked and case not in CHUNKED:
        pytest.skip("a Content-Length body only")
    kind, expected, method, target, headers = CASES[case]
    port, calls = served(kind)
    body = smuggled(port, kind, pad=2 * MAX_BODY if expected == 413 else 0)
    status, after = attack(port, outer(method, target, headers(port, kind), body, chunked))
    assert status == expected
    assert after in ([], [404]), f"more than the probe's answer after the {status}: {after}"
    assert settle(calls) == [], "the smuggled request ran"


@pytest.mark.parametrize("kind", ["plain", "auth", "wsgi"])
def test_the_smuggled_request_runs_when_sent_as_itself(served, kind):
    """The control: the hidden request is one that runs (so the cases above prove something)."""
    port, calls = served(kind)
    status, after = attack(port, smuggled(port, kind))
    assert status == 200 and after in ([], [404])
    assert len(calls) == 1


def test_a_drained_connection_serves_the_next_request(served):
    """A refused Content-Length body within the limit is read and dropped: the connection
    goes on (the probe is answered), as a client retrying on it expects."""
    port, calls = served("plain")
    request = outer("POST", "/nowhere", ok(port, "plain") + ["Content-Type: text/plain"], smuggled(port, "plain"))
    assert attack(port, request) == (404, [404])
    assert calls == []
