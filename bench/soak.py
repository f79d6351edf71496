#!/usr/bin/env python3
"""Soak at full size. Over stdio: sessions opened and closed in sequence (threads,
file descriptors and child processes must come back to where they started), then
eight threads sharing one stdio ``Client`` (every reply must reach its own caller).
Over Streamable HTTP: sessions opened and closed in sequence, sessions abandoned
(never DELETEd, expired by the server), both with threads, descriptors and traced
memory back near the start; then concurrent sessions calling a tool that reports
progress and logs (zero errors, every result, p50/p99). ``tests/test_faults.py``
and ``tests/test_http_soak.py`` run the same at CI size.

    python bench/soak.py                     # all of it, full size
    python bench/soak.py --only http         # 1,000 + 1,000 HTTP sessions; 50 clients x 200 calls
    python bench/soak.py --sessions 100 --calls 200 --only stdio

Prints a table; exit status 1 when a bound is broken or a reply went astray.
Linux (/proc). Run from the repository root.
"""
import argparse
import os
import statistics
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from mcp_ref import Client  # noqa: E402

TARGET = [sys.executable, str(ROOT / "tests" / "fuzz_target.py")]


def _env() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    return env


def children() -> int:
    me, count = os.getpid(), 0
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    if int(f.read().rsplit(")", 1)[1].split()[1]) == me:
                        count += 1
            except OSError:
                pass
    return count


def rss_kib() -> int:
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))


def snapshot() -> dict:
    return {"threads": threading.active_count(), "fds": len(os.listdir("/proc/self/fd")),
            "children": children(), "rss_kib": rss_kib()}


def sessions(count: int) -> tuple:
    def one(n):
        with Client.stdio(TARGET, env=_env(), timeout=30) as client:
            assert client.call_tool("echo", {"text": f"s{n}"}).content[0].text == f"s{n}"
    one(-1)
    before = snapshot()
    durations = []
    for n in range(count):
        started = time.perf_counter()
        one(n)
        durations.append(time.perf_counter() - started)
    return before, snapshot(), durations


def shared(threads: int, calls: int) -> tuple:
    wrong, latencies = [], []
    lock = threading.Lock()
    with Client.stdio(TARGET, env=_env(), timeout=60) as client:
        def worker(k):
            mine = []
            for j in range(calls):
                text = f"thread {k} call {j}"
                started = time.perf_counter()
                got = client.call_tool("echo", {"text": text}).content[0].text
                mine.append(time.perf_counter() - started)
                if got != text:
                    with lock:
                        wrong.append((text, got))
            with lock:
                latencies.extend(mine)
        started = time.perf_counter()
        pool = [threading.Thread(target=worker, args=(k,)) for k in range(threads)]
        for thread in pool:
            thread.start()
        for thread in pool:
            thread.join()
        elapsed = time.perf_counter() - started
    return wrong, latencies, elapsed


