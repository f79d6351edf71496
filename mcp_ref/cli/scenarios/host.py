"""The ``host`` scenario (rules in __init__.py): two servers under one ``Host``
(each on Streamable HTTP at 127.0.0.1, so the scenario stays in this process),
their tools under qualified names, and the consent hook deciding: a form
elicitation granted for one server and refused for the other. In 2026-07-28 the
refusal travels as ``{"action": "decline"}`` in the retried call's
``inputResponses`` (host/core.py rule 7; Spec 2026-07-28: basic/patterns/mrtr,
client/elicitation); in the legacy era the elicitation request is answered -1.
Spec: architecture#host."""
from __future__ import annotations

from mcp_ref.server.server import Context, Server
from mcp_ref.cli.scenarios.show import WAIT
from mcp_ref.cli.wire import host_trace


def _server(name: str) -> Server:
    server = Server(name, version="1.0")

    @server.tool
    def proceed(ctx: Context) -> str:
        """Ask the user to confirm, with a form."""
        reply = ctx.elicit(f"{name}: go ahead?", {"type": "object", "properties": {"ok": {"type": "boolean"}}})
        return f"{name}: the user said {reply.action}"
    return server


def host(show) -> None:
    from mcp_ref.host import Consent, Host
    from mcp_ref.transports.http.server.app import start_http
    handles = {name: start_http(_server(name), ("127.0.0.1", 0)) for name in ("files", "mail")}

    def consent(request: Consent):
        granted = request.kind != "elicitation" or request.server == "files"
        if request.kind in ("elicitation", "tool_call"):
            show.say(f"consent: {request.kind} ({request.stage}) for server {request.server!r}: "
                     + ("granted" if granted else "refused"))
        return granted

    config = {"mcpServers": {name: {"url": handle.url, "transport": "http"} for name, handle in handles.items()}}
    show.step("Host(two servers): one client per server, each probing its own server"
              + (" with server/discover (the default era)" if show.modern else f" ({show.version}: initialize)")
              + "; no server sees the other's messages")
    try:
        with Host(config, consent=consent, elicitation=lambda request: {"action": "accept", "content": {"ok": True}},
                  trace=host_trace(show.transcript), timeout=WAIT, protocol_version=show.version) as the_host:
            show.step("the catalogue names each tool server__tool, so the two 'proceed' tools never clash")
            show.say("tools: " + ", ".join(tool.name for tool in the_host.tools()))
            show.step("files__proceed: the server asks the user (elicitation); the consent hook grants it, "
                      "the user accepts")
            show.say("result: " + the_host.call_tool("files__proceed").content[0].text)
            show.step("mail__proceed: the consent hook refuses the elicitation. "
                      + ("2026-07-28: an inputResponses value is a result, never an error, so the host answers "
                         "{\"action\": \"decline\"} in the retried call (Spec 2026-07-28: basic/patterns/mrtr, "
                         "client/elicitation); a refused sampling request would end the call at the host, no "
                         "retry: 'the server is not waiting' (client/sampling#error-handling)" if show.modern else
                         "the legacy era answers the server's elicitation/create with error -1 (the user "
                         "rejected it); 2026-07-28 answers a decline instead"))
            result = the_host.call_tool("mail__proceed")
            show.say("result: " + result.content[0].text + (" (an error result)" if result.is_error else ""))
    finally:
        for handle in handles.values():
            handle.shutdown()


SCENARIOS = {
    "host": ("two servers under one host: qualified tool names, a consent prompt granted and one refused",
             host),
}
