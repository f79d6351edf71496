"""Small checks of 2026-07-28 requirements that the scenario tests do not pin one
by one (rows of spec_notes/traceability-2026-07-28.md)."""
import pytest

from mcp_ref.client.modern.requesting import check_result_type
from mcp_ref.errors import McpError


@pytest.mark.req("BASE26-11", "SCHEMA26-16", "CHG26-4")
def test_an_absent_result_type_is_complete():
    assert check_result_type({"content": []}, "tools/call") == "complete"
    assert check_result_type({"tools": []}, "tools/list") == "complete"


@pytest.mark.req("BASE26-10")
@pytest.mark.parametrize("kind", ["bogus", "", "Complete", None, 3])
def test_an_unrecognized_result_type_is_invalid(kind):
    with pytest.raises(McpError):
        check_result_type({"resultType": kind}, "tools/list")
    assert check_result_type({"resultType": "input_required"}, "tools/list") == "input_required"


# ---------------------------------------------------------------------- error codes (basic/index#error-codes)
SPEC_RESERVED = {-32020, -32021, -32022}            # the 2026-07-28 sub-range's defined codes
LEGACY_DEFINED = {-32002, -32042}                   # earlier revisions' codes, still spoken to their peers


@pytest.mark.req("BASE26-15", "BASE26-17")
def test_every_code_we_define_in_the_reserved_range_is_the_specs():
    import mcp_ref.errors as errors
    codes = {value for name, value in vars(errors).items() if name.isupper() and type(value) is int}
    codes |= {cls.code for cls in vars(errors).values() if isinstance(cls, type)
              and issubclass(cls, McpError) and type(getattr(cls, "code", None)) is int}
    reserved = {code for code in codes if -32099 <= code <= -32000}
    assert reserved <= SPEC_RESERVED | LEGACY_DEFINED, reserved - SPEC_RESERVED - LEGACY_DEFINED
    assert {errors.HEADER_MISMATCH, errors.MISSING_REQUIRED_CLIENT_CAPABILITY,
            errors.UNSUPPORTED_PROTOCOL_VERSION} == SPEC_RESERVED


@pytest.mark.req("BASE26-18", "RES26-9", "RES26-12")
def test_a_modern_request_never_gets_32002():
    from helpers import raw_server
    from test_modern_server import Exchange, meta, modern_server
    with raw_server(modern_server()) as (peer, session):
        reply = Exchange(peer).call("resources/read", {"uri": "demo://missing", **meta()})
    assert reply["error"]["code"] == -32602 and "result" not in reply


# ---------------------------------------------------------------------- $ref (basic/index#ref-resolution)
@pytest.mark.req("BASE26-36", "BASE26-37", "BASE26-38")
def test_a_remote_ref_is_never_fetched_and_fails_the_check(monkeypatch):
    pytest.importorskip("jsonschema")
    import socket
    import urllib.request

    from mcp_ref.schema.validation import validate

    def no_network(*args, **kwargs):
        raise AssertionError("a $ref was fetched")
    monkeypatch.setattr(socket, "create_connection", no_network)
    monkeypatch.setattr(urllib.request, "urlopen", no_network)
    schema = {"type": "object", "properties": {"a": {"$ref": "http://127.0.0.1:9/schema.json"}}}
    message = validate({"a": 1}, schema)
    assert message is not None and "cannot validate" in message       # refused, not permissive
    assert "127.0.0.1:9/schema.json" in message                       # the remote reference is why
    local = {"$defs": {"n": {"type": "integer"}}, "type": "object", "properties": {"a": {"$ref": "#/$defs/n"}}}
    assert validate({"a": 1}, local) is None                           # a local $ref still resolves
    assert "is not of type 'integer'" in validate({"a": "x"}, local)


# ---------------------------------------------------------------------- x-mcp-header (server/tools, streamable-http)
def _prop(**schema):
    return {"type": "object", "properties": {"p": schema}}


@pytest.mark.req("HTTP26-32", "HTTP26-33", "HTTP26-34", "HTTP26-35", "HTTP26-36", "HTTP26-38", "HTTP26-39",
                 "TOOL26-19", "TOOL26-20", "TOOL26-21", "TOOL26-22", "TOOL26-23", "TOOL26-25")
