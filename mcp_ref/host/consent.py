"""Consent: what the host asks before it acts for a server, and two ready policies.

The host owns the user's trust: a server never acts on the user's machine or
model without the host's say. Spec: index#security-and-trust--safety (user
consent and control, tool safety, LLM sampling controls),
server/tools#user-interaction-model, client/sampling#user-interaction-model,
client/elicitation#security-considerations, client/roots#security-considerations.

Rules:

1. One hook, a plain callable, sees every decision as a ``Consent`` (an
   ``approval.Approval`` with the ``server`` name): ``kind`` is
   ``"launch"`` (the exact command line or URL, before the server is first
   started), ``"roots"`` (the roots this server may see), ``"tool_call"``
   (name and arguments, before sending), ``"sampling"`` and
   ``"elicitation"`` (stage ``"request"`` before the model or user answers,
   ``"result"`` before the answer goes back to the server).
2. The hook answers as approval.py rule 2 says: ``True`` allows, ``False``
   or ``Deny(reason)`` denies, a value of the same type allows an edit (an
   edited tool call, sampling request or result; a shorter list of roots);
   anything else denies. A launch cannot be edited.
3. A denial reaches the server as an error (approval.py rule 3; in 2026-07-28 a
   refused elicitation is a decline, core.py rule 7): a denied
   tool call is never sent and raises ``ApprovalDenied``; a denied sampling or
   elicitation request is answered -1. A denied launch leaves that server
   out (``Host.failed``); a denied root is not offered.
4. ``AllowList`` is the policy for scripts: nothing runs that is not listed.
   ``TerminalPolicy`` asks a person, showing what is asked, on the terminal.
"""
import json
import sys
from dataclasses import dataclass
from typing import Callable, Optional

from mcp_ref.client.approval import Approval, Deny, ToolCall

__all__ = ["Consent", "AllowList", "TerminalPolicy", "allow_all", "describe"]


@dataclass
class Consent(Approval):
    """One decision (rule 1): ``Approval``'s fields and the configured ``server`` name."""
    server: str = ""


def allow_all(consent: Consent) -> bool:
    """Allows everything: for tests and trusted set-ups only."""
    return True


def _text(value) -> str:
    if hasattr(value, "to_dict"):
        value = value.to_dict()
    return json.dumps(value, ensure_ascii=False, default=str)


def describe(consent: Consent) -> str:
    """What a person is asked, in one or a few lines."""
    server, value = consent.server, consent.value
    if consent.kind == "launch":
        warning = "" if str(value).startswith("connect to ") else \
            " (this runs a program on this machine, with this user's rights)"
        return f"server {server!r} wants to start: {value}{warning}"
    if consent.kind == "roots":
        return f"server {server!r} may see these roots: " + ", ".join(getattr(r, "uri", str(r)) for r in value)
    if consent.kind == "tool_call":
        return f"call tool {value.name!r} of server {server!r} with arguments {_text(value.arguments)}"
    if consent.kind == "sampling" and consent.stage == "request":
        lines = [f"server {server!r} asks the model (max {value.max_tokens} tokens):"]
        if value.system_prompt:
            lines.append(f"  system: {value.system_prompt}")
        lines += [f"  {message.role}: {_text(message.content)}" for message in value.messages]
        return "\n".join(lines)
    if consent.kind == "sampling":
        return f"the model answers server {server!r}: {_text(value.content)}"
    if consent.kind == "elicitation" and consent.stage == "request":
        return f"server {server!r} asks the user: {_text(value)}"
    return f"answer to server {server!r}'s {consent.kind}: {_text(value)}"


class AllowList:
    """The policy for scripts (rule 4): allow only what is listed.

    Args:
        tools: ``{server: ["tool", ...] or "*"}``; a call of an unlisted tool is denied.
        launch: the servers that may be started (``"*"``: all configured; the default).
        sampling: servers that may ask the model (default: none).
        elicitation: servers that may ask the user (default: none; a script has no user).
        roots: ``{server: [uri, ...]}``, the roots each may see (default: all it was given).
    """

    def __init__(self, tools: Optional[dict] = None, *, launch="*", sampling=(), elicitation=(),
                 roots: Optional[dict] = None):
        self.tools = dict(tools or {})
        self.launch, self.sampling, self.elicitation = launch, sampling, elicitation
        self.roots = roots

    def __call__(self, consent: Consent):
        server, kind = consent.server, consent.kind
        if kind == "roots":
            return True if self.roots is None else [root for root in consent.value
                                                     if root.uri in self.roots.get(server, ())]
        if kind == "launch":
            names, name, why = self.launch, server, f"server {server!r} may not be started"
        elif kind == "tool_call":
            names, name = self.tools.get(server, ()), consent.value.name
            why = f"tool {name!r} of server {server!r} is not on the allow-list"
        else:
            names, name = self.sampling if kind == "sampling" else self.elicitation, server
            why = f"{kind} for server {server!r} is not on the allow-list"
        return True if names == "*" or name in names else Deny(why)


class TerminalPolicy:
    """Asks on the terminal (rule 4): ``y`` allows, ``n`` (or nothing) denies, ``e``
    edits (a tool call's arguments as JSON, a sampling request's last message or a
    model answer as text). ``ask``/``out`` default to ``input`` and stderr."""

    def __init__(self, ask: Optional[Callable] = None, out=None):
        self.ask = ask or input
        self.out = out

    def __call__(self, consent: Consent):
        print(describe(consent), file=self.out or sys.stderr, flush=True)
        editable = consent.kind in ("tool_call", "sampling")
        while True:
            try:
                answer = self.ask("allow? [y/N" + ("/e(dit)" if editable else "") + "] ").strip().lower()
            except EOFError:
                answer = "n"
            if answer in ("y", "yes"):
                return True
            if answer in ("", "n", "no"):
                return Deny("denied on the terminal")
            if answer in ("e", "edit") and editable:
                edited = self._edit(consent)
                if edited is not None:
                    return edited

    def _edit(self, consent: Consent):
        value = consent.value
        if consent.kind == "tool_call":
            try:
                arguments = json.loads(self.ask("arguments as JSON: "))
            except json.JSONDecodeError as exc:
                print(f"not JSON: {exc}", file=self.out or sys.stderr)
                return None
            return ToolCall(value.name, arguments if isinstance(arguments, dict) else {})
        text = self.ask("new text: ")
        data = value.to_dict()
        (data["messages"][-1] if consent.stage == "request" else data)["content"] = {"type": "text", "text": text}
        return data
