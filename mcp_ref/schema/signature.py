"""Tool functions as MCP tools: Python signatures to JSON Schema, and back.

Spec: server/tools#tool (``inputSchema``, ``outputSchema``: JSON Schema 2020-12
unless ``$schema`` says otherwise), server/tools#structured-content.

Schemas come from type hints, defaults and Google-style docstrings;
``bind_arguments`` (schema/binding.py) turns ``tools/call`` arguments into the annotated
types, ``to_jsonable`` (schema/jsonable.py) turns results back into JSON (checking values against a
schema is schema/validation.py's; docstrings are read by schema/docstrings.py). Recursive dataclasses/TypedDicts go
to ``$defs`` (``{"$ref": "#/$defs/<ClassName>"}``); other classes are inlined;
classes this module does not know map to ``{}`` (any value). No I/O.

Two paths give the same results (the fast one is schema/signature_fast.py; schema/binding.py and
schema/jsonable.py hold the way back, from JSON to Python and from Python to JSON):

* the fast path (schema/signature_fast.py) reads a plain function of ``int``, ``float``,
  ``str``, ``bool``, ``list``, ``dict`` and ``None`` parameters straight from
  ``__code__``, ``__defaults__``, ``__kwdefaults__`` and ``__annotations__``;
* the full path (this module) handles every other callable and type hint with
  ``inspect`` and ``typing``, imported on its first use (``_load``).

Why two paths and not one: importing this module imports neither ``inspect``
nor ``typing``, and a server whose tools are all plain never does. Those two
cost 9 to 17 ms to import, against a stdio server's whole cold start of about
27 ms (bench/bench_stdio.py, target 1.5x a bare loop's 23 ms): the full path
alone would miss that target. The paths do not overlap in use: a function
the fast path can read never reaches the full path, and
tests/test_signature_fast_path.py holds the two to the same answers on the
functions both can read.
"""
from __future__ import annotations

from collections import abc
from types import FunctionType, GenericAlias

from mcp_ref.schema.docstrings import parse_docstring
from mcp_ref.schema import signature_fast
from mcp_ref.schema.jsonable import to_jsonable
from mcp_ref.schema.signature_fast import (_FAST_SCHEMAS, _NOT_FAST, NO_DEFAULT, NO_HINT, _default_of, _object_schema)

_NONE = type(None)
_JSON_TYPES = {bool: "boolean", int: "integer", float: "number", str: "string", _NONE: "null"}
# Content blocks are known by name (or a TYPE attribute): this module does not import types.
_CONTENT_NAMES = {"TextContent", "ImageContent", "AudioContent", "EmbeddedResource", "ResourceLink",
                  "ContentBlock", "CallToolResult"}


class Field:
    """``Annotated[T, Field(description=..., **keywords)]``: a description and JSON Schema keywords."""

    def __init__(self, description: str | None = None, **schema):
        self.description = description
        self.schema = schema


def description_of(fn) -> str | None:
    """The docstring without its Args/Returns/Raises sections, or None."""
    target = fn if type(fn) is FunctionType else _target(fn)
    return parse_docstring(getattr(target, "__doc__", None))[0]


# ====================================================================== full path
# Bound by _load() on first use; everything below it runs after _load().
inspect = typing = dataclasses = enum = functools = copy = typehints = None
Any = Literal = Union = get_args = get_origin = None
_WRAPPERS = _UNIONS = _LISTS = _SETS = _MAPPINGS = ()
_loaded = False


def _load() -> None:
    """Import what the full path needs (inspect, typing, ...) and bind it here, once."""
    global inspect, typing, dataclasses, enum, functools, copy, Any, Literal, Union, get_args, get_origin
    global _WRAPPERS, _UNIONS, _LISTS, _SETS, _MAPPINGS, typehints, _loaded
    if _loaded:
        return
    import copy
    import dataclasses
    import enum
    import functools
    import inspect
    import typing
    from typing import Any, Literal, Union, get_args, get_origin

    from mcp_ref.schema import typehints
    _WRAPPERS = tuple(getattr(typing, name) for name in ("Required", "NotRequired", "ReadOnly")
                      if hasattr(typing, name))
    _UNIONS = typehints.UNION_ORIGINS
    _LISTS = (list, abc.Sequence, abc.MutableSequence, abc.Iterable, abc.Collection)
    _SETS = (set, frozenset, abc.Set, abc.MutableSet)
    _MAPPINGS = (dict, abc.Mapping, abc.MutableMapping)
    _loaded = True                                  # last: another thread may be checking it


