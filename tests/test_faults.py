"""Faults and soak over stdio, at CI sizes (``python bench/soak.py`` runs the full ones):
a server SIGKILLed mid-call, a server that ignores SIGTERM and stdin EOF, half a line
then EOF in each direction, a peer that stops reading, megabytes of stderr, a handler
that never returns, many sessions opened and closed in sequence, and eight threads
sharing one client. The attacked server is tests/fuzz_target.py. Everything is
bounded by timeouts; nothing asserts how long something took.

Spec: basic/transports#stdio, basic/lifecycle#shutdown, #timeouts,
basic/utilities/cancellation.
"""
import json
import os
import select
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

import fuzzing
from helpers import WAIT, run_in_thread
from mcp_ref import Client
from mcp_ref.errors import ConnectionClosed, RequestTimeout

ROOT = Path(__file__).resolve().parent.parent
TARGET = [sys.executable, str(ROOT / "tests" / "fuzz_target.py")]
SESSIONS = int(os.environ.get("MCP_SOAK_SESSIONS", "20"))
CALLS = int(os.environ.get("MCP_SOAK_CALLS", "100"))
PROC = Path("/proc/self/fd").is_dir()

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals and /proc")


def _env(**extra) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    env.update(extra)
    return env


def _client(**env) -> Client:
    return Client.stdio(TARGET, env=_env(**env), timeout=WAIT, close_timeout=2, terminate_timeout=2)


def children() -> set:
    """Our child processes (zombies included), from /proc."""
    me, out = os.getpid(), set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == me:
                out.add(int(entry))
    return out


def _wait_until(condition, limit: float = WAIT) -> None:
    event = threading.Event()
    for _ in range(int(limit / 0.01)):
        if condition():
            return
        event.wait(0.01)
    raise AssertionError("the condition never held")


def resources() -> dict:
    return {"threads": threading.active_count(), "fds": len(os.listdir("/proc/self/fd")),
            "children": len(children())}


# ---------------------------------------------------------------------- a server that dies or will not die
@pytest.mark.req("LIFE-15")
def test_a_server_killed_mid_call_fails_every_pending_call_at_once():
    client = _client()
    with client:
        pid = client.transport.process.pid
        calls = [run_in_thread(client.call_tool, "wait_cancel", {"seconds": 60})[1] for _ in range(4)]
        _wait_until(lambda: [w.method for w in list(client.session._outbound.values())].count("tools/call") == 4)
        os.kill(pid, signal.SIGKILL)
        for outcome in calls:
            kind, value = outcome.get(timeout=WAIT)
            assert kind == "error" and isinstance(value, ConnectionClosed), value
            assert value.exit_code == -signal.SIGKILL
        with pytest.raises(ConnectionClosed):
            client.call_tool("echo", {"text": "after"})
    assert client.transport.process.returncode == -signal.SIGKILL


@pytest.mark.req("LIFE-15")
def test_a_server_that_ignores_sigterm_and_stdin_eof_is_killed_and_reaped():
    client = Client.stdio(TARGET, env=_env(FUZZ_IGNORE_SIGTERM="1", FUZZ_HANG_AT_EXIT="1"), timeout=WAIT,
                          close_timeout=0.3, terminate_timeout=0.3)
    with client:
        assert client.call_tool("echo", {"text": "x"}).content[0].text == "x"
        process = client.transport.process
    assert process.returncode == -signal.SIGKILL
    assert process.pid not in children()


# ---------------------------------------------------------------------- half a line, then EOF
HALF_LINE_SERVER = textwrap.dedent("""
    import json, sys
    for line in sys.stdin.buffer:
        message = json.loads(line)
        if message.get("method") == "initialize":
            result = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                      "serverInfo": {"name": "half", "version": "1"}}
            sys.stdout.buffer.write(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}).encode()
                                    + b"\\n")
            sys.stdout.buffer.flush()
        elif message.get("method") == "tools/call":
            sys.stdout.buffer.write(b'{"jsonrpc":"2.0","id":' + str(message["id"]).encode() + b',"resu')
            sys.stdout.buffer.flush()
            sys.exit(0)
        elif "id" in message:                  # server/discover: a legacy server, at once
            sys.stdout.buffer.write(json.dumps({"jsonrpc": "2.0", "id": message["id"], "error": {
                "code": -32601, "message": "Method not found"}}).encode() + b"\\n")
            sys.stdout.buffer.flush()
""")


