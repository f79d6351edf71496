"""Small targeted tests for spec requirements that no broader test pins down.

Each test names the requirement ids it proves (``@pytest.mark.req``); the matrix that
maps every requirement of the 2025-11-25 pages to code and tests is
spec_notes/traceability.md (scripts/traceability.py). A requirement mcp_ref does not
meet yet is pinned by a strict xfail test here, so the test flips when it is fixed.
"""
import json
import re
import threading
from datetime import datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

import fuzzing
from features_helpers import connected
from helpers import WAIT
from mcp_ref import Client, Context, Server
from mcp_ref.errors import ApprovalDenied, CapabilityNotSupported, McpError
from mcp_ref.server.tasks.legacy import RELATED_TASK_KEY
from mcp_ref.transports import memory_pair
from mcp_ref.schema.validation import validate

pytest.importorskip("jsonschema")


# ---------------------------------------------------------------------- JSON Schema dialects
@pytest.mark.req("BASE-14", "BASE-16")
def test_a_schema_without_dialect_is_validated_as_2020_12():
    # prefixItems and dependentRequired exist only from 2019-09/2020-12 on.
    tuple_schema = {"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"}]}
    assert validate([1, "a"], tuple_schema) is None
    assert validate(["a", 1], tuple_schema) is not None
    needs = {"type": "object", "dependentRequired": {"card": ["expiry"]}}
    assert validate({"card": 1, "expiry": 2}, needs) is None
    assert "expiry" in validate({"card": 1}, needs)


@pytest.mark.req("BASE-17")
def test_a_declared_dialect_is_the_one_used():
    # draft-07's "dependencies" is not a 2020-12 keyword: only a draft-07 schema enforces it.
    body = {"type": "object", "dependencies": {"card": ["expiry"]}}
    draft7 = {"$schema": "http://json-schema.org/draft-07/schema#", **body}
    assert "expiry" in validate({"card": 1}, draft7)
    assert validate({"card": 1}, body) is None
    # and 2020-12's dependentRequired means nothing to draft-07
    later = {"$schema": "http://json-schema.org/draft-07/schema#", "dependentRequired": {"card": ["expiry"]}}
    assert validate({"card": 1}, later) is None


@pytest.mark.req("BASE-18")
def test_an_unsupported_dialect_is_an_error_naming_it():
    schema = {"$schema": "https://example.com/my-own-dialect", "type": "object",
              "properties": {"a": {"type": "string"}}}
    problem = validate({"a": "fine"}, schema)
    assert problem is not None and "not supported" in problem and "https://example.com/my-own-dialect" in problem
    assert "not supported" in validate({}, {"$schema": 7, "type": "object"})          # not even a string
    known = {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
             "properties": {"a": {"type": "string"}}}
    assert validate({"a": "fine"}, known) is None and "not of type" in validate({"a": 1}, known)


@pytest.mark.req("BASE-18")
def test_a_tool_whose_schema_has_an_unsupported_dialect_answers_an_error(wire_validator):
    server = Server("dialects")
    schema = {"$schema": "https://example.com/my-own-dialect", "type": "object",
              "properties": {"a": {"type": "string"}}}
    server.add_tool(lambda a: a, name="echo", input_schema=schema)
    with connected(server, "2025-11-25", wire_validator) as (client, _, _):
        result = client.call_tool("echo", {"a": "x"})
        assert result.is_error and "not supported" in result.content[0].text


# ---------------------------------------------------------------------- _meta key names
# basic/index#meta: an optional prefix of dot-separated labels (each starting with a
# letter, ending with a letter or digit, hyphens inside) and a slash, then a name
# that begins and ends with an alphanumeric character.
_LABEL = r"[A-Za-z](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
_META_KEY = re.compile(rf"^(?:{_LABEL}(?:\.{_LABEL})*/)?(?:[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)?$")


def _meta_keys(node, out: set) -> set:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "_meta" and isinstance(value, dict):
                out.update(value)
            _meta_keys(value, out)
    elif isinstance(node, list):
        for item in node:
            _meta_keys(item, out)
    return out


