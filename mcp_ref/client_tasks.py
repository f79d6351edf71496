"""The client's task requests (revision 2025-11-25): a tool call run as a task,
``tasks/get``, ``tasks/result``, ``tasks/list`` and ``tasks/cancel``.

``Client`` inherits ``TaskRequests``; ``client.py``'s rules hold here too:
each public method sends exactly one wire method, written literally in its
body, and refuses locally (``CapabilityNotSupported``, nothing sent) when the
server did not declare what it needs.

Rules (Spec: basic/utilities/tasks):

1. ``call_tool_as_task`` needs ``tasks.requests.tools.call`` in the server's
   capabilities, which only a 2025-11-25 server can declare
   (#capability-negotiation: requestors SHOULD only augment what the receiver
   declared). A tool known from ``list_tools`` whose ``execution.taskSupport``
   is absent or ``"forbidden"`` is refused locally as well
   (#tool-level-negotiation: clients MUST NOT). The approval hook sees the
   call as it sees ``call_tool``'s.
2. ``get_task`` and ``task_result`` need ``tasks``; ``list_tasks`` needs
   ``tasks.list``; ``cancel_task`` needs ``tasks.cancel``.
3. ``task_result`` blocks until the task is terminal (the server holds the
   answer); its ``timeout`` bounds the wait like any request's: on timeout
   the ``tasks/result`` request is cancelled, never the task. It returns the
   tool's ``CallToolResult`` (its ``meta`` keeps the related-task entry),
   checked against the tool's ``outputSchema`` as ``call_tool``'s is; a task
   that failed with a JSON-RPC error raises that error (``McpError``).
4. ``notifications/tasks/status`` reaches ``on_task_status(Task)`` (a
   ``Client`` option) and ``client.on("notifications/tasks/status", fn)``
   (raw params). Servers need not send it (#task-notifications): poll with
   ``get_task`` (``Task.poll_interval``) or block in ``task_result``.
"""
from __future__ import annotations

from . import lifecycle, types
from .errors import ApprovalDenied, CapabilityNotSupported, InternalError

TYPE_CHECKING = False
if TYPE_CHECKING:          # names for annotations only
    from .types import CallToolResult, Task

__all__ = ["TaskRequests", "TASKS_SINCE"]

TASKS_SINCE = "2025-11-25"
_REMEMBERED = 1024          # task id -> tool name, for output checks (the oldest are forgotten)


class TaskRequests:
    """Task requests. Needs ``_request``, ``_require``, ``_lock``, ``_tool_cache``,
    ``_check_output``, ``on_approve``, ``server_info`` and ``protocol_version``
    (set by ``Client``)."""

    _task_tools: dict | None = None           # task id -> tool name (rule 3), made on first use

    def _require_tasks(self, path: str, what: str) -> None:
        if not lifecycle.at_least(self.protocol_version, TASKS_SINCE):
            raise CapabilityNotSupported(f"{what} needs protocol revision {TASKS_SINCE} or later; this "
                                         f"session speaks {self.protocol_version or '(not connected)'}")
        self._require(path, what)

    def call_tool_as_task(self, name: str, arguments: dict | None = None, *, ttl: int | None = None,
                          timeout: float | None = None) -> Task:
        """Start a tool call as a task (rule 1); returns the ``Task`` (status ``working``)
        at once. ``ttl``: how long, in milliseconds, the server should keep the task and its
        result (it may grant less: see ``Task.ttl``). Follow it with ``task_result``,
        ``get_task`` or ``on_task_status``. Spec: basic/utilities/tasks#creating-tasks."""
        self._require_tasks("tasks.requests.tools.call", "tools/call as a task")
        with self._lock:
            known = self._tool_cache.get(name)
        if known is not None:
            support = known.execution.task_support if known.execution is not None else None
            if support not in ("optional", "required"):
                raise CapabilityNotSupported(f"tool {name!r} does not support task-augmented execution "
                                             f"(execution.taskSupport is {support or 'absent'!r}); use call_tool")
        if ttl is not None and (isinstance(ttl, bool) or not isinstance(ttl, int) or ttl < 0):
            raise ValueError(f"ttl is a whole number of milliseconds >= 0, not {ttl!r}")
        if self.on_approve is not None:      # human in the loop (approval.py), as for call_tool
            from .approval import Approval, Denied, ToolCall, decide
            try:
                call = decide(self.on_approve, Approval("tool_call", "request", ToolCall(name, dict(arguments or {})),
                                                        server_info=self.server_info))
            except Denied as denied:
                raise ApprovalDenied(f"tool call {name!r} denied: {denied.reason}") from None
            name, arguments = call.name, call.arguments
        params = {"name": name, "arguments": arguments or {}, "task": {} if ttl is None else {"ttl": ttl}}
        result = self._request("tools/call", params, timeout=timeout)
        if not isinstance(result.get("task"), dict):
            raise InternalError(f"the server answered a task-augmented tools/call of {name!r} without a task "
                                f"(CreateTaskResult expected)", {"result": result})
        task = types.CreateTaskResult.from_dict(result).task
        with self._lock:
            remembered = self._task_tools
            if remembered is None:
                remembered = self._task_tools = {}
            remembered[task.task_id] = name
            if len(remembered) > _REMEMBERED:
                del remembered[next(iter(remembered))]
        return task

    def get_task(self, task_id: str, *, timeout: float | None = None) -> Task:
        """The task's current state (``tasks/get``); an unknown or expired id raises
        ``InvalidParamsError``. Spec: basic/utilities/tasks#getting-tasks."""
        self._require_tasks("tasks", "tasks/get")
        return types.Task.from_dict(self._request("tasks/get", {"taskId": task_id}, timeout=timeout))

    def task_result(self, task_id: str, *, timeout: float | None = None) -> CallToolResult:
        """The tool's result once the task is terminal (``tasks/result``, rule 3); ``timeout``
        as for any request (None: the client's default). A cancelled task, an unknown id and
        a task that failed with a JSON-RPC error raise ``McpError``.
        Spec: basic/utilities/tasks#retrieving-task-results."""
        self._require_tasks("tasks", "tasks/result")
        result = types.CallToolResult.from_dict(self._request("tasks/result", {"taskId": task_id},
                                                              timeout=timeout))
        with self._lock:
            name = (self._task_tools or {}).get(task_id)
        if name is not None:
            self._check_output(name, result)     # client_requests.py rule 4
        return result

    def list_tasks_page(self, cursor: str | None = None) -> tuple:
        """One page of this session's tasks: ``(tasks, next_cursor)``.
        Spec: basic/utilities/tasks#listing-tasks."""
        self._require_tasks("tasks.list", "tasks/list")
        params = {"cursor": cursor} if cursor is not None else None
        result = self._request("tasks/list", params)
        return [types.Task.from_dict(t) for t in result.get("tasks", [])], result.get("nextCursor")

    def list_tasks(self) -> list:
        """Every task of this session, following ``nextCursor`` to the last page."""
        from .client_requests import all_pages
        return all_pages(self.list_tasks_page)

    def cancel_task(self, task_id: str) -> Task:
        """Cancel a task (``tasks/cancel``); returns it, ``cancelled``. A task already
        terminal raises ``InvalidParamsError``. Spec: basic/utilities/tasks#cancelling-tasks."""
        self._require_tasks("tasks.cancel", "tasks/cancel")
        return types.Task.from_dict(self._request("tasks/cancel", {"taskId": task_id}))
