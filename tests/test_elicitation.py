"""Elicitation: the form-schema subset, defaults, validation, URL mode, both sides.

Pure checks of ``mcp_ref.client.elicitation_schema`` first, then in-process flows over
``memory_pair()`` (every message validated against the negotiated revision's
schema), then the same flows end to end over stdio against
``mcp_ref.examples.client_features``. Spec: client/elicitation.
"""
import threading

import pytest

from mcp_ref import Client, Server
from mcp_ref.client.elicitation import (ElicitationTracker, check_url, client_modes, url_elicitation,
                                 url_elicitation_required)
from mcp_ref.client.elicitation_schema import (InvalidElicitationSchema, check_requested_schema, content_problem,
                                        fill_defaults)
from mcp_ref.errors import CapabilityNotSupported, InvalidParamsError, McpError, UrlElicitationRequiredError
from mcp_ref.server import Context
from mcp_ref.types import ElicitResult

from client_features_helpers import FEATURE_SERVER, WAIT, connect, env, feature_server, stdio_client, text, \
    validated

# ---------------------------------------------------------------------- every 2025-11-25 form shape
STRING = {"type": "string", "title": "Name", "description": "Your name", "minLength": 1, "maxLength": 20,
          "pattern": "^[A-Za-z ]+$", "default": "Ada"}
EMAIL = {"type": "string", "format": "email", "default": "ada@example.com"}
URI = {"type": "string", "format": "uri"}
DATE = {"type": "string", "format": "date", "default": "2025-11-25"}
DATE_TIME = {"type": "string", "format": "date-time"}
NUMBER = {"type": "number", "minimum": 0, "maximum": 10, "default": 2.5}
INTEGER = {"type": "integer", "minimum": 18, "default": 36}
BOOLEAN = {"type": "boolean", "default": False}
UNTITLED = {"type": "string", "enum": ["red", "green", "blue"], "default": "red"}
TITLED = {"type": "string", "oneOf": [{"const": "#f00", "title": "Red"}, {"const": "#0f0", "title": "Green"}],
          "default": "#f00"}
LEGACY = {"type": "string", "enum": ["s", "m", "l"], "enumNames": ["Small", "Medium", "Large"], "default": "m"}
MULTI = {"type": "array", "items": {"type": "string", "enum": ["a", "b", "c"]}, "minItems": 1, "maxItems": 2,
         "default": ["a"]}
TITLED_MULTI = {"type": "array", "items": {"anyOf": [{"const": "x", "title": "Ex"}, {"const": "y", "title": "Why"}]},
                "default": ["x", "y"]}
EVERY_SHAPE = {"type": "object", "properties": {
    "name": STRING, "email": EMAIL, "home": URI, "day": DATE, "at": DATE_TIME, "score": NUMBER, "age": INTEGER,
    "agree": BOOLEAN, "color": UNTITLED, "hex": TITLED, "size": LEGACY, "tags": MULTI, "marks": TITLED_MULTI},
    "required": ["name", "agree"]}


def obj(properties, required=()):
    return {"type": "object", "properties": properties, "required": list(required)}


def test_every_2025_11_25_shape_passes_the_pre_send_check():
    assert check_requested_schema(EVERY_SHAPE, "2025-11-25") is EVERY_SHAPE
    assert check_requested_schema({**EVERY_SHAPE, "$schema": "https://json-schema.org/draft/2020-12/schema"})


@pytest.mark.parametrize("prop, problem", [
    ({"type": "object", "properties": {}}, "property type 'object'"),
    ({"type": "array", "items": {"type": "object"}}, "multi-select enum"),
    ({"type": "array", "items": {"type": "string"}}, "multi-select enum"),
    ({"type": "string", "format": "password"}, "format 'password'"),
    ({"type": "string", "enum": []}, "non-empty list"),
    ({"type": "string", "enum": ["a", 1]}, "list of strings"),
    ({"type": "string", "enum": ["a", "b"], "enumNames": ["A"]}, "enumNames"),
    ({"type": "string", "oneOf": [{"const": "a"}]}, "const"),
    ({"type": "string", "oneOf": [{"const": "a", "title": "A", "description": "x"}]}, "const"),
    ({"type": "number", "minimum": "0"}, "minimum must be a number"),
    ({"type": "string", "minLength": -1}, "minLength"),
    ({"type": "string", "pattern": "("}, "pattern"),
    ({"type": "string", "default": 3}, "default 3"),
    ({"type": "integer", "default": 2.5}, "default 2.5"),
    ({"type": "boolean", "default": "yes"}, "default 'yes'"),
    ({"type": "string", "enum": ["a"], "default": "b"}, "default 'b'"),
    ({"type": "array", "items": {"type": "string", "enum": ["a"]}, "default": ["z"]}, "default"),
    ({"type": "string", "$ref": "#/x"}, "outside the elicitation subset"),
    ({"type": "string", "properties": {}}, "outside the elicitation subset"),
    ({"type": "null"}, "property type 'null'"),
    ({"enum": ["a"]}, "property type None"),
    ("string", "a property schema is an object"),
])
def test_schemas_outside_the_subset_are_refused(prop, problem):
    with pytest.raises(InvalidElicitationSchema, match=problem.replace("(", r"\(")):
        check_requested_schema(obj({"p": prop}))


