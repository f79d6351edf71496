"""The HTTP clients (Streamable HTTP, legacy SSE, auto-detection) against our server
and against small scripted servers that misbehave on purpose: every answer mode,
resumption and retry timing, deduplication, session expiry, typed errors,
headers, TLS, clean close, and many concurrent sessions.

Servers listen on port 0; tests never wait on fixed sleeps for readiness.
Spec: basic/transports#streamable-http.
"""
import json
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

requests = pytest.importorskip("requests", reason="the HTTP client needs requests")

from mcp_ref import Client, Context, Server, SessionError  # noqa: E402
from mcp_ref.transports import memory_pair  # noqa: E402
from mcp_ref.transports.http.client.streamable import HttpError, SessionExpired, StreamableHttpTransport  # noqa: E402
from mcp_ref.transports.http.server.app import start_http  # noqa: E402


from helpers import http_tools_server  # noqa: E402

# the legacy era's Streamable HTTP (sessions, GET stream, resumption):
# the clients here ask for 2025-11-25 (tests/test_modern_*.py for 2026-07-28).
pytestmark = pytest.mark.usefixtures("legacy_client_default")


def make_server() -> Server:
    server = http_tools_server("http-client-test")

    @server.tool
    def interrupted(tag: str, n: int, ctx: Context) -> str:
        """Send n notifications; the HTTP response is closed halfway and the rest waits for resumption."""
        for i in range(n):
            if i == n // 2:
                ctx.close_sse_stream()
            ctx.notify("notifications/message", {"level": "info", "data": f"{tag}:{i}"})
        return f"{tag} done"

    @server.tool
    def poll_me(ctx: Context) -> str:
        """End this request's SSE stream at once (SSE polling), then answer."""
        closed = ctx.close_sse_stream()
        ctx.log("info", "after the close")
        time.sleep(0.05)
        return f"closed={closed}"

    @server.tool
    def ping_back(ctx: Context) -> str:
        """Send the client a request (ping) on this request's stream and wait for the answer."""
        ctx.request("ping", timeout=5)
        return "pong received"

    @server.tool
    def slow(seconds: float, ctx: Context) -> str:
        ctx.cancelled.wait(seconds)
        return "slept"

    return server


@pytest.fixture
def http():
    handles = []

    def start(**options):
        handle = start_http(make_server(), ("127.0.0.1", 0), **options)
        handles.append(handle)
        return handle
    yield start
    for handle in handles:
        handle.shutdown()


class Notes:
    """Collects notifications/message data in arrival order."""

    def __init__(self):
        self.items, self.lock = [], threading.Lock()

    def __call__(self, method, params):
        if method == "notifications/message":
            with self.lock:
                self.items.append(params.get("data"))

    def wait_for(self, count, limit=5.0) -> list:
        deadline = time.monotonic() + limit
        while len(self.items) < count and time.monotonic() < deadline:
            time.sleep(0.01)
        return list(self.items)


def text(result) -> str:
    return result.content[0].text


# ---------------------------------------------------------------------- every answer mode
@pytest.mark.req("TRN-12", "TRN-19")
@pytest.mark.parametrize("options", [{}, {"json_response": True}, {"response_mode": "sse"}, {"stateless": True}],
                         ids=["auto", "json", "sse", "stateless"])
def test_streamable_http_in_every_mode(http, options):
    handle = http(**options)
    notes = Notes()
    with Client.http(handle.url, timeout=10, on_notification=notes) as client:
        assert client.protocol_version == "2025-11-25"
        assert {t.name for t in client.list_tools()} >= {"add", "count", "announce"}
        assert text(client.call_tool("add", {"a": 2, "b": 3})) == "5"
        progress = []
        result = client.call_tool("count", {"n": 3}, on_progress=lambda p, t, m: progress.append(p))
        assert text(result) == "counted to 3"
        if not options.get("json_response"):      # JSON mode: progress rides the GET stream, unordered
            assert progress == [1, 2, 3]
        assert text(client.call_tool("announce", {"text": "hello"})) == "announced"
        assert notes.wait_for(1) == ["hello"]
        if not options.get("stateless"):
            assert text(client.call_tool("ping_back")) == "pong received"
        expected_get = 405 if options.get("stateless") else 200
        assert client.transport.get_status == expected_get


def test_get_stream_405_is_tolerated(http):
    handle = http(enable_get=False)
    with Client.http(handle.url) as client:
        assert client.transport.get_status == 405
        assert text(client.call_tool("add", {"a": 1, "b": 1})) == "2"


