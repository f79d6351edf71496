"""Task types (revision 2025-11-25 only): ``Task`` and its status, the ``task``
member of a task-augmented request (``TaskMetadata``), the related-task
``_meta`` entry, and the results of ``tools/call`` as a task, ``tasks/list``.

The results of ``tasks/get`` and ``tasks/cancel`` and the params of
``notifications/tasks/status`` are a ``Task`` object itself (schema
``GetTaskResult``, ``CancelTaskResult``, ``TaskStatusNotificationParams`` are
``Task`` plus the general ``_meta``), so they decode as ``Task``; a ``_meta``
they carry stays in ``extra``. ``tasks/result`` answers the underlying
request's own result (a ``CallToolResult`` for ``tools/call``).

``Task.ttl`` is required and may be ``null`` ("unlimited"), so it is sent even
when None; it is typed ``Any`` because the reference decoder reads
``Optional[int]`` as "an int when present", and ``_check_wire`` checks it is an
integer or null instead.

Spec: basic/utilities/tasks#data-types; schema: Task, TaskStatus,
TaskMetadata, RelatedTaskMetadata, CreateTaskResult, ListTasksResult.
"""
from dataclasses import dataclass
from typing import Any, Optional

from mcp_ref.errors import InvalidParamsError
from mcp_ref.types.base import Model, spec_field

__all__ = ["TASK_STATUSES", "TERMINAL_STATUSES", "RELATED_TASK_KEY", "TaskMetadata", "RelatedTaskMetadata",
           "Task", "CreateTaskResult", "ListTasksResult", "related_task_meta"]

TASKS_SINCE = "2025-11-25"
# Spec: basic/utilities/tasks#task-status (schema TaskStatus).
TASK_STATUSES = ("working", "input_required", "completed", "failed", "cancelled")
TERMINAL_STATUSES = frozenset(("completed", "failed", "cancelled"))
# The ``_meta`` key that ties a message to its task (basic/utilities/tasks#related-task-metadata).
RELATED_TASK_KEY = "io.modelcontextprotocol/related-task"


def related_task_meta(task_id: str) -> dict:
    """``{RELATED_TASK_KEY: {"taskId": task_id}}``: the ``_meta`` entry of every message of a task."""
    return {RELATED_TASK_KEY: {"taskId": task_id}}


@dataclass(eq=False, repr=False)
class TaskMetadata(Model):
    """The ``task`` member of a task-augmented request's params."""
    SINCE = TASKS_SINCE
    ttl: Optional[int] = None                     # requested retention from creation, in ms


@dataclass(eq=False, repr=False)
class RelatedTaskMetadata(Model):
    """The value under ``_meta["io.modelcontextprotocol/related-task"]``."""
    SINCE = TASKS_SINCE
    task_id: str


@dataclass(eq=False, repr=False)
class Task(Model):
    """The state of a task: what ``tasks/get``, ``tasks/cancel``, ``tasks/list`` and
    ``notifications/tasks/status`` carry. ``created_at``/``last_updated_at`` are ISO 8601
    strings; ``ttl`` and ``poll_interval`` are milliseconds (``ttl`` None: unlimited)."""
    SINCE = TASKS_SINCE
    task_id: str
    status: str                                   # one of TASK_STATUSES
    created_at: str
    last_updated_at: str
    ttl: Any = spec_field(None, keep_none=True, required=True)
    status_message: Optional[str] = None
    poll_interval: Optional[int] = None

    @property
    def is_terminal(self) -> bool:
        """True for ``completed``, ``failed`` and ``cancelled``: the status will not change again."""
        return self.status in TERMINAL_STATUSES

    @classmethod
    def _check_wire(cls, data: dict, path: str) -> None:
        ttl = data.get("ttl")
        if ttl is not None and (isinstance(ttl, bool) or not isinstance(ttl, int)):
            raise InvalidParamsError(f"{path}.ttl: expected integer or null")
        status = data.get("status")
        if isinstance(status, str) and status not in TASK_STATUSES:
            raise InvalidParamsError(f"{path}.status: expected one of {', '.join(TASK_STATUSES)}, got {status!r}")


@dataclass(eq=False, repr=False)
class CreateTaskResult(Model):
    """The immediate answer to a task-augmented request."""
    SINCE = TASKS_SINCE
    task: Task
    meta: Optional[dict] = None


@dataclass(eq=False, repr=False)
class ListTasksResult(Model):
    """The result of ``tasks/list``: one page of tasks (basic/utilities/tasks, 2025-11-25)."""
    SINCE = TASKS_SINCE
    tasks: list[Task]
    next_cursor: Optional[str] = None
    meta: Optional[dict] = None
