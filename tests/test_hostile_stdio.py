"""What a hostile or broken stdio server can do to our client, and what our server
does with the inputs that used to kill it.

The client side drives ``tests/hostile_server.py`` (stdlib only, one behaviour per
argument) over real pipes with ``Client.stdio``. Each test asserts the typed error,
that the session goes on where it should, and (through the ``spawned`` fixture and
the thread guard of conftest.py) that no process, pipe or thread is left. Every
wait is bounded by a request timeout (``TIMEOUT``), never by a wall-clock check.
Spec: basic/transports#stdio, basic/index#messages, server/utilities/pagination,
security_best_practices ("Local MCP Server Compromise").

The server side sends our ``Server`` the two inputs of the proof issue (a request
nested 10,000 levels deep, a lone surrogate in a tool argument) over real pipes.
"""
import json
import logging
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from helpers import RawPeer, child_processes, mcp_threads, tap_stdio_clients
from mcp_ref import Client, ConnectionClosed, ParseError
from mcp_ref.errors import MessageTooLarge, TooManyPages
from mcp_ref.jsonrpc.messages import EncodeError, NotUnicode
from mcp_ref.transports.stdio import SAFE_ENV_VARS

pytestmark = pytest.mark.skipif(os.name != "posix", reason="process groups and signals are POSIX")

ROOT = Path(__file__).resolve().parent.parent
HOSTILE = str(Path(__file__).resolve().parent / "hostile_server.py")
TIMEOUT = 30.0                     # every request's bound: a fix that is missing fails by timing out
SECRET = "MCP_REF_TEST_SECRET"


def hostile(behaviour: str, **options) -> Client:
    options.setdefault("timeout", TIMEOUT)
    options.setdefault("init_timeout", TIMEOUT)
    options.setdefault("on_stderr", lambda line: None)
    return Client.stdio([sys.executable, HOSTILE, behaviour], **options)


@pytest.fixture
def spawned(monkeypatch):
    """Every stdio transport made in the test, tapped (``.recorder``); afterwards each
    server process must be reaped with its pipes closed, and no child left."""
    before = child_processes()
    made = tap_stdio_clients(monkeypatch)
    yield made
    for transport in made:
        process = transport.process
        assert process.poll() is not None, f"server {process.pid} is still running"
        with pytest.raises(ChildProcessError):
            os.waitpid(process.pid, os.WNOHANG)          # reaped: no zombie
        assert process.stdin.closed and process.stdout.closed
    assert child_processes() <= before


def poke(client, **arguments):
    return client.call_tool("poke", arguments)


def goes_on(client) -> None:
    """The session still works: a ping and a plain call are answered."""
    client.ping()
    assert client.call_tool("other").content[0].text == "plain answer"


def errors_sent(transport) -> list:
    return [m for m in transport.recorder.sent() if "error" in m]


# ---------------------------------------------------------------------- 1. the child's environment
def test_the_server_sees_only_the_safe_variables_and_those_named(spawned, monkeypatch):
    monkeypatch.setenv(SECRET, "s3cret")
    monkeypatch.setenv("HOME", os.environ.get("HOME", "/nonexistent"))
    with hostile("echo-env", env={"EXTRA_FOR_SERVER": "yes"}) as client:
        child = json.loads(poke(client).content[0].text)
    assert SECRET not in child
    assert child["EXTRA_FOR_SERVER"] == "yes" and child["HOME"] == os.environ["HOME"]
    # Python itself may set LC_CTYPE in a child that has no locale (PEP 538).
    assert set(child) - {"LC_CTYPE"} <= set(SAFE_ENV_VARS) | {"EXTRA_FOR_SERVER"}, sorted(child)


def test_env_overrides_a_safe_variable_and_shell_functions_are_not_passed(spawned, monkeypatch):
    monkeypatch.setenv("SHELL", "() { :; }; echo pwned")
    monkeypatch.setenv("TERM", "xterm")
    with hostile("echo-env", env={"TERM": "dumb"}) as client:
        child = json.loads(poke(client).content[0].text)
    assert "SHELL" not in child and child["TERM"] == "dumb"


