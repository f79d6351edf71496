"""Tools registered with ``same_thread=True`` (server/tools.py rule 6): code tied
to one OS thread (COM apartments, GUI toolkits, thread-local connections,
libraries that are not thread-safe) runs on the server's one
``mcp-server-same-thread`` thread, while the session serves every other request
on its pool as usual.

* every call of every such tool, from many client threads and several sessions,
  runs on that one thread, one at a time, in the order calls reach it; ordinary
  tools run concurrently meanwhile; a ``sqlite3`` connection that refuses other
  threads works from such tools;
* a call blocked on that thread does not stop ``ping`` or other calls;
* a call cancelled (or timed out) while queued never runs; one cancelled while it
  runs frees its handler thread and its result is dropped (Spec:
  basic/utilities/cancellation); progress and logs from that thread reach the
  client (Spec: basic/utilities/progress, server/utilities/logging);
* results, errors, validation and structured output are those of ordinary tools,
  and invalid arguments are refused before anything is queued;
* the thread ends once the last session closes (and a later call starts a new
  one), so the conftest thread guard holds; registering and calling such a tool
  loads nothing heavy;
* over stdio end to end with ``Client.stdio``.

Every message is validated against the revision's schema (``wire_validator``).
Nothing sleeps to wait: waits are on Events, Barriers and queues, with timeouts.
"""
import json
import logging
import os
import sqlite3
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

from features_helpers import Collector, connected
from helpers import WAIT, Recorder, run_in_thread, tap_stdio_clients
from mcp_ref import LATEST_REVISION, Client, Context, Server
from mcp_ref.errors import RequestCancelled, RequestTimeout
from mcp_ref.server import utilities
from mcp_ref.server.same_thread import SAME_THREAD_NAME, SameThread
from mcp_ref.transports import TapTransport, memory_pair

ROOT = Path(__file__).resolve().parent.parent
REVISION = "2025-11-25"


class Tracker:
    """Records each call (label, thread ident, thread name) and the most calls that
    were running at once."""

    def __init__(self):
        self.lock = threading.Lock()
        self.running = self.most = 0
        self.calls: list = []
        self.threads: list = []

    @contextmanager
    def call(self, label):
        me = threading.current_thread()
        with self.lock:
            self.running += 1
            self.most = max(self.most, self.running)
            self.calls.append((label, me.ident, me.name))
            if me not in self.threads:
                self.threads.append(me)
        try:
            yield
        finally:
            with self.lock:
                self.running -= 1

    def labels(self) -> list:
        with self.lock:
            return [label for label, _, _ in self.calls]


def outcome_of(pair, timeout: float = WAIT):
    thread, outcome = pair
    kind, value = outcome.get(timeout=timeout)
    thread.join(WAIT)
    if kind == "error":
        raise value
    return value


def replies_to(recorder: Recorder, request_id) -> list:
    return [m for d, m in recorder.records if d == "receive" and m.get("id") == request_id and "method" not in m]


def same_threads() -> list:
    return [t for t in threading.enumerate() if t.name == SAME_THREAD_NAME and t.is_alive()]


