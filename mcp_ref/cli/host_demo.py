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
"""
from __future__ import annotations

import json
import os
import sys
import threading

from mcp_ref.host import AllowList, Host, ScriptedModel, ToolCall, describe, run_conversation
from mcp_ref.cli.wire import fit, terminal_width, wrap

__all__ = ["demo_host"]


def _environment() -> dict:
    """The example servers import mcp_ref from where this process found it."""
    here = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    return {"PYTHONPATH": os.pathsep.join(filter(None, [here, os.environ.get("PYTHONPATH")]))}


def demo_host(full: bool = False, out=None, width: int | None = None) -> int:
    out = out or sys.stdout
    width = width or terminal_width()
    lock = threading.Lock()

    def emit(line: str) -> None:
        with lock:
            out.write(line + "\n")
            out.flush()

    def say(line: str) -> None:
        """A comment (``# ...``, ``#   ...``), wrapped to the width with its indent."""
        text = line.lstrip("#")
        emit("\n".join(wrap(text.strip(), width, "#" + text[:len(text) - len(text.lstrip())])) if line else "")

    def trace(server, direction, message, session_id=None) -> None:
        data = [m.to_dict() for m in message] if isinstance(message, list) else message.to_dict()
        body = json.dumps(data, ensure_ascii=False)
        arrow = f"{'host -> ' + server if direction == 'send' else server + ' -> host'}  "
        emit(arrow + body if full else fit(arrow, body, width))

    policy = AllowList({"calc": ["add"], "assistant": ["ask_llm"]}, sampling=["assistant"])

    def consent(request):
        answer = policy(request)
        verdict = "allowed" if answer is True else f"denied ({answer.reason})"
        lines = describe(request).splitlines()
        say(f"# consent: {lines[0]}")
        for line in lines[1:] + [f"-> {verdict}"]:
            say(f"#   {line}")
        return answer

    env = _environment()
    config = {"mcpServers": {
        "calc": {"command": sys.executable, "args": ["-m", "mcp_ref.examples.demo_server"], "env": env},
        "assistant": {"command": sys.executable, "args": ["-m", "mcp_ref.examples.client_features"], "env": env},
    }}
    model = ScriptedModel([
        ToolCall("calc__add", {"a": 2, "b": 3}),
        lambda messages, tools: ToolCall("assistant__ask_llm", {"question": "Say the number in words."}),
        ToolCall("calc__divide", {"a": 1, "b": 0}),
        "2 + 3 = 5; dividing by zero was not allowed.",
    ], reply=lambda messages: "five")
    say("# mcp_ref host demo: one host, two servers (calc, assistant), one consent hook, a scripted model.")
    say("# Each server is a subprocess with its own client and session; lines show who talks to whom.")
    with Host(config, consent=consent, model=model, trace=trace, timeout=30) as host:
        for name, error in host.failed.items():
            say(f"# server {name} did not start: {error}")
        say("")
        say("# the catalogue: every server's tools under qualified names (server__tool)")
        say("# " + ", ".join(tool.name for tool in host.tools()))
        say("")
        say("# the tool-use loop: the model asks for tools, the host routes each call after consent")

        def show(message):
            if message["role"] == "user" and isinstance(message["content"], dict):
                say(f"# user: {message['content']['text']}")
            elif message["role"] == "assistant":
                blocks = message["content"] if isinstance(message["content"], list) else [message["content"]]
                for block in blocks:
                    if block["type"] == "text":
                        say(f"# model answers: {block['text']}")
                    else:
                        say(f"# model asks for {block['name']} {json.dumps(block['input'])}")
            else:
                for block in message["content"]:
                    text = " ".join(part["text"] for part in block["content"])
                    say(f"# tool result{' (error)' if block['isError'] else ''}: {text}")
        run_conversation(host, model, "What is 2 + 3, in words? Then divide 1 by 0.", on_message=show)
        say("")
        say("# closing: the host closes each client; each server exits")
    say("# closed cleanly")
    return 0
