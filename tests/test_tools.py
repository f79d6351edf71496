"""Tools, in process (``memory_pair``): registration, naming guidance, schemas from
type hints and hand-written ones, argument validation, results of every content
type, structured output checked on both sides, per-revision adaptation, list
changes, and capabilities. Every message is validated against its revision's
schema (``features_helpers.connected``). Spec: server/tools.
"""
import enum
import warnings
from dataclasses import dataclass
from typing import Annotated, Literal, Optional, TypedDict, Union

import pytest

from conftest import REVISIONS
from features_helpers import Collector, connected
from helpers import is_method
from mcp_ref import Context, Server, StructuredOutputError
from mcp_ref.schema import validation as validation_module
from mcp_ref.client import client_requests as client_requests_module
from mcp_ref.client.client_requests import StructuredOutputWarning
from mcp_ref.errors import CapabilityNotSupported, InvalidParamsError, MethodNotFoundError
from mcp_ref.server.tools import ToolNameWarning, tool_name_problem
from mcp_ref.types import (AudioContent, BlobResourceContents, CallToolResult, EmbeddedResource, ImageContent,
                           ResourceLink, TextContent, TextResourceContents, ToolAnnotations, audio, image)

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 8
WAV = b"RIFF\x24\x00\x00\x00WAVEfmt "
ICON = {"src": "https://example.com/icon.png", "mimeType": "image/png", "sizes": ["48x48"]}


def listed(client, name):
    return next(tool for tool in client.list_tools() if tool.name == name)


def wire_tool(recorder, name):
    lists = [m for m in recorder.received() if "tools" in m.get("result", {})]
    return next(t for t in lists[-1]["result"]["tools"] if t["name"] == name)


# ---------------------------------------------------------------------- registration
def test_registration_by_decorator_bare_called_and_by_call(wire_validator):
    server = Server("t")

    @server.tool
    def bare(x: int) -> str:
        """Bare decorator."""
        return str(x)

    @server.tool(name="renamed", title="Renamed", description="Given description", icons=[ICON],
                 annotations={"read_only_hint": True}, meta={"team": "a"})
    def called() -> str:
        return "ok"

    def plain(text: str) -> str:
        return text

    tool = server.add_tool(plain, name="by_call", input_schema={"type": "object", "properties": {"text": {}}},
                           output_schema={"type": "object"}, annotations=ToolAnnotations(destructive_hint=False))
    assert tool.name == "by_call"
    with connected(server, "2025-11-25", wire_validator) as (client, _, recorder):
        assert [t.name for t in client.list_tools()] == ["bare", "renamed", "by_call"]
        renamed = dict(wire_tool(recorder, "renamed"))
        assert renamed.pop("inputSchema")["type"] == "object"
        assert renamed == {"name": "renamed", "title": "Renamed", "description": "Given description",
                           "icons": [ICON], "annotations": {"readOnlyHint": True}, "_meta": {"team": "a"}}
        assert wire_tool(recorder, "bare")["description"] == "Bare decorator."
        assert wire_tool(recorder, "by_call")["outputSchema"] == {"type": "object"}
        assert wire_tool(recorder, "by_call")["annotations"] == {"destructiveHint": False}
        assert client.call_tool("bare", {"x": 4}).content[0].text == "4"


@pytest.mark.req("TOOL-11")
def test_duplicate_name_is_an_error():
    server = Server("t")
    server.add_tool(lambda: "a", name="same")
    with pytest.raises(ValueError, match="already registered"):
        server.add_tool(lambda: "b", name="same")


@pytest.mark.req("TOOL-7", "TOOL-9")
@pytest.mark.parametrize("name", ["getUser", "DATA_EXPORT_v2", "admin.tools.list", "a", "x" * 128, "a-b"])
def test_names_within_the_guidance_do_not_warn(name):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Server("t").add_tool(lambda: "", name=name)
    assert tool_name_problem(name) is None


@pytest.mark.req("TOOL-7", "TOOL-9", "TOOL-10")
@pytest.mark.parametrize("name, rule", [("has space", "only A-Z"), ("comma,name", "only A-Z"),
                                        ("", "between 1 and 128"), ("x" * 129, "between 1 and 128"),
                                        ("héllo", "only A-Z")])
