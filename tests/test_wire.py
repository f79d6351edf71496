"""What a ``Server`` session answers to raw lines, good and bad (Spec: basic/index,
basic/lifecycle#initialization, 2025-03-26 basic/index#batching).

One table: a scripted raw peer writes a line into a server session through
``MemoryTransport.send_raw`` and reads the raw reply. Every row is followed by
a ``ping`` that must be answered ``{}``: no bad input kills the session.
"""
import json
import threading

import pytest

from helpers import WAIT, RawPeer, initialize_raw, raw_server
from mcp_ref import Server
from mcp_ref.errors import INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, PARSE_ERROR

LATEST = "2025-11-25"
LIMIT = 300                     # max_message_size of the server's transport in every row


def _crash(ctx, params):
    raise RuntimeError("database password is hunter2")


def make_server() -> Server:
    server = Server("wire-test", version="9.9", capabilities={"tools": {"listChanged": False}})
    # A raw row of the request-handler table whose handler crashes (a tool
    # exception would be an isError result by design, not -32603).
    server._request_handlers["test/crash"] = (_crash, None)
    return server


def err(code, id):
    """Expect one error response with ``code`` and ``id``."""
    return ("error", code, id)


SILENT = ("silent",)
INIT_BATCH = '[{"jsonrpc":"2.0","id":"b1","method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"},' \
             '{"jsonrpc":"2.0","id":"b2","method":"tools/list"}]'

# (row id, revision to initialize with or None for a fresh session, the raw line, what must come back)
ROWS = [
    ("invalid JSON", LATEST, '{"jsonrpc": "2.0", "id": 1, "method": ', err(PARSE_ERROR, None)),
    ("not JSON at all", LATEST, "hello", err(PARSE_ERROR, None)),
    ("JSON but not an object", LATEST, "42", err(INVALID_REQUEST, None)),
    ("missing jsonrpc", LATEST, '{"id":7,"method":"tools/list"}', err(INVALID_REQUEST, 7)),
    ("wrong jsonrpc", LATEST, '{"jsonrpc":"1.0","id":"s7","method":"tools/list"}', err(INVALID_REQUEST, "s7")),
    ("null id", LATEST, '{"jsonrpc":"2.0","id":null,"method":"tools/list"}', err(INVALID_REQUEST, None)),
    ("boolean id", LATEST, '{"jsonrpc":"2.0","id":true,"method":"tools/list"}', err(INVALID_REQUEST, None)),
    ("non-string method", LATEST, '{"jsonrpc":"2.0","id":7,"method":42}', err(INVALID_REQUEST, 7)),
    ("params not an object", LATEST, '{"jsonrpc":"2.0","id":7,"method":"tools/list","params":["x"]}',
     err(INVALID_REQUEST, 7)),
    ("unknown method", LATEST, '{"jsonrpc":"2.0","id":7,"method":"tools/invoke","params":{}}',
     err(METHOD_NOT_FOUND, 7)),
    ("bad params", LATEST, '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":5}}',
     err(INVALID_PARAMS, 7)),
    ("unknown tool", LATEST, '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"nope"}}',
     err(INVALID_PARAMS, 7)),
    ("handler crash", LATEST, '{"jsonrpc":"2.0","id":7,"method":"test/crash"}', err(INTERNAL_ERROR, 7)),
    ("batch under 2025-11-25", LATEST, INIT_BATCH, err(INVALID_REQUEST, None)),
    ("batch under 2025-06-18", "2025-06-18", INIT_BATCH, err(INVALID_REQUEST, None)),
    ("batch under 2025-03-26", "2025-03-26", INIT_BATCH,
     ("batch", [{"jsonrpc": "2.0", "id": "b1", "result": {}},
                {"jsonrpc": "2.0", "id": "b2", "result": {"tools": []}}])),
    ("batch with a bad item under 2025-03-26", "2025-03-26",
     '[{"jsonrpc":"2.0","id":"b1","method":"ping"},{"jsonrpc":"2.0","id":"b3","method":5}]',
     ("batch", [{"jsonrpc": "2.0", "id": "b1", "result": {}},
                {"jsonrpc": "2.0", "id": "b3", "error": {"code": INVALID_REQUEST}}])),
    ("empty batch", "2025-03-26", "[]", err(INVALID_REQUEST, None)),
    ("batch of notifications only", "2025-03-26",
     '[{"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","method":"notifications/x"}]',
     SILENT),
    ("oversized message", LATEST,
     '{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"pad":"' + "x" * (LIMIT * 2) + '"}}',
     err(INVALID_REQUEST, None)),
    ("request before initialize", None, '{"jsonrpc":"2.0","id":7,"method":"tools/list"}', err(INVALID_REQUEST, 7)),
    ("unknown method before initialize", None, '{"jsonrpc":"2.0","id":7,"method":"x/y"}', err(METHOD_NOT_FOUND, 7)),
    ("second initialize", LATEST,
     '{"jsonrpc":"2.0","id":7,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},'
     '"clientInfo":{"name":"again","version":"1"}}}', err(INVALID_REQUEST, 7)),
    ("initialize without protocolVersion", None,
     '{"jsonrpc":"2.0","id":7,"method":"initialize","params":{"capabilities":{}}}', err(INVALID_PARAMS, 7)),
    ("unknown notification", LATEST, '{"jsonrpc":"2.0","method":"notifications/whatever","params":{}}', SILENT),
    ("response to an unknown id", LATEST, '{"jsonrpc":"2.0","id":12345,"result":{}}', SILENT),
    ("error response to an unknown id", LATEST, '{"jsonrpc":"2.0","id":"zz","error":{"code":-1,"message":"m"}}',
     SILENT),
]


