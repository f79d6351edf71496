"""A lone JSON request whose handler is known fast runs on its HTTP connection's own thread
(``workers`` rule 4, ``http_core`` rule 9): no hand-off to a pool thread and back. What
must hold: the first call of a method or tool runs on the pool (nothing is known of it
yet), a handler that ran long goes back to the pool, and a handler run on the connection
that then asks the client something (a nested request, written on the POST's SSE stream)
still gets its answer, because the connection's writing is handed to a pool thread.
Spec: basic/transports#sending-messages-to-the-server."""
import threading
import time

import pytest

from mcp_ref import Client, Context, Server
from mcp_ref.transports.http.server.app import start_http
from mcp_ref.session.workers import FAST_UNDER, Lane, WorkerPool

from helpers import WAIT


def _server(seen: list, slow: dict) -> Server:
    server = Server("inline")

    @server.tool
    def where() -> str:
        """Name the thread that ran this call."""
        seen.append(threading.current_thread().name)
        if slow.get("sleep"):
            time.sleep(slow["sleep"])
        return "ok"

    @server.tool
    def roots(ask: bool, ctx: Context) -> int:
        """Ask the client for its roots (a request to the client) when told to."""
        seen.append(threading.current_thread().name)
        return len(ctx.list_roots(timeout=WAIT)) if ask else -1

    return server


def test_a_known_fast_call_runs_on_the_connection_thread_and_a_slow_one_goes_back_to_the_pool(monkeypatch):
    from mcp_ref.session import workers
    monkeypatch.setattr(workers, "FAST_UNDER", 0.25)        # a loaded machine's first call still counts as fast
    seen, slow = [], {}
    handle = start_http(_server(seen, slow), ("127.0.0.1", 0))
    try:
        with Client.http(f"http://127.0.0.1:{handle.port}/mcp", timeout=WAIT) as client:
            for _ in range(3):
                assert client.call_tool("where", {}).content[0].text == "ok"
            slow["sleep"] = workers.FAST_UNDER * 2
            client.call_tool("where", {})                   # known fast: here, but slow this time
            slow["sleep"] = 0
            client.call_tool("where", {})                   # learned slow: the pool again
            client.call_tool("where", {})                   # fast there: known fast again
            client.call_tool("where", {})
    finally:
        handle.shutdown()
    places = ["conn" if name.startswith("mcp-http-conn") else "pool" if name.startswith("mcp-http-worker")
              else name for name in seen]
    assert places == ["pool", "conn", "conn", "conn", "pool", "conn", "conn"]


@pytest.mark.parametrize("version", ["2025-11-25", "auto"])
def test_a_call_run_on_the_connection_thread_may_ask_the_client_and_gets_its_answer(version):
    """2025-11-25: the request to the client goes on the POST's SSE stream, which only a
    thread other than the one waiting in the handler can write (without the hand-off
    it times out). 2026-07-28 (``auto``): the call is asked again with the answer."""
    seen = []
    handle = start_http(_server(seen, {}), ("127.0.0.1", 0))
    try:
        with Client.http(f"http://127.0.0.1:{handle.port}/mcp", timeout=WAIT,
                         roots=["file:///a", "file:///b"], protocol_version=version) as client:
            assert client.call_tool("roots", {"ask": False}).content[0].text == "-1"     # learned fast
            assert client.call_tool("roots", {"ask": False}).content[0].text == "-1"
            assert client.call_tool("roots", {"ask": True}).content[0].text == "2"       # here, then handed off
            assert client.call_tool("roots", {"ask": False}).content[0].text == "-1"     # the connection lives
    finally:
        handle.shutdown()
    assert seen[1].startswith("mcp-http-conn") and seen[2].startswith("mcp-http-conn"), seen


def test_a_lane_runs_a_job_here_only_when_its_key_is_known_fast_and_it_has_room():
    pool = WorkerPool(4, name="mcp-test-here", idle_exit=0.1)
    lane = Lane(pool, 1)
    ran, me = [], threading.current_thread()

    def job(key):
        def run():
            ran.append(threading.current_thread() is me)
        run.key = key
        return run
    try:
        lane.submit(job("k"), here=lambda: None)            # unknown: on the pool
        assert _until(lambda: len(ran) == 1) and ran == [False]
        assert "k" in pool.fast                             # and learned fast
        lane.submit(job("k"), here=lambda: None)
        assert ran == [False, True]                         # known fast: here
        lane.submit(job("k"))                               # no ``here``: the pool
        assert _until(lambda: len(ran) == 3) and ran[2] is False
        pool.learn("k", FAST_UNDER)
        assert "k" not in pool.fast
        gate = threading.Event()
        pool.learn("k", 0.0)
        blocker = lambda: gate.wait(WAIT)                   # noqa: E731
        blocker.key = "b"
        lane.submit(blocker)                                # the lane's one place is taken
        lane.submit(job("k"), here=lambda: None)            # so this one waits its turn on the pool
        assert len(ran) == 3
        gate.set()
        assert _until(lambda: len(ran) == 4) and ran[3] is False
    finally:
        pool.close()


def test_a_job_run_here_that_is_about_to_block_calls_its_hand_off_once():
    pool = WorkerPool(2, name="mcp-test-here", idle_exit=0.1)
    lane = Lane(pool, 4)
    pool.learn("k", 0.0)
    handed = []

    def run():
        lane.before_blocking()
        lane.before_blocking()
    run.key = "k"
    try:
        lane.submit(run, here=lambda: handed.append(threading.current_thread().name))
        lane.before_blocking()                              # nothing runs here any more
        assert handed == [threading.current_thread().name]
        assert not lane.busy
    finally:
        pool.close()


def _until(predicate) -> bool:
    deadline = time.monotonic() + WAIT
    while not predicate():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.005)
    return True
