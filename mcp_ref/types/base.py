"""``Model``: the base of every MCP data type in ``mcp_ref.types``.

A model is a plain mutable ``@dataclass``. Its wire form is derived from the
attribute names, so no class repeats its field list:

* ``snake_case`` attribute -> ``camelCase`` wire name (``input_schema`` ->
  ``inputSchema``); ``meta`` <-> ``_meta``; ``spec_field(wire=...)`` names an
  irregular one.
* ``to_dict(revision=None)`` leaves out ``None`` fields, encodes nested models
  (alone, in lists, in dicts) and merges ``extra`` (the unknown wire fields a
  decoded object carried) back in, so nothing a peer sent is lost on a round
  trip. With a ``revision`` it also leaves out what that revision's schema
  does not have: fields marked ``since`` a newer revision, and list items
  whose class ``SINCE`` is newer (e.g. audio content for 2024-11-05).
* ``from_dict(data)`` checks required fields and basic JSON types loosely,
  decodes nested models by the type annotations (``Optional[X]``,
  ``list[X]``, ``dict[str, X]``, unions) and keeps unknown keys in ``extra``.
  Malformed input raises ``InvalidParamsError`` naming the path, e.g.
  ``"Tool.inputSchema: expected object"``.

Content blocks form a tagged union on ``"type"``; the registry that maps a
tag to its class lives here (``register_content``) because decoding needs it,
and ``content.py`` fills it.

Revisions are ``YYYY-MM-DD`` strings, so they compare correctly as strings.

One decoder. ``_from_wire`` / ``_decode`` below walk the type hints and
carry the path of every member, so an error names where it is. There is no
faster second decoder beside it: a decoder compiled per class saved about
8 µs on a one-line ``CallToolResult``, under 10 % of a client's
``tools/call`` round trip (``bench/bench_stdio.py``, client-side latency),
which is not worth a second definition of what decoding means. ``to_dict``
reads a per-class tuple of field facts and passes JSON scalars through
without a call (the only encoder).

Spec: basic/index#general-fields (``_meta``); each revision's schema.json.
"""
import dataclasses
from dataclasses import MISSING, dataclass, field
from typing import Any, ClassVar, Optional, get_args, get_origin

from ..errors import InvalidParamsError
from ..typehints import UNION_ORIGINS, get_type_hints

__all__ = ["Model", "spec_field", "wire_name", "register_content", "register_raw_content",
           "decode_content", "CONTENT_TYPES"]

# Wire "type" tag -> content block class. Filled by content.py.
CONTENT_TYPES: dict = {}
# The class that holds a block whose tag nobody registered (content.RawContent).
_raw_content: list = []


def spec_field(default: Any = None, *, since: Optional[str] = None, wire: Optional[str] = None,
               required: bool = False, keep_none: bool = False, omit_default: bool = False,
               default_factory: Any = MISSING) -> Any:
    """A dataclass field with wire metadata.

    since: the first revision whose schema has the field; older ones omit it.
    wire: the wire name, when it is not the mechanical camelCase.
    required: ``from_dict`` insists on it even though it has a default.
    keep_none: ``None`` is a real value (JSON null) and is sent.
    omit_default: the default value is not sent (e.g. ``isError: false``).
    """
    metadata = {"since": since, "wire": wire, "required": required,
                "keep_none": keep_none, "omit_default": omit_default}
    if default_factory is not MISSING:
        return field(default_factory=default_factory, metadata=metadata)
    return field(default=default, metadata=metadata)


def wire_name(f: dataclasses.Field) -> str:
    """The JSON member name of a dataclass field."""
    if f.metadata.get("wire"):
        return f.metadata["wire"]
    if f.name == "meta":
        return "_meta"
    head, *rest = f.name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


@dataclass(frozen=True)
class _Spec:
    """What to_dict/from_dict need to know about one field."""
    name: str
    wire: str
    tp: Any
    required: bool
    since: Optional[str]
    keep_none: bool
    omit_default: bool
    default: Any


