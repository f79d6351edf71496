"""The tasks extension of 2026-07-28 (``io.modelcontextprotocol/tasks``), both sides.

Server (server/tasks/extension.py) through a raw modern peer: every message it sends is
validated against the 2026-07-28 schema, the extension's messages against
tests/ext_tasks_schema.py (written from the extension's specification). Client
(client/tasks/extension.py) against our server, and against a scripted server for
what ours never sends. Spec: the extension's specification, 2026-07-28, page ``tasks``.
"""
import threading
import time
import types

import pytest

from conftest import MODERN_REVISION, schema_for, validate_wire
from helpers import raw_server
from mcp_ref import CancelToken, Client, Context, Server
from mcp_ref.errors import (InternalError, InvalidParamsError, MissingRequiredClientCapabilityError, RequestCancelled,
                            RequestTimeout)
from mcp_ref.server.tasks.common import _Task
from mcp_ref.server.tasks.extension import ExtTasks
from mcp_ref.transports import TapTransport, memory_pair
from test_modern_server import CAPS, Exchange, meta

EXT = "io.modelcontextprotocol/tasks"
WITH_EXT = {"extensions": {EXT: {}}, "elicitation": {"form": {}}}
WAIT = 10.0


def declared(**params) -> dict:
    """Params of a request that declares the extension."""
    return {**params, **meta(**{CAPS: WITH_EXT})}


def task_server() -> Server:
    server = Server("tasks-ext", version="1.0")
    server.tasks.ext.poll_interval = 20

    @server.tool(task_support="optional")
    def double(n: int) -> int:
        """Doubles n, as a task when the client allows it."""
        return 2 * n

    @server.tool(task_support="required")
    def greet(ctx: Context) -> str:
        """Asks the name twice (two keys), then greets."""
        first = ctx.elicit("Your name?", {"type": "object", "properties": {"name": {"type": "string"}}})
        second = ctx.elicit("Your town?", {"type": "object", "properties": {"town": {"type": "string"}}})
        return f"Hello {first.content['name']} from {second.content['town']}"

    @server.tool(task_support="optional")
    def wait_for_cancel(ctx: Context) -> str:
        """Runs until cancelled."""
        ctx.cancelled.wait(WAIT)
        return "cancelled" if ctx.cancelled.is_set() else "not cancelled"

    @server.tool(task_support="optional")
    def refuse() -> str:
        """A tool error: the task completes, with isError."""
        raise ValueError("the tool broke")

    @server.tool(task_support="optional")
    def protocol_error() -> str:
        """A JSON-RPC error: the task fails with it."""
        raise InvalidParamsError("the job cannot run", {"why": "no input"})

    @server.tool(task_support="optional")
    def multi_input(ctx: Context) -> str:
        """Two named asks at once (``ctx.gather``), then one more named ask."""
        schema = {"type": "object", "properties": {"name": {"type": "string"}}}
        answers = ctx.gather({"first": lambda: ctx.elicit("First value?", schema),
                              "second": lambda: ctx.elicit("Second value?", schema)})
        last = ctx.elicit("Sure?", {"type": "object", "properties": {"ok": {"type": "boolean"}}}, key="confirm")
        return f"Got {answers['first'].content['name']} and {answers['second'].content['name']}: {last.action}"

    @server.tool
    def plain() -> str:
        return "plain"

    @server.tool(task_support="forbidden")
    def never_a_task() -> str:
        return "never"

    return server


@pytest.fixture
def exchange():
    with raw_server(task_server()) as (peer, _):
        yield Exchange(peer)


def poll(exchange, task_id: str, until) -> dict:
    deadline = time.monotonic() + WAIT
    while True:
        result = exchange.call("tasks/get", declared(taskId=task_id))["result"]
        if until(result) or time.monotonic() > deadline:
            return result
        time.sleep(0.01)


