"""Progress of a task reaching the client (revision 2025-11-25): ``call_tool_as_task(...,
on_progress=fn)`` listens to the request's ``progressToken`` for the task's whole
lifetime, not only until the ``CreateTaskResult`` answers the request, and stops when the
client learns the task is terminal (a status notification, ``get_task``, ``task_result``,
``cancel_task``) or closes. The server sends no progress for a task once it is terminal
(cancelled, completed, failed) or expired. Every message is validated against the
2025-11-25 schema; nothing sleeps to wait.

Spec: basic/utilities/tasks#task-progress-notifications, basic/utilities/progress.
Rules: client/tasks/legacy.py rule 5, session/__init__.py rule 4 (``Session.listen_progress``).
"""
import threading

import pytest

import mcp_ref.session.notices as notices_module
from features_helpers import Collector, check_wire, connected
from helpers import WAIT, RawPeer, Recorder
from mcp_ref import Client, Context, Server
from mcp_ref.errors import ConnectionClosed
from mcp_ref.server.tasks.legacy import RELATED_TASK_KEY
from mcp_ref.session import Session
from mcp_ref.transports import TapTransport, memory_pair

# tasks as in 2025-11-25:
# the clients here ask for 2025-11-25 (tests/test_modern_*.py for 2026-07-28).
pytestmark = pytest.mark.usefixtures("legacy_client_default")


class FakeClock:
    """Monotonic seconds a test moves by hand (the registry's ``clock``)."""

    def __init__(self):
        self.now = 5000.0

    def __call__(self):
        return self.now


def progress_server() -> tuple:
    """``work`` reports once, waits for ``gate``, reports twice more; ``slow`` reports once,
    waits for its cancellation and for ``after``, then tries to report again and sets
    ``after.reported``."""
    server = Server("task-progress")
    gate, after = threading.Event(), threading.Event()
    after.reported = threading.Event()

    @server.tool(task_support="required")
    def work(ctx: Context) -> str:
        """Three steps; the last two wait for the test."""
        ctx.report_progress(1, total=3, message="started")
        if not gate.wait(WAIT):
            return "the gate never opened"
        ctx.report_progress(2, total=3, message="half way")
        ctx.report_progress(3, total=3, message="done")
        return "worked"

    @server.tool(task_support="optional")
    def slow(ctx: Context) -> str:
        """Reports, then keeps reporting after it was cancelled."""
        ctx.report_progress(1)
        if ctx.cancelled.wait(WAIT) and after.wait(WAIT):
            ctx.report_progress(2)
            after.reported.set()
        return "stopped"

    @server.tool(task_support="optional")
    def quick(ctx: Context) -> str:
        ctx.report_progress(1, total=1)
        return "quick"

    return server, gate, after


def progress_token(recorder: Recorder, tool: str):
    call = next(m for m in recorder.sent() if m.get("method") == "tools/call" and m["params"]["name"] == tool)
    return call["params"]["_meta"]["progressToken"]


def flush(server_session, logs: Collector) -> None:
    """Everything the client read before now has been handled on its notify thread: a log
    message sent after it comes back through the same thread, in wire order."""
    count = len(logs.items) + 1
    server_session.notify("notifications/message", {"level": "info", "data": f"flush {count}"})
    logs.wait_for(count)


# ---------------------------------------------------------------------- a task to its end
@pytest.mark.req("PROG-6", "PROG-7")
def test_task_progress_reaches_on_progress_in_order_until_the_result_then_late_progress_is_ignored(
        wire_validator):
    server, gate, _ = progress_server()
    progress, logs = Collector(), Collector()
    with connected(server, "2025-11-25", wire_validator, on_log=logs) as (client, session, recorder):
        task = client.call_tool_as_task("work", on_progress=progress)
        token = progress_token(recorder, "work")
        assert client.session._listening == {token: progress}     # kept after the CreateTaskResult
        gate.set()                       # steps 2 and 3 come after the answer, whatever the timing
        assert client.task_result(task.task_id).content[0].text == "worked"
        assert client.session._listening == {}                    # task_result: terminal
        assert progress.wait_for(3) == [(1, 3, "started"), (2, 3, "half way"), (3, 3, "done")]
        # On the wire: one token, the request's, on every progress of the task.
        sent = [m["params"] for m in recorder.received() if m.get("method") == "notifications/progress"]
        assert [(p["progressToken"], p["progress"], p["_meta"]) for p in sent] == \
            [(token, n, {RELATED_TASK_KEY: {"taskId": task.task_id}}) for n in (1, 2, 3)]
        session.notify("notifications/progress", {"progressToken": token, "progress": 4})   # late
        flush(session, logs)
        assert len(progress.items) == 3


