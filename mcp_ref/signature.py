"""Tool functions as MCP tools: Python signatures to JSON Schema, and back.

Spec: server/tools#tool (``inputSchema``, ``outputSchema``: JSON Schema 2020-12
unless ``$schema`` says otherwise), server/tools#structured-content.

Schemas come from type hints, defaults and Google-style docstrings;
``bind_arguments`` turns ``tools/call`` arguments into the annotated types,
``to_jsonable`` turns results back into JSON (checking values against a
schema is validation.py's; docstrings are read by docstrings.py). Recursive dataclasses/TypedDicts go
to ``$defs`` (``{"$ref": "#/$defs/<ClassName>"}``); other classes are inlined;
classes this module does not know map to ``{}`` (any value). No I/O.

Two paths give the same results:

* the fast path (next section) reads a plain function of ``int``, ``float``,
  ``str``, ``bool``, ``list``, ``dict`` and ``None`` parameters straight from
  ``__code__``, ``__defaults__``, ``__kwdefaults__`` and ``__annotations__``;
* the full path (the rest) handles every other callable and type hint with
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

import builtins
import json
import sys
from collections import abc
from types import FunctionType, GenericAlias

from .docstrings import parse_docstring
from .errors import InvalidParamsError

_NONE = type(None)
_JSON_TYPES = {bool: "boolean", int: "integer", float: "number", str: "string", _NONE: "null"}
# Content blocks are known by name (or a TYPE attribute): this module does not import types.
_CONTENT_NAMES = {"TextContent", "ImageContent", "AudioContent", "EmbeddedResource", "ResourceLink",
                  "ContentBlock", "CallToolResult"}


class _Marker:
    """A named sentinel."""

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return self.name


NO_DEFAULT = _Marker("NO_DEFAULT")      # a parameter or field without a default


class Field:
    """``Annotated[T, Field(description=..., **keywords)]``: a description and JSON Schema keywords."""

    def __init__(self, description: str | None = None, **schema):
        self.description = description
        self.schema = schema


# ====================================================================== fast path
# What inspect.signature and typing.get_type_hints would say about the common
# tool, read from the function object itself. A function qualifies when it is a
# plain ``def``/``lambda`` (not a method, partial or callable object), carries
# nothing that makes inspect look elsewhere (__wrapped__, __signature__), has
# no positional-only parameters, *args or **kwargs, and every annotation is one
# of _FAST_SCHEMAS (or the name of one, under ``from __future__ import
# annotations``) or a class to skip (the server's Context). The results are the
# full path's, byte for byte: tests/test_signature_fast_path.py compares both.

NO_HINT = _Marker("NO_HINT")            # an unannotated parameter (typing.Any to the full path)
_CONTEXT = _Marker("CONTEXT")           # a parameter the caller injects (see fast_parameters)
_NOT_FAST = _Marker("NOT_FAST")
_FAST_SCHEMAS = {int: {"type": "integer"}, float: {"type": "number"}, str: {"type": "string"},
                 bool: {"type": "boolean"}, _NONE: {"type": "null"}, list: {"type": "array"},
                 dict: {"type": "object"}, NO_HINT: {}}
_ELSEWHERE = frozenset(("__wrapped__", "__signature__", "_partialmethod", "__partialmethod__"))
_VARIADIC = 0x04 | 0x08                 # CO_VARARGS | CO_VARKEYWORDS (inspect's constants)
# Before 3.11 get_type_hints made ``x: T = None`` Optional[T]; such a parameter takes the full path.
_NONE_DEFAULT_IS_OPTIONAL = sys.version_info < (3, 11)


def _plain_annotations(fn) -> dict | None:
    """``fn.__annotations__`` when ``fn`` is a plain function inspect would read as it is."""
    if type(fn) is not FunctionType or not _ELSEWHERE.isdisjoint(fn.__dict__):
        return None
    try:
        return fn.__annotations__
    except Exception:                               # 3.14: a forward reference that does not resolve
        return None


def _fast_hint(annotation, fn, skip: tuple):
    """The annotation as a key of _FAST_SCHEMAS, _CONTEXT (a subclass of ``skip``), or _NOT_FAST."""
    if isinstance(annotation, str):                 # resolved as get_type_hints would: globals, then builtins
        if annotation == "None":
            return _NONE
        if not annotation.isidentifier():
            return _NOT_FAST                        # "Optional[int]", "list[str]", ...
        namespace = fn.__globals__
        annotation = namespace[annotation] if annotation in namespace else getattr(builtins, annotation, _NOT_FAST)
    if annotation is None:
        return _NONE
    if not isinstance(annotation, type) or isinstance(annotation, GenericAlias):
        return _NOT_FAST
    if skip and issubclass(annotation, skip):
        return _CONTEXT
    return annotation if annotation in _FAST_SCHEMAS else _NOT_FAST


def fast_parameters(fn, skip: tuple = (), inject=()) -> tuple | None:
    """``([(name, hint, default)], context names)`` of a function the fast path can
    read, else None (use the full path). ``hint`` is a key of the fast types
    (``NO_HINT`` when unannotated); ``default`` is ``NO_DEFAULT`` when there is none.
    Parameters typed as one of ``skip``, and those named in ``inject`` (whatever
    their annotation), are the context names, left out of the list."""
    annotations = _plain_annotations(fn)
    code = fn.__code__ if annotations is not None else None
    if code is None or code.co_flags & _VARIADIC or code.co_posonlyargcount:
        return None
    positional = code.co_argcount
    names = code.co_varnames[:positional + code.co_kwonlyargcount]
    given = fn.__defaults__ or ()
    defaults = dict(zip(names[positional - len(given):positional], given))
    defaults.update(fn.__kwdefaults__ or {})
    params, context = [], []
    for name in names:
        default = defaults.get(name, NO_DEFAULT)
        if name in inject:
            context.append(name)
            continue
        hint = _fast_hint(annotations[name], fn, skip) if name in annotations else NO_HINT
        if hint is _CONTEXT:
            context.append(name)
        elif hint is _NOT_FAST or (_NONE_DEFAULT_IS_OPTIONAL and default is None and hint is not NO_HINT
                                   and hint is not _NONE):
            return None
        else:
            params.append((name, hint, default))
    return params, context


def _fast_return(fn):
    """The return annotation as a key of _FAST_SCHEMAS (NO_HINT: none), or _NOT_FAST."""
    annotations = _plain_annotations(fn)
    if annotations is None:
        return _NOT_FAST
    return _fast_hint(annotations["return"], fn, ()) if "return" in annotations else NO_HINT


def _default_of(default):
    """A default as listed in a schema (JSON data), or NO_DEFAULT when it is not JSON."""
    try:
        return json.loads(json.dumps(to_jsonable(default), allow_nan=False))
    except (TypeError, ValueError):
        return NO_DEFAULT


def _fast_input_schema(params: list, docs: dict) -> dict:
    properties, required = {}, []
    for name, hint, default in params:
        schema = dict(_FAST_SCHEMAS[hint])
        if docs.get(name):
            schema["description"] = docs[name]
        if default is NO_DEFAULT:
            required.append(name)
        else:
            listed = _default_of(default)
            if listed is not NO_DEFAULT:
                schema["default"] = listed
        properties[name] = schema
    return _object_schema(properties, required)


def _object_schema(properties: dict, required: list, description: str | None = None) -> dict:
    schema = {"type": "object", "properties": properties, "required": required, "description": description}
    return {key: value for key, value in schema.items() if value or key == "properties"}


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

    from . import typehints
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
    read on 3.9 too (typehints.py)."""
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
    fast = fast_parameters(fn, skip)
    if fast is not None:
        return fast[1]
    _load()
    hints = _hints(_target(fn))
    return [name for name, kind, _ in _parameters(fn)
            if kind.name not in _SKIPPED_KINDS and _is_context(hints.get(name, Any), skip)]