@pytest.mark.parametrize("schema, problem", [
    (None, "object schema"),
    ({"type": "array"}, "object schema"),
    ({"type": "object"}, "needs \"properties\""),
    ({"type": "object", "properties": {}, "required": "p"}, "required must be a list"),
    ({"type": "object", "properties": {}, "required": ["p"]}, "unknown properties"),
    ({"type": "object", "properties": {}, "additionalProperties": True}, "outside the elicitation subset"),
])
def test_top_level_shape_is_checked(schema, problem):
    with pytest.raises(InvalidElicitationSchema, match=problem):
        check_requested_schema(schema)


def test_the_client_side_check_tolerates_extra_annotations():
    schema = obj({"name": {"type": "string", "examples": ["x"], "x-widget": "text"}})
    with pytest.raises(InvalidElicitationSchema):
        check_requested_schema(schema)
    assert check_requested_schema(schema, strict=False)
    with pytest.raises(InvalidElicitationSchema):       # but never a nested object
        check_requested_schema(obj({"o": {"type": "object"}}), strict=False)


@pytest.mark.parametrize("prop", [TITLED, MULTI, TITLED_MULTI])
def test_shapes_of_2025_11_25_are_not_sent_to_2025_06_18(prop):
    with pytest.raises(CapabilityNotSupported, match="2025-11-25"):
        check_requested_schema(obj({"p": prop}), "2025-06-18")
    for prop in (STRING, NUMBER, BOOLEAN, UNTITLED, LEGACY):
        check_requested_schema(obj({"p": prop}), "2025-06-18")


@pytest.mark.req("ELIC-10")
def test_defaults_fill_only_missing_properties():
    content = fill_defaults(EVERY_SHAPE, {"name": "Grace", "agree": True})
    assert content == {"name": "Grace", "email": "ada@example.com", "day": "2025-11-25", "score": 2.5,
                       "age": 36, "agree": True, "color": "red", "hex": "#f00", "size": "m", "tags": ["a"],
                       "marks": ["x", "y"]}
    assert content_problem(EVERY_SHAPE, content) is None
    content["tags"].append("b")
    assert MULTI["default"] == ["a"]                      # the schema's default is not shared


@pytest.mark.parametrize("name, value, problem", [
    ("name", 3, "not a string"),
    ("name", "", "wrong length"),
    ("name", "R2D2", "pattern"),
    ("email", "not-an-email", "valid email"),
    ("home", "no scheme", "valid uri"),
    ("day", "2025-13-01", "valid date"),
    ("day", "25/11/2025", "valid date"),
    ("at", "2025-11-25 10:00", "valid date-time"),
    ("score", 11, "out of range"),
    ("score", "5", "not a number"),
    ("age", 17, "out of range"),
    ("age", 18.5, "not an integer"),
    ("agree", 1, "not a boolean"),
    ("age", True, "not an integer"),
    ("color", "pink", "not one of"),
    ("hex", "Red", "not one of"),
    ("size", "Small", "not one of"),
    ("tags", ["a", "z"], "not among"),
    ("tags", [], "number of items"),
    ("tags", ["a", "b", "c"], "number of items"),
    ("tags", "a", "list of strings"),
    ("marks", ["Ex"], "not among"),
    ("nickname", "x", "not in the requested schema"),
])
def test_invalid_content_is_named(name, value, problem):
    content = fill_defaults(EVERY_SHAPE, {"name": "Grace", "agree": True, "at": "2025-11-25T10:00:00Z"})
    content[name] = value
    assert problem in content_problem(EVERY_SHAPE, content)


