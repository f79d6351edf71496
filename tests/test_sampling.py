"""Sampling (``sampling/createMessage``): the client callback, the server's ``ctx.sample``.

In-process flows over ``memory_pair()`` with every message validated against the
negotiated revision's ``schema.json``, then end to end over stdio against
``mcp_ref.examples.client_features``. Spec: client/sampling.
"""
import threading

import pytest

from client_features_helpers import FEATURE_SERVER, WAIT, connect, env, feature_server, sampler, stdio_client, \
    text, validated
from mcp_ref import Client, Context, Server
from mcp_ref.errors import CapabilityNotSupported, InvalidParamsError, MethodNotFoundError, UserRejectedError
from mcp_ref.client.sampling import create_message, tool_message_problem
from mcp_ref.types import (AudioContent, CreateMessageResult, ImageContent, ModelHint, ModelPreferences,
                           SamplingMessage, TextContent, ToolResultContent, ToolUseContent, select_model)

FULL_REQUEST = dict(
    system_prompt="You are terse.", include_context="none", temperature=0.3, stop_sequences=["END"],
    metadata={"trace": "t-1"}, model_preferences=ModelPreferences(
        hints=[ModelHint(name="claude-3-sonnet"), ModelHint(name="claude")], cost_priority=0.3,
        speed_priority=0.8, intelligence_priority=0.5))


def sampling_server(**options) -> Server:
    """A server with one tool, ``sample``, that forwards its arguments to ``ctx.sample``."""
    server = Server("sampler")
    calls = server.calls = []

    @server.tool
    def sample(ctx: Context, kind: str = "text", timeout: float = 0) -> str:
        messages = {
            "text": [SamplingMessage(role="user", content=TextContent(text="Capital of France?"))],
            "media": [SamplingMessage(role="user", content=ImageContent(data="iVBORw0K", mime_type="image/png")),
                      SamplingMessage(role="assistant", content=TextContent(text="A picture.")),
                      SamplingMessage(role="user", content=AudioContent(data="UklGRg==", mime_type="audio/wav"))],
        }[kind]
        result = ctx.sample(messages, max_tokens=64, timeout=timeout or None, **{**FULL_REQUEST, **options})
        calls.append(result)
        return f"{result.role}|{result.model}|{result.stop_reason}|{result.content.text}"
    return server


# ---------------------------------------------------------------------- the flow
@pytest.mark.req("SAMP-4")
def test_the_callback_receives_the_full_typed_request_and_the_server_a_typed_result():
    callback = sampler("Paris.", "claude-3-sonnet-20240307")
    server = sampling_server()
    with connect(server, sampling=callback) as (client, session, rec):
        assert client.capabilities() == {"sampling": {}}
        assert text(client.call_tool("sample", {"kind": "media"})) == \
            "assistant|claude-3-sonnet-20240307|endTurn|Paris."
    request = callback.requests[0]
    assert request.method == "sampling/createMessage"
    assert request.params.max_tokens == 64 and request.max_tokens == 64        # .params or attributes
    assert [m.role for m in request.messages] == ["user", "assistant", "user"]
    assert isinstance(request.messages[0].content, ImageContent)
    assert isinstance(request.messages[2].content, AudioContent)
    assert request.system_prompt == "You are terse." and request.include_context == "none"
    assert request.temperature == 0.3 and request.stop_sequences == ["END"]
    assert request.metadata == {"trace": "t-1"}
    prefs = request.model_preferences
    assert [h.name for h in prefs.hints] == ["claude-3-sonnet", "claude"]
    assert (prefs.cost_priority, prefs.speed_priority, prefs.intelligence_priority) == (0.3, 0.8, 0.5)
    assert request.server_info.name == "sampler"
    result = server.calls[0]
    assert isinstance(result, CreateMessageResult) and isinstance(result.content, TextContent)
    sent = rec.wait_for(lambda d, m: d == "receive" and m.get("method") == "sampling/createMessage")
    assert sent["params"]["maxTokens"] == 64 and sent["params"]["modelPreferences"]["speedPriority"] == 0.8


