"""The task registry of ``mcp_ref.server.tasks.legacy`` driven directly: a real ``Session``
over ``memory_pair()`` whose handler calls the registry's handlers, a scripted peer
on the other end, and a small stand-in for the tools registry. Every message the
session writes is checked against the 2025-11-25 schema.

What the server proper adds (declaring the capability, the dispatch table, the
real tools) is tested end to end in ``tests/test_tasks.py``.
Spec: basic/utilities/tasks.
"""
import threading
from types import SimpleNamespace

import pytest

from conftest import schema_for
from helpers import WAIT, RawPeer
from mcp_ref.errors import INTERNAL_ERROR, INVALID_PARAMS, METHOD_NOT_FOUND, McpError
from mcp_ref.server.pagination import Listing
from mcp_ref.server.tasks.legacy import RELATED_TASK_KEY, TASK_THREAD_NAME, Tasks, route_tool_call
from mcp_ref.session import Session
from mcp_ref.transports import memory_pair

REVISION = "2025-11-25"
DECLARED = {"tools": {}, "tasks": {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}}


class FakeTools:
    """What ``Tools`` offers the registry: ``handle_call(ctx, params, routed=False)``, with
    entries holding ``name``, ``task_support`` and a function ``fn(ctx, **arguments)``."""

    def __init__(self, registry):
        self.registry = registry
        self.entries = {}

    def add(self, name, fn, task_support=None):
        self.entries[name] = SimpleNamespace(name=name, fn=fn, task_support=task_support)

    def handle_call(self, ctx, params, routed=False):
        entry = self.entries.get(params["name"])
        if entry is None:
            raise McpError(f"Unknown tool: {params['name']}", code=INVALID_PARAMS)
        if not routed and ("task" in params or entry.task_support is not None):
            return route_tool_call(self.registry, self, ctx, params, entry)
        try:
            value = entry.fn(ctx, **(params.get("arguments") or {}))
        except McpError:
            raise
        except Exception as exc:
            if ctx.cancelled.is_set():
                raise
            return {"content": [{"type": "text", "text": str(exc)}], "isError": True}
        return {"content": [{"type": "text", "text": str(value)}]}


class Harness:
    """One registry, and sessions served by it, each with a peer that validates what it reads."""

    def __init__(self, wire_validator, page_size=None):
        self.owner = SimpleNamespace(page_size=page_size)
        self.registry = Tasks(self.owner)
        self.tools = FakeTools(self.registry)
        self.validator = wire_validator
        self.sessions = []
        self.asked = {}

    def handle(self, ctx, method, params):
        table = {"tools/call": self.tools.handle_call, "tasks/get": self.registry.handle_get,
                 "tasks/result": self.registry.handle_result, "tasks/list": self.registry.handle_list,
                 "tasks/cancel": self.registry.handle_cancel}
        return table[method](ctx, params)

    def connect(self, declared=DECLARED):
        ours, theirs = memory_pair()
        session = Session(ours, self.handle, timeout=WAIT, on_close=self.registry.session_closed,
                          name="mcp-server")
        session.protocol_version = REVISION
        session.declared_capabilities = declared
        session.start()
        self.sessions.append(session)
        return session, Peer(theirs, self)

    def close(self):
        for session in self.sessions:
            session.close()


class Peer(RawPeer):
    """A RawPeer that validates every message it reads, results against the method asked."""

    def __init__(self, transport, harness):
        super().__init__(transport)
        self.harness = harness
        self.asked = {}

    def send(self, message):
        if isinstance(message, dict) and "method" in message and "id" in message:
            self.asked[message["id"]] = message["method"]
        super().send(message)

    def recv(self, timeout=WAIT):
        message = super().recv(timeout)
        if message is not None:
            self.harness.validator.check(message, REVISION, self.asked.get(message.get("id"))
                                         if "method" not in message else None)
        return message

    def next_notification(self, method, skipped=None):
        while True:
            message = self.recv()
            assert message is not None, f"closed before {method}"
            if message.get("method") == method:
                return message
            if skipped is not None:
                skipped.append(message)

    def call_as_task(self, request_id, name, arguments=None, task=None, meta=None):
        params = {"name": name, "arguments": arguments or {}, "task": {} if task is None else task}
        if meta:
            params["_meta"] = meta
        reply = self.request(request_id, "tools/call", params)
        assert "result" in reply, reply
        return reply["result"]["task"]