def _split_annotated(tp) -> tuple:
    """``Annotated[T, m...]`` -> ``(T, [m...])``; also unwraps Required/NotRequired and NewType."""
    metadata: list = []
    while True:
        if get_origin(tp) is typing.Annotated:
            metadata = list(tp.__metadata__) + metadata
            tp = tp.__origin__
        elif get_origin(tp) in _WRAPPERS:
            tp = get_args(tp)[0]
        elif hasattr(tp, "__supertype__"):
            tp = tp.__supertype__
        else:
            return tp, metadata


def _is_class(tp) -> bool:
    """A class, not a parametrized ``list[int]`` (which 3.9 and 3.10 report as a ``type``)."""
    return isinstance(tp, type) and not isinstance(tp, GenericAlias)


def _is_union(tp) -> bool:
    return get_origin(tp) in _UNIONS


def _is_record(tp) -> bool:
    """A dataclass or TypedDict class: a JSON object with known properties."""
    return _is_class(tp) and (dataclasses.is_dataclass(tp) or typehints.is_typeddict(tp))


def _is_unknown(tp) -> bool:
    return tp is Any or isinstance(tp, (str, typing.ForwardRef, typing.TypeVar))


def _target(fn):
    """What holds ``fn``'s annotations and docstring (a callable object's ``__call__``)."""
    _load()
    fn = fn.func if isinstance(fn, functools.partial) else fn
    return fn if inspect.isroutine(fn) or inspect.isclass(fn) else getattr(fn, "__call__", fn)


def _hints(obj, localns: dict | None = None) -> dict:
    """Type hints with ``Annotated`` kept; an annotation that does not resolve (e.g. a
    class imported under TYPE_CHECKING) stays a string, and ``"X | Y"`` strings are
    read on 3.9 too (schema/typehints.py)."""
    return typehints.get_type_hints(obj, localns)


def _parameters(fn) -> list:
    """``[(name, kind, default)]`` from ``inspect.signature``; default ``NO_DEFAULT`` when none."""
    empty = inspect.Parameter.empty
    return [(name, p.kind, NO_DEFAULT if p.default is empty else p.default)
            for name, p in inspect.signature(fn).parameters.items()]


def _record_fields(cls) -> tuple:
    """A dataclass's or TypedDict's ``(description, [(name, hint, required, default, description)])``."""
    hints = _hints(cls, localns={cls.__name__: cls})
    doc = cls.__doc__
    if doc and dataclasses.is_dataclass(cls) and doc.startswith(cls.__name__ + "("):
        doc = None                                  # the signature that dataclasses writes itself
    text, docs = parse_docstring(doc)
    if typehints.is_typeddict(cls):
        return text, [(name, hint, name in cls.__required_keys__, NO_DEFAULT, docs.get(name))
                      for name, hint in hints.items()]
    fields = []
    for f in dataclasses.fields(cls):
        if f.init:
            default = NO_DEFAULT if f.default is dataclasses.MISSING else f.default
            required = default is NO_DEFAULT and f.default_factory is dataclasses.MISSING
            description = f.metadata.get("description") or docs.get(f.name)
            fields.append((f.name, hints.get(f.name, Any), required, default, description))
    return text, fields


def _with_metadata(schema: dict, metadata: list) -> dict:
    for item in metadata:
        if isinstance(item, str) or isinstance(getattr(item, "description", None), str):
            schema["description"] = item if isinstance(item, str) else item.description
        if isinstance(item, Field):
            schema.update(item.schema)
    return schema


def _enum_schema(values: list) -> dict:
    values = [to_jsonable(value) for value in values]
    kinds = {_JSON_TYPES.get(type(value)) for value in values}
    return {"type": kinds.pop(), "enum": values} if len(kinds) == 1 and None not in kinds else {"enum": values}


