"""One request in the modern era (2026-07-28): its ``_meta``, sending it, and reading
what comes back: client/modern/era.py rules 3 and 4 (the era's other rules are there).

A modern request carries its own protocol version, the client's capabilities and
info, and the log level in ``params._meta`` (``with_meta``, ``_modern_meta``); the
result is checked for its ``resultType`` and stripped of what only the modern era
sends (``check_result_type``, ``strip``), so ``Client.call_tool`` parses the same
dict in both eras. An ``InputRequiredResult`` is answered and the request sent
again (client/modern/mrtr.py); a task (the tasks extension) is followed to its end
(client/tasks/extension.py). Spec 2026-07-28: basic/index#meta,
basic/patterns/mrtr.
"""
from __future__ import annotations

from typing import Any

from mcp_ref.protocol import modern
from mcp_ref.errors import InternalError, InvalidParamsError, SessionError
from mcp_ref.client.modern.mrtr import MAX_INPUT_ROUNDS, retry_params
from mcp_ref.client.state import ClientState
from mcp_ref.client.tasks.extension import follow_task

__all__ = ["ModernRequests", "check_result_type", "strip", "with_meta"]

_STRIPPED = ("resultType", "ttlMs", "cacheScope")
_SERVER_INFO = modern.SERVER_INFO


def with_meta(params: dict | None, meta: dict) -> dict:
    """era.py rule 3: ``params`` with the request metadata (a caller's own ``_meta`` entries kept)."""
    params = dict(params or {})
    own = params.get("_meta")
    params["_meta"] = {**own, **meta} if isinstance(own, dict) else dict(meta)
    return params


def check_result_type(result, method: str | None = None) -> str:
    """era.py rule 4: ``"complete"`` or ``"input_required"``; absent is ``"complete"``; ``"task"``
    only for a ``tools/call`` (client/tasks/extension.py rule 2)."""
    if not isinstance(result, dict):
        raise InvalidParamsError("a result is an object")
    kind = result.get("resultType", "complete")
    if kind == "task":
        if method == "tools/call":
            return kind
        raise InternalError(f"the server answered {method or 'a request'} with a CreateTaskResult, which "
                            "only tools/call may get (the tasks extension)")
    if kind not in ("complete", "input_required"):
        raise InternalError(f"the server answered an unknown resultType {kind!r}")
    return kind


def strip(result: dict) -> dict:
    """era.py rule 4: what the public methods parse, the same in both eras."""
    meta: Any = result.get("_meta")
    info = isinstance(meta, dict) and _SERVER_INFO in meta
    if not info and result.keys().isdisjoint(_STRIPPED):
        return result
    result = {k: v for k, v in result.items() if k not in _STRIPPED and (k != "_meta" or not info)}
    if info and len(meta) > 1:
        result["_meta"] = {k: v for k, v in meta.items() if k != _SERVER_INFO}
    return result


class ModernRequests(ClientState):
    """The ``Client``'s way of sending one modern request (a mixin of ``ModernEra``)."""

    _meta_made: tuple = ((), None)            # (what the last _meta was made of, that _meta)

    def _modern_meta(self, version: str) -> dict:
        """era.py rule 3: the ``_meta`` of a modern request, shared (``with_meta`` copies it)."""
        if self.protocol_version is None:
            self._asking = version              # the probe: capabilities() speaks of this revision
        level = self._log_level
        if level is None and (self.on_notification is not None or self._listeners.get("notifications/message")):
            level = "debug"     # someone listens: everything, as a legacy server sends before logging/setLevel
        facts = (version, self.protocol_version, level, self.client_info, self.sampling, self.sampling_tools,
                 self.elicitation, self.elicitation_url, self._roots is None)
        made, meta = self._meta_made
        if made != facts:
            meta = modern.RequestMeta(version, self.capabilities(), self.client_info.to_dict(version), level).to_meta()
            self._meta_made = (facts, meta)
        return meta

    def _modern_request(self, method: str, params: dict | None, options: dict) -> dict:
        """era.py rules 3 to 5: send, answer input requests, retry, until complete."""
        params = base = dict(params or {})
        version = self.protocol_version
        if version is None:                     # connect() chose the era before any request is sent
            raise SessionError(f"{method}: no protocol revision chosen yet")
        for _ in range(MAX_INPUT_ROUNDS):
            params = with_meta(params, self._modern_meta(version))
            if self._restarter is None:
                result = self.session.request(method, params, **options)
            else:
                result = self._restarter.request(self, method, params, options)
            kind = check_result_type(result, method)
            if kind == "complete":
                return strip(result)
            if kind == "task":                  # the tasks extension: follow it to its end
                return strip(follow_task(self, method, result, options))
            params = retry_params(base, method, result, self._answer_input)
        raise SessionError(f"{method}: the server asked for input {MAX_INPUT_ROUNDS} times without completing")
