"""Initialization and negotiation (Spec: basic/lifecycle, all four legacy revisions).

These are the legacy (``initialize``) era's tests: the client asks for a legacy
revision here (``protocol_version``, by default the newest legacy one), so it
runs the handshake without the 2026-07-28 probe (tests/test_modern_client.py).

A real ``Client`` and ``Server`` over ``memory_pair()``, with a TapTransport on
the client: what it sends is what our client sent, what it receives is what
our server sent, and all of it is validated against the negotiated revision's
``schema.json``. A scripted raw peer plays a misbehaving server or client.
"""
import sys
import threading
from contextlib import contextmanager

import pytest

from conftest import REVISIONS
from helpers import WAIT, RawPeer, Recorder, initialize_raw, is_method, raw_server, run_in_thread
from mcp_ref import Client, Server
from mcp_ref.errors import CapabilityNotSupported, MethodNotFoundError, UnsupportedProtocolVersion
from mcp_ref.protocol import lifecycle
from mcp_ref.protocol.lifecycle import LATEST_LEGACY_REVISION as LATEST_REVISION
from mcp_ref.protocol.lifecycle import LEGACY_REVISIONS as SUPPORTED_REVISIONS
from mcp_ref.transports import TapTransport, memory_pair

ICON = {"src": "https://example.com/icon.png", "mimeType": "image/png", "sizes": ["48x48"]}
# What serverInfo may carry, by the revision that introduced it (schema ``Implementation``).
INFO_FIELDS = {
    "2024-11-05": {"name", "version"},
    "2025-03-26": {"name", "version"},
    "2025-06-18": {"name", "version", "title"},
    "2025-11-25": {"name", "version", "title", "description", "icons", "websiteUrl"},
}


def full_server(**options) -> Server:
    server = Server("lifecycle-server", version="2.5.1", title="Lifecycle Server", description="For tests.",
                    icons=[ICON], website_url="https://example.com", instructions="Call ping first.", **options)

    @server.tool
    def echo(text: str) -> str:
        """Echo the text."""
        return text

    return server


@contextmanager
def connected(server: Server, wire_validator=None, **client_options):
    """A connected Client (as a context manager) on a served memory pair;
    yields ``(client, server_session, recorder)`` and validates the transcript."""
    client_end, server_end = memory_pair()
    session = server.serve(server_end)
    recorder = Recorder()
    client_options.setdefault("protocol_version", LATEST_REVISION)
    client = Client(TapTransport(client_end, recorder), timeout=WAIT, init_timeout=WAIT, **client_options)
    try:
        with client:
            yield client, session, recorder
    finally:
        session.close()
    if wire_validator is not None:
        assert wire_validator.check_transcript(recorder.raw, client.protocol_version) > 0


# ---------------------------------------------------------------------- version negotiation
@pytest.mark.req("LIFE-8", "LIFE-11")
def test_the_four_revisions_are_supported_newest_first():
    assert SUPPORTED_REVISIONS == ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
    assert LATEST_REVISION == "2025-11-25"
    assert set(REVISIONS) == set(SUPPORTED_REVISIONS)
    # Both eras: the modern revision first (tests/test_modern_*.py).
    assert lifecycle.SUPPORTED_REVISIONS == ("2026-07-28",) + SUPPORTED_REVISIONS
    assert lifecycle.LATEST_REVISION == "2026-07-28"


@pytest.mark.req("LIFE-7", "LIFE-9")
@pytest.mark.parametrize("revision", SUPPORTED_REVISIONS)
def test_server_answers_the_requested_revision_when_supported(revision, wire_validator):
    with connected(full_server(), wire_validator, protocol_version=revision) as (client, session, recorder):
        assert client.protocol_version == revision
        assert session.protocol_version == revision
        request = recorder.sent()[0]
        assert request["method"] == "initialize" and request["params"]["protocolVersion"] == revision
        answer = recorder.received()[0]
        assert answer["result"]["protocolVersion"] == revision
        assert client.call_tool("echo", {"text": "hi"}).content[0].text == "hi"