@pytest.mark.req("TRN-3")
def test_half_a_line_then_eof_from_the_server_fails_the_call():
    client = Client.stdio([sys.executable, "-c", HALF_LINE_SERVER], timeout=WAIT)
    with client:
        with pytest.raises(ConnectionClosed) as info:
            client.call_tool("anything", {})
        assert info.value.exit_code == 0


@pytest.mark.req("TRN-3")
def test_half_a_line_then_eof_from_the_client_ends_the_server():
    process = subprocess.Popen(TARGET, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                               env=_env())
    try:
        peer = fuzzing.stdio_peer(process)
        fuzzing.initialize(peer)
        process.stdin.write(b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"ec')
        process.stdin.close()
        assert process.wait(WAIT) == 0
        rest = []
        while True:
            message = peer.recv(WAIT)
            if message is None:
                break
            rest.append(message)
        assert all("unparseable" not in m for m in rest), rest
        assert all(m.get("error", {}).get("code") == -32700 for m in rest if "id" in m), rest
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        process.stdout.close()


# ---------------------------------------------------------------------- a peer that stops reading
DEAF_SERVER = textwrap.dedent("""
    import json, sys, time
    request = json.loads(sys.stdin.buffer.readline())
    while request["method"] != "initialize":       # a legacy server: no server/discover
        error = {"code": -32601, "message": "Method not found"}
        sys.stdout.buffer.write(json.dumps({"jsonrpc": "2.0", "id": request["id"], "error": error}).encode() + b"\\n")
        sys.stdout.buffer.flush()
        request = json.loads(sys.stdin.buffer.readline())
    result = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
              "serverInfo": {"name": "deaf", "version": "1"}}
    sys.stdout.buffer.write(json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": result}).encode() + b"\\n")
    sys.stdout.buffer.flush()
    time.sleep(3600)                        # never reads again
""")
CALL_A_DEAF_SERVER = textwrap.dedent("""
    import sys
    from mcp_ref import Client
    from mcp_ref.errors import RequestTimeout
    client = Client.stdio([sys.executable, "-c", sys.argv[1]], timeout=1, close_timeout=0.2, terminate_timeout=0.2)
    client.connect()
    try:
        client.call_tool("x", {"big": "a" * 3000000})   # more than the pipe holds
    except RequestTimeout:
        print("timed out")
    client.close()
    print("closed")
""")


@pytest.mark.req("LIFE-16")
def test_a_call_to_a_server_that_stopped_reading_times_out_and_close_returns():
    process = subprocess.Popen([sys.executable, "-c", CALL_A_DEAF_SERVER, DEAF_SERVER], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, env=_env(), start_new_session=True)
    try:
        out, _ = process.communicate(timeout=8)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        pytest.fail("the call (timeout 1 s) and close() were still blocked after 8 s")
    assert out.split() == [b"timed", b"out", b"closed"], out


@pytest.mark.req("LIFE-16")
def test_a_deaf_server_leaves_no_writer_thread_and_no_child_behind():
    """In this process: the call times out, close() returns within its bound, and the
    writer thread blocked on the full pipe ends once the child is gone."""
    client = Client.stdio([sys.executable, "-c", DEAF_SERVER], timeout=1, close_timeout=0.2, terminate_timeout=0.2)
    client.connect()
    with pytest.raises(RequestTimeout):
        client.call_tool("x", {"big": "a" * 3000000})   # more than the pipe holds
    writer = client.transport._writer
    assert writer.written < 3000000                    # the line is still being written
    closer, outcome = run_in_thread(client.close)
    closer.join(WAIT)
    assert outcome.get(0) == ("ok", None)
    assert not writer.stuck and client.transport.process.returncode is not None
    assert not [t for t in threading.enumerate() if t.name == "mcp-stdio-writer"]


def test_the_writer_thread_writes_every_line_in_order_and_the_caller_never_waits():
    """transports/stdio.py W1: ``write`` returns at once, also for a line longer than the
    pipe holds with nothing read yet (what does not fit is queued); every line
    arrives whole and in order."""
    from mcp_ref.transports.stdio import PipeWriter
    read_end, write_end = os.pipe()
    writer = PipeWriter(os.fdopen(write_end, "wb"), owned=True)
    try:
        writer.write(b"short\n")
        big = bytes(range(256)) * 8000                  # 2 MB: more than the pipe holds
        begin = time.monotonic()
        writer.write(big + b"\n")
        writer.write(b"after\n")
        assert time.monotonic() - begin < 1.0           # nothing was read: the caller did not wait
        assert b"".join(_drain(read_end, 6 + len(big) + 1 + 6)) == b"short\n" + big + b"\nafter\n"
    finally:
        writer.close(1.0)
        os.close(read_end)


def _drain(fd, size):
    """Read ``size`` bytes from ``fd`` (bounded by the test's wait)."""
    got, chunks = 0, []
    while got < size:
        readable, _, _ = select.select([fd], [], [], WAIT)
        assert readable, f"only {got} of {size} bytes arrived"
        chunk = os.read(fd, size - got)
        chunks.append(chunk)
        got += len(chunk)
    return chunks


@pytest.mark.skipif(not hasattr(os, "openpty"), reason="no pseudo-terminals here")
def test_the_writer_leaves_a_terminal_and_a_pipe_blocking():
    """transports/stdio.py W1: the blocking mode belongs to the open file (a terminal shares it
    with the shell that started the server): a terminal is never switched, and a pipe is
    blocking again once the writer has closed it."""
    from mcp_ref.transports.stdio import PipeWriter
    leader, terminal = os.openpty()
    shell = os.dup(terminal)
    read_end, write_end = os.pipe()
    shared = os.dup(write_end)                          # the same open file, as a shell would hold it
    try:
        on_terminal = PipeWriter(os.fdopen(terminal, "wb"), owned=True)
        on_terminal.write(b"hello\n")
        assert on_terminal.close(1.0) is True and os.get_blocking(shell)
        writer = PipeWriter(os.fdopen(write_end, "wb"), owned=True)
        writer.write(b"line\n")
        assert writer.close(1.0) is True
        assert os.get_blocking(shared) and os.read(read_end, 100) == b"line\n"
    finally:
        for fd in (leader, shell, read_end, shared):
            os.close(fd)


def test_a_peer_that_reads_nothing_gets_a_bounded_queue_then_an_error():
    """The writer's queue is bounded: past it, writing raises PeerNotReading (an
    OSError, so the session closes) instead of holding memory for a deaf peer; an
    earlier failed write is raised by the next one."""
    from mcp_ref.transports.stdio import PeerNotReading, PipeWriter
    read_end, write_end = os.pipe()
    stream = os.fdopen(write_end, "wb")
    writer = PipeWriter(stream, owned=True, max_queued=2000000)
    try:
        writer.write(b"x" * 1200000)                   # fills the pipe: the thread blocks, the line stays queued
        writer.write(b"y" * 90000)
        with pytest.raises(PeerNotReading):            # queued: 1.2 + 0.09 + 1.8 MB
            writer.write(b"z" * 1800000)
        assert writer.close(0.2) is False              # nothing moves: close gives up, stream left open
        assert writer.stuck and not stream.closed
        os.close(read_end)                             # the reader goes: the blocked write fails
        writer.join(WAIT)
        assert not writer.stuck and stream.closed
        with pytest.raises(OSError):
            writer.write(b"late\n")
    finally:
        if not stream.closed:
            stream.close()


@pytest.mark.req("LIFE-15")
def test_a_server_whose_client_stopped_reading_still_exits_when_stdin_closes():
    process = subprocess.Popen(TARGET, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                               env=_env())
    try:
        process.stdin.write(json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                                        "params": fuzzing.REQUESTS["initialize"]}).encode() + b"\n")
        process.stdin.flush()
        assert b'"result"' in process.stdout.readline()
        process.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        big = json.dumps({"text": "x" * 1000}).encode()
        for n in range(400):                           # 400 kB of answers: far more than a pipe holds
            process.stdin.write(b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo",'
                                b'"arguments":%s}}\n' % (n + 1, big))
        process.stdin.close()                          # and nobody ever reads stdout again
        assert process.wait(WAIT) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        process.stdout.close()


