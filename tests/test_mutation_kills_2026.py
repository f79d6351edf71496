"""Checks of 2026-07-28 MUST rows that scripts/mutate.py showed the scenario tests did
not pin: each test asks for the behaviour the row's sentence names (rows of
spec_notes/traceability-2026-07-28.md; the figures are in bench/README.md)."""
import pytest

from conftest import MODERN_REVISION
from helpers import WAIT, RawPeer, raw_server, run_in_thread
from mcp_ref import Client, McpError, UnsupportedProtocolVersion
from mcp_ref.client.modern.mrtr import check_result_type
from mcp_ref.transports import memory_pair

META = "io.modelcontextprotocol/"


# ---------------------------------------------------------------------- versioning (basic/versioning)
@pytest.mark.req("BASE26-1", "BASE26-16")
def test_a_modern_refusal_naming_only_unknown_revisions_is_not_taken_for_a_legacy_server():
    """-32022 is a modern server's answer: with no revision in common the client gives up
    instead of falling back to ``initialize`` (which only a legacy server's refusal earns)."""
    client_end, peer_end = memory_pair()
    peer = RawPeer(peer_end)

    def modern_elsewhere():
        seen = []
        while True:
            message = peer.recv()
            if message is None:
                return seen
            seen.append(message)
            if message.get("method") == "server/discover":
                peer.send({"jsonrpc": "2.0", "id": message["id"], "error": {
                    "code": -32022, "message": "Unsupported protocol version",
                    "data": {"supported": ["2099-01-01"], "requested": MODERN_REVISION}}})
            elif message.get("method") == "initialize":
                peer.send({"jsonrpc": "2.0", "id": message["id"], "result": {
                    "protocolVersion": "2025-11-25", "capabilities": {},
                    "serverInfo": {"name": "x", "version": "1"}}})

    thread, outcome = run_in_thread(modern_elsewhere)
    client = Client(client_end, timeout=WAIT, init_timeout=WAIT)
    with pytest.raises(UnsupportedProtocolVersion):
        client.connect()
    client.close()
    peer_end.close()
    status, seen = outcome.get(timeout=WAIT)
    assert [m.get("method") for m in seen] == ["server/discover"]
    thread.join(WAIT)


@pytest.mark.req("BASE26-1", "BASE26-23", "SCHEMA26-13")
def test_a_modern_server_answers_each_request_from_that_request_alone():
    """No handshake: each request's own ``_meta`` decides; its result carries resultType and
    serverInfo; a missing resource is -32602 (the 2026-07-28 code), never -32002."""
    from test_modern_server import Exchange, meta, modern_server
    with raw_server(modern_server()) as (peer, session):
        exchange = Exchange(peer)
        listed = exchange.call("tools/list")["result"]
        missing = exchange.call("resources/read", {"uri": "demo://missing", **meta()})
        legacy_meta = exchange.call("tools/list", {"_meta": {**meta()["_meta"], META + "protocolVersion": "2025-11-25"}},
                                    sent_ok=False)
    assert listed["resultType"] == "complete" and listed["_meta"][META + "serverInfo"]["name"] == "modern-server"
    assert missing["error"]["code"] == -32602
    assert legacy_meta["error"]["code"] == -32022           # not served from an earlier request's version


# ---------------------------------------------------------------------- resultType (basic/index#result-type)
@pytest.mark.req("BASE26-9", "BASE26-10")
def test_the_tasks_extension_adds_task_to_the_result_types_of_tools_call_only():
    assert check_result_type({"resultType": "task", "task": {}}, "tools/call") == "task"
    for method in ("tools/list", "prompts/get", "resources/read"):
        with pytest.raises(McpError):
            check_result_type({"resultType": "task"}, method)
    assert check_result_type({"resultType": "complete"}, "tools/call") == "complete"


@pytest.mark.req("BASE26-11", "SCHEMA26-16", "CHG26-4")
def test_only_an_absent_result_type_reads_as_complete():
    assert check_result_type({"resultType": "input_required", "requestState": "s"}, "tools/call") == "input_required"
    assert check_result_type({}, "prompts/get") == "complete"
    with pytest.raises(McpError):
        check_result_type({"resultType": "later"}, "tools/call")


# ---------------------------------------------------------------------- subscriptions/listen
@pytest.mark.req("BASE26-27", "BASE26-53", "SCHEMA26-8")
def test_every_notification_of_a_listen_names_its_subscription():
    import threading

    from test_modern_client import Connected, feature_server
    server = feature_server()
    got = threading.Event()
    connected = Connected(server, None, on_resource_updated=lambda uri: got.set())
    with connected as client:
        client.subscribe_resource("demo://readme")
        for _ in range(50):
            server.notify_resource_updated("demo://readme")
            if got.wait(0.1):
                break
        client.unsubscribe_resource("demo://readme")
    listens = [m["id"] for m in connected.recorder.sent() if m.get("method") == "subscriptions/listen"]
    updates = [m for m in connected.recorder.received() if m.get("method") == "notifications/resources/updated"]
    acks = [m for m in connected.recorder.received() if m.get("method") == "notifications/subscriptions/acknowledged"]
    assert listens and updates and acks
    for note in updates + acks:
        assert note["params"]["_meta"][META + "subscriptionId"] in listens
