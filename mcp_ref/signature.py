"""Tool functions as MCP tools: Python signatures to JSON Schema, and back.

Spec: server/tools#tool (``inputSchema``, ``outputSchema``: JSON Schema 2020-12
unless ``$schema`` says otherwise), server/tools#structured-content.

Schemas come from type hints, defaults and Google-style docstrings;
``bind_arguments`` turns ``tools/call`` arguments into the annotated types,
``to_jsonable`` turns results back into JSON, ``validate`` uses the optional
``jsonschema`` package (imported lazily). Recursive dataclasses/TypedDicts go
to ``$defs`` (``{"$ref": "#/$defs/<ClassName>"}``); other classes are inlined;
classes this module does not know map to ``{}`` (any value). No I/O.
"""
import base64
import binascii
import copy
import dataclasses
import enum
import functools
import inspect
import json
import re
import sys
import types
import typing
from collections import abc
from typing import Any, Literal, Optional, Union, get_args, get_origin

from .errors import InvalidParamsError, require

_NONE = type(None)
_EMPTY = inspect.Parameter.empty
_SKIPPED_KINDS = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
_WRAPPERS = tuple(getattr(typing, name) for name in ("Required", "NotRequired", "ReadOnly") if hasattr(typing, name))
_LISTS = (list, abc.Sequence, abc.MutableSequence, abc.Iterable, abc.Collection)
_SETS = (set, frozenset, abc.Set, abc.MutableSet)
_MAPPINGS = (dict, abc.Mapping, abc.MutableMapping)
_JSON_TYPES = {bool: "boolean", int: "integer", float: "number", str: "string", _NONE: "null"}
# Content blocks are known by name (or a TYPE attribute): this module does not import types.
_CONTENT_NAMES = {"TextContent", "ImageContent", "AudioContent", "EmbeddedResource", "ResourceLink",
                  "ContentBlock", "CallToolResult"}


class Field:
    """``Annotated[T, Field(description=..., **keywords)]``: a description and JSON Schema keywords."""

    def __init__(self, description: Optional[str] = None, **schema):
        self.description = description
        self.schema = schema


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


def _is_union(tp) -> bool:
    return get_origin(tp) in (Union, types.UnionType)


def _is_record(tp) -> bool:
    """A dataclass or TypedDict class: a JSON object with known properties."""
    return isinstance(tp, type) and (dataclasses.is_dataclass(tp) or typing.is_typeddict(tp))


def _is_unknown(tp) -> bool:
    return tp is Any or tp is _EMPTY or isinstance(tp, (str, typing.ForwardRef, typing.TypeVar))


def _target(fn):
    """What holds ``fn``'s annotations and docstring (a callable object's ``__call__``)."""
    fn = fn.func if isinstance(fn, functools.partial) else fn
    return fn if inspect.isroutine(fn) or inspect.isclass(fn) else getattr(fn, "__call__", fn)


def _hints(obj, localns: Optional[dict] = None) -> dict:
    """Type hints with ``Annotated`` kept; an annotation that does not resolve stays a string."""
    try:
        return typing.get_type_hints(obj, localns=localns, include_extras=True)
    except Exception:                               # e.g. a class imported under TYPE_CHECKING
        module = sys.modules.get(getattr(obj, "__module__", None) or "", sys)
        globalns = getattr(inspect.unwrap(obj), "__globals__", None) or vars(module)
    hints = {}
    for name, annotation in getattr(obj, "__annotations__", {}).items():
        try:
            hints[name] = eval(annotation, globalns, localns) if isinstance(annotation, str) else annotation
        except Exception:
            hints[name] = annotation
    return hints


def _record_fields(cls) -> tuple:
    """A dataclass's or TypedDict's ``(description, [(name, hint, required, default, description)])``."""
    hints = _hints(cls, localns={cls.__name__: cls})
    doc = cls.__doc__
    if doc and dataclasses.is_dataclass(cls) and doc.startswith(cls.__name__ + "("):
        doc = None                                  # the signature that dataclasses writes itself
    text, docs = _parse_docstring(doc)
    if typing.is_typeddict(cls):
        return text, [(name, hint, name in cls.__required_keys__, _EMPTY, docs.get(name))
                      for name, hint in hints.items()]
    fields = []
    for f in dataclasses.fields(cls):
        if f.init:
            default = _EMPTY if f.default is dataclasses.MISSING else f.default
            required = default is _EMPTY and f.default_factory is dataclasses.MISSING
            description = f.metadata.get("description") or docs.get(f.name)
            fields.append((f.name, hints.get(f.name, Any), required, default, description))
    return text, fields