_specs_cache: dict = {}


def _specs(cls) -> list:
    """The per-class tuple of field facts ``to_dict`` and ``_from_wire`` read, made
    once per class: the attribute, the wire name, the hint, the revision it
    arrived in, whether it is required and whether None is written."""
    specs = _specs_cache.get(cls)
    if specs is None:
        hints = get_type_hints(cls)
        specs = []
        for f in dataclasses.fields(cls):
            if f.name == "extra":
                continue
            no_default = f.default is MISSING and f.default_factory is MISSING
            specs.append(_Spec(f.name, wire_name(f), hints.get(f.name, Any),
                               no_default or bool(f.metadata.get("required")), f.metadata.get("since"),
                               bool(f.metadata.get("keep_none")), bool(f.metadata.get("omit_default")),
                               None if f.default is MISSING else f.default))
        _specs_cache[cls] = specs
    return specs


_encode_plans: dict = {}


def _encode_plan(cls) -> tuple:
    """What ``to_dict`` reads: the class's tag (``getattr`` with a default is
    slow when the attribute is missing) and each field's facts as a tuple."""
    plan = (getattr(cls, "TYPE", None),
            tuple((s.name, s.wire, s.keep_none, s.omit_default, s.default, s.since) for s in _specs(cls)))
    _encode_plans[cls] = plan
    return plan


def _older(revision: Optional[str], since: Optional[str]) -> bool:
    """True when ``revision`` predates ``since`` (no revision means the newest)."""
    return revision is not None and since is not None and revision < since


class _TakesExtra(type):
    """Lets every model be built with ``extra=`` (``Tool(name="t", extra={...})``).

    ``extra`` has a default, and a defaulted field before a subclass's required
    ones is allowed only when it stays out of the generated ``__init__``
    (``field(kw_only=True)`` would do it, but needs Python 3.10; 3.9 is
    supported). So the field is ``init=False`` and the keyword is taken here.
    One consequence: ``dataclasses.replace`` copies only ``__init__`` fields, so
    its copy starts with an empty ``extra`` (pass ``extra=`` to the class instead).
    """

    def __call__(cls, *args, extra: Optional[dict] = None, **kwargs):
        obj = super().__call__(*args, **kwargs)
        if extra:
            obj.extra = dict(extra)
        return obj


# Builds a model without the keyword handling above (the decoders set ``extra`` themselves).
_build = type.__call__