def test_required_and_shape_of_content():
    assert "required properties ['agree']" in content_problem(EVERY_SHAPE, {"name": "Grace"})
    assert content_problem(EVERY_SHAPE, ["name"]) == "content must be an object"
    assert content_problem(obj({"at": DATE_TIME}), {"at": "2025-11-25T10:00:00.5+02:00"}) is None


@pytest.mark.req("ELIC-4", "ELIC-5")
def test_modes_from_capabilities():
    assert client_modes({}) == set()
    assert client_modes({"elicitation": {}}) == {"form"}        # backwards compatibility
    assert client_modes({"elicitation": {"url": {}}}) == {"url"}
    assert client_modes({"elicitation": {"form": {}, "url": {}}}) == {"form", "url"}


@pytest.mark.req("ELIC-12", "ELIC-17", "ELIC-18", "ELIC-19")
def test_url_helpers():
    params = url_elicitation("Connect your account", "https://example.com/connect?x=1", "abc")
    assert params == {"mode": "url", "message": "Connect your account", "url": "https://example.com/connect?x=1",
                      "elicitationId": "abc"}
    assert len(url_elicitation("m", "https://example.com")["elicitationId"]) == 36
    for bad in ("example.com", "javascript:alert(1)", "https:///x", "https://a b", 3):
        with pytest.raises(ValueError):
            check_url(bad)
    error = url_elicitation_required([params])
    assert isinstance(error, UrlElicitationRequiredError) and error.code == -32042
    assert error.elicitations == [params]
    with pytest.raises(ValueError):
        url_elicitation_required([{"mode": "form", "message": "x"}])
    with pytest.raises(CapabilityNotSupported):
        url_elicitation_required([params], capabilities={"elicitation": {}}, revision="2025-11-25")


@pytest.mark.req("ELIC-15", "SCHEMA-7")
def test_tracker_reports_each_known_id_once():
    seen = []
    tracker = ElicitationTracker(seen.append)
    assert tracker.complete("unknown") is False
    tracker.expect("a")
    assert tracker.is_pending("a")
    assert tracker.complete("a") is True
    assert tracker.complete("a") is False                     # already completed: ignored
    assert tracker.wait("a", 0) is True
    assert tracker.wait("b", 0.01) is False
    assert tracker.complete(5) is False
    assert seen == ["a"]


# ---------------------------------------------------------------------- in process: form mode
def form_server() -> Server:
    """A server whose ``ask`` tool elicits with the schema it is given."""
    server = Server("former")
    server.results = []

    @server.tool
    def ask(ctx: Context, schema: dict, message: str = "Please fill in") -> str:
        result = ctx.elicit(message, schema)
        server.results.append(result)
        return result.action
    return server


def answer(action="accept", content=None, typed=False):
    """An elicitation callback that records its requests and answers as told."""
    def callback(request):
        callback.requests.append(request)
        if typed:
            return ElicitResult(action=action, content=content)
        return {"action": action, **({"content": content} if content is not None else {})}
    callback.requests = []
    return callback


@pytest.mark.req("ELIC-7", "ELIC-9", "ELIC-10", "ELIC-30", "ELIC-5")
@pytest.mark.parametrize("typed", [False, True])
def test_accept_fills_defaults_before_replying_and_the_server_gets_a_typed_result(typed):
    server = form_server()
    given = {"name": "Grace", "agree": True, "at": "2025-11-25T10:00:00Z", "score": 3}     # see the next test
    callback = answer(content=given, typed=typed)
    with connect(server, elicitation=callback) as (client, _, rec):
        assert client.capabilities() == {"elicitation": {"form": {}}}
        assert text(client.call_tool("ask", {"schema": EVERY_SHAPE})) == "accept"
    request = callback.requests[0]
    assert request.method == "elicitation/create"
    assert request.message == "Please fill in" and request.params.requested_schema == EVERY_SHAPE
    assert request.mode == "form" and request.server_info.name == "former"
    reply = rec.wait_for(lambda d, m: d == "send" and "result" in m and "action" in m["result"])["result"]
    assert reply["content"]["tags"] == ["a"] and reply["content"]["size"] == "m"      # defaults on the wire
    result = server.results[0]
    assert isinstance(result, ElicitResult) and result.action == "accept"
    assert result.content == fill_defaults(EVERY_SHAPE, given)


