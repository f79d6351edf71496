"""Streamable HTTP in the modern era, 2026-07-28 (Spec 2026-07-28:
basic/transports/streamable-http#request-metadata, #server-validation,
#backward-compatibility; basic/versioning).

Raw ``requests`` POSTs play a modern client: no ``initialize``, no
``Mcp-Session-Id``; the headers mirror the body. Every JSON-RPC message the
server answers is validated against the 2026-07-28 ``schema.json``. The same
endpoint still opens legacy sessions with ``initialize``.
"""
import json

import pytest

from conftest import MODERN_REVISION, validate_wire
from test_modern_server import LEVEL, meta, modern_server

requests = pytest.importorskip("requests")

from mcp_ref.transports.http.modern import decode_value, encode_value  # noqa: E402
from mcp_ref.transports.http.server.app import start_http  # noqa: E402

ACCEPT = "application/json, text/event-stream"


@pytest.fixture
def url():
    handle = start_http(modern_server(), ("127.0.0.1", 0))
    try:
        yield handle.url
    finally:
        handle.shutdown()


def post(url, method, params=None, *, headers=None, request_id=1, raw=None):
    body = raw if raw is not None else {"jsonrpc": "2.0", "id": request_id, "method": method,
                                        "params": params if params is not None else meta()}
    sent = {"Accept": ACCEPT, "Content-Type": "application/json", "MCP-Protocol-Version": MODERN_REVISION,
            "Mcp-Method": method}
    name = (body.get("params") or {}).get("name") or (body.get("params") or {}).get("uri") \
        if isinstance(body, dict) else None
    if name is not None and method in ("tools/call", "resources/read", "prompts/get"):
        sent["Mcp-Name"] = encode_value(name)
    sent.update(headers or {})
    sent = {k: v for k, v in sent.items() if v is not None}
    return requests.post(url, data=json.dumps(body), headers=sent, timeout=30)


def messages(response) -> list:
    """The JSON-RPC messages of a JSON or SSE answer."""
    if response.headers.get("Content-Type", "").startswith("text/event-stream"):
        return [json.loads(line[5:]) for line in response.text.splitlines() if line.startswith("data:")
                and line[5:].strip()]
    return [response.json()]


def answer(response, method):
    found = messages(response)
    reply = found[-1]
    for note in found[:-1]:
        validate_wire(note, MODERN_REVISION, "notification", sender="server")
    validate_wire(reply, MODERN_REVISION, request_method=method if "result" in reply else None)
    return reply, found[:-1]


@pytest.mark.req("BASE26-25")
def test_discover_and_calls_without_a_session(url):
    response = post(url, "server/discover")
    assert response.status_code == 200 and "Mcp-Session-Id" not in response.headers
    reply, _ = answer(response, "server/discover")
    assert reply["result"]["supportedVersions"][0] == MODERN_REVISION
    reply, _ = answer(post(url, "tools/call", {"name": "echo", "arguments": {"text": "x"}, **meta()}), "tools/call")
    assert reply["result"]["content"][0]["text"] == "x" and reply["result"]["resultType"] == "complete"
    reply, _ = answer(post(url, "resources/read", {"uri": "demo://readme", **meta()}), "resources/read")
    assert reply["result"]["cacheScope"] == "private"


@pytest.mark.req("HTTP26-16", "HTTP26-18", "LOG26-4")
def test_progress_and_log_messages_flow_on_the_requests_stream(url):
    params = {"name": "chatty", "arguments": {}, "_meta": {**meta(**{LEVEL: "warning"})["_meta"], "progressToken": "p"}}
    response = post(url, "tools/call", params)
    assert response.headers["Content-Type"].startswith("text/event-stream")
    assert "id:" not in response.text                         # no event ids: nothing to resume
    reply, notes = answer(response, "tools/call")
    assert [n["method"] for n in notes] == ["notifications/progress", "notifications/message"]
    assert notes[1]["params"]["level"] == "warning"


