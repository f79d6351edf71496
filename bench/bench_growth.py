"""Benchmark how mcp_ref's cost grows with the work, beside a floor measured in the same run.

Run from the repository root::

    python bench/bench_growth.py                  # full sizes (a few minutes)
    python bench/bench_growth.py --quick          # small sizes, well under a minute
    python bench/bench_growth.py --only catalog   # some curves: payload,inflight,catalog,kinds,http
    python bench/bench_growth.py --json           # machine-readable

Four curves, each against a floor that does the same work with nothing but
the standard library (and, informational, the official SDK's ``MCPServer``
when ``mcp`` >= 2 is importable; ``--no-sdk`` skips it):

1. payload: ``echo`` calls over stdio carrying 100 B to 4 MB of text each
   way: wall time per call, server CPU per call (``getrusage`` in the server,
   read through a ``cpu`` tool before and after), server peak RSS (``VmHWM``);
2. in flight: 1 to 64 requests kept outstanding on one stdio connection, to a
   no-op tool and to a tool that sleeps 10 ms: calls/s. The floor answers the
   no-op on its reading thread and runs the sleeping tool on a plain pool of
   16 threads (mcp_ref's default ``max_workers``);
3. catalog: 10 to 10,000 plain tools ``tN(a: int, b: str = "x") -> str``
   (one generated module, imported by every server; ``page_size=100``):
   spawn to the ``initialize`` answer, listing every page (the first time and
   again), peak RSS;
   ``kinds``: the same for resources, resource templates and prompts (1,000
   and 10,000 of each; ``--quick``: 100 and 1,000), listed with
   ``resources/list``, ``resources/templates/list`` and ``prompts/list``;
4. http: 1 to 500 Streamable HTTP sessions that connect, initialize and call
   at the same moment (one client thread and one ``http.client`` connection
   each; the floor is a bare ``ThreadingHTTPServer`` JSON endpoint): burst
   wall time, errors, clients whose connect and initialize went through,
   server threads and RSS with every session open.

The stdio curves use ``bench_stdio.py``'s raw driver (JSON lines written and
read by the benchmark itself, no MCP library on the driver side); the servers
of one curve are alive at once and measured in alternating blocks, so machine
noise hits them alike. See README.md. Exit status 0, or 2 when a server failed.
"""
import argparse
import http.client
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from bench_http import MCP_REF_SERVER as HTTP_MCP_REF_SERVER  # noqa: E402
from bench_http import ServerProcess  # noqa: E402
from bench_stdio import BenchError, RawServer, child_env, machine, sdk_available, sdk_version, table  # noqa: E402

FLOOR = HERE / "floor_growth.py"
CURVES = ("payload", "inflight", "catalog", "kinds", "http")

MCP_REF_TOOLS = '''\
import time

from mcp_ref import Server

server = Server("growth")


@server.tool
def echo(text: str) -> str:
    """Return the text."""
    return text


@server.tool
def noop() -> str:
    """Do nothing."""
    return ""


@server.tool
def sleep() -> str:
    """Wait 10 ms, as a tool waiting on a network or a database does."""
    time.sleep(0.01)
    return ""


@server.tool
def cpu() -> str:
    """The CPU seconds (user + system) this process has used so far."""
    import resource
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return repr(usage.ru_utime + usage.ru_stime)


if __name__ == "__main__":
    server.run()
'''

SDK_TOOLS = '''\
import time
import warnings

warnings.simplefilter("ignore")
from mcp.server.mcpserver import MCPServer

mcp = MCPServer("growth", log_level="WARNING")


@mcp.tool(structured_output=False)
def echo(text: str) -> str:
    """Return the text."""
    return text


@mcp.tool(structured_output=False)
def noop() -> str:
    """Do nothing."""
    return ""


@mcp.tool(structured_output=False)
def sleep() -> str:
    """Wait 10 ms, as a tool waiting on a network or a database does."""
    time.sleep(0.01)
    return ""


@mcp.tool(structured_output=False)
def cpu() -> str:
    """The CPU seconds (user + system) this process has used so far."""
    import resource
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return repr(usage.ru_utime + usage.ru_stime)


if __name__ == "__main__":
    mcp.run("stdio")
'''

