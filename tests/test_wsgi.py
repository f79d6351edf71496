"""The MCP endpoint as a WSGI application (transports/http/server/wsgi.py), served by the standard
library's ``wsgiref`` (``start_wsgi``, a thread per connection) and called directly.

The built-in server and the WSGI application share one request handler
(transports/http/server/core.py): the parity test sends the same requests to both and
compares what comes back. Spec: basic/transports#streamable-http,
#session-management; PEP 3333.
"""
import io
import json
import threading
import time

import pytest

requests = pytest.importorskip("requests", reason="the HTTP tests drive the server with requests")

from helpers import http_tools_server, rpc  # noqa: E402
from mcp_ref import Client, Context  # noqa: E402
from mcp_ref.auth import StaticTokenVerifier  # noqa: E402
from mcp_ref.transports.http.sse import EventParser  # noqa: E402
from mcp_ref.transports.http.server.app import start_http  # noqa: E402
from mcp_ref.transports.http.server.wsgi import UNKNOWN_HERE, WsgiApp, start_wsgi  # noqa: E402

HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
INIT = rpc(0, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                             "clientInfo": {"name": "raw", "version": "1"}})
HOP_BY_HOP = {"connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te", "trailers",
              "transfer-encoding", "upgrade"}
AS = "https://auth.example.com"


def make_server(gate: threading.Event = None):
    server = http_tools_server("wsgi-test")

    @server.tool
    def wait_after_note(ctx: Context) -> str:
        """Send a log notification, then wait for the test to let go."""
        ctx.notify("notifications/message", {"level": "info", "data": "before the answer"})
        gate.wait(10)
        return "released"

    return server


@pytest.fixture
def wsgi():
    """``wsgi(**options) -> handle``: a WsgiApp on wsgiref on a free port (``handle.app``)."""
    handles = []

    def start(server=None, **options):
        handle = start_wsgi(WsgiApp(server or make_server(), **options))
        handles.append(handle)
        return handle
    yield start
    for handle in handles:
        handle.shutdown()


def post(url, message, session_id=None, headers=None, **kwargs):
    all_headers = dict(HEADERS)
    if session_id is not None:
        all_headers.update({"Mcp-Session-Id": session_id, "MCP-Protocol-Version": "2025-11-25"})
    all_headers.update(headers or {})
    data = message if isinstance(message, (bytes, str)) else json.dumps(message)
    return requests.post(url, data=data, headers=all_headers, timeout=10, **kwargs)


def open_session(url) -> str:
    response = post(url, INIT)
    assert response.status_code == 200, response.text
    session_id = response.headers["Mcp-Session-Id"]
    assert post(url, {"jsonrpc": "2.0", "method": "notifications/initialized"}, session_id).status_code == 202
    return session_id


def text(result) -> str:
    return result.content[0].text


# ---------------------------------------------------------------------- clients over wsgiref
@pytest.mark.parametrize("version", ["2025-11-25", "auto"])
def test_our_client_over_wsgiref_tools_progress_and_notifications(wsgi, version):
    """A session (2025-11-25, with its GET stream) and, by default, 2026-07-28 (no session)."""
    handle = wsgi()
    logs, progress = [], []
    with Client.http(handle.url, on_log=logs.append, protocol_version=version) as client:
        assert client.modern == (version == "auto") and bool(client.transport.session_id) != client.modern
        assert {t.name for t in client.list_tools()} >= {"add", "count", "announce"}
        assert text(client.call_tool("add", {"a": 2, "b": 3})) == "5"
        assert text(client.call_tool("count", {"n": 3}, on_progress=lambda *a: progress.append(a[:2]))) == \
            "counted to 3"
        assert text(client.call_tool("announce", {"text": "hello"})) == "announced"
    assert progress == [(1, 3), (2, 3), (3, 3)]
    assert [entry.data for entry in logs] == ["hello"]


def test_legacy_http_sse_over_wsgiref(wsgi):
    handle = wsgi(keepalive=0.05)            # the next keepalive write finds the client gone
    with Client.sse(handle.base_url + "/sse") as client:
        assert text(client.call_tool("add", {"a": 1, "b": 5})) == "6"
    deadline = time.monotonic() + 5
    while handle.app.session_count and time.monotonic() < deadline:   # the stream's end ends the session
        time.sleep(0.01)
    assert handle.app.session_count == 0