# ---------------------------------------------------------------- the server
def test_discover_names_the_extension_only_with_a_task_tool(exchange):
    assert exchange.call("server/discover")["result"]["capabilities"]["extensions"] == {EXT: {}}
    with raw_server(Server("no-tasks")) as (peer, _):
        plain = Server("no-tasks")
        assert "extensions" not in Exchange(peer).call("server/discover")["result"]["capabilities"]
        del plain


@pytest.mark.req("XTASK26-6", "XTASK26-9", "XTASK26-15", "XTASK26-16", "XTASK26-19", "XTASK26-22")
def test_a_declaring_call_gets_a_task_that_completes_with_the_same_result(exchange):
    created = exchange.call("tools/call", declared(name="double", arguments={"n": 21}))["result"]
    assert created["resultType"] == "task" and created["status"] == "working"
    assert isinstance(created["ttlMs"], int) and created["pollIntervalMs"] == 20
    done = poll(exchange, created["taskId"], lambda r: r["status"] == "completed")
    assert done["resultType"] == "complete"
    assert done["result"]["content"] == [{"type": "text", "text": "42"}]
    ordinary = exchange.call("tools/call", {"name": "double", "arguments": {"n": 21}, **meta()})["result"]
    assert ordinary["content"] == done["result"]["content"]


@pytest.mark.req("XTASK26-1", "XTASK26-4", "XTASK26-7")
def test_no_task_for_a_request_that_does_not_declare_the_extension(exchange):
    # A declaring request gets a task; the next request, not declaring, does not (the
    # declaration is the request's, whatever came before).
    assert exchange.call("tools/call", declared(name="double", arguments={"n": 2}))["result"]["resultType"] == "task"
    result = exchange.call("tools/call", {"name": "double", "arguments": {"n": 2}, **meta()})["result"]
    assert result["resultType"] == "complete" and result["content"][0]["text"] == "4"
    refused = exchange.call("tools/call", {"name": "greet", "arguments": {}, **meta()})["error"]
    assert refused["code"] == MissingRequiredClientCapabilityError.code
    assert refused["data"]["requiredCapabilities"] == {"extensions": {EXT: {}}}
    assert exchange.call("tools/call", declared(name="plain", arguments={}))["result"]["resultType"] == "complete"
    never = exchange.call("tools/call", declared(name="never_a_task", arguments={}))["result"]
    assert never["resultType"] == "complete" and never["content"][0]["text"] == "never"


@pytest.mark.req("XTASK26-30", "XTASK26-39", "XTASK26-40", "XTASK26-41", "XTASK26-43", "XTASK26-44")
def test_tasks_requests_need_the_extension_and_a_known_id(exchange):
    for method in ("tasks/get", "tasks/cancel"):
        error = exchange.call(method, {"taskId": "nope", **meta()})["error"]
        assert error["code"] == MissingRequiredClientCapabilityError.code
        error = exchange.call(method, declared(taskId="nope"))["error"]
        assert (error["code"], error["message"]) == (-32602, "Failed to retrieve task: Task not found")
        assert error["data"] == {"taskId": "nope"}
        error = exchange.call(method, declared(taskId=7), sent_ok=False)["error"]
        assert (error["code"], error["message"]) == (-32602, f"Invalid params: {method} needs taskId (a string)")
    error = exchange.call("tasks/update", declared(taskId="nope", inputResponses={}))["error"]
    assert error["code"] == -32602
    # A known id, asked for by a declaring request, resolves.
    task_id = exchange.call("tools/call", declared(name="double", arguments={"n": 1}))["result"]["taskId"]
    assert exchange.call("tasks/get", declared(taskId=task_id))["result"]["taskId"] == task_id
    assert exchange.call("tasks/get", {"taskId": task_id, **meta()})["error"]["code"] == \
        MissingRequiredClientCapabilityError.code


