"""The ``mcp-ref`` command line beyond ``demo``: serve, inspect, shell (stdlib argparse and cmd only).

``python -m mcp_ref`` (or ``mcp-ref``) works from any folder with the
standard library alone, to smoke-test any MCP server, ours or anyone's::

    mcp-ref serve mypackage.server:server --http 127.0.0.1:8000
    mcp-ref tools --stdio "python -m mcp_ref.examples.everything"
    mcp-ref call add a=2 b=3 --url http://127.0.0.1:8000/mcp
    mcp-ref shell --config servers.json --server files

Rules:

1. Every command exits 0 on success, 1 with one line ``mcp-ref: error: ...``
   on stderr for any failure (an error answer, a tool's ``isError``, a
   server that would not start, a bad argument), 2 for a usage error, and
   130 after Ctrl-C.
2. Ctrl-C during a request cancels that request: the server is sent
   ``notifications/cancelled`` (Spec: basic/utilities/cancellation), then the
   command ends (the shell goes back to its prompt). The server is then shut
   down as usual, never killed first.
3. Common options on every inspector command: the target (wire.py rule 1),
   ``--trace`` (wire.py rule 2), ``--protocol-version`` (default ``auto``: the
   era probe, as a default ``Client``), ``--timeout``,
   ``--root PATH`` (roots offered); ``--json`` for machine-readable output
   (output only: ``call`` and ``prompt`` take ``--args-json`` for input).
4. ``mcp-ref --version`` prints the package version and the protocol
   revisions spoken, newest first.
"""
from __future__ import annotations

import argparse
import sys

from mcp_ref.cli.commands import COMMANDS, add_arguments, describe_error, parse
from mcp_ref.cli.serve import add_serve_arguments
from mcp_ref.cli.wire import ProgressBar, connect
from mcp_ref.protocol import lifecycle

__all__ = ["add_commands", "top_parser", "parse", "guarded"]


class _Help(argparse.RawDescriptionHelpFormatter):
    """Help with each command's text beside its name: argparse measures the command
    names without their indent, so a long one (``resources``) would wrap."""

    def add_argument(self, action):
        super().add_argument(action)
        if isinstance(action, argparse._SubParsersAction):
            longest = max(len(name) for name in action.choices)
            self._action_max_length = max(self._action_max_length,
                                          self._current_indent + self._indent_increment + longest)


def top_parser():
    """``(parser, subparsers)``: ``mcp-ref`` with ``-h`` and ``--version`` (rule 4), no command yet."""
    from mcp_ref import __version__
    parser = argparse.ArgumentParser(prog="mcp-ref", description="mcp_ref command line: inspect any MCP "
                                     "server, serve one, or watch the wire in the demo.",
                                     epilog="'mcp-ref COMMAND -h' shows the options of a command.",
                                     formatter_class=_Help)
    parser.add_argument("--version", action="version",
                        help="print the package version and the protocol revisions it speaks",
                        version=f"mcp-ref {__version__}\nMCP protocol revisions: "
                                f"{', '.join(lifecycle.SUPPORTED_REVISIONS)}")
    sub = parser.add_subparsers(dest="command", required=True, title="commands", metavar="COMMAND")
    return parser, sub


def add_commands(sub) -> None:
    """Add serve, shell and the inspector commands to ``sub`` (argparse subparsers): each sets ``run``."""
    add_serve_arguments(sub.add_parser("serve", help="run a server object over stdio or HTTP: serve MODULE[:ATTR]"))
    common = argparse.ArgumentParser(add_help=False)            # what the shell and the inspector take (rule 3)
    target = common.add_argument_group("target (one of)")
    target.add_argument("--stdio", metavar="COMMAND", help='spawn this command line: --stdio "python server.py"')
    target.add_argument("--url", help="a Streamable HTTP (or legacy HTTP+SSE) endpoint")
    target.add_argument("--config", metavar="FILE", help="an mcpServers configuration file (with --server)")
    target.add_argument("--server", metavar="NAME", help="the server of --config to use")
    options = common.add_argument_group("connection")
    options.add_argument("--env", action="append", metavar="KEY=VALUE", help="(stdio) an environment variable")
    options.add_argument("--header", action="append", metavar="KEY=VALUE", help="(HTTP) a request header")
    options.add_argument("--root", action="append", metavar="PATH", help="offer this root (file path or URI)")
    options.add_argument("--trace", action="store_true", help="print every JSON-RPC message on stderr")
    options.add_argument("--protocol-version", choices=("auto",) + tuple(lifecycle.SUPPORTED_REVISIONS),
                         default="auto", metavar="REVISION",
                         help=f"speak this protocol revision: {', '.join(lifecycle.SUPPORTED_REVISIONS)} "
                              f"(default 'auto', as the host: server/discover for {lifecycle.LATEST_REVISION}, "
                              "then initialize with a server that does not answer it)")
    options.add_argument("--timeout", type=float, default=60.0, metavar="SECONDS",
                         help="seconds to wait for each answer (default %(default)g)")
    shell = sub.add_parser("shell", parents=[common], help="an interactive inspector")
    shell.add_argument("target", nargs="?", help="a URL or a command line (instead of --url/--stdio)")
    shell.set_defaults(run=_shell)
    for name, (text, _, _) in COMMANDS.items():
        add_arguments(sub.add_parser(name, parents=[common], help=text, description=text), name).set_defaults(
            run=_inspect, inspector=name)


def guarded(run, args) -> int:
    """Run ``run(args)`` under rule 1 and rule 2."""
    try:
        return run(args)
    except KeyboardInterrupt:
        sys.stderr.write("\nmcp-ref: interrupted; the request in flight was cancelled\n")
        return 130
    except Exception as exc:          # noqa: BLE001 -- rule 1: a clear line, no traceback
        lines = (line.strip() for line in describe_error(exc).splitlines())
        sys.stderr.write(f"mcp-ref: error: {'; '.join(line for line in lines if line)}\n")
        return 1


def _inspect(args) -> int:
    with connect(args, on_log=_print_log) as client:
        return COMMANDS[args.inspector][2](client, args, sys.stdout)


def _print_log(params) -> None:
    logger = f" {params.logger}" if params.logger else ""
    data = params.data.get("message", params.data) if isinstance(params.data, dict) else params.data
    ProgressBar.interrupt()
    sys.stderr.write(f"[log {params.level}{logger}] {data}\n")


def _shell(args) -> int:
    from mcp_ref.cli.shell import run_shell
    if args.target:
        if args.stdio or args.url or args.config:
            raise ValueError("give the target once: a positional TARGET or --stdio/--url/--config")
        setattr(args, "url" if args.target.startswith(("http://", "https://")) else "stdio", args.target)
    return run_shell(args)