MCP_REF_CATALOG = '''\
import sys

from mcp_ref import Server

catalog = __import__(sys.argv[1])
server = Server("catalog", page_size=100)
for fn in catalog.TOOLS:
    server.tool(fn)

if __name__ == "__main__":
    server.run()
'''

SDK_CATALOG = '''\
import sys
import warnings

warnings.simplefilter("ignore")
from mcp.server.mcpserver import MCPServer

catalog = __import__(sys.argv[1])
mcp = MCPServer("catalog", log_level="WARNING")
for fn in catalog.TOOLS:
    mcp.add_tool(fn, structured_output=False)

if __name__ == "__main__":
    mcp.run("stdio")
'''


MCP_REF_KINDS = '''\
import sys

from mcp_ref import Server

catalog, kind = __import__(sys.argv[1]), sys.argv[2]
server = Server("catalog", page_size=100)
for i, fn in enumerate(catalog.ITEMS):
    if kind == "resources":
        server.resource(f"res://r{i}")(fn)
    elif kind == "templates":
        server.resource(f"tpl://r{i}/{{id}}")(fn)
    else:
        server.prompt(fn)

if __name__ == "__main__":
    server.run()
'''

# The list method of each kind, and the member of its result that holds the items.
KINDS = {"resources": ("resources/list", "resources"), "templates": ("resources/templates/list", "resourceTemplates"),
         "prompts": ("prompts/list", "prompts")}


def kinds_source(kind: str, count: int) -> str:
    """A module of ``count`` plain functions of one kind (floor_growth.py lists them by
    hand) and their list ``ITEMS``."""
    signature = {"resources": "()", "templates": "(id: str)", "prompts": '(topic: str, style: str = "short")'}[kind]
    parts = [f'def r{i}{signature} -> str:\n    """Item {i}: some text."""\n    return "x"\n\n'
             for i in range(count)]
    parts.append("ITEMS = [" + ", ".join(f"r{i}" for i in range(count)) + "]\n")
    return "\n".join(parts)


def catalog_source(count: int) -> str:
    """A module of ``count`` plain tool functions and their list ``TOOLS``."""
    parts = [f'def t{i}(a: int, b: str = "x") -> str:\n    """Tool {i}: return b, a times."""\n    return b * a\n\n'
             for i in range(count)]
    parts.append("TOOLS = [" + ", ".join(f"t{i}" for i in range(count)) + "]\n")
    return "\n".join(parts)


# ---------------------------------------------------------------------- the stdio driver
def request_line(request_id: int, name: str, arguments_json: bytes = b"{}") -> bytes:
    return (b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"%s","arguments":'
            % (request_id, name.encode()) + arguments_json + b"}}\n")


class StdioServer(RawServer):
    """A stdio server driven with raw JSON lines (``bench_stdio.RawServer``), plus
    what the growth curves read: whole replies, the server's CPU and /proc figures."""

    def reply(self) -> bytes:
        """The next response line (notifications and requests from the server skipped)."""
        while True:
            line = self.read()
            if b'"method"' not in line[:80]:
                return line

    def request(self, method: str, params: dict) -> dict:
        request_id = self._take_ids(1)
        self.write(json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params},
                              separators=(",", ":")).encode() + b"\n")
        reply = json.loads(self.reply())
        if reply.get("id") != request_id or "result" not in reply:
            raise BenchError(f"{self.name}: {method} failed: {str(reply)[:300]}")
        return reply["result"]

    def call_text(self, name: str, arguments: dict) -> str:
        result = self.request("tools/call", {"name": name, "arguments": arguments})
        if result.get("isError"):
            raise BenchError(f"{self.name}: tool {name} failed: {str(result)[:300]}")
        return result["content"][0]["text"]

    def cpu_seconds(self) -> float:
        return float(self.call_text("cpu", {}))

    def sequential(self, lines: list) -> list:
        """Round-trip seconds of each line, sent one at a time."""
        times, clock = [], time.perf_counter
        for line in lines:
            start = clock()
            self.write(line)
            reply = self.reply()
            times.append(clock() - start)
            if b'"error"' in reply[:80]:
                raise BenchError(f"{self.name}: call failed: {reply[:300]!r}")
        return times

    def pipelined(self, name: str, count: int, in_flight: int, line=request_line) -> float:
        """Calls/s of ``count`` calls of tool ``name`` with ``in_flight`` requests outstanding;
        ``line(request_id, name)`` makes each request line."""
        first = self._take_ids(count)
        lines = [line(first + i, name) for i in range(count)]
        write, reply = self.write, self.reply
        sent = received = failed = 0
        start = time.perf_counter()
        while sent < min(in_flight, count):
            write(lines[sent])
            sent += 1
        while received < count:
            line = reply()
            received += 1
            if b'"error"' in line[:80] or b'"isError":true' in line:
                failed += 1
            if sent < count:
                write(lines[sent])
                sent += 1
        elapsed = time.perf_counter() - start
        if failed:
            raise BenchError(f"{self.name}: {failed} of {count} {name} calls failed")
        return count / elapsed

    def status_mib(self, field: str = "VmHWM"):
        return proc_status_mib(self.proc.pid, field)


