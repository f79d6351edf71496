"""The form schema of elicitation: the subset check, defaults, validation of answers.

Rules:

1. A form's ``requestedSchema`` is a flat object whose properties are
   primitives: string (``minLength``, ``maxLength``, ``pattern``, ``format``
   of email/uri/date/date-time), number or integer (``minimum``, ``maximum``),
   boolean, and the enums (untitled ``enum``; titled ``oneOf: [{const,
   title}]``; legacy ``enum`` + ``enumNames``; multi-select arrays with
   ``items.enum`` or ``items.anyOf: [{const, title}]``, ``minItems``,
   ``maxItems``). Every one may carry ``title``, ``description`` and a
   ``default`` of its own type. ``check_requested_schema`` raises
   ``InvalidElicitationSchema`` (a ``ValueError``) for anything else.
   Spec: client/elicitation#requested-schema (2025-06-18, 2025-11-25).
2. Titled enums and multi-select arrays exist from 2025-11-25: checking a
   schema for an older revision that uses them raises
   ``CapabilityNotSupported``.
3. ``fill_defaults`` adds every missing property that has a ``default``
   (SEP-1034); ``content_problem`` says why content does not match: a flat
   object naming only the schema's properties, required ones present, each
   value of its property's type, enum, bounds, length, pattern and format
   (checked here with the standard library), then ``jsonschema`` when it is
   installed. Spec: client/elicitation#form-mode-security ("clients SHOULD
   validate all responses", "servers SHOULD validate received data").

This module does no I/O. Spec: client/elicitation.
"""
import datetime
import math
import re
from typing import Any, Optional
from urllib.parse import urlsplit

from mcp_ref.protocol import lifecycle
from mcp_ref.errors import CapabilityNotSupported

__all__ = ["FORMATS", "InvalidElicitationSchema", "InvalidElicitationContent", "property_kind",
           "check_requested_schema", "fill_defaults", "content_problem"]

TITLED_SINCE = "2025-11-25"
FORMATS = ("email", "uri", "date", "date-time")
_COMMON = {"type", "title", "description", "default"}
# Keys each kind of property may carry (rule 1).
_ALLOWED = {
    "string": _COMMON | {"minLength", "maxLength", "pattern", "format"},
    "number": _COMMON | {"minimum", "maximum"},
    "boolean": _COMMON,
    "enum": _COMMON | {"enum", "enumNames"},
    "titled_enum": _COMMON | {"oneOf"},
    "multi_enum": _COMMON | {"items", "minItems", "maxItems"},
}
_KINDS = {"number": "number", "integer": "number", "boolean": "boolean", "array": "multi_enum"}


class InvalidElicitationSchema(ValueError):
    """A ``requestedSchema`` outside the subset of rule 1."""


class InvalidElicitationContent(ValueError):
    """Accepted content that does not match the ``requestedSchema`` (rule 3)."""


