"""A client written with the official Python SDK (``mcp`` >= 2) that runs a script of
MCP operations against a stdio server and prints a JSON report on stdout.

Usage::

    python tests/interop/sdk_client.py [options] -- SERVER_ARGV...

    python tests/interop/sdk_client.py -- python -m mcp_ref.examples.demo_server
    python tests/interop/sdk_client.py --steps '[{"op": "list_tools"}]' --force-version 2025-03-26 \\
        -- python -m mcp_ref.examples.demo_server

Options:

``--steps JSON``
    A JSON list of operations (default: the demo scenario below). Each is an object
    with ``"op"`` and its arguments:

    ============================  ==================================================
    ``list_tools``                ``Client.list_tools()`` (every page)
    ``call_tool``                 ``name``, ``arguments``; ``"progress": true`` passes a
                                  progress callback whose calls are reported; ``timeout``
                                  (seconds): on expiry the SDK sends ``notifications/cancelled``
                                  and the step reports error -32001
    ``ping``                      ``Client.send_ping()``
    ``list_resources``            ``Client.list_resources()``
    ``list_resource_templates``   ``Client.list_resource_templates()``
    ``read_resource``             ``uri``
    ``subscribe`` / ``unsubscribe``  ``uri`` (resources/subscribe, resources/unsubscribe)
    ``list_prompts``              ``Client.list_prompts()``
    ``get_prompt``                ``name``, ``arguments``
    ``complete``                  ``ref`` (wire form, e.g. ``{"type": "ref/prompt", "name": "p"}``),
                                  ``argument`` (``{"name": ..., "value": ...}``), ``context``
    ``set_logging_level``         ``level``
    ``roots_list_changed``        sends ``notifications/roots/list_changed``
    ``sleep``                     ``seconds`` (lets late notifications arrive)
    ============================  ==================================================

    Every step's report holds ``op``, then ``result`` (the SDK's parsed result, dumped
    by alias, ``None`` fields left out) or ``error`` (``type``, ``code``, ``message``,
    ``data``), and ``progress`` (a list of ``[progress, total, message]``) for
    ``call_tool`` with progress.

``--mode auto|legacy``
    How the SDK connects: ``auto`` (its default: probe ``server/discover``, fall back
    to ``initialize``) or ``legacy`` (``initialize`` only). Default ``legacy``.
``--force-version REV``
    Offer ``REV`` in ``initialize`` instead of the SDK's latest handshake revision
    (the SDK has no option for this; the module constant it reads is patched).
    Implies ``--mode legacy``.
``--sampling TEXT``
    Declare ``sampling``; answer ``sampling/createMessage`` with an assistant text
    ``TEXT`` from model ``sdk-test-model``.
``--elicit accept|decline|cancel``
    Declare ``elicitation``; answer ``elicitation/create`` with that action (content
    ``{"name": "Ada", "age": 36}`` on accept).
``--roots URI[,URI...]``
    Declare ``roots``; answer ``roots/list`` with those URIs (named ``root0``, ...).

The report: ``{"protocol_version", "server_info", "capabilities", "instructions",
"steps": [...], "logs": [logging callback params...], "notifications": [every server
notification the message handler saw, as wire dicts], "sampling_requests",
"elicitation_requests", "roots_requests": [params of each server request],
"exceptions": [transport exceptions]}``.
"""
import argparse
import json
import os
import sys
import warnings

DEMO_STEPS = [
    {"op": "list_tools"},
    {"op": "call_tool", "name": "add", "arguments": {"a": 2, "b": 3}},
    {"op": "call_tool", "name": "count", "arguments": {"n": 3}, "progress": True},
    {"op": "call_tool", "name": "divide", "arguments": {"a": 1, "b": 0}},
    {"op": "ping"},
]


def _dump(model):
    if model is None:
        return None
    return model.model_dump(by_alias=True, mode="json", exclude_none=True)