def proc_status_mib(pid: int, field: str):
    """A ``kB`` field of /proc/<pid>/status in MiB (Linux), or None."""
    try:
        with open(f"/proc/{pid}/status") as status:
            for row in status:
                if row.startswith(field + ":"):
                    return int(row.split()[1]) / 1024.0
    except OSError:
        pass
    return None


def proc_threads(pid: int):
    try:
        return len(os.listdir(f"/proc/{pid}/task"))
    except OSError:
        return None


class Fleet:
    """The servers of one measurement, alive at once; closed together."""

    def __init__(self, argvs: dict, env: dict):
        self.servers = {}
        try:
            for name, argv in argvs.items():
                self.servers[name] = StdioServer(name, argv, env)
            for server in self.servers.values():
                server.initialize()
        except BaseException:
            self.close()
            raise

    def ordered(self, index: int) -> list:
        """The servers, the order flipped every other block."""
        servers = list(self.servers.values())
        return servers if index % 2 == 0 else servers[::-1]

    def close(self) -> None:
        for server in self.servers.values():
            server.close()


def blocks(total: int, count: int) -> list:
    """``total`` split into ``count`` nearly equal blocks (none empty)."""
    count = max(1, min(count, total))
    return [total // count + (1 if i < total % count else 0) for i in range(count)]


# ---------------------------------------------------------------------- curve 1: payload
PAYLOAD_TEXT = 'The quick brown fox "jumps" over the lazy dog; 0123456789.\n'


def payload_text(size: int) -> str:
    return (PAYLOAD_TEXT * (size // len(PAYLOAD_TEXT) + 1))[:size]


def measure_payload(cfg, setup, log) -> dict:
    """One server of each kind for the whole curve, the sizes in increasing order,
    so ``VmHWM`` read after a size is that size's peak (larger payloads need more)."""
    rows = []
    fleet = Fleet(setup.tools_argvs, setup.env)
    try:
        for size, calls in cfg.payload:
            log(f"payload {size_label(size)}: {calls} echo calls per server")
            text = payload_text(size)
            arguments = json.dumps({"text": text}).encode()
            times = {name: [] for name in fleet.servers}
            for server in fleet.servers.values():
                if server.call_text("echo", {"text": text}) != text:
                    raise BenchError(f"{server.name}: echo returned another text")
                server.sequential([request_line(server._take_ids(1), "echo", arguments) for _ in range(2)])
            cpu_before = {server.name: server.cpu_seconds() for server in fleet.servers.values()}
            for index, block in enumerate(blocks(calls, cfg.payload_blocks)):
                for server in fleet.ordered(index):
                    first = server._take_ids(block)
                    lines = [request_line(first + i, "echo", arguments) for i in range(block)]
                    times[server.name] += server.sequential(lines)
            row = {"x": size}
            for name, server in fleet.servers.items():
                cpu = server.cpu_seconds() - cpu_before[name]
                row[name] = {"wall_ms": statistics.median(times[name]) * 1e3,
                             "cpu_ms": cpu / calls * 1e3, "rss_mib": server.status_mib("VmHWM")}
            rows.append(row)
    finally:
        fleet.close()
    return {"rows": rows}


# ---------------------------------------------------------------------- curve 2: in flight
def measure_inflight(cfg, setup, log) -> dict:
    rates = {}
    fleet = Fleet(setup.tools_argvs, setup.env)
    try:
        for server in fleet.servers.values():
            server.call_text("noop", {})
            server.call_text("sleep", {})
            server.pipelined("noop", 100, 8)
        block = 0
        for round_index in range(cfg.rounds):
            for tool, counts in (("noop", cfg.noop_calls), ("sleep", cfg.sleep_calls)):
                for depth in cfg.depths:
                    count = counts(depth)
                    log(f"in flight (round {round_index + 1}/{cfg.rounds}): {tool} x{count}, {depth} outstanding")
                    block += 1
                    for server in fleet.ordered(block):
                        rates.setdefault((tool, depth, server.name), []).append(
                            server.pipelined(tool, count, depth))
    finally:
        fleet.close()
    curves = {}
    for tool in ("noop", "sleep"):
        curves[tool] = [dict({"x": depth}, **{name: statistics.median(rates[(tool, depth, name)])
                                              for name in fleet.servers})
                        for depth in cfg.depths]
    return curves


# ---------------------------------------------------------------------- curve 3: catalog
def list_all(server: StdioServer, method: str = "tools/list", member: str = "tools") -> tuple:
    """Seconds to list every page of ``method``, and how many items came."""
    start = time.perf_counter()
    cursor, count, pages = None, 0, 0
    while True:
        result = server.request(method, {"cursor": cursor} if cursor else {})
        count += len(result[member])
        pages += 1
        cursor = result.get("nextCursor")
        if not cursor:
            return time.perf_counter() - start, count, pages


def measure_catalog(cfg, setup, log) -> dict:
    rows = []
    for size, spawns in cfg.catalog:
        module = f"catalog_{size}"
        (setup.tmp / f"{module}.py").write_text(catalog_source(size))
        argvs = {name: argv + [module] for name, argv in setup.catalog_argvs.items()}
        log(f"catalog of {size:,} tools: " + ", ".join(
            f"{name} x{spawns if name != 'sdk' else max(1, spawns // 3)}" for name in argvs))
        rows.append({"x": size, **measure_listing(argvs, setup.env, size, spawns)})
    return {"rows": rows}


def measure_kinds(cfg, setup, log) -> dict:
    """The catalog curve for resources, templates and prompts (mcp_ref and the floor)."""
    rows = []
    for kind in KINDS:
        for size, spawns in cfg.kinds:
            module = f"kinds_{kind}_{size}"
            (setup.tmp / f"{module}.py").write_text(kinds_source(kind, size))
            argvs = {"floor": [sys.executable, str(FLOOR), module, kind],
                     "mcp_ref": [sys.executable, str(setup.tmp / "mcp_ref_kinds.py"), module, kind]}
            log(f"{size:,} {kind}: floor and mcp_ref x{spawns}")
            rows.append({"x": f"{kind} {size:,}", **measure_listing(argvs, setup.env, size, spawns, *KINDS[kind])})
    return {"rows": rows}


def measure_listing(argvs: dict, env: dict, size: int, spawns: int, method: str = "tools/list",
                    member: str = "tools") -> dict:
    """Per server (alternating): spawn → initialize, list every page twice, peak RSS;
    the medians of ``spawns`` spawns (the SDK's a third as many)."""
    warm = StdioServer("floor", argvs["floor"], env)       # compiles the module's bytecode cache
    try:
        warm.initialize()
    finally:
        warm.close()
    samples = {name: {"start_ms": [], "list_ms": [], "again_ms": [], "rss_mib": [], "pages": None}
               for name in argvs}
    plan = {name: spawns if name != "sdk" else max(1, spawns // 3) for name in argvs}
    for index in range(spawns):
        names = list(argvs) if index % 2 == 0 else list(argvs)[::-1]
        for name in names:
            if index >= plan[name]:
                continue
            server = StdioServer(name, argvs[name], env)
            try:
                bucket = samples[name]
                bucket["start_ms"].append(server.initialize() * 1e3)
                elapsed, count, pages = list_all(server, method, member)
                if count != size:
                    raise BenchError(f"{name}: listed {count} of {size} ({method})")
                bucket["list_ms"].append(elapsed * 1e3)
                bucket["again_ms"].append(list_all(server, method, member)[0] * 1e3)
                bucket["rss_mib"].append(server.status_mib("VmHWM"))
                bucket["pages"] = pages
            finally:
                server.close()
    return {name: {key: (median_or_none(values) if isinstance(values, list) else values)
                   for key, values in bucket.items()} for name, bucket in samples.items()}


def median_or_none(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


# ---------------------------------------------------------------------- curve 4: http sessions
HTTP_HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
HTTP_INIT = json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}})
HTTP_INITIALIZED = '{"jsonrpc":"2.0","method":"notifications/initialized"}'
HTTP_CALL = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2}}}'


