"""The server in the modern era, 2026-07-28 (Spec 2026-07-28: basic/versioning,
basic/index#meta, server/discover, server/utilities/caching, server/utilities/logging).

A scripted raw peer plays a modern client over ``memory_pair()``: no
``initialize``, every request carries its ``_meta``. Every message the server
sends in a modern exchange is validated against the 2026-07-28 ``schema.json``.
The same server still serves a legacy client (``initialize``) on the same
connection, as before.
"""
import pytest

from conftest import MODERN_REVISION, validate_wire
from helpers import initialize_raw, raw_server
from mcp_ref import Context, Server

V = "io.modelcontextprotocol/protocolVersion"
CAPS = "io.modelcontextprotocol/clientCapabilities"
INFO = "io.modelcontextprotocol/clientInfo"
LEVEL = "io.modelcontextprotocol/logLevel"
SERVER_INFO = "io.modelcontextprotocol/serverInfo"


def meta(**extra) -> dict:
    entries = {V: MODERN_REVISION, CAPS: {}, INFO: {"name": "raw-modern", "version": "1.0"}}
    entries.update(extra)
    return {"_meta": {k: v for k, v in entries.items() if v is not None}}


def modern_server(**options) -> Server:
    server = Server("modern-server", version="3.1", instructions="Use echo.", **options)

    @server.tool
    def echo(text: str) -> str:
        """Echo the text."""
        return text

    @server.tool
    def chatty(ctx: Context) -> str:
        """Logs at three levels and reports progress."""
        ctx.report_progress(1, 2, "half")
        for level in ("debug", "info", "warning"):
            ctx.log(level, f"a {level} message")
        return "done"

    @server.tool
    def zeta() -> str:
        return "z"

    @server.tool
    def alpha() -> str:
        return "a"

    @server.resource("demo://readme")
    def readme() -> str:
        return "read me"

    @server.prompt
    def greet(name: str) -> str:
        return f"Hello {name}"

    return server


class Exchange:
    """A raw modern client: ``call(method, params)`` sends, validates what comes back."""

    def __init__(self, peer):
        self.peer = peer
        self.next_id = 0
        self.seen: list = []            # every other message the server sent (notifications)

    def call(self, method: str, params=None, *, sent_ok: bool = True) -> dict:
        self.next_id += 1
        message = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params if params is not None
                   else meta()}
        if sent_ok:
            validate_wire(message, MODERN_REVISION, "request", sender="client")
        self.peer.send(message)
        before = len(self.seen)
        reply = self.peer.recv_reply(self.next_id, skipped=self.seen)
        for note in self.seen[before:]:
            validate_wire(note, MODERN_REVISION, "notification", sender="server")
        validate_wire(reply, MODERN_REVISION, request_method=method if "result" in reply else None)
        return reply


@pytest.fixture
def exchange():
    with raw_server(modern_server()) as (peer, session):
        yield Exchange(peer)


@pytest.mark.req("VERS26-3", "SCHEMA26-44", "CHG26-2", "CACHE26-1", "CACHE26-8", "DISC26-1", "DISC26-3", "PROM26-2")
def test_discover_needs_no_initialize_and_names_versions_capabilities_identity(exchange):
    reply = exchange.call("server/discover")
    result = reply["result"]
    assert result["resultType"] == "complete"
    assert result["supportedVersions"][0] == MODERN_REVISION
    assert "2025-11-25" in result["supportedVersions"]              # dual-era: legacy clients too
    assert set(result["capabilities"]) == {"tools", "resources", "prompts", "logging"}
    assert "tasks" not in result["capabilities"]
    assert result["_meta"][SERVER_INFO] == {"name": "modern-server", "version": "3.1"}
    assert result["instructions"] == "Use echo."
    assert (result["ttlMs"], result["cacheScope"]) == (0, "public")


@pytest.mark.req("BASE26-8", "SCHEMA26-15", "CACHE26-1", "CACHE26-8",
                 "BASE26-51", "SCHEMA26-17", "CACHE26-18", "CHG26-1")