def test_names_outside_the_guidance_warn_naming_the_rule(name, rule):
    server = Server("t")
    with pytest.warns(ToolNameWarning, match=rule):
        server.add_tool(lambda: "", name=name)
    assert any(tool.name == name for tool in server.tools.list())      # a SHOULD: still registered


@pytest.mark.req("TOOL-4")
def test_removal_at_runtime_sends_list_changed_to_initialized_sessions(wire_validator):
    server = Server("t")
    server.add_tool(lambda: "a", name="first")
    changed = Collector()
    with connected(server, "2025-11-25", wire_validator, on_tools_list_changed=changed) as (client, _, recorder):
        assert [t.name for t in client.list_tools()] == ["first"]
        server.add_tool(lambda: "b", name="second")
        changed.wait_for(1)
        server.remove_tool("first")
        changed.wait_for(2)
        assert [t.name for t in client.list_tools()] == ["second"]
        with pytest.raises(InvalidParamsError):
            client.call_tool("first")
        recorder.wait_count(is_method("notifications/tools/list_changed", "receive"), 2)
    with pytest.raises(KeyError):
        server.remove_tool("nope")


def test_no_list_changed_before_initialized_or_when_not_declared():
    server = Server("t", capabilities={"tools": {}})        # listChanged not declared
    server.add_tool(lambda: "a", name="first")
    with connected(server) as (client, _, recorder):
        server.add_tool(lambda: "b", name="second")
        client.ping()
        assert not [m for m in recorder.received() if m.get("method", "").endswith("list_changed")]


# ---------------------------------------------------------------------- schemas from type hints
class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


@dataclass
class Point:
    x: float
    y: float = 0.0


class Box(TypedDict):
    corner: Point
    label: str


def test_schemas_derived_from_type_hints():
    server = Server("t")

    @server.tool
    def everything(i: int, f: float, s: str, b: bool, n: None, items: list[int], table: dict[str, float],
                   pair: tuple[int, str], maybe: Optional[str], either: Union[int, str],
                   mode: Literal["fast", "slow"], color: Color, point: Point, box: Box,
                   described: Annotated[int, "an annotated description"], limit: int = 10) -> str:
        """Every kind of hint.

        Args:
            s: a documented string.
        """
        return "ok"

    schema = server.tools.list()[0].input_schema
    props = schema["properties"]
    assert props["i"] == {"type": "integer"} and props["f"] == {"type": "number"}
    assert props["s"] == {"type": "string", "description": "a documented string."}
    assert props["b"] == {"type": "boolean"} and props["n"] == {"type": "null"}
    assert props["items"] == {"type": "array", "items": {"type": "integer"}}
    assert props["table"] == {"type": "object", "additionalProperties": {"type": "number"}}
    assert props["pair"]["prefixItems"] == [{"type": "integer"}, {"type": "string"}]
    assert {"type": "null"} in props["maybe"]["anyOf"] and {"type": "string"} in props["maybe"]["anyOf"]
    assert props["either"] == {"anyOf": [{"type": "integer"}, {"type": "string"}]}
    assert props["mode"] == {"type": "string", "enum": ["fast", "slow"]}
    assert props["color"] == {"type": "string", "enum": ["red", "blue"]}
    assert props["point"]["properties"] == {"x": {"type": "number"}, "y": {"type": "number", "default": 0.0}}
    assert props["point"]["required"] == ["x"]
    assert props["box"]["properties"]["corner"]["type"] == "object"
    assert props["described"] == {"type": "integer", "description": "an annotated description"}
    assert props["limit"] == {"type": "integer", "default": 10}
    assert "limit" not in schema["required"] and "i" in schema["required"]


def test_context_parameter_is_injected_not_listed():
    server = Server("t")

    @server.tool
    def who(name: str, ctx: Context) -> str:
        return f"{name} via {ctx.method}"

    assert list(server.tools.list()[0].input_schema["properties"]) == ["name"]
    with connected(server) as (client, _, _):
        assert client.call_tool("who", {"name": "a"}).content[0].text == "a via tools/call"
        result = client.call_tool("who", {"name": "a", "ctx": "x"})       # not an argument
        assert result.is_error and "ctx" in result.content[0].text


