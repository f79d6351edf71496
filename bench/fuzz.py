#!/usr/bin/env python3
"""Large seeded fuzzing runs: the code of tests/test_fuzz.py (tests/fuzzing.py) at
counts too large for CI, over several seeds, with a table of what ran and what broke.

    python bench/fuzz.py                    # the default sizes, seed 1 (a few minutes)
    python bench/fuzz.py --seeds 1-5        # five seeds
    python bench/fuzz.py --quick            # about the CI sizes
    python bench/fuzz.py --lines 50000 --stdio 20000 --http 5000 --client 500 --elicit 2000

Exit status 1 when any run found a problem (each is printed with its seed, so
``MCP_FUZZ_SEED`` or ``--seeds`` reproduces it). Run from the repository root.
Standard library only (plus ``requests`` for the HTTP run).
"""
import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

import fuzz_target  # noqa: E402
import fuzzing  # noqa: E402
from mcp_ref.transports import memory_pair  # noqa: E402


def _env() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    return env


def run_in_process(seed, count):
    server = fuzz_target.build()
    peer_end, server_end = memory_pair()
    session = server.serve(server_end)
    try:
        peer = fuzzing.memory_peer(peer_end)
        fuzzing.initialize(peer)
        return fuzzing.fuzz_lines(peer, seed, count, every=True, deadline=300)
    finally:
        session.close()


def run_stdio(seed, count):
    process = subprocess.Popen([sys.executable, str(ROOT / "tests" / "fuzz_target.py")], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=_env())
    try:
        peer = fuzzing.stdio_peer(process)
        fuzzing.initialize(peer)
        out = fuzzing.fuzz_lines(peer, seed, count, every=True, deadline=300)
    finally:
        process.stdin.close()
        try:
            status = process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
            status = process.wait()
    if status != 0:
        out["problems"].append(f"the server exited with status {status}")
    return out


def run_http(seed, count):
    from mcp_ref.transports.http.server.app import start_http
    handle = start_http(fuzz_target.build(), ("127.0.0.1", 0))
    try:
        return fuzzing.fuzz_http(handle.url, seed, count)
    finally:
        handle.shutdown()


def run_client(seed, count):
    return fuzzing.fuzz_client(seed, count, timeout=0.2)


def run_elicitation(seed, count):
    server = fuzz_target.build()
    peer_end, server_end = memory_pair()
    session = server.serve(server_end)
    try:
        peer = fuzzing.memory_peer(peer_end)
        peer.send(json.dumps({"jsonrpc": "2.0", "id": "#init", "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {"elicitation": {"form": {}}},
            "clientInfo": {"name": "fuzz", "version": "1"}}}).encode())
        while peer.recv(fuzzing.WAIT).get("id") != "#init":
            pass
        peer.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
        return fuzzing.fuzz_elicitation(peer, seed, count)
    finally:
        session.close()


RUNS = [("lines", "in-process server, hostile lines", run_in_process),
        ("stdio", "stdio server subprocess, hostile lines", run_stdio),
        ("http", "Streamable HTTP server, hostile bodies", run_http),
        ("client", "client vs hostile server, cases", run_client),
        ("elicit", "elicitation answers vs their schema", run_elicitation)]
DEFAULTS = {"lines": 20000, "stdio": 10000, "http": 2000, "client": 200, "elicit": 1000}
QUICK = {"lines": 1500, "stdio": 400, "http": 200, "client": 12, "elicit": 150}


def _seeds(text: str) -> list:
    if "-" in text:
        low, high = text.split("-", 1)
        return list(range(int(low), int(high) + 1))
    return [int(s) for s in text.split(",")]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", default="1", help="e.g. 1, 1,7,9 or 1-5")
    parser.add_argument("--quick", action="store_true", help="the CI sizes")
    for key, label, _ in RUNS:
        parser.add_argument(f"--{key}", type=int, help=f"{label} (default {DEFAULTS[key]})")
    args = parser.parse_args(argv)
    sizes = dict(QUICK if args.quick else DEFAULTS)
    sizes.update({k: getattr(args, k) for k in sizes if getattr(args, k) is not None})
    print("| run | seed | count | problems | seconds |")
    print("| --- | ---: | ---: | ---: | ---: |")
    failed = []
    for seed in _seeds(args.seeds):
        for key, label, run in RUNS:
            if not sizes[key]:
                continue
            started = time.monotonic()
            out = run(seed, sizes[key])
            elapsed = time.monotonic() - started
            print(f"| {label} | {seed} | {sizes[key]} | {len(out['problems'])} | {elapsed:.1f} |", flush=True)
            failed += [f"{key} seed {seed}: {p}" for p in out["problems"]]
    for problem in failed[:100]:
        print(problem[:600])
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