# ---------------------------------------------------------------------- one thread, one call at a time
def test_every_call_of_every_same_thread_tool_runs_on_one_thread_one_at_a_time(wire_validator):
    server = Server("same-thread", max_workers=40)        # every call below holds a handler thread
    tracker, gate, first_started = Tracker(), threading.Event(), threading.Event()
    meeting = threading.Barrier(2)

    @server.tool(same_thread=True)
    def first(n: int) -> int:
        """The decorator form."""
        with tracker.call(("first", n)):
            if n == 0:
                first_started.set()
                assert gate.wait(WAIT), "the gate never opened"
        return threading.get_ident()

    def second(n: int) -> int:
        """The add_tool form."""
        with tracker.call(("second", n)):
            return threading.get_ident()
    server.add_tool(second, same_thread=True)

    @server.tool
    def meet() -> str:
        """An ordinary tool: returns only once two calls of it run at the same time."""
        meeting.wait(WAIT)
        return threading.current_thread().name

    server_side = Recorder()
    client_end, server_end = memory_pair()
    session = server.serve(TapTransport(server_end, server_side))
    client_recorder = Recorder()
    try:
        with Client(TapTransport(client_end, client_recorder), protocol_version=REVISION, timeout=WAIT) as client:
            calls = [run_in_thread(client.call_tool, "first", {"n": 0}, name="test-caller-0")]
            assert first_started.wait(WAIT)
            calls += [run_in_thread(client.call_tool, "first" if n % 2 else "second", {"n": n},
                                    name=f"test-caller-{n}") for n in range(1, 24)]
            server_side.wait_count(lambda d, m: d == "receive" and m.get("method") == "tools/call", 24,
                                   what="the 24 calls at the server")
            # Ordinary tools still run concurrently while the same thread is busy.
            meets = [run_in_thread(client.call_tool, "meet") for _ in range(2)]
            names = {outcome_of(pair).content[0].text for pair in meets}
            assert len(names) == 2 and SAME_THREAD_NAME not in names
            assert tracker.labels() == [("first", 0)], "a call ran beside the blocked one"
            gate.set()
            results = [outcome_of(pair) for pair in calls]
    finally:
        gate.set()
        session.close()
    assert not any(result.is_error for result in results), results
    idents = {int(result.content[0].text) for result in results}
    assert len(tracker.calls) == 24 and {ident for _, ident, _ in tracker.calls} == idents
    assert len(idents) == 1 and {name for _, _, name in tracker.calls} == {SAME_THREAD_NAME}
    assert tracker.most == 1, f"{tracker.most} same_thread calls ran at once"
    assert sorted(tracker.labels()) == sorted([("first", n) for n in range(1, 24, 2)] +
                                              [("second", n) for n in range(2, 24, 2)] + [("first", 0)])
    tracker.threads[0].join(WAIT)
    assert not tracker.threads[0].is_alive(), "the same thread outlived the session"
    wire_validator.check_transcript(client_recorder.records, REVISION)
    wire_validator.check_transcript(server_side.records, REVISION)


class FakeSession:
    """``SameThread.call`` uses nothing of a session itself: the context carries it."""


