"""Tasks (revision 2025-11-25 only): task-augmented ``tools/call``, ``tasks/get``,
``tasks/result``, ``tasks/list``, ``tasks/cancel`` and ``notifications/tasks/status``.

Spec: basic/utilities/tasks (the whole page); server/tools#tool (``execution.taskSupport``).
This module loads when a task is first needed: a server whose tools do not
support tasks never imports it (start-up time, ``tests/test_lean_paths.py``).

Rules:

1. Capability: the server declares ``tasks`` (``list``, ``cancel``,
   ``requests.tools.call``) to a 2025-11-25 session when at least one tool
   supports tasks (``server.py``). A session that was not told
   ``tasks.requests.tools.call`` (an older revision, no task tools when it
   initialized, a ``capabilities=`` override) gets a ``task`` param ignored:
   the call runs as an ordinary call.
   Spec: basic/utilities/tasks#task-support-and-handling (receivers that do not
   declare the capability MUST process the request normally).
2. Tool-level negotiation (``route_tool_call``): ``task`` on a tool whose
   ``taskSupport`` is absent or ``"forbidden"``, and a call without ``task``
   of a ``"required"`` tool, are -32601 (Method not found).
   Spec: basic/utilities/tasks#tool-level-negotiation. (Its error-handling
   section also allows -32600 for the second case; the tool-level section is
   the more specific one and says -32601, so that is what we send.)
3. Creation: a task-augmented call is answered at once with
   ``CreateTaskResult`` (status ``working``), then the tool runs on a thread of
   its own (``mcp-server-task``) with a ``TaskContext`` (server/tasks/context.py: its
   messages carry the related-task ``_meta``; ``tasks/cancel`` sets its
   ``cancelled``). The answer is written before the thread starts, so on an
   ordered transport nothing of the task precedes it. Spec: #creating-tasks.
4. Status lifecycle: ``working`` → ``input_required`` (while the tool waits for
   a request it sent to the client) → ``working``; then ``completed``,
   ``failed`` (a result with ``isError``, or a JSON-RPC error) or ``cancelled``.
   Terminal statuses never change; a cancelled task stays cancelled whatever
   the tool does afterwards. Every change is sent as
   ``notifications/tasks/status`` with the full task and no related-task
   ``_meta``. Spec: #task-status-lifecycle, #input-required-status, #task-notifications.
   Progress stops at a terminal status (Spec: basic/utilities/progress: MUST):
   the tool's ``notifications/progress`` are dropped from then on
   (server/tasks/context.py). A task's progress is sent holding its ``sending`` lock,
   which the change to a terminal status takes too (``_run``, ``_cancel``;
   expiry passes through it before telling the client): no progress of a task
   follows its terminal status on the wire.
5. ``tasks/result`` blocks until the task is terminal, then answers exactly
   what the ``tools/call`` would have answered: its result plus the
   related-task ``_meta``, or its JSON-RPC error. A cancelled task has no
   result: -32602 saying so. Spec: #result-retrieval, #task-execution-errors.
6. Errors: an unknown, foreign or malformed ``taskId`` is -32602 "Failed to
   retrieve task: Task not found" (or "... Task has expired" for one removed
   by its TTL, while remembered); cancelling a terminal task is -32602;
   a bad ``tasks/list`` cursor is -32602. Spec: #protocol-errors, #task-cancellation.
7. Isolation: a task belongs to the session that created it; every other
   session gets "Task not found". Ids are ``secrets.token_urlsafe(16)``
   (``new_task_id``: 128 random bits, so unique without a registry-wide
   table). Spec: #task-id-requirements, #task-isolation-and-access-control.
8. Bounds (Spec: #resource-management, #ttl-and-resource-management): a
   requested ``ttl`` is capped at ``max_ttl`` (default ``default_ttl`` when
   absent); a task is removed once its TTL has elapsed, whatever its status
   (a working one is cancelled first); expiry is checked on every access to
   the session's tasks and while ``tasks/result`` waits (no timer thread). A
   session holds at most ``max_tasks`` tasks: when full, the oldest terminal
   task makes room; when every task is still working the new one is refused
   with -32603.
9. Closing a session cancels its working tasks, wakes every ``tasks/result``
   waiting on them and joins their threads (bounded, as ``Session.close``
   joins its own), then forgets them.

The registry lock is held only to read and change task records: no user
code and no I/O runs under it (features/ rule 1).
"""
from __future__ import annotations

