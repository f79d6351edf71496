"""``python -m mcp_ref demo``: runs the example server over stdio and prints the
wire transcript (both directions), then exits 0. Every transcript line is a
message our client or our server sent, so each is validated against the
negotiated revision's schema."""
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def run_demo() -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return subprocess.run([sys.executable, "-m", "mcp_ref", "demo"], capture_output=True, text=True, timeout=60,
                          env=env, cwd=str(ROOT))


def test_demo_prints_a_transcript_and_exits_0(wire_validator):
    done = run_demo()
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.splitlines()
    sent = [json.loads(line.split("  ", 1)[1]) for line in lines if line.startswith("client -> server  ")]
    received = [json.loads(line.split("  ", 1)[1]) for line in lines if line.startswith("server -> client  ")]
    assert sent and received, done.stdout
    assert sent[0]["method"] == "initialize"
    assert any(line.startswith("client -> server") and '"initialize"' in line for line in lines)
    assert received[0]["id"] == sent[0]["id"] and "result" in received[0]
    assert any(m.get("method") == "notifications/initialized" for m in sent)
    assert any(m.get("method") == "tools/call" for m in sent)
    assert any(m.get("method") == "notifications/progress" for m in received)
    match = re.search(r"protocol (\S+)", done.stdout)
    assert match, done.stdout
    revision = match.group(1)
    assert received[0]["result"]["protocolVersion"] == revision
    records = [("send" if line.startswith("client") else "receive", json.loads(line.split("  ", 1)[1]))
               for line in lines if line.startswith(("client -> server  ", "server -> client  "))]
    assert wire_validator.check_transcript(records, revision) == len(sent) + len(received)
    assert lines[-1] == "# closed cleanly"


def test_the_demo_works_from_a_checkout_that_is_only_on_pythonpath(tmp_path):
    """A spawned server gets only a safe set of the environment (transports/stdio.py
    rule 3), so the demo names PYTHONPATH for its example server itself: run by an
    interpreter that has not installed mcp_ref, from another directory, it still works."""
    base = getattr(sys, "_base_executable", None) or sys.executable
    bare = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    probe = subprocess.run([base, "-c", "import mcp_ref"], cwd=str(tmp_path), env=bare, capture_output=True)
    if probe.returncode == 0:
        pytest.skip("mcp_ref is importable without PYTHONPATH here (installed for the base interpreter)")
    done = subprocess.run([base, "-m", "mcp_ref", "demo"], capture_output=True, text=True, timeout=120,
                          env={**bare, "PYTHONPATH": str(ROOT)}, cwd=str(tmp_path))
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.splitlines()[-1] == "# closed cleanly"
