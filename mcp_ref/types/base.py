"""``Model``: the base of every MCP data type in ``mcp_ref.types``.

A model is a plain mutable ``@dataclass`` (its equality and repr are ``Model``'s).
Its wire form is derived from the attribute names, so no class repeats its field list:

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
tag to its class (``CONTENT_TYPES``) is filled by ``content.py`` (and by
``register_content``, for a block of one's own) and read by the decoder
(decoding.py).

Revisions are ``YYYY-MM-DD`` strings, so they compare correctly as strings.

One decoder, one encoder, each reading the class's plan (``_plan``), made once
per class. ``from_dict`` reads per member its wire name, whether it is
required, and the decoder its hint was read into once (decoding.py rule 1), and
carries the path of every member, so an error names where it is. ``to_dict``
reads per field its wire name and revision and passes JSON scalars through
without a call. A plan is a cache of the class's hints, not a second
definition: what a hint accepts is written once, in decoding.py. (The walk of
the hints on every member cost a client about half of its CPU above the
session per ``call_tool``: ``bench/README.md``, issue 17, target 6.)

Spec: basic/index#general-fields (``_meta``); each revision's schema.json.
"""
import dataclasses
from dataclasses import MISSING, dataclass, field
from typing import Any, ClassVar, Optional

from mcp_ref.errors import InvalidParamsError
from mcp_ref.schema.typehints import get_type_hints
from mcp_ref.types.decoding import CONTENT_TYPES, as_is, decoder, exact_type

__all__ = ["Model", "spec_field", "wire_name", "register_content", "CONTENT_TYPES"]


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


_plans: dict = {}        # class -> its plan (``_plan``)


def _plan(cls) -> tuple:
    """What ``to_dict`` and ``_from_wire`` read, made once per class from its fields and
    hints: ``(tag, _check_wire hook or None, known wire names, encode, decode)``, where
    ``encode`` holds per field ``(attribute, wire, keep_none, omit_default, default,
    since)`` and ``decode`` ``(wire, attribute, required, keep_none, exact basic type,
    decoder or None)``. The tag is read here because ``getattr`` with a default is slow
    when the attribute is missing."""
    hints = get_type_hints(cls)
    tag = getattr(cls, "TYPE", None)
    hook = None if getattr(cls._check_wire, "__func__", None) is getattr(Model._check_wire, "__func__") \
        else cls._check_wire
    encode, decode = [], []
    for f in dataclasses.fields(cls):
        if f.name == "extra":
            continue
        wire, tp, keep_none = wire_name(f), hints.get(f.name, Any), bool(f.metadata.get("keep_none"))
        required = (f.default is MISSING and f.default_factory is MISSING) or bool(f.metadata.get("required"))
        encode.append((f.name, wire, keep_none, bool(f.metadata.get("omit_default")),
                       None if f.default is MISSING else f.default, f.metadata.get("since")))
        read = decoder(tp)
        decode.append((wire, f.name, required, keep_none, exact_type(tp), None if read is as_is else read))
    known = frozenset([member[0] for member in decode] + (["type"] if tag is not None else []))
    plan = _plans[cls] = (tag, hook, known, tuple(encode), tuple(decode))
    return plan


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


@dataclass(eq=False, repr=False)
class Model(metaclass=_TakesExtra):
    """Base class: subclasses are ``@dataclass`` classes of wire fields.

    ``SINCE`` is the first revision that knows the type; lists drop items of
    a newer type when encoding for an older revision. ``extra`` holds wire
    members the class does not model (kept on a round trip); pass it as the
    keyword ``extra=`` to any model.
    """

    SINCE: ClassVar[Optional[str]] = None

    # Fast path; it holds cold start <= 3x the floor. Every model is a
    # ``@dataclass(eq=False, repr=False)`` sharing these two methods: generated per class
    # they doubled what a model class costs its import (the server builds its models at
    # registration). They do what the generated ones would: equal when of one class
    # with equal compared fields (``__hash__`` is then None, as for a mutable dataclass);
    # the fields shown as ``Name(field=value, ...)``.
    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return all(getattr(self, f.name) == getattr(other, f.name) for f in dataclasses.fields(self) if f.compare)

    def __repr__(self) -> str:
        shown = ", ".join(f"{f.name}={getattr(self, f.name)!r}" for f in dataclasses.fields(self) if f.repr)
        return f"{type(self).__qualname__}({shown})"

    # Not an __init__ parameter (see _TakesExtra), so subclasses may declare
    # required fields after this defaulted one.
    extra: dict = field(default_factory=dict, repr=False, init=False)

    @classmethod
    def wire_fields(cls) -> dict:
        """``{attribute name: wire name}`` of the modelled fields."""
        return {member[0]: member[1] for member in (_plans.get(cls) or _plan(cls))[3]}

    def to_dict(self, revision: Optional[str] = None) -> dict:
        """The wire object, for ``revision`` when given (see the module docstring)."""
        tag, _, _, fields, _ = _plans.get(type(self)) or _plan(type(self))
        out: dict = {} if tag is None else {"type": tag}
        for name, wire, keep_none, omit_default, default, since in fields:
            value = getattr(self, name)
            # Left out: None (unless it is a value here), a default not sent, a field newer than revision.
            if (value is None and not keep_none) or (omit_default and value == default) \
                    or (since is not None and revision is not None and revision < since):
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
        """The one decoder: check the wire object and its tag, run the class's
        ``_check_wire`` hook, decode each member by its hint (the class's plan, made
        once), keep the unknown members in ``extra``."""
        if not isinstance(data, dict):
            raise InvalidParamsError(f"{path}: expected object")
        tag, hook, known, _, fields = _plans.get(cls) or _plan(cls)
        # A missing tag is tolerated (the caller chose the class); a wrong one is not.
        if tag is not None and "type" in data and data["type"] != tag:
            raise InvalidParamsError(f"{path}.type: expected {tag!r}, got {data['type']!r}")
        if hook is not None:
            hook(data, path)
        kwargs = {}
        for wire, name, required, keep_none, exact, decode in fields:
            value = data.get(wire, MISSING)
            if value is MISSING or (value is None and not keep_none):
                if required:
                    raise InvalidParamsError(f"{path}.{wire}: required field missing")
                continue
            # A member of exactly its basic type, or hinted Any, is taken as it is.
            kwargs[name] = value if type(value) is exact or decode is None else decode(value, f"{path}.{wire}")
        obj = _build(cls, **kwargs)
        if not known.issuperset(data):
            obj.extra = {key: value for key, value in data.items() if key not in known}
        return obj

    @classmethod
    def _has_required(cls, data: dict) -> bool:
        """Whether ``data`` has every required member (to pick among untagged unions)."""
        return all(member[0] in data for member in (_plans.get(cls) or _plan(cls))[4] if member[2])


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
                if not (isinstance(item, Model) and item.SINCE is not None and revision < item.SINCE)]
    if isinstance(value, dict):
        return {key: _encode(item, revision) for key, item in value.items()}
    return value


# ---------------------------------------------------------------------- content registry
def register_content(cls):
    """Class decorator: decode wire blocks whose ``type`` is ``cls.TYPE`` as ``cls``."""
    CONTENT_TYPES[cls.TYPE] = cls
    return cls
