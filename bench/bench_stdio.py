"""Benchmark mcp_ref over stdio against a bare floor (and, for scale, the official SDK).

Run from the repository root::

    python bench/bench_stdio.py            # full run (about two minutes)
    python bench/bench_stdio.py --quick    # smoke test
    python bench/bench_stdio.py --json     # machine-readable

One raw driver serves every server: it spawns the server with
``subprocess.Popen`` (pipes) and writes and reads JSON lines itself, with no
MCP library on the driver side, so the figures compare the servers. The
servers:

* floor: ``bench/floor_server.py``, a stdlib loop without threads;
* mcp_ref: a tiny script with one ``add`` tool (``--demo``: the demo server);
* official SDK (informational, when ``mcp`` is importable): the same tool on
  ``MCPServer``.

Figures: sequential ``tools/call`` round-trip latency (median, p99), pipelined
throughput (8 requests in flight), cold start (``Popen`` to the initialize
response), server peak RSS (``VmHWM`` just before stdin closes; Linux) and
import time. In each round every server is alive at once and the driver
alternates between them in blocks (100 sequential calls, 1,000 pipelined), and
cold starts alternate spawn by spawn, so machine noise hits all alike. Latency
and cold start pool the samples of every round; throughput and RSS are medians
of the rounds. See README.md.
"""
import argparse
import json
import math
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
FLOOR = HERE / "floor_server.py"
PROTOCOL_VERSION = "2025-11-25"
IN_FLIGHT = 8

MCP_REF_SERVER = '''\
from mcp_ref import Server

server = Server("bench")


@server.tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


if __name__ == "__main__":
    server.run()
'''

SDK_SERVER = '''\
import warnings

warnings.simplefilter("ignore")
from mcp.server.mcpserver import MCPServer

mcp = MCPServer("bench", log_level="WARNING")


@mcp.tool()
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


if __name__ == "__main__":
    mcp.run("stdio")
'''

# Targets for mcp_ref, as ratios to the floor (import: absolute milliseconds).
TARGETS = {                # the reading edition: plain code first, within these of the floor
    "latency_median_us": ("<=", 2.0),
    "throughput_per_s": (">=", 0.4),
    "cold_start_ms": ("<=", 3.0),
    "rss_mib": ("<=", 1.5),
}


# ---------------------------------------------------------------------- helpers
def child_env() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env.pop("PYTHONDONTWRITEBYTECODE", None)     # measure with warm bytecode caches, as users run
    env.pop("PYTHONPROFILEIMPORTTIME", None)
    return env


def percentile(values, q: float) -> float:
    ordered = sorted(values)
    index = max(0, math.ceil(q * len(ordered)) - 1)
    return ordered[index]


def call_line(request_id: int) -> bytes:
    return (b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"add",'
            b'"arguments":{"a":1,"b":2}}}\n' % request_id)


INIT_LINE = json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
    "protocolVersion": PROTOCOL_VERSION, "capabilities": {},
    "clientInfo": {"name": "bench", "version": "0"}}}, separators=(",", ":")).encode() + b"\n"
INITIALIZED_LINE = b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n'


class BenchError(RuntimeError):
    pass


SERVER_CPUS = None                             # set by --pin: the CPUs the servers may run on


def pin(mode: str) -> str:
    """Pin the driver and the servers (Linux): ``split`` puts the driver on the first
    CPU and the servers on the others (every round trip crosses CPUs), ``same`` puts
    everything on the first CPU, ``none`` leaves placement to the scheduler."""
    global SERVER_CPUS
    if mode == "none" or not hasattr(os, "sched_setaffinity"):
        return "none"
    cpus = sorted(os.sched_getaffinity(0))
    if mode == "split" and len(cpus) < 2:
        return "none (split needs 2 CPUs)"
    os.sched_setaffinity(0, {cpus[0]})
    SERVER_CPUS = set(cpus[1:]) if mode == "split" else {cpus[0]}
    return mode


def pin_server(pid: int) -> None:
    if SERVER_CPUS is not None:
        try:
            os.sched_setaffinity(pid, SERVER_CPUS)
        except OSError:
            pass


