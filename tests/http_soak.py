"""Soak and load over Streamable HTTP, shared by tests/test_http_soak.py (CI sizes) and
bench/soak.py (full sizes): sessions opened and closed in sequence, sessions abandoned
(never DELETEd, left to expire), and many concurrent sessions calling a tool that
reports progress and logs.

What is measured is this process: the server runs in it (``start_http``) and so do the
clients, so threads, file descriptors and traced memory cover both ends.
Spec: basic/transports#session-management, basic/utilities/progress,
server/utilities/logging.
"""
import gc
import http.client
import json
import os
import threading
import time
import tracemalloc

from mcp_ref import Client, Context, Server
from mcp_ref.transports.http.server.app import start_http

VERSION = "2025-11-25"          # a revision with HTTP sessions (Mcp-Session-Id, DELETE)
STEPS = 3                       # progress notifications per call
HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


def build() -> Server:
    """``work(n)``: STEPS progress notifications, one log message, returns ``2 n``."""
    server = Server("soak", version="1")

    @server.tool
    def work(n: int, ctx: Context) -> int:
        """Report progress, log, and double ``n``."""
        for step in range(1, STEPS + 1):
            ctx.report_progress(step, STEPS)
        ctx.log("info", {"n": n})
        return 2 * n

    return server


def serve(**options):
    """A started ``HttpServerHandle`` for ``build()`` (the caller shuts it down)."""
    return start_http(build(), **options)


def snapshot() -> dict:
    """Threads, descriptors, RSS and (when tracing) Python memory of this process."""
    gc.collect()
    snap = {"threads": threading.active_count(), "fds": len(os.listdir("/proc/self/fd"))}
    with open("/proc/self/status") as f:
        snap["rss_kib"] = next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))
    snap["traced_kib"] = tracemalloc.get_traced_memory()[0] // 1024 if tracemalloc.is_tracing() else None
    return snap


def settle(handle, sessions: int, before: dict, wait: float) -> dict:
    """Wait (at most ``wait`` s) for the server to hold ``sessions`` sessions and the
    thread count to come back to ``before``'s; then a snapshot."""
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline and (handle.app.session_count != sessions
                                           or threading.active_count() > before["threads"]):
        time.sleep(0.05)
    return snapshot()


def one_session(url: str, n: int, timeout: float) -> None:
    """Open a session, call ``work`` once, close it (DELETE)."""
    with Client.http(url, timeout=timeout, protocol_version=VERSION) as client:
        result = client.call_tool("work", {"n": n})
        assert value(result) == 2 * n, result


def value(result):
    """The number a ``work`` call returned (structured, or as its text)."""
    if result.structured_content:
        return result.structured_content.get("result")
    return int(result.content[0].text) if result.content and result.content[0].text.isdigit() else None


def in_sequence(url: str, count: int, timeout: float) -> list:
    """``count`` sessions opened and closed one after another; their durations (s)."""
    durations = []
    for n in range(count):
        started = time.perf_counter()
        one_session(url, n, timeout)
        durations.append(time.perf_counter() - started)
    return durations


def abandon(port: int, count: int, timeout: float) -> list:
    """``count`` sessions initialized and called once over raw HTTP, then left: the
    connection is closed and no DELETE is ever sent. Their session ids."""
    ids = []
    for n in range(count):
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
        try:
            headers = _post(conn, {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": VERSION, "capabilities": {}, "clientInfo": {"name": "gone", "version": "1"}}},
                HEADERS)
            session = {**HEADERS, "Mcp-Session-Id": headers["mcp-session-id"], "MCP-Protocol-Version": VERSION}
            _post(conn, {"jsonrpc": "2.0", "method": "notifications/initialized"}, session)
            _post(conn, {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                         "params": {"name": "work", "arguments": {"n": n}}}, {**session, "Accept": "application/json"})
            ids.append(session["Mcp-Session-Id"])
        finally:
            conn.close()
    return ids


def _post(conn, message: dict, headers: dict) -> dict:
    conn.request("POST", "/mcp", json.dumps(message), headers)
    response = conn.getresponse()
    body = response.read()
    assert response.status in (200, 202), (response.status, body)
    return {k.lower(): v for k, v in response.getheaders()}


def load(url: str, clients: int, calls: int, timeout: float) -> dict:
    """``clients`` concurrent sessions, each calling ``work`` ``calls`` times with a
    progress callback and at log level info. Every result, progress count and log
    message is checked; returns errors, wrong results, latencies (s) and the time."""
    lock = threading.Lock()
    out = {"errors": [], "wrong": [], "latencies": [], "progress": 0, "logs": 0}
    start = threading.Barrier(clients)

    def run(k: int) -> None:
        logs, latencies, progress = [], [], [0]
        try:
            with Client.http(url, timeout=timeout, protocol_version=VERSION, on_log=logs.append) as client:
                client.set_logging_level("info")
                start.wait(timeout)
                for j in range(calls):
                    n, seen = k * 100000 + j, []
                    began = time.perf_counter()
                    result = client.call_tool("work", {"n": n}, on_progress=lambda p, t, m: seen.append(p))
                    latencies.append(time.perf_counter() - began)
                    progress[0] += len(seen)
                    got = value(result)
                    if got != 2 * n or seen != list(range(1, STEPS + 1)) or result.is_error:
                        with lock:
                            out["wrong"].append((k, j, got, seen))
            expected = [{"n": k * 100000 + j} for j in range(calls)]
            if [entry.data for entry in logs] != expected:
                with lock:
                    out["wrong"].append((k, "logs", len(logs)))
        except Exception as exc:                     # counted, not raised: the table reports it
            with lock:
                out["errors"].append(f"client {k}: {type(exc).__name__}: {exc}")
        with lock:
            out["latencies"].extend(latencies)
            out["progress"] += progress[0]
            out["logs"] += len(logs)

    threads = [threading.Thread(target=run, args=(k,), name=f"soak-client-{k}") for k in range(clients)]
    began = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout * 4)
    out["elapsed"] = time.perf_counter() - began
    out["stuck"] = sum(thread.is_alive() for thread in threads)
    return out


def percentile(values: list, fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * fraction))] if ordered else float("nan")
