"""Benchmark ``tools/call`` over Streamable HTTP: the mcp_ref client and server against a floor.

Run from the repository root::

    python bench/bench_http.py            # full run (about a minute)
    python bench/bench_http.py --quick    # smoke test
    python bench/bench_http.py --json     # machine-readable

What is compared:

* floor: a bare ``http.server`` JSON-RPC server (HTTP/1.1 keep-alive, one
  write per answer, no MCP library) in a subprocess, driven by a plain
  ``requests.Session`` loop that POSTs a ``tools/call`` and parses the JSON
  answer;
* mcp_ref: ``mcp_ref.Server`` with one ``add`` tool behind ``serve_http`` in a
  subprocess, driven in-process by ``mcp_ref.Client.http`` (``call_tool``);
* informational: the same ``requests`` loop against the mcp_ref server (the
  server's share of the cost).

Figures: sequential round-trip latency (median, p99 of every call) and the
throughput of 8 threads calling at once (the floor: one ``requests.Session``
per thread; mcp_ref: one shared ``Client``); the server's own CPU per
sequential call (user + system from ``/proc/<pid>/stat`` around its blocks,
Linux) and cold start (``Popen`` to the ``initialize`` answer, floor and
mcp_ref spawned alternately), the server's cost alone, both read with the
``requests`` driver: the floor against the "requests → mcp_ref server" row. All servers run for the whole
benchmark and are measured in small alternating blocks, so machine noise hits
all alike; latency figures are over every call, throughput the median of the
rounds. Targets (the reading edition): sequential latency <= 2x the floor and the
server's CPU per call <= 3x; throughput is shown beside them. Exit status 0 when
met, 1 when missed, 2 on failure.
"""
import argparse
import json
import math
import os
import socket
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
THREADS = 8
LATENCY_TARGET = 2.0        # x the floor, sequential median
CPU_TARGET = 3.0            # x the floor, the server's CPU per sequential call

FLOOR_SERVER = r'''
import json, sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True

    def log_message(self, *args):
        pass

    def do_POST(self):
        message = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if "id" not in message:
            self.wfile.write(b"HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n")
            return
        if message["method"] == "initialize":
            result = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                      "serverInfo": {"name": "floor", "version": "0"}}
        else:
            args = message["params"]["arguments"]
            result = {"content": [{"type": "text", "text": str(args["a"] + args["b"])}]}
        body = json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}).encode()
        self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n"
                         % len(body) + body)

server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
server.daemon_threads = True
print("READY http://127.0.0.1:%d/mcp" % server.server_address[1], flush=True)
server.serve_forever()
'''

MCP_REF_SERVER = r'''
from mcp_ref import Server
from mcp_ref.transports.http.server.app import serve_http

server = Server("bench")


@server.tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


serve_http(server, ("127.0.0.1", 0))
'''


# The official Python SDK's server, the same tool, answering JSON (its json_response mode, as the
# floor does), read by the same raw driver; a port is picked first, as its run() takes one.
SDK_SERVER = r'''
import socket, warnings
warnings.simplefilter("ignore")
from mcp.server.mcpserver import MCPServer

mcp = MCPServer("bench", log_level="WARNING")


@mcp.tool()
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


probe = socket.socket()
probe.bind(("127.0.0.1", 0))
port = probe.getsockname()[1]
probe.close()
print("READY http://127.0.0.1:%d/mcp" % port, flush=True)
mcp.run("streamable-http", host="127.0.0.1", port=port, json_response=True)
'''


class BenchError(RuntimeError):
    pass


def sdk_available() -> bool:
    try:
        from mcp.server.mcpserver import MCPServer  # noqa: F401
    except ImportError:
        return False
    return True


class ServerProcess:
    """A server subprocess that prints its URL on its first stdout line."""

    def __init__(self, name: str, source: str):
        env = dict(os.environ)
        env["PYTHONPATH"] = str(REPO) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        # Warm bytecode caches, as users run (an installed package is compiled at install):
        # with this set, every spawn compiled each module whose cache is stale.
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env.pop("PYTHONPROFILEIMPORTTIME", None)
        self.name = name
        self.proc = subprocess.Popen([sys.executable, "-c", source], stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True, env=env)
        line = self.proc.stdout.readline()
        words = [w for w in line.split() if w.startswith("http://")]
        if not words:
            self.stop()
            raise BenchError(f"{name} did not start: {line!r} {self.proc.stderr.read()[-2000:]}")
        self.url = words[0]
        host, port = self.url.split("//")[1].split("/")[0].split(":")
        deadline = time.monotonic() + 30
        while True:                      # the SDK's server says its URL before it listens
            try:
                socket.create_connection((host, int(port)), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline or self.proc.poll() is not None:
                    self.stop()
                    raise BenchError(f"{name} is not listening at {self.url}") from None
                time.sleep(0.01)

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.proc.stdout.close()
        self.proc.stderr.close()


# ---------------------------------------------------------------------- drivers
class RawDriver:
    """The floor's driver: a requests.Session POST loop (also used against mcp_ref)."""

    def __init__(self, url: str):
        import requests
        self.url = url
        self.http = requests.Session()
        self.headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
        init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}}
        response = self.http.post(url, data=json.dumps(init), headers=self.headers)
        session_id = response.headers.get("Mcp-Session-Id")
        if session_id:
            self.headers.update({"Mcp-Session-Id": session_id, "MCP-Protocol-Version": "2025-11-25"})
        self.http.post(url, data='{"jsonrpc":"2.0","method":"notifications/initialized"}', headers=self.headers)
        self.next_id = 1

    def call(self) -> None:
        request_id, self.next_id = self.next_id, self.next_id + 1
        body = ('{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"add",'
                '"arguments":{"a":1,"b":2}}}' % request_id)
        reply = self.http.post(self.url, data=body, headers=self.headers).json()
        if reply.get("id") != request_id or reply["result"]["content"][0]["text"] != "3":
            raise BenchError(f"unexpected reply {reply!r}")

    def clone(self) -> "RawDriver":
        return RawDriver(self.url)

    def close(self) -> None:
        self.http.close()