@pytest.mark.req("LIFE-10", "LIFE-11")
@pytest.mark.parametrize("requested", ["2024-10-07", "2099-01-01", "", "DRAFT-2026-v1"])
def test_server_answers_its_latest_revision_otherwise(requested):
    with raw_server(full_server()) as (peer, session):
        result = initialize_raw(peer, requested)
        assert result["protocolVersion"] == LATEST_REVISION
        assert session.protocol_version == LATEST_REVISION


@pytest.mark.req("LIFE-10")
@pytest.mark.parametrize("requested", ["2099-12-31", "2024-10-07", "", "DRAFT-2026-v1", None, 20251125])
def test_the_client_refuses_to_ask_for_a_revision_it_does_not_speak(requested):
    """Spec: basic/lifecycle#version-negotiation: the client MUST send a version it
    supports. An unsupported ``protocol_version`` is a ValueError naming the supported
    ones, before the client exists: nothing is sent, no thread or process is left."""
    client_end, peer_end = memory_pair()
    recorder = Recorder()
    with pytest.raises(ValueError, match="is not a revision this library speaks; use 'auto' .the default., "
                                         "or one of 2026-07-28, 2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05"):
        Client(TapTransport(client_end, recorder), protocol_version=requested)
    assert recorder.raw == []
    script = "import sys; sys.stdin.read()"
    with pytest.raises(ValueError, match=repr(requested).replace("(", r"\(")):
        Client.stdio([sys.executable, "-c", script], protocol_version=requested)
    client_end.close()
    peer_end.close()


@pytest.mark.req("LIFE-12", "LIFE-20", "SCHEMA-8")
@pytest.mark.parametrize("answer", ["2099-01-01", "2024-12-01", None, 20251125])
def test_client_disconnects_when_the_server_answers_an_unsupported_revision(answer):
    client_end, peer_end = memory_pair()
    peer = RawPeer(peer_end)

    def fake_server():
        request = peer.recv()
        result = {"capabilities": {}, "serverInfo": {"name": "liar", "version": "1"}}
        if answer is not None:
            result["protocolVersion"] = answer
        peer.send({"jsonrpc": "2.0", "id": request["id"], "result": result})
        after = []
        while True:                                  # everything the client sends until it hangs up
            message = peer.recv()
            if message is None:
                return request, after
            after.append(message)

    thread, outcome = run_in_thread(fake_server)
    client = Client(client_end, init_timeout=WAIT, protocol_version=LATEST_REVISION)
    with pytest.raises(UnsupportedProtocolVersion) as info:
        with client:
            pytest.fail("the client connected to a server speaking an unknown revision")
    assert info.value.version == answer
    assert client.closed
    status, value = outcome.get(timeout=WAIT)
    assert status == "ok", value
    request, after = value
    assert request["method"] == "initialize"
    assert [m.get("method") for m in after if "method" in m] == [], \
        f"the client went on after an unsupported answer: {after}"


# ---------------------------------------------------------------------- what initialize carries
@pytest.mark.req("LIFE-3")
@pytest.mark.parametrize("revision", SUPPORTED_REVISIONS)
def test_server_info_and_instructions(revision, wire_validator):
    with connected(full_server(), wire_validator, protocol_version=revision) as (client, _, recorder):
        info = recorder.received()[0]["result"]["serverInfo"]
        assert set(info) == INFO_FIELDS[revision]
        assert info["name"] == "lifecycle-server" and info["version"] == "2.5.1"
        if "title" in info:
            assert info["title"] == "Lifecycle Server"
        if revision == "2025-11-25":
            assert info["description"] == "For tests."
            assert info["websiteUrl"] == "https://example.com"
            assert info["icons"] == [ICON]
        assert client.server_info.name == "lifecycle-server"
        assert client.server_info.version == "2.5.1"
        assert client.instructions == "Call ping first."
        assert recorder.received()[0]["result"]["instructions"] == "Call ping first."
        assert client.server_capabilities.get("tools") is not None


