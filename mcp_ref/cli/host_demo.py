"""``python -m mcp_ref demo --host``: the host at work, on the wire.

Two example servers run under one ``Host``: ``calc`` (examples/demo_server:
add, count, divide) and ``assistant`` (examples/client_features, whose
``ask_llm`` tool asks the host's model through sampling). A scripted model
(host/loop.py) plays a short conversation: it calls ``calc__add``, then
``assistant__ask_llm`` (the server samples: the consent hook sees the
request and the answer, the model answers with the server's messages only),
then ``calc__divide``, which the allow-list refuses (the model reads the
denial as a tool error), and answers. Every consent decision is printed as
a ``consent:`` line and every wire message with its server and direction.
Lines fit the terminal as the main demo's do (wire.py rule 4), unless ``full``.
Each client speaks the era a default ``Client`` agrees on (2026-07-28), or
``protocol_version`` (``--protocol-version 2025-11-25``: the ``initialize`` era).
"""
from __future__ import annotations

import json
import sys

from mcp_ref.host import AllowList, Host, ScriptedModel, ToolCall, describe, run_conversation
from mcp_ref.cli.scenarios.show import Show
from mcp_ref.cli.wire import Transcript, child_env

__all__ = ["demo_host"]


def demo_host(full: bool = False, out=None, width: int | None = None, protocol_version: str | None = None) -> int:
    transcript = Transcript(full, out, width)
    narrator = Show(transcript, protocol_version)           # the # lines, from narration.txt
    say = transcript.comment
    policy = AllowList({"calc": ["add"], "assistant": ["ask_llm"]}, sampling=["assistant"])

    def consent(request):
        answer = policy(request)
        first, *more = describe(request).splitlines()
        say(f"consent: {first}")
        for line in more + ["-> " + ("allowed" if answer is True else f"denied ({answer.reason})")]:
            say(line.strip(), "#   ")
        return answer

    def show(message) -> None:
        content = message["content"]
        if message["role"] == "user" and isinstance(content, dict):
            return say(f"user: {content['text']}")
        for block in content if isinstance(content, list) else [content]:
            if block["type"] == "text":
                say(f"model answers: {block['text']}")
            elif block["type"] == "tool_use":
                say(f"model asks for {block['name']} {json.dumps(block['input'])}")
            else:
                text = " ".join(part["text"] for part in block["content"])
                say(f"tool result{' (error)' if block['isError'] else ''}: {text}")

    config = {"mcpServers": {name: {"command": sys.executable, "args": ["-m", module], "env": child_env()}
                             for name, module in (("calc", "mcp_ref.examples.demo_server"),
                                                  ("assistant", "mcp_ref.examples.client_features"))}}
    model = ScriptedModel([
        ToolCall("calc__add", {"a": 2, "b": 3}),
        lambda messages, tools: ToolCall("assistant__ask_llm", {"question": "Say the number in words."}),
        ToolCall("calc__divide", {"a": 1, "b": 0}),
        "2 + 3 = 5; dividing by zero was not allowed.",
    ], reply=lambda messages: "five")
    narrator.say("hostdemo.intro")
    narrator.say("hostdemo.servers")
    with Host(config, consent=consent, model=model, trace=transcript.host, timeout=30,
              protocol_version=protocol_version or "auto") as host:
        for name, error in host.failed.items():
            say(f"server {name} did not start: {error}")
        narrator.step("hostdemo.catalogue")
        say(", ".join(tool.name for tool in host.tools()))
        narrator.step("hostdemo.loop")
        run_conversation(host, model, "What is 2 + 3, in words? Then divide 1 by 0.", on_message=show)
        narrator.step("hostdemo.closing")
    say("closed cleanly")
    return 0