def test_legacy_sse_client(http):
    handle = http(keepalive=0.1)
    notes = Notes()
    with Client.sse(handle.sse_url, on_notification=notes, protocol_version="2024-11-05") as client:
        assert client.protocol_version == "2024-11-05"
        assert text(client.call_tool("add", {"a": 2, "b": 2})) == "4"
        progress = []
        client.call_tool("count", {"n": 2}, on_progress=lambda p, t, m: progress.append(p))
        assert progress == [1, 2]
        client.call_tool("announce", {"text": "legacy"})
        assert text(client.call_tool("ping_back")) == "pong received"
        assert notes.wait_for(1) == ["legacy"]
    assert _eventually(lambda: handle.app.session_count == 0, 5)         # noticed at the next keepalive


def _eventually(predicate, limit=20.0) -> bool:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.02)
    return False


def test_auto_detection(http):
    handle = http(keepalive=0.2)
    with Client.connect(handle.url) as client:
        assert client.transport.kind == "streamable-http"
        assert text(client.call_tool("add", {"a": 1, "b": 2})) == "3"
    with Client.connect(handle.sse_url, timeout=10) as client:     # POST /sse → 405 → legacy
        assert client.transport.kind == "sse"
        assert text(client.call_tool("add", {"a": 2, "b": 2})) == "4"
    with pytest.raises(TypeError):
        Client.connect(42)
    stdio = Client.connect(["true"])
    assert type(stdio.transport).__name__ == "StdioClientTransport"
    stdio.close()


# ---------------------------------------------------------------------- resumption
def test_a_closed_stream_is_resumed_and_every_message_arrives_once(http):
    handle = http(retry_interval=20)
    notes = Notes()
    with Client.http(handle.url, on_notification=notes) as client:
        assert text(client.call_tool("interrupted", {"tag": "t", "n": 10})) == "t done"
        assert notes.wait_for(10) == [f"t:{i}" for i in range(10)]


def test_ctx_close_sse_stream_ends_the_response_and_the_client_resumes_for_the_result(http):
    """``ctx.close_sse_stream()`` (2025-11-25 SSE polling): the HTTP response ends while the
    tool runs on; the client reconnects with Last-Event-ID and gets the log and the result."""
    handle = http(retry_interval=20)
    notes = Notes()
    with Client.http(handle.url, on_notification=notes) as client:
        assert text(client.call_tool("poll_me")) == "closed=True"
        assert notes.wait_for(1) == ["after the close"]


def test_ctx_close_sse_stream_is_a_no_op_off_http():
    client_end, server_end = memory_pair()
    make_server().serve(server_end)
    with Client(client_end) as client:
        assert text(client.call_tool("poll_me")) == "closed=False"


@pytest.mark.req("TRN-21")
def test_polling_server_answers_arrive_after_reconnects(http):
    handle = http(poll_interval=0.1, retry_interval=20, response_mode="sse")
    with Client.http(handle.url) as client:
        assert text(client.call_tool("slow", {"seconds": 0.5})) == "slept"
        assert text(client.call_tool("add", {"a": 1, "b": 1})) == "2"


@pytest.mark.req("TRN-33")
def test_the_get_stream_is_resumed_across_polling_disconnects(http):
    """Server messages on the standalone stream arrive once each while the server keeps
    closing the GET connection (SEP-1699 polling) and the client keeps resuming it."""
    handle = http(poll_interval=0.05, retry_interval=10)
    seen = []
    with Client.http(handle.url, on_notification=lambda method, params: seen.append(method)) as client:
        assert _eventually(lambda: all(t.session.state == "ready" for t in handle.app._sessions.values()), 5)
        for i in range(10):
            handle.app.server.add_tool(lambda: "x", name=f"late_{i}")      # → tools/list_changed
            time.sleep(0.03)
        assert _eventually(lambda: len(seen) >= 10, 5)
        time.sleep(0.2)
        assert seen == ["notifications/tools/list_changed"] * 10
        assert client.transport.get_status == 200


@pytest.mark.req("TRN-34")
def test_concurrent_interrupted_streams_deliver_nothing_twice(http):
    handle = http(retry_interval=20)
    notes = Notes()
    with Client.http(handle.url, on_notification=notes) as client:
        with ThreadPoolExecutor(8) as pool:
            results = list(pool.map(lambda i: text(client.call_tool("interrupted", {"tag": f"c{i}", "n": 6})),
                                    range(8)))
        assert results == [f"c{i} done" for i in range(8)]
        got = notes.wait_for(48)
    assert sorted(got) == sorted(f"c{i}:{j}" for i in range(8) for j in range(6))
    for i in range(8):                                  # each stream in order
        assert [x for x in got if x.startswith(f"c{i}:")] == [f"c{i}:{j}" for j in range(6)]