@pytest.mark.parametrize("headers, params, code, status", [
    ({"MCP-Protocol-Version": None}, None, -32020, 400),
    ({"MCP-Protocol-Version": "2025-11-25"}, None, -32020, 400),
    ({"Mcp-Method": "tools/call"}, None, -32020, 400),
    ({"Mcp-Method": None}, None, -32020, 400),
    ({}, {"_meta": {"io.modelcontextprotocol/protocolVersion": MODERN_REVISION}}, -32602, 400),
    ({"MCP-Protocol-Version": "1900-01-01"}, meta(**{"io.modelcontextprotocol/protocolVersion": "1900-01-01"}),
     -32022, 400),
    # A known header over an unknown body version: the mismatch first (server/modern/serve.py rule 4).
    ({}, meta(**{"io.modelcontextprotocol/protocolVersion": "1900-01-01"}), -32020, 400),
    ({"MCP-Protocol-Version": "2025-11-25"}, meta(**{"io.modelcontextprotocol/protocolVersion": "1900-01-01"}),
     -32020, 400),
])
@pytest.mark.req("HTTP26-23", "HTTP26-24", "SCHEMA26-9", "HTTP26-63", "SCHEMA26-20", "BASE26-47",
                 "HTTP26-25", "HTTP26-27", "HTTP26-28")
@pytest.mark.req("HTTP26-25", "HTTP26-27", "HTTP26-28")
def test_bad_headers_and_metadata_are_refused_with_their_status(url, headers, params, code, status):
    response = post(url, "tools/list", params, headers=headers)
    assert response.status_code == status, response.text
    reply = response.json()
    validate_wire(reply, MODERN_REVISION, "error")
    assert reply["error"]["code"] == code
    if code == -32022:
        assert reply["error"]["data"]["requested"] == "1900-01-01"


@pytest.mark.req("HTTP26-48", "HTTP26-64", "HTTP26-61", "HTTP26-47")
def test_mcp_name_must_match_the_body_and_may_be_base64(url):
    params = {"name": "echo", "arguments": {"text": "y"}, **meta()}
    response = post(url, "tools/call", params, headers={"Mcp-Name": "other"})
    assert response.status_code == 400 and response.json()["error"]["code"] == -32020
    response = post(url, "tools/call", params, headers={"Mcp-Name": None})
    assert response.status_code == 400 and response.json()["error"]["code"] == -32020
    response = post(url, "tools/call", params, headers={"Mcp-Name": "=?base64?ZWNobw==?="})
    assert response.status_code == 200 and response.json()["result"]["content"][0]["text"] == "y"


@pytest.mark.req("HTTP26-26")
def test_unknown_and_removed_methods_are_404_method_not_found(url):
    for method in ("no/such", "ping", "initialize", "logging/setLevel"):
        response = post(url, method)
        assert response.status_code == 404, (method, response.text)
        assert response.json()["error"]["code"] == -32601


def test_the_same_endpoint_still_opens_legacy_sessions(url):
    init = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "l", "version": "1"}}}
    response = requests.post(url, data=json.dumps(init), timeout=30,
                             headers={"Accept": ACCEPT, "Content-Type": "application/json"})
    assert response.status_code == 200 and response.headers.get("Mcp-Session-Id")
    assert messages(response)[-1]["result"]["protocolVersion"] == "2025-11-25"


@pytest.mark.req("HTTP26-29", "HTTP26-43", "HTTP26-44", "HTTP26-49", "HTTP26-45")
def test_header_values_round_trip_through_the_base64_sentinel():
    for value in ("us-west1", "Hello, 世界", " padded ", "line1\nline2", "=?base64?literal?="):
        encoded = encode_value(value)
        assert encoded.isascii() and "\n" not in encoded
        assert decode_value(encoded) == value
    assert encode_value("Hello, 世界") == "=?base64?SGVsbG8sIOS4lueVjA==?="      # the spec's own example
    assert decode_value("=?base64?not base64!?=") is None


