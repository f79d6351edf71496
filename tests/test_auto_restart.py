"""Opt-in stdio auto-restart (``Client.stdio(argv, auto_restart=N)``) with real
subprocesses: the call in flight when the server dies fails with
``ConnectionClosed``; the next call respawns the server, runs the handshake again
and is sent; at most N respawns in a row, the count restored by every answered
request; concurrent callers cause one respawn; a respawned server is handled as
on a first connect; ``close()`` leaves no process or thread behind, even during a
respawn. Spec: basic/lifecycle, basic/transports#stdio; client_restart.py.

The server is ``SERVER`` written to ``tmp_path``. Each start appends its pid to a
file, and the N-th start behaves as the N-th word of its plan (``full`` when the
plan is shorter). Every transport the client makes is a ``Tapped`` one (the class
is patched where ``Client.stdio`` finds it), so each server's transcript is
validated against the schema, and each process checked to be reaped. Nothing
sleeps to wait: waits are on Events, Conditions and process exits, with timeouts.
"""
import os
import signal
import sys
import threading
from pathlib import Path

import pytest

from helpers import WAIT, as_dict, child_processes, mcp_threads, run_in_thread, tap_stdio_clients
from mcp_ref import (LATEST_REVISION, CapabilityNotSupported, Client, ConnectionClosed, ToolInputError,
                     UnsupportedProtocolVersion)
from mcp_ref.protocol.lifecycle import LATEST_LEGACY_REVISION
from mcp_ref.transports import memory_pair

pytestmark = pytest.mark.skipif(os.name != "posix", reason="process groups and signals are POSIX")

ROOT = Path(__file__).resolve().parent.parent
ENV = {"PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
       "PYTHONUNBUFFERED": "1"}

SERVER = r'''
import json, os, sys

pids, plan = sys.argv[1], sys.argv[2].split(",")
with open(pids, "a") as f:
    f.write(f"{os.getpid()}\n")
with open(pids) as f:
    start = len(f.read().split())
mode = plan[start - 1] if start <= len(plan) else "full"
print(f"start {start}: {mode}", file=sys.stderr, flush=True)

if mode == "die":                                  # exits before the handshake
    print("refusing to start", file=sys.stderr, flush=True)
    sys.exit(4)
if mode in ("hang", "old"):                        # no MCP library: a raw peer
    for line in sys.stdin:
        message = json.loads(line)
        if mode == "old" and message.get("method") == "initialize":
            print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": {
                "protocolVersion": "1999-01-01", "capabilities": {},
                "serverInfo": {"name": "old", "version": "0"}}}), flush=True)
        elif mode == "old" and "id" in message:    # as a legacy server answers the 2026-07-28 probe
            print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "error": {
                "code": -32601, "message": "Method not found"}}), flush=True)
    sys.exit(0)

from mcp_ref import Server

server = Server("restartable", version=str(start), instructions=f"start {start}")
if mode == "full":
    @server.tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    @server.tool
    def pid() -> int:
        """This server's process id."""
        return os.getpid()

    @server.tool
    def crash() -> str:
        """Exit at once, in the middle of this call."""
        print("crashing on purpose", file=sys.stderr, flush=True)
        os._exit(3)


@server.resource("note://one")                     # "no-tools": this resource only
def one() -> str:
    return "one"


server.run()
'''


class Spawns:
    """Every ``Tapped`` transport made during a test, in order; ``wait(count)`` blocks
    until that many exist."""

    def __init__(self):
        self.transports: list = []
        self._cond = threading.Condition()

    def add(self, transport) -> None:
        with self._cond:
            self.transports.append(transport)
            self._cond.notify_all()

    def wait(self, count: int, timeout: float = WAIT) -> None:
        with self._cond:
            if not self._cond.wait_for(lambda: len(self.transports) >= count, timeout):
                raise AssertionError(f"{count} servers were never started; got {len(self.transports)}")

    def __len__(self) -> int:
        with self._cond:
            return len(self.transports)

    def __getitem__(self, index):
        with self._cond:
            return self.transports[index]

    def pids(self) -> list:
        with self._cond:
            return [t.process.pid for t in self.transports]


@pytest.fixture
def spawns(monkeypatch, wire_validator):
    """Patch the stdio client transport so that every spawn is tapped and counted; after
    the test, validate each server's transcript and check that every process was reaped."""
    made = Spawns()
    tap_stdio_clients(monkeypatch, on_made=made.add)
    yield made
    for transport in made.transports:
        assert_reaped(transport.process)
        assert transport.process.stdout.closed and transport.process.stdin.closed
        records = transport.recorder.raw
        starts = [i for i, (direction, line) in enumerate(records)
                  if direction == "send" and as_dict(line).get("method") == "initialize"]
        if starts:          # a legacy server: its session begins at initialize, after the probe
            wire_validator.check_transcript(records[starts[0]:], LATEST_LEGACY_REVISION)
        elif records:
            wire_validator.check_transcript(records, LATEST_REVISION)


