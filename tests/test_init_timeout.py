"""``Client(init_timeout=...)`` bounds the handshake, and only the handshake.

``initialize`` waits ``init_timeout`` seconds (the 2024-11-05 lifecycle's
"Initialize request timeout"); every later request waits ``timeout`` (or its
own per-call timeout). A timed-out ``initialize`` is not followed by
``notifications/cancelled``: a client MUST NOT cancel its ``initialize``.

Spec: basic/lifecycle#timeouts, basic/utilities/cancellation (``initialize``
is never cancelled).

The scripted peer is a ``RawPeer`` on one end of ``memory_pair()``. Where the
peer or a tool must "take time", it pauses on an Event that is never set
(simulated work, bounded), never to wait for something.
"""
import threading
import time

import pytest

from helpers import WAIT, RawPeer, run_in_thread
from mcp_ref import Client, Context, Server
from mcp_ref.errors import RequestTimeout
from mcp_ref.transports import memory_pair


def _drain(peer: RawPeer) -> list:
    """Every message the client sent until it closed its end."""
    seen = []
    while True:
        message = peer.recv()
        if message is None:
            return seen
        seen.append(message)


def test_a_server_that_never_answers_initialize_times_out_after_init_timeout():
    client_end, peer_end = memory_pair()
    peer = RawPeer(peer_end)
    client = Client(client_end, timeout=60.0, init_timeout=0.3, protocol_version="2025-11-25")   # no probe
    begin = time.monotonic()
    with pytest.raises(RequestTimeout) as info:
        with client:
            pytest.fail("the handshake succeeded without an answer")
    elapsed = time.monotonic() - begin
    assert info.value.method == "initialize"
    assert info.value.timeout == 0.3
    assert 0.25 <= elapsed < 0.3 + WAIT / 2, f"the handshake gave up after {elapsed:.2f} s"
    assert client.closed
    sent = _drain(peer)
    assert [m.get("method") for m in sent] == ["initialize"], sent     # no notifications/cancelled
    peer.close()


def test_initialize_waits_init_timeout_not_the_shorter_default():
    """A slow ``initialize`` answer succeeds under ``init_timeout`` although it takes longer than
    ``timeout``; a later request that is never answered then times out after ``timeout``."""
    client_end, peer_end = memory_pair()
    peer = RawPeer(peer_end)
    never = threading.Event()

    def slow_server():
        request = peer.recv()
        assert request["method"] == "initialize"
        never.wait(0.4)                              # a slow server: longer than timeout=0.1
        peer.send({"jsonrpc": "2.0", "id": request["id"], "result": {
            "protocolVersion": request["params"]["protocolVersion"], "capabilities": {},
            "serverInfo": {"name": "slow", "version": "1.0"}}})
        assert peer.recv()["method"] == "notifications/initialized"
        ping = peer.recv()                           # read and never answered
        return ping

    thread, outcome = run_in_thread(slow_server, name="slow-server")
    client = Client(client_end, timeout=0.1, init_timeout=WAIT, protocol_version="2025-11-25")   # no probe
    try:
        begin = time.monotonic()
        client.connect()
        assert time.monotonic() - begin >= 0.35     # it did wait beyond `timeout`
        assert client.server_info.name == "slow"
        begin = time.monotonic()
        with pytest.raises(RequestTimeout) as info:
            client.ping()
        elapsed = time.monotonic() - begin
        assert info.value.method == "ping" and info.value.timeout == 0.1
        assert elapsed < WAIT / 2, f"ping gave up after {elapsed:.2f} s, not after timeout=0.1"
        kind, ping = outcome.get(timeout=WAIT)
        assert kind == "ok", ping
        assert ping["method"] == "ping"
    finally:
        client.close()
        thread.join(WAIT)
    cancel = peer.recv()
    assert cancel["method"] == "notifications/cancelled" and cancel["params"]["requestId"] == ping["id"]
    peer.close()


def test_requests_after_the_handshake_use_the_normal_timeout():
    """A tool that takes longer than ``init_timeout`` (but less than ``timeout``) succeeds."""
    server = Server("init-timeout", version="1.0")

    @server.tool
    def work(seconds: float, ctx: Context) -> str:
        """Simulated work of ``seconds``; stops early when cancelled."""
        if ctx.cancelled.wait(seconds):
            return "cancelled"
        return f"worked {seconds} s"

    client_end, server_end = memory_pair()
    session = server.serve(server_end)
    try:
        with Client(client_end, timeout=WAIT, init_timeout=0.2) as client:
            begin = time.monotonic()
            result = client.call_tool("work", {"seconds": 0.6})
            elapsed = time.monotonic() - begin
            assert result.content[0].text == "worked 0.6 s"
            assert elapsed >= 0.55, elapsed             # three times init_timeout, and no RequestTimeout
            # A per-call timeout still wins over both.
            with pytest.raises(RequestTimeout) as info:
                client.call_tool("work", {"seconds": WAIT}, timeout=0.3)
            assert info.value.timeout == 0.3
    finally:
        session.close()
