"""``Client.connect(url)``: Streamable HTTP first, the legacy HTTP+SSE transport when
the ``initialize`` POST is refused with 400, 404 or 405.

Spec: 2025-03-26 and 2025-06-18 basic/transports#backwards-compatibility ("If it
fails with an HTTP 4xx status code (e.g., 405 Method Not Allowed or 404 Not
Found)": GET the server URL and expect an ``endpoint`` event first); 2025-11-25
names exactly "400 Bad Request", "404 Not Found" or "405 Method Not Allowed".

``LegacyStub`` is a small ``http.server`` that refuses every POST to the server
URL with a chosen status and otherwise speaks the 2024-11-05 HTTP+SSE transport
(GET → ``endpoint`` event, POSTs to the endpoint → 202, answers as ``message``
events), answering ``initialize``, ``ping`` and ``tools/call`` from a script.
The 405 case (POST to our own server's ``/sse``) is in
``test_http_client.py::test_auto_detection``; here our own server also serves a
legacy POST endpoint at the SSE URL, which answers a POST without
``session_id`` with 400, as such servers do.

Nothing sleeps to wait: the stub's stream waits on a queue, the test on Events.
"""
import json
import queue
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

import pytest

requests = pytest.importorskip("requests", reason="the HTTP client needs requests")

from helpers import WAIT, http_tools_server  # noqa: E402
from mcp_ref import Client  # noqa: E402
from mcp_ref.transports.http.client.streamable import HttpError  # noqa: E402
from mcp_ref.transports.http.server.app import start_http  # noqa: E402

MCP_PATH = "/mcp"
SESSION = "stub-session-1"
_END = object()


class _JoiningHTTPServer(ThreadingHTTPServer):
    """Handler threads are not daemons, so ``server_close()`` joins them."""
    daemon_threads = False