class Scripted(BaseHTTPRequestHandler):
    """A server that plays a script: POST initialize (or another request) → JSON;
    tools/call → an SSE stream that ends (after ``retry``) before its response;
    GET + Last-Event-ID → the rest, repeating one event the client already has."""

    protocol_version = "HTTP/1.1"
    log = []
    resume_status = 200                 # what GET + Last-Event-ID answers
    endpoint = "/messages?session_id=1"  # the legacy endpoint event's data

    def log_message(self, *args):
        pass

    def _send(self, status, body=b"", ctype="application/json", headers=()):
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        if status != 204:
            self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _stream(self, events):
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for event in events:
            data = event.encode()
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.write(b"0\r\n\r\n")

    def do_POST(self):
        message = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.log.append(("POST", dict(self.headers), message, time.monotonic()))
        if message.get("method") == "initialize":
            result = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                      "serverInfo": {"name": "scripted", "version": "1"}}
            body = json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}).encode()
            return self._send(200, body, headers=[("Mcp-Session-Id", "scripted-session")])
        if "method" not in message or "id" not in message:
            return self._send(202)
        if message["method"] != "tools/call":
            result = {"tools": [{"name": "anything", "inputSchema": {"type": "object"}}]} \
                if message["method"] == "tools/list" else {}
            return self._send(200, json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}).encode())
        note = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "A"}}
        self.server.request_id = message["id"]
        self._stream(["id: p:0\nretry: 300\ndata:\n\n", f"id: p:1\ndata: {json.dumps(note)}\n\n"])
        self.log.append(("END", None, None, time.monotonic()))

    def do_GET(self):
        self.log.append(("GET", dict(self.headers), None, time.monotonic()))
        if self.path.startswith("/sse"):
            return self._stream([f"event: endpoint\ndata: {self.endpoint}\n\n"])
        if self.headers.get("Last-Event-ID") != "p:1":
            return self._send(405, b"{}")
        if self.resume_status == "empty":
            return self._stream([])
        if self.resume_status != 200:
            return self._send(self.resume_status, b'{"jsonrpc":"2.0","id":null,"error":{"code":-32603,'
                                                  b'"message":"resumption refused"}}')
        note = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "A"}}
        note_b = {**note, "params": {"level": "info", "data": "B"}}
        answer = {"jsonrpc": "2.0", "id": self.server.request_id, "result": {"content": [{"type": "text",
                                                                                         "text": "resumed"}]}}
        self._stream([f"id: p:1\ndata: {json.dumps(note)}\n\n", f"id: p:2\ndata: {json.dumps(note_b)}\n\n",
                      f"id: p:3\ndata: {json.dumps(answer)}\n\n"])

    def do_DELETE(self):
        self.log.append(("DELETE", dict(self.headers), None, time.monotonic()))
        self._send(204)


@pytest.fixture
def scripted():
    Scripted.log, Scripted.resume_status, Scripted.endpoint = [], 200, "/messages?session_id=1"
    server = ThreadingHTTPServer(("127.0.0.1", 0), Scripted)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/mcp"
    server.shutdown()
    server.server_close()
    thread.join()


@pytest.mark.req("TRN-12", "TRN-13", "TRN-14", "TRN-15", "TRN-19", "TRN-23", "TRN-27", "TRN-29", "TRN-37", "TRN-42",
                 "TRN-46", "TRN-47", "TRN-48", "LIFE-13")
