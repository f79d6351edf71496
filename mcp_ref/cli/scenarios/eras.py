"""The scenarios of the 2026-07-28 era itself (rules in __init__.py): ``discover``
(the era probe, against a modern and a legacy server, and the fallback to
``initialize``) and ``listen`` (``subscriptions/listen``: the acknowledgement and
the change notifications tagged with the subscription id).
Spec 2026-07-28: basic/versioning, basic/patterns/subscriptions."""
from __future__ import annotations

import threading

from mcp_ref.jsonrpc.messages import ErrorObject, ErrorResponse, Request
from mcp_ref.server.server import Context, Server
from mcp_ref.cli.scenarios.show import WAIT, wait_for


class _BeforeDiscover:
    """A server's end that answers ``server/discover`` with -32601 (Method not found),
    as a server written before 2026-07-28 does (it knows no such method); everything
    else reaches the server, which then speaks the legacy era it is asked for."""

    def __init__(self, inner):
        self.inner = inner

    def receive(self):
        while True:
            message = self.inner.receive()
            if not (isinstance(message, Request) and message.method == "server/discover"):
                return message
            self.inner.send(ErrorResponse(message.id, ErrorObject(-32601, "Method not found: server/discover")))

    def send(self, message, related_id=None) -> None:
        self.inner.send(message, related_id)

    def close(self) -> None:
        self.inner.close()


def _server() -> Server:
    server = Server("scenario-discover", version="1.0")

    @server.tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b
    return server


def _talk(show, server: Server, wrap=None) -> None:
    with show.connect(server, wrap, announce=False) as client:
        show.say(f"the client chose protocol {client.protocol_version}")
        show.step("tools/call add: " + ("_meta names the revision on the request itself" if client.modern
                                        else "no _meta: the session's handshake set the revision"))
        client.call_tool("add", {"a": 2, "b": 3})


def discover(show) -> None:
    if not show.modern:
        show.say(f"asked for {show.version}, a legacy revision, the client sends no probe: initialize "
                 "comes first, as it did before 2026-07-28 (drop --protocol-version to see the probe)")
        show.step("initialize, then notifications/initialized")
        _talk(show, _server())
        return
    show.step("a modern server: Client() probes with server/discover (its _meta names 2026-07-28); the "
              "DiscoverResult lists supportedVersions, capabilities and serverInfo. No initialize, no "
              "session: every later request carries its own _meta (Spec 2026-07-28: basic/versioning)")
    _talk(show, _server())
    show.step("a legacy server (written before 2026-07-28): it answers server/discover -32601, Method not "
              "found, as it answers any method it does not know before initialize")
    show.say("the client reads that as 'a legacy server' and falls back: initialize offering "
             "2025-11-25, notifications/initialized, then the session as before. An empty {} answer, a "
             "malformed DiscoverResult or no answer within init_timeout also mean legacy "
             "(Spec 2026-07-28: basic/versioning#backward-compatibility-with-initialization-based-versions)")
    _talk(show, _server(), _BeforeDiscover)


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
        if not show.modern:
            show.step("resources/subscribe config://app: 2025-11-25 subscribes per resource, with a request "
                      "of its own; list changes come on the session because the server declared listChanged")
            client.subscribe_resource("config://app")
            show.step("tools/call touch: notifications/resources/updated and notifications/tools/list_changed "
                      "arrive on the session; 2026-07-28 asks for them with subscriptions/listen instead")
            client.call_tool("touch")
        else:
            show.say("that subscriptions/listen asked (notifications filter) for the list changes the server "
                     "declares; the server's first message on it, notifications/subscriptions/acknowledged, "
                     "carries the subscription id in _meta (io.modelcontextprotocol/subscriptionId)")
            show.step("subscribe_resource config://app: 2026-07-28 has no resources/subscribe; the client opens "
                      "a new listen whose filter adds resourceSubscriptions, waits for its acknowledgement, "
                      "then cancels the old one (Spec 2026-07-28: basic/patterns/subscriptions)")
            client.subscribe_resource("config://app")
            show.step("tools/call touch: notifications/resources/updated and notifications/tools/list_changed "
                      "come on the listen stream, each tagged in _meta with the subscription id it answers")
            client.call_tool("touch")
        wait_for(updated, "notifications/resources/updated")
        wait_for(changed, "notifications/tools/list_changed")
        show.say("both reached the client's callbacks (on_resource_updated, on_tools_list_changed)")


SCENARIOS = {
    "discover": ("the era probe: server/discover to a modern server, then to a legacy one and the "
                 "fallback to initialize", discover),
    "listen": ("change notifications: subscriptions/listen, its acknowledgement, notifications tagged "
               "with the subscription id", listen),
}
