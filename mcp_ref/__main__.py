"""Command line: ``python -m mcp_ref demo`` (or the ``mcp-ref`` script).

``demo`` spawns an example server as a subprocess, talks to it over stdio
and prints every wire message with its direction, then exits 0.
"""
import argparse
import json
import sys

from .client import Client
from .transports.stdio import StdioClientTransport
from .transports import TapTransport


def _transcript(direction: str, message) -> None:
    arrow = "client -> server" if direction == "send" else "server -> client"
    if isinstance(message, list):
        body = json.dumps([m.to_dict() for m in message], ensure_ascii=False)
    else:
        body = json.dumps(message.to_dict(), ensure_ascii=False)
    print(f"{arrow}  {body}", flush=True)


def demo(module: str = "mcp_ref.examples.demo_server") -> int:
    """Walk through the example server, printing the wire transcript."""
    transport = TapTransport(StdioClientTransport([sys.executable, "-m", module]), _transcript)
    with Client(transport, timeout=30) as client:
        print(f"# connected to {client.server_info.name} {client.server_info.version}, "
              f"protocol {client.protocol_version}")
        if client.instructions:
            print(f"# instructions: {client.instructions}")
        tools = client.list_tools()
        print("# tools: " + ", ".join(tool.name for tool in tools))
        if any(t.name == "add" for t in tools):
            result = client.call_tool("add", {"a": 2, "b": 3})
            print(f"# add(2, 3) -> {result.content[0].text}")
        if any(t.name == "count" for t in tools):
            result = client.call_tool("count", {"n": 3},
                                      on_progress=lambda p, total, msg: print(f"# progress {p}/{total} {msg}"))
            print(f"# count -> {result.content[0].text}")
        if any(t.name == "divide" for t in tools):
            result = client.call_tool("divide", {"a": 1, "b": 0})
            print(f"# divide(1, 0) -> is_error={result.is_error}: {result.content[0].text}")
        client.ping()
        print("# ping answered")
    print("# closed cleanly")
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="mcp-ref", description="mcp_ref command line")
    sub = parser.add_subparsers(dest="command", required=True)
    demo_parser = sub.add_parser("demo", help="run an example server and print the wire transcript")
    demo_parser.add_argument("--server", default="mcp_ref.examples.demo_server",
                             help="module of the example server to run (default: %(default)s)")
    args = parser.parse_args(argv)
    if args.command == "demo":
        return demo(args.server)
    return 2


if __name__ == "__main__":
    sys.exit(main())