@pytest.mark.req("XTASK26-15", "XTASK26-17", "XTASK26-18", "XTASK26-27", "XTASK26-28", "XTASK26-29", "XTASK26-32", "XTASK26-33")
def test_input_requests_wait_for_tasks_update_and_keys_are_never_reused(exchange):
    task_id = exchange.call("tools/call", declared(name="greet", arguments={}))["result"]["taskId"]
    asked = poll(exchange, task_id, lambda r: r["status"] == "input_required")
    assert list(asked["inputRequests"]) == ["elicit-1"]
    request = asked["inputRequests"]["elicit-1"]
    assert request["method"] == "elicitation/create" and request["params"]["message"] == "Your name?"
    again = exchange.call("tasks/get", declared(taskId=task_id))["result"]
    assert again["inputRequests"] == asked["inputRequests"]          # the same key until answered
    # A key that is not outstanding is ignored; a malformed update is refused.
    ack = exchange.call("tasks/update", declared(taskId=task_id, inputResponses={
        "elicit-9": {"action": "accept", "content": {"name": "X"}}}))["result"]
    assert ack == {"resultType": "complete", "_meta": ack["_meta"]}
    assert exchange.call("tasks/get", declared(taskId=task_id))["result"]["status"] == "input_required"
    bad = exchange.call("tasks/update", declared(taskId=task_id, inputResponses=["no"]), sent_ok=False)
    assert bad["error"]["code"] == -32602
    exchange.call("tasks/update", declared(taskId=task_id, inputResponses={
        "elicit-1": {"action": "accept", "content": {"name": "Ada"}}}))
    second = poll(exchange, task_id, lambda r: "elicit-2" in r.get("inputRequests", {}))
    assert list(second["inputRequests"]) == ["elicit-2"]
    exchange.call("tasks/update", declared(taskId=task_id, inputResponses={
        "elicit-2": {"action": "accept", "content": {"town": "Leeds"}}}))
    done = poll(exchange, task_id, lambda r: r["status"] == "completed")
    assert done["result"]["content"][0]["text"] == "Hello Ada from Leeds"


@pytest.mark.req("XTASK26-15", "XTASK26-20", "XTASK26-35")
def test_cancel_acknowledges_and_the_tool_sees_it(exchange):
    task_id = exchange.call("tools/call", declared(name="wait_for_cancel", arguments={}))["result"]["taskId"]
    ack = exchange.call("tasks/cancel", declared(taskId=task_id))["result"]
    assert ack["resultType"] == "complete" and set(ack) <= {"resultType", "_meta"}
    assert exchange.call("tasks/get", declared(taskId=task_id))["result"]["status"] == "cancelled"
    time.sleep(0.05)                                 # the tool returns; the status stays terminal
    assert exchange.call("tasks/get", declared(taskId=task_id))["result"]["status"] == "cancelled"
    assert exchange.call("tasks/cancel", declared(taskId=task_id))["result"]["resultType"] == "complete"


@pytest.mark.req("XTASK26-8", "XTASK26-21", "XTASK26-45", "XTASK26-46", "XTASK26-47", "XTASK26-48", "XTASK26-49")
def test_a_json_rpc_error_fails_the_task_and_a_tool_error_completes_it(exchange):
    # The tool asks for a form the request's capabilities do not allow: -32021 during execution.
    no_elicitation = {"_meta": {**meta()["_meta"], CAPS: {"extensions": {EXT: {}}}}}
    failed_id = exchange.call("tools/call", {"name": "greet", "arguments": {}, **no_elicitation})["result"]["taskId"]
    failed = poll(exchange, failed_id, lambda r: r["status"] == "failed")
    assert failed["error"]["code"] == MissingRequiredClientCapabilityError.code
    assert failed["error"]["data"]["requiredCapabilities"] == {"elicitation": {"form": {}}}
    assert set(failed["error"]) == {"code", "message", "data"} and "result" not in failed
    assert failed["error"]["message"].startswith("Missing required client capability")
    assert failed["statusMessage"] == "Tool execution failed: " + failed["error"]["message"]
    tool_id = exchange.call("tools/call", declared(name="refuse", arguments={}))["result"]["taskId"]
    completed = poll(exchange, tool_id, lambda r: r["status"] == "completed")
    assert completed["result"]["isError"] is True
    assert completed["result"]["content"][0]["text"] == "the tool broke" and "error" not in completed


