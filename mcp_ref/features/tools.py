"""Tools: registration, argument validation, and turning what a tool function
returns into a ``CallToolResult``.

Spec: server/tools (every revision); server/tools#tool-names and
#error-handling of 2025-11-25; server/tools#structured-content and
#output-schema since 2025-06-18.

Rules:

1. A duplicate name is a ``ValueError``. A name outside the 2025-11-25
   guidance (1 to 128 characters of ``A-Z a-z 0-9 _ - .``) is registered with
   a ``ToolNameWarning`` naming the rule broken: the guidance is a SHOULD.
2. Schemas come from the function's signature unless given; a given schema
   is listed exactly as given (``$schema``, ``$defs``, ``$ref``,
   ``additionalProperties`` kept, nothing added).
3. Arguments are validated against ``inputSchema`` before the function runs,
   with a validator built once per tool. A validation failure, and anything
   the function raises, is a tool execution error (``isError: true`` with the
   message) so a model can correct itself; an unknown tool is -32602.
   (2025-11-25 lists input validation errors under tool execution errors; the
   earlier revisions list "invalid input data" there too.)
4. Results: ``str`` → text; image/audio bytes (or ``types.image()``/``audio()``)
   → base64 image/audio content; content blocks pass through; resource
   contents are embedded; a ``CallToolResult`` is sent as it is. With an
   ``outputSchema`` (from a dict/dataclass/TypedDict return annotation, or
   given), the value becomes ``structuredContent`` plus its JSON as text, and
   it is validated against the schema first (servers MUST conform).
5. Anything else (numbers, lists, ...) is sent as its JSON text.
"""
import inspect
import json
import logging
import re
import types
import typing
import warnings
from typing import Any, Callable, Optional, Union, get_args, get_origin

from .. import signature
from ..errors import InvalidParamsError, MissingDependency, UrlElicitationRequiredError
from ..types import (BlobResourceContents, CallToolResult, EmbeddedResource, Model,
                     TextContent, TextResourceContents, Tool, ToolAnnotations, content_from_dict)
from ..types import audio as audio_content
from ..types import image as image_content
from . import as_icons, as_model, next_serial
from .pagination import NamedRegistry

log = logging.getLogger("mcp_ref.server")

__all__ = ["Tools", "ToolNameWarning", "tool_name_problem", "to_content", "is_content"]

_NAME_CHARS = re.compile(r"[A-Za-z0-9_.\-]*")
# Magic numbers of the binary formats a bare ``bytes`` return may be (else use image()/audio()).
_MAGIC = ((b"\x89PNG\r\n\x1a\n", "image", "image/png"), (b"\xff\xd8\xff", "image", "image/jpeg"),
          (b"GIF87a", "image", "image/gif"), (b"GIF89a", "image", "image/gif"),
          (b"RIFF", "riff", None), (b"ID3", "audio", "audio/mpeg"), (b"OggS", "audio", "audio/ogg"),
          (b"fLaC", "audio", "audio/flac"))


class ToolNameWarning(UserWarning):
    """A tool name outside the 2025-11-25 naming guidance (server/tools#tool-names)."""


def tool_name_problem(name: str) -> Optional[str]:
    """The naming rule ``name`` breaks, or None. Spec 2025-11-25: server/tools#tool-names."""
    if not 1 <= len(name) <= 128:
        return f"tool names SHOULD be between 1 and 128 characters (this one has {len(name)})"
    bad = sorted(set(_NAME_CHARS.sub("", name)))
    if bad:
        return ("tool names SHOULD contain only A-Z, a-z, 0-9, underscore, hyphen and dot "
                f"(not {', '.join(repr(c) for c in bad)})")
    return None


# ---------------------------------------------------------------------- results
def is_content(value: Any) -> bool:
    """A content block object (text, image, audio, resource link, embedded resource, ...)."""
    return isinstance(value, Model) and hasattr(type(value), "TYPE")