def test_stateless_over_wsgiref(wsgi):
    handle = wsgi(stateless=True)
    with Client.http(handle.url, protocol_version="2025-11-25") as client:
        assert text(client.call_tool("count", {"n": 2})) == "counted to 2"
    assert handle.app.session_count == 0
    response = requests.get(handle.url, headers={"Accept": "text/event-stream"}, timeout=10)
    assert response.status_code == 405 and response.headers["Allow"] == "POST"


def test_an_sse_event_reaches_the_client_before_the_answer_exists(wsgi):
    """Rule 2: the body yields each event as it comes (the tool waits until the test has read it)."""
    gate = threading.Event()
    handle = wsgi(make_server(gate))
    session_id = open_session(handle.url)
    call = rpc(1, "tools/call", {"name": "wait_after_note", "arguments": {}})
    with post(handle.url, call, session_id, stream=True) as response:
        assert response.headers["Content-Type"] == "text/event-stream"
        parser, seen = EventParser(), []
        for data in response.iter_content(chunk_size=1):     # no read ahead (wsgiref ends the body by closing)
            seen += [json.loads(e.data) for e in parser.feed(data) if e.data]
            if any(m.get("method") == "notifications/message" for m in seen):
                break
        assert not any("result" in m for m in seen)      # the tool is still waiting
        gate.set()
        for data in response.iter_content(chunk_size=None):
            seen += [json.loads(e.data) for e in parser.feed(data) if e.data]
    assert seen[-1]["result"]["content"][0]["text"] == "released"


def test_delete_ends_the_get_stream_and_the_session(wsgi):
    handle = wsgi()
    session_id = open_session(handle.url)
    headers = {"Accept": "text/event-stream", "Mcp-Session-Id": session_id, "MCP-Protocol-Version": "2025-11-25"}
    with requests.get(handle.url, headers=headers, stream=True, timeout=10) as stream:
        assert stream.status_code == 200
        assert requests.delete(handle.url, headers=headers, timeout=10).status_code == 204
        list(stream.iter_content(chunk_size=None))           # ends: the session closed
    assert post(handle.url, rpc(2, "tools/list"), session_id).status_code == 404


def test_a_client_that_leaves_a_get_stream_releases_it(wsgi):
    """Rule 2: the server notices on the next keepalive write and closes the body."""
    handle = wsgi(keepalive=0.05)
    session_id = open_session(handle.url)
    transport = handle.app.app.lookup(session_id)
    headers = {"Accept": "text/event-stream", "Mcp-Session-Id": session_id, "MCP-Protocol-Version": "2025-11-25"}
    stream = requests.get(handle.url, headers=headers, stream=True, timeout=10)
    assert stream.status_code == 200 and transport.active == 1
    stream.close()
    deadline = time.monotonic() + 10
    while (transport.active or transport.standalone.conn is not None) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert transport.active == 0 and transport.standalone.conn is None


# ---------------------------------------------------------------------- the application, called directly
def call_app(app, method, path, body=b"", headers=None, script_name=""):
    environ = {"REQUEST_METHOD": method, "SCRIPT_NAME": script_name, "PATH_INFO": path, "QUERY_STRING": "",
               "SERVER_NAME": "localhost", "SERVER_PORT": "80", "SERVER_PROTOCOL": "HTTP/1.1",
               "wsgi.input": io.BytesIO(body), "wsgi.url_scheme": "http", "HTTP_HOST": "localhost"}
    if body:
        environ["CONTENT_LENGTH"] = str(len(body))
    for name, value in (headers or {}).items():
        key = name.upper().replace("-", "_")
        environ[key if key in ("CONTENT_TYPE", "CONTENT_LENGTH") else "HTTP_" + key] = value
    started = []
    result = app(environ, lambda status, response_headers, exc_info=None: started.append((status, response_headers)))
    return started[0][0], dict(started[0][1]), result


