"""What a tool returned, as a ``tools/call`` result (rules 4 and 5 of tools.py).

``tool_result`` is the one place a value becomes a result; ``error_result`` is
a tool failure (rule 4 of server.py: a result with ``isError``, never a
JSON-RPC error); ``to_content`` turns strings, bytes, content blocks and
lists of them into content blocks. Spec: server/tools#tool-result,
server/tools#structured-content, server/tools#error-handling.
"""
from __future__ import annotations

import json
from typing import Any, Callable

from mcp_ref.schema import jsonable
from mcp_ref.types import (BlobResourceContents, CallToolResult, ContentBlock, EmbeddedResource, Model, TextContent,
                           TextResourceContents, audio, content_from_dict, image)

__all__ = ["tool_result", "error_result", "to_content", "is_content"]

# Magic numbers of the binary formats a bare ``bytes`` return may be (else use image()/audio()),
# and the RIFF forms, told apart by the four bytes after the chunk size.
_MAGIC = ((b"\x89PNG\r\n\x1a\n", "image/png"), (b"\xff\xd8\xff", "image/jpeg"), (b"GIF87a", "image/gif"),
          (b"GIF89a", "image/gif"), (b"ID3", "audio/mpeg"), (b"OggS", "audio/ogg"), (b"fLaC", "audio/flac"))
_RIFF = {b"WAVE": "audio/wav", b"WEBP": "image/webp"}
# json.dumps(value, ensure_ascii=False), without building an encoder per call.
_json_text = json.JSONEncoder(ensure_ascii=False).encode


# ---------------------------------------------------------------------- results
def is_content(value: Any) -> bool:
    """A content block object (text, image, audio, resource link, embedded resource, ...)."""
    return isinstance(value, Model) and hasattr(type(value), "TYPE")


def _bytes_block(data: bytes) -> ContentBlock:
    if data.startswith(b"RIFF"):
        mime = _RIFF.get(data[8:12])
    else:
        mime = next((mime for magic, mime in _MAGIC if data.startswith(magic)), None)
    if mime is None:
        raise TypeError("a tool returned bytes of an unknown format: return "
                        "mcp_ref.types.image(data, mime_type) or audio(data, mime_type)")
    return image(data, mime) if mime.startswith("image/") else audio(data, mime)


def to_content(value: Any) -> list:
    """What a tool returned, as a list of content blocks (rules 4 and 5)."""
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


def error_result(message: str, version: str | None) -> dict:
    """A tool failure: ``CallToolResult`` with the message and ``isError``."""
    return CallToolResult(content=[TextContent(text=message)], is_error=True).to_dict(version)


def tool_result(value: Any, version: str | None, *, name: str, wrap: bool,
                check_output: Callable[[Any], str | None] | None) -> dict:
    """What tool ``name`` returned, as the wire ``CallToolResult`` (rules 4 and 5): the
    one place a value becomes a result. ``check_output``: the outputSchema's check (None
    without one); ``wrap``: the value goes under ``{"result": ...}``. Raises TypeError or
    ValueError (the caller answers them as an ``isError`` result) when the value cannot be
    content or breaks the outputSchema."""
    if isinstance(value, CallToolResult):
        # Rule 4 for a result the tool built: with an outputSchema, one without ``isError`` must
        # carry conforming ``structuredContent`` (Spec: server/tools#output-schema: MUST).
        structured = value.structured_content
        if check_output is not None and not value.is_error:
            if structured is None:
                raise ValueError(f"tool {name} has an outputSchema but returned a CallToolResult "
                                 f"without structuredContent")
            _conforming(name, structured, check_output, "its structuredContent is", structured)
        return value.to_dict(version)
    if check_output is None or is_content(value) or (not wrap and isinstance(value, (str, list, tuple))):
        return CallToolResult(content=to_content(value)).to_dict(version)
    structured = jsonable.to_jsonable(value)      # rule 4: the value as structuredContent
    if wrap:
        structured = {"result": structured}
    _conforming(name, structured, check_output, "returned", value)
    return CallToolResult(content=[TextContent(text=_json_text(structured))],
                          structured_content=structured).to_dict(version)


def _conforming(name: str, structured: Any, check_output: Callable[[Any], str | None], gave: str, of: Any) -> None:
    """Rule 4: ValueError unless ``structured`` is an object that matches the outputSchema
    (``gave`` and ``of``: what the tool gave, for the message)."""
    if not isinstance(structured, dict):
        raise ValueError(f"tool {name} has an outputSchema but {gave} {type(of).__name__}, not an object")
    problem = check_output(structured)
    if problem:
        raise ValueError(f"tool {name} returned output that does not match its outputSchema: {problem}")
