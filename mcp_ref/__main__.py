"""Command line: ``python -m mcp_ref demo`` (or the ``mcp-ref`` script); the other
commands (serve, shell, the inspector) are in ``mcp_ref.cli``, ``demo --host`` in
``mcp_ref.cli.host_demo``.

``demo`` spawns an example server as a subprocess (by default
``mcp_ref.examples.everything``; ``--server MODULE`` picks another, run as
``python -m MODULE``, and ``--server FILE.py`` a file, run as ``python
FILE.py``; a server that does not start is one ``mcp-ref: error: ...``
line and exit status 1, as in ``mcp_ref.cli`` rule 1), talks to
it over stdio and prints every wire message once, with its direction
(``client -> server  {json}`` / ``server -> client  {json}``). Each step
starts with a ``# ...`` line saying what it shows. It speaks the era a default
``Client`` and ``Server`` agree on (2026-07-28: ``server/discover``, then every
request with its ``_meta``); ``--protocol-version REVISION`` shows another (the
``initialize`` handshake of 2025-11-25, say). With the everything server
it walks through every server feature: the era probe or handshake, the log level, the
tools (one of each content type, structured output, progress, logging, a
failing tool, a list change), the resources and templates (reading,
subscribing, an update), the prompts, completion and ping. Features a server
does not offer are skipped.

So that a newcomer can read it, base64 data is elided (``<N chars of
base64>``) and every line fits the terminal's width (100 columns when the
output is not a terminal; cli/wire.py rule 4): a longer message is cut where
a visible ``…[+N chars]`` says how much is left out, and a long ``#`` line
is wrapped into several. ``--full`` prints every message whole, one JSON
document per line. ``--html FILE`` (also with ``--scenario``) draws the same
exchange as a sequence diagram in one HTML page (``mcp_ref.cli.sequence``).
"""
from __future__ import annotations

import os
import sys
import threading

from mcp_ref.client.client import Client
from mcp_ref.cli.commands import describe_error, summary
from mcp_ref.cli.scenarios.show import WAIT, Show, note     # WAIT: how long a notification asked for may take
from mcp_ref.cli.wire import Transcript, child_env
from mcp_ref.protocol.lifecycle import SUPPORTED_REVISIONS
from mcp_ref.transports import TapTransport
from mcp_ref.transports.stdio import StdioClientTransport

# Tools with a step of their own below, called with the arguments they need.
_OWN_STEP = ("long_operation", "count", "divide", "touch_counter", "toggle_extra_tool")


def _tools(walk: Show, client: Client) -> None:
    """Every tool called once (with arguments where the demo knows them), progress, a tool error, a list change."""
    walk.step("demo.tools")
    tools = client.list_tools()
    walk.say(f"{len(tools)} tools: " + ", ".join(tool.name for tool in tools))
    for tool in tools:
        arguments = {"a": 2, "b": 3} if tool.name == "add" else {}
        if tool.name in _OWN_STEP or (tool.input_schema.get("required") and not arguments):
            continue
        walk.step(f"tools/call {tool.name}: {summary(tool.description) or 'no description'}")
        client.call_tool(tool.name, arguments)
    names = {tool.name for tool in tools}
    for name, arguments in (("long_operation", {"steps": 3}), ("count", {"n": 3})):
        if name in names:
            walk.step("demo.progress", name=name)
            heard = []
            client.call_tool(name, arguments, on_progress=lambda *progress: heard.append(progress))
            walk.say("demo.progress-heard", count=len(heard))
    if "divide" in names:
        walk.step("demo.divide")
        client.call_tool("divide", {"a": 1, "b": 0})
    if "toggle_extra_tool" in names:
        walk.step("demo.toggle")
        client.call_tool("toggle_extra_tool")
        walk.step("demo.tools-again")
        walk.say("tools now: " + ", ".join(tool.name for tool in client.list_tools()))


def _resources(walk: Show, client: Client, updated: threading.Event) -> None:
    """Every resource read, a template read, a subscription and its update."""
    walk.step("demo.resources")
    resources = client.list_resources()
    walk.say(f"{len(resources)} resources: " + ", ".join(r.uri for r in resources))
    for resource in resources:
        binary = not (resource.mime_type or "").startswith("text")
        walk.step(f"resources/read {resource.uri} ({resource.mime_type or 'no MIME type'}): "
                  + ("binary contents come base64 in 'blob'" if binary else "text contents"))
        client.read_resource(resource.uri)
    walk.step("demo.templates")
    if "everything://greeting/{name}" in [t.uri_template for t in client.list_resource_templates()]:
        walk.step("demo.template-read")
        client.read_resource("everything://greeting/demo")
    subscribe = client.server_capabilities.get("resources", {}).get("subscribe")
    if subscribe and any(r.uri == "everything://counter" for r in resources):
        walk.step("demo.subscribe")
        client.subscribe_resource("everything://counter")
        walk.step("demo.touch")
        client.call_tool("touch_counter")
        walk.say("demo.updated", heard=updated.wait(WAIT))
        walk.step("demo.counter")
        client.read_resource("everything://counter")
        walk.step("demo.unsubscribe")
        client.unsubscribe_resource("everything://counter")


