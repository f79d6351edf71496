#!/usr/bin/env python3
"""Soak over stdio at full size: stdio sessions opened and closed in sequence (threads,
file descriptors and child processes must come back to where they started), then
eight threads sharing one stdio ``Client`` (every reply must reach its own caller).
``tests/test_faults.py`` runs the same at CI size.

    python bench/soak.py                     # 1,000 sessions; 8 threads x 2,000 calls
    python bench/soak.py --sessions 100 --calls 200

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
sys.path.insert(0, str(ROOT))

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


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=1000)
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--calls", type=int, default=2000, help="calls per thread")
    args = parser.parse_args(argv)
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
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