class _SchemaBuilder:
    """Builds the schemas of one document, collecting ``$defs`` for recursive classes."""

    def __init__(self):
        self.defs, self.names = {}, {}              # $defs; class -> its name there
        self.stack, self.recursive = [], set()      # classes being built; recursive classes

    def schema(self, tp) -> dict:
        tp, metadata = _split_annotated(tp)
        return _with_metadata(self._bare(tp), metadata)

    def property(self, hint, default=NO_DEFAULT, description: str | None = None) -> dict:
        """A parameter's or field's schema: ``Annotated`` metadata wins over the docstring."""
        hint, metadata = _split_annotated(hint)
        schema = self.schema(hint)
        if description:
            schema["description"] = description
        if default is not NO_DEFAULT:
            listed = _default_of(default)           # not JSON: not listed
            if listed is not NO_DEFAULT:
                schema["default"] = listed
        return _with_metadata(schema, metadata)

    def finish(self, schema: dict, object_root: bool = False) -> dict:
        if object_root and "$ref" in schema:        # a recursive class at the root: inline it there too
            schema = {**copy.deepcopy(self.defs[schema.pop("$ref").rsplit("/", 1)[-1]]), **schema}
        if self.defs:
            schema["$defs"] = self.defs
        return schema

    def _ref(self, cls) -> dict:
        if cls not in self.names:                   # two classes of one name: the second gets a number
            taken = cls.__name__ in self.names.values()
            self.names[cls] = f"{cls.__name__}_{len(self.names)}" if taken else cls.__name__
        return {"$ref": f"#/$defs/{self.names[cls]}"}

    def _bare(self, tp) -> dict:
        if _is_unknown(tp):
            return {}
        tp = _NONE if tp is None else tp
        origin, args = get_origin(tp), get_args(tp)
        if origin is Literal:
            return _enum_schema(list(args))
        if _is_union(tp):
            return {"anyOf": [self.schema(arg) for arg in args]}
        if _is_record(tp):
            return self._record(tp)
        if _is_class(tp):
            if issubclass(tp, enum.Enum):
                return _enum_schema([member.value for member in tp])
            for base, name in _JSON_TYPES.items():
                if issubclass(tp, base):
                    return {"type": name}
            if issubclass(tp, (bytes, bytearray)):
                return {"type": "string", "contentEncoding": "base64"}
        kind = origin or tp
        if kind is tuple and args and not (len(args) == 2 and args[1] is Ellipsis):
            return {"type": "array", "prefixItems": [self.schema(arg) for arg in args],
                    "minItems": len(args), "maxItems": len(args)}
        if kind is tuple or kind in _LISTS or kind in _SETS:
            schema = {"type": "array"}
            if args and args[0] is not Any:
                schema["items"] = self.schema(args[0])
            if kind in _SETS:
                schema["uniqueItems"] = True
            return schema
        if kind in _MAPPINGS:
            if len(args) == 2 and args[1] is not Any:
                return {"type": "object", "additionalProperties": self.schema(args[1])}
            return {"type": "object"}
        return {}

    def _record(self, cls) -> dict:
        if cls in self.stack or self.names.get(cls) in self.defs:
            self.recursive.add(cls)
            return self._ref(cls)
        self.stack.append(cls)
        try:
            text, fields = _record_fields(cls)
            properties = {name: self.property(hint, default, description)
                          for name, hint, _, default, description in fields}
        finally:
            self.stack.pop()
        schema = _object_schema(properties, [f[0] for f in fields if f[2]], text)
        if cls not in self.recursive:
            return schema
        self.defs[self.names[cls]] = schema         # named by _ref when the recursion was found
        return self._ref(cls)


def schema_for_type(tp) -> dict:
    """The JSON Schema of one Python type (with ``$defs`` at its root when needed)."""
    _load()
    builder = _SchemaBuilder()
    return builder.finish(builder.schema(tp))


def _is_context(tp, skip: tuple) -> bool:
    """Is ``tp`` one of ``skip`` (a subclass, ``Optional`` of one, or a string naming one)?"""
    tp, _ = _split_annotated(tp)
    if _is_union(tp):
        members = [arg for arg in get_args(tp) if arg is not _NONE]
        return len(members) == 1 and _is_context(members[0], skip)
    if isinstance(tp, typing.ForwardRef):
        tp = tp.__forward_arg__
    if isinstance(tp, str):                         # an annotation that did not resolve
        import re
        names = {n.rsplit(".", 1)[-1] for n in re.findall(r"[A-Za-z_][\w.]*", tp)} - {"Optional", "None"}
        return len(names) == 1 and names <= {cls.__name__ for cls in skip}
    origin = get_origin(tp) or tp
    return isinstance(origin, type) and issubclass(origin, skip)


