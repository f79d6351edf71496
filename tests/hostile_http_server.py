"""A scripted MCP server over HTTP that misbehaves on purpose, one behaviour per path.

Standard library only (``http.server``). ``HostileServer`` answers like a small
MCP server (``initialize``, ``tools/list``, ``tools/call`` of ``echo``, ``ping``,
202 to notifications and responses, 405 to GET, 204 to DELETE; the legacy
HTTP+SSE transport at ``/<behaviour>/sse``), except where the behaviour named by
the first path segment says otherwise: ``server.url("stall-call")`` is
``http://127.0.0.1:PORT/stall-call/mcp``. The behaviours are the methods of
``Behaviours`` (``stall-call`` is ``Behaviours.stall_call``); each says what it
does.

A second ``HostileServer`` on another port plays the foreign origin
(``server.foreign``): it answers like a well-behaved server, so a client that
followed a redirect there would get a plausible answer, and it records
everything it receives.

Every request is recorded (``server.seen``: method, path, lower-cased headers,
body). ``server.wait_idle()`` waits until every connection the client opened
has been closed by the client (stalling handlers watch their socket for the
client hanging up), so a test can check that nothing is left open.
"""
import gzip
import json
import queue
import select
import socket
import struct
import threading
import time
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Optional

from mcp_ref.transports.http.sse import chunk, format_event

WAIT = 30.0                     # the longest any scripted wait lasts
_bombs: dict = {}


def gzip_bomb(size: int) -> bytes:
    """``size`` bytes of ``0`` (a JSON number's digits, after a JSON-RPC prefix), gzip-compressed."""
    if size not in _bombs:
        packer = zlib.compressobj(9, zlib.DEFLATED, 31)
        parts = [packer.compress(b'{"jsonrpc": "2.0", "id": 1, "result": {"n": 1')]
        block = b"0" * (1 << 20)
        for _ in range(size >> 20):
            parts.append(packer.compress(block))
        parts.append(packer.flush())
        _bombs[size] = b"".join(parts)
    return _bombs[size]


def rpc_result(request_id, result: dict) -> dict:
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


