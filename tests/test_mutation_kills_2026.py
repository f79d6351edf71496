"""Checks of 2026-07-28 MUST rows that scripts/mutate.py showed the scenario tests did
not pin: each test asks for the behaviour the row's sentence names (rows of
spec_notes/traceability-2026-07-28.md; the figures are in bench/README.md)."""
import pytest

from conftest import MODERN_REVISION
from helpers import WAIT, RawPeer, raw_server, run_in_thread
from mcp_ref import Client, McpError, UnsupportedProtocolVersion
from mcp_ref.client.modern.requesting import check_result_type
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
@pytest.mark.req("BASE26-27", "BASE26-53", "SCHEMA26-8", "SCHEMA26-27", "SCHEMA26-28", "SUBS26-2", "SUBS26-1",
                 "SCHEMA26-47", "SCHEMA26-48")
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


# ---------------------------------------------------------------------- multi round-trip (basic/patterns/mrtr)
@pytest.mark.req("MRTR26-1", "PAT26-1", "STDIO26-6", "STDIO26-8", "HTTP26-11", "HTTP26-17")
def test_a_server_asks_the_client_only_inside_the_requests_mrtr_allows():
    """Outside tools/call, prompts/get and resources/read there is no InputRequiredResult to
    ask with, and a server never sends a request of its own: the ask fails."""
    from types import SimpleNamespace

    from mcp_ref.errors import SessionError
    from mcp_ref.server.modern.mrtr import InputRequired, ask
    for method in ("completion/complete", "tools/list", "server/discover"):
        ctx = SimpleNamespace(method=method, era=SimpleNamespace(version=MODERN_REVISION), _mrtr=None)
        with pytest.raises(SessionError):
            ask(ctx, "roots/list", None, "roots-1")
    from test_modern_server import meta
    ctx = SimpleNamespace(method="tools/call", era=SimpleNamespace(version=MODERN_REVISION), _mrtr=None,
                          params={"name": "t", **meta()}, server=SimpleNamespace(mrtr_secret=b"k" * 32))
    with pytest.raises(InputRequired):
        ask(ctx, "roots/list", None, "roots-1")


# ---------------------------------------------------------------------- Streamable HTTP (basic/transports/streamable-http)
@pytest.fixture
def http_url():
    pytest.importorskip("requests")
    from mcp_ref.transports.http.server.app import start_http
    from test_modern_server import modern_server
    handle = start_http(modern_server(), ("127.0.0.1", 0))
    try:
        yield handle.url
    finally:
        handle.shutdown()


@pytest.mark.req("HTTP26-10")
def test_a_modern_post_holding_a_batch_is_refused(http_url):
    from test_modern_http import post
    from test_modern_server import meta
    one = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": meta()}
    response = post(http_url, "tools/list", raw=[one])
    assert response.status_code == 400 and "error" in response.json()
    assert post(http_url, "tools/list", raw=one).status_code == 200


@pytest.mark.req("HTTP26-28", "HTTP26-27")
def test_mcp_name_is_required_where_the_body_names_something(http_url):
    from test_modern_http import post
    from test_modern_server import meta
    calls = {"tools/call": {"name": "echo", "arguments": {"text": "x"}}, "prompts/get": {"name": "greet",
             "arguments": {"name": "A"}}, "resources/read": {"uri": "demo://readme"}}
    for method, params in calls.items():
        response = post(http_url, method, {**params, **meta()}, headers={"Mcp-Name": None})
        assert response.status_code == 400 and response.json()["error"]["code"] == -32020, method
        response = post(http_url, method, {**params, **meta()}, headers={"Mcp-Name": "nothing-here"})
        assert response.status_code == 400 and response.json()["error"]["code"] == -32020, method
        assert post(http_url, method, {**params, **meta()}).status_code == 200, method
    response = post(http_url, "tools/list", headers={"Mcp-Method": None})
    assert response.status_code == 400 and response.json()["error"]["code"] == -32020


@pytest.mark.req("HTTP26-25", "VERS26-1", "SCHEMA26-10")
def test_an_unsupported_version_is_refused_with_the_versions_we_support(http_url):
    from test_modern_http import post
    from test_modern_server import meta
    response = post(http_url, "tools/list", meta(**{META + "protocolVersion": "1900-01-01"}),
                    headers={"MCP-Protocol-Version": "1900-01-01"})
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == -32022 and MODERN_REVISION in error["data"]["supported"]
    assert error["data"]["requested"] == "1900-01-01"


