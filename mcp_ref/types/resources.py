"""Resource types: ``Resource``, ``ResourceTemplate`` and the results of
``resources/list``, ``resources/templates/list`` and ``resources/read``.

Field history (from the schema files): ``title`` and ``_meta`` on resources
and templates since 2025-06-18; ``icons`` since 2025-11-25. ``annotations``
and ``size`` are in every revision (inline annotations in 2024-11-05).

Spec: server/resources#resource, server/resources#resource-templates,
server/resources#reading-resources; schema: Resource, ResourceTemplate,
ReadResourceResult, ListResourcesResult, ListResourceTemplatesResult.
"""
from dataclasses import dataclass
from typing import Optional

from mcp_ref.types.base import Model, spec_field
from mcp_ref.types.content import Annotations, ResourceContents, TextResourceContents
from mcp_ref.types.initialize import Icon

__all__ = ["Resource", "ResourceTemplate", "ReadResourceResult", "ListResourcesResult",
           "ListResourceTemplatesResult"]


@dataclass(eq=False, repr=False)
class Resource(Model):
    """A resource as ``resources/list`` shows it (server/resources#resource)."""
    uri: str
    name: str
    title: Optional[str] = spec_field(since="2025-06-18")
    description: Optional[str] = None
    mime_type: Optional[str] = None
    size: Optional[int] = None                    # bytes, before any encoding
    annotations: Optional[Annotations] = None
    icons: Optional[list[Icon]] = spec_field(since="2025-11-25")
    meta: Optional[dict] = spec_field(since="2025-06-18")


@dataclass(eq=False, repr=False)
class ResourceTemplate(Model):
    """A family of resources named by an RFC 6570 URI template."""
    uri_template: str
    name: str
    title: Optional[str] = spec_field(since="2025-06-18")
    description: Optional[str] = None
    mime_type: Optional[str] = None
    annotations: Optional[Annotations] = None
    icons: Optional[list[Icon]] = spec_field(since="2025-11-25")
    meta: Optional[dict] = spec_field(since="2025-06-18")


@dataclass(eq=False, repr=False)
class ReadResourceResult(Model):
    """``contents`` holds ``TextResourceContents`` / ``BlobResourceContents``."""
    contents: list[ResourceContents]
    meta: Optional[dict] = None

    @property
    def text(self) -> str:
        """The text of the text contents, joined by newlines ("" when all are blobs)."""
        return "\n".join(item.text for item in self.contents if isinstance(item, TextResourceContents))


@dataclass(eq=False, repr=False)
class ListResourcesResult(Model):
    """The result of ``resources/list``: one page of resources (server/resources)."""
    resources: list[Resource]
    next_cursor: Optional[str] = None
    meta: Optional[dict] = None


@dataclass(eq=False, repr=False)
class ListResourceTemplatesResult(Model):
    """The result of ``resources/templates/list`` (server/resources#resource-templates)."""
    resource_templates: list[ResourceTemplate]
    next_cursor: Optional[str] = None
    meta: Optional[dict] = None
