"""Tool types: ``Tool`` (as listed by ``tools/list``), its annotations and
execution hints, ``CallToolResult`` and ``ListToolsResult``.

Field history (from the schema files): ``Tool.annotations`` and the
``ToolAnnotations`` type since 2025-03-26; ``title``, ``outputSchema``,
``_meta`` and ``CallToolResult.structuredContent`` since 2025-06-18;
``icons`` and ``execution`` (``ToolExecution``) since 2025-11-25.

``CallToolResult.is_error`` defaults to False and is then left out of the
wire object: ``isError`` is optional in every revision and absent means
false, so a success result is the same on every revision.

Spec: server/tools#tool, server/tools#tool-result; schema: Tool,
ToolAnnotations, ToolExecution, CallToolResult, ListToolsResult.
"""
from dataclasses import dataclass
from typing import Any, Optional

from mcp_ref.types.base import Model, spec_field
from mcp_ref.types.content import ContentBlock, TextContent
from mcp_ref.types.initialize import Icon

__all__ = ["ToolAnnotations", "ToolExecution", "Tool", "CallToolResult", "ListToolsResult"]


@dataclass(eq=False, repr=False)
class ToolAnnotations(Model):
    """Hints about a tool's behaviour. Untrusted unless the server is trusted."""
    SINCE = "2025-03-26"
    title: Optional[str] = None
    read_only_hint: Optional[bool] = None
    destructive_hint: Optional[bool] = None
    idempotent_hint: Optional[bool] = None
    open_world_hint: Optional[bool] = None


@dataclass(eq=False, repr=False)
class ToolExecution(Model):
    """Whether the tool supports task-augmented execution."""
    SINCE = "2025-11-25"
    task_support: Optional[str] = None            # "forbidden" (default) / "optional" / "required"


@dataclass(eq=False, repr=False)
class Tool(Model):
    """A tool as ``tools/list`` shows it: name, schemas, description, annotations (server/tools#tool)."""
    name: str
    # Required on the wire; a tool without parameters still says it takes an object.
    input_schema: dict = spec_field(default_factory=lambda: {"type": "object"}, required=True)
    title: Optional[str] = spec_field(since="2025-06-18")
    description: Optional[str] = None
    output_schema: Optional[dict] = spec_field(since="2025-06-18")
    annotations: Optional[ToolAnnotations] = spec_field(since="2025-03-26")
    icons: Optional[list[Icon]] = spec_field(since="2025-11-25")
    execution: Optional[ToolExecution] = spec_field(since="2025-11-25")
    meta: Optional[dict] = spec_field(since="2025-06-18")


@dataclass(eq=False, repr=False)
class CallToolResult(Model):
    """The result of ``tools/call``: content blocks, structured content, ``isError`` (server/tools)."""
    content: list[ContentBlock]
    # An object up to 2025-11-25; any JSON value since 2026-07-28 (SEP-2106), so read as any.
    structured_content: Optional[Any] = spec_field(since="2025-06-18")
    is_error: bool = spec_field(False, omit_default=True)
    meta: Optional[dict] = None

    @property
    def text(self) -> str:
        """The text of the result's text blocks, joined by newlines ("" when it has none).
        Other blocks (images, resources, ...) are in ``content``."""
        return "\n".join(block.text for block in self.content if isinstance(block, TextContent))


@dataclass(eq=False, repr=False)
class ListToolsResult(Model):
    """The result of ``tools/list``: one page of tools (server/tools#listing-tools)."""
    tools: list[Tool]
    next_cursor: Optional[str] = None
    meta: Optional[dict] = None
