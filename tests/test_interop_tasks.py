"""Tasks (2025-11-25) with the official Python SDK (``mcp`` >= 2) as the client.

``tests/interop/sdk_tasks_client.py`` drives ``tests/interop/tasks_server.py`` (our
server) over stdio, behind ``tee.py``: every line our server writes is validated
against the 2025-11-25 schema, strictly (no member the schema does not define).
What the SDK can and cannot do with tasks is in the script's docstring and in
``spec_notes/interop.md``. Its server side serves no tasks (``mcp_types`` models
them, but no task method is dispatched), so our client meets it only as a server
without the capability: ``call_tool_as_task`` refuses locally.

Skipped without the SDK. Spec: basic/utilities/tasks.
"""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import require_official_sdk

require_official_sdk()

from features_helpers import check_wire  # noqa: E402
from mcp_ref import Client  # noqa: E402
from mcp_ref.errors import CapabilityNotSupported  # noqa: E402
from mcp_ref.server.tasks.legacy import RELATED_TASK_KEY  # noqa: E402

# tasks as in 2025-11-25:
# the clients here ask for 2025-11-25 (tests/test_modern_*.py for 2026-07-28).
pytestmark = pytest.mark.usefixtures("legacy_client_default")

REPO = Path(__file__).resolve().parent.parent
INTEROP = REPO / "tests" / "interop"
TIMEOUT = 60


def _env() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH")) if p)
    return env


def test_sdk_client_drives_tasks_on_our_server(tmp_path, wire_validator):
    log = tmp_path / "tee.jsonl"
    server = [sys.executable, str(INTEROP / "tee.py"), str(log), "--", sys.executable,
              str(INTEROP / "tasks_server.py")]
    proc = subprocess.run([sys.executable, str(INTEROP / "sdk_tasks_client.py"), "--", *server], cwd=REPO,
                          env=_env(), capture_output=True, text=True, timeout=TIMEOUT)
    lines = proc.stdout.strip().splitlines()
    assert lines, f"sdk_tasks_client.py printed nothing (exit {proc.returncode})\n{proc.stderr[-4000:]}"
    report = json.loads(lines[-1])
    assert "fatal" not in report and proc.returncode == 0, f"{report}\n{proc.stderr[-4000:]}"
    assert report["protocol_version"] == "2025-11-25"
    assert report["capabilities"]["tasks"] == {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}
    assert {t["name"]: t.get("execution") for t in report["tools"]} == {
        "add": {"taskSupport": "optional"}, "wait": {"taskSupport": "required"},
        "fail": {"taskSupport": "optional"}, "plain": None}
    steps = {s["op"]: s for s in report["steps"]}
    for op, step in steps.items():
        if op not in ("cancel wait again", "get unknown", "call wait without task"):
            assert "error" not in step, f"{op}: {step}"
    created = steps["create add"]["result"]["task"]
    assert created["status"] == "working" and created["ttl"] == 60000
    result = steps["result add"]["result"]
    assert result["content"] == [{"type": "text", "text": "5"}]
    assert result["_meta"] == {RELATED_TASK_KEY: {"taskId": created["taskId"]}}
    assert steps["get add"]["result"]["status"] == "completed"
    assert steps["result fail"]["result"]["isError"] is True
    assert steps["get fail"]["result"]["status"] == "failed"
    assert steps["cancel wait"]["result"]["status"] == "cancelled"
    assert steps["cancel wait again"]["error"]["code"] == -32602
    assert len(steps["list"]["result"]["tasks"]) == 3
    assert steps["get unknown"]["error"] == {"type": "MCPError", "code": -32602,
                                             "message": "Failed to retrieve task: Task not found"}
    assert steps["call wait without task"]["error"]["code"] == -32601
    assert steps["call add without task"]["result"]["content"] == [{"type": "text", "text": "2"}]
    # Every line our server wrote, strictly against the schema; the status notifications
    # the SDK drops are there.
    records = [("send" if entry["from"] == "server" else "receive", json.loads(entry["line"]))
               for entry in map(json.loads, log.read_text(encoding="utf-8").splitlines())]
    assert check_wire(records, "2025-11-25", wire_validator, strict=("send",)) == len(records)
    statuses = [m["params"]["status"] for d, m in records if m.get("method") == "notifications/tasks/status"]
    assert sorted(statuses) == ["cancelled", "completed", "failed"]


@pytest.mark.req("TASK-4")
def test_our_client_refuses_tasks_with_the_sdk_server(wire_validator):
    argv = [sys.executable, str(INTEROP / "sdk_server.py")]
    with Client.stdio(argv, env=_env(), cwd=str(REPO), timeout=20) as client:
        assert client.protocol_version == "2025-11-25" and "tasks" not in client.server_capabilities
        with pytest.raises(CapabilityNotSupported, match="tasks.requests.tools.call"):
            client.call_tool_as_task("add", {"a": 1, "b": 2})
        assert client.call_tool("add", {"a": 1, "b": 2}).content[0].text == "3"
