"""The inspector commands: one request each, printed for a person or, with ``--json``, for a script.

Each command is ``(add_arguments(parser), run(client, args, out) -> exit status)``
in ``COMMANDS``; the one-shot command line and the shell (shell.py) both use
them, so they behave the same.

Rules:

1. Human-readable output is stable (the tests compare it): no times, no ids.
   ``--json`` (output only, on every command) prints the result as the server
   sent it, as JSON.
2. ``key=value`` arguments: the value is read as JSON when it parses
   (``n=3``, ``flag=true``, ``xs=[1,2]``, ``s='"3"'``), else taken as a string
   (``message=hello``). ``--args-json '{...}'`` gives the whole object instead
   (input only; a word that looks like an object points there).
3. A tool result with ``isError`` prints its content and exits 1, like
   any error; a progress bar is drawn on stderr while a call reports progress.
4. A tool result prints each content block once. Its ``structuredContent`` is
   printed (``structured: {json}``) only when no text block already carries
   it: a text block whose JSON equals it, or equals ``X`` of a
   ``{"result": X}`` wrapping, mirrors it (Spec: server/tools#structured-content
   asks tools to send that text for older clients).
5. ``tools`` shows each tool's parameters from its ``inputSchema``:
   ``(name: type, other?: type)``, ``?`` marking an optional one, as
   ``prompts`` marks its optional arguments.
"""
from __future__ import annotations

import contextlib
import itertools
import json
import queue
import sys

from mcp_ref.cli.wire import ProgressBar, pairs
from mcp_ref.types import LOGGING_LEVELS

__all__ = ["COMMANDS", "add_arguments", "parse_arguments", "CommandError"]


class CommandError(Exception):
    """A command's own failure (bad ``key=value``, say): printed, exit status 1."""


def parse(parser, argv):
    """``parser.parse_args(argv)``, except that ``key=value`` words after an option
    (``call add --json a=1``) still go to ``call``/``prompt``'s arguments: argparse
    fills a ``*`` positional once, with the words before the first option."""
    args, extra = parser.parse_known_args(argv)
    words = getattr(args, "arguments", None)
    if extra and isinstance(words, list) and not any(word.startswith("-") for word in extra):
        words.extend(extra)
    elif extra:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    return args


def describe_error(exc: BaseException) -> str:
    """One line for the user about a failed command (the CLI's and the shell's)."""
    from mcp_ref.errors import ConnectionClosed, McpError
    if isinstance(exc, ConnectionClosed):            # its stderr tail: the last line says most
        text = exc.reason + (f" (exit code {exc.exit_code})" if exc.exit_code is not None else "")
        tail = [line.strip() for line in exc.stderr_tail.splitlines() if line.strip()]
        return text + (f"; its last stderr line: {tail[-1]}" if tail else "")
    if isinstance(exc, McpError) and str(exc.code) not in str(exc):
        return f"{exc} (JSON-RPC error {exc.code})"
    if isinstance(exc, FileNotFoundError) and exc.filename:
        return f"cannot run {exc.filename!r}: no such file or command"
    if isinstance(exc, KeyError):
        return str(exc.args[0]) if exc.args else "not found"
    return str(exc) or type(exc).__name__


def parse_arguments(pairs, raw=None) -> dict:
    """The arguments object from ``key=value`` words or an ``--args-json`` text (rule 2)."""
    if raw is not None:
        if pairs:
            raise CommandError("give arguments as key=value words or as --args-json, not both")
        try:
            value = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise CommandError(f"--args-json is not JSON: {exc}") from None
        if not isinstance(value, dict):
            raise CommandError(f"--args-json must be an object, not {raw!r}")
        return value
    arguments = {}
    for pair in pairs or ():
        key, sep, text = pair.partition("=")
        if pair.lstrip().startswith("{"):
            raise CommandError(f"arguments are key=value; give a JSON object with --args-json {pair!r}")
        if not sep or not key:
            raise CommandError(f"arguments are key=value, not {pair!r}")
        try:
            arguments[key] = json.loads(text)
        except json.JSONDecodeError:
            arguments[key] = text
    return arguments


def _answer(out, args, data, lines) -> int:
    """Rule 1: ``data`` as JSON with ``--json``, else ``lines`` for a person; exit status 0."""
    for line in [json.dumps(data, indent=2, ensure_ascii=False)] if args.json else lines:
        out.write(line + ("" if line.endswith("\n") else "\n"))
    return 0


