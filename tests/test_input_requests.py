"""Input requests a server function makes: keys it names, and several in one round
(Spec 2026-07-28: basic/patterns/mrtr#inputrequests, #server-requirements-basic-workflow:
keys are server-assigned and MUST be unique within the request; an InputRequiredResult
may carry several). The same tool runs in both eras: in 2026-07-28 its asks are
``inputRequests`` of an ``InputRequiredResult``, in 2025-11-25 server-to-client requests
sent one after another (server/context.py ``Context.gather``, server/modern/mrtr.py rules 2, 3).
"""
import pytest

from conftest import MODERN_REVISION
from mcp_ref import Context, Server
from mcp_ref.errors import DuplicateInputKey
from test_modern_client import FEATURES, Connected

NAME = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
ANSWER = {"user_name": {"action": "accept", "content": {"name": "Alice"}}}


def asking_server(runs: list) -> Server:
    server = Server("asks", version="1.0")

    @server.tool
    def named(ctx: Context) -> str:
        """One ask under a key of the tool's choosing."""
        runs.append("named")
        answer = ctx.elicit("What is your name?", NAME, key="user_name")
        return f"Hello {answer.content['name']}"

    @server.tool
    def several(ctx: Context) -> str:
        """Three asks in one round."""
        runs.append("several")
        answers = ctx.gather({
            "user_name": lambda: ctx.elicit("What is your name?", NAME),
            "forecast": lambda: ctx.sample(["Weather?"], max_tokens=10),
            "where": ctx.list_roots,
        })
        assert list(answers) == ["user_name", "forecast", "where"]
        roots = [root.uri for root in answers["where"]]
        return f"{answers['user_name'].content['name']}:{answers['forecast'].content.text}:{roots}"

    @server.tool
    def twice(ctx: Context) -> str:
        """The same key twice: refused before anything is asked."""
        ctx.elicit("What is your name?", NAME, key="k")
        try:
            ctx.elicit("Again?", NAME, key="k")
        except DuplicateInputKey as exc:
            return f"refused {exc.key}"
        return "asked twice"

    @server.tool
    def unnamed_after_named(ctx: Context) -> str:
        """An unnamed ask skips a name the tool took."""
        ctx.elicit("First?", NAME, key="elicit-1")
        ctx.elicit("Second?", NAME)
        return "done"

    return server


FEATURES_NAMED = dict(FEATURES, elicitation=lambda request: {"action": "accept", "content": {"name": "Alice"}})


def interim(connected) -> list:
    return [m["result"] for m in connected.recorder.received()
            if m.get("result", {}).get("resultType") == "input_required"]


def test_a_tool_names_its_input_request_key_and_the_same_tool_serves_both_eras(wire_validator):
    runs = []
    connected = Connected(asking_server(runs), wire_validator, **FEATURES_NAMED)
    with connected as client:
        modern = client.call_tool("named", {})
    assert [list(r["inputRequests"]) for r in interim(connected)] == [["user_name"]]
    request = interim(connected)[0]["inputRequests"]["user_name"]
    assert request["method"] == "elicitation/create" and request["params"]["message"] == "What is your name?"
    with Connected(asking_server([]), None, protocol_version="2025-11-25", **FEATURES_NAMED) as client:
        legacy = client.call_tool("named", {})
    assert modern == legacy and modern.content[0].text == "Hello Alice"


def test_gather_asks_several_in_one_input_required_result(wire_validator):
    runs = []
    connected = Connected(asking_server(runs), wire_validator, **FEATURES_NAMED)
    with connected as client:
        modern = client.call_tool("several", {})
    assert runs == ["several", "several"]               # one round for all three, then the answer
    rounds = interim(connected)
    assert [list(r["inputRequests"]) for r in rounds] == [["user_name", "forecast", "where"]]
    assert [r["method"] for r in rounds[0]["inputRequests"].values()] == [
        "elicitation/create", "sampling/createMessage", "roots/list"]
    retry = [m for m in connected.recorder.sent() if m.get("method") == "tools/call"][1]
    assert set(retry["params"]["inputResponses"]) == {"user_name", "forecast", "where"}
    legacy_runs = []
    with Connected(asking_server(legacy_runs), None, protocol_version="2025-11-25", **FEATURES_NAMED) as client:
        legacy = client.call_tool("several", {})
    assert legacy_runs == ["several"]                   # legacy: three requests, one after another
    assert modern == legacy and modern.content[0].text == "Alice:sunny:['file:///srv/trips']"


def test_a_retry_that_answers_part_of_a_gather_is_asked_the_rest_only(wire_validator):
    connected = Connected(asking_server([]), None, **FEATURES_NAMED)
    with connected as client:
        meta = client._modern_meta(MODERN_REVISION)
        call = {"name": "several", "arguments": {}, "_meta": meta}
        first = client.session.request("tools/call", call)
        assert list(first["inputRequests"]) == ["user_name", "forecast", "where"]
        second = client.session.request("tools/call", dict(call, inputResponses=ANSWER,
                                                           requestState=first["requestState"]))
        assert second["resultType"] == "input_required"
        assert list(second["inputRequests"]) == ["forecast", "where"]
        answers = {"forecast": {"role": "assistant", "content": {"type": "text", "text": "rain"}, "model": "m"},
                   "where": {"roots": []}}
        last = client.session.request("tools/call", dict(call, inputResponses=answers,
                                                         requestState=second["requestState"]))
        assert last["resultType"] == "complete" and last["content"][0]["text"] == "Alice:rain:[]"


@pytest.mark.parametrize("version", [MODERN_REVISION, "2025-11-25"])
def test_a_key_used_twice_in_a_request_is_a_typed_error_and_unnamed_keys_skip_taken_names(version):
    connected = Connected(asking_server([]), None, protocol_version=version, **FEATURES_NAMED)
    with connected as client:
        assert client.call_tool("twice", {}).content[0].text == "refused k"
        assert client.call_tool("unnamed_after_named", {}).content[0].text == "done"
    if version == MODERN_REVISION:
        keys = [list(r["inputRequests"]) for r in interim(connected)]
        assert keys == [["k"], ["elicit-1"], ["elicit-2"]]


def test_gather_and_key_refuse_what_is_not_a_key():
    server = Server("bad-keys", version="1.0")
    seen = []

    @server.tool
    def bad(ctx: Context) -> str:
        for attempt in (lambda: ctx.gather({}), lambda: ctx.gather({"": ctx.list_roots}),
                        lambda: ctx.gather({"x": "not callable"}), lambda: ctx.elicit("?", NAME, key="")):
            try:
                attempt()
            except TypeError as exc:
                seen.append(str(exc))
        return "checked"

    with Connected(server, None, **FEATURES_NAMED) as client:
        assert client.call_tool("bad", {}).content[0].text == "checked"
    assert len(seen) == 4
