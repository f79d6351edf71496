"""The HTTP clients against a server that misbehaves on purpose (tests/hostile_http_server.py),
with a second listener on another port playing the foreign origin.

Every client carries ``Authorization`` and ``X-Api-Key`` headers. After each test
the fixture checks that the foreign listener received nothing at all (so no
header, session id or body reached it) and that every connection the client
opened has been closed; the autouse thread check (conftest) finds no ``mcp-*``
thread left. Every wait is bounded by a timeout the test sets; nothing asserts
how long anything took (lower bounds on reconnection gaps only: load can only
lengthen them).

Spec: basic/transports#streamable-http, #session-management,
#resumability-and-redelivery; 2024-11-05 basic/transports#http-with-sse;
security_best_practices.
"""
import threading
import tracemalloc
import types

import pytest

requests = pytest.importorskip("requests", reason="the HTTP client needs requests")

from helpers import run_in_thread  # noqa: E402
from hostile_http_server import WAIT, HostileServer, bad_session_id  # noqa: E402
from mcp_ref import Client, ConnectionClosed, McpError, RequestTimeout  # noqa: E402
from mcp_ref.transports.http.sse import EventParser  # noqa: E402
from mcp_ref.transports.http.client.streams import MIN_RETRY  # noqa: E402
from mcp_ref.transports.http.client.exchange import scope as exchange_scope  # noqa: E402
from mcp_ref.transports.http.client.common import (HttpError, RedirectRefused, ResponseTooLarge,  # noqa: E402
                                            SessionExpired)

SECRETS = {"Authorization": "Bearer top-secret", "X-Api-Key": "key-123"}
MiB = 1 << 20


@pytest.fixture
def hostile():
    server, foreign = HostileServer("hostile"), HostileServer("foreign")
    server.foreign = foreign
    yield server
    try:
        assert foreign.seen == [], f"the foreign origin received {foreign.seen}"
        assert server.wait_idle(WAIT), f"{server.open} connection(s) left open by the client"
    finally:
        server.close()
        foreign.close()


def http(url: str, **options) -> Client:
    options.setdefault("timeout", WAIT)
    return Client.http(url, headers=SECRETS, **options)


def legacy(url: str, **options) -> Client:
    options.setdefault("timeout", WAIT)
    return Client.sse(url, headers=SECRETS, **options)


def text(result) -> str:
    return result.content[0].text


def bounded(fn, *args, **kwargs):
    """Run ``fn`` on a thread and return what it returned or raise what it raised; a hang
    fails the test after WAIT seconds instead of hanging the run."""
    thread, outcome = run_in_thread(fn, *args, **kwargs)
    kind, value = outcome.get(timeout=WAIT)
    thread.join(WAIT)
    if kind == "error":
        raise value
    return value


def open_client(client: Client) -> Client:
    client.__enter__()
    return client


def foreign_origin(server: HostileServer) -> str:
    return f"http://127.0.0.1:{server.foreign.port}"


# ---------------------------------------------------------------------- 6. redirects
def test_a_redirected_call_to_another_origin_is_refused_and_sends_nothing_there(hostile):
    with http(hostile.url("redirect-call-foreign")) as client:
        with pytest.raises(RedirectRefused) as info:
            client.call_tool("echo", {"text": "the body"})
        assert info.value.status == 307 and info.value.location == foreign_origin(hostile)
        assert foreign_origin(hostile) in str(info.value) and "another origin" in str(info.value)
        assert [t.name for t in client.list_tools()] == ["echo"]            # the session goes on


@pytest.mark.parametrize("connect", [http, lambda url: Client.connect(url, headers=SECRETS, timeout=WAIT)],
                         ids=["http", "connect"])
def test_a_redirected_initialize_adopts_no_foreign_session(hostile, connect):
    client = connect(hostile.url("redirect-init-foreign"))
    with pytest.raises(RedirectRefused) as info:
        client.__enter__()
    assert info.value.status == 308 and info.value.location == foreign_origin(hostile)
    transport = client.transport
    assert getattr(transport, "inner", transport).session_id is None


def test_a_same_origin_redirect_is_followed_with_method_body_and_headers(hostile):
    with http(hostile.url("redirect-call-same")) as client:
        assert text(client.call_tool("echo", {"text": "moved"})) == "hostile says moved"
    first, moved = hostile.requests("POST", "tools/call")
    assert first.path.endswith("/redirect-call-same/mcp") and moved.path == "/ok/moved"
    assert moved.body == first.body
    for name in ("authorization", "x-api-key", "mcp-session-id", "mcp-protocol-version"):
        assert moved.headers[name] == first.headers[name]


