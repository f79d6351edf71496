"""Python signatures to JSON Schema and back: schemas, docstrings, output
schemas, argument binding, to_jsonable and validation.
Spec: server/tools#tool, server/tools#structured-content."""
import enum
import sys
from dataclasses import dataclass, field
from typing import Annotated, Any, Dict, List, Literal, NewType, Optional, Sequence, Tuple, TypedDict, Union

import pytest

from mcp_ref.errors import InvalidParamsError, MissingDependency
from mcp_ref.schema import signature
from mcp_ref.server.tools import Binder
from mcp_ref.schema.jsonable import to_jsonable
from mcp_ref.schema.signature import (NO_DEFAULT, Field, Reading, input_schema, output_schema,
                               schema_for_type)
from mcp_ref.schema.validation import validate


# ---------------------------------------------------------------------- sample types
class Color(enum.Enum):
    RED = "red"
    GREEN = "green"


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


@dataclass
class Point:
    x: float
    y: float = 0.0


@dataclass
class Line:
    start: Point
    end: Point
    label: Optional[str] = None


@dataclass
class Node:
    value: int
    children: List["Node"] = field(default_factory=list)


@dataclass
class Tree:
    """A tree.

    Attributes:
        root: the root node
    """
    root: Node
    name: str = field(default="t", metadata={"description": "tree name"})


@dataclass
class Positive:
    n: int

    def __post_init__(self):
        if self.n <= 0:
            raise ValueError("n must be positive")


# Optional keys as Python 3.9 writes them (NotRequired is 3.11+; MovieMarked below).
class _MovieTitle(TypedDict):
    title: str


class Movie(_MovieTitle, total=False):
    year: int
    where: Point


if sys.version_info >= (3, 11):
    from typing import NotRequired

    class MovieMarked(TypedDict):
        title: str
        year: NotRequired[int]
        where: NotRequired[Point]


class Context:
    """Stands for the server's Context class."""


class SubContext(Context):
    pass


class TextContent:
    """Stands for a content block (the types module's classes carry TYPE)."""
    TYPE = "text"


class Opaque:
    pass


UserId = NewType("UserId", int)

POINT = {"type": "object", "properties": {"x": {"type": "number"}, "y": {"type": "number", "default": 0.0}},
         "required": ["x"]}
