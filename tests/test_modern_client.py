"""The client in both eras (Spec 2026-07-28: basic/versioning#backward-compatibility-
with-initialization-based-versions, basic/transports/stdio#backward-compatibility,
basic/patterns/mrtr, basic/patterns/subscriptions).

``Client(protocol_version="auto")``, the default, probes with ``server/discover``:
against our dual-era server it speaks 2026-07-28 (every request with its
``_meta``, no handshake), against a legacy server it runs ``initialize`` as
before. The same script gets the same results in both eras, the client's
sampling/elicitation/roots callbacks answer multi round-trip input requests, and
``subscribe_resource`` rides ``subscriptions/listen``. Every message of a
2026-07-28 exchange, both ways, is validated against the 2026-07-28 schema.
"""
import threading

import pytest

from conftest import MODERN_REVISION
from helpers import WAIT, RawPeer, Recorder, run_in_thread
from mcp_ref import (Client, Context, McpError, MissingRequiredClientCapabilityError, Server,
                     UnsupportedProtocolVersion, UserRejectedError)
from mcp_ref.transports import TapTransport, memory_pair

V = "io.modelcontextprotocol/protocolVersion"
FORM = {"type": "object", "properties": {"confirm": {"type": "boolean"}}, "required": ["confirm"]}


def feature_server(runs=None) -> Server:
    server = Server("both-eras", version="7.0", instructions="Try trip.")

    @server.tool
    def echo(text: str) -> str:
        """Echo."""
        return text

    @server.tool
    def weather(city: str) -> dict:
        """Structured output."""
        return {"city": city, "temperature": 21.5}

    @server.tool
    def trip(city: str, ctx: Context) -> str:
        """Asks the user, the LLM and the roots, then answers."""
        if runs is not None:
            runs.append(city)
        answer = ctx.elicit(f"Book {city}?", FORM)
        llm = ctx.sample([f"Describe {city}"], max_tokens=20)
        roots = ctx.list_roots()
        return f"{answer.action}:{answer.content}:{llm.content.text}:{[r.uri for r in roots]}"

    @server.tool
    def chatty(ctx: Context) -> str:
        for level in ("debug", "warning"):
            ctx.log(level, f"{level} note")
        return "said"

    @server.resource("demo://readme")
    def readme() -> str:
        return "read me"

    @server.resource("demo://users/{name}")
    def user(name: str) -> str:
        return f"user {name}"

    @server.prompt
    def greet(name: str) -> str:
        return f"Hello {name}"

    @server.completion
    def complete(ref, argument, context):
        return [n for n in ("Ada", "Alan") if n.startswith(argument.value)]

    return server


def sampler(request):
    return {"role": "assistant", "content": {"type": "text", "text": "sunny"}, "model": "test-model"}


FEATURES = dict(sampling=sampler, elicitation=lambda request: {"action": "accept", "content": {"confirm": True}},
                roots=["file:///srv/trips"])


class Connected:
    """A served memory pair with a tapped client; validates the 2026-07-28 transcript after."""

    def __init__(self, server, wire_validator, **options):
        client_end, server_end = memory_pair()
        self.session = server.serve(server_end)
        self.recorder = Recorder()
        options.setdefault("timeout", WAIT)
        options.setdefault("init_timeout", WAIT)
        self.client = Client(TapTransport(client_end, self.recorder), **options)
        self.wire_validator = wire_validator

    def __enter__(self):
        self.client.__enter__()
        return self.client

    def __exit__(self, *exc):
        self.client.__exit__(*exc)
        self.session.close()
        if exc[0] is None and self.wire_validator is not None and self.client.protocol_version == MODERN_REVISION:
            assert self.wire_validator.check_transcript(self.recorder.raw, MODERN_REVISION) > 0


