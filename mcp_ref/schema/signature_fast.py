"""The fast path of schema/signature.py: what ``inspect.signature`` and
``typing.get_type_hints`` would say about the common tool, read from the
function object itself, without importing either (they cost 9 to 17 ms, a
third of a stdio server's cold start: schema/signature.py says why two paths).

A function qualifies when it is a plain ``def``/``lambda`` (not a method,
partial or callable object), carries nothing that makes inspect look
elsewhere (``__wrapped__``, ``__signature__``), has no positional-only
parameters, ``*args`` or ``**kwargs``, and every annotation is one of
``_FAST_SCHEMAS`` (or the name of one, under ``from __future__ import
annotations``) or a class to skip (the server's ``Context``). The results are
the full path's, byte for byte: tests/test_signature_fast_path.py compares both.

Functions of the same parameters (names, types, defaults that are strings,
integers, booleans or None) and without parameter descriptions share one
``inputSchema`` object (``_SHARED``, up to ``_SHARED_MAX`` shapes): a catalogue
of 10,000 such tools holds one schema, not 10,000 copies, and a third of its
first listing was the garbage collector walking those copies
(bench/bench_growth.py, issue 17). So a schema made from a signature is
read-only: to list another one, give ``input_schema=``.

Reading a function is done once per *shape* (``shape_of``, ``_SHAPES``): a
function whose code has the same parameter layout as the last one read of
that layout, and whose annotations, defaults and keyword defaults are the
very same objects (``is``, not ``==``: ``1 == True``, and an object may say
it equals anything), gets that reading (its parameters, its return hint, its
shared schema) without reading again. Why not the plain way, reading every
function: a first listing of 10,000 tools read each signature (~2-3 us) and
built each schema key (~1 us) against the floor's ~5 us per tool to send it,
so it cost ~2.5-3x the floor (bench/bench_growth.py, issue 17); finding a
shape and checking that a function fits it costs ~1 us. String annotations
are resolved in the function's module, so a shape read from them fits only
functions of the same module (one read after the module rebinds such a
name still gets the reading made before). A reading is only
kept when its defaults are immutable scalars (``_SHAREABLE``); the rest is
read every time, as before. ``_SHAPES`` keeps one shape per code layout, at
most ``_SHAPES_MAX``.

``takes_nothing`` says from the code alone that a plain function has no
parameters, so a fixed URI's resource function is neither read nor checked
(server/resources.py rule 6): reading its shape and schema was ~13,900 CPU
instructions of the ~36,000 of registering a resource (callgrind, 10,000
in one process), the test is ~3,300.
"""
from __future__ import annotations

import builtins
import json
import sys
from itertools import repeat
from operator import is_
from types import FunctionType, GenericAlias

from mcp_ref.schema.jsonable import to_jsonable

_NONE = type(None)


class _Marker:
    """A named sentinel."""

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return self.name


NO_DEFAULT = _Marker("NO_DEFAULT")      # a parameter or field without a default

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
_LAZY_ANNOTATIONS = sys.version_info >= (3, 14)      # __annotations__ evaluated when read (PEP 649)


def _plain_annotations(fn) -> dict | None:
    """``fn.__annotations__`` when ``fn`` is a plain function inspect would read as it is."""
    if type(fn) is not FunctionType or not _ELSEWHERE.isdisjoint(fn.__dict__):
        return None
    try:
        return fn.__annotations__
    except Exception:                               # 3.14: a forward reference that does not resolve
        return None


def takes_nothing(fn) -> bool:
    """Whether ``fn`` is a plain function of no parameters at all that inspect would read
    as it is: what ``shape_of`` would find, an empty parameter list, said from its code
    alone. A fixed URI's resource function is one (server/resources.py rule 6): reading
    its shape (its annotations, the shapes table) was a third of registering it.
    Before 3.14 reading ``__annotations__`` cannot fail, and the return annotation
    says nothing about the parameters; from 3.14 on (PEP 649) it may fail, and such a
    function goes where ``shape_of`` sends it."""
    if type(fn) is not FunctionType:
        return False
    code = fn.__code__
    return (not (code.co_argcount or code.co_kwonlyargcount or code.co_flags & _VARIADIC)
            and _ELSEWHERE.isdisjoint(fn.__dict__)
            and (not _LAZY_ANNOTATIONS or _plain_annotations(fn) is not None))


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
    kind = type(default)
    if kind is str or kind is int or kind is bool or default is None:
        return default                              # JSON as it is: no round trip
    try:
        return json.loads(json.dumps(to_jsonable(default), allow_nan=False))
    except (TypeError, ValueError):
        return NO_DEFAULT


