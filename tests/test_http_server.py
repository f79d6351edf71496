"""The Streamable HTTP server, driven with plain ``requests``: status codes, headers,
JSON versus SSE answers, sessions, resumption, security checks, the legacy
HTTP+SSE endpoint, and the pure helpers (SSE framing, the event store).

Servers listen on port 0 and are reached through the handle's real URL.
Spec: basic/transports#streamable-http.
"""
import json
import os
import selectors
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

requests = pytest.importorskip("requests", reason="the HTTP tests drive the server with requests")

from mcp_ref import Context, Server  # noqa: E402
from mcp_ref.protocol import lifecycle  # noqa: E402
from mcp_ref.transports.http.sse import EventParser, format_comment, format_event, split_event_id  # noqa: E402
from mcp_ref.transports.http.server.app import InMemoryEventStore, serve_http, start_http  # noqa: E402

REPO = Path(__file__).resolve().parent.parent

HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
SSE_ACCEPT = {"Accept": "text/event-stream"}


from helpers import http_tools_server, rpc  # noqa: E402


def make_server() -> Server:
    server = http_tools_server("http-test")

    @server.tool
    def interrupted(n: int, ctx: Context) -> str:
        """Send n notifications; close the HTTP response halfway (the stream lives on)."""
        for i in range(n):
            if i == n // 2:
                ctx.close_sse_stream()
            ctx.notify("notifications/message", {"level": "info", "data": f"{ctx.request_id}:{i}"})
        return "all sent"

    @server.tool
    def slow(seconds: float, ctx: Context) -> str:
        """Wait (stopping early when cancelled)."""
        ctx.cancelled.wait(seconds)
        return "slept"

    return server


@pytest.fixture
def http():
    """``http(**options) -> handle``: a server on a free port, shut down after the test."""
    handles = []

    def start(**options):
        handle = start_http(make_server(), ("127.0.0.1", 0), **options)
        handles.append(handle)
        return handle
    yield start
    for handle in handles:
        handle.shutdown()


# ---------------------------------------------------------------------- helpers
def init_message(version="2025-11-25"):
    return rpc(0, "initialize", {"protocolVersion": version, "capabilities": {},
                                 "clientInfo": {"name": "raw", "version": "1"}})


def post(url, message, session_id=None, version=None, headers=None, **kwargs):
    all_headers = dict(HEADERS)
    if session_id is not None:
        all_headers["Mcp-Session-Id"] = session_id
    if version is not None:
        all_headers["MCP-Protocol-Version"] = version
    all_headers.update(headers or {})
    data = message if isinstance(message, (bytes, str)) else json.dumps(message)
    return requests.post(url, data=data, headers=all_headers, timeout=10, **kwargs)


def open_session(url, version="2025-11-25"):
    """initialize + notifications/initialized; returns the session id."""
    response = post(url, init_message(version))
    assert response.status_code == 200, response.text
    session_id = response.headers["Mcp-Session-Id"]
    notified = post(url, {"jsonrpc": "2.0", "method": "notifications/initialized"}, session_id, version)
    assert notified.status_code == 202
    return session_id


def wait_in_flight(handle, count: int = 1, limit: float = 5.0) -> None:
    """Wait until the (only) session is serving ``count`` requests."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        sessions = [t.session for t in list(handle.app._sessions.values())]
        if sessions and sessions[0].in_flight >= count:
            return
        time.sleep(0.01)
    raise AssertionError("the request never started")


def wait_ready(handle, limit=5.0) -> None:
    """notifications/initialized is handled asynchronously: wait until every session is ready."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if all(t.session.state == lifecycle.READY for t in list(handle.app._sessions.values())):
            return
        time.sleep(0.01)
    raise AssertionError("sessions never became ready")


def events_of(response) -> list:
    """Every SSE event of a finished response (priming events included)."""
    parser = EventParser()
    return parser.feed(response.content)


def messages_of(events) -> list:
    return [json.loads(e.data) for e in events if e.data]


def read_events_until(response, predicate, limit=5.0) -> list:
    """Read a live SSE response until ``predicate(events)`` holds (or the deadline passes)."""
    parser, events = EventParser(), []
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline and not predicate(events):
        data = response.raw.read1(65536)
        if not data:
            break
        events += parser.feed(data)
    return events


