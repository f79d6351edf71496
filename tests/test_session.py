"""The session: two real ``Session`` objects over ``memory_pair()``, or one
session and a scripted ``RawPeer``.

Spec: basic/index (ids), basic/lifecycle#timeouts, basic/utilities/cancellation,
basic/utilities/progress, basic/utilities/ping.

The tests speak real MCP methods (``tools/call`` both ways) so that every
message the two sessions exchange is checked against the 2025-11-25
``schema.json`` when the pair closes (``Pair.__exit__``). Nothing sleeps to
wait for something: every wait is on an Event, queue or Recorder, with a
timeout that fails the test. Handlers that must "take time" pace themselves
with ``ctx.cancelled.wait(dt)``, so closing the session ends them at once.
"""
import queue
import threading
import time

import pytest

from conftest import _wire_validator
from helpers import WAIT, RawPeer, Recorder, is_method, is_reply_to, mcp_threads, run_in_thread
from mcp_ref.errors import (ConnectionClosed, InvalidParamsError, InvalidRequestError, McpError, MethodNotFoundError,
                            RequestCancelled, RequestTimeout, SessionError)
from mcp_ref.session import outbound
from mcp_ref.session import MAX_TOTAL_FACTOR, Session
from mcp_ref.transports import TapTransport, memory_pair

REVISION = "2025-11-25"


# ---------------------------------------------------------------------- fixtures
def tools(fns: dict):
    """A request handler serving ``tools/call`` from ``{name: fn(ctx, arguments)}``."""
    def handle(ctx, method, params):
        if method != "tools/call":
            raise MethodNotFoundError(f"Method not found: {method}")
        fn = fns.get(params.get("name"))
        if fn is None:
            raise InvalidParamsError(f"Unknown tool: {params.get('name')}")
        return {"content": [{"type": "text", "text": str(fn(ctx, params.get("arguments") or {}))}]}
    return handle


def call(name: str, **arguments) -> dict:
    return {"name": name, "arguments": arguments}


def text(result: dict) -> str:
    return result["content"][0]["text"]


class Pair:
    """Sessions ``a`` and ``b`` over a memory pair, each behind a recording TapTransport.

    ``a_tools``/``b_tools`` are what each side serves. ``gate()`` makes an
    Event that is set when the pair closes, so a blocked handler never
    outlives a failing test. On a clean exit the whole transcript (what
    ``a`` sent and received, i.e. everything both sessions sent) is validated.
    """

    def __init__(self, b_tools=None, a_tools=None, *, a_opts=None, b_opts=None, a_notify=None, validate=True):
        self.raw_a, self.raw_b = memory_pair()
        self.rec_a, self.rec_b = Recorder(), Recorder()
        self.a = Session(TapTransport(self.raw_a, self.rec_a), tools(a_tools or {}), a_notify, name="mcp-a",
                         **(a_opts or {}))
        self.b = Session(TapTransport(self.raw_b, self.rec_b), tools(b_tools or {}), None, name="mcp-b",
                         **(b_opts or {}))
        self.a.protocol_version = self.b.protocol_version = REVISION
        self.validate = validate
        self._gates: list = []

    def gate(self) -> threading.Event:
        event = threading.Event()
        self._gates.append(event)
        return event

    def side(self, name: str):
        """``(session, its recorder)`` by name."""
        return (self.a, self.rec_a) if name == "a" else (self.b, self.rec_b)

    def __enter__(self) -> "Pair":
        self.a.start()
        self.b.start()
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        for event in self._gates:
            event.set()
        self.a.close()
        self.b.close()
        if exc_type is None and self.validate:
            assert _wire_validator.check_transcript(self.rec_a.raw, REVISION) > 0


def request_ids(records: list, method=None) -> list:
    return [m["id"] for m in records if "method" in m and "id" in m and (method is None or m["method"] == method)]


# ---------------------------------------------------------------------- request / response
@pytest.mark.req("BASE-6")
def test_request_and_response_exact_result():
    with Pair({"echo": lambda ctx, args: f"{args['s']}|{ctx.method}|{ctx.request_id}"}) as p:
        result = p.a.request("tools/call", call("echo", s="héllo"))
        assert result == {"content": [{"type": "text", "text": "héllo|tools/call|1"}]}
        # The request on the wire, exactly.
        assert p.rec_b.received()[0] == {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                                         "params": {"name": "echo", "arguments": {"s": "héllo"}}}


@pytest.mark.req("BASE-9")
def test_error_answers_raise_the_matching_subclass_with_data():
    def bad(ctx, args):
        raise InvalidParamsError("no good", {"why": "testing"})

    with Pair({"bad": bad}) as p:
        with pytest.raises(InvalidParamsError) as info:
            p.a.request("tools/call", call("bad"))
        assert info.value.code == -32602 and info.value.data == {"why": "testing"}
        with pytest.raises(MethodNotFoundError):
            p.a.request("tools/list")


def test_handler_crash_is_a_generic_internal_error():
    def crash(ctx, args):
        raise RuntimeError("secret detail")

    with Pair({"crash": crash}) as p:
        with pytest.raises(McpError) as info:
            p.a.request("tools/call", call("crash"))
        assert info.value.code == -32603
        reply = next(m for m in p.rec_b.sent() if "error" in m)
        assert reply["error"] == {"code": -32603, "message": "Internal error"}
        assert "secret" not in str(p.rec_b.sent())
        assert p.a.request("ping") == {}