def test_resumption_waits_the_servers_retry_and_drops_duplicates(scripted):
    notes = Notes()
    client = Client.http(scripted, on_notification=notes, headers={"X-Test": "yes"}, auth=("user", "pw"))
    client.transport.default_retry = 3.0                 # the server's 300 ms must win
    with client:
        assert text(client.call_tool("anything")) == "resumed"
        assert notes.wait_for(2) == ["A", "B"]
    log = Scripted.log
    ended = next(t for kind, _, _, t in log if kind == "END")
    resumed = next(t for kind, headers, _, t in log if kind == "GET" and headers.get("Last-Event-ID") == "p:1")
    assert 0.28 <= resumed - ended < 1.5
    posts = [headers for kind, headers, _, _ in log if kind == "POST"]
    assert all(h["X-Test"] == "yes" and h["Authorization"].startswith("Basic ") for h in posts)
    assert all("application/json" in h["Accept"] and "text/event-stream" in h["Accept"] for h in posts)
    assert "Mcp-Session-Id" not in posts[0] and "MCP-Protocol-Version" not in posts[0]
    assert all(h["Mcp-Session-Id"] == "scripted-session" and h["MCP-Protocol-Version"] == "2025-11-25"
               for h in posts[1:])
    deletes = [headers for kind, headers, _, _ in log if kind == "DELETE"]
    assert deletes and deletes[0]["Mcp-Session-Id"] == "scripted-session"
    gets = [headers for kind, headers, _, _ in log if kind == "GET"]
    assert gets and all("text/event-stream" in h["Accept"] for h in gets)     # the standalone GET and the resumption
    sent = [message.get("method") for kind, _, message, _ in log if kind == "POST"]
    assert "notifications/cancelled" not in sent              # a disconnect is not a cancellation


@pytest.mark.parametrize("answer", [500, "empty"])
def test_resumption_gives_up_after_bounded_attempts(scripted, answer):
    Scripted.resume_status = answer
    with Client.http(scripted, timeout=10) as client:
        client.transport.max_reconnects = 2
        with pytest.raises(HttpError) as info:
            client.call_tool("anything")
        if answer == 500:
            assert info.value.status == 500 and "resumption refused" in str(info.value)
        else:
            assert "keeps ending at once" in str(info.value)
    resumes = [h for kind, h, _, _ in Scripted.log if kind == "GET" and h.get("Last-Event-ID") == "p:1"]
    assert len(resumes) == 2


@pytest.mark.req("TRN-28")
def test_a_cancelled_request_is_not_resumed(http, monkeypatch):
    from mcp_ref import RequestTimeout
    from mcp_ref.transports.http.server import handler as http_handler
    resumes = []
    original = http_handler.McpRequestHandler.do_GET

    def counting_get(handler):
        if handler.headers.get("Last-Event-ID"):
            resumes.append(handler.headers["Last-Event-ID"])
        original(handler)
    monkeypatch.setattr(http_handler.McpRequestHandler, "do_GET", counting_get)
    handle = http(response_mode="sse", retry_interval=20)
    with Client.http(handle.url) as client:
        with pytest.raises(RequestTimeout):
            client.call_tool("slow", {"seconds": 5}, timeout=0.3)
        time.sleep(0.3)                                   # many retry intervals: nothing may happen
        assert resumes == []
        assert text(client.call_tool("add", {"a": 1, "b": 1})) == "2"


def test_legacy_client_refuses_an_endpoint_on_another_origin(scripted):
    base = scripted.rsplit("/", 1)[0]
    Scripted.endpoint = "http://evil.example/messages"
    with pytest.raises(HttpError) as info:
        Client.sse(base + "/sse")
    assert "origin" in str(info.value)
    Scripted.endpoint = "/messages?session_id=1"
    transport = Client.sse(base + "/sse").transport                 # a relative URI on the same origin is fine
    assert transport.endpoint == base + "/messages?session_id=1"
    transport.close()


# ---------------------------------------------------------------------- sessions, errors, close
@pytest.mark.req("TRN-45", "LIFE-4")
def test_an_expired_session_is_renewed_transparently(http):
    handle = http()
    with Client.http(handle.url) as client:
        old = client.transport.session_id
        assert requests.delete(handle.url, headers={"Mcp-Session-Id": old}, timeout=5).status_code == 204
        assert text(client.call_tool("add", {"a": 20, "b": 22})) == "42"
        assert client.transport.session_id not in (None, old)
        assert text(client.call_tool("announce", {"text": "x"})) == "announced"
        # the new session was initialized in full: initialize, then notifications/initialized
        assert handle.app.lookup(client.transport.session_id).session.state == "ready"


def test_an_expired_session_raises_when_asked_to(http):
    handle = http()
    with Client.http(handle.url, on_session_expired="raise") as client:
        requests.delete(handle.url, headers={"Mcp-Session-Id": client.transport.session_id}, timeout=5)
        with pytest.raises(SessionExpired) as info:
            client.call_tool("add", {"a": 1, "b": 1})
        assert info.value.status == 404 and isinstance(info.value, SessionError)
        with pytest.raises(SessionExpired):
            client.ping()