# ---------------------------------------------------------------------- POST: JSON or SSE
@pytest.mark.req("TRN-39", "TRN-40", "SEC-16", "SEC-17")
def test_initialize_assigns_a_random_visible_ascii_session_id(http):
    url = http().url
    first, second = post(url, init_message()), post(url, init_message())
    ids = [first.headers["Mcp-Session-Id"], second.headers["Mcp-Session-Id"]]
    assert ids[0] != ids[1]
    for session_id in ids:
        assert len(session_id) >= 22 and all(0x21 <= ord(c) <= 0x7E for c in session_id)
    assert first.headers["Content-Type"].startswith("application/json")
    assert first.json()["result"]["serverInfo"]["name"] == "http-test"


@pytest.mark.req("TRN-18")
def test_a_result_with_nothing_before_it_is_one_json_body(http):
    url = http().url
    session_id = open_session(url)
    response = post(url, rpc(1, "tools/call", {"name": "add", "arguments": {"a": 2, "b": 3}}), session_id)
    assert response.status_code == 200
    assert response.headers["Content-Type"] == "application/json"
    assert response.json()["id"] == 1 and response.json()["result"]["content"][0]["text"] == "5"


@pytest.mark.req("TRN-18", "TRN-20", "TRN-24", "TRN-26", "TRN-35")
def test_progress_before_the_result_turns_the_answer_into_sse(http):
    url = http().url
    session_id = open_session(url)
    response = post(url, rpc(7, "tools/call", {"name": "count", "arguments": {"n": 3},
                                                "_meta": {"progressToken": "tok"}}), session_id)
    assert response.headers["Content-Type"] == "text/event-stream"
    events = events_of(response)
    priming = events[0]                                       # 2025-11-25: id, retry, empty data
    assert priming.id and priming.retry == 1000 and priming.data == ""
    messages = messages_of(events)
    assert [m["params"]["progress"] for m in messages[:-1]] == [1, 2, 3]
    assert all(m["params"]["progressToken"] == "tok" for m in messages[:-1])
    assert messages[-1]["id"] == 7 and messages[-1]["result"]["content"][0]["text"] == "counted to 3"
    ids = [e.id for e in events]
    assert len(set(ids)) == len(ids) and len({split_event_id(i)[0] for i in ids}) == 1


@pytest.mark.req("TRN-20")
def test_no_priming_event_before_2025_11_25(http):
    """The session's negotiated revision decides, not the request's header."""
    url = http().url
    session_id = open_session(url, "2025-06-18")
    response = post(url, rpc(1, "tools/call", {"name": "announce", "arguments": {"text": "x"}}), session_id,
                    "2025-11-25")
    events = events_of(response)
    assert response.headers["Content-Type"] == "text/event-stream"
    assert all(e.data for e in events) and len(events) == 2


@pytest.mark.req("TRN-25", "TRN-32", "TRN-34")
def test_json_response_mode_answers_json_and_sends_related_messages_on_the_get_stream(http):
    url = http(json_response=True).url
    session_id = open_session(url)
    stream = requests.get(url, headers={**SSE_ACCEPT, "Mcp-Session-Id": session_id}, stream=True, timeout=10)
    assert stream.status_code == 200
    response = post(url, rpc(3, "tools/call", {"name": "announce", "arguments": {"text": "on GET"}}), session_id)
    assert response.headers["Content-Type"] == "application/json"
    assert response.json()["result"]["content"][0]["text"] == "announced"
    events = read_events_until(stream, lambda evs: any(e.data for e in evs))
    stream.close()
    assert [m["params"]["data"] for m in messages_of(events)] == ["on GET"]


@pytest.mark.req("TRN-18")
def test_sse_response_mode_streams_even_a_plain_result(http):
    url = http(response_mode="sse").url
    session_id = open_session(url)
    response = post(url, rpc(1, "tools/call", {"name": "add", "arguments": {"a": 1, "b": 1}}), session_id)
    assert response.headers["Content-Type"] == "text/event-stream"
    assert messages_of(events_of(response))[-1]["result"]["content"][0]["text"] == "2"


