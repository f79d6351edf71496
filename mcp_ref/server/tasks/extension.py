"""Tasks in the current revision (2026-07-28): the ``io.modelcontextprotocol/tasks`` extension.

2025-11-25 had tasks in the protocol itself (tasks.py). 2026-07-28 moved them
to an extension a client opts into on each request, and changed their shape:
the server alone decides to answer a ``tools/call`` with a task; the client
polls ``tasks/get`` (no blocking ``tasks/result``, no ``tasks/list``), answers
the task's questions with ``tasks/update``, and may cancel with ``tasks/cancel``.
Spec: the extension's specification, revision 2026-07-28, page ``tasks``
(extension ``io.modelcontextprotocol/tasks``, SEP-2663).

Rules:

1. Offer: ``server/discover`` names the extension (``extensions``) when a tool
   supports tasks (``task_support`` ``"optional"`` or ``"required"``;
   server/modern/serve.py ``told_capabilities``).
2. Creation, the server's choice: a modern ``tools/call`` of such a tool whose
   request declares the extension in its client capabilities is answered with
   a ``CreateTaskResult`` (``resultType: "task"``, the ``Task`` fields), once
   the task is registered (a ``tasks/get`` for it resolves); the tool then runs
   on a thread of its own. A request that does not declare the extension never
   gets one (MUST NOT): an ``"optional"`` tool runs as an ordinary call, a
   ``"required"`` one is refused with -32021 naming the extension in
   ``data.requiredCapabilities``. Multi round-trip before the task exists (an
   ``InputRequiredResult`` first, the task on the retry; the page's Task
   Creation section) is not offered: the task is made at once and its tool
   asks through ``tasks/update`` (spec_notes/tasks.md says why).
3. ``tasks/get``, ``tasks/update`` and ``tasks/cancel`` from a request that does
   not declare the extension → -32021 (MUST). An unknown ``taskId`` → -32602
   "Failed to retrieve task: Task not found" (or "... Task has expired").
4. ``tasks/get`` answers the ``DetailedTask`` of the moment: ``inputRequests``
   while ``input_required``, ``result`` when ``completed``, ``error`` when
   ``failed`` (``resultType`` ``"complete"``, added by protocol/modern.py rule 2).
5. Input: ``ctx.elicit``, ``ctx.sample`` and ``ctx.list_roots`` in a task's tool
   become input requests keyed as the tool names them (``key=``) or
   ``<kind>-<n>``, unique over the task's life (``DuplicateInputKey``, see
   server/modern/mrtr.py rule 2); ``ctx.gather`` makes several at once. The task is
   ``input_required`` while one is outstanding (``inputRequests`` lists those
   not answered yet) and the tool's thread waits for all the answers it asked
   for. ``tasks/update`` hands over the answers of outstanding keys and
   ignores any other key (SHOULD); it is acknowledged with an empty result.
6. ``tasks/cancel`` is acknowledged with an empty result; a working task
   becomes ``cancelled`` at once (terminal) and its tool sees
   ``ctx.cancelled``; cancelling a terminal task changes nothing.
7. Outcomes: the tool's result, ``isError`` or not, makes the task
   ``completed``; so does any other exception the tool raises (an ``isError``
   result, as in an ordinary call: a tool-level error). A JSON-RPC error it
   raises (an ``McpError``, e.g. ``InternalError`` or ``InvalidParamsError``
   from ``mcp_ref.errors``) makes it ``failed`` with that ``error`` (code,
   message, data) and a ``statusMessage``: the task's context passes it through
   ``Tools.handle_call`` (``json_rpc_errors_pass``, tools.py rule 3; ``ExtTaskContextMixin``). A terminal
   status never changes. Progress and log messages are not sent for a task (the
   extension supports neither).
8. ``notifications/tasks``: a ``subscriptions/listen`` may name ``taskIds``
   (-32021 without the extension); we agree to the ids of tasks its caller
   may see, and each status change of those tasks is sent with the full
   ``DetailedTask`` (server/modern/serve.py rule 6).
9. Bounds and isolation: the era has no sessions, so the task id (128 random
   bits) is what grants access; with authorization a task also belongs to
   its token's subject (any other caller gets "Task not found"). A task lives
   ``ttl_ms`` from creation; an expired task is cancelled and forgotten on the
   next access (its id still answers "Task has expired" for a while). At most
   ``max_tasks`` are held: when full, the oldest terminal one makes room, else
   -32603.

10. Lifetime: a task belongs to the connection whose request made it (stdio,
    an in-memory pair) and is cancelled when that connection closes, its thread
    joined (bounded): the client could not poll it any more. A request served
    without a connection of its own (Streamable HTTP of 2026-07-28) leaves the
    task to its transport's ``task_owner``, the HTTP server, which cancels them
    all when it shuts down (``closed``).

The registry's lock is held only to read and change task records; no user
code and no I/O runs under it.
"""
from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any, Callable

