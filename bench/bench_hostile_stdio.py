"""How long the stdio client takes to tell its caller what a hostile server did.

    python bench/bench_hostile_stdio.py

Drives ``tests/hostile_server.py`` with ``Client.stdio`` and prints, for each
behaviour, the seconds from sending the call to the caller's typed error (or
answer), and how long ``close()`` took. The tests (tests/test_hostile_stdio.py)
prove the behaviour; this script only reports times, which depend on the machine.
Each request's timeout is 30 s: a figure near it means the client waited it out.
"""
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from mcp_ref import Client  # noqa: E402

HOSTILE = str(ROOT / "tests" / "hostile_server.py")
CASES = [
    # (behaviour, client options, tool arguments, what the caller should get)
    ("deep-reply", {}, {}, "ParseError"),
    ("bad-utf8-reply", {}, {}, "ParseError"),
    ("big-reply", {"max_message_size": 4096}, {"size": 10_000}, "MessageTooLarge"),
    ("null-id-error", {}, {}, "ParseError"),
    ("batch-reply", {}, {}, "result"),
    ("close-stdout", {}, {}, "ConnectionClosed"),
    ("close-stdout", {}, {"linger": 30}, "ConnectionClosed (server lingers after stdin ends)"),
    ("exit-mid-call", {}, {}, "ConnectionClosed"),
    ("huge-line", {}, {}, "result after a 64 MB line"),
    ("flood", {}, {}, "result after 200,000 notifications"),
]


def run(behaviour: str, options: dict, arguments: dict) -> tuple:
    client = Client.stdio([sys.executable, HOSTILE, behaviour], timeout=30, on_stderr=lambda line: None,
                          **options)
    client.connect()
    start = time.perf_counter()
    try:
        client.call_tool("poke", arguments)
        outcome = "result"
    except Exception as exc:                     # the typed error is the figure's label
        outcome = type(exc).__name__
    answered = time.perf_counter() - start
    start = time.perf_counter()
    client.close()
    return outcome, answered, time.perf_counter() - start


def pages() -> tuple:
    client = Client.stdio([sys.executable, HOSTILE, "endless-cursor"], timeout=30, max_pages=1000)
    with client:
        start = time.perf_counter()
        try:
            client.list_tools()
            outcome = "list"
        except Exception as exc:
            outcome = type(exc).__name__
        return outcome, time.perf_counter() - start


def main() -> int:
    if os.name != "posix":
        print("POSIX only (the hostile server closes file descriptor 1)")
        return 2
    print(f"{'behaviour':<16} {'expected':<52} {'got':<18} {'answer s':>9} {'close s':>8}")
    for behaviour, options, arguments, expected in CASES:
        outcome, answered, closed = run(behaviour, options, arguments)
        print(f"{behaviour:<16} {expected:<52} {outcome:<18} {answered:>9.3f} {closed:>8.3f}")
    outcome, elapsed = pages()
    print(f"{'endless-cursor':<16} {'TooManyPages after 1000 pages':<52} {outcome:<18} {elapsed:>9.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
