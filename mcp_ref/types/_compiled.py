"""Compiled decoders: what ``Model.from_dict`` runs before the reference decoder.

The reference decoder in ``base`` (``_from_wire``, ``_decode``,
``_decode_union``, ``_decode_tagged``) inspects the type hints of every field
of every object on every call and builds the path of every member for its
error messages. That made decoding a one-line ``CallToolResult`` cost almost
as much as the server's whole handling of the call, on the client's side of
each round trip (``bench/bench_stdio.py`` reports this client-side latency).

Here each class is compiled once, on its first decoding: every field's type
becomes a small function that knows its structure already (model, list of X,
basic check, union members in order). Each function mirrors one branch of the
reference and checks the same things in the same order, but builds no paths:
on any failure it raises ``base._Invalid`` and the caller re-runs the
reference decoder on the same input, which raises the precise
``InvalidParamsError`` (so the reference stays the definition of decoding;
``tests/test_types_fast_decode.py`` holds the two to the same answers).

* A compiled type is a pair ``(plain, fn)``: ``plain`` is a type the value
  need only be an instance of (the str/bool/dict/list basics), else ``fn``
  decodes it; both None means the value is kept as it is.
* Hooks are honoured: a class's own ``_from_wire`` is called as is,
  ``_check_wire`` and ``_has_required`` when overridden.
* The content registry (``CONTENT_TYPES``, the raw content class) is read at
  call time, as in the reference, so classes registered later are seen.
* A class whose hints cannot be compiled gets a decoder that always defers
  to the reference, which then does (or fails) what it always did.
* ``base._fast_decoders`` caches the result per class; threads that compile
  the same class at once build equal decoders and the last one is kept.
* One difference is left on purpose: these decoders use fewer stack frames
  per level of nesting, so an input nested too deeply for the reference
  (``RecursionError`` from about 165 ``tool_result`` blocks inside one another,
  at the default recursion limit) may decode here.

Spec: none of its own; the decoding rules are those of ``base``.
"""
from dataclasses import MISSING
from typing import Any, get_args, get_origin

from ..typehints import UNION_ORIGINS
from .base import _ANY_CONTENT, _BASIC, CONTENT_TYPES, Model, _build, _fast_decoders, _Invalid, _is_model, \
    _raw_content, _specs

# _BASIC entries whose check is one isinstance.
_PLAIN = (str, bool, dict, list)


def compiled_decoder(key: Any, building: frozenset = frozenset()):
    """The decoder of a model class (or of ``_ANY_CONTENT``), cached.
    ``building``: the classes being compiled around this one (for cycles)."""
    decode = _fast_decoders.get(key)
    if decode is None:
        try:
            if key == _ANY_CONTENT:
                decode = _compile_tagged([], building)
            else:
                decode = _compile_model(key, building | {key})
        except Exception:                  # e.g. a hint naming a missing class
            decode = _defer
        _fast_decoders[key] = decode
    return decode


def _defer(value: Any) -> Any:
    raise _Invalid


def _overrides(cls, name: str) -> bool:
    return getattr(cls, name).__func__ is not getattr(Model, name).__func__


def _compile_model(cls, building: frozenset):
    """``Model._from_wire``."""
    if _overrides(cls, "_from_wire"):
        def decode_custom(value, _from_wire=cls._from_wire, _name=cls.__name__):
            return _from_wire(value, _name)
        return decode_custom
    specs = _specs(cls)
    fields = tuple((s.name, s.wire, s.required, s.keep_none) + _compile(s.tp, building) for s in specs)
    tag = getattr(cls, "TYPE", None)
    known = frozenset([s.wire for s in specs] + (["type"] if tag is not None else []))
    hook = cls._check_wire if _overrides(cls, "_check_wire") else None
    name = cls.__name__

    def decode(data):
        if not isinstance(data, dict):
            raise _Invalid
        if tag is not None and "type" in data and data["type"] != tag:
            raise _Invalid
        if hook is not None:
            hook(data, name)               # its errors carry a wrong path: the reference re-runs it
        kwargs = {}
        for attr, wire, required, keep_none, plain, fn in fields:
            value = data.get(wire, MISSING)
            if value is MISSING or (value is None and not keep_none):
                if required:
                    raise _Invalid
                continue
            if plain is not None:
                if not isinstance(value, plain):
                    raise _Invalid
            elif fn is not None:
                value = fn(value)
            kwargs[attr] = value
        obj = _build(cls, **kwargs)
        if not known.issuperset(data):
            obj.extra = {k: v for k, v in data.items() if k not in known}
        return obj
    return decode


