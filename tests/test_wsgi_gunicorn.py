"""The WSGI application in a real server: a Flask application mounting it at ``/mcp``
(``DispatcherMiddleware``), served by gunicorn as a subprocess on a free loopback port
(bench/bench_wsgi.py's ``Gunicorn`` and ``FLASK_APP``), with our client and the
official Python SDK's client.

* 4 sync workers, stateless: any worker answers any request (one client's calls are
  answered by 4 processes at once), tools, progress on an SSE answer; the same in the
  2026-07-28 revision, which has no sessions.
* 1 gthread worker with sessions: the standalone GET stream, notifications.
* 4 sync workers with sessions and no sticky routing: a request reaching a process
  that does not know its session gets 404 saying so (transports/http/server/wsgi.py rule 4).

gunicorn and flask are test-only dependencies (the ``test`` extra).
Spec: basic/transports#streamable-http, #session-management.
"""
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

requests = pytest.importorskip("requests", reason="the HTTP tests need requests")
pytest.importorskip("gunicorn", reason="these tests serve the WSGI application with gunicorn (the test extra)")
pytest.importorskip("flask", reason="these tests mount the WSGI application in Flask (the test extra)")

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))

from bench_wsgi import Gunicorn  # noqa: E402
from helpers import require_official_sdk  # noqa: E402
from mcp_ref import Client  # noqa: E402
from mcp_ref.transports.http.server.wsgi import UNKNOWN_HERE  # noqa: E402

HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}

# The SDK's client: tools, a call, progress on SSE; a JSON report on stdout (argv: url).
SDK_CLIENT = '''
import anyio, json, sys, warnings
warnings.simplefilter("ignore")

async def main(url):
    from mcp import Client
    report = {"progress": []}

    async def on_progress(progress, total, message):
        report["progress"].append([progress, total])

    async with Client(url, mode="legacy", cache=None, read_timeout_seconds=30) as client:
        report["tools"] = sorted(t.name for t in (await client.list_tools()).tools)
        report["add"] = [c.text for c in (await client.call_tool("add", {"a": 2, "b": 3})).content]
        report["count"] = [c.text for c in (await client.call_tool("count", {"n": 3},
                                                                    progress_callback=on_progress)).content]
    print(json.dumps(report))

anyio.run(main, *sys.argv[1:])
'''


def text(result) -> str:
    return result.content[0].text


