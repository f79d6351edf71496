"""Every Python that setup.cfg claims (3.9 to 3.13) reads tools and models alike.

These run under each interpreter (``.ci/run`` runs the suite on the oldest and the
newest too). On 3.9 they fail without ``schema/typehints.py`` and the ``extra=`` keyword
of ``types/base.py``: 3.9 has no ``types.UnionType``, no ``field(kw_only=)``, no
``typing.is_typeddict``, evaluates no ``int | None``, resolves no string inside
``list[...]``, and calls ``list[int]`` a class.
"""
import dataclasses
import importlib.util
import sys
import textwrap
from dataclasses import dataclass
from typing import Annotated, Any, Dict, List, Literal, Optional, TypedDict, Union

import pytest

from features_helpers import connected
from mcp_ref import Server
from test_signature import bind_arguments
from mcp_ref.schema.signature import Field, input_schema, output_schema
from mcp_ref.schema.typehints import UNION_ORIGINS, evaluate, get_type_hints, is_typeddict, is_union
from mcp_ref.types import CallToolResult, Model, TextContent, Tool

INT_OR_NULL = {"anyOf": [{"type": "integer"}, {"type": "null"}]}


@dataclass
class Point:
    x: float
    y: float = 0.0


class _Title(TypedDict):
    title: str


class Movie(_Title, total=False):
    year: int


def typed(a: Optional[int], b: Union[int, str], c: list[int], d: Dict[str, int], e: List[Point],
          f: Literal["x", "y"] = "x", g: Optional[Movie] = None, h: Optional[list[Point]] = None) -> str:
    """A tool with the hints people write on 3.9.

    Args:
        a: maybe a number.
    """
    return repr((a, b, c, d, e, f, g, h))


EXPECTED = {
    "type": "object",
    "properties": {
        "a": {**INT_OR_NULL, "description": "maybe a number."},
        "b": {"anyOf": [{"type": "integer"}, {"type": "string"}]},
        "c": {"type": "array", "items": {"type": "integer"}},
        "d": {"type": "object", "additionalProperties": {"type": "integer"}},
        "e": {"type": "array", "items": {"type": "object", "properties": {
            "x": {"type": "number"}, "y": {"type": "number", "default": 0.0}}, "required": ["x"]}},
        "f": {"type": "string", "enum": ["x", "y"], "default": "x"},
        "g": {"anyOf": [{"type": "object", "properties": {"title": {"type": "string"}, "year": {"type": "integer"}},
                         "required": ["title"]}, {"type": "null"}], "default": None},
        "h": {"anyOf": [{"type": "array", "items": {"type": "object", "properties": {
            "x": {"type": "number"}, "y": {"type": "number", "default": 0.0}}, "required": ["x"]}},
            {"type": "null"}], "default": None},
    },
    "required": ["a", "b", "c", "d", "e"],
}


def test_a_tool_with_optional_union_and_generic_hints_lists_and_runs(wire_validator):
    server = Server("versions")
    server.tool(typed)
    with connected(server, wire_validator=wire_validator) as (client, _, _):
        (tool,) = client.list_tools()
        assert tool.input_schema == EXPECTED
        result = client.call_tool("typed", {"a": None, "b": "s", "c": [1], "d": {"k": 2}, "e": [{"x": 1}],
                                            "g": {"title": "t"}, "h": [{"x": 2, "y": 3}]})
    assert not result.is_error
    assert result.content[0].text == repr((None, "s", [1], {"k": 2}, [Point(1.0, 0.0)], "x", {"title": "t"},
                                           [Point(2.0, 3.0)]))


FUTURE_TOOLS = '''
from __future__ import annotations

from typing import Annotated, Literal

from mcp_ref.schema.signature import Field


class Unknown:
    pass


def tool(a: int | None, b: list[int | None], c: dict[str, int] | None = None,
         d: Annotated[int | None, Field(description="or-ed", minimum=1 | 2)] = None,
         e: Literal["a|b"] = "a|b") -> int | None:
    return a


def unresolved(a: Missing | None = None, b: Unknown | None = None) -> str:
    return ""
'''


