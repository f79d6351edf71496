"""Client-side checks of tool arguments (``Client(validate_input=True)``), in process
(``memory_pair``): arguments that do not match the cached tool's ``inputSchema``
raise ``ToolInputError`` and nothing is sent; flat schemas are checked in plain
Python, others with jsonschema (``MissingDependency`` without it); a tool not in
the cache is sent unchecked; ``tools/list_changed`` empties the cache; the default
sends everything and the server answers an ``isError`` result. Every message is
validated against its revision's schema. Spec: server/tools#calling-tools,
server/tools#security-considerations; client_requests.py rule 5.
"""
import sys
import threading

import pytest

from features_helpers import connected
from helpers import WAIT
from mcp_ref import InvalidParamsError, MissingDependency, Server, SessionError, ToolInputError

NESTED = {"type": "object",
          "properties": {"point": {"type": "object", "properties": {"x": {"type": "number"}},
                                   "required": ["x"]},
                         "tags": {"type": "array", "items": {"type": "string"}}},
          "required": ["point"]}


def make_server():
    """``add`` (a flat schema from the signature), ``plot`` (a nested, hand-written one);
    ``calls`` counts what the tools actually ran."""
    server = Server("validated")
    calls = []

    @server.tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        calls.append("add")
        return a + b

    def plot(point, tags=()):
        calls.append("plot")
        return f"x={point['x']} tags={list(tags)}"

    server.add_tool(plot, name="plot", input_schema=NESTED)
    return server, calls


def tool_calls(recorder) -> list:
    return [m for m in recorder.sent() if m.get("method") == "tools/call"]


def test_a_flat_schema_is_checked_before_sending(wire_validator):
    server, calls = make_server()
    with connected(server, "2025-11-25", wire_validator, validate_input=True) as (client, _, recorder):
        client.list_tools()
        with pytest.raises(ToolInputError) as info:
            client.call_tool("add", {"a": 1, "b": "two"})
        error = info.value
        assert isinstance(error, SessionError)
        assert error.tool == "add" and error.arguments == {"a": 1, "b": "two"}
        assert error.problem == "b: 'two' is not of type 'integer'"
        assert "'add'" in str(error) and "b: 'two' is not of type 'integer'" in str(error)
        with pytest.raises(ToolInputError, match="'b' is a required property"):
            client.call_tool("add", {"a": 1})
        with pytest.raises(ToolInputError, match="'a' is a required property"):
            client.call_tool("add")                      # no arguments: {} is checked
        assert tool_calls(recorder) == [] and calls == []
        assert client.call_tool("add", {"a": 2, "b": 3}).content[0].text == "5"
        assert len(tool_calls(recorder)) == 1 and calls == ["add"]


def test_a_nested_schema_is_checked_with_jsonschema(wire_validator):
    pytest.importorskip("jsonschema")
    server, calls = make_server()
    with connected(server, "2025-11-25", wire_validator, validate_input=True) as (client, _, recorder):
        client.list_tools()
        with pytest.raises(ToolInputError) as info:
            client.call_tool("plot", {"point": {"x": "left"}})
        assert info.value.tool == "plot" and info.value.arguments == {"point": {"x": "left"}}
        assert info.value.problem == "point.x: 'left' is not of type 'number'"
        with pytest.raises(ToolInputError, match=r"tags\[1\]: 2 is not of type 'string'"):
            client.call_tool("plot", {"point": {"x": 1}, "tags": ["a", 2]})
        with pytest.raises(ToolInputError, match="point: 'x' is a required property"):
            client.call_tool("plot", {"point": {}})
        assert tool_calls(recorder) == [] and calls == []
        result = client.call_tool("plot", {"point": {"x": 1.5}, "tags": ["a"]})
        assert not result.is_error and result.content[0].text == "x=1.5 tags=['a']"
        assert calls == ["plot"]