@pytest.mark.req("HTTP26-29", "HTTP26-43", "HTTP26-44", "HTTP26-49")
def test_a_value_safe_as_plain_ascii_is_sent_as_it_is():
    from mcp_ref.transports.http.modern import encode_value
    for plain in ("us-west1", "a b", "~tilde!", "why?=", "=?base64?open", " ".join("ab")):
        assert encode_value(plain) == plain
    for unsafe in ("tab\there", "unit\x1fsep", "del\x7f", "é", " lead", "trail ", "=?base64?eA==?="):
        assert encode_value(unsafe).startswith("=?base64?") and encode_value(unsafe).endswith("?=")


@pytest.mark.req("HTTP26-30", "HTTP26-31", "HTTP26-50")
def test_a_client_mirrors_each_annotated_argument_into_its_header():
    from mcp_ref.transports.http.modern import param_annotations, param_headers, request_headers
    schema = {"type": "object", "properties": {
        "region": {"type": "string", "x-mcp-header": "Region"}, "limit": {"type": "integer", "x-mcp-header": "Limit"},
        "dry": {"type": "boolean", "x-mcp-header": "Dry"}, "query": {"type": "string"}}}
    annotations = param_annotations(schema)
    sent = param_headers(annotations, {"region": "Hello, 世界", "limit": 5, "dry": False, "query": "q"})
    assert sent == {"Mcp-Param-Region": "=?base64?SGVsbG8sIOS4lueVjA==?=", "Mcp-Param-Limit": "5",
                    "Mcp-Param-Dry": "false"}
    params = {"name": "execute_sql", "arguments": {}}
    assert request_headers("tools/call", params, MODERN_REVISION) == {
        "MCP-Protocol-Version": MODERN_REVISION, "Mcp-Method": "tools/call", "Mcp-Name": "execute_sql"}


@pytest.mark.req("HTTP26-14")
@pytest.mark.parametrize("mode, kind", [("json", "application/json"), ("sse", "text/event-stream")])
def test_a_request_is_answered_as_json_or_as_a_stream_as_configured(mode, kind):
    pytest.importorskip("requests")
    from mcp_ref.transports.http.server.app import start_http
    from test_modern_http import messages, post
    from test_modern_server import meta, modern_server
    handle = start_http(modern_server(), ("127.0.0.1", 0), response_mode=mode)
    try:
        response = post(handle.url, "tools/call", {"name": "echo", "arguments": {"text": "m"}, **meta()})
    finally:
        handle.shutdown()
    assert response.status_code == 200 and response.headers["Content-Type"].startswith(kind)
    assert messages(response)[-1]["result"]["content"][0]["text"] == "m"


@pytest.mark.req("HTTP26-20", "HTTP26-21")
def test_a_request_left_open_is_answered_and_one_whose_client_left_is_not():
    pytest.importorskip("requests")
    from mcp_ref.transports.http.server.app import start_http
    from test_modern_http import post
    from test_modern_server import meta
    from test_wsgi_modern import leave, raw_call, waiting_server
    server = waiting_server()
    handle = start_http(server, ("127.0.0.1", 0), keepalive=0.1)
    try:
        leave(server, raw_call(handle.port, True), True)
        response = post(handle.url, "tools/call", {"name": "echo", "arguments": {"text": "still"}, **meta()})
    finally:
        handle.shutdown()
    assert server.seen == [True]
    assert response.status_code == 200 and response.json()["result"]["content"][0]["text"] == "still"


@pytest.mark.req("HTTP26-37", "TOOL26-24", "HTTP26-54", "HTTP26-61", "HTTP26-56", "HTTP26-53", "HTTP26-59", "HTTP26-60")
def test_a_server_compares_each_mirrored_value_with_the_body():
    from mcp_ref.transports.http.modern import param_annotations, param_problem
    annotations = param_annotations({"type": "object", "properties": {
        "s": {"type": "string", "x-mcp-header": "S"}, "b": {"type": "boolean", "x-mcp-header": "B"},
        "n": {"type": "integer", "x-mcp-header": "N"}}})

    def check(sent, arguments):
        lowered = {k.lower(): v for k, v in sent.items()}
        problem = param_problem(lambda name: lowered.get(name), annotations, arguments)
        return None if problem is None else problem.code
    assert check({"Mcp-Param-S": "eu", "Mcp-Param-B": "true", "Mcp-Param-N": "3"}, {"s": "eu", "b": True, "n": 3}) is None
    assert check({"Mcp-Param-S": "=?base64?ZXU=?="}, {"s": "eu"}) is None                # decoded first
    assert check({"Mcp-Param-S": "us"}, {"s": "eu"}) == -32020
    assert check({"Mcp-Param-B": "True"}, {"b": True}) == -32020
    assert check({"Mcp-Param-B": "false"}, {"b": True}) == -32020
    assert check({"Mcp-Param-N": "4"}, {"n": 3}) == -32020
    assert check({"Mcp-Param-N": "three"}, {"n": 3}) == -32020
    assert check({"Mcp-Param-S": "=?base64?%%?="}, {"s": "eu"}) == -32020              # not valid base64
    assert check({}, {"s": "eu"}) == -32020                                             # present: required
    assert check({}, {"s": None, "n": None}) is None                                    # null: not expected


