"""A client used without ``with`` (client.py rules 1 and 6): the first request connects,
once, whichever threads ask; a client nobody closed is closed at interpreter exit; a
client used in a child after ``fork()`` refuses at once. Spec: basic/lifecycle."""
import os
import subprocess
import sys
import textwrap
import threading
import time
import warnings
from pathlib import Path

import pytest

from helpers import WAIT, Recorder, run_in_thread
from mcp_ref import Client, ConnectionClosed, Server, SessionError, UnsupportedProtocolVersion
from mcp_ref.transports import TapTransport, memory_pair

ROOT = Path(__file__).resolve().parent.parent
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}


def arithmetic_server() -> Server:
    server = Server("unconnected", version="1.0")

    @server.tool
    def add(a: int, b: int) -> int:
        return a + b
    return server


def tapped_client(**options):
    """A client on a memory pair served by ``arithmetic_server``; its sent messages recorded."""
    client_end, server_end = memory_pair()
    server_session = arithmetic_server().serve(server_end)
    recorder = Recorder()
    return Client(TapTransport(client_end, recorder), **options), recorder, server_session


def test_the_first_request_connects_an_unconnected_client():
    client, recorder, _ = tapped_client()
    try:
        assert client.server_info is None                      # nothing happened yet
        assert client.call_tool("add", {"a": 2, "b": 3}).content[0].text == "5"
        assert client.server_info.name == "unconnected"
        client.ping()
        with client:                                           # connect() again is a no-op
            assert client.list_tools()[0].name == "add"
        # one handshake: the 2026-07-28 probe (our server is modern); later, ping is a server/discover
        assert [m.get("method") for m in recorder.sent()] == [
            "server/discover", "subscriptions/listen", "tools/call", "server/discover", "tools/list"]
    finally:
        client.close()


def test_eight_threads_at_once_make_one_handshake():
    client, recorder, _ = tapped_client()
    barrier = threading.Barrier(8)
    results: list = []
    errors: list = []

    def call(i):
        try:
            barrier.wait(WAIT)
            results.append(client.call_tool("add", {"a": i, "b": 1}).content[0].text)
        except BaseException as exc:        # noqa: B036 - reported below
            errors.append(exc)
    threads = [threading.Thread(target=call, args=(i,), name=f"test-caller-{i}") for i in range(8)]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(WAIT)
        assert not errors, errors
        assert sorted(results, key=int) == [str(i + 1) for i in range(8)]
        sent = recorder.sent()
        assert [m.get("method") for m in sent].count("server/discover") == 1      # one handshake (2026-07-28)
        first_call = next(i for i, m in enumerate(sent) if m.get("method") == "tools/call")
        assert [m.get("method") for m in sent[:first_call]] == ["server/discover", "subscriptions/listen"]
    finally:
        client.close()


def test_a_failed_first_connect_closes_the_client():
    """As a failed ``with`` does: the error once, then ConnectionClosed, nothing left running."""
    client_end, server_end = memory_pair()

    def wrong_revision_server():
        import json
        request = json.loads(server_end._inbox.get(timeout=WAIT))
        server_end.send_raw(json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": {
            "protocolVersion": "1999-01-01", "capabilities": {"tools": {}},
            "serverInfo": {"name": "old", "version": "1"}}}))
    thread, _ = run_in_thread(wrong_revision_server)
    client = Client(client_end, protocol_version="2025-11-25")      # an initialize answered wrongly
    with pytest.raises(UnsupportedProtocolVersion):
        client.list_tools()
    thread.join(WAIT)
    assert client.closed
    with pytest.raises(ConnectionClosed):
        client.list_tools()


