"""The fast path of schema/signature.py and server/tools.py: a plain function of
primitive parameters becomes a tool without inspect, typing, re or mcp_ref.types,
and with exactly the schemas, descriptions, bindings and results of the full path.

* schemas, descriptions, context parameters and output schemas compared as JSON
  text (key order included) with the full path, on functions of every shape the
  fast path takes, and some it must hand over;
* ``_cleandoc`` against ``inspect.cleandoc``, and the docstring parser against the
  regular expressions it replaced (tricky docstrings, then random ones);
* binding: the tools binder, ``bind_arguments`` fast and full, values and errors;
* results written directly against ``CallToolResult.to_dict`` on every revision;
* ``Tools.add(build=False)``: the ``Tool`` built on first use, once;
* in a subprocess: what importing these modules and using the fast path load.

Spec: server/tools#tool, server/tools#calling-tools, server/tools#tool-names.
"""
import inspect
import json
import os
import random
import re
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from conftest import REVISIONS
from mcp_ref.schema import binding, docstrings, signature, signature_fast
from mcp_ref.errors import InvalidParamsError
from mcp_ref.server.tools import Tools, ToolNameWarning, error_result, tool_name_problem

ROOT = Path(__file__).resolve().parent.parent


class Context:
    """Stands for the server's Context class."""


class SubContext(Context):
    pass


# ---------------------------------------------------------------------- functions of every fast shape
def add(a: int, b: int) -> int:
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


def defaults(s: str = "x", f: float = 1.5, b: bool = True, items: list = [1, "a"], d: dict = {"k": (1, 2)},
             n: None = None, i: int = 3, nan=float("nan"), opaque=object(), t: list = (1, 2)) -> None:
    return None


def keyword_only(a: int, *, b: str = "x", c: float, d=None) -> str:
    """Keyword-only parameters.

    Keyword Args:
        b: bee
        c: sea
    """
    return b


def with_context(ctx: Context, a: int, sub: SubContext = None, *, later: Context) -> bool:
    """Context parameters anywhere."""
    return True


def unannotated(a, b=1, c="two"):
    """No annotations at all.

    Parameters:
        a: anything
    """
    return a


def quoted(a: "int", b: "str" = "x", ctx: "Context" = None, n: "None" = None) -> "float":
    return 1.0


def nothing():
    pass


def doc_only() -> bool:
    """Summary.

    More text.



    After three blank lines.

    Example:
        >>> doc_only()
    """
    return True


def none_types(a: type(None), b: None = None) -> type(None):
    return None


def containers(items: list, mapping: dict, flag: bool = False) -> dict:
    """Containers.

    Arguments:
        items: some
            items
        mapping:
            on the next line
    """
    return {}


def lists() -> list:
    return []


lambda_tool = lambda x, y=2: x  # noqa: E731


FUTURE_SOURCE = '''
from __future__ import annotations

def future(a: int, b: list, ctx: Context, c: float = 2.0, d: None = None) -> str:
    """Under from __future__ import annotations.

    Args:
        a: an int
        ctx: not listed
    """
    return ""

def shadowed(a: int) -> int:
    return a
'''


def _future_functions():
    namespace = {"Context": Context}
    exec(compile(FUTURE_SOURCE, "<future>", "exec"), namespace)
    shadow = {"Context": Context, "int": str}       # a module that rebinds ``int``
    exec(compile(FUTURE_SOURCE, "<shadow>", "exec"), shadow)
    return namespace["future"], shadow["shadowed"]


future, shadowed = _future_functions()

FAST = [add, defaults, keyword_only, with_context, unannotated, quoted, nothing, doc_only, none_types,
        containers, lists, lambda_tool, future, shadowed]


class Holder:
    def method(self, a: int) -> int:
        """A method."""
        return a

    def __call__(self, a: str) -> str:
        return a


def wrapped_fn(a: int) -> int:
    return a