def run_sdk_client(tmp_path, url: str) -> dict:
    require_official_sdk()
    script = tmp_path / "sdk_client.py"
    script.write_text(SDK_CLIENT)
    done = subprocess.run([sys.executable, str(script), url], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def no_tracebacks(server: Gunicorn) -> None:
    """Nothing failed in the workers (gunicorn logs what an application raises)."""
    log = server.log.read_text(errors="replace")
    assert "Traceback" not in log and "Error handling request" not in log, log[-3000:]


def check_sdk_report(report: dict) -> None:
    assert report["tools"] == ["add", "count", "meet"]
    assert report["add"] == ["5"] and report["count"] == ["counted to 3"]
    assert report["progress"] == [[1, 3], [2, 3], [3, 3]]


@pytest.fixture(scope="module")
def stateless_four(tmp_path_factory):
    with Gunicorn(tmp_path_factory.mktemp("stateless"), 4, "sync", options={"stateless": True}) as server:
        yield server


def meet_from_threads(client, folder, parties: int) -> set:
    """``parties`` calls of ``meet`` at once: each waits for the others, so each holds a sync
    worker (one request at a time) and they are answered by as many processes."""
    pids, errors = [], []

    def meet():
        try:
            pids.append(int(text(client.call_tool("meet", {"folder": str(folder), "parties": parties}))))
        except Exception as exc:           # reported below
            errors.append(exc)
    threads = [threading.Thread(target=meet) for _ in range(parties)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not errors
    return set(pids)


def test_four_sync_workers_stateless_our_client(stateless_four, tmp_path):
    """2025-11-25 over stateless HTTP: four calls of one client answered by four processes."""
    assert requests.get(stateless_four.base_url + "/", timeout=10).text == "the rest of the site"
    progress = []
    with Client.http(stateless_four.url, timeout=60, protocol_version="2025-11-25") as client:
        assert not client.modern
        assert {t.name for t in client.list_tools()} == {"add", "count", "meet"}
        assert text(client.call_tool("add", {"a": 2, "b": 3})) == "5"
        assert text(client.call_tool("count", {"n": 3}, on_progress=lambda *a: progress.append(a[:2]))) == \
            "counted to 3"
        assert len(meet_from_threads(client, tmp_path, 4)) == 4
    assert progress == [(1, 3), (2, 3), (3, 3)]
    no_tracebacks(stateless_four)


def test_four_sync_workers_our_client_in_2026_07_28(stateless_four, tmp_path):
    """2026-07-28 has no sessions: any worker answers any request. The client keeps one
    ``subscriptions/listen`` stream open (the server declares list changes), which holds a
    sync worker for as long as the client lives: three are left for calls."""
    progress = []
    with Client.http(stateless_four.url, timeout=60) as client:
        assert client.modern and client.transport.session_id is None
        assert text(client.call_tool("count", {"n": 2}, on_progress=lambda *a: progress.append(a[:2]))) == \
            "counted to 2"
        assert len(meet_from_threads(client, tmp_path, 3)) == 3
    assert progress == [(1, 2), (2, 2)]
    no_tracebacks(stateless_four)


def test_four_sync_workers_stateless_sdk_client(stateless_four, tmp_path):
    check_sdk_report(run_sdk_client(tmp_path, stateless_four.url))
    no_tracebacks(stateless_four)


def test_one_gthread_worker_with_sessions_both_clients(tmp_path):
    folder = tmp_path / "app"
    folder.mkdir()
    with Gunicorn(folder, 1, "gthread", threads=16) as server:
        progress = []
        with Client.http(server.url, timeout=60, protocol_version="2025-11-25") as client:
            assert client.transport.session_id            # a session (and its GET stream)
            assert text(client.call_tool("count", {"n": 2}, on_progress=lambda *a: progress.append(a[:2]))) == \
                "counted to 2"
        assert progress == [(1, 2), (2, 2)]
        check_sdk_report(run_sdk_client(tmp_path, server.url))
    no_tracebacks(server)


def test_sessions_without_sticky_routing_fail_clearly(tmp_path):
    """A sync worker busy with a session's request cannot take another one, so the next
    request of that session goes to a process that does not know it: 404, saying so."""
    folder = tmp_path / "meeting"
    folder.mkdir()
    with Gunicorn(tmp_path, 4, "sync") as server:
        init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}}
        session_id = requests.post(server.url, json=init, headers=HEADERS, timeout=30).headers["Mcp-Session-Id"]
        headers = dict(HEADERS, **{"Mcp-Session-Id": session_id, "MCP-Protocol-Version": "2025-11-25"})
        answers = []

        def post(message):
            answers.append(requests.post(server.url, json=message, headers=headers, timeout=60))
        # A call that waits for a second party: where the session lives, it holds that process.
        meet = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                "params": {"name": "meet", "arguments": {"folder": str(folder), "parties": 2}}}
        holder = threading.Thread(target=post, args=(meet,))
        holder.start()
        deadline = time.monotonic() + 30
        while holder.is_alive() and not os.listdir(folder) and time.monotonic() < deadline:
            time.sleep(0.01)
        if holder.is_alive():              # the call runs where the session lives: ask elsewhere
            post({"jsonrpc": "2.0", "id": 2, "method": "ping"})
            (folder / "second-party").touch()
        holder.join(60)
        refused = [a for a in answers if a.status_code != 200]
        assert len(refused) == 1 and refused[0].status_code == 404
        assert refused[0].json()["error"]["message"].endswith(UNKNOWN_HERE)
    no_tracebacks(server)
