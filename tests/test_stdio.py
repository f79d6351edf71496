"""The stdio transport with real subprocesses (Spec: basic/transports#stdio,
basic/lifecycle#shutdown).

The server under test is ``SERVER_SCRIPT`` run with ``python -c``; its first
argument picks a misbehaviour (ignore stdin EOF, ignore SIGTERM). Clients
are built on ``StdioClientTransport`` behind a ``TapTransport`` so that every
message both sides sent is validated against the negotiated revision's
schema. Every wait is bounded (queues, ``Popen.wait``, pidfd ``select``):
nothing sleeps to wait for something.
"""
import asyncio
import io
import json
import os
import queue
import select
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from helpers import WAIT, Recorder, mcp_threads, run_in_thread
from mcp_ref import Client
from mcp_ref.errors import ConnectionClosed, MessageTooLarge
from mcp_ref.transports import TapTransport
from mcp_ref.transports.stdio import StdioClientTransport

pytestmark = pytest.mark.skipif(os.name != "posix", reason="process groups and signals are POSIX")

ROOT = Path(__file__).resolve().parent.parent
ENV = {"PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
       "PYTHONUNBUFFERED": "1"}

SERVER_SCRIPT = r'''
import os, signal, subprocess, sys, threading, time
from mcp_ref import Context, Server

mode = sys.argv[1] if len(sys.argv) > 1 else "normal"
if mode == "ignore-term":
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
print("stdio-test server starting", file=sys.stderr, flush=True)
server = Server("stdio-test", version="1.0")
never = threading.Event()


@server.tool
def add(a: int, b: int) -> int:
    """Add."""
    return a + b


@server.tool
def shout(text: str) -> str:
    """Write to stdout three ways, then answer."""
    print("stray print from a tool:", text)
    sys.stdout.flush()
    os.write(1, b"stray write to fd 1\n")
    subprocess.run([sys.executable, "-c", "print('stray child output')"], check=True)
    return text.upper()


@server.tool
def block(ctx: Context) -> str:
    """Wait until cancelled."""
    print("block started", file=sys.stderr, flush=True)
    ctx.cancelled.wait(60)
    return "unblocked"


@server.tool
def stubborn() -> str:
    """Ignore cancellation: a handler still running at EOF."""
    print("stubborn started", file=sys.stderr, flush=True)
    never.wait(60)
    return "too late"


@server.tool
def chatty(megabytes: int) -> str:
    """Write megabytes to stderr."""
    line = "e" * 1023 + "\n"
    for _ in range(megabytes * 1024):
        sys.stderr.write(line)
    sys.stderr.flush()
    return "chatted"


@server.tool
def nap(seconds: float) -> str:
    """Sleep, deaf to cancellation (time.sleep)."""
    time.sleep(seconds)
    return "rested"


@server.tool
def big(size: int) -> str:
    """A long answer."""
    return "b" * size


@server.tool
def grandchild() -> int:
    """Start a process that lives on in our process group."""
    return subprocess.Popen([sys.executable, "-c", "import signal; signal.pause()"]).pid


server.run()
if mode in ("ignore-eof", "ignore-term"):
    print("ignoring stdin EOF", file=sys.stderr, flush=True)
    never.wait()
'''


class Lines:
    """An ``on_stderr`` callback that keeps lines and lets a test wait for one."""

    def __init__(self):
        self.lines: list = []
        self.threads: set = set()
        self._cond = threading.Condition()

    def __call__(self, line: str) -> None:
        with self._cond:
            self.lines.append(line)
            self.threads.add(threading.current_thread().name)
            self._cond.notify_all()

    def wait_for(self, text: str, timeout: float = WAIT) -> None:
        with self._cond:
            if not self._cond.wait_for(lambda: any(text in line for line in self.lines), timeout):
                raise AssertionError(f"{text!r} never appeared on stderr; got {self.lines[-20:]!r}")

    def __contains__(self, text: str) -> bool:
        with self._cond:
            return any(text in line for line in self.lines)


def argv(mode: str = "normal") -> list:
    return [sys.executable, "-c", SERVER_SCRIPT, mode]


_CLIENTS: list = []
_DEFAULT = object()


def _null_id_error(direction, message) -> bool:
    """Our answer to a line we could not read carries "id": null, which no MCP
    schema accepts (spec_notes/messages.md, open points)."""
    return direction == "send" and getattr(message, "id", 0) is None and hasattr(message, "error")