@pytest.mark.req("BASE-22", "BASE-23", "BASE-25")
def test_every_meta_key_mcp_ref_sends_is_well_formed(wire_validator):
    assert not _META_KEY.match("1abc.example/x") and not _META_KEY.match("ex-.com/x")
    assert not _META_KEY.match("example.com/-x") and _META_KEY.match("io.modelcontextprotocol/related-task")
    server = Server("meta")

    @server.tool(task_support="optional")
    def work(ctx: Context) -> str:
        ctx.report_progress(1, total=2)
        ctx.log("info", "working")
        return "done"

    with connected(server, "2025-11-25", wire_validator, on_log=lambda *a: None) as (client, _, recorder):
        task = client.call_tool_as_task("work", on_progress=lambda *a: None)
        client.task_result(task.task_id)
        client.call_tool("work", on_progress=lambda *a: None)
    keys = _meta_keys([m for _, m in recorder.records], set())
    assert {"progressToken", RELATED_TASK_KEY} <= keys
    assert all(_META_KEY.match(key) for key in keys), keys


# ---------------------------------------------------------------------- Streamable HTTP: session id
class _Recording(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def _send(self, status, body=b"", headers=()):
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def _serve(handler) -> tuple:
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    return server, thread


@pytest.mark.req("TRN-41")
def test_the_session_id_is_never_sent_to_another_origin_on_a_redirect():
    """security_best_practices#session-hijacking: the client keeps the session id to the
    server that issued it. A server that redirects a POST or a DELETE elsewhere gets
    ``RedirectRefused``: the other origin is sent nothing, the session id least of all."""
    from mcp_ref.transports.http.client.common import RedirectRefused
    seen_elsewhere = []

    class Elsewhere(_Recording):
        def do_POST(self):
            seen_elsewhere.append(dict(self.headers))
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            self._send(202)

        do_GET = do_DELETE = do_POST

    other, other_thread = _serve(Elsewhere)
    target = f"http://127.0.0.1:{other.server_address[1]}/mcp"

    class Issuer(_Recording):
        def do_POST(self):
            message = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            if message.get("method") == "initialize":
                result = {"protocolVersion": "2025-11-25", "capabilities": {},
                          "serverInfo": {"name": "issuer", "version": "1"}}
                body = json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}).encode()
                return self._send(200, body, [("Mcp-Session-Id", "secret-session-7")])
            self._send(307, b"", [("Location", target)])

        def do_GET(self):
            self._send(405)

        def do_DELETE(self):
            self._send(307, b"", [("Location", target)])

    issuer, issuer_thread = _serve(Issuer)
    try:
        client = Client.http(f"http://127.0.0.1:{issuer.server_address[1]}/mcp", timeout=5,
                             protocol_version="2025-11-25")
        try:
            with pytest.raises(RedirectRefused):
                client.connect()                # notifications/initialized is redirected
        finally:
            client.close()                      # and so would the DELETE be
        assert seen_elsewhere == []
    finally:
        for server, thread in ((issuer, issuer_thread), (other, other_thread)):
            server.shutdown()
            server.server_close()
            thread.join(WAIT)


# ---------------------------------------------------------------------- tasks
def _task_server() -> tuple:
    server = Server("task-requirements")
    gate, reported = threading.Event(), threading.Event()

    @server.tool(task_support="optional")
    def add(a: int, b: int) -> int:
        return a + b

    @server.tool(task_support="required")
    def wait_gate(ctx: Context) -> str:
        gate.wait(WAIT)
        return "opened"

    @server.tool(task_support="optional")
    def stubborn(ctx: Context) -> str:
        """Keeps reporting progress after its task was cancelled."""
        ctx.report_progress(1)
        ctx.cancelled.wait(WAIT)
        gate.wait(WAIT)
        ctx.report_progress(2)
        reported.set()
        return "ignored the cancellation"

    return server, gate, reported


@pytest.mark.req("TASK-18", "TASK-62")
def test_task_ids_are_distinct_and_carry_at_least_128_random_bits(wire_validator):
    server, *_ = _task_server()
    with connected(server, "2025-11-25", wire_validator) as (client, _, _):
        ids = [client.call_tool_as_task("add", {"a": i, "b": 1}).task_id for i in range(20)]
        assert sorted(t.task_id for t in client.list_tasks()) == sorted(ids)     # each one kept, under its id
        assert client.task_result(ids[7]).content[0].text == "8"
    assert len(set(ids)) == len(ids)
    for task_id in ids:
        assert isinstance(task_id, str) and re.fullmatch(r"[A-Za-z0-9_-]{22,}", task_id), task_id