class RawServer:
    """A server subprocess driven with raw JSON lines."""

    def __init__(self, name: str, argv: list, env: dict, deadline: float = 600.0):
        self.name = name
        self._stderr = tempfile.TemporaryFile()
        self.started = time.perf_counter()
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr,
                                     env=env)
        pin_server(self.proc.pid)
        self._in = self.proc.stdin.fileno()
        self._readline = self.proc.stdout.readline
        self._next_id = 1
        self._watchdog = threading.Timer(deadline, self.proc.kill)
        self._watchdog.daemon = True
        self._watchdog.start()

    def write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(self._in, view):]

    def read(self) -> bytes:
        line = self._readline()
        if not line:
            raise BenchError(f"{self.name}: the server closed stdout (exit code {self.proc.poll()}); "
                             f"stderr:\n{self.stderr_tail()}")
        return line

    def stderr_tail(self, size: int = 2000) -> str:
        self._stderr.seek(0)
        return self._stderr.read().decode("utf-8", "replace")[-size:]

    def initialize(self) -> float:
        """Send initialize; return seconds from Popen to its response. Then send initialized."""
        self.write(INIT_LINE)
        line = self.read()
        elapsed = time.perf_counter() - self.started
        reply = json.loads(line)
        if "result" not in reply:
            raise BenchError(f"{self.name}: initialize failed: {line[:300]!r}")
        self.write(INITIALIZED_LINE)
        return elapsed

    def check_call(self) -> None:
        """One call, parsed in full: the tool must answer 3."""
        request_id = self._take_ids(1)
        self.write(call_line(request_id))
        reply = json.loads(self.read())
        try:
            text = reply["result"]["content"][0]["text"]
        except (KeyError, IndexError, TypeError):
            text = None
        if reply.get("id") != request_id or text != "3" or reply["result"].get("isError"):
            raise BenchError(f"{self.name}: unexpected tools/call reply {reply!r}")

    def _take_ids(self, count: int) -> int:
        first = self._next_id
        self._next_id += count
        return first

    def sequential(self, count: int) -> list:
        """Round-trip times (seconds) of ``count`` calls, one at a time."""
        first = self._take_ids(count)
        lines = [call_line(first + i) for i in range(count)]
        write, read, clock = self.write, self.read, time.perf_counter
        times = []
        for line in lines:
            start = clock()
            write(line)
            reply = read()
            times.append(clock() - start)
            if b'"result"' not in reply:
                raise BenchError(f"{self.name}: tools/call failed: {reply[:300]!r}")
        return times

    def pipelined(self, count: int, in_flight: int = IN_FLIGHT) -> float:
        """Seconds for ``count`` calls with ``in_flight`` requests outstanding."""
        first = self._take_ids(count)
        lines = [call_line(first + i) for i in range(count)]
        write, read = self.write, self.read
        sent = received = failed = 0
        start = time.perf_counter()
        while sent < min(in_flight, count):
            write(lines[sent])
            sent += 1
        while received < count:
            reply = read()
            received += 1
            if b'"result"' not in reply:
                failed += 1
            if sent < count:
                write(lines[sent])
                sent += 1
        elapsed = time.perf_counter() - start
        if failed:
            raise BenchError(f"{self.name}: {failed} pipelined calls failed")
        return elapsed

    def peak_rss_mib(self):
        """VmHWM of the server (Linux), or None."""
        try:
            with open(f"/proc/{self.proc.pid}/status") as status:
                for row in status:
                    if row.startswith("VmHWM:"):
                        return int(row.split()[1]) / 1024.0
        except OSError:
            pass
        return None

    def close(self) -> None:
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self._watchdog.cancel()
        self.proc.stdout.close()
        self._stderr.close()


# ---------------------------------------------------------------------- measurements
def blocks(total: int, size: int) -> list:
    return [min(size, total - done) for done in range(0, total, size)]


