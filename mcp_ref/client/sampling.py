"""Sampling: a server asks the client's LLM for a message (``sampling/createMessage``).

Rules:

1. A server sends ``sampling/createMessage`` only to a client that declared
   ``sampling``; ``tools``/``toolChoice`` only to a 2025-11-25 client that
   declared ``sampling.tools``; ``includeContext`` other than ``"none"`` to a
   2025-11-25 client only when it declared ``sampling.context``. Content a
   revision does not know is never sent: audio needs 2025-03-26, ``tool_use``
   and ``tool_result`` need 2025-11-25. Each refusal is
   ``CapabilityNotSupported``, raised locally before anything is sent.
   Spec: client/sampling#capabilities, #tools-in-sampling.
2. Tool messages: a user message holding a ``tool_result`` holds only tool
   results, and every assistant ``tool_use`` is answered, by id, in the very
   next (user) message. The server checks before sending (``ValueError``),
   the client on receipt (-32602). Spec: client/sampling#message-content-
   constraints, #error-handling.
3. The client answers with its ``sampling`` callback, which receives a
   ``PeerRequest`` (the typed ``CreateMessageRequestParams``) and returns a
   ``CreateMessageResult`` or its wire dict. It refuses by raising
   ``UserRejectedError`` (-1) or any ``McpError``; other exceptions become
   -32603. A request with ``tools`` to a client that did not declare
   ``sampling.tools`` is answered -32602. The approval hook (``approval``)
   sees the request before the callback and the result before it is sent.
4. The result is typed (``CreateMessageResult``: ``role``, ``content``,
   ``model``, ``stop_reason``) on both sides; a malformed one is an error
   (-32603 from the client, ``ValueError`` at the server).
5. Model choice from ``modelPreferences`` is ``select_model`` in
   ``types.client_features``: hints in order as substrings, then the
   cost/speed/intelligence priorities.

This module does no I/O itself: the server side sends through the ``ctx``
(or session) it is given. Spec: client/sampling.
"""
from typing import Any, Callable, Optional

from mcp_ref.protocol import lifecycle
from mcp_ref.client.approval import PeerRequest, answer_with
from mcp_ref.errors import CapabilityNotSupported, InvalidParamsError
from mcp_ref.types import CreateMessageRequestParams, CreateMessageResult

__all__ = ["create_message", "answer_create_message", "tool_message_problem", "content_types_for"]

TOOLS_SINCE = "2025-11-25"


# Each content block type of sampling messages, and the revision it appeared in (rule 1).
_CONTENT_SINCE = {"text": None, "image": None, "audio": "2025-03-26", "tool_use": TOOLS_SINCE,
                  "tool_result": TOOLS_SINCE}


def content_types_for(version: Optional[str]) -> set:
    """The content block types a revision allows in sampling messages (rule 1)."""
    return {kind for kind, since in _CONTENT_SINCE.items() if since is None or lifecycle.at_least(version, since)}


def _blocks(message: dict) -> list:
    content = message.get("content")
    return content if isinstance(content, list) else [content]


def tool_message_problem(messages: list) -> Optional[str]:
    """Why wire ``messages`` break the tool-use rules (rule 2), or ``None``."""
    waiting: Optional[set] = None                 # tool_use ids the next message must answer
    for index, message in enumerate(messages):
        blocks = [b for b in _blocks(message) if isinstance(b, dict)]
        kinds = {b.get("type") for b in blocks}
        if "tool_result" in kinds:
            if kinds != {"tool_result"}:
                return f"Tool results mixed with other content (message {index})"
            if message.get("role") != "user":
                return f"Tool results belong in a user message (message {index})"
        answered = {b.get("toolUseId") for b in blocks if b.get("type") == "tool_result"}
        if waiting is not None:
            missing = waiting - answered
            if kinds != {"tool_result"} or missing:
                return f"Tool result missing in request (for {sorted(missing) or sorted(waiting)}, message {index})"
            waiting = None
        uses = {b.get("id") for b in blocks if b.get("type") == "tool_use"}
        if uses:
            if message.get("role") != "assistant":
                return f"Tool uses belong in an assistant message (message {index})"
            waiting = uses
    if waiting:
        return f"Tool result missing in request (for {sorted(waiting)}, after the last message)"
    return None


def _wire(value: Any, version: Optional[str]) -> Any:
    return value.to_dict(version) if hasattr(value, "to_dict") else value


def _message(value: Any, version: Optional[str]) -> dict:
    if isinstance(value, str):                    # a convenience: a plain string is the user speaking
        return {"role": "user", "content": {"type": "text", "text": value}}
    message = _wire(value, version)
    if not isinstance(message, dict) or message.get("role") not in ("user", "assistant") or "content" not in message:
        raise ValueError(f"a sampling message has a role (user or assistant) and content, not {value!r}")
    content = message["content"]
    message["content"] = [_wire(b, version) for b in content] if isinstance(content, list) else _wire(content, version)
    return message


