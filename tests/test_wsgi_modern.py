"""2026-07-28 (sessionless) requests through both adapters of the one request handler
(transports/http/server/core.py rule 8): the WSGI application (transports/http/server/wsgi.py) answers them
as the built-in server does, and a client that leaves cancels its request
(transports/http/server/types.py rule 3; Spec 2026-07-28: basic/transports/streamable-http#cancellation).

Under WSGI the client's leaving is seen when a write fails (an SSE event or keepalive
comment), or, when the server hands over its socket (gunicorn's ``gunicorn.socket``),
while the request waits, as the built-in server does (transports/http/server/wsgi.py rule 6).
"""
import io
import json
import socket
import threading

import pytest

from conftest import MODERN_REVISION
from test_modern_server import meta, modern_server

requests = pytest.importorskip("requests", reason="the HTTP tests drive the server with requests")

from mcp_ref import Context  # noqa: E402
from mcp_ref.transports.http.modern import encode_value  # noqa: E402
from mcp_ref.transports.http.server.app import start_http  # noqa: E402
from mcp_ref.transports.http.server.wsgi import WsgiApp, start_wsgi  # noqa: E402

ACCEPT = "application/json, text/event-stream"
WAIT = 10


def waiting_server():
    """``modern_server`` with ``hold``: it reports progress when asked (so the answer is SSE),
    then waits for its cancellation; ``server.seen`` gets whether it came."""
    server = modern_server()
    server.started, server.seen, server.done = threading.Event(), [], threading.Event()

    @server.tool
    def hold(ctx: Context, progress: bool = False) -> str:
        """Wait until the request is cancelled."""
        if progress:
            ctx.report_progress(1, 2, "started")
        server.started.set()
        server.seen.append(ctx.cancelled.wait(WAIT))
        server.done.set()
        return "held"

    return server


def headers_for(method, params):
    sent = {"Accept": ACCEPT, "Content-Type": "application/json", "MCP-Protocol-Version": MODERN_REVISION,
            "Mcp-Method": method}
    name = params.get("name") or params.get("uri") if isinstance(params, dict) else None
    if name is not None:
        sent["Mcp-Name"] = encode_value(name)
    return sent


