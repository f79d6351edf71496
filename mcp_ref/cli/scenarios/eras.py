"""The scenarios of the 2026-07-28 era itself (rules in __init__.py): ``discover``
(the era probe, against a modern and a legacy server, and the fallback to
``initialize``) and ``listen`` (``subscriptions/listen``: the acknowledgement and
the change notifications tagged with the subscription id).
Spec 2026-07-28: basic/versioning, basic/patterns/subscriptions."""
from __future__ import annotations

import threading

from mcp_ref.jsonrpc.messages import ErrorObject, ErrorResponse, Request
from mcp_ref.server.server import Context, Server
from mcp_ref.transports import TapTransport
from mcp_ref.cli.scenarios.show import WAIT, wait_for


class _BeforeDiscover(TapTransport):
    """A server's end that answers ``server/discover`` with -32601 (Method not found),
    as a server written before 2026-07-28 does (it knows no such method); everything
    else reaches the server, which then speaks the legacy era it is asked for."""

    def __init__(self, inner):
        super().__init__(inner, lambda direction, message: None)        # a wrapper with nothing to show

    def receive(self):
        while True:
            message = self.inner.receive()
            if not (isinstance(message, Request) and message.method == "server/discover"):
                return message
            self.inner.send(ErrorResponse(message.id, ErrorObject(-32601, "Method not found: server/discover")))


def _talk(show, server: Server, wrap=None) -> None:
    with show.connect(server, wrap, announce=False) as client:
        show.say("discover.chose", protocol=client.protocol_version)
        show.step("discover.add/" + ("modern" if client.modern else "legacy"))
        client.call_tool("add", {"a": 2, "b": 3})


def discover(show) -> None:
    from mcp_ref.examples.demo_server import server         # the README's server: add, count, divide
    if not show.modern:
        show.say("discover.legacy-only")
        show.step("discover.handshake")
        return _talk(show, server)
    show.step("discover.modern-server")
    _talk(show, server)
    show.step("discover.legacy-server")
    show.say("discover.fallback")
    _talk(show, server, _BeforeDiscover)


def listen(show) -> None:
    server = Server("scenario-listen", version="1.0")
    server.add_resource(lambda: "debug = false", "config://app", name="config", mime_type="text/plain")
    changed, updated = threading.Event(), threading.Event()

    @server.tool
    def touch(ctx: Context) -> str:
        """Change the config and add a tool."""
        if ctx.era is None:         # 2025-11-25: changes go to ready sessions; initialized may still be queued
            ctx.session.ready.wait(WAIT)
        server.notify_resource_updated("config://app")
        server.add_tool(lambda: "new", name="extra", description="A tool added at run time.")
        return "touched"

    with show.connect(server, on_tools_list_changed=changed.set,
                      on_resource_updated=lambda uri: updated.set()) as client:
        if show.modern:
            show.say("listen.acknowledged")
        show.step("listen.subscribe")
        client.subscribe_resource("config://app")
        show.step("listen.touch")
        client.call_tool("touch")
        wait_for(updated, "notifications/resources/updated")
        wait_for(changed, "notifications/tools/list_changed")
        show.say("listen.heard")