# ---------------------------------------------------------------------- our client over HTTP
@pytest.mark.req("HTTP26-9", "HTTP26-22", "HTTP26-15", "HTTP26-50", "BASE26-25")
def test_our_client_speaks_2026_07_28_over_http_without_a_session():
    import threading

    from mcp_ref import Client
    from test_modern_client import FEATURES, feature_server
    server = feature_server()
    handle = start_http(server, ("127.0.0.1", 0), keepalive=0.2)
    updates, changed = [], threading.Event()
    try:
        with Client.http(handle.url, timeout=30, on_resource_updated=updates.append,
                         on_tools_list_changed=changed.set, **FEATURES) as client:
            assert client.modern and client.transport.session_id is None
            assert client.call_tool("echo", {"text": "hé"}).content[0].text == "hé"
            trip = client.call_tool("trip", {"city": "Oslo"})             # multi round-trip over HTTP
            assert trip.content[0].text == "accept:{'confirm': True}:sunny:['file:///srv/trips']"
            assert client.read_resource("demo://readme").contents[0].text == "read me"
            client.subscribe_resource("demo://readme")
            server.notify_resource_updated("demo://readme")
            server.add_tool(lambda: "new", name="added")
            assert changed.wait(10)
            client.unsubscribe_resource("demo://readme")
            assert client.session.wait_closed(0.3) is False
        assert updates == ["demo://readme"]
    finally:
        handle.shutdown()
    assert server._listeners == set()                 # every listen ended with its stream


@pytest.mark.req("HTTP26-68")
def test_our_client_falls_back_to_initialize_over_http(monkeypatch):
    """A legacy Streamable HTTP server (ours with the modern path turned off) refuses the
    probe with 400 and no modern error: the client runs initialize and keeps a session."""
    from mcp_ref import Client
    from mcp_ref.transports.http.server import core as http_core
    monkeypatch.setattr(http_core, "is_modern_post", lambda message, version: False)
    handle = start_http(modern_server(), ("127.0.0.1", 0))
    try:
        with Client.http(handle.url, timeout=30) as client:
            assert not client.modern and client.protocol_version == "2025-11-25"
            assert client.transport.session_id
            assert client.call_tool("echo", {"text": "x"}).content[0].text == "x"
    finally:
        handle.shutdown()


def test_an_error_while_serving_keeps_status_200(url):
    reply = post(url, "tools/call", {"name": "asks", "arguments": {}, **meta()})
    assert reply.status_code == 200 and reply.json()["error"]["code"] == -32602     # unknown tool: as before


@pytest.fixture
def asking_url():
    from mcp_ref import Context, Server
    server = Server("asking")

    @server.tool
    def asks(ctx: Context) -> str:
        return ctx.list_roots()[0].uri

    handle = start_http(server, ("127.0.0.1", 0), response_mode="json")
    try:
        yield handle.url
    finally:
        handle.shutdown()


def test_a_question_the_client_cannot_answer_is_400_missing_required_client_capability(asking_url):
    response = post(asking_url, "tools/call", {"name": "asks", "arguments": {}, **meta()})
    assert response.status_code == 400, response.text
    reply = response.json()
    validate_wire(reply, MODERN_REVISION, "error")
    assert reply["error"]["code"] == -32021
    assert reply["error"]["data"] == {"requiredCapabilities": {"roots": {}}}


@pytest.mark.req("HTTP26-15")
def test_listen_is_a_stream_even_when_the_server_answers_json():
    import threading

    from mcp_ref import Client
    server = modern_server()
    handle = start_http(server, ("127.0.0.1", 0), response_mode="json")
    updates = []
    done = threading.Event()
    try:
        with Client.http(handle.url, timeout=30, init_timeout=30,
                         on_resource_updated=lambda uri: (updates.append(uri), done.set())) as client:
            client.subscribe_resource("demo://readme")          # acknowledged: the stream is open
            server.notify_resource_updated("demo://readme")
            assert done.wait(10)
            assert client.call_tool("echo", {"text": "x"}).content[0].text == "x"   # others stay JSON
    finally:
        handle.shutdown()
    assert updates == ["demo://readme"]