def test_a_302_for_a_post_is_refused_rather_than_turned_into_a_get(hostile):
    with http(hostile.url("redirect-call-302")) as client:
        with pytest.raises(RedirectRefused) as info:
            client.call_tool("echo", {"text": "x"})
        assert info.value.status == 302 and "GET" in str(info.value)
        assert client.ping() is None
    assert not [s for s in hostile.seen if s.path.startswith("/ok/")]


def test_redirects_are_followed_a_bounded_number_of_times(hostile):
    with http(hostile.url("redirect-loop")) as client:
        with pytest.raises(RedirectRefused) as info:
            client.call_tool("echo", {"text": "x"})
        assert "more than 5 redirects" in str(info.value)
    assert len(hostile.requests("POST", "tools/call")) == 6


def test_a_session_id_on_a_redirect_is_never_adopted(hostile):
    with http(hostile.url("redirect-init-with-session")) as client:
        assert client.transport.session_id == "hostile-session-1"
        client.ping()
    assert not [s for s in hostile.seen if s.headers.get("mcp-session-id") == "fixated"]


def test_a_get_stream_redirected_to_another_origin_is_not_opened(hostile):
    with http(hostile.url("redirect-get-foreign")) as client:
        assert client.transport.get_status == 307
        assert text(client.call_tool("echo", {"text": "still"})) == "hostile says still"


def test_a_delete_redirected_to_another_origin_is_not_followed(hostile):
    client = open_client(http(hostile.url("redirect-delete-foreign")))
    client.close()
    assert len(hostile.requests("DELETE")) == 1


def test_legacy_posts_redirected_to_another_origin_are_refused(hostile):
    client = legacy(hostile.sse_url("legacy-redirect-post-foreign"))
    with pytest.raises(RedirectRefused) as info:
        client.__enter__()
    assert info.value.status == 307 and info.value.location == foreign_origin(hostile)


def test_a_legacy_stream_redirected_to_another_origin_is_refused(hostile):
    with pytest.raises(RedirectRefused) as info:
        legacy(hostile.sse_url("legacy-redirect-sse-foreign"))
    assert info.value.status == 302 and info.value.location == foreign_origin(hostile)


def test_a_legacy_endpoint_on_another_origin_is_refused(hostile):
    with pytest.raises(HttpError) as info:
        legacy(hostile.sse_url("legacy-endpoint-foreign"))
    assert "origin" in str(info.value) and foreign_origin(hostile) in str(info.value)


# ---------------------------------------------------------------------- 7. stalls
def test_an_initialize_never_answered_ends_by_init_timeout(hostile):
    client = http(hostile.url("stall-init"), init_timeout=1)
    with pytest.raises(HttpError) as info:
        bounded(client.__enter__)
    assert info.value.status is None and "timed out" in str(info.value)


def test_an_initialize_answer_trickled_ends_by_init_timeout(hostile):
    client = http(hostile.url("stall-init-body"), init_timeout=1)
    with pytest.raises(HttpError) as info:
        bounded(client.__enter__)
    assert "timed out" in str(info.value)


def test_a_notification_never_answered_ends_by_timeout(hostile):
    client = http(hostile.url("stall-initialized"), timeout=1)
    with pytest.raises(HttpError) as info:
        bounded(client.__enter__)
    assert "timed out" in str(info.value)


@pytest.mark.parametrize("behaviour", ["stall-call", "trickle-call"])
def test_a_call_that_stalls_times_out_and_its_connection_is_cut(hostile, behaviour):
    with http(hostile.url(behaviour)) as client:
        with pytest.raises(RequestTimeout):
            bounded(client.call_tool, "echo", {"text": "x"}, timeout=1)
        assert hostile.wait_for(lambda s: ("hangup", f"/{behaviour}/mcp") in s.notes)
        assert [t.name for t in client.list_tools()] == ["echo"]


@pytest.mark.parametrize("behaviour", ["stall-call", "trickle-call"])
def test_close_ends_a_call_waiting_for_its_answer_at_once(hostile, behaviour):
    client = open_client(http(hostile.url(behaviour)))
    thread, outcome = run_in_thread(client.call_tool, "echo", {"text": "x"})
    assert hostile.wait_for(lambda s: s.requests("POST", "tools/call"))
    client.close()
    kind, error = outcome.get(timeout=WAIT)
    assert kind == "error" and isinstance(error, ConnectionClosed)
    thread.join(WAIT)
    assert not [t for t in threading.enumerate() if t.name.startswith("mcp-http")]


