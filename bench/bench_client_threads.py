"""The stdio client driven from many threads, against a raw pipelined client.

Run from the repository root::

    python bench/bench_client_threads.py                 # 1, 16 and 64 threads, 3 rounds
    python bench/bench_client_threads.py --threads 16 --rounds 5 --floors all

One mcp_ref stdio server script with a ``noop`` tool (bench_growth.py's tool
script), one server process per driver, every driver in turn in each block
(the order flipped every other round, so noise hits all alike):

* raw: ``bench_growth.StdioServer.pipelined``, one thread writing prebuilt
  JSON lines with as many requests in flight as there are client threads,
  reading replies with a buffered ``readline``. It never switches threads,
  and the server, which reads its input in chunks, gets its requests in
  batches. The reference of every ratio.
* raw 2026-07-28: the same, each request carrying the ``_meta`` that
  ``Client`` sends in that revision (no ``initialize``): what the server does
  for requests of the Client's own revision.
* floors (``--floors``; ``threaded_floors.py`` has them all): the least a
  blocking client called from that many threads must do, in plain stdlib
  (``json.dumps`` / ``json.loads``, a lock per waiting call; no MCP types,
  no timeouts, no cancellation), with each way of writing and reading
  tried: ``floor`` (each caller writes under a lock, a reading thread wakes
  each caller as its line is read), ``combine`` (write combining: the lines
  of callers that arrive during a write leave in the next one),
  ``chunks`` (the reading thread reads 64 KiB at once and wakes everyone
  whose reply came), ``leader`` (no reading thread: a waiting caller reads
  for everyone until its own reply comes, then hands reading on), and
  their combinations.
* Client: ``Client.stdio`` called from that many threads at once, each
  calling ``call_tool("noop", {})`` in a loop.

Issue 17 asks the client to reach at least 0.7× the raw rate. Printed per
driver: calls/s, the ratio to raw (median and range over the rounds; for
Client also to raw 2026-07-28, the raw client of its own revision), the
client process's CPU per call (user + system, µs; for raw, this process's),
and the server's CPU per call (its ``cpu`` tool, read before and after each
block). Also printed first: the CPU one thread wake-up costs here (two
threads handing a lock back and forth): a thread-per-call client pays at
least one per call (the reply is read on one thread and its caller sleeps
on another), the raw client none.

``--layers`` prints where that CPU goes, layer by layer, from 1 and 16
threads: the stdio transport alone (``send`` then ``receive`` on one thread:
encoding, the write, the read and decoding; no session, no other thread),
``Session.request("ping")`` (adds the id table, the waiter and the reading
thread's hand-off) and ``Client.call_tool`` (adds the request's ``_meta``,
the checks and the decoding of the result into a ``CallToolResult``).
"""
import _thread
import argparse
import json
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
    from mcp_ref.jsonrpc.messages import Notification, Request
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


class ModernRaw:
    """The raw pipelined client speaking 2026-07-28: each line carries ``meta``, the
    ``_meta`` Client sends (the server needs no ``initialize`` in that revision)."""

    def __init__(self, server: StdioServer, meta: dict):
        self.server, self.meta = server, meta

    def line(self, request_id: int, name: str) -> bytes:
        return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
                           "params": {"name": name, "arguments": {}, "_meta": self.meta}},
                          separators=(",", ":")).encode() + b"\n"

    def pipelined(self, name: str, count: int, in_flight: int) -> float:
        return self.server.pipelined(name, count, in_flight, self.line)

    def call_tool(self, name: str, arguments: dict) -> dict:
        server = self.server
        request_id = server._take_ids(1)
        server.write(self.line(request_id, name))
        return json.loads(server.reply())["result"]


def wake_cost(rounds: int = 20000) -> float:
    """CPU µs of one thread wake-up: two threads hand a lock back and forth."""
    ping, pong = _thread.allocate_lock(), _thread.allocate_lock()
    ping.acquire()
    pong.acquire()

    def other():
        for _ in range(rounds):
            ping.acquire()
            pong.release()
    thread = threading.Thread(target=other)
    thread.start()
    cpu = time.process_time()
    for _ in range(rounds):
        ping.release()
        pong.acquire()
    thread.join()
    return (time.process_time() - cpu) / (2 * rounds) * 1e6


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
            client = Client.stdio(argv, env={"PYTHONPATH": env["PYTHONPATH"]}, on_stderr=lambda line: None)
            client.connect()
            modern = StdioServer("mcp_ref", argv, env)
            servers.append(modern)
            drivers["raw 2026-07-28"] = ModernRaw(modern, client._modern_meta(client.protocol_version))
            for kind in floors:
                server = StdioServer("mcp_ref", argv, env)
                servers.append(server)
                server.initialize()
                drivers[kind] = make_floor(kind, server)
            drivers["Client"] = client
            for name, driver in drivers.items():     # warm up
                if hasattr(driver, "pipelined"):
                    driver.pipelined("noop", 200, 8)
                else:
                    client_rate(driver, 8, 200)
            wakes = []
            rows = {}
            order = list(drivers)
            for round_index in range(args.rounds):
                for threads in (int(t) for t in args.threads.split(",")):
                    row = rows.setdefault(threads, {})
                    for name in (order if round_index % 2 == 0 else order[::-1]):
                        driver = drivers[name]
                        before = server_cpu(driver)
                        if hasattr(driver, "pipelined"):
                            cpu = time.process_time()
                            rate = driver.pipelined("noop", args.calls, threads)
                            cpu = (time.process_time() - cpu) / args.calls * 1e6
                        else:
                            rate, cpu = client_rate(driver, threads, args.calls)
                        served = (server_cpu(driver) - before) / args.calls * 1e6
                        row.setdefault(name, []).append((rate, cpu, served))
                wakes.append(wake_cost())
        finally:
            if client is not None:
                client.close()
            for server in servers:
                server.close()
    print(f"Python {sys.version.split()[0]}, {os.cpu_count()} CPUs; {args.rounds} rounds of {args.calls} calls")
    wakes.sort()
    print(f"One thread wake-up (a lock handed between two threads): {statistics.median(wakes):.1f} µs of CPU "
          f"[{wakes[0]:.1f}-{wakes[-1]:.1f}]")
    print("| threads | driver | calls/s | ratio to raw (median [low-high]) | ratio to raw of its revision "
          "| client CPU µs/call | server CPU µs/call |")
    print("|---|---|---|---|---|---|---|")

    def ratio(runs, reference):
        values = sorted(run[0] / ref[0] for run, ref in zip(runs, reference))
        return f"{statistics.median(values):.2f}× [{values[0]:.2f}-{values[-1]:.2f}]"
    for threads, row in rows.items():
        for name, runs in row.items():
            own = row["raw 2026-07-28"] if name == "Client" else None
            print(f"| {threads} | {name} | {statistics.median(r[0] for r in runs):,.0f} | {ratio(runs, row['raw'])} | "
                  f"{ratio(runs, own) if own else ''} | {statistics.median(r[1] for r in runs):.0f} | "
                  f"{statistics.median(r[2] for r in runs):.0f} |")


if __name__ == "__main__":
    main()
