"""What a tool returned, as a ``tools/call`` result (rules 4 and 5 of tools.py).

``tool_result`` is the one place a value becomes a result; ``error_result`` is
a tool failure (rule 4 of server.py: a result with ``isError``, never a
JSON-RPC error); ``to_content`` turns strings, bytes, content blocks and
lists of them into content blocks. Spec: server/tools#tool-result,
server/tools#structured-content, server/tools#error-handling.
"""
from __future__ import annotations

import json
import sys

from mcp_ref.schema import jsonable
from mcp_ref.errors import get_logger

TYPE_CHECKING = False
if TYPE_CHECKING:          # names for annotations only
    from typing import Any

    from mcp_ref.types import CallToolResult
    from mcp_ref.server.tools import _Entry

log = get_logger("mcp_ref.server")

__all__ = ["tool_result", "error_result", "to_content", "is_content"]

# Magic numbers of the binary formats a bare ``bytes`` return may be (else use image()/audio()).
_MAGIC = ((b"\x89PNG\r\n\x1a\n", "image", "image/png"), (b"\xff\xd8\xff", "image", "image/jpeg"),
          (b"GIF87a", "image", "image/gif"), (b"GIF89a", "image", "image/gif"),
          (b"RIFF", "riff", None), (b"ID3", "audio", "audio/mpeg"), (b"OggS", "audio", "audio/ogg"),
          (b"fLaC", "audio", "audio/flac"))
# mcp_ref.types loads on first use; until it has, no value can be one of its objects.
_TYPES_BASE = __package__.rpartition(".")[0] + ".types.base"
# CallToolResult.structuredContent: since 2025-06-18 (types/tools.py); older revisions omit it.
_STRUCTURED_SINCE = "2025-06-18"
# json.dumps(value, ensure_ascii=False), without building an encoder per call.
_json_text = json.JSONEncoder(ensure_ascii=False).encode


# ---------------------------------------------------------------------- results
def _is_model(value: Any) -> bool:
    base = sys.modules.get(_TYPES_BASE)
    return base is not None and isinstance(value, base.Model)


def is_content(value: Any) -> bool:
    """A content block object (text, image, audio, resource link, embedded resource, ...)."""
    return _is_model(value) and hasattr(type(value), "TYPE")


def _bytes_block(data: bytes):
    from mcp_ref.types import audio, image
    for magic, kind, mime in _MAGIC:
        if data.startswith(magic):
            if kind == "riff":                      # RIFF: WAVE audio or WEBP image
                kind, mime = ("audio", "audio/wav") if data[8:12] == b"WAVE" else \
                    ("image", "image/webp") if data[8:12] == b"WEBP" else (None, None)
            if kind == "image":
                return image(data, mime)
            if kind == "audio":
                return audio(data, mime)
    raise TypeError("a tool returned bytes of an unknown format: return "
                    "mcp_ref.types.image(data, mime_type) or audio(data, mime_type)")


_SCALARS = frozenset((str, int, float, bool))


def to_content(value: Any) -> list:
    """What a tool returned, as a list of content blocks (rules 4 and 5)."""
    from mcp_ref.types import (BlobResourceContents, EmbeddedResource, TextContent, TextResourceContents,
                               content_from_dict)
    if value is None:
        return []
    if isinstance(value, str):
        return [TextContent(text=value)]
    if isinstance(value, (bytes, bytearray)):
        return [_bytes_block(bytes(value))]
    if is_content(value):
        return [value]
    if isinstance(value, (TextResourceContents, BlobResourceContents)):
        return [EmbeddedResource(resource=value)]
    if isinstance(value, dict) and isinstance(value.get("type"), str):
        return [content_from_dict(value)]
    if isinstance(value, (list, tuple)) and value and all(
            isinstance(v, (str, bytes, bytearray, TextResourceContents, BlobResourceContents)) or is_content(v)
            or (isinstance(v, dict) and isinstance(v.get("type"), str)) for v in value):
        return [block for item in value for block in to_content(item)]
    return [TextContent(text=_json_text(jsonable.to_jsonable(value)))]


