"""Arguments in: ``convert`` turns one JSON value of a ``tools/call`` (or
``prompts/get``) argument into its annotated Python type; ``as_is`` says which
types need no turning. server/tools.py's ``Binder`` binds a whole call with them.
Spec: server/tools#calling-tools, server/prompts#getting-a-prompt.
"""
from __future__ import annotations

import base64
import binascii
import enum
from typing import Any, get_args, get_origin

from mcp_ref.errors import InvalidParamsError
from mcp_ref.schema import typehints
from mcp_ref.schema.schemas import _NONE, _record_fields
from mcp_ref.schema.typehints import (_LISTS, _MAPPINGS, _SETS, _is_class, _is_record,
                                      is_union, _is_unknown, _split_annotated)

__all__ = ["convert", "as_is"]


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


def convert(value, tp, path: str):
    """JSON ``value`` as the annotated type: records, enums, tuples, sets,
    base64 bytes, int to float, recursively through lists, dicts and unions."""
    tp, _ = _split_annotated(tp)
    origin, args = get_origin(tp), get_args(tp)
    if is_union(tp):                                # the first member the JSON value fits
        members = [arg for arg in args if arg is not _NONE and _fits(value, arg)]
        return convert(value, members[0], path) if members and value is not None else value
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
        return {key: convert(v, item, f"{path}.{key}") for key, v in value.items()}
    if not isinstance(value, list):
        return value
    if origin is tuple or origin in _LISTS or origin in _SETS:
        fixed = origin is tuple and args and args[-1] is not Ellipsis     # tuple[A, B] rather than tuple[T, ...]
        if fixed and len(value) != len(args):
            raise _bad(path, f"expected {len(args)} items, got {len(value)}")
        items = [convert(v, args[i] if fixed else args[0] if args else Any, f"{path}[{i}]")
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
        return {key: convert(v, fields[key][1], f"{path}.{key}") if key in fields else v
                for key, v in value.items()}
    converted = {key: convert(v, fields[key][1], f"{path}.{key}") for key, v in value.items() if key in fields}
    try:
        return cls(**converted)                     # unknown keys of a dataclass are ignored
    except (TypeError, ValueError) as exc:
        raise _bad(path, str(exc)) from None


def as_is(hint: Any) -> bool:
    """Whether ``convert`` gives any JSON value of this type back as it is (str, int,
    bool, dict, list and unannotated parameters; not a float, which an int becomes)."""
    hint, _ = _split_annotated(hint)
    return hint in (str, int, bool, dict, list) or _is_unknown(hint)