def test_conversion_to_annotated_types():
    server = Server("t")

    @server.tool
    def shapes(point: Point, color: Color, ratio: float, pair: tuple[int, int]) -> str:
        assert isinstance(point, Point) and isinstance(color, Color) and isinstance(pair, tuple)
        assert isinstance(ratio, float)
        return f"{point.x},{point.y},{color.value},{ratio},{pair}"

    with connected(server) as (client, _, _):
        result = client.call_tool("shapes", {"point": {"x": 1}, "color": "blue", "ratio": 2, "pair": [1, 2]})
        assert result.content[0].text == "1.0,0.0,blue,2.0,(1, 2)"


# ---------------------------------------------------------------------- hand-written schemas
HAND_WRITTEN = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {"positive": {"type": "integer", "minimum": 1}},
    "properties": {"count": {"$ref": "#/$defs/positive"}, "label": {"type": "string"}},
    "required": ["count"],
    "additionalProperties": False,
}


@pytest.mark.req("TOOL-17")
def test_hand_written_schema_is_listed_untouched_validated_then_bound_by_name(wire_validator):
    server = Server("t")

    @server.tool(name="repeat", input_schema=HAND_WRITTEN)
    def repeat(label="x", count=1):
        return label * count

    with connected(server, "2025-11-25", wire_validator) as (client, _, recorder):
        client.list_tools()
        assert wire_tool(recorder, "repeat")["inputSchema"] == HAND_WRITTEN
        assert client.call_tool("repeat", {"count": 3, "label": "ab"}).content[0].text == "ababab"
        low = client.call_tool("repeat", {"count": 0})
        assert low.is_error and "minimum of 1" in low.content[0].text
        extra = client.call_tool("repeat", {"count": 1, "other": True})
        assert extra.is_error and "other" in extra.content[0].text


# ---------------------------------------------------------------------- errors
@pytest.mark.req("TOOL-17", "SCHEMA-27")
def test_validation_failure_is_a_tool_execution_error_and_unknown_tool_is_32602(wire_validator):
    server = Server("t")

    @server.tool
    def add(a: int, b: int) -> int:
        return a + b

    @server.tool
    def boom() -> str:
        raise RuntimeError("it broke")

    with connected(server, "2025-11-25", wire_validator) as (client, _, _):
        wrong = client.call_tool("add", {"a": "one", "b": 2})
        assert wrong.is_error and "Invalid arguments for tool add" in wrong.content[0].text
        assert "'one' is not of type 'integer'" in wrong.content[0].text
        missing = client.call_tool("add", {"a": 1})
        assert missing.is_error and "'b' is a required property" in missing.content[0].text
        failed = client.call_tool("boom")
        assert failed.is_error and failed.content[0].text == "it broke"
        with pytest.raises(InvalidParamsError) as info:
            client.call_tool("nope")
        assert info.value.code == -32602 and "Unknown tool: nope" in info.value.message


def test_validators_are_built_once_per_tool(monkeypatch):
    built = []
    original = validation_module.compile_validator
    spy = lambda schema: built.append(schema) or original(schema)    # noqa: E731
    monkeypatch.setattr(validation_module, "compile_validator", spy)
    monkeypatch.setattr(client_requests_module, "compile_validator", spy)     # imported there by name
    server = Server("t")

    @server.tool
    def add(a: int, b: int) -> dict:
        return {"sum": a + b}

    assert server.tools.get("add") is not None   # rule 8: a decorated tool is read on its first listing, get or call
    at_reading = len(built)                      # input and output
    assert at_reading in (0, 2)                  # 0: a tool of its shape was read before (signature.py rule 5)
    with connected(server) as (client, _, _):
        client.list_tools()                      # so that the client checks the output too
        for i in range(5):
            assert client.call_tool("add", {"a": i, "b": 1}).structured_content == {"sum": i + 1}
    assert len(built) == at_reading + 1          # plus the client's output check: once


# ---------------------------------------------------------------------- results
def result_server() -> Server:
    server = Server("t")
    server.add_tool(lambda: "plain text", name="text")
    server.add_tool(lambda: PNG, name="png_bytes")
    server.add_tool(lambda: WAV, name="wav_bytes")
    server.add_tool(lambda: image(b"GIF89a...", "image/gif"), name="image_helper")
    server.add_tool(lambda: audio(b"OggS...", "audio/ogg"), name="audio_helper")
    server.add_tool(lambda: [TextContent(text="t"), ImageContent(data="aGk=", mime_type="image/png"),
                             AudioContent(data="aGk=", mime_type="audio/wav"),
                             ResourceLink(uri="file:///a.txt", name="a.txt"),
                             EmbeddedResource(resource=TextResourceContents(uri="file:///b", text="b")),
                             EmbeddedResource(resource=BlobResourceContents(uri="file:///c", blob="aGk="))],
                    name="blocks")
    server.add_tool(lambda: {"type": "text", "text": "wire dict"}, name="wire_block")
    server.add_tool(lambda: [1, 2, 3], name="numbers")
    server.add_tool(lambda: b"\x00\x01", name="unknown_bytes")
    return server


