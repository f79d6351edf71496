"""Tasks (revision 2025-11-25) through the real ``Server`` and ``Client``: the
capability per revision, ``execution.taskSupport`` in ``tools/list``, a tool call run
as a task (``CreateTaskResult``, ``notifications/tasks/status``, ``tasks/result``),
failures, cancellation, errors, ``tasks/list`` pagination, TTL expiry, isolation
between sessions, older revisions, closing, ``input_required`` with an elicitation,
and one session over stdio. Every message is validated against its revision's
schema (``features_helpers.connected``); nothing sleeps to wait.

The registry alone, message by message, is in ``tests/test_tasks_store.py``.
Spec: basic/utilities/tasks, server/tools#tool (``execution``).
"""
import sys
import threading
from pathlib import Path

import pytest

from conftest import REVISIONS
from features_helpers import Collector, connected, env
from helpers import WAIT, initialize_raw, is_method, raw_server
from mcp_ref import Client, Context, Server
from mcp_ref.client.approval import ToolCall
from mcp_ref.errors import (ApprovalDenied, CapabilityNotSupported, InvalidParamsError, MethodNotFoundError)
from mcp_ref.server.tasks.legacy import RELATED_TASK_KEY, TASK_THREAD_NAME
from mcp_ref.types import Task

# tasks as in 2025-11-25:
# the clients here ask for 2025-11-25 (tests/test_modern_*.py for 2026-07-28).
pytestmark = pytest.mark.usefixtures("legacy_client_default")

ROOT = Path(__file__).resolve().parent.parent
TASKS_SERVER = [sys.executable, str(ROOT / "tests" / "interop" / "tasks_server.py")]
CAPABILITY = {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}
OLDER = [r for r in REVISIONS if r != "2025-11-25"]


def task_server(**options) -> tuple:
    """A server with tools of each task support; ``gate`` releases ``slow``, ``seen`` holds its ctx."""
    server = Server("tasks", **options)
    gate, started, seen = threading.Event(), threading.Event(), {}

    @server.tool(task_support="optional")
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @server.tool(task_support="required")
    def slow(ctx: Context) -> str:
        """Wait for the test's gate, or for cancellation."""
        seen["ctx"] = ctx
        started.set()
        while not gate.wait(0.01):
            if ctx.cancelled.is_set():
                return "stopped"
        return "released"

    @server.tool(task_support="optional")
    def fail(message: str) -> str:
        """Always raises."""
        raise ValueError(message)

    @server.tool(task_support="forbidden")
    def never() -> str:
        return "never"

    @server.tool
    def plain() -> str:
        return "plain"

    return server, gate, started, seen


class FakeClock:
    def __init__(self):
        self.now = 5000.0

    def __call__(self):
        return self.now


# ---------------------------------------------------------------------- capabilities and listing
@pytest.mark.req("TASK-1", "SCHEMA-6")
@pytest.mark.parametrize("revision", REVISIONS)
def test_the_tasks_capability_is_declared_only_to_2025_11_25_sessions(revision, wire_validator):
    server, *_ = task_server()
    with connected(server, revision, wire_validator) as (client, session, recorder):
        caps = client.server_capabilities
        if revision == "2025-11-25":
            assert caps["tasks"] == CAPABILITY
        else:
            assert "tasks" not in caps and "tasks" not in session.declared_capabilities


@pytest.mark.req("TASK-1")
def test_no_task_tool_no_tasks_capability(wire_validator):
    server = Server("plain")
    server.add_tool(lambda: "x", name="x")
    with connected(server, "2025-11-25", wire_validator) as (client, _, _):
        assert "tasks" not in client.server_capabilities
        with pytest.raises(CapabilityNotSupported, match="tasks.requests.tools.call"):
            client.call_tool_as_task("x")
        assert len(server.tasks._sessions) == 0             # no task was made


@pytest.mark.parametrize("revision", ["2025-11-25", "2025-06-18"])
def test_tools_list_shows_execution_task_support(revision, wire_validator):
    server, *_ = task_server()
    with connected(server, revision, wire_validator) as (client, _, recorder):
        tools = {t.name: t for t in client.list_tools()}
        listed = [m for m in recorder.received() if "tools" in m.get("result", {})][-1]["result"]["tools"]
        wire = {t["name"]: t.get("execution") for t in listed}
        if revision == "2025-11-25":
            assert wire == {"add": {"taskSupport": "optional"}, "slow": {"taskSupport": "required"},
                            "fail": {"taskSupport": "optional"}, "never": {"taskSupport": "forbidden"},
                            "plain": None}
            assert tools["slow"].execution.task_support == "required"
        else:
            assert set(wire.values()) == {None}      # 2025-06-18 has no execution


