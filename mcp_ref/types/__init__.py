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

# Every public name, by the module it lives in.
_NAMES = {
    "base": ("Model", "spec_field", "wire_name", "register_content", "CONTENT_TYPES"),
    "content": ("Annotations", "TextContent", "ImageContent", "AudioContent", "ResourceLink", "EmbeddedResource",
                "TextResourceContents", "BlobResourceContents", "ResourceContents", "ToolUseContent",
                "ToolResultContent", "RawContent", "ContentBlock", "SamplingContent", "content_from_dict",
                "resource_contents_from_dict", "image", "audio"),
    "initialize": ("Icon", "Implementation", "InitializeResult", "InitializeParams", "InitializeRequestParams"),
    "tools": ("ToolAnnotations", "ToolExecution", "Tool", "CallToolResult", "ListToolsResult"),
    "resources": ("Resource", "ResourceTemplate", "ReadResourceResult", "ListResourcesResult",
                  "ListResourceTemplatesResult"),
    "prompts": ("PromptArgument", "Prompt", "PromptMessage", "GetPromptResult", "ListPromptsResult"),
    "client_features": ("ModelHint", "ModelPreferences", "SamplingMessage", "ToolChoice",
                        "CreateMessageRequestParams", "CreateMessageResult", "select_model", "Root",
                        "ListRootsResult", "ElicitRequestParams", "ElicitResult"),
    "utilities": ("LOGGING_LEVELS", "level_at_least", "Completion", "CompleteResult", "PromptReference",
                  "ResourceTemplateReference", "ProgressNotificationParams", "LoggingMessageNotificationParams"),
    "tasks": ("TASK_STATUSES", "TERMINAL_STATUSES", "RELATED_TASK_KEY", "TaskMetadata", "RelatedTaskMetadata",
              "Task", "CreateTaskResult", "ListTasksResult", "related_task_meta"),
}
_WHERE = {name: module for module, names in _NAMES.items() for name in names}
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