NODE_DEF = {"type": "object", "properties": {"value": {"type": "integer"},
                                             "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}},
            "required": ["value"]}
MOVIE = {"type": "object", "properties": {"title": {"type": "string"}, "year": {"type": "integer"}, "where": POINT},
         "required": ["title"]}

# ---------------------------------------------------------------------- schema_for_type
TYPE_SCHEMAS = [
    (int, {"type": "integer"}),
    (float, {"type": "number"}),
    (str, {"type": "string"}),
    (bool, {"type": "boolean"}),
    (None, {"type": "null"}),
    (type(None), {"type": "null"}),
    (bytes, {"type": "string", "contentEncoding": "base64"}),
    (Any, {}),
    (Opaque, {}),
    (UserId, {"type": "integer"}),
    (list, {"type": "array"}),
    (list[int], {"type": "array", "items": {"type": "integer"}}),
    (List[str], {"type": "array", "items": {"type": "string"}}),
    (Sequence[float], {"type": "array", "items": {"type": "number"}}),
    (set[str], {"type": "array", "items": {"type": "string"}, "uniqueItems": True}),
    (frozenset, {"type": "array", "uniqueItems": True}),
    (tuple, {"type": "array"}),
    (tuple[int, ...], {"type": "array", "items": {"type": "integer"}}),
    (Tuple[int, str], {"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"}],
                       "minItems": 2, "maxItems": 2}),
    (dict, {"type": "object"}),
    (dict[str, Any], {"type": "object"}),
    (Dict[str, int], {"type": "object", "additionalProperties": {"type": "integer"}}),
    (dict[str, list[Point]], {"type": "object", "additionalProperties": {"type": "array", "items": POINT}}),
    (Optional[int], {"anyOf": [{"type": "integer"}, {"type": "null"}]}),
    (Union[int, str, Point], {"anyOf": [{"type": "integer"}, {"type": "string"}, POINT]}),
    (Literal["a", "b"], {"type": "string", "enum": ["a", "b"]}),
    (Literal[1, 2], {"type": "integer", "enum": [1, 2]}),
    (Literal[True], {"type": "boolean", "enum": [True]}),
    (Literal[1, "a"], {"enum": [1, "a"]}),
    (Color, {"type": "string", "enum": ["red", "green"]}),
    (Level, {"type": "integer", "enum": [1, 2]}),
    (Annotated[int, "how many"], {"type": "integer", "description": "how many"}),
    (Annotated[int, Field("how many", minimum=0)], {"type": "integer", "description": "how many", "minimum": 0}),
    (Annotated[Optional[str], Field(format="email")],
     {"anyOf": [{"type": "string"}, {"type": "null"}], "format": "email"}),
    (Point, POINT),
    (Line, {"type": "object", "properties": {
        "start": POINT, "end": POINT,
        "label": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None}},
        "required": ["start", "end"]}),
    (Movie, MOVIE),
    *([(MovieMarked, MOVIE)] if sys.version_info >= (3, 11) else []),
    *([(eval("int | None"), {"anyOf": [{"type": "integer"}, {"type": "null"}]})] if sys.version_info >= (3, 10) else []),
    (Node, {"$ref": "#/$defs/Node", "$defs": {"Node": NODE_DEF}}),
    (Tree, {"type": "object", "properties": {"root": {"$ref": "#/$defs/Node", "description": "the root node"},
                                             "name": {"type": "string", "description": "tree name", "default": "t"}},
            "required": ["root"], "description": "A tree.", "$defs": {"Node": NODE_DEF}}),
    (list[Node], {"type": "array", "items": {"$ref": "#/$defs/Node"}, "$defs": {"Node": NODE_DEF}}),
]


@pytest.mark.req("BASE-20")
@pytest.mark.parametrize("tp, expected", TYPE_SCHEMAS, ids=[str(i) for i in range(len(TYPE_SCHEMAS))])
def test_schema_for_type(tp, expected):
    assert schema_for_type(tp) == expected


@pytest.mark.req("BASE-15", "BASE-20")
@pytest.mark.parametrize("tp, expected", TYPE_SCHEMAS, ids=[str(i) for i in range(len(TYPE_SCHEMAS))])
def test_type_schemas_are_valid_json_schema(tp, expected):
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.Draft202012Validator.check_schema(schema_for_type(tp))


# ---------------------------------------------------------------------- input_schema
def add(a: int, b: int = 2) -> int:
    """Add two numbers.

    Args:
        a (int): The first number,
            on two lines.
        b: The second number.

    Returns:
        The sum.

    Raises:
        ValueError: never.
    """
    return a + b


def search(query: Annotated[str, "What to look for"], ctx: Context, limit: int = 10, *args,
           color: Color = Color.RED, where: Optional[Point] = None, tags: tuple = ("a",), **kwargs) -> list[str]:
    """Search.

    Args:
        query: overridden by Annotated.
        limit: At most this many.
    """
    return []


def no_params():
    return "pong"


def untyped(a, b=object(), c=float("nan")):
    return a


def optional_context(x: int, ctx: Optional[SubContext] = None) -> dict:
    return {"x": x}


def draw(line: Line, points: list[Point], movie: Movie, level: Level = Level.LOW,
         tree: Optional[Tree] = None, data: bytes = b"hi") -> Line:
    return line