def http_post(conn, path: str, body: str, headers: dict):
    """POST; the status, the session id header and the JSON-RPC message of the answer (or None)."""
    conn.request("POST", path, body=body.encode(), headers=headers)
    response = conn.getresponse()
    data = response.read()
    message = None
    if data:
        if (response.getheader("Content-Type") or "").startswith("text/event-stream"):
            rows = [row[5:].strip() for row in data.decode().splitlines() if row.startswith("data:")]
            data = [row for row in rows if row][-1].encode()
        message = json.loads(data)
    return response.status, response.getheader("Mcp-Session-Id"), message


def http_client(url_parts, start: threading.Barrier, outcome: list, index: int, finished, hold) -> None:
    host, port, path = url_parts
    conn = http.client.HTTPConnection(host, port, timeout=60)
    stage = "connect"
    try:
        start.wait()
        conn.connect()
        stage = "initialize"
        status, session_id, message = http_post(conn, path, HTTP_INIT, HTTP_HEADERS)
        if status != 200 or not message or "result" not in message:
            raise BenchError(f"initialize answered {status} {str(message)[:200]}")
        headers = dict(HTTP_HEADERS)
        if session_id:
            headers.update({"Mcp-Session-Id": session_id, "MCP-Protocol-Version": "2025-11-25"})
        stage = "initialized"
        status, _, _ = http_post(conn, path, HTTP_INITIALIZED, headers)
        if status != 202:
            raise BenchError(f"notifications/initialized answered {status}")
        stage = "call"
        status, _, message = http_post(conn, path, HTTP_CALL, headers)
        if status != 200 or not message or message.get("result", {}).get("content", [{}])[0].get("text") != "3":
            raise BenchError(f"tools/call answered {status} {str(message)[:200]}")
        outcome[index] = ("ok", time.perf_counter(), None)
    except Exception as exc:
        outcome[index] = (stage, time.perf_counter(), f"{type(exc).__name__}: {exc}")
    finally:
        finished.release()
    hold.wait()                 # keep the connection (and its session) open while the server is read
    conn.close()


