"""The HTTP scenarios (rules in __init__.py): ``http`` (Streamable HTTP) and ``sse``
(the legacy HTTP+SSE transport of 2024-11-05), shown as the HTTP requests and
responses themselves, sent with the standard library's ``http.client`` to a
server on 127.0.0.1. Spec: basic/transports#streamable-http, #http-with-sse.
``http`` in 2026-07-28 (``_stateless``): no session, the request's metadata in
headers, cancellation by closing the response stream (Spec 2026-07-28:
basic/transports/streamable-http, basic/patterns/cancellation); with a legacy
``--protocol-version``, the session story of 2025-11-25."""
from __future__ import annotations

import http.client
import json
import threading

from mcp_ref.protocol.lifecycle import LATEST_LEGACY_REVISION as LATEST_REVISION   # a session: the handshake era
from mcp_ref.server.server import Context, Server
from mcp_ref.cli.scenarios.show import WAIT

ACCEPT = "application/json, text/event-stream"
SHOWN_HEADERS = ("content-type", "mcp-session-id", "allow")


def _server() -> tuple:
    server = Server("scenario-http", version="1.0")
    resume, stopped = threading.Event(), threading.Event()

    @server.tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    @server.tool
    def slow_count(ctx: Context) -> str:
        """Progress, a break in the stream, more progress, the result."""
        ctx.report_progress(1, 2)
        ctx.close_sse_stream()            # 2025-11-25 polling: the client comes back with Last-Event-ID
        resume.wait(WAIT)
        ctx.report_progress(2, 2)
        return "counted to 2"

    @server.tool
    def wait(ctx: Context) -> str:
        """Progress, then wait until cancelled (2026-07-28: by closing the stream)."""
        ctx.report_progress(1, None, "started")
        if ctx.cancelled.wait(WAIT):
            stopped.set()
        return "never sent"
    return server, resume, stopped


class Raw:
    """HTTP/1.1 to one local server, printed: ``POST /mcp`` lines, the status and the
    headers that matter, then the body (one JSON document, or each SSE event)."""

    def __init__(self, show, port: int):
        self.show, self.port = show, port
        self.headers: dict = {}

    def open(self, method: str, path: str, body=None, headers: dict | None = None):
        """Send; print the request and the status line; return ``(connection, response)``."""
        sent = {**self.headers, **(headers or {})}
        shown = " ".join(f"{k}: {v}" for k, v in sent.items())
        self.show.transcript.emit(f"{method} {path}  {shown}".rstrip())
        if body is not None:
            self.show.transcript("send", body)
            sent["Content-Type"] = "application/json"
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=WAIT)
        conn.request(method, path, body=None if body is None else json.dumps(body), headers=sent)
        response = conn.getresponse()
        head = "  ".join(f"{k}: {response.getheader(k)}" for k in SHOWN_HEADERS if response.getheader(k))
        self.show.transcript.emit(f"  <- {response.status} {response.reason}  {head}".rstrip())
        return conn, response

    def request(self, method: str, path: str, body=None, headers: dict | None = None, stream_until=None):
        """Send; print; return ``(response, [SSE events])``: the response for its headers, and for
        an SSE answer the events read until the stream ends (or ``stream_until(event)`` is true,
        and then the connection is closed: what a client that stops reading does)."""
        conn, response = self.open(method, path, body, headers)
        try:
            if response.getheader("Content-Type", "").startswith("text/event-stream"):
                return response, self.events(response, stream_until)
            raw = response.read()
            if raw.strip():                         # a JSON body (202 Accepted has none)
                self.show.transcript("receive", json.loads(raw))
            return response, []
        finally:
            conn.close()

    def rpc(self, path: str, request_id, method: str, params=None, headers=None, **options):
        """POST one JSON-RPC message to ``path`` (a notification when ``request_id`` is None)."""
        body = {"jsonrpc": "2.0", **({} if request_id is None else {"id": request_id}), "method": method}
        return self.request("POST", path, body if params is None else {**body, "params": params}, headers, **options)

    def events(self, response, stream_until) -> list:
        events, event = [], {}
        for line in iter(response.readline, b""):
            line = line.decode("utf-8").rstrip("\r\n")
            if line and not line.startswith(":"):
                field, _, value = line.partition(":")
                event[field] = value[1:] if value.startswith(" ") else value
            if line or not event:
                continue
            events.append(event)
            fields = "  ".join(f"{k}: {event[k]}" for k in ("id", "event", "retry") if k in event)
            data = event.get("data", "")
            if data.startswith("{"):
                self.show.transcript.emit(f"  event  {fields}")
                self.show.transcript("receive", json.loads(data))
            else:
                self.show.transcript.emit(f"  event  {fields}  data: {data!r}")
            if stream_until is not None and stream_until(event):
                break
            event = {}
        return events


