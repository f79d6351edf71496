"""Self-tests of the ``wire_validator`` fixture (tests/conftest.py), per revision,
and one real client/server transcript validated against every revision."""
import json

import pytest

from conftest import REVISIONS, validate_wire

pytest.importorskip("jsonschema")


def _initialize(revision):
    return {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": revision, "capabilities": {},
                       "clientInfo": {"name": "test", "version": "1.0"}}}


GOOD = [
    # (message, request_method, kind)
    ("initialize", None, "request"),
    ({"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": "REV", "capabilities": {"tools": {"listChanged": True}},
                                            "serverInfo": {"name": "demo", "version": "1.0"}}},
     "initialize", "result"),
    ({"jsonrpc": "2.0", "method": "notifications/initialized"}, None, "notification"),
    ({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "add", "arguments": {"a": 1, "b": 2}}},
     None, "request"),
    ({"jsonrpc": "2.0", "id": 2, "result": {"content": [{"type": "text", "text": "3"}], "isError": False}},
     "tools/call", "result"),
    ({"jsonrpc": "2.0", "id": "p-1", "method": "ping"}, None, "request"),
    ({"jsonrpc": "2.0", "id": "p-1", "result": {}}, "ping", "result"),
    ({"jsonrpc": "2.0", "id": 3, "result": {"tools": [{"name": "add", "inputSchema": {"type": "object"}}]}},
     "tools/list", "result"),
    ({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": 2, "progress": 0.5,
                                                                       "total": 1}}, None, "notification"),
    ({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 2, "reason": "timed out"}},
     None, "notification"),
    ({"jsonrpc": "2.0", "id": 4, "error": {"code": -32601, "message": "Method not found: nope"}}, None, "error"),
    # an unreadable request id is answered "id": null (JSON-RPC 2.0): the one exemption
    ({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}}, None, "error"),
]