class HttpServer(ServerProcess):
    """``bench_http.ServerProcess`` for any command line: a server subprocess that
    prints its URL on its first stdout line."""

    def __init__(self, name: str, argv: list, env: dict):
        self.name = name
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        line = self.proc.stdout.readline()
        words = [w for w in line.split() if w.startswith("http://")]
        if not words:
            self.stop()
            raise BenchError(f"{name} did not start: {line!r}")
        self.url = words[0]


def listen_backlog(port: int):
    """The listening socket's accept-queue limit, from ``ss`` (Linux), or None."""
    if shutil.which("ss") is None:
        return None
    try:
        out = subprocess.run(["ss", "-ltnH", f"sport = :{port}"], capture_output=True, text=True,
                             timeout=10).stdout
        return int(out.split()[2])
    except (OSError, ValueError, IndexError, subprocess.SubprocessError):
        return None


def http_burst(server: HttpServer, sessions: int) -> dict:
    """``sessions`` clients connect, initialize and call at the same moment."""
    from urllib.parse import urlsplit
    parts = urlsplit(server.url)
    url_parts = (parts.hostname, parts.port, parts.path)
    start = threading.Barrier(sessions + 1)
    finished = threading.Semaphore(0)
    hold = threading.Event()
    outcome = [None] * sessions
    threads = [threading.Thread(target=http_client, args=(url_parts, start, outcome, i, finished, hold),
                                daemon=True) for i in range(sessions)]
    try:
        for thread in threads:
            thread.start()
        start.wait()
        began = time.perf_counter()
        for _ in range(sessions):
            finished.acquire()
        wall = max(end for _, end, _ in outcome) - began
        pid = server.proc.pid
        figures = {"threads": proc_threads(pid), "rss_mib": proc_status_mib(pid, "VmRSS"),
                   "hwm_mib": proc_status_mib(pid, "VmHWM")}
    finally:
        hold.set()
        for thread in threads:
            thread.join(30)
    failures = {}
    for stage, _, error in outcome:
        if stage != "ok":
            kind = f"{stage}: {error}"
            failures[kind] = failures.get(kind, 0) + 1
    figures.update({"wall_ms": wall * 1e3, "errors": sum(failures.values()),
                    "connects_ok": sum(1 for stage, _, _ in outcome if stage not in ("connect", "initialize")),
                    "backlog": listen_backlog(parts.port), "failures": failures})
    return figures