def _bytes_block(data: bytes) -> Model:
    for magic, kind, mime in _MAGIC:
        if data.startswith(magic):
            if kind == "riff":                      # RIFF: WAVE audio or WEBP image
                kind, mime = ("audio", "audio/wav") if data[8:12] == b"WAVE" else \
                    ("image", "image/webp") if data[8:12] == b"WEBP" else (None, None)
            if kind == "image":
                return image_content(data, mime)
            if kind == "audio":
                return audio_content(data, mime)
    raise TypeError("a tool returned bytes of an unknown format: return "
                    "mcp_ref.types.image(data, mime_type) or audio(data, mime_type)")


_SCALARS = frozenset((str, int, float, bool))


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
    return [TextContent(text=json.dumps(signature.to_jsonable(value), ensure_ascii=False))]


def error_result(message: str, version: Optional[str]) -> dict:
    return CallToolResult(content=[TextContent(text=message)], is_error=True).to_dict(version)


# ---------------------------------------------------------------------- validation and binding
_warned_no_jsonschema: list = []


def _compile(schema: dict) -> Callable:
    """A checker for ``schema``; without jsonschema, one that checks required keys only
    (so a stdlib-only server still works), with a warning once."""
    try:
        return signature.compile_validator(schema)
    except MissingDependency:
        if not _warned_no_jsonschema:
            _warned_no_jsonschema.append(True)
            log.warning("jsonschema is not installed: tool arguments are only checked for required keys")
        required = tuple(schema.get("required", ()))

        def check(instance) -> Optional[str]:
            missing = [key for key in required if not isinstance(instance, dict) or key not in instance]
            return f"missing required properties: {', '.join(missing)}" if missing else None
        return check


def _needs_conversion(hint) -> bool:
    """Could ``signature.bind_arguments`` turn a schema-valid JSON value of this type into
    something else? (Floats, enums, records, tuples, bytes... do; str, int, bool, lists
    and dicts of them do not.)"""
    while get_origin(hint) is typing.Annotated:
        hint = hint.__origin__
    if hint in (str, int, bool, dict, list, Any, inspect.Parameter.empty, type(None)):
        return False
    origin = get_origin(hint)
    if origin is typing.Literal:
        return False
    if origin in (list, dict, Union, types.UnionType):
        return any(_needs_conversion(arg) for arg in get_args(hint))
    return True


class _Binder:
    """Arguments to keyword arguments. Plain parameters (see ``_needs_conversion``) are
    bound directly, prepared once; anything else goes through ``signature.bind_arguments``,
    which also words the errors."""

    def __init__(self, fn: Callable, inject: list):
        self.fn, self.inject = fn, inject
        self.direct: Optional[frozenset] = None
        self.required: frozenset = frozenset()
        if not (inspect.isfunction(fn) or inspect.ismethod(fn)):
            return
        try:
            hints = typing.get_type_hints(fn, include_extras=True)
            params = inspect.signature(fn).parameters
        except Exception:
            return
        kinds = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
        names = [name for name, p in params.items() if name not in inject]
        if all(params[name].kind in kinds and not _needs_conversion(hints.get(name, Any)) for name in names):
            self.direct = frozenset(names)
            self.required = frozenset(n for n in names if params[n].default is inspect.Parameter.empty)

    def __call__(self, arguments: dict, ctx) -> dict:
        if self.direct is not None and arguments.keys() <= self.direct and self.required <= arguments.keys():
            kwargs = dict(arguments)
            for name in self.inject:
                kwargs[name] = ctx
            return kwargs
        return signature.bind_arguments(self.fn, arguments, inject={name: ctx for name in self.inject})


class _Entry:
    __slots__ = ("tool", "fn", "bind", "check_input", "check_output", "wrap", "serial")

    def __init__(self, tool: Tool, fn: Callable, bind: _Binder, wrap: bool):
        self.tool, self.fn, self.bind, self.wrap = tool, fn, bind, wrap
        self.serial = next_serial()
        self.check_input = _compile(tool.input_schema)
        self.check_output = _compile(tool.output_schema) if tool.output_schema is not None else None