def _header_prop(kind="string", name="P", **more):
    return {"type": "object", "properties": {"p": {"type": kind, "x-mcp-header": name, **more}}}


INVALID_SCHEMAS = [
    _header_prop(name=""), _header_prop(name="Re gion"), _header_prop(name="a\r\nb"), _header_prop(name=7),
    {"type": "object", "properties": {"a": {"type": "string", "x-mcp-header": "Twice"},
                                      "b": {"type": "string", "x-mcp-header": "twice"}}},
    _header_prop(kind="number"), _header_prop(kind="object"), _header_prop(kind="array"),
    {"type": "object", "properties": {"p": {"type": "array", "items": {"type": "string", "x-mcp-header": "I"}}}},
    {"anyOf": [_header_prop(name="Any")]},
    {"type": "string", "x-mcp-header": "Root"},
]


@pytest.mark.req("HTTP26-40", "HTTP26-41", "TOOL26-26", "TOOL26-27")
def test_a_client_leaves_every_tool_with_a_broken_annotation_out_of_its_list():
    from mcp_ref import types
    from mcp_ref.client.modern.era import valid_for_http
    good = [types.Tool.from_dict({"name": "plain", "inputSchema": {"type": "object"}}),
            types.Tool.from_dict({"name": "mirrored", "inputSchema": {"type": "object", "properties": {"o": {
                "type": "object", "properties": {"r": {"type": "string", "x-mcp-header": "Region"},
                                                 "n": {"type": "integer", "x-mcp-header": "N-1"},
                                                 "b": {"type": "boolean", "x-mcp-header": "b.ok"}}}}}})]
    bad = [types.Tool.from_dict({"name": f"bad{i}", "inputSchema": schema}) for i, schema in enumerate(INVALID_SCHEMAS)]
    assert [t.name for t in valid_for_http(good + bad)] == ["plain", "mirrored"]
    for tool in bad:
        assert valid_for_http([tool]) == [], tool.name


@pytest.mark.req("HTTP26-47", "HTTP26-48", "HTTP26-64", "HTTP26-46")
def test_a_server_decodes_a_sentinel_value_and_refuses_one_that_does_not_decode():
    from mcp_ref.transports.http.modern import decode_value
    assert decode_value("=?base64?SGVsbG8sIOS4lueVjA==?=") == "Hello, 世界"
    assert decode_value("plain") == "plain"
    for broken in ("=?base64?%%%?=", "=?base64?abc?=", "=?base64?/w==?="):       # not base64, bad padding, not UTF-8
        assert decode_value(broken) is None, broken


@pytest.mark.req("HTTP26-32", "HTTP26-33", "HTTP26-34", "HTTP26-35", "HTTP26-36", "HTTP26-38", "HTTP26-39",
                 "TOOL26-19", "TOOL26-20", "TOOL26-21", "TOOL26-22", "TOOL26-23", "TOOL26-25")
def test_annotations_within_the_constraints_are_accepted_and_the_others_refused():
    from mcp_ref.transports.http.modern import param_annotations
    schema = {"type": "object", "properties": {"o": {"type": "object", "properties": {
        "r": {"type": "string", "x-mcp-header": "Region"}, "n": {"type": "integer", "x-mcp-header": "N-1"},
        "b": {"type": "boolean", "x-mcp-header": "b.ok"}}}, "t": {"type": "string", "x-mcp-header": "!#$%&'*+-.^_`|~"}}}
    assert param_annotations(schema) == {"Region": (("o", "r"), "string"), "N-1": (("o", "n"), "integer"),
                                         "b.ok": (("o", "b"), "boolean"), "!#$%&'*+-.^_`|~": (("t",), "string")}
    for bad in INVALID_SCHEMAS:
        with pytest.raises(ValueError):
            param_annotations(bad)