_SHARED: dict = {}                      # parameters -> their shared inputSchema (module docstring)
_SHARED_MAX = 1024
_SHAREABLE = frozenset((str, int, bool, _NONE, _Marker))   # defaults told apart by type and value


def _fast_input_schema(params: list, docs: dict) -> dict:
    if docs:
        return _new_input_schema(params, docs)
    key = []
    for name, hint, default in params:
        kind = type(default)
        if kind not in _SHAREABLE:
            return _new_input_schema(params, docs)
        key.append((name, hint, kind, default))
    key = tuple(key)
    schema = _SHARED.get(key)
    if schema is None:
        schema = _new_input_schema(params, docs)
        if len(_SHARED) < _SHARED_MAX:
            schema = _SHARED.setdefault(key, schema)
    return schema


def _new_input_schema(params: list, docs: dict) -> dict:
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


class Shape:
    """A reading of a function by the fast path, kept for the next function of the same
    shape (module docstring): ``parameters`` is ``fast_parameters``' answer, ``returns``
    ``_fast_return``'s (``_NOT_FAST``: the full path reads the return annotation); both,
    and the schema, are shared and read-only."""

    __slots__ = ("names", "values", "defaults", "kwdefaults", "globals", "skip", "parameters", "returns",
                 "_schema", "derived")

    def __init__(self, fn, annotations: dict, skip: tuple, parameters: tuple, returns):
        self.names, self.values = tuple(annotations), tuple(annotations.values())   # as they were read
        self.defaults, self.skip = fn.__defaults__, skip
        self.kwdefaults = dict(fn.__kwdefaults__) if fn.__kwdefaults__ is not None else None
        strings = str in map(type, self.values)
        self.globals = fn.__globals__ if strings else None     # what the strings were resolved in
        self.parameters, self.returns, self._schema = parameters, returns, None
        self.derived: dict = {}         # what a caller makes from this reading, shared the same way

    def fits(self, fn, annotations: dict, skip: tuple) -> bool:
        """Whether ``fn`` (of this shape's code layout) would be read as this shape was."""
        defaults, kwdefaults = fn.__defaults__, fn.__kwdefaults__
        return (tuple(annotations) == self.names and all(map(is_, annotations.values(), self.values))
                and (defaults is self.defaults or _same_items(defaults, self.defaults))
                and (kwdefaults is self.kwdefaults or _same_items(kwdefaults, self.kwdefaults))
                and (self.globals is None or self.globals is fn.__globals__) and self.skip == skip)

    def input_schema(self, docs: dict) -> dict:
        """The inputSchema of a function of this shape whose docstring describes ``docs``."""
        if docs:
            return _new_input_schema(self.parameters[0], docs)
        schema = self._schema
        if schema is None:
            schema = self._schema = _fast_input_schema(self.parameters[0], docs)
        return schema


def _same_items(mine, theirs) -> bool:
    """Whether two tuples or dicts (or None) hold the very same objects (under the same keys)."""
    if mine is None or theirs is None or len(mine) != len(theirs):
        return False                                # (both None: the caller saw ``is``)
    if type(mine) is dict:
        return type(theirs) is dict and all(map(is_, map(theirs.get, mine, repeat(_NOT_FAST)), mine.values()))
    return all(map(is_, mine, theirs))


_SHAPES: dict = {}                      # code layout -> the last Shape read of that layout
_SHAPES_MAX = 1024


def shape_of(fn, skip: tuple = ()) -> Shape | None:
    """The fast path's reading of ``fn`` as a ``Shape`` (kept for others of its shape when
    its defaults allow, module docstring), or None when the fast path cannot read it."""
    annotations = _plain_annotations(fn)
    if annotations is None:
        return None
    code = fn.__code__
    key = (code.co_varnames, code.co_argcount, code.co_kwonlyargcount, code.co_posonlyargcount,
           code.co_flags & _VARIADIC)
    shape = _SHAPES.get(key)
    if shape is not None and shape.fits(fn, annotations, skip):
        return shape
    parameters = fast_parameters(fn, skip)
    if parameters is None:
        return None
    shape = Shape(fn, annotations, skip, parameters, _fast_return(fn))
    kwdefaults = shape.kwdefaults.values() if shape.kwdefaults else ()
    if (all(type(default) in _SHAREABLE for default in shape.defaults or ())
            and all(type(default) in _SHAREABLE for default in kwdefaults)
            and (key in _SHAPES or len(_SHAPES) < _SHAPES_MAX)):
        _SHAPES[key] = shape
    return shape