def test_the_application_sends_no_hop_by_hop_header_and_a_length_with_every_plain_body():
    app = WsgiApp(make_server())
    try:
        status, headers, result = call_app(app, "POST", "", json.dumps(INIT).encode(), HEADERS, script_name="/mcp")
        assert status == "200 OK" and headers["Content-Length"] == str(len(b"".join(result)))
        assert not HOP_BY_HOP & {name.lower() for name in headers}
        session_id = headers["Mcp-Session-Id"]
        stream_headers = {"Accept": "text/event-stream", "Mcp-Session-Id": session_id}
        status, headers, body = call_app(app, "GET", "/mcp", headers=stream_headers)
        assert status == "200 OK" and headers["Content-Type"] == "text/event-stream"
        assert "Content-Length" not in headers and not HOP_BY_HOP & {name.lower() for name in headers}
        transport = app.app.lookup(session_id)
        assert transport.active == 1 and transport.standalone.conn is not None
        body.close()                        # never iterated: closing still ends the request
        assert transport.active == 0 and transport.standalone.conn is None
        status, headers, _ = call_app(app, "DELETE", "/mcp", headers={"Mcp-Session-Id": session_id})
        assert status == "204 No Content" and "Content-Length" not in headers
    finally:
        app.close()


def test_a_process_that_does_not_know_the_session_says_so():
    """Rule 4: two applications stand for two worker processes without sticky routing."""
    server = make_server()
    first, second = WsgiApp(server), WsgiApp(server)
    try:
        status, headers, _ = call_app(first, "POST", "/mcp", json.dumps(INIT).encode(), HEADERS)
        call = json.dumps(rpc(1, "tools/list")).encode()
        status, _, result = call_app(second, "POST", "/mcp", call,
                                     dict(HEADERS, **{"Mcp-Session-Id": headers["Mcp-Session-Id"]}))
        assert status == "404 Not Found"
        message = json.loads(b"".join(result))["error"]["message"]
        assert message.endswith(UNKNOWN_HERE) and "Mcp-Session-Id" in message
    finally:
        first.close()
        second.close()


def test_our_client_starts_a_new_session_when_another_process_answers(wsgi):
    """The client re-initializes on 404 (Spec: basic/transports#session-management)."""
    server = make_server()
    apps = [WsgiApp(server), WsgiApp(server)]
    current = [0]
    handle = wsgi(server)                   # (its own app is not used)
    handle.httpd.set_app(lambda environ, start_response: apps[current[0]](environ, start_response))
    try:
        with Client.http(handle.url, open_get_stream=False, protocol_version="2025-11-25") as client:
            assert text(client.call_tool("add", {"a": 1, "b": 1})) == "2"
            first = client.transport.session_id
            current[0] = 1                   # the routing changed: another "process" answers
            assert text(client.call_tool("add", {"a": 2, "b": 2})) == "4"
            assert first and client.transport.session_id not in (None, first)   # a new session there
        assert apps[1].session_count <= 1
    finally:
        for app in apps:
            app.close()


def test_options_are_checked_as_for_the_built_in_server():
    with pytest.raises(TypeError, match="allowed_hosts"):
        WsgiApp(make_server(), host="0.0.0.0")
    with pytest.raises(ValueError, match="resource"):
        WsgiApp(make_server(), auth=StaticTokenVerifier({}), resource_metadata={"authorization_servers": [AS]})
    with pytest.raises(ValueError, match="response_mode"):
        WsgiApp(make_server(), response_mode="xml")