@pytest.mark.parametrize("schema", [
    _prop(type="string", **{"x-mcp-header": ""}),                                   # empty
    _prop(type="string", **{"x-mcp-header": "Re gion"}),                            # not a token
    _prop(type="string", **{"x-mcp-header": "Region:"}),
    _prop(type="string", **{"x-mcp-header": "a\r\nb"}),                             # control characters
    _prop(type="string", **{"x-mcp-header": "a\x7fb"}),
    _prop(type="string", **{"x-mcp-header": 7}),
    {"type": "object", "properties": {"a": {"type": "string", "x-mcp-header": "Region"},
                                      "b": {"type": "string", "x-mcp-header": "region"}}},   # case-insensitive twice
    _prop(type="number", **{"x-mcp-header": "N"}),                                  # not a primitive we allow
    _prop(type="object", **{"x-mcp-header": "O"}),
    _prop(type="array", **{"x-mcp-header": "A"}),
    _prop(type="array", items={"type": "string", "x-mcp-header": "Item"}),          # through items
    {"anyOf": [_prop(type="string", **{"x-mcp-header": "Any"})]},                   # through composition
    {"type": "object", "if": _prop(type="string", **{"x-mcp-header": "If"})},       # through a conditional
    {"$defs": {"d": {"type": "string", "x-mcp-header": "Def"}},
     "type": "object", "properties": {"p": {"$ref": "#/$defs/d"}}},                 # through $ref
    {"type": "string", "x-mcp-header": "Root"},                                     # the root itself
])
def test_an_x_mcp_header_breaking_a_constraint_makes_the_tool_invalid(schema):
    from mcp_ref.transports.http.modern import param_annotations
    with pytest.raises(ValueError):
        param_annotations(schema)


def test_x_mcp_header_reached_through_properties_alone_is_valid():
    from mcp_ref.transports.http.modern import param_annotations
    schema = {"type": "object", "properties": {"o": {"type": "object", "properties": {
        "r": {"type": "string", "x-mcp-header": "Region"}, "n": {"type": "integer", "x-mcp-header": "N-1"},
        "b": {"type": "boolean", "x-mcp-header": "b.ok"}}}}}
    assert param_annotations(schema) == {"Region": (("o", "r"), "string"), "N-1": (("o", "n"), "integer"),
                                         "b.ok": (("o", "b"), "boolean")}


@pytest.mark.req("HTTP26-37", "TOOL26-24", "HTTP26-56", "HTTP26-57", "HTTP26-58", "HTTP26-46", "HTTP26-62")
def test_param_headers_follow_the_table_and_the_safe_integer_range():
    from mcp_ref.transports.http.modern import decode_value, param_annotations, param_headers, param_problem
    annotations = param_annotations({"type": "object", "properties": {
        "n": {"type": "integer", "x-mcp-header": "N"}, "s": {"type": "string", "x-mcp-header": "S"}}})

    def headers(sent):
        return lambda name: {k.lower(): v for k, v in sent.items()}.get(name)
    assert param_headers(annotations, {"n": 5, "s": None}) == {"Mcp-Param-N": "5"}      # null: omitted
    assert param_headers(annotations, {}) == {}                                          # absent: omitted
    assert param_problem(headers({}), annotations, {"s": None}) is None                  # null: not expected
    assert param_problem(headers({}), annotations, {}) is None                           # absent: not expected
    assert param_problem(headers({}), annotations, {"n": 5}).code == -32020              # provided: required
    assert param_problem(headers({"Mcp-Param-N": "42.0"}), annotations, {"n": 42}) is None   # numerically
    safe = 2 ** 53 - 1
    assert param_problem(headers({"Mcp-Param-N": str(safe)}), annotations, {"n": safe}) is None
    for unsafe in (2 ** 53, -(2 ** 53)):
        assert param_problem(headers({"Mcp-Param-N": str(unsafe)}), annotations, {"n": unsafe}).code == -32020
    assert decode_value("=?base64?eA==?=") == "x"
    assert decode_value("=?BASE64?eA==?=") == "=?BASE64?eA==?="        # the markers are lowercase only


@pytest.mark.req("HTTP26-42", "TOOL26-26", "TOOL26-27", "TOOL26-28")
def test_our_client_leaves_out_an_invalid_tool_with_a_warning(caplog):
    from mcp_ref import types
    from mcp_ref.client.modern.era import valid_for_http
    good = types.Tool.from_dict({"name": "good", "inputSchema": _prop(type="string", **{"x-mcp-header": "G"})})
    bad = types.Tool.from_dict({"name": "bad", "inputSchema": _prop(type="number", **{"x-mcp-header": "B"})})
    with caplog.at_level("WARNING", logger="mcp_ref.client"):
        kept = valid_for_http([good, bad])
    assert kept == [good]
    assert "'bad'" in caplog.text and "number" in caplog.text