def cases():
    """(name, headers, body) of modern requests whose answers must match."""
    call = dict(meta(), name="echo", arguments={"text": "hé"})
    chatty = dict(meta(progressToken="p"), name="chatty", arguments={})
    out = [("discover", "server/discover", meta()), ("call", "tools/call", call),
           ("progress on SSE", "tools/call", chatty), ("unknown method", "tools/nope", meta()),
           ("read", "resources/read", dict(meta(), uri="demo://readme"))]
    found = [(name, headers_for(method, params), {"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
             for name, method, params in out]
    found.append(("Mcp-Name differs", dict(headers_for("tools/call", call), **{"Mcp-Name": "other"}),
                  {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": call}))
    found.append(("Mcp-Method missing", {k: v for k, v in headers_for("tools/call", call).items()
                                         if k != "Mcp-Method"},
                  {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": call}))
    unknown = meta(**{"io.modelcontextprotocol/protocolVersion": "1900-01-01"})
    found.append(("known header, unknown body version", headers_for("server/discover", unknown),
                  {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": unknown}))
    found.append(("batch", headers_for("server/discover", meta()),
                  [{"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": meta()}]))
    return found


def answers(url) -> list:
    got = []
    for name, headers, body in cases():
        response = requests.post(url, data=json.dumps(body), headers=headers, timeout=WAIT)
        ctype = response.headers.get("Content-Type", "")
        if ctype.startswith("text/event-stream"):
            payload = [json.loads(line[5:]) for line in response.text.splitlines()
                       if line.startswith("data:") and line[5:].strip()]
        else:
            payload = [response.json()]
        for message in payload:
            if isinstance(message, dict):
                message.get("result", {}).pop("serverInfo", None)
        got.append((name, response.status_code, ctype, "Mcp-Session-Id" in response.headers, payload))
    return got


def test_modern_requests_are_answered_by_wsgi_as_by_the_built_in_server():
    built_in = start_http(modern_server(), ("127.0.0.1", 0))
    try:
        expected = answers(built_in.url)
    finally:
        built_in.shutdown()
    handle = start_wsgi(WsgiApp(modern_server()))
    try:
        got = answers(handle.url)
        assert handle.app.session_count == 0              # no session outlives its request
    finally:
        handle.shutdown()
    assert got == expected
    assert [status for _, status, _, _, _ in got] == [200, 200, 200, 404, 200, 400, 400, 400, 400]
    assert got[-2][4][0]["error"]["code"] == -32020     # the header first (server/modern/serve.py rule 4)
    assert not any(has_session for _, _, _, has_session, _ in got)


def test_our_client_speaks_2026_07_28_over_wsgiref():
    from mcp_ref import Client
    from test_modern_client import FEATURES, feature_server
    server = feature_server()
    handle = start_wsgi(WsgiApp(server, keepalive=0.2))
    try:
        with Client.http(handle.url, timeout=30, **FEATURES) as client:
            assert client.modern and client.transport.session_id is None
            assert client.call_tool("echo", {"text": "hé"}).content[0].text == "hé"
            trip = client.call_tool("trip", {"city": "Oslo"})             # multi round-trip over WSGI
            assert trip.content[0].text == "accept:{'confirm': True}:sunny:['file:///srv/trips']"
    finally:
        handle.shutdown()


# ---------------------------------------------------------------------- a client that leaves cancels (rule 8)
def raw_call(port: int, progress: bool) -> socket.socket:
    params = dict(meta(progressToken="p") if progress else meta(), name="hold", arguments={"progress": progress})
    body = json.dumps({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": params}).encode()
    head = "".join(f"{k}: {v}\r\n" for k, v in headers_for("tools/call", params).items())
    sock = socket.create_connection(("127.0.0.1", port), timeout=WAIT)
    sock.sendall(f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{head}Content-Length: {len(body)}\r\n\r\n"
                 .encode() + body)
    return sock


def leave(server, sock, progress: bool) -> None:
    """Wait until the tool runs (and, for SSE, until its first event arrived), then hang up."""
    assert server.started.wait(WAIT)
    if progress:
        received = b""
        while b"progress" not in received:
            data = sock.recv(4096)
            assert data, "the server ended the stream"
            received += data
        assert b"text/event-stream" in received
    sock.close()
    assert server.done.wait(WAIT)


@pytest.mark.parametrize("progress", [False, True], ids=["json", "sse"])
@pytest.mark.req("HTTP26-20", "HTTP26-21", "CANC26-4")
def test_a_modern_client_closing_the_built_in_servers_connection_cancels_its_request(progress):
    server = waiting_server()
    handle = start_http(server, ("127.0.0.1", 0), keepalive=0.1)
    try:
        leave(server, raw_call(handle.port, progress), progress)
    finally:
        handle.shutdown()
    assert server.seen == [True]


@pytest.mark.req("HTTP26-20", "CANC26-4")
def test_under_wsgi_a_failed_write_cancels_a_modern_sse_request():
    """wsgiref hands over no socket: the next keepalive comment fails, the server closes the
    body, and the request is cancelled."""
    server = waiting_server()
    handle = start_wsgi(WsgiApp(server, keepalive=0.05))
    try:
        leave(server, raw_call(handle.port, True), True)
    finally:
        handle.shutdown()
    assert server.seen == [True]


def test_under_gunicorn_a_modern_json_request_sees_its_client_leave():
    """With ``gunicorn.socket`` a waiting JSON request looks for EOF, as the built-in server does."""
    server = waiting_server()
    app = WsgiApp(server)
    ours, theirs = socket.socketpair()
    params = dict(meta(), name="hold", arguments={})
    body = json.dumps({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": params}).encode()
    environ = {"REQUEST_METHOD": "POST", "SCRIPT_NAME": "", "PATH_INFO": "/mcp", "QUERY_STRING": "",
               "SERVER_NAME": "localhost", "SERVER_PORT": "80", "SERVER_PROTOCOL": "HTTP/1.1",
               "wsgi.input": io.BytesIO(body), "wsgi.url_scheme": "http", "HTTP_HOST": "localhost",
               "CONTENT_LENGTH": str(len(body)), "gunicorn.socket": ours}
    for name, value in headers_for("tools/call", params).items():
        key = name.upper().replace("-", "_")
        environ[key if key == "CONTENT_TYPE" else "HTTP_" + key] = value
    started = []
    thread = threading.Thread(target=lambda: started.append(app(environ, lambda *a: started.append(a))),
                              name="wsgi-call")
    try:
        thread.start()
        assert server.started.wait(WAIT)
        theirs.close()
        assert server.done.wait(WAIT)
        thread.join(WAIT)
        assert server.seen == [True]
    finally:
        ours.close()
        app.close()
