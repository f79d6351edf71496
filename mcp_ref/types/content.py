"""Content blocks: what tool results, prompt messages and sampling messages carry.

Each block class has a ``TYPE`` (the wire ``"type"``, implied by the class and
written by ``to_dict()``; ``block.type`` reads it, as on the wire) and a
``SINCE`` (the first revision that knows it);
the registry ``CONTENT_TYPES`` maps a tag to its class and
``content_from_dict`` decodes one block. A block of a type nobody registered
decodes to ``RawContent``, which re-encodes it unchanged, so a newer peer's
content passes through untouched.

* text, image: every revision; ``AudioContent`` since 2025-03-26;
  ``ResourceLink`` since 2025-06-18; ``ToolUseContent`` and
  ``ToolResultContent`` (sampling with tools) since 2025-11-25.
* ``EmbeddedResource`` wraps ``TextResourceContents`` or
  ``BlobResourceContents`` (``resource_contents_from_dict`` picks by the
  member present).
* ``Annotations`` is a top-level definition since 2025-03-26 (inline on
  content in 2024-11-05); ``lastModified`` since 2025-06-18.

Spec: server/tools#tool-result, server/resources#resource-contents,
client/sampling#tools-in-sampling; schema: ContentBlock, Annotations.
"""
import base64
from dataclasses import dataclass, field
from typing import Any, ClassVar, Optional, Union

from mcp_ref.errors import InvalidParamsError
from mcp_ref.types.base import CONTENT_TYPES, Model, _encode, spec_field
from mcp_ref.types.decoding import decode_tagged, raw_content
from mcp_ref.types.initialize import Icon

__all__ = ["Annotations", "TextContent", "ImageContent", "AudioContent", "ResourceLink", "EmbeddedResource",
           "TextResourceContents", "BlobResourceContents", "ResourceContents", "ToolUseContent",
           "ToolResultContent", "RawContent", "ContentBlock", "SamplingContent", "CONTENT_TYPES",
           "content_from_dict", "resource_contents_from_dict", "image", "audio"]

# _meta on content and resource contents arrived with 2025-06-18.
META_SINCE = "2025-06-18"


@dataclass(eq=False, repr=False)
class Annotations(Model):
    """Hints for the client: who the data is for, how important, when modified."""
    SINCE = "2025-03-26"
    audience: Optional[list[str]] = None          # "user" / "assistant"
    priority: Optional[float] = None              # 0 (optional) .. 1 (effectively required)
    last_modified: Optional[str] = spec_field(since="2025-06-18")   # ISO 8601


class _Block:
    """What every content block has: ``type``, its wire name (``"text"``, ``"image"``, ...),
    so ``block.type == "text"`` reads as the JSON does."""
    TYPE: ClassVar[str]                     # set by each block class

    @property
    def type(self) -> str:
        return self.TYPE


@dataclass(eq=False, repr=False)
class TextContent(_Block, Model):
    """Text for the model or the user. Spec: server/tools#text-content."""
    TYPE = "text"
    text: str
    annotations: Optional[Annotations] = None
    meta: Optional[dict] = spec_field(since=META_SINCE)


@dataclass(eq=False, repr=False)
class ImageContent(_Block, Model):
    """``data`` is base64; see ``image()`` to build one from bytes."""
    TYPE = "image"
    data: str
    mime_type: str
    annotations: Optional[Annotations] = None
    meta: Optional[dict] = spec_field(since=META_SINCE)


@dataclass(eq=False, repr=False)
class AudioContent(_Block, Model):
    """``data`` is base64; see ``audio()`` to build one from bytes."""
    TYPE = "audio"
    SINCE = "2025-03-26"
    data: str
    mime_type: str
    annotations: Optional[Annotations] = None
    meta: Optional[dict] = spec_field(since=META_SINCE)


@dataclass(eq=False, repr=False)
class ResourceLink(_Block, Model):
    """A pointer to a resource the client may read (not its contents)."""
    TYPE = "resource_link"
    SINCE = "2025-06-18"
    uri: str
    name: str
    title: Optional[str] = None
    description: Optional[str] = None
    mime_type: Optional[str] = None
    size: Optional[int] = None
    annotations: Optional[Annotations] = None
    icons: Optional[list[Icon]] = spec_field(since="2025-11-25")
    meta: Optional[dict] = None


