"""The client the official conformance suite's client scenarios run
(``@modelcontextprotocol/conformance``): ``npx conformance client --command
"python tests/conformance/client.py" --scenario NAME``. The suite appends the
server URL and names the scenario in ``MCP_CONFORMANCE_SCENARIO`` (its data, such
as pre-registered credentials, in ``MCP_CONFORMANCE_CONTEXT``).

It connects with the default ``Client`` (protocol_version "auto"), lists the
tools and calls each one with made-up arguments (numbers 1, strings "café x":
non-ASCII, so header values need Base64); elicitation requests are accepted with the schema's defaults.
"""
import json
import os
import sys

import requests

from mcp_ref import Client

CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json"


def user_agent(auth_url: str) -> str:
    """The user's browser: follows the authorization URL to its redirect."""
    return requests.get(auth_url, allow_redirects=False, timeout=10).headers["Location"]


def elicit(request) -> dict:
    params = request if isinstance(request, dict) else getattr(request, "params", None) or {}
    schema = params.get("requestedSchema") or {} if isinstance(params, dict) else {}
    content = {k: v["default"] for k, v in (schema.get("properties") or {}).items() if "default" in v}
    return {"action": "accept", "content": content}


def arguments_for(tool) -> dict:
    props = (tool.input_schema or {}).get("properties") or {}
    args = {k: 1 for k, v in props.items() if isinstance(v, dict) and v.get("type") in ("number", "integer")}
    args.update({k: "caf\u00e9 x" for k, v in props.items() if isinstance(v, dict) and v.get("type") == "string"})
    return args


def main(url: str) -> int:
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    options = {}
    if scenario.startswith("auth/"):
        from mcp_ref.auth import OAuthClientProvider
        credentials = {key: context[key] for key in ("client_id", "client_secret") if context.get(key)}
        if not credentials:
            credentials["client_metadata_url"] = CLIENT_METADATA_URL
        options["auth"] = OAuthClientProvider(redirect_uri="http://localhost:3000/callback", user_agent=user_agent,
                                              client_name="conformance", **credentials)
    with Client.http(url, timeout=20, elicitation=elicit, **options) as client:
        tools = client.list_tools() if "tools" in (client.server_capabilities or {}) else []
        for tool in tools:
            try:
                client.call_tool(tool.name, arguments_for(tool))
            except Exception as exc:            # a scenario's tool may fail on purpose
                print(f"{tool.name}: {exc!r}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[-1]))
