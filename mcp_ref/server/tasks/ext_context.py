"""The ``Context`` a task of the 2026-07-28 tasks extension runs with (server/tasks/extension.py
rules 5 and 7): its asks wait for ``tasks/update`` instead of ending the call, a
``gather``'s asks are the task's ``inputRequests`` together, progress and log
messages are not sent, and a JSON-RPC error the tool raises fails the task.

As for 2025-11-25, ``common.task_context`` mixes ``ExtTaskContextMixin`` over the
class of the request's own context.
Spec: the extension's specification, revision 2026-07-28, page ``tasks``
(``io.modelcontextprotocol/tasks``); 2026-07-28 basic/patterns/mrtr#inputrequests.
"""
from __future__ import annotations

from typing import Any, Callable

from mcp_ref.errors import CapabilityNotSupported
from mcp_ref.server.context import INPUT_KINDS as KINDS
from mcp_ref.server.modern.mrtr import InputRequired

__all__ = ["ExtTaskContextMixin"]


class ExtTaskContextMixin:
    """The context a task's tool runs with (server/tasks/extension.py rules 5 and 7): asks wait for
    ``tasks/update``; progress and log messages are not sent."""
    _task: Any = None
    _registry: Any = None       # the server's ExtTasks
    # What the context class it is mixed over gives it (common.task_context).
    _gathering: bool
    _input_key: Callable[[str], str]
    _keyed: Callable[[str], Any]
    _replay = None              # gather's answers, key -> answer, while its asks run again
    json_rpc_errors_pass = True  # server/tasks/extension.py rule 7: an McpError the tool raises fails the task

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
        """server/tasks/extension.py rule 5: ``gather``'s asks are the task's ``inputRequests`` together; once all
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