def test_a_fractional_number_is_sent_as_schema_ts_allows(wire_validator):
    """2025-11-25 schema.ts types ElicitResult.content values as ``string | number | boolean |
    string[]``; the generated schema.json says ``integer`` (see spec_notes/elicitation.md). We
    follow schema.ts: a ``number`` property may be answered 2.5."""
    server = form_server()
    with connect(server, validate=False, elicitation=answer(content={"score": 2.5})) as (client, _, rec):
        assert text(client.call_tool("ask", {"schema": obj({"score": NUMBER})})) == "accept"
    assert server.results[0].content == {"score": 2.5}
    reply = rec.wait_for(lambda d, m: d == "send" and "result" in m and "action" in m["result"])
    with pytest.raises(AssertionError, match="2.5 is not valid"):
        wire_validator.check(reply, "2025-11-25", "elicitation/create")


@pytest.mark.req("ELIC-34")
@pytest.mark.parametrize("action", ["decline", "cancel"])
def test_decline_and_cancel_carry_no_content(action):
    server = form_server()
    with connect(server, elicitation=answer(action, content={"name": "ignored"})) as (client, _, rec):
        assert text(client.call_tool("ask", {"schema": obj({"name": STRING})})) == action
    reply = rec.wait_for(lambda d, m: d == "send" and "result" in m and "action" in m["result"])["result"]
    assert reply == {"action": action}
    assert server.results[0].content is None


@pytest.mark.req("ELIC-52")
def test_invalid_user_content_is_never_sent():
    server = form_server()
    with connect(server, elicitation=answer(content={"name": "R2D2", "agree": True})) as (client, _, rec):
        result = client.call_tool("ask", {"schema": EVERY_SHAPE})
        assert result.is_error and "does not match the requested schema" in text(result)
        assert "pattern" in text(result) and "code -32603" in text(result)
        with_unknown = client.call_tool("ask", {"schema": obj({"name": STRING})})   # callback adds "agree"
        assert with_unknown.is_error and "not in the requested schema" in text(with_unknown)
    assert not [m for d, m in rec.records if d == "send" and "result" in m and "action" in m["result"]]


@pytest.mark.req("ELIC-53")
def test_the_server_validates_again():
    server = form_server()
    with connect(server, elicitation=answer()) as (client, _, _rec):
        # a client that skips validation (another implementation, say)
        client._request_handlers["elicitation/create"] = (
            lambda ctx, params: {"action": "accept", "content": {"age": 7}}, "elicitation")
        result = client.call_tool("ask", {"schema": obj({"age": INTEGER})})
        assert result.is_error and "age: 7 is out of range" in text(result)


def test_schemas_outside_the_subset_are_refused_before_sending():
    server = form_server()
    with connect(server, elicitation=answer()) as (client, _, rec):
        for schema, words in [(obj({"o": {"type": "object", "properties": {}}}), "property type 'object'"),
                              (obj({"p": {"type": "string", "format": "color"}}), "format 'color'"),
                              (obj({"p": {"type": "string", "allOf": []}}), "elicitation subset")]:
            result = client.call_tool("ask", {"schema": schema})
            assert result.is_error and words in text(result)
    assert not any(m.get("method") == "elicitation/create" for _, m in rec.records)


@pytest.mark.req("ELIC-4", "ELIC-6")
def test_not_declared_refuses_locally_and_the_client_answers_32601():
    server = form_server()
    with connect(server, sampling=lambda r: None) as (client, session, rec):
        result = client.call_tool("ask", {"schema": obj({"name": STRING})})
        assert result.is_error and "did not declare elicitation" in text(result)
        assert not any(m.get("method") == "elicitation/create" for _, m in rec.records)
        with pytest.raises(McpError) as info:
            session.request("elicitation/create", {"message": "m", "requestedSchema": obj({})}, timeout=WAIT)
        assert info.value.code == -32601


def test_an_empty_elicitation_capability_counts_as_form():
    """2025-11-25 client/elicitation#capabilities: ``elicitation: {}`` (an older client) means form mode."""
    class OlderClient(Client):
        def capabilities(self):
            return {"elicitation": {}}
    server = form_server()
    with connect(server, client_class=OlderClient, elicitation=answer(content={"name": "Ada"})) as \
            (client, session, rec):
        assert session.client_capabilities == {"elicitation": {}}
        assert text(client.call_tool("ask", {"schema": obj({"name": STRING})})) == "accept"
    sent = rec.wait_for(lambda d, m: d == "receive" and m.get("method") == "elicitation/create")
    assert sent["params"]["mode"] == "form"