def test_the_terminal_status_notification_alone_drops_the_listener(wire_validator):
    server, *_ = progress_server()
    progress, statuses = Collector(), Collector()
    with connected(server, "2025-11-25", wire_validator, on_task_status=statuses) as (client, _, _):
        task = client.call_tool_as_task("quick", on_progress=progress)
        final = statuses.wait_for(1)[0]  # on_task_status runs after the listener was dropped
        assert (final.task_id, final.status) == (task.task_id, "completed")
        assert client.session._listening == {}
        assert progress.items == [(1, 1, None)]      # read before the status: already delivered


def wire_progress(recorder: Recorder) -> list:
    return [m["params"]["progress"] for m in recorder.received() if m.get("method") == "notifications/progress"]


def test_cancelling_the_task_drops_the_listener_and_the_server_sends_no_more_progress(wire_validator):
    """Spec: basic/utilities/progress: progress for a task MUST stop after it reaches a
    terminal status. The tool reports after its cancellation: nothing goes on the wire."""
    server, _, after = progress_server()
    progress, logs = Collector(), Collector()
    with connected(server, "2025-11-25", wire_validator, on_log=logs) as (client, session, recorder):
        task = client.call_tool_as_task("slow", on_progress=progress)
        assert progress.wait_for(1) == [(1, None, None)]
        assert client.cancel_task(task.task_id).status == "cancelled"
        assert client.session._listening == {}
        after.set()                      # the cancelled tool reports once more
        assert after.reported.wait(WAIT)
        flush(session, logs)             # anything the tool wrote is read by now
        assert wire_progress(recorder) == [1]
        assert progress.items == [(1, None, None)]


def test_a_task_whose_ttl_elapsed_sends_no_more_progress_and_is_cancelled(wire_validator):
    """Expiry is noticed when the task's code reports progress: the task ends (cancelled,
    told to the client), its code is cancelled, and the progress is not sent."""
    server = Server("task-progress-ttl")
    clock = server.tasks.clock = FakeClock()
    step, reported = threading.Event(), threading.Event()

    @server.tool(task_support="required")
    def long(ctx: Context) -> str:
        ctx.report_progress(1)
        if step.wait(WAIT):
            ctx.report_progress(2)       # after the TTL: dropped, and the task expires
            reported.set()
        return "too late" if ctx.cancelled.is_set() else "not cancelled"

    progress, statuses, logs = Collector(), Collector(), Collector()
    with connected(server, "2025-11-25", wire_validator, on_log=logs, on_task_status=statuses) as (
            client, session, recorder):
        task = client.call_tool_as_task("long", ttl=1_000, on_progress=progress)
        assert progress.wait_for(1) == [(1, None, None)]
        clock.now += 2.0                 # the TTL elapses; nobody has looked at the task since
        step.set()
        assert reported.wait(WAIT)
        final = statuses.wait_for(1)[0]
        assert (final.task_id, final.status) == (task.task_id, "cancelled") and "expired" in final.status_message
        flush(session, logs)
        assert wire_progress(recorder) == [1]
        assert progress.items == [(1, None, None)]
        assert client.session._listening == {}


def test_without_on_progress_no_token_is_sent_and_nothing_is_registered(wire_validator):
    server, *_ = progress_server()
    with connected(server, "2025-11-25", wire_validator) as (client, _, recorder):
        task = client.call_tool_as_task("quick")
        assert client.task_result(task.task_id).content[0].text == "quick"
        call = next(m for m in recorder.sent() if m.get("method") == "tools/call")
        assert "_meta" not in call["params"]
        assert client.session._listening == {}
        assert "notifications/tasks/status" not in client._notification_handlers


def test_closing_the_client_drops_the_listeners(wire_validator):
    server, _, after = progress_server()
    progress = Collector()
    after.set()                          # so the tool stops as soon as closing cancels it
    with connected(server, "2025-11-25", wire_validator) as (client, _, _):
        client.call_tool_as_task("slow", on_progress=progress)
        assert len(client.session._listening) == 1
    assert client.session._listening == {}
    with pytest.raises(ConnectionClosed):
        client.session.listen_progress(progress)


# ---------------------------------------------------------------------- a scripted server
CAPABILITIES = {"tasks": {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}}


def _task(task_id: str, status: str) -> dict:
    return {"taskId": task_id, "status": status, "createdAt": "2025-11-25T10:00:00Z",
            "lastUpdatedAt": "2025-11-25T10:00:01Z", "ttl": 60000, "pollInterval": 1000}