def _scalar_text(value) -> str:
    """``json.dumps(value)`` of an int, float or bool (a str is its own text), without
    the encoder's overhead: json writes exactly these reprs."""
    kind = type(value)
    if kind is str:
        return value
    if kind is bool:
        return "true" if value else "false"
    if kind is int or value - value == 0.0:         # a finite float
        return repr(value)
    return json.dumps(value)                        # NaN, Infinity, -Infinity


def error_result(message: str, version: str | None) -> dict:
    """``CallToolResult(content=[TextContent(text=message)], is_error=True).to_dict(version)``:
    the same on every revision."""
    return {"content": [{"type": "text", "text": message}], "isError": True}


def tool_result(entry: _Entry, value: Any, version: str | None) -> dict:
    """What a tool returned, as the wire ``CallToolResult`` (rules 4 and 5): the one
    place a value becomes a result. Raises TypeError or ValueError (the caller answers
    them as an ``isError`` result) when the value cannot be content or breaks the
    outputSchema.

    Three cases, in order:

    * a scalar of a tool without outputSchema: one text block;
    * a value of a tool with an outputSchema (not content, not a model):
      ``structuredContent`` and its JSON text;
    * anything else (content blocks, bytes, a ``CallToolResult`` the tool built,
      lists of those): through ``CallToolResult`` and its ``to_dict``.

    The first two are written as wire dicts, the same ones ``CallToolResult.to_dict``
    gives (tests/test_signature_fast_path.py compares them), and are the only path for those
    values: building the dataclass and encoding it costs about 4.7 µs, some 20 % of
    a server's whole ``tools/call`` (bench/bench_stdio.py), and would load
    ``mcp_ref.types`` for the common tool.
    """
    check_output = entry.check_output
    if check_output is None:
        if type(value) in _SCALARS:
            return {"content": [{"type": "text", "text": _scalar_text(value)}]}
    elif not _is_model(value) and (entry.wrap or not isinstance(value, (str, list, tuple))):
        structured = _structured(entry, value)              # rule 4
        result = {"content": [{"type": "text", "text": _json_text(structured)}]}
        if version is None or version >= _STRUCTURED_SINCE:
            result["structuredContent"] = structured
        return result
    from mcp_ref.types import CallToolResult, TextContent
    if isinstance(value, CallToolResult):
        _check_result(entry, value)
        return value.to_dict(version)
    unstructured = is_content(value) or (not entry.wrap and isinstance(value, (str, list, tuple)))
    if check_output is None or unstructured:
        return CallToolResult(content=to_content(value)).to_dict(version)
    structured = _structured(entry, value)                  # rule 4: a model value
    return CallToolResult(content=[TextContent(text=_json_text(structured))],
                          structured_content=structured).to_dict(version)


def _structured(entry: _Entry, value: Any) -> dict:
    """Rule 4: the value as ``structuredContent``; ValueError when it breaks the outputSchema."""
    structured = jsonable.to_jsonable(value)
    if entry.wrap:
        structured = {"result": structured}
    if not isinstance(structured, dict):
        raise ValueError(f"tool {entry.name} has an outputSchema but returned "
                         f"{type(value).__name__}, not an object")
    _check_structured(entry, structured)
    return structured


def _check_structured(entry: _Entry, structured: dict) -> None:
    """ValueError when ``structured`` breaks the tool's outputSchema (rule 4)."""
    problem = entry.check_output(structured)
    if problem:
        raise ValueError(f"tool {entry.name} returned output that does not match its "
                         f"outputSchema: {problem}")


def _check_result(entry: _Entry, result: CallToolResult) -> None:
    """Rule 4 for a ``CallToolResult`` the tool built: with an outputSchema, a result
    without ``isError`` must carry conforming ``structuredContent`` (Spec:
    server/tools#output-schema: servers MUST provide structured results that conform)."""
    if entry.check_output is None or result.is_error:
        return
    structured = result.structured_content
    if structured is None:
        raise ValueError(f"tool {entry.name} has an outputSchema but returned a CallToolResult "
                         f"without structuredContent")
    if not isinstance(structured, dict):
        raise ValueError(f"tool {entry.name} has an outputSchema but its structuredContent is "
                         f"{type(structured).__name__}, not an object")
    _check_structured(entry, structured)