@pytest.mark.req("ELIC-30")
def test_an_undeclared_mode_is_answered_32602():
    with connect(form_server(), validate=False, elicitation=answer()) as (client, session, _rec):
        with pytest.raises(InvalidParamsError, match="mode 'url' was not declared"):
            session.request("elicitation/create", url_elicitation("m", "https://example.com/x", "e1"),
                            timeout=WAIT)
        with pytest.raises(InvalidParamsError):
            session.request("elicitation/create", {"message": "m", "requestedSchema": {"type": "array"}},
                            timeout=WAIT)


@pytest.mark.req("ELIC-4", "ELIC-8", "ELIC-9", "ELIC-5")
def test_revisions_elicitation_from_2025_06_18_modes_from_2025_11_25():
    server = form_server()
    callback = answer(content={"name": "Ada"})
    for revision in ("2024-11-05", "2025-03-26"):
        with connect(server, revision=revision, elicitation=callback) as (client, _, rec):
            assert client.capabilities() == {}
            result = client.call_tool("ask", {"schema": obj({"name": STRING})})
            assert result.is_error and "2025-06-18" in text(result)
    with connect(server, revision="2025-06-18", elicitation=callback,
                 elicitation_url=answer()) as (client, _, rec):
        assert client.capabilities() == {"elicitation": {}}
        assert text(client.call_tool("ask", {"schema": obj({"name": STRING, "size": LEGACY})})) == "accept"
        titled = client.call_tool("ask", {"schema": obj({"hex": TITLED})})
        assert titled.is_error and "2025-11-25" in text(titled)
    sent = rec.wait_for(lambda d, m: d == "receive" and m.get("method") == "elicitation/create")
    assert "mode" not in sent["params"]


# ---------------------------------------------------------------------- in process: URL mode
@pytest.mark.req("ELIC-11", "ELIC-14", "ELIC-16", "ELIC-5", "ELIC-8")
def test_url_mode_accept_and_completion_notification():
    completed = []
    done = threading.Event()

    def on_complete(elicitation_id):
        completed.append(elicitation_id)
        done.set()
    url_answer = answer("accept")
    with connect(feature_server(), elicitation_url=url_answer, on_elicitation_complete=on_complete) as \
            (client, _, rec):
        assert client.capabilities() == {"elicitation": {"url": {}}}
        reply = text(client.call_tool("connect_account", {"service": "github"}))
        assert done.wait(WAIT)
        assert reply == f"accept:{completed[0]}"
        request = url_answer.requests[0]
        assert request.mode == "url" and request.url.startswith("https://example.com/connect?service=github")
        assert request.elicitation_id == completed[0]
        assert client.wait_elicitation(completed[0], 0)
        form = client.call_tool("ask_user", {})
        assert form.is_error and "'form'" in text(form)                 # form mode was not declared
    reply_sent = rec.wait_for(lambda d, m: d == "send" and "result" in m and "action" in m["result"])
    assert reply_sent["result"] == {"action": "accept"}


@pytest.mark.req("ELIC-15")
def test_unknown_completions_are_ignored():
    completed = []
    with connect(feature_server(), elicitation_url=answer("decline"), on_elicitation_complete=completed.append) \
            as (client, session, rec):
        assert text(client.call_tool("connect_account", {"service": "x"})) == "decline"
        session.complete_elicitation("never-asked")
        client.ping()
        rec.wait_for(lambda d, m: m.get("method") == "notifications/elicitation/complete")
        client.session.request("ping", timeout=WAIT)
    assert completed == []


@pytest.mark.req("ELIC-17", "ELIC-18", "ELIC-29")
def test_url_elicitation_required_error_then_retry():
    with connect(feature_server(), elicitation_url=answer("accept")) as (client, _, rec):
        with pytest.raises(UrlElicitationRequiredError) as info:
            client.call_tool("needs_connection", {"service": "drive"})
        error = info.value
        assert error.code == -32042 and "drive is not connected" in error.message
        [pending] = error.elicitations
        assert pending["mode"] == "url" and pending["url"].startswith("https://example.com/connect?service=drive")
        [consent] = client.handle_url_elicitations(error)
        assert consent.action == "accept"
        assert not client.wait_elicitation(pending["elicitationId"], 0)
        assert text(client.call_tool("browser_visit", {"elicitation_id": pending["elicitationId"]})) == \
            "connected drive"
        assert client.wait_elicitation(pending["elicitationId"], WAIT)
        assert text(client.call_tool("needs_connection", {"service": "drive"})) == "used drive"