# ---------------------------------------------------------------------- the registry
class Tools(NamedRegistry):
    """The tools a server offers. ``owner`` is the server: its ``page_size`` and
    ``_list_changed(method)`` are used."""

    KIND, NOUN, CHANGED, ITEM = "tools", "tool", "notifications/tools/list_changed", "tool"

    def add(self, fn: Callable, *, name: Optional[str] = None, title: Optional[str] = None,
            description: Optional[str] = None, input_schema: Optional[dict] = None,
            output_schema: Optional[dict] = None, annotations=None, icons: Optional[list] = None,
            meta: Optional[dict] = None, structured_output: Optional[bool] = None) -> Tool:
        """See ``Server.add_tool``."""
        tool_name = name if name is not None else fn.__name__
        if not isinstance(tool_name, str):
            raise TypeError(f"a tool name is a string, not {type(tool_name).__name__}")
        problem = tool_name_problem(tool_name)
        if problem:
            warnings.warn(f"tool {tool_name!r}: {problem} (server/tools#tool-names, 2025-11-25)",
                          ToolNameWarning, stacklevel=3)
        skip = (self.context_class,)
        wrap = False
        if output_schema is None and structured_output is not False:
            output_schema = signature.output_schema(fn)
            if output_schema is None and structured_output:
                output_schema = signature.output_schema(fn, wrap=True)   # {"result": ...}
                wrap = output_schema is not None
        tool = Tool(name=tool_name, title=title,
                    description=description if description is not None else signature.description_of(fn),
                    input_schema=input_schema if input_schema is not None else signature.input_schema(fn, skip=skip),
                    output_schema=output_schema, annotations=as_model(ToolAnnotations, annotations),
                    icons=as_icons(icons), meta=meta)
        entry = _Entry(tool, fn, _Binder(fn, signature.context_params(fn, skip=skip)), wrap)
        self._register(tool_name, entry)
        return tool

    def handle_call(self, ctx, params: dict) -> dict:
        """Spec: server/tools#calling-tools; rules 3 to 5."""
        name = params.get("name")
        if not isinstance(name, str):
            raise InvalidParamsError("tools/call: name must be a string")
        arguments = params.get("arguments")
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, dict):
            raise InvalidParamsError("tools/call: arguments must be an object")
        entry = self._entries.get(name)             # one dict read: atomic, no lock needed
        if entry is None:
            raise InvalidParamsError(f"Unknown tool: {name}", {"name": name})
        version = ctx.protocol_version
        problem = entry.check_input(arguments)
        if problem:
            return error_result(f"Invalid arguments for tool {name}: {problem}", version)
        try:
            value = entry.fn(**entry.bind(arguments, ctx))
        except UrlElicitationRequiredError:
            raise                                   # Spec 2025-11-25: travels as a JSON-RPC error
        except Exception as exc:
            if ctx.cancelled.is_set():
                raise
            log.info("tool %s failed: %s", name, exc, exc_info=True)
            return error_result(str(exc) or type(exc).__name__, version)
        if entry.check_output is None and type(value) in _SCALARS:
            # The common case, built directly: the same dict CallToolResult.to_dict
            # gives, without the dataclass round trip on the hot path (bench/).
            text = value if type(value) is str else json.dumps(value)
            return {"content": [{"type": "text", "text": text}]}
        try:
            return self._result(entry, value).to_dict(version)
        except (TypeError, ValueError) as exc:
            log.warning("tool %s: %s", name, exc)
            return error_result(str(exc), version)

    @staticmethod
    def _result(entry: _Entry, value: Any) -> CallToolResult:
        """Rules 4 and 5. Raises ValueError when structured output breaks the outputSchema."""
        if isinstance(value, CallToolResult):
            return value
        unstructured = is_content(value) or (not entry.wrap and isinstance(value, (str, list, tuple)))
        if entry.check_output is None or unstructured:
            return CallToolResult(content=to_content(value))
        structured = signature.to_jsonable(value)
        if entry.wrap:
            structured = {"result": structured}
        if not isinstance(structured, dict):
            raise ValueError(f"tool {entry.tool.name} has an outputSchema but returned "
                             f"{type(value).__name__}, not an object")
        problem = entry.check_output(structured)
        if problem:
            raise ValueError(f"tool {entry.tool.name} returned output that does not match its "
                             f"outputSchema: {problem}")
        return CallToolResult(content=[TextContent(text=json.dumps(structured, ensure_ascii=False))],
                              structured_content=structured)
