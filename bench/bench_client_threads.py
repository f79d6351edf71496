"""The stdio client driven from many threads, against a raw pipelined client.

Run from the repository root::

    python bench/bench_client_threads.py                 # 1, 16 and 64 threads, 3 rounds
    python bench/bench_client_threads.py --threads 16 --rounds 5

One mcp_ref stdio server with a ``noop`` tool (bench_growth.py's tool script)
is driven two ways, in alternating blocks so noise hits both alike:

* raw: ``bench_growth.StdioServer.pipelined``, one thread writing JSON lines
  with as many requests in flight as there are client threads;
* client: ``Client.stdio`` (its own server process) called from that many
  threads at once, each calling ``call_tool("noop", {})`` in a loop;
* threaded floor: the least any blocking client called from that many
  threads must do, in plain stdlib (``ThreadedFloor``, a third server
  process): each call encodes its request with ``json.dumps``, writes it
  under a lock and sleeps on a lock of its own; one reading thread parses
  each reply with ``json.loads`` and wakes its caller. No MCP types, no
  timeouts, no cancellation. It shows what of the gap to the raw client
  belongs to any thread-per-call client in CPython, and what to mcp_ref's.

Issue 17 asks the client to reach at least 0.7× the raw rate: the client's
own cost per call (building the request, writing, waking the caller, reading
the result) is what the ratio shows. The raw client and the threaded floor
speak 2025-11-25 after ``initialize``; ``Client`` negotiates the newest
revision the server has (2026-07-28, whose requests each carry the client's
``_meta``), as a user's client does. Also printed: the client process's CPU
per call (user + system, µs), which does not depend on the server's speed.

``--layers`` prints where that CPU goes, layer by layer, from 1 and 16
threads: the stdio transport alone (``send`` then ``receive`` on one thread:
encoding, the write, the read and decoding; no session, no other thread),
``Session.request("ping")`` (adds the id table, the waiter and the reading
thread's hand-off) and ``Client.call_tool`` (adds the request's ``_meta``,
the checks and the decoding of the result into a ``CallToolResult``).
"""
import argparse
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
for path in (str(HERE), str(REPO)):
    if path not in sys.path:
        sys.path.insert(0, path)

from bench_growth import MCP_REF_TOOLS, StdioServer  # noqa: E402
from bench_stdio import child_env  # noqa: E402
from threaded_floors import FLOORS, make_floor  # noqa: E402


def client_rate(client, threads: int, calls: int) -> tuple:
    """``(calls/s, client CPU µs per call)`` of ``calls`` noop calls from ``threads`` threads."""
    per_thread = [calls // threads + (1 if i < calls % threads else 0) for i in range(threads)]
    start_line = threading.Barrier(threads + 1)
    failures = []

    def run(count):
        start_line.wait()
        try:
            for _ in range(count):
                client.call_tool("noop", {})
        except Exception as exc:            # noqa: BLE001 - reported below
            failures.append(exc)
    workers = [threading.Thread(target=run, args=(n,)) for n in per_thread]
    for worker in workers:
        worker.start()
    cpu = time.process_time()
    start_line.wait()
    start = time.perf_counter()
    for worker in workers:
        worker.join()
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
    if failures:
        raise RuntimeError(f"{len(failures)} client threads failed: {failures[0]!r}")
    return calls / elapsed, cpu / calls * 1e6


def rate_of(call, threads: int, calls: int) -> tuple:
    """``(calls/s, client CPU µs per call)`` of ``call()`` run ``calls`` times from ``threads`` threads."""
    per_thread = calls // threads
    start_line = threading.Barrier(threads + 1)

    def run():
        start_line.wait()
        for _ in range(per_thread):
            call()
    workers = [threading.Thread(target=run) for _ in range(threads)]
    for worker in workers:
        worker.start()
    cpu = time.process_time()
    start_line.wait()
    start = time.perf_counter()
    for worker in workers:
        worker.join()
    done = per_thread * threads
    return done / (time.perf_counter() - start), (time.process_time() - cpu) / done * 1e6


def layers(argv: list, env: dict, rounds: int, calls: int) -> None:
    """Print the client's CPU per call at each layer (``--layers``, see the module docstring)."""
    from mcp_ref import Client
    from mcp_ref.messages import Notification, Request
    from mcp_ref.transports.stdio import StdioClientTransport
    transport = StdioClientTransport(argv, env={"PYTHONPATH": env["PYTHONPATH"]}, on_stderr=lambda line: None)
    transport.send(Request(0, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                             "clientInfo": {"name": "bench", "version": "0"}}))
    transport.receive()
    transport.send(Notification("notifications/initialized", None))
    ids = iter(range(1, 1 << 62))

    def raw_call():
        transport.send(Request(next(ids), "tools/call", {"name": "noop", "arguments": {}}))
        transport.receive()
    client = Client.stdio(argv, env={"PYTHONPATH": env["PYTHONPATH"]}, on_stderr=lambda line: None)
    client.connect()
    session = client.session
    cases = [("transport send + receive, one thread", raw_call, (1,)),
             ("Session.request(\"ping\")", lambda: session.request("ping"), (1, 16)),
             ("Client.call_tool(\"noop\")", lambda: client.call_tool("noop", {}), (1, 16))]
    figures: dict = {}
    try:
        for _ in range(rounds):
            for name, call, thread_counts in cases:
                for threads in thread_counts:
                    figures.setdefault((name, threads), []).append(rate_of(call, threads, calls)[1])
    finally:
        client.close()
        transport.close()
    print("| layer | threads | client CPU µs/call (median [low-high]) |")
    print("|---|---|---|")
    for (name, threads), cpus in figures.items():
        cpus.sort()
        print(f"| {name} | {threads} | {statistics.median(cpus):.0f} [{cpus[0]:.0f}-{cpus[-1]:.0f}] |")