def _iso(text: str) -> datetime:
    return datetime.strptime(text.replace("Z", "+00:00"), "%Y-%m-%dT%H:%M:%S.%f%z") if "." in text \
        else datetime.strptime(text.replace("Z", "+00:00"), "%Y-%m-%dT%H:%M:%S%z")


@pytest.mark.req("TASK-28", "TASK-29")
def test_created_at_and_last_updated_at_are_iso_8601_and_move_with_the_status(wire_validator):
    server, gate, _ = _task_server()
    with connected(server, "2025-11-25", wire_validator) as (client, _, recorder):
        task = client.call_tool_as_task("wait_gate")
        created = _iso(task.created_at)
        assert _iso(task.last_updated_at) >= created
        working = client.get_task(task.task_id)
        assert working.created_at == task.created_at
        gate.set()
        client.task_result(task.task_id)
        done = client.get_task(task.task_id)
        assert done.status == "completed" and done.created_at == task.created_at
        assert _iso(done.last_updated_at) >= _iso(working.last_updated_at)
        listed = [t for t in client.list_tasks() if t.task_id == task.task_id]
        assert listed and _iso(listed[0].created_at) == created
    for _, message in recorder.records:
        result = message.get("result") or {}
        body = result.get("task", result) if isinstance(result, dict) else {}
        if isinstance(body, dict) and "taskId" in body:
            _iso(body["createdAt"]), _iso(body["lastUpdatedAt"])


@pytest.mark.req("TASK-39", "TASK-40", "TASK-41", "TASK-53")
def test_the_task_id_param_wins_over_a_related_task_meta(wire_validator):
    server, *_ = _task_server()
    with connected(server, "2025-11-25", wire_validator) as (client, _, _):
        first = client.call_tool_as_task("add", {"a": 1, "b": 1})
        second = client.call_tool_as_task("add", {"a": 2, "b": 2})
        client.task_result(first.task_id)
        client.task_result(second.task_id)
        misleading = {"taskId": first.task_id, "_meta": {RELATED_TASK_KEY: {"taskId": second.task_id}}}
        got = client.session.request("tasks/get", misleading)
        assert got["taskId"] == first.task_id and "_meta" not in got
        result = client.session.request("tasks/result", misleading)
        assert result["content"][0]["text"] == "2"
        assert result["_meta"] == {RELATED_TASK_KEY: {"taskId": first.task_id}}
        with pytest.raises(McpError) as info:
            client.session.request("tasks/cancel", misleading)
        assert info.value.code == -32602                 # the first task is completed: not the second


@pytest.mark.req("TASK-7")
def test_the_client_refuses_a_plain_call_of_a_required_task_tool(wire_validator):
    server, gate, _ = _task_server()
    gate.set()
    with connected(server, "2025-11-25", wire_validator) as (client, _, recorder):
        client.list_tools()
        with pytest.raises(CapabilityNotSupported):
            client.call_tool("wait_gate")
        assert not [m for m in recorder.sent() if m.get("method") == "tools/call"]


@pytest.mark.req("PROG-8")
def test_no_task_progress_after_the_task_is_terminal(wire_validator):
    server, gate, reported = _task_server()
    with connected(server, "2025-11-25", wire_validator) as (client, _, recorder):
        task = client.call_tool_as_task("stubborn", on_progress=lambda *a: None)
        recorder.wait_for(lambda d, m: d == "receive" and m.get("method") == "notifications/progress")
        assert client.cancel_task(task.task_id).status == "cancelled"
        answered = len(recorder.records)
        gate.set()                      # the cancelled tool reports once more
        assert reported.wait(WAIT)
        client.ping()                   # whatever the tool sent is read before this answer
        late = [m for d, m in recorder.records[answered:] if d == "receive"
                and m.get("method") == "notifications/progress"]
        assert late == []


@pytest.mark.req("TASK-28", "TASK-29")
def test_task_timestamps_are_the_receivers_clock_in_iso_8601(wire_validator):
    server, gate, _ = _task_server()
    ticks = iter([1700000000.25, 1700000001.5, 1700000002.75, 1700000003.0, 1700000004.0])
    server.tasks.wall = lambda: next(ticks)
    gate.set()
    with connected(server, "2025-11-25", wire_validator) as (client, _, _):
        task = client.call_tool_as_task("wait_gate")
        assert task.created_at == "2023-11-14T22:13:20.250Z" == task.last_updated_at
        client.task_result(task.task_id)
        done = client.get_task(task.task_id)
    assert done.status == "completed" and done.created_at == "2023-11-14T22:13:20.250Z"
    assert done.last_updated_at == "2023-11-14T22:13:21.500Z"


