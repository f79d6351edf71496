"""Tasks, continued: the bounds on what a session keeps (rule 8 of legacy.py), the
status notices (rule 4) and the requests about tasks (rules 5 to 7): ``tasks/get``,
``tasks/result``, ``tasks/list``, ``tasks/cancel``.

``TaskRequests`` is the base of ``Tasks`` (legacy.py), whose table it uses;
legacy.py creates and runs tasks, this module answers about them.
Spec: basic/utilities/tasks#getting-tasks, #retrieving-task-results,
#listing-tasks, #cancelling-tasks, #task-expiration.
"""
from __future__ import annotations

from typing import Any

from mcp_ref.errors import InvalidParamsError, McpError, RequestCancelled, SessionError
from mcp_ref.server.pagination import Listing
from mcp_ref.server.tasks.common import TERMINAL, Registry, _SessionTasks, _Task
from mcp_ref.server.tasks.context import with_related_task
from mcp_ref.server.tasks.extension import ExtTasks

RESULT_POLL = 0.1              # s: how often a waiting tasks/result looks for cancellation and expiry


class TaskRequests(Registry):
    """The bounds, the status notices and the task requests of ``Tasks`` (its base). A
    2026-07-28 request (``ctx.era``) goes to ``ext``, the tasks extension's registry
    (server/tasks/extension.py)."""

    ext: ExtTasks
    owner: Any                                   # made by Tasks (legacy.py), as are ext and _sessions
    _sessions: dict

    # ------------------------------------------------------------------ bounds (rule 8)
    def _expire_due(self, task: _Task) -> None:
        """Expire ``task`` now when its TTL has elapsed and nobody noticed yet (rule 8):
        its code is about to send progress, which must not outlive it (rule 4)."""
        if task.status not in TERMINAL and task.expires <= self.clock():
            self._store(task.session)

    def _store(self, session) -> _SessionTasks | None:
        """The session's tasks, after expiry: those whose TTL elapsed are removed, a working
        one moved to ``cancelled``, its code stopped and the client told (after any progress
        being sent: rule 4)."""
        with self._lock:
            store = self._sessions.get(session)
            expired = [] if store is None else self._expire_locked(store.tasks, store.expired,
                                                                   "The task expired: its ttl of {ttl} ms elapsed.")
            changed = [(task, task.wire(self.poll_interval)) for task in expired]
        for task in expired:
            self._stop(task)
            with task.sending:
                pass
        self._send_status(changed)
        return store

    # ------------------------------------------------------------------ status changes (rule 4)
    def _cancel(self, task: _Task, message: str) -> bool:
        """Move a non-terminal task to ``cancelled`` (first), then stop its code: set its
        ``cancelled`` and settle its requests to the client. False when already terminal."""
        with task.sending, self._lock:          # after any progress being sent (rule 4)
            if not self._set_locked(task, "cancelled", message):
                return False
            changed = self._changed_locked(task)
        self._stop(task)
        self._send_status(changed)
        return True

    @staticmethod
    def _stop(task: _Task) -> None:
        task.ctx._cancel()
        task.ctx._abandon_nested()

    def _changed_locked(self, task: _Task) -> list:
        """``[(task, wire)]`` to tell the client of, when the session still holds the task."""
        store = self._sessions.get(task.session)
        held = store is not None and store.tasks.get(task.id) is task
        return [(task, task.wire(self.poll_interval))] if held else []

    def _send_status(self, changed: list) -> None:
        """``notifications/tasks/status`` for each ``(task, wire)``; outside the lock.
        Spec: basic/utilities/tasks#task-status-notification (no related-task ``_meta``)."""
        for task, wire in changed:
            try:
                task.session.notify("notifications/tasks/status", wire)
            except SessionError:
                pass                              # the session closed: nobody to tell

    # ------------------------------------------------------------------ handlers (rules 5 to 7)
    def _find(self, session, params: dict, method: str) -> _Task:
        """Rule 6: the task named by ``taskId`` among this session's tasks, or -32602.
        Spec: the ``taskId`` param is the source of truth; a related-task ``_meta`` is ignored."""
        task_id = params.get("taskId")
        if not isinstance(task_id, str):
            raise InvalidParamsError(f"{method}: taskId must be a string", {"taskId": task_id})
        store = self._store(session)
        verb = "cancel" if method == "tasks/cancel" else "retrieve"
        with self._lock:
            task = store.tasks.get(task_id) if store is not None else None
            expired = store is not None and task is None and task_id in store.expired
        if task is None:
            reason = "Task has expired" if expired else "Task not found"
            raise InvalidParamsError(f"Failed to {verb} task: {reason}", {"taskId": task_id})
        return task

    def handle_get(self, ctx, params: dict) -> dict:
        """``tasks/get``: the task (a ``GetTaskResult``). Spec: basic/utilities/tasks#getting-tasks."""
        if getattr(ctx, "era", None) is not None:    # 2026-07-28: the tasks extension
            return self.ext.handle_get(ctx, params)
        task = self._find(ctx.session, params, "tasks/get")
        with self._lock:
            return task.wire(self.poll_interval)

    def handle_result(self, ctx, params: dict) -> dict:
        """``tasks/result`` (rule 5). Spec: basic/utilities/tasks#retrieving-task-results,
        #result-retrieval."""
        task = self._find(ctx.session, params, "tasks/result")
        while not task.done.wait(RESULT_POLL):
            if ctx.is_cancelled():
                raise RequestCancelled(f"tasks/result for task {task.id} was cancelled")
            self._store(ctx.session)              # the TTL may elapse while we wait (rule 8)
        with self._lock:
            status, result, error, expired = task.status, task.result, task.error, task.expired
        if expired:
            raise InvalidParamsError("Failed to retrieve task: Task has expired", {"taskId": task.id})
        if error is not None:
            raise McpError.from_error(error)
        if status == "cancelled" or result is None:
            raise InvalidParamsError(f"Task {task.id} was cancelled: it has no result "
                                     f"({task.message or 'cancelled'})", {"taskId": task.id, "status": status})
        return with_related_task(result, task.id)

    def handle_list(self, ctx, params: dict) -> dict:
        """``tasks/list``: this session's tasks, paginated like the other lists (an invalid
        cursor is -32602). Spec: basic/utilities/tasks#listing-tasks, #task-listing."""
        store = self._store(ctx.session)
        with self._lock:
            numbered = [(task.serial, task.wire(self.poll_interval))
                         for task in (store.tasks.values() if store is not None else ())]
        page, cursor = Listing(numbered).page(params, self.owner.page_size, "tasks")
        return {"tasks": page, "nextCursor": cursor} if cursor is not None else {"tasks": page}

    def handle_cancel(self, ctx, params: dict) -> dict:
        """``tasks/cancel``: the task is ``cancelled`` before we answer (rule 4); a terminal
        one is -32602. Spec: basic/utilities/tasks#cancelling-tasks, #task-cancellation."""
        if getattr(ctx, "era", None) is not None:    # 2026-07-28: the tasks extension
            return self.ext.handle_cancel(ctx, params)
        task = self._find(ctx.session, params, "tasks/cancel")
        if not self._cancel(task, "The task was cancelled by request."):     # terminal: its status never changes
            raise InvalidParamsError(f"Cannot cancel task: already in terminal status '{task.status}'",
                                     {"taskId": task.id, "status": task.status})
        with self._lock:
            return task.wire(self.poll_interval)