class FakeContext:
    """What SameThread.call uses of a RequestContext (see session/inbound.py)."""

    def __init__(self, session, request_id):
        self.session, self.request_id, self.method = session, request_id, "tools/call"
        self.cancelled = threading.Event()
        self._lock, self._callbacks = threading.Lock(), []

    def is_cancelled(self) -> bool:
        return self.cancelled.is_set()

    def waits(self, timeout: float) -> bool:
        """True once the call waits for its turn or its end (it asked to hear of a cancel)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._lock:
                if self._callbacks:
                    return True
            time.sleep(0.005)
        return False

    def on_cancel(self, fn) -> None:
        with self._lock:
            if not self.cancelled.is_set():
                self._callbacks.append(fn)
                return
        fn()

    def cancel(self) -> None:
        self.cancelled.set()
        with self._lock:
            callbacks, self._callbacks = self._callbacks, []
        for fn in callbacks:
            fn()


def test_calls_run_in_the_order_they_were_queued_and_cancelled_ones_never_run():
    keep = threading.Event()
    keep.set()
    runner, session = SameThread(keep.is_set), FakeSession()
    ran, gate = [], threading.Event()

    def work(k: int) -> int:
        if k == 0:
            assert gate.wait(WAIT)
        ran.append(k)
        return k * 10

    contexts = [FakeContext(session, k) for k in range(6)]
    calls = []
    for k, ctx in enumerate(contexts):
        calls.append(run_in_thread(runner.call, work, {"k": k}, ctx))
        assert ctx.waits(WAIT), f"call {k} was never queued"
    thread = runner.thread
    assert thread is not None and thread.name == SAME_THREAD_NAME and thread.daemon
    contexts[3].cancel()                        # the waiting handler wakes and withdraws it
    with pytest.raises(RequestCancelled):
        outcome_of(calls[3])
    contexts[4].cancel()                 # whoever sees it first skips it
    gate.set()
    assert [outcome_of(calls[k]) for k in (0, 1, 2, 5)] == [0, 10, 20, 50]
    with pytest.raises(RequestCancelled):
        outcome_of(calls[4])
    assert ran == [0, 1, 2, 5]
    # Exceptions reach the caller as raised; the thread lives on.
    with pytest.raises(ZeroDivisionError):
        runner.call(lambda: 1 / 0, {}, FakeContext(session, 9))
    assert runner.call(lambda: threading.current_thread(), {}, FakeContext(session, 10)) is thread
    keep.clear()
    runner.wake()
    thread.join(WAIT)
    assert not thread.is_alive() and runner.thread is None
    # A later call starts a new thread.
    again = runner.call(lambda: threading.current_thread(), {}, FakeContext(session, 11))
    assert again is not thread and again.name == SAME_THREAD_NAME
    again.join(WAIT)                            # keep() is false: it ends once idle
    assert not again.is_alive()


def test_a_thread_bound_sqlite_connection_works_from_same_thread_tools_only(wire_validator):
    server = Server("sqlite", max_workers=16)
    local = threading.local()

    def db() -> sqlite3.Connection:
        if not hasattr(local, "db"):              # made on the thread that uses it, as sqlite3 demands
            local.db = sqlite3.connect(":memory:")
            local.db.execute("create table notes (text)")
        return local.db

    shared: list = []

    @server.tool(same_thread=True)
    def remember(text: str) -> int:
        """Store a note; return how many there are."""
        conn = db()
        if not shared:
            shared.append(conn)
        conn.execute("insert into notes values (?)", (text,))
        return conn.execute("select count(*) from notes").fetchone()[0]

    @server.tool
    def count_anywhere() -> int:
        """The same connection used from a handler thread: sqlite3 refuses."""
        return shared[0].execute("select count(*) from notes").fetchone()[0]

    with connected(server, REVISION, wire_validator) as (client, session, recorder):
        calls = [run_in_thread(lambda i=i: [client.call_tool("remember", {"text": f"note {i}.{j}"})
                                            for j in range(3)]) for i in range(8)]
        results = [result for pair in calls for result in outcome_of(pair)]
        assert not any(result.is_error for result in results), results
        assert sorted(int(result.content[0].text) for result in results) == list(range(1, 25))
        refused = client.call_tool("count_anywhere")
        assert refused.is_error and "same thread" in refused.content[0].text


# ---------------------------------------------------------------------- the session stays responsive
def test_ping_and_other_calls_are_answered_while_a_same_thread_call_blocks(wire_validator):
    server = Server("responsive")
    gate, started = threading.Event(), threading.Event()

    @server.tool(same_thread=True)
    def hold() -> str:
        started.set()
        assert gate.wait(WAIT)
        return "released"

    @server.tool(same_thread=True)
    def queued() -> str:
        return "after hold"

    @server.tool
    def echo(text: str) -> str:
        return text

    try:
        with connected(server, REVISION, wire_validator) as (client, session, recorder):
            held = run_in_thread(client.call_tool, "hold")
            assert started.wait(WAIT)
            waiting = run_in_thread(client.call_tool, "queued")
            for i in range(3):
                client.ping(timeout=WAIT)
                assert client.call_tool("echo", {"text": f"hi {i}"}).content[0].text == f"hi {i}"
            assert client.list_tools()
            gate.set()
            assert outcome_of(held).content[0].text == "released"
            assert outcome_of(waiting).content[0].text == "after hold"
    finally:
        gate.set()


# ---------------------------------------------------------------------- cancellation and progress
def test_a_queued_call_that_times_out_is_skipped(wire_validator):
    server = Server("skip")
    gate, started, ran = threading.Event(), threading.Event(), []

    @server.tool(same_thread=True)
    def hold() -> str:
        started.set()
        assert gate.wait(WAIT)
        return "released"

    @server.tool(same_thread=True)
    def record(label: str) -> str:
        ran.append(label)
        return label

    try:
        with connected(server, REVISION, wire_validator) as (client, session, recorder):
            held = run_in_thread(client.call_tool, "hold")
            assert started.wait(WAIT)
            with pytest.raises(RequestTimeout):
                client.call_tool("record", {"label": "late"}, timeout=0.3)
            client.ping()                       # the server read the cancellation before this
            gate.set()
            assert outcome_of(held).content[0].text == "released"
            assert client.call_tool("record", {"label": "next"}).content[0].text == "next"
            assert ran == ["next"], "the cancelled call ran"
            late = next(m for d, m in recorder.records if d == "send" and m.get("method") == "tools/call"
                        and m["params"]["arguments"] == {"label": "late"})
            assert any(m.get("method") == "notifications/cancelled" and m["params"]["requestId"] == late["id"]
                       for m in recorder.sent())
            assert replies_to(recorder, late["id"]) == []
    finally:
        gate.set()


def test_cancelling_a_running_call_frees_its_handler_and_drops_its_result(wire_validator):
    server = Server("cancel-running", max_workers=1)    # one handler: the next call needs it back
    gate, started, finished = threading.Event(), threading.Event(), threading.Event()

    @server.tool(same_thread=True)
    def hold(ctx: Context) -> str:
        started.set()
        assert gate.wait(WAIT)                   # ignores cancellation, as a C library call would
        finished.set()
        return "too late"

    @server.tool
    def echo(text: str) -> str:
        return text

    try:
        with connected(server, REVISION, wire_validator) as (client, session, recorder):
            pending = client.session.start_request("tools/call", {"name": "hold", "arguments": {}})
            assert started.wait(WAIT)
            pending.cancel("no longer needed")
            with pytest.raises(RequestCancelled):
                pending.result()
            # Served only once the cancelled call's handler stopped waiting.
            assert client.call_tool("echo", {"text": "freed"}).content[0].text == "freed"
            assert not finished.is_set()
            gate.set()
            assert finished.wait(WAIT)
            client.ping()
            assert replies_to(recorder, pending.id) == []
    finally:
        gate.set()


def test_progress_and_logs_from_the_same_thread_reach_the_client(wire_validator):
    server = Server("progress")
    bridge = server.bridge_logging("same-thread-test")
    bridged = []

    @server.tool(same_thread=True)
    def count(n: int, ctx: Context) -> str:
        for i in range(1, n + 1):
            ctx.report_progress(i, total=n, message=threading.current_thread().name)
        ctx.log("info", {"from": threading.current_thread().name})
        # The logging bridge finds the request this thread serves (features/utilities.current).
        bridged.append(utilities.current.ctx is ctx)
        logging.getLogger("same-thread-test").warning("bridged")
        return "counted"

    logs = Collector()
    try:
        with connected(server, REVISION, wire_validator, on_log=logs) as (client, session, recorder):
            progress = Collector()
            result = client.call_tool("count", {"n": 4}, on_progress=progress)
            assert result.content[0].text == "counted" and not result.is_error
            assert progress.wait_for(4) == [(i, 4, SAME_THREAD_NAME) for i in range(1, 5)]
            logs.wait_for(2)
            notes = [m for m in recorder.received() if m.get("method") == "notifications/progress"]
            assert [m["params"]["progress"] for m in notes] == [1, 2, 3, 4]
            messages = [m["params"] for m in recorder.received() if m.get("method") == "notifications/message"]
            assert messages[0]["data"] == {"from": SAME_THREAD_NAME}
            assert messages[1]["data"] == "bridged" and messages[1]["logger"] == "same-thread-test"
            assert bridged == [True]
    finally:
        logging.getLogger("same-thread-test").removeHandler(bridge)


# ---------------------------------------------------------------------- the same results as any tool
@pytest.mark.req("TOOL-14")
def test_results_errors_and_validation_are_those_of_ordinary_tools(wire_validator):
    server = Server("twins")
    ran_on = []

    def describe(x: int, ctx: Context) -> dict:
        """Double x; refuse negatives."""
        ran_on.append(threading.current_thread().name)
        if x < 0:
            raise ValueError("x must not be negative")
        return {"double": 2 * x, "request": ctx.request_id is not None}

    def wrong(x: int) -> dict:
        return {"not": "the schema"} if x else [1, 2]

    server.add_tool(describe, name="plain")
    server.add_tool(describe, name="pinned", same_thread=True)
    server.add_tool(wrong, name="wrong_plain", output_schema={
        "type": "object", "properties": {"double": {"type": "integer"}}, "required": ["double"]})
    server.add_tool(wrong, name="wrong_pinned", same_thread=True, output_schema={
        "type": "object", "properties": {"double": {"type": "integer"}}, "required": ["double"]})
    with connected(server, REVISION, wire_validator, validate_output="off") as (client, session, recorder):
        tools = {tool.name: tool for tool in client.list_tools()}
        assert tools["plain"].input_schema == tools["pinned"].input_schema
        assert tools["plain"].output_schema == tools["pinned"].output_schema is not None
        # Invalid arguments are refused before anything is queued: no thread starts.
        for arguments in ({}, {"x": "two"}, {"x": 1, "y": 2}):
            plain, pinned = (client.call_tool(name, arguments) for name in ("plain", "pinned"))
            assert pinned.is_error and plain.is_error
            assert pinned.content[0].text == plain.content[0].text.replace("plain", "pinned")
        assert same_threads() == [] and ran_on == []
        for arguments in ({"x": 21}, {"x": -1}):
            plain, pinned = (client.call_tool(name, arguments) for name in ("plain", "pinned"))
            assert (plain.content, plain.is_error, plain.structured_content) == \
                (pinned.content, pinned.is_error, pinned.structured_content)
        assert pinned.is_error and pinned.content[0].text == "x must not be negative"
        for x in (0, 1):
            plain, pinned = (client.call_tool(name, {"x": x}) for name in ("wrong_plain", "wrong_pinned"))
            assert (pinned.is_error, pinned.structured_content) == (plain.is_error, plain.structured_content)
            assert pinned.content[0].text == plain.content[0].text.replace("wrong_plain", "wrong_pinned")
        assert pinned.is_error and "does not match its outputSchema" in pinned.content[0].text
        assert ran_on[1::2] == [SAME_THREAD_NAME] * 2 and SAME_THREAD_NAME not in ran_on[0::2]
        answers = [m["result"] for m in recorder.received() if "result" in m and "structuredContent" in m["result"]]
        assert answers[0] == answers[1] == {"content": [{"type": "text", "text": '{"double": 42, "request": true}'}],
                                            "structuredContent": {"double": 42, "request": True}}


# ---------------------------------------------------------------------- the thread's lifetime
def test_the_thread_is_shared_by_sessions_and_ends_with_the_last_one(wire_validator):
    server = Server("lifetime")
    seen: list = []

    @server.tool(same_thread=True)
    def where() -> str:
        seen.append(threading.current_thread())
        return str(threading.get_ident())

    with connected(server, REVISION, wire_validator) as (second, _, _):
        with connected(server, "2025-06-18", wire_validator) as (first, _, _):
            assert first.call_tool("where").content == second.call_tool("where").content
        # the first session closed; the second keeps the thread
        assert second.call_tool("where").content[0].text == str(seen[0].ident)
        assert len(set(seen)) == 1 and seen[0].is_alive()
    seen[0].join(WAIT)
    assert not seen[0].is_alive(), "the same thread outlived the last session"
    with connected(server, REVISION, wire_validator) as (third, _, _):
        third.call_tool("where")
        assert seen[-1] is not seen[0] and seen[-1].name == SAME_THREAD_NAME
    seen[-1].join(WAIT)
    assert not seen[-1].is_alive()


LEAN = """
import io, json, os, sys, threading
from mcp_ref import Server
from mcp_ref.transports.stdio import StdioServerTransport
server = Server("lean", version="1.0")

