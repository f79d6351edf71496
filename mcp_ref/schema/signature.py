"""Tool functions as MCP tools: Python signatures to JSON Schema.

Spec: server/tools#tool (``inputSchema``, ``outputSchema``: JSON Schema 2020-12
unless ``$schema`` says otherwise), server/tools#structured-content.

Rules:

1. Schemas come from type hints (``typing.get_type_hints``, through
   schema/typehints.py), defaults (``inspect.signature``) and Google-style
   docstrings (schema/docstrings.py). A function is read once, when it is
   registered (server/tools.py, prompts.py, resources.py), in one ``Reading``.
2. A parameter without a default is required; a default that is JSON data is
   listed as ``default``; one that is not is left out of the schema.
3. Recursive dataclasses/TypedDicts go to ``$defs`` (``{"$ref":
   "#/$defs/<ClassName>"}``); other classes are inlined; classes this module
   does not know map to ``{}`` (any value).
4. ``*args``, ``**kwargs`` and parameters typed as the server's ``Context``
   are left out (the caller injects the context); a positional-only parameter
   is a TypeError (arguments go by name).

The way back, from JSON arguments to Python values, is schema/binding.py's;
from Python results to JSON, schema/jsonable.py's. No I/O.
"""
from __future__ import annotations

import copy
import dataclasses
import enum
import functools
import inspect
import json
import re
import typing
from collections import abc
from types import FunctionType, GenericAlias
from typing import Any, Literal, get_args, get_origin

from mcp_ref.schema import typehints
from mcp_ref.schema.docstrings import parse_docstring
from mcp_ref.schema.jsonable import to_jsonable

_NONE = type(None)
_JSON_TYPES = {bool: "boolean", int: "integer", float: "number", str: "string", _NONE: "null"}
# Content blocks are known by name (or a TYPE attribute): this module does not import types.
_JSON_SCALARS = (str, int, bool, _NONE)
_ELSEWHERE = frozenset(("__wrapped__", "__signature__"))  # what sends inspect to another object's signature
_CONTENT_NAMES = {"TextContent", "ImageContent", "AudioContent", "EmbeddedResource", "ResourceLink",
                  "ContentBlock", "CallToolResult"}
_WRAPPERS = tuple(getattr(typing, name) for name in ("Required", "NotRequired", "ReadOnly") if hasattr(typing, name))
_UNIONS = typehints.UNION_ORIGINS
_LISTS = (list, abc.Sequence, abc.MutableSequence, abc.Iterable, abc.Collection)
_SETS = (set, frozenset, abc.Set, abc.MutableSet)
_MAPPINGS = (dict, abc.Mapping, abc.MutableMapping)


class _Marker:
    """A named sentinel."""

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return self.name


NO_DEFAULT: Any = _Marker("NO_DEFAULT")      # a parameter or field without a default


def _default_of(default: Any) -> Any:
    """A default as listed in a schema (JSON data), or NO_DEFAULT when it is not JSON (rule 2)."""
    if type(default) in _JSON_SCALARS:
        return default                              # JSON as it is (no float: NaN is not JSON)
    try:
        return json.loads(json.dumps(to_jsonable(default), allow_nan=False))
    except (TypeError, ValueError):
        return NO_DEFAULT


def _object_schema(properties: dict, required: list, description: str | None = None) -> dict:
    schema = {"type": "object", "properties": properties, "required": required, "description": description}
    return {key: value for key, value in schema.items() if value or key == "properties"}


class Field:
    """``Annotated[T, Field(description=..., **keywords)]``: a description and JSON Schema keywords."""

    def __init__(self, description: str | None = None, **schema):
        self.description = description
        self.schema = schema


def description_of(fn) -> str | None:
    """The docstring without its Args/Returns/Raises sections, or None."""
    target = fn if type(fn) is FunctionType else _target(fn)
    return parse_docstring(getattr(target, "__doc__", None))[0]


def _split_annotated(tp) -> tuple:
    """``Annotated[T, m...]`` -> ``(T, [m...])``; also unwraps Required/NotRequired and NewType."""
    if type(tp) is type:
        return tp, []                               # a plain class: nothing to unwrap
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
    fn = fn.func if isinstance(fn, functools.partial) else fn
    return fn if inspect.isroutine(fn) or inspect.isclass(fn) else getattr(fn, "__call__", fn)


def _parameters(fn) -> list:
    """``[(name, kind, default)]`` in ``inspect.signature``'s order; default ``NO_DEFAULT``
    when none. A plain function is read from its code object, which is what inspect
    reads, without making its objects: first listing of 10,000 tools, 27 of a tool's
    41 us of reading (bench/README.md, "Schema and server"). Other callables (partials,
    methods, callable objects, a ``__wrapped__`` or ``__signature__``) go to inspect."""
    if type(fn) is not FunctionType or not _ELSEWHERE.isdisjoint(fn.__dict__):
        empty = inspect.Parameter.empty
        return [(name, p.kind, NO_DEFAULT if p.default is empty else p.default)
                for name, p in inspect.signature(fn).parameters.items()]
    code, kinds = fn.__code__, inspect.Parameter
    positional, names, flags = code.co_argcount, code.co_varnames, code.co_flags
    defaults, keyword_defaults = fn.__defaults__ or (), fn.__kwdefaults__ or {}
    first = positional - len(defaults)
    params: list = [(names[i], kinds.POSITIONAL_ONLY if i < code.co_posonlyargcount else kinds.POSITIONAL_OR_KEYWORD,
               defaults[i - first] if i >= first else NO_DEFAULT) for i in range(positional)]
    keyword_only = names[positional:positional + code.co_kwonlyargcount]
    rest = positional + len(keyword_only)           # then *args, then **kwargs
    if flags & inspect.CO_VARARGS:
        params.append((names[rest], kinds.VAR_POSITIONAL, NO_DEFAULT))
        rest += 1
    params += [(name, kinds.KEYWORD_ONLY, keyword_defaults.get(name, NO_DEFAULT)) for name in keyword_only]
    if flags & inspect.CO_VARKEYWORDS:
        params.append((names[rest], kinds.VAR_KEYWORD, NO_DEFAULT))
    return params