_SECTION = re.compile(r"^([A-Za-z][A-Za-z ]*):\s*$")
_PARAM_SECTIONS = {"args", "arguments", "parameters", "params", "keyword args", "keyword arguments",
                   "other parameters", "attributes"}
_DROPPED_SECTIONS = _PARAM_SECTIONS | {"returns", "return", "yields", "yield", "raises", "raise"}
_ENTRY = re.compile(r"^\*{0,2}(\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")


def _parse_docstring(doc: Optional[str]) -> tuple:
    """Google style: ``(text without Args/Returns/Raises sections or None, {name: description})``."""
    if not doc:
        return None, {}
    body, params, section, indent, current = [], {}, None, None, None
    for line in inspect.cleandoc(doc).splitlines():
        header = _SECTION.match(line)
        if header and header.group(1).strip().lower() in _DROPPED_SECTIONS:
            section, indent, current = header.group(1).strip().lower(), None, None
            continue
        if section is not None and line.strip() and not line[0].isspace():
            section = None                          # text back at the margin ends a section
        if section is None:
            body.append(line)
        elif section in _PARAM_SECTIONS and line.strip():
            depth = len(line) - len(line.lstrip())
            entry = _ENTRY.match(line.strip())
            if entry and (indent is None or depth <= indent):
                indent, current = depth, entry.group(1)
                params[current] = entry.group(2).strip()
            elif current is not None:               # a continuation line
                params[current] = (params[current] + " " + line.strip()).strip()
    text = re.sub(r"\n{3,}", "\n\n", "\n".join(body).strip())
    return text or None, {name: about for name, about in params.items() if about}


def description_of(fn) -> Optional[str]:
    """The docstring without its Args/Returns/Raises sections, or None."""
    return _parse_docstring(getattr(_target(fn), "__doc__", None))[0]


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


def _object_schema(properties: dict, required: list, description: Optional[str] = None) -> dict:
    schema = {"type": "object", "properties": properties, "required": required, "description": description}
    return {key: value for key, value in schema.items() if value or key == "properties"}


class _SchemaBuilder:
    """Builds the schemas of one document, collecting ``$defs`` for recursive classes."""

    def __init__(self):
        self.defs, self.names = {}, {}              # $defs; class -> its name there
        self.stack, self.recursive = [], set()      # classes being built; recursive classes

    def schema(self, tp) -> dict:
        tp, metadata = _split_annotated(tp)
        return _with_metadata(self._bare(tp), metadata)

    def property(self, hint, default=_EMPTY, description: Optional[str] = None) -> dict:
        """A parameter's or field's schema: ``Annotated`` metadata wins over the docstring."""
        hint, metadata = _split_annotated(hint)
        schema = self.schema(hint)
        if description:
            schema["description"] = description
        try:
            if default is not _EMPTY:
                schema["default"] = json.loads(json.dumps(to_jsonable(default), allow_nan=False))
        except (TypeError, ValueError):
            pass                                    # not JSON: not listed
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
        if isinstance(tp, type):
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
        names = {n.rsplit(".", 1)[-1] for n in re.findall(r"[A-Za-z_][\w.]*", tp)} - {"Optional", "None"}
        return len(names) == 1 and names <= {cls.__name__ for cls in skip}
    origin = get_origin(tp) or tp
    return isinstance(origin, type) and issubclass(origin, skip)


def context_params(fn, skip: tuple = ()) -> list:
    """Names of the parameters typed as one of ``skip`` (the server's Context
    class, also ``Optional[Context]``): not in the schema, injected by the caller."""
    hints = _hints(_target(fn))
    return [name for name, param in inspect.signature(fn).parameters.items()
            if param.kind not in _SKIPPED_KINDS and _is_context(hints.get(name, Any), skip)]


