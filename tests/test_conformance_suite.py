"""A few scenarios of the official MCP conformance suite (``@modelcontextprotocol/conformance``).

Optional: set ``MCP_CONFORMANCE`` to a directory where the suite is installed
(``npm install @modelcontextprotocol/conformance`` there, so that it holds
``node_modules/.bin/conformance``) with a Node.js able to run it. Skipped otherwise.
The client scenarios run ``tests/conformance/client.py``; the server scenarios
run against one ``tests/conformance/server.py``. Results of the whole suite:
spec_notes/interop.md.
"""
from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
INSTALL = os.environ.get("MCP_CONFORMANCE", "")
CLI = Path(INSTALL, "node_modules", ".bin", "conformance") if INSTALL else None


def _why_skip() -> str | None:
    if not INSTALL:
        return "MCP_CONFORMANCE is not set (a directory with the conformance suite installed)"
    if not CLI.exists():
        return f"no node_modules/.bin/conformance under MCP_CONFORMANCE={INSTALL}"
    if shutil.which("node") is None:
        return "no node on PATH"
    try:
        subprocess.run([str(CLI), "--version"], cwd=INSTALL, capture_output=True, timeout=60, check=True)
    except (OSError, subprocess.SubprocessError) as exc:
        return f"the conformance suite does not run here: {exc}"
    return None


_REASON = _why_skip()
pytestmark = pytest.mark.skipif(_REASON is not None, reason=_REASON or "")


def _env() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return env


def _passed(output: str) -> bool:
    """The suite's summary: ``Passed: N/N, 0 failed, 0 warnings``."""
    match = re.search(r"Passed: (\d+)/(\d+), (\d+) failed, (\d+) warnings", output)
    return bool(match) and match.group(3) == "0" and match.group(4) == "0" and match.group(1) == match.group(2)


@pytest.mark.parametrize("scenario", ["initialize", "sse-retry"])
def test_client_scenario(scenario):
    command = f'"{sys.executable}" "{ROOT / "tests" / "conformance" / "client.py"}"'
    done = subprocess.run([str(CLI), "client", "--command", command, "--scenario", scenario],
                          cwd=INSTALL, env=_env(), capture_output=True, text=True, timeout=180)
    output = done.stdout + done.stderr
    assert _passed(output) and "OVERALL: PASSED" in output, output[-4000:]


@pytest.fixture(scope="module")
def server_url():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen([sys.executable, str(ROOT / "tests" / "conformance" / "server.py"),
                                "--http", f"127.0.0.1:{port}"], env=_env(),
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline or process.poll() is not None:
                    pytest.fail("the conformance server did not start")
                time.sleep(0.1)
        yield f"http://localhost:{port}/mcp"
    finally:
        process.terminate()
        process.wait(10)


@pytest.mark.parametrize("scenario", ["dns-rebinding-protection", "caching"])    # in this order, one server
def test_server_scenario(server_url, scenario):
    done = subprocess.run([str(CLI), "server", "--url", server_url, "--scenario", scenario],
                          cwd=INSTALL, env=_env(), capture_output=True, text=True, timeout=180)
    output = done.stdout + done.stderr
    assert _passed(output), output[-4000:]