@pytest.fixture
def harness(wire_validator):
    schema_for(REVISION)            # every read is validated: without the schema, skip before a tool runs
    h = Harness(wire_validator)
    yield h
    h.close()


def gated_tool(harness, name="slow", task_support="optional"):
    """A tool that waits for ``release`` (or its cancellation); ``started`` tells it runs."""
    started, release, seen = threading.Event(), threading.Event(), {}

    def fn(ctx, **arguments):
        seen["ctx"] = ctx
        started.set()
        while not release.wait(0.01):
            if ctx.cancelled.is_set():
                seen["cancelled"] = True
                raise RuntimeError("stopped")
        return "released"
    harness.tools.add(name, fn, task_support)
    return started, release, seen


# ---------------------------------------------------------------------- creation and result
@pytest.mark.req("TASK-19", "TASK-32", "TASK-59")
def test_a_task_answers_at_once_then_reports_and_keeps_its_result(harness):
    release = threading.Event()

    def count(ctx, n):
        for i in range(1, n + 1):
            ctx.report_progress(i, total=n)
        release.wait(WAIT)
        return f"counted to {n}"
    harness.tools.add("count", count, "optional")
    session, peer = harness.connect()
    task = peer.call_as_task(1, "count", {"n": 2}, task={"ttl": 60000}, meta={"progressToken": "p"})
    assert task["status"] == "working" and task["ttl"] == 60000 and task["pollInterval"] == 1000
    assert task["createdAt"] == task["lastUpdatedAt"] and task["createdAt"].endswith("Z")
    assert len(task["taskId"]) >= 22                       # 128 random bits, base64url
    for i in (1, 2):
        progress = peer.next_notification("notifications/progress")["params"]
        assert progress["progressToken"] == "p" and progress["progress"] == i
        assert progress["_meta"] == {RELATED_TASK_KEY: {"taskId": task["taskId"]}}
    assert peer.request(2, "tasks/get", {"taskId": task["taskId"]})["result"]["status"] == "working"
    release.set()
    status = peer.next_notification("notifications/tasks/status")["params"]
    assert status["status"] == "completed" and status["taskId"] == task["taskId"]
    assert "_meta" not in status                           # SHOULD NOT carry related-task
    result = peer.request(3, "tasks/result", {"taskId": task["taskId"]})["result"]
    assert result == {"content": [{"type": "text", "text": "counted to 2"}],
                      "_meta": {RELATED_TASK_KEY: {"taskId": task["taskId"]}}}
    got = peer.request(4, "tasks/get", {"taskId": task["taskId"]})["result"]
    assert got["status"] == "completed" and got["lastUpdatedAt"] >= got["createdAt"]


@pytest.mark.req("TASK-35")
def test_tasks_result_blocks_until_the_task_ends(harness):
    started, release, _ = gated_tool(harness)
    session, peer = harness.connect()
    task = peer.call_as_task(1, "slow")
    assert started.wait(WAIT)
    peer.send({"jsonrpc": "2.0", "id": 2, "method": "tasks/result", "params": {"taskId": task["taskId"]}})
    peer.ping()                                  # answered while tasks/result waits
    peer.assert_silent()
    release.set()
    skipped = []
    reply = peer.recv_reply(2, skipped=skipped)
    assert reply["result"]["content"][0]["text"] == "released"
    assert [m["params"]["status"] for m in skipped if m.get("method") == "notifications/tasks/status"] == \
        ["completed"]


def test_an_error_result_fails_the_task_and_is_its_result(harness):
    def broken(ctx):
        raise ValueError("rate limit exceeded")
    harness.tools.add("broken", broken, "optional")
    session, peer = harness.connect()
    task = peer.call_as_task(1, "broken")
    status = peer.next_notification("notifications/tasks/status")["params"]
    assert status["status"] == "failed"
    assert status["statusMessage"] == "Tool execution failed: rate limit exceeded"
    result = peer.request(2, "tasks/result", {"taskId": task["taskId"]})["result"]
    assert result["isError"] is True and result["content"][0]["text"] == "rate limit exceeded"
    assert result["_meta"] == {RELATED_TASK_KEY: {"taskId": task["taskId"]}}