def measure_http(cfg, setup, log) -> dict:
    argvs = {"floor": [sys.executable, str(FLOOR), "--http"],
             "mcp_ref": [sys.executable, "-c", HTTP_MCP_REF_SERVER]}
    rows = []
    for sessions in cfg.sessions:
        runs = {name: [] for name in argvs}
        for round_index in range(cfg.rounds):
            log(f"http: {sessions} sessions at once (round {round_index + 1}/{cfg.rounds})")
            names = list(argvs) if round_index % 2 == 0 else list(argvs)[::-1]
            for name in names:
                server = HttpServer(name, argvs[name], setup.env)
                try:
                    runs[name].append(http_burst(server, sessions))
                finally:
                    server.stop()
        row = {"x": sessions}
        for name, figures in runs.items():
            failures = {}
            for f in figures:
                for kind, count in f["failures"].items():
                    failures[kind] = failures.get(kind, 0) + count
            row[name] = {"threads": median_or_none([f["threads"] for f in figures]),
                         "rss_mib": median_or_none([f["rss_mib"] for f in figures]),
                         "wall_ms": statistics.median(f["wall_ms"] for f in figures),
                         "errors": sum(f["errors"] for f in figures),
                         "connects_ok": min(f["connects_ok"] for f in figures),
                         "backlog": figures[0]["backlog"],
                         "failures": failures}
        rows.append(row)
    return {"rows": rows}


# ---------------------------------------------------------------------- reporting
def size_label(size: int) -> str:
    """Decimal units: 1 MB is 1,000,000 bytes."""
    if size >= 1_000_000:
        return f"{size / 1_000_000:g} MB"
    if size >= 1000:
        return f"{size / 1000:g} kB"
    return f"{size} B"


def fmt(value) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, int):
        return f"{value:,}"
    if value >= 100:
        return f"{value:,.0f}"
    if value >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}" if value >= 0.1 else f"{value:.3f}"


def ratio(value, floor) -> str:
    if value is None or not floor:
        return "—"
    return f"{value / floor:.2f}×"


# Each table: (curve, key of the figure, title, x label, x formatter, note).
TABLES = [
    ("payload", "wall_ms", "payload: wall time per echo call, median (ms)", "payload", size_label, None),
    ("payload", "cpu_ms", "payload: server CPU per echo call (ms, user + system)", "payload", size_label,
     "targets: ≤ 3× the floor for a small call (100 B), ≤ 1.5× at 1 MB and 4 MB"),
    ("payload", "rss_mib", "payload: server peak RSS, VmHWM (MiB)", "payload", size_label, None),
    ("noop", None, "in flight: no-op tool, calls/s on one stdio connection (higher is better)", "in flight",
     str, "the floor answers on its reading thread"),
    ("sleep", None, "in flight: 10 ms tool, calls/s on one stdio connection (higher is better)", "in flight",
     str, "the floor: a plain pool of 16 threads; target ≥ 0.8× the floor at 64 in flight"),
    ("catalog", "start_ms", "catalog: spawn → initialize answer (ms)", "tools", lambda x: f"{x:,}",
     "target: ≤ 3× the floor at 10,000 tools"),
    ("catalog", "list_ms", "catalog: list every page, first listing (ms)", "tools", lambda x: f"{x:,}",
     "pages of 100 (the SDK lists everything in one page); target: ≤ 3× the floor at 10,000"),
    ("catalog", "again_ms", "catalog: list every page again (ms)", "tools", lambda x: f"{x:,}", None),
    ("catalog", "rss_mib", "catalog: server peak RSS after listing, VmHWM (MiB)", "tools", lambda x: f"{x:,}",
     None),
    ("kinds", "start_ms", "kinds: spawn → initialize answer (ms)", "items", str,
     "target: ≤ 3× the floor at 10,000 (as for tools)"),
    ("kinds", "list_ms", "kinds: list every page, first listing (ms)", "items", str,
     "pages of 100; target: ≤ 3× the floor at 10,000"),
    ("kinds", "again_ms", "kinds: list every page again (ms)", "items", str, None),
    ("kinds", "rss_mib", "kinds: server peak RSS after listing, VmHWM (MiB)", "items", str, None),
    ("http", "wall_ms", "http: burst wall time, every session connects, initializes and calls at once (ms)",
     "sessions", str, "a failed client counts until it failed; target: ≤ 2× the floor at 500 "
     "sessions, zero errors"),
    ("http", "errors", "http: failed sessions (all rounds)", "sessions", str, None),
    ("http", "connects_ok", "http: simultaneous connects that went through (connect + initialize, worst round)",
     "sessions", str, None),
    ("http", "threads", "http: server threads with every session open", "sessions", str,
     "a session that failed is not open: with errors, fewer sessions are counted"),
    ("http", "rss_mib", "http: server RSS with every session open, VmRSS (MiB)", "sessions", str, None),
]


