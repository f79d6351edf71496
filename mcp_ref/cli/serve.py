"""``mcp-ref serve MODULE[:ATTR]``: run a server object over stdio or Streamable HTTP.

Rules:

1. ``MODULE`` is a module name (imported with the current folder on the
   path, as ``python -m`` does) or a ``.py`` file. ``ATTR`` names the
   ``Server`` in it; without it, the module's ``server`` (or ``mcp``, ``app``)
   attribute, else its only ``Server``. Anything else is an error naming
   what was found.
2. stdio is the default (stdout then carries only MCP messages:
   basic/transports#stdio); ``--http HOST:PORT`` serves Streamable HTTP
   with the legacy HTTP+SSE endpoints, with ``--stateless``,
   ``--json-response`` and ``--allowed-origin`` (repeatable) passed to
   ``serve_http``. The HTTP server prints its URL and stops on Ctrl-C.
3. ``--trace`` (stdio) prints each message on stderr as the inspector
   commands do (wire.py rule 2), ``->`` for what the server sends: stdout
   stays the protocol's.
"""
from __future__ import annotations

import functools
import importlib
import importlib.util
import os
import sys

__all__ = ["add_serve_arguments", "serve_command", "load_server", "address"]


def address(text: str) -> tuple:
    """``HOST:PORT`` as ``(host, port)``, for ``--http`` (an empty host is 127.0.0.1)."""
    import argparse
    host, _, port = text.rpartition(":")
    if not (port.isascii() and port.isdigit()):
        raise argparse.ArgumentTypeError(f"expected HOST:PORT, not {text!r}")
    return host or "127.0.0.1", int(port)


def add_serve_arguments(parser) -> None:
    """``serve``'s arguments, and ``serve_command`` as what it runs."""
    parser.add_argument("target", metavar="MODULE[:ATTR]", help="a module or .py file, and the Server in it")
    parser.add_argument("--http", metavar="HOST:PORT", type=address,
                        help="serve Streamable HTTP (and legacy HTTP+SSE) instead of stdio; port 0 picks one")
    parser.add_argument("--path", default="/mcp", help="(HTTP) the endpoint path (default %(default)s)")
    parser.add_argument("--stateless", action="store_true", help="(HTTP) no sessions: every POST stands alone")
    parser.add_argument("--json-response", action="store_true",
                        help="(HTTP) answer each POST with one JSON body, never an SSE stream")
    parser.add_argument("--allowed-origin", action="append", metavar="ORIGIN",
                        help="(HTTP) an Origin browsers may call from (repeatable)")
    parser.add_argument("--trace", action="store_true", help="(stdio) print every JSON-RPC message on stderr")
    parser.set_defaults(run=serve_command)


def load_server(target: str):
    """The ``Server`` that ``MODULE[:ATTR]`` names (rule 1)."""
    from mcp_ref.server.server import Server
    module_name, _, attr = target.partition(":")
    if module_name.endswith(".py") or os.sep in module_name:
        path = os.path.abspath(module_name)
        if not os.path.isfile(path):
            raise FileNotFoundError(f"no such file: {module_name}")
        spec = importlib.util.spec_from_file_location(os.path.splitext(os.path.basename(path))[0], path)
        if spec is None or spec.loader is None:    # a suffix Python does not load (server.txt)
            raise ImportError(f"cannot load {module_name}: not a Python source file (.py)")
        module = importlib.util.module_from_spec(spec)
        sys.path.insert(0, os.path.dirname(path))
        spec.loader.exec_module(module)
    else:
        if "" not in sys.path and os.getcwd() not in sys.path:
            sys.path.insert(0, os.getcwd())
        module = importlib.import_module(module_name)
    if attr and not hasattr(module, attr):
        raise LookupError(f"{module_name} has no attribute {attr!r}")
    servers = [name for name, value in vars(module).items() if isinstance(value, Server)]
    named = [name for name in ("server", "mcp", "app") if name in servers]          # rule 1, in this order
    if not attr and not named and len(servers) != 1:
        raise LookupError(f"{module_name} holds {'no' if not servers else 'several'} mcp_ref Server "
                          f"objects{': ' + ', '.join(servers) if servers else ''}; name one as {module_name}:ATTR")
    found = getattr(module, attr or (named or servers)[0])
    if not isinstance(found, Server):
        raise TypeError(f"{target} is a {type(found).__name__}, not an mcp_ref Server")
    return found


def serve_command(args) -> int:
    server = load_server(args.target)
    if args.http is not None and args.trace:
        raise ValueError("--trace applies to stdio; trace an HTTP server from the client side (mcp-ref --trace)")
    for name in ("stateless", "json_response", "allowed_origin"):
        if args.http is None and getattr(args, name):
            raise ValueError(f"--{name.replace('_', '-')} applies to --http only")
    if args.http is not None:
        server.run(http=args.http, path=args.path, stateless=args.stateless, json_response=args.json_response,
                   allowed_origins=args.allowed_origin)
    elif not args.trace:
        server.run()
    else:                                   # rule 3: server.run's stdio loop, with the transport tapped
        from mcp_ref.transports import TapTransport
        from mcp_ref.transports.stdio import StdioServerTransport
        from mcp_ref.cli.wire import trace
        transport = TapTransport(StdioServerTransport(), functools.partial(trace, server.info.name))
        session = server.serve(transport, eof_grace=server.eof_grace)
        try:
            session.wait_closed()
        finally:
            session.close("server stopped")
    return 0
