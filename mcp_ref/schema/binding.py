"""Arguments in: ``bind_arguments`` turns ``tools/call`` (and ``prompts/get``)
arguments into the annotated Python types; ``Binder`` is the same, with the
function's parameters and type hints read once (a tool's, at registration).
Spec: server/tools#calling-tools, server/prompts#getting-a-prompt.
"""
from __future__ import annotations

import base64
import binascii
import enum
from inspect import Parameter
from typing import Any, Callable, get_args, get_origin

from mcp_ref.errors import InvalidParamsError
from mcp_ref.schema import typehints
from mcp_ref.schema.signature import (_LISTS, _MAPPINGS, _NONE, _SETS, NO_DEFAULT, Reading, _is_class, _is_record,
                                      _is_union, _is_unknown, _record_fields, _split_annotated)

__all__ = ["bind_arguments", "Binder"]


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


def _as_is(hint: Any) -> bool:
    """Whether ``_convert`` gives any JSON value of this type back as it is (str, int,
    bool, dict, list and unannotated parameters; not a float, which an int becomes)."""
    hint, _ = _split_annotated(hint)
    return hint in (str, int, bool, dict, list) or _is_unknown(hint)


class Binder:
    """``fn``'s parameters and type hints, read once (``fn`` may be its ``Reading``);
    calling it binds one call's arguments (``bind_arguments``). ``inject``: the names of
    the parameters the caller supplies (the context)."""

    def __init__(self, fn: Callable | Reading, inject: tuple = ()):
        read = fn if isinstance(fn, Reading) else Reading(fn)
        params = read.params
        self.hints = read.hints
        self.inject = frozenset(inject)
        self.by_name = {name: default for name, kind, default in params
                        if kind is Parameter.POSITIONAL_OR_KEYWORD or kind is Parameter.KEYWORD_ONLY}
        self.var_keyword = next((name for name, kind, _ in params if kind is Parameter.VAR_KEYWORD), None)
        # Decided once, not per call: the injected parameters, the required ones, and those
        # whose JSON value is already the Python value (``_as_is``: not converted).
        self.injected = tuple(name for name in self.by_name if name in self.inject)
        self.required = tuple(name for name, default in self.by_name.items() if default is NO_DEFAULT)
        self.as_is = frozenset(name for name in self.by_name
                               if name not in self.inject and _as_is(self.hints.get(name, Any)))

    def __call__(self, arguments: dict | None, context: Any = None) -> dict:
        """Keyword arguments for ``fn(**kwargs)``; ``context`` fills the injected names.

        Values become the annotated types (see ``_convert``). Unknown names (unless
        ``fn`` takes ``**kwargs``; an injected name is unknown to a client), missing
        required parameters and values that do not convert raise InvalidParamsError
        naming them (also in ``data``)."""
        arguments = {} if arguments is None else arguments
        if not isinstance(arguments, dict):
            raise InvalidParamsError("arguments must be an object")
        by_name, var_keyword, hints, as_is = self.by_name, self.var_keyword, self.hints, self.as_is
        kwargs = {name: context for name in self.injected}
        unknown = []
        for name, value in arguments.items():
            if name in as_is:
                kwargs[name] = value
            elif name in self.inject or (name not in by_name and var_keyword is None):
                unknown.append(name)
            else:
                kwargs[name] = _convert(value, hints.get(name if name in by_name else var_keyword, Any), name)
        missing = [name for name in self.required if name not in kwargs]
        for problem, names in (("unknown", unknown), ("missing required", missing)) if unknown or missing else ():
            if names:
                raise InvalidParamsError(f"{problem} argument{'s' if len(names) > 1 else ''}: "
                                         + ", ".join(repr(name) for name in names), {problem.split()[0]: names})
        return kwargs


def bind_arguments(fn: Callable, arguments: dict | None, *, inject: dict | None = None) -> dict:
    """Keyword arguments for ``fn(**kwargs)`` from a ``tools/call`` ``arguments`` object:
    ``Binder(fn)`` for one call. ``inject`` gives values for parameters the caller
    supplies (the context; names that are not parameters are ignored)."""
    inject = inject or {}
    kwargs = Binder(fn, tuple(inject))(arguments)
    kwargs.update((name, value) for name, value in inject.items() if name in kwargs)
    return kwargs