def curve_rows(report: dict, curve: str) -> list:
    if curve in ("noop", "sleep"):
        return report["curves"].get("inflight", {}).get(curve, [])
    return report["curves"].get(curve, {}).get("rows", [])


def render_tables(report: dict) -> list:
    """(title, markdown table, note) for every curve measured."""
    out = []
    for curve, key, title, x_label, x_fmt, note in TABLES:
        rows = curve_rows(report, curve)
        if not rows:
            continue
        names = [name for name in ("floor", "mcp_ref", "sdk") if name in rows[0]]
        headers = [x_label, "floor", "mcp_ref", "ratio"]
        if "sdk" in names:
            headers += ["SDK", "SDK ratio"]
        body = []
        for row in rows:
            values = {name: (row[name] if key is None else row[name].get(key)) for name in names}
            line = [x_fmt(row["x"]), fmt(values["floor"]), fmt(values["mcp_ref"]),
                    ratio(values["mcp_ref"], values["floor"])]
            if "sdk" in names:
                line += [fmt(values["sdk"]), ratio(values["sdk"], values["floor"])]
            body.append(line)
        out.append((title, table(headers, body), note))
    return out


def render(report: dict) -> str:
    m, c = report["machine"], report["config"]
    parts = [f"mcp_ref growth benchmark — {m['date']}, {m['cpus']} CPUs, {m['python']}, {m['system']}, "
             f"load average {m['load']} at the start",
             f"{'quick' if c['quick'] else 'full'} sizes; curves: {', '.join(c['only'])}; "
             f"official SDK: {report['sdk']}"]
    for title, text, note in render_tables(report):
        parts += ["", f"### {title}", "", text]
        if note:
            parts.append(f"\n{note}")
    http_rows = curve_rows(report, "http")
    if http_rows:
        backlog = {name: http_rows[0][name].get("backlog") for name in ("floor", "mcp_ref")}
        parts.append(f"\nlisten backlog (accept queue limit, from ss): floor {fmt(backlog['floor'])}, "
                     f"mcp_ref {fmt(backlog['mcp_ref'])}")
        for row in http_rows:
            for name in ("floor", "mcp_ref"):
                for kind, count in row[name]["failures"].items():
                    parts.append(f"{name} at {row['x']} sessions: {count} failed at {kind}")
    return "\n".join(parts)


# ---------------------------------------------------------------------- the run
def configure(args) -> argparse.Namespace:
    quick = args.quick
    only = tuple(args.only.split(",")) if args.only else CURVES
    unknown = [name for name in only if name not in CURVES]
    if unknown:
        raise SystemExit(f"--only: unknown curve(s) {', '.join(unknown)}; choose from {', '.join(CURVES)}")
    if quick:
        payload = [(100, 200), (10_000, 100), (100_000, 30), (1_000_000, 6), (4_000_000, 3)]
        catalog = [(10, 2), (100, 2), (1000, 2)]
        kinds = [(100, 2), (1000, 2)]
        sessions = [1, 10, 50]
    else:
        payload = [(100, 2000), (10_000, 1000), (100_000, 300), (1_000_000, 40), (4_000_000, 12)]
        catalog = [(10, 5), (100, 5), (1000, 5), (10_000, 3)]
        kinds = [(1000, 3), (10_000, 3)]
        sessions = [1, 10, 100, 500]
    return argparse.Namespace(
        quick=quick, only=only, no_sdk=args.no_sdk, rounds=args.rounds or (1 if quick else 3),
        payload=payload, payload_blocks=2 if quick else 4, catalog=catalog, kinds=kinds, sessions=sessions,
        depths=[1, 4, 16, 64],
        noop_calls=(lambda depth: 300) if quick else (lambda depth: 2000),
        sleep_calls=(lambda depth: max(20, min(320, 5 * depth))) if quick
        else (lambda depth: max(100, min(1000, 20 * depth))))