def assert_reaped(process) -> None:
    assert process.poll() is not None, f"server process {process.pid} is still running"
    with pytest.raises(ChildProcessError):
        os.waitpid(process.pid, os.WNOHANG)          # already reaped: no zombie


class Restarts:
    """An ``on_restart`` callback that keeps the attempts it was given."""

    def __init__(self):
        self.attempts: list = []
        self.lock = threading.Lock()

    def __call__(self, attempt: int) -> None:
        with self.lock:
            self.attempts.append(attempt)


def make_client(tmp_path, plan="full", **options) -> Client:
    script = tmp_path / "server.py"
    script.write_text(SERVER)
    options.setdefault("timeout", WAIT * 2)
    options.setdefault("init_timeout", WAIT * 2)
    return Client.stdio([sys.executable, str(script), str(tmp_path / "pids"), plan], env=ENV,
                        on_stderr=lambda line: None, **options)


def crash(client) -> ConnectionClosed:
    with pytest.raises(ConnectionClosed) as info:
        client.call_tool("crash")
    return info.value


def pid(client) -> int:
    return int(client.call_tool("pid").content[0].text)


def add(client, a=2, b=3) -> str:
    return client.call_tool("add", {"a": a, "b": b}).content[0].text


# ---------------------------------------------------------------------- respawning
def test_the_call_in_flight_fails_and_the_next_call_respawns(tmp_path, spawns):
    restarts = Restarts()
    with make_client(tmp_path, auto_restart=1, on_restart=restarts) as client:
        first = pid(client)
        assert first == spawns[0].process.pid
        assert (client.server_info.version, client.instructions) == ("1", "start 1")
        error = crash(client)
        assert error.exit_code == 3 and "crashing on purpose" in error.stderr_tail
        assert client.closed and len(spawns) == 1 and restarts.attempts == []   # nothing resent, nothing respawned
        assert_reaped(spawns[0].process)
        assert add(client) == "5"                              # respawned, handshake again, then sent
        assert len(spawns) == 2 and restarts.attempts == [1]
        second = pid(client)
        assert second != first and second == spawns[1].process.pid
        assert (client.server_info.version, client.instructions) == ("2", "start 2")
        assert not client.closed
    sent = [m.get("method") for m in spawns[1].recorder.sent()]
    # the era is probed again (2026-07-28), the listen stream reopened, then the call sent
    assert sent[:3] == ["server/discover", "subscriptions/listen", "tools/call"]
    assert spawns[0].recorder.sent()[0]["params"] == spawns[1].recorder.sent()[0]["params"]
    assert [m["params"]["name"] for m in spawns[0].recorder.sent() if m.get("method") == "tools/call"] == \
        ["pid", "crash"]


@pytest.mark.parametrize("method", ["ping", "list_tools", "read_resource"])
def test_any_request_method_respawns(tmp_path, spawns, method):
    with make_client(tmp_path, auto_restart=1) as client:
        crash(client)
        if method == "read_resource":
            assert client.read_resource("note://one").contents[0].text == "one"
        else:
            getattr(client, method)()
        assert len(spawns) == 2


def test_the_count_is_restored_by_each_answered_request(tmp_path, spawns):
    restarts = Restarts()
    with make_client(tmp_path, auto_restart=1, on_restart=restarts) as client:
        pids = {pid(client)}
        for _ in range(4):                                     # more crashes than the limit
            crash(client)
            pids.add(pid(client))
        assert add(client) == "5"
    assert len(pids) == len(spawns) == 5
    assert restarts.attempts == [1, 1, 1, 1]


def test_consecutive_restarts_beyond_the_limit_raise(tmp_path, spawns):
    restarts = Restarts()
    with make_client(tmp_path, auto_restart=2, on_restart=restarts) as client:
        crash(client)                                          # start 1 dies: no respawn yet
        crash(client)                                          # respawn 1, which dies in the call
        crash(client)                                          # respawn 2, likewise
        for _ in range(2):
            with pytest.raises(ConnectionClosed, match="restart limit reached") as info:
                add(client)
            assert info.value.exit_code == 3 and "crashing on purpose" in info.value.stderr_tail
        assert len(spawns) == 3 and restarts.attempts == [1, 2]


def test_concurrent_callers_after_a_crash_cause_one_respawn(tmp_path, spawns):
    restarts = Restarts()
    callers = 8
    barrier = threading.Barrier(callers, timeout=WAIT)

    def call():
        barrier.wait()
        return pid(client)

    with make_client(tmp_path, auto_restart=3, on_restart=restarts) as client:
        crash(client)
        outcomes = [run_in_thread(call)[1] for _ in range(callers)]
        results = []
        for outcome in outcomes:
            status, value = outcome.get(timeout=WAIT * 4)
            assert status == "ok", value
            results.append(value)
    assert restarts.attempts == [1] and len(spawns) == 2
    assert set(results) == {spawns[1].process.pid}