BAD = [
    # (message, request_method, what the failure mentions)
    ({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"arguments": {}}}, None, "name"),
    ({"jsonrpc": "2.0", "id": None, "method": "ping"}, None, "None"),
    ({"jsonrpc": "1.0", "id": 1, "method": "ping"}, None, "2.0"),
    ({"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": "REV", "capabilities": {}}}, "initialize",
     "serverInfo"),
    ({"jsonrpc": "2.0", "id": 2, "result": {"content": "3"}}, "tools/call", "content"),
    ({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progress": 1}}, None, "progressToken"),
    ({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": True}}, None, "True"),
    ({"jsonrpc": "2.0", "id": 4, "error": {"code": "oops", "message": "bad code"}}, None, "oops"),
    ({"jsonrpc": "2.0", "id": 5, "method": "tools/invoke", "params": {}}, None, "not defined"),
    ({"jsonrpc": "2.0", "id": 6}, None, "not a request"),
    # the id-null exemption is narrow: nothing but a well-formed error response has it
    ({"jsonrpc": "2.0", "id": None, "result": {}}, "ping", "None"),
    ({"jsonrpc": "2.0", "id": None, "method": "notifications/initialized"}, None, "None"),
    ({"jsonrpc": "2.0", "id": None, "error": {"code": "oops", "message": "bad code"}}, None, "oops"),
    ({"jsonrpc": "2.0", "id": None, "error": {"code": -32700}}, None, "message"),
    ({"jsonrpc": "2.0", "id": None, "error": "Parse error"}, None, "Parse error"),
    ({"jsonrpc": "1.0", "id": None, "error": {"code": -32700, "message": "Parse error"}}, None, "2.0"),
]


def _fill(message, revision):
    if message == "initialize":
        return _initialize(revision)
    return json.loads(json.dumps(message).replace('"REV"', json.dumps(revision)))


@pytest.mark.parametrize("revision", REVISIONS)
@pytest.mark.parametrize("message,request_method,kind", GOOD)
def test_known_good_messages_pass(wire_validator, revision, message, request_method, kind):
    message = _fill(message, revision)
    assert wire_validator.check(message, revision, request_method, kind=kind) == message
    # the same message as a JSON line
    wire_validator.check(json.dumps(message), revision, request_method)


@pytest.mark.parametrize("revision", REVISIONS)
@pytest.mark.parametrize("message,request_method,mention", BAD)
def test_known_bad_messages_fail(wire_validator, revision, message, request_method, mention):
    with pytest.raises(AssertionError, match=mention):
        wire_validator.check(_fill(message, revision), revision, request_method)


@pytest.mark.parametrize("revision", REVISIONS)
def test_method_table_is_read_from_the_schema(wire_validator, revision):
    methods = wire_validator.methods(revision)
    assert methods["tools/call"] == "CallToolRequest"
    assert methods["notifications/cancelled"] == "CancelledNotification"
    assert methods["ping"] == "PingRequest"


def test_methods_follow_their_revision(wire_validator):
    elicit = {"jsonrpc": "2.0", "id": 7, "method": "elicitation/create",
              "params": {"message": "Name?", "requestedSchema": {"type": "object", "properties": {}}}}
    wire_validator.check(elicit, "2025-06-18")
    with pytest.raises(AssertionError, match="not defined in revision 2025-03-26"):
        wire_validator.check(elicit, "2025-03-26")
    # a field the revision does not know is tolerated by the envelope but the
    # message field added in 2025-03-26 must be a string
    progress = {"jsonrpc": "2.0", "method": "notifications/progress",
                "params": {"progressToken": 1, "progress": 2, "message": 3}}
    with pytest.raises(AssertionError, match="message"):
        wire_validator.check(progress, "2025-03-26")


def test_kind_and_sender_are_checked(wire_validator):
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    with pytest.raises(AssertionError, match="expected a notification"):
        wire_validator.check(ping, "2025-06-18", kind="notification")
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "x"}}
    wire_validator.check(call, "2025-06-18", sender="client")
    with pytest.raises(AssertionError, match="a server does not send tools/call"):
        wire_validator.check(call, "2025-06-18", sender="server")
    wire_validator.check(ping, "2025-06-18", sender="server")


@pytest.mark.parametrize("revision", REVISIONS)
def test_batches_only_in_2025_03_26(wire_validator, revision):
    batch = [{"jsonrpc": "2.0", "id": 1, "method": "ping"}, {"jsonrpc": "2.0", "method": "notifications/initialized"}]
    if revision == "2025-03-26":
        wire_validator.check(batch, revision)
        with pytest.raises(AssertionError, match="mixes"):
            wire_validator.check(batch + [{"jsonrpc": "2.0", "id": 1, "result": {}}], revision)
    else:
        with pytest.raises(AssertionError, match="batches are not part"):
            wire_validator.check(batch, revision)


def test_error_without_id_follows_the_revision(wire_validator):
    """An error to an unreadable request: the id may be left out only in 2025-11-25;
    ``"id": null`` (plain JSON-RPC 2.0, what we send) is outside every revision's schema,
    and the validator's one exemption accepts it as an error response only."""
    from jsonschema import Draft7Validator
    no_id = {"jsonrpc": "2.0", "error": {"code": -32700, "message": "Parse error"}}
    wire_validator.check(no_id, "2025-11-25")
    with pytest.raises(AssertionError, match="id"):
        wire_validator.check(no_id, "2025-06-18")
    for revision in REVISIONS:                   # the schemas themselves refuse null
        _, defs = wire_validator.definitions(revision)
        assert not Draft7Validator(defs["RequestId"]).is_valid(None)
        wire_validator.check({**no_id, "id": None}, revision, kind="error")


@pytest.mark.parametrize("revision", REVISIONS)
def test_a_real_sessions_answers_to_unreadable_ids_validate(wire_validator, revision):
    """What our server answers to frames whose id cannot be read is an error with
    ``"id": null``, valid under the exemption; a readable id is echoed as usual."""
    from helpers import initialize_raw, raw_server
    from mcp_ref import Server
    with raw_server(Server("ids")) as (peer, _):
        initialize_raw(peer, revision)
        answers = []
        for line in ('{"jsonrpc": "2.0", "id": 1, "method": "ping"', '{"jsonrpc": "2.0", "id": true, "method": "ping"}',
                     '{"jsonrpc": "2.0", "id": 1.5, "method": "ping"}', '{"jsonrpc": "2.0", "id": 7, "method": 3}'):
            peer.send(line)
            answers.append(peer.recv())
        peer.ping()
    assert [(a["id"], a["error"]["code"]) for a in answers] == [(None, -32700), (None, -32600), (None, -32600),
                                                                 (7, -32600)]
    for answer in answers:
        wire_validator.check(answer, revision, kind="error")


def test_module_level_shortcut():
    validate_wire({"jsonrpc": "2.0", "method": "notifications/initialized"}, "2024-11-05", "notification")
    with pytest.raises(AssertionError):
        validate_wire({"jsonrpc": "2.0", "method": "notifications/initialized"}, "2024-11-05", "request")


def test_transcript_pairs_results_with_requests(wire_validator):
    records = [
        ("send", {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
        ("receive", {"jsonrpc": "2.0", "id": 1, "result": {"tools": [{"name": "t", "inputSchema": {"type": "object"}}]}}),
        ("receive", {"jsonrpc": "2.0", "id": 1, "method": "ping"}),     # the peer's own id 1
        ("send", {"jsonrpc": "2.0", "id": 1, "result": {}}),
    ]
    assert wire_validator.check_transcript(records, "2025-06-18") == 4
    records[1] = ("receive", {"jsonrpc": "2.0", "id": 1, "result": {"tools": [{"name": "t"}]}})
    with pytest.raises(AssertionError, match="inputSchema"):
        wire_validator.check_transcript(records, "2025-06-18")


@pytest.mark.req("BASE-1", "BASE-2", "BASE-7", "LIFE-2", "PROG-1", "TRN-51")
@pytest.mark.parametrize("revision", REVISIONS)
def test_a_real_session_validates(wire_validator, revision):
    """Everything our Client and Server put on the wire in a short session is valid
    for the negotiated revision."""
    from mcp_ref import Client, Context, Server
    from mcp_ref.transports import TapTransport, memory_pair

    server = Server("schema-check", version="1.0", instructions="check every message")

    @server.tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    @server.tool
    def count(n: int, ctx: Context) -> str:
        """Count to n with progress."""
        for i in range(1, n + 1):
            ctx.report_progress(i, total=n, message=f"at {i}")
        return f"counted to {n}"

    records = []
    client_end, server_end = memory_pair()
    session = server.serve(server_end)
    client = Client(TapTransport(client_end, lambda d, m: records.append((d, m))), protocol_version=revision,
                    timeout=10)
    try:
        with client:
            assert client.protocol_version == revision
            assert [t.name for t in client.list_tools()] == ["add", "count"]
            assert client.call_tool("add", {"a": 1, "b": 2}).content[0].text == "3"
            seen = []
            client.call_tool("count", {"n": 2}, on_progress=lambda p, t, m: seen.append(p))
            assert seen == [1, 2]
            client.ping()
    finally:
        session.close()
    assert wire_validator.check_transcript(records, revision) >= 10