@pytest.mark.parametrize("accept, status, kind", [
    ("application/json, text/event-stream", 200, None),
    ("text/event-stream, application/json", 200, None),
    ("application/json", 200, "application/json"),
    ("text/event-stream", 200, "text/event-stream"),
    ("*/*", 200, None),
    (None, 200, None),
    ("application/*;q=0.5, text/*", 200, None),
    ("text/html", 406, "application/json"),
    ("application/json;q=0, text/html", 406, "application/json"),
])
def test_accept_negotiation(http, accept, status, kind):
    url = http().url
    session_id = open_session(url)
    headers = {"Accept": accept} if accept is not None else {}
    message = rpc(1, "tools/call", {"name": "count", "arguments": {"n": 2}, "_meta": {"progressToken": 1}})
    all_headers = {"Content-Type": "application/json", "Mcp-Session-Id": session_id, **headers}
    response = requests.post(url, data=json.dumps(message), headers=all_headers, timeout=10)
    assert response.status_code == status
    if kind:
        assert response.headers["Content-Type"] == kind
    if status == 200:
        text = response.text
        assert '"counted to 2"' in text


@pytest.mark.req("TRN-16")
def test_notifications_and_responses_get_202_without_body(http):
    url = http().url
    session_id = open_session(url)
    response = post(url, {"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}, session_id)
    assert response.status_code == 202 and response.content == b""
    response = post(url, {"jsonrpc": "2.0", "id": 99, "result": {}}, session_id)
    assert response.status_code == 202 and response.content == b""


@pytest.mark.req("TRN-17")
def test_unacceptable_input_gets_400_with_an_error_without_id(http):
    url = http().url
    session_id = open_session(url)
    response = post(url, {"jsonrpc": "2.0", "id": 3}, session_id)
    assert response.status_code == 400
    assert response.json()["id"] is None and response.json()["error"]["code"] == -32600


@pytest.mark.req("TRN-18")
def test_batches_only_in_2025_03_26(http):
    url = http().url
    old = open_session(url, "2025-03-26")
    batch = [rpc("a", "tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}}), rpc("b", "ping"),
             {"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}]
    response = post(url, batch, old, "2025-03-26")
    assert response.status_code == 200
    answers = response.json() if response.headers["Content-Type"] == "application/json" else \
        messages_of(events_of(response))
    if isinstance(answers[0], list):
        answers = answers[0]
    assert sorted(a["id"] for a in answers) == ["a", "b"]
    new = open_session(url)
    response = post(url, [rpc(1, "ping")], new)
    assert response.status_code == 400 and response.json()["error"]["code"] == -32600


# ---------------------------------------------------------------------- sessions and versions
@pytest.mark.req("TRN-43", "TRN-44")
def test_session_header_rules(http):
    url = http().url
    session_id = open_session(url)
    assert post(url, rpc(1, "ping")).status_code == 400                       # missing id
    assert post(url, rpc(1, "ping"), "not-a-session").status_code == 404      # unknown id
    assert requests.get(url, headers=SSE_ACCEPT, timeout=10).status_code == 400
    assert requests.delete(url, timeout=10).status_code == 400
    assert requests.delete(url, headers={"Mcp-Session-Id": session_id}, timeout=10).status_code == 204
    assert post(url, rpc(2, "ping"), session_id).status_code == 404
    assert requests.get(url, headers={**SSE_ACCEPT, "Mcp-Session-Id": session_id}, timeout=10).status_code == 404
    assert requests.delete(url, headers={"Mcp-Session-Id": session_id}, timeout=10).status_code == 404


@pytest.mark.req("TRN-50")
def test_protocol_version_header(http):
    url = http().url
    session_id = open_session(url)
    assert post(url, rpc(1, "ping"), session_id, "1999-01-01").status_code == 400
    assert post(url, rpc(2, "ping"), session_id, "not a version").status_code == 400
    assert post(url, rpc(3, "ping"), session_id).status_code == 200          # absent: 2025-03-26 assumed
    assert post(url, rpc(4, "ping"), session_id, "2025-03-26").status_code == 200
    assert post(url, rpc(5, "ping"), session_id, "2025-11-25").status_code == 200


def test_sessions_are_isolated(http):
    handle = http()
    first, second = open_session(handle.url), open_session(handle.url)
    a = post(handle.url, rpc(1, "tools/call", {"name": "announce", "arguments": {"text": "for a"}}), first)
    last_id = events_of(a)[-1].id
    # b cannot resume a's stream, and a's stream is not b's business
    response = requests.get(handle.url, headers={**SSE_ACCEPT, "Mcp-Session-Id": second, "Last-Event-ID": last_id},
                            timeout=10)
    assert response.status_code == 400
    assert post(handle.url, rpc(1, "tools/call", {"name": "add", "arguments": {"a": 1, "b": 1}}),
                second).status_code == 200                                  # same request id, other session


@pytest.mark.req("TRN-44")
def test_idle_sessions_expire(http):
    handle = http(idle_timeout=0.2)
    session_id = open_session(handle.url)
    deadline = time.monotonic() + 5
    while handle.app.session_count and time.monotonic() < deadline:
        time.sleep(0.05)
    assert post(handle.url, rpc(1, "ping"), session_id).status_code == 404


def test_a_session_with_an_open_stream_is_not_idle(http):
    handle = http(idle_timeout=0.2, keepalive=0.05)
    session_id = open_session(handle.url)
    stream = requests.get(handle.url, headers={**SSE_ACCEPT, "Mcp-Session-Id": session_id}, stream=True, timeout=10)
    time.sleep(0.6)
    assert post(handle.url, rpc(1, "ping"), session_id).status_code == 200
    stream.close()


def test_max_sessions_evicts_the_longest_idle_session(http):
    url = http(max_sessions=2).url
    first, second = open_session(url), open_session(url)
    assert post(url, rpc(1, "ping"), first).status_code == 200        # second is now idle the longest
    third = open_session(url)
    assert post(url, rpc(2, "ping"), second).status_code == 404
    assert post(url, rpc(3, "ping"), first).status_code == 200
    assert post(url, rpc(4, "ping"), third).status_code == 200


def test_max_sessions_refuses_only_when_no_session_is_idle(http):
    handle = http(max_sessions=2, keepalive=0.05)
    streams = []
    for session_id in (open_session(handle.url), open_session(handle.url)):
        streams.append(requests.get(handle.url, headers={**SSE_ACCEPT, "Mcp-Session-Id": session_id},
                                    stream=True, timeout=10))
    response = post(handle.url, init_message())
    assert response.status_code == 503 and "Mcp-Session-Id" not in response.headers
    assert response.headers["Retry-After"]
    streams[0].close()
    deadline = time.monotonic() + 5              # the server notices the closed stream at its next keepalive
    while post(handle.url, init_message()).status_code != 200:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    streams[1].close()


@pytest.mark.req("TRN-49", "TRN-50")
def test_stateless_mode(http):
    url = http(stateless=True).url
    response = post(url, init_message())
    assert response.status_code == 200 and "Mcp-Session-Id" not in response.headers
    response = post(url, rpc(1, "tools/call", {"name": "add", "arguments": {"a": 4, "b": 5}}), version="2025-06-18")
    assert response.json()["result"]["content"][0]["text"] == "9"
    response = post(url, rpc(2, "tools/call", {"name": "count", "arguments": {"n": 2}, "_meta": {"progressToken": 2}}))
    assert [m.get("method") for m in messages_of(events_of(response))] == ["notifications/progress"] * 2 + [None]
    assert post(url, {"jsonrpc": "2.0", "method": "notifications/initialized"}).status_code == 202
    assert requests.get(url, headers=SSE_ACCEPT, timeout=10).status_code == 405
    assert requests.delete(url, timeout=10).status_code == 405
    assert post(url, rpc(3, "ping"), version="1999-01-01").status_code == 400


# ---------------------------------------------------------------------- GET, resumption
@pytest.mark.req("TRN-7", "TRN-30", "TRN-31", "TRN-32")
def test_get_stream_carries_unrelated_server_messages(http):
    handle = http()
    session_id = open_session(handle.url)
    stream = requests.get(handle.url, headers={**SSE_ACCEPT, "Mcp-Session-Id": session_id}, stream=True, timeout=10)
    assert stream.headers["Content-Type"] == "text/event-stream"
    wait_ready(handle)
    handle.app.server.add_tool(lambda: "new", name="late_tool")           # → tools/list_changed
    events = read_events_until(stream, lambda evs: any(e.data for e in evs))
    stream.close()
    assert events[0].data == "" and events[0].id                            # priming
    assert [m["method"] for m in messages_of(events)] == ["notifications/tools/list_changed"]


def test_messages_sent_while_no_get_is_open_wait_for_the_next_get(http):
    handle = http()
    session_id = open_session(handle.url)
    wait_ready(handle)
    handle.app.server.add_tool(lambda: "new", name="late_tool")
    stream = requests.get(handle.url, headers={**SSE_ACCEPT, "Mcp-Session-Id": session_id}, stream=True, timeout=10)
    events = read_events_until(stream, lambda evs: any(e.data for e in evs))
    stream.close()
    assert [m["method"] for m in messages_of(events)] == ["notifications/tools/list_changed"]


@pytest.mark.req("TRN-30")
def test_get_405_when_disabled(http):
    url = http(enable_get=False).url
    session_id = open_session(url)
    response = requests.get(url, headers={**SSE_ACCEPT, "Mcp-Session-Id": session_id}, timeout=10)
    assert response.status_code == 405 and "GET" not in response.headers["Allow"]
    assert requests.get(url, headers={"Accept": "application/json", "Mcp-Session-Id": session_id},
                        timeout=10).status_code == 405


def test_get_needs_an_accept_admitting_sse(http):
    url = http().url
    session_id = open_session(url)
    response = requests.get(url, headers={"Accept": "application/json", "Mcp-Session-Id": session_id}, timeout=10)
    assert response.status_code == 406


@pytest.mark.req("TRN-35", "TRN-36", "TRN-38")
def test_close_stream_then_resume_replays_only_that_stream(http):
    handle = http(retry_interval=25)
    url = handle.url
    session_id = open_session(url)
    first = post(url, rpc(5, "tools/call", {"name": "interrupted", "arguments": {"n": 6}}), session_id)
    events = events_of(first)                                   # ends early, after a retry event
    assert events[-1].retry == 25 and not events[-1].data
    seen = [m["params"]["data"] for m in messages_of(events)]
    assert seen == ["5:0", "5:1", "5:2"]
    wait_ready(handle)
    handle.app.server.add_tool(lambda: "x", name="noise")      # a standalone-stream message: never replayed here
    last = [e.id for e in events if e.id][-1]
    resumed = requests.get(url, headers={**SSE_ACCEPT, "Mcp-Session-Id": session_id, "Last-Event-ID": last},
                           timeout=10)
    assert resumed.status_code == 200
    rest = messages_of(events_of(resumed))
    assert [m.get("params", {}).get("data") for m in rest[:-1]] == ["5:3", "5:4", "5:5"]
    assert rest[-1]["id"] == 5 and rest[-1]["result"]["content"][0]["text"] == "all sent"
    # a finished stream can be replayed again from any point of it
    again = requests.get(url, headers={**SSE_ACCEPT, "Mcp-Session-Id": session_id, "Last-Event-ID": last},
                         timeout=10)
    assert messages_of(events_of(again)) == rest
    bad = requests.get(url, headers={**SSE_ACCEPT, "Mcp-Session-Id": session_id, "Last-Event-ID": "nope:1"},
                       timeout=10)
    assert bad.status_code == 400


@pytest.mark.req("TRN-22", "TRN-33")
def test_polling_disconnect_sends_retry_and_the_answer_waits_for_the_client(http):
    url = http(poll_interval=0.1, retry_interval=40, response_mode="sse").url
    session_id = open_session(url)
    response = post(url, rpc(9, "tools/call", {"name": "slow", "arguments": {"seconds": 0.4}}), session_id)
    events = events_of(response)
    assert events[0].id and events[-1].retry == 40 and not messages_of(events)
    last = events[0].id
    answer = None
    for _ in range(50):
        resumed = requests.get(url, headers={**SSE_ACCEPT, "Mcp-Session-Id": session_id, "Last-Event-ID": last},
                               timeout=10)
        evs = events_of(resumed)
        last = [e.id for e in evs if e.id][-1] if any(e.id for e in evs) else last
        found = messages_of(evs)
        if found:
            answer = found[-1]
            break
    assert answer is not None and answer["id"] == 9 and answer["result"]["content"][0]["text"] == "slept"


@pytest.mark.req("TRN-28")
def test_cancelling_a_request_ends_its_post(http):
    handle = http(response_mode="sse")
    url = handle.url
    session_id = open_session(url)
    result = {}

    def call():
        result["response"] = post(url, rpc(4, "tools/call", {"name": "slow", "arguments": {"seconds": 30}}),
                                  session_id)
    caller = threading.Thread(target=call)
    caller.start()
    wait_in_flight(handle)
    cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 4, "reason": "test"}}
    assert post(url, cancel, session_id).status_code == 202
    caller.join(5)
    assert not caller.is_alive()
    assert not [m for m in messages_of(events_of(result["response"])) if m.get("id") == 4]


# ---------------------------------------------------------------------- security checks
@pytest.mark.req("TRN-8", "TRN-9", "SEC-22")
@pytest.mark.parametrize("headers, options, status", [
    ({"Host": "evil.example"}, {}, 403),
    ({"Host": "evil.example:80"}, {}, 403),
    ({"Host": "localhost:9999"}, {}, 200),
    ({"Host": "[::1]:1"}, {}, 200),
    ({"Origin": "http://evil.example"}, {}, 403),
    ({"Origin": "null"}, {}, 403),
    ({"Origin": "http://localhost:5173"}, {}, 200),
    ({"Origin": "https://app.example"}, {"allowed_origins": ["https://app.example"]}, 200),
    ({"Origin": "http://localhost:5173"}, {"allowed_origins": ["https://app.example"]}, 403),
    ({"Host": "mcp.example:8080"}, {"allowed_hosts": ["mcp.example:*"]}, 200),
    ({"Host": "localhost"}, {"allowed_hosts": ["mcp.example"]}, 403),
])
def test_dns_rebinding_protection(http, headers, options, status):
    url = http(**options).url
    response = post(url, init_message(), headers=headers)
    assert response.status_code == status
    if status == 403:
        assert response.json()["error"]["code"] == -32600 and response.json()["id"] is None


@pytest.mark.req("TRN-17")
def test_body_size_content_type_and_json_checks(http):
    url = http(max_body=1000).url
    big = post(url, json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"x": "y" * 2000}}))
    assert big.status_code == 413
    wrong = post(url, init_message(), headers={"Content-Type": "text/plain"})
    assert wrong.status_code == 415
    bad = post(url, b"{not json")
    assert bad.status_code == 400 and bad.json()["error"]["code"] == -32700 and bad.json()["id"] is None