@pytest.fixture(autouse=True)
def _validate_every_transcript(wire_validator):
    """Everything each client of the test sent and received (i.e. what our
    client and our server sent) must validate against the negotiated revision."""
    _CLIENTS.clear()
    yield
    for client, recorder in _CLIENTS:
        if client.protocol_version is not None:
            validate(recorder, client.protocol_version, wire_validator, skip=_null_id_error)


def make_client(mode="normal", *, recorder=None, on_stderr=_DEFAULT, client_options=None, argv_=None,
                **transport_options):
    """A Client on a stdio transport behind a TapTransport; its transcript is validated after the test.
    ``on_stderr`` defaults to a silent ``Lines()``; pass None for the library's default sink."""
    if on_stderr is _DEFAULT:
        on_stderr = Lines()
    transport = StdioClientTransport(argv_ or argv(mode), env=ENV, on_stderr=on_stderr, **transport_options)
    recorder = recorder if recorder is not None else Recorder()
    client = Client(TapTransport(transport, recorder), timeout=WAIT * 2, init_timeout=WAIT * 2,
                    **(client_options or {}))
    _CLIENTS.append((client, recorder))
    return client, transport


def validate(recorder: Recorder, revision: str, wire_validator, skip=lambda direction, message: False) -> None:
    records = [(d, m) for d, m in recorder.raw if not skip(d, m)]
    assert wire_validator.check_transcript(records, revision) > 0