def input_schema(fn, *, skip: tuple = ()) -> dict:
    """The ``inputSchema`` of ``fn``: an object with a property per parameter.

    Parameters without a default are required; JSON defaults appear as
    ``default``; descriptions from ``Annotated``, else the docstring's ``Args:``.
    ``*args``, ``**kwargs`` and parameters typed as one of ``skip`` are left
    out; a positional-only parameter raises TypeError (arguments go by name)."""
    docs = _parse_docstring(getattr(_target(fn), "__doc__", None))[1]
    hints = _hints(_target(fn))
    builder = _SchemaBuilder()
    properties, required = {}, []
    for name, param in inspect.signature(fn).parameters.items():
        if param.kind in _SKIPPED_KINDS or _is_context(hints.get(name, Any), skip):
            continue
        if param.kind is inspect.Parameter.POSITIONAL_ONLY:
            raise TypeError(f"{getattr(fn, '__name__', fn)}: positional-only parameter {name!r} "
                            "cannot be given by name")
        properties[name] = builder.property(hints.get(name, Any), param.default, docs.get(name))
        if param.default is _EMPTY:
            required.append(name)
    return builder.finish(_object_schema(properties, required))


def _is_content_type(tp, extra: tuple) -> bool:
    tp, _ = _split_annotated(tp)
    if _is_union(tp) or get_origin(tp) is tuple or get_origin(tp) in _LISTS:
        return any(_is_content_type(arg, extra) for arg in get_args(tp) if arg not in (_NONE, Ellipsis))
    return isinstance(tp, type) and (issubclass(tp, extra) or hasattr(tp, "TYPE") or tp.__name__ in _CONTENT_NAMES)


def output_schema(fn, *, wrap: bool = False, unstructured: tuple = ()) -> Optional[dict]:
    """The ``outputSchema`` from ``fn``'s return annotation, or None (unstructured).

    Dataclass, TypedDict, ``dict[str, T]``: their object schema. Other types:
    None, or with ``wrap=True`` the official SDK's ``{"type": "object",
    "properties": {"result": ...}, "required": ["result"]}``. Always None for no
    annotation, None, str and content blocks (a ``TYPE`` attribute, an MCP
    content class name, or in ``unstructured``; lists/unions of them)."""
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
    return InvalidParamsError(f"invalid argument {path}: {problem}",
                              {"argument": re.match(r"[^.\[]*", path).group(), "path": path})


def _fits(value, tp) -> bool:
    """Could JSON ``value`` be meant as a ``tp``? (Chooses the member of a union.)"""
    tp, _ = _split_annotated(tp)
    kind = get_origin(tp) or tp
    if _is_record(tp) or kind in _MAPPINGS:
        return isinstance(value, dict)
    if kind is tuple or kind in _LISTS or kind in _SETS:
        return isinstance(value, list)
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return any(member.value == value for member in tp)
    if tp in (float, bytes, bytearray):
        return isinstance(value, (int, float) if tp is float else str)
    return not isinstance(tp, type) or isinstance(value, tp)


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
    if isinstance(tp, type):
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
    typed_dict = typing.is_typeddict(cls)
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


def bind_arguments(fn, arguments: Optional[dict], *, inject: Optional[dict] = None) -> dict:
    """Keyword arguments for ``fn(**kwargs)`` from a ``tools/call`` ``arguments`` object.

    ``inject`` gives values for parameters the caller supplies (the context;
    names that are not parameters are ignored; a client argument of that name is
    unknown). Values become the annotated types (see ``_convert``). Unknown names
    (unless ``fn`` takes ``**kwargs``), missing required parameters and values
    that do not convert raise InvalidParamsError naming them (also in ``data``)."""
    arguments = {} if arguments is None else arguments
    if not isinstance(arguments, dict):
        raise InvalidParamsError("arguments must be an object")
    params = inspect.signature(fn).parameters
    hints = _hints(_target(fn))
    by_name = {name: p for name, p in params.items()
               if p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)}
    var_keyword = next((p.name for p in params.values() if p.kind is inspect.Parameter.VAR_KEYWORD), None)
    kwargs = {name: value for name, value in (inject or {}).items() if name in by_name}
    injected = set(kwargs)
    unknown = []
    for name, value in arguments.items():
        if name in injected or (name not in by_name and var_keyword is None):
            unknown.append(name)
        else:
            kwargs[name] = _convert(value, hints.get(name if name in by_name else var_keyword, Any), name)
    missing = [name for name, p in by_name.items() if p.default is _EMPTY and name not in kwargs]
    for problem, names in (("unknown", unknown), ("missing required", missing)):
        if names:
            raise InvalidParamsError(f"{problem} argument{'s' if len(names) > 1 else ''}: "
                                     + ", ".join(repr(name) for name in names), {problem.split()[0]: names})
    return kwargs


