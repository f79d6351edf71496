"""How ``tools/list`` writes a tool (server/tools.py rule 8): each listed tool is its
``Tool`` model's ``to_dict`` for the session's revision, page by page.
Spec: server/tools#listing-tools, server/utilities/pagination.
"""
import types

import pytest

from mcp_ref import Server
from mcp_ref.protocol.lifecycle import LEGACY_REVISIONS, MODERN_REVISIONS


class _Ctx:
    """What a handler reads of its Context: a legacy session's revision (no 2026-07-28 era)."""
    era = None

    def __init__(self, protocol_version="2025-11-25"):
        self.protocol_version = protocol_version
        self.session = types.SimpleNamespace(protocol_version=protocol_version)


def _tools_server() -> Server:
    server = Server("listing", page_size=2)

    @server.tool()
    def plain(a: int, b: str = "x") -> str:
        """Return b, a times.

        Args:
            a: how many times
        """
        return b * a

    @server.tool(title="Sum", structured_output=True, meta={"k": [1]})
    def total(values: list) -> int:
        return sum(values)

    server.add_tool(lambda city: {"t": 1}, name="weather", description="The weather.",
                    output_schema={"type": "object", "properties": {"t": {"type": "number"}}},
                    annotations={"readOnlyHint": True, "title": "Weather"},
                    icons=[{"src": "https://example.com/i.png", "mimeType": "image/png"}],
                    task_support="optional")
    server.add_tool(lambda: "", name="bare", input_schema={"type": "object", "$defs": {}})
    return server


@pytest.mark.parametrize("revision", (None,) + LEGACY_REVISIONS + MODERN_REVISIONS)
def test_a_listed_tool_is_what_its_model_says(revision):
    """Each page holds the tools' ``to_dict`` for the revision, in registration order."""
    server = _tools_server()
    handle = server._request_handlers["tools/list"][0]
    listed, page = [], handle(_Ctx(revision), {})
    while True:
        listed += page["tools"]
        if "nextCursor" not in page:
            break
        page = handle(_Ctx(revision), {"cursor": page["nextCursor"]})
    models = [entry.tool.to_dict(revision) for entry in server.tools._entries.values()]
    assert listed == models and [list(tool) for tool in listed] == [list(model) for model in models]


def test_a_paginated_listing_sends_every_tool_once():
    server = Server("many", page_size=100)
    namespace: dict = {}
    exec("".join(f'def t{i}(a: int, b: str = "x") -> str:\n    """Tool {i}."""\n    return b * a\n'
                 for i in range(250)), namespace)
    for i in range(250):
        server.tool()(namespace[f"t{i}"])
    handle = server._request_handlers["tools/list"][0]
    names, page = [], handle(_Ctx(), {})
    while True:
        names += [tool["name"] for tool in page["tools"]]
        if "nextCursor" not in page:
            break
        page = handle(_Ctx(), {"cursor": page["nextCursor"]})
    assert names == [f"t{i}" for i in range(250)]
    assert server.tools.get("t249").to_dict("2025-11-25") == page["tools"][-1]
    assert page["tools"][-1]["description"] == "Tool 249."
    assert page["tools"][-1]["inputSchema"]["properties"]["b"] == {"type": "string", "default": "x"}


def test_schemas_descriptions_and_wrapped_results_come_from_each_signature():
    """Rule 2: the schemas from each tool's signature (``Args:`` descriptions included),
    ``structured_output=True`` wraps a plain return as ``{"result": ...}``."""
    server = Server("shapes")
    namespace: dict = {}
    exec("".join(f'def t{i}(a: int) -> int:\n    """Tool {i}."""\n    return a\n' for i in range(3))
         + 'def d0(a: int) -> dict:\n    return {"a": a}\n'
         + 'def t3(a: int) -> int:\n    """Tool 3.\n\n    Args:\n        a: a number\n    """\n    return a\n',
         namespace)
    for name in ("t0", "t1", "d0", "t3"):
        server.tool(namespace[name])
    server.tool(namespace["t2"], structured_output=True)
    handle = server._request_handlers["tools/list"][0]
    listed = {tool["name"]: tool for tool in handle(_Ctx(), {})["tools"]}
    assert "outputSchema" not in listed["t1"] and listed["d0"]["outputSchema"] == {"type": "object"}
    assert server.tools._entries["t2"].wrap and listed["t2"]["outputSchema"] == {
        "type": "object", "properties": {"result": {"type": "integer"}}, "required": ["result"]}
    assert listed["t3"]["inputSchema"]["properties"]["a"] == {"type": "integer", "description": "a number"}
    assert "description" not in listed["t0"]["inputSchema"]["properties"]["a"]
    assert [listed[name]["description"] for name in ("t0", "t1", "t2", "t3")] == [
        "Tool 0.", "Tool 1.", "Tool 2.", "Tool 3."]
    call = server.tools.handle_call
    assert call(_Ctx(), {"name": "t2", "arguments": {"a": 4}})["structuredContent"] == {"result": 4}
    assert "structuredContent" not in call(_Ctx(), {"name": "t1", "arguments": {"a": 4}})
    assert call(_Ctx(), {"name": "d0", "arguments": {"a": 4}})["structuredContent"] == {"a": 4}
    assert call(_Ctx(), {"name": "t0", "arguments": {"a": "x"}})["isError"] is True