@pytest.mark.req("HTTP26-61", "HTTP26-23", "HTTP26-60")
def test_a_protocol_version_header_that_differs_from_the_body_is_refused(http_url):
    from test_modern_http import post
    for other in ("2025-11-25", "2099-01-01"):
        response = post(http_url, "tools/list", headers={"MCP-Protocol-Version": other})
        assert response.status_code == 400 and response.json()["error"]["code"] == -32020, other
    for other in ("prompts/list", "TOOLS/LIST"):
        response = post(http_url, "tools/list", headers={"Mcp-Method": other})
        assert response.status_code == 400 and response.json()["error"]["code"] == -32020, other
    response = post(http_url, "tools/list", headers={"MCP-Protocol-Version": None, "mcp-protocol-version": MODERN_REVISION})
    assert response.status_code == 200


# ---------------------------------------------------------------------- requestState (basic/patterns/mrtr)
@pytest.mark.req("MRTR26-8", "MRTR26-7", "MRTR26-25")
def test_a_signed_state_is_accepted_until_it_expires_and_refused_once_touched():
    import time

    from mcp_ref.server.modern.mrtr import _sign, _verify
    secret, target = b"s" * 32, ["tools/call", "trip"]
    fresh = _sign(secret, {"t": target, "e": time.time() + 60, "a": {}})
    assert _verify(secret, fresh, target)["t"] == target
    stale = _sign(secret, {"t": target, "e": time.time() - 1, "a": {}})
    for bad in (stale, _sign(b"x" * 32, {"t": target, "e": time.time() + 60}), fresh[:-2] + "AA",
                _sign(secret, {"t": ["tools/call", "other"], "e": time.time() + 60})):
        with pytest.raises(McpError) as info:
            _verify(secret, bad, target)
        assert info.value.code == -32602


@pytest.mark.req("MRTR26-25", "MRTR26-7")
def test_a_tampered_state_is_refused_even_without_input_responses():
    from test_modern_client import FEATURES, Connected, feature_server
    with Connected(feature_server(), None, **FEATURES) as client:
        meta = client._modern_meta(MODERN_REVISION)
        first = client.session.request("tools/call", {"name": "trip", "arguments": {"city": "Oslo"}, "_meta": meta})
        body, mac = first["requestState"].split(".")
        with pytest.raises(McpError) as info:
            client.session.request("tools/call", {"name": "echo", "arguments": {"text": "x"}, "_meta": meta,
                                                  "requestState": body + "x." + mac})
        assert info.value.code == -32602


@pytest.mark.req("MRTR26-20", "MRTR26-16", "MRTR26-15")
def test_each_retry_carries_the_answers_and_state_of_the_result_just_received():
    from test_modern_client import FEATURES, Connected, feature_server
    connected = Connected(feature_server(), None, **FEATURES)
    with connected as client:
        result = client.call_tool("trip", {"city": "Oslo"})
    assert not result.is_error
    sent = [m for m in connected.recorder.sent() if m.get("method") == "tools/call"]
    replies = {m["id"]: m.get("result") or {} for m in connected.recorder.received() if "id" in m and "method" not in m}
    assert len(sent) >= 2 and "requestState" not in sent[0]["params"]
    for before, retry in zip(sent, sent[1:]):
        asked = replies[before["id"]]
        assert asked.get("resultType") == "input_required"
        assert retry["params"].get("requestState") == asked.get("requestState")
        assert set(retry["params"].get("inputResponses") or {}) == set(asked.get("inputRequests") or {})


# ---------------------------------------------------------------------- extensions (basic/versioning)
@pytest.mark.req("VERS26-4", "VERS26-5", "SCHEMA26-46")
def test_the_tasks_extension_is_named_with_its_prefix_and_refused_by_name_when_undeclared():
    from test_modern_server import Exchange, meta
    from test_tasks_ext import task_server
    with raw_server(task_server()) as (peer, session):
        exchange = Exchange(peer)
        extensions = exchange.call("server/discover")["result"]["capabilities"]["extensions"]
        refused = exchange.call("tools/call", {"name": "greet", "arguments": {}, **meta()})["error"]
    assert extensions == {META + "tasks": {}} and all("/" in name for name in extensions)
    assert refused["code"] == -32021
    assert refused["data"] == {"requiredCapabilities": {"extensions": {META + "tasks": {}}}}


