"""The HTTP server under many clients: the accept queue, connect bursts, and what idle
sessions cost (threads), with ``max_sessions`` evicting the longest-idle session.

Raw sockets and ``http.client`` drive the server, so the client side adds no threads
of its own. Spec: basic/transports#session-management.
"""
import http.client
import json
import selectors
import socket
import subprocess
import sys
import threading
import time

import pytest

from mcp_ref import Server
from mcp_ref.transports import http_server
from mcp_ref.transports.http_server import start_http

from helpers import rpc

HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
WAIT = 60.0          # what any wait here allows before it fails the test (a loaded machine is slow)


def init_body(version: str = "2025-11-25") -> bytes:
    return json.dumps(rpc(0, "initialize", {"protocolVersion": version, "capabilities": {},
                                            "clientInfo": {"name": "raw", "version": "1"}})).encode()


def tool_server() -> Server:
    server = Server("scale")

    @server.tool
    def add(a: int, b: int) -> int:
        return a + b

    return server


# ---------------------------------------------------------------------- the accept queue
class _ListenSpy:
    """Records the argument of every ``listen()`` made while it is installed."""

    def __init__(self, monkeypatch):
        self.calls = []
        real = socket.socket.listen

        def listen(sock, *args):
            self.calls.append(args[0] if args else None)
            return real(sock, *args)
        monkeypatch.setattr(socket.socket, "listen", listen)


def test_the_accept_queue_defaults_to_somaxconn_and_is_an_option(monkeypatch):
    spy = _ListenSpy(monkeypatch)
    with start_http(tool_server()) as handle:
        assert handle.httpd.request_queue_size == max(socket.SOMAXCONN, 128)
    with start_http(tool_server(), backlog=300):
        pass
    assert spy.calls == [max(socket.SOMAXCONN, 128), 300]
    assert http_server.DEFAULT_BACKLOG >= 128
    with pytest.raises(ValueError):
        start_http(tool_server(), backlog=0)


def _busy_process():
    """A process that keeps one CPU busy until it is killed."""
    return subprocess.Popen([sys.executable, "-c", "while True: pass"])


def _read_response(sock) -> bytes:
    data = b""
    while True:
        piece = sock.recv(65536)
        if not piece:
            return data
        data += piece


def test_two_hundred_clients_connecting_at_once_on_a_busy_cpu_all_get_answers():
    """Issue: 6 to 26 of 50-500 simultaneous clients failed with socketserver's queue of 5.
    The accepting thread is held while the 200 clients connect (the worst a busy CPU can
    do to it), so only the kernel's accept queue can complete their handshakes: with a
    queue of 5 the others' SYNs are dropped and their connects time out. Then all 200 send
    ``initialize`` while a busy process and a busy thread compete for the CPU."""
    clients = 200
    stop = threading.Event()
    busy = [_busy_process()]

    def spin():
        while not stop.is_set():
            pass
    spinner = threading.Thread(target=spin, daemon=True)
    spinner.start()
    gate = threading.Event()
    sockets, errors = [], []
    try:
        with start_http(tool_server()) as handle:
            accept = handle.httpd.get_request

            def held_accept():
                gate.wait(WAIT)
                return accept()
            handle.httpd.get_request = held_accept
            # 200 non-blocking connects at once; the kernel alone completes them.
            selector = selectors.DefaultSelector()
            for _ in range(clients):
                sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                sock.setblocking(False)
                sock.connect_ex(("127.0.0.1", handle.port))
                selector.register(sock, selectors.EVENT_WRITE)
                sockets.append(sock)
            pending = set(sockets)
            deadline = time.monotonic() + 10.0       # a dropped SYN is retried after 1, 3, 7 s...
            while pending and time.monotonic() < deadline:
                for key, _ in selector.select(max(0.0, deadline - time.monotonic())):
                    selector.unregister(key.fileobj)
                    pending.discard(key.fileobj)
            selector.close()
            errors += ["connect not completed"] * len(pending)
            errors += [f"connect failed: errno {e}" for e in
                       (s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) for s in sockets if s not in pending) if e]
            gate.set()
            body = init_body()
            request = (b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                       b"Accept: application/json, text/event-stream\r\nConnection: close\r\n"
                       b"Content-Length: %d\r\n\r\n" % len(body)) + body
            for sock in sockets:
                if sock in pending:
                    continue
                sock.setblocking(True)
                sock.settimeout(WAIT)
                try:
                    sock.sendall(request)
                except OSError as exc:
                    errors.append(f"send failed: {exc!r}")
            for sock in sockets:
                if sock in pending:
                    continue
                try:
                    answer = _read_response(sock)
                except OSError as exc:
                    errors.append(f"read failed: {exc!r}")
                    continue
                if not answer.startswith(b"HTTP/1.1 200") or b"mcp-session-id:" not in answer.lower():
                    errors.append(f"answer: {answer[:60]!r}")
            assert handle.app.session_count == clients - len(errors)
    finally:
        gate.set()
        stop.set()
        for process in busy:
            process.kill()
            process.wait()
        for sock in sockets:
            sock.close()
    assert errors == []
