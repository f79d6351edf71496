"""A caller cancels a request from another thread with a ``CancelToken`` (session/outbound.py rule 4).

What each test proves, on the transport it names:

* every public request method of ``Client`` takes ``cancel=``, and a token
  cancelled before the call raises ``RequestCancelled`` with nothing sent;
* over a memory pair, over stdio (a real subprocess) and over Streamable HTTP,
  ``token.cancel(reason)`` from another thread makes the waiting caller raise
  ``RequestCancelled``, the server receives ``notifications/cancelled`` with the
  reason, its handler's ``ctx.cancelled`` is set, and the session still works;
* a reply that arrives after the cancellation is dropped (a scripted server
  answers late) and the next request gets its own answer;
* one token covers several requests in flight at once.

Spec: basic/utilities/cancellation. Every wait is bounded by ``WAIT``.
"""
import inspect
import sys
import threading
import textwrap

import pytest

from helpers import WAIT, RawPeer, Recorder, is_method, run_in_thread
from mcp_ref import CancelToken, Client, Context, RequestCancelled, Server
from mcp_ref.transports import TapTransport, memory_pair

REASON = "the user pressed Stop"


def _blocking_server(seen: dict) -> Server:
    """A server whose tool, resource and prompt wait for their cancellation and
    record, per method, the ``ctx.cancelled`` they saw set."""
    server = Server("cancel-token", version="1.0")
    started = seen.setdefault("started", threading.Event())

    def wait(ctx: Context, what: str) -> str:
        seen.setdefault("ids", []).append(ctx.request_id)
        started.set()
        if ctx.cancelled.wait(WAIT):
            seen.setdefault("cancelled", []).append(what)
        return "not cancelled"

    @server.tool
    def block(ctx: Context) -> str:
        """Wait until cancelled."""
        return wait(ctx, "tools/call")

    @server.tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    @server.resource("slow://thing")
    def thing(ctx: Context) -> str:
        return wait(ctx, "resources/read")

    @server.prompt
    def slow(ctx: Context) -> str:
        return wait(ctx, "prompts/get")

    return server


class Pair:
    """A client and a server over a memory pair, the client's end recorded."""

    def __init__(self, server: Server):
        client_end, server_end = memory_pair()
        self.recorder = Recorder()
        self.server_session = server.serve(server_end)
        self.client = Client(TapTransport(client_end, self.recorder), timeout=WAIT)

    def close(self):
        try:
            self.client.close()
        finally:
            self.server_session.close()


def _cancel_from_another_thread(token: CancelToken, started: threading.Event) -> threading.Thread:
    def stop():
        if started.wait(WAIT):
            token.cancel(REASON)
    thread = threading.Thread(target=stop, name="test-stop-button", daemon=True)
    thread.start()
    return thread


# Every request method of Client, with arguments that would be valid on the everything server.
CALLS = {
    "ping": ((), {}),
    "list_tools": ((), {}), "list_tools_page": ((), {}),
    "call_tool": (("add", {"a": 1, "b": 2}), {}),
    "list_resources": ((), {}), "list_resources_page": ((), {}),
    "list_resource_templates": ((), {}), "list_resource_templates_page": ((), {}),
    "read_resource": (("everything://readme",), {}),
    "subscribe_resource": (("everything://counter",), {}),
    "unsubscribe_resource": (("everything://counter",), {}),
    "list_prompts": ((), {}), "list_prompts_page": ((), {}),
    "get_prompt": (("simple",), {}),
    "complete": (({"type": "ref/prompt", "name": "code_review"}, ("language", "py")), {}),
    "set_logging_level": (("info",), {}),
    "call_tool_as_task": (("add", {"a": 1, "b": 2}), {}),
    "get_task": (("t1",), {}), "task_result": (("t1",), {}),
    "list_tasks": ((), {}), "list_tasks_page": ((), {}),
    "cancel_task": (("t1",), {}),
}


