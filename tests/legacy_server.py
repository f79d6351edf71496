"""A small hand-written legacy (2025-11-25) MCP server over stdio, for the era probe's tests.

Standard library only, so it needs nothing from mcp_ref. Run as
``python legacy_server.py BEHAVIOUR``. It answers ``initialize`` (with the
revision asked for, when it is one of ``REVISIONS``), ``ping``, ``tools/list``
and ``tools/call`` of ``echo``, ignores notifications and answers, and answers
every other request (``server/discover`` among them) as BEHAVIOUR says
(``ANSWERS``: an empty success, an arbitrary object, a malformed
``DiscoverResult``; ``silent`` never answers). It exits when its stdin ends.
``tests/test_era_probe.py`` drives it.
"""
import json
import sys

REVISIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
TOOL = {"name": "echo", "description": "Echo the text.",
        "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}}

# What the server answers a request it does not know (None: no answer at all).
ANSWERS = {
    "empty": {},
    "object": {"foo": 1},
    "bad-versions": {"supportedVersions": "x"},
    "bad-capabilities": {"supportedVersions": ["2026-07-28"], "capabilities": []},
    "bad-result-type": {"resultType": "surprise", "supportedVersions": ["2026-07-28"], "capabilities": {}},
    "silent": None,
}


def answer(request: dict, unknown):
    """The result for ``request`` (None: send nothing)."""
    method, params = request.get("method"), request.get("params") or {}
    if method == "initialize":
        asked = params.get("protocolVersion")
        return {"protocolVersion": asked if asked in REVISIONS else REVISIONS[-1],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "legacy", "version": "1"}}
    if method == "ping":
        return {}
    if method == "tools/list":
        return {"tools": [TOOL]}
    if method == "tools/call" and params.get("name") == "echo":
        text = (params.get("arguments") or {}).get("text", "")
        return {"content": [{"type": "text", "text": text}], "isError": False}
    return unknown


def main(behaviour: str) -> None:
    unknown = ANSWERS[behaviour]
    out = sys.stdout
    for line in sys.stdin:
        try:
            message = json.loads(line)
        except ValueError:
            continue
        if not isinstance(message, dict) or "method" not in message or "id" not in message:
            continue                                   # notifications and answers
        result = answer(message, unknown)
        if result is None:
            continue
        out.write(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}) + "\n")
        out.flush()


if __name__ == "__main__":
    main(sys.argv[1])