import contextlib
import threading

from mcp_ref.errors import (InternalError, InvalidParamsError, McpError, MethodNotFoundError, RequestCancelled,
                            SessionError, get_logger)
from mcp_ref.protocol.lifecycle import has_capability
from mcp_ref.jsonrpc.messages import Response
from mcp_ref.server.tasks.common import (TASK_THREAD_NAME, TERMINAL, Registry, _SessionTasks, _Task, join_threads,
                                         new_task_id, run_tool, task_context)
from mcp_ref.server.pagination import Listing
from mcp_ref.server.tasks.context import RELATED_TASK_KEY, TaskContextMixin, with_related_task
from mcp_ref.server.tasks.extension import ExtTasks

log = get_logger("mcp_ref.server")

__all__ = ["Tasks", "TaskContextMixin", "route_tool_call", "RELATED_TASK_KEY", "TASK_THREAD_NAME"]

TASK_CAPABILITY = "tasks.requests.tools.call"
RESULT_POLL = 0.1              # s: how often a waiting tasks/result looks for cancellation and expiry


def route_tool_call(registry: Tasks, tools, ctx, params: dict, entry) -> dict:
    """Rules 1 and 2, for ``Tools.handle_call``: a ``tools/call`` whose params carry
    ``task`` or whose tool declared ``task_support``. Runs the call as an ordinary
    one, starts a task, or raises -32601."""
    declared = has_capability(getattr(ctx.session, "declared_capabilities", None), TASK_CAPABILITY)
    if not declared:
        return tools.handle_call(ctx, params, routed=True)
    support = entry.task_support or "forbidden"
    if params.get("task") is not None:
        if support == "forbidden":
            raise MethodNotFoundError(
                f"Tool {entry.name} does not support task-augmented execution (its execution.taskSupport "
                f"is 'forbidden'): call it without 'task'", {"name": entry.name, "taskSupport": support})
        return registry.start_tool_call(tools, ctx, params, entry)
    if support == "required":
        raise MethodNotFoundError(
            f"Task augmentation required for tools/call requests of tool {entry.name} (its "
            f"execution.taskSupport is 'required'): add 'task' to the params",
            {"name": entry.name, "taskSupport": support})
    return tools.handle_call(ctx, params, routed=True)