def _initialize(raw: Raw, request_id: int) -> None:
    response, _ = raw.rpc("/mcp", request_id, "initialize", {
        "protocolVersion": LATEST_REVISION, "capabilities": {}, "clientInfo": {"name": "scenario", "version": "1.0"}},
        {"Accept": ACCEPT})
    raw.headers = {"Accept": ACCEPT, "Mcp-Session-Id": response.getheader("Mcp-Session-Id"),
                   "MCP-Protocol-Version": LATEST_REVISION}
    raw.rpc("/mcp", None, "notifications/initialized")


def streamable_http(show) -> None:
    from mcp_ref.transports.http.server.app import start_http
    server, resume, stopped = _server()
    with start_http(server, retry_interval=100) as handle:
        show.say("http.server", url=handle.url)
        if show.modern:
            _stateless(show, Raw(show, handle.port), stopped)
        else:
            _sessions(show, Raw(show, handle.port), resume)


def _stateless(show, raw: Raw, stopped: threading.Event) -> None:
    """2026-07-28: every POST stands alone, its metadata in headers too."""
    from mcp_ref.protocol import modern
    version = modern.MODERN_REVISION
    meta = {modern.PROTOCOL_VERSION: version, modern.CLIENT_CAPABILITIES: {},
            modern.CLIENT_INFO: {"name": "scenario", "version": "1.0"}}

    def post(request_id: int, method: str, params: dict, **options):
        headers = {"Accept": ACCEPT, "MCP-Protocol-Version": version, "Mcp-Method": method,
                   **({"Mcp-Name": params["name"]} if "name" in params else {})}      # the tool's name
        return raw.rpc("/mcp", request_id, method, {**params, "_meta": {**meta, **params.get("_meta", {})}},
                       headers, **options)
    show.step("http.discover")
    post(1, "server/discover", {})
    show.step("http.add")
    post(2, "tools/call", {"name": "add", "arguments": {"a": 2, "b": 3}})
    show.step("http.wait")
    post(3, "tools/call", {"name": "wait", "arguments": {}, "_meta": {"progressToken": "p3"}},
         stream_until=lambda event: True)
    show.say("http.cancelled", stopped=stopped.wait(WAIT))


def _sessions(show, raw: Raw, resume: threading.Event) -> None:
    """2025-11-25: a session, a stream resumed with Last-Event-ID, a 404 after DELETE."""
    show.step("http.initialize")
    _initialize(raw, 1)
    show.step("http.add")
    raw.rpc("/mcp", 2, "tools/call", {"name": "add", "arguments": {"a": 2, "b": 3}})
    show.step("http.slow")
    _, events = raw.rpc("/mcp", 3, "tools/call",
                           {"name": "slow_count", "arguments": {}, "_meta": {"progressToken": "p3"}})
    last = [e["id"] for e in events if "id" in e][-1]
    resume.set()
    show.step("http.resume", last=last)
    raw.request("GET", "/mcp", headers={"Last-Event-ID": last},
                stream_until=lambda event: '"result"' in event.get("data", ""))
    show.step("http.delete")
    raw.request("DELETE", "/mcp")
    raw.rpc("/mcp", 4, "ping")
    show.step("http.again")
    raw.headers = {}
    _initialize(raw, 5)
    raw.rpc("/mcp", 6, "ping")


def legacy_sse(show) -> None:
    from mcp_ref.transports.http.server.app import start_http
    with start_http(_server()[0]) as handle:
        raw = Raw(show, handle.port)
        show.say("sse.server", url=handle.sse_url)
        show.step("sse.get")
        conn, stream = raw.open("GET", "/sse", headers={"Accept": "text/event-stream"})
        endpoint = raw.events(stream, stream_until=lambda event: event.get("event") == "endpoint")[-1]["data"]

        def answer():                   # read the GET stream up to the answer to the one request sent
            raw.events(stream, stream_until=lambda event: '"result"' in event.get("data", ""))
        show.step("sse.post")
        raw.rpc(endpoint, 1, "initialize", {"protocolVersion": "2024-11-05", "capabilities": {},
                                            "clientInfo": {"name": "scenario", "version": "1.0"}})
        answer()
        raw.rpc(endpoint, None, "notifications/initialized")
        raw.rpc(endpoint, 2, "tools/call", {"name": "add", "arguments": {"a": 2, "b": 3}})
        answer()
        show.say("sse.end")
        conn.close()
