"""Soak and load over Streamable HTTP at CI sizes (``python bench/soak.py`` runs the
full ones: 1,000 sessions in sequence, 1,000 abandoned, 50 clients x 200 calls).

Sessions opened and closed in sequence, and sessions abandoned (never DELETEd) until
the server expires them, leave threads, file descriptors and traced Python memory
near where they started; concurrent sessions calling a tool with progress and
logging get every result, every progress notification and every log message, with
no error. Bounded by timeouts; nothing asserts how long something took.

Spec: basic/transports#session-management, basic/utilities/progress,
server/utilities/logging.
"""
import gc
import os
import sys
import time
import tracemalloc
import weakref
from pathlib import Path

import pytest

import http_soak

pytestmark = [pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc"),
              pytest.mark.skipif(sys.platform == "win32", reason="/proc")]
pytest.importorskip("requests")

SESSIONS = int(os.environ.get("MCP_SOAK_HTTP_SESSIONS", "60"))
CLIENTS = int(os.environ.get("MCP_SOAK_HTTP_CLIENTS", "10"))
CALLS = int(os.environ.get("MCP_SOAK_HTTP_CALLS", "20"))
WAIT = 30.0
# Bounds: what a leak of one thread, one descriptor or 6.4 kB per session would break (an idle
# session holds about 13 kB of traced memory).
EXTRA_THREADS, EXTRA_FDS, EXTRA_KIB = 2, 4, 384


@pytest.fixture
def traced():
    tracemalloc.start()
    try:
        yield
    finally:
        tracemalloc.stop()


def _check(before: dict, after: dict) -> None:
    assert after["threads"] <= before["threads"] + EXTRA_THREADS, (before, after)
    assert after["fds"] <= before["fds"] + EXTRA_FDS, (before, after)
    assert after["traced_kib"] - before["traced_kib"] <= EXTRA_KIB, (before, after)


@pytest.mark.req("TRN-46", "TRN-44")
def test_http_sessions_opened_and_closed_in_sequence_leave_nothing_behind(traced):
    handle = http_soak.serve()
    try:
        http_soak.in_sequence(handle.url, 5, WAIT)          # imports, caches and pools settle first
        before = http_soak.settle(handle, 0, {"threads": 10 ** 6}, WAIT)
        http_soak.in_sequence(handle.url, SESSIONS, WAIT)
        after = http_soak.settle(handle, 0, before, WAIT)
        assert handle.app.session_count == 0                # every session was DELETEd
        _check(before, after)
    finally:
        handle.shutdown()


@pytest.mark.req("TRN-44")
def test_abandoned_http_sessions_expire_and_leave_nothing_behind(traced):
    """Sessions that are never DELETEd hold no thread while idle, and once the server
    expires them (``idle_timeout``) their memory and descriptors are back."""
    handle = http_soak.serve(idle_timeout=1.0)
    try:
        http_soak.abandon(handle.port, 5, WAIT)
        before = http_soak.settle(handle, 0, {"threads": 10 ** 6}, WAIT)
        ids = http_soak.abandon(handle.port, SESSIONS, WAIT)
        assert len(set(ids)) == SESSIONS
        idle = http_soak.settle(handle, handle.app.session_count, before, 5.0)
        assert idle["threads"] <= before["threads"] + EXTRA_THREADS, (before, idle)   # idle: no thread each
        after = http_soak.settle(handle, 0, before, WAIT)
        assert handle.app.session_count == 0                # all expired
        _check(before, after)
    finally:
        handle.shutdown()


def test_an_expired_session_is_let_go_when_the_reaper_closes_it():
    """The reaper holds no expired session while it waits for its next round: once the
    sessions are gone from the table, they are unreachable well before that round."""
    handle = http_soak.serve(idle_timeout=2.0)           # a round every 0.5 s
    try:
        http_soak.abandon(handle.port, 3, WAIT)
        with handle.app._lock:
            refs = [weakref.ref(transport) for transport in handle.app._sessions.values()]
        assert len(refs) == 3
        deadline = time.monotonic() + WAIT
        while handle.app.session_count and time.monotonic() < deadline:
            time.sleep(0.01)
        assert handle.app.session_count == 0
        held = 3
        for _ in range(20):                              # 0.2 s, under half a round
            gc.collect()
            held = sum(ref() is not None for ref in refs)
            if not held:
                break
            time.sleep(0.01)
        assert held == 0, f"{held} expired sessions still reachable after the reaper closed them"
    finally:
        handle.shutdown()


@pytest.mark.req("PROG-2", "PROG-3", "TRN-24")
def test_concurrent_http_sessions_with_progress_and_logging_get_every_answer():
    handle = http_soak.serve()
    try:
        out = http_soak.load(handle.url, CLIENTS, CALLS, WAIT)
    finally:
        handle.shutdown()
    assert out["errors"] == [] and out["wrong"] == [] and out["stuck"] == 0, out
    assert len(out["latencies"]) == CLIENTS * CALLS
    assert out["progress"] == CLIENTS * CALLS * http_soak.STEPS
    assert out["logs"] == CLIENTS * CALLS