class LegacyStub:
    """A scripted legacy HTTP+SSE server whose ``POST /mcp`` answers ``post_status``.

    ``seen`` lists ``(method, path, status)`` for every HTTP request, in order;
    ``messages`` the JSON-RPC messages POSTed to the endpoint.
    """

    def __init__(self, post_status: int):
        self.post_status = post_status
        self.seen: list = []
        self.messages: list = []
        self.get_headers: dict = {}
        self.outbox: "queue.Queue" = queue.Queue()
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.0"          # one request per connection; the stream ends at close

            def log_message(self, *args):
                pass

            def _send_json(self, status: int, payload) -> None:
                body = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_POST(self):
                parts = urlsplit(self.path)
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if parts.path == MCP_PATH:
                    stub.seen.append(("POST", parts.path, stub.post_status))
                    return self._send_json(stub.post_status, {"jsonrpc": "2.0", "error": {
                        "code": -32600, "message": f"refused with {stub.post_status}"}})
                if parts.path != "/messages" or parse_qs(parts.query).get("session_id") != [SESSION]:
                    stub.seen.append(("POST", self.path, 404))
                    return self._send_json(404, {"jsonrpc": "2.0", "error": {"code": -32600,
                                                                               "message": "Not Found"}})
                stub.seen.append(("POST", parts.path, 202))
                message = json.loads(body)
                stub.messages.append(message)
                self.send_response(202)
                self.send_header("Content-Length", "0")
                self.end_headers()
                reply = stub.answer(message)
                if reply is not None:
                    stub.outbox.put(reply)

            def do_GET(self):
                if urlsplit(self.path).path != MCP_PATH:
                    stub.seen.append(("GET", self.path, 404))
                    return self._send_json(404, {"jsonrpc": "2.0", "error": {"code": -32600,
                                                                               "message": "Not Found"}})
                stub.seen.append(("GET", MCP_PATH, 200))
                stub.get_headers = {k.lower(): v for k, v in self.headers.items()}
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.end_headers()
                self.wfile.write(f"event: endpoint\ndata: /messages?session_id={SESSION}\n\n".encode())
                self.wfile.flush()
                while True:
                    item = stub.outbox.get()
                    if item is _END:
                        stub.outbox.put(_END)             # for any other open stream
                        return
                    self.wfile.write(f"event: message\ndata: {json.dumps(item)}\n\n".encode())
                    self.wfile.flush()

        self.httpd = _JoiningHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}{MCP_PATH}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                       name="legacy-stub", daemon=True)
        self.thread.start()

    @staticmethod
    def answer(message: dict):
        if "method" not in message or "id" not in message:
            return None                                   # notifications and responses
        method, params = message["method"], message.get("params") or {}
        if method == "initialize":
            result = {"protocolVersion": params["protocolVersion"], "capabilities": {"tools": {}},
                      "serverInfo": {"name": "legacy-stub", "version": "1.0"}}
        elif method == "ping":
            result = {}
        elif method == "tools/call":
            result = {"content": [{"type": "text", "text": f"legacy says {params['arguments']['word']}"}]}
        else:
            return {"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32601, "message": "Method not found"}}
        return {"jsonrpc": "2.0", "id": message["id"], "result": result}

    def close(self) -> None:
        self.outbox.put(_END)                             # ends an open stream
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(WAIT)


@pytest.fixture
def stub():
    stubs = []

    def start(status: int) -> LegacyStub:
        stubs.append(LegacyStub(status))
        return stubs[-1]
    yield start
    for each in stubs:
        each.close()


@pytest.mark.parametrize("status", [400, 404, 405])
def test_connect_falls_back_to_legacy_sse_when_the_post_is_refused(stub, status):
    server = stub(status)
    with Client.connect(server.url, timeout=WAIT) as client:
        assert client.transport.kind == "sse"
        assert client.server_info.name == "legacy-stub"
        assert client.call_tool("echo", {"word": "hi"}).content[0].text == "legacy says hi"
        client.ping()
    # Streamable HTTP first: the server/discover probe and initialize (both refused), then the GET
    # of the same URL, then everything on the endpoint.
    assert server.seen[:3] == [("POST", MCP_PATH, status), ("POST", MCP_PATH, status), ("GET", MCP_PATH, 200)]
    assert all(entry == ("POST", "/messages", 202) for entry in server.seen[3:])
    assert "text/event-stream" in server.get_headers.get("accept", "")
    methods = [m.get("method") for m in server.messages]
    assert methods[:2] == ["initialize", "notifications/initialized"]   # initialize sent again, over SSE
    assert "tools/call" in methods and "ping" in methods


@pytest.mark.parametrize("status", [401, 403, 415])
def test_other_statuses_raise_without_trying_legacy(stub, status):
    server = stub(status)
    client = Client.connect(server.url, timeout=WAIT)
    with pytest.raises(HttpError) as info:
        with client:
            pytest.fail("connected although the POST was refused")
    assert info.value.status == status
    assert server.seen == [("POST", MCP_PATH, status)]          # no GET: no fallback


def test_our_legacy_endpoint_at_the_sse_url_answers_400_and_the_client_falls_back():
    """Our own server with the legacy POST endpoint sharing the SSE URL: a POST without
    ``session_id`` gets 400, so the client falls back and runs a real session over SSE."""
    handle = start_http(http_tools_server("fallback-400"), ("127.0.0.1", 0), sse_path="/legacy",
                        messages_path="/legacy", keepalive=0.2)
    try:
        url = handle.base_url + "/legacy"
        refused = requests.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
                                headers={"Accept": "application/json, text/event-stream"}, timeout=WAIT)
        assert refused.status_code == 400
        body = refused.json()
        assert "error" in body and body.get("id") is None, body
        with Client.connect(url, timeout=WAIT) as client:
            assert client.transport.kind == "sse"
            assert client.server_info.name == "fallback-400"
            assert client.call_tool("add", {"a": 20, "b": 22}).content[0].text == "42"
    finally:
        handle.shutdown()


def test_a_legacy_sse_session_quiet_longer_than_the_endpoint_timeout_stays_open():
    """The endpoint deadline bounds the GET and the endpoint event, not the stream after it
    (transports/http/client/sse_legacy.py rule 1): a session that says nothing for longer
    than ``endpoint_timeout`` still gets its answers (its stream read timed out before, and
    the next call failed with ConnectionClosed)."""
    import time
    handle = start_http(http_tools_server("quiet"), ("127.0.0.1", 0))
    try:
        with Client.sse(handle.sse_url, endpoint_timeout=0.5, timeout=WAIT) as client:
            time.sleep(1.2)
            assert client.list_tools()
            time.sleep(0.7)
            assert client.list_tools()
    finally:
        handle.shutdown()