@pytest.mark.req("LOG-4")
def test_no_stack_trace_in_an_internal_error(http, monkeypatch):
    handle = http()

    def broken(*args, **kwargs):
        raise RuntimeError("secret internals")
    monkeypatch.setattr(handle.app, "new_session", broken)
    response = post(handle.url, init_message())
    assert response.status_code == 500
    assert "Traceback" not in response.text and "secret" not in response.text
    assert response.json()["error"]["code"] == -32603


@pytest.mark.req("TRN-7")
def test_other_methods_and_paths(http):
    handle = http()
    assert requests.put(handle.url, data="{}", headers=HEADERS, timeout=10).status_code == 405
    assert post(handle.base_url + "/elsewhere", rpc(1, "ping")).status_code == 404


# ---------------------------------------------------------------------- legacy HTTP+SSE
def test_legacy_sse_endpoint_then_messages(http):
    handle = http()
    stream = requests.get(handle.sse_url, headers=SSE_ACCEPT, stream=True, timeout=10)
    events = read_events_until(stream, lambda evs: evs)
    assert events[0].event == "endpoint" and events[0].data.startswith("/messages?session_id=")
    endpoint = handle.base_url + events[0].data
    response = requests.post(endpoint, data=json.dumps(init_message("2024-11-05")),
                             headers={"Content-Type": "application/json"}, timeout=10)
    assert response.status_code == 202
    events = read_events_until(stream, lambda evs: evs)
    assert events[0].event == "message" and json.loads(events[0].data)["result"]["protocolVersion"] == "2024-11-05"
    stream.close()
    assert requests.post(handle.base_url + "/messages?session_id=nope", data="{}", headers=HEADERS,
                         timeout=10).status_code == 404


