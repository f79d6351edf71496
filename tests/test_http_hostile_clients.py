"""Hostile clients at the Streamable HTTP server: headers sent a byte at a time, a
``Last-Event-ID`` taken from another session, a 100 MB ``Content-Length`` with no body,
and session ids that are foreign, stale (expired) or deleted. Each time the other
clients are served as usual. (tests/test_http_hostile.py is the other way round: a
hostile server at the client.) Bounded by timeouts; nothing asserts how long
something took. Spec: basic/transports#streamable-http, #resumability-and-redelivery,
#session-management, basic/security_best_practices#session-hijacking.
"""
import json
import socket
import sys
import threading
import time

import pytest

requests = pytest.importorskip("requests")

from helpers import http_tools_server, rpc  # noqa: E402
from mcp_ref.transports.http.sse import EventParser  # noqa: E402
from mcp_ref.transports.http.server.app import start_http  # noqa: E402

HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
WAIT = 20.0


@pytest.fixture
def http():
    handles = []

    def start(**options):
        handles.append(start_http(http_tools_server("hostile-clients"), ("127.0.0.1", 0), **options))
        return handles[-1]
    yield start
    for handle in handles:
        handle.shutdown()


def post(url, message, session_id=None, **kwargs):
    headers = dict(HEADERS, **({"Mcp-Session-Id": session_id, "MCP-Protocol-Version": "2025-11-25"}
                               if session_id else {}))
    return requests.post(url, data=json.dumps(message), headers=headers, timeout=WAIT, **kwargs)


def open_session(url) -> str:
    response = post(url, rpc(0, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                               "clientInfo": {"name": "t", "version": "1"}}))
    assert response.status_code == 200, response.text
    session_id = response.headers["Mcp-Session-Id"]
    assert post(url, {"jsonrpc": "2.0", "method": "notifications/initialized"}, session_id).status_code == 202
    return session_id


def add(url, session_id, request_id=1) -> str:
    response = post(url, rpc(request_id, "tools/call", {"name": "add", "arguments": {"a": 2, "b": 3}}), session_id)
    assert response.status_code == 200, response.text
    messages = [json.loads(e.data) for e in EventParser().feed(response.content) if e.data] \
        if response.headers["Content-Type"].startswith("text/event-stream") else [response.json()]
    return messages[-1]["result"]["content"][0]["text"]


def _connect(handle) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", handle.port), timeout=WAIT)
    sock.settimeout(WAIT)
    return sock


def _response_head(sock) -> bytes:
    data = b""
    while b"\r\n\r\n" not in data:
        piece = sock.recv(4096)
        if not piece:
            break
        data += piece
    return data


# ---------------------------------------------------------------------- a byte at a time
@pytest.mark.req("TRN-7")
def test_a_client_sending_headers_a_byte_at_a_time_blocks_no_other_client(http):
    """While one connection trickles its request head, other clients open sessions and
    call tools; the trickling client is still mid-head when they are done, and is
    answered (or cut off by the server) once it finishes, never the others' business."""
    handle = http()
    body = json.dumps(rpc(0, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                            "clientInfo": {"name": "slow", "version": "1"}})).encode()
    head = (f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{handle.port}\r\nContent-Type: application/json\r\n"
            f"Accept: application/json, text/event-stream\r\nContent-Length: {len(body)}\r\n"
            f"X-Padding: {'p' * 4000}\r\n\r\n").encode()      # 40 s at 10 ms a byte
    others_done, progress, outcome = threading.Event(), [0], []

    def trickle():
        sock = _connect(handle)
        try:
            for i, byte in enumerate(head[:-1]):
                sock.sendall(bytes([byte]))
                progress[0] = i + 1
                if others_done.wait(0.01):
                    break
            sock.sendall(head[progress[0]:] + body)
            outcome.append(_response_head(sock))
        except OSError as exc:                         # cut off by the server: also fine
            outcome.append(exc)
        finally:
            sock.close()

    slow = threading.Thread(target=trickle, daemon=True)
    slow.start()
    while progress[0] < 5 and slow.is_alive():        # the slow head has started
        time.sleep(0.01)
    results = []
    for n in range(5):
        session_id = open_session(handle.url)
        results.append(add(handle.url, session_id, n + 1))
    sent_meanwhile = progress[0]
    others_done.set()
    slow.join(WAIT)
    assert results == ["5"] * 5
    assert 5 <= sent_meanwhile < len(head) - 1         # the others were served while the head trickled
    assert not slow.is_alive() and outcome
    assert isinstance(outcome[0], OSError) or outcome[0].startswith(b"HTTP/1.1 200"), outcome