@pytest.mark.req("BASE-6")
def test_responses_out_of_order_reach_the_right_callers():
    started = queue.Queue()
    gates = {}

    def gated(ctx, args):
        started.put(args["i"])
        assert gates[args["i"]].wait(WAIT)
        return f"done {args['i']}"

    with Pair({"gated": gated}) as p:
        for i in range(4):
            gates[i] = p.gate()
        pendings = [p.a.start_request("tools/call", call("gated", i=i)) for i in range(4)]
        assert sorted(started.get(timeout=WAIT) for _ in range(4)) == [0, 1, 2, 3]
        order = [2, 0, 3, 1]
        for i in order:
            gates[i].set()
            assert text(pendings[i].result()) == f"done {i}"
        replied = [m["id"] for m in p.rec_b.sent() if "result" in m]
        assert replied == [pendings[i].id for i in order]


@pytest.mark.req("BASE-5", "PROG-2")
def test_request_ids_are_never_reused():
    def slow(ctx, args):
        ctx.cancelled.wait(WAIT)
        return "slow"

    with Pair({"echo": lambda ctx, args: args["i"], "slow": slow}, {"echo": lambda ctx, args: args["i"]}) as p:
        for i in range(20):
            assert text(p.a.request("tools/call", call("echo", i=i))) == str(i)
        with pytest.raises(RequestTimeout):
            p.a.request("tools/call", call("slow"), timeout=0.05)
        cancelled = p.a.start_request("tools/call", call("slow"))
        cancelled.cancel()
        threads = [run_in_thread(lambda k=k: [p.a.request("tools/call", call("echo", i=k * 10 + j))
                                              for j in range(10)])[1] for k in range(5)]
        for outcome in threads:
            assert outcome.get(timeout=WAIT)[0] == "ok"
        for i in range(5):
            assert text(p.b.request("tools/call", call("echo", i=i))) == str(i)
        p.a.ping()
        sent_by_a = request_ids(p.rec_a.sent())
        assert len(sent_by_a) == 20 + 2 + 50 + 1
        assert len(set(sent_by_a)) == len(sent_by_a)
        assert all(isinstance(i, int) and not isinstance(i, bool) for i in sent_by_a)
        sent_by_b = request_ids(p.rec_b.sent())
        assert len(set(sent_by_b)) == len(sent_by_b) == 5


def test_200_concurrent_calls_from_8_threads():
    barrier = threading.Barrier(8, timeout=WAIT)

    def worker(k):
        barrier.wait()
        results = []
        for j in range(25):
            n = k * 1000 + j
            results.append((n, text(p.a.request("tools/call", call("double", n=n), timeout=WAIT))))
        return results

    with Pair({"double": lambda ctx, args: args["n"] * 2}) as p:
        outcomes = [run_in_thread(worker, k)[1] for k in range(8)]
        seen = []
        for outcome in outcomes:
            status, value = outcome.get(timeout=WAIT * 2)
            assert status == "ok", value
            seen.extend(value)
        assert len(seen) == 200
        assert all(result == str(n * 2) for n, result in seen)
        assert len({n for n, _ in seen}) == 200


# ---------------------------------------------------------------------- nested requests
def _nested_pair(**options):
    def nested(ctx, args):
        # A handler calls back into the peer and waits for the answer.
        tripled = text(ctx.request("tools/call", call("triple", n=args["n"]), timeout=WAIT))
        return f"{args['n']}->{tripled}"

    def triple(ctx, args):
        ctx.request("ping", timeout=WAIT)        # and the peer's handler calls back too
        return args["n"] * 3

    return Pair({"nested": nested}, {"triple": triple}, **options)