INPUT_SCHEMAS = [
    (add, {"type": "object", "properties": {
        "a": {"type": "integer", "description": "The first number, on two lines."},
        "b": {"type": "integer", "description": "The second number.", "default": 2}},
        "required": ["a"]}),
    (search, {"type": "object", "properties": {
        "query": {"type": "string", "description": "What to look for"},
        "limit": {"type": "integer", "description": "At most this many.", "default": 10},
        "color": {"type": "string", "enum": ["red", "green"], "default": "red"},
        "where": {"anyOf": [POINT, {"type": "null"}], "default": None},
        "tags": {"type": "array", "default": ["a"]}},
        "required": ["query"]}),
    (no_params, {"type": "object", "properties": {}}),
    (untyped, {"type": "object", "properties": {"a": {}, "b": {}, "c": {}}, "required": ["a"]}),
    (optional_context, {"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]}),
]


@pytest.mark.req("BASE-20")
@pytest.mark.parametrize("fn, expected", INPUT_SCHEMAS, ids=lambda v: getattr(v, "__name__", ""))
def test_input_schema(fn, expected):
    assert input_schema(fn, skip=(Context,)) == expected


@pytest.mark.req("BASE-15", "BASE-20")
@pytest.mark.parametrize("fn", [add, search, no_params, untyped, optional_context, draw])
def test_input_schemas_are_valid_json_schema(fn):
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.Draft202012Validator.check_schema(input_schema(fn, skip=(Context,)))


def test_context_params():
    assert Reading(search, (Context,)).context == ["ctx"]
    assert Reading(optional_context, (Context,)).context == ["ctx"]
    assert Reading(add, (Context,)).context == []
    assert Reading(search).context == []
    # Without skip the context is an ordinary (unknown-class) parameter.
    assert input_schema(search)["properties"]["ctx"] == {}


def test_context_annotation_that_does_not_resolve():
    """An annotation naming a class the module cannot see (imported under
    TYPE_CHECKING) is still recognised by name; the others still resolve."""
    class ServerContext:
        pass

    def tool(n: "int", ctx: "Optional[ServerContext]" = None) -> "int":
        return n

    assert Reading(tool, (ServerContext,)).context == ["ctx"]
    assert input_schema(tool, skip=(ServerContext,)) == {
        "type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}


def test_positional_only_parameters_are_refused():
    def tool(a: int, /, b: int):
        return a

    with pytest.raises(TypeError, match="positional-only parameter 'a'"):
        input_schema(tool)


def test_callable_object_and_method():
    class Tools:
        def method(self, a: int) -> int:
            """Method doc."""
            return a

        def __call__(self, b: str) -> str:
            """Call doc."""
            return b

    tools = Tools()
    assert input_schema(tools.method) == {"type": "object", "properties": {"a": {"type": "integer"}},
                                          "required": ["a"]}
    assert input_schema(tools) == {"type": "object", "properties": {"b": {"type": "string"}}, "required": ["b"]}
    assert Reading(tools).description == "Call doc."
    assert bind_arguments(tools.method, {"a": 1}) == {"a": 1}


# ---------------------------------------------------------------------- docstrings
def _doc(text):
    def fn():
        pass
    fn.__doc__ = text
    return fn


DESCRIPTIONS = [
    (add, "Add two numbers."),
    (search, "Search."),
    (no_params, None),
    (_doc("   "), None),
    (_doc("\n    Args:\n        a: only args\n    "), None),
    (_doc("One line."), "One line."),
    (_doc("""Summary.

        Body paragraph
        on two lines.

        Args:
            a: x

        Example:
            >>> f()
        """), "Summary.\n\nBody paragraph\non two lines.\n\nExample:\n    >>> f()"),
    (_doc("Summary.\n\nReturns:\n    dict: things\nYields:\n    more\nRaises:\n    KeyError: no"), "Summary."),
]


@pytest.mark.parametrize("fn, expected", DESCRIPTIONS)
def test_description_of(fn, expected):
    assert Reading(fn).description == expected


def test_docstring_argument_forms():
    def tool(a, b, c, d, *args, **kwargs):
        """Do it.

        Arguments:
            a (list[int]): first
            b: second,
                continued
                twice.
            c:
                on the next line
            *args: ignored
        """

    properties = input_schema(tool)["properties"]
    assert properties == {"a": {"description": "first"}, "b": {"description": "second, continued twice."},
                          "c": {"description": "on the next line"}, "d": {}}


# ---------------------------------------------------------------------- output_schema
def returns(annotation):
    def fn():
        pass
    if annotation is not ...:
        fn.__annotations__["return"] = annotation
    return fn


def wrapped(inner):
    return {"type": "object", "properties": {"result": inner}, "required": ["result"]}


OUTPUT_SCHEMAS = [
    # (return annotation (... = none), without wrap, with wrap)
    (Point, POINT, POINT),
    (Movie, MOVIE, MOVIE),
    (dict, {"type": "object"}, {"type": "object"}),
    (dict[str, int], {"type": "object", "additionalProperties": {"type": "integer"}},
     {"type": "object", "additionalProperties": {"type": "integer"}}),
    (Annotated[Point, "a point"], {**POINT, "description": "a point"}, {**POINT, "description": "a point"}),
    (Node, {**NODE_DEF, "$defs": {"Node": NODE_DEF}}, {**NODE_DEF, "$defs": {"Node": NODE_DEF}}),
    (int, None, wrapped({"type": "integer"})),
    (list[Point], None, wrapped({"type": "array", "items": POINT})),
    (Optional[Point], None, wrapped({"anyOf": [POINT, {"type": "null"}]})),
    (Any, None, wrapped({})),
    (..., None, None),
    (None, None, None),
    (str, None, None),
    (TextContent, None, None),
    (list[TextContent], None, None),
    (Union[str, TextContent], None, None),
]


@pytest.mark.req("BASE-20")
@pytest.mark.parametrize("annotation, plain, wrap", OUTPUT_SCHEMAS, ids=[str(i) for i in range(len(OUTPUT_SCHEMAS))])
def test_output_schema(annotation, plain, wrap):
    fn = returns(annotation)
    assert output_schema(fn) == plain
    assert output_schema(fn, wrap=True) == wrap
    if wrap is not None:
        jsonschema = pytest.importorskip("jsonschema")
        jsonschema.Draft202012Validator.check_schema(wrap)


def test_output_schema_unstructured_classes():
    assert output_schema(returns(Opaque), wrap=True) == wrapped({})
    assert output_schema(returns(Opaque), wrap=True, unstructured=(Opaque,)) is None
    assert output_schema(returns(list[Opaque]), wrap=True, unstructured=(Opaque,)) is None


# ---------------------------------------------------------------------- bind_arguments
def bind_arguments(fn, arguments, *, inject=None):
    """One call's keyword arguments through a tool's ``Binder`` (server/tools.py)."""
    inject = inject or {}
    kwargs = Binder(signature.Reading(fn), tuple(inject))(arguments)
    kwargs.update((name, value) for name, value in inject.items() if name in kwargs)
    return kwargs


def tool_all(line: Line, points: list[Point], by_name: dict[str, Point], maybe: Optional[Point],
             pair: tuple[int, str], many: tuple[Point, ...], tags: set[str], color: Color, level: Level,
             movie: Movie, data: bytes, ratio: float, either: Union[Point, list[Point]], node: Node,
             nothing: Optional[Point] = None, anything: Any = None, ctx: Optional[Context] = None):
    return locals()


def test_bind_converts_nested_values():
    ctx = Context()
    kwargs = bind_arguments(tool_all, {
        "line": {"start": {"x": 1, "y": 2}, "end": {"x": 3}, "label": "l"},
        "points": [{"x": 1}, {"x": 2, "y": 5}],
        "by_name": {"a": {"x": 1}},
        "maybe": {"x": 7},
        "pair": [1, "b"],
        "many": [{"x": 1}, {"x": 2}],
        "tags": ["a", "b", "a"],
        "color": "green",
        "level": 2,
        "movie": {"title": "M", "where": {"x": 1}, "extra": True},
        "data": "aGk=",
        "ratio": 3,
        "either": [{"x": 4}],
        "node": {"value": 1, "children": [{"value": 2, "children": [{"value": 3}]}]},
        "anything": {"x": 1},
    }, inject={"ctx": ctx, "not_a_parameter": 1})
    assert kwargs["line"] == Line(Point(1.0, 2.0), Point(3.0, 0.0), "l")
    assert isinstance(kwargs["line"].start, Point)
    assert kwargs["points"] == [Point(1.0), Point(2.0, 5.0)]
    assert kwargs["by_name"] == {"a": Point(1.0)}
    assert kwargs["maybe"] == Point(7.0)
    assert kwargs["pair"] == (1, "b")
    assert kwargs["many"] == (Point(1.0), Point(2.0))
    assert kwargs["tags"] == {"a", "b"}
    assert kwargs["color"] is Color.GREEN
    assert kwargs["level"] is Level.HIGH
    assert kwargs["movie"] == {"title": "M", "where": Point(1.0), "extra": True}
    assert kwargs["data"] == b"hi"
    assert kwargs["ratio"] == 3.0 and isinstance(kwargs["ratio"], float)
    assert kwargs["either"] == [Point(4.0)]
    assert kwargs["node"] == Node(1, [Node(2, [Node(3)])])
    assert kwargs["anything"] == {"x": 1}
    assert kwargs["ctx"] is ctx
    assert "not_a_parameter" not in kwargs and "nothing" not in kwargs
    assert tool_all(**kwargs)["line"].end == Point(3.0)


def test_bind_keeps_none_and_plain_values():
    assert bind_arguments(add, {"a": 1}) == {"a": 1}
    assert bind_arguments(optional_context, {"x": 1, "ctx": None}, inject={}) == {"x": 1, "ctx": None}
    kwargs = bind_arguments(draw, {"line": {"start": {"x": 0}, "end": {"x": 1}}, "points": [],
                                   "movie": {"title": "t"}, "tree": None})
    assert kwargs["tree"] is None and kwargs["points"] == []
    assert bind_arguments(no_params, None) == {}


def test_bind_then_to_jsonable_round_trips():
    arguments = {"line": {"start": {"x": 1.0, "y": 2.0}, "end": {"x": 3.0, "y": 0.0}, "label": None},
                 "points": [{"x": 1.5, "y": 0.0}], "movie": {"title": "t", "year": 1999},
                 "level": 2, "tree": {"root": {"value": 1, "children": []}, "name": "n"}, "data": "AAE="}
    kwargs = bind_arguments(draw, arguments)
    assert to_jsonable(kwargs) == arguments


def test_bind_accepts_unknown_names_with_kwargs():
    def tool(a: int, **extra: Point):
        return extra

    assert bind_arguments(tool, {"a": 1, "p": {"x": 1}}) == {"a": 1, "p": Point(1.0)}


BIND_ERRORS = [
    # (function, arguments, inject, message substring, data)
    (add, {"a": 1, "c": 2}, None, "unknown argument: 'c'", {"unknown": ["c"]}),
    (add, {"a": 1, "c": 2, "d": 3}, None, "unknown arguments: 'c', 'd'", {"unknown": ["c", "d"]}),
    (add, {}, None, "missing required argument: 'a'", {"missing": ["a"]}),
    (search, {"query": "q", "ctx": "forged"}, {"ctx": 1}, "unknown argument: 'ctx'", {"unknown": ["ctx"]}),
    (draw, {"points": []}, None, "missing required arguments: 'line', 'movie'", {"missing": ["line", "movie"]}),
    (tool_all, {"color": "blue"}, None, "invalid argument color: 'blue' is not one of ['red', 'green']",
     {"argument": "color", "path": "color"}),
    (draw, {"line": {"start": {"y": 1}, "end": {"x": 1}}}, None,
     "invalid argument line.start: missing required field 'x'", {"argument": "line", "path": "line.start"}),
    (draw, {"line": {"start": "here", "end": {"x": 1}}}, None,
     "invalid argument line.start: expected an object (Point), got str", {"argument": "line", "path": "line.start"}),
    (draw, {"line": {}}, None, "missing required fields 'start', 'end'", {"argument": "line", "path": "line"}),
    (draw, {"points": [{"x": 1}, {}]}, None, "invalid argument points[1]: missing required field 'x'",
     {"argument": "points", "path": "points[1]"}),
    (draw, {"movie": {"year": 1}}, None, "invalid argument movie: missing required field 'title'",
     {"argument": "movie", "path": "movie"}),
    (tool_all, {"pair": [1]}, None, "invalid argument pair: expected 2 items, got 1",
     {"argument": "pair", "path": "pair"}),
    (tool_all, {"data": "not base64!"}, None, "invalid argument data: not valid base64",
     {"argument": "data", "path": "data"}),
    (tool_all, {"node": {"value": 1, "children": [{}]}}, None,
     "invalid argument node.children[0]: missing required field 'value'",
     {"argument": "node", "path": "node.children[0]"}),
]


@pytest.mark.parametrize("fn, arguments, inject, message, data", BIND_ERRORS)
def test_bind_errors(fn, arguments, inject, message, data):
    with pytest.raises(InvalidParamsError) as info:
        bind_arguments(fn, arguments, inject=inject)
    assert message in info.value.message
    assert info.value.data == data
    assert info.value.code == -32602


def test_bind_reports_dataclass_validation_errors():
    def tool(p: Positive):
        return p

    assert bind_arguments(tool, {"p": {"n": 1}}) == {"p": Positive(1)}
    with pytest.raises(InvalidParamsError, match="invalid argument p: n must be positive"):
        bind_arguments(tool, {"p": {"n": 0}})


def test_bind_refuses_non_object_arguments():
    with pytest.raises(InvalidParamsError, match="arguments must be an object"):
        bind_arguments(add, [1, 2])


# ---------------------------------------------------------------------- to_jsonable
JSONABLE = [
    (Point(1.0, 2.0), {"x": 1.0, "y": 2.0}),
    (Line(Point(1), Point(2), None), {"start": {"x": 1, "y": 0.0}, "end": {"x": 2, "y": 0.0}, "label": None}),
    (Color.RED, "red"),
    (Level.HIGH, 2),
    ((1, (2, 3)), [1, [2, 3]]),
    ({"k": {5}}, {"k": [5]}),
    ({Color.RED: 1, 2: "b"}, {"red": 1, "2": "b"}),
    (b"\x00\x01", "AAE="),
    ([Node(1, [Node(2)])], [{"value": 1, "children": [{"value": 2, "children": []}]}]),
    ("text", "text"),
    (None, None),
    (Point, Point),                      # a class is not an instance
]


@pytest.mark.parametrize("value, expected", JSONABLE)
def test_to_jsonable(value, expected):
    assert to_jsonable(value) == expected


# ---------------------------------------------------------------------- validate
SCHEMA = {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"},
                                           "items": {"type": "array", "items": POINT}},
          "required": ["a"]}
VALIDATION = [
    ({"a": 1, "b": 2}, SCHEMA, None),
    ({"a": 1, "b": "x"}, SCHEMA, "b: 'x' is not of type 'integer'"),
    ({"b": 1}, SCHEMA, "'a' is a required property"),
    ({"a": 1, "items": [{"x": 1}, {"x": "no"}]}, SCHEMA, "items[1].x: 'no' is not of type 'number'"),
    ([1, "x"], {"type": "array", "prefixItems": [{"type": "integer"}, {"type": "integer"}]},
     "[1]: 'x' is not of type 'integer'"),
    ({"value": 1, "children": [{"value": 2, "children": [{"value": "3"}]}]}, schema_for_type(Node),
     "children[0].children[0].value: '3' is not of type 'integer'"),
    # draft-07 by $schema: array-form "items" and "additionalItems" (not 2020-12 keywords).
    ([1, 2], {"$schema": "http://json-schema.org/draft-07/schema#", "items": [{"type": "integer"}],
              "additionalItems": False}, "Additional items are not allowed (2 was unexpected)"),
]


@pytest.mark.req("BASE-16")
@pytest.mark.parametrize("instance, schema, expected", VALIDATION)
def test_validate(instance, schema, expected):
    pytest.importorskip("jsonschema")
    assert validate(instance, schema) == expected


def test_validate_generated_schemas_accept_good_arguments():
    pytest.importorskip("jsonschema")
    schema = input_schema(draw)
    good = {"line": {"start": {"x": 1}, "end": {"x": 2, "y": 3}}, "points": [], "movie": {"title": "t"},
            "tree": {"root": {"value": 1, "children": [{"value": 2}]}}}
    assert validate(good, schema) is None
    assert validate({**good, "level": 3}, schema) == "level: 3 is not one of [1, 2]"
    assert validate(to_jsonable(Node(1, [Node(2)])), output_schema(returns(Node))) is None


def test_validate_does_not_fetch_remote_refs(monkeypatch):
    pytest.importorskip("jsonschema")
    import urllib.request

    def no_network(*args, **kwargs):
        raise AssertionError("tried to fetch a remote $ref")

    monkeypatch.setattr(urllib.request, "urlopen", no_network)
    message = validate(1, {"$ref": "https://example.invalid/schema.json"})
    assert message is not None and message.startswith("cannot validate against the schema")


def test_validate_without_jsonschema(monkeypatch):
    monkeypatch.setitem(sys.modules, "jsonschema", None)        # makes "import jsonschema" fail
    with pytest.raises(MissingDependency, match="jsonschema"):
        validate([], {"type": "array", "items": {"type": "integer"}})
    # flat object schemas (most tools') are checked in plain Python, without jsonschema
    assert validate({"a": "x"}, FLAT) == "a: 'x' is not of type 'integer'"


FLAT = {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "string", "description": "x"},
                                          "c": {"type": "number"}, "d": {"type": "boolean", "default": False}},
        "required": ["a"]}


