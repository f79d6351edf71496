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

    def consent(request: Consent):
        granted = request.kind != "elicitation" or request.server == "files"
        if request.kind in ("elicitation", "tool_call"):
            show.say(f"consent: {request.kind} ({request.stage}) for server {request.server!r}: "
                     + ("granted" if granted else "refused"))
        return granted

    with start_http(_server("files")) as files, start_http(_server("mail")) as mail:
        config = {"mcpServers": {"files": {"url": files.url, "transport": "http"},
                                 "mail": {"url": mail.url, "transport": "http"}}}
        show.step("host.start")
        with Host(config, consent=consent, elicitation=lambda request: {"action": "accept", "content": {"ok": True}},
                  trace=show.transcript.host, timeout=WAIT, protocol_version=show.version) as the_host:
            show.step("host.catalogue")
            show.say("tools: " + ", ".join(tool.name for tool in the_host.tools()))
            show.step("host.granted")
            show.say("result: " + the_host.call_tool("files__proceed").content[0].text)
            show.step("host.refused")
            result = the_host.call_tool("mail__proceed")
            show.say("result: " + result.content[0].text + (" (an error result)" if result.is_error else ""))
