"""Helpers shared by the protocol-core tests (messages, session, wire, lifecycle, stdio, demo).

* ``WAIT``: how long any synchronisation waits before it fails the test.
  Nothing here sleeps to wait for something: every wait is on an Event,
  Condition or queue, with a timeout that fails the test.
* ``Recorder``: a ``TapTransport`` callback that keeps ``(direction, message)``
  pairs in wire order and lets a test wait for one that matches.
* ``RawPeer``: a scripted peer speaking raw lines over one end of
  ``memory_pair()``; tests use it to send what no well-behaved session would.
* ``raw_server(server)``: a ``Server`` session on one end, a ``RawPeer`` on the other.
* ``initialize_raw(peer, revision)``: the handshake, by hand.
* ``mcp_threads()``: the live threads whose names start with ``mcp-``.
"""
import json
import threading
from contextlib import contextmanager
from typing import Any, Callable, Optional

import queue

from mcp_ref.transports import memory_pair

WAIT = 5.0

# Why the interop modules are skipped where they are (see require_official_sdk).
SDK_NEEDS = (3, 10)


def require_official_sdk() -> None:
    """Skip the calling module (the interop tests) unless the official MCP SDK imports.

    The SDK installs only on Python 3.10+ (setup.cfg's ``test`` extra asks for it only
    there), so on 3.9 the reason says so rather than suggesting ``pip install mcp``."""
    import sys

    import pytest
    if sys.version_info < SDK_NEEDS:
        pytest.skip(f"interop tests: the official MCP SDK needs Python {SDK_NEEDS[0]}.{SDK_NEEDS[1]}+ "
                    f"(this is {sys.version_info[0]}.{sys.version_info[1]})", allow_module_level=True)
    pytest.importorskip("mcp", reason="interop tests need the official MCP SDK (pip install mcp)")


def as_dict(message: Any) -> Any:
    """A message object, a list of them, a JSON line or a dict, as plain JSON data."""
    if isinstance(message, (bytes, bytearray)):
        message = message.decode("utf-8")
    if isinstance(message, str):
        return json.loads(message)
    if hasattr(message, "to_dict"):
        return message.to_dict()
    if isinstance(message, list):
        return [as_dict(item) for item in message]
    return message


def mcp_threads(prefix: str = "mcp-") -> list:
    return [t for t in threading.enumerate() if t.is_alive() and t.name.startswith(prefix)]


class Recorder:
    """Records what a ``TapTransport`` shows, in order; thread-safe.

    ``records`` holds ``(direction, dict)``; ``wait_for(pred)`` blocks until a
    record satisfies ``pred(direction, message)`` and returns the message.
    """

    def __init__(self):
        self.records: list = []
        self.raw: list = []                      # (direction, message object) as tapped
        self._cond = threading.Condition()

    def __call__(self, direction: str, message) -> None:
        with self._cond:
            self.raw.append((direction, message))
            self.records.append((direction, as_dict(message)))
            self._cond.notify_all()

    def snapshot(self, direction: Optional[str] = None) -> list:
        with self._cond:
            return [m for d, m in self.records if direction is None or d == direction]

    def sent(self) -> list:
        return self.snapshot("send")

    def received(self) -> list:
        return self.snapshot("receive")

    def wait_for(self, predicate: Callable, timeout: float = WAIT, what: str = "a matching message"):
        with self._cond:
            ok = self._cond.wait_for(lambda: any(predicate(d, m) for d, m in self.records), timeout)
            if not ok:
                raise AssertionError(f"no {what} within {timeout:g} s; recorded: {self.records!r}"[:4000])
            return next(m for d, m in self.records if predicate(d, m))

    def wait_count(self, predicate: Callable, count: int, timeout: float = WAIT, what: str = "messages") -> list:
        with self._cond:
            ok = self._cond.wait_for(lambda: sum(1 for d, m in self.records if predicate(d, m)) >= count, timeout)
            if not ok:
                raise AssertionError(f"fewer than {count} {what} within {timeout:g} s; recorded: "
                                     f"{self.records!r}"[:4000])
            return [m for d, m in self.records if predicate(d, m)]


def is_method(method: str, direction: Optional[str] = None) -> Callable:
    """Predicate for ``Recorder.wait_for``: a request or notification named ``method``."""
    def pred(d, m):
        return (direction is None or d == direction) and isinstance(m, dict) and m.get("method") == method
    return pred


def is_reply_to(request_id, direction: Optional[str] = None) -> Callable:
    def pred(d, m):
        return ((direction is None or d == direction) and isinstance(m, dict) and "method" not in m
                and m.get("id") == request_id and type(m.get("id")) is type(request_id))
    return pred