class McpRefDriver:
    """mcp_ref's driver: Client.http, shared by the throughput threads."""

    def __init__(self, url: str):
        from mcp_ref import Client
        self.client = Client.http(url, timeout=30).__enter__()

    def call(self) -> None:
        result = self.client.call_tool("add", {"a": 1, "b": 2})
        if result.content[0].text != "3":
            raise BenchError(f"unexpected result {result!r}")

    def clone(self) -> "McpRefDriver":
        return self

    def close(self) -> None:
        self.client.close()


def server_cpu(proc) -> float:
    """User + system CPU seconds of a process so far (Linux), or NaN."""
    try:
        with open(f"/proc/{proc.pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return float("nan")


def cold_start(name: str, source: str) -> float:
    """Seconds from ``Popen`` to the answer to ``initialize`` (the server's cost alone)."""
    import requests
    start = time.perf_counter()
    server = ServerProcess(name, source)
    try:
        with requests.Session() as http:
            init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}}
            reply = http.post(server.url, data=json.dumps(init), headers={
                "Content-Type": "application/json", "Accept": "application/json, text/event-stream"})
            reply.raise_for_status()
            elapsed = time.perf_counter() - start
    finally:
        server.stop()
    return elapsed


def percentile(values, q: float) -> float:
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


def sequential(driver, count: int, warmup: int) -> list:
    for _ in range(warmup):
        driver.call()
    times, clock = [], time.perf_counter
    for _ in range(count):
        start = clock()
        driver.call()
        times.append(clock() - start)
    return times


def throughput(driver, per_thread: int) -> float:
    drivers = [driver.clone() for _ in range(THREADS)]
    errors = []
    barrier = threading.Barrier(THREADS + 1)

    def run(d):
        barrier.wait()
        try:
            for _ in range(per_thread):
                d.call()
        except Exception as exc:
            errors.append(exc)
    threads = [threading.Thread(target=run, args=(d,)) for d in drivers]
    for thread in threads:
        thread.start()
    barrier.wait()
    start = time.perf_counter()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - start
    for d in drivers:
        if d is not driver:
            d.close()
    if errors:
        raise BenchError(f"throughput run failed: {errors[0]!r}")
    return THREADS * per_thread / elapsed


# ---------------------------------------------------------------------- the run
PLAN = [("floor", FLOOR_SERVER, RawDriver), ("mcp_ref", MCP_REF_SERVER, McpRefDriver),
        ("requests → mcp_ref server", MCP_REF_SERVER, RawDriver)]
SDK_ROW = "requests → SDK server"