class Tasks(Registry):
    """The tasks of one server, per session (rules 5 to 9), and their handlers.

    ``owner`` is the server (its ``page_size`` paginates ``tasks/list``). The
    limits are attributes, read at each use: ``default_ttl``, ``max_ttl``
    (milliseconds), ``max_tasks`` (per session) and ``poll_interval`` (ms,
    None to suggest none); ``clock`` and ``wall`` as in ``Registry`` (common.py).
    A 2026-07-28 ``tasks/get`` or ``tasks/cancel`` (``ctx.era``) goes to ``ext``,
    the tasks extension's registry (server/tasks/extension.py).
    """
    default_ttl = 3_600_000                # ms a task is kept when the request names no ttl (one hour)
    max_ttl = 86_400_000                   # the most we keep a task, whatever was asked (one day)
    max_tasks = 100                        # tasks one session may hold at once
    poll_interval: int | None = 1_000      # ms: the pollInterval we suggest

    def __init__(self, owner):
        super().__init__()
        self.owner = owner
        self._sessions: dict = {}                # session -> _SessionTasks
        self.ext = ExtTasks(owner)

    def __len__(self) -> int:
        """How many tasks are held, over all sessions."""
        with self._lock:
            return sum(len(s.tasks) for s in self._sessions.values())

    # ------------------------------------------------------------------ creation (rule 3)
    def start_tool_call(self, tools, ctx, params: dict, entry) -> dict:
        """Create a task for this ``tools/call``, answer ``CreateTaskResult``, start the tool."""
        ttl = self._ttl(params.get("task"))
        session = ctx.session
        task = _Task(new_task_id(), entry.name, self.clock(), self.wall(), ttl, session=session)
        task_context(TaskContextMixin, ctx, task, self)
        self._store(session)                    # expiry first: it may make room (rule 8)
        with self._lock:
            if session.closed:
                raise RequestCancelled("the session closed before the task started")
            store = self._sessions.setdefault(session, _SessionTasks())
            if not self._add_locked(store.tasks, task):
                raise InternalError(f"Too many tasks: this session already has {self.max_tasks} tasks working "
                                    f"(the limit); wait for one to finish or cancel one with tasks/cancel",
                                    {"maxTasks": self.max_tasks})
            answer = {"task": task.wire(self.poll_interval)}
        log.debug("task %s created for tool %s (ttl %d ms)", task.id, entry.name, ttl)
        thread = threading.Thread(target=self._run, args=(task, tools), name=TASK_THREAD_NAME, daemon=True)
        task.thread = thread
        # Rule 3: write the answer first, so on an ordered transport (stdio) nothing of the
        # task (progress, status, a request to the client) reaches the client before it
        # knows the task id. The session then sends nothing for this request: a handler
        # raising RequestCancelled gets no response (session/__init__.py rule 3).
        try:
            session._send(Response(ctx.request_id, answer), ctx.request_id)
        except (SessionError, OSError):
            self._cancel(task, "The session closed before the task started.")
            raise RequestCancelled("the session closed before the task started") from None
        with self._lock:
            if task.status == "working":            # not cancelled meanwhile (session closed, expired)
                thread.start()
            else:
                task.ctx.finished = True
        raise RequestCancelled(f"tools/call {ctx.request_id!r} was answered with task {task.id}")

    def _ttl(self, task_params) -> int:
        """The TTL we grant (rule 8). Spec: schema TaskMetadata (``ttl``: integer ms)."""
        if not isinstance(task_params, dict):
            raise InvalidParamsError("tools/call: task must be an object (TaskMetadata)", {"task": task_params})
        ttl = task_params.get("ttl")
        if ttl is None:
            return min(self.default_ttl, self.max_ttl)
        if isinstance(ttl, bool) or not isinstance(ttl, int) or ttl < 0:
            raise InvalidParamsError(f"tools/call: task.ttl must be a non-negative integer (milliseconds), "
                                     f"not {ttl!r}", {"ttl": ttl})
        return min(ttl, self.max_ttl)

    def _run(self, task: _Task, tools) -> None:
        """Thread ``mcp-server-task``: run the tool as ``tools/call`` would, keep what it answers:
        completed or failed (rule 4), unless the task is terminal already (cancelled)."""
        result, error = run_tool(task, tools, task.ctx.params)
        with task.sending, self._lock:          # after any progress being sent (rule 4)
            if task.status in TERMINAL:
                return
            task.result, task.error = result, error
            if error is not None:
                self._set_locked(task, "failed", f"Tool execution failed: {error['message']} ({error['code']})")
            elif result is None:                  # cancelled under us without a status change
                self._set_locked(task, "cancelled", "The task was cancelled.")
            elif result.get("isError"):
                self._set_locked(task, "failed", _failure_message(result))
            else:
                self._set_locked(task, "completed", None)
            changed = [(task, task.wire(self.poll_interval))]
        log.debug("task %s %s", task.id, task.status)
        self._send_status(changed)

    # ------------------------------------------------------------------ status changes (rule 4)
    def _waiting(self, task: _Task, method: str, delta: int) -> None:
        """A request to the client starts (+1) or ends (-1): ``input_required`` while any is open."""
        with self._lock:
            task.waiting += delta
            if task.status == "working" and task.waiting > 0:
                self._set_locked(task, "input_required", f"Waiting for the client to answer {method}.")
            elif task.status == "input_required" and task.waiting == 0:
                self._set_locked(task, "working", None)
            else:
                return
            changed = [(task, task.wire(self.poll_interval))]
        self._send_status(changed)

    def _cancel(self, task: _Task, message: str) -> bool:
        """Move a non-terminal task to ``cancelled`` (first), then stop its code: set its
        ``cancelled`` and settle its requests to the client. False when already terminal."""
        with task.sending, self._lock:          # after any progress being sent (rule 4)
            if not self._set_locked(task, "cancelled", message):
                return False
            changed = [(task, task.wire(self.poll_interval))]
        self._stop(task)
        self._send_status(changed)
        return True

    @staticmethod
    def _stop(task: _Task) -> None:
        task.ctx._cancel()
        task.ctx._abandon_nested()

    def _send_status(self, changed: list) -> None:
        """``notifications/tasks/status`` for each ``(task, wire)``; outside the lock.
        Spec: basic/utilities/tasks#task-status-notification (no related-task ``_meta``).
        Every change is of a task its session still holds: a task leaves the table only
        once terminal (expiry and closing cancel it first; room is made from terminal
        tasks), and a terminal status never changes."""
        for task, wire in changed:
            with contextlib.suppress(SessionError):     # the session closed: nobody to tell
                task.session.notify("notifications/tasks/status", wire)

    # ------------------------------------------------------------------ bounds (rule 8)
    def _store(self, session) -> _SessionTasks:
        """The session's tasks, after expiry: those whose TTL elapsed are removed, a working
        one moved to ``cancelled``, its code stopped and the client told (after any progress
        being sent: rule 4). A session without tasks gets an empty store, not kept."""
        with self._lock:
            store = self._sessions.get(session) or _SessionTasks()
            expired = self._expire_locked(store.tasks, store.expired, "The task expired: its ttl of {ttl} ms elapsed.")
            changed = [(task, task.wire(self.poll_interval)) for task in expired]
        for task in expired:
            self._stop(task)
            with task.sending:
                pass
        self._send_status(changed)
        return store

    # ------------------------------------------------------------------ handlers (rules 5 to 7)
    def _find(self, session, params: dict, method: str) -> _Task:
        """Rule 6: the task named by ``taskId`` among this session's tasks, or -32602.
        Spec: the ``taskId`` param is the source of truth; a related-task ``_meta`` is ignored."""
        task_id = params.get("taskId")
        if not isinstance(task_id, str):
            raise InvalidParamsError(f"{method}: taskId must be a string", {"taskId": task_id})
        store = self._store(session)
        task = store.tasks.get(task_id)          # one dict read: atomic, no lock needed
        if task is None:
            reason = "Task has expired" if task_id in store.expired else "Task not found"
            verb = "cancel" if method == "tasks/cancel" else "retrieve"
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
        status, result, error = task.status, task.result, task.error      # terminal: these change no more
        if task.expired:
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
            numbered = [(task.serial, task.wire(self.poll_interval)) for task in store.tasks.values()]
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

    # ------------------------------------------------------------------ closing (rule 9)
    def session_closed(self, session) -> None:
        """Cancel and forget ``session``'s tasks; wait for their threads (bounded)."""
        self.ext.closed(session)                    # server/tasks/extension.py rule 10
        with self._lock:
            tasks = list(self._sessions.pop(session, _SessionTasks()).tasks.values())
            for task in tasks:
                self._set_locked(task, "cancelled", "The session closed.")
        for task in tasks:
            self._stop(task)
        join_threads(tasks, "session")


def _failure_message(result: dict) -> str:
    """``statusMessage`` of a task whose tool result has ``isError`` (Spec:
    basic/utilities/tasks#task-execution-errors: SHOULD give diagnostic information)."""
    for block in result.get("content") or ():
        if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str):
            text = block["text"]
            return "Tool execution failed: " + (text if len(text) <= 500 else text[:497] + "...")
    return "Tool execution failed."