def test_unstructured_results_of_every_content_type(wire_validator):
    with connected(result_server(), "2025-11-25", wire_validator) as (client, _, _):
        assert client.call_tool("text").content == [TextContent(text="plain text")]
        png = client.call_tool("png_bytes").content[0]
        assert isinstance(png, ImageContent) and png.mime_type == "image/png"
        assert isinstance(client.call_tool("wav_bytes").content[0], AudioContent)
        assert client.call_tool("image_helper").content[0].mime_type == "image/gif"
        assert client.call_tool("audio_helper").content[0].data == "T2dnUy4uLg=="
        blocks = client.call_tool("blocks").content
        assert [type(b).__name__ for b in blocks] == ["TextContent", "ImageContent", "AudioContent", "ResourceLink",
                                                      "EmbeddedResource", "EmbeddedResource"]
        assert isinstance(blocks[5].resource, BlobResourceContents)
        assert client.call_tool("wire_block").content[0].text == "wire dict"
        assert client.call_tool("numbers").content[0].text == "[1, 2, 3]"
        unknown = client.call_tool("unknown_bytes")
        assert unknown.is_error and "image(data, mime_type)" in unknown.content[0].text


@pytest.mark.parametrize("revision", REVISIONS)
def test_content_a_revision_does_not_know_is_left_out(revision, wire_validator):
    with connected(result_server(), revision, wire_validator) as (client, _, recorder):
        types = [b["type"] for b in client.call_tool("blocks").to_dict()["content"]]
        expected = ["text", "image", "audio", "resource_link", "resource", "resource"]
        if revision < "2025-06-18":
            expected.remove("resource_link")
        if revision < "2025-03-26":
            expected.remove("audio")
        assert types == expected


@dataclass
class Weather:
    city: str
    temperature: float


class Stats(TypedDict):
    count: int
    mean: float