@pytest.mark.req("TASK-50", "TASK-21")
def test_a_cancelled_task_stays_cancelled_when_its_tool_returns_anyway(wire_validator):
    server, gate, reported = _task_server()
    with connected(server, "2025-11-25", wire_validator) as (client, _, _):
        task = client.call_tool_as_task("stubborn")
        assert client.cancel_task(task.task_id).status == "cancelled"
        gate.set()                      # the tool ignores its cancellation and returns a result
        assert reported.wait(WAIT)
        client.ping()
        with pytest.raises(McpError) as info:
            client.task_result(task.task_id)
        assert info.value.code == -32602 and "cancelled" in str(info.value)
        assert client.get_task(task.task_id).status == "cancelled"


@pytest.mark.req("CANC-1", "SCHEMA-13")
def test_cancelling_a_request_after_its_reply_sends_nothing(wire_validator):
    server, *_ = _task_server()
    with connected(server, "2025-11-25", wire_validator) as (client, _, recorder):
        pending = client.session.start_request("tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}})
        assert pending.result()["content"][0]["text"] == "3"
        pending.cancel("too late")
        client.ping()
        assert not [m for m in recorder.sent() if m.get("method") == "notifications/cancelled"]
        late = client.session.start_request("tools/call", {"name": "wait_gate", "arguments": {}}, timeout=WAIT)
        late.cancel("now")              # still in flight: this one is cancelled at the peer
        cancel = recorder.wait_for(lambda d, m: m.get("method") == "notifications/cancelled")
        assert cancel["params"] == {"requestId": late.id, "reason": "now"}


@pytest.mark.req("ELIC-30", "ELIC-5")
def test_a_url_elicitation_to_a_2025_06_18_client_is_invalid_params():
    """Before 2025-11-25 there is no URL mode: a client of that revision answers -32602
    even when it has a URL callback."""
    client_end, peer_end = memory_pair()
    client = Client(client_end, timeout=WAIT, protocol_version="2025-06-18",
                    elicitation=lambda request: {"action": "decline"},
                    elicitation_url=lambda request: {"action": "accept"})
    peer = fuzzing.memory_peer(peer_end)
    asked = []

    def handshake():
        message = peer.recv(WAIT)
        asked.append(message["params"]["capabilities"])
        result = dict(fuzzing.SERVER_RESULTS["initialize"], protocolVersion="2025-06-18")
        peer.send(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}).encode())
    helper = threading.Thread(target=handshake, daemon=True)
    helper.start()
    with client:
        helper.join(WAIT)
        peer.send(json.dumps({"jsonrpc": "2.0", "id": "u1", "method": "elicitation/create", "params": {
            "mode": "url", "message": "m", "url": "https://example.com/x", "elicitationId": "e1"}}).encode())
        peer.send(json.dumps({"jsonrpc": "2.0", "id": "f1", "method": "elicitation/create", "params": {
            "message": "m", "requestedSchema": {"type": "object", "properties": {}}}}).encode())
        answers = {}
        while len(answers) < 2:
            message = peer.recv(WAIT)
            if message.get("id") in ("u1", "f1"):
                answers[message["id"]] = message
    assert answers["u1"]["error"]["code"] == -32602
    assert answers["f1"]["result"] == {"action": "decline"}
    assert asked == [{"elicitation": {}}]          # 2025-06-18 has no modes: {} means form


# ---------------------------------------------------------------------- tools
@pytest.mark.req("TOOL-5")
def test_an_input_schema_that_is_not_an_object_schema_is_refused_at_registration():
    server = Server("schemas")
    for bad in ([], "object", {"type": "string"}, {"properties": {}}, 7):
        with pytest.raises(ValueError, match="inputSchema must be a JSON Schema object"):
            server.add_tool(lambda: "x", name="bad", input_schema=bad)
    with pytest.raises(ValueError, match="outputSchema must be a JSON Schema object"):
        server.add_tool(lambda: "x", name="bad", output_schema={"type": "array"})
    assert server.add_tool(lambda: "x", name="good", input_schema={"type": "object"}) is not None