def test_progress_sent_before_the_create_task_result_is_not_lost_and_get_task_drops_the_listener(
        wire_validator):
    """A server may send progress for the token before it answers: the listener exists
    from the moment the request is sent, so nothing is lost and the order is the wire's."""
    client_end, peer_end = memory_pair()
    peer, recorder = RawPeer(peer_end), Recorder()
    done = threading.Event()

    def progress(token, value, task_id=None):
        params = {"progressToken": token, "progress": value, "total": 4, "message": f"step {value}"}
        if task_id is not None:
            params["_meta"] = {RELATED_TASK_KEY: {"taskId": task_id}}
        peer.notify("notifications/progress", params)

    def fake_server():
        init = peer.recv()
        peer.send({"jsonrpc": "2.0", "id": init["id"], "result": {
            "protocolVersion": "2025-11-25", "capabilities": CAPABILITIES,
            "serverInfo": {"name": "scripted", "version": "1"}}})
        assert peer.recv()["method"] == "notifications/initialized"
        call = peer.recv()
        token = call["params"]["_meta"]["progressToken"]
        progress(token, 1)                                   # before the answer
        peer.send({"jsonrpc": "2.0", "id": call["id"], "result": {"task": _task("t-1", "working")}})
        progress(token, 2, "t-1")
        progress(token, 3, "t-1")
        get = peer.recv()
        assert get["method"] == "tasks/get"
        peer.send({"jsonrpc": "2.0", "id": get["id"], "result": _task("t-1", "completed")})
        ping = peer.recv()                                   # the client has seen the answer
        peer.send({"jsonrpc": "2.0", "id": ping["id"], "result": {}})
        progress(token, 4, "t-1")                            # late: after the terminal answer
        peer.notify("notifications/message", {"level": "info", "data": "flush"})
        while peer.recv() is not None:                      # until the client hangs up
            pass
        done.set()

    thread = threading.Thread(target=fake_server, daemon=True)
    thread.start()
    got, logs = Collector(), Collector()
    client = Client(TapTransport(client_end, recorder), timeout=WAIT, on_log=logs)
    with client:
        task = client.call_tool_as_task("anything", on_progress=got)
        assert task.task_id == "t-1"
        got.wait_for(3)
        assert client.get_task("t-1").status == "completed"
        assert client.session._listening == {}
        client.ping()
        logs.wait_for(1)
        assert got.items == [(1, 4, "step 1"), (2, 4, "step 2"), (3, 4, "step 3")]
    assert done.wait(WAIT)
    thread.join(WAIT)
    check_wire(recorder.records, "2025-11-25", wire_validator)


def test_a_terminal_status_read_before_the_create_task_result_is_handled_still_drops_the_listener(
        wire_validator):
    """The status notification runs on the notify thread, maybe before the caller has the
    task id: it is remembered while the creation is in flight (client/tasks/legacy.py rule 5)."""
    client_end, peer_end = memory_pair()
    peer, recorder = RawPeer(peer_end), Recorder()

    def fake_server():
        init = peer.recv()
        peer.send({"jsonrpc": "2.0", "id": init["id"], "result": {
            "protocolVersion": "2025-11-25", "capabilities": CAPABILITIES,
            "serverInfo": {"name": "scripted", "version": "1"}}})
        peer.recv()
        call = peer.recv()
        peer.send({"jsonrpc": "2.0", "id": call["id"], "result": {"task": _task("t-2", "working")}})
        peer.notify("notifications/tasks/status", _task("t-2", "failed"))
        while peer.recv() is not None:
            pass

    thread = threading.Thread(target=fake_server, daemon=True)
    thread.start()
    statuses = Collector()
    with Client(TapTransport(client_end, recorder), timeout=WAIT, on_task_status=statuses) as client:
        client.call_tool_as_task("anything", on_progress=lambda *a: None)
        assert statuses.wait_for(1)[0].status == "failed"
        assert client.session._listening == {}
        assert client._creating == 0 and not client._ended and not client._task_progress
    thread.join(WAIT)
    check_wire(recorder.records, "2025-11-25", wire_validator)


# ---------------------------------------------------------------------- the session's table
def test_listen_progress_is_bounded_stopped_and_cleared_by_close(monkeypatch):
    monkeypatch.setattr(notices_module, "MAX_PROGRESS_LISTENERS", 2)
    ours, theirs = memory_pair()
    session = Session(ours, lambda ctx, method, params: {})
    try:
        first = session.listen_progress(print)
        second = session.listen_progress(print)
        third = session.listen_progress(print, token="mine")
        assert first != second and list(session._listening) == [second, "mine"] and third == "mine"
        session.stop_listening(second)
        session.stop_listening("unknown")                  # harmless
        assert list(session._listening) == ["mine"]
    finally:
        session.close()
    assert session._listening == {}