@pytest.mark.req("XTASK26-15", "XTASK26-21", "XTASK26-45", "XTASK26-48")
def test_a_json_rpc_error_the_tool_raises_fails_the_task_with_it(exchange):
    task_id = exchange.call("tools/call", declared(name="protocol_error", arguments={}))["result"]["taskId"]
    failed = poll(exchange, task_id, lambda r: r["status"] in ("completed", "failed"))
    assert failed["status"] == "failed" and "result" not in failed
    assert failed["error"] == {"code": -32602, "message": "the job cannot run", "data": {"why": "no input"}}
    assert failed["statusMessage"] == "Tool execution failed: the job cannot run"


def test_outside_a_task_a_json_rpc_error_of_a_tool_is_still_an_is_error_result(exchange):
    # tools.py rule 3: only a task of the extension passes the McpError on.
    result = exchange.call("tools/call", {"name": "protocol_error", "arguments": {}, **meta()})["result"]
    assert result["isError"] is True and result["content"][0]["text"].startswith("the job cannot run")


def test_a_gather_is_one_set_of_input_requests_and_a_partial_update_leaves_the_rest(exchange):
    task_id = exchange.call("tools/call", declared(name="multi_input", arguments={}))["result"]["taskId"]
    parked = poll(exchange, task_id, lambda r: r["status"] == "input_required")
    assert list(parked["inputRequests"]) == ["first", "second"]
    assert parked["inputRequests"]["second"]["params"]["message"] == "Second value?"
    exchange.call("tasks/update", declared(taskId=task_id, inputResponses={
        "first": {"action": "accept", "content": {"name": "A"}}}))
    still = exchange.call("tasks/get", declared(taskId=task_id))["result"]
    assert still["status"] == "input_required" and list(still["inputRequests"]) == ["second"]
    exchange.call("tasks/update", declared(taskId=task_id, inputResponses={
        "second": {"action": "accept", "content": {"name": "B"}},
        "first": {"action": "accept", "content": {"name": "late"}}}))      # answered already: ignored
    confirm = poll(exchange, task_id, lambda r: "confirm" in r.get("inputRequests", {}))
    assert list(confirm["inputRequests"]) == ["confirm"]
    exchange.call("tasks/update", declared(taskId=task_id, inputResponses={
        "confirm": {"action": "accept", "content": {"ok": True}}}))
    done = poll(exchange, task_id, lambda r: r["status"] == "completed")
    assert done["result"]["content"][0]["text"] == "Got A and B: accept"


def test_an_expired_task_is_forgotten_and_says_so():
    server = task_server()
    server.tasks.ext.ttl_ms = 50
    with raw_server(server) as (peer, _):
        exchange = Exchange(peer)
        task_id = exchange.call("tools/call", declared(name="wait_for_cancel", arguments={}))["result"]["taskId"]
        time.sleep(0.1)
        error = exchange.call("tasks/get", declared(taskId=task_id))["error"]
        assert (error["code"], error["message"]) == (-32602, "Failed to retrieve task: Task has expired")