@dataclass
class Model(metaclass=_TakesExtra):
    """Base class: subclasses are ``@dataclass`` classes of wire fields.

    ``SINCE`` is the first revision that knows the type; lists drop items of
    a newer type when encoding for an older revision. ``extra`` holds wire
    members the class does not model (kept on a round trip); pass it as the
    keyword ``extra=`` to any model.
    """

    SINCE: ClassVar[Optional[str]] = None

    # Not an __init__ parameter (see _TakesExtra), so subclasses may declare
    # required fields after this defaulted one.
    extra: dict = field(default_factory=dict, repr=False, init=False)

    @classmethod
    def wire_fields(cls) -> dict:
        """``{attribute name: wire name}`` of the modelled fields."""
        return {s.name: s.wire for s in _specs(cls)}

    def to_dict(self, revision: Optional[str] = None) -> dict:
        """The wire object, for ``revision`` when given (see the module docstring)."""
        tag, fields = _encode_plans.get(type(self)) or _encode_plan(type(self))
        out: dict = {} if tag is None else {"type": tag}
        for name, wire, keep_none, omit_default, default, since in fields:
            value = getattr(self, name)
            if value is None and not keep_none:
                continue
            if omit_default and value == default:
                continue
            if since is not None and revision is not None and revision < since:
                continue
            out[wire] = value if type(value) in _SCALARS else _encode(value, revision)
        for key, value in self.extra.items():
            # A modelled field wins over a stale unknown member of the same name.
            if key not in out:
                out[key] = _encode(value, revision)
        return out

    @classmethod
    def from_dict(cls, data: Any):
        """Decode a wire object; raises ``InvalidParamsError`` when malformed."""
        return cls._from_wire(data, cls.__name__)

    @classmethod
    def _check_wire(cls, data: dict, path: str) -> None:
        """Hook for rules a field list cannot say (e.g. fields required by mode)."""

    @classmethod
    def _from_wire(cls, data: Any, path: str):
        """The one decoder: check the wire object, decode each member by its hint, keep
        the unknown members in ``extra``, then run the class's ``_check_wire`` hook."""
        if not isinstance(data, dict):
            raise InvalidParamsError(f"{path}: expected object")
        known = set()
        tag = getattr(cls, "TYPE", None)
        if tag is not None:
            known.add("type")
            # A missing tag is tolerated (the caller chose the class); a wrong one is not.
            if "type" in data and data["type"] != tag:
                raise InvalidParamsError(f"{path}.type: expected {tag!r}, got {data['type']!r}")
        cls._check_wire(data, path)
        kwargs = {}
        for spec in _specs(cls):
            known.add(spec.wire)
            value = data.get(spec.wire, MISSING)
            if value is MISSING or (value is None and not spec.keep_none):
                if spec.required:
                    raise InvalidParamsError(f"{path}.{spec.wire}: required field missing")
                continue
            kwargs[spec.name] = _decode(value, spec.tp, f"{path}.{spec.wire}")
        obj = _build(cls, **kwargs)
        obj.extra = {key: value for key, value in data.items() if key not in known}
        return obj

    @classmethod
    def _has_required(cls, data: dict) -> bool:
        """Whether ``data`` has every required member (to pick among untagged unions)."""
        return all(s.wire in data for s in _specs(cls) if s.required)


# ---------------------------------------------------------------------- encoding
# JSON scalars encode as themselves (exact types: a subclass may be anything).
_SCALARS = frozenset({str, int, float, bool, type(None)})


def _encode(value: Any, revision: Optional[str]) -> Any:
    """A value inside a model as wire data: models by ``to_dict(revision)`` (list
    items newer than ``revision`` left out), lists and dicts recursively,
    everything else as it is."""
    if type(value) in _SCALARS:
        return value
    if isinstance(value, Model):
        return value.to_dict(revision)
    if isinstance(value, (list, tuple)):
        if revision is None:               # nothing is too new for the newest revision
            return [_encode(item, None) for item in value]
        return [_encode(item, revision) for item in value
                if not (isinstance(item, Model) and _older(revision, type(item).SINCE))]
    if isinstance(value, dict):
        return {key: _encode(item, revision) for key, item in value.items()}
    return value


# ---------------------------------------------------------------------- decoding
def _is_int(value: Any) -> bool:
    """A JSON integer: an int that is not a bool (JSON has no such overlap)."""
    return (isinstance(value, int) and not isinstance(value, bool)) or \
        (isinstance(value, float) and value.is_integer())


_BASIC = {
    str: ("string", lambda v: isinstance(v, str)),
    bool: ("boolean", lambda v: isinstance(v, bool)),
    int: ("integer", _is_int),
    float: ("number", lambda v: isinstance(v, (int, float)) and not isinstance(v, bool)),
    dict: ("object", lambda v: isinstance(v, dict)),
    list: ("array", lambda v: isinstance(v, list)),
}


def _type_label(tp: Any) -> str:
    """The words an error uses for the type a member should have ("string", "object")."""
    if tp in _BASIC:
        return _BASIC[tp][0]
    if get_origin(tp) is list:
        return "array"
    if get_origin(tp) is dict:
        return "object"
    return getattr(tp, "__name__", str(tp))


def _is_model(tp: Any) -> bool:
    """A ``Model`` subclass (a hint to decode as an object), not an instance."""
    return isinstance(tp, type) and issubclass(tp, Model)