@server.tool(same_thread=True)
def add(a: int, b: int) -> int:
    \"\"\"Add two numbers.\"\"\"
    return a + b

heavy_after_registration = sorted((set(sys.modules) - _BASE) & set(HEAVY))
lines = [{"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25",
          "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}},
         {"jsonrpc": "2.0", "method": "notifications/initialized"},
         {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "add", "arguments": {"a": 1, "b": 2}}}]


class Out(io.BytesIO):
    answered = threading.Event()

    def write(self, data):
        n = super().write(data)
        if self.getvalue().count(b"\\n") >= 2:
            self.answered.set()
        return n


read_end, write_end = os.pipe()
os.write(write_end, "".join(json.dumps(m) + "\\n" for m in lines).encode())
out = Out()
session = server.serve(StdioServerTransport(stdin=os.fdopen(read_end, "rb"), stdout=out))
assert out.answered.wait(10)
os.close(write_end)                           # stdin EOF: the session closes
session.wait_closed(10)
replies = [json.loads(line) for line in out.getvalue().splitlines()]
print(json.dumps({"replies": replies, "registration": heavy_after_registration,
                  "heavy": sorted((set(sys.modules) - _BASE) & set(HEAVY))}))
"""


def test_a_same_thread_tool_is_registered_and_called_without_loading_anything_heavy():
    from test_lean_paths import HEAVY
    code = f"import sys\n_BASE = set(sys.modules)\nHEAVY = {HEAVY!r}\n" + LEAN
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["replies"][1] == {"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": "3"}]}}
    assert report["registration"] == []
    assert [m for m in report["heavy"] if m != "queue"] == [], "serving the call loaded these"


# ---------------------------------------------------------------------- over stdio
STDIO_SERVER = r'''
import sys, threading
from mcp_ref import Context, Server

server = Server("same-thread-stdio", version="1.0")
lock = threading.Lock()
running = [0]


@server.tool(same_thread=True)
def where(n: int, ctx: Context) -> str:
    """Where this call ran, and whether another same_thread call ran beside it."""
    with lock:
        running[0] += 1
        alone = running[0] == 1
    try:
        ctx.report_progress(1, total=1, message=f"call {n}")
        me = threading.current_thread()
        return f"{me.name} {me.ident} {alone}"
    finally:
        with lock:
            running[0] -= 1


@server.tool
def handler() -> str:
    """An ordinary tool: where handlers run."""
    return threading.current_thread().name


server.run()
'''


@pytest.fixture
def tapped(monkeypatch, wire_validator):
    """Every stdio client transport made during the test records its messages; after
    the test, each transcript is validated against the schema."""
    made = tap_stdio_clients(monkeypatch)
    yield made
    assert made
    for transport in made:
        assert wire_validator.check_transcript(transport.recorder.raw, LATEST_REVISION) > 0


@pytest.mark.skipif(os.name != "posix", reason="as the other stdio tests")
def test_same_thread_tools_over_stdio_end_to_end(tmp_path, tapped):
    script = tmp_path / "server.py"
    script.write_text(STDIO_SERVER)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    stderr: list = []
    with Client.stdio([sys.executable, str(script)], env=env, on_stderr=stderr.append, timeout=WAIT * 2,
                      init_timeout=WAIT * 2) as client:
        progress = [Collector() for _ in range(24)]

        def calls(i):
            return [client.call_tool("where", {"n": 4 * i + j}, on_progress=progress[4 * i + j])
                    for j in range(4)]
        pairs = [run_in_thread(calls, i) for i in range(6)]
        results = [result for pair in pairs for result in outcome_of(pair, WAIT * 2)]
        handler = client.call_tool("handler").content[0].text
        process = tapped[0].process
    assert not any(result.is_error for result in results), results
    places = {result.content[0].text for result in results}
    assert len(results) == 24 and len(places) == 1, places
    name, ident, alone = places.pop().split()
    assert name == SAME_THREAD_NAME and alone == "True" and handler != SAME_THREAD_NAME
    for n, collector in enumerate(progress):
        assert collector.wait_for(1) == [(1, 1, f"call {n}")]
    assert process.wait(WAIT) == 0, stderr