def test_http_errors_are_typed_with_their_status(http):
    handle = http(allowed_hosts=["mcp.example"])
    with pytest.raises(HttpError) as info:
        with Client.http(handle.url):
            pass
    assert info.value.status == 403 and "403" in str(info.value) and "Host" in str(info.value)
    dead = http()
    url = dead.url
    dead.shutdown()
    with pytest.raises(HttpError) as info:
        with Client.http(url, connect_timeout=2):
            pass
    assert info.value.status is None and url in str(info.value)


def test_read_timeout_is_a_typed_error(http):
    handle = http(json_response=True)
    with Client.http(handle.url, read_timeout=0.3) as client:
        with pytest.raises(HttpError) as info:
            client.call_tool("slow", {"seconds": 3})
        assert info.value.status is None and "timed out" in str(info.value).lower()


@pytest.mark.req("TRN-46")
def test_close_deletes_the_session_quickly_while_the_get_stream_is_open(http):
    handle = http()
    client = Client.http(handle.url)
    client.__enter__()
    assert client.transport.get_status == 200 and handle.app.session_count == 1
    started = time.monotonic()
    client.close()
    assert time.monotonic() - started < 1.5
    assert handle.app.session_count == 0


@pytest.mark.filterwarnings("ignore::urllib3.exceptions.InsecureRequestWarning")
def test_tls_verification_options(tmp_path):
    ssl = pytest.importorskip("ssl")
    cert_file, key_file = _self_signed_certificate(tmp_path)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert_file, key_file)
    handle = start_http(make_server(), ("127.0.0.1", 0), ssl_context=context)
    try:
        assert handle.url.startswith("https://")
        with Client.http(handle.url, verify=str(cert_file)) as client:
            assert text(client.call_tool("add", {"a": 1, "b": 2})) == "3"
        with Client.http(handle.url, verify=False) as client:
            assert text(client.call_tool("add", {"a": 2, "b": 2})) == "4"
        with pytest.raises(HttpError) as info:
            with Client.http(handle.url):
                pass
        assert "certificate" in str(info.value).lower()
    finally:
        handle.shutdown()


def _self_signed_certificate(directory):
    try:
        import cryptography  # noqa: F401
    except ImportError:                             # e.g. Python 3.9, where the test extras bring no cryptography
        return _self_signed_certificate_by_openssl(directory)
    import datetime
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.timezone.utc)
    certificate = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
                   .serial_number(x509.random_serial_number())
                   .not_valid_before(now - datetime.timedelta(days=1)).not_valid_after(now + datetime.timedelta(days=1))
                   .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                                  critical=False)
                   .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
                   .sign(key, hashes.SHA256()))
    cert_file, key_file = directory / "cert.pem", directory / "key.pem"
    cert_file.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return cert_file, key_file


def _self_signed_certificate_by_openssl(directory):
    import shutil
    import subprocess
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.skip("generating a test certificate needs cryptography or the openssl command")
    cert_file, key_file = directory / "cert.pem", directory / "key.pem"
    subprocess.run([openssl, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                    "-nodes", "-keyout", str(key_file), "-out", str(cert_file), "-days", "1",
                    "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
                    "-addext", "basicConstraints=critical,CA:TRUE"],
                   check=True, capture_output=True, timeout=60)
    return cert_file, key_file


def test_an_unbound_transport_answers_failures_as_error_responses(http):
    """Without a bound session a failed request still gets an answer (with httpStatus)."""
    handle = http()
    transport = StreamableHttpTransport(handle.url)
    from mcp_ref.jsonrpc.messages import Request
    transport.session_id = "gone"
    transport.on_session_expired = "raise"
    transport.send(Request(1, "ping"))
    reply = transport.receive()
    assert reply.id == 1 and reply.error.data == {"httpStatus": 404}
    transport.close()
    assert transport.receive() is None


# ---------------------------------------------------------------------- load
def test_fifty_concurrent_sessions_of_a_hundred_calls(http):
    handle = http()
    before = {t for t in threading.enumerate()}

    def one_session(index):
        with Client.http(handle.url, timeout=30) as client:
            for i in range(100):
                assert text(client.call_tool("add", {"a": index, "b": i})) == str(index + i)
        return index

    with ThreadPoolExecutor(16) as pool:
        assert sorted(pool.map(one_session, range(50))) == list(range(50))
    assert _eventually(lambda: handle.app.session_count == 0, 5)
    assert _eventually(lambda: not [t for t in threading.enumerate()
                                    if t not in before and t.name.startswith("mcp-") and "http-conn" not in t.name])