def server_cpu(driver) -> float:
    """The server's CPU seconds so far, asked through ``driver`` (its ``cpu`` tool)."""
    if isinstance(driver, StdioServer):
        return driver.cpu_seconds()
    result = driver.call_tool("cpu", {})
    content = result["content"] if isinstance(result, dict) else result.content
    return float(content[0]["text"] if isinstance(content[0], dict) else content[0].text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", default="1,16,64", help="comma-separated thread counts")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--calls", type=int, default=3000, help="calls per block")
    parser.add_argument("--floors", default="floor", help="comma-separated floors of threaded_floors.py "
                        f"({', '.join(FLOORS)}), or 'all'")
    parser.add_argument("--layers", action="store_true", help="the client's CPU per call, layer by layer")
    args = parser.parse_args()
    from mcp_ref import Client
    env = child_env()
    floors = list(FLOORS) if args.floors == "all" else [f for f in args.floors.split(",") if f]
    with tempfile.TemporaryDirectory(prefix="mcp_ref_threads_") as tmp:
        script = Path(tmp) / "tools.py"
        script.write_text(MCP_REF_TOOLS)
        argv = [sys.executable, str(script)]
        if args.layers:
            print(f"Python {sys.version.split()[0]}, {os.cpu_count()} CPUs; {args.rounds} rounds of {args.calls} calls")
            layers(argv, env, args.rounds, args.calls)
            return
        servers = []
        drivers = {}
        client = None
        try:
            raw = StdioServer("mcp_ref", argv, env)
            servers.append(raw)
            raw.initialize()
            drivers["raw"] = raw
            for kind in floors:
                server = StdioServer("mcp_ref", argv, env)
                servers.append(server)
                server.initialize()
                drivers[kind] = make_floor(kind, server)
            client = Client.stdio(argv, env={"PYTHONPATH": env["PYTHONPATH"]}, on_stderr=lambda line: None)
            client.connect()
            drivers["Client"] = client
            for name, driver in drivers.items():     # warm up
                raw.pipelined("noop", 200, 8) if driver is raw else client_rate(driver, 8, 200)
            rows = {}
            order = list(drivers)
            for round_index in range(args.rounds):
                for threads in (int(t) for t in args.threads.split(",")):
                    row = rows.setdefault(threads, {})
                    for name in (order if round_index % 2 == 0 else order[::-1]):
                        driver = drivers[name]
                        before = server_cpu(driver)
                        if driver is raw:
                            cpu = time.process_time()
                            rate = raw.pipelined("noop", args.calls, threads)
                            cpu = (time.process_time() - cpu) / args.calls * 1e6
                        else:
                            rate, cpu = client_rate(driver, threads, args.calls)
                        served = (server_cpu(driver) - before) / args.calls * 1e6
                        row.setdefault(name, []).append((rate, cpu, served))
        finally:
            if client is not None:
                client.close()
            for server in servers:
                server.close()
    print(f"Python {sys.version.split()[0]}, {os.cpu_count()} CPUs; {args.rounds} rounds of {args.calls} calls")
    print("| threads | driver | calls/s | ratio to raw (median [low-high]) | client CPU µs/call "
          "| server CPU µs/call |")
    print("|---|---|---|---|---|---|")
    for threads, row in rows.items():
        for name, runs in row.items():
            ratios = sorted(run[0] / raw_run[0] for run, raw_run in zip(runs, row["raw"]))
            print(f"| {threads} | {name} | {statistics.median(r[0] for r in runs):,.0f} | "
                  f"{statistics.median(ratios):.2f}× [{ratios[0]:.2f}-{ratios[-1]:.2f}] | "
                  f"{statistics.median(r[1] for r in runs):.0f} | {statistics.median(r[2] for r in runs):.0f} |")


if __name__ == "__main__":
    main()
