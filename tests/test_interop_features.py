"""Server features across implementations, over stdio, with the official Python SDK
(``mcp`` >= 2; asyncio-based, so its side runs in subprocesses from ``tests/interop/``).

1. The SDK's client (``sdk_client.py --steps``, behind ``tee.py`` so every line our
   server writes is recorded) against the everything example, in every revision:
   it lists tools, resources, templates and prompts, calls every tool that needs no
   arguments, reads every resource, gets every prompt, completes an argument of a
   prompt and of a template, sets the log level, subscribes and hears an update.
   Every message our server wrote is validated against the revision's schema,
   strictly (no member the revision does not define).
2. Our client against the SDK's server (``sdk_server.py``), in every revision: the
   same operations, every message our client wrote validated the same way, and the
   SDK's structured output checked against its outputSchema by our client.

Skipped without the SDK.
"""
import json
import subprocess
import sys

import pytest

from helpers import require_official_sdk

require_official_sdk()

from conftest import REVISIONS  # noqa: E402
from features_helpers import EVERYTHING, ROOT, Collector, check_wire, env  # noqa: E402
from helpers import Recorder  # noqa: E402
from mcp_ref import Client  # noqa: E402
from mcp_ref.transports import TapTransport  # noqa: E402
from mcp_ref.transports.stdio import StdioClientTransport  # noqa: E402

INTEROP = ROOT / "tests" / "interop"
SDK_SERVER = [sys.executable, str(INTEROP / "sdk_server.py")]


def everything_steps() -> list:
    """Every operation the everything server offers, read from its own registries."""
    from mcp_ref.examples.everything import server
    steps = [{"op": "list_tools"}, {"op": "list_resources"}, {"op": "list_resource_templates"},
             {"op": "list_prompts"}, {"op": "set_logging_level", "level": "info"},
             {"op": "subscribe", "uri": "everything://counter"}]
    steps += [{"op": "call_tool", "name": tool.name, "arguments": {}, "progress": tool.name == "long_operation"}
              for tool in server.tools.list() if not tool.input_schema.get("required")]
    steps += [{"op": "read_resource", "uri": resource.uri} for resource in server.resources.resources()]
    steps += [{"op": "read_resource", "uri": "everything://greeting/sdk"},
              {"op": "read_resource", "uri": "everything://files/docs/intro.md"}]
    for prompt in server.prompts.list():
        arguments = {a.name: "everything://readme" for a in prompt.arguments or () if a.required}
        steps.append({"op": "get_prompt", "name": prompt.name, "arguments": arguments})
    steps += [{"op": "complete", "ref": {"type": "ref/prompt", "name": "code_review"},
               "argument": {"name": "language", "value": "py"}},
              {"op": "complete", "ref": {"type": "ref/resource", "uri": "everything://greeting/{name}"},
               "argument": {"name": "name", "value": "a"}},
              {"op": "unsubscribe", "uri": "everything://counter"}, {"op": "ping"}]
    return steps


def run_sdk_client(server_argv, log, revision, steps) -> dict:
    relay = [sys.executable, str(INTEROP / "tee.py"), str(log), "--", *server_argv]
    argv = [sys.executable, str(INTEROP / "sdk_client.py"), "--force-version", revision,
            "--steps", json.dumps(steps), "--", *relay]
    done = subprocess.run(argv, cwd=str(ROOT), env=env(), capture_output=True, text=True, timeout=120)
    lines = done.stdout.strip().splitlines()
    assert lines, f"sdk_client.py printed nothing (exit {done.returncode})\n{done.stderr[-4000:]}"
    report = json.loads(lines[-1])
    assert "fatal" not in report, f"{report}\n{done.stderr[-4000:]}"
    assert done.returncode == 0 and report["exceptions"] == [], done.stderr[-4000:]
    return report


def by_op(report, op) -> list:
    return [step for step in report["steps"] if step["op"] == op]