@pytest.mark.req("TASK-34", "TASK-58", "TASK-36")
def test_a_json_rpc_error_fails_the_task_and_tasks_result_returns_it(harness):
    def refuses(ctx):
        raise McpError("needs a URL elicitation", {"elicitations": []}, code=-32042)
    harness.tools.add("refuses", refuses, "optional")
    session, peer = harness.connect()
    task = peer.call_as_task(1, "refuses")
    status = peer.next_notification("notifications/tasks/status")["params"]
    assert status["status"] == "failed" and "needs a URL elicitation" in status["statusMessage"]
    reply = peer.request(2, "tasks/result", {"taskId": task["taskId"]})
    assert reply["error"] == {"code": -32042, "message": "needs a URL elicitation", "data": {"elicitations": []}}


@pytest.mark.req("TASK-58")
def test_an_unexpected_exception_is_an_internal_error_result(harness):
    """What the session answers -32603 for (a failure outside the tool function) fails the task the same way."""
    harness.tools.add("crash", lambda ctx: None, "optional")
    harness.tools.handle_call = lambda ctx, params, routed=False: (
        route_tool_call(harness.registry, harness.tools, ctx, params, harness.tools.entries["crash"])
        if not routed else 1 / 0)
    session, peer = harness.connect()
    task = peer.call_as_task(1, "crash")
    assert peer.next_notification("notifications/tasks/status")["params"]["status"] == "failed"
    reply = peer.request(2, "tasks/result", {"taskId": task["taskId"]})
    assert reply["error"]["code"] == INTERNAL_ERROR


# ---------------------------------------------------------------------- cancellation
@pytest.mark.req("TASK-21", "TASK-49", "TASK-50")
def test_cancel_sets_the_tools_cancelled_and_the_task_stays_cancelled(harness):
    started, release, seen = gated_tool(harness)
    session, peer = harness.connect()
    task = peer.call_as_task(1, "slow")
    assert started.wait(WAIT)
    skipped = []
    peer.send({"jsonrpc": "2.0", "id": 2, "method": "tasks/cancel", "params": {"taskId": task["taskId"]}})
    cancelled = peer.recv_reply(2, skipped=skipped)["result"]
    assert cancelled["status"] == "cancelled" and cancelled["statusMessage"] == "The task was cancelled by request."
    assert "_meta" not in cancelled
    assert seen["ctx"].cancelled.wait(WAIT)
    # The status changed before the answer was sent, and was announced.
    assert [m["params"]["status"] for m in skipped if m.get("method") == "notifications/tasks/status"] == \
        ["cancelled"]
    again = peer.request(3, "tasks/cancel", {"taskId": task["taskId"]})
    assert again["error"]["code"] == INVALID_PARAMS
    assert again["error"]["message"] == "Cannot cancel task: already in terminal status 'cancelled'"
    result = peer.request(4, "tasks/result", {"taskId": task["taskId"]})
    assert result["error"]["code"] == INVALID_PARAMS and "was cancelled" in result["error"]["message"]
    assert peer.request(5, "tasks/get", {"taskId": task["taskId"]})["result"]["status"] == "cancelled"


@pytest.mark.req("TASK-48")
def test_cancel_of_a_completed_task_is_invalid_params(harness):
    harness.tools.add("quick", lambda ctx: "done", "optional")
    session, peer = harness.connect()
    task = peer.call_as_task(1, "quick")
    assert peer.next_notification("notifications/tasks/status")["params"]["status"] == "completed"
    reply = peer.request(2, "tasks/cancel", {"taskId": task["taskId"]})
    assert reply["error"]["code"] == INVALID_PARAMS
    assert reply["error"]["message"] == "Cannot cancel task: already in terminal status 'completed'"


