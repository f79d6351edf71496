"""Completion and logging: ``completion/complete``, ``logging/setLevel`` and
``notifications/message`` (the bridge from Python's ``logging`` module is
server/logging_bridge.py's, rule 5).

Spec: server/utilities/completion (``completions`` capability since
2025-03-26; ``context.arguments`` since 2025-06-18), server/utilities/logging
(every revision).

Rules:

1. One completer, ``fn(ref, argument, context)``: ``ref`` is a
   ``PromptReference`` (``.name``) or ``ResourceTemplateReference`` (``.uri``),
   ``argument`` has ``.name``/``.value``, ``context`` has ``.arguments`` or is
   None when the request has none. It returns a list of strings (or a
   ``Completion``, or None for nothing). The library sends at most 100 values,
   with ``total`` (all the values) and ``hasMore``.
2. A reference to a prompt or template we do not have, or to an argument it
   does not take, is -32602 (server/utilities/completion#error-handling).
3. ``logging/setLevel`` sets the level of one session; a name that is not
   one of the eight RFC 5424 levels is -32602. Until a client sets a level,
   the server's ``log_level`` applies (None: every message is sent).
4. A message below the session's level is not sent, nor any to a session
   that was not told ``logging`` (servers that emit log messages MUST declare
   it). ``ctx.log`` sends on the request's own stream (before its response);
   ``server.log`` sends to every ready session.
5. The bridge from Python's ``logging`` is server/logging_bridge.py's (its
   rules 1 and 2), apart so that a server that does not bridge never loads
   ``logging``.
"""
import threading
from typing import Any, Callable, NamedTuple, Optional

from mcp_ref.schema import jsonable
from mcp_ref.errors import InvalidParamsError
from mcp_ref.types import (LOGGING_LEVELS, CompleteResult, Completion, LoggingMessageNotificationParams,
                     PromptReference, ResourceTemplateReference)
from mcp_ref.schema.uritemplate import UriTemplate

__all__ = ["Completions", "Logs", "CompletionArgument", "CompletionContext", "MAX_COMPLETIONS", "current"]

MAX_COMPLETIONS = 100
# The request context of the handler running on this thread (set by Server dispatch), for the bridge.
current = threading.local()


class CompletionArgument(NamedTuple):
    name: str
    value: str


class CompletionContext(NamedTuple):
    arguments: dict


# ---------------------------------------------------------------------- completion
def _capped(values) -> dict:
    """Rule 1: the ``completion`` object for what a completer returned."""
    if isinstance(values, CompleteResult):
        values = values.completion
    given = values if isinstance(values, Completion) else Completion(values=values or [])
    values = [str(value) for value in given.values or ()]
    total = len(values) if given.total is None else given.total
    has_more = (total > MAX_COMPLETIONS or len(values) > MAX_COMPLETIONS) if given.has_more is None else given.has_more
    return Completion(values=values[:MAX_COMPLETIONS], total=total, has_more=has_more).to_dict()


class Completions:
    """The server's completer. ``owner`` is the server (its prompts and resources are consulted)."""

    def __init__(self, owner):
        self.owner = owner
        self.fn: Optional[Callable] = None

    def __bool__(self) -> bool:
        return self.fn is not None

    def handle_complete(self, ctx, params: dict) -> dict:
        """Spec: server/utilities/completion#requesting-completions; rules 1 and 2."""
        ref, names = self._reference(params.get("ref"))
        argument = params.get("argument")
        if not (isinstance(argument, dict) and isinstance(argument.get("name"), str)
                and isinstance(argument.get("value"), str)):
            raise InvalidParamsError("completion/complete: argument must have a string name and value")
        if argument["name"] not in names:
            raise InvalidParamsError(f"completion/complete: {argument['name']!r} is not an argument of the "
                                     "referenced prompt or template", {"argument": argument["name"]})
        context = params.get("context")
        arguments = context.get("arguments") if isinstance(context, dict) else None
        context = CompletionContext(dict(arguments)) if isinstance(arguments, dict) else None
        if self.fn is None:     # a capabilities= override may declare completions without a completer
            raise InvalidParamsError("completion/complete: this server has no completer")
        return {"completion": _capped(self.fn(ref, CompletionArgument(argument["name"], argument["value"]), context))}

    def _reference(self, ref) -> tuple:
        """``(reference object, names of its arguments)``; -32602 when we have no such thing."""
        kind = ref.get("type") if isinstance(ref, dict) else None
        if kind == "ref/prompt":
            reference = PromptReference.from_dict(ref)
            prompt = self.owner.prompts.get(reference.name)
            if prompt is None:
                raise InvalidParamsError(f"Unknown prompt: {reference.name}", {"name": reference.name})
            return reference, [a.name for a in prompt.arguments or ()]
        if kind == "ref/resource":
            reference = ResourceTemplateReference.from_dict(ref)
            if self.owner.resources.templates.get(reference.uri) is None:
                raise InvalidParamsError(f"Unknown resource template: {reference.uri}", {"uri": reference.uri})
            return reference, UriTemplate(reference.uri).variables
        raise InvalidParamsError("completion/complete: ref must be a ref/prompt or ref/resource reference")


# ---------------------------------------------------------------------- logging
def check_level(level: str) -> str:
    if level not in LOGGING_LEVELS:
        raise ValueError(f"unknown logging level {level!r}; expected one of {', '.join(LOGGING_LEVELS)}")
    return level


class Logs:
    """Log levels per session and sending ``notifications/message``. ``owner`` is the
    server (``log_level``, ``ready_sessions()``)."""

    def __init__(self, owner):
        self.owner = owner

    def handle_set_level(self, ctx, params: dict) -> dict:
        """Spec: server/utilities/logging#setting-log-level; rule 3."""
        level = params.get("level")
        if level not in LOGGING_LEVELS:
            raise InvalidParamsError(f"Invalid log level: {level!r}; expected one of {', '.join(LOGGING_LEVELS)}",
                                     {"level": level})
        ctx.session.log_level = level
        return {}

    def send(self, session, level: str, data: Any, logger: Optional[str] = None, related_id=None,
             meta: Optional[dict] = None, era=None) -> bool:
        """Send one message to ``session`` unless its level filters it out (rule 4);
        True when sent. ``meta``: the params' ``_meta`` (a task's related-task entry).
        ``era``: a 2026-07-28 request's metadata, whose ``_meta`` log level is the threshold,
        and without one nothing is sent (Spec 2026-07-28: server/utilities/logging)."""
        if era is None:
            declared = getattr(session, "declared_capabilities", None) or self.owner.capabilities()
            threshold, version = session.log_level or self.owner.log_level, session.protocol_version
        elif era.log_level is None:
            return False
        else:
            declared, threshold, version = self.owner.capabilities(), era.log_level, era.version
        if "logging" not in declared:
            return False
        if threshold is not None and LOGGING_LEVELS.index(level) < LOGGING_LEVELS.index(threshold):
            return False
        params = LoggingMessageNotificationParams(level=level, data=jsonable.to_jsonable(data), logger=logger,
                                                  meta=meta)
        session.notify("notifications/message", params.to_dict(version), related_id=related_id)
        return True

    def broadcast(self, level: str, data: Any, logger: Optional[str] = None) -> int:
        """``server.log``: to every ready session; returns how many were sent the message."""
        check_level(level)
        sent = 0
        for session in self.owner.ready_sessions():
            try:
                sent += self.send(session, level, data, logger)
            except Exception:                       # a session that just closed
                continue
        return sent
