"""What the tasks of both eras share: the task record, a session's tasks, task ids
and timestamps, and the thread name (server/tasks/legacy.py, requests.py and
extension.py use them; none of those imports another for these).

Spec: basic/utilities/tasks (2025-11-25); the tasks extension of 2026-07-28.
"""
from __future__ import annotations

import threading
import time
from collections import OrderedDict
from typing import Any

from secrets import token_urlsafe
from mcp_ref.server.features import next_serial

__all__ = ["TASK_THREAD_NAME", "TERMINAL", "new_task_id", "iso_time"]

TASK_THREAD_NAME = "mcp-server-task"
TERMINAL = frozenset(("completed", "failed", "cancelled"))


def new_task_id() -> str:
    """legacy.py rule 7: a fresh task id, 128 bits from the OS's CSPRNG as URL-safe base64 (22
    characters; ``secrets``). Spec: #task-id-requirements (unique among the receiver's tasks),
    #task-isolation-and-access-control (cryptographically secure, enough entropy to prevent guessing)."""
    return token_urlsafe(16)


def iso_time(t: float) -> str:
    """An RFC 3339 UTC timestamp with milliseconds, e.g. ``2025-11-25T10:30:00.123Z``."""
    whole = int(t)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(whole)) + f".{int((t - whole) * 1000):03d}Z"


class _Task:
    """One task's record. Fields change under ``Tasks._lock``; ``done`` is set once the
    status is terminal (or the task was removed)."""

    __slots__ = ("id", "session", "serial", "tool", "status", "message", "created", "updated", "ttl",
                 "expires", "result", "error", "done", "ctx", "thread", "waiting", "expired", "sending")

    def __init__(self, task_id: str, session: Any, tool: str, now: float, wall: float, ttl: int):
        self.id, self.session, self.tool = task_id, session, tool
        self.serial = next_serial()
        self.status: str = "working"
        self.message: str | None = None
        self.created = self.updated = iso_time(wall)
        self.ttl = ttl
        self.expires = now + ttl / 1000.0
        self.result: dict | None = None          # the tools/call result dict
        self.error: tuple | None = None          # or (code, message, data)
        self.done = threading.Event()
        self.ctx: Any = None                     # the task's Context (tasks/context.py)
        self.thread: threading.Thread | None = None
        self.waiting = 0                         # requests to the client in flight (input_required)
        self.expired = False
        self.sending = threading.Lock()          # held while progress is sent (rule 4)

    def wire(self, poll_interval: int | None) -> dict:
        """The ``Task`` object (schema Task); call under the lock for a consistent snapshot."""
        task = {"taskId": self.id, "status": self.status, "createdAt": self.created,
                "lastUpdatedAt": self.updated, "ttl": self.ttl}
        if self.message is not None:
            task["statusMessage"] = self.message
        if poll_interval is not None:
            task["pollInterval"] = poll_interval
        return task


class _SessionTasks:
    """The tasks of one session, in creation order, and the ids that expired lately."""
    __slots__ = ("tasks", "expired")

    def __init__(self) -> None:
        self.tasks: dict = {}
        self.expired: OrderedDict = OrderedDict()