@pytest.mark.parametrize("instance", [
    {"a": 1}, {"a": 2.0}, {"b": "x"}, {"a": "x"}, {"a": 1, "b": 2}, {"a": True}, [1], {"a": 1, "c": True},
    {"a": 1, "c": 1.5, "d": True}, {"a": 1, "d": 0}, {"a": 1, "extra": [1]},
])
def test_the_flat_fast_path_agrees_with_jsonschema(instance):
    pytest.importorskip("jsonschema", reason="jsonschema is the reference for the fast path")
    from mcp_ref.schema.validation import _flat_checker
    fast = _flat_checker(FLAT)
    assert fast is not None
    assert fast(instance) == validate(instance, dict(FLAT, additionalProperties=True))


# Bare array/object/null properties and {} (an unannotated parameter) are flat too.
FLAT_CONTAINERS = {"type": "object", "properties": {"l": {"type": "array", "default": [1]}, "d": {"type": "object"},
                                                     "n": {"type": "null"}, "any": {}, "u": {"default": None}},
                   "required": ["l"]}


@pytest.mark.parametrize("instance", [
    {"l": []}, {"l": [1, "x"], "d": {"k": 1}, "n": None, "any": [1], "u": 3}, {"l": {}}, {"l": "x"}, {"d": []},
    {"l": [], "d": None}, {"l": [], "n": 0}, {"l": [], "n": False}, {"l": [], "d": []}, [], "x", None,
    {"l": (1, 2)},
])
def test_the_flat_fast_path_agrees_with_jsonschema_for_containers(instance):
    pytest.importorskip("jsonschema", reason="jsonschema is the reference for the fast path")
    from mcp_ref.schema.validation import _flat_checker
    fast = _flat_checker(FLAT_CONTAINERS)
    assert fast is not None
    assert fast(instance) == validate(instance, dict(FLAT_CONTAINERS, additionalProperties=True))


def test_the_fast_path_is_only_for_flat_primitive_schemas():
    from mcp_ref.schema.validation import _flat_checker
    assert _flat_checker({"type": "object", "properties": {"a": {"type": "array", "items": {}}}}) is None
    assert _flat_checker({"type": "object", "properties": {"a": {"type": ["string", "null"]}}}) is None
    assert _flat_checker({"type": "object", "additionalProperties": False}) is None
    assert _flat_checker({"type": "object", "properties": {"a": {"type": "integer", "minimum": 0}}}) is None
