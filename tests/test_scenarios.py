"""``python -m mcp_ref demo --scenario NAME``: each scenario runs, fits on a screen, and
shows on the wire what it promises; every JSON-RPC message it prints whole (``--full``)
validates against the revision it negotiated. Run in this process (the scenarios
need no subprocess), plus the command line once."""
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mcp_ref.cli import scenarios
from mcp_ref.__main__ import Transcript, main

ROOT = Path(__file__).resolve().parent.parent
ARROWS = ("client -> server  ", "server -> client  ")
SCREEN = 64          # lines of at most 100 columns (comments wrapped): "short enough to read on one screen"
NAMES = ["cancel", "sampling", "elicitation", "roots", "pagination", "tasks", "http", "sse"]


def run(name: str, full: bool = True) -> list:
    out = io.StringIO()
    assert scenarios.run(name, Transcript(full, out=out, width=100)) == 0
    return out.getvalue().splitlines()


def messages(lines: list) -> list:
    return [("send" if line.startswith(ARROWS[0]) else "receive", json.loads(line.split("  ", 1)[1]))
            for line in lines if line.startswith(ARROWS)]


def methods(records: list, direction: str) -> list:
    return [m.get("method") for d, m in records if d == direction and "method" in m]


def test_the_list_names_every_scenario():
    assert scenarios.names() == NAMES
    out = io.StringIO()
    assert scenarios.run("list", Transcript(out=out)) == 0
    for name in NAMES:
        assert f"  {name} " in out.getvalue()
    out = io.StringIO()
    assert scenarios.run("no-such-scenario", Transcript(out=out)) == 2
    assert "unknown scenario 'no-such-scenario'" in out.getvalue()


@pytest.mark.parametrize("name", NAMES)
def test_each_scenario_fits_on_a_screen(name):
    lines = run(name, full=False)
    assert len(lines) <= SCREEN, f"{name}: {len(lines)} lines"
    assert lines[0].startswith(f"# scenario {name}: ") and lines[-1] == "# done"


@pytest.mark.parametrize("name", [n for n in NAMES if n not in ("http", "sse")])
def test_in_process_scenarios_validate(name, wire_validator):
    records = messages(run(name))
    revision = records[1][1]["result"]["protocolVersion"]
    assert wire_validator.check_transcript(records, revision) == len(records)


def test_cancel_shows_both_cancellations():
    records = messages(run("cancel"))
    cancels = [m["params"] for d, m in records if m.get("method") == "notifications/cancelled"]
    assert [c["reason"] for c in cancels][0] == "the user pressed Stop"
    assert cancels[1]["reason"].startswith("timed out after")
    answered = {m["id"] for d, m in records if d == "receive" and "method" not in m}
    assert not answered & {c["requestId"] for c in cancels}, "a cancelled request was answered"


def test_sampling_nests_a_server_request_in_the_call():
    records = messages(run("sampling"))
    assert methods(records, "receive") == ["sampling/createMessage"]
    call = next(i for i, (d, m) in enumerate(records) if m.get("method") == "tools/call")
    sample = next(i for i, (d, m) in enumerate(records) if m.get("method") == "sampling/createMessage")
    result = next(i for i, (d, m) in enumerate(records) if m.get("id") == records[call][1]["id"] and "result" in m)
    assert call < sample < result


def test_elicitation_shows_form_and_url():
    records = messages(run("elicitation"))
    modes = [m["params"]["mode"] for d, m in records if m.get("method") == "elicitation/create"]
    assert modes == ["form", "url"]
    assert "notifications/elicitation/complete" in methods(records, "receive")


def test_roots_shows_list_and_change():
    records = messages(run("roots"))
    assert methods(records, "receive") == ["roots/list", "roots/list"]
    assert "notifications/roots/list_changed" in methods(records, "send")


def test_pagination_follows_cursors_and_refuses_a_bad_one():
    records = messages(run("pagination"))
    lists = [m for d, m in records if m.get("method") == "tools/list"]
    assert len(lists) == 4 and "params" not in lists[0] and lists[-1]["params"]["cursor"] == "not-a-cursor"
    assert any(m.get("error", {}).get("code") == -32602 for d, m in records)


def test_tasks_shows_every_task_method():
    records = messages(run("tasks"))
    sent = methods(records, "send")
    for method in ("tasks/get", "tasks/result", "tasks/list", "tasks/cancel"):
        assert method in sent
    statuses = [m["params"]["status"] for d, m in records if m.get("method") == "notifications/tasks/status"]
    assert "cancelled" in statuses


def test_http_shows_json_sse_resume_and_404():
    pytest.importorskip("requests")          # the HTTP server needs nothing; kept with the HTTP tests
    lines = run("http")
    text = "\n".join(lines)
    assert "<- 200 OK  content-type: application/json" in text
    assert "<- 200 OK  content-type: text/event-stream" in text
    priming = next(line for line in lines if line.startswith("  event  id: "))
    assert "retry: " in priming and priming.endswith("data: ''")
    assert any(line.startswith("GET /mcp ") and "Last-Event-ID: " in line for line in lines)
    assert "<- 404 Not Found" in text
    sessions = {line.split("mcp-session-id: ")[1] for line in lines if "mcp-session-id: " in line}
    assert len(sessions) == 2, "a new session after the 404"
    records = messages(lines)
    assert any(m.get("result") == {"content": [{"type": "text", "text": "counted to 2"}]} for d, m in records)


def test_sse_shows_the_endpoint_event_and_answers_on_the_stream():
    lines = run("sse")
    text = "\n".join(lines)
    assert "event: endpoint  data: '/messages?session_id=" in text
    assert text.count("<- 202 Accepted") == 3
    assert text.count("  event  event: message") == 2
    records = messages(lines)
    assert records[-1][1]["result"]["content"][0]["text"] == "5"


def test_the_command_line_runs_a_scenario():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    done = subprocess.run([sys.executable, "-m", "mcp_ref", "demo", "--scenario", "list"], capture_output=True,
                          text=True, timeout=60, env=env, cwd=str(ROOT))
    assert done.returncode == 0 and "sampling" in done.stdout, done.stderr
    out = io.StringIO()
    sys_stdout, sys.stdout = sys.stdout, out
    try:
        assert main(["demo", "--scenario", "nothing"]) == 2
    finally:
        sys.stdout = sys_stdout
    assert "unknown scenario" in out.getvalue()