@pytest.mark.req("BASE26-51", "SCHEMA26-17", "CACHE26-18", "CHG26-1")
def test_every_result_has_result_type_server_info_and_cache_hints_where_cacheable(exchange):
    cacheable = {"tools/list": "public", "prompts/list": "public", "resources/list": "public",
                 "resources/templates/list": "public"}
    for method, scope in cacheable.items():
        result = exchange.call(method)["result"]
        assert (result["resultType"], result["ttlMs"], result["cacheScope"]) == ("complete", 0, scope)
        assert result["_meta"][SERVER_INFO]["name"] == "modern-server"
    read = exchange.call("resources/read", {"uri": "demo://readme", **meta()})["result"]
    assert read["contents"][0]["text"] == "read me" and read["cacheScope"] == "private"
    call = exchange.call("tools/call", {"name": "echo", "arguments": {"text": "hi"}, **meta()})["result"]
    assert call["content"] == [{"type": "text", "text": "hi"}] and call["resultType"] == "complete"
    assert "ttlMs" not in call                                      # not a cacheable result
    prompt = exchange.call("prompts/get", {"name": "greet", "arguments": {"name": "Ada"}, **meta()})["result"]
    assert prompt["resultType"] == "complete" and prompt["_meta"][SERVER_INFO]["version"] == "3.1"


@pytest.mark.req("CACHE26-18")
def test_cache_hints_can_be_changed_per_method():
    server = modern_server()
    server.cache_hints = {"tools/list": (60000, "private")}
    with raw_server(server) as (peer, _):
        exchange = Exchange(peer)
        assert exchange.call("tools/list")["result"]["ttlMs"] == 60000
        assert exchange.call("prompts/list")["result"]["ttlMs"] == 0      # the default for the others


@pytest.mark.req("TOOL26-7", "CHG26-6", "TOOL26-5")
def test_tools_list_order_is_deterministic(exchange):
    names = [t["name"] for t in exchange.call("tools/list")["result"]["tools"]]
    assert names == ["echo", "chatty", "zeta", "alpha"]                 # registration order
    assert [t["name"] for t in exchange.call("tools/list")["result"]["tools"]] == names


@pytest.mark.parametrize("bad_meta, what", [
    (None, "_meta"),
    ({CAPS: {}}, V),
    ({V: 20260728, CAPS: {}}, V),
    ({V: MODERN_REVISION}, CAPS),
    ({V: MODERN_REVISION, CAPS: []}, CAPS),
    ({V: MODERN_REVISION, CAPS: {}, INFO: {"name": "x"}}, INFO),
    ({V: MODERN_REVISION, CAPS: {}, LEVEL: "loud"}, LEVEL),
])
@pytest.mark.req("BASE26-45", "BASE26-46", "MRTR26-2", "LOG26-5")
def test_a_request_missing_or_malforming_its_meta_is_invalid_params(exchange, bad_meta, what):
    params = {"_meta": bad_meta} if bad_meta is not None else {}
    method = "server/discover" if bad_meta is None or V not in bad_meta else "tools/list"
    reply = exchange.call(method, params, sent_ok=False)
    assert reply["error"]["code"] == -32602
    assert what in reply["error"]["message"]


@pytest.mark.parametrize("version", ["1900-01-01", "2025-11-25"])
@pytest.mark.req("VERS26-1", "SCHEMA26-10")
def test_an_unsupported_version_gets_the_supported_list(exchange, version):
    reply = exchange.call("tools/list", meta(**{V: version}), sent_ok=False)
    validate_wire(reply, MODERN_REVISION, "error")
    error = reply["error"]
    assert error["code"] == -32022
    assert error["data"]["requested"] == version
    assert error["data"]["supported"][0] == MODERN_REVISION


@pytest.mark.parametrize("method", ["ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe",
                                    "tasks/list", "tasks/result", "initialize", "no/such"])
def test_methods_the_modern_era_removed_are_not_found(exchange, method):
    reply = exchange.call(method, sent_ok=False)
    assert reply["error"]["code"] == -32601, reply