@dataclass(eq=False, repr=False)
class TextResourceContents(Model):
    """The contents of a text resource: its URI, MIME type and text."""
    uri: str
    text: str
    mime_type: Optional[str] = None
    meta: Optional[dict] = spec_field(since=META_SINCE)


@dataclass(eq=False, repr=False)
class BlobResourceContents(Model):
    """``blob`` is base64."""
    uri: str
    blob: str
    mime_type: Optional[str] = None
    meta: Optional[dict] = spec_field(since=META_SINCE)


ResourceContents = Union[TextResourceContents, BlobResourceContents]


@dataclass(eq=False, repr=False)
class EmbeddedResource(_Block, Model):
    """A resource's contents inside a result, instead of a link to it."""
    TYPE = "resource"
    resource: ResourceContents
    annotations: Optional[Annotations] = None
    meta: Optional[dict] = spec_field(since=META_SINCE)


@dataclass(eq=False, repr=False)
class ToolUseContent(_Block, Model):
    """The model asks to call a tool (sampling with tools). No ``annotations``:
    the schema gives this block none."""
    TYPE = "tool_use"
    SINCE = "2025-11-25"
    id: str
    name: str
    input: dict = spec_field(default_factory=dict, required=True)
    meta: Optional[dict] = None


@dataclass(eq=False, repr=False)
class RawContent(Model):
    """A block of a ``type`` this library does not know, kept verbatim."""
    TYPE: ClassVar[Optional[str]] = None          # present (content-like) but not a tag
    data: dict = field(default_factory=dict)

    @property
    def type(self) -> Any:
        return self.data.get("type")

    def to_dict(self, revision: Optional[str] = None) -> dict:
        return _encode(self.data, None)

    @classmethod
    def _from_wire(cls, data: Any, path: str) -> "RawContent":
        if not isinstance(data, dict):
            raise InvalidParamsError(f"{path}: expected object")
        return cls(data=dict(data))


# What CallToolResult.content, PromptMessage.content and ToolResultContent.content hold.
ContentBlock = Union[TextContent, ImageContent, AudioContent, ResourceLink, EmbeddedResource, RawContent]


@dataclass(eq=False, repr=False)
class ToolResultContent(_Block, Model):
    """The result of a ``tool_use``, sent back to the model (sampling with tools).
    ``content`` has the same form as ``CallToolResult.content``."""
    TYPE = "tool_result"
    SINCE = "2025-11-25"
    tool_use_id: str
    content: list[ContentBlock] = spec_field(default_factory=list, required=True)
    structured_content: Optional[dict] = None
    is_error: Optional[bool] = None
    meta: Optional[dict] = None


# What a sampling message holds (one block, or a list of them from 2025-11-25).
SamplingContent = Union[TextContent, ImageContent, AudioContent, ToolUseContent, ToolResultContent, RawContent]

CONTENT_TYPES.update((cls.TYPE, cls) for cls in (TextContent, ImageContent, AudioContent, ResourceLink,
                                                 EmbeddedResource, ToolUseContent, ToolResultContent))
raw_content.append(RawContent)              # the holder of blocks of an unregistered type


def content_from_dict(data: Any) -> Model:
    """Decode one content block by its ``type``; unknown types give ``RawContent``."""
    if not isinstance(data, dict):
        raise InvalidParamsError("content: expected object")
    return decode_tagged(data, {}, "content")


def resource_contents_from_dict(data: Any) -> Model:
    """``TextResourceContents`` or ``BlobResourceContents``, by whether
    ``text`` or ``blob`` is present."""
    if isinstance(data, dict) and "blob" in data and "text" not in data:
        return BlobResourceContents.from_dict(data)
    if isinstance(data, dict) and "blob" not in data and "text" not in data:
        raise InvalidParamsError("resource contents: expected a 'text' or a 'blob' member")
    return TextResourceContents.from_dict(data)


def image(data: bytes, mime_type: str, annotations: Optional[Annotations] = None) -> ImageContent:
    """An image block from raw bytes (base64-encoded here)."""
    return ImageContent(data=base64.b64encode(data).decode("ascii"), mime_type=mime_type, annotations=annotations)


def audio(data: bytes, mime_type: str, annotations: Optional[Annotations] = None) -> AudioContent:
    """An audio block from raw bytes (base64-encoded here)."""
    return AudioContent(data=base64.b64encode(data).decode("ascii"), mime_type=mime_type, annotations=annotations)