def test_a_cancelled_tasks_result_waiter_is_released(harness):
    started, release, seen = gated_tool(harness)
    session, peer = harness.connect()
    task = peer.call_as_task(1, "slow")
    assert started.wait(WAIT)
    peer.send({"jsonrpc": "2.0", "id": 2, "method": "tasks/result", "params": {"taskId": task["taskId"]}})
    peer.request(3, "tasks/cancel", {"taskId": task["taskId"]})
    reply = peer.recv_reply(2)
    assert reply["error"]["code"] == INVALID_PARAMS


def test_a_cancelled_tasks_result_request_gets_no_answer(harness):
    started, release, seen = gated_tool(harness)
    session, peer = harness.connect()
    task = peer.call_as_task(1, "slow")
    assert started.wait(WAIT)
    peer.send({"jsonrpc": "2.0", "id": 2, "method": "tasks/result", "params": {"taskId": task["taskId"]}})
    peer.notify("notifications/cancelled", {"requestId": 2})
    peer.ping()
    release.set()
    assert peer.next_notification("notifications/tasks/status")["params"]["status"] == "completed"
    peer.ping("after")
    peer.assert_silent()


# ---------------------------------------------------------------------- errors
@pytest.mark.req("TASK-55")
@pytest.mark.parametrize("method", ["tasks/get", "tasks/result", "tasks/cancel"])
def test_an_unknown_task_id_is_invalid_params(harness, method):
    session, peer = harness.connect()
    reply = peer.request(1, method, {"taskId": "nope"})
    verb = "cancel" if method == "tasks/cancel" else "retrieve"
    assert reply["error"] == {"code": INVALID_PARAMS, "message": f"Failed to {verb} task: Task not found",
                              "data": {"taskId": "nope"}}
    bad = peer.request(2, method, {"taskId": 7})
    assert bad["error"]["code"] == INVALID_PARAMS and "taskId must be a string" in bad["error"]["message"]


@pytest.mark.req("TASK-6", "TASK-8")
def test_tool_level_negotiation(harness):
    harness.tools.add("plain", lambda ctx: "plain", None)
    harness.tools.add("forbidden", lambda ctx: "f", "forbidden")
    harness.tools.add("required", lambda ctx: "r", "required")
    session, peer = harness.connect()
    reply = peer.request(1, "tools/call", {"name": "plain", "arguments": {}, "task": {}})
    assert reply["error"]["code"] == METHOD_NOT_FOUND and "does not support task" in reply["error"]["message"]
    reply = peer.request(2, "tools/call", {"name": "forbidden", "arguments": {}, "task": {}})
    assert reply["error"]["code"] == METHOD_NOT_FOUND
    reply = peer.request(3, "tools/call", {"name": "required", "arguments": {}})
    assert reply["error"]["code"] == METHOD_NOT_FOUND
    assert reply["error"]["message"].startswith("Task augmentation required for tools/call requests")
    assert peer.call_as_task(4, "required")["status"] == "working"


@pytest.mark.req("TASK-15")
def test_without_the_capability_the_task_param_is_ignored(harness):
    harness.tools.add("required", lambda ctx: "ran", "required")
    session, peer = harness.connect(declared={"tools": {}})
    reply = peer.request(1, "tools/call", {"name": "required", "arguments": {}, "task": {"ttl": 5}})
    assert reply["result"] == {"content": [{"type": "text", "text": "ran"}]}
    reply = peer.request(2, "tools/call", {"name": "required", "arguments": {}})
    assert reply["result"] == {"content": [{"type": "text", "text": "ran"}]}
    assert len(harness.registry) == 0


@pytest.mark.parametrize("task", [5, {"ttl": -1}, {"ttl": "60"}, {"ttl": True}, {"ttl": 1.5}])
def test_a_malformed_task_param_is_invalid_params(harness, task):
    harness.tools.add("quick", lambda ctx: "done", "optional")
    session, peer = harness.connect()
    reply = peer.request(1, "tools/call", {"name": "quick", "arguments": {}, "task": task})
    assert reply["error"]["code"] == INVALID_PARAMS