class RawPeer:
    """A scripted peer on one end of ``memory_pair()``: writes raw lines, reads raw lines.

    ``send`` takes a dict (written as compact JSON) or a str (written as is).
    ``recv_line`` returns the next raw line the session sent, or None once the
    session closed its end. ``recv`` parses it.
    """

    def __init__(self, transport):
        self.transport = transport
        self._inbox = transport._inbox          # the queue the session's sends land in

    def send(self, message) -> None:
        line = message if isinstance(message, str) else json.dumps(message, separators=(",", ":"))
        self.transport.send_raw(line)

    def recv_line(self, timeout: float = WAIT) -> Optional[str]:
        try:
            line = self._inbox.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"the session sent nothing within {timeout:g} s") from None
        if not isinstance(line, str):            # the close marker
            self._inbox.put(line)
            return None
        return line

    def recv(self, timeout: float = WAIT) -> Any:
        line = self.recv_line(timeout)
        return None if line is None else json.loads(line)

    def recv_reply(self, request_id, timeout: float = WAIT, skipped: Optional[list] = None) -> dict:
        """The next response with ``request_id``; other messages go to ``skipped``."""
        while True:
            message = self.recv(timeout)
            if message is None:
                raise AssertionError(f"the session closed before answering id {request_id!r}")
            if isinstance(message, dict) and "method" not in message and message.get("id") == request_id:
                return message
            if skipped is not None:
                skipped.append(message)

    def request(self, request_id, method: str, params: Optional[dict] = None, timeout: float = WAIT) -> dict:
        message = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        return self.recv_reply(request_id, timeout)

    def notify(self, method: str, params: Optional[dict] = None) -> None:
        message = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)

    def ping(self, request_id="ping-check", timeout: float = WAIT) -> None:
        """Prove the session still works: ``ping`` must be answered ``{}``."""
        reply = self.request(request_id, "ping", timeout=timeout)
        assert reply == {"jsonrpc": "2.0", "id": request_id, "result": {}}, reply

    def expect_closed(self, timeout: float = WAIT) -> None:
        """Every further line until the close marker is ignored; fail unless it closes in time."""
        while True:
            if self.recv_line(timeout) is None:
                return

    def assert_silent(self) -> None:
        """Nothing is waiting to be read right now."""
        try:
            line = self._inbox.get_nowait()
        except queue.Empty:
            return
        self._inbox.put(line)
        if isinstance(line, str):
            raise AssertionError(f"unexpected message from the session: {line}")

    def close(self) -> None:
        self.transport.close()


def initialize_raw(peer: RawPeer, revision: str = "2025-11-25", request_id=0, initialized: bool = True) -> dict:
    reply = peer.request(request_id, "initialize", {
        "protocolVersion": revision, "capabilities": {}, "clientInfo": {"name": "raw-peer", "version": "1.0"}})
    assert "result" in reply, reply
    if initialized:
        peer.notify("notifications/initialized")
    return reply["result"]


@contextmanager
def raw_server(server, max_message_size: int = 0, **options):
    """Serve ``server`` on one end of a memory pair; yield ``(RawPeer, session)``."""
    peer_end, server_end = memory_pair()
    server_end.max_message_size = max_message_size
    session = server.serve(server_end, **options)
    try:
        yield RawPeer(peer_end), session
    finally:
        session.close()


def run_in_thread(fn: Callable, *args, name: str = "test-helper", **kwargs):
    """Run ``fn`` on a daemon thread; returns ``(thread, outcome)`` where
    ``outcome.get(timeout)`` gives ``("ok", value)`` or ``("error", exception)``."""
    outcome: queue.Queue = queue.Queue()

    def target():
        try:
            outcome.put(("ok", fn(*args, **kwargs)))
        except BaseException as exc:            # handed to the test thread
            outcome.put(("error", exc))
    thread = threading.Thread(target=target, name=name, daemon=True)
    thread.start()
    return thread, outcome


def http_tools_server(name: str):
    """A server with the tools every HTTP test uses: ``add``, ``count`` (progress)
    and ``announce`` (a log notification on the request's stream)."""
    from mcp_ref import Context, Server
    server = Server(name, version="1.0.0")

    @server.tool
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @server.tool
    def count(n: int, ctx: Context) -> str:
        """Report progress 1..n, then return."""
        for i in range(1, n + 1):
            ctx.report_progress(i, n)
        return f"counted to {n}"

    @server.tool
    def announce(text: str, ctx: Context) -> str:
        """Send a log notification about this request, then return."""
        ctx.notify("notifications/message", {"level": "info", "data": text})
        return "announced"

    return server


def tap_stdio_clients(monkeypatch, on_made: Optional[Callable] = None) -> list:
    """Patch ``StdioClientTransport`` so that each one made from now on records its
    messages in ``.recorder`` (a ``Recorder``); returns the list they are added to,
    in spawn order, for the caller to check after the test. ``on_made(transport)``
    is called for each, once it has spawned."""
    from mcp_ref.transports import stdio as stdio_module
    made: list = []

    class Tapped(stdio_module.StdioClientTransport):
        def __init__(self, *args, **kwargs):
            self.recorder = Recorder()
            super().__init__(*args, **kwargs)
            made.append(self)
            if on_made is not None:
                on_made(self)

        def send(self, message, related_id=None):
            self.recorder("send", message)
            super().send(message, related_id)

        def receive(self):
            message = super().receive()
            if message is not None:
                self.recorder("receive", message)
            return message

    from mcp_ref.client import connect as connect_module     # it imports the class by name
    monkeypatch.setattr(stdio_module, "StdioClientTransport", Tapped)
    monkeypatch.setattr(connect_module, "StdioClientTransport", Tapped)
    return made


def rpc(id_, method: str, params: Optional[dict] = None) -> dict:
    """A JSON-RPC request as a dict (``params`` left out when None)."""
    message = {"jsonrpc": "2.0", "id": id_, "method": method}
    if params is not None:
        message["params"] = params
    return message


def child_processes() -> set:
    """This process's live (non-zombie) children, from /proc (Linux)."""
    import os
    found = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == os.getpid() and fields[0] != "Z":
                found.add(int(entry))
    return found