@pytest.mark.req("XTASK26-36", "XTASK26-42")
def test_listen_for_task_ids_needs_the_extension_and_delivers_status_changes(exchange):
    refused = exchange.call("subscriptions/listen", {"notifications": {"taskIds": ["x"]}, **meta()})["error"]
    assert refused["code"] == MissingRequiredClientCapabilityError.code
    task_id = exchange.call("tools/call", declared(name="greet", arguments={}))["result"]["taskId"]
    exchange.next_id += 1
    listen_id = exchange.next_id
    listen = {"jsonrpc": "2.0", "id": listen_id, "method": "subscriptions/listen",
              "params": declared(notifications={"taskIds": [task_id, "unknown"]})}
    validate_wire(listen, MODERN_REVISION, "request", sender="client")
    exchange.peer.send(listen)
    acknowledged = exchange.peer.recv()
    validate_wire(acknowledged, MODERN_REVISION, "notification", sender="server")
    assert acknowledged["params"]["notifications"] == {"taskIds": [task_id]}
    poll(exchange, task_id, lambda r: r["status"] == "input_required")
    exchange.call("tasks/update", declared(taskId=task_id, inputResponses={
        "elicit-1": {"action": "accept", "content": {"name": "Ada"}}}))
    notes = [m for m in exchange.seen if m.get("method") == "notifications/tasks"]
    deadline = time.monotonic() + WAIT
    while (not {"input_required", "working"} <= {n["params"]["status"] for n in notes}
           and time.monotonic() < deadline):
        exchange.call("tasks/get", declared(taskId=task_id))
        notes = [m for m in exchange.seen if m.get("method") == "notifications/tasks"]
    assert notes and all(n["params"]["taskId"] == task_id for n in notes)
    assert all(n["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == listen_id for n in notes)
    assert {"input_required", "working"} <= {n["params"]["status"] for n in notes}


# ---------------------------------------------------------------- the client
class Recorder(list):
    def __call__(self, direction, message):
        self.append((direction, message if isinstance(message, dict) else message.to_dict()))


def connect(server, recorder=None, **options):
    client_end, server_end = memory_pair()
    server.serve(server_end)
    transport = TapTransport(client_end, recorder) if recorder is not None else client_end
    options.setdefault("timeout", WAIT)
    return Client(transport, **options)


@pytest.mark.req("XTASK26-2", "XTASK26-3", "XTASK26-12", "XTASK26-13", "XTASK26-23", "XTASK26-24", "XTASK26-25", "XTASK26-26", "XTASK26-31")
def test_call_tool_follows_a_task_and_answers_each_input_request_once():
    asked = []

    def elicitation(request):
        asked.append(request.message)
        time.sleep(0.05)                             # the client polls meanwhile: still one answer a key
        field = "name" if request.message == "Your name?" else "town"
        return {"action": "accept", "content": {field: {"name": "Ada", "town": "Leeds"}[field]}}
    recorder = Recorder()
    with connect(task_server(), recorder, elicitation=elicitation) as client:
        result = client.call_tool("greet", {})
        assert result.content[0].text == "Hello Ada from Leeds"
        assert client.call_tool("double", {"n": 5}).content[0].text == "10"
    assert asked == ["Your name?", "Your town?"]
    sent = [m for d, m in recorder if d == "send"]
    assert any(m.get("method") == "tasks/update" for m in sent)
    for message in sent:
        if message.get("method") in ("tasks/get", "tasks/update", "tasks/cancel"):
            validate_wire(message, MODERN_REVISION, "request", sender="client")


@pytest.mark.req("XTASK26-2")
def test_a_failed_task_raises_its_error_and_a_tool_error_is_a_result():
    with connect(task_server()) as client:                 # no elicitation callback
        with pytest.raises(MissingRequiredClientCapabilityError) as raised:
            client.call_tool("greet", {})
        assert raised.value.data["requiredCapabilities"] == {"elicitation": {"form": {}}}
        with pytest.raises(InvalidParamsError, match="the job cannot run") as raised:
            client.call_tool("protocol_error", {})
        assert raised.value.data == {"why": "no input"}
        refused = client.call_tool("refuse", {})
        assert refused.is_error and refused.content[0].text == "the tool broke"


@pytest.mark.req("XTASK26-34")
def test_timeout_and_cancel_token_cancel_the_task_on_the_server():
    server = task_server()
    with connect(server) as client:
        with pytest.raises(RequestTimeout):
            client.call_tool("wait_for_cancel", {}, timeout=0.2)
        token = CancelToken()
        threading.Timer(0.2, token.cancel).start()
        with pytest.raises(RequestCancelled):
            client.call_tool("wait_for_cancel", {}, cancel=token)
        statuses = [task.status for task in server.tasks.ext._tasks.values()]
        assert statuses == ["cancelled", "cancelled"]


def test_closing_the_connection_cancels_its_tasks_and_ends_their_threads():
    server = task_server()
    seen = threading.Event()

    @server.tool(task_support="required")
    def forever(ctx: Context) -> str:
        seen.set()
        ctx.cancelled.wait(60)
        return "stopped"
    client = connect(server)
    thread = threading.Thread(target=lambda: pytest.raises(Exception, client.call_tool, "forever", {}), daemon=True)
    thread.start()
    assert seen.wait(WAIT)
    task = next(iter(server.tasks.ext._tasks.values()))
    client.close()
    thread.join(WAIT)
    task.thread.join(WAIT)
    assert not task.thread.is_alive() and task.status == "cancelled"
    assert len(server.tasks.ext) == 0


@pytest.mark.req("XTASK26-3")
def test_a_create_task_result_to_another_request_is_an_invalid_response():
    client_end, peer_end = memory_pair()
    from helpers import RawPeer
    peer = RawPeer(peer_end)
    client = Client(client_end, timeout=WAIT, protocol_version=MODERN_REVISION)

    def serve():
        while True:
            message = peer.recv(WAIT)
            if message is None:
                return
            if "id" not in message:
                continue
            task = {"resultType": "task", "taskId": "t1", "status": "working", "createdAt": "2026-01-01T00:00:00Z",
                    "lastUpdatedAt": "2026-01-01T00:00:00Z", "ttlMs": None}
            if message["method"] == "server/discover":
                result = {"resultType": "complete", "supportedVersions": [MODERN_REVISION],
                          "capabilities": {"tools": {}}, "serverInfo": {"name": "s", "version": "1"}}
            else:
                result = task
            peer.send({"jsonrpc": "2.0", "id": message["id"], "result": result})
    threading.Thread(target=serve, daemon=True).start()
    with client:
        with pytest.raises(InternalError, match="answered tools/list with a CreateTaskResult"):
            client.list_tools()
    peer_end.close()


# ---------------------------------------------------------------- over Streamable HTTP
@pytest.mark.req("XTASK26-38")
def test_over_http_the_task_outlives_its_post_and_mcp_name_carries_the_task_id():
    requests = pytest.importorskip("requests")
    from mcp_ref.transports.http.modern import encode_value
    from mcp_ref.transports.http.server.app import start_http
    import json
    server = task_server()
    handle = start_http(server, ("127.0.0.1", 0))
    try:
        def post(method, params, name):
            headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json",
                       "MCP-Protocol-Version": MODERN_REVISION, "Mcp-Method": method}
            if name is not None:
                headers["Mcp-Name"] = encode_value(name)
            body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
            return requests.post(handle.url, data=json.dumps(body), headers=headers, timeout=WAIT)
        created = post("tools/call", declared(name="double", arguments={"n": 4}), "double").json()["result"]
        validate_wire({"jsonrpc": "2.0", "id": 1, "result": created}, MODERN_REVISION, request_method="tools/call")
        wrong = post("tasks/get", declared(taskId=created["taskId"]), "someone-else")
        assert wrong.status_code == 400 and wrong.json()["error"]["code"] == -32020
        assert post("tasks/get", declared(taskId=created["taskId"]), None).status_code == 400
        deadline = time.monotonic() + WAIT
        while True:
            got = post("tasks/get", declared(taskId=created["taskId"]), created["taskId"]).json()["result"]
            if got["status"] == "completed" or time.monotonic() > deadline:
                break
            time.sleep(0.02)
        assert got["result"]["content"][0]["text"] == "8"
        # Our client over HTTP: the same call, followed through tasks/get, answering its questions.
        answers = {"Your name?": {"name": "Bo"}, "Your town?": {"town": "Hull"}}
        with Client.http(handle.url, timeout=WAIT,
                         elicitation=lambda request: {"action": "accept", "content": answers[request.message]}) as client:
            assert client.protocol_version == MODERN_REVISION
            assert client.call_tool("greet", {}).content[0].text == "Hello Bo from Hull"
        # A task still working when the HTTP server shuts down is cancelled, its thread ended.
        post("tools/call", declared(name="wait_for_cancel", arguments={}), "wait_for_cancel")
        working = [t for t in server.tasks.ext._tasks.values() if t.status == "working"]
        assert len(working) == 1
    finally:
        handle.shutdown()
    working[0].thread.join(WAIT)
    assert not working[0].thread.is_alive() and working[0].status == "cancelled"


# ---------------------------------------------------------------- bad input, isolation
@pytest.mark.parametrize("method, params", [
    ("tasks/get", {"taskId": 7}),
    ("tasks/get", {}),
    ("tasks/cancel", {"taskId": None}),
    ("tasks/update", {"taskId": "x"}),
    ("subscriptions/listen", {"notifications": {"taskIds": "not-a-list"}}),
    ("subscriptions/listen", {"notifications": {"taskIds": [1, 2]}}),
])
def test_malformed_task_requests_are_invalid_params(exchange, method, params):
    error = exchange.call(method, declared(**params), sent_ok=False)["error"]
    assert error["code"] == -32602


@pytest.mark.req("XTASK26-51")
def test_with_authorization_a_task_belongs_to_its_subject():
    from helpers import RawPeer
    from mcp_ref.auth.resource_server import AccessToken
    schema_for(MODERN_REVISION)             # Exchange validates every message: skip before serving anything
    server = task_server()
    ends = []
    try:
        for subject in ("alice", "mallory"):
            peer_end, server_end = memory_pair()
            server_end.auth = AccessToken(subject=subject)       # what an authorized transport carries
            server.serve(server_end)
            ends.append(Exchange(RawPeer(peer_end)))
        alice, mallory = ends
        task_id = alice.call("tools/call", declared(name="wait_for_cancel", arguments={}))["result"]["taskId"]
        for method in ("tasks/get", "tasks/cancel"):
            error = mallory.call(method, declared(taskId=task_id))["error"]
            assert error["message"] == "Failed to retrieve task: Task not found"
            assert error["data"] == {"taskId": task_id}
        assert alice.call("tasks/get", declared(taskId=task_id))["result"]["status"] == "working"
        alice.call("tasks/cancel", declared(taskId=task_id))
    finally:
        for session in list(server.sessions):
            session.close()


def test_two_tasks_waiting_for_input_do_not_wake_each_other():
    """A task waiting for its input answers checks expiry at each wake; only an expiry that
    cancelled a task wakes the other waiters, so two waiting tasks sleep, not spin."""
    tasks = ExtTasks(Server("waiting"))
    tasks._tell = lambda task: None                       # no listen stream to tell
    checks = []
    forget = tasks._forget_expired_locked
    tasks._forget_expired_locked = lambda: (checks.append(1), forget())[1]
    records = [_Task(f"t{n}", "slow", tasks.clock(), tasks.wall(), 60_000) for n in range(2)]
    for task in records:
        task.ctx = types.SimpleNamespace(_cancel=lambda: None)     # the tool's context: nothing to stop
        tasks._tasks[task.id] = task
    ended = []

    def wait(task):
        try:
            tasks.ask(task, {"name": ("elicitation/create", {"message": "name?"})})
        except RequestCancelled:
            ended.append(task.id)
    threads = [threading.Thread(target=wait, args=(task,)) for task in records]
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + 5
    while any(task.status != "input_required" for task in records) and time.monotonic() < deadline:
        time.sleep(0.01)
    checks.clear()
    time.sleep(1.5)                                       # past the waits' one-second timeout
    spun = len(checks)
    for task in records:
        tasks._cancel(task, "done")
    for thread in threads:
        thread.join(5)
    assert sorted(ended) == ["t0", "t1"]
    assert spun <= 6, f"the waiting tasks woke each other {spun} times in 1.5 s"
