"""Arguments in, results out: ``bind_arguments`` turns ``tools/call`` (and
``prompts/get``) arguments into the annotated Python types, ``to_jsonable``
turns what a function returned back into JSON data.

The plain types need nothing (the fast path: only an int becomes a float);
anything else goes through the type hints, read by schema/signature.py's full path
(``_full``: ``inspect`` and ``typing`` are bound there on first use by
``_load``). Spec: server/tools#calling-tools, server/tools#structured-content.
"""
from __future__ import annotations


from mcp_ref.schema import signature as _full
from mcp_ref.schema import signature_fast
from mcp_ref.errors import InvalidParamsError
from mcp_ref.schema.signature import (_hints, _is_class, _is_record, _is_union, _is_unknown, _load, _parameters,
                                      _record_fields, _split_annotated, _target)
from mcp_ref.schema.signature_fast import _NONE, NO_DEFAULT

__all__ = ["bind_arguments"]


def _bad(path: str, problem: str) -> InvalidParamsError:
    argument = path.partition(".")[0].partition("[")[0]
    return InvalidParamsError(f"invalid argument {path}: {problem}", {"argument": argument, "path": path})


def _fits(value, tp) -> bool:
    """Could JSON ``value`` be meant as a ``tp``? (Chooses the member of a union.)"""
    tp, _ = _split_annotated(tp)
    kind = _full.get_origin(tp) or tp
    if _is_record(tp) or kind in _full._MAPPINGS:
        return isinstance(value, dict)
    if kind is tuple or kind in _full._LISTS or kind in _full._SETS:
        return isinstance(value, list)
    if _is_class(tp) and issubclass(tp, _full.enum.Enum):
        return any(member.value == value for member in tp)
    if tp in (float, bytes, bytearray):
        return isinstance(value, (int, float) if tp is float else str)
    return not _is_class(tp) or isinstance(value, tp)


def _convert(value, tp, path: str):
    """JSON ``value`` as the annotated type: records, enums, tuples, sets,
    base64 bytes, int to float, recursively through lists, dicts and unions."""
    tp, _ = _split_annotated(tp)
    origin, args = _full.get_origin(tp), _full.get_args(tp)
    if _is_union(tp):                               # the first member the JSON value fits
        members = [arg for arg in args if arg is not _NONE and _fits(value, arg)]
        return _convert(value, members[0], path) if members and value is not None else value
    if value is None or _is_unknown(tp):
        return value
    if _is_class(tp):
        if issubclass(tp, _full.enum.Enum):
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
    if isinstance(value, dict) and origin in _full._MAPPINGS:
        item = args[1] if len(args) == 2 else _full.Any
        return {key: _convert(v, item, f"{path}.{key}") for key, v in value.items()}
    if not isinstance(value, list):
        return value
    if origin is tuple or origin in _full._LISTS or origin in _full._SETS:
        fixed = origin is tuple and args and args[-1] is not Ellipsis     # tuple[A, B] rather than tuple[T, ...]
        if fixed and len(value) != len(args):
            raise _bad(path, f"expected {len(args)} items, got {len(value)}")
        items = [_convert(v, args[i] if fixed else args[0] if args else _full.Any, f"{path}[{i}]")
                 for i, v in enumerate(value)]
        return (frozenset if origin is frozenset else set if origin in _full._SETS
                else tuple if origin is tuple else list)(items)
    return value


def _to_record(value, cls, path: str):
    typed_dict = _full.typehints.is_typeddict(cls)
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
    fast = signature_fast.fast_parameters(fn, inject=inject)
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
            return _convert(value, hints.get(name if name in by_name else var_keyword, _full.Any), name)
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