def input_schema(fn, *, skip: tuple = ()) -> dict:
    """The ``inputSchema`` of ``fn``: an object with a property per parameter.

    Parameters without a default are required; JSON defaults appear as
    ``default``; descriptions from ``Annotated``, else the docstring's ``Args:``.
    ``*args``, ``**kwargs`` and parameters typed as one of ``skip`` are left
    out; a positional-only parameter raises TypeError (arguments go by name)."""
    fast = fast_parameters(fn, skip)
    if fast is not None:
        return _fast_input_schema(fast[0], parse_docstring(fn.__doc__)[1])
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


def output_schema(fn, *, wrap: bool = False, unstructured: tuple = ()) -> dict | None:
    """The ``outputSchema`` from ``fn``'s return annotation, or None (unstructured).

    Dataclass, TypedDict, ``dict[str, T]``: their object schema. Other types:
    None, or with ``wrap=True`` the official SDK's ``{"type": "object",
    "properties": {"result": ...}, "required": ["result"]}``. Always None for no
    annotation, None, str and content blocks (a ``TYPE`` attribute, an MCP
    content class name, or in ``unstructured``; lists/unions of them)."""
    fast = _fast_return(fn)
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


def _bad(path: str, problem: str) -> InvalidParamsError:
    argument = path.partition(".")[0].partition("[")[0]
    return InvalidParamsError(f"invalid argument {path}: {problem}", {"argument": argument, "path": path})


