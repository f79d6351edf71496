"""Many Streamable HTTP sessions at once: threads, memory, burst wall time and errors, against a floor.

Run from the repository root::

    python bench/bench_http_sessions.py                      # 1, 10, 100, 500 sessions
    python bench/bench_http_sessions.py --sessions 50,200 --rounds 3

For each number of sessions N, and for each server (each in a fresh subprocess):

* N clients, each a thread with its own keep-alive connection, connect and send
  ``initialize`` at the same instant (a barrier), then ``notifications/initialized``;
* all N then send one ``tools/call`` at the same instant ("call burst");
* with the N connections still open and idle, the server's threads and RSS are
  read from ``/proc/<pid>/status``; the connections are closed without DELETE
  (as the Inspector and the TypeScript clients do), and after 3 s the threads
  are read again ("idle").

Servers: the floor, a bare ``http.server.ThreadingHTTPServer`` JSON-RPC loop (one
thread per connection, no MCP library; its accept queue raised to mcp_ref's
default so that both measure the work, not socketserver's queue of 5), and
mcp_ref's ``serve_http`` with one ``add`` tool. Wall times are the median of the
rounds, errors their sum. Linux only (``/proc``).
"""
import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import threading
import time
import http.client
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
BACKLOG = max(socket.SOMAXCONN, 128)

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_http import FLOOR_SERVER as _FLOOR  # noqa: E402  (bench/ is not a package)

# bench_http.py's floor with its accept queue raised to mcp_ref's default (see above).
FLOOR_SERVER = _FLOOR.replace("server = ThreadingHTTPServer(",
                              f"ThreadingHTTPServer.request_queue_size = {BACKLOG}\nserver = ThreadingHTTPServer(", 1)

MCP_REF_SERVER = r'''
from mcp_ref import Server
from mcp_ref.transports.http.server.app import serve_http

server = Server("bench")


@server.tool
def add(a: int, b: int) -> int:
    return a + b


serve_http(server, ("127.0.0.1", 0), max_sessions=100000)
'''

HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
INIT = json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}})
INITIALIZED = json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"})
CALL = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                   "params": {"name": "add", "arguments": {"a": 1, "b": 2}}})


def spawn(source: str):
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    proc = subprocess.Popen([sys.executable, "-c", source], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            text=True, env=env)
    line = proc.stdout.readline()
    port = int(line.split("http://127.0.0.1:", 1)[1].split("/", 1)[0])
    return proc, port


def status(pid: int) -> dict:
    fields = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            name, _, value = line.partition(":")
            fields[name] = value.strip()
    return {"threads": int(fields["Threads"]), "rss": int(fields["VmRSS"].split()[0]) / 1024,
            "peak": int(fields["VmHWM"].split()[0]) / 1024}


def run(source: str, sessions: int) -> dict:
    proc, port = spawn(source)
    start = threading.Barrier(sessions + 1)
    burst = threading.Barrier(sessions + 1)
    done = threading.Barrier(sessions + 1)
    closing = threading.Event()
    errors = []

    def client():
        conn, headers = None, dict(HEADERS)
        try:
            start.wait(120)
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
            conn.request("POST", "/mcp", INIT, HEADERS)
            response = conn.getresponse()
            response.read()
            if response.status != 200:
                raise RuntimeError(f"initialize: HTTP {response.status}")
            if response.getheader("Mcp-Session-Id"):
                headers.update({"Mcp-Session-Id": response.getheader("Mcp-Session-Id"),
                                "MCP-Protocol-Version": "2025-11-25"})
            conn.request("POST", "/mcp", INITIALIZED, headers)
            conn.getresponse().read()
        except Exception as exc:
            errors.append(f"connect: {exc!r}")
            if conn is not None:
                conn.close()
                conn = None
        try:
            burst.wait(120)
            if conn is not None:
                conn.request("POST", "/mcp", CALL, headers)
                response = conn.getresponse()
                body = response.read()
                if response.status != 200 or b'"3"' not in body:
                    raise RuntimeError(f"tools/call: HTTP {response.status} {body[:80]!r}")
        except Exception as exc:
            errors.append(f"call: {exc!r}")
        finally:
            done.wait(120)
            closing.wait(120)
            if conn is not None:
                conn.close()

    threads = [threading.Thread(target=client, daemon=True) for _ in range(sessions)]
    for thread in threads:
        thread.start()
    try:
        t0 = time.perf_counter()
        start.wait(120)
        burst.wait(120)                     # every client has initialized (or failed)
        t1 = time.perf_counter()
        done.wait(120)                      # every client has its answer
        t2 = time.perf_counter()
        time.sleep(0.5)
        open_status = status(proc.pid)
        closing.set()
        for thread in threads:
            thread.join(120)
        time.sleep(3.0)                     # longer than an mcp_ref worker's idle exit (2 s)
        idle_status = status(proc.pid)
    finally:
        proc.terminate()
        proc.wait(10)
        proc.stdout.close()
    return {"connect": t1 - t0, "burst": t2 - t1, "errors": len(errors), "threads_open": open_status["threads"],
            "threads_idle": idle_status["threads"], "rss": open_status["rss"], "peak": idle_status["peak"],
            "samples": errors[:3]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--sessions", default="1,10,100,500", help="comma-separated session counts")
    parser.add_argument("--rounds", type=int, default=1, help="rounds per count (median wall times)")
    args = parser.parse_args()
    if not os.path.exists("/proc/self/status"):
        print("this benchmark reads /proc (Linux)")
        return 2
    counts = [int(n) for n in args.sessions.split(",")]
    print(f"{'sessions':>8}  {'server':<8} {'threads':>8} {'idle':>6} {'RSS MB':>7} {'peak MB':>8} "
          f"{'connect s':>10} {'burst s':>8} {'errors':>6}  burst/floor")
    failed = False
    for count in counts:
        rows = {}
        for round_number in range(args.rounds):
            order = [("floor", FLOOR_SERVER), ("mcp_ref", MCP_REF_SERVER)]
            if round_number % 2:
                order.reverse()
            for name, source in order:
                rows.setdefault(name, []).append(run(source, count))
        for name in ("floor", "mcp_ref"):
            results = rows[name]
            figures = {key: statistics.median(r[key] for r in results)
                       for key in ("connect", "burst", "threads_open", "threads_idle", "rss", "peak")}
            errors = sum(r["errors"] for r in results)
            failed = failed or errors > 0
            ratio = ""
            if name == "mcp_ref":
                floor_burst = statistics.median(r["burst"] for r in rows["floor"])
                ratio = f"{figures['burst'] / floor_burst:.2f}x" if floor_burst else ""
            print(f"{count:>8}  {name:<8} {figures['threads_open']:>8.0f} {figures['threads_idle']:>6.0f} "
                  f"{figures['rss']:>7.1f} {figures['peak']:>8.1f} {figures['connect']:>10.3f} "
                  f"{figures['burst']:>8.3f} {errors:>6}  {ratio}")
            for sample in (s for r in results for s in r["samples"]):
                print(f"          {name} error: {sample}")
    print(f"\nPython {sys.version.split()[0]}, {os.cpu_count()} CPUs; threads: the server's while the "
          "connections are open, and 3 s after they closed (sessions never deleted)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