def _decode(value: Any, tp: Any, path: str) -> Any:
    """One member of a wire object as the hinted type, or InvalidParamsError naming
    ``path``: basic JSON types checked loosely, models decoded, lists and dicts
    item by item, unions in order."""
    if tp is Any:
        return value
    origin = get_origin(tp)
    if origin in UNION_ORIGINS:
        return _decode_union(value, [a for a in get_args(tp) if a is not type(None)], path)
    if origin is list:
        if not isinstance(value, list):
            raise InvalidParamsError(f"{path}: expected array")
        args = get_args(tp)
        item_tp = args[0] if args else Any
        return [_decode(item, item_tp, f"{path}[{i}]") for i, item in enumerate(value)]
    if origin is dict:
        if not isinstance(value, dict):
            raise InvalidParamsError(f"{path}: expected object")
        args = get_args(tp)
        item_tp = args[1] if len(args) == 2 else Any
        return {key: _decode(item, item_tp, f"{path}.{key}") for key, item in value.items()}
    if _is_model(tp):
        return tp._from_wire(value, path)
    if tp in _BASIC:
        label, ok = _BASIC[tp]
        if not ok(value):
            raise InvalidParamsError(f"{path}: expected {label}")
        if tp is int and isinstance(value, float):
            return int(value)
    return value


def _decode_union(value: Any, members: list, path: str) -> Any:
    """The first member of the union the value fits: tagged content by its ``type``,
    models by their required fields, basic types by their JSON kind."""
    if len(members) == 1:
        return _decode(value, members[0], path)
    if Any in members:
        return value
    if isinstance(value, list):
        for member in members:
            if get_origin(member) is list or member is list:
                return _decode(value, member, path)
    models = [m for m in members if _is_model(m)]
    if isinstance(value, dict) and models:
        if any(getattr(m, "TYPE", None) for m in models):
            return _decode_tagged(value, models, path)
        # Untagged alternatives (e.g. text or blob resource contents): the first
        # whose required members are all present.
        for model in models:
            if model._has_required(value):
                return model._from_wire(value, path)
        raise InvalidParamsError(f"{path}: expected one of {', '.join(m.__name__ for m in models)}")
    for member in members:
        if member in _BASIC and _BASIC[member][1](value):
            return _decode(value, member, path)
        if get_origin(member) is dict and isinstance(value, dict):
            return _decode(value, member, path)
    raise InvalidParamsError(f"{path}: expected {' or '.join(_type_label(m) for m in members)}")


def _decode_tagged(value: dict, models: list, path: str) -> Any:
    """A content block by its ``type`` tag (the registry ``register_content`` fills);
    an unknown tag is kept whole as raw content, so nothing a peer sent is lost."""
    tag = value.get("type")
    if not isinstance(tag, str):
        raise InvalidParamsError(f"{path}.type: expected string")
    for model in models:
        if getattr(model, "TYPE", None) == tag:
            return model._from_wire(value, path)
    # A known block in a place that does not list it is still decoded to its
    # class; checking where a type may appear is the caller's business.
    if tag in CONTENT_TYPES:
        return CONTENT_TYPES[tag]._from_wire(value, path)
    if _raw_content:
        return _raw_content[0]._from_wire(value, path)
    raise InvalidParamsError(f"{path}.type: unknown type {tag!r}")


# ---------------------------------------------------------------------- content registry
def register_content(cls):
    """Class decorator: decode wire blocks whose ``type`` is ``cls.TYPE`` as ``cls``."""
    CONTENT_TYPES[cls.TYPE] = cls
    return cls


def register_raw_content(cls):
    """Class decorator: the holder of blocks of an unregistered ``type``."""
    _raw_content[:] = [cls]
    return cls


def decode_content(data: Any, path: str = "content") -> Model:
    """One content block from its wire object, by its ``type``."""
    if not isinstance(data, dict):
        raise InvalidParamsError(f"{path}: expected object")
    return _decode_tagged(data, [], path)