def test_task_support_is_checked_at_registration():
    server = Server("t")
    with pytest.raises(ValueError, match="task_support"):
        server.add_tool(lambda: "x", name="x", task_support="sometimes")
    assert server.add_tool(lambda: "y", name="y", task_support="optional").execution.task_support == "optional"
    assert server.add_tool(lambda: "z", name="z").execution is None


# ---------------------------------------------------------------------- a task from start to end
@pytest.mark.req("TASK-16", "TASK-17", "TASK-19", "TASK-32", "TASK-33", "TASK-36", "TASK-37", "TASK-43", "TASK-52",
                 "TASK-54", "TASK-59", "TASK-28", "TASK-34")
def test_a_task_answers_at_once_then_reports_its_status_then_its_result_equals_a_direct_call(wire_validator):
    server, gate, started, seen = task_server()
    statuses = Collector()
    with connected(server, "2025-11-25", wire_validator, on_task_status=statuses) as (client, _, recorder):
        direct = client.call_tool("add", {"a": 2, "b": 3})
        task = client.call_tool_as_task("add", {"a": 2, "b": 3}, ttl=60_000)
        assert isinstance(task, Task) and task.status == "working" and task.ttl == 60_000
        assert task.poll_interval == 1000 and task.created_at.endswith("Z")
        assert statuses.wait_for(1)[0].status == "completed"
        result = client.task_result(task.task_id)
        assert result.content == direct.content and result.is_error == direct.is_error
        assert result.structured_content == direct.structured_content
        assert result.meta == {RELATED_TASK_KEY: {"taskId": task.task_id}}
        assert client.get_task(task.task_id).status == "completed"
        # On the wire: the CreateTaskResult came before the status notification.
        records = recorder.records
        created = next(i for i, (d, m) in enumerate(records) if d == "receive" and "task" in m.get("result", {}))
        status = next(i for i, (d, m) in enumerate(records) if m.get("method") == "notifications/tasks/status")
        assert created < status
        assert "_meta" not in records[status][1]["params"]


@pytest.mark.req("TASK-13", "TASK-35", "TASK-42")
def test_tasks_result_blocks_until_the_task_is_done(wire_validator):
    server, gate, started, seen = task_server()
    with connected(server, "2025-11-25", wire_validator) as (client, _, _):
        task = client.call_tool_as_task("slow")
        assert started.wait(WAIT)
        done = threading.Event()
        out = {}

        def wait_result():
            out["result"] = client.task_result(task.task_id, timeout=WAIT)
            done.set()
        waiter = threading.Thread(target=wait_result, daemon=True)
        waiter.start()
        assert client.get_task(task.task_id).status == "working"    # polling still works meanwhile
        assert not done.is_set()
        gate.set()
        assert done.wait(WAIT)
        waiter.join(WAIT)
        assert out["result"].content[0].text == "released"


def test_ctx_task_id_names_the_task_and_is_none_for_a_plain_call(wire_validator):
    server = Server("ids")
    ids = []

    @server.tool(task_support="optional")
    def who(ctx: Context) -> str:
        ids.append(ctx.task_id)
        return "ok"
    with connected(server, "2025-11-25", wire_validator) as (client, _, _):
        client.call_tool("who")
        task = client.call_tool_as_task("who")
        client.task_result(task.task_id)
    assert ids == [None, task.task_id]


