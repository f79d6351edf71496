"""A small server for the host and CLI tests, run as a process.

``python tests/host_servers.py --name NAME [--log FILE] [--http HOST:PORT]``

Every server has the same tool names (``echo``, ``whoami``...), so a host
with several of them sees collisions. With ``--log`` each message the server
receives is appended to FILE as one JSON line, so a test can check what
reached it (a consent denial never sends ``tools/call``; Ctrl-C sends
``notifications/cancelled``).
"""
import argparse
import json
import os
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from mcp_ref import Context, Server  # noqa: E402
from mcp_ref.transports import TapTransport  # noqa: E402


def make_server(name: str) -> Server:
    server = Server(name, version="1.0")

    @server.tool
    def echo(message: str = "hello") -> str:
        """Echo, prefixed with the server's name."""
        return f"{name}: {message}"

    @server.tool
    def whoami() -> str:
        """The server's name and process id."""
        return f"{name} {os.getpid()}"

    @server.tool
    def ask(question: str, ctx: Context) -> str:
        """Ask the host's model (sampling)."""
        result = ctx.sample([question], max_tokens=20, system_prompt="be brief")
        return f"{result.model}: {result.content.text}"

    @server.tool
    def confirm(ctx: Context) -> str:
        """Ask the user (form elicitation)."""
        result = ctx.elicit("proceed?", {"type": "object", "properties": {"ok": {"type": "boolean"}}})
        return f"{result.action} {json.dumps(result.content)}"

    @server.tool
    def roots(ctx: Context) -> str:
        """The roots this server sees."""
        return ",".join(root.uri for root in ctx.list_roots()) or "none"

    @server.tool
    def wait(ctx: Context, seconds: float = 30.0) -> str:
        """Wait until cancelled (or ``seconds``)."""
        ctx.cancelled.wait(seconds)
        return "cancelled" if ctx.cancelled.is_set() else "waited"

    @server.tool
    def crash() -> str:
        """Exit the process at once."""
        os._exit(3)

    @server.tool
    def grow(ctx: Context) -> str:
        """Add a tool named ``extra`` (notifications/tools/list_changed)."""
        # list_changed goes to READY sessions only, and notifications/initialized is handled on the
        # notify thread, which under load may come after this call started: wait for it. (2026-07-28 has
        # no handshake: the change goes to the client's subscriptions/listen.)
        if ctx.era is None:
            ctx.session.ready.wait(10)
        server.add_tool(lambda: "extra", name="extra", description="added by grow")
        return "grown"

    @server.resource(f"{name}://status", mime_type="text/plain")
    def status() -> str:
        return f"{name} ok"

    @server.resource("shared://same", mime_type="text/plain")
    def same() -> str:
        return f"same from {name}"

    @server.prompt
    def hello(who: str = "world") -> str:
        """Say hello."""
        return f"hello {who} from {name}"
    return server


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--name", default="test")
    parser.add_argument("--log")
    parser.add_argument("--http")
    args = parser.parse_args()
    server = make_server(args.name)
    if args.http:
        host, _, port = args.http.rpartition(":")
        server.run(http=(host, int(port)))
        return
    from mcp_ref.transports.stdio import StdioServerTransport
    transport = StdioServerTransport()
    if args.log:
        lock = threading.Lock()

        def tap(direction, message):
            if direction == "receive":
                data = [m.to_dict() for m in message] if isinstance(message, list) else message.to_dict()
                with lock, open(args.log, "a", encoding="utf-8") as f:
                    f.write(json.dumps({"time": time.time(), "message": data}) + "\n")
        transport = TapTransport(transport, tap)
    session = server.serve(transport, eof_grace=1.0)
    session.wait_closed()


if __name__ == "__main__":
    main()