def test_stdio_http_and_connect_clients_work_without_with():
    """The three constructors of the issue: each returns an unconnected client whose first
    call connects (before: CapabilityNotSupported: tools/call needs 'tools')."""
    pytest.importorskip("requests")
    pytest.importorskip("requests")
    from mcp_ref.transports.http.server.app import start_http
    handle = start_http(arithmetic_server(), ("127.0.0.1", 0))
    clients = []
    try:
        clients.append(Client.stdio([sys.executable, "-m", "mcp_ref.examples.demo_server"], env=ENV))
        clients.append(Client.http(handle.url))
        clients.append(Client.connect(handle.url))
        for client in clients:
            assert client.call_tool("add", {"a": 20, "b": 22}).content[0].text == "42"
    finally:
        for client in clients:
            client.close()
        handle.shutdown()


SLEEPER = "import os, sys, time; open(sys.argv[1], 'w').write(str(os.getpid())); time.sleep(60)"

UNCLOSED_SCRIPT = textwrap.dedent('''
    import sys, time
    from mcp_ref import Client
    pidfile = sys.argv[1]
    # A server that ignores stdin EOF, as many do: only the shutdown ladder stops it.
    client = Client.stdio([sys.executable, "-c", {sleeper!r}, pidfile], close_timeout=0.2, terminate_timeout=2)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            with open(pidfile) as f:
                if f.read():
                    break
        except OSError:
            pass
        time.sleep(0.01)
    # neither `with` nor close(): the interpreter exits here
''').format(sleeper=SLEEPER)


def process_exists(pid: int) -> bool:
    if os.name != "posix":
        return subprocess.run(["tasklist", "/FI", f"PID eq {pid}"], capture_output=True,
                              text=True).stdout.count(str(pid)) > 0
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def test_a_client_nobody_closed_is_closed_at_exit(tmp_path):
    """No orphaned server: the script exits without closing its stdio client, and the
    server it spawned (which writes its pid to a file) is gone once the script is."""
    pidfile = tmp_path / "server.pid"
    done = subprocess.run([sys.executable, "-c", UNCLOSED_SCRIPT, str(pidfile)], env=ENV, timeout=30,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    pid = int(pidfile.read_text())
    try:
        assert not process_exists(pid), "the server outlived the script that spawned it"
    finally:
        if process_exists(pid):
            os.kill(pid, 9)


def test_a_closed_client_leaves_the_exit_registry():
    from mcp_ref.client import client as client_module
    client, _, _ = tapped_client()
    assert client in client_module._unclosed
    client.close()
    assert client not in client_module._unclosed


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork() is POSIX")
def test_a_client_used_in_a_forked_child_refuses_at_once():
    """The child's request raises SessionError (not a timeout: its reply would reach the
    parent's reader); the child's close() leaves the parent's server running."""
    client = Client.stdio([sys.executable, "-m", "mcp_ref.examples.demo_server"], env=ENV, timeout=30)
    try:
        client.connect()
        read_end, write_end = os.pipe()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)    # fork() of a threaded process
            pid = os.fork()
        if pid == 0:                                                # the child: report through the pipe
            outcome = b"no error"
            try:
                client.call_tool("add", {"a": 1, "b": 2})
            except SessionError as exc:
                outcome = b"ok" if "fork()" in str(exc) else repr(exc).encode()
            except BaseException as exc:                            # noqa: B036
                outcome = repr(exc).encode()
            try:
                client.close()
            except BaseException as exc:                            # noqa: B036
                outcome = b"close: " + repr(exc).encode()
            os.write(write_end, outcome)
            os._exit(0)
        os.close(write_end)
        deadline = time.monotonic() + WAIT
        while True:
            finished, _status = os.waitpid(pid, os.WNOHANG)
            if finished:
                break
            if time.monotonic() > deadline:
                os.kill(pid, 9)
                os.waitpid(pid, 0)
                pytest.fail(f"the child's request did not fail within {WAIT} s")
            time.sleep(0.01)
        with os.fdopen(read_end, "rb") as pipe:
            assert pipe.read() == b"ok"
        assert client.call_tool("add", {"a": 1, "b": 2}).content[0].text == "3"   # the parent's server lives
    finally:
        client.close()