def warm_up(argvs: dict, env: dict) -> None:
    """Spawn every server once (initialize, list, call) so that bytecode caches are
    written before anything is timed, as users run them."""
    fleet = Fleet(argvs, env)
    try:
        for server in fleet.servers.values():
            server.request("tools/list", {})
            server.call_text("noop", {})
    finally:
        fleet.close()


def measure(cfg, log) -> dict:
    env = child_env()
    tmp = tempfile.TemporaryDirectory(prefix="mcp_ref_growth_")
    setup = argparse.Namespace(tmp=Path(tmp.name), env=env)
    env["PYTHONPATH"] = env["PYTHONPATH"] + os.pathsep + tmp.name
    if cfg.no_sdk:
        sdk = "skipped (--no-sdk)"
    elif not sdk_available():
        sdk = "skipped: mcp >= 2 is not importable"
    else:
        sdk = f"mcp {sdk_version()}"
    with_sdk = sdk.startswith("mcp ")
    scripts = {"mcp_ref_tools.py": MCP_REF_TOOLS, "mcp_ref_catalog.py": MCP_REF_CATALOG, "mcp_ref_kinds.py": MCP_REF_KINDS,
               "sdk_tools.py": SDK_TOOLS, "sdk_catalog.py": SDK_CATALOG}
    for file_name, source in scripts.items():
        (setup.tmp / file_name).write_text(source)
    python = sys.executable
    setup.tools_argvs = {"floor": [python, str(FLOOR)], "mcp_ref": [python, str(setup.tmp / "mcp_ref_tools.py")]}
    setup.catalog_argvs = {"floor": [python, str(FLOOR)],
                           "mcp_ref": [python, str(setup.tmp / "mcp_ref_catalog.py")]}
    if with_sdk:
        setup.tools_argvs["sdk"] = [python, str(setup.tmp / "sdk_tools.py")]
        setup.catalog_argvs["sdk"] = [python, str(setup.tmp / "sdk_catalog.py")]
    curves = {}
    try:
        if "catalog" in cfg.only or "kinds" in cfg.only:
            warm_up(setup.tools_argvs, env)      # start-up is timed there
        for curve in cfg.only:
            started = time.perf_counter()
            curves[curve] = {"payload": measure_payload, "inflight": measure_inflight,
                             "catalog": measure_catalog, "kinds": measure_kinds,
                             "http": measure_http}[curve](cfg, setup, log)
            log(f"{curve}: {time.perf_counter() - started:.1f} s")
    finally:
        tmp.cleanup()
    info = machine()
    info["load"] = cfg.load
    config = {key: value for key, value in vars(cfg).items() if not callable(value)}
    return {"machine": info, "config": config, "sdk": sdk, "curves": curves}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes and few iterations (well under a minute)")
    parser.add_argument("--only", help="comma-separated curves: " + ",".join(CURVES))
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.add_argument("--no-sdk", action="store_true", help="skip the official SDK columns")
    parser.add_argument("--rounds", type=int, help="rounds of the in-flight and HTTP curves (default 3, quick 1)")
    args = parser.parse_args(argv)
    cfg = configure(args)
    cfg.load = " ".join(f"{x:.2f}" for x in os.getloadavg()) if hasattr(os, "getloadavg") else "n/a"

    def log(message):
        print(message, file=sys.stderr, flush=True)

    try:
        report = measure(cfg, log)
    except BenchError as exc:
        print(f"benchmark failed: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(report, indent=2, ensure_ascii=False))
    else:
        print(render(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