def _record_fields(cls: type) -> tuple:
    """A dataclass's or TypedDict's ``(description, [(name, hint, required, default, description)])``."""
    hints = typehints.get_type_hints(cls, {cls.__name__: cls})
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
        if type(tp) is type and tp in _JSON_TYPES:  # bool, int, float, str, None: exactly
            return {"type": _JSON_TYPES[tp]}
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
            schema: dict[str, Any] = {"type": "array"}
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
    builder = _SchemaBuilder()
    return builder.finish(builder.schema(tp))


def _is_context(tp, skip: tuple) -> bool:
    """Is ``tp`` one of ``skip`` (a subclass, ``Optional`` of one, or a string naming one)?"""
    tp, _ = _split_annotated(tp)
    if type(tp) is type:
        return issubclass(tp, skip)
    if _is_union(tp):
        members = [arg for arg in get_args(tp) if arg is not _NONE]
        return len(members) == 1 and _is_context(members[0], skip)
    if isinstance(tp, typing.ForwardRef):
        tp = tp.__forward_arg__
    if isinstance(tp, str):                         # an annotation that did not resolve
        names = {n.rsplit(".", 1)[-1] for n in re.findall(r"[A-Za-z_][\w.]*", tp)} - {"Optional", "None"}
        return len(names) == 1 and names <= {cls.__name__ for cls in skip}
    origin = get_origin(tp) or tp
    return isinstance(origin, type) and issubclass(origin, skip)


_SKIPPED_KINDS = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)


class Reading:
    """One reading of ``fn`` (rule 1): its parameters ``[(name, kind, default)]``, type
    hints, docstring (``description``, parameter ``docs``) and the names typed as one of
    ``skip`` (``context``). The schemas below and schema/binding.py's ``Binder`` are all
    made from one reading: reading a tool three or four times made a first listing of
    10,000 tools 18x the floor (target 3x; bench/README.md, "Schema and server")."""

    __slots__ = ("fn", "params", "hints", "description", "docs", "context")

    def __init__(self, fn, skip: tuple = ()):
        target = _target(fn)
        self.fn, self.params, self.hints = fn, _parameters(fn), typehints.get_type_hints(target)
        self.description, self.docs = parse_docstring(getattr(target, "__doc__", None))
        self.context = [name for name, kind, _ in self.params
                        if kind not in _SKIPPED_KINDS and _is_context(self.hints.get(name, Any), skip)]


def _reading(fn, skip: tuple) -> Reading:
    return fn if isinstance(fn, Reading) else Reading(fn, skip)


def context_params(fn, skip: tuple = ()) -> list:
    """Names of the parameters typed as one of ``skip`` (the server's Context
    class, also ``Optional[Context]``): not in the schema, injected by the caller."""
    return _reading(fn, skip).context


def input_schema(fn, *, skip: tuple = ()) -> dict:
    """The ``inputSchema`` of ``fn`` (or of its ``Reading``): an object with a property
    per parameter.

    Parameters without a default are required; JSON defaults appear as
    ``default``; descriptions from ``Annotated``, else the docstring's ``Args:``.
    ``*args``, ``**kwargs`` and parameters typed as one of ``skip`` are left
    out; a positional-only parameter raises TypeError (arguments go by name)."""
    read = _reading(fn, skip)
    hints, docs, context = read.hints, read.docs, read.context
    builder = _SchemaBuilder()
    properties, required = {}, []
    for name, kind, default in read.params:
        if kind in _SKIPPED_KINDS or name in context:
            continue
        if kind is inspect.Parameter.POSITIONAL_ONLY:
            raise TypeError(f"{getattr(read.fn, '__name__', read.fn)}: positional-only parameter {name!r} "
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


def output_schema(fn, *, wrap: bool = False, unstructured: tuple = ()) -> dict | None:
    """The ``outputSchema`` from ``fn``'s return annotation, or None (unstructured).

    Dataclass, TypedDict, ``dict[str, T]``: their object schema. Other types:
    None, or with ``wrap=True`` the official SDK's ``{"type": "object",
    "properties": {"result": ...}, "required": ["result"]}``. Always None for no
    annotation, None, str and content blocks (a ``TYPE`` attribute, an MCP
    content class name, or in ``unstructured``; lists/unions of them). ``fn`` may be
    its ``Reading``."""
    hints = fn.hints if isinstance(fn, Reading) else typehints.get_type_hints(_target(fn))
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