def create_message(peer, messages: list, *, max_tokens: int, system_prompt: Optional[str] = None,
                   model_preferences: Any = None, include_context: Optional[str] = None,
                   temperature: Optional[float] = None, stop_sequences: Optional[list] = None,
                   metadata: Optional[dict] = None, tools: Optional[list] = None, tool_choice: Any = None,
                   timeout: Optional[float] = None, meta: Optional[dict] = None) -> CreateMessageResult:
    """Send ``sampling/createMessage`` through ``peer`` (a server ``Context`` or
    session) and return the typed result. See ``Context.sample``.

    Raises:
        CapabilityNotSupported: rule 1, before sending.
        ValueError: malformed messages or tool messages (rule 2), or a malformed result.
        McpError: the client refused (``UserRejectedError``, -1) or failed.
        RequestTimeout, RequestCancelled, ConnectionClosed: as for any request.
    """
    version = peer.protocol_version
    capabilities = peer.client_capabilities
    lifecycle.require_peer_capability(capabilities, "sampling", "sampling/createMessage")
    if not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 1:
        raise ValueError(f"max_tokens must be a positive integer, not {max_tokens!r}")
    wire_messages = [_message(m, version) for m in messages]
    if not wire_messages:
        raise ValueError("sampling needs at least one message")
    allowed = content_types_for(version)
    for message in wire_messages:
        if isinstance(message["content"], list) and not lifecycle.at_least(version, TOOLS_SINCE):
            if len(message["content"]) != 1:       # before 2025-11-25 a message holds one block
                raise CapabilityNotSupported(f"a sampling message with several content blocks needs protocol "
                                             f"revision {TOOLS_SINCE}; this session speaks {version}")
            message["content"] = message["content"][0]
        for block in _blocks(message):
            kind = block.get("type") if isinstance(block, dict) else None
            if kind not in allowed:
                raise CapabilityNotSupported(f"{kind!r} content in sampling needs a newer protocol revision "
                                             f"than {version} (allowed: {sorted(allowed)})")
    uses_tools = tools is not None or tool_choice is not None or any(
        b.get("type") in ("tool_use", "tool_result") for m in wire_messages for b in _blocks(m))
    if uses_tools:
        if not lifecycle.at_least(version, TOOLS_SINCE):
            raise CapabilityNotSupported(f"tools in sampling need protocol revision {TOOLS_SINCE}; "
                                         f"this session speaks {version}")
        lifecycle.require_peer_capability(capabilities, "sampling.tools", "sampling with tools")
        problem = tool_message_problem(wire_messages)
        if problem:
            raise ValueError(problem)
    if include_context not in (None, "none", "thisServer", "allServers"):
        raise ValueError(f"include_context is 'none', 'thisServer' or 'allServers', not {include_context!r}")
    if include_context not in (None, "none") and lifecycle.at_least(version, TOOLS_SINCE):
        lifecycle.require_peer_capability(capabilities, "sampling.context", f"includeContext={include_context}")
    optional = {"systemPrompt": system_prompt, "modelPreferences": _wire(model_preferences, version),
                "includeContext": include_context, "temperature": temperature,
                "stopSequences": None if stop_sequences is None else list(stop_sequences),
                "metadata": None if metadata is None else dict(metadata),
                "tools": None if tools is None else [_wire(t, version) for t in tools],
                "toolChoice": {"mode": tool_choice} if isinstance(tool_choice, str) else _wire(tool_choice, version),
                "_meta": dict(meta) if meta else None}
    params = {"messages": wire_messages, "maxTokens": max_tokens,
              **{key: value for key, value in optional.items() if value is not None}}
    return _result(peer.request("sampling/createMessage", params, timeout=timeout))


def _result(data: Any) -> CreateMessageResult:
    """A typed result from a wire dict, checking the required members (rule 4)."""
    if not isinstance(data, dict) or data.get("role") not in ("user", "assistant") \
            or not isinstance(data.get("model"), str) or "content" not in data:
        raise ValueError(f"a sampling result needs role (user or assistant), content and model: {data!r}")
    return CreateMessageResult.from_dict(data)


# ---------------------------------------------------------------------- the client side
def answer_create_message(ctx, params: dict, *, callback: Callable, tools_declared: bool,
                          approve: Optional[Callable] = None, server_info: Any = None,
                          version: Optional[str] = None) -> dict:
    """Answer ``sampling/createMessage`` with ``callback`` (rule 3); returns the wire result.

    Raises:
        InvalidParamsError: malformed params, tools without ``sampling.tools``,
            or broken tool messages (-32602).
        UserRejectedError: the approval hook denied (-1).
        ValueError: the callback's result is malformed (answered -32603).
    """
    messages = params.get("messages")
    if not isinstance(messages, list) or not isinstance(params.get("maxTokens"), int):
        raise InvalidParamsError("sampling/createMessage needs messages (a list) and maxTokens (an integer)")
    if ("tools" in params or "toolChoice" in params) and not tools_declared:
        raise InvalidParamsError("sampling/createMessage: tools and toolChoice need the sampling.tools "
                                 "capability, which this client did not declare")
    try:                        # typed first: the tool-message check below hashes ids and types
        typed = CreateMessageRequestParams.from_dict(params)
    except (KeyError, TypeError, ValueError) as exc:
        raise InvalidParamsError(f"sampling/createMessage: invalid params: {exc}") from None
    problem = tool_message_problem([m for m in messages if isinstance(m, dict)])
    if problem:
        raise InvalidParamsError(problem)
    def answer(request: PeerRequest) -> CreateMessageResult:
        result = callback(request)
        return result if isinstance(result, CreateMessageResult) else _result(_wire(result, version))
    wire = answer_with(approve, "sampling", "sampling/createMessage", typed, ctx, server_info, answer).to_dict(version)
    _result(wire)
    return wire