# ---------------------------------------------------------------------- stderr, handlers that never return
@pytest.mark.req("TRN-4")
def test_megabytes_of_stderr_block_nothing():
    lines = []
    client = Client.stdio(TARGET, env=_env(FUZZ_STDERR_BYTES=str(5 * 1024 * 1024)), timeout=WAIT,
                          on_stderr=lines.append)
    with client:
        assert client.call_tool("echo", {"text": "through"}).content[0].text == "through"
        assert len(client.transport.stderr_tail) <= 50
    assert sum(len(line) + 1 for line in lines) >= 5 * 1024 * 1024


@pytest.mark.req("LIFE-16", "LIFE-17", "CANC-4")
def test_a_handler_that_never_returns_frees_its_caller_and_the_pool_serves_others():
    client = _client()
    with client:
        for _ in range(3):
            with pytest.raises(RequestTimeout):
                client.call_tool("never_returns", {}, timeout=0.5)
        assert client.call_tool("echo", {"text": "still served"}).content[0].text == "still served"
        client.ping()
        process = client.transport.process
    assert process.returncode == 0                     # stdin EOF ended it, stuck handlers and all


# ---------------------------------------------------------------------- soak
@pytest.mark.req("LIFE-15", "TRN-2")
@pytest.mark.skipif(not PROC, reason="needs /proc")
def test_stdio_sessions_opened_and_closed_in_sequence_leave_nothing_behind():
    def one(n: int) -> None:
        with _client() as client:
            assert client.call_tool("echo", {"text": f"s{n}"}).content[0].text == f"s{n}"

    one(-1)                                            # imports and lazy modules settle first
    before = resources()
    for n in range(SESSIONS):
        one(n)
    after = resources()
    assert after["children"] == before["children"] == 0, (before, after)
    assert after["fds"] <= before["fds"], (before, after)
    assert after["threads"] <= before["threads"], (before, after)