# ---------------------------------------------------------------------- x-mcp-header
@pytest.fixture
def sql_server():
    from mcp_ref import Server
    server = Server("sql")
    schema = {"type": "object", "properties": {
        "region": {"type": "string", "x-mcp-header": "Region"},
        "limit": {"type": "integer", "x-mcp-header": "Limit"},
        "query": {"type": "string"}}, "required": ["region", "query"]}
    server.add_tool(lambda region, query, limit=10: f"{region}:{limit}:{query}", name="execute_sql",
                    input_schema=schema)
    bad = {"type": "object", "properties": {"ratio": {"type": "number", "x-mcp-header": "Ratio"}}}
    server.add_tool(lambda ratio=1.0: "never listed", name="bad_header", input_schema=bad)
    handle = start_http(server, ("127.0.0.1", 0))
    try:
        yield handle.url
    finally:
        handle.shutdown()


@pytest.mark.req("HTTP26-53", "HTTP26-54", "HTTP26-55", "HTTP26-59", "HTTP26-56", "HTTP26-58", "HTTP26-62")
def test_mcp_param_headers_are_required_and_checked(sql_server):
    params = {"name": "execute_sql", "arguments": {"region": "Hello, 世界", "limit": 5, "query": "SELECT 1"}, **meta()}
    good = {"Mcp-Param-Region": "=?base64?SGVsbG8sIOS4lueVjA==?=", "Mcp-Param-Limit": "5.0"}
    response = post(sql_server, "tools/call", params, headers=good)
    assert response.status_code == 200 and response.json()["result"]["content"][0]["text"] == \
        "Hello, 世界:5:SELECT 1"
    for headers in ({"Mcp-Param-Limit": "5"}, {**good, "Mcp-Param-Limit": "6"},
                    {**good, "Mcp-Param-Region": "elsewhere"}, {**good, "Mcp-Param-Region": "=?base64?%%%?="}):
        response = post(sql_server, "tools/call", params, headers=headers)
        assert response.status_code == 400 and response.json()["error"]["code"] == -32020, headers
    # an argument that is absent needs no header
    params["arguments"] = {"region": "eu", "query": "SELECT 2"}
    response = post(sql_server, "tools/call", params, headers={"Mcp-Param-Region": "eu"})
    assert response.json()["result"]["content"][0]["text"] == "eu:10:SELECT 2"


@pytest.mark.req("HTTP26-30", "HTTP26-31", "HTTP26-40", "HTTP26-41", "HTTP26-50", "TOOL26-26", "TOOL26-27")
def test_our_client_sends_mcp_param_headers_and_leaves_out_invalid_tools(sql_server):
    from mcp_ref import Client
    with Client.http(sql_server, timeout=30) as client:
        assert [t.name for t in client.list_tools()] == ["execute_sql"]        # bad_header left out
        result = client.call_tool("execute_sql", {"region": " padded ", "limit": 3, "query": "SELECT 3"})
        assert result.content[0].text == " padded :3:SELECT 3"


@pytest.mark.req("HTTP26-7", "HTTP26-10", "HTTP26-11")
def test_every_message_of_our_client_over_http_is_valid(wire_validator):
    from helpers import Recorder
    from mcp_ref import Client
    from mcp_ref.transports import TapTransport
    from mcp_ref.transports.http.client.streamable import StreamableHttpTransport
    from test_modern_client import FEATURES, feature_server
    server = feature_server()
    handle = start_http(server, ("127.0.0.1", 0))
    recorder = Recorder()
    try:
        inner = StreamableHttpTransport(handle.url)
        with Client._over_http(TapTransport(inner, recorder), 30, dict(on_log=lambda p: None, **FEATURES)) as client:
            assert client.modern
            client.call_tool("trip", {"city": "Oslo"})
            client.call_tool("chatty")
            client.subscribe_resource("demo://readme")
            client.read_resource("demo://readme")
            client.get_prompt("greet", {"name": "Ada"})
    finally:
        handle.shutdown()
    assert wire_validator.check_transcript(recorder.raw, MODERN_REVISION) >= 12