from mcp_ref.protocol import modern
from mcp_ref.errors import (CapabilityNotSupported, InternalError, InvalidParamsError,
                            MissingRequiredClientCapabilityError, RequestCancelled)
from mcp_ref.server.context import INPUT_KINDS as KINDS
from mcp_ref.server.modern.mrtr import InputRequired
from mcp_ref.server.tasks.common import (TASK_THREAD_NAME, TERMINAL, Registry, _Task, join_threads, new_task_id,
                                         run_tool, task_context)

__all__ = ["ExtTasks", "ExtTaskContextMixin", "declares", "missing_extension", "EXTENSION"]

EXTENSION = modern.TASKS_EXTENSION


def declares(ctx) -> bool:
    """Did this (modern) request declare the extension in its client capabilities?"""
    capabilities = ctx.era.capabilities if ctx.era is not None else None
    extensions = capabilities.get("extensions") if isinstance(capabilities, dict) else None
    return isinstance(extensions, dict) and isinstance(extensions.get(EXTENSION), dict)


def missing_extension(what: str) -> MissingRequiredClientCapabilityError:
    """Rules 2, 3 and 8: -32021 naming the extension."""
    return MissingRequiredClientCapabilityError(
        f"Missing required client capability: {what} needs the {EXTENSION} extension",
        {"requiredCapabilities": {"extensions": {EXTENSION: {}}}})


