"""An official-SDK (``mcp`` >= 2) client that offers sampling, elicitation and roots to a stdio server.

Usage::

    python tests/interop/sdk_features_client.py [--force-version REV] [--steps JSON] -- SERVER_ARGV...

``tests/test_interop_client_features.py`` runs it against
``python -m mcp_ref.examples.client_features`` (behind ``tee.py``, so every line our
server writes is recorded and validated). Its callbacks:

* sampling (declares ``sampling.tools``): with ``tools`` in the request, the first round
  asks ``get_weather`` for Paris and London (``stopReason: toolUse``) and the next one
  summarises the tool results; otherwise it answers ``"SDK says: <first user text>"``
  with model ``sdk-model``.
* elicitation: form mode accepts ``{"name": "Ada", "age": 36, "confirm": true}`` limited to
  the requested properties; URL mode accepts.
* roots: ``file:///sdk/project`` named ``Project``.

Steps (``--steps``, default: all of ``DEFAULT_STEPS``): ``{"op": "call_tool", "name",
"arguments", "progress"?}`` and ``{"op": "roots_changed"}`` (sends
``notifications/roots/list_changed``). Prints one JSON line: ``{"protocol_version",
"steps": [{"op", "name"?, "result" | "error": {"code", "message", "data"}, "progress"?}],
"sampling_requests", "elicitation_requests", "notifications", "exceptions"}``.
"""
import argparse
import json
import os
import sys
import warnings

DEFAULT_STEPS = [
    {"op": "call_tool", "name": "ask_llm", "arguments": {"question": "Capital of France?", "model_hint": "sdk"}},
    {"op": "call_tool", "name": "weather_agent", "arguments": {"question": "Weather in Paris and London?"}},
    {"op": "call_tool", "name": "ask_user", "arguments": {}},
    {"op": "call_tool", "name": "plan_trip", "arguments": {"city": "Lisbon"}, "progress": True},
    {"op": "call_tool", "name": "connect_account", "arguments": {"service": "github"}},
    {"op": "call_tool", "name": "needs_connection", "arguments": {"service": "drive"}},
    {"op": "call_tool", "name": "show_roots", "arguments": {}},
    {"op": "roots_changed"},
    {"op": "call_tool", "name": "roots_changes", "arguments": {"at_least": 1}},
]


def _dump(model):
    return None if model is None else model.model_dump(by_alias=True, mode="json", exclude_none=True)


async def run(args) -> dict:
    import mcp_types as types

    import mcp.client.session as sdk_session
    from mcp import Client, StdioServerParameters
    from mcp.shared.exceptions import MCPError

    if args.force_version:
        sdk_session.LATEST_HANDSHAKE_VERSION = args.force_version
    report = {"steps": [], "sampling_requests": [], "elicitation_requests": [], "notifications": [],
              "exceptions": []}

    async def sampling(context, params):
        report["sampling_requests"].append(_dump(params))
        if params.tools:
            last = params.messages[-1]
            blocks = last.content if isinstance(last.content, list) else [last.content]
            results = {b.tool_use_id: b.content[0].text for b in blocks if b.type == "tool_result"}
            if not results:
                return types.CreateMessageResultWithTools(role="assistant", model="sdk-model", stop_reason="toolUse",
                                                          content=[types.ToolUseContent(id="u1", name="get_weather",
                                                                                        input={"city": "Paris"}),
                                                                   types.ToolUseContent(id="u2", name="get_weather",
                                                                                        input={"city": "London"})])
            return types.CreateMessageResultWithTools(
                role="assistant", model="sdk-model", stop_reason="endTurn",
                content=types.TextContent(type="text", text=f"Paris {results['u1']}; London {results['u2']}"))
        first = params.messages[0].content
        return types.CreateMessageResult(role="assistant", model="sdk-model", stop_reason="endTurn",
                                         content=types.TextContent(type="text", text=f"SDK says: {first.text}"))

    async def elicitation(context, params):
        report["elicitation_requests"].append(_dump(params))
        if getattr(params, "mode", "form") == "url":
            return types.ElicitResult(action="accept")
        wanted = params.requested_schema.get("properties", {})
        content = {k: v for k, v in {"name": "Ada", "age": 36, "confirm": True}.items() if k in wanted}
        return types.ElicitResult(action="accept", content=content)

    async def list_roots(context):
        return types.ListRootsResult(roots=[types.Root(uri="file:///sdk/project", name="Project")])

    async def on_message(message):
        if isinstance(message, Exception):
            report["exceptions"].append(repr(message))
        else:
            report["notifications"].append(_dump(message))

    env = {key: value for key, value in os.environ.items()
           if key in ("PYTHONPATH", "MCP_SPEC_DIR", "PYTHONDONTWRITEBYTECODE")}
    server = StdioServerParameters(command=args.server[0], args=args.server[1:], env=env, cwd=os.getcwd())
    steps = json.loads(args.steps) if args.steps else DEFAULT_STEPS
    capabilities = types.SamplingCapability(tools=types.SamplingToolsCapability())
    async with Client(server, mode="legacy", sampling_callback=sampling, sampling_capabilities=capabilities,
                      elicitation_callback=elicitation, list_roots_callback=list_roots, message_handler=on_message,
                      client_info=types.Implementation(name="sdk-features-client", version="2.0.0"),
                      read_timeout_seconds=20) as client:
        report["protocol_version"] = client.protocol_version
        for step in steps:
            out = {"op": step["op"], "name": step.get("name")}
            try:
                if step["op"] == "roots_changed":
                    await client.send_roots_list_changed()
                else:
                    progress = []

                    async def on_progress(value, total, message):
                        progress.append([value, total, message])
                    result = await client.call_tool(step["name"], step.get("arguments"),
                                                    progress_callback=on_progress if step.get("progress") else None)
                    out["result"] = _dump(result)
                    if step.get("progress"):
                        out["progress"] = progress
            except MCPError as exc:
                out["error"] = {"code": exc.error.code, "message": exc.error.message, "data": exc.error.data}
            report["steps"].append(out)
    return report


def main(argv) -> int:
    warnings.simplefilter("ignore")
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", default=None)
    parser.add_argument("--force-version", default=None)
    parser.add_argument("server", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    if args.server and args.server[0] == "--":
        args.server = args.server[1:]
    try:
        import anyio
        report = anyio.run(run, args)
    except Exception as exc:                    # reported, so the test shows it
        report = {"fatal": repr(exc)}
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
