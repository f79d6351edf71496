"""The ``Context`` a task's code gets (revision 2025-11-25): the request's API, tied to
its task. ``server/tasks/legacy.py`` (rule 3) makes one per task.

Why a subclass made at run time: the session's context class is the server's
``Context`` (sampling, elicitation, roots, logging), which ``features/`` may not
import; ``common.task_context`` mixes ``TaskContextMixin`` over whatever class the
request's own context has.

Spec: basic/utilities/tasks#associating-task-related-messages (every message of a
task carries ``_meta["io.modelcontextprotocol/related-task"]``),
#input-required-status, #task-progress-notifications (the request's progress
token stays valid for the task's lifetime); basic/utilities/progress (progress for
a task MUST stop once the task is terminal: ``notify`` drops it from then on, and a
task whose TTL elapsed is expired first, so it is terminal too).
"""
from __future__ import annotations

from typing import Any

from mcp_ref.server.tasks.common import TERMINAL

__all__ = ["TaskContextMixin", "with_related_task", "RELATED_TASK_KEY"]

RELATED_TASK_KEY = "io.modelcontextprotocol/related-task"   # as types.tasks.RELATED_TASK_KEY


def with_related_task(params: dict | None, task_id: str) -> dict:
    """``params`` (copied) with ``_meta["io.modelcontextprotocol/related-task"]`` set."""
    params = dict(params or {})
    meta = params.get("_meta")
    params["_meta"] = {**(meta if isinstance(meta, dict) else {}), RELATED_TASK_KEY: {"taskId": task_id}}
    return params


class TaskContextMixin:
    """Mixed into the server's ``Context`` class for the code a task runs (tasks.py rule 3).

    ``notify`` (so ``report_progress``) and ``request`` (so ``elicit``, ``sample``,
    ``list_roots``) add the related-task ``_meta``; a request marks the task
    ``input_required`` until its answer arrives. ``task_id`` names the task.
    """

    _task: Any = None                         # the task's record (tasks._Task)
    _registry: Any = None                     # the Tasks registry
    # What the context class it is mixed over gives it (common.task_context).
    session: Any
    request_id: Any
    server: Any

    def notify(self, method: str, params: dict | None = None) -> None:
        """Spec: basic/utilities/tasks#associating-task-related-messages.

        ``notifications/progress`` (so ``report_progress``) is dropped once the task is
        terminal, or expired (Spec: basic/utilities/progress: progress for a task MUST
        stop after it reaches a terminal status). It is sent holding the task's
        ``sending`` lock, which the registry passes through before it tells the client
        of a terminal status: progress never follows that status on the wire."""
        params = with_related_task(params, self._task.id)
        if method == "notifications/progress":
            task = self._task
            if task.status not in TERMINAL and task.expires <= self._registry.clock():
                self._registry._store(task.session)     # expiry first: a TTL that elapsed unnoticed ends the task
            with task.sending:
                if task.status not in TERMINAL:
                    self.session.notify(method, params, related_id=self.request_id)
            return
        self.session.notify(method, params, related_id=self.request_id)

    def request(self, method: str, params: dict | None = None, **options) -> dict:
        """Spec: basic/utilities/tasks#input-required-status: the task is ``input_required``
        while the client is asked, and the request carries the related-task ``_meta``."""
        params = with_related_task(params, self._task.id)
        self._registry._waiting(self._task, method, +1)
        try:
            return super().request(method, params, **options)  # type: ignore[misc]  # a mix-in over Context
        finally:
            self._registry._waiting(self._task, method, -1)

    def log(self, level: str, data: Any, logger: str | None = None) -> bool:
        """As ``Context.log``, with the related-task ``_meta``."""
        from mcp_ref.server.utilities import check_level
        check_level(level)
        return self.server._logs.send(self.session, level, data, logger, related_id=self.request_id,
                                      meta={RELATED_TASK_KEY: {"taskId": self._task.id}})

