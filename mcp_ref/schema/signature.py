"""Tool functions as MCP tools: Python signatures to JSON Schema.

Spec: server/tools#tool (``inputSchema``, ``outputSchema``: JSON Schema 2020-12
unless ``$schema`` says otherwise), server/tools#structured-content.

Rules:

1. Schemas come from type hints (``typing.get_type_hints``, through
   schema/typehints.py), defaults (``inspect.signature``) and Google-style
   docstrings (schema/docstrings.py). A function is read once, in one
   ``Reading`` (when: server/tools.py rule 8, prompts.py, resources.py).
2. A parameter without a default is required; a default that is JSON data is
   listed as ``default``; one that is not is left out of the schema.
3. Recursive dataclasses/TypedDicts go to ``$defs`` (``{"$ref":
   "#/$defs/<ClassName>"}``); other classes are inlined; classes this module
   does not know map to ``{}`` (any value).
4. ``*args``, ``**kwargs`` and parameters typed as the server's ``Context``
   are left out (the caller injects the context); a positional-only parameter
   is a TypeError (arguments go by name).
5. Functions of one shape share one reading of their parameters (``_shape``):
   a plain ``def`` whose parameter layout, annotation objects and default
   objects are the very ones of a function read before (and, for string
   annotations, of the same module; the first 1,024 shapes are kept) gets
   that reading, and with it what was made from it (``Reading.made``:
   schemas, a binder, checks), so such a schema is read-only. Only the
   docstring is read per function. Why: reading every signature made the
   first listing of 10,000 tools 9.4x the floor against a 3x target
   (bench/bench_growth.py, catalog).

The way back, from JSON arguments to Python values, is schema/binding.py's;
from Python results to JSON, schema/jsonable.py's. No I/O.
"""
from __future__ import annotations

import functools
import inspect
import re
import typing
from types import FunctionType
from typing import Any, get_args, get_origin

from mcp_ref.schema import typehints
from mcp_ref.schema.typehints import _LISTS, _MAPPINGS, _is_class, _is_record, is_union, _split_annotated
from mcp_ref.schema.docstrings import parse_docstring
from mcp_ref.schema.schemas import (_NONE, NO_DEFAULT, Field, _object_schema, _SchemaBuilder,  # noqa: F401
                                    _with_metadata, schema_for_type)

# Content blocks are known by name (or a TYPE attribute): this module does not import types.
_ELSEWHERE = frozenset(("__wrapped__", "__signature__"))  # what sends inspect to another object's signature
_VARIADIC = inspect.CO_VARARGS | inspect.CO_VARKEYWORDS
_CONTENT_NAMES = {"TextContent", "ImageContent", "AudioContent", "EmbeddedResource", "ResourceLink",
                  "ContentBlock", "CallToolResult"}



def _target(fn):
    """What holds ``fn``'s annotations and docstring (a callable object's ``__call__``)."""
    fn = fn.func if isinstance(fn, functools.partial) else fn
    return fn if inspect.isroutine(fn) or inspect.isclass(fn) else getattr(fn, "__call__", fn)


def plain(fn) -> bool:
    """A plain ``def`` whose signature is its own (not another object's through
    ``__wrapped__`` or ``__signature__``): its code object tells its shape (rule 5)."""
    return type(fn) is FunctionType and _ELSEWHERE.isdisjoint(fn.__dict__)


def _is_context(tp, skip: tuple) -> bool:
    """Is ``tp`` one of ``skip`` (a subclass, ``Optional`` of one, or a string naming one)?"""
    tp, _ = _split_annotated(tp)
    if is_union(tp):
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


_SHAPES: dict = {}      # a plain function's shape (_shape) -> (params, hints, context, made, held); the first 1,024
_SHAREABLE = frozenset((str, int, float, bool, _NONE))     # defaults a shape may hold (never changed in place)


def _shape(fn: Any, skip: tuple) -> tuple:
    """Rule 5: ``(key, held)``: what the reading of a plain function's parameters is shared
    by (its parameter layout, the very same annotation and default objects, by ``id``: ``1
    == True``; the same module for string annotations), and ``held``, those objects, kept
    alive with the shared reading. ``(None, ())`` for a function whose reading is its own."""
    if not plain(fn):
        return None, ()
    try:
        annotations = fn.__annotations__
    except Exception:                               # 3.14: a forward reference that does not resolve
        return None, ()
    code, kwdefaults = fn.__code__, fn.__kwdefaults__ or {}
    defaults = (fn.__defaults__ or ()) + tuple(kwdefaults.values())
    if not _SHAREABLE.issuperset(map(type, defaults)):
        return None, ()
    held = (*annotations.values(), *defaults, fn.__globals__ if str in map(type, annotations.values()) else None)
    count = code.co_argcount + code.co_kwonlyargcount + bool(code.co_flags & inspect.CO_VARARGS) + \
        bool(code.co_flags & inspect.CO_VARKEYWORDS)
    return (code.co_varnames[:count], code.co_argcount, code.co_posonlyargcount, code.co_flags & _VARIADIC,
            tuple(annotations), tuple(kwdefaults), skip, *map(id, held)), held


class Reading:
    """One reading of ``fn`` (rule 1): its parameters ``[(name, kind, default)]``, type
    hints, docstring (``description``, parameter ``docs``), the names typed as one of
    ``skip`` (``context``) and ``made``, what callers make from them (schemas, a binder,
    checks). All but the docstring are shared by the functions of one shape (rule 5):
    read-only. The schemas below and server/tools.py's ``Binder`` are all made from one
    reading."""

    __slots__ = ("fn", "params", "hints", "description", "docs", "context", "made")

    def __init__(self, fn: Any, skip: tuple = ()):
        key, held = _shape(fn, skip)
        shared: Any = _SHAPES.get(key)
        if shared is None:
            params = [(name, p.kind, NO_DEFAULT if p.default is p.empty else p.default)   # signature order
                      for name, p in inspect.signature(fn).parameters.items()]
            hints = typehints.get_type_hints(_target(fn))
            context = [name for name, kind, _ in params
                       if kind not in _SKIPPED_KINDS and _is_context(hints.get(name, Any), skip)]
            shared = params, hints, context, {}, held
            if key is not None and len(_SHAPES) < 1024:
                _SHAPES[key] = shared
        self.params, self.hints, self.context, self.made, _ = shared
        self.fn = fn
        doc = fn.__doc__ if type(fn) is FunctionType else getattr(_target(fn), "__doc__", None)
        self.description, self.docs = parse_docstring(doc)


def input_schema(fn, *, skip: tuple = ()) -> dict:
    """The ``inputSchema`` of ``fn`` (or of its ``Reading``): an object with a property
    per parameter.

    Parameters without a default are required; JSON defaults appear as
    ``default``; descriptions from ``Annotated``, else the docstring's ``Args:``.
    ``*args``, ``**kwargs`` and parameters typed as one of ``skip`` are left
    out; a positional-only parameter raises TypeError (arguments go by name)."""
    read = fn if isinstance(fn, Reading) else Reading(fn, skip)
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
    if is_union(tp) or get_origin(tp) is tuple or get_origin(tp) in _LISTS:
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