# ---------------------------------------------------------------------- parity with the built-in server
def _cases(url: str, base: str, session_id: str):
    """(name, method, url, headers, body) for requests whose answers must match."""
    with_session = dict(HEADERS, **{"Mcp-Session-Id": session_id, "MCP-Protocol-Version": "2025-11-25"})
    sse = {"Accept": "text/event-stream", "Mcp-Session-Id": session_id}
    return [
        ("initialize", "POST", url, HEADERS, json.dumps(INIT)),
        ("no session id", "POST", url, HEADERS, json.dumps(rpc(1, "tools/list"))),
        ("unknown session", "POST", url, dict(HEADERS, **{"Mcp-Session-Id": "nope"}), json.dumps(rpc(1, "ping"))),
        ("not json", "POST", url, {"Content-Type": "text/plain", "Accept": "application/json"}, "{}"),
        ("bad accept", "POST", url, dict(HEADERS, Accept="text/plain"), json.dumps(INIT)),
        ("bad json", "POST", url, HEADERS, "{"),
        ("too large", "POST", url, HEADERS, json.dumps(rpc(1, "ping", {"pad": "x" * 3000}))),
        ("bad version", "POST", url, dict(HEADERS, **{"MCP-Protocol-Version": "1999-01-01"}), json.dumps(INIT)),
        ("initialize in a batch", "POST", url, HEADERS, json.dumps([INIT])),
        ("tools/call", "POST", url, with_session, json.dumps(rpc(2, "tools/call", {"name": "add",
                                                                                   "arguments": {"a": 1, "b": 2}}))),
        ("progress on SSE", "POST", url, with_session,
         json.dumps(rpc(3, "tools/call", {"name": "count", "arguments": {"n": 2}, "_meta": {"progressToken": 1}}))),
        ("notification", "POST", url, with_session, json.dumps({"jsonrpc": "2.0", "method": "notifications/x"})),
        ("GET without session", "GET", url, {"Accept": "text/event-stream"}, None),
        ("GET bad accept", "GET", url, dict(sse, Accept="application/json"), None),
        ("GET bad Last-Event-ID", "GET", url, dict(sse, **{"Last-Event-ID": "zz"}), None),
        ("PUT", "PUT", url, HEADERS, "{}"),
        ("unknown path", "GET", base + "/elsewhere", {}, None),
        ("bad Host", "POST", url, dict(HEADERS, Host="evil.example"), json.dumps(INIT)),
        ("bad Origin", "POST", url, dict(HEADERS, Origin="http://evil.example"), json.dumps(INIT)),
        ("legacy POST without id", "POST", base + "/messages", HEADERS, "{}"),
        ("legacy POST unknown id", "POST", base + "/messages?session_id=nope", HEADERS, "{}"),
        ("legacy GET bad accept", "GET", base + "/sse", {"Accept": "application/json"}, None),
        ("DELETE", "DELETE", url, with_session, None),
        ("after DELETE", "POST", url, with_session, json.dumps(rpc(4, "ping"))),
    ]


COMPARED = ("Content-Type", "Allow", "Retry-After", "Cache-Control", "WWW-Authenticate")


def _answers(handle, **options) -> list:
    session_id = open_session(handle.url)
    answers = []
    for name, method, url, headers, body in _cases(handle.url, handle.base_url, session_id):
        response = requests.request(method, url, headers=headers, data=body, timeout=10)
        kept = {h: response.headers.get(h) for h in COMPARED}
        kept["Mcp-Session-Id"] = "Mcp-Session-Id" in response.headers
        payload = response.text
        if response.headers.get("Content-Type") == "application/json":
            decoded = json.loads(payload)
            payload = decoded.get("error", {}).get("code") if isinstance(decoded, dict) else len(decoded)
        elif response.headers.get("Content-Type") == "text/event-stream":
            payload = [json.loads(e.data).get("method", "result") for e in EventParser().feed(response.content)
                       if e.data]
        answers.append((name, response.status_code, kept, payload))
    return answers


def test_the_wsgi_application_answers_like_the_built_in_server(wsgi):
    options = {"max_body": 2000}
    built_in = start_http(make_server(), ("127.0.0.1", 0), **options)
    try:
        expected = _answers(built_in)
    finally:
        built_in.shutdown()
    got = _answers(wsgi(**options))
    for want, have in zip(expected, got):
        assert have == want
    assert [status for _, status, _, _ in got] == [200, 400, 404, 415, 406, 400, 413, 400, 400, 200, 200, 202,
                                                   400, 406, 400, 405, 404, 403, 403, 400, 404, 406, 204, 404]


