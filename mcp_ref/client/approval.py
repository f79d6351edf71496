"""Human in the loop: the client's approval hook, and what a client callback receives.

Rules:

1. ``Client(on_approve=hook)`` shows the hook each sampling request and
   elicitation before the client's callback answers it (stage
   ``"request"``), each answer before it goes back to the server (stage
   ``"result"``), and each tool call before it is sent (kind
   ``"tool_call"``). Spec: client/sampling#user-interaction-model ("a human in
   the loop with the ability to deny sampling requests", "view and edit
   prompts", "present generated responses for review"),
   client/elicitation#security-considerations ("user approval controls"),
   server/tools#user-interaction-model ("confirmation prompts").
2. The hook returns ``True`` to allow, ``False`` or ``Deny(reason)`` to
   deny, or an edited value (the same type as ``approval.value``, or its wire
   dict) to allow the edit. Anything else, ``None`` included, denies: the
   hook fails closed. An exception from the hook propagates (an ``McpError``
   reaches the server as that error).
3. A denial reaches the other side as a proper error: a sampling or
   elicitation request is answered with -1 (``UserRejectedError``, the code of
   client/sampling#error-handling); a denied tool call is never sent and
   raises ``ApprovalDenied`` to the caller.
4. Client callbacks (``sampling``, ``elicitation``, ``elicitation_url``)
   receive a ``PeerRequest``: the typed params as ``.params`` and as
   attributes (``request.messages``), the ``method``, the asking server's
   ``server_info``, and ``cancelled``/``report_progress`` of the request
   being served.

This module does no I/O. Spec: client/sampling, client/elicitation.
"""
import logging
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from mcp_ref.errors import McpError, UserRejectedError

log = logging.getLogger("mcp_ref.approval")

__all__ = ["Approval", "Deny", "Denied", "ToolCall", "PeerRequest", "decide", "answer_with", "rejected"]


@dataclass
class ToolCall:
    """A tool call the client is about to send (``tools/call`` params)."""
    name: str
    arguments: dict = field(default_factory=dict)

    def to_dict(self, version: Optional[str] = None) -> dict:
        return {"name": self.name, "arguments": dict(self.arguments)}

    @classmethod
    def from_dict(cls, data: dict) -> "ToolCall":
        return cls(name=data["name"], arguments=dict(data.get("arguments") or {}))


@dataclass
class Deny:
    """What a hook returns to deny with a reason (rule 2)."""
    reason: str = "denied by the user"


@dataclass
class Approval:
    """One decision for the hook.

    Attributes:
        kind: ``"sampling"``, ``"elicitation"`` or ``"tool_call"``.
        stage: ``"request"`` (before answering or sending) or ``"result"``
            (an answer about to go back to the server).
        value: what is to be approved: the typed request params, the typed
            result, or a ``ToolCall``.
        request: at the result stage, the ``PeerRequest`` being answered.
        server_info: the ``Implementation`` of the server asking (or called).
    """
    kind: str
    stage: str
    value: Any
    request: Any = None
    server_info: Any = None

    def deny(self, reason: str = "denied by the user") -> Deny:
        return Deny(reason)


class Denied(Exception):
    """Raised by ``decide`` when the hook denied; ``reason`` says why."""

    def __init__(self, approval: Approval, reason: str):
        super().__init__(f"{approval.kind} {approval.stage} {reason}")
        self.approval = approval
        self.reason = reason


def decide(hook: Optional[Callable], approval: Approval) -> Any:
    """Ask ``hook`` about ``approval``; return the value to go on with (rule 2).

    Raises:
        Denied: the hook denied (or returned something it may not).
    """
    answer = True if hook is None else hook(approval)
    if answer is True:
        return approval.value
    if answer is False:
        raise Denied(approval, "denied by the user")
    if isinstance(answer, Deny):
        raise Denied(approval, answer.reason)
    kind = type(approval.value)
    if isinstance(answer, kind):
        return answer
    if isinstance(answer, dict) and hasattr(kind, "from_dict"):
        try:
            return kind.from_dict(answer)
        except (KeyError, TypeError, ValueError, McpError) as exc:      # McpError: InvalidParamsError
            raise Denied(approval, f"the approval hook returned an edit that is not a valid "
                                   f"{kind.__name__}: {exc}") from None
    log.warning("approval hook returned %r for %s %s; denying (the hook fails closed)",
                answer, approval.kind, approval.stage)
    raise Denied(approval, f"the approval hook returned {type(answer).__name__}, not an approval")


def answer_with(hook: Optional[Callable], kind: str, method: str, params: Any, ctx, server_info,
                answer: Callable) -> Any:
    """A server's sampling or elicitation request answered under the hook (rules 1 and 3): the
    hook sees the typed ``params``, ``answer(PeerRequest)`` gives the result, the hook sees
    that; returns it (edited or not). A denial raises ``UserRejectedError`` (-1)."""
    try:
        params = decide(hook, Approval(kind, "request", params, server_info=server_info))
        request = PeerRequest(method, params, ctx, server_info)
        return decide(hook, Approval(kind, "result", answer(request), request=request, server_info=server_info))
    except Denied as denied:
        raise rejected(denied) from None


def rejected(denied: Denied) -> UserRejectedError:
    """The wire error a denied sampling or elicitation request is answered with (rule 3)."""
    return UserRejectedError(f"User rejected {denied.approval.kind} request: {denied.reason}")


class PeerRequest:
    """A request from the server, as a client callback receives it (rule 4)."""

    def __init__(self, method: str, params: Any, ctx=None, server_info=None):
        self.method = method
        self.params = params
        self.ctx = ctx
        self.server_info = server_info

    def __getattr__(self, name: str):
        if name == "params":                    # not yet set (during unpickling, say)
            raise AttributeError(name)
        return getattr(self.params, name)

    @property
    def cancelled(self):
        """A ``threading.Event`` set when the server cancels this request."""
        return self.ctx.cancelled if self.ctx is not None else None

    def report_progress(self, progress: float, total: Optional[float] = None,
                        message: Optional[str] = None) -> None:
        """Progress for this request, when the server asked for it (a no-op otherwise)."""
        if self.ctx is not None:
            self.ctx.report_progress(progress, total, message)

    def __repr__(self) -> str:
        return f"PeerRequest({self.method!r}, {self.params!r})"