def test_inherit_env_passes_everything(spawned, monkeypatch):
    monkeypatch.setenv(SECRET, "s3cret")
    with hostile("echo-env", inherit_env=True) as client:
        assert json.loads(poke(client).content[0].text)[SECRET] == "s3cret"
    with Client.connect([sys.executable, HOSTILE, "echo-env"], inherit_env=True, timeout=TIMEOUT) as client:
        assert json.loads(poke(client).content[0].text)[SECRET] == "s3cret"


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="reads /proc/PID/environ")
def test_a_respawned_server_gets_the_same_environment(spawned, monkeypatch):
    monkeypatch.setenv(SECRET, "s3cret")
    with hostile("exit-mid-call", env={"EXTRA_FOR_SERVER": "yes"}, auto_restart=1) as client:
        with pytest.raises(ConnectionClosed):
            poke(client)
        client.ping()                                    # respawned
        assert len(spawned) == 2
        with open(f"/proc/{spawned[1].process.pid}/environ", "rb") as f:
            env = dict(item.split(b"=", 1) for item in f.read().split(b"\0") if item)
    assert env.get(b"EXTRA_FOR_SERVER") == b"yes" and SECRET.encode() not in env


# ---------------------------------------------------------------------- 2. frames too deep to decode
def test_a_reply_too_deep_to_decode_fails_its_request_at_once(spawned):
    with hostile("deep-reply") as client:
        with pytest.raises(ParseError, match="nested too deeply"):
            poke(client)
        goes_on(client)
        assert errors_sent(spawned[0]) == []             # a reply is never answered


def test_a_reply_that_is_not_utf8_fails_its_request_at_once(spawned):
    with hostile("bad-utf8-reply") as client:
        with pytest.raises(ParseError, match="malformed response"):
            poke(client)
        goes_on(client)
        assert errors_sent(spawned[0]) == []


def test_a_notification_too_deep_to_decode_is_answered_and_skipped(spawned):
    with hostile("deep-notification") as client:
        assert poke(client).content[0].text == "after the deep notification"
        goes_on(client)
    [error] = errors_sent(spawned[0])
    assert error["id"] is None and error["error"]["code"] == -32700


# ---------------------------------------------------------------------- 3. replies over the size limit
def test_a_reply_over_the_limit_fails_its_request_at_once_naming_size_and_limit(spawned):
    with hostile("big-reply", max_message_size=4096) as client:
        assert spawned[0].max_message_size == 4096
        with pytest.raises(MessageTooLarge) as info:
            poke(client, size=10_000)
        assert info.value.limit == 4096 and info.value.size > 10_000
        assert "4096" in str(info.value) and str(info.value.size) in str(info.value)
        assert len(poke(client, size=100).content[0].text) == 100
        goes_on(client)
        assert errors_sent(spawned[0]) == []


# ---------------------------------------------------------------------- 4. endless pagination
def test_a_fresh_cursor_forever_raises_after_the_page_limit(spawned):
    with hostile("endless-cursor", max_pages=25) as client:
        with pytest.raises(TooManyPages) as info:
            client.list_tools()
        assert info.value.pages == 25 and info.value.method == "tools/list"
        assert [t.name for t in info.value.items] == [f"tool{n}" for n in range(25)]
        goes_on(client)
    assert len([m for m in spawned[0].recorder.sent() if m.get("method") == "tools/list"]) == 25


def test_the_default_page_limit_is_set():
    from mcp_ref.client.client_requests import DEFAULT_MAX_PAGES
    from mcp_ref.transports import memory_pair
    ours, theirs = memory_pair()
    client = Client(ours)
    try:
        assert client.max_pages == DEFAULT_MAX_PAGES == 1000
    finally:
        client.close()
        theirs.close()


# ---------------------------------------------------------------------- 5. stdout closed, process alive
def test_stdout_closed_mid_call_is_reported_before_the_process_ends(spawned):
    """The report must not wait for the exit: ``Popen.wait`` is held shut until the
    error has reached the caller (a client that waits for the exit code first
    would time out instead). The exit code is there once the process has ended."""
    gate = threading.Event()
    with hostile("close-stdout", close_timeout=0.2) as client:
        process = spawned[0].process
        real_wait = process.wait

        def gated_wait(timeout=None):
            gate.wait(TIMEOUT)
            return real_wait(timeout)
        process.wait = gated_wait
        try:
            with pytest.raises(ConnectionClosed) as info:
                poke(client, linger=TIMEOUT)              # alive, even after its stdin ends
            assert process.poll() is None                 # still running: the report came first
            assert info.value.reason == "the peer closed the connection"
        finally:
            gate.set()
    assert info.value.exit_code == -15                     # arrived later: the ladder's SIGTERM ended it