# ---------------------------------------------------------------------- the schema subset (rule 1)
def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _is_count(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _is_regex(value) -> bool:
    try:
        re.compile(value)
    except (re.error, TypeError):
        return False
    return True


def _is_strings(values) -> bool:
    return isinstance(values, list) and bool(values) and all(isinstance(v, str) for v in values)


def _is_options(values) -> bool:
    """``[{const, title}, ...]``, both strings."""
    return isinstance(values, list) and bool(values) and all(
        isinstance(o, dict) and set(o) <= {"const", "title"} and isinstance(o.get("const"), str)
        and isinstance(o.get("title"), str) for o in values)


# What each keyword's value must be: (test, what it must be, for the error).
_KEYWORDS = {
    **dict.fromkeys(("title", "description"), (lambda v: isinstance(v, str), "a string")),
    **dict.fromkeys(("minLength", "maxLength", "minItems", "maxItems"), (_is_count, "a non-negative integer")),
    **dict.fromkeys(("minimum", "maximum"), (_is_number, "a number")),
    "format": (FORMATS.__contains__, f"one of {list(FORMATS)}"),
    "pattern": (_is_regex, "a regular expression"),
    **dict.fromkeys(("enum", "enumNames"), (_is_strings, "a non-empty list of strings")),
    **dict.fromkeys(("oneOf", "anyOf"), (_is_options, 'a non-empty list of {"const": str, "title": str} objects')),
}


def _check_keywords(schema: dict, keys, where: str) -> None:
    for key in sorted(set(keys) & set(schema) & set(_KEYWORDS)):
        test, what = _KEYWORDS[key]
        if not test(schema[key]):
            raise InvalidElicitationSchema(f"{where}: {key} {schema[key]!r} is not allowed: {key} must be {what}")


def property_kind(prop: dict) -> str:
    """Which kind of rule 1 a property schema is; raises ``InvalidElicitationSchema``."""
    if not isinstance(prop, dict):
        raise InvalidElicitationSchema(f"a property schema is an object, not {prop!r}")
    kind = prop.get("type")
    if kind == "string":
        return "titled_enum" if "oneOf" in prop else "enum" if "enum" in prop else "string"
    if kind in _KINDS:
        return _KINDS[kind]
    raise InvalidElicitationSchema(f"property type {kind!r} is not allowed: use string, number, integer, "
                                   "boolean, or an array of enum strings (client/elicitation#requested-schema)")


def _check_property(name: str, prop: dict, revision: str, strict: bool) -> None:
    where = f"property {name!r}"
    kind = property_kind(prop)
    if strict:
        extra = sorted(set(prop) - _ALLOWED[kind])
        if extra:
            raise InvalidElicitationSchema(f"{where}: keywords {extra} are outside the elicitation subset")
    _check_keywords(prop, _ALLOWED[kind], where)
    if kind == "enum" and len(prop.get("enumNames", prop["enum"])) != len(prop["enum"]):
        raise InvalidElicitationSchema(f"{where}: enumNames must name every enum value, in order")
    if kind == "multi_enum":
        items = prop.get("items")
        if not (isinstance(items, dict) and ("enum" in items and items.get("type", "string") == "string"
                                             and set(items) <= {"type", "enum"}
                                             or "anyOf" in items and set(items) <= {"anyOf", "type"})):
            raise InvalidElicitationSchema(f"{where}: an array must be a multi-select enum, with items "
                                           "{\"type\": \"string\", \"enum\": [...]} or {\"anyOf\": [{const, title}]}")
        _check_keywords(items, ("enum", "anyOf"), f"{where} items")
    if kind in ("titled_enum", "multi_enum") and not lifecycle.at_least(revision, TITLED_SINCE):
        raise CapabilityNotSupported(f"{where}: titled and multi-select enums need protocol revision "
                                     f"{TITLED_SINCE}; this session speaks {revision}")
    if "default" in prop:
        problem = _value_problem(prop["default"], prop, kind)
        if problem:
            raise InvalidElicitationSchema(f"{where}: default {prop['default']!r} {problem}")


def check_requested_schema(schema: Any, revision: Optional[str] = None, *, strict: bool = True) -> dict:
    """Return ``schema`` when it is inside the form subset (rule 1) for ``revision``.

    ``strict`` (the server, before sending) refuses keywords outside the
    subset; the client checks with ``strict=False`` and tolerates extra
    annotations another implementation may add.

    Raises:
        InvalidElicitationSchema: the schema is outside the subset.
        CapabilityNotSupported: it uses a shape ``revision`` does not know (rule 2).
    """
    revision = revision or lifecycle.LATEST_REVISION
    if not isinstance(schema, dict) or schema.get("type") != "object":
        raise InvalidElicitationSchema("requestedSchema must be an object schema with \"type\": \"object\"")
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        raise InvalidElicitationSchema("requestedSchema needs \"properties\", an object of primitive schemas")
    if strict:
        extra = sorted(set(schema) - {"type", "properties", "required", "$schema", "title", "description"})
        if extra:
            raise InvalidElicitationSchema(f"requestedSchema: keywords {extra} are outside the elicitation "
                                           "subset (a flat object of primitive properties)")
    required = schema.get("required", [])
    if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
        raise InvalidElicitationSchema("requestedSchema: required must be a list of property names")
    missing = [r for r in required if r not in properties]
    if missing:
        raise InvalidElicitationSchema(f"requestedSchema: required names unknown properties {missing}")
    for name, prop in properties.items():
        _check_property(name, prop, revision, strict)
    return schema


# ---------------------------------------------------------------------- answers (rule 3)
def fill_defaults(schema: dict, content: Optional[dict]) -> dict:
    """A copy of ``content`` with every missing property that has a ``default`` filled in (SEP-1034)."""
    filled = dict(content or {})
    for name, prop in (schema.get("properties") or {}).items():
        if name not in filled and isinstance(prop, dict) and "default" in prop:
            default = prop["default"]
            filled[name] = list(default) if isinstance(default, list) else default
    return filled


_EMAIL = re.compile(r"[^@\s]+@[^@\s]+\.[^@\s]+")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_DATE_TIME = re.compile(r"(\d{4}-\d{2}-\d{2})[Tt](\d{2}:\d{2}:\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})")
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*")


def _format_ok(fmt: str, value: str) -> bool:
    """The four formats of rule 1, checked with the standard library (RFC 3339 dates)."""
    try:
        if fmt == "email":
            return bool(_EMAIL.fullmatch(value))
        if fmt == "date":
            return bool(_DATE.fullmatch(value)) and bool(datetime.date.fromisoformat(value))
        if fmt == "date-time":
            match = _DATE_TIME.fullmatch(value)
            return match is not None and bool(datetime.date.fromisoformat(match.group(1))) and \
                bool(datetime.time.fromisoformat(match.group(2)))
        if fmt == "uri":
            return bool(_SCHEME.fullmatch(urlsplit(value).scheme)) and not any(c.isspace() for c in value)
    except ValueError:
        return False
    return True


def _outside(size, prop: dict, low: str, high: str) -> bool:
    return size < prop.get(low, -math.inf) or size > prop.get(high, math.inf)


def _value_problem(value: Any, prop: dict, kind: str) -> Optional[str]:
    """Why ``value`` does not match one property (the stdlib check); ``None`` when it does."""
    if kind == "boolean":
        return None if isinstance(value, bool) else "is not a boolean"
    if kind == "number":
        if not _is_number(value) or (prop["type"] == "integer" and not float(value).is_integer()):
            return f"is not {'an integer' if prop['type'] == 'integer' else 'a number'}"
        return "is out of range" if _outside(value, prop, "minimum", "maximum") else None
    if kind == "multi_enum":
        items = prop["items"]
        allowed = items["enum"] if "enum" in items else [o["const"] for o in items["anyOf"]]
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            return "is not a list of strings"
        outside = [v for v in value if v not in allowed]
        if outside:
            return f"has values {outside} that are not among {allowed}"
        return "has the wrong number of items" if _outside(len(value), prop, "minItems", "maxItems") else None
    if not isinstance(value, str):
        return "is not a string"
    allowed = prop["enum"] if kind == "enum" else [o["const"] for o in prop.get("oneOf", ())]
    if kind != "string" and value not in allowed:
        return f"is not one of {allowed}"
    if _outside(len(value), prop, "minLength", "maxLength"):
        return "has the wrong length"
    if "pattern" in prop and not re.search(prop["pattern"], value):
        return f"does not match the pattern {prop['pattern']!r}"
    if "format" in prop and not _format_ok(prop["format"], value):
        return f"is not a valid {prop['format']}"
    return None


def content_problem(schema: dict, content: Any) -> Optional[str]:
    """Why ``content`` does not match ``schema`` (rule 3), or ``None`` when it does.

    The stdlib subset check always runs (it also knows ``enumNames`` and the
    titled shapes); ``jsonschema``, when installed, adds formats and anything
    the subset check does not cover.
    """
    if not isinstance(content, dict):
        return "content must be an object"
    properties = schema.get("properties") or {}
    unknown = sorted(set(content) - set(properties))
    if unknown:
        return f"properties {unknown} are not in the requested schema"
    missing = [name for name in schema.get("required", []) if name not in content]
    if missing:
        return f"required properties {missing} are missing"
    for name, value in content.items():
        try:
            problem = _value_problem(value, properties[name], property_kind(properties[name]))
        except InvalidElicitationSchema as exc:
            return str(exc)
        if problem:
            return f"{name}: {value!r} {problem}"
    try:
        import jsonschema                   # type: ignore[import-untyped]  # optional; its stubs are not required
    except ImportError:
        return None
    strict = dict(schema, additionalProperties=False)
    strict.pop("$schema", None)
    validator = jsonschema.Draft202012Validator(strict, format_checker=jsonschema.FormatChecker())
    error = jsonschema.exceptions.best_match(validator.iter_errors(content))
    if error is None:
        return None
    where = "/".join(str(p) for p in error.absolute_path)
    return f"{where}: {error.message}" if where else error.message