def http_part(args) -> bool:
    """The HTTP soak and load; True when a bound is broken or an answer went wrong."""
    import tracemalloc

    import http_soak
    failed = False
    tracemalloc.start()
    handle = http_soak.serve(idle_timeout=args.idle_timeout)
    try:
        http_soak.in_sequence(handle.url, 5, 30)
        before = http_soak.settle(handle, 0, {"threads": 10 ** 6}, 60)
        durations = http_soak.in_sequence(handle.url, args.http_sessions, 30)
        after = http_soak.settle(handle, 0, before, 60)
        http_soak.abandon(handle.port, 5, 30)
        ab_before = http_soak.settle(handle, 0, {"threads": 10 ** 6}, args.idle_timeout * 3)
        http_soak.abandon(handle.port, args.abandoned, 30)
        idle, idle_count = http_soak.snapshot(), handle.app.session_count
        ab_after = http_soak.settle(handle, 0, ab_before, args.idle_timeout * 3)
    finally:
        handle.shutdown()
        tracemalloc.stop()
    print(f"\n## {args.http_sessions} HTTP sessions in sequence, {args.abandoned} abandoned "
          f"(idle_timeout {args.idle_timeout:g} s)\n")
    print("| | sessions | threads | fds | RSS KiB | traced KiB |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for label, snap, count in (("before", before, 0), ("after the sequence", after, 0),
                               ("abandoned, idle", idle, idle_count), ("abandoned, expired", ab_after, 0)):
        print(f"| {label} | {count} | {snap['threads']} | {snap['fds']} | {snap['rss_kib']} | {snap['traced_kib']} |")
    ms = [d * 1000 for d in durations]
    print(f"\nper session (initialize, one call with progress and a log, DELETE): "
          f"p50 {http_soak.percentile(ms, 0.5):.1f} ms, p99 {http_soak.percentile(ms, 0.99):.1f} ms")
    for label, start, end in (("sequence", before, after), ("abandoned", ab_before, ab_after)):
        if end["threads"] > start["threads"] + 2 or end["fds"] > start["fds"] + 4 \
                or end["traced_kib"] - start["traced_kib"] > 1024:
            print(f"FAILED: {label}: threads, descriptors or memory did not come back")
            failed = True
    handle = http_soak.serve()
    try:
        out = http_soak.load(handle.url, args.clients, args.client_calls, 60)
    finally:
        handle.shutdown()
    total = args.clients * args.client_calls
    lat = [x * 1000 for x in out["latencies"]]
    print(f"\n## {args.clients} concurrent HTTP sessions x {args.client_calls} calls "
          f"({http_soak.STEPS} progress notifications and a log message each)\n")
    print("| calls | errors | wrong | progress | logs | calls/s | p50 ms | p99 ms |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    print(f"| {len(lat)} | {len(out['errors'])} | {len(out['wrong'])} | {out['progress']} | {out['logs']} | "
          f"{len(lat) / out['elapsed']:.0f} | {http_soak.percentile(lat, 0.5):.2f} | "
          f"{http_soak.percentile(lat, 0.99):.2f} |")
    if out["errors"] or out["wrong"] or out["stuck"] or len(lat) != total or out["logs"] != total \
            or out["progress"] != total * http_soak.STEPS:
        print("FAILED:", (out["errors"] + out["wrong"])[:5])
        failed = True
    return failed


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", choices=("stdio", "http"))
    parser.add_argument("--sessions", type=int, default=1000)
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--calls", type=int, default=2000, help="calls per thread")
    parser.add_argument("--http-sessions", type=int, default=1000)
    parser.add_argument("--abandoned", type=int, default=1000)
    parser.add_argument("--idle-timeout", type=float, default=20.0, help="the HTTP server's, for abandoned sessions")
    parser.add_argument("--clients", type=int, default=50, help="concurrent HTTP sessions")
    parser.add_argument("--client-calls", type=int, default=200, help="calls per HTTP session")
    args = parser.parse_args(argv)
    if args.only == "http":
        return 1 if http_part(args) else 0
    failed = False
    before, after, durations = sessions(args.sessions)
    print(f"## {args.sessions} stdio sessions opened and closed in sequence\n")
    print("| | threads | fds | children | RSS KiB |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for label, snap in (("before", before), ("after", after)):
        print(f"| {label} | {snap['threads']} | {snap['fds']} | {snap['children']} | {snap['rss_kib']} |")
    ms = sorted(d * 1000 for d in durations)
    print(f"\nper session (spawn, handshake, one call, close): p50 {statistics.median(ms):.0f} ms, "
          f"p99 {ms[int(len(ms) * 0.99) - 1]:.0f} ms")
    if after["threads"] > before["threads"] or after["fds"] > before["fds"] or after["children"] > 0:
        print("FAILED: threads, file descriptors or children did not come back")
        failed = True
    wrong, latencies, elapsed = shared(args.threads, args.calls)
    total = args.threads * args.calls
    lat = sorted(x * 1000 for x in latencies)
    print(f"\n## {args.threads} threads x {args.calls} calls on one stdio Client\n")
    print("| calls | wrong replies | calls/s | p50 ms | p99 ms |")
    print("| ---: | ---: | ---: | ---: | ---: |")
    print(f"| {total} | {len(wrong)} | {total / elapsed:.0f} | {statistics.median(lat):.2f} | "
          f"{lat[int(len(lat) * 0.99) - 1]:.2f} |")
    if wrong or len(latencies) != total:
        print(f"FAILED: {len(wrong)} replies reached the wrong caller, {total - len(latencies)} calls missing")
        failed = True
    if args.only != "stdio":
        failed = http_part(args) or failed
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