def _compile(tp: Any, building: frozenset) -> tuple:
    """``_decode`` for one type, as ``(plain, fn)``."""
    if tp is Any:
        return None, None
    origin = get_origin(tp)
    if origin in UNION_ORIGINS:
        return _compile_union([a for a in get_args(tp) if a is not type(None)], building)
    if origin is list:
        args = get_args(tp)
        return None, _list_of(*_compile(args[0] if args else Any, building))
    if origin is dict:
        args = get_args(tp)
        item = _compile(args[1] if len(args) == 2 else Any, building)
        return None, _dict_of(_function(*item) if item != (None, None) else None)
    if _is_model(tp):
        if tp in building:                 # a class that contains itself: look it up when called
            return None, lambda value: compiled_decoder(tp)(value)
        return None, compiled_decoder(tp, building)
    if tp in _PLAIN:
        return tp, None
    if tp in _BASIC:                       # int, float
        ok = _BASIC[tp][1]

        def decode_basic(value):
            if not ok(value):
                raise _Invalid
            return int(value) if tp is int and isinstance(value, float) else value
        return None, decode_basic
    return None, None


def _function(plain: Any, fn: Any):
    """A compiled type as one function."""
    if plain is not None:
        def check(value):
            if not isinstance(value, plain):
                raise _Invalid
            return value
        return check
    return fn if fn is not None else (lambda value: value)


def _list_of(plain: Any, fn: Any):
    def decode_list(value):
        if not isinstance(value, list):
            raise _Invalid
        if fn is not None:
            return [fn(item) for item in value]
        if plain is not None:
            for item in value:
                if not isinstance(item, plain):
                    raise _Invalid
        # list() would copy a list subclass without its __iter__; the reference iterates.
        return list(value) if type(value) is list else [item for item in value]
    return decode_list


def _dict_of(fn: Any):
    def decode_dict(value):
        if not isinstance(value, dict):
            raise _Invalid
        if fn is not None:
            return {key: fn(item) for key, item in value.items()}
        return {key: item for key, item in value.items()}
    return decode_dict


def _compile_union(members: list, building: frozenset) -> tuple:
    """``_decode_union``: a list to the first list member, an object to the
    models (tagged, or by required members), anything else to the first basic
    (or ``dict[...]``) member that accepts it."""
    if len(members) == 1:
        return _compile(members[0], building)
    if Any in members:
        return None, None
    on_list = None
    for member in members:
        if get_origin(member) is list or member is list:
            on_list = _function(*_compile(member, building))
            break
    models = [m for m in members if _is_model(m)]
    on_dict = None
    if models:
        tagged = any(getattr(m, "TYPE", None) for m in models)
        on_dict = (_compile_tagged if tagged else _compile_untagged)(models, building)
    others = []
    for member in members:
        if member in _BASIC:
            others.append((_BASIC[member][1], _function(*_compile(member, building))))
        elif get_origin(member) is dict:
            others.append((lambda value: isinstance(value, dict), _function(*_compile(member, building))))
    if on_dict is not None and on_list is None and not others:
        return None, on_dict               # models only (content blocks): it checks for an object itself

    def decode_union(value):
        if on_list is not None and isinstance(value, list):
            return on_list(value)
        if on_dict is not None and isinstance(value, dict):
            return on_dict(value)
        for accepts, fn in others:
            if accepts(value):
                return fn(value)
        raise _Invalid
    return None, decode_union


def _compile_untagged(models: list, building: frozenset):
    """The first model whose required members are all present."""
    options = []
    for model in models:
        if _overrides(model, "_has_required"):
            has = model._has_required
        else:
            needed = tuple(s.wire for s in _specs(model) if s.required)
            has = lambda value, needed=needed: all(wire in value for wire in needed)   # noqa: E731
        options.append((has, _compile(model, building)[1]))

    def decode_untagged(value):
        if not isinstance(value, dict):
            raise _Invalid
        for has, fn in options:
            if has(value):
                return fn(value)
        raise _Invalid
    return decode_untagged


def _compile_tagged(models: list, building: frozenset):
    """``_decode_tagged``: the first of ``models`` with the tag, else the registry."""
    by_tag: dict = {}
    for model in models:
        tag = getattr(model, "TYPE", None)
        if isinstance(tag, str) and tag not in by_tag:
            by_tag[tag] = _compile(model, building)[1]

    def decode_tagged(value):
        if not isinstance(value, dict):
            raise _Invalid
        tag = value.get("type")
        if not isinstance(tag, str):
            raise _Invalid
        fn = by_tag.get(tag)
        if fn is not None:
            return fn(value)
        if tag in CONTENT_TYPES:
            cls = CONTENT_TYPES[tag]
        elif _raw_content:
            cls = _raw_content[0]
        else:
            raise _Invalid
        return (_fast_decoders.get(cls) or compiled_decoder(cls))(value)
    return decode_tagged
