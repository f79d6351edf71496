"""Tasks, continued: the bounds on what a session keeps (rule 8 of tasks.py) and
the requests about tasks (rules 5 to 7): ``tasks/get``, ``tasks/result``,
``tasks/list``, ``tasks/cancel``.

``TaskRequests`` is a mix-in of ``Tasks`` (tasks.py), whose table and lock it
uses; tasks.py creates and runs tasks, this module answers about them.
Spec: basic/utilities/tasks#getting-tasks, #retrieving-task-results,
#listing-tasks, #cancelling-tasks, #task-expiration.
"""
from __future__ import annotations

import threading
from typing import Any, Callable

from mcp_ref.errors import InvalidParamsError, McpError, RequestCancelled, get_logger
from mcp_ref.server.pagination import Listing
from mcp_ref.server.tasks.common import TERMINAL, _SessionTasks, _Task
from mcp_ref.server.tasks.context import RELATED_TASK_KEY
from mcp_ref.server.tasks.extension import ExtTasks

log = get_logger("mcp_ref.server")

EXPIRED_MEMORY = 256           # ids of expired tasks remembered per session, for the better message
RESULT_POLL = 0.1              # s: how often a waiting tasks/result looks for cancellation and expiry


class TaskRequests:
    """The bounds and the task requests of ``Tasks`` (a mix-in). A 2026-07-28 request
    (``ctx.era``) goes to ``ext``, the tasks extension's registry (server/tasks/extension.py)."""

    _ext: ExtTasks | None = None
    # Made by Tasks (legacy.py): the state and the helpers these methods use.
    owner: Any
    clock: Callable[[], float]
    poll_interval: int | None
    _lock: threading.Lock
    _sessions: dict
    _cancel: Callable[..., bool]
    _cancel_locked: Callable[[_Task, str], None]
    _stop: Callable[[_Task], None]
    _send_status: Callable[[list], None]

    @property
    def ext(self) -> ExtTasks:
        """The 2026-07-28 tasks (server/tasks/extension.py), made on first use."""
        if self._ext is None:
            with self._lock:
                if self._ext is None:
                    self._ext = ExtTasks(self.owner)
        return self._ext

    # ------------------------------------------------------------------ bounds (rule 8)
    def _expire_locked(self, store: _SessionTasks) -> list:
        """Remove the tasks whose TTL elapsed; a working one is moved to ``cancelled``.
        Returns ``(task, wire)`` of those, for ``_expired`` to stop and tell outside the lock."""
        now = self.clock()
        changed = []
        for task in [t for t in store.tasks.values() if t.expires <= now]:
            del store.tasks[task.id]
            store.expired[task.id] = True
            if len(store.expired) > EXPIRED_MEMORY:
                store.expired.popitem(last=False)
            task.expired = True
            if task.status not in TERMINAL:
                self._cancel_locked(task, f"The task expired: its ttl of {task.ttl} ms elapsed.")
                changed.append((task, task.wire(self.poll_interval)))
            task.done.set()
        return changed

    def _make_room_locked(self, store: _SessionTasks) -> bool:
        """Drop the oldest terminal task; False when every task is still working."""
        for task in store.tasks.values():
            if task.status in TERMINAL:
                del store.tasks[task.id]
                return True
        return False

    def _expired(self, changed: list) -> None:
        """Stop the code of working tasks that expired, and tell the client they are cancelled
        (after any progress being sent: rule 4)."""
        for task, _ in changed:
            self._stop(task)
            with task.sending:
                pass
        self._send_status(changed)

    def _expire_due(self, task: _Task) -> None:
        """Expire ``task`` now when its TTL has elapsed and nobody noticed yet (rule 8):
        its code is about to send progress, which must not outlive it (rule 4)."""
        if task.status not in TERMINAL and task.expires <= self.clock():
            self._store(task.session)

    def _store(self, session) -> _SessionTasks | None:
        """The session's tasks, after expiry."""
        with self._lock:
            store = self._sessions.get(session)
            changed = self._expire_locked(store) if store is not None else []
        self._expired(changed)
        return store

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
        if not task.done.is_set():
            while not task.done.wait(RESULT_POLL):
                if ctx.is_cancelled():
                    raise RequestCancelled(f"tasks/result for task {task.id} was cancelled")
                self._store(ctx.session)          # the TTL may elapse while we wait (rule 8)
        with self._lock:
            status, result, error, expired = task.status, task.result, task.error, task.expired
        if expired:
            raise InvalidParamsError("Failed to retrieve task: Task has expired", {"taskId": task.id})
        if error is not None:
            raise McpError.from_error({"code": error[0], "message": error[1], "data": error[2]})
        if status == "cancelled" or result is None:
            raise InvalidParamsError(f"Task {task.id} was cancelled: it has no result "
                                     f"({task.message or 'cancelled'})", {"taskId": task.id, "status": status})
        meta = result.get("_meta")
        return {**result, "_meta": {**(meta if isinstance(meta, dict) else {}),
                                    RELATED_TASK_KEY: {"taskId": task.id}}}

    def handle_list(self, ctx, params: dict) -> dict:
        """``tasks/list``: this session's tasks, paginated like the other lists (an invalid
        cursor is -32602). Spec: basic/utilities/tasks#listing-tasks, #task-listing."""
        store = self._store(ctx.session)
        with self._lock:
            numbered = [(task.serial, task.wire(self.poll_interval))
                         for task in (store.tasks.values() if store is not None else ())]
        page, cursor = Listing(numbered).page(params, self.owner.page_size, "tasks")
        result = {"tasks": page}
        if cursor is not None:
            result["nextCursor"] = cursor
        return result

    def handle_cancel(self, ctx, params: dict) -> dict:
        """``tasks/cancel``: the task is ``cancelled`` before we answer (rule 4); a terminal
        one is -32602. Spec: basic/utilities/tasks#cancelling-tasks, #task-cancellation."""
        if getattr(ctx, "era", None) is not None:    # 2026-07-28: the tasks extension
            return self.ext.handle_cancel(ctx, params)
        task = self._find(ctx.session, params, "tasks/cancel")
        if not self._cancel(task, "The task was cancelled by request."):
            with self._lock:
                status = task.status
            raise InvalidParamsError(f"Cannot cancel task: already in terminal status '{status}'",
                                     {"taskId": task.id, "status": status})
        with self._lock:
            return task.wire(self.poll_interval)