def test_authorization_answers_like_the_built_in_server(wsgi):
    options = {"auth": StaticTokenVerifier({"good": {"subject": "alice", "scopes": ["mcp"]}}),
               "resource_metadata": {"authorization_servers": [AS], "resource": "http://localhost/mcp"},
               "required_scopes": {"tools/call": ["mcp", "admin"]}}
    built_in = start_http(make_server(), ("127.0.0.1", 0), **options)
    handle = wsgi(**options)
    try:
        results = []
        for base, url in ((built_in.base_url, built_in.url), (handle.base_url, handle.url)):
            answers = []
            metadata = requests.get(base + "/.well-known/oauth-protected-resource/mcp", timeout=10)
            answers.append((metadata.status_code, metadata.json()))
            no_token = post(url, INIT)
            answers.append((no_token.status_code, no_token.headers["WWW-Authenticate"]))
            token = {"Authorization": "Bearer good"}
            opened = post(url, INIT, headers=token)
            session_id = opened.headers["Mcp-Session-Id"]
            answers.append(opened.status_code)
            scoped = post(url, rpc(1, "tools/call", {"name": "add", "arguments": {"a": 1, "b": 1}}), session_id,
                          headers=token)
            answers.append((scoped.status_code, scoped.headers["WWW-Authenticate"]))
            results.append(answers)
        assert results[0] == results[1]
        assert [a if isinstance(a, int) else a[0] for a in results[1]] == [200, 401, 200, 403]
    finally:
        built_in.shutdown()


def test_serve_wsgi_blocks_until_its_handle_shuts_down(capsys):
    from mcp_ref.transports.http.server.wsgi import serve_wsgi
    handles = []
    thread = threading.Thread(target=serve_wsgi, args=(WsgiApp(make_server()), ("127.0.0.1", 0)),
                              kwargs={"ready": handles.append}, name="serve-wsgi-test")
    thread.start()
    deadline = time.monotonic() + 10
    while not handles and time.monotonic() < deadline:
        time.sleep(0.01)
    try:
        with Client.http(handles[0].url) as client:
            assert text(client.call_tool("add", {"a": 20, "b": 22})) == "42"
    finally:
        handles[0].shutdown()
        thread.join(10)
    assert not thread.is_alive()
    assert f"mcp_ref: serving WSGI at {handles[0].url}" in capsys.readouterr().out


def test_a_server_that_hands_over_its_socket_lets_an_idle_stream_see_the_client_leave():
    """gunicorn puts the client socket in ``gunicorn.socket``: EOF there ends the stream
    at its next keepalive, without waiting for a write to fail."""
    import socket
    from mcp_ref.transports.http.server.wsgi import _WsgiRequest
    ours, theirs = socket.socketpair()
    try:
        request = _WsgiRequest({"REQUEST_METHOD": "GET", "PATH_INFO": "/mcp", "gunicorn.socket": ours})
        assert request.client_gone() is False
        theirs.sendall(b"GET /next HTTP/1.1\r\n")            # a pipelined request is not an end
        assert request.client_gone() is False
        theirs.close()
        ours.recv(100)
        assert request.client_gone() is True
        assert _WsgiRequest({"REQUEST_METHOD": "GET", "PATH_INFO": "/mcp"}).client_gone() is False
    finally:
        ours.close()


def test_a_stream_with_nothing_to_send_yet_still_sends_its_headers(wsgi):
    """A 2025-06-18 GET stream has no priming event; a WSGI server sends the headers only
    with the first body bytes, so the stream opens with a comment (rule 2)."""
    handle = wsgi(keepalive=120)                 # no keepalive comment comes to the rescue
    init = rpc(0, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                 "clientInfo": {"name": "raw", "version": "1"}})
    session_id = post(handle.url, init).headers["Mcp-Session-Id"]
    headers = {"Accept": "text/event-stream", "Mcp-Session-Id": session_id, "MCP-Protocol-Version": "2025-06-18"}
    with requests.get(handle.url, headers=headers, stream=True, timeout=10) as stream:   # raises if no headers
        assert stream.status_code == 200 and stream.headers["Content-Type"] == "text/event-stream"
        assert stream.raw.read(1) == b":"


def test_closing_our_client_ends_a_stream_the_server_answers_with_connection_close(wsgi):
    """wsgiref (like gunicorn's sync workers) closes the connection after each answer, so
    ``http.client`` hands the socket to the response and drops ``conn.sock``: closing the
    client must still shut it, or the thread reading the 2026-07-28 listen stream stays
    blocked (transports/http/client/exchange.py ``socket_of``)."""
    handle = wsgi(stateless=True)
    with Client.http(handle.url, timeout=30) as client:
        assert client.modern and text(client.call_tool("add", {"a": 1, "b": 2})) == "3"
        readers = [t for t in threading.enumerate() if t.name.startswith("mcp-http-post")]
        assert readers                                   # the listen stream is being read
    assert not [t for t in readers if t.is_alive()]      # close() joined them