@pytest.mark.req("RES26-9", "RES26-11", "RES26-12", "BASE26-18", "BASE26-19")
def test_resource_not_found_is_invalid_params_in_2026_and_32002_before():
    with raw_server(modern_server()) as (peer, _):
        exchange = Exchange(peer)
        modern = exchange.call("resources/read", {"uri": "demo://nope", **meta()})
        assert modern["error"]["code"] == -32602 and modern["error"]["data"] == {"uri": "demo://nope"}
        initialize_raw(peer, "2025-11-25", request_id="init")
        legacy = peer.request("legacy-read", "resources/read", {"uri": "demo://nope"})
        assert legacy["error"]["code"] == -32002
        validate_wire(legacy, "2025-11-25", "error")
        # the modern client on the same connection is still served as a modern one
        assert exchange.call("resources/read", {"uri": "demo://nope", **meta()})["error"]["code"] == -32602


def test_legacy_handshake_and_ping_still_served_on_the_same_server(exchange):
    assert exchange.call("tools/list")["result"]["resultType"] == "complete"
    result = initialize_raw(exchange.peer, "2025-06-18", request_id="init")
    assert result["protocolVersion"] == "2025-06-18"
    validate_wire({"jsonrpc": "2.0", "id": "init", "result": result}, "2025-06-18", request_method="initialize")
    exchange.peer.ping()
    legacy = exchange.peer.request("l1", "tools/list", {})
    assert "resultType" not in legacy["result"] and "ttlMs" not in legacy["result"]
    validate_wire(legacy, "2025-06-18", request_method="tools/list")


@pytest.mark.req("LOG26-3", "SCHEMA26-14", "CHG26-3", "LOG26-4")
def test_log_messages_only_with_a_level_in_meta_and_progress_on_the_request(exchange):
    quiet = exchange.call("tools/call", {"name": "chatty", "arguments": {}, **meta()})
    assert quiet["result"]["content"][0]["text"] == "done"
    assert not [m for m in exchange.seen if m.get("method") == "notifications/message"]
    exchange.seen.clear()
    params = {"name": "chatty", "arguments": {}, "_meta": {**meta(**{LEVEL: "info"})["_meta"], "progressToken": 7}}
    exchange.call("tools/call", params)
    logged = [m["params"]["level"] for m in exchange.seen if m.get("method") == "notifications/message"]
    assert logged == ["info", "warning"]
    progress = [m["params"] for m in exchange.seen if m.get("method") == "notifications/progress"]
    assert progress == [{"progressToken": 7, "progress": 1, "total": 2, "message": "half"}]


@pytest.mark.req("LOG26-4", "SUBS26-1")
def test_broadcasts_and_list_changes_do_not_reach_a_modern_connection():
    server = modern_server()
    with raw_server(server) as (peer, _):
        exchange = Exchange(peer)
        exchange.call("tools/list", meta(**{LEVEL: "debug"}))
        assert server.log("error", "to everyone") == 0
        server.add_tool(lambda: "new", name="added")
        exchange.call("server/discover")                   # anything sent meanwhile would come first
        assert exchange.seen == []


@pytest.mark.req("BASE26-49", "SCHEMA26-13", "BASE26-23", "BASE26-24", "BASE26-52", "SCHEMA26-12")
def test_client_info_and_capabilities_are_the_requests_own():
    server = Server("who")
    seen = []

    @server.tool
    def who(ctx: Context) -> str:
        seen.append((ctx.protocol_version, ctx.client_capabilities, ctx.client_info.name))
        return "ok"

    with raw_server(server) as (peer, _):
        exchange = Exchange(peer)
        exchange.call("tools/call", {"name": "who", "arguments": {},
                                     **meta(**{CAPS: {"roots": {}}, INFO: {"name": "first", "version": "1"}})})
        exchange.call("tools/call", {"name": "who", "arguments": {},
                                     **meta(**{INFO: {"name": "second", "version": "2"}})})
    assert seen == [(MODERN_REVISION, {"roots": {}}, "first"), (MODERN_REVISION, {}, "second")]
