"""What the tasks of both eras share: the task record and its status changes, a
session's tasks, expiry and the bound on how many are held, task ids and
timestamps, the thread name, the context a task's tool gets (``task_context``),
running that tool (``run_tool``) and joining the threads of closed tasks
(server/tasks/legacy.py and extension.py use them; neither imports the other
for these).

Spec: basic/utilities/tasks (2025-11-25); the tasks extension of 2026-07-28.
"""
from __future__ import annotations

import threading
import time
from collections import OrderedDict
from typing import Any

from secrets import token_urlsafe
from mcp_ref.errors import INTERNAL_ERROR, McpError, SessionError, get_logger
from mcp_ref.jsonrpc.messages import Request
from mcp_ref.server.features import next_serial
from mcp_ref.server.modern.mrtr import MissingCapability

log = get_logger("mcp_ref.server")

__all__ = ["TASK_THREAD_NAME", "TERMINAL", "new_task_id", "iso_time"]

TASK_THREAD_NAME = "mcp-server-task"
TERMINAL = frozenset(("completed", "failed", "cancelled"))
EXPIRED_MEMORY = 256           # ids of expired tasks remembered (per store), for the better message
JOIN_TIMEOUT = 2.0             # s: how long closing waits for its task threads, in all


def new_task_id() -> str:
    """legacy.py rule 7: a fresh task id, 128 bits from the OS's CSPRNG as URL-safe base64 (22
    characters; ``secrets``). Spec: #task-id-requirements (unique among the receiver's tasks),
    #task-isolation-and-access-control (cryptographically secure, enough entropy to prevent guessing)."""
    return token_urlsafe(16)


def iso_time(t: float) -> str:
    """An RFC 3339 UTC timestamp with milliseconds, e.g. ``2025-11-25T10:30:00.123Z``."""
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + f".{int(t % 1 * 1000):03d}Z"


class _Task:
    """One task's record, of either era. Fields change under its registry's lock; ``done`` is
    set once the status is terminal (or the task was removed). A 2025-11-25 task belongs to a
    ``session``; one of the extension to a ``subject`` and an ``owner`` (extension.py rules 9, 10)."""

    __slots__ = ("id", "session", "subject", "owner", "serial", "tool", "status", "message", "created",
                 "updated", "ttl", "expires", "result", "error", "done", "ctx", "thread", "waiting", "expired",
                 "sending", "asks", "answers")

    def __init__(self, task_id: str, tool: str, now: float, wall: float, ttl: int, *, session: Any = None,
                 subject: Any = None, owner: Any = None):
        self.id, self.tool = task_id, tool
        self.session, self.subject, self.owner = session, subject, owner
        self.serial = next_serial()
        self.status: str = "working"
        self.message: str | None = None
        self.created = self.updated = iso_time(wall)
        self.ttl = ttl
        self.expires = now + ttl / 1000.0
        self.result: dict | None = None          # the tools/call result dict
        self.error: dict | None = None           # the JSON-RPC error object (McpError.to_error)
        self.done = threading.Event()
        self.ctx: Any = None                     # the task's Context (tasks/context.py, extension.py)
        self.thread: threading.Thread | None = None
        self.waiting = 0                         # requests to the client in flight (input_required)
        self.expired = False
        self.sending = threading.Lock()          # held while progress is sent (legacy.py rule 4)
        self.asks: dict = {}                     # extension: outstanding key -> {"method", "params"} (rule 5)
        self.answers: dict = {}                  # extension: key -> the client's answer, until the tool takes it

    def wire(self, poll_interval: int | None, *, ext: bool = False, detailed: bool = False) -> dict:
        """The ``Task`` object (schema Task; the extension's names its ``ttlMs`` and
        ``pollIntervalMs``), or with ``detailed`` the extension's ``DetailedTask`` (its rule 4);
        call under the lock for a consistent snapshot."""
        task = {"taskId": self.id, "status": self.status, "createdAt": self.created,
                "lastUpdatedAt": self.updated, "ttlMs" if ext else "ttl": self.ttl}
        if self.message is not None:
            task["statusMessage"] = self.message
        if poll_interval is not None:
            task["pollIntervalMs" if ext else "pollInterval"] = poll_interval
        if detailed:
            if self.status == "input_required":
                task["inputRequests"] = {key: dict(request) for key, request in self.asks.items()}
            elif self.status == "completed":
                task["result"] = self.result
            elif self.status == "failed":
                task["error"] = self.error
        return task


class _SessionTasks:
    """The tasks of one 2025-11-25 session, in creation order, and the ids that expired lately."""
    __slots__ = ("tasks", "expired")

    def __init__(self) -> None:
        self.tasks: dict = {}
        self.expired: OrderedDict = OrderedDict()