def _fits(value, tp) -> bool:
    """Could JSON ``value`` be meant as a ``tp``? (Chooses the member of a union.)"""
    tp, _ = _split_annotated(tp)
    kind = get_origin(tp) or tp
    if _is_record(tp) or kind in _MAPPINGS:
        return isinstance(value, dict)
    if kind is tuple or kind in _LISTS or kind in _SETS:
        return isinstance(value, list)
    if _is_class(tp) and issubclass(tp, enum.Enum):
        return any(member.value == value for member in tp)
    if tp in (float, bytes, bytearray):
        return isinstance(value, (int, float) if tp is float else str)
    return not _is_class(tp) or isinstance(value, tp)


def _convert(value, tp, path: str):
    """JSON ``value`` as the annotated type: records, enums, tuples, sets,
    base64 bytes, int to float, recursively through lists, dicts and unions."""
    tp, _ = _split_annotated(tp)
    origin, args = get_origin(tp), get_args(tp)
    if _is_union(tp):                               # the first member the JSON value fits
        members = [arg for arg in args if arg is not _NONE and _fits(value, arg)]
        return _convert(value, members[0], path) if members and value is not None else value
    if value is None or _is_unknown(tp):
        return value
    if _is_class(tp):
        if issubclass(tp, enum.Enum):
            try:
                return tp(value)
            except ValueError:
                raise _bad(path, f"{value!r} is not one of {[member.value for member in tp]}") from None
        if _is_record(tp):
            return _to_record(value, tp, path)
        if tp is float and isinstance(value, int) and not isinstance(value, bool):
            return float(value)
        if issubclass(tp, (bytes, bytearray)) and isinstance(value, str):
            import base64
            import binascii
            try:
                return tp(base64.b64decode(value, validate=True))
            except (binascii.Error, ValueError):
                raise _bad(path, "not valid base64") from None
        return tp(value) if tp in (tuple, set, frozenset) and isinstance(value, list) else value
    if isinstance(value, dict) and origin in _MAPPINGS:
        item = args[1] if len(args) == 2 else Any
        return {key: _convert(v, item, f"{path}.{key}") for key, v in value.items()}
    if not isinstance(value, list):
        return value
    if origin is tuple or origin in _LISTS or origin in _SETS:
        fixed = origin is tuple and args and args[-1] is not Ellipsis     # tuple[A, B] rather than tuple[T, ...]
        if fixed and len(value) != len(args):
            raise _bad(path, f"expected {len(args)} items, got {len(value)}")
        items = [_convert(v, args[i] if fixed else args[0] if args else Any, f"{path}[{i}]")
                 for i, v in enumerate(value)]
        return (frozenset if origin is frozenset else set if origin in _SETS
                else tuple if origin is tuple else list)(items)
    return value