@pytest.fixture
def future_module(tmp_path):
    """A user's tool module written for 3.10+ (``from __future__ import annotations``,
    PEP 604 unions in its hints), imported on whatever Python runs the tests."""
    path = tmp_path / "future_tools.py"
    path.write_text(textwrap.dedent(FUTURE_TOOLS), encoding="utf-8")
    spec = importlib.util.spec_from_file_location("future_tools", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["future_tools"] = module
    try:
        spec.loader.exec_module(module)
        yield module
    finally:
        del sys.modules["future_tools"]


def test_pep604_strings_under_future_annotations_are_read_on_every_version(future_module, wire_validator):
    schema = input_schema(future_module.tool)
    assert schema == {"type": "object", "properties": {
        "a": INT_OR_NULL,
        "b": {"type": "array", "items": INT_OR_NULL},
        "c": {"anyOf": [{"type": "object", "additionalProperties": {"type": "integer"}}, {"type": "null"}],
              "default": None},
        "d": {**INT_OR_NULL, "description": "or-ed", "minimum": 3, "default": None},
        "e": {"type": "string", "enum": ["a|b"], "default": "a|b"}}, "required": ["a", "b"]}
    assert bind_arguments(future_module.tool, {"a": 1, "b": [None, 2]}) == {"a": 1, "b": [None, 2]}
    server = Server("future")
    server.tool(future_module.tool)
    with connected(server, wire_validator=wire_validator) as (client, _, _):
        (tool,) = client.list_tools()
        assert tool.input_schema == schema
        assert client.call_tool("tool", {"a": 5, "b": []}).content[0].text == "5"
    assert output_schema(future_module.tool, wrap=True) == {"type": "object", "properties": {"result": INT_OR_NULL},
                                                            "required": ["result"]}


def test_a_union_with_a_name_that_does_not_resolve_stays_unknown(future_module):
    hints = get_type_hints(future_module.unresolved)
    assert hints["a"] == "Missing | None"                  # left as a string: any value
    assert hints["b"] == Optional[future_module.Unknown]
    assert input_schema(future_module.unresolved)["properties"]["a"] == {"default": None}


def test_evaluate_reads_bars_as_unions_and_leaves_values_alone():
    namespace = {"Annotated": Annotated, "Literal": Literal, "Field": Field, "Point": Point}
    assert evaluate("int | None", namespace) == Optional[int]
    assert evaluate("list[int | str] | None", namespace) == Optional[list[Union[int, str]]]
    assert evaluate("Point | dict[str, int | None]", namespace) == Union[Point, dict[str, Optional[int]]]
    marked = evaluate("Annotated[int | None, Field(minimum=4 | 1)]", namespace)
    assert marked.__origin__ == Optional[int] and marked.__metadata__[0].schema == {"minimum": 5}
    assert evaluate("Literal['a|b']", namespace) == Literal["a|b"]
    assert evaluate("Nowhere | None", namespace) == "Nowhere | None"
    assert evaluate("int |", namespace) == "int |"        # not an expression: kept
    assert evaluate(int, namespace) is int


@dataclass
class Node:
    name: str
    children: Optional[list["Node"]] = None
    by_key: Optional[dict[str, "Node"]] = None
    choice: Literal["Node"] = "Node"


def test_strings_inside_builtin_generics_are_resolved():
    """typing resolves ``list["Node"]`` only from 3.11."""
    hints = get_type_hints(Node)
    assert hints["children"] == Optional[list[Node]]
    assert hints["by_key"] == Optional[dict[str, Node]]
    assert hints["choice"] == Literal["Node"]


def test_union_and_typeddict_checks():
    assert is_union(Optional[int]) and is_union(Union[int, str]) and not is_union(list[int])
    assert Union in UNION_ORIGINS
    if sys.version_info >= (3, 10):
        assert is_union(eval("int | None"))
    assert is_typeddict(Movie) and is_typeddict(_Title)
    assert not is_typeddict(dict) and not is_typeddict(dict[str, int]) and not is_typeddict(Point)


# ---------------------------------------------------------------------- models with extra
@dataclass
class Required(Model):
    """A model whose first field has no default, after the inherited ``extra``."""
    name: str
    count: int = 0


def test_models_are_built_with_extra_and_positional_fields():
    tool = Tool(name="t", input_schema={"type": "object"}, extra={"x-vendor": 1})
    assert tool.extra == {"x-vendor": 1}
    assert tool.to_dict() == {"name": "t", "inputSchema": {"type": "object"}, "x-vendor": 1}
    assert Tool(name="t", input_schema={}).extra == {}
    assert TextContent("hi") == TextContent(text="hi") != TextContent("hi", extra={"k": 1})
    mine = Required("n", extra={"more": True})
    assert (mine.name, mine.count, mine.extra) == ("n", 0, {"more": True})
    assert Required.from_dict({"name": "n", "more": True}) == mine
    assert Required(name="m", count=2).to_dict() == {"name": "m", "count": 2}
    given = {"a": 1}
    assert Required("n", extra=given).extra is not given   # the model keeps its own copy
    assert [f.name for f in dataclasses.fields(Required)] == ["extra", "name", "count"]
    with pytest.raises(TypeError):
        Required()
    with pytest.raises(TypeError):
        Required("n", wrong=1)


def test_decoded_models_keep_unknown_members():
    result = CallToolResult.from_dict({"content": [{"type": "text", "text": "a", "x": 1}], "future": [1]})
    assert result.extra == {"future": [1]} and result.content[0].extra == {"x": 1}
    assert result.to_dict() == {"content": [{"type": "text", "text": "a", "x": 1}], "future": [1]}
    plain = CallToolResult.from_dict({"content": []})
    assert plain.extra == {} and plain.extra is not CallToolResult.from_dict({"content": []}).extra


def test_any_hint_decodes_as_is():
    @dataclass
    class Loose(Model):
        value: Any = None
    assert Loose.from_dict({"value": {"deep": [1]}}).value == {"deep": [1]}


def none_default(a: int = None, b: Annotated[Optional[int], Field(minimum=1)] = None) -> str:   # noqa: RUF013
    return ""


def test_a_none_default_is_not_made_optional_on_any_version():
    """3.9 and 3.10's typing would read ``a: int = None`` as ``Optional[int]`` (3.11 stopped)."""
    assert get_type_hints(none_default)["a"] is int
    assert input_schema(none_default) == {"type": "object", "properties": {
        "a": {"type": "integer", "default": None},
        "b": {**INT_OR_NULL, "minimum": 1, "default": None}}}