@pytest.mark.req("LIFE-3")
def test_no_instructions_means_no_instructions_member(wire_validator):
    with connected(Server("bare", version="1.0"), wire_validator) as (client, _, recorder):
        assert "instructions" not in recorder.received()[0]["result"]
        assert client.instructions is None
        assert recorder.received()[0]["result"]["capabilities"] == {}


@pytest.mark.req("LIFE-2")
def test_default_client_info_has_a_name_and_version(wire_validator):
    with connected(full_server(), wire_validator) as (client, session, recorder):
        sent = recorder.sent()[0]["params"]["clientInfo"]
        assert isinstance(sent["name"], str) and sent["name"].strip()
        assert isinstance(sent["version"], str) and sent["version"].strip()
        assert session.client_info.name == sent["name"]
        assert session.client_info.version == sent["version"]


@pytest.mark.req("LIFE-2")
def test_custom_client_info_reaches_the_server(wire_validator):
    info = {"name": "my-host", "version": "3.1"}
    with connected(full_server(), wire_validator, client_info=info) as (_, session, recorder):
        assert recorder.sent()[0]["params"]["clientInfo"]["name"] == "my-host"
        assert session.client_info.name == "my-host" and session.client_info.version == "3.1"


@pytest.mark.req("BASE-1", "LIFE-1", "LIFE-4")
def test_handshake_order_and_server_state(wire_validator):
    server = full_server()
    ready = threading.Event()
    original = server._notification_handlers["notifications/initialized"]

    def on_initialized(session, params):
        original(session, params)
        ready.set()

    server._notification_handlers["notifications/initialized"] = on_initialized
    with connected(server, wire_validator) as (client, session, recorder):
        assert ready.wait(WAIT)
        assert session.state == "ready"
        sent = [m.get("method") for m in recorder.sent()]
        assert sent[:2] == ["initialize", "notifications/initialized"]
        client.ping()


# ---------------------------------------------------------------------- capabilities
@pytest.mark.req("LIFE-14")
def test_client_refuses_locally_to_use_tools_the_server_did_not_declare(wire_validator):
    with connected(Server("no-tools", version="1.0"), wire_validator) as (client, _, recorder):
        assert "tools" not in client.server_capabilities
        with pytest.raises(CapabilityNotSupported):
            client.list_tools()
        with pytest.raises(CapabilityNotSupported):
            client.call_tool("anything", {})
        assert not [m for m in recorder.sent() if str(m.get("method", "")).startswith("tools/")]
        client.ping()


@pytest.mark.req("LIFE-14")
def test_server_answers_method_not_found_for_a_capability_it_did_not_declare(wire_validator):
    with raw_server(Server("no-tools", version="1.0")) as (peer, _):
        initialize_raw(peer)
        for request_id, method, params in ((1, "tools/list", None), (2, "tools/call", {"name": "x"})):
            reply = peer.request(request_id, method, params)
            assert reply["error"]["code"] == -32601, reply
            wire_validator.check(reply, LATEST_REVISION, kind="error")
        peer.ping()
    # and through the client, bypassing its local check
    with connected(Server("no-tools", version="1.0")) as (client, _, _):
        with pytest.raises(MethodNotFoundError):
            client.session.request("tools/list")


def test_client_declares_no_capabilities_it_cannot_serve(wire_validator):
    with connected(full_server(), wire_validator) as (client, session, recorder):
        assert recorder.sent()[0]["params"]["capabilities"] == client.capabilities()
        # a server->client request for something undeclared is answered -32601
        with pytest.raises(MethodNotFoundError):
            session.request("roots/list", timeout=WAIT)
        recorder.wait_for(is_method("roots/list", "receive"))