class Seen:
    """One request as the server received it."""

    def __init__(self, method: str, path: str, headers: dict, body: bytes):
        self.method, self.path, self.headers, self.body = method, path, headers, body
        self.at = time.monotonic()
        try:
            self.message = json.loads(body) if body else None
        except ValueError:
            self.message = None

    @property
    def rpc_method(self) -> Optional[str]:
        return self.message.get("method") if isinstance(self.message, dict) else None

    def __repr__(self):
        return f"Seen({self.method} {self.path} {self.rpc_method or ''})"


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "hostile/1"

    def log_message(self, *args):
        pass

    @property
    def app(self) -> "HostileServer":
        return self.server.app

    def do_POST(self):
        self._handle("POST")

    def do_GET(self):
        self._handle("GET")

    def do_DELETE(self):
        self._handle("DELETE")

    def _handle(self, method: str) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        seen = Seen(method, self.path, {k.lower(): v for k, v in self.headers.items()}, body)
        self.app.record(seen)
        parts = self.path.split("?")[0].strip("/").split("/")
        behaviour, endpoint = (parts + ["", ""])[:2] if len(parts) >= 2 else ("ok", parts[0])
        script = getattr(Behaviours, behaviour.replace("-", "_"), None)
        if script is None or not script(self, method, endpoint, seen):
            self.normal(method, endpoint, seen)

    # ------------------------------------------------------------------ writing
    def send_json(self, status: int, payload, headers=()) -> None:
        body = b"" if payload is None else json.dumps(payload).encode()
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        if payload is not None:
            self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def start_stream(self, headers=()) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()

    def write_chunk(self, data: bytes) -> bool:
        """One chunk; False once the client has gone."""
        try:
            self.wfile.write(chunk(data))
            self.wfile.flush()
            return True
        except OSError:
            self.close_connection = True
            return False

    def end_stream(self) -> None:
        self.write_chunk(b"")

    def redirect(self, status: int, location: str, headers=()) -> None:
        self.send_response(status)
        self.send_header("Location", location)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def wait_for_hangup(self) -> None:
        """Stall: wait until the client closes the connection (noted) or the server stops."""
        sock = self.connection
        deadline = time.monotonic() + WAIT
        while not self.app.stopping.is_set() and time.monotonic() < deadline:
            ready, _, _ = select.select([sock], [], [], 0.05)
            if ready:
                try:
                    data = sock.recv(1, socket.MSG_PEEK)
                except OSError:
                    data = b""
                if not data:
                    self.app.note("hangup", self.path)
                    break
                time.sleep(0.05)
        self.close_connection = True

    def trickle(self, data: bytes, every: float = 0.1) -> None:
        """Write ``data`` one byte at a time until it ends, the client goes or the server stops."""
        for i in range(len(data)):
            if self.app.stopping.wait(every):
                break
            try:
                self.wfile.write(data[i:i + 1])
                self.wfile.flush()
            except OSError:
                self.app.note("hangup", self.path)
                break
        self.close_connection = True

    # ------------------------------------------------------------------ a well-behaved server
    def normal(self, method: str, endpoint: str, seen: Seen) -> None:
        app = self.app
        if endpoint == "sse" and method == "GET":
            return self.legacy_stream(seen)
        if endpoint == "messages" and method == "POST":
            self.send_json(202, None)
            reply = app.answer(seen.message)
            if reply is not None:
                app.outbox(seen).put(reply)
            return None
        if method == "GET":
            return self.send_json(405, {"jsonrpc": "2.0", "id": None,
                                        "error": {"code": -32600, "message": "no standalone stream"}})
        if method == "DELETE":
            return self.send_json(204, None)
        message = seen.message
        if not isinstance(message, dict) or "method" not in message or "id" not in message:
            return self.send_json(202, None)
        headers = ()
        if message["method"] == "initialize":
            headers = [("Mcp-Session-Id", app.new_session_id())]
        return self.send_json(200, app.answer(message), headers)

    def legacy_stream(self, seen: Seen, endpoint: Optional[str] = None) -> None:
        behaviour = seen.path.strip("/").split("/")[0]
        stream_id = self.app.new_session_id()
        outbox = self.app.outboxes.setdefault(stream_id, queue.Queue())
        self.start_stream()
        self.write_chunk(format_event(endpoint or f"/{behaviour}/messages?session_id={stream_id}", event="endpoint"))
        while not self.app.stopping.is_set():
            try:
                item = outbox.get(timeout=0.05)
            except queue.Empty:
                if not self.write_chunk(b": keepalive\n\n"):
                    return
                continue
            data = item if isinstance(item, bytes) else format_event(json.dumps(item))
            if not self.write_chunk(data):
                return
        self.close_connection = True