def test_by_default_nothing_is_respawned(tmp_path, spawns):
    with make_client(tmp_path) as client:
        first = crash(client)
        for _ in range(2):
            with pytest.raises(ConnectionClosed) as info:
                add(client)
            assert info.value.exit_code == 3 and "restart" not in str(info.value)
        assert first.exit_code == 3 and len(spawns) == 1


def test_auto_restart_is_a_stdio_option_only(tmp_path, spawns):
    for bad in (-1, True, 1.5, "2"):
        with pytest.raises(ValueError, match="auto_restart"):
            make_client(tmp_path, auto_restart=bad)
    assert len(spawns) == 0                                    # refused before spawning
    ours, _ = memory_pair()
    with pytest.raises(TypeError):
        Client(ours, auto_restart=1)
    with pytest.raises(TypeError):                             # an unknown option: the server is shut down
        make_client(tmp_path, auto_restart=1, no_such_option=1)
    assert len(spawns) == 1


# ---------------------------------------------------------------------- what a respawn starts from
@pytest.mark.req("STDIO26-13", "SUBS26-7")
def test_a_respawned_server_is_met_as_on_a_first_connect(tmp_path, spawns):
    restarts = Restarts()
    with make_client(tmp_path, plan="full,no-tools,old,die,full", auto_restart=3, on_restart=restarts,
                     validate_input=True) as client:
        client.list_tools()                                    # fills the tool cache
        with pytest.raises(ToolInputError):
            add(client, a="x")
        crash(client)
        # start 2 offers no tools: refused locally, as on a first connect, then a resource is read
        with pytest.raises(CapabilityNotSupported):
            add(client)
        assert client.server_info.version == "2" and "tools" not in client.server_capabilities
        assert client.read_resource("note://one").contents[0].text == "one"      # answered: count restored
        os.kill(spawns[1].process.pid, signal.SIGKILL)
        assert client.session.wait_closed(WAIT)
        # start 3 answers a revision we do not speak; start 4 dies before the handshake
        with pytest.raises(UnsupportedProtocolVersion):
            add(client)
        assert client.closed and client.server_info is None and client.protocol_version is None
        with pytest.raises(ConnectionClosed) as info:
            add(client)
        assert info.value.exit_code == 4 and "refusing to start" in info.value.stderr_tail
        # start 5 is whole again; the cache was emptied, so the bad call is sent and refused there
        result = client.call_tool("add", {"a": "x", "b": 3})
        assert result.is_error and "not of type 'integer'" in result.content[0].text
        assert (client.server_info.version, client.protocol_version) == ("5", LATEST_REVISION)
        assert add(client) == "5"
    assert restarts.attempts == [1, 1, 2, 3] and len(spawns) == 5


# ---------------------------------------------------------------------- closing
def test_close_leaves_no_process_thread_or_pipe(tmp_path, spawns):
    before = child_processes()
    client = make_client(tmp_path, auto_restart=2)
    with client:
        for _ in range(2):
            crash(client)
            assert add(client) == "5"
        assert mcp_threads()
        assert child_processes() - before == {spawns[-1].process.pid}
    assert mcp_threads() == [], [t.name for t in mcp_threads()]
    assert child_processes() <= before
    for transport in spawns.transports:
        assert_reaped(transport.process)
        assert transport.process.stderr.closed
    with pytest.raises(ConnectionClosed, match="client closed"):
        add(client)                                            # closed for good: no respawn
    assert len(spawns) == 3


def test_close_during_a_respawn_stops_it(tmp_path, spawns):
    """The respawned server never answers its handshake; close() from another thread
    ends the handshake at once and shuts that server down."""
    client = make_client(tmp_path, plan="full,hang", auto_restart=1, init_timeout=60)
    client.connect()
    try:
        crash(client)
        caller, outcome = run_in_thread(add, client)
        spawns.wait(2)
        spawns[1].recorder.wait_for(lambda d, m: m.get("method") in ("server/discover", "initialize"),
                                    what="the handshake's first request")
    finally:
        client.close()
    status, value = outcome.get(timeout=WAIT)
    assert status == "error" and isinstance(value, ConnectionClosed) and "client closed" in str(value)
    caller.join(WAIT)
    assert len(spawns) == 2
    assert_reaped(spawns[1].process)


def test_close_from_on_restart_spawns_nothing_that_survives(tmp_path, spawns):
    def on_restart(attempt):
        client.close()

    client = make_client(tmp_path, auto_restart=1, on_restart=on_restart)
    with client:
        crash(client)
        with pytest.raises(ConnectionClosed, match="client closed"):
            add(client)
    assert mcp_threads() == [] and len(spawns) == 1
    for transport in spawns.transports:
        assert_reaped(transport.process)
