"""Benchmark the MCP endpoint as a WSGI application: gunicorn with 1, 2 and 4 worker
processes against the built-in server, throughput of ``tools/call`` with 8 and 32
concurrent clients.

Run from the repository root (needs ``gunicorn`` and ``flask``, the ``test`` extra)::

    python bench/bench_wsgi.py            # full run (a few minutes)
    python bench/bench_wsgi.py --quick    # smoke test
    python bench/bench_wsgi.py --json     # machine-readable

What is compared: the same ``mcp_ref.Server`` (one ``add`` tool), stateless (so
any worker may answer any request, and no client waits on a session), served

* by ``serve_http`` (one process, a thread per connection), and
* mounted in a Flask application (``DispatcherMiddleware`` at ``/mcp``) served by
  gunicorn with ``-k gthread --threads 8`` and 1, 2 or 4 worker processes.

Each client is bench_http's ``requests`` loop (its own keep-alive connection)
on a thread of this process: it POSTs a ``tools/call`` and parses the JSON
answer. Figures: calls per second, the median of the rounds; servers are
measured in alternating order so machine noise hits all alike. More worker
processes help only as far as there are CPU cores for them (and for the
clients, which share the machine): the figures say what scaling out buys here.
"""
import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_http import BenchError, RawDriver, ServerProcess  # noqa: E402

CLIENTS = (8, 32)
WORKERS = (1, 2, 4)

# A Flask application mounting an mcp_ref server at /mcp; MCP_WSGI_OPTIONS (JSON) holds
# wsgi_app's options. Its tools serve the benchmark and tests/test_wsgi_gunicorn.py.
FLASK_APP = r'''
import json, os, time
from flask import Flask
from werkzeug.middleware.dispatcher import DispatcherMiddleware
from mcp_ref import Context, Server

server = Server("wsgi-app", version="1.0.0")


@server.tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool
def count(n: int, ctx: Context) -> str:
    """Report progress 1..n, then return."""
    for i in range(1, n + 1):
        ctx.report_progress(i, n)
    return f"counted to {n}"


@server.tool
def meet(folder: str, parties: int) -> int:
    """Wait (at most 30 s) until `parties` calls have arrived; return this process id."""
    open(os.path.join(folder, f"{os.getpid()}-{time.monotonic_ns()}"), "w").close()
    deadline = time.monotonic() + 30
    while len(os.listdir(folder)) < parties and time.monotonic() < deadline:
        time.sleep(0.01)
    return os.getpid()


app = Flask(__name__)


@app.route("/")
def index():
    return "the rest of the site"


mcp = server.wsgi_app(path="/mcp", **json.loads(os.environ.get("MCP_WSGI_OPTIONS", "{}")))
app.wsgi_app = DispatcherMiddleware(app.wsgi_app, {"/mcp": mcp})
'''

BUILT_IN = r'''
from mcp_ref import Server
from mcp_ref.transports.http.server.app import serve_http

server = Server("bench")


@server.tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


serve_http(server, ("127.0.0.1", 0), stateless=True)
'''


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Gunicorn:
    """gunicorn serving FLASK_APP (written to ``folder``) on a free loopback port. ``threads``
    applies to gthread workers only (gunicorn turns sync workers with threads into gthread)."""

    def __init__(self, folder, workers: int, worker_class: str = "gthread", threads: int = 8,
                 options: dict = None, timeout: float = 60.0):
        folder = Path(folder)
        (folder / "app.py").write_text(FLASK_APP, encoding="utf-8")
        self.port = free_port()
        self.base_url = f"http://127.0.0.1:{self.port}"
        self.url = self.base_url + "/mcp"
        env = dict(os.environ, MCP_WSGI_OPTIONS=json.dumps(options or {}))
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
        self.log = folder / "gunicorn.log"
        with open(self.log, "wb") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "gunicorn", "--workers", str(workers), "--worker-class", worker_class,
                 "--threads", str(threads if worker_class == "gthread" else 1), "--bind", f"127.0.0.1:{self.port}",
                 "--chdir", str(folder), "--graceful-timeout", "3", "--log-level", "warning", "app:app"],
                stdout=log, stderr=subprocess.STDOUT, env=env)
        self._wait_ready(timeout)

    def _wait_ready(self, timeout: float) -> None:
        import requests
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                break
            try:
                if requests.get(self.base_url + "/", timeout=5).status_code == 200:
                    return
            except requests.RequestException:
                time.sleep(0.1)
        self.stop()
        raise BenchError(f"gunicorn did not start: {self.log.read_text(errors='replace')[-2000:]}")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def __enter__(self) -> "Gunicorn":
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


def throughput(url: str, clients: int, per_client: int) -> float:
    """Calls per second of ``clients`` concurrent request loops (bench_http's driver)."""
    drivers = [RawDriver(url) for _ in range(clients)]
    errors: list = []
    barrier = threading.Barrier(clients + 1)

    def run(driver):
        barrier.wait()
        try:
            for _ in range(per_client):
                driver.call()
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
    for driver in drivers:
        driver.close()
    if errors:
        raise BenchError(f"throughput run failed: {errors[0]!r}")
    return clients * per_client / elapsed


def run(args) -> dict:
    servers: dict = {}
    rates: dict = {}
    with tempfile.TemporaryDirectory() as folder:
        try:
            servers["built-in (1 process)"] = ServerProcess("built-in", BUILT_IN)
            for workers in WORKERS:
                sub = Path(folder) / f"w{workers}"
                sub.mkdir()
                servers[f"gunicorn {workers} worker{'s' if workers > 1 else ''}"] = \
                    Gunicorn(sub, workers, options={"stateless": True})
            names = list(servers)
            for name in names:
                throughput(servers[name].url, 2, args.warmup)       # warm up every worker path
                rates[name] = {clients: [] for clients in CLIENTS}
            for round_number in range(args.rounds):
                order = names[round_number % len(names):] + names[:round_number % len(names)]
                for name in order:
                    for clients in CLIENTS:
                        rates[name][clients].append(throughput(servers[name].url, clients,
                                                               max(1, args.calls // clients)))
        finally:
            for server in servers.values():
                server.stop()
    return {name: {str(c): statistics.median(r) for c, r in row.items()} for name, row in rates.items()}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a smoke test (fewer calls)")
    parser.add_argument("--rounds", type=int, default=None, help="rounds per server and client count")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    args.rounds = args.rounds or (1 if args.quick else 3)
    args.calls, args.warmup = (320, 20) if args.quick else (3200, 100)
    try:
        import flask  # noqa: F401
        import gunicorn  # noqa: F401
    except ImportError as exc:
        print(f"benchmark needs gunicorn and flask (pip install -e '.[test]'): {exc}", file=sys.stderr)
        return 2
    try:
        figures = run(args)
    except BenchError as exc:
        print(f"benchmark failed: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps({"figures_calls_per_s": figures, "calls_per_run": args.calls, "rounds": args.rounds,
                          "python": sys.version.split()[0], "cpus": os.cpu_count()}, indent=2))
        return 0
    print(f"tools/call, stateless, {args.calls} calls per run, median of {args.rounds} round(s); "
          f"Python {sys.version.split()[0]}, {os.cpu_count()} CPUs\n")
    print(f"{'':26}" + "".join(f"{f'{c} clients':>14}" for c in CLIENTS))
    for name, row in figures.items():
        print(f"{name:26}" + "".join(f"{row[str(c)]:>11.0f} /s" for c in CLIENTS))
    return 0


if __name__ == "__main__":
    sys.exit(main())