def test_a_tool_not_in_the_cache_is_sent_unchecked(wire_validator):
    server, calls = make_server()
    with connected(server, "2025-11-25", wire_validator, validate_input=True) as (client, _, recorder):
        result = client.call_tool("add", {"a": 1, "b": "two"})      # never listed
        assert result.is_error and "not of type 'integer'" in result.content[0].text
        assert len(tool_calls(recorder)) == 1 and calls == []    # the server refused it
        assert not [m for m in recorder.sent() if m.get("method") == "tools/list"], "no request to fill the cache"
        client.list_tools()
        with pytest.raises(ToolInputError):
            client.call_tool("add", {"a": 1, "b": "two"})
        with pytest.raises(InvalidParamsError, match="Unknown tool"):   # unknown to the server too
            client.call_tool("missing", {"anything": 1})
        assert len(tool_calls(recorder)) == 2


def test_tools_list_changed_empties_the_cache(wire_validator):
    server, calls = make_server()
    changed = threading.Event()
    with connected(server, "2025-11-25", wire_validator, validate_input=True,
                   on_tools_list_changed=changed.set) as (client, _, recorder):
        client.list_tools()
        with pytest.raises(ToolInputError):
            client.call_tool("add", {"a": "x", "b": 1})
        server.add_tool(lambda: "new", name="extra")
        assert changed.wait(WAIT), "notifications/tools/list_changed never arrived"
        result = client.call_tool("add", {"a": "x", "b": 1})           # sent: the cache was emptied
        assert result.is_error and len(tool_calls(recorder)) == 1
        client.list_tools()                                            # cached again: checked again
        with pytest.raises(ToolInputError):
            client.call_tool("add", {"a": "x", "b": 1})
        assert len(tool_calls(recorder)) == 1


def test_off_by_default_the_server_answers_an_error_result(wire_validator):
    server, calls = make_server()
    with connected(server, "2025-11-25", wire_validator) as (client, _, recorder):
        assert client.validate_input is False
        client.list_tools()
        result = client.call_tool("add", {"a": 1, "b": "two"})
        assert result.is_error and "not of type 'integer'" in result.content[0].text
        assert len(tool_calls(recorder)) == 1 and calls == []


def test_without_jsonschema_a_nested_schema_needs_it_and_a_flat_one_does_not(monkeypatch):
    server, calls = make_server()
    with connected(server, "2025-11-25", validate_input=True) as (client, _, recorder):
        client.list_tools()
        monkeypatch.setitem(sys.modules, "jsonschema", None)          # import jsonschema now fails
        monkeypatch.setitem(sys.modules, "jsonschema_specifications", None)
        with pytest.raises(ToolInputError):
            client.call_tool("add", {"a": 1, "b": "two"})             # the plain path
        assert client.call_tool("add", {"a": 1, "b": 2}).content[0].text == "3"
        with pytest.raises(MissingDependency) as info:
            client.call_tool("plot", {"point": {"x": 1}})
        assert info.value.package == "jsonschema" and "validate_input" in str(info.value)
        assert [m["params"]["name"] for m in tool_calls(recorder)] == ["add"]
    with connected(server, "2025-11-25") as (client, _, _):             # not needed: not raised
        client.list_tools()
        assert client.call_tool("plot", {"point": {"x": 1}}).content[0].text == "x=1 tags=[]"


def test_a_task_augmented_call_is_checked_too(wire_validator):
    server = Server("validated-tasks")
    calls = []

    @server.tool(task_support="optional")
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        calls.append("add")
        return a + b
    with connected(server, "2025-11-25", wire_validator, validate_input=True) as (client, _, recorder):
        client.list_tools()
        with pytest.raises(ToolInputError, match="b: 'two' is not of type 'integer'"):
            client.call_tool_as_task("add", {"a": 1, "b": "two"})
        assert tool_calls(recorder) == [] and calls == []
        task = client.call_tool_as_task("add", {"a": 2, "b": 3})
        assert client.task_result(task.task_id, timeout=WAIT).content[0].text == "5"
