"""Requirements of the tasks extension (2026-07-28) that tests/test_tasks_ext.py does
not pin on its own: task ids as bearer secrets, cancellation by ``tasks/cancel`` only,
no progress or log messages for a task. Rows XTASK26-* of
spec_notes/traceability-2026-07-28.md.
"""
import threading

import pytest

from mcp_ref import CancelToken, Context
from mcp_ref.errors import RequestCancelled
from test_tasks_ext import Recorder, connect, declared, poll, task_server
from helpers import raw_server
from test_modern_server import Exchange


@pytest.mark.req("XTASK26-50")
def test_task_ids_are_128_random_bits_and_never_repeat():
    with raw_server(task_server()) as (peer, _):
        exchange = Exchange(peer)
        ids = [exchange.call("tools/call", declared(name="double", arguments={"n": i}))["result"]["taskId"]
               for i in range(20)]
    assert len(set(ids)) == len(ids)
    # 22 URL-safe base64 characters: 128 bits from the OS's CSPRNG.
    assert all(len(i) == 22 and set(i) <= set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
               for i in ids)


@pytest.mark.req("XTASK26-34")
def test_a_cancelled_task_is_cancelled_by_tasks_cancel_never_by_notifications_cancelled():
    recorder = Recorder()
    server = task_server()
    with connect(server, recorder) as client:
        token = CancelToken()
        threading.Timer(0.2, token.cancel).start()
        with pytest.raises(RequestCancelled):
            client.call_tool("wait_for_cancel", {}, cancel=token)
    sent = [m.get("method") for d, m in recorder if d == "send"]
    assert "tasks/cancel" in sent
    assert "notifications/cancelled" not in sent


@pytest.mark.req("XTASK26-37")
def test_a_task_sends_no_progress_and_no_log_messages():
    server = task_server()

    @server.tool(task_support="required")
    def chatty(ctx: Context) -> str:
        ctx.report_progress(1, 2)
        sent = ctx.log("info", "working")
        return f"done:{sent}"

    with raw_server(server) as (peer, _):
        exchange = Exchange(peer)
        params = declared(name="chatty", arguments={})
        params["_meta"]["progressToken"] = "p1"
        params["_meta"]["io.modelcontextprotocol/logLevel"] = "debug"
        task_id = exchange.call("tools/call", params)["result"]["taskId"]
        done = poll(exchange, task_id, lambda r: r["status"] == "completed")
        assert done["result"]["content"][0]["text"] == "done:False"          # log says nothing was sent
        assert not [m for m in exchange.seen if m.get("method") in ("notifications/progress", "notifications/message")]
