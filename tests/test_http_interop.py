"""Interop over HTTP with the official Python SDK (``mcp`` >= 2), both ways.

* The SDK's Streamable HTTP client (its own ``mode="legacy"`` handshake and its
  ``"auto"`` probe) and its legacy SSE client, run as subprocesses, against an
  ``mcp_ref`` server started in-process on a free port.
* ``mcp_ref.Client.http`` / ``Client.sse`` against ``tests/interop/sdk_server.py``
  served by the SDK over Streamable HTTP (SSE answers, JSON answers, stateless)
  and over legacy HTTP+SSE, in a subprocess bound to a free port that prints a
  readiness line.

Spec: basic/transports#streamable-http, #backwards-compatibility.
"""
import json
import selectors
import subprocess
import sys
import time
from pathlib import Path

import pytest

from helpers import require_official_sdk

require_official_sdk()
pytest.importorskip("uvicorn", reason="the SDK's HTTP server runs on uvicorn")
pytest.importorskip("requests", reason="the mcp_ref HTTP client needs requests")

from mcp_ref import Client, Context, Server  # noqa: E402
from mcp_ref.transports.http.server.app import start_http  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
SDK_SERVER = REPO / "tests" / "interop" / "sdk_server.py"

# Serves sdk_server.py's MCPServer on a socket bound here to a free port (argv: path, mode).
LAUNCH_SDK_SERVER = '''
import runpy, socket, sys, warnings
warnings.simplefilter("ignore")
path, mode = sys.argv[1], sys.argv[2]
mcp = runpy.run_path(path, run_name="sdk_interop_server")["mcp"]
if mode == "sse":
    app = mcp.sse_app()
else:
    app = mcp.streamable_http_app(json_response=(mode == "json"), stateless_http=(mode == "stateless"))
import uvicorn
sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
sock.bind(("127.0.0.1", 0))
sock.listen(128)
server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
print("READY http://127.0.0.1:%d" % sock.getsockname()[1], flush=True)
server.run(sockets=[sock])
'''

# The SDK's client: a fixed scenario, a JSON report on stdout (argv: url, transport, handshake mode).
SDK_CLIENT = '''
import anyio, json, sys, warnings
warnings.simplefilter("ignore")

async def main(url, transport, mode):
    from mcp import Client
    report = {"progress": [], "logs": []}

    async def on_log(params):
        report["logs"].append(params.data)

    async def on_progress(progress, total, message):
        report["progress"].append([progress, total])

    target = url
    if transport == "sse":
        from mcp.client.sse import sse_client
        target = sse_client(url)
    async with Client(target, mode=mode, logging_callback=on_log, cache=None, read_timeout_seconds=20) as client:
        report["protocol_version"] = client.protocol_version
        report["server"] = client.server_info.name
        report["tools"] = sorted(t.name for t in (await client.list_tools()).tools)
        report["add"] = [c.text for c in (await client.call_tool("add", {"a": 2, "b": 3})).content]
        report["count"] = [c.text for c in (await client.call_tool("count", {"n": 3},
                                                                    progress_callback=on_progress)).content]
        report["announce"] = [c.text for c in (await client.call_tool("announce", {"text": "hello"})).content]
        if client.protocol_version < "2026-07-28":     # the modern era has no ping, no server requests
            report["ping_back"] = [c.text for c in (await client.call_tool("ping_back", {})).content]
            await client.send_ping()
    print(json.dumps(report))

anyio.run(main, *sys.argv[1:])
'''


def _read_line(proc, limit: float) -> str:
    """The subprocess's first stdout line, or "" when it says nothing in time."""
    selector = selectors.DefaultSelector()
    selector.register(proc.stdout, selectors.EVENT_READ)
    deadline = time.monotonic() + limit
    try:
        while time.monotonic() < deadline:
            if selector.select(max(0.0, deadline - time.monotonic())):
                return proc.stdout.readline()
        return ""
    finally:
        selector.close()