# ---------------------------------------------------------------------- Last-Event-ID of another session
@pytest.mark.req("TRN-38", "TRN-36")
def test_a_last_event_id_of_another_session_replays_nothing_of_it(http):
    handle = http()
    victim, attacker = open_session(handle.url), open_session(handle.url)
    secret = post(handle.url, rpc(7, "tools/call", {"name": "announce", "arguments": {"text": "victim-secret"}}),
                  victim)
    ids = [e.id for e in EventParser().feed(secret.content) if e.id]
    assert ids and "victim-secret" in secret.text
    # Control: the victim itself may resume its stream from its first event.
    own = requests.get(handle.url, headers={"Accept": "text/event-stream", "Mcp-Session-Id": victim,
                                            "MCP-Protocol-Version": "2025-11-25", "Last-Event-ID": ids[0]},
                       timeout=WAIT)
    assert own.status_code == 200 and "victim-secret" in own.text
    for event_id in ids:
        for session in (attacker, None):
            headers = {"Accept": "text/event-stream", "Last-Event-ID": event_id,
                       "MCP-Protocol-Version": "2025-11-25"}
            if session:
                headers["Mcp-Session-Id"] = session
            response = requests.get(handle.url, headers=headers, timeout=WAIT, stream=True)
            try:
                assert response.status_code in (400, 404), response.status_code
                assert "victim-secret" not in response.raw.read(65536).decode("utf-8", "replace")
            finally:
                response.close()
    assert add(handle.url, attacker) == "5" and add(handle.url, victim, 8) == "5"


# ---------------------------------------------------------------------- a huge Content-Length
@pytest.mark.req("TRN-17")
def test_a_100_mb_content_length_without_its_body_gets_413_at_once(http):
    """The default limit (4 MiB) refuses the announced size before reading anything:
    the answer comes although not one byte of the body is ever sent."""
    handle = http()
    session_id = open_session(handle.url)
    sock = _connect(handle)
    try:
        sock.sendall((f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{handle.port}\r\nContent-Type: application/json\r\n"
                      f"Accept: application/json, text/event-stream\r\nMcp-Session-Id: {session_id}\r\n"
                      f"Content-Length: {100 * 1024 * 1024}\r\n\r\n").encode())
        head = _response_head(sock)
    finally:
        sock.close()
    assert head.startswith(b"HTTP/1.1 413"), head
    assert add(handle.url, session_id) == "5"


# ---------------------------------------------------------------------- foreign, stale, deleted
@pytest.mark.req("TRN-44")
def test_foreign_stale_and_deleted_session_ids_get_404_everywhere(http):
    handle, other = http(idle_timeout=0.3), http()
    foreign = open_session(other.url)                 # valid, but another server's
    stale = open_session(handle.url)
    deleted = open_session(handle.url)
    assert requests.delete(handle.url, headers={"Mcp-Session-Id": deleted}, timeout=WAIT).status_code == 204
    deadline = time.monotonic() + WAIT
    while handle.app.session_count and time.monotonic() < deadline:
        time.sleep(0.05)                              # the stale one expires
    assert handle.app.session_count == 0
    for session_id in (foreign, stale, deleted, stale[:-1] + ("0" if stale[-1] != "0" else "1")):
        assert post(handle.url, rpc(1, "ping"), session_id).status_code == 404
        assert requests.get(handle.url, headers={"Accept": "text/event-stream", "Mcp-Session-Id": session_id},
                            timeout=WAIT).status_code == 404
        assert requests.delete(handle.url, headers={"Mcp-Session-Id": session_id}, timeout=WAIT).status_code == 404
    assert add(other.url, foreign) == "5"             # the foreign one still works where it belongs
    assert add(handle.url, open_session(handle.url)) == "5"


# ---------------------------------------------------------------------- stalled connections (http_handler rule 5)
@pytest.fixture
def handlers(monkeypatch):
    """Each of the test's connections' Python socket timeout; the stall timeout cut to 0.3 s."""
    from mcp_ref.transports.http.server.handler import McpRequestHandler
    made, setup = [], McpRequestHandler.setup

    def spying(self):
        setup(self)
        made.append(self.connection.gettimeout())
    monkeypatch.setattr(McpRequestHandler, "setup", spying)
    monkeypatch.setattr(McpRequestHandler, "timeout", 0.3)
    return made


def test_the_stall_timeout_is_the_sockets_own(http, handlers):
    handle = http()
    assert add(handle.url, open_session(handle.url)) == "5"
    assert handlers and set(handlers) == {0.3}