@pytest.mark.req("PROG-6", "PROG-7", "TASK-37", "TASK-52")
def test_progress_and_logs_of_a_task_carry_the_related_task_meta(wire_validator):
    server = Server("progress")

    @server.tool(task_support="required")
    def report(ctx: Context) -> str:
        ctx.report_progress(1, total=2)
        ctx.log("info", "half way")
        ctx.report_progress(2, total=2)
        return "done"
    with raw_server(server) as (peer, session):
        initialize_raw(peer, "2025-11-25")
        assert session.ready.wait(WAIT)
        reply = peer.request(1, "tools/call", {"name": "report", "arguments": {}, "task": {},
                                               "_meta": {"progressToken": "tok"}})
        task_id = reply["result"]["task"]["taskId"]
        related = {RELATED_TASK_KEY: {"taskId": task_id}}
        seen = []
        while len([m for m in seen if m.get("method") == "notifications/tasks/status"]) < 1:
            seen.append(peer.recv())
        for message in seen:
            wire_validator.check(message, "2025-11-25")
        progress = [m["params"] for m in seen if m.get("method") == "notifications/progress"]
        assert [(p["progressToken"], p["progress"], p["_meta"]) for p in progress] == \
            [("tok", 1, related), ("tok", 2, related)]
        logs = [m["params"] for m in seen if m.get("method") == "notifications/message"]
        assert logs == [{"level": "info", "data": "half way", "_meta": related}]


# ---------------------------------------------------------------------- failures
@pytest.mark.req("TASK-34", "TASK-57")
def test_a_failing_tool_fails_its_task_and_tasks_result_is_its_error_result(wire_validator):
    server, *_ = task_server()
    statuses = Collector()
    with connected(server, "2025-11-25", wire_validator, on_task_status=statuses) as (client, _, _):
        direct = client.call_tool("fail", {"message": "API rate limit exceeded"})
        task = client.call_tool_as_task("fail", {"message": "API rate limit exceeded"})
        final = statuses.wait_for(1)[0]
        assert final.status == "failed" and final.status_message == "Tool execution failed: API rate limit exceeded"
        result = client.task_result(task.task_id)
        assert result.is_error and result.content == direct.content
        assert client.get_task(task.task_id).status == "failed"


def test_invalid_arguments_fail_the_task_like_the_direct_call(wire_validator):
    server, *_ = task_server()
    with connected(server, "2025-11-25", wire_validator) as (client, _, _):
        direct = client.call_tool("add", {"a": "x"})
        task = client.call_tool_as_task("add", {"a": "x"})
        result = client.task_result(task.task_id)
        assert result.is_error and result.content == direct.content
        assert client.get_task(task.task_id).status == "failed"


# ---------------------------------------------------------------------- cancellation
@pytest.mark.req("CANC-3", "TASK-20", "TASK-49", "SCHEMA-15")
def test_cancel_sets_the_tools_cancelled_and_the_task_ends_cancelled(wire_validator):
    server, gate, started, seen = task_server()
    statuses = Collector()
    with connected(server, "2025-11-25", wire_validator, on_task_status=statuses) as (client, _, _):
        task = client.call_tool_as_task("slow")
        assert started.wait(WAIT)
        cancelled = client.cancel_task(task.task_id)
        assert cancelled.status == "cancelled" and cancelled.status_message == "The task was cancelled by request."
        assert seen["ctx"].cancelled.wait(WAIT)
        assert statuses.wait_for(1)[0].status == "cancelled"
        assert client.get_task(task.task_id).status == "cancelled"      # it stays cancelled
        with pytest.raises(InvalidParamsError, match="already in terminal status 'cancelled'"):
            client.cancel_task(task.task_id)
        with pytest.raises(InvalidParamsError, match="was cancelled: it has no result"):
            client.task_result(task.task_id)


@pytest.mark.req("TASK-48", "TASK-55")
def test_cancel_of_a_completed_task_is_invalid_params(wire_validator):
    server, *_ = task_server()
    with connected(server, "2025-11-25", wire_validator) as (client, _, _):
        task = client.call_tool_as_task("add", {"a": 1, "b": 1})
        client.task_result(task.task_id)
        with pytest.raises(InvalidParamsError) as info:
            client.cancel_task(task.task_id)
        assert info.value.code == -32602
        assert info.value.message == "Cannot cancel task: already in terminal status 'completed'"


# ---------------------------------------------------------------------- protocol errors
@pytest.mark.req("TASK-39", "TASK-55", "TASK-56")
@pytest.mark.parametrize("method", ["get_task", "task_result", "cancel_task"])
def test_an_unknown_task_id_is_invalid_params(method, wire_validator):
    server, *_ = task_server()
    with connected(server, "2025-11-25", wire_validator) as (client, _, _):
        with pytest.raises(InvalidParamsError) as info:
            getattr(client, method)("786512e2-9e0d-44bd-8f29-789f320fe840")
        verb = "cancel" if method == "cancel_task" else "retrieve"
        assert info.value.message == f"Failed to {verb} task: Task not found"