def test_an_exchange_leaves_no_deadline_thread_behind_once_its_block_ends():
    client = types.SimpleNamespace(_lock=threading.Lock())
    for _ in range(50):
        with exchange_scope(client, 60):
            assert [t for t in threading.enumerate() if t.name == "mcp-http-deadline"]
        assert not [t for t in threading.enumerate() if t.name == "mcp-http-deadline"]


def test_a_legacy_post_never_answered_ends_by_timeout(hostile):
    with legacy(hostile.sse_url("legacy-stall-post"), timeout=1) as client:
        with pytest.raises(HttpError) as info:
            bounded(client.call_tool, "echo", {"text": "x"})
        assert "timed out" in str(info.value)
        assert [t.name for t in client.list_tools()] == ["echo"]


def test_a_legacy_stream_never_answered_ends_by_endpoint_timeout(hostile):
    with pytest.raises(HttpError) as info:
        bounded(legacy, hostile.sse_url("legacy-stall-sse"), endpoint_timeout=1)
    assert "timed out" in str(info.value)


# ---------------------------------------------------------------------- 8. reconnect storms
def _gaps(seen) -> list:
    return [b.at - a.at for a, b in zip(seen, seen[1:])]


def test_a_get_stream_ending_at_once_is_reopened_with_growing_waits(hostile):
    with http(hostile.url("storm-get")):
        assert hostile.wait_for(lambda s: len(s.requests("GET")) >= 4)
    gaps = _gaps(hostile.requests("GET"))[:3]
    for i, gap in enumerate(gaps):                      # retry: 0 is floored, then doubles
        assert gap >= MIN_RETRY * 2 ** i * 0.9, gaps


def test_a_post_stream_resumed_for_ever_backs_off_until_the_timeout(hostile):
    with http(hostile.url("storm-resume")) as client:
        with pytest.raises(RequestTimeout):
            bounded(client.call_tool, "echo", {"text": "x"}, timeout=3)
        resumes = [s for s in hostile.requests("GET") if s.headers.get("last-event-id") == "s:1"]
        assert 1 <= len(resumes) <= 4                   # 0.25 + 0.5 + 1 + 2 s > 3 s
        for i, gap in enumerate(_gaps(resumes)):
            assert gap >= MIN_RETRY * 2 ** (i + 1) * 0.9


def test_a_stream_that_delivers_is_reopened_no_sooner_than_the_floor(hostile):
    notes = []
    with http(hostile.url("storm-get-messages"), on_notification=lambda m, p: notes.append(m)):
        assert hostile.wait_for(lambda s: len(s.requests("GET")) >= 4)
    assert all(gap >= MIN_RETRY * 0.9 for gap in _gaps(hostile.requests("GET")))
    assert notes


# ---------------------------------------------------------------------- 9. size bounds
def test_an_sse_event_over_the_limit_fails_the_call_at_once(hostile):
    with http(hostile.url("huge-event")) as client:
        with pytest.raises(ResponseTooLarge) as info:
            bounded(client.call_tool, "echo", {"text": "x"})
        assert info.value.limit == 16 * MiB and "16777216" in str(info.value)
        assert "max_message_size" in str(info.value)
        assert [t.name for t in client.list_tools()] == ["echo"]
    assert hostile.wait_for(lambda s: ("hangup", "/huge-event/mcp") in s.notes)


def test_a_json_body_over_the_limit_fails_the_call_at_once(hostile):
    with http(hostile.url("huge-json"), max_message_size=MiB) as client:
        with pytest.raises(ResponseTooLarge) as info:
            bounded(client.call_tool, "echo", {"text": "x"})
        assert info.value.limit == MiB and info.value.size > MiB
        assert client.ping() is None


@pytest.mark.parametrize("behaviour", ["gzip-bomb-json", "gzip-bomb-sse"])
def test_a_compression_bomb_stops_at_the_limit(hostile, behaviour):
    tracemalloc.start()
    try:
        with http(hostile.url(behaviour), max_message_size=MiB) as client:
            with pytest.raises(ResponseTooLarge):
                bounded(client.call_tool, "echo", {"text": "x"})
            peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 64 * MiB                               # the bomb inflates to 256 MiB


def test_the_event_parser_reports_an_oversized_event_at_once_and_reads_on():
    parser = EventParser(max_event_size=100)
    events = parser.feed(b"id: a\ndata: " + b"x" * 60)
    events += parser.feed(b"x" * 60)                         # past the limit inside one line: reported now
    assert [(e.oversized > 100, e.id, e.data) for e in events] == [(True, "a", "")]
    events = parser.feed(b"x" * 10_000 + b"\ndata: more\n\n: " + b"c" * 500 + b"\r")
    events += parser.feed(b"\ndata: next\r\n\r\n")
    assert [(e.data, e.oversized) for e in events] == [("next", 0)]     # the rest dropped, comments not kept
    assert parser.last_event_id == "a"