@pytest.mark.req("BASE-6")
def test_eight_threads_share_one_stdio_client_and_every_reply_reaches_its_caller():
    client = _client()
    with client:
        def worker(k: int) -> list:
            wrong = []
            for j in range(CALLS):
                text = f"thread {k} call {j}"
                got = client.call_tool("echo", {"text": text}).content[0].text
                if got != text:
                    wrong.append((text, got))
            return wrong
        outcomes = [run_in_thread(worker, k)[1] for k in range(8)]
        results = [outcome.get(timeout=WAIT * 6) for outcome in outcomes]
    assert [kind for kind, _ in results] == ["ok"] * 8, results
    assert [value for _, value in results] == [[]] * 8


def test_a_peer_cannot_keep_more_requests_in_flight_than_the_limit():
    """Issue 15 (size limits): thousands of pending requests from one peer get a clear
    error past ``max_inbound`` (session/__init__.py rule 3), the memory stays bounded, and the
    requests within the limit are still answered."""
    import threading as _threading

    from helpers import initialize_raw, raw_server
    from mcp_ref import Server
    gate = _threading.Event()
    server = Server("limited")

    @server.tool
    def wait() -> str:
        gate.wait(10)
        return "done"
    with raw_server(server, max_inbound=5, max_workers=2) as (peer, session):
        initialize_raw(peer)
        for request_id in range(100, 106):
            peer.send({"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
                       "params": {"name": "wait", "arguments": {}}})
        refused = peer.recv_reply(105)
        assert refused["error"]["code"] == -32603 and refused["error"]["data"] == {"limit": 5}
        assert "in flight" in refused["error"]["message"]
        assert session.in_flight <= 5
        gate.set()
        answers = {}
        while len(answers) < 5:
            message = peer.recv(10)
            assert message is not None, f"the session closed with {sorted(answers)} answered"
            answers[message.get("id")] = message
        assert sorted(answers) == list(range(100, 105))
        assert all(m["result"]["content"][0]["text"] == "done" for m in answers.values())