def wrapper(*args, **kwargs):
    return wrapped_fn(*args, **kwargs)


wrapper.__wrapped__ = wrapped_fn


def positional_only(a: int, /, b: int) -> int:
    return a


def variadic(a: int, *rest, **more) -> int:
    return a


def optional_hint(a: "int | None" = None, b: "list[int]" = (), c: "Undefined" = 1) -> int:
    return 0


def subclass_hint(a: bool, e: re.RegexFlag) -> int:
    return 0


SLOW = [Holder().method, Holder(), wrapper, variadic, optional_hint, subclass_hint]


def full_path(monkeypatch):
    """Make every entry point take the full path (no shape read before either)."""
    monkeypatch.setattr(signature_fast, "shape_of", lambda *args, **kwargs: None)
    monkeypatch.setattr(signature_fast, "fast_parameters", lambda *args, **kwargs: None)
    monkeypatch.setattr(signature_fast, "_fast_return", lambda fn: signature_fast._NOT_FAST)


def describe(fn) -> str:
    """Everything the schema side gives for ``fn``, as JSON text (key order included)."""
    return json.dumps({
        "input": signature.input_schema(fn, skip=(Context,)),
        "input_no_skip": signature.input_schema(fn),
        "description": signature.description_of(fn),
        "context": signature.context_params(fn, skip=(Context,)),
        "output": signature.output_schema(fn),
        "output_wrapped": signature.output_schema(fn, wrap=True),
    }, allow_nan=False)


@pytest.mark.parametrize("fn", FAST, ids=lambda fn: fn.__name__)
def test_the_fast_path_gives_what_the_full_path_gives(fn, monkeypatch):
    assert signature_fast.fast_parameters(fn, (Context,)) is not None      # the fast path really is taken
    assert signature_fast._fast_return(fn) is not signature_fast._NOT_FAST
    fast = describe(fn)
    full_path(monkeypatch)
    assert describe(fn) == fast


@pytest.mark.parametrize("fn", SLOW, ids=["method", "callable_object", "wrapped", "variadic", "optional_hint",
                                          "subclass_hint"])
def test_what_the_fast_path_does_not_read_takes_the_full_path(fn):
    assert signature_fast.fast_parameters(fn, (Context,)) is None
    assert signature.input_schema(fn)["type"] == "object"


def test_positional_only_still_refused_and_variadic_left_out():
    assert signature_fast.fast_parameters(positional_only) is None
    with pytest.raises(TypeError, match="positional-only parameter 'a'"):
        signature.input_schema(positional_only)
    assert signature.input_schema(variadic) == {"type": "object", "properties": {"a": {"type": "integer"}},
                                                "required": ["a"]}


def _functions(source: str, namespace: "dict | None" = None) -> dict:
    """The functions ``source`` defines, each of its own code object (as in a module)."""
    namespace = {} if namespace is None else namespace
    exec(compile(source, "<tools>", "exec"), namespace)
    return {name: value for name, value in namespace.items() if callable(value) and not name.startswith("__")}


def test_functions_of_one_shape_are_read_once(monkeypatch):
    """schema/signature_fast.py: a function that fits the shape read last for its code layout
    gets that reading (one ``fast_parameters`` for 50 functions, one shared schema)."""
    monkeypatch.setattr(signature_fast, "_SHAPES", {})
    reads = []
    original = signature_fast.fast_parameters
    monkeypatch.setattr(signature_fast, "fast_parameters", lambda *args: reads.append(args) or original(*args))
    source = "".join(f'def t{i}(a: int, b: str = "x") -> str:\n    """Tool {i}."""\n    return b * a\n'
                     for i in range(50))
    fns = list(_functions(source).values())
    assert len({fn.__code__ for fn in fns}) == 50
    shapes = [signature_fast.shape_of(fn, (Context,)) for fn in fns]
    assert len(reads) == 1 and all(shape is shapes[0] for shape in shapes)
    assert shapes[0].parameters == ([("a", int, signature_fast.NO_DEFAULT), ("b", str, "x")], [])
    assert shapes[0].returns is str
    assert {id(signature.input_schema(fn, skip=(Context,))) for fn in fns} == {id(shapes[0].input_schema({}))}


