"""Interoperability over stdio with the official Python SDK (``mcp`` >= 2).

The SDK is asyncio-based, so its side runs in subprocesses (``tests/interop/``):

* ``sdk_client.py`` connects to a stdio server, runs a list of operations and prints a
  JSON report; here it talks to ``python -m mcp_ref.examples.demo_server``, behind
  ``tee.py`` so that every line our server writes is recorded and validated.
* ``sdk_server.py`` is an SDK server that ``mcp_ref.Client`` talks to, through a
  ``TapTransport`` so that every message our client writes is validated.
* Client features both ways: the SDK's client (``--sampling/--elicit/--roots``) against
  ``mcp_ref.examples.client_features``, and our client's callbacks against the SDK
  server's ``ask_llm``/``ask_user``/``show_roots``.

The SDK offers no option for the revision it asks for (always its latest handshake
revision, 2025-11-25); ``sdk_client.py --force-version`` patches it so the older
revisions are covered too. Its default ``mode="auto"`` first probes ``server/discover``
(a 2026-07-28 method); that fallback is tested as well.

Every message our side sends is validated against ``schema.json`` of the negotiated
revision (``wire_validator``), and, more strictly, for fields the revision does not
define (``server.py`` rule 5: what a revision does not know is left out).

Skipped when the SDK is not installed; the spec folder is ``MCP_SPEC_DIR`` (default
``../shared/spec``), and the schema checks skip without it.
"""
import copy
import functools
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from helpers import require_official_sdk

require_official_sdk()

from mcp_ref import SUPPORTED_REVISIONS, Client  # noqa: E402
from mcp_ref.transports import TapTransport  # noqa: E402
from mcp_ref.transports.stdio import StdioClientTransport  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
INTEROP = REPO / "tests" / "interop"
REVISIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
OUR_SERVER = [sys.executable, "-m", "mcp_ref.examples.demo_server"]
SDK_SERVER = [sys.executable, str(INTEROP / "sdk_server.py")]
TIMEOUT = 60


def _env() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH")) if p)
    return env


def run_sdk_client(server_argv, *options, steps=None, log=None) -> dict:
    """Run ``sdk_client.py`` against ``server_argv`` (behind ``tee.py`` when ``log`` is a path)."""
    if log is not None:
        server_argv = [sys.executable, str(INTEROP / "tee.py"), str(log), "--", *server_argv]
    argv = [sys.executable, str(INTEROP / "sdk_client.py"), *options]
    if steps is not None:
        argv += ["--steps", json.dumps(steps)]
    proc = subprocess.run([*argv, "--", *server_argv], cwd=REPO, env=_env(), capture_output=True, text=True,
                          timeout=TIMEOUT)
    lines = proc.stdout.strip().splitlines()
    assert lines, f"sdk_client.py printed nothing (exit {proc.returncode})\nstderr:\n{proc.stderr[-4000:]}"
    report = json.loads(lines[-1])
    assert "fatal" not in report, f"{report}\nstderr:\n{proc.stderr[-4000:]}"
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert report["exceptions"] == [], report["exceptions"]
    return report


def read_tee_log(path) -> list:
    """``[(side, message dict)]`` in the order the relay saw them."""
    records = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            entry = json.loads(line)
            records.append((entry["from"], json.loads(entry["line"])))
    return records


def by_op(report, op) -> list:
    return [step for step in report["steps"] if step["op"] == op]


def step_result(step) -> dict:
    assert "error" not in step, f"{step['op']} failed: {step['error']}"
    return step["result"]


def text_of(result) -> str:
    return "".join(block["text"] for block in result["content"] if block["type"] == "text")


# ---------------------------------------------------------------------- stricter schema check
# Properties whose values are open by design (JSON Schema documents, free-form data).
_OPEN = {"inputSchema", "outputSchema", "requestedSchema", "structuredContent", "arguments", "_meta",
         "experimental", "data", "metadata", "extensions"}
_strict_validators: dict = {}