def test_an_idle_keep_alive_connection_is_closed_after_the_timeout(http, handlers):
    handle = http()
    sock = _connect(handle)
    try:
        sock.sendall(f"GET /nowhere HTTP/1.1\r\nHost: 127.0.0.1:{handle.port}\r\n\r\n".encode())
        assert _response_head(sock).startswith(b"HTTP/1.1 404")
        rest = b""
        while True:                                  # the 404's body, then the end
            piece = sock.recv(4096)
            if not piece:
                break
            rest += piece
        assert b"HTTP/1.1" not in rest
    finally:
        sock.close()
    assert add(handle.url, open_session(handle.url)) == "5"


@pytest.mark.parametrize("sent", [b"", b"POST /mcp HTTP/1.1\r\nHost: 127.0", "body"])
def test_a_head_or_body_that_stops_coming_is_cut_off_without_an_answer(http, handlers, sent):
    """Slowloris: a request that starts and stalls holds its connection's thread only
    until the timeout; the server closes the connection and answers nothing."""
    handle = http()
    if sent == "body":
        sent = (f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{handle.port}\r\nContent-Type: application/json\r\n"
                f"Accept: application/json, text/event-stream\r\nContent-Length: 100\r\n\r\n"
                '{"jsonrpc": "2.0"').encode()
    sock = _connect(handle)
    try:
        sock.sendall(sent)
        assert sock.recv(4096) == b""
    finally:
        sock.close()
    assert add(handle.url, open_session(handle.url)) == "5"


def test_a_write_its_client_does_not_read_fails_within_the_timeout_in_total(handlers):
    """A client that reads nothing of a large answer: the write ends after the stall
    timeout (``sendall`` under the socket's timeout bounds it in total) and the server
    goes on serving."""
    from mcp_ref import Server
    server = Server("big")

    @server.tool
    def big() -> str:
        """An 8 MB answer."""
        return "x" * (8 << 20)
    handle = start_http(server, ("127.0.0.1", 0), response_mode="json")
    try:
        session_id = open_session(handle.url)
        sock = _connect(handle)
        try:
            body = json.dumps(rpc(2, "tools/call", {"name": "big", "arguments": {}})).encode()
            sock.sendall((f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{handle.port}\r\n"
                          f"Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
                          f"Mcp-Session-Id: {session_id}\r\nMCP-Protocol-Version: 2025-11-25\r\n"
                          f"Content-Length: {len(body)}\r\n\r\n").encode() + body)
            time.sleep(5.0)                              # reads nothing meanwhile
            received = 0
            while True:
                piece = sock.recv(1 << 20)
                if not piece:
                    break
                received += len(piece)
            assert received < 8 << 20                    # cut off: the server stopped writing
        finally:
            sock.close()
        assert requests.post(handle.url, json=rpc(3, "ping"), timeout=WAIT, headers={
            "Accept": "application/json, text/event-stream", "Mcp-Session-Id": session_id,
            "MCP-Protocol-Version": "2025-11-25"}).status_code == 200
    finally:
        handle.shutdown()


def test_an_idle_get_stream_sends_keepalives_to_a_client_still_there(http):
    """http_types rule 2: nothing to send for ``keepalive`` seconds → a comment, after a
    non-blocking look for the client's EOF. Under a Python socket timeout that look
    waited for the client to send something (up to 300 s): no keepalive, no event."""
    handle = http(keepalive=0.1)
    session_id = open_session(handle.url)
    headers = {"Accept": "text/event-stream", "Mcp-Session-Id": session_id, "MCP-Protocol-Version": "2025-11-25"}
    with requests.get(handle.url, headers=headers, stream=True, timeout=5) as response:
        assert response.status_code == 200
        comments = 0
        for line in response.iter_lines():
            comments += line.startswith(b":")
            if comments == 3:
                break
    assert comments == 3


def test_a_2026_07_28_answer_on_an_sse_stream_comes_after_a_pause():
    """http_types rule 3: while a modern POST's stream waits, the server looks for the
    client's EOF every ``MODERN_POLL``; that look must not wait for the client to speak."""
    from mcp_ref import Client, Server
    server = Server("pause")

    @server.tool
    def pause(seconds: float) -> str:
        """Sleep, then answer."""
        time.sleep(seconds)
        return "done"
    handle = start_http(server, ("127.0.0.1", 0), response_mode="sse")
    try:
        with Client.http(handle.url, timeout=8) as client:
            assert client.modern
            assert client.call_tool("pause", {"seconds": 0.5}).content[0].text == "done"
    finally:
        handle.shutdown()