# ---------------------------------------------------------------------- listing
@pytest.mark.req("TASK-44", "TASK-45", "TASK-55")
def test_tasks_list_paginates_with_opaque_cursors(wire_validator):
    harness = Harness(wire_validator, page_size=2)
    try:
        harness.tools.add("quick", lambda ctx: "done", "optional")
        session, peer = harness.connect()
        ids = [peer.call_as_task(i, "quick")["taskId"] for i in range(1, 6)]
        seen, cursor, pages = [], None, 0
        while True:
            reply = peer.request(100 + pages, "tasks/list", {"cursor": cursor} if cursor else {})
            result = reply["result"]
            seen += [t["taskId"] for t in result["tasks"]]
            pages += 1
            cursor = result.get("nextCursor")
            if cursor is None:
                break
        assert seen == ids and pages == 3
        bad = peer.request(200, "tasks/list", {"cursor": "not-a-cursor"})
        assert bad["error"]["code"] == INVALID_PARAMS
        other = peer.request(201, "tasks/list", {"cursor": Listing(
            [(1, "x"), (2, "y")]).page({}, 1, "tools")[1]})
        assert other["error"]["code"] == INVALID_PARAMS
    finally:
        harness.close()


# ---------------------------------------------------------------------- bounds
class FakeClock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


@pytest.mark.req("TASK-30", "TASK-67")
def test_ttl_is_capped_defaulted_and_expired_tasks_are_removed(harness):
    clock = harness.registry.clock = FakeClock()
    harness.registry.max_ttl = 10_000
    harness.registry.default_ttl = 5_000
    harness.tools.add("quick", lambda ctx: "done", "optional")
    session, peer = harness.connect()
    capped = peer.call_as_task(1, "quick", task={"ttl": 999_999})
    defaulted = peer.call_as_task(2, "quick")
    assert capped["ttl"] == 10_000 and defaulted["ttl"] == 5_000
    clock.now += 6.0
    gone = peer.request(3, "tasks/get", {"taskId": defaulted["taskId"]})
    assert gone["error"]["message"] == "Failed to retrieve task: Task has expired"
    assert peer.request(4, "tasks/get", {"taskId": capped["taskId"]})["result"]["taskId"] == capped["taskId"]
    listed = peer.request(5, "tasks/list", {})["result"]["tasks"]
    assert [t["taskId"] for t in listed] == [capped["taskId"]]
    clock.now += 5.0
    assert peer.request(6, "tasks/list", {})["result"] == {"tasks": []}
    assert len(harness.registry) == 0


def test_an_expired_working_task_is_cancelled_and_its_waiter_told(harness):
    clock = harness.registry.clock = FakeClock()
    started, release, seen = gated_tool(harness)
    session, peer = harness.connect()
    task = peer.call_as_task(1, "slow", task={"ttl": 1000})
    assert started.wait(WAIT)
    peer.send({"jsonrpc": "2.0", "id": 2, "method": "tasks/result", "params": {"taskId": task["taskId"]}})
    peer.ping()
    clock.now += 2.0                     # the waiting tasks/result notices within RESULT_POLL
    skipped = []
    reply = peer.recv_reply(2, skipped=skipped)
    assert reply["error"]["message"] == "Failed to retrieve task: Task has expired"
    assert seen["ctx"].cancelled.wait(WAIT)
    statuses = [m["params"] for m in skipped if m.get("method") == "notifications/tasks/status"]
    assert statuses and statuses[0]["status"] == "cancelled" and "expired" in statuses[0]["statusMessage"]


@pytest.mark.req("TASK-67")
def test_a_full_session_drops_its_oldest_finished_task_or_refuses(harness):
    harness.registry.max_tasks = 2
    harness.tools.add("quick", lambda ctx: "done", "optional")
    started, release, seen = gated_tool(harness)
    session, peer = harness.connect()
    first = peer.call_as_task(1, "quick")
    assert peer.next_notification("notifications/tasks/status")["params"]["status"] == "completed"
    second = peer.call_as_task(2, "slow")
    third = peer.call_as_task(3, "slow")         # the completed first one made room
    assert peer.request(4, "tasks/get", {"taskId": first["taskId"]})["error"]["code"] == INVALID_PARAMS
    refused = peer.request(5, "tools/call", {"name": "quick", "arguments": {}, "task": {}})
    assert refused["error"]["code"] == INTERNAL_ERROR and "Too many tasks" in refused["error"]["message"]
    release.set()
    for task in (second, third):
        assert peer.request(task["taskId"], "tasks/result", {"taskId": task["taskId"]})["result"]