def children_of(pid: int) -> list:
    """Live (non-zombie) child processes of ``pid``, from /proc."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if int(fields[1]) == pid and fields[0] != "Z":
            found.append(int(entry))
    return found


def assert_reaped(process: subprocess.Popen) -> None:
    assert process.poll() is not None, "the server process is still running"
    with pytest.raises(ChildProcessError):
        os.waitpid(process.pid, os.WNOHANG)     # already reaped: no zombie left


def wait_exit(pidfd: int, timeout: float = WAIT) -> bool:
    readable, _, _ = select.select([pidfd], [], [], timeout)
    return bool(readable)


# ---------------------------------------------------------------------- the stream
@pytest.mark.req("TRN-5")
def test_stray_output_does_not_corrupt_the_stream():
    lines, recorder = Lines(), Recorder()
    client, transport = make_client(recorder=recorder, on_stderr=lines)
    with client:
        assert client.call_tool("shout", {"text": "hi"}).content[0].text == "HI"
        for text in ("stray print from a tool: hi", "stray write to fd 1", "stray child output"):
            lines.wait_for(text)
        assert client.call_tool("add", {"a": 2, "b": 3}).content[0].text == "5"
    assert transport.process.returncode == 0
    assert not [m for d, m in recorder.records if "error" in m], "something on stdout failed to parse"


def test_oversized_line_from_the_server_is_skipped_and_the_session_goes_on():
    recorder = Recorder()
    client, _ = make_client(recorder=recorder, max_message_size=4096)
    with client:
        assert len(client.call_tool("big", {"size": 3000}).content[0].text) == 3000
        with pytest.raises(MessageTooLarge) as info:  # its reply was skipped: the call fails at once
            client.call_tool("big", {"size": 20000}, timeout=WAIT * 4)
        assert info.value.limit == 4096 and info.value.size > 20000
        client.ping()
        assert client.call_tool("add", {"a": 1, "b": 1}).content[0].text == "2"
        # a reply is never answered, not even a skipped one
        assert not [m for m in recorder.sent() if "error" in m]


@pytest.mark.req("TRN-4")
def test_a_chatty_server_never_blocks():
    count = [0]

    def on_stderr(line):
        count[0] += 1

    client, transport = make_client(on_stderr=on_stderr)
    with client:
        result = client.call_tool("chatty", {"megabytes": 8}, timeout=20)
        assert result.content[0].text == "chatted"
        client.ping()
    assert count[0] >= 8 * 1024
    assert len(transport.stderr_tail) <= 50


def test_stderr_works_without_a_file_descriptor(monkeypatch):
    fake = io.StringIO()
    monkeypatch.setattr(sys, "stderr", fake)
    # the default sink writes to sys.stderr as text
    client, _ = make_client(on_stderr=None)
    with client:
        client.call_tool("shout", {"text": "x"})
    assert "stdio-test server starting" in fake.getvalue()
    assert "stray print from a tool: x" in fake.getvalue()
    # and an explicit callback gets every line too
    lines = Lines()
    client, _ = make_client(on_stderr=lines)
    with client:
        client.call_tool("shout", {"text": "y"})
        lines.wait_for("stray print from a tool: y")
    assert "stdio-test server starting" in lines
    assert lines.threads == {"mcp-stderr"}


# ---------------------------------------------------------------------- server side of the shutdown
@pytest.mark.parametrize("tool", ["block", "stubborn"])
@pytest.mark.req("STDIO26-12")
def test_server_exits_promptly_on_stdin_eof_with_a_handler_running(tool):
    process = subprocess.Popen(argv(), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               env={**os.environ, **ENV})
    stderr_lines: queue.Queue = queue.Queue()
    pump = threading.Thread(target=lambda: [stderr_lines.put(raw) for raw in iter(process.stderr.readline, b"")],
                            name="test-stderr", daemon=True)
    pump.start()
    try:
        def send(message):
            process.stdin.write(json.dumps(message).encode() + b"\n")
            process.stdin.flush()
        send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}})
        assert json.loads(process.stdout.readline())["id"] == 0
        send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        send({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": tool, "arguments": {}}})
        deadline = time.monotonic() + WAIT
        while True:
            line = stderr_lines.get(timeout=max(0.0, deadline - time.monotonic()))
            if f"{tool} started".encode() in line:
                break
        begin = time.monotonic()
        process.stdin.close()
        assert process.wait(timeout=3) == 0
        assert time.monotonic() - begin < 3
        assert process.stdout.read() == b"", "no answer is sent for a request cut off by EOF"
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        pump.join(WAIT)
        process.stdout.close()
        process.stderr.close()


INITIALIZE = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def pipe_into_server(*messages, timeout: float = WAIT) -> list:
    """Write ``messages`` to a server's stdin at once and close it, as ``printf ... | python
    server.py`` does; the answers it printed. A server still alive after ``timeout`` fails."""
    lines = b"".join(json.dumps(m).encode() + b"\n" for m in messages)
    try:
        done = subprocess.run(argv(), input=lines, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              env={**os.environ, **ENV}, timeout=timeout)
    except subprocess.TimeoutExpired as exc:
        raise AssertionError(f"the server outlived its stdin by more than {timeout} s") from exc
    assert done.returncode == 0, done.stderr.decode()
    return [json.loads(line) for line in done.stdout.splitlines()]


def test_requests_read_before_stdin_closes_are_answered():
    """``printf '<initialize>\\n<initialized>\\n<tools/list>\\n' | python server.py`` answers
    all three requests, not only the initialize (session/__init__.py rule 5: the EOF grace)."""
    answers = pipe_into_server(
        INITIALIZE, INITIALIZED,
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "add", "arguments": {"a": 2, "b": 3}}},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "nap", "arguments": {"seconds": 0.05}}},
        {"jsonrpc": "2.0", "id": 4, "method": "ping"})
    by_id = {answer["id"]: answer for answer in answers}
    assert sorted(by_id) == [0, 1, 2, 3, 4], answers
    assert "add" in [tool["name"] for tool in by_id[1]["result"]["tools"]]
    assert by_id[2]["result"]["content"][0]["text"] == "5"
    assert by_id[3]["result"]["content"][0]["text"] == "rested"


def test_a_tool_still_sleeping_does_not_keep_the_server_past_the_eof_grace():
    """A 30 s tool cut off by EOF: the server exits after the grace (1 s), well within the
    subprocess timeout, without answering it."""
    answers = pipe_into_server(
        INITIALIZE, INITIALIZED,
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "nap", "arguments": {"seconds": 30}}},
        timeout=10)
    assert [answer["id"] for answer in answers] == [0]


# ---------------------------------------------------------------------- client side of the shutdown
@pytest.mark.req("LIFE-15")
def test_a_well_behaved_server_exits_on_eof_without_signals():
    client, transport = make_client(close_timeout=WAIT)
    with client:
        client.ping()
    assert transport.process.returncode == 0
    assert_reaped(transport.process)


@pytest.mark.req("LIFE-15", "STDIO26-11")
@pytest.mark.parametrize("mode, expected_signal", [("ignore-eof", signal.SIGTERM), ("ignore-term", signal.SIGKILL)])
def test_shutdown_ladder(mode, expected_signal):
    lines = Lines()
    client, transport = make_client(mode, on_stderr=lines, close_timeout=0.3, terminate_timeout=0.3)
    with client:
        client.ping()
    # (the with block's exit ran the ladder)
    assert transport.process.returncode == -expected_signal
    assert_reaped(transport.process)
    assert "ignoring stdin EOF" in lines


def test_ladder_timing():
    client, transport = make_client("ignore-term", close_timeout=0.3, terminate_timeout=0.3)
    client.connect()
    begin = time.monotonic()
    client.close()
    elapsed = time.monotonic() - begin
    assert 0.55 <= elapsed < 3.0
    assert transport.process.returncode == -signal.SIGKILL
    assert_reaped(transport.process)


@pytest.mark.skipif(not hasattr(os, "pidfd_open"), reason="needs os.pidfd_open (Linux)")
def test_a_grandchild_in_the_servers_process_group_is_killed_too():
    client, transport = make_client("ignore-eof", close_timeout=0.3, terminate_timeout=0.3)
    with client:
        pid = int(client.call_tool("grandchild", {}).content[0].text)
        pidfd = os.pidfd_open(pid)
    try:
        assert transport.process.returncode == -signal.SIGTERM
        assert wait_exit(pidfd), "the grandchild survived the shutdown ladder"
    finally:
        os.close(pidfd)
        if not wait_exit_now(pid):
            os.kill(pid, signal.SIGKILL)


def wait_exit_now(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except OSError:
        return True


@pytest.mark.skipif(not hasattr(os, "pidfd_open"), reason="needs os.pidfd_open (Linux)")
def test_a_grandchild_left_behind_by_a_server_that_exits_cleanly():
    """The server exits on EOF, but the grandchild it started still holds the
    stderr pipe: closing must neither hang nor leave the grandchild or the
    stderr thread behind. (Closed on a helper thread, so a hang fails the test.)"""
    client, transport = make_client()
    client.connect()
    pid = int(client.call_tool("grandchild", {}).content[0].text)
    pidfd = os.pidfd_open(pid)
    closer, outcome = run_in_thread(client.close)
    try:
        try:
            status, value = outcome.get(timeout=WAIT)
        except queue.Empty:
            pytest.fail("Client.close() hung: the grandchild keeps the stderr pipe open")
        assert status == "ok", value
        assert transport.process.returncode == 0
        assert wait_exit(pidfd), "the grandchild outlived the client"
    finally:
        if not wait_exit_now(pid):
            os.kill(pid, signal.SIGKILL)
        closer.join(WAIT)
        os.close(pidfd)


def test_server_killed_mid_call_fails_the_call_at_once_with_exit_code_and_stderr():
    lines = Lines()
    # A raw session request (no 2026-07-28 _meta): the legacy era, where the session alone is enough.
    client, transport = make_client(on_stderr=lines, client_options={"protocol_version": "2025-11-25"})
    with client:
        pending = client.session.start_request("tools/call", {"name": "block", "arguments": {}})
        lines.wait_for("block started")
        os.kill(transport.process.pid, signal.SIGKILL)
        begin = time.monotonic()
        with pytest.raises(ConnectionClosed) as info:
            pending.result()
        assert time.monotonic() - begin < 1.0
        error = info.value
        assert error.exit_code == -signal.SIGKILL
        assert "stdio-test server starting" in error.stderr_tail
        assert "block started" in str(error)
        with pytest.raises(ConnectionClosed):
            client.ping()
    assert_reaped(transport.process)


# ---------------------------------------------------------------------- how the client may be used
def test_the_client_works_inside_a_running_event_loop():
    async def main():
        loop = asyncio.get_running_loop()
        assert loop.is_running()
        async def other_work():
            return "done"
        ticks = asyncio.ensure_future(other_work())       # the loop holds other work too
        client, _ = make_client()
        with client:
            answer = client.call_tool("add", {"a": 20, "b": 22}).content[0].text
            client.ping()
        assert await ticks == "done"
        return answer

    assert asyncio.run(main()) == "42"


def test_the_client_is_safe_to_share_between_threads():
    recorder = Recorder()
    client, _ = make_client(recorder=recorder)
    barrier = threading.Barrier(8, timeout=WAIT)

    def worker(k):
        barrier.wait()
        return [(k, j, client.call_tool("add", {"a": k * 100, "b": j}).content[0].text) for j in range(20)]

    with client:
        outcomes = [run_in_thread(worker, k)[1] for k in range(8)]
        results = []
        for outcome in outcomes:
            status, value = outcome.get(timeout=WAIT * 4)
            assert status == "ok", value
            results.extend(value)
    assert len(results) == 160
    assert all(text == str(k * 100 + j) for k, j, text in results)


@pytest.mark.req("TRN-2", "TRN-6", "TRN-3", "TRN-1")
def test_nothing_is_left_behind_after_with():
    before_children = set(children_of(os.getpid()))
    recorder = Recorder()
    client, transport = make_client(recorder=recorder)
    with client:
        assert client.server_info.name == "stdio-test"
        assert transport.process.pid in children_of(os.getpid())
        for tool in client.list_tools():
            assert tool.name
        client.call_tool("add", {"a": 1, "b": 2}, on_progress=lambda *a: None)
        assert mcp_threads()
    assert_reaped(transport.process)
    assert mcp_threads() == [], [t.name for t in mcp_threads()]
    assert set(children_of(os.getpid())) <= before_children
    assert transport.process.stdin.closed and transport.process.stdout.closed and transport.process.stderr.closed


def test_demo_server_module_over_stdio():
    client, transport = make_client(argv_=[sys.executable, "-m", "mcp_ref.examples.demo_server"])
    progress = []
    with client:
        assert client.server_info.name == "demo"
        assert client.call_tool("add", {"a": 2, "b": 3}).content[0].text == "5"
        result = client.call_tool("count", {"n": 3}, on_progress=lambda p, t, m: progress.append((p, t, m)))
        assert result.content[0].text == "counted to 3"
        assert progress == [(1, 3, "at 1"), (2, 3, "at 2"), (3, 3, "at 3")]
        assert client.call_tool("divide", {"a": 1, "b": 0}).is_error
    assert transport.process.returncode == 0


def test_a_server_that_dies_at_startup_fails_the_handshake_with_its_exit_code_and_stderr():
    script = "import sys; print('boom: missing API key', file=sys.stderr, flush=True); sys.exit(3)"
    client, transport = make_client(argv_=[sys.executable, "-c", script])
    begin = time.monotonic()
    with pytest.raises(ConnectionClosed) as info:
        with client:
            pytest.fail("connected to a server that exited")
    assert time.monotonic() - begin < WAIT
    assert info.value.exit_code == 3
    assert "boom: missing API key" in info.value.stderr_tail
    assert client.closed
    assert_reaped(transport.process)


def test_the_server_reads_a_large_line_from_its_stdin(monkeypatch):
    """The server reads ``sys.stdin.buffer``: a line of half a megabyte arrives whole,
    then EOF."""
    from mcp_ref.transports.stdio import StdioServerTransport
    line = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"pad": "x" * 512 * 1024}}).encode()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(line + b"\n")))
    transport = StdioServerTransport(stdout=io.BytesIO())
    try:
        message = transport.receive()
        assert message.method == "ping" and len(message.params["pad"]) == 512 * 1024
        assert transport.receive() is None
    finally:
        transport.close()


def test_frames_are_read_without_stripping_surrounding_whitespace():
    """A frame's newline and blanks around the JSON are allowed; a blank line is
    skipped and a line of only blanks is no message."""
    from mcp_ref.transports.stdio import StdioServerTransport
    lines = b'\n  \r\n {"jsonrpc":"2.0","id":1,"method":"ping"} \r\n{"jsonrpc":"2.0","id":2,"method":"ping"}\n'
    transport = StdioServerTransport(io.BytesIO(lines), io.BytesIO())
    assert [transport.receive().id, transport.receive().id, transport.receive()] == [1, 2, None]


ADD_SERVER = r'''
from mcp_ref import Server

server = Server("add")


@server.tool
def add(a: int, b: int) -> int:
    """Add."""
    return a + b


server.run()
'''


def test_replies_reach_their_callers_from_64_threads():
    """64 threads, 10 calls each over one stdio connection, every call with its own
    arguments: each caller gets the answer to its own request."""
    client = Client.stdio([sys.executable, "-c", ADD_SERVER], env=ENV, on_stderr=lambda line: None,
                          timeout=WAIT * 4)
    wrong, failed = [], []
    start = threading.Barrier(64)

    def caller(t):
        start.wait(WAIT)
        for k in range(10):
            try:
                text = client.call_tool("add", {"a": t * 100, "b": k}).content[0].text
            except Exception as exc:              # noqa: BLE001 - reported below
                failed.append(exc)
                return
            if text != str(t * 100 + k):
                wrong.append((t, k, text))
    try:
        client.connect()
        threads = [threading.Thread(target=caller, args=(t,), daemon=True) for t in range(64)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(WAIT * 6)
        assert not [thread for thread in threads if thread.is_alive()]
    finally:
        client.close()
    assert not failed and not wrong, (failed[:3], wrong[:3])