def test_nested_request_inside_a_handler_does_not_deadlock():
    with _nested_pair() as p:
        assert text(p.a.request("tools/call", call("nested", n=7), timeout=WAIT)) == "7->21"
        # the nested request carries an id of b's own numbering, and is answered
        nested = [m for m in p.rec_b.sent() if m.get("method") == "tools/call"]
        assert nested == [{"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                           "params": {"name": "triple", "arguments": {"n": 7}}}]


@pytest.mark.parametrize("workers", [1, 2])
def test_nested_requests_with_every_worker_busy(workers):
    """With max_workers handlers all blocked on replies from the peer, and more
    calls queued behind them, the replies are still read and everything finishes."""
    with _nested_pair(a_opts={"max_workers": 1}, b_opts={"max_workers": workers}) as p:
        pendings = [p.a.start_request("tools/call", call("nested", n=n), timeout=WAIT) for n in range(6)]
        assert [text(pending.result()) for pending in pendings] == [f"{n}->{n * 3}" for n in range(6)]
        assert len(mcp_threads("mcp-b-worker")) <= workers + 1
        assert len(mcp_threads("mcp-a-worker")) <= 2


# ---------------------------------------------------------------------- timeouts
def _blocker(seen_cancel: threading.Event, started: threading.Event):
    def block(ctx, args):
        started.set()
        if ctx.cancelled.wait(WAIT):
            seen_cancel.set()
        return "finished anyway"
    return block


@pytest.mark.req("LIFE-16", "LIFE-17", "LIFE-20", "CANC-1", "SCHEMA-13", "SCHEMA-14", "CANC-2", "SCHEMA-12")
@pytest.mark.parametrize("where", ["session", "call"])
def test_timeout_raises_and_cancels_the_request_at_the_peer(where):
    seen_cancel, started = threading.Event(), threading.Event()
    a_opts = {"timeout": 0.2} if where == "session" else {}
    with Pair({"block": _blocker(seen_cancel, started)}, a_opts=a_opts) as p:
        begin = time.monotonic()
        with pytest.raises(RequestTimeout) as info:
            p.a.request("tools/call", call("block"), timeout=0.2 if where == "call" else None)
        elapsed = time.monotonic() - begin
        assert 0.15 <= elapsed < 2.0
        assert info.value.method == "tools/call" and info.value.timeout == 0.2
        request_id = request_ids(p.rec_a.sent(), "tools/call")[0]
        cancel = p.rec_b.wait_for(is_method("notifications/cancelled", "receive"), what="cancellation")
        assert cancel["params"]["requestId"] == request_id
        assert isinstance(cancel["params"].get("reason"), str)
        assert seen_cancel.wait(WAIT), "the handler never saw ctx.cancelled"
        assert p.a.request("ping") == {}


@pytest.mark.req("LIFE-18")
def test_per_call_timeout_overrides_the_session_default():
    def pause(ctx, args):
        ctx.cancelled.wait(args["seconds"])     # simulated work
        return "ok"

    with Pair({"pause": pause}, a_opts={"timeout": 0.1}) as p:
        assert text(p.a.request("tools/call", call("pause", seconds=0.3), timeout=WAIT)) == "ok"
        with pytest.raises(RequestTimeout):
            p.a.request("tools/call", call("pause", seconds=0.3))


def _ticker(ctx, args):
    """Report progress every ``every`` seconds, ``count`` times (simulated work)."""
    for i in range(1, args["count"] + 1):
        if ctx.cancelled.wait(args["every"]):
            return "cancelled"
        ctx.report_progress(i)
    return "ticked"


def test_progress_resets_the_timeout():
    with Pair({"tick": _ticker}) as p:
        begin = time.monotonic()
        result = p.a.request("tools/call", call("tick", count=10, every=0.1), timeout=0.5,
                             reset_timeout_on_progress=True, max_total_timeout=WAIT)
        assert text(result) == "ticked"
        assert time.monotonic() - begin >= 0.95          # far beyond the 0.5 s timeout
        with pytest.raises(RequestTimeout):               # without the reset: times out
            p.a.request("tools/call", call("tick", count=10, every=0.1), timeout=0.5)


@pytest.mark.req("LIFE-19")
def test_progress_reset_has_a_hard_maximum():
    with Pair({"tick": _ticker}) as p:
        begin = time.monotonic()
        with pytest.raises(RequestTimeout):
            p.a.request("tools/call", call("tick", count=10000, every=0.05), timeout=0.5,
                        reset_timeout_on_progress=True, max_total_timeout=0.8)
        elapsed = time.monotonic() - begin
        assert 0.75 <= elapsed < 2.5
        p.rec_b.wait_for(is_method("notifications/cancelled", "receive"), what="cancellation")


@pytest.mark.req("LIFE-19")
def test_progress_reset_without_a_maximum_is_capped_by_default(monkeypatch):
    assert MAX_TOTAL_FACTOR > 1
    monkeypatch.setattr(outbound, "MAX_TOTAL_FACTOR", 3)    # a 0.9 s cap keeps the test short
    timeout = 0.3
    with Pair({"tick": _ticker}) as p:
        begin = time.monotonic()
        with pytest.raises(RequestTimeout):
            p.a.request("tools/call", call("tick", count=10000, every=0.05), timeout=timeout,
                        reset_timeout_on_progress=True)
        elapsed = time.monotonic() - begin
        assert timeout * 3 - 0.05 <= elapsed < timeout * 3 + 2.0


@pytest.mark.req("PROG-2")
def test_asking_for_the_reset_attaches_a_progress_token_without_a_callback():
    tokens = queue.Queue()

    def token(ctx, args):
        tokens.put(ctx.progress_token)
        return "ok"

    with Pair({"token": token}) as p:
        pending = p.a.start_request("tools/call", {**call("token"), "_meta": {"io.example/k": 1}},
                                    reset_timeout_on_progress=True)
        pending.result()
        assert tokens.get(timeout=WAIT) == pending.id
        sent = [m for m in p.rec_a.sent() if m.get("id") == pending.id][0]
        assert sent["params"]["_meta"] == {"io.example/k": 1, "progressToken": pending.id}
        # without progress and without the reset: no token, and no _meta invented
        plain = p.a.start_request("tools/call", call("token"))
        plain.result()
        assert tokens.get(timeout=WAIT) is None
        sent = [m for m in p.rec_a.sent() if m.get("id") == plain.id][0]
        assert "_meta" not in sent["params"]


# ---------------------------------------------------------------------- cancellation
@pytest.mark.req("CANC-4", "SCHEMA-11", "CANC-2")
@pytest.mark.parametrize("caller", ["a", "b"])
def test_cancel_stops_the_handler_and_no_response_is_sent(caller):
    """The serving side has one handler thread: the second request waits in the
    backlog and runs on the same thread right after the cancelled one finished,
    so by the time it is answered the cancelled request's reply was decided."""
    started, seen_cancel = threading.Event(), threading.Event()
    served = {"block": _blocker(seen_cancel, started), "echo": lambda ctx, args: args["s"]}
    serving = "b" if caller == "a" else "a"
    options = {f"{serving}_opts": {"max_workers": 1}}
    with Pair(served if serving == "b" else None, served if serving == "a" else None, **options) as p:
        session, _ = p.side(caller)
        _, serving_rec = p.side(serving)
        first = session.start_request("tools/call", call("block"))
        assert started.wait(WAIT)
        second = session.start_request("tools/call", call("echo", s="after"))
        first.cancel("user pressed stop")
        with pytest.raises(RequestCancelled):
            first.result()
        assert seen_cancel.wait(WAIT), "the handler's ctx.cancelled was never set"
        assert text(second.result()) == "after"
        cancel = serving_rec.wait_for(is_method("notifications/cancelled", "receive"))
        assert cancel["params"] == {"requestId": first.id, "reason": "user pressed stop"}
        assert not [m for m in serving_rec.sent() if is_reply_to(first.id)("send", m)], \
            "a response was sent for a cancelled request"


_RAW_RECORDERS: list = []


@pytest.fixture(autouse=True)
def _validate_what_raw_sessions_sent():
    """Everything a session sent to a RawPeer in a test must validate too."""
    _RAW_RECORDERS.clear()
    yield
    for recorder in _RAW_RECORDERS:
        for message in recorder.sent():
            _wire_validator.check(message, REVISION)


def _raw_session(handler=None, notify=None, **options):
    """A session on one end, a RawPeer on the other; what the session sends is
    recorded and validated after the test."""
    peer_end, session_end = memory_pair()
    recorder = Recorder()
    _RAW_RECORDERS.append(recorder)
    session = Session(TapTransport(session_end, recorder), handler or tools({}), notify, name="mcp-raw", **options)
    session.protocol_version = REVISION
    return RawPeer(peer_end), session.start(), recorder


@pytest.mark.req("CANC-5", "CANC-6")
@pytest.mark.parametrize("how", ["cancel", "timeout"])
def test_late_response_after_the_caller_gave_up_is_ignored(how):
    peer, session, recorder = _raw_session()
    try:
        pending = session.start_request("tools/call", call("x"), timeout=0.1 if how == "timeout" else WAIT)
        request = peer.recv()
        assert request["method"] == "tools/call" and request["id"] == pending.id
        if how == "cancel":
            pending.cancel()
        with pytest.raises(RequestCancelled if how == "cancel" else RequestTimeout):
            pending.result()
        cancel = peer.recv()
        assert cancel["method"] == "notifications/cancelled" and cancel["params"]["requestId"] == pending.id
        if how == "timeout":
            assert "timed out" in cancel["params"]["reason"]
        else:
            assert "reason" not in cancel["params"]
        # the late answer, and an answer to an id never used, are dropped
        peer.send({"jsonrpc": "2.0", "id": pending.id, "result": {"content": [], "late": True}})
        peer.send({"jsonrpc": "2.0", "id": 999, "result": {}})
        peer.send({"jsonrpc": "2.0", "id": pending.id, "error": {"code": -1, "message": "late"}})
        later = session.start_request("tools/call", call("y"))
        request = peer.recv()
        assert request["id"] == later.id != pending.id
        peer.send({"jsonrpc": "2.0", "id": later.id, "result": {"content": [{"type": "text", "text": "fresh"}]}})
        assert text(later.result()) == "fresh"
        with pytest.raises(SessionError):       # still failed, never the late result
            pending.result()
        assert not session.closed
    finally:
        session.close()


@pytest.mark.req("CANC-2", "SCHEMA-12")
def test_outbound_initialize_is_never_cancelled():
    peer, session, recorder = _raw_session()
    try:
        init = {"protocolVersion": REVISION, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
        pending = session.start_request("initialize", init)
        assert peer.recv()["method"] == "initialize"
        pending.cancel("changed my mind")
        with pytest.raises(RequestCancelled):
            pending.result()
        with pytest.raises(RequestTimeout):
            session.request("initialize", init, timeout=0.05)
        assert peer.recv()["method"] == "initialize"
        session.start_request("ping")
        # the next thing on the wire is the ping: no notifications/cancelled went out
        assert peer.recv()["method"] == "ping"
    finally:
        session.close()


@pytest.mark.req("CANC-2", "CANC-6")
def test_inbound_initialize_is_never_cancelled():
    started, release = threading.Event(), threading.Event()
    seen = {}

    def handler(ctx, method, params):
        if method == "initialize":
            seen["ctx"] = ctx
            started.set()
            assert release.wait(WAIT)
            return {"cancelled": ctx.cancelled.is_set()}
        raise MethodNotFoundError(method)

    peer, session, _ = _raw_session(handler)
    try:
        peer.send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {}})
        assert started.wait(WAIT)
        peer.notify("notifications/cancelled", {"requestId": 0, "reason": "no"})
        peer.ping()                      # read after the cancellation, so it was processed
        assert not seen["ctx"].cancelled.is_set()
        release.set()
        assert peer.recv_reply(0) == {"jsonrpc": "2.0", "id": 0, "result": {"cancelled": False}}
    finally:
        release.set()
        session.close()


MALFORMED_CANCELS = [
    {"requestId": 999},
    {"requestId": "1"},                 # a string is not the integer id 1
    {"requestId": True},
    {"requestId": None},
    {"requestId": 1.0},
    {"requestId": [1]},
    {"requestId": {"id": 1}},
    {"reason": "no id"},
    {},
    None,                               # no params at all
]


@pytest.mark.req("CANC-6", "CANC-9")
def test_unknown_and_malformed_cancellations_are_ignored():
    started, release = threading.Event(), threading.Event()
    seen = {}

    def block(ctx, args):
        seen["ctx"] = ctx
        started.set()
        assert release.wait(WAIT)
        return f"cancelled={ctx.cancelled.is_set()}"

    peer, session, _ = _raw_session(tools({"block": block}))
    try:
        peer.send({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": call("block")})
        assert started.wait(WAIT)
        for params in MALFORMED_CANCELS:
            peer.notify("notifications/cancelled", params)
        peer.ping()
        peer.assert_silent()                # no answers to notifications
        assert not seen["ctx"].cancelled.is_set()
        assert not session.closed
        release.set()
        reply = peer.recv_reply(1)
        assert reply["result"]["content"][0]["text"] == "cancelled=False"
        # a cancellation after completion is ignored too
        peer.notify("notifications/cancelled", {"requestId": 1})
        peer.ping("after")
        peer.assert_silent()
    finally:
        release.set()
        session.close()


# ---------------------------------------------------------------------- progress
@pytest.mark.req("PROG-4")
def test_progress_callbacks_arrive_in_order_before_the_result():
    def report(ctx, args):
        for i in range(1, args["n"] + 1):
            ctx.report_progress(i * 0.5, total=args["n"] * 0.5, message=f"step {i}")
        return "reported"

    with Pair({"report": report}) as p:
        for _ in range(5):
            calls, threads = [], set()

            def on_progress(progress, total, message):
                calls.append((progress, total, message))
                threads.add(threading.current_thread().name)

            result = p.a.request("tools/call", call("report", n=40), on_progress=on_progress)
            snapshot = list(calls)               # what the callback saw when request() returned
            assert text(result) == "reported"
            assert snapshot == [(i * 0.5, 20.0, f"step {i}") for i in range(1, 41)]
            assert threads == {"mcp-a-notify"}   # never the reader, never the caller


@pytest.mark.req("PROG-3")
def test_non_increasing_progress_raises_in_the_handler():
    def report(ctx, args):
        ctx.report_progress(1)
        errors = []
        for value in (1, 0.5, -1):
            try:
                ctx.report_progress(value)
            except ValueError as exc:
                errors.append(str(exc))
        ctx.report_progress(1.5)
        return len(errors)

    with Pair({"report": report}) as p:
        calls = []
        result = p.a.request("tools/call", call("report"), on_progress=lambda *a: calls.append(a[0]))
        assert text(result) == "3"
        assert calls == [1, 1.5]
        sent = [m["params"]["progress"] for m in p.rec_b.sent() if m.get("method") == "notifications/progress"]
        assert sent == [1, 1.5]


@pytest.mark.req("PROG-5", "PROG-11")
def test_no_progress_is_sent_after_the_request_completed():
    kept = []

    def keep(ctx, args):
        kept.append(ctx)
        ctx.report_progress(1)
        return "done"

    with Pair({"keep": keep}) as p:
        calls = []
        p.a.request("tools/call", call("keep"), on_progress=lambda *a: calls.append(a[0]))
        kept[0].report_progress(2)            # too late: the request has completed
        kept[0].report_progress(3, total=3)
        p.a.ping()
        progress = [m for m in p.rec_b.sent() if m.get("method") == "notifications/progress"]
        assert [m["params"]["progress"] for m in progress] == [1]
        assert calls == [1]


@pytest.mark.req("PROG-1")
@pytest.mark.parametrize("token", ["tok-1", "", "007", 7, 0, -3, 2 ** 60])
def test_progress_token_is_echoed_exactly(token):
    def report(ctx, args):
        ctx.report_progress(1, total=2)
        return "ok"

    peer, session, _ = _raw_session(tools({"report": report}))
    try:
        peer.send({"jsonrpc": "2.0", "id": "r1", "method": "tools/call",
                   "params": {**call("report"), "_meta": {"progressToken": token}}})
        progress = peer.recv()
        assert progress["method"] == "notifications/progress"
        assert progress["params"] == {"progressToken": token, "progress": 1, "total": 2}
        assert type(progress["params"]["progressToken"]) is type(token)
        assert peer.recv()["id"] == "r1"
    finally:
        session.close()


@pytest.mark.req("PROG-1")
@pytest.mark.parametrize("token", [True, 1.5, None, [1], {"t": 1}])
def test_an_invalid_progress_token_gets_no_progress(token):
    tokens = []

    def report(ctx, args):
        tokens.append(ctx.progress_token)
        ctx.report_progress(1)
        return "ok"

    peer, session, _ = _raw_session(tools({"report": report}))
    try:
        peer.send({"jsonrpc": "2.0", "id": 5, "method": "tools/call",
                   "params": {**call("report"), "_meta": {"progressToken": token}}})
        first = peer.recv()
        assert first.get("id") == 5 and "result" in first, first     # the answer, no progress before it
        assert tokens == [None]
    finally:
        session.close()


@pytest.mark.req("PROG-9", "PROG26-6")
def test_incoming_progress_for_unknown_or_finished_tokens_is_ignored():
    done = threading.Event()
    notes, calls = [], []

    def on_notification(method, params):
        notes.append(method)
        if method == "notifications/message":
            done.set()

    peer, session, _ = _raw_session(notify=on_notification)
    try:
        pending = session.start_request("tools/call", call("x"), on_progress=lambda *a: calls.append(a))
        request = peer.recv()
        token = request["params"]["_meta"]["progressToken"]
        assert token == pending.id
        progress = lambda value, tok=token: peer.notify("notifications/progress",  # noqa: E731
                                                        {"progressToken": tok, "progress": value})
        progress(1)
        progress(5, tok=token + 1000)          # unknown token
        progress(6, tok=True)                  # not a token
        progress(7, tok=str(token) + "x")
        progress(2)
        peer.send({"jsonrpc": "2.0", "id": pending.id, "result": {"content": []}})
        assert pending.result() == {"content": []}
        progress(3)                            # after completion
        peer.notify("notifications/message", {"level": "info", "data": "marker"})
        assert done.wait(WAIT)                 # wire order on the notify thread: 3 was dropped before this
        assert calls == [(1, None, None), (2, None, None)]
        assert notes == ["notifications/message"]
    finally:
        session.close()


# ---------------------------------------------------------------------- ping
@pytest.mark.req("PING-1")
@pytest.mark.parametrize("pinger", ["a", "b"])
def test_ping_is_answered_promptly_while_every_handler_is_blocked(pinger):
    started = queue.Queue()

    def block(ctx, args):
        started.put(args["i"])
        assert gate.wait(WAIT)
        return "released"

    served = {"block": block}
    other = "b" if pinger == "a" else "a"
    with Pair(served if other == "b" else None, served if other == "a" else None,
              **{f"{other}_opts": {"max_workers": 2}}) as p:
        gate = p.gate()
        session, rec = p.side(pinger)
        _, other_rec = p.side(other)
        pendings = [session.start_request("tools/call", call("block", i=i)) for i in range(5)]
        started.get(timeout=WAIT)
        started.get(timeout=WAIT)                # both handler threads are now blocked
        begin = time.monotonic()
        assert session.request("ping", timeout=1.0) == {}
        assert time.monotonic() - begin < 1.0
        ping_id = request_ids(rec.sent(), "ping")[0]
        assert other_rec.wait_for(is_reply_to(ping_id, "send")) == {"jsonrpc": "2.0", "id": ping_id, "result": {}}
        assert started.empty()                   # still blocked: the ping did not need a handler
        gate.set()
        assert [text(pending.result()) for pending in pendings] == ["released"] * 5


def test_a_blocked_handler_does_not_stop_the_reader():
    """Rule 1 (session/pool.py P3): a handler run on the reading thread that blocks loses the
    reading role at the standby's next check, so a second request is read (and served)
    while the first one's handler waits for it."""
    opened = threading.Event()

    def gate(ctx, args):
        return "opened" if opened.wait(WAIT) else "stuck"

    def release(ctx, args):
        opened.set()
        return "released"

    with Pair({"gate": gate, "release": release}) as p:
        waiting = p.a.start_request("tools/call", call("gate"), timeout=WAIT)
        assert text(p.a.request("tools/call", call("release"), timeout=WAIT)) == "released"
        assert text(waiting.result()) == "opened"


def test_the_standby_takes_reading_from_a_slow_job_and_remembers_its_key():
    """session/pool.py P3: a job run on the reading thread that is still running at the
    standby's check loses reading to a worker (``done`` then says so); a job of the same
    key is queued for a worker, another key still runs here; once a job of the slow key
    ran fast on a worker, the key runs here again."""
    from mcp_ref.session.pool import Pool
    handed = threading.Event()
    pool = Pool("mcp-test-standby", 4)
    slow = lambda: handed.wait(WAIT)                          # noqa: E731
    slow.key = ("tools/call", "slow")
    again = lambda: None                                      # noqa: E731
    again.key = slow.key
    fast = lambda: None                                       # noqa: E731
    fast.key = ("tools/call", "fast")
    try:
        assert pool.here(slow, handed.set) is True
        assert slow() and pool.done(slow) is False            # a worker read on (it set handed)
        assert pool.here(again, handed.set) is False          # queued: the key is known slow
        assert pool.here(fast, handed.set) is True
        fast()
        assert pool.done(fast) is True
        deadline = time.monotonic() + WAIT
        while again.key in pool._slow and time.monotonic() < deadline:
            time.sleep(0.01)                                  # a worker runs ``again``, fast
        assert pool.here(again, handed.set) is True           # forgotten: it ran fast on a worker
        again()
        assert pool.done(again) is True
    finally:
        pool.stop()
        for thread in pool.threads():
            thread.join(WAIT)


@pytest.mark.req("PING-2", "PING-3", "PING-6", "PING-7")
def test_periodic_ping_closes_the_session_when_the_peer_stops_answering():
    peer, session, _ = _raw_session(ping_interval=0.2)
    try:
        pending = session.start_request("tools/call", call("x"), timeout=WAIT)
        assert peer.recv()["method"] == "tools/call"
        ping = peer.recv()
        assert ping["method"] == "ping" and "id" in ping          # never answered
        assert session.wait_closed(WAIT), "the session stayed open without ping answers"
        assert "ping" in str(session.close_error)
        with pytest.raises(ConnectionClosed):
            pending.result()
        peer.expect_closed()
    finally:
        session.close()


@pytest.mark.req("PING-2", "PING-3")
def test_periodic_ping_keeps_a_live_session_open():
    with Pair(a_opts={"ping_interval": 0.1}) as p:
        pings = p.rec_b.wait_count(is_method("ping", "receive"), 3, what="pings")
        for ping in pings[:2]:
            p.rec_a.wait_for(is_reply_to(ping["id"], "receive"))
        assert not p.a.closed and not p.b.closed


# ---------------------------------------------------------------------- close
def test_close_fails_every_pending_request_once_and_cancels_the_peer():
    started = queue.Queue()
    cancelled = queue.Queue()

    def block(ctx, args):
        started.put(args["i"])
        if ctx.cancelled.wait(WAIT):
            cancelled.put(args["i"])
        return "never seen"

    closes = []
    with Pair({"block": block}, a_opts={"on_close": closes.append}) as p:
        pendings = [p.a.start_request("tools/call", call("block", i=i)) for i in range(5)]
        for _ in range(5):
            started.get(timeout=WAIT)
        waiters = [run_in_thread(pending.result)[1] for pending in pendings]
        p.a.close()
        for outcome in waiters:
            status, error = outcome.get(timeout=WAIT)
            assert status == "error" and isinstance(error, ConnectionClosed), error
            assert outcome.empty()
        assert sorted(cancelled.get(timeout=WAIT) for _ in range(5)) == list(range(5))
        assert p.b.wait_closed(WAIT)             # the peer saw the connection go
        p.a.close()                              # idempotent
        assert closes == [p.a]
        with pytest.raises(ConnectionClosed):
            p.a.request("ping")
        with pytest.raises(ConnectionClosed):
            p.a.notify("notifications/message", {"level": "info", "data": "x"})
        p.b.close()
        assert mcp_threads("mcp-a") == [] and mcp_threads("mcp-b") == []


def test_closing_the_serving_side_cancels_its_inbound_requests():
    started, seen_cancel = threading.Event(), threading.Event()
    with Pair({"block": _blocker(seen_cancel, started)}) as p:
        pending = p.a.start_request("tools/call", call("block"))
        assert started.wait(WAIT)
        p.b.close()
        assert seen_cancel.wait(WAIT)
        with pytest.raises(ConnectionClosed):
            pending.result()
        assert p.a.wait_closed(WAIT)
        assert not [m for m in p.rec_b.sent() if "result" in m]
    assert mcp_threads("mcp-a") == [] and mcp_threads("mcp-b") == []


def test_no_session_threads_survive_close_after_heavy_use():
    with _nested_pair(a_opts={"max_workers": 4, "ping_interval": 0.05}, b_opts={"max_workers": 4}) as p:
        calls = []
        pendings = [p.a.start_request("tools/call", call("nested", n=n), on_progress=lambda *a: calls.append(a))
                    for n in range(20)]
        for pending in pendings:
            pending.result()
        assert mcp_threads("mcp-a") and mcp_threads("mcp-b")
    assert mcp_threads("mcp-a") == [] and mcp_threads("mcp-b") == []


class _GatedTransport:
    """Holds back the first notification it reads until ``release`` is set."""

    def __init__(self, inner):
        self.inner = inner
        self.reached, self.release = threading.Event(), threading.Event()

    def send(self, message, related_id=None):
        self.inner.send(message, related_id)

    def receive(self):
        message = self.inner.receive()
        if getattr(message, "method", "").startswith("notifications/") and not self.reached.is_set():
            self.reached.set()
            assert self.release.wait(WAIT)
        return message

    def close(self):
        self.inner.close()


@pytest.mark.parametrize("what", ["notification", "progress"])
def test_a_message_read_while_the_session_closes_leaves_no_thread_behind(what):
    """The reader routes a message that needs the notify thread after close()
    already stopped the helpers: the helper it starts must stop too."""
    peer_end, session_end = memory_pair()
    peer = RawPeer(peer_end)
    gated = _GatedTransport(session_end)
    session = Session(gated, tools({}), lambda method, params: None, name="mcp-gated").start()
    if what == "progress":
        session.start_request("tools/call", call("x"), on_progress=lambda *a: None, timeout=WAIT)
        token = peer.recv()["params"]["_meta"]["progressToken"]
        peer.notify("notifications/progress", {"progressToken": token, "progress": 1})
    else:
        peer.notify("notifications/message", {"level": "info", "data": "late"})
    assert gated.reached.wait(WAIT)
    closer, outcome = run_in_thread(session.close)
    assert session.wait_closed(WAIT)
    gated.release.set()
    assert outcome.get(timeout=WAIT)[0] == "ok"
    for thread in mcp_threads("mcp-gated"):
        thread.join(WAIT)
    assert mcp_threads("mcp-gated") == []


@pytest.mark.req("BASE-7")
def test_a_handler_returning_a_non_object_is_an_internal_error_not_an_invalid_result():
    """``result`` must be an object on the wire; a handler bug must not put
    ``"result": null`` there (the peer would reject the frame and never match it)."""
    results = {"none": None, "list": [1, 2], "text": "ok"}

    def handler(ctx, method, params):
        return results[params["name"]]

    peer, session, _ = _raw_session(handler)
    try:
        for request_id, name in enumerate(results, 1):
            reply = peer.request(request_id, "tools/call", {"name": name})
            assert reply == {"jsonrpc": "2.0", "id": request_id,
                             "error": {"code": -32603, "message": "Internal error"}}, reply
        peer.ping()
    finally:
        session.close()


def test_a_malformed_response_is_not_answered_with_its_id():
    """The peer (which, like us, numbers its requests from 1) sends a malformed
    answer to our request 1. Whatever we do about it, we must not send back an
    error with id 1: the peer would take it as the answer to *its* request 1."""
    peer_end, session_end = memory_pair()
    peer = RawPeer(peer_end)
    session = Session(session_end, tools({}), name="mcp-raw").start()
    try:
        pending = session.start_request("tools/call", call("x"), timeout=WAIT)
        assert peer.recv()["id"] == pending.id == 1
        peer.send('{"jsonrpc":"2.0","id":1,"result":"not an object"}')
        peer.send('{"jsonrpc":"2.0","id":2,"error":{"code":"x","message":"m"}}')
        peer.send('{"jsonrpc":"2.0","id":3,"result":{},"error":{"code":1,"message":"both"}}')
        skipped: list = []
        peer.send({"jsonrpc": "2.0", "id": "p", "method": "ping"})
        peer.recv_reply("p", skipped=skipped)
        answers = [m for m in skipped if isinstance(m, dict) and "method" not in m]
        assert not [m for m in answers if m.get("id") in (1, 2, 3)], answers
        with pytest.raises(InvalidRequestError, match="malformed response"):
            pending.result()                         # failed at once, not left to time out
    finally:
        session.close()


def test_on_cancel_callbacks_run_once_when_the_peer_cancels_or_the_session_closes():
    """calls.RequestContext.on_cancel: how library waits wake without polling."""
    started = threading.Event()
    release = {"by-peer": threading.Event(), "by-close": threading.Event()}
    fired: list = []
    contexts: dict = {}

    def handler(ctx, method, params):
        contexts[method] = ctx
        ctx.on_cancel(lambda: fired.append((method, "first")))
        ctx.on_cancel(lambda: fired.append((method, "second")))
        started.set()
        release[method].wait(WAIT)
        return {}
    ours, theirs = memory_pair()
    session = Session(ours, handler).start()
    peer = RawPeer(theirs)
    try:
        peer.send({"jsonrpc": "2.0", "id": 1, "method": "by-peer"})
        assert started.wait(WAIT)
        peer.notify("notifications/cancelled", {"requestId": 1})
        peer.ping()                                # the cancellation has been routed
        assert fired == [("by-peer", "first"), ("by-peer", "second")]
        contexts["by-peer"].on_cancel(lambda: fired.append(("by-peer", "late")))   # already cancelled: at once
        assert fired[-1] == ("by-peer", "late")
        started.clear()
        peer.send({"jsonrpc": "2.0", "id": 2, "method": "by-close"})
        assert started.wait(WAIT)
        release["by-peer"].set()                   # the first handler may finish; the second waits
        session._on_close("closing")               # cancels what is in flight
        assert ("by-close", "first") in fired and ("by-close", "second") in fired
        assert len(fired) == 5
    finally:
        for event in release.values():
            event.set()
        session.close()


def test_requests_read_after_close_are_not_served():
    """Close cancels every request it knows; a request the reader takes from the
    transport's buffer after that must not start (it would never be cancelled and
    would outlive the session). Here the peer writes requests and hangs up at once,
    and the session is closed while the reader may still be draining them."""
    for _ in range(5):
        started, unseen = [], []

        def handle(ctx, method, params):
            started.append(ctx.request_id)
            if not ctx.cancelled.wait(WAIT):
                unseen.append(ctx.request_id)
            return {}

        peer_end, session_end = memory_pair()
        session = Session(session_end, handle, name="mcp-server").start()
        peer = RawPeer(peer_end)
        for request_id in (1, 2, 3):
            peer.send({"jsonrpc": "2.0", "id": request_id, "method": "block"})
        peer.close()
        session.close()
        assert session.wait_closed(WAIT)
        assert unseen == [], f"requests {unseen} ran on after close, never cancelled (started: {started})"


def test_a_waiter_keeps_the_first_settlement_and_stays_open():
    """session/outbound.py: the first settle wins (a reply racing a close or a cancel), and once
    settled every wait returns at once."""
    from mcp_ref.session.outbound import Pending
    waiter = Pending(None, 1, "tools/call")
    assert not waiter.settled and waiter.wait(0.01) is False
    settlers = [threading.Thread(target=waiter.settle, args=(i,)) for i in range(8)]
    for thread in settlers:
        thread.start()
    for thread in settlers:
        thread.join(WAIT)
    assert waiter.settled and waiter.reply in range(8)
    first = waiter.reply
    waiter.settle("late")
    assert waiter.reply == first
    assert waiter.wait(WAIT) and waiter.wait(WAIT)