# ---------------------------------------------------------------------- shutdown
def test_shutdown_ends_streams_sessions_and_threads():
    handle = start_http(make_server(), ("127.0.0.1", 0))
    session_id = open_session(handle.url)
    stream = requests.get(handle.url, headers={**SSE_ACCEPT, "Mcp-Session-Id": session_id}, stream=True, timeout=10)
    pending = {}

    def call():
        pending["response"] = post(handle.url, rpc(1, "tools/call", {"name": "slow", "arguments": {"seconds": 30}}),
                                   session_id)
    caller = threading.Thread(target=call)
    caller.start()
    wait_in_flight(handle)
    started = time.monotonic()
    handle.shutdown()
    assert time.monotonic() - started < 3
    caller.join(5)
    assert not caller.is_alive()
    assert stream.raw.read() is not None                   # the stream ended
    assert not [t for t in threading.enumerate() if t.name.startswith("mcp-http")]


SERVE_SCRIPT = """
from mcp_ref import Server
from mcp_ref.transports.http.server.app import serve_http
server = Server("signalled")
serve_http(server, ("127.0.0.1", 0))
print("clean exit", flush=True)
"""


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_serve_http_prints_its_url_and_ends_cleanly_on_a_signal(signum):
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.Popen([sys.executable, "-c", SERVE_SCRIPT], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env)
    try:
        selector = selectors.DefaultSelector()
        selector.register(proc.stdout, selectors.EVENT_READ)
        assert selector.select(30), "no readiness line"
        selector.close()
        line = proc.stdout.readline()
        url = line.split()[line.split().index("at") + 1]
        assert url.startswith("http://127.0.0.1:") and not url.startswith("http://127.0.0.1:0/")
        assert post(url, init_message()).status_code == 200
        proc.send_signal(signum)
        out, err = proc.communicate(timeout=15)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, err
    assert "clean exit" in out and "Traceback" not in err