# ---------------------------------------------------------------------- subscriptions (basic/patterns/subscriptions)
@pytest.mark.req("STDIO26-7", "SUBS26-4")
def test_a_client_correlates_notifications_with_the_listen_acknowledged_last():
    from mcp_ref.client.modern.era import Listening
    listening = Listening()

    def note(subscription=None):
        return {"_meta": {} if subscription is None else {META + "subscriptionId": subscription}}
    listening._acks[7] = __import__("threading").Event()
    listening.acknowledged({"_meta": {META + "subscriptionId": 7}})
    assert listening.active == 7 and listening._acks[7].is_set()
    assert listening.stale(note(7)) is False
    assert listening.stale(note(6)) is True                 # a listen already replaced
    assert listening.stale(note()) is False                 # not a listen's notification
    listening.acknowledged({"_meta": {META + "subscriptionId": 99}})       # nobody waits for 99
    assert listening.active == 7


# ---------------------------------------------------------------------- cancellation (basic/patterns/cancellation)
@pytest.mark.req("STDIO26-9", "CANC26-5", "SCHEMA26-26")
def test_only_a_request_still_in_flight_is_cancelled_and_initialize_never():
    from mcp_ref import Server
    from mcp_ref.errors import RequestCancelled
    with raw_server(Server("canceller")) as (peer, session):
        pending = session.start_request("roots/list", {})
        asked = peer.recv()
        pending.cancel("no longer needed")
        note = peer.recv()
        assert note["method"] == "notifications/cancelled"
        assert note["params"] == {"requestId": asked["id"], "reason": "no longer needed"}
        with pytest.raises(RequestCancelled):
            pending.result()
        done = session.start_request("roots/list", {})
        asked = peer.recv()
        peer.send({"jsonrpc": "2.0", "id": asked["id"], "result": {"roots": []}})
        assert done.result() == {"roots": []}
        done.cancel("too late")                               # answered: nothing to cancel
        handshake = session.start_request("initialize", {})
        peer.recv()
        handshake.cancel("never")
        with pytest.raises(AssertionError, match="sent nothing"):
            peer.recv(timeout=0.5)                              # neither cancel reached the wire


@pytest.mark.req("STDIO26-10")
def test_a_cancelled_request_stops_and_gets_no_answer():
    from test_modern_server import meta
    from test_wsgi_modern import waiting_server
    server = waiting_server()
    with raw_server(server) as (peer, session):
        peer.send({"jsonrpc": "2.0", "id": 5, "method": "tools/call",
                   "params": {"name": "hold", "arguments": {}, **meta()}})
        assert server.started.wait(WAIT)
        for unknown in (999, None, [5]):                        # unknown or malformed: ignored
            peer.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": unknown}})
        assert not server.done.wait(0.3)
        peer.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 5}})
        assert server.done.wait(WAIT)
        assert server.seen == [True]
        with pytest.raises(AssertionError, match="sent nothing"):
            peer.recv(timeout=0.5)                              # no answer for a cancelled request


@pytest.mark.req("SUBS26-1", "SCHEMA26-47", "SCHEMA26-48")
def test_a_listen_filter_that_is_not_explicit_is_refused():
    from test_modern_server import Exchange, meta, modern_server
    with raw_server(modern_server()) as (peer, session):
        exchange = Exchange(peer)
        for notifications in ({"toolsListChanged": "yes"}, {"promptsListChanged": 1},
                              {"resourceSubscriptions": "demo://readme"}, {"resourceSubscriptions": [3]}, None):
            reply = exchange.call("subscriptions/listen", {"notifications": notifications, **meta()}, sent_ok=False)
            assert reply["error"]["code"] == -32602, notifications


@pytest.mark.req("SCHEMA26-27", "SCHEMA26-28", "SUBS26-2")
def test_the_acknowledgment_comes_first_and_names_what_was_agreed():
    from test_modern_server import meta, modern_server
    with raw_server(modern_server()) as (peer, session):
        peer.send({"jsonrpc": "2.0", "id": 9, "method": "subscriptions/listen",
                   "params": {"notifications": {"toolsListChanged": True, "promptsListChanged": False}, **meta()}})
        first = peer.recv()
        assert first["method"] == "notifications/subscriptions/acknowledged"
        assert first["params"]["notifications"] == {"toolsListChanged": True}
        assert first["params"]["_meta"][META + "subscriptionId"] == 9
        peer.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 9}})