@pytest.mark.req("TOOL-6")
def test_tool_annotations_change_nothing_the_client_does(wire_validator):
    """Annotations are untrusted hints: a tool claiming to be read-only still goes
    through the approval hook, which sees the claim as data."""
    server = Server("annotated")
    server.add_tool(lambda: "deleted everything", name="wipe",
                    annotations={"readOnlyHint": True, "destructiveHint": False})
    asked = []

    def approve(request):
        asked.append(request)
        return None                                 # deny

    with connected(server, "2025-11-25", wire_validator, on_approve=approve) as (client, _, recorder):
        listed = client.list_tools()
        assert listed[0].annotations.read_only_hint is True
        with pytest.raises(ApprovalDenied):
            client.call_tool("wipe")
        assert len(asked) == 1
        assert not [m for m in recorder.sent() if m.get("method") == "tools/call"]


# ---------------------------------------------------------------------- elicitation
@pytest.mark.req("ELIC-13")
def test_a_url_elicitation_completion_goes_only_to_the_session_that_was_asked(wire_validator):
    server = Server("completion-notice")

    def accept(request):
        return {"action": "accept"}

    with connected(server, "2025-11-25", wire_validator, elicitation_url=accept) as (client_a, session_a, rec_a), \
            connected(server, "2025-11-25", wire_validator, elicitation_url=accept) as (client_b, _, rec_b):
        session_a.complete_elicitation("for-a-only")
        rec_a.wait_for(lambda d, m: m.get("method") == "notifications/elicitation/complete")
        client_b.ping()
        client_a.ping()
        notices = [m for _, m in rec_a.records if m.get("method") == "notifications/elicitation/complete"]
        assert [m["params"]["elicitationId"] for m in notices] == ["for-a-only"]
        assert not [m for _, m in rec_b.records if m.get("method") == "notifications/elicitation/complete"]


# ---------------------------------------------------------------------- sampling: model hints
@pytest.mark.req("SCHEMA-19")
def test_model_hints_are_evaluated_in_order_and_an_empty_hint_is_skipped():
    from mcp_ref.types import select_model
    models = ["a-opus", "b-sonnet", "c-haiku"]
    assert select_model(models, {"hints": [{"name": "haiku"}, {"name": "sonnet"}]}) == "c-haiku"
    assert select_model(models, {"hints": [{"name": "gpt"}, {"name": "sonnet"}]}) == "b-sonnet"
    assert select_model(models, {"hints": [{"name": ""}, {}, {"name": "sonnet"}]}) == "b-sonnet"


# ---------------------------------------------------------------------- roots, URL elicitation errors, passthrough
@pytest.mark.req("ROOT-3", "ROOT-5")
def test_roots_given_as_objects_are_checked_too():
    from mcp_ref.client.roots import as_roots
    from mcp_ref.types import Root
    assert as_roots([Root(uri="file:///tmp", name="t")])[0].name == "t"
    with pytest.raises((TypeError, ValueError)):
        as_roots([Root(uri="file:///tmp", name=5)])
    with pytest.raises((TypeError, ValueError)):
        as_roots([Root(uri="https://example.com/not-a-file", name="web")])


@pytest.mark.req("ROOT-2")
def test_set_roots_after_connecting_without_roots_is_refused():
    server = Server("no-roots")
    with connected(server, "2025-11-25") as (client, _, recorder):
        with pytest.raises(CapabilityNotSupported):
            client.set_roots(["file:///tmp"])
        client.ping()
        assert not [m for m in recorder.sent() if m.get("method") == "notifications/roots/list_changed"]
    with connected(Server("roots"), "2025-11-25", roots=[]) as (client, _, recorder):
        client.set_roots(["file:///tmp"])
        recorder.wait_for(lambda d, m: m.get("method") == "notifications/roots/list_changed")


@pytest.mark.req("ELIC-17", "ELIC-18", "ELIC-19")
def test_a_url_elicitation_required_error_holds_only_url_elicitations_with_ids():
    from mcp_ref.client.elicitation import url_elicitation, url_elicitation_required
    good = url_elicitation("Connect", "https://example.com/c", "e1")
    error = url_elicitation_required([good])
    assert error.code == -32042 and error.data == {"elicitations": [good]}
    for bad in ([dict(good, mode="form")], [{k: v for k, v in good.items() if k != "elicitationId"}],
                [dict(good, elicitationId=7)], []):
        with pytest.raises(ValueError):
            url_elicitation_required(bad)
    with pytest.raises(TypeError):
        url_elicitation(5, "https://example.com/c", "e1")