def test_closing_after_the_server_closed_stdout_is_quiet_and_leaves_nothing(spawned, caplog):
    """The server closes stdout mid-call and outlives the end of its stdin: close()
    waits for the shutdown ladder already under way (longer than a thread join's
    2 s, here), without a warning."""
    caplog.set_level(logging.WARNING, logger="mcp_ref")
    client = hostile("close-stdout", close_timeout=3.0, terminate_timeout=TIMEOUT)
    client.connect()
    with pytest.raises(ConnectionClosed):
        poke(client, linger=TIMEOUT)
    client.close()
    assert "did not stop" not in caplog.text, caplog.text
    assert spawned[0].process.returncode == -15           # the ladder's SIGTERM ended it
    assert mcp_threads() == []


# ---------------------------------------------------------------------- also: null ids and batch replies
def test_an_error_with_a_null_id_fails_the_one_pending_request(spawned):
    with hostile("null-id-error") as client:
        with pytest.raises(ParseError, match="hostile says no"):
            poke(client)
        goes_on(client)


def test_a_batch_reply_to_a_single_request_is_routed(spawned):
    with hostile("batch-reply") as client:
        assert client.protocol_version != "2025-03-26"
        assert poke(client).content[0].text == "batched"
        goes_on(client)
        assert errors_sent(spawned[0]) == []


# ---------------------------------------------------------------------- lone surrogates, client side
def test_lone_surrogates_in_a_result_reach_the_caller_and_the_session_goes_on(spawned):
    with hostile("surrogate-result") as client:
        assert poke(client).content[0].text == "a\ud800b\udce9"
        goes_on(client)


def test_a_lone_surrogate_in_our_arguments_raises_and_nothing_is_sent(spawned):
    with hostile("surrogate-result") as client:
        with pytest.raises(NotUnicode, match="lone surrogate"):
            client.call_tool("other", {"text": "caf\udce9"})
        assert isinstance(NotUnicode("x"), EncodeError)
        goes_on(client)          # nothing was written: a partial line would have spoilt the next ones


# ---------------------------------------------------------------------- cases that already passed
def test_exit_mid_call_fails_the_call_with_exit_code_and_stderr(spawned):
    with hostile("exit-mid-call") as client:
        with pytest.raises(ConnectionClosed) as info:
            poke(client)
        assert info.value.exit_code == 3
        assert "exiting mid-call" in info.value.stderr_tail and "exit code 3" in str(info.value)
        with pytest.raises(ConnectionClosed):
            client.ping()


@pytest.mark.parametrize("behaviour, answer", [
    ("bad-utf8", "after invalid UTF-8"),
    ("garbage", "after the garbage"),
    ("huge-line", "after a 64 MB line"),
])
def test_bad_lines_on_stdout_are_skipped_and_the_call_is_answered(spawned, behaviour, answer):
    with hostile(behaviour) as client:
        assert poke(client).content[0].text == answer
        goes_on(client)
    for error in errors_sent(spawned[0]):
        assert error["id"] is None and error["error"]["code"] in (-32700, -32600)


def test_a_flood_of_notifications_is_delivered_and_the_call_answered(spawned):
    count, done = [0], threading.Event()

    def on_notification(method, params):
        count[0] += 1
        if count[0] == 200_000:
            done.set()
    with hostile("flood", on_notification=on_notification) as client:
        assert poke(client).content[0].text == "after the flood"
        assert done.wait(TIMEOUT), count[0]
        goes_on(client)


def test_requests_for_capabilities_we_did_not_declare_are_refused(spawned):
    with hostile("server-requests") as client:
        assert json.loads(poke(client).content[0].text) == [-32601, -32601, -32601, -32601]
        goes_on(client)


def test_url_elicitations_with_other_schemes_never_reach_the_callback(spawned):
    seen = []

    def on_url(request):
        seen.append(request.url)
        return {"action": "decline"}
    with hostile("url-elicitation", elicitation_url=on_url) as client:
        answers = json.loads(poke(client).content[0].text)
        goes_on(client)
    assert seen == ["https://example.com/consent"]
    assert answers == [-32602, -32602, -32602, "decline"]


# ---------------------------------------------------------------------- our server (issue 15's two inputs)
SERVER = r'''
from mcp_ref import Server

server = Server("victim", version="1.0")


@server.tool
def echo(text: str) -> str:
    """Return the text."""
    return text


@server.tool
def length(text: str) -> int:
    """Count the characters."""
    return len(text)


server.run()
'''