def _prompts(walk: Show, client: Client) -> None:
    """Every prompt got (required arguments filled in), then a completion."""
    walk.step("demo.prompts")
    prompts = client.list_prompts()
    walk.say(f"{len(prompts)} prompts: " + ", ".join(p.name for p in prompts))
    for prompt in prompts:
        arguments = {a.name: ("everything://readme" if "uri" in a.name.lower() else "print('hi')")
                     for a in prompt.arguments or () if a.required}
        walk.step(f"prompts/get {prompt.name}: {summary(prompt.description) or 'no description'}")
        client.get_prompt(prompt.name, arguments)
    if "completions" in client.server_capabilities and any(p.name == "code_review" for p in prompts):
        walk.step("demo.complete")
        client.complete({"type": "ref/prompt", "name": "code_review"}, ("language", "py"))


def demo(module: str = "mcp_ref.examples.everything", protocol_version: str | None = None,
         transcript=None) -> int:
    """Walk through the example server (a module name or a .py file), printing the wire ``transcript``
    (default: the terminal's, shortened); in the era a default ``Client`` agrees on, or in ``protocol_version``."""
    if module.endswith(".py") or os.sep in module or (os.altsep and os.altsep in module):     # run as python FILE.py
        if not os.path.isfile(module):
            raise FileNotFoundError(f"--server {module}: no such file (give a .py file or a module name)")
        command, shown = [sys.executable, os.path.abspath(module)], f"python {module}"
    else:
        command, shown = [sys.executable, "-m", module], f"python -m {module}"
    transcript = transcript or Transcript()
    transport = TapTransport(StdioClientTransport(command, env=child_env()), transcript)
    updated = threading.Event()
    client = Client(transport, timeout=30, on_resource_updated=lambda uri: updated.set(),
                    protocol_version=protocol_version or "auto")
    walk = Show(transcript, protocol_version)           # the # lines, as a scenario's, from narration.txt
    walk.say("demo.intro", shown=shown, more="" if transcript.full else " " + note("demo.elided"))
    walk.step("demo.start")
    try:
        client.connect()
    except Exception as exc:                    # one line: the server did not start, and why
        client.close()
        hint = " (does it run its server when started this way?)" if getattr(exc, "exit_code", None) == 0 else ""
        raise RuntimeError(f"the server `{shown}` did not start: {describe_error(exc)}{hint}") from None
    with client:
        caps, info = client.server_capabilities, client.server_info
        assert info is not None                  # connected
        walk.modern = client.modern              # auto: a legacy server answered with initialize
        walk.say("demo.connected", name=info.name, version=info.version, protocol=client.protocol_version,
                 capabilities=", ".join(sorted(caps)))
        if "logging" in caps:
            walk.step("demo.log-level")
            client.set_logging_level("warning")
        if "tools" in caps:
            _tools(walk, client)
        if "resources" in caps:
            _resources(walk, client, updated)
        if "prompts" in caps:
            _prompts(walk, client)
        walk.step("demo.ping")
        client.ping()
        walk.step("demo.close")
    walk.say("closed cleanly")
    return 0


def main(argv=None) -> int:
    from mcp_ref.cli import add_commands, guarded, parse, top_parser
    parser, sub = top_parser()
    demo_parser = sub.add_parser("demo", help="run an example server and print the wire transcript",
                                 description="Run an example server over stdio and print every wire "
                                             "message, each step opened by a # line saying what it shows.")
    demo_parser.add_argument("--server", default="mcp_ref.examples.everything", metavar="MODULE|FILE.py",
                             help="the server to walk through: a module, run as 'python -m MODULE', or a "
                                  "file, run as 'python FILE.py' (default: %(default)s)")
    demo_parser.add_argument("--full", action="store_true",
                             help="print every message whole (no base64 elided, nothing cut to the "
                                  "terminal's width)")
    demo_parser.add_argument("--scenario", metavar="NAME",
                             help="show one topic the demo does not (cancel, sampling, http, ...); "
                                  "'list' names them all")
    demo_parser.add_argument("--protocol-version", choices=("auto",) + SUPPORTED_REVISIONS, metavar="REVISION",
                             help=f"show this revision: {', '.join(SUPPORTED_REVISIONS)} (default 'auto': the one "
                                  "a default client and server agree on, as the other commands)")
    demo_parser.add_argument("--host", action="store_true",
                             help="the host with a scripted model across two example servers (cli/host_demo.py)")
    demo_parser.add_argument("--html", metavar="FILE",
                             help="also write the exchange as a sequence diagram: one HTML page, "
                                  "click an arrow for its JSON (cli/sequence.py)")
    demo_parser.set_defaults(run=_demo)
    add_commands(sub)                       # serve, shell and the inspector commands (mcp_ref.cli)
    args = parse(parser, argv)
    if args.command == "demo" and args.host and args.html and not args.scenario:
        parser.error("--html draws the demo and the scenarios; it does not go with --host")
    return guarded(args.run, args)


def _demo(args) -> int:
    """The demo, a scenario or the host demo; with ``--html FILE``, what the transcript kept is then drawn there."""
    if args.host and not args.scenario:
        from mcp_ref.cli.host_demo import demo_host
        return demo_host(full=args.full, protocol_version=args.protocol_version)
    transcript = Transcript(args.full)
    if args.scenario:
        from mcp_ref.cli import scenarios
        status = scenarios.run(args.scenario, transcript, args.protocol_version)
    else:
        status = demo(args.server, args.protocol_version, transcript)
    if args.html and status == 0 and transcript.messages():
        from mcp_ref.cli.sequence import write
        title = f"mcp_ref demo --scenario {args.scenario}" if args.scenario else f"mcp_ref demo ({args.server})"
        write(args.html, transcript, title)
        sys.stderr.write(f"mcp-ref: wrote {args.html}: {len(transcript.messages())} wire messages as a "
                         "sequence diagram\n")
    return status


if __name__ == "__main__":
    sys.exit(main())