_BASE = 'def f(a: int, b: int = 1, *, c: int = 1) -> str:\n    return ""\n'


@pytest.mark.parametrize("variant, expected", [
    ('def f(a: int, b: int = True, *, c: int = 1) -> str:\n    return ""\n', {"b": {"type": "integer", "default": True}}),
    ('def f(a: int, b: int = 1, *, c: int = True) -> str:\n    return ""\n', {"c": {"type": "integer", "default": True}}),
    ('def f(a: float, b: int = 1, *, c: int = 1) -> str:\n    return ""\n', {"a": {"type": "number"}}),
    ('def f(a, b: int = 1, *, c: int = 1) -> str:\n    return ""\n', {"a": {}}),
    ('def f(a: int, b: int = 1, *, c: int = 1) -> int:\n    return 0\n', {}),
    ('def f(a: int, b: int = 1.0, *, c: int = 1) -> str:\n    return ""\n', {"b": {"type": "integer", "default": 1.0}}),
], ids=["default-True-not-1", "kw-default", "annotation", "no-annotation", "return", "float-default"])
def test_a_shape_fits_only_functions_read_alike(variant, expected, monkeypatch):
    """schema/signature_fast.py: annotations and defaults are compared by identity, so what
    ``==`` takes for equal (``1 == True == 1.0``) still tells two readings apart; the
    reading of the second function is the one an empty cache gives."""
    monkeypatch.setattr(signature_fast, "_SHAPES", {})
    first = signature_fast.shape_of(_functions(_BASE)["f"])
    fn = _functions(variant)["f"]
    shape = signature_fast.shape_of(fn)
    assert shape is not first
    properties = {"a": {"type": "integer"}, "b": {"type": "integer", "default": 1},
                  "c": {"type": "integer", "default": 1}, **expected}
    schema = shape.input_schema({})
    assert json.dumps(schema) == json.dumps({"type": "object", "properties": properties, "required": ["a"]})
    assert shape.returns is (int if "-> int" in variant else str)
    monkeypatch.setattr(signature_fast, "_SHAPES", {})
    assert json.dumps(signature_fast.shape_of(fn).input_schema({})) == json.dumps(schema)


def test_a_shape_is_not_taken_by_what_the_fast_path_does_not_read(monkeypatch):
    """An annotation object that says it equals anything, a function that names its
    own signature, a skipped class with another ``skip``: each is read for itself."""
    monkeypatch.setattr(signature_fast, "_SHAPES", {})

    class Anything:
        def __eq__(self, other):
            return True
        __hash__ = object.__hash__
    assert signature_fast.shape_of(_functions("def f(a: int):\n    return a\n")["f"]) is not None
    anything = _functions("def f(a: ANY):\n    return a\n", {"ANY": Anything()})["f"]
    assert signature_fast.shape_of(anything) is None
    wrapped = _functions("def f(a: int):\n    return a\n")["f"]
    wrapped.__wrapped__ = lambda a, b: a
    assert signature_fast.shape_of(wrapped) is None
    with_context = _functions("def f(a: int, ctx: Context):\n    return a\n", {"Context": Context})["f"]
    assert signature_fast.shape_of(with_context, (Context,)).parameters == ([("a", int, signature_fast.NO_DEFAULT)],
                                                                            ["ctx"])
    assert signature_fast.shape_of(with_context) is None          # Context is not a fast type without skip