class Behaviours:
    """One scripted behaviour per method; each returns True when it answered the request
    (False: the normal answer is given)."""

    # -- 6. redirects
    @staticmethod
    def redirect_call_foreign(h: Handler, method, endpoint, seen) -> bool:
        """tools/call → 307 to the foreign origin."""
        if seen.rpc_method == "tools/call":
            h.redirect(307, h.app.foreign.url("ok"))
            return True
        return False

    @staticmethod
    def redirect_init_foreign(h: Handler, method, endpoint, seen) -> bool:
        """initialize → 308 to the foreign origin (which would hand out its own session id)."""
        if seen.rpc_method == "initialize":
            h.redirect(308, h.app.foreign.url("ok"))
            return True
        return False

    @staticmethod
    def redirect_call_same(h: Handler, method, endpoint, seen) -> bool:
        """tools/call → 307 to another path of this origin, which answers."""
        if seen.rpc_method == "tools/call" and endpoint == "mcp":
            h.redirect(307, "/ok/moved")
            return True
        return False

    @staticmethod
    def redirect_call_302(h: Handler, method, endpoint, seen) -> bool:
        """tools/call → 302 within the origin (a POST that would become a GET)."""
        if seen.rpc_method == "tools/call":
            h.redirect(302, "/ok/mcp")
            return True
        return False

    @staticmethod
    def redirect_loop(h: Handler, method, endpoint, seen) -> bool:
        """tools/call → 307 to itself, for ever."""
        if seen.rpc_method == "tools/call":
            h.redirect(307, h.path)
            return True
        return False

    @staticmethod
    def redirect_init_with_session(h: Handler, method, endpoint, seen) -> bool:
        """initialize → 307 within the origin carrying ``Mcp-Session-Id: fixated``; the final answer
        assigns its own."""
        if seen.rpc_method == "initialize" and endpoint == "mcp":
            h.redirect(307, "/ok/mcp", headers=[("Mcp-Session-Id", "fixated")])
            return True
        return False

    @staticmethod
    def redirect_get_foreign(h: Handler, method, endpoint, seen) -> bool:
        """The standalone GET → 307 to the foreign origin."""
        if method == "GET":
            h.redirect(307, h.app.foreign.url("ok"))
            return True
        return False

    @staticmethod
    def redirect_delete_foreign(h: Handler, method, endpoint, seen) -> bool:
        """DELETE → 307 to the foreign origin."""
        if method == "DELETE":
            h.redirect(307, h.app.foreign.url("ok"))
            return True
        return False

    @staticmethod
    def legacy_redirect_post_foreign(h: Handler, method, endpoint, seen) -> bool:
        """Legacy: a POST to the endpoint → 307 to the foreign origin."""
        if endpoint == "messages":
            h.redirect(307, h.app.foreign.url("ok").replace("/mcp", "/messages?session_id=1"))
            return True
        return False

    @staticmethod
    def legacy_redirect_sse_foreign(h: Handler, method, endpoint, seen) -> bool:
        """Legacy: GET /sse → 302 to the foreign origin's stream."""
        if endpoint == "sse":
            h.redirect(302, h.app.foreign.url("ok").replace("/mcp", "/sse"))
            return True
        return False

    @staticmethod
    def legacy_endpoint_foreign(h: Handler, method, endpoint, seen) -> bool:
        """Legacy: the endpoint event names the foreign origin."""
        if endpoint == "sse":
            h.legacy_stream(seen, endpoint=h.app.foreign.url("ok").replace("/mcp", "/messages?session_id=1"))
            return True
        return False

    # -- 7. stalls
    @staticmethod
    def stall_init(h: Handler, method, endpoint, seen) -> bool:
        """initialize: no answer at all (not even headers)."""
        if seen.rpc_method == "initialize":
            h.wait_for_hangup()
            return True
        return False

    @staticmethod
    def stall_init_body(h: Handler, method, endpoint, seen) -> bool:
        """initialize: headers, then the JSON body one byte every 0.1 s."""
        if seen.rpc_method == "initialize":
            body = json.dumps(h.app.answer(seen.message)).encode()
            h.send_response(200)
            h.send_header("Content-Type", "application/json")
            h.send_header("Content-Length", str(len(body)))
            h.end_headers()
            h.trickle(body)
            return True
        return False

    @staticmethod
    def stall_initialized(h: Handler, method, endpoint, seen) -> bool:
        """notifications/initialized: no answer at all."""
        if seen.rpc_method == "notifications/initialized":
            h.wait_for_hangup()
            return True
        return False

    @staticmethod
    def stall_call(h: Handler, method, endpoint, seen) -> bool:
        """tools/call: no answer at all."""
        if seen.rpc_method == "tools/call":
            h.wait_for_hangup()
            return True
        return False

    @staticmethod
    def trickle_call(h: Handler, method, endpoint, seen) -> bool:
        """tools/call: headers, then an SSE stream one byte every 0.1 s that never ends an event."""
        if seen.rpc_method == "tools/call":
            h.start_stream()
            h.write_chunk(b"data: ")
            while not h.app.stopping.wait(0.1):
                if not h.write_chunk(b"x"):
                    h.app.note("hangup", h.path)
                    break
            h.close_connection = True
            return True
        return False

    @staticmethod
    def legacy_stall_post(h: Handler, method, endpoint, seen) -> bool:
        """Legacy: a POST of tools/call to the endpoint is never answered."""
        if endpoint == "messages" and seen.rpc_method == "tools/call":
            h.wait_for_hangup()
            return True
        return False

    @staticmethod
    def legacy_stall_sse(h: Handler, method, endpoint, seen) -> bool:
        """Legacy: GET /sse is never answered."""
        if endpoint == "sse":
            h.wait_for_hangup()
            return True
        return False

    # -- 8. reconnect storms
    @staticmethod
    def storm_get(h: Handler, method, endpoint, seen) -> bool:
        """The standalone GET: a stream whose one event (empty data) says ``retry: 0``, and the end,
        every time."""
        if method == "GET":
            h.start_stream()
            h.write_chunk(b"retry: 0\ndata:\n\n")
            h.end_stream()
            return True
        return False

    @staticmethod
    def storm_resume(h: Handler, method, endpoint, seen) -> bool:
        """tools/call: an SSE stream with an event id and ``retry: 0`` that ends before the answer;
        every resumption GET does the same (the standalone GET gets 405)."""
        if seen.rpc_method == "tools/call" or (method == "GET" and seen.headers.get("last-event-id")):
            h.start_stream()
            h.write_chunk(b"id: s:1\nretry: 0\ndata:\n\n")
            h.end_stream()
            return True
        return False

    @staticmethod
    def storm_get_messages(h: Handler, method, endpoint, seen) -> bool:
        """The standalone GET: one notification, ``retry: 0``, and the end, every time."""
        if method == "GET":
            note = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "x"}}
            h.start_stream()
            h.write_chunk(format_event(json.dumps(note), retry=0))
            h.end_stream()
            return True
        return False

    # -- 9. size
    @staticmethod
    def huge_event(h: Handler, method, endpoint, seen) -> bool:
        """tools/call: one SSE event of 100 MB (written as it goes; stops when the client does)."""
        if seen.rpc_method == "tools/call":
            h.start_stream()
            head = b'data: {"jsonrpc": "2.0", "id": %d, "result": {"content": [{"type": "text", "text": "' \
                % seen.message["id"]
            if h.write_chunk(head):
                block = b"x" * (1 << 20)
                for _ in range(100):
                    if not h.write_chunk(block):
                        h.app.note("hangup", h.path)
                        break
                else:
                    h.write_chunk(b'"}]}}\n\n')
                    h.end_stream()
            h.close_connection = True
            return True
        return False

    @staticmethod
    def huge_json(h: Handler, method, endpoint, seen) -> bool:
        """tools/call: a 200 MB JSON body with its Content-Length."""
        if seen.rpc_method == "tools/call":
            head = b'{"jsonrpc": "2.0", "id": %d, "result": {"content": [{"type": "text", "text": "' \
                % seen.message["id"]
            tail = b'"}]}}'
            size = 200 << 20
            h.send_response(200)
            h.send_header("Content-Type", "application/json")
            h.send_header("Content-Length", str(len(head) + size + len(tail)))
            h.end_headers()
            try:
                h.wfile.write(head)
                block = b"x" * (1 << 20)
                for _ in range(size >> 20):
                    h.wfile.write(block)
                h.wfile.write(tail)
            except OSError:
                h.app.note("hangup", h.path)
            h.close_connection = True
            return True
        return False

    @staticmethod
    def gzip_bomb_json(h: Handler, method, endpoint, seen) -> bool:
        """tools/call: a JSON body, gzip-encoded, that inflates to 256 MiB."""
        if seen.rpc_method == "tools/call":
            body = gzip_bomb(256 << 20)
            h.send_response(200)
            h.send_header("Content-Type", "application/json")
            h.send_header("Content-Encoding", "gzip")
            h.send_header("Content-Length", str(len(body)))
            h.end_headers()
            try:
                h.wfile.write(body)
            except OSError:
                h.app.note("hangup", h.path)
            return True
        return False

    @staticmethod
    def gzip_bomb_sse(h: Handler, method, endpoint, seen) -> bool:
        """tools/call: an SSE stream, gzip-encoded, whose one event inflates to 256 MiB."""
        if seen.rpc_method == "tools/call":
            packer = zlib.compressobj(9, zlib.DEFLATED, 31)
            h.send_response(200)
            h.send_header("Content-Type", "text/event-stream")
            h.send_header("Content-Encoding", "gzip")
            h.send_header("Transfer-Encoding", "chunked")
            h.end_headers()
            if h.write_chunk(packer.compress(b"data: ")):
                block = b"0" * (1 << 20)
                for _ in range(256):
                    data = packer.compress(block)
                    if data and not h.write_chunk(data):
                        break
                else:
                    h.write_chunk(packer.flush())
                    h.end_stream()
            h.close_connection = True
            return True
        return False

    @staticmethod
    def gzip_ok(h: Handler, method, endpoint, seen) -> bool:
        """tools/call: a normal answer, gzip-encoded."""
        if seen.rpc_method == "tools/call":
            body = gzip.compress(json.dumps(h.app.answer(seen.message)).encode())
            h.send_response(200)
            h.send_header("Content-Type", "application/json")
            h.send_header("Content-Encoding", "gzip")
            h.send_header("Content-Length", str(len(body)))
            h.end_headers()
            h.wfile.write(body)
            return True
        return False

    @staticmethod
    def brotli_json(h: Handler, method, endpoint, seen) -> bool:
        """tools/call: an answer claiming ``Content-Encoding: br`` (which we never asked for)."""
        if seen.rpc_method == "tools/call":
            h.send_response(200)
            h.send_header("Content-Type", "application/json")
            h.send_header("Content-Encoding", "br")
            h.send_header("Content-Length", "4")
            h.end_headers()
            h.wfile.write(b"\x0b\x02\x80\x00")
            return True
        return False

    @staticmethod
    def legacy_huge_event(h: Handler, method, endpoint, seen) -> bool:
        """Legacy: the answer to tools/call is an event of 8 MiB."""
        if endpoint == "messages" and seen.rpc_method == "tools/call":
            h.send_json(202, None)
            reply = json.dumps(h.app.answer(seen.message, text="y" * (8 << 20)))
            h.app.outbox(seen).put(format_event(reply))
            return True
        return False

    # -- 10. silent drops, raw echoes, odd answers
    @staticmethod
    def empty_200(h: Handler, method, endpoint, seen) -> bool:
        """tools/call: 200 with an empty JSON body."""
        if seen.rpc_method == "tools/call":
            h.send_response(200)
            h.send_header("Content-Type", "application/json")
            h.send_header("Content-Length", "0")
            h.end_headers()
            return True
        return False

    @staticmethod
    def accepted_202(h: Handler, method, endpoint, seen) -> bool:
        """tools/call: 202 Accepted, no body."""
        if seen.rpc_method == "tools/call":
            h.send_json(202, None)
            return True
        return False

    @staticmethod
    def wrong_id(h: Handler, method, endpoint, seen) -> bool:
        """tools/call: a JSON answer to another id."""
        if seen.rpc_method == "tools/call":
            h.send_json(200, h.app.answer({**seen.message, "id": 987654}))
            return True
        return False

    @staticmethod
    def null_id_error(h: Handler, method, endpoint, seen) -> bool:
        """tools/call: 200 with a JSON-RPC error whose id is null."""
        if seen.rpc_method == "tools/call":
            h.send_json(200, {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "cannot read it"}})
            return True
        return False

    @staticmethod
    def null_id_error_sse(h: Handler, method, endpoint, seen) -> bool:
        """tools/call: an SSE stream whose one event is an error with a null id."""
        if seen.rpc_method == "tools/call":
            h.start_stream()
            error = {"jsonrpc": "2.0", "id": None, "error": {"code": -32602, "message": "cannot read it"}}
            h.write_chunk(format_event(json.dumps(error)))
            h.end_stream()
            return True
        return False

    @staticmethod
    def batch_reply(h: Handler, method, endpoint, seen) -> bool:
        """tools/call: the answer as a one-element batch (array), in a JSON body."""
        if seen.rpc_method == "tools/call":
            h.send_json(200, [h.app.answer(seen.message)])
            return True
        return False

    @staticmethod
    def batch_reply_sse(h: Handler, method, endpoint, seen) -> bool:
        """tools/call: an SSE event holding a batch: a notification and the answer."""
        if seen.rpc_method == "tools/call":
            note = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "b"}}
            h.start_stream()
            h.write_chunk(format_event(json.dumps([note, h.app.answer(seen.message)])))
            h.end_stream()
            return True
        return False

    @staticmethod
    def stray_answer(h: Handler, method, endpoint, seen) -> bool:
        """tools/call: an SSE stream with an answer to another id first, then the real one."""
        if seen.rpc_method == "tools/call":
            stray = rpc_result(424242, {"content": [{"type": "text", "text": "stray"}]})
            h.start_stream()
            h.write_chunk(format_event(json.dumps(stray)))
            h.write_chunk(format_event(json.dumps(h.app.answer(seen.message))))
            h.end_stream()
            return True
        return False

    @staticmethod
    def always_404(h: Handler, method, endpoint, seen) -> bool:
        """Every tools/call gets 404 (an expired session), however often the client re-initializes."""
        if seen.rpc_method == "tools/call":
            h.send_json(404, {"jsonrpc": "2.0", "id": None, "error": {"code": -32001, "message": "Session not found"}})
            return True
        return False

    @staticmethod
    def reset_call(h: Handler, method, endpoint, seen) -> bool:
        """The first tools/call: the connection is reset (RST) without an answer; later ones are answered."""
        if seen.rpc_method == "tools/call" and not h.app.flag("reset"):
            h.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            h.connection.close()
            h.close_connection = True
            return True
        return False