def structured_server() -> Server:
    server = Server("t")

    @server.tool(title="Weather", icons=[ICON], annotations={"read_only_hint": True})
    def weather(city: str) -> Weather:
        return Weather(city, 21.5)

    @server.tool
    def stats() -> Stats:
        return {"count": 2, "mean": 1.5}

    @server.tool
    def as_dict() -> dict[str, int]:
        return {"a": 1}

    @server.tool(structured_output=True)
    def wrapped() -> int:
        return 7

    @server.tool(output_schema={"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]})
    def liar() -> dict:
        return {"n": "not a number"}

    @server.tool(output_schema={"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]})
    def sneaky() -> CallToolResult:                 # a result built by hand is checked too
        return CallToolResult(content=[TextContent(text="{}")], structured_content={"n": "x"})

    @server.tool(output_schema={"type": "object", "required": ["n"]})
    def forgetful() -> CallToolResult:
        return CallToolResult(content=[TextContent(text="nothing")])

    @server.tool(output_schema={"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]})
    def built(fail: bool = False) -> CallToolResult:
        if fail:                                    # an error result needs no structuredContent
            return CallToolResult(content=[TextContent(text="it broke")], is_error=True)
        return CallToolResult(content=[TextContent(text='{"n": 1}')], structured_content={"n": 1})

    return server


def unchecked(server: Server) -> Server:
    """``server`` with its own output check of ``sneaky`` and ``forgetful`` off: a server
    that breaks the outputSchema MUST, for the client's checks to meet."""
    for name in ("sneaky", "forgetful"):
        entry = server.tools._entries[name]
        entry.read()                                # rule 8: a decorated tool is read on first use
        entry.check_output = None
    return server


@pytest.mark.req("TOOL-13", "TOOL-14")
def test_structured_results_from_dataclass_typeddict_dict_and_wrapped(wire_validator):
    with connected(structured_server(), "2025-11-25", wire_validator) as (client, _, recorder):
        tools = {tool.name: tool for tool in client.list_tools()}
        assert tools["weather"].output_schema["properties"] == {"city": {"type": "string"},
                                                                "temperature": {"type": "number"}}
        assert tools["wrapped"].output_schema["required"] == ["result"]
        result = client.call_tool("weather", {"city": "Oslo"})
        assert result.structured_content == {"city": "Oslo", "temperature": 21.5}
        assert result.content[0].text == '{"city": "Oslo", "temperature": 21.5}'
        assert client.call_tool("stats").structured_content == {"count": 2, "mean": 1.5}
        assert client.call_tool("as_dict").structured_content == {"a": 1}
        assert client.call_tool("wrapped").structured_content == {"result": 7}
        liar = client.call_tool("liar")             # the server checks its own output
        assert liar.is_error and "does not match its outputSchema" in liar.content[0].text


@pytest.mark.parametrize("revision", REVISIONS)
def test_a_call_tool_result_built_by_the_tool_is_held_to_its_output_schema(revision, wire_validator):
    """Spec: server/tools#output-schema (servers MUST provide conforming structured
    results): a ``CallToolResult`` is checked like any structured return, and a
    violation is the same ``isError`` result; an ``isError`` result is not checked."""
    with connected(structured_server(), revision, wire_validator, validate_output="off") as (client, _, recorder):
        sneaky = client.call_tool("sneaky")
        assert sneaky.is_error and sneaky.structured_content is None
        assert sneaky.content[0].text == ("tool sneaky returned output that does not match its outputSchema: "
                                          "n: 'x' is not of type 'integer'")
        forgetful = client.call_tool("forgetful")
        assert forgetful.is_error
        assert forgetful.content[0].text == ("tool forgetful has an outputSchema but returned a CallToolResult "
                                             "without structuredContent")
        built = client.call_tool("built")
        assert not built.is_error and built.content[0].text == '{"n": 1}'
        assert built.structured_content == ({"n": 1} if revision >= "2025-06-18" else None)
        failed = client.call_tool("built", {"fail": True})
        assert failed.is_error and failed.content[0].text == "it broke"


@pytest.mark.req("TOOL-15")
def test_client_validates_structured_content_strict_warn_off():
    with connected(unchecked(structured_server())) as (client, _, recorder):
        assert client.call_tool("sneaky").structured_content == {"n": "x"}     # not listed: not checked
        assert not [m for m in recorder.sent() if m.get("method") == "tools/list"]
        client.list_tools()
        with pytest.raises(StructuredOutputError) as info:
            client.call_tool("sneaky")
        assert info.value.result.structured_content == {"n": "x"} and info.value.tool == "sneaky"
        assert "'x' is not of type 'integer'" in str(info.value)
        with pytest.raises(StructuredOutputError, match="no structuredContent"):
            client.call_tool("forgetful")
    with connected(unchecked(structured_server()), validate_output="warn") as (client, _, _):
        client.list_tools()
        with pytest.warns(StructuredOutputWarning, match="sneaky"):
            assert client.call_tool("sneaky").structured_content == {"n": "x"}
    with connected(unchecked(structured_server()), validate_output="off") as (client, _, _):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert client.call_tool("sneaky").structured_content == {"n": "x"}
    with pytest.raises(ValueError):
        from mcp_ref import Client
        Client(None, validate_output="sometimes")


@pytest.mark.parametrize("revision", REVISIONS)
def test_structured_output_title_and_icons_only_for_revisions_that_know_them(revision, wire_validator):
    with connected(structured_server(), revision, wire_validator) as (client, _, recorder):
        client.list_tools()
        weather = wire_tool(recorder, "weather")
        result = client.call_tool("weather", {"city": "Rome"})
        assert result.content[0].text == '{"city": "Rome", "temperature": 21.5}'
        assert ("title" in weather) == (revision >= "2025-06-18")
        assert ("outputSchema" in weather) == (revision >= "2025-06-18")
        assert ("icons" in weather) == (revision >= "2025-11-25")
        assert ("annotations" in weather) == (revision >= "2025-03-26")
        assert (result.structured_content is not None) == (revision >= "2025-06-18")
        # Before 2025-06-18 there is nothing to check, so even the sneaky tool passes.
        if revision < "2025-06-18":
            assert client.call_tool("sneaky").structured_content is None


# ---------------------------------------------------------------------- capabilities
@pytest.mark.req("TOOL-3", "RES-1", "PROM-1")
def test_capabilities_follow_registrations_and_can_be_overridden():
    server = Server("t")
    assert server.capabilities() == {}
    server.add_tool(lambda: "", name="t")
    assert server.capabilities() == {"tools": {"listChanged": True}, "logging": {}}
    assert Server("t", logging_capability=True).capabilities() == {"logging": {}}
    quiet = Server("t", logging_capability=False)
    quiet.add_tool(lambda: "", name="t")
    assert quiet.capabilities() == {"tools": {"listChanged": True}}
    assert Server("t", capabilities={"tools": {}}).capabilities() == {"tools": {}}


@pytest.mark.req("LIFE-14")
def test_capabilities_are_enforced_both_ways():
    with connected(Server("empty")) as (client, session, _):
        with pytest.raises(CapabilityNotSupported):
            client.list_tools()
        with pytest.raises(MethodNotFoundError):      # a client that asks anyway gets -32601
            client.session.request("tools/list")
        for method in ("resources/list", "prompts/list", "logging/setLevel", "completion/complete"):
            with pytest.raises(MethodNotFoundError):
                client.session.request(method, {})



def test_a_positional_only_parameter_is_still_refused_at_registration():
    server = Server("t")

    def positional(a, /):
        return a
    with pytest.raises(TypeError, match="positional-only parameter 'a'"):
        server.add_tool(positional)
    with pytest.raises(TypeError, match="positional-only parameter 'a'"):     # rule 8: read at once
        server.tool(positional)
    with pytest.raises(TypeError, match="expected ToolAnnotations or a dict, not int"):
        server.tool(annotations=5, name="t")(lambda: "")


def test_a_decorated_tool_is_read_on_first_use_and_tools_of_one_shape_share_the_reading():
    """server/tools.py rule 8: a decorated tool is read on its first listing, get or call,
    ``add_tool`` reads at once (its ``Tool`` is there); schema/signature.py rule 5: tools
    of one shape share their schemas and binder."""
    server = Server("t")

    @server.tool
    def echo(text: str) -> str:
        """Echo."""
        return text

    @server.tool
    def shout(text: str) -> str:
        """Shout."""
        return text.upper()

    entry, other = server.tools._entries["echo"], server.tools._entries["shout"]
    with pytest.raises(AttributeError):
        object.__getattribute__(entry, "tool")      # not read yet
    assert entry.tool is not None and entry.tool.description == "Echo." and other.tool.description == "Shout."
    assert entry.tool.input_schema is other.tool.input_schema and entry.bind is other.bind
    with connected(server) as (client, _, _):
        assert client.call_tool("echo", {"text": 1}).is_error
        assert client.list_tools()[0].to_dict() == entry.tool.to_dict()
        assert [t.to_dict() for t in client.list_tools()] == [entry.tool.to_dict(), other.tool.to_dict()]
        assert server.tools.get("echo") is entry.tool
        assert entry.made is other.made and client.protocol_version in entry.made     # Tools._wire's copy
    assert server.add_tool(lambda a: a, name="now") is object.__getattribute__(server.tools._entries["now"], "tool")


@pytest.mark.parametrize("value, text", [("hi", "hi"), (3, "3"), (2.5, "2.5"), (True, "true"), ("", "")])
def test_a_scalar_result_is_the_models_wire_dict(value, text):
    from mcp_ref.server.tool_results import tool_result
    from mcp_ref.types import CallToolResult, TextContent
    server = Server("t")
    server.add_tool(lambda: value, name="scalar")
    for version in ("2024-11-05", "2025-06-18", "2025-11-25", "2026-07-28", None):
        ctx = type("Ctx", (), {"era": None, "session": type("Session", (), {"protocol_version": version})()})()
        first = server.tools.handle_call(ctx, {"name": "scalar"})          # server/tools.py rule 9
        assert first == CallToolResult(content=[TextContent(text=text)]).to_dict(version)
        assert first == tool_result(value, version, name="t", wrap=False, check_output=None)
        first["content"][0]["text"] = "changed"         # each result is its own dict
        assert server.tools.handle_call(ctx, {"name": "scalar"})["content"][0]["text"] == text