def test_a_shape_of_string_annotations_fits_its_own_module_only(monkeypatch):
    """``from __future__ import annotations``: the same text names other classes in other
    modules; and a function whose annotations changed after its reading is read again."""
    monkeypatch.setattr(signature_fast, "_SHAPES", {})
    source = "from __future__ import annotations\ndef f(a: Number):\n    return a\n"
    ints = _functions(source, {"Number": int})["f"]
    floats = _functions(source, {"Number": float})["f"]
    assert signature_fast.shape_of(ints).input_schema({})["properties"] == {"a": {"type": "integer"}}
    assert signature_fast.shape_of(floats).input_schema({})["properties"] == {"a": {"type": "number"}}
    ints.__annotations__["a"] = "str"
    assert signature_fast.shape_of(ints).input_schema({})["properties"] == {"a": {"type": "string"}}


def test_some_expected_schemas():
    assert signature.input_schema(with_context, skip=(Context,)) == {
        "type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}
    assert signature.context_params(with_context, skip=(Context,)) == ["ctx", "sub", "later"]
    assert signature.input_schema(future, skip=(Context,)) == {
        "type": "object", "properties": {"a": {"type": "integer", "description": "an int"}, "b": {"type": "array"},
                                         "c": {"type": "number", "default": 2.0}, "d": {"type": "null", "default": None}},
        "required": ["a", "b"]}
    assert signature.input_schema(shadowed)["properties"]["a"] == {"type": "string"}     # its ``int`` is str
    schema = signature.input_schema(defaults)
    assert "default" not in schema["properties"]["nan"] and "default" not in schema["properties"]["opaque"]
    assert schema["properties"]["t"] == {"type": "array", "default": [1, 2]}
    assert signature.output_schema(add, wrap=True) == {
        "type": "object", "properties": {"result": {"type": "integer"}}, "required": ["result"]}
    assert signature.output_schema(containers) == {"type": "object"}


# ---------------------------------------------------------------------- docstrings
CLEANDOC = [
    "", " ", "   \n   ", "One line.", "  Indented first line.  ", "\n\n    a\n    b\n\n",
    "first\n\tsecond\n\t\tthird", "  first\n    second\n  third\n", "x\n\u00a0\u00a0y\n\u00a0\u00a0z",
    "x\n\x0c  y\n  z", "x\r\n  y\r\n  z\r\n", "x\n   \n  y\n      z", "\u3000x\n\u3000\u3000y",
    "a\n\n\n\n  b", "\n    Args:\n        a: x\n    ", "x\n\x1f y\n  z", "\t\ttabbed\n\t\t\tmore",
    "no\nindent\nat all", "trailing   \n   spaces   \n   ", "\n\n\n", "x\n\v y", "é\n  ü\n    ö",
]


@pytest.mark.parametrize("doc", CLEANDOC)
def test_cleandoc_is_inspect_cleandoc(doc):
    assert docstrings.cleandoc(doc) == inspect.cleandoc(doc)


# The parser as it was written with regular expressions: the reference.
_SECTION = re.compile(r"^([A-Za-z][A-Za-z ]*):\s*$")
_ENTRY = re.compile(r"^\*{0,2}(\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")


def reference_parse(doc):
    if not doc:
        return None, {}
    body, params, section, indent, current = [], {}, None, None, None
    for line in inspect.cleandoc(doc).splitlines():
        header = _SECTION.match(line)
        if header and header.group(1).strip().lower() in docstrings._DROPPED_SECTIONS:
            section, indent, current = header.group(1).strip().lower(), None, None
            continue
        if section is not None and line.strip() and not line[0].isspace():
            section = None
        if section is None:
            body.append(line)
        elif section in docstrings._PARAM_SECTIONS and line.strip():
            depth = len(line) - len(line.lstrip())
            entry = _ENTRY.match(line.strip())
            if entry and (indent is None or depth <= indent):
                indent, current = depth, entry.group(1)
                params[current] = entry.group(2).strip()
            elif current is not None:
                params[current] = (params[current] + " " + line.strip()).strip()
    text = re.sub(r"\n{3,}", "\n\n", "\n".join(body).strip())
    return text or None, {name: about for name, about in params.items() if about}


DOCSTRINGS = [
    add.__doc__, keyword_only.__doc__, unannotated.__doc__, doc_only.__doc__, containers.__doc__,
    "Args :\n  a: spaced colon", "ARGS:\n  a: upper case", "Args:\u00a0\n  a: trailing nbsp", "Args:x\n  a: no",
    "Args: \t\n  a: tab", "1Args:\n  a: digit", " Args:\n  a: indented header", "Args:\x1f\n  a: unit separator",
    "Returns:\n  int: x\nBack at the margin", "Other Parameters:\n  a: other",
    "Args:\n  *args: a\n  **kw: b\n  ***bad: c\n  a (int): x\n  b(list[int]): y\n  c (dict(str)): z\n"
    "  d (unclosed: w\n  ünï: unicode\n  e   :   spaced  \n    continuation\n  f:\n    next line\n  g: \n"
    "  h (int) : spaced\n  i\u00a0: nbsp\n  j\u0301k: combining\n  ½: numeric\n  ():\n  :\n  *: star",
    "Args:\n  a: x\n    b: deeper, so a continuation\n  c: y\n  d:\n  e: z",
    "Attributes:\n  x: y", "Example:\n  foo: bar", "Body\n\n\n\nafter\n\n\n\n\nend", "Yields:\n  x\nRaise:\n  y",
    "Args:\n\n  a: blank line before\n\n  b: and between\nmargin", "Keyword arguments:\n  k: v",
    "Args:\n\ta: tab indented\n\tb: too", "Args:\n  a: x\n Raises:\n  b: y", "Summary:\n  kept",
]


@pytest.mark.parametrize("doc", DOCSTRINGS)
def test_the_docstring_parser_matches_the_regular_expressions(doc):
    assert docstrings.parse_docstring(doc) == reference_parse(doc)


def test_the_docstring_parser_on_random_docstrings():
    pieces = ["Args:", "Arguments :", "Returns:", "Raises:", "Example:", "Keyword Args:", "a: x", "b (int): y",
              "*c: z", "**d: w", "e(list[str]): v", "f (", ")", "g:", "text", "", " ", "\t", "\u00a0", "ü: ö",
              "h : i", "continuation words", ":", "j (x) k: l", "Args:\u3000", "m:  "]
    rng = random.Random(20251125)
    for _ in range(2000):
        lines = [rng.choice(["", " ", "  ", "    ", "\t", "      "]) + rng.choice(pieces)
                 for _ in range(rng.randint(0, 12))]
        doc = rng.choice(["", "Summary.", "\n"]) + "\n".join(lines)
        assert docstrings.parse_docstring(doc) == reference_parse(doc), doc


def test_the_docstring_parser_on_one_line_docstrings():
    """A docstring of one printable line takes its own short way (schema/docstrings.py)."""
    pieces = ["Args:", "Returns:  ", "Tool 7: return b, a times.", "a: x", "text", "", " ", "\u00a0", "ü: ö",
              ":", "Args:\u3000", "Keyword Args:", "raises :", "x\x0by", "x\u2028y", "x\ry"]
    rng = random.Random(20261126)
    for _ in range(2000):
        doc = rng.choice(["", " ", "  "]) + rng.choice(pieces) + rng.choice(["", " ", "  ", "\t", "\n"])
        assert docstrings.parse_docstring(doc) == reference_parse(doc), doc


# ---------------------------------------------------------------------- tool names
_NAME_CHARS = re.compile(r"[A-Za-z0-9_.\-]*")


@pytest.mark.parametrize("name", ["ok", "a b", "a/b", "é", "x" * 129, "", "tab\t", "a,b;c", "ünï-cödé", "a.b-c_d",
                                  "\u00a0", "dup!!", "A1"])
def test_tool_name_problem_matches_the_regular_expression(name):
    expected = None
    if not 1 <= len(name) <= 128:
        expected = f"tool names SHOULD be between 1 and 128 characters (this one has {len(name)})"
    else:
        bad = sorted(set(_NAME_CHARS.sub("", name)))
        if bad:
            expected = ("tool names SHOULD contain only A-Z, a-z, 0-9, underscore, hyphen and dot "
                        f"(not {', '.join(repr(c) for c in bad)})")
    assert tool_name_problem(name) == expected


# ---------------------------------------------------------------------- binding and calling
class Owner:
    page_size = None

    def __init__(self):
        self.changes = []

    def _list_changed(self, method):
        self.changes.append(method)


class Ctx:
    def __init__(self, version="2025-11-25"):
        self.protocol_version = version
        self.cancelled = threading.Event()


def registry(*fns, **options) -> Tools:
    registered = Tools(Owner(), Context)
    for fn in fns:
        registered.add(fn, **options)
    return registered


def prepared(tools, name: str):
    """A registered entry, ready to be called (server/tools.py rule 8 defers that)."""
    entry = tools._entries[name]
    entry.arm((Context,))
    return entry


BINDINGS = [
    (add, {"a": 1, "b": 2}), (add, {"a": 1}), (add, {"a": 1, "b": 2, "c": 3}), (add, {}),
    (defaults, {}), (defaults, {"f": 2, "i": 2, "b": False}), (defaults, {"f": True}), (defaults, {"zz": 1}),
    (keyword_only, {"a": 1, "c": 3}), (keyword_only, {"a": 1, "c": 3.5, "d": [1]}), (keyword_only, {"a": 1}),
    (with_context, {"a": 1}), (with_context, {"a": 1, "ctx": "forged"}), (with_context, {}),
    (unannotated, {"a": {"x": 1}, "c": None}), (future, {"a": 1, "b": [], "c": 1}), (nothing, {}),
    (nothing, {"x": 1}), (containers, {"items": [1], "mapping": {}}),
]


def outcome(call):
    try:
        kwargs = call()
    except InvalidParamsError as exc:
        return ("error", exc.message, exc.data)
    return ("ok", sorted((name, repr(value), type(value).__name__) for name, value in kwargs.items()))


@pytest.mark.parametrize("fn, arguments", BINDINGS, ids=lambda v: getattr(v, "__name__", None) or json.dumps(v))
def test_binding_is_the_same_on_both_paths(fn, arguments, monkeypatch):
    ctx = Ctx()
    inject = signature.context_params(fn, skip=(Context,))
    fast_tools = registry(fn, build=False)
    fast = [outcome(lambda: prepared(fast_tools, fn.__name__).bind(dict(arguments), ctx)),
            outcome(lambda: binding.bind_arguments(fn, dict(arguments), inject={n: ctx for n in inject}))]
    assert prepared(fast_tools, fn.__name__).bind.direct is not None
    full_path(monkeypatch)
    full_tools = registry(fn, build=False)
    full = [outcome(lambda: prepared(full_tools, fn.__name__).bind(dict(arguments), ctx)),
            outcome(lambda: binding.bind_arguments(fn, dict(arguments), inject={n: ctx for n in inject}))]
    assert fast == full
    assert fast[0] == fast[1]


def test_float_parameters_are_bound_directly():
    entry = prepared(registry(keyword_only), "keyword_only")
    assert entry.bind.floats == ("c",)
    kwargs = entry.bind({"a": 1, "c": 3}, Ctx())
    assert kwargs == {"a": 1, "c": 3.0} and type(kwargs["c"]) is float


def scalars(kind: str = "int") -> float:
    return {"int": 12, "big": 10 ** 40, "neg": -3, "float": 0.1, "whole": 2.0, "tiny": 1e-300, "huge": 1e300,
            "negzero": -0.0, "nan": float("nan"), "inf": float("inf"), "ninf": float("-inf"), "true": True,
            "false": False, "text": "é\n\"quoted\"", "empty": ""}[kind]


def structured(kind: str = "dict") -> dict:
    return {"dict": {"a": (1, 2), "b": {"c": None}}, "empty": {}, "list": [1]}[kind]


def wire(message) -> str:
    """As sent (NaN compares unequal to itself, its JSON text does not)."""
    return json.dumps(message)


def dataclass_result(entry, value, version) -> dict:
    """What ``tool_result`` writes directly for a tool with an outputSchema, built the
    long way: the ``CallToolResult`` dataclass and its ``to_dict`` (rules 4 and 5)."""
    from mcp_ref.server.tool_results import _structured, to_content
    from mcp_ref.types import CallToolResult, TextContent
    if not entry.wrap and isinstance(value, (str, list, tuple)):
        return CallToolResult(content=to_content(value)).to_dict(version)
    structured = _structured(entry, value)
    return CallToolResult(content=[TextContent(text=json.dumps(structured, ensure_ascii=False))],
                          structured_content=structured).to_dict(version)


@pytest.mark.parametrize("version", REVISIONS + (None,))
def test_results_written_directly_are_the_dataclass_results(version):
    from mcp_ref.types import CallToolResult, TextContent
    registered = registry(scalars, structured)
    registered.add(structured, name="wrapped", structured_output=True)
    registered.add(scalars, name="wrapped_scalars", structured_output=True)
    ctx = Ctx(version)
    for kind in ("int", "big", "neg", "float", "whole", "tiny", "huge", "negzero", "nan", "inf", "ninf", "true",
                 "false", "text", "empty"):
        value = scalars(kind)
        expected = CallToolResult(content=[TextContent(text=value if isinstance(value, str) else json.dumps(value))])
        assert wire(registered.handle_call(ctx, {"name": "scalars", "arguments": {"kind": kind}})) == \
            wire(expected.to_dict(version))
        entry = prepared(registered, "wrapped_scalars")
        try:
            expected = dataclass_result(entry, value, version)
        except ValueError as exc:
            expected = error_result(str(exc), version)
        assert wire(registered.handle_call(ctx, {"name": "wrapped_scalars", "arguments": {"kind": kind}})) == \
            wire(expected)
    for name in ("structured", "wrapped"):
        entry = prepared(registered, name)
        for kind in ("dict", "empty", "list"):
            result = registered.handle_call(ctx, {"name": name, "arguments": {"kind": kind}})
            try:
                expected = dataclass_result(entry, structured(kind), version)
            except ValueError as exc:
                expected = error_result(str(exc), version)
            assert wire(result) == wire(expected)
    message = "it broke"
    assert error_result(message, version) == CallToolResult(
        content=[TextContent(text=message)], is_error=True).to_dict(version)


def test_errors_are_the_same_as_before():
    registered = registry(add)
    ctx = Ctx()
    assert registered.handle_call(ctx, {"name": "add", "arguments": {"a": "x", "b": 1}}) == error_result(
        "Invalid arguments for tool add: a: 'x' is not of type 'integer'", ctx.protocol_version)
    result = registered.handle_call(ctx, {"name": "add", "arguments": {"a": 1, "b": 2, "c": 3}})
    assert result["isError"] and "unknown argument: 'c'" in result["content"][0]["text"]
    with pytest.raises(InvalidParamsError, match="Unknown tool: nope"):
        registered.handle_call(ctx, {"name": "nope"})


# ---------------------------------------------------------------------- Tool built on first use
def test_build_false_builds_the_tool_on_first_use_once():
    registered = Tools(Owner(), Context)
    assert registered.add(add, build=False) is None
    entry = prepared(registered, "add")
    assert entry._tool is None
    tool = registered.get("add")
    assert tool is registered.get("add") is registered.list()[0] is entry.tool
    assert registered.get("missing") is None
    eager = Tools(Owner(), Context).add(add)
    assert tool == eager and tool.description == "Add two numbers."
    listed = registered.handle_list(Ctx(), {})
    assert listed == {"tools": [eager.to_dict("2025-11-25")]}


def test_build_false_still_checks_annotations_and_icons_at_registration():
    registered = Tools(Owner(), Context)
    with pytest.raises(TypeError, match="ToolAnnotations or a dict"):
        registered.add(add, annotations=42, build=False)
    assert len(registered) == 0
    registered.add(add, annotations={"read_only_hint": True}, build=False)
    assert prepared(registered, "add")._tool is not None       # built at once, so it was checked
    with pytest.warns(ToolNameWarning, match="not ' '"):
        registered.add(nothing, name="with space", build=False)


# ---------------------------------------------------------------------- what gets imported
HEAVY = ("inspect", "typing", "dataclasses", "logging", "copy", "base64", "mcp_ref.types", "jsonschema")


def heavy(modules) -> list:
    return [name for name in modules if name.split(".")[0] in HEAVY or name.startswith("mcp_ref.types")]
IMPORTED_BY_THE_FAST_PATH = r'''
import builtins, json, sys, threading
import mcp_ref.errors, mcp_ref.server.features, mcp_ref.server.pagination    # what the two modules build on
before = set(sys.modules)
from mcp_ref.schema import binding, signature
from mcp_ref.server import tools
added_by_import = sorted(set(sys.modules) - before - {"mcp_ref.schema.signature", "mcp_ref.server.tools",
                                                      "mcp_ref.schema.signature_fast", "mcp_ref.schema.binding", "mcp_ref.schema.jsonable",
                                                      "mcp_ref.server.tool_results", "mcp_ref.server.tool_binding",
                                                      "mcp_ref.server.same_thread",
                                                      "mcp_ref.schema.docstrings", "mcp_ref.schema.validation"})

class Context:
    pass

def add(a: int, b: int, ctx: Context, *, scale: float = 1.0, tags: list = (), note=None) -> int:
    """Add.

    Args:
        a: first
        b: second
    """
    return a + b

class Owner:
    page_size = None
    def _list_changed(self, method):
        pass

class Ctx:
    protocol_version = "2025-11-25"
    cancelled = threading.Event()

statements = []
real_import = builtins.__import__
def recording_import(name, globals=None, locals=None, fromlist=(), level=0):
    statements.append("." * level + name)
    return real_import(name, globals, locals, fromlist, level)

before = set(sys.modules)
builtins.__import__ = recording_import
try:
    schema = signature.input_schema(add, skip=(Context,))
    description = signature.description_of(add)
    context = signature.context_params(add, skip=(Context,))
    output = signature.output_schema(add)
    bound = binding.bind_arguments(add, {"a": 1, "b": 2, "scale": 2}, inject={"ctx": None})
    registry = tools.Tools(Owner(), Context)
    registry.add(add, build=False)
    results = [registry.handle_call(Ctx(), {"name": "add", "arguments": arguments})
               for arguments in ({"a": 1, "b": 2}, {"a": 1, "b": 2, "scale": 3, "tags": [1]}, {"a": "x", "b": 1})]
finally:
    builtins.__import__ = real_import
print(json.dumps({"added_by_import": added_by_import, "added_by_use": sorted(set(sys.modules) - before),
                  "import_statements": sorted(set(statements)), "results": results, "context": context,
                  "schema": schema}))
'''


def run_python(code: str) -> dict:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60, env=env)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_the_fast_path_imports_nothing_heavy():
    report = run_python(IMPORTED_BY_THE_FAST_PATH)
    assert report["added_by_import"] in ([], ["collections.abc"])
    assert report["added_by_use"] == []
    assert report["import_statements"] == []           # not even of modules already loaded
    assert report["context"] == ["ctx"]
    assert report["results"][:2] == [{"content": [{"type": "text", "text": "3"}]}] * 2
    assert report["results"][2]["isError"] is True
    assert report["schema"]["required"] == ["a", "b"]