@pytest.mark.req("TOOL26-1", "RES26-1", "PROM26-1", "COMP26-1", "PAGE26-1", "MRTR26-2")
def test_a_request_without_its_required_meta_is_refused_whatever_the_method():
    from test_modern_server import Exchange, meta, modern_server
    good = meta()["_meta"]
    broken = [{**good, META + "protocolVersion": 20260728},
              {k: v for k, v in good.items() if k != META + "clientCapabilities"},
              {**good, META + "clientCapabilities": []}]
    server = modern_server()
    server.completion(lambda ref, argument, context=None: ["Ada"])
    with raw_server(server) as (peer, session):
        exchange = Exchange(peer)
        for method, params in (("tools/list", {}), ("resources/list", {}), ("prompts/list", {}),
                               ("completion/complete", {"ref": {"type": "ref/prompt", "name": "greet"},
                                                        "argument": {"name": "name", "value": "A"}})):
            for bad in broken:
                reply = exchange.call(method, {**params, "_meta": bad}, sent_ok=False)
                assert reply["error"]["code"] == -32602, (method, bad)
            assert "result" in exchange.call(method, {**params, **meta()})


@pytest.mark.req("TOOL26-1", "RES26-1", "PROM26-1", "COMP26-1", "PAGE26-1", "MRTR26-2")
def test_the_request_metadata_joins_the_callers_own_meta():
    from mcp_ref.client.modern.requesting import with_meta
    ours = {META + "protocolVersion": MODERN_REVISION, META + "clientCapabilities": {}}
    params = with_meta({"cursor": "c", "_meta": {"progressToken": 4}}, ours)
    assert params == {"cursor": "c", "_meta": {"progressToken": 4, **ours}}
    assert with_meta(None, ours) == {"_meta": ours}


@pytest.mark.req("TOOL26-5", "PROM26-3", "RES26-3")
def test_every_item_is_listed_across_pages():
    from mcp_ref import Server
    from test_modern_server import Exchange, meta
    server = Server("paged", page_size=2)
    for i in range(5):
        server.tool(name=f"t{i}")(lambda: "x")
        server.prompt(name=f"p{i}")(lambda: "x")
        server.resource(f"demo://r{i}")(lambda: "x")
    with raw_server(server) as (peer, session):
        exchange = Exchange(peer)
        for method, key in (("tools/list", "tools"), ("prompts/list", "prompts"), ("resources/list", "resources")):
            seen, cursor, pages = [], None, 0
            while True:
                params = meta() if cursor is None else {"cursor": cursor, **meta()}
                result = exchange.call(method, params)["result"]
                seen += [item.get("uri") or item.get("name") for item in result[key]]
                pages += 1
                cursor = result.get("nextCursor")
                if cursor is None:
                    break
            assert pages == 3 and len(set(seen)) == 5, (method, seen)


@pytest.mark.req("PROM26-2")
def test_discover_declares_each_capability_the_server_has():
    from test_modern_server import Exchange, modern_server
    with raw_server(modern_server()) as (peer, session):
        capabilities = Exchange(peer).call("server/discover")["result"]["capabilities"]
    assert capabilities["prompts"] == {"listChanged": True} and capabilities["tools"] == {"listChanged": True}
    assert capabilities["resources"] == {"subscribe": True, "listChanged": True}


# ---------------------------------------------------------------------- sampling and pagination
@pytest.mark.req("SAMP26-12")
def test_a_sampling_request_holds_messages_with_a_role_and_content():
    from types import SimpleNamespace

    from mcp_ref.client.sampling import create_message
    sent = []

    def request(method, params, timeout=None):
        sent.append(params)
        return {"role": "assistant", "content": {"type": "text", "text": "ok"}, "model": "m"}
    peer = SimpleNamespace(protocol_version=MODERN_REVISION, client_capabilities={"sampling": {}}, request=request)
    result = create_message(peer, [{"role": "user", "content": {"type": "text", "text": "hi"}}, "plain"], max_tokens=5)
    assert result.model == "m"
    assert [m["role"] for m in sent[0]["messages"]] == ["user", "user"]
    assert all("content" in m for m in sent[0]["messages"])
    for bad in ([], [{"role": "system", "content": {"type": "text", "text": "x"}}], [{"role": "user"}]):
        with pytest.raises(ValueError):
            create_message(peer, bad, max_tokens=5)
    assert len(sent) == 1