def test_every_request_method_takes_cancel():
    """The public methods that send a request are exactly those listed in CALLS, and each takes ``cancel``."""
    import mcp_ref.client.client as client_module
    sending = set()
    for name, member in inspect.getmembers(Client, inspect.isfunction):
        if name.startswith("_"):
            continue
        source = inspect.getsource(member)
        if any(call in source for call in ("self._request(", "self._page(", "self._task_request(", "all_pages(")):
            sending.add(name)
    assert sending == set(CALLS), sending ^ set(CALLS)
    for name in CALLS:
        assert "cancel" in inspect.signature(getattr(Client, name)).parameters, name
    assert client_module.CancelToken is CancelToken


@pytest.mark.parametrize("name", [n for n in CALLS if "task" not in n])
def test_a_cancelled_token_sends_nothing(name):
    from mcp_ref.examples.everything import server
    pair = Pair(server)
    token = CancelToken()
    token.cancel(REASON)
    try:
        with pair.client as client:
            before = len(pair.recorder.sent())
            args, kwargs = CALLS[name]
            with pytest.raises(RequestCancelled, match=REASON):
                getattr(client, name)(*args, cancel=token, **kwargs)
            assert pair.recorder.sent()[before:] == []
            client.ping()                       # the session is untouched
    finally:
        pair.close()


@pytest.mark.parametrize("method", ["tools/call", "resources/read", "prompts/get"])
def test_another_thread_cancels_a_request_in_flight(method):
    seen: dict = {}
    pair = Pair(_blocking_server(seen))
    token = CancelToken()
    call = {"tools/call": lambda c: c.call_tool("block", cancel=token),
            "resources/read": lambda c: c.read_resource("slow://thing", cancel=token),
            "prompts/get": lambda c: c.get_prompt("slow", cancel=token)}[method]
    try:
        with pair.client as client:
            stopper = _cancel_from_another_thread(token, seen["started"])
            with pytest.raises(RequestCancelled, match=REASON):
                call(client)
            stopper.join(WAIT)
            note = pair.recorder.wait_for(is_method("notifications/cancelled", "send"))
            request = next(m for m in pair.recorder.sent() if m.get("method") == method)
            assert note["params"] == {"requestId": request["id"], "reason": REASON}
            assert client.call_tool("add", {"a": 2, "b": 3}).content[0].text == "5"
    finally:
        pair.close()
    assert seen["cancelled"] == [method], "the handler's ctx.cancelled was never set"
    assert not any("method" not in m and m.get("id") == request["id"] for m in pair.recorder.received())


def test_one_token_cancels_every_request_it_carries():
    seen: dict = {}
    server = _blocking_server(seen)
    pair = Pair(server)
    token = CancelToken()
    try:
        with pair.client as client:
            calls = [run_in_thread(client.call_tool, "block", cancel=token) for _ in range(2)]
            pair.recorder.wait_count(is_method("tools/call", "send"), 2)
            token.cancel(REASON)
            for _, outcome in calls:
                kind, value = outcome.get(timeout=WAIT)
                assert kind == "error" and isinstance(value, RequestCancelled), value
            notes = pair.recorder.wait_count(is_method("notifications/cancelled", "send"), 2)
            assert sorted(n["params"]["requestId"] for n in notes) == sorted(
                m["id"] for m in pair.recorder.sent() if m.get("method") == "tools/call")
            with pytest.raises(RequestCancelled):          # cancelling is final
                client.call_tool("add", {"a": 1, "b": 1}, cancel=token)
            assert token.cancelled and token.reason == REASON
    finally:
        pair.close()