def sent_methods(recorder) -> list:
    return [(m["method"], (m.get("params") or {}).get("name")) for m in recorder.sent()
            if m.get("method") in ("tools/list", "tools/call")]


@pytest.mark.req("TASK-5", "TASK-6", "TASK-8")
def test_tool_level_negotiation_is_refused_locally_and_the_tools_are_listed_once_to_know(wire_validator):
    """Spec: basic/utilities/tasks#tool-level-negotiation: clients MUST NOT call a
    "forbidden" (or unmarked) tool as a task, and MUST call a "required" one as a task.
    Both are refused before anything is sent; with nothing cached the tools are listed
    once first (client/tasks/legacy.py rule 1). The server's own -32601 answers are in
    tests/test_tasks_store.py::test_tool_level_negotiation."""
    server, gate, *_ = task_server()
    gate.set()
    with connected(server, "2025-11-25", wire_validator) as (client, _, recorder):
        with pytest.raises(CapabilityNotSupported, match="'never' does not support task-augmented execution "
                                                         r"\(execution.taskSupport is 'forbidden'\)"):
            client.call_tool_as_task("never")
        assert sent_methods(recorder) == [("tools/list", None)]          # listed to know; no call
        with pytest.raises(CapabilityNotSupported, match="'plain' does not support .* is 'absent'"):
            client.call_tool_as_task("plain")
        with pytest.raises(CapabilityNotSupported, match="'slow' must be called as a task .*call_tool_as_task"):
            client.call_tool("slow")
        assert sent_methods(recorder) == [("tools/list", None)]          # the cache answered
        assert client.call_tool("plain").content[0].text == "plain"
        assert client.call_tool("add", {"a": 1, "b": 2}).content[0].text == "3"       # optional: both ways
        assert client.task_result(client.call_tool_as_task("slow").task_id).content[0].text == "released"
        # A name the listing does not have is sent: the server answers for it.
        with pytest.raises(InvalidParamsError, match="Unknown tool: ghost"):
            client.call_tool("ghost")
        assert [m for m in sent_methods(recorder) if m[0] == "tools/list"] == [("tools/list", None)]


def test_the_listing_is_fetched_again_after_list_changed_and_the_approval_hook_is_checked(wire_validator):
    server, gate, *_ = task_server()
    gate.set()
    changed = Collector()
    def hook(approval):                         # turns a call of "plain" into one of "slow"
        call = approval.value
        return ToolCall("slow", call.arguments) if call.name == "plain" else True

    with connected(server, "2025-11-25", wire_validator, on_approve=hook,
                   on_tools_list_changed=changed) as (client, _, recorder):
        with pytest.raises(CapabilityNotSupported, match="'slow' must be called as a task"):
            client.call_tool("plain")
        assert sent_methods(recorder) == [("tools/list", None)]
        server.remove_tool("never")              # tools/list_changed empties the cache
        changed.wait_for(1)
        assert client.call_tool("add", {"a": 2, "b": 2}).content[0].text == "4"
        assert sent_methods(recorder)[1:] == [("tools/list", None), ("tools/call", "add")]


def test_without_the_tasks_capability_tools_are_ordinary_and_nothing_is_listed(wire_validator):
    for revision in ("2025-06-18", "2025-11-25"):
        options = {"capabilities": {"tools": {"listChanged": True}}} if revision == "2025-11-25" else {}
        server, gate, *_ = task_server(**options)
        gate.set()
        with connected(server, revision, wire_validator) as (client, _, recorder):
            assert client.call_tool("slow").content[0].text == "released"
            assert sent_methods(recorder) == [("tools/call", "slow")]