def run_round(servers: dict, env: dict, cfg) -> dict:
    """All servers alive at once, driven in alternating blocks (sequential, then
    pipelined), so that whatever the machine does hits every server alike."""
    live = {}
    try:
        for name, argv in servers.items():
            live[name] = RawServer(name, argv, env)
        for server in live.values():
            server.initialize()
            server.check_call()
            server.sequential(cfg.warmup)
            server.pipelined(min(cfg.warmup, 100))
        times = {name: [] for name in live}
        for block in blocks(cfg.calls, cfg.block):
            for name, server in live.items():
                times[name] += server.sequential(block)
        elapsed = dict.fromkeys(live, 0.0)
        for block in blocks(cfg.pipelined, cfg.pipelined_block):
            for name, server in live.items():
                elapsed[name] += server.pipelined(block)
        rss = {name: server.peak_rss_mib() for name, server in live.items()}
    finally:
        for server in live.values():
            server.close()
    return {name: {"latency_us": [t * 1e6 for t in times[name]],
                   "throughput_per_s": cfg.pipelined / elapsed[name], "rss_mib": rss[name]}
            for name in live}


def cold_starts(servers: dict, env: dict, spawns: dict) -> dict:
    """Popen → initialize response (ms samples), spawns interleaved across servers;
    ``spawns`` gives each server's count."""
    samples = {name: [] for name in servers}
    for index in range(max(spawns.values())):
        for name, argv in servers.items():
            if index >= spawns[name]:
                continue
            server = RawServer(name, argv, env, deadline=60.0)
            try:
                samples[name].append(server.initialize() * 1e3)
            finally:
                server.close()
    return samples


def client_round(servers: dict, env: dict, cfg) -> dict:
    """Sequential latency (µs samples) of ``Client.call_tool``: the in-process mcp_ref
    client against the mcp_ref server and against the floor, in blocks alternating
    with the raw driver against the floor (the reference for the ratios)."""
    sys.path.insert(0, str(REPO))
    from mcp_ref import Client
    arguments = {"a": 1, "b": 2}
    clients, raw = {}, None
    try:
        for name in ("mcp_ref", "floor"):
            client = Client.stdio(servers[name], env={"PYTHONPATH": env["PYTHONPATH"]},
                                  on_stderr=lambda line: None)
            clients[name] = client
            pin_server(client.transport.process.pid)
            client.connect()
            result = client.call_tool("add", arguments)
            if result.is_error or result.content[0].text != "3":
                raise BenchError(f"Client.call_tool ({name}): unexpected result {result!r}")
            for _ in range(cfg.warmup):
                client.call_tool("add", arguments)
        raw = RawServer("floor", servers["floor"], env)
        raw.initialize()
        raw.sequential(cfg.warmup)
        samples = {"client_to_mcp_ref": [], "client_to_floor": [], "raw_to_floor": []}
        clock = time.perf_counter
        for block in blocks(cfg.calls, cfg.block):
            samples["raw_to_floor"] += raw.sequential(block)
            for name, client in clients.items():
                bucket = samples[f"client_to_{name}"]
                for _ in range(block):
                    start = clock()
                    client.call_tool("add", arguments)
                    bucket.append(clock() - start)
    finally:
        for client in clients.values():
            client.close()
        if raw is not None:
            raw.close()
    return {key: [t * 1e6 for t in values] for key, values in samples.items()}


_IMPORTTIME_ROW = re.compile(r"import time:\s+(\d+)\s+\|\s+(\d+)\s+\| ( *)(\S+)")


