"""``python -m mcp_ref demo``: runs the example server over stdio and prints the
wire transcript (both directions), then exits 0.

By default the transcript is for reading: base64 data elided, long messages cut
with a visible marker, each step opened by a ``#`` line, each exchange once.
With ``--full`` every message is printed whole, so each line is parsed and
validated against the negotiated revision's schema; the two runs show the same
messages."""
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from mcp_ref.cli.wire import FALLBACK_WIDTH, MIN_WIDTH

ROOT = Path(__file__).resolve().parent.parent
ARROWS = ("client -> server  ", "server -> client  ")
_runs: dict = {}


def run_demo(*options) -> subprocess.CompletedProcess:
    if options not in _runs:
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
        env.pop("COLUMNS", None)
        columns = [option for option in options if option.startswith("COLUMNS=")]
        if columns:
            env["COLUMNS"] = columns[0].split("=")[1]
        argv = [option for option in options if option not in columns]
        _runs[options] = subprocess.run([sys.executable, "-m", "mcp_ref", "demo", *argv], capture_output=True,
                                        text=True, timeout=60, env=env, cwd=str(ROOT))
    done = _runs[options]
    assert done.returncode == 0, done.stderr[-3000:]
    return done


def wire(lines) -> list:
    return [line for line in lines if line.startswith(ARROWS)]


@pytest.mark.parametrize("era", [(), ("--protocol-version", "2025-11-25")], ids=["default", "legacy"])
def test_demo_full_prints_every_message_whole_and_valid(wire_validator, era):
    lines = run_demo("--full", *era).stdout.splitlines()
    sent = [json.loads(line.split("  ", 1)[1]) for line in lines if line.startswith(ARROWS[0])]
    received = [json.loads(line.split("  ", 1)[1]) for line in lines if line.startswith(ARROWS[1])]
    assert sent and received
    assert received[0]["id"] == sent[0]["id"] and "result" in received[0]
    methods = [m.get("method") for m in sent]
    match = re.search(r"protocol (\S+);", "\n".join(lines))
    assert match
    revision = match.group(1)
    if era:             # the legacy era: the initialize handshake, no probe
        assert revision == "2025-11-25" and methods[0] == "initialize" and "server/discover" not in methods
        assert "notifications/initialized" in methods
        assert received[0]["result"]["protocolVersion"] == revision
    else:               # the default era: the probe, then every request with its _meta; no handshake
        assert revision == "2026-07-28" and methods[0] == "server/discover" and "initialize" not in methods
        assert revision in received[0]["result"]["supportedVersions"]
        assert "subscriptions/listen" in methods and "logging/setLevel" not in methods
        assert all(m["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] == revision
                   for m in sent if "id" in m)
    assert any(m.get("method") == "tools/call" for m in sent)
    assert any(m.get("method") == "notifications/progress" for m in received)
    records = [("send" if line.startswith(ARROWS[0]) else "receive", json.loads(line.split("  ", 1)[1]))
               for line in wire(lines)]
    assert wire_validator.check_transcript(records, revision) == len(sent) + len(received)
    assert any(len(line) > 1000 for line in lines), "--full cuts nothing"
    assert lines[-1] == "# closed cleanly"


def test_demo_is_short_enough_to_read():
    """Base64 elided, every line within the width (100 columns when the output is not a terminal),
    long messages cut with a marker that says how much, comments wrapped, nothing else."""
    out = run_demo().stdout
    lines = out.splitlines()
    assert max(len(line) for line in lines) <= FALLBACK_WIDTH
    assert " …[+" in out
    wide = run_demo("COLUMNS=200").stdout
    assert "chars of base64>" in wide
    assert not re.search(r"[A-Za-z0-9+/]{60,}", out + wide), "a base64 blob was printed"
    for line in wire(lines):
        cut = re.search(r" …\[\+(\d+) chars\]$", line)
        assert cut is None or len(line) >= FALLBACK_WIDTH - 1, line      # cut only what does not fit
    assert "a error" not in wide and "an error message" in wide
    assert lines[-1] == "# closed cleanly"


@pytest.mark.parametrize("columns", [MIN_WIDTH + 20, 200])
def test_demo_fits_the_terminal_width(columns):
    lines = run_demo(f"COLUMNS={columns}").stdout.splitlines()
    assert max(len(line) for line in lines) in range(columns - 1, columns + 1)
    assert all(line.startswith("# ") for line in lines if line.startswith("#"))
    assert lines[-1] == "# closed cleanly"


def test_demo_shows_every_message_of_the_full_run():
    """Shortening hides characters, never messages: the same lines in the same order (a long
    method name may itself be cut: its first 24 characters are compared)."""
    def skeleton(lines):
        return [(line[:len(ARROWS[0])], re.search(r'"(id|method)": ("[^" ]{0,24}|\d+)', line).group(0))
                for line in wire(lines)]
    assert skeleton(run_demo().stdout.splitlines()) == skeleton(run_demo("--full").stdout.splitlines())


@pytest.mark.parametrize("era", [(), ("--protocol-version", "2025-11-25")], ids=["default", "legacy"])
def test_each_exchange_happens_once_and_each_step_says_what_it_shows(era):
    lines = run_demo("COLUMNS=200", *era).stdout.splitlines()          # wide enough to show each tool's name
    methods = [re.search(r'"method": "([^"]+)"', line).group(1) for line in wire(lines)
               if line.startswith(ARROWS[0]) and '"id"' in line]
    once = ("initialize", "ping") if era else ()
    for method in once + ("resources/list", "resources/templates/list", "prompts/list", "completion/complete"):
        assert methods.count(method) == 1, (method, methods)
    if not era:         # the probe, and ping() (2026-07-28 has no ping) asks server/discover again
        assert methods.count("server/discover") == 2 and "initialize" not in methods and "ping" not in methods
    assert methods.count("tools/list") == 2          # the second after notifications/tools/list_changed
    calls = [re.search(r'"name": "([^"]+)"', line).group(1) for line in wire(lines) if '"tools/call"' in line]
    assert len(calls) == len(set(calls)), calls
    # Steps are separated by a blank line; every step with messages opens with a comment.
    steps = "\n".join(lines).split("\n\n")
    for step in steps:
        if any(line.startswith(ARROWS) for line in step.splitlines()):
            assert step.startswith("# "), step
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


SERVER_FILE = '''from mcp_ref import Server

server = Server("from-a-file", version="1.0")


@server.tool()
def hello() -> str:
    """Say hello."""
    return "hello"


if __name__ == "__main__":
    server.run()
'''


def test_demo_runs_a_server_file_and_a_server_that_does_not_start_is_one_line(tmp_path):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    (tmp_path / "demo.py").write_text(SERVER_FILE, encoding="utf-8")

    def demo(server):
        return subprocess.run([sys.executable, "-m", "mcp_ref", "demo", "--server", server], capture_output=True,
                              text=True, timeout=60, env=env, cwd=str(tmp_path))
    done = demo("demo.py")
    assert done.returncode == 0, done.stderr[-3000:]
    assert "spawns `python demo.py`" in done.stdout and "connected to from-a-file 1.0" in done.stdout
    assert done.stdout.splitlines()[-1] == "# closed cleanly"
    done = demo("no_such_module_xyz")
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stderr.splitlines()[-1].startswith(
        "mcp-ref: error: the server `python -m no_such_module_xyz` did not start: ")
    assert "No module named no_such_module_xyz" in done.stderr.splitlines()[-1]
    done = demo("missing.py")
    assert (done.returncode, done.stderr) == (1, "mcp-ref: error: --server missing.py: no such file "
                                                 "(give a .py file or a module name)\n")