# ---------------------------------------------------------------------- isolation and closing
@pytest.mark.req("TASK-64")
def test_a_task_is_found_only_by_the_session_that_created_it(harness):
    harness.tools.add("quick", lambda ctx: "done", "optional")
    session_a, peer_a = harness.connect()
    session_b, peer_b = harness.connect()
    task = peer_a.call_as_task(1, "quick")
    for i, method in enumerate(["tasks/get", "tasks/result", "tasks/cancel"]):
        reply = peer_b.request(i, method, {"taskId": task["taskId"]})
        assert reply["error"]["code"] == INVALID_PARAMS and "Task not found" in reply["error"]["message"]
    assert peer_b.request(9, "tasks/list", {})["result"] == {"tasks": []}
    assert [t["taskId"] for t in peer_a.request(9, "tasks/list", {})["result"]["tasks"]] == [task["taskId"]]


def test_closing_the_session_cancels_its_tasks_and_joins_their_threads(harness):
    started, release, seen = gated_tool(harness)
    session, peer = harness.connect()
    task = peer.call_as_task(1, "slow")
    assert started.wait(WAIT)
    record = harness.registry._sessions[session].tasks[task["taskId"]]
    session.close()
    assert seen["ctx"].cancelled.is_set() and record.status == "cancelled"
    assert not record.thread.is_alive()
    assert not [t for t in threading.enumerate() if t.name == TASK_THREAD_NAME and t.is_alive()]
    assert len(harness.registry) == 0 and session not in harness.registry._sessions


# ---------------------------------------------------------------------- input_required
@pytest.mark.req("TASK-20", "TASK-24", "TASK-25")
def test_a_request_to_the_client_makes_the_task_input_required(harness):
    answers = {}

    def asks(ctx):
        answers["reply"] = ctx.request("elicitation/create", {
            "mode": "form", "message": "Name?",
            "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}})
        return "thanks"
    harness.tools.add("asks", asks, "optional")
    session, peer = harness.connect()
    task = peer.call_as_task(1, "asks")
    skipped = []
    request = peer.next_notification("elicitation/create", skipped)
    assert request["params"]["_meta"] == {RELATED_TASK_KEY: {"taskId": task["taskId"]}}
    statuses = [m["params"]["status"] for m in skipped if m.get("method") == "notifications/tasks/status"]
    assert statuses == ["input_required"]
    got = peer.request(2, "tasks/get", {"taskId": task["taskId"]})["result"]
    assert got["status"] == "input_required" and "elicitation/create" in got["statusMessage"]
    peer.send({"jsonrpc": "2.0", "id": request["id"], "result": {"action": "accept", "content": {"name": "A"}}})
    assert peer.next_notification("notifications/tasks/status")["params"]["status"] == "working"
    assert peer.next_notification("notifications/tasks/status")["params"]["status"] == "completed"
    assert answers["reply"]["action"] == "accept"


# ---------------------------------------------------------------------- the Task type
@pytest.mark.req("TASK-30")
def test_task_ttl_is_required_and_may_be_null():
    from mcp_ref.errors import InvalidParamsError
    from mcp_ref.types import Task
    wire = {"taskId": "t", "status": "completed", "createdAt": "2025-11-25T10:30:00Z",
            "lastUpdatedAt": "2025-11-25T10:30:00Z", "ttl": None, "_meta": {"x": 1}}
    task = Task.from_dict(wire)
    assert task.ttl is None and task.is_terminal and task.to_dict() == wire
    for bad, where in (({k: v for k, v in wire.items() if k != "ttl"}, "Task.ttl: required field missing"),
                       (dict(wire, ttl="60"), "Task.ttl: expected integer or null"),
                       (dict(wire, status="running"), "Task.status: expected one of")):
        with pytest.raises(InvalidParamsError, match=where):
            Task.from_dict(bad)
