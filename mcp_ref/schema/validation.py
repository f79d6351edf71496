"""JSON Schema checks of tool arguments and structured results.

Spec: server/tools#tool (``inputSchema``, ``outputSchema``: JSON Schema 2020-12
unless ``$schema`` names another draft), server/tools#output-schema.

Rules:

1. ``compile_validator(schema)`` prepares a check once; ``check(instance)``
   gives one message such as ``"b: 'x' is not of type 'integer'"`` (path:
   message) or None. ``validate`` is the one-shot form.
2. Remote ``$ref`` are never fetched (the registry holds the metaschemas only).
3. The flat schemas generated for most tools (an object of properties of one
   JSON type each) are checked in plain Python with the same messages as
   jsonschema's. This is a feature, not a speed path: a stdlib-only server
   (no ``jsonschema`` installed) still checks its tools' arguments for real.
   Everything else needs the optional ``jsonschema`` package, imported on first
   use (``MissingDependency`` names it otherwise); ``argument_checker`` then
   falls back to checking the required keys, with a warning once.
4. Dialects: a schema without ``$schema`` is 2020-12; a ``$schema`` naming a
   draft ``jsonschema`` knows (draft 3 to 2020-12) selects that draft; any other
   ``$schema`` makes every check answer "the JSON Schema dialect ... is not
   supported" rather than guess. Spec: basic/index#json-schema-usage ("handle
   unsupported dialects gracefully by returning an appropriate error").

No I/O.
"""
from __future__ import annotations

from typing import Any, Callable

from mcp_ref.errors import MissingDependency, get_logger, require

__all__ = ["validate", "compile_validator", "argument_checker", "flat_types"]

log = get_logger("mcp_ref.server")
_warned_no_jsonschema: list = []


def validate(instance, schema: dict) -> str | None:
    """One message such as ``"b: 'x' is not of type 'integer'"`` (path: message),
    or None when ``instance`` is valid. 2020-12 unless ``$schema`` names another
    draft; remote ``$ref`` are never fetched. MissingDependency without
    ``jsonschema`` (>= 4.18)."""
    return compile_validator(schema)(instance)


def compile_validator(schema: dict) -> Callable[[Any], str | None]:
    """``validate`` for one schema, prepared once: returns ``check(instance)``
    giving the same message or None. Keep it for schemas used on every call
    (a tool's inputSchema); building a jsonschema validator costs more than
    running it. MissingDependency without ``jsonschema`` (>= 4.18)."""
    fast = _flat_checker(schema)
    if fast is not None:
        return fast
    jsonschema = require("jsonschema", "jsonschema", "JSON Schema validation")
    specifications = require("jsonschema_specifications", "jsonschema", "JSON Schema validation")
    dialect = schema.get("$schema", None) if isinstance(schema, dict) else None
    if dialect is not None and (not isinstance(dialect, str)
                                or jsonschema.validators.validator_for(schema, default=None) is None):
        unsupported = (f"the JSON Schema dialect {dialect!r} is not supported (supported: draft 3, 4, 6, 7, "
                       f"2019-09 and 2020-12, the default)")
        return lambda instance: unsupported                 # rule 4
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    validator = cls(schema, registry=specifications.REGISTRY)     # the metaschemas, and no retrieval
    best_match = jsonschema.exceptions.best_match

    def check(instance) -> str | None:
        try:
            if next(validator.iter_errors(instance), None) is None:
                return None                         # the common case: stop at "no error"
            error = best_match(validator.iter_errors(instance))
        except Exception as exc:                    # an unresolvable $ref, a broken schema
            return f"cannot validate against the schema: {exc}"
        where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path).lstrip(".")
        return f"{where}: {error.message}" if where else error.message
    return check


def argument_checker(schema: dict) -> Callable[[Any], str | None]:
    """``compile_validator(schema)``; without jsonschema, for a schema that is not flat
    (rule 3), a check of the required keys only, with a warning once: a stdlib-only
    server still runs its tools."""
    try:
        return compile_validator(schema)
    except MissingDependency:
        if not _warned_no_jsonschema:
            _warned_no_jsonschema.append(True)
            log.warning("jsonschema is not installed: tool arguments are only checked for required keys")
        required = tuple(schema.get("required", ()))

        def check(instance: Any) -> str | None:
            missing = [key for key in required if not isinstance(instance, dict) or key not in instance]
            return f"missing required properties: {', '.join(missing)}" if missing else None
        return check


# Rule 3: the flat schemas generated for most tools (an object of properties that
# are one JSON type each, or anything), checked in plain Python without jsonschema.
_FLAT_OBJECT_KEYS = frozenset(("type", "properties", "required", "title", "description"))
_FLAT_PROPERTY_KEYS = frozenset(("type", "title", "description", "default"))
_JSON_TYPES = {"string": (str,), "boolean": (bool,), "integer": (int,), "number": (int, float),
               "array": (list,), "object": (dict,), "null": (type(None),)}


def _is_of(kind: str, value: Any) -> bool:
    """Whether ``value`` is of JSON type ``kind``, as jsonschema says: a bool is no number,
    and a float without a fraction is an integer."""
    if isinstance(value, bool):
        return kind == "boolean"
    return isinstance(value, _JSON_TYPES[kind]) or (kind == "integer" and isinstance(value, float)
                                                    and value.is_integer())


def _flat(schema: Any) -> tuple | None:
    """``(required, {name: JSON type})`` of a flat object schema (rule 3), else None."""
    if not isinstance(schema, dict) or schema.get("type") != "object" or not set(schema) <= _FLAT_OBJECT_KEYS:
        return None
    properties = schema.get("properties", {})
    required = schema.get("required", [])
    if not isinstance(properties, dict) or not isinstance(required, list):
        return None
    kinds = {}
    for name, prop in properties.items():
        if not isinstance(prop, dict) or not set(prop) <= _FLAT_PROPERTY_KEYS:
            return None
        kind = prop.get("type")
        if kind is None:
            continue                                # {}: any value
        if not isinstance(kind, str) or kind not in _JSON_TYPES:
            return None
        kinds[name] = kind
    return tuple(required), kinds


def flat_types(schema: Any) -> tuple | None:
    """``(required names, {name: the exact Python types of its JSON type})`` of a flat
    object schema (rule 3), else None: arguments that have the required names and
    values of exactly those types meet the schema (server/tools.py rule 9)."""
    flat = _flat(schema)
    if flat is None:
        return None
    return frozenset(flat[0]), {name: frozenset(_JSON_TYPES[kind]) for name, kind in flat[1].items()}


def _flat_checker(schema: dict) -> Callable[[Any], str | None] | None:
    """A plain checker for a flat object schema (see above), else None."""
    flat = _flat(schema)
    if flat is None:
        return None
    required, kinds = flat

    def check(instance) -> str | None:
        if not isinstance(instance, dict):
            return f"{instance!r} is not of type 'object'"
        for key in required:
            if key not in instance:
                return f"{key!r} is a required property"
        for key, value in instance.items():
            kind = kinds.get(key)
            if kind is not None and not _is_of(kind, value):
                return f"{key}: {value!r} is not of type {kind!r}"
        return None
    return check