def bad_session_id(value: str):
    """A behaviour: initialize answered with the session id ``value`` (sent as latin-1 bytes)."""
    def script(h: Handler, method, endpoint, seen) -> bool:
        if seen.rpc_method == "initialize":
            body = json.dumps(h.app.answer(seen.message)).encode()
            h.send_response(200)
            h.send_header("Content-Type", "application/json")
            h.send_header("Content-Length", str(len(body)))
            h.send_header("Mcp-Session-Id", value)          # written as latin-1 bytes
            h.end_headers()
            h.wfile.write(body)
            return True
        return False
    return script


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def finish_request(self, request, client_address):
        with self.app.cond:
            self.app.open += 1
        try:
            super().finish_request(request, client_address)
        finally:
            with self.app.cond:
                self.app.open -= 1
                self.app.cond.notify_all()

    def handle_error(self, request, client_address):
        pass                                   # resets and hang-ups are the point of the exercise


class HostileServer:
    """See the module docstring."""

    def __init__(self, name: str = "hostile"):
        self.name = name
        self.seen: list = []
        self.notes: list = []
        self.cond = threading.Condition()
        self.open = 0
        self.stopping = threading.Event()
        self.outboxes: dict = {}                 # legacy stream id -> what its stream sends next
        self.foreign: Optional["HostileServer"] = None
        self._sessions = 0
        self._flags: set = set()
        self.httpd = _Server(("127.0.0.1", 0), Handler)
        self.httpd.app = self
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                       name=f"{name}-listener", daemon=True)
        self.thread.start()

    def url(self, behaviour: str = "ok") -> str:
        return f"http://127.0.0.1:{self.port}/{behaviour}/mcp"

    def sse_url(self, behaviour: str = "ok") -> str:
        return f"http://127.0.0.1:{self.port}/{behaviour}/sse"

    def script(self, name: str, fn) -> str:
        """Install a behaviour made at run time (see ``bad_session_id``); returns its name."""
        setattr(Behaviours, name.replace("-", "_"), staticmethod(fn))
        return name

    # -- what the server does for a well-formed request
    def new_session_id(self) -> str:
        with self.cond:
            self._sessions += 1
            return f"{self.name}-session-{self._sessions}"

    def answer(self, message, text: Optional[str] = None) -> Optional[dict]:
        if not isinstance(message, dict) or "method" not in message or "id" not in message:
            return None
        method, params = message["method"], message.get("params") or {}
        if method == "initialize":
            result = {"protocolVersion": params.get("protocolVersion", "2025-11-25"),
                      "capabilities": {"tools": {}}, "serverInfo": {"name": self.name, "version": "1"}}
        elif method == "tools/list":
            result = {"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]}
        elif method == "tools/call":
            said = text if text is not None else f"{self.name} says {(params.get('arguments') or {}).get('text')}"
            result = {"content": [{"type": "text", "text": said}]}
        elif method == "ping":
            result = {}
        else:
            return {"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32601, "message": "Method not found"}}
        return rpc_result(message["id"], result)

    def outbox(self, seen: Seen) -> "queue.Queue":
        """The queue of the legacy stream a POST to ``/messages?session_id=...`` belongs to."""
        stream_id = seen.path.partition("session_id=")[2]
        return self.outboxes.setdefault(stream_id, queue.Queue())

    # -- records
    def record(self, seen: Seen) -> None:
        with self.cond:
            self.seen.append(seen)
            self.cond.notify_all()

    def note(self, what: str, path: str) -> None:
        with self.cond:
            self.notes.append((what, path))
            self.cond.notify_all()

    def flag(self, name: str) -> bool:
        """True from the second call on (a behaviour that misbehaves once)."""
        with self.cond:
            if name in self._flags:
                return True
            self._flags.add(name)
            return False

    def requests(self, method: Optional[str] = None, rpc_method: Optional[str] = None) -> list:
        with self.cond:
            return [s for s in self.seen if (method is None or s.method == method)
                    and (rpc_method is None or s.rpc_method == rpc_method)]

    def wait_for(self, predicate, timeout: float = WAIT) -> bool:
        with self.cond:
            return self.cond.wait_for(lambda: predicate(self), timeout)

    def wait_idle(self, timeout: float = WAIT) -> bool:
        """True once every connection has been closed by the client."""
        with self.cond:
            return self.cond.wait_for(lambda: self.open == 0, timeout)

    def close(self) -> None:
        self.stopping.set()
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(WAIT)
