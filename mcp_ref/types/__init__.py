"""MCP data types: plain dataclasses with ``to_dict(revision)`` / ``from_dict(data)``.

Pure: no I/O, no threads, standard library only. ``base`` holds the wire
mapping (``Model``); the other modules follow the spec's sections:

* ``content``: content blocks and the content registry.
* ``initialize``: ``Implementation``, ``Icon``, initialize params/result.
* ``tools``, ``resources``, ``prompts``: server features.
* ``client_features``: sampling (and ``select_model``), roots, elicitation.
* ``utilities``: logging levels, progress, completion.
* ``tasks``: tasks and their statuses, task-augmented results (2025-11-25).

Each module loads with the first of its names (PEP 562), as the package's rooms do
(mcp_ref/__init__.py): a server with one tool needs ``tools`` and ``content``, not the
sampling, elicitation, prompt, resource or task models. Fast path; it holds cold start
<= 3x the floor: a model class costs its import a dataclass each, and those four
modules are half of them. Type checkers do not run ``__getattr__``: they read the same
imports below.

Spec: schema.json of each revision (2024-11-05 .. 2026-07-28).
"""
import importlib
from typing import TYPE_CHECKING

# Every public name and the module it lives in.
_WHERE = {
    "Model": "base", "spec_field": "base", "wire_name": "base", "register_content": "base",
    "CONTENT_TYPES": "base",
    "Annotations": "content", "TextContent": "content", "ImageContent": "content", "AudioContent": "content",
    "ResourceLink": "content", "EmbeddedResource": "content", "TextResourceContents": "content",
    "BlobResourceContents": "content", "ResourceContents": "content", "ToolUseContent": "content",
    "ToolResultContent": "content", "RawContent": "content", "ContentBlock": "content",
    "SamplingContent": "content", "content_from_dict": "content", "resource_contents_from_dict": "content",
    "image": "content", "audio": "content",
    "Icon": "initialize", "Implementation": "initialize", "InitializeResult": "initialize",
    "InitializeParams": "initialize", "InitializeRequestParams": "initialize",
    "ToolAnnotations": "tools", "ToolExecution": "tools", "Tool": "tools", "CallToolResult": "tools",
    "ListToolsResult": "tools",
    "Resource": "resources", "ResourceTemplate": "resources", "ReadResourceResult": "resources",
    "ListResourcesResult": "resources", "ListResourceTemplatesResult": "resources",
    "PromptArgument": "prompts", "Prompt": "prompts", "PromptMessage": "prompts", "GetPromptResult": "prompts",
    "ListPromptsResult": "prompts",
    "ModelHint": "client_features", "ModelPreferences": "client_features",
    "SamplingMessage": "client_features", "ToolChoice": "client_features",
    "CreateMessageRequestParams": "client_features", "CreateMessageResult": "client_features",
    "select_model": "client_features", "Root": "client_features", "ListRootsResult": "client_features",
    "ElicitRequestParams": "client_features", "ElicitResult": "client_features",
    "LOGGING_LEVELS": "utilities", "level_at_least": "utilities", "Completion": "utilities",
    "CompleteResult": "utilities", "PromptReference": "utilities", "ResourceTemplateReference": "utilities",
    "ProgressNotificationParams": "utilities", "LoggingMessageNotificationParams": "utilities",
    "TASK_STATUSES": "tasks", "TERMINAL_STATUSES": "tasks", "RELATED_TASK_KEY": "tasks",
    "TaskMetadata": "tasks", "RelatedTaskMetadata": "tasks", "Task": "tasks", "CreateTaskResult": "tasks",
    "ListTasksResult": "tasks", "related_task_meta": "tasks",
}
__all__ = list(_WHERE)

if TYPE_CHECKING:
    from mcp_ref.types.base import CONTENT_TYPES, Model, register_content, spec_field, wire_name
    from mcp_ref.types.client_features import (CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams,
                                               ElicitResult, ListRootsResult, ModelHint, ModelPreferences, Root,
                                               SamplingMessage, ToolChoice, select_model)
    from mcp_ref.types.content import (Annotations, AudioContent, BlobResourceContents, ContentBlock, EmbeddedResource,
                                       ImageContent, RawContent, ResourceContents, ResourceLink, SamplingContent,
                                       TextContent, TextResourceContents, ToolResultContent, ToolUseContent, audio,
                                       content_from_dict, image, resource_contents_from_dict)
    from mcp_ref.types.initialize import (Icon, Implementation, InitializeParams, InitializeRequestParams,
                                          InitializeResult)
    from mcp_ref.types.prompts import GetPromptResult, ListPromptsResult, Prompt, PromptArgument, PromptMessage
    from mcp_ref.types.resources import (ListResourceTemplatesResult, ListResourcesResult, ReadResourceResult, Resource,
                                         ResourceTemplate)
    from mcp_ref.types.tasks import (CreateTaskResult, ListTasksResult, RELATED_TASK_KEY, RelatedTaskMetadata,
                                     TASK_STATUSES, TERMINAL_STATUSES, Task, TaskMetadata, related_task_meta)
    from mcp_ref.types.tools import CallToolResult, ListToolsResult, Tool, ToolAnnotations, ToolExecution
    from mcp_ref.types.utilities import (CompleteResult, Completion, LOGGING_LEVELS, LoggingMessageNotificationParams,
                                         ProgressNotificationParams, PromptReference, ResourceTemplateReference,
                                         level_at_least)


def __getattr__(name: str) -> object:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'mcp_ref.types' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"mcp_ref.types.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_WHERE))