@pytest.mark.req("BASE-2", "BASE-3", "BASE-4", "BASE-8", "BASE-11", "LIFE-1", "LOG-4", "BASE-1")
@pytest.mark.parametrize("revision, line, expected", [row[1:] for row in ROWS], ids=[row[0] for row in ROWS])
def test_raw_line_is_answered_correctly_and_the_session_survives(revision, line, expected, wire_validator):
    with raw_server(make_server(), max_message_size=LIMIT) as (peer, session):
        if revision is not None:
            result = initialize_raw(peer, revision)
            assert result["protocolVersion"] == revision
        peer.send(line)
        if expected[0] == "silent":
            peer.ping("after")                  # the very next line is the ping's answer
        else:
            reply = peer.recv()
            assert reply is not None, "the session closed instead of answering"
            if expected[0] == "error":
                _, code, expected_id = expected
                assert isinstance(reply, dict), reply
                assert set(reply) == {"jsonrpc", "id", "error"}, reply
                assert reply["jsonrpc"] == "2.0"
                assert reply["id"] == expected_id and type(reply["id"]) is type(expected_id), reply
                assert reply["error"]["code"] == code, reply
                message = reply["error"]["message"]
                assert isinstance(message, str) and message.strip(), reply
                assert "Traceback" not in message and "hunter2" not in json.dumps(reply)
                if code == INTERNAL_ERROR:
                    assert reply["error"] == {"code": INTERNAL_ERROR, "message": "Internal error"}
                if expected_id is not None:
                    wire_validator.check(reply, revision or LATEST, kind="error")
            else:
                _, expected_items = expected
                assert isinstance(reply, list), f"a batch must be answered with an array, got {reply}"
                got = sorted(reply, key=lambda r: str(r["id"]))
                assert len(got) == len(expected_items)
                for item, want in zip(got, expected_items):
                    if "error" in want:
                        assert item["id"] == want["id"] and item["error"]["code"] == want["error"]["code"]
                    else:
                        assert item == want
                wire_validator.check(reply, revision)
            peer.ping("after")
        if expected == err(INVALID_REQUEST, None) and "x" * LIMIT in line:
            assert "exceeds" in reply["error"]["message"] and str(LIMIT) in reply["error"]["message"]
        peer.ping("again")
        peer.assert_silent()
        assert not session.closed


def test_batches_are_not_executed_when_rejected():
    """Under 2025-11-25 a batch is refused as a whole: none of its requests run."""
    calls = []
    server = make_server()
    server._request_handlers["test/record"] = (lambda ctx, params: calls.append(params) or {}, None)
    with raw_server(server) as (peer, _):
        initialize_raw(peer, LATEST)
        peer.send('[{"jsonrpc":"2.0","id":1,"method":"test/record","params":{"n":1}},'
                  '{"jsonrpc":"2.0","id":2,"method":"test/record","params":{"n":2}}]')
        reply = peer.recv()
        assert reply["id"] is None and reply["error"]["code"] == INVALID_REQUEST
        assert "batch" in reply["error"]["message"].lower()
        peer.ping()
        assert calls == []


@pytest.mark.req("PING-1")
def test_ping_reply_is_exactly_empty_before_and_after_initialize():
    with raw_server(make_server()) as (peer, _):
        assert peer.request("p0", "ping") == {"jsonrpc": "2.0", "id": "p0", "result": {}}
        initialize_raw(peer, LATEST)
        assert peer.request(9, "ping") == {"jsonrpc": "2.0", "id": 9, "result": {}}
        assert peer.request(10, "ping", {"_meta": {"k": 1}}) == {"jsonrpc": "2.0", "id": 10, "result": {}}


def test_raw_peer_helper_sees_the_session_close():
    with raw_server(make_server()) as (peer, session):
        assert isinstance(peer, RawPeer)
        session.close()
        peer.expect_closed()


@pytest.mark.req("BASE-5")
def test_a_request_id_still_in_flight_is_refused():
    """Spec: basic/index#requests: the requestor MUST NOT reuse an id within a session."""
    started, release = threading.Event(), threading.Event()

    def block(ctx, params):
        started.set()
        assert release.wait(WAIT)
        return {"n": params.get("n")}

    server = make_server()
    server._request_handlers["test/block"] = (block, None)
    with raw_server(server) as (peer, _):
        initialize_raw(peer, LATEST)
        try:
            peer.send({"jsonrpc": "2.0", "id": 7, "method": "test/block", "params": {"n": 1}})
            assert started.wait(WAIT)
            peer.send({"jsonrpc": "2.0", "id": 7, "method": "test/block", "params": {"n": 2}})
            reply = peer.recv()
            assert reply["id"] == 7 and reply["error"]["code"] == INVALID_REQUEST, reply
        finally:
            release.set()
        assert peer.recv_reply(7) == {"jsonrpc": "2.0", "id": 7, "result": {"n": 1}}
        # once answered, the id may be used again
        peer.send({"jsonrpc": "2.0", "id": 7, "method": "test/block", "params": {"n": 3}})
        assert peer.recv_reply(7) == {"jsonrpc": "2.0", "id": 7, "result": {"n": 3}}
        peer.ping()
