"""Command line: ``python -m mcp_ref demo`` (or the ``mcp-ref`` script).

``demo`` spawns an example server as a subprocess (by default
``mcp_ref.examples.everything``), talks to it over stdio and prints every
wire message with its direction (``client -> server  {json}`` /
``server -> client  {json}``) and ``# ...`` commentary, then exits 0.

With the everything server it walks through every server feature: the
tools (one of each content type, structured output, progress, logging, a
failing tool, a list change), the resources and templates (reading,
subscribing, an update), the prompts, completion and log levels. Features a
server does not offer are skipped.
"""
import argparse
import json
import os
import sys
import threading

from .client import Client
from .transports import TapTransport
from .transports.stdio import StdioClientTransport

WAIT = 5.0      # seconds to wait for a notification the demo asked for
_print_lock = threading.Lock()      # lines come from the reading and the notification threads


def _emit(line: str) -> None:
    with _print_lock:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


def _transcript(direction: str, message) -> None:
    arrow = "client -> server" if direction == "send" else "server -> client"
    if isinstance(message, list):
        body = json.dumps([m.to_dict() for m in message], ensure_ascii=False)
    else:
        body = json.dumps(message.to_dict(), ensure_ascii=False)
    _emit(f"{arrow}  {body}")


def _say(text: str) -> None:
    _emit(f"# {text}")


def _blocks(result) -> str:
    return ", ".join(block.to_dict().get("type", "?") for block in result.content) or "no content"


def _walk_tools(client: Client) -> None:
    tools = client.list_tools()
    _say("tools: " + ", ".join(tool.name for tool in tools))
    names = {tool.name for tool in tools}
    for tool in tools:
        if tool.input_schema.get("required") or tool.name in ("long_operation", "count", "toggle_extra_tool"):
            continue
        result = client.call_tool(tool.name, {})
        detail = f"structured {json.dumps(result.structured_content)}" if result.structured_content else _blocks(result)
        _say(f"{tool.name}() -> {'is_error, ' if result.is_error else ''}{detail}")
    if "add" in names:
        result = client.call_tool("add", {"a": 2, "b": 3})
        _say(f"add(2, 3) -> {result.content[0].text}")
    for name, arguments in (("long_operation", {"steps": 3}), ("count", {"n": 3})):
        if name in names:
            result = client.call_tool(name, arguments,
                                      on_progress=lambda p, total, msg: _say(f"progress {p}/{total} {msg}"))
            _say(f"{name} -> {result.content[0].text}")
    if "divide" in names:
        result = client.call_tool("divide", {"a": 1, "b": 0})
        _say(f"divide(1, 0) -> is_error={result.is_error}: {result.content[0].text}")
    if "toggle_extra_tool" in names:
        for _ in range(2):
            _say(f"toggle_extra_tool -> {client.call_tool('toggle_extra_tool').content[0].text}")
        _say("tools now: " + ", ".join(tool.name for tool in client.list_tools()))


def _walk_resources(client: Client, updated: threading.Event) -> None:
    for resource in client.list_resources():
        contents = client.read_resource(resource.uri).contents[0]
        kind = "text" if hasattr(contents, "text") else "blob"
        _say(f"read {resource.uri} -> {kind} ({contents.mime_type})")
    for template in client.list_resource_templates():
        _say(f"template {template.uri_template}")
    if "everything://greeting/{name}" in {t.uri_template for t in client.list_resource_templates()}:
        _say("read everything://greeting/demo -> "
             + client.read_resource("everything://greeting/demo").contents[0].text)
    if client.server_capabilities.get("resources", {}).get("subscribe") and \
            any(r.uri == "everything://counter" for r in client.list_resources()):
        client.subscribe_resource("everything://counter")
        client.call_tool("touch_counter")
        _say(f"resources/updated received: {updated.wait(WAIT)}")
        _say("counter is now " + client.read_resource("everything://counter").contents[0].text)
        client.unsubscribe_resource("everything://counter")


def _walk_prompts(client: Client) -> None:
    for prompt in client.list_prompts():
        arguments = {a.name: ("everything://readme" if "uri" in a.name.lower() else "print('hi')")
                     for a in prompt.arguments or () if a.required}
        result = client.get_prompt(prompt.name, arguments)
        _say(f"prompt {prompt.name} -> " + ", ".join(f"{m.role}:{m.content.to_dict()['type']}"
                                                    for m in result.messages))


def _child_env() -> dict:
    """The example server imports mcp_ref from where this process found it: a spawned
    server gets only a safe set of our environment (transports/stdio.py rule 3), so
    the directory holding the package goes first on its ``PYTHONPATH``."""
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return {"PYTHONPATH": os.pathsep.join(filter(None, [here, os.environ.get("PYTHONPATH")]))}


def demo(module: str = "mcp_ref.examples.everything") -> int:
    """Walk through the example server, printing the wire transcript."""
    transport = TapTransport(StdioClientTransport([sys.executable, "-m", module], env=_child_env()), _transcript)
    updated = threading.Event()
    with Client(transport, timeout=30, on_resource_updated=lambda uri: updated.set(),
                on_log=lambda m: _say(f"log {m.level}: {json.dumps(m.data)}")) as client:
        _say(f"connected to {client.server_info.name} {client.server_info.version}, "
             f"protocol {client.protocol_version}")
        if client.instructions:
            _say(f"instructions: {client.instructions}")
        caps = client.server_capabilities
        _say("capabilities: " + ", ".join(sorted(caps)))
        if "logging" in caps:
            client.set_logging_level("warning")
            _say("log level set to warning: lower levels are not sent")
        if "tools" in caps:
            _walk_tools(client)
        if "resources" in caps:
            _walk_resources(client, updated)
        if "prompts" in caps:
            _walk_prompts(client)
        if "completions" in caps and any(p.name == "code_review" for p in client.list_prompts()):
            completion = client.complete({"type": "ref/prompt", "name": "code_review"}, ("language", "py"))
            _say(f"complete code_review.language 'py' -> {completion.values}")
        client.ping()
        _say("ping answered")
    _say("closed cleanly")
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="mcp-ref", description="mcp_ref command line")
    sub = parser.add_subparsers(dest="command", required=True)
    demo_parser = sub.add_parser("demo", help="run an example server and print the wire transcript")
    demo_parser.add_argument("--server", default="mcp_ref.examples.everything",
                             help="module of the example server to run (default: %(default)s)")
    args = parser.parse_args(argv)
    if args.command == "demo":
        return demo(args.server)
    return 2


if __name__ == "__main__":
    sys.exit(main())
