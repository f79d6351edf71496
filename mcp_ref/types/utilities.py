"""Utility types: logging levels and log messages, progress notifications,
completion results and the references a completion request points at.

Logging levels are the eight RFC 5424 severities, least severe first;
``level_at_least`` answers "is this message at or above the level the client
set". The completion reference for resources is ``ResourceTemplateReference``
(named ``ResourceReference`` in the schema before 2025-06-18, same shape).

Field history (from the schema files): ``ProgressNotificationParams.message``
since 2025-03-26; ``PromptReference.title`` since 2025-06-18.

Spec: server/utilities/logging, basic/utilities/progress,
server/utilities/completion; schema: LoggingLevel,
LoggingMessageNotificationParams, ProgressNotificationParams, CompleteResult,
PromptReference, ResourceTemplateReference.
"""
from dataclasses import dataclass
from typing import Any, Optional, Union

from mcp_ref.types.base import Model, spec_field

__all__ = ["LOGGING_LEVELS", "level_at_least", "Completion", "CompleteResult", "PromptReference",
           "ResourceTemplateReference", "ProgressNotificationParams", "LoggingMessageNotificationParams"]

# RFC 5424 severities, from least to most severe.
LOGGING_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")


def level_at_least(level: str, threshold: str) -> bool:
    """True when ``level`` is as severe as ``threshold`` or more.
    Raises ValueError for a name that is not a logging level."""
    for name in (level, threshold):
        if name not in LOGGING_LEVELS:
            raise ValueError(f"unknown logging level {name!r}; expected one of {', '.join(LOGGING_LEVELS)}")
    return LOGGING_LEVELS.index(level) >= LOGGING_LEVELS.index(threshold)


@dataclass(eq=False, repr=False)
class Completion(Model):
    """The ``completion`` member of a ``completion/complete`` result."""
    values: list[str]                             # at most 100
    total: Optional[int] = None
    has_more: Optional[bool] = None


@dataclass(eq=False, repr=False)
class CompleteResult(Model):
    """The result of ``completion/complete``: the suggested values (server/utilities/completion)."""
    completion: Completion
    meta: Optional[dict] = None


@dataclass(eq=False, repr=False)
class PromptReference(Model):
    """A completion's reference to a prompt, by name (server/utilities/completion)."""
    TYPE = "ref/prompt"
    name: str
    title: Optional[str] = spec_field(since="2025-06-18")


@dataclass(eq=False, repr=False)
class ResourceTemplateReference(Model):
    """A completion's reference to a resource template, by URI template (server/utilities/completion)."""
    TYPE = "ref/resource"
    uri: str                                      # a URI or a URI template


@dataclass(eq=False, repr=False)
class ProgressNotificationParams(Model):
    """The params of ``notifications/progress`` (basic/utilities/progress)."""
    progress_token: Union[str, int]
    progress: float
    total: Optional[float] = None
    message: Optional[str] = spec_field(since="2025-03-26")
    meta: Optional[dict] = None


@dataclass(eq=False, repr=False)
class LoggingMessageNotificationParams(Model):
    """The params of ``notifications/message`` (server/utilities/logging)."""
    level: str
    # Any JSON value, null included: the member is required, so None is sent.
    data: Any = spec_field(keep_none=True, required=True)
    logger: Optional[str] = None
    meta: Optional[dict] = None