@pytest.mark.req("PAGE26-5")
def test_a_client_sends_back_each_cursor_exactly_as_received():
    from mcp_ref import Server
    from test_modern_client import Connected
    server = Server("paged", page_size=2)
    for i in range(5):
        server.tool(name=f"t{i}")(lambda: "x")
        server.prompt(name=f"p{i}")(lambda: "x")
        server.resource(f"demo://r{i}")(lambda: "x")
    connected = Connected(server, None)
    with connected as client:
        assert [t.name for t in client.list_tools()] == [f"t{i}" for i in range(5)]
        assert [p.name for p in client.list_prompts()] == [f"p{i}" for i in range(5)]
        assert [r.uri for r in client.list_resources()] == [f"demo://r{i}" for i in range(5)]
    replies = {m["id"]: m["result"] for m in connected.recorder.received()
               if "id" in m and "method" not in m and isinstance(m.get("result"), dict)}
    for method in ("tools/list", "prompts/list", "resources/list"):
        lists = [m for m in connected.recorder.sent() if m.get("method") == method]
        assert len(lists) == 3 and "cursor" not in (lists[0].get("params") or {}), method
        for before, after in zip(lists, lists[1:]):
            assert after["params"]["cursor"] == replies[before["id"]]["nextCursor"], method


@pytest.mark.req("TOOL26-1", "RES26-1", "PROM26-1", "PAGE26-1", "BASE26-45", "BASE26-46")
def test_over_http_a_modern_request_without_any_meta_is_invalid_params(http_url):
    from test_modern_http import post
    for method, params in (("tools/list", {}), ("resources/list", {}), ("prompts/list", {}), ("tools/list", None)):
        body = {"jsonrpc": "2.0", "id": 3, "method": method}
        if params is not None:
            body["params"] = params
        response = post(http_url, method, raw=body)
        assert response.status_code == 400 and response.json()["error"]["code"] == -32602, (method, params)


@pytest.mark.req("SUBS26-1", "SCHEMA26-47", "SCHEMA26-48", "LOG26-4")
def test_a_listen_gets_the_change_notifications_it_asked_for_and_no_others():
    from test_modern_server import meta, modern_server
    server = modern_server()
    with raw_server(server) as (peer, session):
        peer.send({"jsonrpc": "2.0", "id": 4, "method": "subscriptions/listen",
                   "params": {"notifications": {"toolsListChanged": True}, **meta()}})
        assert peer.recv()["method"] == "notifications/subscriptions/acknowledged"
        server.prompt(name="late_prompt")(lambda: "x")
        server.log("warning", "to everyone")
        server.tool(name="late_tool")(lambda: "x")
        methods = []
        while "notifications/tools/list_changed" not in methods:
            methods.append(peer.recv()["method"])
        peer.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 4}})
    assert methods == ["notifications/tools/list_changed"]


@pytest.mark.req("SCHEMA26-29", "MRTR26-11")
def test_an_input_required_result_with_neither_requests_nor_state_is_invalid():
    from mcp_ref.client.modern.mrtr import read_input_required
    from mcp_ref.errors import InvalidParamsError
    with pytest.raises(InvalidParamsError):
        read_input_required({"resultType": "input_required"})
    with pytest.raises(InvalidParamsError):
        read_input_required({"resultType": "input_required", "inputRequests": {}})
    assert read_input_required({"resultType": "input_required", "requestState": "s"}) == ({}, "s")


@pytest.mark.req("SCHEMA26-48", "SUBS26-1", "SCHEMA26-47")
def test_a_listen_for_task_ids_gets_their_status_changes_only():
    from test_modern_server import Exchange
    from test_tasks_ext import task_server
    from test_tasks_ext import test_listen_for_task_ids_needs_the_extension_and_delivers_status_changes as scenario
    with raw_server(task_server()) as (peer, session):
        scenario(Exchange(peer))


@pytest.mark.req("SUBS26-7")
def test_each_connection_opens_its_own_listen_for_the_changes_the_server_announces():
    """The handshake, the same for a first connect and a respawned server's, sends
    ``subscriptions/listen``: the server keeps no subscription from an earlier connection."""
    import threading

    from test_modern_client import Connected, feature_server
    server = feature_server()
    changed = threading.Event()
    connected = Connected(server, None, on_tools_list_changed=lambda *a: changed.set())
    with connected as client:
        assert client.modern
        server.tool(name="late")(lambda: "x")
        assert changed.wait(WAIT)
    methods = [m.get("method") for m in connected.recorder.sent() if "method" in m]
    assert methods[0] == "server/discover" and "subscriptions/listen" in methods


