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
   declared). Tool-level negotiation (#tool-level-negotiation: clients MUST
   NOT call a tool as a task when its ``execution.taskSupport`` is absent or
   ``"forbidden"``, and MUST call it as a task when it is ``"required"``) is
   checked locally, before the approval hook and again for a name it
   changes: ``call_tool_as_task`` of the first and ``call_tool`` of the
   second raise ``CapabilityNotSupported`` and nothing is sent. The listing
   decides: on a server that declared ``tasks.requests.tools.call``, a call
   made while no tool is cached lists the tools first (``list_tools``; the
   cache then holds them until ``tools/list_changed``, so later calls list
   nothing; first calls racing on several threads may each list), so the
   first call of a script is checked too. A tool the listing does not name is sent
   as asked: the server answers for it (unknown tool, or -32601). Servers
   that did not declare the capability cost nothing more. The approval hook
   sees the call as it sees ``call_tool``'s.
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
5. Progress (#task-progress-notifications: the request's ``progressToken``
   stays valid for the task's whole lifetime): with ``on_progress``, the
   token is a fresh one the session listens to (``Session.listen_progress``)
   *before* the request is sent, so progress read before or after the
   ``CreateTaskResult`` reaches the callback in wire order, on the notify
   thread. The listener is dropped when the client learns the task is
   terminal (a status notification, ``get_task``, ``task_result``,
   ``cancel_task``; an unknown-task -32602 too: the task is gone) or the
   session closes. A terminal status that arrives before the
   ``CreateTaskResult`` is handled is remembered while creations are in flight.
6. A server request related to a task (its ``params._meta`` carries
   ``io.modelcontextprotocol/related-task``: an elicitation, a sampling request
   or ``roots/list`` a task's code sends) is answered with a result carrying
   the same related-task ``_meta`` (``answer_related_task``, applied by
   ``Client._handle_request`` to every answer). Spec:
   #associating-task-related-messages (all requests, notifications and
   responses related to a task MUST carry it; "an elicitation that a
   task-augmented tool call depends on MUST share the same related task ID").
   An error answer has no ``_meta`` to carry it (schema ``Error``).
"""
from __future__ import annotations

from typing import Callable

from mcp_ref import types
from mcp_ref.protocol import lifecycle
from mcp_ref.client.client_requests import all_pages
from mcp_ref.client.state import ClientState
from mcp_ref.errors import CapabilityNotSupported, InternalError, InvalidParamsError, McpError, get_logger
from mcp_ref.session import Session
from mcp_ref.session.outbound import CancelToken
from mcp_ref.types import RELATED_TASK_KEY, TERMINAL_STATUSES, CallToolResult, Task

log = get_logger("mcp_ref.client")

__all__ = ["TaskRequests", "TASKS_SINCE", "answer_related_task"]

TASKS_SINCE = "2025-11-25"
_REMEMBERED = 1024          # task id -> tool name, for output checks (the oldest are forgotten)


def answer_related_task(params: dict | None, result):
    """Rule 6: ``result`` (copied) with the related-task ``_meta`` of the request's
    ``params``, when they carry a well-formed one (``{"taskId": str}``); else ``result``."""
    meta = params.get("_meta") if isinstance(params, dict) else None
    related = meta.get(RELATED_TASK_KEY) if isinstance(meta, dict) else None
    if not (isinstance(related, dict) and isinstance(related.get("taskId"), str) and isinstance(result, dict)):
        return result
    own = result.get("_meta")
    return {**result, "_meta": {**(own if isinstance(own, dict) else {}),
                                RELATED_TASK_KEY: {"taskId": related["taskId"]}}}


def _remember(table: dict, key, value):
    """``table[key] = value``, forgetting the oldest entry past ``_REMEMBERED``; returns
    the value forgotten (None when none was)."""
    table[key] = value
    return table.pop(next(iter(table))) if len(table) > _REMEMBERED else None


class TaskRequests(ClientState):
    """Task requests. Needs ``_request``, ``_require``, ``_live_session``, ``_lock``,
    ``_tool_cache``, ``list_tools``, ``_check_output``, ``_notification_handlers``,
    ``on_approve``, ``server_info``, ``server_capabilities``, ``protocol_version``
    and the tables below (set by ``Client``)."""

    _task_tools: dict                         # task id -> tool name (rule 3)
    _task_progress: dict                      # task id -> progress token (rule 5), of _progress_session
    _ended: dict                              # task ids seen terminal while creations are in flight (rule 5)
    _progress_session: Session | None = None
    _creating = 0                             # call_tool_as_task(on_progress=) awaiting CreateTaskResult

    def _require_tasks(self, path: str, what: str) -> None:
        if not lifecycle.at_least(self.protocol_version, TASKS_SINCE):
            raise CapabilityNotSupported(f"{what} needs protocol revision {TASKS_SINCE} or later; this "
                                         f"session speaks {self.protocol_version or '(not connected)'}")
        self._require(path, what)

    def call_tool_as_task(self, name: str, arguments: dict | None = None, *, ttl: int | None = None,
                          timeout: float | None = None, on_progress: Callable | None = None,
                          cancel: CancelToken | None = None) -> Task:
        """Start a tool call as a task (rule 1); returns the ``Task`` (status ``working``)
        at once. ``ttl``: how long, in milliseconds, the server should keep the task and its
        result (it may grant less: see ``Task.ttl``). Follow it with ``task_result``,
        ``get_task`` or ``on_task_status``. ``on_progress(progress, total, message)`` gets the
        task's progress until it ends (rule 5). Spec: basic/utilities/tasks#creating-tasks."""
        self._require_tasks("tasks.requests.tools.call", "tools/call as a task")
        if ttl is not None and (isinstance(ttl, bool) or not isinstance(ttl, int) or ttl < 0):
            raise ValueError(f"ttl is a whole number of milliseconds >= 0, not {ttl!r}")
        # Tool-level negotiation (rule 1), approval and input check, as for call_tool.
        params = self._tool_call_params(name, arguments, as_task=True)
        name = params["name"]                                  # the approval hook may have changed it
        params["task"] = {} if ttl is None else {"ttl": ttl}
        session: Session | None = None
        token: int | str | None = None
        if on_progress is not None:          # rule 5: listen before sending
            self._notification_handlers.setdefault("notifications/tasks/status", self._progress_on_status)
            session = self._live_session()
            token = session.listen_progress(on_progress)
            params["_meta"] = {"progressToken": token}
            with self._lock:
                self._creating += 1
        try:
            result = self._request("tools/call", params, timeout=timeout, cancel=cancel)
            if not isinstance(result.get("task"), dict):
                raise InternalError(f"the server answered a task-augmented tools/call of {name!r} without a "
                                    f"task (CreateTaskResult expected)", {"result": result})
            task = types.CreateTaskResult.from_dict(result).task
        except BaseException:
            if session is not None:
                self._progress_created(session, token)
            raise
        with self._lock:
            _remember(self._task_tools, task.task_id, name)
        if session is not None:
            self._progress_created(session, token, task.task_id, task.status)
        return task

    def _check_task_support(self, name: str, as_task: bool) -> None:
        """Rule 1: refuse locally a call the tool's listed ``execution.taskSupport`` forbids
        (``call_tool`` and ``call_tool_as_task`` call this before sending, when the server
        offers tasks: elsewhere every tool is an ordinary one). The tools are listed first
        when none is cached; a tool the listing does not name is not checked."""
        tool = self._tool_cache.get(name)         # one dict read: atomic, no lock needed
        if tool is None and not self._tool_cache and lifecycle.has_capability(self.server_capabilities, "tools"):
            try:
                self.list_tools()
            except McpError as exc:             # a server that cannot list: it answers the call itself
                log.debug("tools/list before calling %r failed: %s", name, exc)
                return
            tool = self._tool_cache.get(name)
        if tool is None:
            return
        support = tool.execution.task_support if tool.execution is not None else None
        if as_task and support not in ("optional", "required"):
            raise CapabilityNotSupported(f"tool {name!r} does not support task-augmented execution "
                                         f"(execution.taskSupport is {support or 'absent'!r}); use call_tool; "
                                         f"nothing was sent")
        if not as_task and support == "required":
            raise CapabilityNotSupported(f"tool {name!r} must be called as a task (execution.taskSupport is "
                                         f"'required'); use call_tool_as_task; nothing was sent")

    def _progress_created(self, session: Session, token, task_id=None, status=None) -> None:
        """After a creation: keep ``task_id``'s progress listener (rule 5), or stop it when the
        creation failed (no ``task_id``) or the task already ended."""
        with self._lock:
            self._creating -= 1
            keep = task_id is not None and status not in TERMINAL_STATUSES and self._ended.pop(task_id, None) is None
            if not self._creating:
                self._ended.clear()
            if keep:
                if session is not self._progress_session:      # a respawned server's: the old tokens are gone
                    self._task_progress.clear()
                    self._progress_session = session
                token = _remember(self._task_progress, task_id, token)     # the oldest listener forgotten, if any
        if token is not None:
            session.stop_listening(token)

    def _task_ended(self, task_id) -> None:
        """The task is terminal (or gone): drop its progress listener (rule 5)."""
        with self._lock:
            token = self._task_progress.pop(task_id, None)
            session = self._progress_session
            if token is None and self._creating:
                _remember(self._ended, task_id, True)
        if token is not None and session is not None:
            session.stop_listening(token)

    def _progress_on_status(self, params: dict) -> None:
        """``notifications/tasks/status`` (notify thread, before the listeners of rule 4)."""
        task_id = params.get("taskId")
        if isinstance(task_id, str) and params.get("status") in TERMINAL_STATUSES:
            self._task_ended(task_id)

    def _task_request(self, method: str, task_id: str, gone: type[McpError], **options) -> dict:
        """``method`` about ``task_id``; a ``gone`` error (unknown, expired, terminal or failed)
        means the task is over: its progress listener is dropped (rule 5)."""
        try:
            return self._request(method, {"taskId": task_id}, **options)
        except gone:
            self._task_ended(task_id)
            raise

    def get_task(self, task_id: str, *, timeout: float | None = None, cancel: CancelToken | None = None) -> Task:
        """The task's current state (``tasks/get``); an unknown or expired id raises
        ``InvalidParamsError``. Spec: basic/utilities/tasks#getting-tasks."""
        self._require_tasks("tasks", "tasks/get")
        task = types.Task.from_dict(self._task_request("tasks/get", task_id, InvalidParamsError, timeout=timeout,
                                                       cancel=cancel))
        if task.status in TERMINAL_STATUSES:
            self._task_ended(task_id)
        return task

    def task_result(self, task_id: str, *, timeout: float | None = None,
                    cancel: CancelToken | None = None) -> CallToolResult:
        """The tool's result once the task is terminal (``tasks/result``, rule 3); ``timeout``
        as for any request (None: the client's default). A cancelled task, an unknown id and
        a task that failed with a JSON-RPC error raise ``McpError``.
        Spec: basic/utilities/tasks#retrieving-task-results."""
        self._require_tasks("tasks", "tasks/result")
        result = types.CallToolResult.from_dict(self._task_request("tasks/result", task_id, McpError,
                                                                   timeout=timeout, cancel=cancel))
        self._task_ended(task_id)
        name = self._task_tools.get(task_id)
        if name is not None:
            self._check_output(name, result)     # client_requests.py rule 4
        return result

    def list_tasks_page(self, cursor: str | None = None, *,
                        cancel: CancelToken | None = None) -> tuple[list[types.Task], str | None]:
        """One page of this session's tasks: ``(tasks, next_cursor)``.
        Spec: basic/utilities/tasks#listing-tasks."""
        self._require_tasks("tasks.list", "tasks/list")
        return self._page("tasks/list", cursor, cancel, "tasks", types.Task.from_dict)

    def list_tasks(self, *, cancel: CancelToken | None = None) -> list[types.Task]:
        """Every task of this session, following ``nextCursor`` to the last page."""
        return all_pages(lambda cursor: self.list_tasks_page(cursor, cancel=cancel), self.max_pages, "tasks/list")

    def cancel_task(self, task_id: str, *, cancel: CancelToken | None = None) -> Task:
        """Cancel a task (``tasks/cancel``); returns it, ``cancelled``. A task already
        terminal raises ``InvalidParamsError``. Spec: basic/utilities/tasks#cancelling-tasks."""
        self._require_tasks("tasks.cancel", "tasks/cancel")
        task = types.Task.from_dict(self._task_request("tasks/cancel", task_id, InvalidParamsError, cancel=cancel))
        self._task_ended(task_id)
        return task