@pytest.mark.parametrize("revision", REVISIONS)
def test_the_sdk_client_uses_every_feature_of_the_everything_server(revision, tmp_path, wire_validator):
    log = tmp_path / "wire.jsonl"
    steps = everything_steps()
    report = run_sdk_client(EVERYTHING, log, revision, steps)
    assert report["protocol_version"] == revision
    failed = [step for step in report["steps"] if "error" in step]
    assert not failed, failed

    tools = {tool["name"] for tool in by_op(report, "list_tools")[0]["result"]["tools"]}
    assert {"echo", "get_weather", "long_operation", "log_messages", "fail"} <= tools
    calls = {step["name"]: out for step, out in zip(steps, report["steps"]) if step["op"] == "call_tool"}
    assert [name for name, out in calls.items() if out["result"].get("isError")] == ["fail"]
    assert calls["fail"]["result"]["content"][0]["text"] == "this tool always fails"
    assert calls["long_operation"]["result"]["content"][0]["text"] == "done 3 steps"
    assert [p[0] for p in calls["long_operation"]["progress"]] == [1, 2, 3]
    types = [block["type"] for block in calls["get_all_content"]["result"]["content"]]
    assert types == [t for t in ("text", "image", "audio", "resource_link", "resource")
                     if not (t == "audio" and revision < "2025-03-26")
                     and not (t == "resource_link" and revision < "2025-06-18")]
    weather = calls["get_weather"]["result"]
    if revision >= "2025-06-18":
        assert weather["structuredContent"]["city"] == "Paris"     # the SDK validated it against outputSchema
    else:
        assert "structuredContent" not in weather

    reads = by_op(report, "read_resource")
    assert [step["result"]["contents"][0]["uri"] for step in reads] == \
        ["everything://readme", "everything://logo.png", "everything://counter", "everything://greeting/sdk",
         "everything://files/docs/intro.md"]
    assert "blob" in reads[1]["result"]["contents"][0]
    prompts = by_op(report, "get_prompt")
    assert len(prompts) == 4 and all(step["result"]["messages"] for step in prompts)
    language, name = by_op(report, "complete")
    assert language["result"]["completion"]["values"] == ["python"]
    assert name["result"]["completion"]["values"] == ["alice"]

    methods = [n.get("method") for n in report["notifications"]]
    assert "notifications/resources/updated" in methods            # touch_counter, while subscribed
    assert "notifications/tools/list_changed" in methods           # toggle_extra_tool
    assert [entry["level"] for entry in report["logs"] if entry.get("logger") == "everything.tool"] == \
        ["info", "notice", "warning", "error", "critical", "alert", "emergency"]      # debug filtered out

    records = []
    with open(log, encoding="utf-8") as f:
        for line in f:
            entry = json.loads(line)
            records.append(("send" if entry["from"] == "server" else "receive", json.loads(entry["line"])))
    ours = [(d, m) for d, m in records if d == "send"]
    assert len(ours) > 30
    # Validate what our server wrote; requests come from the other side and give results their method.
    assert check_wire(records, revision, wire_validator, strict=("send",)) == len(records)


@pytest.mark.parametrize("revision", REVISIONS)
def test_our_client_uses_every_feature_of_an_sdk_server(revision, wire_validator):
    recorder, logs, updates = Recorder(), Collector(), Collector()
    transport = StdioClientTransport(SDK_SERVER, env=env(), cwd=str(ROOT))
    with Client(TapTransport(transport, recorder), protocol_version=revision, timeout=30, on_log=logs,
                on_resource_updated=updates) as client:
        assert client.protocol_version == revision
        tools = {tool.name: tool for tool in client.list_tools()}
        assert {"add", "fail", "weather", "log_burst"} <= set(tools)
        assert client.call_tool("add", {"a": 2, "b": 3}).content[0].text == "5"
        weather = client.call_tool("weather", {"city": "Lyon"})       # checked against its outputSchema
        if revision >= "2025-06-18":
            assert weather.structured_content == {"city": "Lyon", "temperature": 21.5, "conditions": "sunny"}
        assert client.call_tool("fail").is_error
        client.set_logging_level("warning")
        assert client.call_tool("log_burst").content[0].text == "warning,error"
        assert [m.data for m in logs.wait_for(2)] == [{"msg": "warning message"}, {"msg": "error message"}]

        resources = client.list_resources()
        assert {r.uri for r in resources} == {"demo://readme", "demo://logo"}
        for resource in resources:
            assert client.read_resource(resource.uri).contents[0].uri == resource.uri
        assert client.read_resource("demo://logo").contents[0].blob
        assert [t.uri_template for t in client.list_resource_templates()] == ["demo://greeting/{name}"]
        assert client.read_resource("demo://greeting/ada").contents[0].text == "Hello, ada!"
        client.subscribe_resource("demo://readme")
        assert client.call_tool("touch_resource", {"uri": "demo://readme"}).content[0].text == "notified"
        assert updates.wait_for(1) == ["demo://readme"]
        client.unsubscribe_resource("demo://readme")

        prompts = {p.name: p for p in client.list_prompts()}
        assert set(prompts) == {"review", "greet"}
        assert [(a.name, a.required) for a in prompts["review"].arguments] == [("code", True), ("language", False)]
        assert client.get_prompt("review", {"code": "x"}).messages[0].content.text == "Review this python code:\nx"
        assert [m.role for m in client.get_prompt("greet").messages] == ["user", "assistant"]
        assert client.complete({"type": "ref/prompt", "name": "review"}, ("language", "r")).values == \
            ["rust", "ruby"]
        assert client.complete({"type": "ref/resource", "uri": "demo://greeting/{name}"}, ("name", "c")).values == \
            ["carol"]
    sent = [("send", m) for d, m in recorder.records if d == "send"]
    assert check_wire(recorder.records, revision, wire_validator, strict=("send",)) == len(recorder.records)
    assert len(sent) > 15