def summary(text) -> str:
    """The first paragraph of a description, on one line."""
    return " ".join((text or "").strip().split("\n\n", 1)[0].split())


def _block(block) -> str:
    """One content block as a line or more of text."""
    kind = block.type
    if kind == "text":
        return block.text
    if kind in ("image", "audio"):
        return f"[{kind} {block.mime_type}, {len(block.data) * 3 // 4} bytes base64-decoded]"
    if kind == "resource_link":
        return f"[resource link {block.uri}" + (f" ({block.name})" if block.name else "") + "]"
    if kind == "resource":
        return _contents(block.resource)
    return f"[{kind}]"


def _contents(contents) -> str:
    if getattr(contents, "text", None) is not None:
        return contents.text
    return f"[blob {contents.mime_type or 'no MIME type'}, {len(contents.blob) * 3 // 4} bytes base64-decoded]"


# ---------------------------------------------------------------------- the commands
def info(client, args, out) -> int:
    server = client.server_info
    title = f" ({server.title})" if server.title else ""
    return _answer(out, args, {"serverInfo": server.to_dict(), "protocolVersion": client.protocol_version,
                               "capabilities": client.server_capabilities, "instructions": client.instructions},
                   [f"server: {server.name} {server.version}{title}", f"protocol: {client.protocol_version}",
                    f"capabilities: {', '.join(sorted(client.server_capabilities)) or 'none'}"]
                   + ([f"instructions: {client.instructions}"] if client.instructions else []))


def _listing(method: str, name, describe):
    """A listing command: the items ``client.<method>()`` returns, one a line: ``name``, then ``describe``."""
    def run(client, args, out) -> int:
        items = getattr(client, method)()
        width = max([len(name(item)) for item in items] + [0])
        return _answer(out, args, [item.to_dict() for item in items],
                       [f"{name(item):<{width}}  {describe(item).strip()}".rstrip() for item in items])
    return run


def _schema_type(schema) -> str:
    """A JSON Schema's type in a word or two: ``number``, ``string[]``, ``integer|null``, ``Point``."""
    if not isinstance(schema, dict):
        return "any"
    kind = schema.get("type")
    if isinstance(kind, list):
        return "|".join(kind)
    if kind == "array":
        return _schema_type(schema.get("items")) + "[]" if schema.get("items") else "array"
    if kind:
        return kind
    if "$ref" in schema:
        return schema["$ref"].rsplit("/", 1)[-1]
    for key in ("anyOf", "oneOf"):
        if key in schema:
            return "|".join(_schema_type(option) for option in schema[key])
    if "enum" in schema:
        return "|".join(json.dumps(value) for value in schema["enum"])
    return "any"


def _parameters(schema) -> str:
    """``(a: number, b?: string)`` from a tool's ``inputSchema`` (rule 5)."""
    properties = (schema or {}).get("properties") or {}
    required = set((schema or {}).get("required") or ())
    return "(" + ", ".join(f"{name}{'' if name in required else '?'}: {_schema_type(value)}"
                           for name, value in properties.items()) + ")"


def _name_and_type(item) -> str:
    """A resource's or template's name, and its MIME type when it has one."""
    return (item.name or "") + (f" ({item.mime_type})" if item.mime_type else "")


tools = _listing("list_tools", lambda t: t.name, lambda t: f"{_parameters(t.input_schema)} {summary(t.description)}")
resources = _listing("list_resources", lambda r: r.uri, _name_and_type)
templates = _listing("list_resource_templates", lambda t: t.uri_template, _name_and_type)
prompts = _listing("list_prompts", lambda p: p.name, lambda p: "({}) {}".format(
    ", ".join(a.name + ("" if a.required else "?") for a in p.arguments or ()), summary(p.description)))


def _mirrors(block, structured) -> bool:
    """Whether a content block is the text form of the structured content (rule 4)."""
    if block.type != "text":
        return False
    try:
        value = json.loads(block.text)
    except ValueError:
        return False
    wrapped = isinstance(structured, dict) and list(structured) == ["result"]
    return value == structured or (wrapped and value == structured["result"])


def call(client, args, out) -> int:
    arguments = parse_arguments(args.arguments, args.args_json)
    try:
        result = client.call_tool(args.tool, arguments, on_progress=ProgressBar())
    finally:
        ProgressBar.interrupt()
    lines, structured = [_block(block) for block in result.content], result.structured_content
    if structured is not None and not any(_mirrors(block, structured) for block in result.content):
        lines.append("structured: " + json.dumps(structured, ensure_ascii=False))
    _answer(out, args, result.to_dict(), lines)
    if result.is_error:
        raise CommandError(f"tool {args.tool!r} reported an error (isError)")
    return 0