class ExtTasks(Registry):
    """The extension's tasks of one server. Limits are attributes read at each use:
    ``ttl_ms``, ``max_tasks``, ``poll_interval`` (ms, None to suggest none); ``clock``
    and ``wall`` may be replaced by tests."""
    # Read through an instance by the modern era's listen (server/modern/serve.py), which this module imports.
    declares, missing_extension = staticmethod(declares), staticmethod(missing_extension)
    ttl_ms = 3_600_000                  # rule 9: an hour
    poll_interval: int | None = 500     # ms we suggest clients wait between polls
    max_tasks = 1000

    def __init__(self, server):
        super().__init__()
        self.server = server
        self._tasks: dict = {}
        self._expired: OrderedDict = OrderedDict()       # expired ids still answered "Task has expired"

    def __len__(self) -> int:
        with self._lock:
            return len(self._tasks)

    # ------------------------------------------------------------------ creation (rule 2)
    def route(self, tools, ctx, params: dict, entry) -> dict:
        """For ``Tools.handle_call``: run a modern call of a task tool as a task, or not."""
        if entry.task_support not in ("optional", "required"):
            return tools.handle_call(ctx, params, routed=True)
        if not declares(ctx):
            if entry.task_support == "required":
                raise missing_extension(f"tool {entry.name!r} runs only as a task: it")
            return tools.handle_call(ctx, params, routed=True)
        task = _Task(new_task_id(), entry.name, self.clock(), self.wall(), self.ttl_ms, subject=ctx.subject,
                     owner=getattr(ctx.session.transport, "task_owner", None) or ctx.session)     # rule 10
        task_context(ExtTaskContextMixin, ctx, task, self).era = ctx.era
        call = {key: value for key, value in params.items() if key not in ("_meta", "task")}
        with self._lock:
            self._forget_expired_locked()
            if not self._add_locked(self._tasks, task):
                raise InternalError(f"Too many tasks: {self.max_tasks} are working (the limit); try again later",
                                    {"maxTasks": self.max_tasks})
            answer = task.wire(self.poll_interval, ext=True)
        thread = task.thread = threading.Thread(target=self._run, args=(task, tools, call),
                                                name=TASK_THREAD_NAME, daemon=True)
        thread.start()
        answer["resultType"] = "task"
        return answer

    def _run(self, task: _Task, tools, call: dict) -> None:
        """The task's thread: the tool, then its outcome (rule 7)."""
        result, error = run_tool(task, tools, call)
        with self._lock:
            if task.status in TERMINAL:            # cancelled or expired meanwhile (rule 7)
                return
            task.result, task.error = result, error
            if error is not None:
                self._set_locked(task, "failed", f"Tool execution failed: {error['message']}")
            elif result is not None:
                self._set_locked(task, "completed", None)
            else:
                self._set_locked(task, "cancelled", "The task was cancelled.")
            self._lock.notify_all()
        self._tell(task)

    # ------------------------------------------------------------------ the requests (rules 3 to 6)
    def handle_get(self, ctx, params: dict) -> dict:
        task = self._find(ctx, params, "tasks/get")
        with self._lock:
            return task.wire(self.poll_interval, ext=True, detailed=True)

    def handle_update(self, ctx, params: dict) -> dict:
        task = self._find(ctx, params, "tasks/update")
        responses = params.get("inputResponses")
        if not isinstance(responses, dict):
            raise InvalidParamsError("Invalid params: tasks/update needs inputResponses (an object)")
        with self._lock:
            taken = [key for key in responses if key in task.asks]
            for key in taken:
                if not isinstance(responses[key], dict):
                    raise InvalidParamsError(f"Invalid params: inputResponses[{key!r}] must be an object")
            for key in taken:
                task.answers[key] = responses[key]
                del task.asks[key]                  # answered: no longer in inputRequests
            changed = bool(taken) and not task.asks and self._set_locked(task, "working", None)
            self._lock.notify_all()                 # the tool's thread waits for its answers (ask)
        if changed:
            self._tell(task)
        return {}

    def handle_cancel(self, ctx, params: dict) -> dict:
        task = self._find(ctx, params, "tasks/cancel")
        self._cancel(task, "The task was cancelled by the client.")
        return {}

    def _find(self, ctx, params: dict, method: str) -> _Task:
        if not declares(ctx):
            raise missing_extension(method)
        task_id = params.get("taskId")
        if not isinstance(task_id, str):
            raise InvalidParamsError(f"Invalid params: {method} needs taskId (a string)")
        with self._lock:
            self._forget_expired_locked()
            task = self._tasks.get(task_id)
            if task is not None and task.subject == ctx.subject:
                return task
            reason = "Task has expired" if task_id in self._expired else "Task not found"
        raise InvalidParamsError(f"Failed to retrieve task: {reason}", {"taskId": task_id})

    # ------------------------------------------------------------------ input (rule 5)
    def ask(self, task: _Task, asks: dict) -> dict:
        """Called on the task's thread by its context: the client's answers to ``asks``
        (key -> (method, params), keyed by the context), all of them, by key."""
        with self._lock:
            for key, (method, params) in asks.items():
                request = {"method": method}
                if params is not None:
                    request["params"] = {k: v for k, v in params.items() if k != "elicitationId"}
                task.asks[key] = request
            changed = self._set_locked(task, "input_required", None)
        if changed:
            self._tell(task)
        with self._lock:
            while (any(key not in task.answers for key in asks) and task.status not in TERMINAL
                   and task.id in self._tasks):
                self._lock.wait(min(1.0, max(task.expires - self.clock(), 0.01)))
                self._forget_expired_locked()
            answers = {key: task.answers.pop(key) for key in asks if key in task.answers}
            for key in asks:
                task.asks.pop(key, None)
        if len(answers) < len(asks):
            raise RequestCancelled(f"task {task.id} ended while waiting for {', '.join(asks)}")
        return answers

    # ------------------------------------------------------------------ status, expiry, notices
    def _cancel(self, task: _Task, message: str) -> None:
        with self._lock:
            changed = self._set_locked(task, "cancelled", message)
            self._lock.notify_all()
        if changed:
            task.ctx._cancel()                       # the tool sees ctx.cancelled (rule 6)
            self._tell(task)

    def _forget_expired_locked(self) -> None:
        """Rule 9: expired tasks are forgotten, a working one cancelled and its tool told."""
        cancelled = self._expire_locked(self._tasks, self._expired, "The task expired.")
        for task in cancelled:
            task.ctx._cancel()
        if cancelled:                                # the asks of those cancelled wake; only then, as
            self._lock.notify_all()                  # ``ask`` calls this in its wait loop

    def _tell(self, task: _Task) -> None:
        """Rule 8: the new state to the listen streams that asked for this task."""
        from mcp_ref.server.modern.serve import broadcast
        with self._lock:
            params = task.wire(self.poll_interval, ext=True, detailed=True)
        broadcast(self.server, "notifications/tasks", params)

    def closed(self, owner) -> None:
        """Rule 10: cancel and forget the tasks of ``owner`` (a session, or an HTTP server
        shutting down); wait for their threads (bounded: common.join_threads)."""
        with self._lock:
            tasks = [task for task in self._tasks.values() if task.owner is owner]
            for task in tasks:
                del self._tasks[task.id]
                if self._set_locked(task, "cancelled", "The connection closed."):
                    task.ctx._cancel()
            self._lock.notify_all()
        join_threads(tasks, "connection")

    def visible(self, ctx, task_ids) -> list:
        """Rule 8: the ids among ``task_ids`` the caller may hear of."""
        with self._lock:
            return [i for i in dict.fromkeys(task_ids) if i in self._tasks and self._tasks[i].subject == ctx.subject]