@pytest.mark.req("HTTP26-16")
def test_each_modern_http_request_gets_a_session_of_its_own_that_ends_with_its_response():
    """What the server sends on a request's stream can only be that request's: the request is
    served on a session of its own, gone once its response is written."""
    import time

    pytest.importorskip("requests")
    from mcp_ref.transports.http.server.app import start_http
    from test_modern_http import messages, post
    from test_modern_server import LEVEL, meta, modern_server
    server = modern_server()
    handle = start_http(server, ("127.0.0.1", 0))
    try:
        for text in ("a", "b", "c"):
            response = post(handle.url, "tools/call", {"name": "echo", "arguments": {"text": text}, **meta()})
            assert messages(response)[-1]["result"]["content"][0]["text"] == text
        chatty = post(handle.url, "tools/call", {"name": "chatty", "arguments": {}, **meta(**{LEVEL: "debug"})})
        assert {m.get("id") for m in messages(chatty)} == {None, 1}          # its notifications, then its answer
        deadline = time.monotonic() + WAIT
        while len(server.sessions) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert len(server.sessions) == 0
    finally:
        handle.shutdown()


@pytest.mark.req("ELIC-7")
@pytest.mark.parametrize("version", ["2025-11-25", "2026-07-28"])
@pytest.mark.parametrize("params", [
    {"mode": "form", "requestedSchema": {"type": "object", "properties": {}}},
    {"mode": "form", "message": 7, "requestedSchema": {"type": "object", "properties": {}}},
    {"mode": "url", "url": "https://example.com/x", "elicitationId": "e-1"},
])
def test_an_elicitation_without_its_message_is_refused_before_any_callback(params, version):
    """Every elicitation request carries a message (a string): the client refuses one without
    it (-32602) and asks no one."""
    from mcp_ref.client.elicitation import answer_elicitation
    from mcp_ref.errors import InvalidParamsError
    asked = []
    with pytest.raises(InvalidParamsError, match="message must be a string"):
        answer_elicitation(None, params, form_callback=asked.append, url_callback=asked.append, version=version)
    assert asked == []


# ---------------------------------------------------------------------- the merged header checks
def _headers(**given):
    """A request's headers as the server reads them: looked up lower-cased."""
    lowered = {name.lower().replace("_", "-"): value for name, value in given.items()}
    return lowered.get


@pytest.mark.req("HTTP26-47", "HTTP26-54", "HTTP26-37")
def test_a_boolean_or_string_argument_is_compared_with_its_header_text():
    """A boolean argument's header is ``true``/``false`` and a string's the string itself: a
    header that says so is accepted, one that says otherwise refused (-32020)."""
    from mcp_ref.transports.http.modern import param_problem
    annotations = {"Flag": (("flag",), "boolean"), "Region": (("region",), "string")}
    arguments = {"flag": True, "region": "eu"}
    assert param_problem(_headers(mcp_param_flag="true", mcp_param_region="eu"), annotations, arguments) is None
    assert param_problem(_headers(mcp_param_flag="=?base64?dHJ1ZQ==?=", mcp_param_region="eu"), annotations,
                         arguments) is None
    refused = param_problem(_headers(mcp_param_flag="false", mcp_param_region="eu"), annotations, arguments)
    assert refused is not None and refused.code == -32020


@pytest.mark.req("HTTP26-60", "HTTP26-64", "HTTP26-47")
def test_an_encoded_name_matches_and_a_method_without_a_name_needs_no_name_header():
    from mcp_ref.jsonrpc.messages import Request
    from mcp_ref.transports.http.modern import header_problem
    version = "2026-07-28"
    call = Request(1, "tools/call", {"name": "echo"})
    assert header_problem(_headers(MCP_Protocol_Version=version, MCP_METHOD="tools/call",
                                   mcp_name="=?base64?ZWNobw==?="), call, version) is None
    listing = Request(2, "tools/list", {})
    assert header_problem(_headers(mcp_protocol_version=version, mcp_method="tools/list"), listing, version) is None
    wrong = header_problem(_headers(mcp_protocol_version="2025-11-25", mcp_method="tools/call", mcp_name="echo"),
                           call, version)
    assert wrong is not None and wrong.code == -32020 and "MCP-Protocol-Version" in wrong.message


@pytest.mark.req("TRN-8")
def test_a_wildcard_bound_server_admits_a_loopback_origin_only_over_loopback():
    """Bound to every address, a server admits a loopback page only on a connection that
    arrived over loopback (its own machine); the same page's request over another address
    is refused."""
    from mcp_ref import Server
    from mcp_ref.transports.http.server.app import HttpApp
    app = HttpApp(Server("origins"), host="0.0.0.0")
    assert app.origin_allowed("http://localhost:5173", "127.0.0.1:8000", lambda: "127.0.0.1")
    assert not app.origin_allowed("http://localhost:5173", "192.0.2.10:8000", lambda: "192.0.2.10")