def test_gzip_answers_are_decoded_and_other_encodings_refused(hostile):
    with http(hostile.url("gzip-ok")) as client:
        assert text(client.call_tool("echo", {"text": "zipped"})) == "hostile says zipped"
    with http(hostile.url("brotli-json")) as client:
        with pytest.raises(HttpError) as info:
            client.call_tool("echo", {"text": "x"})
        assert "unsupported Content-Encoding 'br'" in str(info.value)


def test_the_limit_can_be_raised_and_applies_to_legacy_events(hostile):
    with legacy(hostile.sse_url("legacy-huge-event")) as client:        # 8 MiB under the 16 MiB default
        assert len(text(client.call_tool("echo", {"text": "x"}))) == 8 * MiB
    with legacy(hostile.sse_url("legacy-huge-event"), max_message_size=MiB) as client:
        with pytest.raises(ResponseTooLarge) as info:
            bounded(client.call_tool, "echo", {"text": "x"})
        assert info.value.limit == MiB
        assert [t.name for t in client.list_tools()] == ["echo"]
    with http(hostile.url("huge-json"), max_message_size=300 * MiB) as client:
        assert len(text(bounded(client.call_tool, "echo", {"text": "x"}))) == 200 * MiB


# ---------------------------------------------------------------------- 10. silent drops, raw echoes
@pytest.mark.parametrize("behaviour, said", [("empty-200", "HTTP 200 with an empty body"),
                                             ("accepted-202", "202 Accepted"),
                                             ("wrong-id", "a JSON body holding no response to it")])
def test_an_answer_without_the_response_fails_the_call_at_once(hostile, behaviour, said):
    with http(hostile.url(behaviour)) as client:
        with pytest.raises(HttpError) as info:
            bounded(client.call_tool, "echo", {"text": "x"})
        assert said in str(info.value) and "tools/call" in str(info.value)
        assert [t.name for t in client.list_tools()] == ["echo"]


@pytest.mark.parametrize("value", ["has space", "tab\there", "del\x7f", "caf\xe9", "\xff\xfe"],
                         ids=["space", "tab", "del", "e-acute", "ff"])
def test_a_session_id_outside_visible_ascii_is_refused(hostile, value):
    behaviour = hostile.script("bad-session-id", bad_session_id(value))
    client = http(hostile.url(behaviour))
    with pytest.raises(HttpError) as info:
        client.__enter__()
    assert "visible ASCII" in str(info.value)
    assert not [s for s in hostile.seen if "mcp-session-id" in s.headers]       # never sent back


@pytest.mark.parametrize("behaviour, code", [("null-id-error", -32600), ("null-id-error-sse", -32602)])
def test_an_error_with_a_null_id_fails_the_call_it_answers(hostile, behaviour, code):
    with http(hostile.url(behaviour)) as client:
        with pytest.raises(McpError) as info:
            bounded(client.call_tool, "echo", {"text": "x"})
        assert info.value.code == code and info.value.message == "cannot read it"
        client.ping()


@pytest.mark.parametrize("behaviour", ["batch-reply", "batch-reply-sse"])
def test_a_batch_answering_one_request_is_delivered_element_by_element(hostile, behaviour):
    notes = []
    with http(hostile.url(behaviour), on_notification=lambda m, p: notes.append(p.get("data"))) as client:
        assert text(bounded(client.call_tool, "echo", {"text": "b"})) == "hostile says b"
    assert notes == (["b"] if behaviour.endswith("sse") else [])


# ---------------------------------------------------------------------- what already worked, kept
def test_stray_answers_on_a_stream_are_kept_apart(hostile):
    with http(hostile.url("stray-answer")) as client:
        assert text(client.call_tool("echo", {"text": "mine"})) == "hostile says mine"


def test_404_re_initialization_is_bounded(hostile):
    with http(hostile.url("always-404")) as client:
        with pytest.raises(SessionExpired):
            bounded(client.call_tool, "echo", {"text": "x"})
    assert len(hostile.requests("POST", "initialize")) == 2          # the first, and one renewal
    assert len(hostile.requests("POST", "tools/call")) == 2


def test_a_reset_connection_is_a_typed_error_and_the_session_goes_on(hostile):
    with http(hostile.url("reset-call")) as client:
        with pytest.raises(HttpError) as info:
            bounded(client.call_tool, "echo", {"text": "x"})
        assert info.value.status is None
        assert text(client.call_tool("echo", {"text": "again"})) == "hostile says again"