@pytest.fixture
def sdk_server(tmp_path):
    """``sdk_server(mode) -> base URL`` (mode: streamable, json, stateless, sse)."""
    script = tmp_path / "launch_sdk_server.py"
    script.write_text(LAUNCH_SDK_SERVER)
    procs = []

    def start(mode: str) -> str:
        proc = subprocess.Popen([sys.executable, str(script), str(SDK_SERVER), mode], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        procs.append(proc)
        line = _read_line(proc, 60)
        if not line.startswith("READY "):
            proc.kill()
            pytest.fail(f"the SDK server did not start: {line!r} {proc.stderr.read()[-2000:]}")
        return line.split()[1]
    yield start
    for proc in procs:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        proc.stdout.close()
        proc.stderr.close()


from helpers import http_tools_server  # noqa: E402


def _our_server() -> Server:
    server = http_tools_server("mcp_ref-interop")

    @server.tool
    def ping_back(ctx: Context) -> str:
        """Ping the client (a server request on this request's stream)."""
        ctx.request("ping", timeout=10)
        return "pong received"

    return server


# ---------------------------------------------------------------------- the SDK's client, our server
@pytest.mark.parametrize("transport, mode", [("streamable", "legacy"), ("streamable", "auto"), ("sse", "legacy")])
def test_sdk_client_against_our_server(tmp_path, transport, mode):
    script = tmp_path / "sdk_client.py"
    script.write_text(SDK_CLIENT)
    handle = start_http(_our_server(), ("127.0.0.1", 0))
    try:
        url = handle.sse_url if transport == "sse" else handle.url
        done = subprocess.run([sys.executable, str(script), url, transport, mode], capture_output=True, text=True,
                              timeout=120)
    finally:
        handle.shutdown()
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    # The SDK's auto mode probes server/discover: our server answers it, so it speaks 2026-07-28.
    modern = mode == "auto"
    assert report["protocol_version"] == ("2026-07-28" if modern else "2025-11-25")
    assert report["server"] == "mcp_ref-interop"
    assert report["tools"] == ["add", "announce", "count", "ping_back"]
    assert report["add"] == ["5"] and report["count"] == ["counted to 3"]
    assert report["progress"] == [[1, 3], [2, 3], [3, 3]]
    assert report["announce"] == ["announced"] and report["logs"] == ["hello"]
    if not modern:
        assert report["ping_back"] == ["pong received"]


# ---------------------------------------------------------------------- our client, the SDK's server
class Notes:
    """Log notifications; they reach callbacks on the session's notify thread, so tests wait."""

    def __init__(self):
        self.logs = []

    def __call__(self, method, params):
        if method == "notifications/message":
            self.logs.append(params.get("data"))

    def wait_for(self, count: int, limit: float = 5.0) -> list:
        deadline = time.monotonic() + limit
        while len(self.logs) < count and time.monotonic() < deadline:
            time.sleep(0.01)
        return list(self.logs)


def _sampling(request):
    return {"role": "assistant", "content": {"type": "text", "text": "forty-two"}, "model": "mcp_ref-test-model",
            "stopReason": "endTurn"}


@pytest.mark.parametrize("mode", ["streamable", "json", "stateless", "sse"])
def test_our_client_against_the_sdk_server(sdk_server, mode):
    base = sdk_server(mode)
    notes = Notes()
    # The legacy era (the SDK server is dual-era; tests/test_modern_interop.py has 2026-07-28).
    options = dict(timeout=30, on_notification=notes, sampling=_sampling, protocol_version="2025-11-25")
    client = Client.sse(base + "/sse", **options) if mode == "sse" else Client.http(base + "/mcp", **options)
    with client:
        assert client.protocol_version == "2025-11-25"
        assert client.server_info.name == "sdk-interop-server"
        assert {t.name for t in client.list_tools()} >= {"add", "count", "echo_text", "fail", "log_burst"}
        result = client.call_tool("add", {"a": 2, "b": 3})
        assert result.content[0].text == "5" and result.structured_content == {"result": 5}
        progress = []
        result = client.call_tool("count", {"n": 3}, on_progress=lambda p, t, m: progress.append((p, t, m)))
        assert result.content[0].text == "counted to 3"
        if mode != "json":                            # the SDK drops related messages in JSON mode
            assert progress == [(1, 3, "at 1"), (2, 3, "at 2"), (3, 3, "at 3")]
        assert client.call_tool("echo_text", {"text": "héllo"}).content[0].text == "héllo"
        failed = client.call_tool("fail", {"message": "nope"})
        assert failed.is_error and "nope" in failed.content[0].text
        assert client.call_tool("log_burst").content[0].text == "debug,info,warning,error"
        if mode in ("streamable", "sse"):
            assert notes.wait_for(4) == [{"msg": f"{level} message"} for level in ("debug", "info", "warning", "error")]
            answer = client.call_tool("ask_llm", {"question": "the answer?"})
            assert answer.content[0].text == "mcp_ref-test-model:forty-two"
        client.ping()


@pytest.mark.req("TRN-45")
def test_the_sdk_server_expires_a_deleted_session_and_we_renew_it(sdk_server):
    base = sdk_server("streamable")
    requests = pytest.importorskip("requests")
    with Client.http(base + "/mcp", timeout=30, protocol_version="2025-11-25") as client:   # sessions: legacy
        old = client.transport.session_id
        requests.delete(base + "/mcp", headers={"Mcp-Session-Id": old, "MCP-Protocol-Version": "2025-11-25"},
                        timeout=10)
        assert client.call_tool("add", {"a": 1, "b": 1}).content[0].text == "2"
        assert client.transport.session_id != old