def script(client) -> dict:
    """What a script sees; the same in both eras."""
    return {
        "tools": [t.name for t in client.list_tools()],
        "echo": client.call_tool("echo", {"text": "hi"}),
        "weather": client.call_tool("weather", {"city": "Oslo"}),
        "resources": client.list_resources(),
        "templates": client.list_resource_templates(),
        "read": client.read_resource("demo://users/ada"),
        "prompts": client.list_prompts(),
        "prompt": client.get_prompt("greet", {"name": "Ada"}),
        "complete": client.complete({"type": "ref/prompt", "name": "greet"}, ("name", "A")),
        "info": (client.server_info.name, client.server_info.version, client.instructions),
    }


@pytest.mark.req("BASE26-1", "VERS26-7")
def test_auto_speaks_2026_07_28_with_our_server_and_a_script_sees_the_same_results(wire_validator):
    with Connected(feature_server(), wire_validator) as client:
        assert client.modern and client.protocol_version == MODERN_REVISION
        modern = script(client)
        client.ping()                               # answered by server/discover: no ping in 2026-07-28
    with Connected(feature_server(), wire_validator, protocol_version="2025-11-25") as client:
        assert not client.modern
        legacy = script(client)
    assert modern == legacy
    assert modern["weather"].structured_content == {"city": "Oslo", "temperature": 21.5}


@pytest.mark.req("MRTR26-2", "TOOL26-1", "RES26-1", "PROM26-1", "COMP26-1", "PAGE26-1", "BASE26-48", "SCHEMA26-11", "CHG26-1", "ROOT26-2", "SAMP26-6", "ELIC26-4", "VERS26-9", "STDIO26-14", "STDIO26-16", "DISC26-2", "BASE26-1")
def test_every_modern_request_carries_its_meta_and_there_is_no_handshake(wire_validator):
    connected = Connected(feature_server(), wire_validator, client_info={"name": "meta-test", "version": "9"},
                          **FEATURES)
    with connected as client:
        client.call_tool("echo", {"text": "x"})
    requests = [m for m in connected.recorder.sent() if "id" in m and "method" in m]
    assert requests[0]["method"] == "server/discover"
    assert "initialize" not in [m.get("method") for m in connected.recorder.sent()]
    for request in requests:
        meta = request["params"]["_meta"]
        assert meta[V] == MODERN_REVISION
        assert meta["io.modelcontextprotocol/clientInfo"] == {"name": "meta-test", "version": "9"}
        assert meta["io.modelcontextprotocol/clientCapabilities"] == {
            "sampling": {}, "roots": {}, "elicitation": {"form": {}},
            "extensions": {"io.modelcontextprotocol/tasks": {}}}       # client/tasks/extension.py rule 1


def test_the_meta_is_made_again_only_when_what_it_says_changes(wire_validator):
    """client/modern/era.py rule 3: the requests share one ``_meta`` until the revision, the log
    level, ``client_info`` or a callback that decides the capabilities is replaced."""
    from mcp_ref.types import Implementation
    connected = Connected(feature_server(), wire_validator)
    made = []
    with connected as client:
        declare = client.capabilities
        client.capabilities = lambda: made.append(1) or declare()
        for _ in range(3):
            client.call_tool("echo", {"text": "x"})
        assert made == []                          # nothing changed since the probe
        client.client_info = Implementation(name="renamed", version="2")
        client.call_tool("echo", {"text": "x"})
        client.sampling = sampler
        client.call_tool("echo", {"text": "x"})
        client.set_logging_level("error")
        client.call_tool("echo", {"text": "x"})
        client.call_tool("echo", {"text": "x"})
        assert len(made) == 3
    metas = [m["params"]["_meta"] for m in connected.recorder.sent() if m.get("method") == "tools/call"]
    info, caps, level = ("io.modelcontextprotocol/" + key for key in ("clientInfo", "clientCapabilities", "logLevel"))
    assert [m[info]["name"] for m in metas] == ["mcp_ref"] * 3 + ["renamed"] * 4
    assert ["sampling" in m[caps] for m in metas] == [False] * 4 + [True] * 3
    assert [m.get(level) for m in metas] == [None] * 5 + ["error"] * 2
    assert all(m[V] == MODERN_REVISION for m in metas)


