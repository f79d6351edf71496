"""Lifecycle types: ``Implementation`` (client/server info), ``Icon``, and the
``initialize`` request params and result.

Capabilities stay plain dicts: they are open-ended (``experimental``, new
sub-capabilities) and the lifecycle module interprets them.

Field history (from the schema files): ``Implementation.title`` since
2025-06-18; ``description``, ``icons``, ``websiteUrl`` and the ``Icon`` type
since 2025-11-25. The params became a named definition
(``InitializeRequestParams``) in 2025-11-25; before, they were inline in
``InitializeRequest``.

Spec: basic/lifecycle#initialization; schema: Implementation, Icon,
InitializeResult, InitializeRequestParams.
"""
from dataclasses import dataclass
from typing import Optional

from mcp_ref.types.base import Model, spec_field

__all__ = ["Icon", "Implementation", "InitializeResult", "InitializeParams", "InitializeRequestParams"]


@dataclass(eq=False, repr=False)
class Icon(Model):
    """An icon a UI may show. ``src`` is an http(s) URL or a ``data:`` URI."""
    SINCE = "2025-11-25"
    src: str
    mime_type: Optional[str] = None
    sizes: Optional[list[str]] = None             # "48x48", "any"
    theme: Optional[str] = None                   # "light" / "dark"


@dataclass(eq=False, repr=False)
class Implementation(Model):
    """Name and version of an MCP client or server (``clientInfo``/``serverInfo``)."""
    name: str
    version: str
    title: Optional[str] = spec_field(since="2025-06-18")
    description: Optional[str] = spec_field(since="2025-11-25")
    icons: Optional[list[Icon]] = spec_field(since="2025-11-25")
    website_url: Optional[str] = spec_field(since="2025-11-25")


@dataclass(eq=False, repr=False)
class InitializeResult(Model):
    """The server's answer to ``initialize`` (basic/lifecycle#initialization)."""
    protocol_version: str
    capabilities: dict
    server_info: Implementation
    instructions: Optional[str] = None
    meta: Optional[dict] = None


@dataclass(eq=False, repr=False)
class InitializeParams(Model):
    """The params of ``initialize``: the client's revision, capabilities and info (basic/lifecycle)."""
    protocol_version: str
    capabilities: dict
    client_info: Implementation
    meta: Optional[dict] = None


# The schema's name for it (2025-11-25).
InitializeRequestParams = InitializeParams