def _parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", default=None)
    parser.add_argument("--mode", choices=("auto", "legacy"), default="legacy")
    parser.add_argument("--force-version", default=None)
    parser.add_argument("--sampling", default=None)
    parser.add_argument("--elicit", choices=("accept", "decline", "cancel"), default=None)
    parser.add_argument("--roots", default=None)
    parser.add_argument("server", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    if args.server and args.server[0] == "--":
        args.server = args.server[1:]
    if not args.server:
        parser.error("the server command line is missing (after --)")
    return args


async def run(args) -> dict:
    import mcp_types as types

    import mcp.client.session as sdk_session
    from mcp import Client, StdioServerParameters
    from mcp.shared.exceptions import MCPError

    if args.force_version:
        sdk_session.LATEST_HANDSHAKE_VERSION = args.force_version
        args.mode = "legacy"

    report = {"steps": [], "logs": [], "notifications": [], "sampling_requests": [],
              "elicitation_requests": [], "roots_requests": [], "exceptions": []}

    async def on_log(params):
        report["logs"].append(_dump(params))

    async def on_message(message):
        if isinstance(message, Exception):
            report["exceptions"].append(repr(message))
        else:
            report["notifications"].append(_dump(message))

    callbacks = {}
    if args.sampling is not None:
        async def sampling(context, params):
            report["sampling_requests"].append(_dump(params))
            return types.CreateMessageResult(role="assistant", model="sdk-test-model", stop_reason="endTurn",
                                             content=types.TextContent(type="text", text=args.sampling))
        callbacks["sampling_callback"] = sampling
    if args.elicit is not None:
        async def elicitation(context, params):
            report["elicitation_requests"].append(_dump(params))
            content = {"name": "Ada", "age": 36} if args.elicit == "accept" else None
            return types.ElicitResult(action=args.elicit, content=content)
        callbacks["elicitation_callback"] = elicitation
    if args.roots is not None:
        uris = [u for u in args.roots.split(",") if u]

        async def list_roots(context):
            report["roots_requests"].append({})
            return types.ListRootsResult(roots=[types.Root(uri=u, name=f"root{i}") for i, u in enumerate(uris)])
        callbacks["list_roots_callback"] = list_roots

    env = {key: value for key, value in os.environ.items()
           if key in ("PYTHONPATH", "MCP_SPEC_DIR", "PYTHONDONTWRITEBYTECODE") or key.startswith("INTEROP_")}
    params = StdioServerParameters(command=args.server[0], args=args.server[1:], env=env, cwd=os.getcwd())
    steps = json.loads(args.steps) if args.steps else DEMO_STEPS

    async with Client(params, mode=args.mode, logging_callback=on_log, message_handler=on_message,
                      client_info=types.Implementation(name="sdk-interop-client", version="2.0.0"),
                      cache=None, read_timeout_seconds=20, **callbacks) as client:
        report["protocol_version"] = client.protocol_version
        report["server_info"] = _dump(client.server_info)
        report["capabilities"] = _dump(client.server_capabilities)
        report["instructions"] = client.instructions
        for step in steps:
            report["steps"].append(await _run_step(client, step, types, MCPError))
    return report


async def _run_step(client, step, types, MCPError) -> dict:
    import anyio

    op = step["op"]
    out = {"op": op}
    try:
        if op == "list_tools":
            tools, cursor = [], None
            while True:
                page = await client.list_tools(cursor=cursor)
                tools.extend(page.tools)
                cursor = page.next_cursor
                if cursor is None:
                    break
            out["result"] = {"tools": [_dump(t) for t in tools]}
        elif op == "call_tool":
            progress = []
            callback = None
            if step.get("progress"):
                async def callback(value, total, message):
                    progress.append([value, total, message])
            result = await client.call_tool(step["name"], step.get("arguments"), progress_callback=callback,
                                            read_timeout_seconds=step.get("timeout"))
            out["result"] = _dump(result)
            if step.get("progress"):
                out["progress"] = progress
        elif op == "ping":
            out["result"] = _dump(await client.send_ping())
        elif op == "list_resources":
            out["result"] = _dump(await client.list_resources())
        elif op == "list_resource_templates":
            out["result"] = _dump(await client.list_resource_templates())
        elif op == "read_resource":
            out["result"] = _dump(await client.read_resource(step["uri"]))
        elif op == "subscribe":
            out["result"] = _dump(await client.subscribe_resource(step["uri"]))
        elif op == "unsubscribe":
            out["result"] = _dump(await client.unsubscribe_resource(step["uri"]))
        elif op == "list_prompts":
            out["result"] = _dump(await client.list_prompts())
        elif op == "get_prompt":
            out["result"] = _dump(await client.get_prompt(step["name"], step.get("arguments")))
        elif op == "complete":
            ref = step["ref"]
            ref = (types.PromptReference.model_validate(ref) if ref.get("type") == "ref/prompt"
                   else types.ResourceTemplateReference.model_validate(ref))
            out["result"] = _dump(await client.complete(ref, step["argument"], step.get("context")))
        elif op == "set_logging_level":
            out["result"] = _dump(await client.set_logging_level(step["level"]))
        elif op == "roots_list_changed":
            await client.send_roots_list_changed()
            out["result"] = None
        elif op == "sleep":
            await anyio.sleep(step.get("seconds", 0.2))
            out["result"] = None
        else:
            raise ValueError(f"unknown op {op!r}")
    except MCPError as exc:
        out["error"] = {"type": "MCPError", "code": exc.error.code, "message": exc.error.message,
                        "data": exc.error.data}
    except Exception as exc:                   # reported, so the test shows what went wrong
        out["error"] = {"type": type(exc).__name__, "code": None, "message": str(exc), "data": None}
    return out


def main(argv=None) -> int:
    args = _parse_args(sys.argv[1:] if argv is None else argv)
    warnings.simplefilter("ignore")           # the SDK flags handshake-era features as deprecated
    try:
        import anyio
        import mcp  # noqa: F401
    except ImportError as exc:
        print(json.dumps({"fatal": f"the official MCP SDK is needed (pip install mcp): {exc}"}))
        return 2
    try:
        report = anyio.run(run, args)
    except BaseException as exc:              # connect failures, exception groups
        report = {"fatal": f"{type(exc).__name__}: {exc}", "detail": _describe(exc)}
        print(json.dumps(report))
        return 1
    print(json.dumps(report))
    return 0


def _describe(exc) -> list:
    """Flatten an exception group into readable lines."""
    inner = getattr(exc, "exceptions", None)
    if inner:
        lines = []
        for item in inner:
            lines.extend(_describe(item))
        return lines
    return [f"{type(exc).__name__}: {exc}"]


if __name__ == "__main__":
    sys.exit(main())