def test_strip_leaves_what_the_public_methods_parse_and_copies_only_to_remove():
    """client/modern/era.py rule 4: ``resultType``, the cache hints and ``serverInfo`` go; the
    server's own dict comes back when there is nothing to remove."""
    from mcp_ref.client.modern.requesting import strip
    info = {"io.modelcontextprotocol/serverInfo": {"name": "s", "version": "1"}}
    plain = {"content": [], "_meta": {"k": 1}}
    assert strip(plain) is plain
    full = {"content": [], "resultType": "complete", "ttlMs": 5, "cacheScope": "x", "_meta": dict(info, k=1)}
    assert strip(full) == {"content": [], "_meta": {"k": 1}} and "resultType" in full
    assert strip({"content": [], "_meta": info}) == {"content": []}
    assert strip({"content": [], "resultType": "complete", "_meta": 3}) == {"content": [], "_meta": 3}


def test_a_fixed_legacy_revision_runs_initialize_without_a_probe(wire_validator):
    connected = Connected(feature_server(), wire_validator, protocol_version="2025-06-18")
    with connected as client:
        assert client.protocol_version == "2025-06-18" and not client.modern
    assert connected.recorder.sent()[0]["method"] == "initialize"


def legacy_peer(peer: RawPeer, probe_answer="error"):
    """A scripted legacy server: refuses (or ignores) the probe, then serves initialize and tools/list."""
    seen = []
    while True:
        message = peer.recv()
        if message is None:
            return seen
        seen.append(message)
        if "id" not in message:
            continue
        if message["method"] == "server/discover":
            if probe_answer == "error":
                peer.send({"jsonrpc": "2.0", "id": message["id"],
                           "error": {"code": -32600, "message": "not initialized"}})
            continue                                 # "silent": never answered
        if message["method"] == "initialize":
            peer.send({"jsonrpc": "2.0", "id": message["id"], "result": {
                "protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                "serverInfo": {"name": "legacy", "version": "1"}}})
        elif message["method"] == "tools/list":
            peer.send({"jsonrpc": "2.0", "id": message["id"], "result": {"tools": []}})


@pytest.mark.parametrize("probe_answer", ["error", "silent"])
@pytest.mark.req("STDIO26-15", "BASE26-16", "DISC26-2")
def test_auto_falls_back_to_initialize_with_a_legacy_server(probe_answer):
    client_end, peer_end = memory_pair()
    peer = RawPeer(peer_end)
    thread, outcome = run_in_thread(legacy_peer, peer, probe_answer)
    init_timeout = 0.5 if probe_answer == "silent" else WAIT
    with Client(client_end, timeout=WAIT, init_timeout=init_timeout) as client:
        assert not client.modern and client.protocol_version == "2025-11-25"
        assert client.server_info.name == "legacy"
        assert client.list_tools() == []
    status, seen = outcome.get(timeout=WAIT)
    methods = [m.get("method") for m in seen]
    assert methods[0] == "server/discover"
    assert methods[methods.index("initialize") + 1] == "notifications/initialized"
    assert "_meta" not in (seen[methods.index("tools/list")].get("params") or {})    # legacy requests
    thread.join(WAIT)


def test_asking_for_2026_07_28_refuses_a_legacy_server():
    client_end, peer_end = memory_pair()
    peer = RawPeer(peer_end)
    thread, _ = run_in_thread(legacy_peer, peer)
    client = Client(client_end, timeout=WAIT, init_timeout=WAIT, protocol_version=MODERN_REVISION)
    with pytest.raises(UnsupportedProtocolVersion):
        client.connect()
    assert client.closed
    thread.join(WAIT)


@pytest.mark.req("VERS26-2")
def test_a_modern_refusal_with_only_legacy_versions_leads_to_initialize():
    """A recognized modern error (-32022) names the server modern; a dual-era server whose
    ``supported`` list has no modern revision we speak is met with ``initialize``."""
    client_end, peer_end = memory_pair()
    peer = RawPeer(peer_end)

    def dual_era_without_ours():
        probe = peer.recv()
        peer.send({"jsonrpc": "2.0", "id": probe["id"], "error": {
            "code": -32022, "message": "Unsupported protocol version",
            "data": {"supported": ["2027-01-01", "2025-06-18"], "requested": probe["params"]["_meta"][V]}}})
        init = peer.recv()
        peer.send({"jsonrpc": "2.0", "id": init["id"], "result": {
            "protocolVersion": init["params"]["protocolVersion"], "capabilities": {},
            "serverInfo": {"name": "dual", "version": "1"}}})
        return init

    thread, outcome = run_in_thread(dual_era_without_ours)
    with Client(client_end, timeout=WAIT, init_timeout=WAIT) as client:
        assert client.protocol_version == "2025-11-25" and not client.modern
    assert outcome.get(timeout=WAIT)[1]["method"] == "initialize"
    thread.join(WAIT)


# ---------------------------------------------------------------------- multi round-trip requests
@pytest.mark.req("MRTR26-1", "MRTR26-5", "MRTR26-14", "MRTR26-15", "MRTR26-16", "MRTR26-19", "TOOL26-8", "BASE26-5", "BASE26-27")
def test_the_same_tool_asks_through_the_same_callbacks_in_both_eras(wire_validator):
    runs = []
    connected = Connected(feature_server(runs), wire_validator, **FEATURES)
    with connected as client:
        modern = client.call_tool("trip", {"city": "Oslo"})
    assert runs == ["Oslo"] * 4                      # three asks, one round each, then the answer
    runs.clear()
    with Connected(feature_server(runs), wire_validator, protocol_version="2025-11-25", **FEATURES) as client:
        legacy = client.call_tool("trip", {"city": "Oslo"})
    assert runs == ["Oslo"]
    assert modern == legacy
    assert modern.content[0].text == "accept:{'confirm': True}:sunny:['file:///srv/trips']"
    # the wire: each retry is a new request echoing requestState, with the answers so far
    received = connected.recorder.received()
    sent = [m for m in connected.recorder.sent() if m.get("method") == "tools/call"]
    interim = [m["result"] for m in received if m.get("result", {}).get("resultType") == "input_required"]
    assert [list(r["inputRequests"]) for r in interim] == [["elicit-1"], ["sample-1"], ["roots-1"]]
    assert len({m["id"] for m in sent}) == 4
    for before, retry in zip(interim, sent[1:]):
        assert retry["params"]["requestState"] == before["requestState"]
        assert set(retry["params"]["inputResponses"]) == set(before["inputRequests"])
        assert retry["params"]["arguments"] == {"city": "Oslo"}


@pytest.mark.req("MRTR26-7", "MRTR26-8", "MRTR26-25", "MRTR26-9")
def test_a_tampered_or_foreign_request_state_is_refused():
    server = feature_server()
    connected = Connected(server, None, **FEATURES)         # it sends a malformed requestState on purpose
    with connected as client:
        meta = client._modern_meta(MODERN_REVISION)
        first = client.session.request("tools/call", {"name": "trip", "arguments": {"city": "Oslo"}, "_meta": meta})
        state = first["requestState"]
        body, mac = state.split(".")
        for bad in (body + "x." + mac, "nonsense", 42):
            with pytest.raises(McpError) as info:
                client.session.request("tools/call", {"name": "trip", "arguments": {"city": "Oslo"}, "_meta": meta,
                                                      "requestState": bad})
            assert info.value.code == -32602
        with pytest.raises(McpError, match="another request") as info:       # bound to its tool
            client.session.request("tools/call", {"name": "echo", "arguments": {"text": "x"}, "_meta": meta,
                                                  "requestState": state})


def test_a_rejected_sampling_fails_the_call_in_the_modern_era(wire_validator):
    def refuse(request):
        raise UserRejectedError("User rejected sampling request")
    with Connected(feature_server(), wire_validator, **{**FEATURES, "sampling": refuse}) as client:
        with pytest.raises(UserRejectedError):
            client.call_tool("trip", {"city": "Oslo"})


@pytest.mark.req("BASE26-50", "MRTR26-12", "MRTR26-13", "ROOT26-7")
def test_an_undeclared_capability_is_missing_required_client_capability(wire_validator):
    """2026-07-28 basic/index#meta: the server MUST answer -32021 naming what is missing
    (the legacy era's tool gets CapabilityNotSupported, an isError result)."""
    with Connected(feature_server(), wire_validator, elicitation=FEATURES["elicitation"]) as client:
        with pytest.raises(MissingRequiredClientCapabilityError) as info:
            client.call_tool("trip", {"city": "Oslo"})             # no sampling callback: not declared
        assert info.value.data == {"requiredCapabilities": {"sampling": {}}}
    with Connected(feature_server(), wire_validator, protocol_version="2025-11-25",
                   elicitation=FEATURES["elicitation"]) as client:
        result = client.call_tool("trip", {"city": "Oslo"})
        assert result.is_error and "sampling" in result.content[0].text


# ---------------------------------------------------------------------- logging and subscriptions
def test_log_level_rides_every_request(wire_validator):
    logs = []
    connected = Connected(feature_server(), wire_validator, on_log=logs.append)
    with connected as client:
        client.call_tool("chatty")
        client.set_logging_level("warning")
        client.call_tool("chatty")
        assert client.session.wait_closed(0.2) is False       # let the notify thread deliver
    levels = [p.level for p in logs]
    assert levels == ["debug", "warning", "warning"]
    calls = [m for m in connected.recorder.sent() if m.get("method") == "tools/call"]
    assert [c["params"]["_meta"]["io.modelcontextprotocol/logLevel"] for c in calls] == ["debug", "warning"]


def test_without_a_log_listener_no_log_messages_are_asked_for(wire_validator):
    connected = Connected(feature_server(), wire_validator)
    with connected as client:
        client.call_tool("chatty")
    assert not [m for m in connected.recorder.received() if m.get("method") == "notifications/message"]


@pytest.mark.req("SUBS26-4", "STDIO26-7", "TOOL26-9", "SUBS26-1")
def test_subscriptions_ride_subscriptions_listen(wire_validator):
    server = feature_server()
    updates, changed = [], threading.Event()
    connected = Connected(server, wire_validator, on_resource_updated=updates.append,
                          on_tools_list_changed=changed.set)
    with connected as client:
        client.subscribe_resource("demo://readme")
        assert server.notify_resource_updated("demo://readme") == 1
        server.add_tool(lambda: "new", name="added")
        assert changed.wait(WAIT)
        client.unsubscribe_resource("demo://readme")
        server.notify_resource_updated("demo://readme")    # the replaced listen may still be open: dropped
        assert "added" in [t.name for t in client.list_tools()]
        assert client.session.wait_closed(0.2) is False     # let the notify thread deliver anything late
    assert updates == ["demo://readme"]
    sent = [m.get("method") for m in connected.recorder.sent()]
    assert "resources/subscribe" not in sent and sent.count("subscriptions/listen") == 3
    acks = [m for m in connected.recorder.received() if m.get("method") == "notifications/subscriptions/acknowledged"]
    assert acks[1]["params"]["notifications"]["resourceSubscriptions"] == ["demo://readme"]


@pytest.mark.req("BASE26-9", "BASE26-27", "VERS26-5")
def test_a_task_tool_is_followed_to_its_result_in_the_modern_era(wire_validator):
    """A 2026-07-28 server offers the tasks extension for a tool with task_support and runs
    the call as a task (server/tasks/extension.py); call_tool polls it and returns the same result
    a legacy call would (client/tasks/extension.py)."""
    server = Server("tasks-modern")

    @server.tool(task_support="required")
    def render(scene: str) -> str:
        return f"rendered {scene}"

    connected = Connected(server, wire_validator)
    with connected as client:
        assert "tasks" not in client.server_capabilities
        assert client.server_capabilities["extensions"] == {"io.modelcontextprotocol/tasks": {}}
        assert client.call_tool("render", {"scene": "city"}).content[0].text == "rendered city"
    methods = [m.get("method") for m in connected.recorder.sent()]
    assert "tasks/get" in methods