# ---------------------------------------------------------------------- HTTP framing (streamable-http)
@pytest.fixture
def modern_url():
    from mcp_ref.transports.http.server.app import start_http
    from test_modern_server import modern_server
    handle = start_http(modern_server(), ("127.0.0.1", 0))
    try:
        yield handle.url
    finally:
        handle.shutdown()


@pytest.mark.req("HTTP26-60", "HTTP26-14", "HTTP26-19", "HTTP26-18", "HTTP26-16")
def test_header_names_are_case_insensitive_and_answers_are_json_or_a_stream(modern_url):
    import json

    requests = pytest.importorskip("requests")
    from conftest import MODERN_REVISION
    from test_modern_http import messages
    from test_modern_server import LEVEL, meta

    def send(method, params, **headers):
        body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
        return requests.post(modern_url, data=json.dumps(body), timeout=30, headers=headers)
    odd = {"aCCEPT": "application/json", "content-TYPE": "application/json", "mcp-protocol-version": MODERN_REVISION,
           "MCP-METHOD": "tools/call", "mcp-NAME": "echo"}
    response = send("tools/call", {"name": "echo", "arguments": {"text": "x"}, **meta()}, **odd)
    assert response.status_code == 200, response.text
    assert response.headers["Content-Type"].startswith("application/json")
    assert response.json()["result"]["content"][0]["text"] == "x"
    params = {"name": "chatty", "arguments": {}, "_meta": {**meta(**{LEVEL: "info"})["_meta"], "progressToken": "p"}}
    response = send("tools/call", params,
                    **{**odd, "aCCEPT": "application/json, text/event-stream", "mcp-NAME": "chatty"})
    assert response.headers["Content-Type"].startswith("text/event-stream")
    assert response.headers["X-Accel-Buffering"] == "no"
    found = messages(response)                       # read to the end: the response ended the stream
    assert "result" in found[-1] and all("method" in m and "id" not in m for m in found[:-1])
    assert {m["params"].get("progressToken") for m in found[:-1] if m["method"] == "notifications/progress"} == {"p"}


# ---------------------------------------------------------------------- who sends what (patterns, stdio, HTTP)
@pytest.mark.req("PAT26-1", "MRTR26-1", "HTTP26-17", "STDIO26-8", "STDIO26-6", "HTTP26-11", "CANC26-3",
                 "CANC26-11", "SCHEMA26-23", "MRTR26-5", "MRTR26-6", "MRTR26-11", "SCHEMA26-29")
@pytest.mark.req("TRN26-2", "TRN26-3")
def test_a_modern_server_sends_no_requests_and_our_client_no_responses(wire_validator):
    from test_modern_client import FEATURES, Connected, feature_server
    connected = Connected(feature_server(), wire_validator, on_log=lambda params: None, **FEATURES)
    with connected as client:
        assert client.modern
        client.call_tool("trip", {"city": "Oslo"})
        client.call_tool("chatty")
    received, sent = connected.recorder.received(), connected.recorder.sent()
    assert not [m for m in received if "method" in m and "id" in m]               # no server-to-client request
    assert not [m for m in received if m.get("method") == "notifications/cancelled"]
    assert not [m for m in sent if "method" not in m]                              # no response from the client
    interim = [m["result"] for m in received if m.get("result", {}).get("resultType") == "input_required"]
    assert interim and all(r["requestState"] and len(r["inputRequests"]) == 1 for r in interim)
    assert {r["inputRequests"][k]["method"] for r in interim for k in r["inputRequests"]} == {
        "elicitation/create", "sampling/createMessage", "roots/list"}


@pytest.mark.req("MRTR26-4")
@pytest.mark.parametrize("method", ["tools/list", "completion/complete", "server/discover", "subscriptions/listen"])
def test_input_requests_are_refused_outside_the_three_methods(method):
    from mcp_ref.protocol import modern
    from mcp_ref.errors import SessionError
    from mcp_ref.server.modern.mrtr import ask

    class Ctx:
        era = modern.RequestMeta(modern.MODERN_REVISION, {"roots": {}})
        _mrtr = None
    ctx = Ctx()
    ctx.method = method
    with pytest.raises(SessionError, match="only during"):
        ask(ctx, "roots/list", {}, "roots-1")


