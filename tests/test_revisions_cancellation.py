"""``notifications/cancelled`` in a real ``Client``/``Server`` session of every revision.

For each of 2024-11-05, 2025-03-26, 2025-06-18 and 2025-11-25 a client and a
server are connected over ``memory_pair()`` (each end behind a recording
``TapTransport``) and negotiate that revision. A request is then abandoned,
by a timeout or by an explicit cancel, and the test checks that

* the peer received ``notifications/cancelled`` naming the request's id,
* the peer's handler saw it (``ctx.cancelled`` was set while it ran),
* no response was sent for the cancelled request ("SHOULD NOT send a response"),
* the session still works, and
* every message both sides sent validates against that revision's ``schema.json``.

Spec: basic/utilities/cancellation (all revisions), basic/lifecycle#timeouts.
Nothing sleeps to wait: every wait is on an Event with a timeout that fails the test.
"""
import threading

import pytest

from conftest import REVISIONS
from helpers import WAIT, Recorder, is_method
from mcp_ref import Client, Context, Server
from mcp_ref.errors import RequestCancelled, RequestTimeout
from mcp_ref.transports import TapTransport, memory_pair


class Blocker:
    """A tool body that waits for its cancellation and reports what it saw."""

    def __init__(self):
        self.started = threading.Event()
        self.saw_cancel = threading.Event()
        self.finished = threading.Event()
        self.request_ids: list = []

    def __call__(self, ctx: Context) -> str:
        self.request_ids.append(ctx.request_id)
        self.started.set()
        try:
            if ctx.cancelled.wait(WAIT):
                self.saw_cancel.set()
            return "finished without being cancelled"
        finally:
            self.finished.set()


class Connected:
    """A ``Server`` served on one end of a memory pair, a ``Client`` on the other,
    both tapped. ``close()`` closes both and joins their threads."""

    def __init__(self, server: Server, revision: str, **client_options):
        client_end, server_end = memory_pair()
        self.client_rec, self.server_rec = Recorder(), Recorder()
        self.server_session = server.serve(TapTransport(server_end, self.server_rec))
        self.client = Client(TapTransport(client_end, self.client_rec), protocol_version=revision,
                             **client_options)

    def close(self) -> None:
        try:
            self.client.close()
        finally:
            self.server_session.close()

    def validate(self, wire_validator, revision: str) -> None:
        """Every message each side sent, against ``revision``'s schema (results matched to their
        requests by the recorder of the side that sent the request)."""
        assert wire_validator.check_transcript(self.client_rec.records, revision) > 0
        assert wire_validator.check_transcript(self.server_rec.records, revision) > 0
        for message in self.client_rec.sent():
            if message.get("method") == "notifications/cancelled":
                wire_validator.check(message, revision, kind="notification", sender="client")
        for message in self.server_rec.sent():
            if message.get("method") == "notifications/cancelled":
                wire_validator.check(message, revision, kind="notification", sender="server")


def _responses_to(records: list, request_id) -> list:
    return [m for m in records if "method" not in m and m.get("id") == request_id]


def _tool_call_id(recorder: Recorder) -> int:
    calls = [m for m in recorder.sent() if m.get("method") == "tools/call"]
    assert len(calls) == 1, calls
    return calls[0]["id"]


@pytest.mark.req("CANC-4", "CANC-1")
@pytest.mark.parametrize("revision", REVISIONS)
@pytest.mark.parametrize("how", ["timeout", "cancel"])
def test_client_cancellation_reaches_the_server_in_every_revision(wire_validator, revision, how):
    server = Server("cancel-check", version="1.0")
    blocker = Blocker()
    server.add_tool(blocker, name="block", description="Wait until cancelled.")

    @server.tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    pair = Connected(server, revision, timeout=WAIT)
    try:
        with pair.client as client:
            assert client.protocol_version == revision
            # The tool is known to run before the request is abandoned, so what the server
            # does with a cancellation that arrives before the handler starts plays no part.
            pending = client.session.start_request("tools/call", {"name": "block", "arguments": {}},
                                                   timeout=0.2 if how == "timeout" else WAIT)
            assert blocker.started.wait(WAIT), "the tool never started"
            if how == "timeout":
                with pytest.raises(RequestTimeout) as info:
                    pending.result()
                assert info.value.method == "tools/call" and info.value.timeout == 0.2
            else:
                pending.cancel("the user pressed stop")
                with pytest.raises(RequestCancelled):
                    pending.result()
            request_id = _tool_call_id(pair.client_rec)
            cancel = pair.server_rec.wait_for(is_method("notifications/cancelled", "receive"),
                                              what="notifications/cancelled at the server")
            assert cancel["params"]["requestId"] == request_id
            assert isinstance(cancel["params"].get("reason"), str) and cancel["params"]["reason"]
            if how == "cancel":
                assert cancel["params"]["reason"] == "the user pressed stop"
            assert blocker.saw_cancel.wait(WAIT), "the tool's ctx.cancelled was never set"
            assert blocker.request_ids == [request_id]
            assert blocker.finished.wait(WAIT)
            # The session still works.
            assert client.call_tool("add", {"a": 2, "b": 3}).content[0].text == "5"
            client.ping()
    finally:
        pair.close()
    # Closed: every server thread has been joined, so whatever it would have sent is recorded.
    assert _responses_to(pair.server_rec.sent(), request_id) == [], "a cancelled request was answered"
    assert len([m for m in pair.client_rec.sent() if m.get("method") == "notifications/cancelled"]) == 1
    pair.validate(wire_validator, revision)


@pytest.mark.parametrize("revision", REVISIONS)
def test_server_cancellation_of_a_sampling_request_reaches_the_client_in_every_revision(wire_validator, revision):
    """The other direction: a tool's ``sampling/createMessage`` times out, so the server sends
    ``notifications/cancelled`` to the client, valid in the negotiated revision."""
    server = Server("cancel-check", version="1.0")
    release = threading.Event()

    @server.tool
    def ask(ctx: Context) -> str:
        """Ask the client's model, giving up quickly."""
        try:
            ctx.sample(["Say hello"], max_tokens=5, timeout=0.2)
        except RequestTimeout:
            return "sampling timed out"
        return "sampling answered"

    def sampling(request):
        release.wait(WAIT)                   # answers only after the server gave up
        return {"role": "assistant", "content": {"type": "text", "text": "hello"}, "model": "test-model"}

    pair = Connected(server, revision, timeout=WAIT, sampling=sampling)
    try:
        with pair.client as client:
            assert client.protocol_version == revision
            assert client.call_tool("ask", {}).content[0].text == "sampling timed out"
            sample_ids = [m["id"] for m in pair.server_rec.sent() if m.get("method") == "sampling/createMessage"]
            assert len(sample_ids) == 1
            cancel = pair.client_rec.wait_for(is_method("notifications/cancelled", "receive"),
                                              what="notifications/cancelled at the client")
            assert cancel["params"]["requestId"] == sample_ids[0]
            release.set()
            client.ping()
    finally:
        release.set()
        pair.close()
    assert _responses_to(pair.client_rec.sent(), sample_ids[0]) == [], "a cancelled request was answered"
    pair.validate(wire_validator, revision)