def _to_record(value, cls, path: str):
    typed_dict = typehints.is_typeddict(cls)
    if not typed_dict and isinstance(value, cls):
        return value
    if not isinstance(value, dict):
        raise _bad(path, f"expected an object ({cls.__name__}), got {type(value).__name__}")
    fields = {f[0]: f for f in _record_fields(cls)[1]}
    missing = [name for name, f in fields.items() if f[2] and name not in value]
    if missing:
        raise _bad(path, "missing required field" + ("s " if len(missing) > 1 else " ")
                   + ", ".join(repr(name) for name in missing))
    if typed_dict:                                  # a TypedDict is a dict: unknown keys are kept
        return {key: _convert(v, fields[key][1], f"{path}.{key}") if key in fields else v
                for key, v in value.items()}
    converted = {key: _convert(v, fields[key][1], f"{path}.{key}") for key, v in value.items() if key in fields}
    try:
        return cls(**converted)                     # unknown keys of a dataclass are ignored
    except (TypeError, ValueError) as exc:
        raise _bad(path, str(exc)) from None


def bind_arguments(fn, arguments: dict | None, *, inject: dict | None = None) -> dict:
    """Keyword arguments for ``fn(**kwargs)`` from a ``tools/call`` ``arguments`` object.

    ``inject`` gives values for parameters the caller supplies (the context;
    names that are not parameters are ignored; a client argument of that name is
    unknown). Values become the annotated types (see ``_convert``). Unknown names
    (unless ``fn`` takes ``**kwargs``), missing required parameters and values
    that do not convert raise InvalidParamsError naming them (also in ``data``)."""
    arguments = {} if arguments is None else arguments
    if not isinstance(arguments, dict):
        raise InvalidParamsError("arguments must be an object")
    inject = inject or {}
    fast = fast_parameters(fn, inject=inject)
    if fast is not None:                            # of the fast types only float converts (from int)
        by_name = {name: default for name, _, default in fast[0]}
        by_name.update(dict.fromkeys(fast[1]))     # injected: always given
        floats = {name for name, hint, _ in fast[0] if hint is float}
        var_keyword = None

        def convert(name, value):
            return float(value) if name in floats and isinstance(value, int) and not isinstance(value, bool) \
                else value
    else:
        _load()
        hints = _hints(_target(fn))
        params = _parameters(fn)
        by_name = {name: default for name, kind, default in params
                   if kind.name in ("POSITIONAL_OR_KEYWORD", "KEYWORD_ONLY")}
        var_keyword = next((name for name, kind, _ in params if kind.name == "VAR_KEYWORD"), None)

        def convert(name, value):
            return _convert(value, hints.get(name if name in by_name else var_keyword, Any), name)
    kwargs = {name: value for name, value in inject.items() if name in by_name}
    injected = set(kwargs)
    unknown = []
    for name, value in arguments.items():
        if name in injected or (name not in by_name and var_keyword is None):
            unknown.append(name)
        else:
            kwargs[name] = convert(name, value)
    missing = [name for name, default in by_name.items() if default is NO_DEFAULT and name not in kwargs]
    for problem, names in (("unknown", unknown), ("missing required", missing)):
        if names:
            raise InvalidParamsError(f"{problem} argument{'s' if len(names) > 1 else ''}: "
                                     + ", ".join(repr(name) for name in names), {problem.split()[0]: names})
    return kwargs


_PLAIN = frozenset((str, int, float, bool, _NONE))


def to_jsonable(value):
    """``value`` as JSON data: dataclasses to dicts, enums to their values,
    tuples and sets to lists, bytes to base64 text, recursively."""
    kind = type(value)
    if kind in _PLAIN:
        return value
    enum_class = getattr(sys.modules.get("enum"), "Enum", None)    # not loaded: no value is an Enum
    if kind is not dict and kind is not list:      # (the usual results are neither dataclass nor Enum)
        if not isinstance(value, type) and hasattr(kind, "__dataclass_fields__"):
            import dataclasses                      # dataclasses.is_dataclass, without importing it first
            return {f.name: to_jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
        if enum_class is not None and isinstance(value, enum_class):
            return to_jsonable(value.value)
    if isinstance(value, abc.Mapping):
        return {to_jsonable(key) if enum_class is not None and isinstance(key, enum_class) else str(key):
                to_jsonable(v) for key, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [to_jsonable(v) for v in value]
    if isinstance(value, (bytes, bytearray)):
        import binascii                             # base64.b64encode without the base64 module
        return binascii.b2a_base64(value, newline=False).decode("ascii")
    return value