@pytest.mark.req("MRTR26-16", "MRTR26-17", "MRTR26-18", "MRTR26-20", "MRTR26-3", "MRTR26-15")
def test_the_retry_echoes_the_state_exactly_and_carries_only_its_own_answers():
    from mcp_ref.client.modern.mrtr import retry_params
    base = {"name": "t", "arguments": {"a": 1}, "requestState": "old", "inputResponses": {"old": {}}}
    asked = {"resultType": "input_required", "inputRequests": {"r": {"method": "roots/list"}}}
    answered = []

    def answer(method, params):
        answered.append(method)
        return {"roots": []}
    assert retry_params(base, "tools/call", asked, answer) == {
        "name": "t", "arguments": {"a": 1}, "inputResponses": {"r": {"roots": []}}}     # no state: none sent
    assert answered == ["roots/list"]                                                 # answered before the retry
    opaque = " not.base64 é=="
    retry = retry_params(base, "tools/call", {"resultType": "input_required", "requestState": opaque}, answer)
    assert retry["requestState"] == opaque and "inputResponses" not in retry
    with pytest.raises(McpError):
        retry_params(base, "tools/list", asked, answer)


@pytest.mark.req("MRTR26-21", "MRTR26-22", "MRTR26-23", "MRTR26-24")
def test_the_server_checks_input_responses_ignores_extras_and_asks_again():
    from conftest import MODERN_REVISION
    from test_modern_client import FEATURES, Connected, feature_server
    with Connected(feature_server(), None, **FEATURES) as client:
        params = {"name": "trip", "arguments": {"city": "Oslo"}, "_meta": client._modern_meta(MODERN_REVISION)}
        state = client.session.request("tools/call", params)["requestState"]
        with pytest.raises(McpError) as info:
            client.session.request("tools/call", {**params, "requestState": state, "inputResponses": ["no"]})
        assert info.value.code == -32602
        again = client.session.request("tools/call", {**params, "requestState": state})
        assert again["resultType"] == "input_required" and list(again["inputRequests"]) == ["elicit-1"]
        answers = {"elicit-1": {"action": "accept", "content": {"confirm": True}}, "bogus": {"x": 1}}
        extra = client.session.request("tools/call", {**params, "requestState": state, "inputResponses": answers})
        assert list(extra["inputRequests"]) == ["sample-1"]


# ---------------------------------------------------------------------- lists (tools, resources, prompts)
@pytest.mark.req("TOOL26-5", "TOOL26-6", "RES26-3", "RES26-4", "PROM26-3", "PROM26-4")
def test_lists_are_the_same_on_every_connection_and_after_other_requests():
    from helpers import raw_server
    from test_modern_server import Exchange, meta, modern_server
    server = modern_server()
    with raw_server(server) as (one, _), raw_server(server) as (two, _):
        a, b = Exchange(one), Exchange(two)
        for method, key in (("tools/list", "tools"), ("resources/list", "resources"), ("prompts/list", "prompts")):
            first = a.call(method)["result"]
            assert first[key]
            b.call("tools/call", {"name": "echo", "arguments": {"text": "x"}, **meta()})
            b.call("resources/read", {"uri": "demo://readme", **meta()})
            assert b.call(method)["result"][key] == first[key] == a.call(method)["result"][key]


@pytest.mark.req("CACHE26-16", "CACHE26-17")
def test_every_page_of_a_list_has_the_same_cache_scope():
    from helpers import raw_server
    from mcp_ref import Server
    from test_modern_server import Exchange, meta
    server = Server("pages", page_size=2)
    for i in range(5):
        server.add_tool(lambda: "", name=f"tool{i}")
    server.cache_hints = {"tools/list": (1000, "private")}
    with raw_server(server) as (peer, _):
        exchange, scopes, cursor = Exchange(peer), [], None
        while True:
            params = meta() if cursor is None else {"cursor": cursor, **meta()}
            result = exchange.call("tools/list", params)["result"]
            scopes.append((result["cacheScope"], result["ttlMs"]))
            cursor = result.get("nextCursor")
            if cursor is None:
                break
    assert len(scopes) == 3 and set(scopes) == {("private", 1000)}


# ---------------------------------------------------------------------- extensions (versioning)
@pytest.mark.req("VERS26-4", "SCHEMA26-46")
def test_extension_names_need_a_prefix():
    from mcp_ref.client.modern.era import read_capabilities
    from mcp_ref.errors import InvalidParamsError
    assert read_capabilities({"extensions": {"io.modelcontextprotocol/tasks": {}}})
    with pytest.raises(InvalidParamsError):
        read_capabilities({"extensions": {"tasks": {}}})


# ---------------------------------------------------------------------- subscriptions/listen
@pytest.mark.req("SUBS26-2", "SCHEMA26-27", "SCHEMA26-28", "BASE26-53", "SCHEMA26-8", "SUBS26-1", "SCHEMA26-47",
                 "SCHEMA26-48", "CANC26-5", "STDIO26-9", "SCHEMA26-26", "CANC26-1")