def to_jsonable(value):
    """``value`` as JSON data: dataclasses to dicts, enums to their values,
    tuples and sets to lists, bytes to base64 text, recursively."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, enum.Enum):
        return to_jsonable(value.value)
    if isinstance(value, abc.Mapping):
        return {to_jsonable(key) if isinstance(key, enum.Enum) else str(key): to_jsonable(v)
                for key, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [to_jsonable(v) for v in value]
    if isinstance(value, (bytes, bytearray)):
        return base64.b64encode(value).decode("ascii")
    return value


def validate(instance, schema: dict) -> Optional[str]:
    """One message such as ``"b: 'x' is not of type 'integer'"`` (path: message),
    or None when ``instance`` is valid. 2020-12 unless ``$schema`` names another
    draft; remote ``$ref`` are never fetched. MissingDependency without
    ``jsonschema`` (>= 4.18)."""
    return compile_validator(schema)(instance)


def compile_validator(schema: dict):
    """``validate`` for one schema, prepared once: returns ``check(instance)``
    giving the same message or None. Keep it for schemas used on every call
    (a tool's inputSchema); building a jsonschema validator costs more than
    running it. MissingDependency without ``jsonschema`` (>= 4.18)."""
    fast = _flat_checker(schema)
    if fast is not None:
        return fast
    jsonschema = require("jsonschema", "jsonschema", "JSON Schema validation")
    specifications = require("jsonschema_specifications", "jsonschema", "JSON Schema validation")
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    validator = cls(schema, registry=specifications.REGISTRY)     # the metaschemas, and no retrieval
    best_match = jsonschema.exceptions.best_match

    def check(instance) -> Optional[str]:
        try:
            if next(validator.iter_errors(instance), None) is None:
                return None                         # the common case: stop at "no error"
            error = best_match(validator.iter_errors(instance))
        except Exception as exc:                    # an unresolvable $ref, a broken schema
            return f"cannot validate against the schema: {exc}"
        if error is None:
            return None
        where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path).lstrip(".")
        return f"{where}: {error.message}" if where else error.message
    return check


# The flat schemas generated for most tools (an object of primitive-typed
# properties) are checked here in plain Python: jsonschema costs ~12 µs per call
# on the tools/call hot path (bench/), this ~1 µs, with the same messages.
_FLAT_OBJECT_KEYS = frozenset(("type", "properties", "required", "title", "description"))
_FLAT_PROPERTY_KEYS = frozenset(("type", "title", "description", "default"))
_PRIMITIVE_CHECKS = {
    "string": lambda v: isinstance(v, str),
    "boolean": lambda v: isinstance(v, bool),
    "integer": lambda v: (isinstance(v, int) and not isinstance(v, bool))
    or (isinstance(v, float) and v.is_integer()),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
}


def _flat_checker(schema: dict):
    """A plain checker for a flat object schema of primitive properties, else None."""
    if not isinstance(schema, dict) or schema.get("type") != "object" or not set(schema) <= _FLAT_OBJECT_KEYS:
        return None
    properties = schema.get("properties", {})
    required = schema.get("required", [])
    if not isinstance(properties, dict) or not isinstance(required, list):
        return None
    checks = {}
    for name, prop in properties.items():
        if (not isinstance(prop, dict) or not set(prop) <= _FLAT_PROPERTY_KEYS
                or prop.get("type") not in _PRIMITIVE_CHECKS):
            return None
        checks[name] = (prop["type"], _PRIMITIVE_CHECKS[prop["type"]])
    required = tuple(required)

    def check(instance) -> Optional[str]:
        if not isinstance(instance, dict):
            return f"{instance!r} is not of type 'object'"
        for key in required:
            if key not in instance:
                return f"{key!r} is a required property"
        for key, value in instance.items():
            entry = checks.get(key)
            if entry is not None and not entry[1](value):
                return f"{key}: {value!r} is not of type {entry[0]!r}"
        return None
    return check