@pytest.mark.req("ELIC-6")
def test_url_mode_needs_its_capability_and_2025_11_25():
    with connect(feature_server(), elicitation=answer()) as (client, _, rec):          # form only
        result = client.call_tool("connect_account", {"service": "x"})
        assert result.is_error and "'url'" in text(result)
        refused = client.call_tool("needs_connection", {"service": "x"})   # no -32042 to a form-only client
        assert refused.is_error and "'url'" in text(refused)
    with connect(feature_server(), revision="2025-06-18", elicitation_url=answer()) as (client, _, rec):
        assert client.capabilities() == {}
        result = client.call_tool("connect_account", {"service": "x"})
        assert result.is_error and "2025-11-25" in text(result)
    assert not any(m.get("method") == "elicitation/create" for _, m in rec.records)


@pytest.mark.req("ELIC-12")
def test_a_bad_url_is_refused_before_sending():
    server = Server("urls")

    @server.tool
    def go(ctx: Context, url: str) -> str:
        return ctx.elicit_url("Open this", url, "id-1").action
    with connect(server, elicitation_url=answer()) as (client, _, rec):
        for url in ("ftp://example.com", "/relative", "javascript:alert(1)"):
            result = client.call_tool("go", {"url": url})
            assert result.is_error and "http(s)" in text(result)
        assert text(client.call_tool("go", {"url": "https://example.com/ok"})) == "accept"


def test_concurrent_elicitations():
    barrier = threading.Barrier(3, timeout=WAIT)

    def together(request):
        barrier.wait()
        return {"action": "accept", "content": {"name": request.message}}
    server = form_server()
    results = []
    with connect(server, elicitation=together) as (client, _, _rec):
        threads = [threading.Thread(target=lambda m=m: results.append(client.call_tool(
            "ask", {"schema": obj({"name": STRING}), "message": m}))) for m in ("Ann", "Bob", "Cy")]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(WAIT)
    assert sorted(r.content["name"] for r in server.results) == ["Ann", "Bob", "Cy"]


# ---------------------------------------------------------------------- end to end over stdio
def test_stdio_form_with_client_stdio():
    with Client.stdio(FEATURE_SERVER, env=env(), elicitation=answer(content={"name": "Ada", "age": 36}),
                      timeout=20) as client:
        assert text(client.call_tool("ask_user", {})) == 'accept:{"age": 36, "name": "Ada", "newsletter": false}'


def test_stdio_sample_then_elicit_in_one_call_with_progress():
    progress = []
    order = []

    def llm(request):
        order.append("sample")
        return {"role": "assistant", "content": {"type": "text", "text": "Louvre, then lunch."}, "model": "m"}

    def user(request):
        order.append("elicit")
        assert "Louvre" in request.message
        return {"action": "accept", "content": {"confirm": True}}
    with stdio_client(sampling=llm, elicitation=user) as client:
        result = client.call_tool("plan_trip", {"city": "Paris"},
                                  on_progress=lambda p, total, message: progress.append((p, total, message)))
        assert text(result) == "booked for 1: Louvre, then lunch."
        assert progress == [(1, 3, "asking the LLM"), (2, 3, "asking the user"), (3, 3, "done")]
        assert order == ["sample", "elicit"]
        # and the related messages interleave: progress, nested request, reply, progress, ...
        methods = [m.get("method") for d, m in client.recorder.records if d == "receive"]
        assert methods.index("sampling/createMessage") < methods.index("elicitation/create")
    validated(client)


def test_stdio_url_mode_and_invalid_content():
    completed = threading.Event()
    with stdio_client(elicitation=answer(content={"name": ""}), elicitation_url=answer("accept"),
                      on_elicitation_complete=lambda _id: completed.set()) as client:
        assert text(client.call_tool("connect_account", {"service": "calendar"})).startswith("accept:")
        assert completed.wait(WAIT)
        bad = client.call_tool("ask_user", {})
        assert bad.is_error and "wrong length" in text(bad)
        with pytest.raises(UrlElicitationRequiredError):
            client.call_tool("needs_connection", {"service": "mail"})
        invalid = client.call_tool("ask_user", {"schema": {"type": "object", "properties": {"a": {"type": "null"}}}})
        assert invalid.is_error and "null" in text(invalid)
    validated(client)


def test_handling_a_32042_error_needs_a_url_callback():
    with connect(feature_server(), elicitation=answer()) as (client, _, _rec):
        error = url_elicitation_required([url_elicitation("m", "https://example.com/x", "e1")])
        with pytest.raises(CapabilityNotSupported, match="elicitation_url"):
            client.handle_url_elicitations(error)