def read(client, args, out) -> int:
    result = client.read_resource(args.uri)
    return _answer(out, args, result.to_dict(), [_contents(contents) for contents in result.contents])


def prompt(client, args, out) -> int:
    result = client.get_prompt(args.name, parse_arguments(args.arguments, args.args_json))
    return _answer(out, args, result.to_dict(), ([f"# {result.description}"] if result.description else [])
                   + [f"{message.role}: {_block(message.content)}" for message in result.messages])


def complete(client, args, out) -> int:
    resource = "://" in args.ref or "{" in args.ref
    ref = {"type": "ref/resource", "uri": args.ref} if resource else {"type": "ref/prompt", "name": args.ref}
    context = pairs(args.context, "--context")               # completion context values are strings
    completion = client.complete(ref, (args.argument, args.value), {"arguments": context} if context else None)
    return _answer(out, args, completion.to_dict(), completion.values)


def subscribe(client, args, out) -> int:
    """Print each update of ``uri`` (its new contents) until Ctrl-C or ``--count`` updates."""
    updates: queue.Queue = queue.Queue()
    client.on("notifications/resources/updated", lambda params: updates.put(params.get("uri")))
    client.subscribe_resource(args.uri)
    sys.stderr.write(f"subscribed to {args.uri}; waiting for updates (Ctrl-C to stop)\n")     # line-buffered
    with contextlib.suppress(KeyboardInterrupt):                    # Ctrl-C ends the wait
        for _ in itertools.count() if args.count is None else range(args.count):
            uri = updates.get()
            result = client.read_resource(uri)
            if args.json:
                out.write(json.dumps({"uri": uri, **result.to_dict()}, ensure_ascii=False) + "\n")
            else:
                out.write(f"updated {uri}: " + " ".join(_contents(c) for c in result.contents) + "\n")
            out.flush()
    client.unsubscribe_resource(args.uri)
    return 0


def ping(client, args, out) -> int:
    import time
    start = time.monotonic()
    client.ping()
    return _answer(out, args, {"ok": True, "seconds": round(time.monotonic() - start, 6)}, ["pong"])


def log_level(client, args, out) -> int:
    client.set_logging_level(args.level)
    return _answer(out, args, {"level": args.level}, [f"log level set to {args.level}"])


# ---------------------------------------------------------------------- arguments
_KEY_VALUES = [("arguments", {"nargs": "*", "metavar": "key=value", "help": "arguments; values are JSON when they parse"}),
               ("--args-json", {"metavar": "'{...}'", "help": "the arguments as one JSON object instead"})]
_URI: list = [("uri", {})]

# name -> (help, its arguments beside --json, run)
COMMANDS = {
    "info": ("the server's name, version, protocol revision, capabilities, instructions", [], info),
    "tools": ("list the tools with their parameters", [], tools),
    "call": ("call a tool: call TOOL key=value ... (or --args-json '{...}')",
             [("tool", {"help": "the tool's name"})] + _KEY_VALUES, call),
    "resources": ("list the resources", [], resources),
    "read": ("read a resource by URI", _URI, read),
    "templates": ("list the resource templates", [], templates),
    "prompts": ("list the prompts", [], prompts),
    "prompt": ("get a prompt: prompt NAME key=value ...", [("name", {"help": "the prompt's name"})] + _KEY_VALUES,
               prompt),
    "complete": ("complete an argument: complete PROMPT|TEMPLATE ARGUMENT [VALUE]", [
        ("ref", {"help": "a prompt name, or a resource template URI"}),
        ("argument", {"help": "the argument being completed"}),
        ("value", {"nargs": "?", "default": "", "help": "what was typed so far"}),
        ("--context", {"nargs": "*", "metavar": "key=value", "help": "arguments already given"})], complete),
    "subscribe": ("print a resource's updates until Ctrl-C",
                  _URI + [("--count", {"type": int, "help": "stop after this many updates"})], subscribe),
    "ping": ("check the server answers", [], ping),
    "log-level": ("set the server's log level", [("level", {"choices": LOGGING_LEVELS})], log_level),
}


def add_arguments(parser, name: str):
    """Give ``parser`` the arguments of command ``name`` (and ``--json``, rule 1); returns it."""
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    for argument, options in COMMANDS[name][1]:
        parser.add_argument(argument, **options)
    return parser
