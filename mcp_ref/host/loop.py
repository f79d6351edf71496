"""The tool-use loop across every server, and a scripted model that needs no network.

What an application does with a host: ask its model, give it every
server's tools, run the tools it asks for, hand back the results, repeat until
it answers in text. Spec: server/tools (the model-controlled half of MCP),
client/sampling#tools-in-sampling (the same message shapes).

Rules:

1. A model is a callable ``model(messages, tools) -> str | [ToolCall]``:
   ``messages`` are sampling-shaped dicts (``{"role", "content"}``; tool
   calls as ``tool_use`` blocks, results as ``tool_result`` blocks in a user
   message, as client/sampling#tools-in-sampling has them), ``tools`` are
   tool dicts under their qualified names. A string is the final answer; a
   list of ``ToolCall`` asks for those tools.
2. ``run_tools`` calls each asked tool through the host (so through the
   consent hook); a denied, failing or unknown tool becomes an ``isError``
   tool result the model reads, never an exception out of the loop.
3. The loop stops at the model's text answer, or after ``max_rounds`` rounds
   of tool calls (``RuntimeError``): a model that never answers cannot run
   forever.
4. ``ScriptedModel`` plays a fixed script, step by step, deterministically:
   the demo and tests use it. It answers sampling requests with ``reply``.
"""
import json
from typing import Callable, Optional

from mcp_ref.client.approval import ToolCall
from mcp_ref.errors import ApprovalDenied, McpError

__all__ = ["run_conversation", "run_tools", "ScriptedModel", "ToolCall"]


def _text(text: str) -> dict:
    return {"type": "text", "text": text}


def _result_text(result) -> str:
    parts = [block.text if getattr(block, "type", None) == "text" else f"[{block.type}]" for block in result.content]
    if result.structured_content is not None and not parts:
        parts.append(json.dumps(result.structured_content))
    return "\n".join(parts)


def run_tools(host, calls: list, ids: list) -> dict:
    """Run ``calls`` through ``host`` (rule 2); the user message holding their results."""
    blocks = []
    for call, call_id in zip(calls, ids):
        try:
            result = host.call_tool(call.name, call.arguments)
            text, failed = _result_text(result), bool(result.is_error)
        except ApprovalDenied as exc:
            text, failed = f"denied: {exc}", True
        except (McpError, KeyError) as exc:
            text, failed = f"error: {exc}", True
        blocks.append({"type": "tool_result", "toolUseId": call_id, "content": [_text(text)], "isError": failed})
    return {"role": "user", "content": blocks}


def run_conversation(host, model: Callable, prompt: str, *, max_rounds: int = 8,
                     on_message: Optional[Callable] = None) -> list:
    """Ask ``model`` about ``prompt`` with every tool of ``host`` (rules 1-3); returns the messages,
    the last one the model's answer. ``on_message(message)`` sees each message as it is added."""
    messages: list = []

    def add(message: dict) -> None:
        messages.append(message)
        if on_message is not None:
            on_message(message)
    add({"role": "user", "content": _text(prompt)})
    for round_number in range(max_rounds + 1):
        tools = [tool.to_dict() for tool in host.tools()]       # fresh: a list may have changed
        reply = model(list(messages), tools)
        if isinstance(reply, str):
            add({"role": "assistant", "content": _text(reply)})
            return messages
        if round_number == max_rounds:
            break
        ids = [f"call_{round_number}_{i}" for i in range(len(reply))]
        add({"role": "assistant", "content": [{"type": "tool_use", "id": call_id, "name": call.name,
                                               "input": dict(call.arguments)}
                                              for call, call_id in zip(reply, ids)]})
        add(run_tools(host, reply, ids))
    raise RuntimeError(f"the model asked for tools {max_rounds} rounds in a row without answering")


class ScriptedModel:
    """A model that plays ``script`` (rule 4). Each step is a string (the answer), a
    ``ToolCall`` or list of them, or a callable ``step(messages, tools)`` returning one of
    those; ``"{last}"`` in a string step is replaced by the text of the last tool result.
    Sampling requests get ``reply(messages)``: by default ``scripted reply to: <last text>``."""

    name = "scripted"

    def __init__(self, script, reply: Optional[Callable] = None):
        self.script = list(script)
        self.step = 0
        self.reply = reply or (lambda messages: f"scripted reply to: {_last_text(messages)}")

    def __call__(self, messages: list, tools: list):
        if not tools:                                 # a sampling request (no tools offered)
            return self.reply(messages)
        if self.step >= len(self.script):
            return "(the script has ended)"
        step = self.script[self.step]
        self.step += 1
        if callable(step):
            step = step(messages, tools)
        if isinstance(step, str):
            return step.replace("{last}", _last_text(messages))
        return [step] if isinstance(step, ToolCall) else list(step)


def _last_text(messages: list) -> str:
    """The text of the last message that has some (tool results included)."""
    for message in reversed(messages):
        content = message.get("content")
        for block in reversed(content if isinstance(content, list) else [content]):
            if block.get("type") == "text":
                return block["text"]
            if block.get("type") == "tool_result":
                return " ".join(b.get("text", "") for b in block.get("content", []))
    return ""