def test_serve_http_off_the_main_thread_installs_no_signal_handler():
    before = signal.getsignal(signal.SIGTERM)
    started = threading.Event()
    handles = []

    def ready(handle):
        handles.append(handle)
        started.set()
    thread = threading.Thread(target=serve_http, args=(make_server(), ("127.0.0.1", 0)), kwargs={"ready": ready})
    thread.start()
    assert started.wait(10)
    assert signal.getsignal(signal.SIGTERM) is before
    assert post(handles[0].url, init_message()).status_code == 200
    handles[0].shutdown()
    thread.join(10)
    assert not thread.is_alive()


# ---------------------------------------------------------------------- pure helpers
@pytest.mark.req("TRN-36", "TRN-38")
def test_event_store_replays_one_stream_after_an_id():
    store = InMemoryEventStore(max_events=3)
    a1, b1 = store.store("a", None), store.store("b", "b-1")
    a2, a3 = store.store("a", "a-2"), store.store("a", "a-3")
    assert store.replay_after(a1) == ("a", [(a2, "a-2"), (a3, "a-3")])
    assert store.replay_after(b1) == ("b", [])
    assert store.replay_after("nope") is None and store.replay_after("c:1") is None
    store.store("a", "a-4"), store.store("a", "a-5")
    assert store.replay_after(a1) is None                     # a-2 was dropped by the bound
    store.forget("a")
    assert store.replay_after(a3) is None