@pytest.mark.req("TASK-15")
def test_a_server_without_the_capability_ignores_the_task_param(wire_validator):
    server, *_ = task_server(capabilities={"tools": {"listChanged": True}})
    with raw_server(server) as (peer, session):
        initialize_raw(peer, "2025-11-25")
        reply = peer.request(1, "tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}, "task": {}})
        assert reply["result"] == {"content": [{"type": "text", "text": "3"}]}
        wire_validator.check(reply, "2025-11-25", "tools/call")
        assert peer.request(2, "tasks/list", {})["error"]["code"] == -32601


# ---------------------------------------------------------------------- listing
@pytest.mark.req("TASK-44", "TASK-45", "TASK-46", "TASK-47")
def test_tasks_list_paginates_and_the_client_follows_every_page(wire_validator):
    server, *_ = task_server(page_size=2)
    with connected(server, "2025-11-25", wire_validator) as (client, _, _):
        ids = [client.call_tool_as_task("add", {"a": i, "b": 0}).task_id for i in range(5)]
        page, cursor = client.list_tasks_page()
        assert len(page) == 2 and cursor is not None
        assert [t.task_id for t in client.list_tasks()] == ids
        with pytest.raises(InvalidParamsError, match="Invalid cursor"):
            client.list_tasks_page("bm90LWEtY3Vyc29y")


# ---------------------------------------------------------------------- bounds
def test_ttl_expiry_removes_the_task(wire_validator):
    server, *_ = task_server()
    clock = server.tasks.clock = FakeClock()
    server.tasks.max_ttl = 120_000
    with connected(server, "2025-11-25", wire_validator) as (client, _, _):
        short = client.call_tool_as_task("add", {"a": 1, "b": 2}, ttl=1_000)
        long = client.call_tool_as_task("add", {"a": 1, "b": 2}, ttl=10**9)
        assert long.ttl == 120_000                             # the server's cap
        client.task_result(short.task_id)
        clock.now += 2.0
        with pytest.raises(InvalidParamsError, match="Failed to retrieve task: Task has expired"):
            client.get_task(short.task_id)
        assert [t.task_id for t in client.list_tasks()] == [long.task_id]
        clock.now += 200.0
        assert client.list_tasks() == [] and len(server.tasks) == 0


@pytest.mark.req("TASK-60", "TASK-64", "TASK-65")
def test_tasks_are_isolated_between_sessions(wire_validator):
    server, *_ = task_server()
    with connected(server, "2025-11-25", wire_validator) as (first, _, _):
        with connected(server, "2025-11-25", wire_validator) as (second, _, _):
            task = first.call_tool_as_task("add", {"a": 1, "b": 2})
            for method in ("get_task", "task_result", "cancel_task"):
                with pytest.raises(InvalidParamsError, match="Task not found"):
                    getattr(second, method)(task.task_id)
            assert second.list_tasks() == []
            assert first.task_result(task.task_id).content[0].text == "3"


# ---------------------------------------------------------------------- older revisions
@pytest.mark.req("TASK-2", "TASK-3", "TASK-4", "TASK-15")
@pytest.mark.parametrize("revision", OLDER)
def test_older_revisions_have_no_tasks(revision, wire_validator):
    server, *_ = task_server()
    with connected(server, revision, wire_validator) as (client, _, _):
        with pytest.raises(CapabilityNotSupported, match="2025-11-25"):
            client.call_tool_as_task("add", {"a": 1, "b": 2})
        with pytest.raises(CapabilityNotSupported):
            client.list_tasks()
        # A required tool is an ordinary tool there.
        assert client.call_tool("add", {"a": 1, "b": 2}).content[0].text == "3"
    with raw_server(server) as (peer, session):
        initialize_raw(peer, revision)
        reply = peer.request(1, "tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}, "task": {}})
        assert reply["result"] == {"content": [{"type": "text", "text": "3"}]}, "the task param is ignored"
        for i, method in enumerate(["tasks/get", "tasks/result", "tasks/list", "tasks/cancel"]):
            reply = peer.request(10 + i, method, {"taskId": "x"})
            assert reply["error"]["code"] == -32601, reply


# ---------------------------------------------------------------------- closing
def test_closing_the_session_cancels_its_tasks_and_leaves_no_thread(wire_validator):
    server, gate, started, seen = task_server()
    with connected(server, "2025-11-25", wire_validator) as (client, session, _):
        client.call_tool_as_task("slow")
        assert started.wait(WAIT)
    assert seen["ctx"].cancelled.is_set()
    assert not [t for t in threading.enumerate() if t.name == TASK_THREAD_NAME and t.is_alive()]
    assert len(server.tasks) == 0


# ---------------------------------------------------------------------- input_required
@pytest.mark.req("TASK-20", "TASK-24", "TASK-25", "TASK-27", "TASK-38", "TASK-21", "TASK-37", "TASK-52")
def test_an_elicitation_makes_the_task_input_required_until_answered(wire_validator):
    server = Server("asks")
    asked = threading.Event()

    @server.tool(task_support="optional")
    def ask(ctx: Context) -> str:
        answer = ctx.elicit("Your name?", {"type": "object", "properties": {"name": {"type": "string"}}})
        return f"hello {answer.content['name']}"

    release = threading.Event()

    def elicitation(request):
        asked.set()
        release.wait(WAIT)
        return {"action": "accept", "content": {"name": "Ada"}}
    statuses = Collector()
    with connected(server, "2025-11-25", wire_validator, elicitation=elicitation,
                   on_task_status=statuses) as (client, _, recorder):
        task = client.call_tool_as_task("ask")
        assert asked.wait(WAIT)
        assert statuses.wait_for(1)[0].status == "input_required"
        assert client.get_task(task.task_id).status == "input_required"
        request = recorder.wait_for(is_method("elicitation/create"))
        assert request["params"]["_meta"] == {RELATED_TASK_KEY: {"taskId": task.task_id}}
        release.set()
        assert [s.status for s in statuses.wait_for(3)] == ["input_required", "working", "completed"]
        assert client.task_result(task.task_id).content[0].text == "hello Ada"


def test_the_clients_answers_to_a_tasks_requests_carry_its_related_task_meta(wire_validator):
    """Spec: basic/utilities/tasks#associating-task-related-messages: every response
    related to a task MUST carry the related-task ``_meta`` (an elicitation a task
    depends on shares its task id). The same requests outside a task get none."""
    server = Server("asks-all")

    @server.tool(task_support="optional")
    def ask(ctx: Context) -> str:
        name = ctx.elicit("Your name?", {"type": "object", "properties": {"name": {"type": "string"}}})
        reply = ctx.sample(["Say hi"], max_tokens=5)
        roots = ctx.list_roots()
        return f"{name.content['name']} {reply.content.text} {len(roots)}"

    def sampling(request):
        return {"role": "assistant", "content": {"type": "text", "text": "hi"}, "model": "m",
                "_meta": {"example.com/mine": 1}}

    with connected(server, "2025-11-25", wire_validator, elicitation=lambda r: {
            "action": "accept", "content": {"name": "Ada"}}, sampling=sampling,
                   roots=["file:///tmp"]) as (client, _, recorder):
        task = client.call_tool_as_task("ask")
        assert client.task_result(task.task_id).content[0].text == "Ada hi 1"
        assert client.call_tool("ask").content[0].text == "Ada hi 1"
        asked = {m["id"]: m for m in recorder.received() if m.get("method") in (
            "elicitation/create", "sampling/createMessage", "roots/list")}
        answers = [(asked[m["id"]]["method"], m["result"].get("_meta")) for m in recorder.sent()
                   if "result" in m and m.get("id") in asked]
        related = {RELATED_TASK_KEY: {"taskId": task.task_id}}
        assert answers == [("elicitation/create", related),
                           ("sampling/createMessage", {"example.com/mine": 1, **related}),
                           ("roots/list", related),
                           ("elicitation/create", None),                   # the plain call's
                           ("sampling/createMessage", {"example.com/mine": 1}),
                           ("roots/list", None)]


# ---------------------------------------------------------------------- the client side
def test_the_approval_hook_sees_a_task_call(wire_validator):
    from mcp_ref import Deny
    server, *_ = task_server()
    with connected(server, "2025-11-25", wire_validator, on_approve=lambda a: Deny("no")) as (client, _, _):
        with pytest.raises(ApprovalDenied):
            client.call_tool_as_task("add", {"a": 1, "b": 2})
    assert len(server.tasks) == 0


def test_client_checks_ttl_locally(wire_validator):
    server, *_ = task_server()
    with connected(server, "2025-11-25", wire_validator) as (client, _, _):
        with pytest.raises(ValueError, match="ttl"):
            client.call_tool_as_task("add", {"a": 1, "b": 2}, ttl=-5)


# ---------------------------------------------------------------------- over stdio
def test_tasks_over_stdio_with_client_stdio(wire_validator):
    statuses = Collector()
    with Client.stdio(TASKS_SERVER, env=env(), cwd=str(ROOT), timeout=20, on_task_status=statuses) as client:
        assert client.server_capabilities["tasks"] == CAPABILITY
        added = client.call_tool_as_task("add", {"a": 20, "b": 22})
        assert client.task_result(added.task_id).content[0].text == "42"
        waiting = client.call_tool_as_task("wait")
        assert client.cancel_task(waiting.task_id).status == "cancelled"
        assert {t.task_id: t.status for t in client.list_tasks()} == \
            {added.task_id: "completed", waiting.task_id: "cancelled"}
        assert {s.status for s in statuses.wait_for(2)} == {"completed", "cancelled"}


# ---------------------------------------------------------------------- over Streamable HTTP
@pytest.mark.req("TASK-9", "TASK-23")
@pytest.mark.parametrize("options", [{}, {"json_response": True}, {"response_mode": "sse"}, {"stateless": True}],
                         ids=["auto", "json", "sse", "stateless"])
def test_tasks_over_streamable_http(options):
    pytest.importorskip("requests", reason="the HTTP client needs requests")
    from mcp_ref.transports.http.server.app import start_http
    server, gate, started, seen = task_server()
    handle = start_http(server, ("127.0.0.1", 0), **options)
    try:
        statuses = Collector()
        with Client.http(handle.url, timeout=10, on_task_status=statuses) as client:
            if options.get("stateless"):         # no session for a task to live in
                assert "tasks" not in client.server_capabilities
                with pytest.raises(CapabilityNotSupported):
                    client.call_tool_as_task("add", {"a": 1, "b": 2})
                return
            assert client.server_capabilities["tasks"] == CAPABILITY
            added = client.call_tool_as_task("add", {"a": 1, "b": 2})
            assert client.task_result(added.task_id).content[0].text == "3"
            slow = client.call_tool_as_task("slow")
            assert started.wait(WAIT)
            assert client.cancel_task(slow.task_id).status == "cancelled"
            assert seen["ctx"].cancelled.wait(WAIT)
            # Status notifications of tasks travel on the GET stream.
            assert {s.status for s in statuses.wait_for(2)} == {"completed", "cancelled"}
    finally:
        handle.shutdown()


@pytest.mark.req("TASK-9", "TASK-22")
def test_a_task_asks_the_client_over_streamable_http():
    """The task's elicitation/create goes on the GET stream (its tools/call was answered
    long ago); the answer comes back in a POST. Spec: basic/utilities/tasks#input-required-status."""
    pytest.importorskip("requests", reason="the HTTP client needs requests")
    from mcp_ref.transports.http.server.app import start_http
    server = Server("asks-http")

    @server.tool(task_support="required")
    def ask(ctx: Context) -> str:
        return ctx.elicit("Your name?", {"type": "object", "properties": {"name": {"type": "string"}}}).action
    handle = start_http(server, ("127.0.0.1", 0))
    try:
        with Client.http(handle.url, timeout=10, elicitation=lambda request: {"action": "decline"}) as client:
            task = client.call_tool_as_task("ask")
            assert client.task_result(task.task_id, timeout=10).content[0].text == "decline"
    finally:
        handle.shutdown()


@pytest.mark.req("CANC-3")
def test_notifications_cancelled_for_the_answered_tools_call_does_not_touch_the_task(wire_validator):
    """After its CreateTaskResult the tools/call is finished; the task is cancelled only
    with tasks/cancel. Spec: basic/utilities/cancellation (task-augmented requests)."""
    server, gate, started, seen = task_server()
    with raw_server(server) as (peer, session):
        initialize_raw(peer, "2025-11-25")
        reply = peer.request(1, "tools/call", {"name": "slow", "arguments": {}, "task": {}})
        task_id = reply["result"]["task"]["taskId"]
        assert started.wait(WAIT)
        peer.notify("notifications/cancelled", {"requestId": 1, "reason": "too late"})
        assert peer.request(2, "tasks/get", {"taskId": task_id})["result"]["status"] == "working"
        assert not seen["ctx"].cancelled.is_set()
        gate.set()
        result = peer.request(3, "tasks/result", {"taskId": task_id})
        assert result["result"]["content"] == [{"type": "text", "text": "released"}]
        wire_validator.check(result, "2025-11-25", "tasks/result")


def test_a_same_thread_tool_runs_as_a_task(wire_validator):
    server = Server("same")
    threads = []

    @server.tool(task_support="optional", same_thread=True)
    def where() -> str:
        threads.append(threading.current_thread().name)
        return "here"
    with connected(server, "2025-11-25", wire_validator) as (client, _, _):
        task = client.call_tool_as_task("where")
        assert client.task_result(task.task_id).content[0].text == "here"
    assert threads == ["mcp-server-same-thread"]
