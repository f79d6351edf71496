"""The tasks extension of 2026-07-28 (``io.modelcontextprotocol/tasks``), the client's side.

A server of the current revision may answer a ``tools/call`` with a task
instead of a result, whenever the request declared the extension. The client
then polls the task to its end. ``call_tool`` does that for the caller: the
same call returns the same ``CallToolResult`` whether or not the server made a
task of it. Spec: the extension's specification, revision 2026-07-28, page
``tasks``; the server's side is server/tasks/extension.py.

Rules:

1. Every modern request declares the extension in its client capabilities
   (``extensions``; answers.py): this client handles a ``CreateTaskResult`` to
   any ``tools/call`` (MUST).
2. A ``CreateTaskResult`` (``resultType: "task"``) to another request is an
   invalid response: ``InternalError`` (MUST; client/modern/mrtr.py
   ``check_result_type``).
3. Following a task: ``tasks/get`` every ``pollIntervalMs`` the server
   suggests (SHOULD), kept within ``MIN_POLL``..``MAX_POLL`` seconds,
   ``DEFAULT_POLL`` when it suggests none, until the status is terminal:
   ``completed`` returns its ``result``; ``failed`` raises the ``McpError`` of
   its ``error``; ``cancelled`` raises ``RequestCancelled``.
4. ``input_required``: each entry of ``inputRequests`` is answered once, by
   the same callbacks, capability checks and approval hook as a server's
   request in the legacy era (MUST treat them alike), keys already answered
   are skipped on later polls (SHOULD deduplicate), and the answers go in one
   ``tasks/update``.
5. The call's ``timeout`` bounds the whole wait, and a ``CancelToken`` may end
   it: either way ``tasks/cancel`` is sent (best effort) and the caller gets
   ``RequestTimeout`` or ``RequestCancelled``.
6. Over Streamable HTTP, ``tasks/*`` carry the ``taskId`` in ``Mcp-Name``
   (transports/http/modern.py ``NAME_PARAM``).
"""
from __future__ import annotations

import contextlib
import time

from mcp_ref.errors import InvalidParamsError, McpError, RequestCancelled, RequestTimeout, SessionError
from mcp_ref.client.modern.mrtr import read_input_request

__all__ = ["follow_task", "TERMINAL", "MIN_POLL", "MAX_POLL", "DEFAULT_POLL"]

TERMINAL = ("completed", "failed", "cancelled")
MIN_POLL = 0.01          # s: the least we wait between polls, whatever the server says
MAX_POLL = 5.0           # s: the most (a long hint would outlast most timeouts)
DEFAULT_POLL = 0.2       # s: when the server suggests nothing


def read_task(data) -> dict:
    """A ``Task`` as the server sent it, checked (rule 3)."""
    if not isinstance(data, dict) or not isinstance(data.get("taskId"), str) \
            or data.get("status") not in TERMINAL + ("working", "input_required"):
        raise InvalidParamsError("a task needs a taskId string and a known status", data)
    return data


def _interval(task: dict) -> float:
    hint = task.get("pollIntervalMs")
    if isinstance(hint, (int, float)) and not isinstance(hint, bool) and hint >= 0:
        return min(max(hint / 1000.0, MIN_POLL), MAX_POLL)
    return DEFAULT_POLL


def follow_task(client, method: str, created: dict, options: dict) -> dict:
    """Rules 3 to 5: poll the task ``created`` names until it ends; its result."""
    task = read_task(created)
    task_id = task["taskId"]
    cancel = options.get("cancel")
    timeout = client.timeout if options.get("timeout") is None else options["timeout"]
    deadline = time.monotonic() + timeout
    answered: set = set()
    try:
        while True:
            status = task["status"]
            if status == "completed":
                result = task.get("result")
                if not isinstance(result, dict):
                    raise InvalidParamsError(f"task {task_id} completed without a result object")
                return result
            if status == "failed":
                error = task.get("error")
                if not isinstance(error, dict):
                    raise InvalidParamsError(f"task {task_id} failed without an error object")
                raise McpError.from_error(error)
            if status == "cancelled":
                raise RequestCancelled(f"{method}: task {task_id} was cancelled"
                                       + (f": {task['statusMessage']}" if task.get("statusMessage") else ""))
            if status == "input_required":
                _answer(client, task, answered)
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise RequestTimeout(method, timeout)
            pause = min(_interval(task), remaining)
            if cancel is None:
                time.sleep(pause)
            elif cancel.wait(pause):
                raise cancel.error(method)
            task = read_task(client._modern_request("tasks/get", {"taskId": task_id},
                                                    {"timeout": max(deadline - time.monotonic(), MIN_POLL)}))
    except (RequestTimeout, RequestCancelled) as stop:
        if not (isinstance(stop, RequestCancelled) and task.get("status") == "cancelled"):
            with contextlib.suppress(SessionError, McpError):      # best effort: the server may not hear
                client._modern_request("tasks/cancel", {"taskId": task_id}, {"timeout": 5.0})
        raise


def _answer(client, task: dict, answered: set) -> None:
    """Rule 4: answer the input requests not answered yet, in one ``tasks/update``."""
    requests = task.get("inputRequests")
    if not isinstance(requests, dict):
        raise InvalidParamsError(f"task {task['taskId']} is input_required without inputRequests")
    responses = {key: client._answer_input(*read_input_request(request))
                 for key, request in requests.items() if key not in answered}
    answered.update(responses)
    if responses:
        client._modern_request("tasks/update", {"taskId": task["taskId"], "inputResponses": responses}, {})