_SKIPPED_KINDS = ("VAR_POSITIONAL", "VAR_KEYWORD")


def context_params(fn, skip: tuple = ()) -> list:
    """Names of the parameters typed as one of ``skip`` (the server's Context
    class, also ``Optional[Context]``): not in the schema, injected by the caller."""
    shape = signature_fast.shape_of(fn, skip)
    if shape is not None:
        return list(shape.parameters[1])
    _load()
    hints = _hints(_target(fn))
    return [name for name, kind, _ in _parameters(fn)
            if kind.name not in _SKIPPED_KINDS and _is_context(hints.get(name, Any), skip)]


def input_schema(fn, *, skip: tuple = (), shape=None, docs: dict | None = None) -> dict:
    """The ``inputSchema`` of ``fn``: an object with a property per parameter.

    Parameters without a default are required; JSON defaults appear as
    ``default``; descriptions from ``Annotated``, else the docstring's ``Args:``.
    ``*args``, ``**kwargs`` and parameters typed as one of ``skip`` are left
    out; a positional-only parameter raises TypeError (arguments go by name).
    ``shape`` and ``docs``: ``signature_fast.shape_of(fn, skip)`` and the docstring's
    parameters, when the caller has read them already (server/tools.py)."""
    if shape is None:
        shape = signature_fast.shape_of(fn, skip)
    if shape is not None:
        return shape.input_schema(docs if docs is not None else parse_docstring(fn.__doc__)[1])
    _load()
    docs = parse_docstring(getattr(_target(fn), "__doc__", None))[1]
    hints = _hints(_target(fn))
    builder = _SchemaBuilder()
    properties, required = {}, []
    for name, kind, default in _parameters(fn):
        if kind.name in _SKIPPED_KINDS or _is_context(hints.get(name, Any), skip):
            continue
        if kind is inspect.Parameter.POSITIONAL_ONLY:
            raise TypeError(f"{getattr(fn, '__name__', fn)}: positional-only parameter {name!r} "
                            "cannot be given by name")
        properties[name] = builder.property(hints.get(name, Any), default, docs.get(name))
        if default is NO_DEFAULT:
            required.append(name)
    return builder.finish(_object_schema(properties, required))


def _is_content_type(tp, extra: tuple) -> bool:
    tp, _ = _split_annotated(tp)
    if _is_union(tp) or get_origin(tp) is tuple or get_origin(tp) in _LISTS:
        return any(_is_content_type(arg, extra) for arg in get_args(tp) if arg not in (_NONE, Ellipsis))
    return _is_class(tp) and (issubclass(tp, extra) or hasattr(tp, "TYPE") or tp.__name__ in _CONTENT_NAMES)


def output_schema(fn, *, wrap: bool = False, unstructured: tuple = (), shape=None) -> dict | None:
    """The ``outputSchema`` from ``fn``'s return annotation, or None (unstructured).

    Dataclass, TypedDict, ``dict[str, T]``: their object schema. Other types:
    None, or with ``wrap=True`` the official SDK's ``{"type": "object",
    "properties": {"result": ...}, "required": ["result"]}``. Always None for no
    annotation, None, str and content blocks (a ``TYPE`` attribute, an MCP
    content class name, or in ``unstructured``; lists/unions of them). ``shape``:
    ``signature_fast.shape_of(fn)``, when the caller has it already (server/tools.py)."""
    fast = shape.returns if shape is not None else signature_fast._fast_return(fn)
    if fast is not _NOT_FAST and not (unstructured and isinstance(fast, type) and issubclass(fast, unstructured)):
        if fast is NO_HINT or fast is _NONE or fast is str:
            return None
        if fast is dict:
            return {"type": "object"}
        return _object_schema({"result": dict(_FAST_SCHEMAS[fast])}, ["result"]) if wrap else None
    _load()
    hints = _hints(_target(fn))
    if "return" not in hints:
        return None
    tp, metadata = _split_annotated(hints["return"])
    if tp is None or tp is _NONE or tp is str or _is_content_type(tp, tuple(unstructured)):
        return None
    builder = _SchemaBuilder()
    if _is_record(tp) or (get_origin(tp) or tp) in _MAPPINGS:
        return builder.finish(_with_metadata(builder.schema(tp), metadata), object_root=True)
    if not wrap:
        return None
    return builder.finish(_object_schema({"result": builder.schema(hints["return"])}, ["result"]))

