"""Python types as JSON Schema: what schema/signature.py lists for a parameter, a
field or a return value (rules 2 and 3 there). Spec: server/tools#tool
(JSON Schema 2020-12). No I/O.
"""
from __future__ import annotations

import contextlib
import copy
import dataclasses
import enum
import json
from typing import Any, Literal, get_args, get_origin

from mcp_ref.schema import typehints
from mcp_ref.schema.docstrings import parse_docstring
from mcp_ref.schema.jsonable import to_jsonable
from mcp_ref.schema.typehints import (_LISTS, _MAPPINGS, _SETS, _is_class, _is_record, is_union, _is_unknown,
                                      _split_annotated)

__all__ = ["Field", "NO_DEFAULT", "schema_for_type"]

_NONE = type(None)
_JSON_TYPES = {bool: "boolean", int: "integer", float: "number", str: "string", _NONE: "null"}


NO_DEFAULT: Any = dataclasses.MISSING       # a parameter or field without a default (dataclasses' sentinel)


def _object_schema(properties: dict, required: list, description: str | None = None) -> dict:
    schema = {"type": "object", "properties": properties, "required": required, "description": description}
    return {key: value for key, value in schema.items() if value or key == "properties"}


class Field:
    """``Annotated[T, Field(description=..., **keywords)]``: a description and JSON Schema keywords."""

    def __init__(self, description: str | None = None, **schema):
        self.description, self.schema = description, schema


def _record_fields(cls: type) -> tuple:
    """A dataclass's or TypedDict's ``(description, [(name, hint, required, default, description)])``."""
    hints = typehints.get_type_hints(cls, {cls.__name__: cls})
    doc = cls.__doc__
    if doc and dataclasses.is_dataclass(cls) and doc.startswith(cls.__name__ + "("):
        doc = None                                  # the signature that dataclasses writes itself
    text, docs = parse_docstring(doc)
    if typehints.is_typeddict(cls):
        required = cls.__required_keys__  # type: ignore[attr-defined]  # every TypedDict class has it
        return text, [(name, hint, name in required, NO_DEFAULT, docs.get(name))
                      for name, hint in hints.items()]
    return text, [(f.name, hints.get(f.name, Any), f.default is f.default_factory is NO_DEFAULT, f.default,
                   f.metadata.get("description") or docs.get(f.name)) for f in dataclasses.fields(cls) if f.init]


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


class _SchemaBuilder:
    """Builds the schemas of one document, collecting ``$defs`` for recursive classes."""

    def __init__(self):
        self.defs, self.names = {}, {}              # $defs; class -> its name there
        self.stack, self.recursive = [], set()      # classes being built; recursive classes

    def schema(self, tp) -> dict:
        tp, metadata = _split_annotated(tp)
        return _with_metadata(self._bare(tp), metadata)

    def property(self, hint, default=NO_DEFAULT, description: str | None = None) -> dict:
        """A parameter's or field's schema: ``Annotated`` metadata wins over the docstring."""
        hint, metadata = _split_annotated(hint)
        schema = self.schema(hint)
        if description:
            schema["description"] = description
        if default is not NO_DEFAULT:
            with contextlib.suppress(TypeError, ValueError):    # not JSON: not listed (rule 2 of signature.py)
                schema["default"] = json.loads(json.dumps(to_jsonable(default), allow_nan=False))
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
        if type(tp) is type and tp in _JSON_TYPES:  # bool, int, float, str, None: exactly
            return {"type": _JSON_TYPES[tp]}
        if _is_unknown(tp):
            return {}
        tp = _NONE if tp is None else tp
        origin, args = get_origin(tp), get_args(tp)
        if origin is Literal:
            return _enum_schema(list(args))
        if is_union(tp):
            return {"anyOf": [self.schema(arg) for arg in args]}
        if _is_record(tp):
            return self._record(tp)
        if _is_class(tp):
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
            schema: dict[str, Any] = {"type": "array"}
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
        self.stack.append(cls)                      # (a builder that raised is dropped: no finally)
        text, fields = _record_fields(cls)
        properties = {name: self.property(hint, default, description) for name, hint, _, default, description in fields}
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