def test_a_plain_dict_answer_is_accepted():
    def callback(request):
        return {"role": "assistant", "content": {"type": "text", "text": "hi"}, "model": "m",
                "stopReason": "maxTokens"}
    with connect(sampling_server(), sampling=callback) as (client, _, _rec):
        assert text(client.call_tool("sample")) == "assistant|m|maxTokens|hi"


@pytest.mark.parametrize("revision", ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"])
def test_every_revision_validates_and_drops_what_it_does_not_know(revision):
    callback = sampler()
    server = sampling_server()
    with connect(server, revision=revision, sampling=callback) as (client, _, rec):
        assert text(client.call_tool("sample")).endswith("Paris.")
        kind_result = client.call_tool("sample", {"kind": "media"})
        if revision == "2024-11-05":                 # audio arrived in 2025-03-26
            assert kind_result.is_error and "audio" in text(kind_result)
        else:
            assert not kind_result.is_error
    sent = [m for d, m in rec.records if d == "receive" and m.get("method") == "sampling/createMessage"]
    assert len(sent) == (1 if revision == "2024-11-05" else 2)


@pytest.mark.req("SAMP-3", "SAMP-5")
def test_sampling_is_declared_only_with_a_callback_and_tools_only_when_supported():
    def declared(client):                   # the tasks extension rides along in the modern era
        return {k: v for k, v in client.capabilities().items() if k != "extensions"}
    assert declared(Client(None)) == {}
    assert declared(Client(None, sampling=sampler())) == {"sampling": {}}
    assert declared(Client(None, sampling=sampler(), sampling_tools=True)) == {"sampling": {"tools": {}}}
    tool_sampler = sampler()
    tool_sampler.supports_tools = True
    assert declared(Client(None, sampling=tool_sampler)) == {"sampling": {"tools": {}}}
    assert Client(None, sampling=tool_sampler, protocol_version="2025-06-18").capabilities() == {"sampling": {}}
    assert declared(Client(None, sampling_tools=True)) == {}
    assert Client(None, protocol_version="2025-11-25").capabilities() == {}


# ---------------------------------------------------------------------- refusals and errors
@pytest.mark.req("SAMP-11")
def test_a_refusal_reaches_the_server_as_error_minus_one_and_the_client_goes_on():
    calls = []

    def callback(request):
        calls.append(request)
        if len(calls) == 1:
            raise UserRejectedError("User rejected sampling request")
        if len(calls) == 2:
            raise RuntimeError("the LLM is down")
        return CreateMessageResult(role="assistant", content=TextContent(text="ok"), model="m")
    with connect(sampling_server(), sampling=callback) as (client, _, rec):
        first = client.call_tool("sample")
        assert first.is_error and "User rejected sampling request (code -1)" in text(first)
        second = client.call_tool("sample")
        assert second.is_error and "Internal error (code -32603)" in text(second)
        assert text(client.call_tool("sample")) == "assistant|m|None|ok"
    errors = [m["error"] for d, m in rec.records if d == "send" and "error" in m]
    assert [e["code"] for e in errors] == [-1, -32603]


@pytest.mark.req("SAMP-13")
def test_a_malformed_answer_is_an_internal_error_not_a_crash():
    with connect(sampling_server(), sampling=lambda request: {"role": "robot", "model": "m"}) as (client, _, _r):
        result = client.call_tool("sample")
        assert result.is_error and "-32603" in text(result)
        client.ping()


def test_without_the_capability_the_server_refuses_locally_and_the_client_answers_32601():
    server = sampling_server()
    with connect(server) as (client, session, rec):
        result = client.call_tool("sample")
        assert result.is_error and "sampling" in text(result) and "did not declare" in text(result)
        assert not any(m.get("method") == "sampling/createMessage" for _, m in rec.records)
        with pytest.raises(MethodNotFoundError):          # a server that asks anyway
            session.request("sampling/createMessage", {"messages": [], "maxTokens": 1}, timeout=WAIT)
        with pytest.raises(CapabilityNotSupported):     # from the session, too
            create_message(session, ["x"], max_tokens=5)


@pytest.mark.req("SAMP-17")
def test_local_argument_errors_send_nothing():
    server = Server("args")

    @server.tool
    def bad(ctx: Context, case: str) -> str:
        if case == "tokens":
            ctx.sample(["x"], max_tokens=0)
        elif case == "empty":
            ctx.sample([], max_tokens=5)
        elif case == "role":
            ctx.sample([{"role": "system", "content": {"type": "text", "text": "x"}}], max_tokens=5)
        elif case == "context":
            ctx.sample(["x"], max_tokens=5, include_context="everything")
        return "sent"
    with connect(server, sampling=sampler()) as (client, _, rec):
        for case, words in [("tokens", "max_tokens"), ("empty", "at least one"), ("role", "role"),
                            ("context", "include_context")]:
            result = client.call_tool("bad", {"case": case})
            assert result.is_error and words in text(result)
        assert not any(m.get("method") == "sampling/createMessage" for _, m in rec.records)


def test_several_blocks_in_one_message_need_2025_11_25():
    server = Server("blocks")

    @server.tool
    def blocks(ctx: Context, count: int) -> str:
        content = [{"type": "text", "text": f"part {i}"} for i in range(count)]
        return ctx.sample([{"role": "user", "content": content}], max_tokens=5).content.text
    callback = sampler("ok")
    with connect(server, revision="2025-06-18", sampling=callback) as (client, _, rec):
        assert text(client.call_tool("blocks", {"count": 1})) == "ok"          # one block: sent as a block
        result = client.call_tool("blocks", {"count": 2})
        assert result.is_error and "several content blocks" in text(result)
    with connect(server, sampling=callback) as (client, _, _rec):
        assert text(client.call_tool("blocks", {"count": 2})) == "ok"
    assert [b.text for b in callback.requests[-1].messages[0].content] == ["part 0", "part 1"]


@pytest.mark.req("SAMP-6", "SCHEMA-9", "SCHEMA-16")
def test_include_context_needs_sampling_context_from_2025_11_25():
    server = Server("ctx")

    @server.tool
    def with_context(ctx: Context) -> str:
        return ctx.sample(["x"], max_tokens=5, include_context="thisServer").content.text
    with connect(server, sampling=sampler("a")) as (client, _, _r):
        result = client.call_tool("with_context")
        assert result.is_error and "sampling.context" in text(result)
    with connect(server, revision="2025-06-18", sampling=sampler("b")) as (client, _, _r):
        assert text(client.call_tool("with_context")) == "b"       # no such capability before 2025-11-25


# ---------------------------------------------------------------------- tools in sampling (2025-11-25)
def weather_llm(request):
    """A pretend LLM: asks for the weather of both cities, then summarises the results."""
    weather_llm.requests.append(request)
    last = request.messages[-1]
    if last.role == "user" and isinstance(last.content, TextContent):
        assert [t.name for t in request.tools] == ["get_weather"] and request.tool_choice.mode == "auto"
        return CreateMessageResult(role="assistant", model="m", stop_reason="toolUse", content=[
            ToolUseContent(id="call_1", name="get_weather", input={"city": "Paris"}),
            ToolUseContent(id="call_2", name="get_weather", input={"city": "London"})])
    results = {block.tool_use_id: block.content[0].text for block in last.content}
    return CreateMessageResult(role="assistant", model="m", stop_reason="endTurn",
                               content=TextContent(text=f"Paris {results['call_1']}; London {results['call_2']}"))


weather_llm.supports_tools = True


@pytest.mark.req("SAMP-17")
def test_the_tool_loop_with_tool_use_and_tool_result_content():
    weather_llm.requests = []
    with connect(feature_server(), sampling=weather_llm) as (client, _, rec):
        assert client.capabilities()["sampling"] == {"tools": {}}
        answer = text(client.call_tool("weather_agent", {"question": "Weather in Paris and London?"}))
    assert answer == "Paris 18°C, partly cloudy; London 15°C, rainy"
    second = weather_llm.requests[1]
    assert [m.role for m in second.messages] == ["user", "assistant", "user"]
    assert all(isinstance(b, ToolResultContent) for b in second.messages[2].content)
    requests = [m for d, m in rec.records if d == "receive" and m.get("method") == "sampling/createMessage"]
    assert requests[1]["params"]["messages"][1]["content"][0]["type"] == "tool_use"


@pytest.mark.req("SAMP-4")
def test_tools_need_the_capability_and_the_revision():
    with connect(feature_server(), sampling=sampler()) as (client, _, rec):     # no sampling.tools
        result = client.call_tool("weather_agent", {"question": "Weather?"})
        assert result.is_error and "sampling.tools" in text(result)
        assert not any(m.get("method") == "sampling/createMessage" for _, m in rec.records)
    with connect(feature_server(), revision="2025-06-18", sampling=weather_llm) as (client, _, _r):
        result = client.call_tool("weather_agent", {"question": "Weather?"})
        assert result.is_error and "2025-11-25" in text(result)


@pytest.mark.req("SAMP-7", "SAMP-8", "SAMP-11", "SCHEMA-17")
def test_the_client_refuses_tools_it_did_not_declare_and_broken_tool_messages():
    callback = sampler()         # the "server" here sends invalid requests on purpose: no wire validation
    with connect(Server("raw"), validate=False, sampling=callback) as (client, session, _rec):
        tool = {"name": "t", "inputSchema": {"type": "object"}}
        with pytest.raises(InvalidParamsError, match="sampling.tools"):
            session.request("sampling/createMessage", {"messages": [], "maxTokens": 5, "tools": [tool]},
                            timeout=WAIT)
        with pytest.raises(InvalidParamsError, match="maxTokens"):
            session.request("sampling/createMessage", {"messages": []}, timeout=WAIT)
        mixed = [{"role": "user", "content": [
            {"type": "text", "text": "here"},
            {"type": "tool_result", "toolUseId": "c", "content": []}]}]
        with pytest.raises(InvalidParamsError, match="mixed"):
            session.request("sampling/createMessage", {"messages": mixed, "maxTokens": 5}, timeout=WAIT)
    assert callback.requests == []


def use(id_):
    return {"type": "tool_use", "id": id_, "name": "t", "input": {}}


def result_block(id_):
    return {"type": "tool_result", "toolUseId": id_, "content": []}


@pytest.mark.req("SAMP-7", "SAMP-8", "SAMP-17", "SCHEMA-23")
@pytest.mark.parametrize("messages, problem", [
    ([{"role": "user", "content": {"type": "text", "text": "q"}}], None),
    ([{"role": "assistant", "content": [use("a"), use("b")]},
      {"role": "user", "content": [result_block("a"), result_block("b")]}], None),
    ([{"role": "assistant", "content": [use("a"), use("b")]},
      {"role": "user", "content": [result_block("a")]}], "Tool result missing"),
    ([{"role": "assistant", "content": use("a")}], "Tool result missing"),
    ([{"role": "assistant", "content": use("a")}, {"role": "user", "content": {"type": "text", "text": "x"}}],
     "Tool result missing"),
    ([{"role": "user", "content": [{"type": "text", "text": "x"}, result_block("a")]}], "mixed"),
    ([{"role": "assistant", "content": result_block("a")}], "user message"),
    ([{"role": "user", "content": use("a")}], "assistant message"),
])
def test_tool_message_rules(messages, problem):
    found = tool_message_problem(messages)
    assert (found is None) if problem is None else (problem in found)


# ---------------------------------------------------------------------- timeouts, cancellation, concurrency
def test_a_nested_timeout_cancels_the_request_at_the_client():
    seen = threading.Event()

    def slow(request):
        assert request.cancelled.wait(WAIT)            # set by the server's notifications/cancelled
        seen.set()
        raise UserRejectedError("too late")
    with connect(sampling_server(), sampling=slow) as (client, _, rec):
        result = client.call_tool("sample", {"timeout": 0.2})
        assert result.is_error and "timed out" in text(result)
        assert seen.wait(WAIT)
        rec.wait_for(lambda d, m: d == "receive" and m.get("method") == "notifications/cancelled")
    assert not [m for d, m in rec.records if d == "send" and "error" in m]     # no reply after the cancel


def test_cancelling_the_tool_call_cancels_the_nested_sampling_request():
    entered, cancelled = threading.Event(), threading.Event()

    def blocked(request):
        entered.set()
        if request.cancelled.wait(WAIT):
            cancelled.set()
        raise UserRejectedError("cancelled")
    with connect(sampling_server(), sampling=blocked) as (client, _, rec):
        pending = client.session.start_request("tools/call", {"name": "sample", "arguments": {}})
        assert entered.wait(WAIT)
        pending.cancel("the user pressed stop")
        assert cancelled.wait(WAIT)
        sampling_id = rec.wait_for(lambda d, m: d == "receive" and m.get("method") == "sampling/createMessage")["id"]
        notice = rec.wait_for(lambda d, m: d == "receive" and m.get("method") == "notifications/cancelled")
        assert notice["params"]["requestId"] == sampling_id
        client.ping()


def test_concurrent_nested_requests_inside_one_call():
    barrier = threading.Barrier(4, timeout=WAIT)

    def together(request):
        barrier.wait()                                    # all four are in flight at once
        return {"role": "assistant", "content": {"type": "text", "text": request.messages[0].content.text.upper()},
                "model": "m"}
    with connect(feature_server(), sampling=together, max_workers=8) as (client, _, _r):
        assert text(client.call_tool("ask_llm_many", {"questions": ["a", "b", "c", "d"]})) == "A|B|C|D"


def test_concurrent_tool_calls_each_sampling():
    barrier = threading.Barrier(3, timeout=WAIT)

    def together(request):
        barrier.wait()
        return {"role": "assistant", "content": {"type": "text", "text": "ok"}, "model": request.messages[0]
                .content.text}
    results = []
    with connect(feature_server(), sampling=together) as (client, _, _r):
        threads = [threading.Thread(target=lambda q=q: results.append(text(client.call_tool(
            "ask_llm", {"question": q})))) for q in ("x", "y", "z")]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(WAIT)
    assert sorted(results) == ["x: ok", "y: ok", "z: ok"]


# ---------------------------------------------------------------------- choosing a model
@pytest.mark.req("SAMP-14", "SCHEMA-18", "SCHEMA-19", "SCHEMA-20")
def test_select_model_follows_hints_in_order_then_priorities():
    models = ["gemini-1.5-pro", "claude-3-haiku-20240307", "claude-3-5-sonnet-20241022"]
    table = {"gemini-1.5-pro": {"cost": 0.5, "speed": 0.5, "intelligence": 0.8},
             "claude-3-haiku-20240307": {"cost": 0.1, "speed": 0.9, "intelligence": 0.4},
             "claude-3-5-sonnet-20241022": {"cost": 0.6, "speed": 0.5, "intelligence": 0.9}}
    seed = {"hints": [{"name": "claude-3-sonnet"}, {"name": "claude"}], "costPriority": 0.3,
            "speedPriority": 0.8, "intelligencePriority": 0.5}
    # "claude-3-sonnet" matches nothing; "claude" matches two; speed matters most: haiku
    assert select_model(models, seed, table) == "claude-3-haiku-20240307"
    assert select_model(models, {"hints": [{"name": "SONNET"}]}, table) == "claude-3-5-sonnet-20241022"
    assert select_model(models, {"intelligencePriority": 1}, table) == "claude-3-5-sonnet-20241022"
    assert select_model(models, {"costPriority": 1}, table) == "claude-3-haiku-20240307"
    assert select_model(models, {"hints": [{"name": "gpt"}]}) == "gemini-1.5-pro"      # no table: first
    assert select_model(models, ModelPreferences(hints=[ModelHint(name="gemini")])) == "gemini-1.5-pro"
    with pytest.raises(ValueError):
        select_model([], seed)


def test_a_callback_can_pick_its_model_from_the_hints():
    def pick(request):
        model = select_model(["gpt-4o", "claude-3-haiku"], request.model_preferences)
        return {"role": "assistant", "content": {"type": "text", "text": "ok"}, "model": model}
    with connect(feature_server(), sampling=pick) as (client, _, _r):
        assert text(client.call_tool("ask_llm", {"question": "q", "model_hint": "claude"})) == "claude-3-haiku: ok"


# ---------------------------------------------------------------------- end to end over stdio
def test_stdio_sampling_with_client_stdio():
    callback = sampler("Paris.")
    with Client.stdio(FEATURE_SERVER, env=env(), sampling=callback, timeout=20) as client:
        assert text(client.call_tool("ask_llm", {"question": "Capital of France?"})) == "test-model-1: Paris."
    assert callback.requests[0].messages[0].content.text == "Capital of France?"


def test_stdio_refusal_timeout_and_tool_loop():
    calls = []

    def llm(request):
        calls.append(request)
        if request.tools:
            return weather_llm(request)
        if request.messages[0].content.text == "refuse":
            raise UserRejectedError("no")
        assert request.cancelled.wait(WAIT)
        raise UserRejectedError("cancelled")
    weather_llm.requests = []
    with stdio_client(sampling=llm, sampling_tools=True) as client:
        refused = client.call_tool("ask_llm", {"question": "refuse"})
        assert refused.is_error and "code -1" in text(refused)
        slow = client.call_tool("ask_llm", {"question": "slow", "timeout": 0.3})
        assert slow.is_error and "timed out" in text(slow)
        assert text(client.call_tool("weather_agent", {"question": "Weather?"})).startswith("Paris 18")
    validated(client)


# ---------------------------------------------------------------------- other ways to build a client
def test_every_constructor_takes_the_client_feature_keywords():
    pytest.importorskip("requests", reason="the HTTP client needs requests")
    from mcp_ref.transports.http.server.app import start_http
    options = dict(sampling=sampler("via http"), elicitation=lambda r: {"action": "accept",
                                                                        "content": {"confirm": True}},
                   roots=["file:///a"], on_approve=lambda approval: True, timeout=WAIT)
    with start_http(feature_server()) as handle:
        for client in (Client.http(handle.url, **options), Client.connect(handle.url, **options)):
            with client:
                roots = {} if client.modern else {"listChanged": True}    # 2026-07-28: no roots notification
                tasks = {"extensions": {"io.modelcontextprotocol/tasks": {}}} if client.modern else {}
                assert client.capabilities() == {"sampling": {}, "roots": roots, "elicitation": {"form": {}}, **tasks}
                assert text(client.call_tool("plan_trip", {"city": "Oslo"})) == "booked for 1: via http"
                client.set_roots(["file:///b"])
                assert text(client.call_tool("show_roots")) == "=file:///b"
        with Client.sse(handle.sse_url, protocol_version="2024-11-05", **options) as client:   # legacy HTTP+SSE
            assert client.capabilities() == {"sampling": {}, "roots": {"listChanged": True}}
            assert text(client.call_tool("ask_llm", {"question": "q"})) == "test-model-1: via http"