class Registry:
    """What the registries of both eras share: the lock (a condition, that waiting threads
    may be woken), the clocks, status changes, expiry and room. ``clock`` (monotonic
    seconds, for expiry) and ``wall`` (epoch seconds, for timestamps) may be replaced, e.g.
    by tests. Each era's registry sets its limits as class attributes (an instance may
    override them), ``max_tasks`` among them."""
    max_tasks: int

    def __init__(self) -> None:
        self.clock, self.wall = time.monotonic, time.time
        self._lock = threading.Condition()

    def _set_locked(self, task: _Task, status: str, message: str | None) -> bool:
        """Change a non-terminal task's status (a terminal one never changes); False when
        nothing changed."""
        if task.status in TERMINAL or task.status == status:
            return False
        task.status, task.message, task.updated = status, message, iso_time(self.wall())
        if status in TERMINAL:
            task.done.set()
        return True

    def _expire_locked(self, tasks: dict, expired: OrderedDict, message: str) -> list:
        """Remove from ``tasks`` those whose TTL elapsed, remembering their ids in ``expired``;
        a working one is moved to ``cancelled`` with ``message`` (``{ttl}``: its ttl).
        Returns those cancelled."""
        now = self.clock()
        cancelled = []
        for task in [t for t in tasks.values() if t.expires <= now]:
            del tasks[task.id]
            expired[task.id] = True
            if len(expired) > EXPIRED_MEMORY:
                expired.popitem(last=False)
            task.expired = True
            if self._set_locked(task, "cancelled", message.format(ttl=task.ttl)):
                cancelled.append(task)
        return cancelled

    def _add_locked(self, tasks: dict, task: _Task) -> bool:
        """Hold ``task`` in ``tasks``, when full dropping the oldest terminal task to make
        room; False when every task is still working (the caller refuses it)."""
        if len(tasks) >= self.max_tasks:
            oldest = next((t for t in tasks.values() if t.status in TERMINAL), None)
            if oldest is None:
                return False
            del tasks[oldest.id]
        tasks[task.id] = task
        return True


def join_threads(tasks: list, closed: str) -> None:
    """Wait for the threads of ``tasks`` (cancelled as their ``closed`` closed), at most
    ``JOIN_TIMEOUT`` in all, as ``Session.close`` joins its own."""
    deadline = time.monotonic() + JOIN_TIMEOUT
    me = threading.current_thread()
    for task in tasks:
        thread = task.thread
        if thread is None or thread is me or thread.ident is None:
            continue
        thread.join(max(0.0, deadline - time.monotonic()))
        if thread.is_alive():
            log.warning("task %s (tool %s) did not stop when its %s closed (the tool ignores ctx.cancelled)",
                        task.id, task.tool, closed)


_mixed: dict = {}                # (mixin, base) -> the class mixed (task_context)


def task_context(mixin: type, ctx, task: _Task, registry) -> Any:
    """The context ``task``'s code runs with, kept as ``task.ctx``: ``mixin`` (e.g.
    ``TaskContextMixin`` makes a ``TaskContext``) over the class of the request's context
    ``ctx``, made once per class. That class is the server's ``Context``, which
    ``features/`` may not import, so the task's context is mixed over whatever it is."""
    cls = _mixed.get((mixin, type(ctx)))
    if cls is None:
        cls = _mixed[mixin, type(ctx)] = type(mixin.__name__[:-len("Mixin")], (mixin, type(ctx)),
                                              {"__doc__": mixin.__doc__, "__module__": mixin.__module__})
    params = {key: value for key, value in ctx.params.items() if key != "task"}
    task.ctx = cls(ctx.session, Request(ctx.request_id, ctx.method, params))     # the tools/call, ``task`` left out
    task.ctx._task, task.ctx._registry, task.ctx.task_id = task, registry, task.id
    return task.ctx


def run_tool(task: _Task, tools, call: dict) -> tuple:
    """On the task's thread: run its tool as ``tools/call`` would. ``(result, error)``: the
    tools/call result, or the JSON-RPC error object (McpError.to_error); both None when the
    tool was cancelled or its session closed under it."""
    ctx = task.ctx
    try:
        return tools.handle_call(ctx, call, routed=True), None
    except SessionError:                       # RequestCancelled included
        return None, None
    except MissingCapability as missing:       # an ask the request's capabilities do not allow (extension)
        return None, missing.error().to_error()
    except McpError as exc:
        return None, exc.to_error()
    except Exception:                          # handle_call turns tool errors into results
        if not ctx.is_cancelled():             # a cancelled tool may stop by raising
            log.exception("task %s (tool %s) failed", task.id, task.tool)
        return None, {"code": INTERNAL_ERROR, "message": "Internal error"}
    finally:
        ctx.finished = True