def test_a_custom_event_store_is_used(http):
    class Recording(InMemoryEventStore):
        def __init__(self):
            super().__init__()
            self.stored = []

        def store(self, stream_id, message):
            self.stored.append(message)
            return super().store(stream_id, message)
    store = Recording()
    url = http(event_store=store).url
    session_id = open_session(url)
    post(url, rpc(1, "tools/call", {"name": "announce", "arguments": {"text": "kept"}}), session_id)
    assert any(getattr(m, "method", None) == "notifications/message" for m in store.stored)


def test_sse_format_and_parse_round_trip():
    data = format_event('{"a": 1}', id="s:1", retry=500) + format_comment("hi") + \
        format_event("two\nlines", event="endpoint") + format_event("", id="s:2")
    parser = EventParser()
    events = parser.feed(data[:7]) + parser.feed(data[7:].replace(b"\n", b"\r\n"))
    assert [(e.id, e.event, e.data, e.retry) for e in events] == [
        ("s:1", "message", '{"a": 1}', 500), (None, "endpoint", "two\nlines", None), ("s:2", "message", "", None)]
    assert parser.last_event_id == "s:2"
    assert split_event_id("abc:12") == ("abc", 12) and split_event_id("abc") is None
    with pytest.raises(ValueError):
        format_event("x", id="bad\nid")


def test_a_reply_holding_a_lone_surrogate_is_answered_internal_error(http):
    """The unknown tool's name is echoed in the -32602 message; a lone surrogate there
    cannot be written as UTF-8, so the answer is -32603 (jsonrpc/messages.py rule 7), not a
    connection dropped without an answer. The session goes on."""
    url = http().url
    session_id = open_session(url)
    response = post(url, '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"\\udce9","arguments":{}}}',
                    session_id)
    assert response.status_code == 200
    reply = response.json() if response.headers["Content-Type"] == "application/json" \
        else messages_of(events_of(response))[-1]
    assert reply["id"] == 1 and reply["error"]["code"] == -32603 and "lone surrogate" in reply["error"]["message"]
    assert post(url, rpc(2, "ping"), session_id).json() == {"jsonrpc": "2.0", "id": 2, "result": {}}
