"""Every HTTP request's handler runs on its session's lane of the shared worker pool
(session/workers.py rules 1 and 2), never on the connection's own thread, which waits
for the answer and writes it. A handler that asks the client something (a request to
the client, written on the POST's SSE stream by the connection's thread) gets its
answer, and the connection serves on. Spec: basic/transports#sending-messages-to-the-server."""
import threading

import pytest

from mcp_ref import Client, Context, Server
from mcp_ref.transports.http.server.app import start_http

from helpers import WAIT


def _server(seen: list) -> Server:
    server = Server("workers")

    @server.tool
    def roots(ask: bool, ctx: Context) -> int:
        """Ask the client for its roots (a request to the client) when told to."""
        seen.append(threading.current_thread().name)
        return len(ctx.list_roots(timeout=WAIT)) if ask else -1

    return server


@pytest.mark.parametrize("version", ["2025-11-25", "auto"])
def test_a_call_on_the_pool_may_ask_the_client_and_gets_its_answer(version):
    """2025-11-25: the request to the client goes on the POST's SSE stream. 2026-07-28
    (``auto``): the call is asked again with the answer."""
    seen = []
    handle = start_http(_server(seen), ("127.0.0.1", 0))
    try:
        with Client.http(f"http://127.0.0.1:{handle.port}/mcp", timeout=WAIT,
                         roots=["file:///a", "file:///b"], protocol_version=version) as client:
            assert client.call_tool("roots", {"ask": False}).content[0].text == "-1"
            assert client.call_tool("roots", {"ask": True}).content[0].text == "2"
            assert client.call_tool("roots", {"ask": False}).content[0].text == "-1"     # the connection lives
    finally:
        handle.shutdown()
    assert seen and all(name.startswith("mcp-http-worker") for name in seen), seen
