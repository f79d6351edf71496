"""Prompt types: ``Prompt`` and its arguments, ``PromptMessage`` and the
results of ``prompts/list`` and ``prompts/get``.

Field history (from the schema files): ``title`` on prompts and arguments,
and ``Prompt._meta``, since 2025-06-18; ``icons`` since 2025-11-25.
``PromptMessage.content`` is one content block, decoded through the content
registry.

Spec: server/prompts#prompt, server/prompts#promptmessage; schema: Prompt,
PromptArgument, PromptMessage, GetPromptResult, ListPromptsResult.
"""
from dataclasses import dataclass
from typing import Optional

from mcp_ref.types.base import Model, spec_field
from mcp_ref.types.content import ContentBlock, TextContent
from mcp_ref.types.initialize import Icon

__all__ = ["PromptArgument", "Prompt", "PromptMessage", "GetPromptResult", "ListPromptsResult"]


@dataclass(eq=False, repr=False)
class PromptArgument(Model):
    """One argument a prompt template takes (server/prompts#data-types)."""
    name: str
    title: Optional[str] = spec_field(since="2025-06-18")
    description: Optional[str] = None
    required: Optional[bool] = None


@dataclass(eq=False, repr=False)
class Prompt(Model):
    """A prompt template as ``prompts/list`` shows it (server/prompts#listing-prompts)."""
    name: str
    title: Optional[str] = spec_field(since="2025-06-18")
    description: Optional[str] = None
    arguments: Optional[list[PromptArgument]] = None
    icons: Optional[list[Icon]] = spec_field(since="2025-11-25")
    meta: Optional[dict] = spec_field(since="2025-06-18")


@dataclass(eq=False, repr=False)
class PromptMessage(Model):
    """One message of a prompt: a role and its content (server/prompts#promptmessage)."""
    role: str                                     # "user" / "assistant"
    content: ContentBlock

    @property
    def text(self) -> str:
        """The message's text ("" when its content block is not text: see ``content``)."""
        return self.content.text if isinstance(self.content, TextContent) else ""


@dataclass(eq=False, repr=False)
class GetPromptResult(Model):
    """The result of ``prompts/get`` (server/prompts#getting-a-prompt)."""
    messages: list[PromptMessage]
    description: Optional[str] = None
    meta: Optional[dict] = None


@dataclass(eq=False, repr=False)
class ListPromptsResult(Model):
    """The result of ``prompts/list``: one page of prompts (server/prompts)."""
    prompts: list[Prompt]
    next_cursor: Optional[str] = None
    meta: Optional[dict] = None