def importtime_ms(statement: str, env: dict) -> float:
    """Cumulative ms of what ``statement`` imports (``-X importtime``: top-level rows after ``site``)."""
    proc = subprocess.run([sys.executable, "-X", "importtime", "-c", statement], env=env,
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise BenchError(f"`{statement}` failed:\n{proc.stderr[-2000:]}")
    total, after_site = 0, False
    for row in proc.stderr.splitlines():
        match = _IMPORTTIME_ROW.match(row)
        if not match or match.group(3):
            continue                              # not a row, or a nested (indented) one
        if after_site:
            total += int(match.group(2))
        elif match.group(4) == "site":
            after_site = True
    return total / 1e3


def wall_ms(statement: str, env: dict) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", statement], env=env, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return (time.perf_counter() - start) * 1e3


def import_times(statements: dict, env: dict, repeats: int) -> dict:
    """Per statement: median ``-X importtime`` ms and median wall ms minus a bare ``python -c pass``."""
    for statement in statements.values():           # compile bytecode caches first
        importtime_ms(statement, env)
    cumulative = {name: [] for name in statements}
    wall = {name: [] for name in statements}
    bare = []
    for _ in range(repeats):
        bare.append(wall_ms("pass", env))
        for name, statement in statements.items():
            wall[name].append(wall_ms(statement, env))
            cumulative[name].append(importtime_ms(statement, env))
    base = statistics.median(bare)
    return {name: {"importtime_ms": statistics.median(cumulative[name]),
                   "wall_minus_bare_ms": statistics.median(wall[name]) - base,
                   "bare_python_ms": base}
            for name in statements}


def sdk_available() -> bool:
    probe = subprocess.run([sys.executable, "-c", "import mcp.server.mcpserver"], env=child_env(),
                           capture_output=True)
    return probe.returncode == 0


def sdk_version() -> str:
    try:
        from importlib.metadata import version
        return version("mcp")
    except Exception:
        return "?"


# ---------------------------------------------------------------------- the run
def measure(cfg, log) -> dict:
    env = child_env()
    tmp = tempfile.TemporaryDirectory(prefix="mcp_ref_bench_")
    script = Path(tmp.name) / "bench_server.py"
    script.write_text(MCP_REF_SERVER)
    servers = {"floor": [sys.executable, str(FLOOR)],
               "mcp_ref": ([sys.executable, "-m", "mcp_ref.examples.demo_server"] if cfg.demo
                           else [sys.executable, str(script)])}
    sdk_note = None
    if cfg.no_sdk:
        sdk_note = "skipped (--no-sdk)"
    elif not sdk_available():
        sdk_note = "skipped: the official SDK (mcp >= 2) is not importable"
    else:
        sdk_script = Path(tmp.name) / "sdk_server.py"
        sdk_script.write_text(SDK_SERVER)
        sdk_argv = [sys.executable, str(sdk_script)]

    names = ["floor", "mcp_ref"] + (["sdk"] if sdk_note is None else [])
    if sdk_note is None:
        servers["sdk"] = sdk_argv
    spawns = {name: cfg.spawns if name != "sdk" else max(1, cfg.spawns // 2) for name in names}
    pooled = {name: {"latency_us": [], "cold_start_ms": []} for name in names}
    client_pooled = {"client_to_mcp_ref": [], "client_to_floor": [], "raw_to_floor": []}
    rounds = []
    for index in range(cfg.rounds):
        order = names if index % 2 == 0 else names[::-1]
        log(f"round {index + 1}/{cfg.rounds}: {', '.join(order)} in alternating blocks: "
            f"{cfg.calls} sequential calls, {cfg.pipelined} pipelined")
        measured = run_round({name: servers[name] for name in order}, env, cfg)
        log(f"  cold starts ({', '.join(f'{n} x{spawns[n]}' for n in order)})")
        starts = cold_starts({name: servers[name] for name in order}, env, spawns)
        log("  mcp_ref Client -> mcp_ref server and -> floor, alternating with the raw driver -> floor")
        clients = client_round(servers, env, cfg)
        result = {}
        for name in names:
            latency = measured[name]["latency_us"]
            pooled[name]["latency_us"] += latency
            pooled[name]["cold_start_ms"] += starts[name]
            result[name] = {"latency_median_us": statistics.median(latency),
                            "latency_p99_us": percentile(latency, 0.99),
                            "throughput_per_s": measured[name]["throughput_per_s"],
                            "cold_start_ms": statistics.median(starts[name]),
                            "rss_mib": measured[name]["rss_mib"]}
        for key, values in clients.items():
            client_pooled[key] += values
            result[f"{key}_us"] = statistics.median(values)
        rounds.append(result)

    log(f"import times x{cfg.import_repeats}")
    statements = {"server": "import mcp_ref.server, mcp_ref.transports.stdio",
                  "client": "import mcp_ref.client, mcp_ref.transports.stdio"}
    if sdk_note is None:
        statements["sdk_server"] = "import mcp.server.mcpserver"
    imports = import_times(statements, env, cfg.import_repeats)
    tmp.cleanup()

    def round_median(name, key):
        values = [r[name][key] for r in rounds if r[name][key] is not None]
        return statistics.median(values) if values else None

    summary = {}
    for name in names:
        summary[name] = {"latency_median_us": statistics.median(pooled[name]["latency_us"]),
                         "latency_p99_us": percentile(pooled[name]["latency_us"], 0.99),
                         "throughput_per_s": round_median(name, "throughput_per_s"),
                         "cold_start_ms": statistics.median(pooled[name]["cold_start_ms"]),
                         "rss_mib": round_median(name, "rss_mib")}
    for key, values in client_pooled.items():
        summary[f"{key}_us"] = statistics.median(values)
    return {"machine": machine(), "config": vars(cfg), "sdk_note": sdk_note,
            "sdk_version": sdk_version() if sdk_note is None else None,
            "rounds": rounds, "summary": summary, "imports": imports}


def machine() -> dict:
    return {"cpus": os.cpu_count(), "python": f"{platform.python_implementation()} {platform.python_version()}",
            "system": f"{platform.system()} {platform.machine()}",
            "date": time.strftime("%Y-%m-%d")}


# ---------------------------------------------------------------------- reporting
def rows(report: dict) -> list:
    """Table rows: figure, floor, mcp_ref, ratio, target, met."""
    s, imports = report["summary"], report["imports"]
    floor, ours = s["floor"], s["mcp_ref"]
    out = []

    def ratio(a, b):
        return a / b if a is not None and b else None

    def row(figure, key, unit_fmt, target=True):
        f, m = floor[key], ours[key]
        r = ratio(m, f)
        if target and key in TARGETS and r is not None:
            op, limit = TARGETS[key]
            met = r <= limit if op == "<=" else r >= limit
            out.append([figure, unit_fmt(f), unit_fmt(m), _x(r), f"{op.replace('<=', '≤').replace('>=', '≥')} "
                        f"{limit}×", "yes" if met else "NO", key, met])
        else:
            out.append([figure, unit_fmt(f), unit_fmt(m), _x(r), "—" if key not in TARGETS else "n/a",
                        "" if key not in TARGETS else "n/a", key, None])

    row("tools/call latency, sequential, median (µs)", "latency_median_us", _num)
    row("tools/call latency, sequential, p99 (µs)", "latency_p99_us", _num)
    row(f"throughput, {IN_FLIGHT} in flight (calls/s)", "throughput_per_s", _num)
    row("cold start, Popen → initialize reply (ms)", "cold_start_ms", _ms)
    row("server peak RSS, VmHWM (MiB)", "rss_mib", _ms)
    for name, label in (("server", "import mcp_ref.server + stdio (ms)"),
                        ("client", "import mcp_ref.client + stdio (ms)")):
        value = imports[name]
        out.append([label + ", -X importtime", "—", _ms(value["importtime_ms"]), "—", "(info)", "",
                    f"import_{name}", None])       # import time counts through cold start
        out.append([label + ", wall − bare python", "—", _ms(value["wall_minus_bare_ms"]), "—", "(info)", "",
                    f"import_{name}_wall", None])
    return out


def info_rows(report: dict) -> list:
    s = report["summary"]
    floor = s["floor"]
    reference = s["raw_to_floor_us"]          # the raw driver against the floor, in the same blocks
    out = [["seq. latency, mcp_ref Client → mcp_ref server (µs)", _num(reference),
            _num(s["client_to_mcp_ref_us"]), _x(_safe_ratio(s["client_to_mcp_ref_us"], reference))],
           ["seq. latency, mcp_ref Client → floor server (µs)", _num(reference),
            _num(s["client_to_floor_us"]), _x(_safe_ratio(s["client_to_floor_us"], reference))]]
    if report["sdk_note"] is None:
        sdk = s["sdk"]
        tag = f"official SDK {report['sdk_version']} server"
        for label, key, fmt in (("seq. latency, median (µs)", "latency_median_us", _num),
                                ("seq. latency, p99 (µs)", "latency_p99_us", _num),
                                (f"throughput, {IN_FLIGHT} in flight (calls/s)", "throughput_per_s", _num),
                                ("cold start (ms)", "cold_start_ms", _ms),
                                ("peak RSS (MiB)", "rss_mib", _ms)):
            out.append([f"{tag}: {label}", fmt(floor[key]), fmt(sdk[key]), _x(_safe_ratio(sdk[key], floor[key]))])
        value = report["imports"]["sdk_server"]
        out.append([f"{tag}: import mcp.server.mcpserver (ms, -X importtime)", "—",
                    _ms(value["importtime_ms"]), "—"])
    return out


def _safe_ratio(a, b):
    return a / b if a is not None and b else None


def _num(value):
    if value is None:
        return "n/a"
    return f"{value:,.0f}" if value >= 100 else f"{value:.1f}"


def _ms(value):
    return "n/a" if value is None else f"{value:.1f}"


def _x(value):
    return "—" if value is None else f"{value:.2f}×"


def table(headers: list, body: list) -> str:
    widths = [max(len(str(r[i])) for r in [headers] + body) for i in range(len(headers))]
    lines = ["| " + " | ".join(str(h).ljust(w) for h, w in zip(headers, widths)) + " |",
             "|" + "|".join("-" * (w + 2) for w in widths) + "|"]
    for r in body:
        lines.append("| " + " | ".join(str(c).ljust(w) if i == 0 else str(c).rjust(w)
                                       for i, (c, w) in enumerate(zip(r, widths))) + " |")
    return "\n".join(lines)


def render(report: dict) -> str:
    m, c = report["machine"], report["config"]
    main_rows = rows(report)
    parts = [f"mcp_ref stdio benchmark — {m['date']}, {m['cpus']} CPUs, {m['python']}, {m['system']}",
             f"{c['rounds']} rounds; per round and server {c['calls']} sequential calls (after {c['warmup']} "
             f"warm-up) and {c['pipelined']} pipelined, the servers alternating in blocks of {c['block']} / "
             f"{c['pipelined_block']} calls; {c['spawns']} interleaved cold starts per round; CPU pinning: {c['pin']}",
             "",
             table(["figure", "floor", "mcp_ref", "ratio", "target", "met?"], [r[:6] for r in main_rows]),
             "",
             "Informational (ratio to the floor's sequential latency / figure):",
             table(["figure", "floor", "value", "ratio"], info_rows(report))]
    if report["sdk_note"]:
        parts.append(f"official SDK: {report['sdk_note']}")
    missed = [r[0] for r in main_rows if r[7] is False]
    parts += ["", "all targets met" if not missed else "MISSED: " + "; ".join(missed)]
    return "\n".join(parts)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer iterations (a smoke test)")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.add_argument("--rounds", type=int, help="interleaved rounds (default 3, quick 1)")
    parser.add_argument("--demo", action="store_true", help="benchmark mcp_ref.examples.demo_server")
    parser.add_argument("--no-sdk", action="store_true", help="skip the official SDK rows")
    parser.add_argument("--pin", choices=("none", "split", "same"), default="same",
                        help="CPU placement (Linux): same (everything on one CPU, default: the figures are "
                             "the code's cost), none (the scheduler's), split (driver on one CPU, servers on "
                             "the others)")
    args = parser.parse_args(argv)
    cfg = argparse.Namespace(
        quick=args.quick, demo=args.demo, no_sdk=args.no_sdk, pin=pin(args.pin),
        rounds=args.rounds or (1 if args.quick else 3),
        warmup=50 if args.quick else 300, calls=200 if args.quick else 2000, block=100,
        pipelined=500 if args.quick else 5000, pipelined_block=250 if args.quick else 1000,
        spawns=3 if args.quick else 10,
        import_repeats=3 if args.quick else 9)

    def log(message):
        print(message, file=sys.stderr, flush=True)

    try:
        report = measure(cfg, log)
    except BenchError as exc:
        print(f"benchmark failed: {exc}", file=sys.stderr)
        return 2
    report["rows"] = [{"figure": r[0], "key": r[6], "floor": r[1], "mcp_ref": r[2], "ratio": r[3],
                       "target": r[4], "met": r[7]} for r in rows(report)]
    report["all_met"] = all(r["met"] is not False for r in report["rows"])
    if args.json:
        print(json.dumps(report, indent=2, ensure_ascii=False))
    else:
        print(render(report))
    return 0 if report["all_met"] else 1


if __name__ == "__main__":
    sys.exit(main())