@functools.lru_cache(maxsize=None)
def _schema(revision: str) -> dict:
    spec = Path(os.environ.get("MCP_SPEC_DIR") or REPO.parent / "shared" / "spec")
    path = spec / revision / "schema.json"
    if not path.is_file():
        pytest.skip(f"{revision} schema.json not found at {path}: set MCP_SPEC_DIR")
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def _strictify(node):
    """A copy of a schema in which every object schema that lists ``properties`` and says
    nothing about others forbids them (except below the ``_OPEN`` properties)."""
    if isinstance(node, list):
        return [_strictify(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {}
    for key, value in node.items():
        if key == "properties" and isinstance(value, dict):
            out[key] = {name: (sub if name in _OPEN else _strictify(sub)) for name, sub in value.items()}
        else:
            out[key] = _strictify(value)
    if isinstance(out.get("properties"), dict) and "additionalProperties" not in out:
        out["additionalProperties"] = False
    return out


def strict_check(message: dict, revision: str, request_method=None, methods=None) -> None:
    """Fail on fields ``revision`` does not define in a request/notification of a known method
    or in the result of ``request_method`` (``methods`` maps method -> definition name)."""
    jsonschema = pytest.importorskip("jsonschema")
    schema = _schema(revision)
    key = "$defs" if "$defs" in schema else "definitions"
    if "method" in message:
        name = methods.get(message["method"])
        # Older revisions define methods without the JSON-RPC envelope members.
        defined = schema[key].get(name, {}).get("properties", {})
        instance = {k: v for k, v in message.items() if k in defined or k not in ("jsonrpc", "id")}
        if isinstance(instance.get("params"), dict):
            # `_meta` is allowed on every request's and notification's params (`Request`,
            # `Notification`), though older revisions do not repeat it per method.
            instance["params"] = {k: v for k, v in instance["params"].items() if k != "_meta"}
    elif "result" in message and request_method in methods:
        name = methods[request_method][:-len("Request")] + "Result"
        if name not in schema[key]:
            return
        instance = {k: v for k, v in message["result"].items() if k != "_meta"}   # see `Result`
    else:
        return
    if (revision, name) not in _strict_validators:
        strict = _strictify(copy.deepcopy(schema))
        root = {k: v for k, v in strict.items() if k in ("$schema", key)}
        root["$ref"] = f"#/{key}/{name}"
        _strict_validators[revision, name] = jsonschema.validators.validator_for(schema)(root)
    errors = list(_strict_validators[revision, name].iter_errors(instance))
    assert not errors, (f"{revision} {name}: {errors[0].message} at "
                        f"{'/'.join(map(str, errors[0].absolute_path))}\n{json.dumps(message)[:1500]}")


def validate_side(records, ours: str, revision: str, wire_validator) -> int:
    """Validate every message of side ``ours`` in ``records`` (``[(side, dict)]``); results are
    matched to the other side's requests by id. Returns how many were checked."""
    asked = {}
    methods = wire_validator.methods(revision)
    checked = 0
    for side, message in records:
        if "method" in message and "id" in message:
            asked[side, message["id"]] = message["method"]
        if side != ours:
            continue
        method = None
        if "result" in message:
            method = next((m for (s, i), m in asked.items() if s != ours and i == message.get("id")), None)
        wire_validator.check(message, revision, method)
        strict_check(message, revision, method, methods)
        checked += 1
    return checked


# ---------------------------------------------------------------------- 1. the SDK's client, our server
def test_sdk_client_against_our_server(tmp_path, wire_validator):
    log = tmp_path / "wire.jsonl"
    report = run_sdk_client(OUR_SERVER, log=log)          # the demo scenario, mode legacy

    assert report["protocol_version"] == "2025-11-25"
    assert report["server_info"]["name"] == "demo"
    assert report["server_info"]["version"] == "1.0"
    assert "tools" in report["capabilities"]
    assert report["instructions"] == "Small arithmetic tools for trying MCP out."

    tools = {tool["name"]: tool for tool in step_result(by_op(report, "list_tools")[0])["tools"]}
    assert set(tools) == {"add", "count", "divide"}
    add = tools["add"]
    assert add["description"] == "Add two numbers."
    assert add["inputSchema"]["type"] == "object"
    assert add["inputSchema"]["properties"]["a"]["type"] == "integer"
    assert add["inputSchema"]["properties"]["b"]["type"] == "integer"
    assert sorted(add["inputSchema"]["required"]) == ["a", "b"]
    assert tools["count"]["title"] == "Count slowly"
    assert tools["count"]["inputSchema"]["required"] == ["n"]
    assert tools["divide"]["inputSchema"]["properties"]["b"]["type"] == "number"

    add_call, count_call, divide_call = by_op(report, "call_tool")
    result = step_result(add_call)
    assert result["isError"] is False
    assert text_of(result) == "5"
    if "outputSchema" in add:
        assert result["structuredContent"] == {"result": 5}

    result = step_result(count_call)
    assert result["isError"] is False
    assert text_of(result) == "counted to 3"
    assert count_call["progress"] == [[1, 3, "at 1"], [2, 3, "at 2"], [3, 3, "at 3"]]

    result = step_result(divide_call)
    assert result["isError"] is True
    assert "division by zero" in text_of(result)

    assert step_result(by_op(report, "ping")[0]) == {}

    records = read_tee_log(log)
    first = records[0]
    assert first[0] == "client" and first[1]["method"] == "initialize"
    assert first[1]["params"]["protocolVersion"] == "2025-11-25"
    assert records[2] == ("client", {"jsonrpc": "2.0", "method": "notifications/initialized"})
    progress = [m for side, m in records if side == "server" and m.get("method") == "notifications/progress"]
    assert [m["params"]["progress"] for m in progress] == [1, 2, 3]
    assert validate_side(records, "server", "2025-11-25", wire_validator) >= 8


@pytest.mark.parametrize("revision", REVISIONS[:-1])
def test_sdk_client_against_our_server_older_revisions(revision, tmp_path, wire_validator):
    """The SDK always offers its latest handshake revision; ``--force-version`` makes it
    offer an older one, which our server must accept and speak."""
    log = tmp_path / "wire.jsonl"
    report = run_sdk_client(OUR_SERVER, "--force-version", revision, log=log)
    assert report["protocol_version"] == revision
    tools = {tool["name"] for tool in step_result(by_op(report, "list_tools")[0])["tools"]}
    assert tools == {"add", "count", "divide"}
    add_call, count_call, divide_call = by_op(report, "call_tool")
    assert text_of(step_result(add_call)) == "5"
    assert [p[0] for p in count_call["progress"]] == [1, 2, 3]
    assert text_of(step_result(count_call)) == "counted to 3"
    assert step_result(divide_call)["isError"] is True
    assert step_result(by_op(report, "ping")[0]) == {}

    records = read_tee_log(log)
    assert records[0][1]["params"]["protocolVersion"] == revision
    assert validate_side(records, "server", revision, wire_validator) >= 8


def test_sdk_client_auto_mode_speaks_2026_07_28_with_our_server(tmp_path, wire_validator):
    """The SDK's default ``mode="auto"`` first probes ``server/discover`` (a 2026-07-28
    method). Our server is dual-era: it answers with a ``DiscoverResult``, so the SDK stays
    in the modern era (no ``initialize``; every request carries its ``_meta``), and every
    message either side sends validates against the 2026-07-28 schema."""
    log = tmp_path / "wire.jsonl"
    report = run_sdk_client(OUR_SERVER, "--mode", "auto", log=log,
                            steps=[{"op": "list_tools"},
                                   {"op": "call_tool", "name": "add", "arguments": {"a": 20, "b": 22}}])
    assert report["protocol_version"] == "2026-07-28"
    assert text_of(step_result(by_op(report, "call_tool")[0])) == "42"

    records = read_tee_log(log)
    side, probe = records[0]
    assert side == "client" and probe["method"] == "server/discover"
    answer = next(m for s, m in records if s == "server" and m.get("id") == probe["id"])
    assert answer["result"]["supportedVersions"][0] == "2026-07-28"
    methods = [m["method"] for s, m in records if s == "client" and "method" in m]
    assert "initialize" not in methods and "tools/call" in methods
    asked = {(side, m["id"]): m["method"] for side, m in records if "method" in m and "id" in m}
    for side, message in records:                     # both sides, against the 2026-07-28 schema
        other = "server" if side == "client" else "client"
        method = asked.get((other, message.get("id"))) if "result" in message else None
        wire_validator.check(message, "2026-07-28", method)
    assert len(records) >= 6


def test_sdk_client_timeout_cancels_our_tool(tmp_path, wire_validator):
    """When its read timeout expires the SDK sends ``notifications/cancelled``; our server
    stops the tool and never answers that request (basic/utilities/cancellation), and keeps
    serving. An unknown tool is a JSON-RPC error -32602 (server/tools#error-handling)."""
    log = tmp_path / "wire.jsonl"
    report = run_sdk_client(OUR_SERVER, log=log, steps=[
        {"op": "call_tool", "name": "count", "arguments": {"n": 300}, "timeout": 0.3},
        {"op": "call_tool", "name": "no_such_tool", "arguments": {}},
        {"op": "call_tool", "name": "add", "arguments": {"a": 1, "b": 1}},
        {"op": "sleep", "seconds": 0.3},
    ])
    slow, unknown, add = by_op(report, "call_tool")
    assert slow["error"]["code"] == -32001, slow
    assert unknown["error"]["code"] == -32602, unknown
    assert text_of(step_result(add)) == "2"

    records = read_tee_log(log)
    call = next(m for s, m in records if s == "client" and m.get("params", {}).get("name") == "count")
    cancel = next(m for s, m in records if s == "client" and m.get("method") == "notifications/cancelled")
    assert cancel["params"]["requestId"] == call["id"]
    assert not [m for s, m in records if s == "server" and "method" not in m and m.get("id") == call["id"]]
    assert validate_side(records, "server", "2025-11-25", wire_validator) >= 4


# ---------------------------------------------------------------------- 2. our client, the SDK's server
def _sdk_server_client(revision, records, **options) -> Client:
    transport = StdioClientTransport(SDK_SERVER, cwd=str(REPO), env=_env(), on_stderr=lambda line: None)
    tapped = TapTransport(transport, lambda direction, message: records.append((direction, message)))
    return Client(tapped, protocol_version=revision, timeout=20, init_timeout=20, **options)


def _as_records(records) -> list:
    """TapTransport records as ``[("ours" | "theirs", dict)]``."""
    out = []
    for direction, message in records:
        items = message if isinstance(message, list) else [message]
        for item in items:
            out.append(("ours" if direction == "send" else "theirs",
                        item.to_dict() if hasattr(item, "to_dict") else item))
    return out


@pytest.mark.parametrize("revision", REVISIONS)
def test_our_client_against_sdk_server(revision, wire_validator):
    records = []
    with _sdk_server_client(revision, records) as client:
        assert client.protocol_version == revision
        assert client.protocol_version in SUPPORTED_REVISIONS
        assert client.server_info.name == "sdk-interop-server"
        assert client.server_info.version == "2.0.0"
        assert client.instructions == "An official-SDK server for interop tests."
        for capability in ("tools", "resources", "prompts", "logging", "completions"):
            assert capability in client.server_capabilities, client.server_capabilities

        tools = {tool.name: tool for tool in client.list_tools()}
        assert {"add", "count", "fail", "weather", "echo_text"} <= set(tools)
        add = tools["add"]
        assert add.description == "Add two integers."
        assert add.input_schema["type"] == "object"
        assert add.input_schema["properties"]["a"]["type"] == "integer"
        assert add.input_schema["required"] == ["a", "b"]
        assert tools["fail"].input_schema.get("required", []) == []
        if revision >= "2025-06-18":
            assert tools["weather"].output_schema["required"] == ["city", "temperature", "conditions"]
            assert tools["weather"].title == "Weather report"
            assert tools["echo_text"].output_schema is None

        result = client.call_tool("add", {"a": 2, "b": 3})
        assert not result.is_error
        assert result.content[0].text == "5"
        if revision >= "2025-06-18":
            assert result.structured_content == {"result": 5}

        seen = []
        result = client.call_tool("count", {"n": 4}, on_progress=lambda p, t, m: seen.append((p, t, m)))
        assert not result.is_error
        assert result.content[0].text == "counted to 4"
        assert [p for p, _, _ in seen] == [1, 2, 3, 4]
        assert all(t == 4 for _, t, _ in seen)
        if revision >= "2025-03-26":
            assert [m for _, _, m in seen] == ["at 1", "at 2", "at 3", "at 4"]

        result = client.call_tool("fail", {"message": "nope"})
        assert result.is_error
        assert result.content[0].text.endswith("nope")      # the SDK says "Error executing tool fail: nope"

        result = client.call_tool("weather", {"city": "Oslo"})
        assert not result.is_error
        if revision >= "2025-06-18":
            assert result.structured_content == {"city": "Oslo", "temperature": 21.5, "conditions": "sunny"}
        assert json.loads(result.content[0].text) == {"city": "Oslo", "temperature": 21.5, "conditions": "sunny"}

        result = client.call_tool("echo_text", {"text": "héllo\nworld"})
        assert result.content[0].text == "héllo\nworld"
        assert result.structured_content is None

        client.ping()

    records = _as_records(records)
    assert records[0][1]["method"] == "initialize"
    assert records[0][1]["params"]["protocolVersion"] == revision
    assert validate_side(records, "ours", revision, wire_validator) >= 9


# ---------------------------------------------------------------------- 3. our server's side, seen by our client
@pytest.mark.parametrize("revision", REVISIONS)
def test_our_client_and_server_every_message_valid(revision, wire_validator):
    """Both sides of ``mcp_ref.Client`` ↔ ``demo_server`` over stdio, validated in both
    directions (the demo server's messages are what the SDK client saw in test 1)."""
    records = []
    transport = StdioClientTransport(OUR_SERVER, cwd=str(REPO), env=_env(), on_stderr=lambda line: None)
    tapped = TapTransport(transport, lambda direction, message: records.append((direction, message)))
    with Client(tapped, protocol_version=revision, timeout=20) as client:
        assert client.protocol_version == revision
        assert {tool.name for tool in client.list_tools()} == {"add", "count", "divide"}
        assert client.call_tool("add", {"a": 1, "b": 2}).content[0].text == "3"
        seen = []
        client.call_tool("count", {"n": 2}, on_progress=lambda p, t, m: seen.append(p))
        assert seen == [1, 2]
        assert client.call_tool("divide", {"a": 1, "b": 0}).is_error
        client.ping()
    records = _as_records(records)
    assert validate_side(records, "ours", revision, wire_validator) >= 7
    assert validate_side(records, "theirs", revision, wire_validator) >= 8


# ---------------------------------------------------------------------- client features (sampling, elicitation, roots)
FEATURES_SERVER = [sys.executable, "-m", "mcp_ref.examples.client_features"]


def test_sdk_client_features_against_our_server(tmp_path, wire_validator):
    """Our server sends sampling/createMessage, elicitation/create and roots/list; the SDK's
    client answers them from its callbacks."""
    log = tmp_path / "wire.jsonl"
    report = run_sdk_client(
        FEATURES_SERVER, "--sampling", "four", "--elicit", "accept", "--roots", "file:///projects/a,file:///projects/b",
        log=log, steps=[
            {"op": "call_tool", "name": "ask_llm", "arguments": {"question": "2+2?", "model_hint": "claude"}},
            {"op": "call_tool", "name": "ask_user", "arguments": {}},
            {"op": "call_tool", "name": "show_roots", "arguments": {}},
            {"op": "roots_list_changed"},
            {"op": "sleep", "seconds": 0.2},
            {"op": "call_tool", "name": "roots_changes", "arguments": {}},
        ])
    assert report["protocol_version"] == "2025-11-25"
    ask_llm, ask_user, show_roots, roots_changes = by_op(report, "call_tool")
    assert text_of(step_result(ask_llm)) == "sdk-test-model: four"
    # the form's default fills the field the SDK's answer left out
    assert text_of(step_result(ask_user)) == 'accept:{"age": 36, "name": "Ada", "newsletter": false}'
    assert text_of(step_result(show_roots)) == "root0=file:///projects/a\nroot1=file:///projects/b"
    assert text_of(step_result(roots_changes)) == "1"

    sampling, = report["sampling_requests"]
    assert sampling["messages"] == [{"role": "user", "content": {"type": "text", "text": "2+2?"}}]
    assert sampling["maxTokens"] == 100
    assert sampling["systemPrompt"] == "You are a helpful assistant."
    assert sampling["temperature"] == 0.2
    assert sampling["stopSequences"] == ["\n\n"]
    assert sampling["metadata"] == {"tool": "ask_llm"}
    assert sampling["modelPreferences"]["hints"] == [{"name": "claude"}]
    elicitation, = report["elicitation_requests"]
    assert elicitation["message"] == "Who are you?"
    assert set(elicitation["requestedSchema"]["properties"]) == {"name", "age", "newsletter"}
    assert len(report["roots_requests"]) == 1

    records = read_tee_log(log)
    sent = [m["method"] for side, m in records if side == "server" and "method" in m and "id" in m]
    assert sent == ["sampling/createMessage", "elicitation/create", "roots/list"]
    assert validate_side(records, "server", "2025-11-25", wire_validator) >= 8


@pytest.mark.parametrize("revision", ("2025-06-18", "2025-11-25"))
def test_our_client_features_against_sdk_server(revision, wire_validator):
    """The SDK's server sends sampling/createMessage, elicitation/create and roots/list;
    our client answers them from its callbacks."""
    records, asked = [], []

    def sample(request):
        asked.append(("sampling", request.params))
        return {"role": "assistant", "content": {"type": "text", "text": "four"}, "model": "our-model",
                "stopReason": "endTurn"}

    def elicit(request):
        asked.append(("elicitation", request.params))
        return {"action": "accept", "content": {"name": "Ada", "age": 36}}

    with _sdk_server_client(revision, records, sampling=sample, elicitation=elicit,
                            roots=["file:///projects/a"]) as client:
        assert text_of_result(client.call_tool("ask_llm", {"question": "2+2?"})) == "our-model:four"
        assert text_of_result(client.call_tool("ask_user", {"question": "Who?"})) == "accept:Ada:36"
        assert text_of_result(client.call_tool("show_roots", {})) == "file:///projects/a"
        client.set_roots(["file:///projects/a", "file:///projects/b"])
        assert text_of_result(client.call_tool("show_roots", {})) == "file:///projects/a,file:///projects/b"

    (kind, sampling), (kind2, elicitation) = asked
    assert kind == "sampling" and kind2 == "elicitation"
    assert sampling.max_tokens == 50
    assert sampling.system_prompt == "Answer briefly."
    assert sampling.messages[0].content.text == "2+2?"
    assert elicitation.message == "Who?"
    assert set(elicitation.requested_schema["properties"]) == {"name", "age"}

    records = _as_records(records)
    methods = [m["method"] for side, m in records if side == "ours" and "method" in m]
    assert "notifications/roots/list_changed" in methods
    answers = [m for side, m in records if side == "ours" and "result" in m]
    assert len(answers) == 4                 # sampling, elicitation, roots twice: validated as results
    assert validate_side(records, "ours", revision, wire_validator) == 11


def text_of_result(result) -> str:
    assert not result.is_error, result
    return "".join(getattr(block, "text", "") for block in result.content)