@pytest.mark.req("TASK-5")
def test_a_listed_tool_without_task_support_is_refused_as_a_task(wire_validator):
    server, *_ = _task_server()
    server.add_tool(lambda: "plain", name="plain")          # no execution member at all
    with connected(server, "2025-11-25", wire_validator) as (client, _, recorder):
        client.list_tools()
        with pytest.raises(CapabilityNotSupported):
            client.call_tool_as_task("plain")
        assert not [m for m in recorder.sent() if m.get("method") == "tools/call"]


@pytest.mark.req("RES-9", "PROM-5")
def test_a_read_resource_result_from_the_function_is_sent_as_it_is(wire_validator):
    from mcp_ref.types import BlobResourceContents, ReadResourceResult
    server = Server("passthrough")
    server.add_resource(lambda: ReadResourceResult(contents=[BlobResourceContents(
        uri="x://blob", blob="AAEC", mime_type="application/octet-stream")]), "x://blob")
    server.add_resource(lambda: b"\x00\x01\x02", "x://bytes")
    server.add_resource(lambda: [1, "two"], "x://values")         # not contents: sent as JSON text
    with connected(server, "2025-11-25", wire_validator) as (client, _, _):
        assert client.read_resource("x://blob").contents[0].blob == "AAEC"
        assert client.read_resource("x://bytes").contents[0].blob == "AAEC"
        values = client.read_resource("x://values").contents
        assert [(v.text, v.mime_type) for v in values] == [('[1, "two"]', "application/json")]


# ---------------------------------------------------------------------- same origin, prompts, sampling with tools
@pytest.mark.req("TRN-8", "TRN-9")
def test_a_server_not_bound_to_loopback_admits_its_own_origin_only():
    from mcp_ref.transports.http.server.app import HttpApp
    app = HttpApp(Server("origins"), host="192.0.2.10")
    assert app.origin_allowed("http://mcp.example:8080", "mcp.example:8080")
    assert app.origin_allowed(None, "mcp.example:8080")               # no Origin: not a browser
    assert not app.origin_allowed("http://evil.example", "mcp.example:8080")
    assert not app.origin_allowed("http://localhost:8080", "mcp.example:8080")
    assert not app.origin_allowed("null", "mcp.example:8080")


@pytest.mark.req("PROM-10")
def test_a_prompt_returning_a_get_prompt_result_is_sent_as_it_is(wire_validator):
    from mcp_ref.types import GetPromptResult, PromptMessage, TextContent
    server = Server("prompts")
    server.add_prompt(lambda: GetPromptResult(messages=[PromptMessage(role="assistant", content=TextContent(
        text="as given"))], description="kept"), name="given")
    with connected(server, "2025-11-25", wire_validator) as (client, _, _):
        result = client.get_prompt("given")
    assert result.description == "kept" and result.messages[0].role == "assistant"
    assert result.messages[0].content.text == "as given"


@pytest.mark.req("SAMP-17", "SAMP-7", "SAMP-8")
def test_a_server_never_sends_broken_tool_messages():
    from types import SimpleNamespace
    from mcp_ref.client.sampling import create_message

    def never(*args, **kwargs):
        raise AssertionError("a broken sampling request was sent")
    peer = SimpleNamespace(protocol_version="2025-11-25", client_capabilities={"sampling": {"tools": {}}},
                           request=never)
    use = {"type": "tool_use", "id": "t1", "name": "weather", "input": {}}
    result = {"type": "tool_result", "toolUseId": "t1", "content": [{"type": "text", "text": "sunny"}]}
    broken = [
        [{"role": "user", "content": {"type": "text", "text": "hi"}}, {"role": "assistant", "content": [use]},
         {"role": "user", "content": {"type": "text", "text": "no result"}}],
        [{"role": "user", "content": {"type": "text", "text": "hi"}}, {"role": "assistant", "content": [use]},
         {"role": "user", "content": [result, {"type": "text", "text": "mixed"}]}],
        [{"role": "user", "content": {"type": "text", "text": "hi"}}, {"role": "assistant", "content": [use]}],
    ]
    for messages in broken:
        with pytest.raises(ValueError):
            create_message(peer, messages, max_tokens=10, tools=[{"name": "weather", "inputSchema": {
                "type": "object"}}])
