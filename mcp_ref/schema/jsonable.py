"""Python values as JSON data: ``to_jsonable`` (dataclasses to objects, enums to
their values, tuples and sets to arrays, bytes to base64 text, recursively).

Used for what tools, prompts and resources return (server/tool_results.py,
server/resources.py), for log data, and for schema defaults (schema/signature.py).
It imports nothing on the way: a value can only be a dataclass or an Enum if
its module is loaded already. Spec: server/tools#structured-content.
"""
from __future__ import annotations

import sys
from collections import abc

__all__ = ["to_jsonable"]

_PLAIN = frozenset((str, int, float, bool, type(None)))


def to_jsonable(value):
    """``value`` as JSON data: dataclasses to dicts, enums to their values,
    tuples and sets to lists, bytes to base64 text, recursively."""
    kind = type(value)
    if kind in _PLAIN:
        return value
    enum_class = getattr(sys.modules.get("enum"), "Enum", None)    # not loaded: no value is an Enum
    if kind is not dict and kind is not list:      # (the usual results are neither dataclass nor Enum)
        if not isinstance(value, type) and hasattr(kind, "__dataclass_fields__"):
            import dataclasses                      # dataclasses.is_dataclass, without importing it first
            return {f.name: to_jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
        if enum_class is not None and isinstance(value, enum_class):
            return to_jsonable(value.value)
    if isinstance(value, abc.Mapping):
        return {to_jsonable(key) if enum_class is not None and isinstance(key, enum_class) else str(key):
                to_jsonable(v) for key, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [to_jsonable(v) for v in value]
    if isinstance(value, (bytes, bytearray)):
        import binascii                             # base64.b64encode without the base64 module
        return binascii.b2a_base64(value, newline=False).decode("ascii")
    return value