def test_a_listen_is_acknowledged_before_anything_else_and_cancelled_when_replaced():
    import threading

    from test_modern_client import Connected, feature_server
    server = feature_server()
    stop = threading.Event()

    def churn():
        while not stop.is_set():
            server.notify_resource_updated("demo://readme")
            stop.wait(0.001)
    connected = Connected(server, None, on_resource_updated=lambda uri: None)
    with connected as client:
        thread = threading.Thread(target=churn, daemon=True)
        thread.start()
        try:
            for _ in range(3):
                client.subscribe_resource("demo://readme")
                client.unsubscribe_resource("demo://readme")
        finally:
            stop.set()
            thread.join(10)
    first: dict = {}
    for message in connected.recorder.received():
        subscription = ((message.get("params") or {}).get("_meta") or {}).get("io.modelcontextprotocol/subscriptionId")
        if subscription is not None:
            first.setdefault(subscription, message["method"])
            assert message["method"] in ("notifications/subscriptions/acknowledged",
                                         "notifications/resources/updated")    # nothing it did not ask for
    assert first and set(first.values()) == {"notifications/subscriptions/acknowledged"}
    sent = connected.recorder.sent()
    listens = [m["id"] for m in sent if m.get("method") == "subscriptions/listen"]
    cancelled = [m["params"]["requestId"] for m in sent if m.get("method") == "notifications/cancelled"]
    assert listens and set(cancelled) <= set(listens) and len(cancelled) >= len(listens) - 1


@pytest.mark.req("CANC26-2")
@pytest.mark.xfail(strict=True, reason="a server ending a listen on its own (its session closing) sends no "
                                       "notifications/cancelled referencing it")
def test_a_server_ending_a_listen_cancels_it():
    from test_modern_client import Connected, feature_server
    connected = Connected(feature_server(), None, on_resource_updated=lambda uri: None)
    with connected as client:
        client.subscribe_resource("demo://readme")
        listen = [m["id"] for m in connected.recorder.sent() if m.get("method") == "subscriptions/listen"][-1]
        connected.session.close()
        connected.session.wait_closed(2)
    assert any(m.get("method") == "notifications/cancelled" and m["params"].get("requestId") == listen
               for m in connected.recorder.received())


@pytest.mark.req("ELIC26-22")
def test_a_declined_elicitation_reaches_the_function_as_its_answer(wire_validator):
    from test_modern_client import FEATURES, Connected, feature_server
    declined = {**FEATURES, "elicitation": lambda request: {"action": "decline"}}
    with Connected(feature_server(), wire_validator, **declined) as client:
        assert client.modern
        assert client.call_tool("trip", {"city": "Oslo"}).content[0].text.startswith("decline:None:")


@pytest.mark.req("SAMP26-12")
@pytest.mark.parametrize("message", [{"content": {"type": "text", "text": "x"}}, {"role": "user"}])
def test_a_sampling_message_needs_a_user_or_assistant_role_and_content(message):
    from mcp_ref.errors import InvalidParamsError
    from mcp_ref.types.client_features import SamplingMessage
    with pytest.raises(InvalidParamsError):
        SamplingMessage.from_dict(message)
    assert SamplingMessage.from_dict({"role": "assistant", "content": {"type": "text", "text": "x"}}).role == "assistant"


@pytest.mark.req("CHG26-5")
@pytest.mark.xfail(strict=True, reason="a broken modern response stream fails the call; the client does not "
                                       "re-issue the request by itself")
def test_a_request_whose_stream_broke_is_reissued_with_a_new_id():
    import json
    import socket
    import threading

    from mcp_ref import Client
    listener = socket.create_server(("127.0.0.1", 0))
    ids = []

    def serve():
        for n in range(2):
            conn, _ = listener.accept()
            with conn:
                data = b""
                while b"\r\n\r\n" not in data:
                    data += conn.recv(65536)
                head, _, body = data.partition(b"\r\n\r\n")
                length = int([line.split(b":")[1] for line in head.split(b"\r\n")
                              if line.lower().startswith(b"content-length")][0])
                while len(body) < length:
                    body += conn.recv(65536)
                request = json.loads(body)
                ids.append(request["id"])
                if n == 0:
                    continue                                # the stream breaks: no answer
                reply = json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": {
                    "resultType": "complete", "supportedVersions": ["2026-07-28"], "capabilities": {}}}).encode()
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
                             + str(len(reply)).encode() + b"\r\nConnection: close\r\n\r\n" + reply)
    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        with Client.http(f"http://127.0.0.1:{listener.getsockname()[1]}/mcp", protocol_version="2026-07-28",
                         timeout=5, init_timeout=5) as client:
            assert client.modern
        assert len(ids) == 2 and ids[0] != ids[1]
    finally:
        listener.close()