class RawStdio:
    """Our server as a subprocess, spoken to in raw lines."""

    def __init__(self):
        env = {"PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
        self.process = subprocess.Popen([sys.executable, "-c", SERVER], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
        self._lines: list = []
        self._cond = threading.Condition()
        self._reader = threading.Thread(target=self._read, name="test-raw-stdio", daemon=True)
        self._reader.start()

    def _read(self) -> None:
        for line in iter(self.process.stdout.readline, b""):
            with self._cond:
                self._lines.append(json.loads(line))
                self._cond.notify_all()
        with self._cond:
            self._lines.append(None)
            self._cond.notify_all()

    def send(self, line) -> None:
        self.process.stdin.write((line if isinstance(line, bytes) else line.encode()) + b"\n")
        self.process.stdin.flush()

    def reply(self, match, timeout: float = TIMEOUT) -> dict:
        """The first line from the server that ``match`` accepts; fails if the server ended first."""
        with self._cond:
            assert self._cond.wait_for(lambda: any(m is None or match(m) for m in self._lines), timeout)
            found = next(m for m in self._lines if m is None or match(m))
        assert found is not None, f"the server ended (exit code {self.process.wait(TIMEOUT)}) without answering"
        return found

    def request(self, request_id, method: str, params=None) -> dict:
        message = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(json.dumps(message))
        return self.reply(lambda m: m.get("id") == request_id)

    def close(self) -> int:
        self.process.stdin.close()
        code = self.process.wait(TIMEOUT)
        self._reader.join(TIMEOUT)
        self.process.stdout.close()
        return code


@pytest.fixture
def victim():
    server = RawStdio()
    reply = server.request(0, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                             "clientInfo": {"name": "raw", "version": "1"}})
    assert "result" in reply
    server.send('{"jsonrpc":"2.0","method":"notifications/initialized"}')
    yield server
    if server.process.poll() is None:
        assert server.close() == 0
    else:
        server.process.stdout.close()


def test_our_server_answers_a_request_nested_too_deeply_and_lives_on(victim):
    depth = 10_000
    victim.send('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":%s"x"%s}}}'
                % ("[" * depth, "]" * depth))
    error = victim.reply(lambda m: "error" in m and m.get("id") is None)
    assert error["error"]["code"] == -32700 and "nested too deeply" in error["error"]["message"]
    assert victim.request(2, "ping") == {"jsonrpc": "2.0", "id": 2, "result": {}}
    assert victim.process.poll() is None


def test_our_server_answers_a_lone_surrogate_in_a_tool_argument_and_lives_on(victim):
    call = '{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"%s","arguments":{"text":"a\\ud800"}}}'
    victim.send(call % (1, "echo"))
    reply = victim.reply(lambda m: m.get("id") == 1)
    assert reply["error"]["code"] == -32603 and "lone surrogate" in reply["error"]["message"]
    victim.send(call % (2, "length"))                     # a tool that does not echo it just runs
    assert victim.reply(lambda m: m.get("id") == 2)["result"]["content"][0]["text"] == "2"
    victim.send(call.replace('"name":"%s"', '"name":"\\udce9%s"') % (3, "echo"))    # echoed in the error
    assert victim.reply(lambda m: m.get("id") == 3)["error"]["code"] == -32603
    assert victim.request(4, "ping")["result"] == {}
    assert victim.process.poll() is None


# ---------------------------------------------------------------------- the session's rules, on a memory pair
def _pair():
    from mcp_ref.session import Session
    from mcp_ref.transports import memory_pair
    ours, theirs = memory_pair()
    session = Session(ours, lambda ctx, method, params: {}, name="mcp-hostile").start()
    session.protocol_version = "2025-11-25"
    return session, RawPeer(theirs)


def test_a_null_id_error_with_several_requests_pending_is_logged_and_fails_none(caplog):
    session, peer = _pair()
    try:
        first = session.start_request("tools/call", {"name": "a"}, timeout=TIMEOUT)
        second = session.start_request("tools/call", {"name": "b"}, timeout=TIMEOUT)
        assert [peer.recv()["id"] for _ in range(2)] == [first.id, second.id]
        peer.send({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error: which one?"}})
        peer.ping()                                      # the error was read before this answer
        assert "which one?" in caplog.text and "2 pending" in caplog.text
        peer.send({"jsonrpc": "2.0", "id": second.id, "result": {"b": 1}})
        peer.send({"jsonrpc": "2.0", "id": first.id, "result": {"a": 1}})
        assert first.result() == {"a": 1} and second.result() == {"b": 1}
    finally:
        session.close()


def test_a_batch_mixing_a_reply_and_a_request_routes_the_reply_and_refuses_the_rest():
    session, peer = _pair()
    try:
        pending = session.start_request("tools/call", {"name": "a"}, timeout=TIMEOUT)
        assert peer.recv()["id"] == pending.id
        peer.send([{"jsonrpc": "2.0", "id": pending.id, "result": {"ok": True}},
                   {"jsonrpc": "2.0", "id": "r1", "method": "ping"}])
        assert pending.result() == {"ok": True}
        refusal = peer.recv()
        assert refusal["id"] is None and refusal["error"]["code"] == -32600
        peer.ping()
    finally:
        session.close()


def test_a_deep_reply_from_the_client_fails_the_servers_request_and_is_not_answered():
    """The same rule on the receiving end of a server: its request to the client
    (sampling, say) fails at once when the answer cannot be decoded."""
    session, peer = _pair()
    try:
        pending = session.start_request("sampling/createMessage", {"messages": []}, timeout=TIMEOUT)
        assert peer.recv()["id"] == pending.id
        peer.send('{"jsonrpc":"2.0","id":%d,"result":{"x":%s%s}}' % (pending.id, "[" * 100_000, "]" * 100_000))
        with pytest.raises(ParseError, match="nested too deeply"):
            pending.result()
        peer.ping()
        peer.assert_silent()
    finally:
        session.close()


def test_an_oversized_reply_on_a_memory_transport_fails_its_request():
    session, peer = _pair()
    session.transport.max_message_size = 200
    try:
        pending = session.start_request("tools/call", {"name": "a"}, timeout=TIMEOUT)
        assert peer.recv()["id"] == pending.id
        peer.send({"jsonrpc": "2.0", "id": pending.id, "result": {"text": "x" * 500}})
        with pytest.raises(MessageTooLarge) as info:
            pending.result()
        assert info.value.limit == 200 and info.value.size > 500
        peer.ping()
        peer.assert_silent()
    finally:
        session.close()


def test_text_a_transport_cannot_encode_raises_and_the_session_stays_open():
    class Strict:
        """A transport that encodes to UTF-8 itself, as the HTTP clients do."""
        def __init__(self, inner):
            self.inner = inner

        def send(self, message, related_id=None):
            from mcp_ref.jsonrpc.messages import encode
            encode(message).encode("utf-8")
            self.inner.send(message, related_id)

        def receive(self):
            return self.inner.receive()

        def close(self):
            self.inner.close()
    from mcp_ref.session import Session
    from mcp_ref.transports import memory_pair
    ours, theirs = memory_pair()
    session = Session(Strict(ours), lambda ctx, method, params: {}, name="mcp-hostile").start()
    peer = RawPeer(theirs)
    try:
        with pytest.raises(NotUnicode):
            session.request("tools/call", {"name": "\ud800"}, timeout=TIMEOUT)
        assert not session.closed
        peer.ping()
        peer.assert_silent()
    finally:
        session.close()


@pytest.mark.parametrize("size", [0, -1, 1.5, True, "16M"])
def test_a_size_limit_that_is_not_a_number_of_bytes_is_refused_before_spawning(spawned, size):
    with pytest.raises(ValueError, match="max_message_size"):
        hostile("echo-env", max_message_size=size)
    assert spawned == []


def test_the_size_limit_reaches_the_http_transports_too():
    """``max_message_size`` is accepted by every client constructor; the HTTP transports
    keep it (their bodies and events are bounded by it in transports/http/client/streamable.py)."""
    pytest.importorskip("requests")
    pytest.importorskip("requests")
    client = Client.http("http://127.0.0.1:9/mcp", max_message_size=1234)
    try:
        assert client.transport.max_message_size == 1234
    finally:
        client.close()
    client = Client.connect("http://127.0.0.1:9/mcp", max_message_size=4321)
    try:
        assert client.transport.inner.max_message_size == 4321
        assert client.transport._legacy_options["max_message_size"] == 4321
    finally:
        client.close()
    default = Client.http("http://127.0.0.1:9/mcp")
    try:
        assert default.transport.max_message_size == 16 * 1024 * 1024
    finally:
        default.close()