class ExtTaskContextMixin:
    """The ``Context`` a task's tool runs with (rules 5 and 7), mixed over the class of the
    request's own context as for 2025-11-25 (``common.task_context``): its asks wait for
    ``tasks/update`` instead of ending the call, a ``gather``'s asks are the task's
    ``inputRequests`` together, progress and log messages are not sent, and a JSON-RPC
    error the tool raises fails the task. Spec: 2026-07-28 basic/patterns/mrtr#inputrequests."""
    _task: Any = None
    _registry: Any = None       # the server's ExtTasks
    # What the context class it is mixed over gives it (common.task_context).
    _gathering: bool
    _input_key: Callable[[str], str]
    _keyed: Callable[[str], Any]
    _replay = None              # gather's answers, key -> answer, while its asks run again
    json_rpc_errors_pass = True  # rule 7: an McpError the tool raises fails the task

    def request(self, method: str, params: dict | None = None, **options) -> dict:
        if method not in KINDS:
            raise CapabilityNotSupported(f"{method}: a task asks the client only for {', '.join(KINDS)}")
        if self._replay is not None:            # gather, second pass: the answer it waited for
            key, self._ask_key = self._ask_key, None
            return self._replay.pop(key)
        key = self._input_key(method)
        if self._gathering:                     # gather, first pass: collected, asked together
            raise InputRequired({key: (method, params)}, None)
        return self._registry.ask(self._task, {key: (method, params)})[key]

    def _ask_together(self, asks: dict, pending: dict, state) -> dict:
        """Rule 5: ``gather``'s asks are the task's ``inputRequests`` together; once all
        are answered each ask runs again and returns its answer (validated as usual)."""
        self._replay = self._registry.ask(self._task, pending)
        answers = {}
        try:
            for key, ask in asks.items():
                if key in pending:
                    with self._keyed(key):
                        answers[key] = ask()
        finally:
            self._replay = None
        return answers

    def notify(self, method: str, params: dict | None = None) -> None:
        """Nothing is sent: the extension has no progress or messages for a task."""

    def log(self, level, data, logger=None) -> bool:
        return False

