"""2026-07-28 against the official Python SDK (``mcp`` 2.3.0 speaks it on both sides).

* The SDK's client in its default ``auto`` mode against our server over stdio: the
  multi round-trip requests of our tools (elicitation, sampling, roots) are answered
  by its callbacks; the same in legacy mode is in tests/test_interop_client_features.py.
* Our client in its default ``auto`` mode against the SDK's server, over stdio and
  Streamable HTTP: it speaks 2026-07-28 (no ``initialize``), every message we send
  validated against the 2026-07-28 schema.

The SDK's own example server asks the client with server-to-client requests, which
its 2026-07-28 mode refuses; so our client's multi round-trip answers are shown
against our server (tests/test_modern_client.py), and the SDK's against ours here.
"""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("mcp", reason="the official SDK (mcp) is a test extra")

from conftest import MODERN_REVISION  # noqa: E402
from mcp_ref import Client  # noqa: E402
from mcp_ref.transports import TapTransport  # noqa: E402
from mcp_ref.transports.stdio import StdioClientTransport  # noqa: E402
from test_http_interop import sdk_server  # noqa: E402,F401  (the fixture)

REPO = Path(__file__).resolve().parent.parent
SDK_CLIENT = [sys.executable, str(REPO / "tests" / "interop" / "sdk_client.py")]
SDK_SERVER = [sys.executable, str(REPO / "tests" / "interop" / "sdk_server.py")]


def _env() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH")) if p)
    return env


def test_sdk_client_answers_our_multi_round_trip_requests_over_stdio():
    steps = [{"op": "call_tool", "name": "ask_user", "arguments": {}},
             {"op": "call_tool", "name": "ask_llm", "arguments": {"question": "capital of France?"}},
             {"op": "call_tool", "name": "show_roots", "arguments": {}}]
    done = subprocess.run(SDK_CLIENT + ["--mode", "auto", "--elicit", "accept", "--sampling", "Paris",
                                        "--roots", "file:///srv/a", "--steps", json.dumps(steps), "--",
                                        sys.executable, "-m", "mcp_ref.examples.client_features"],
                          capture_output=True, text=True, timeout=120, env=_env(), cwd=str(REPO))
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["protocol_version"] == MODERN_REVISION
    texts = [step["result"]["content"][0]["text"] for step in report["steps"]]
    assert texts == ['accept:{"age": 36, "name": "Ada", "newsletter": false}', "sdk-test-model: Paris",
                     "root0=file:///srv/a"]
    assert all(step["result"]["resultType"] == "complete" for step in report["steps"])
    # each question reached the SDK's callbacks once, as an input request of a retried call
    assert len(report["elicitation_requests"]) == 1 and len(report["sampling_requests"]) == 1
    assert report["roots_requests"] == [{}]


def _check_our_side(records, wire_validator) -> None:
    asked = {}
    for direction, message in records:
        data = message.to_dict() if hasattr(message, "to_dict") else message
        if direction == "send":
            if "method" in data and "id" in data:
                asked[data["id"]] = data["method"]
            wire_validator.check(data, MODERN_REVISION, sender="client")
            if "id" in data:
                assert data["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] == MODERN_REVISION


def _script(client, streams: bool = True) -> None:
    assert client.modern and client.protocol_version == MODERN_REVISION
    assert client.server_info.name == "sdk-interop-server"
    assert {"add", "count", "echo_text"} <= {t.name for t in client.list_tools()}
    result = client.call_tool("add", {"a": 2, "b": 3})
    assert result.content[0].text == "5" and result.structured_content == {"result": 5}
    progress = []
    result = client.call_tool("count", {"n": 3}, on_progress=lambda p, t, m: progress.append((p, t, m)))
    assert result.content[0].text == "counted to 3"
    if streams:                                   # the SDK drops related messages in JSON mode
        assert progress == [(1, 3, "at 1"), (2, 3, "at 2"), (3, 3, "at 3")]
    assert client.call_tool("echo_text", {"text": "héllo"}).content[0].text == "héllo"
    assert client.read_resource("demo://readme").contents[0].text == "Hello from the official SDK."
    assert client.get_prompt("greet").messages
    client.ping()


def test_our_auto_client_speaks_2026_07_28_with_the_sdk_server_over_stdio(wire_validator):
    records = []
    transport = StdioClientTransport(SDK_SERVER, cwd=str(REPO), env=_env(), on_stderr=lambda line: None)
    logs = []
    with Client(TapTransport(transport, lambda d, m: records.append((d, m))), timeout=30, init_timeout=30,
                on_log=logs.append) as client:
        _script(client)
        assert client.call_tool("log_burst").content[0].text == "debug,info,warning,error"
        client.ping()                            # a round trip: the log messages came before its answer
    assert [p.level for p in logs] == ["debug", "info", "warning", "error"]
    first = records[0][1]
    assert first.method == "server/discover"
    assert "initialize" not in [getattr(m, "method", None) for _, m in records]
    _check_our_side(records, wire_validator)


@pytest.mark.parametrize("mode", ["streamable", "json", "stateless"])
def test_our_auto_client_speaks_2026_07_28_with_the_sdk_server_over_http(sdk_server, mode):  # noqa: F811
    base = sdk_server(mode)
    with Client.http(base + "/mcp", timeout=30) as client:
        assert client.transport.session_id is None
        _script(client, streams=mode != "json")
