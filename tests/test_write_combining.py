"""Write combining on stdio (pipe_writer.py rule 6, session/__init__.py rule 6).

Many threads calling one stdio client at once: the session does not serialise
their sends (the stdio transport says ``concurrent_send``), and lines that
arrive while one is being written leave together in the next write. A spy
stands in for ``os.write`` inside pipe_writer only (the server is another
process, untouched): it holds the first write until the other callers' lines
are queued, so what is combined does not depend on timing. Every wait is
bounded.
"""
import os
import sys
import threading
import time
from pathlib import Path

import pytest

from helpers import WAIT, run_in_thread
from mcp_ref import Client
from mcp_ref.errors import ConnectionClosed
from mcp_ref.transports import pipe_writer

pytestmark = pytest.mark.skipif(os.name != "posix" or not hasattr(pipe_writer.select, "poll"),
                                reason="the caller writes itself only where the pipe is non-blocking (poll)")

ROOT = Path(__file__).resolve().parent.parent
ENV = {"PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
SERVER = r'''
from mcp_ref import Server

server = Server("combining")


@server.tool
def add(a: int, b: int) -> int:
    """Add."""
    return a + b


server.run()
'''
CALLERS = 8


class WriteSpy:
    """``os`` for pipe_writer: every ``write`` is recorded; the first one armed waits
    (bounded) until ``queued`` lines wait in the writer's queue, and ``fail`` picks
    writes to fail (by their index among the armed ones) as a closed pipe does."""

    def __init__(self, real, queued: int, fail=(), hold: threading.Event = None):
        self._real, self.queued, self.fail, self.hold = real, queued, set(fail), hold
        self.writer = None
        self.writes: list = []        # the bytes of each armed write
        self.armed = False

    def __getattr__(self, name):
        return getattr(self._real, name)

    def write(self, fd, data):
        if not self.armed:
            return self._real.write(fd, data)
        index = len(self.writes)
        self.writes.append(bytes(data))
        if index == 0:
            deadline = time.monotonic() + WAIT
            while len(self.writer._queue) < self.queued and time.monotonic() < deadline:
                time.sleep(0.001)
            if self.hold is not None:
                self.hold.wait(WAIT)
        if index in self.fail:
            raise BrokenPipeError(32, "Broken pipe")
        return self._real.write(fd, data)


def _client(monkeypatch, **spy_options):
    client = Client.stdio([sys.executable, "-c", SERVER], env=ENV, on_stderr=lambda line: None, timeout=WAIT * 4)
    client.connect()
    spy = WriteSpy(os, **spy_options)
    spy.writer = client.transport._writer
    monkeypatch.setattr(pipe_writer, "os", spy)
    return client, spy


def _call_at_once(client, spy, count: int) -> list:
    """``count`` threads each call add(i, 1000) at once; the outcome of each, in order."""
    start = threading.Barrier(count + 1)

    def call(i):
        start.wait(WAIT)
        return client.call_tool("add", {"a": i, "b": 1000})
    calls = [run_in_thread(call, i, name=f"caller-{i}") for i in range(count)]
    spy.armed = True
    start.wait(WAIT)
    outcomes = []
    for thread, outcome in calls:
        thread.join(WAIT * 4)
        assert not thread.is_alive(), "a caller was left hanging"
        outcomes.append(outcome.get(0))
    return outcomes


def _lines(data: bytes) -> int:
    return data.count(b"\n")


def test_requests_sent_at_once_leave_in_fewer_writes_than_requests(monkeypatch):
    """The first caller's write is held until the other seven lines are queued: they
    leave in one more write, not seven, and every reply reaches its own caller."""
    client, spy = _client(monkeypatch, queued=CALLERS - 1)
    try:
        outcomes = _call_at_once(client, spy, CALLERS)
    finally:
        monkeypatch.undo()
        client.close()
    assert [kind for kind, _ in outcomes] == ["ok"] * CALLERS, outcomes
    assert [result.content[0].text for _, result in outcomes] == [str(i + 1000) for i in range(CALLERS)]
    assert sum(_lines(data) for data in spy.writes) == CALLERS
    assert len(spy.writes) < CALLERS, f"{CALLERS} requests took {len(spy.writes)} writes"
    assert [_lines(data) for data in spy.writes] == [1, CALLERS - 1]


def test_replies_reach_their_callers_from_64_threads(monkeypatch):
    """64 threads, 10 calls each, every call with its own arguments: each caller gets
    the answer to its own request (the ids match however the lines were combined)."""
    client = Client.stdio([sys.executable, "-c", SERVER], env=ENV, on_stderr=lambda line: None, timeout=WAIT * 4)
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


def test_close_with_lines_queued_fails_each_caller_once_with_connection_closed(monkeypatch):
    """The first write is held while seven more lines wait in the queue; close() then
    fails every caller once with ConnectionClosed, and returns with nothing left."""
    hold = threading.Event()
    client, spy = _client(monkeypatch, queued=CALLERS - 1, hold=hold)
    session = client.session
    closer = None
    try:
        results: list = []
        calls = threading.Thread(target=lambda: results.extend(_call_at_once(client, spy, CALLERS)), daemon=True)
        calls.start()
        deadline = time.monotonic() + WAIT
        while len(spy.writer._queue) < CALLERS - 1 and time.monotonic() < deadline:
            time.sleep(0.001)
        assert len(spy.writer._queue) == CALLERS - 1
        closer, closed = run_in_thread(client.close)
        while not session.closed and time.monotonic() < deadline + WAIT:
            time.sleep(0.001)
        assert session.closed                      # close waits for the held write to end
        hold.set()                                 # the held write goes on; close finishes
        calls.join(WAIT * 6)
        closer.join(WAIT * 4)
        assert not calls.is_alive() and not closer.is_alive()
        assert closed.get(0) == ("ok", None)
    finally:
        hold.set()
        monkeypatch.undo()
        client.close()
    assert len(results) == CALLERS
    assert all(kind == "error" and isinstance(exc, ConnectionClosed) for kind, exc in results), results


def test_a_failed_combined_write_fails_every_caller_whose_line_it_carried(monkeypatch):
    """The second write carries the seven lines queued behind the first, and fails as a
    closed pipe does: the session closes and each of the eight callers raises
    ConnectionClosed, once (none waits for its timeout)."""
    client, spy = _client(monkeypatch, queued=CALLERS - 1, fail={1})
    try:
        outcomes = _call_at_once(client, spy, CALLERS)
    finally:
        monkeypatch.undo()
        client.close()
    assert [_lines(data) for data in spy.writes] == [1, CALLERS - 1]
    assert all(kind == "error" and isinstance(exc, ConnectionClosed) for kind, exc in outcomes), outcomes
    assert "send failed" in str(outcomes[1][1])