def run(args) -> dict:
    """Every server runs for the whole benchmark; the figures are gathered in small
    alternating blocks (rotating who goes first), so machine noise hits all alike."""
    servers, drivers = {}, {}
    plan = PLAN + ([(SDK_ROW, SDK_SERVER, RawDriver)] if args.sdk else [])
    try:
        for name, source, driver_class in plan:
            servers[name] = ServerProcess(name, source)
            drivers[name] = driver_class(servers[name].url)
            sequential(drivers[name], 0, args.warmup)
        names = [name for name, _, _ in plan]
        times = {name: [] for name in names}
        rates = {name: [] for name in names}
        cpu = {name: 0.0 for name in names}
        for block in range(args.blocks):
            order = names[block % len(names):] + names[:block % len(names)]
            for name in order:
                before = server_cpu(servers[name].proc)
                times[name] += sequential(drivers[name], args.calls // args.blocks, 0)
                cpu[name] += server_cpu(servers[name].proc) - before
        for round_number in range(args.rounds):
            order = names[round_number % len(names):] + names[:round_number % len(names)]
            for name in order:
                rates[name].append(throughput(drivers[name], args.per_thread))
    finally:
        for driver in drivers.values():
            driver.close()
        for server in servers.values():
            server.stop()
    starts = {"floor": [], "mcp_ref": [], **({SDK_ROW: []} if args.sdk else {})}
    sources = {"floor": FLOOR_SERVER, "mcp_ref": MCP_REF_SERVER, SDK_ROW: SDK_SERVER}
    for spawn in range(args.spawns):
        for name in (list(starts) if spawn % 2 == 0 else list(starts)[::-1]):
            starts[name].append(cold_start(name, sources[name]))
    calls = args.blocks * (args.calls // args.blocks)
    figures = {name: {"median_us": statistics.median(times[name]) * 1e6,
                      "p99_us": percentile(times[name], 0.99) * 1e6,
                      "throughput_per_s": statistics.median(rates[name]),
                      "server_cpu_us": cpu[name] / calls * 1e6} for name in times}
    figures["floor"]["cold_start_ms"] = statistics.median(starts["floor"]) * 1e3
    figures["requests → mcp_ref server"]["cold_start_ms"] = statistics.median(starts["mcp_ref"]) * 1e3
    if args.sdk:
        figures[SDK_ROW]["cold_start_ms"] = statistics.median(starts[SDK_ROW]) * 1e3
    return figures


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a smoke test (fewer calls)")
    parser.add_argument("--rounds", type=int, default=None, help="throughput rounds")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--no-sdk", action="store_true", help="skip the official SDK row")
    args = parser.parse_args(argv)
    args.sdk = not args.no_sdk and sdk_available()
    args.rounds = args.rounds or (1 if args.quick else 3)
    args.calls, args.blocks, args.warmup, args.per_thread, args.spawns = \
        (300, 3, 50, 100, 2) if args.quick else (3000, 15, 300, 500, 10)
    try:
        figures = run(args)
    except BenchError as exc:
        print(f"benchmark failed: {exc}", file=sys.stderr)
        return 2
    floor, ours = figures["floor"], figures["mcp_ref"]
    ratios = {"median_us": ours["median_us"] / floor["median_us"], "p99_us": ours["p99_us"] / floor["p99_us"],
              "throughput_per_s": ours["throughput_per_s"] / floor["throughput_per_s"]}
    served = figures["requests → mcp_ref server"]
    ratios["server_cpu_us"] = served["server_cpu_us"] / floor["server_cpu_us"]
    ratios["cold_start_ms"] = served["cold_start_ms"] / floor["cold_start_ms"]
    met = ratios["median_us"] <= LATENCY_TARGET and ratios["server_cpu_us"] <= CPU_TARGET
    if args.json:
        print(json.dumps({"figures": figures, "ratios": ratios, "target_met": met, "calls": args.calls,
                          "rounds": args.rounds, "threads": THREADS, "python": sys.version.split()[0],
                          "cpus": os.cpu_count()}, indent=2))
        return 0 if met else 1
    print(f"tools/call over Streamable HTTP: {args.calls} sequential calls in {args.blocks} alternating blocks, "
          f"{args.rounds} throughput round(s) of {THREADS} threads x {args.per_thread} calls; "
          f"Python {sys.version.split()[0]}, {os.cpu_count()} CPUs\n")
    print(f"{'':28}{'latency median':>16}{'latency p99':>14}{'throughput':>14}")
    for name, row in figures.items():
        print(f"{name:28}{row['median_us']:>13.0f} µs{row['p99_us']:>11.0f} µs{row['throughput_per_s']:>10.0f} /s")
    print(f"{'mcp_ref / floor':28}{ratios['median_us']:>15.2f}x{ratios['p99_us']:>13.2f}x"
          f"{ratios['throughput_per_s']:>13.2f}x")
    print(f"\nthe server's own cost (requests driver): CPU per sequential call {floor['server_cpu_us']:.0f} µs "
          f"(floor), {served['server_cpu_us']:.0f} µs (mcp_ref server), {ratios['server_cpu_us']:.2f}x; "
          f"cold start (Popen → initialize answer, median of {args.spawns}) {floor['cold_start_ms']:.1f} ms (floor), "
          f"{served['cold_start_ms']:.1f} ms (mcp_ref server), {ratios['cold_start_ms']:.2f}x")
    if args.sdk:
        sdk = figures[SDK_ROW]
        print(f"the official SDK's server (same raw driver, its JSON answers): latency {sdk['median_us']:.0f} µs, "
              f"{sdk['median_us'] / served['median_us']:.1f}x the mcp_ref server's; throughput "
              f"{served['throughput_per_s'] / sdk['throughput_per_s']:.1f}x lower; CPU per call "
              f"{sdk['server_cpu_us']:.0f} µs, {sdk['server_cpu_us'] / served['server_cpu_us']:.1f}x; cold start "
              f"{sdk['cold_start_ms']:.0f} ms, {sdk['cold_start_ms'] / served['cold_start_ms']:.1f}x")
    else:
        print("the official SDK: skipped (" + ("--no-sdk" if args.no_sdk else "mcp >= 2 is not importable") + ")")
    print(f"\ntargets: latency <= {LATENCY_TARGET}x the floor, server CPU per call <= {CPU_TARGET}x: "
          f"{'met' if met else 'MISSED'}")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
