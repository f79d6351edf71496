"""The era probe falls back on anything that is not a modern answer.

Spec 2026-07-28: basic/versioning#backward-compatibility-with-initialization-based-versions
("a recognized modern JSON-RPC error ... identifies a modern server ... Anything
else identifies a legacy server"), basic/transports/stdio#backward-compatibility,
basic/transports/streamable-http#backward-compatibility.

A legacy server that answers every request it does not know with an empty
success (``{"result": {}}``, as many hand-written servers do), with an arbitrary
object, or with a malformed ``DiscoverResult``, or that never answers
``server/discover``, is a legacy server: ``Client(protocol_version="auto")``
runs ``initialize`` and works (``tools/call``), over stdio and over Streamable
HTTP. Only a well-formed ``DiscoverResult`` or a recognized modern error keeps
the client modern; asking for ``"2026-07-28"`` still refuses such a server.

The servers are hand-written: ``tests/legacy_server.py`` (stdio, a subprocess)
and ``LegacyHttp`` below (``http.server``).
"""
import json
import os
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from helpers import WAIT
from mcp_ref import Client
from mcp_ref.errors import UnsupportedProtocolVersion

sys.path.insert(0, os.path.dirname(__file__))
import legacy_server  # noqa: E402

SCRIPT = os.path.join(os.path.dirname(__file__), "legacy_server.py")
SILENT_WAIT = 0.5                # init_timeout for the server that never answers the probe
ANSWERING = ["empty", "object", "bad-versions", "bad-capabilities", "bad-result-type"]
BEHAVIOURS = ANSWERING + ["silent"]
SESSION = "legacy-http-1"
MODERN = "2026-07-28"


def init_timeout(behaviour: str) -> float:
    return SILENT_WAIT if behaviour == "silent" else WAIT


def check_works(client: Client, name: str) -> None:
    assert not client.modern
    assert client.protocol_version == "2025-11-25"
    assert client.server_info.name == name
    assert [tool.name for tool in client.list_tools()] == ["echo"]
    assert client.call_tool("echo", {"text": "hi"}).content[0].text == "hi"


# ---------------------------------------------------------------------- stdio
@pytest.mark.parametrize("behaviour", BEHAVIOURS)
def test_stdio_legacy_server_leads_to_initialize(behaviour):
    with Client.stdio([sys.executable, SCRIPT, behaviour], timeout=WAIT,
                      init_timeout=init_timeout(behaviour)) as client:
        check_works(client, "legacy")


@pytest.mark.parametrize("behaviour", ["empty", "object"])
def test_stdio_asking_for_2026_07_28_still_refuses_such_a_server(behaviour):
    client = Client.stdio([sys.executable, SCRIPT, behaviour], timeout=WAIT, init_timeout=WAIT,
                          protocol_version=MODERN)
    try:
        with pytest.raises(UnsupportedProtocolVersion):
            client.connect()
    finally:
        client.close()


# ---------------------------------------------------------------------- Streamable HTTP
class _JoiningHTTPServer(ThreadingHTTPServer):
    """Handler threads are not daemons, so ``server_close()`` joins them."""
    daemon_threads = False


class LegacyHttp:
    """A hand-written legacy (2025-11-25) Streamable HTTP server at ``/mcp``.

    ``initialize`` opens a session (``Mcp-Session-Id``); every request is answered
    with JSON as ``legacy_server.answer`` says (so ``server/discover`` gets the
    behaviour's answer, with 200, whether a session was given or not; ``silent``
    holds the probe's POST open until the client hangs up or the server closes).
    Notifications and answers get 202, GET 405, DELETE 204. ``methods`` lists the
    JSON-RPC methods received, in order."""

    def __init__(self, behaviour: str):
        self.unknown = legacy_server.ANSWERS[behaviour]
        self.methods: list = []
        self.closing = threading.Event()
        app = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def _send(self, status: int, payload=None, headers=()) -> None:
                body = b"" if payload is None else json.dumps(payload).encode()
                self.send_response(status)
                for name, value in headers:
                    self.send_header(name, value)
                if payload is not None:
                    self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self):
                self._send(405, headers=[("Allow", "POST, DELETE")])

            def do_DELETE(self):
                self._send(204)

            def do_POST(self):
                if self.path.split("?")[0] != "/mcp":
                    return self._send(404)
                message = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
                if not isinstance(message, dict) or "method" not in message or "id" not in message:
                    return self._send(202)
                app.methods.append(message["method"])
                result = legacy_server.answer(message, app.unknown)
                if result is None:
                    app.closing.wait(WAIT)              # never answered: hold until closed
                    self.close_connection = True
                    return
                headers = [("Mcp-Session-Id", SESSION)] if message["method"] == "initialize" else []
                self._send(200, {"jsonrpc": "2.0", "id": message["id"], "result": result}, headers)

        self.httpd = _JoiningHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/mcp"
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                       name="legacy-http", daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.closing.set()
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(WAIT)


@pytest.fixture
def legacy_http():
    servers = []

    def start(behaviour: str) -> LegacyHttp:
        servers.append(LegacyHttp(behaviour))
        return servers[-1]
    yield start
    for server in servers:
        server.close()


@pytest.mark.parametrize("behaviour", BEHAVIOURS)
def test_http_legacy_server_leads_to_initialize(legacy_http, behaviour):
    pytest.importorskip("requests", reason="the HTTP client needs requests")
    server = legacy_http(behaviour)
    with Client.http(server.url, timeout=WAIT, init_timeout=init_timeout(behaviour),
                     open_get_stream=False) as client:
        check_works(client, "legacy")
    assert server.methods[:2] == ["server/discover", "initialize"]


@pytest.mark.parametrize("behaviour", ["empty", "object"])
def test_http_asking_for_2026_07_28_still_refuses_such_a_server(legacy_http, behaviour):
    pytest.importorskip("requests", reason="the HTTP client needs requests")
    server = legacy_http(behaviour)
    client = Client.http(server.url, timeout=WAIT, init_timeout=WAIT, protocol_version=MODERN,
                         open_get_stream=False)
    try:
        with pytest.raises(UnsupportedProtocolVersion):
            client.connect()
    finally:
        client.close()