@pytest.mark.req("CANC26-13")
def test_a_late_reply_is_dropped():
    """A scripted server reads the call, sees the cancellation, then answers anyway."""
    client_end, server_end = memory_pair()
    peer = RawPeer(server_end)
    client = Client(client_end, timeout=WAIT, protocol_version="2025-11-25")   # a legacy script
    token = CancelToken()
    connecting, _ = run_in_thread(client.connect)
    init = peer.recv()
    peer.send({"jsonrpc": "2.0", "id": init["id"], "result": {
        "protocolVersion": init["params"]["protocolVersion"], "capabilities": {"tools": {}},
        "serverInfo": {"name": "late", "version": "1"}}})
    assert peer.recv()["method"] == "notifications/initialized"
    connecting.join(WAIT)
    try:
        _, outcome = run_in_thread(client.call_tool, "slow", cancel=token)
        call = peer.recv()
        assert call["method"] == "tools/call"
        token.cancel(REASON)
        kind, error = outcome.get(timeout=WAIT)
        assert kind == "error" and isinstance(error, RequestCancelled), error
        assert peer.recv() == {"jsonrpc": "2.0", "method": "notifications/cancelled",
                               "params": {"requestId": call["id"], "reason": REASON}}
        peer.send({"jsonrpc": "2.0", "id": call["id"], "result": {"content": []}})   # too late
        _, pinged = run_in_thread(client.ping)
        ping = peer.recv()
        assert ping["method"] == "ping" and ping["id"] != call["id"]
        peer.send({"jsonrpc": "2.0", "id": ping["id"], "result": {}})
        assert pinged.get(timeout=WAIT) == ("ok", None)
    finally:
        client.close()
        peer.close()


STDIO_SERVER = textwrap.dedent('''
    import threading
    from mcp_ref import Context, Server

    server = Server("stdio-cancel")
    seen = []
    heard = threading.Event()

    @server.tool
    def block(ctx: Context) -> str:
        if ctx.cancelled.wait(10):
            seen.append(ctx.request_id)
            heard.set()
        return "not cancelled"

    @server.tool
    def cancelled_ids() -> str:
        heard.wait(10)
        return ",".join(map(str, seen))

    server.run()
''')


@pytest.mark.req("STDIO26-9", "STDIO26-10", "CANC26-5", "TRN26-2")
def test_cancel_over_stdio(tmp_path):
    script = tmp_path / "server.py"
    script.write_text(STDIO_SERVER)
    recorder = Recorder()
    from mcp_ref.transports.stdio import StdioClientTransport
    transport = TapTransport(StdioClientTransport([sys.executable, str(script)]), recorder)
    token = CancelToken()
    with Client(transport, timeout=WAIT * 2) as client:
        _, outcome = run_in_thread(client.call_tool, "block", cancel=token)
        call = recorder.wait_for(is_method("tools/call", "send"))
        token.cancel(REASON)
        kind, error = outcome.get(timeout=WAIT)
        assert kind == "error" and isinstance(error, RequestCancelled), error
        note = recorder.wait_for(is_method("notifications/cancelled", "send"))
        assert note["params"] == {"requestId": call["id"], "reason": REASON}
        # The server's ctx.cancelled was set for that request (and no answer came for it).
        assert client.call_tool("cancelled_ids").content[0].text == str(call["id"])
    assert not any("method" not in m and m.get("id") == call["id"] for m in recorder.received())


@pytest.mark.parametrize("transport", ["http", "sse"])
def test_cancel_over_streamable_http(transport):
    """Streamable HTTP (and the legacy HTTP+SSE transport)."""
    pytest.importorskip("requests")
    from mcp_ref.transports.http.server.app import start_http
    seen: dict = {}
    handle = start_http(_blocking_server(seen), ("127.0.0.1", 0))
    token = CancelToken()
    try:
        connect = Client.http if transport == "http" else Client.sse
        with connect(handle.url if transport == "http" else handle.sse_url, timeout=WAIT) as client:
            stopper = _cancel_from_another_thread(token, seen["started"])
            with pytest.raises(RequestCancelled, match=REASON):
                client.call_tool("block", cancel=token)
            stopper.join(WAIT)
            deadline = threading.Event()
            for _ in range(50):                     # the server notices on its own threads
                if seen.get("cancelled"):
                    break
                deadline.wait(WAIT / 50)
            assert seen.get("cancelled") == ["tools/call"], "the handler's ctx.cancelled was never set"
            assert client.call_tool("add", {"a": 2, "b": 3}).content[0].text == "5"
    finally:
        handle.shutdown()
