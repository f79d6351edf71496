"""How ``tools/list`` writes a tool (server/tools.py rules 8 and 9): each tool's
wire dict is what its ``Tool`` model says, for every revision, yet a listing
builds no ``Tool`` and reads a tool's signature only when its page is sent.
Spec: server/tools#listing-tools, server/utilities/pagination.
"""
import pytest

from mcp_ref import Server
from mcp_ref.protocol.lifecycle import LEGACY_REVISIONS, MODERN_REVISIONS
from mcp_ref.server.tools import listed_tool


class _Ctx:
    protocol_version = "2025-11-25"


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
    """Rule 9: the dict written from the fields equals ``Tool.to_dict`` for the revision,
    member for member and in the same order."""
    server = _tools_server()
    for entry in server.tools._entries.values():
        entry.prepare((server.tools.context_class,))
        listed, model = listed_tool(entry, revision), entry.tool.to_dict(revision)
        assert listed == model and list(listed) == list(model), entry.name


def test_a_listing_builds_no_tool_and_only_the_pages_sent():
    """Rules 8 and 9: the first page reads the signatures of its tools only, and no
    ``Tool`` model is made for a listing; ``get`` still gives the model."""
    server = Server("many", page_size=3)
    for i in range(7):
        def fn(a: int, b: str = "x") -> str:
            """A tool."""
            return b * a
        fn.__name__ = f"t{i}"
        server.tool()(fn)
    entries = list(server.tools._entries.values())
    handle = server._request_handlers["tools/list"][0]
    first = handle(_Ctx(), {})
    assert [tool["name"] for tool in first["tools"]] == ["t0", "t1", "t2"]
    assert [entry.prepared for entry in entries] == [True] * 3 + [False] * 4
    assert all(entry._tool is None for entry in entries)
    assert first["tools"][0]["inputSchema"]["properties"]["b"] == {"type": "string", "default": "x"}
    assert server.tools.get("t0").to_dict("2025-11-25") == first["tools"][0]


def test_tools_of_the_same_parameters_share_one_schema():
    """schema/signature_fast.py: the same names, types and scalar defaults, without parameter
    descriptions, give one shared inputSchema; anything that tells them apart (a default
    of another type or value, a description) gives another."""
    server = Server("shared")

    def make(name, default, doc="A tool."):
        def fn(a: int, b=default) -> str:
            return ""
        fn.__name__, fn.__doc__ = name, doc
        server.tool()(fn)
        return server.tools.get(name).input_schema
    first, second = make("one", 1), make("two", 1)
    assert first is second and first["properties"]["b"] == {"default": 1}
    assert make("three", True)["properties"]["b"] == {"default": True}          # True == 1, yet not the same
    assert make("four", 1.0) is not first                                      # a float is not shared
    described = make("five", 1, "A tool.\n\nArgs:\n    a: how many\n")
    assert described is not first and described["properties"]["a"]["description"] == "how many"
    assert first["properties"]["a"] == {"type": "integer"} and "description" not in first["properties"]["a"]


def test_a_listing_keeps_nothing_a_call_alone_needs():
    """Rule 8: listing reads the schemas only; the binder and the validators are made
    by the tool's first call (a catalogue's tools are listed far more than called)."""
    server = Server("armed")

    @server.tool()
    def add(a: int, b: int = 2) -> int:
        """Add."""
        return a + b
    entry = server.tools._entries["add"]
    server._request_handlers["tools/list"][0](_Ctx(), {})
    assert entry.prepared
    assert (entry.bind, entry.check_input, entry.check_output) == (None, None, None)
    result = server.tools.handle_call(_Ctx(), {"name": "add", "arguments": {"a": 1}})
    assert result["content"][0]["text"] == "3" and entry.bind is not None and entry.check_input is not None
    bad = server.tools.handle_call(_Ctx(), {"name": "add", "arguments": {"a": "x"}})
    assert bad["isError"] is True


def test_listed_tool_knows_every_member_of_the_model():
    """Rule 9 writes the members ``Tool`` has; a member added to the model must be
    added to ``listed_tool`` too (and to the test above)."""
    from mcp_ref.types import Tool
    assert sorted(Tool.wire_fields().values()) == sorted(
        ["name", "inputSchema", "title", "description", "outputSchema", "annotations", "icons", "execution", "_meta"])


def test_a_listing_reads_each_shape_once_and_each_page_only(monkeypatch):
    """Rule 8 and schema/signature_fast.py: listing 250 tools of one shape in pages of 100 reads
    their signature once, and each page prepares its own tools only."""
    from mcp_ref.schema import signature_fast
    monkeypatch.setattr(signature_fast, "_SHAPES", {})
    reads = []
    original = signature_fast.fast_parameters
    monkeypatch.setattr(signature_fast, "fast_parameters", lambda *args: reads.append(args) or original(*args))
    server = Server("many", page_size=100)
    namespace: dict = {}
    exec("".join(f'def t{i}(a: int, b: str = "x") -> str:\n    """Tool {i}."""\n    return b * a\n'
                 for i in range(250)), namespace)
    for i in range(250):
        server.tool()(namespace[f"t{i}"])
    entries = list(server.tools._entries.values())
    handle = server._request_handlers["tools/list"][0]
    page = handle(_Ctx(), {})
    assert [entry.prepared for entry in entries] == [True] * 100 + [False] * 150
    while "nextCursor" in page:
        page = handle(_Ctx(), {"cursor": page["nextCursor"]})
    assert all(entry.prepared for entry in entries) and len(reads) == 1
    assert server.tools.get("t249").to_dict("2025-11-25") == page["tools"][-1]
    assert page["tools"][-1]["description"] == "Tool 249."


def test_tools_registered_without_options_share_one_options_dict():
    """Registering keeps the function and what was given (rule 8): tools given nothing
    share one read-only options dict, so a catalogue does not hold one dict per tool."""
    server = Server("options")

    @server.tool
    def one(a: int) -> int:
        return a

    @server.tool()
    def two(a: int) -> int:
        return a

    @server.tool(title="Three")
    def three(a: int) -> int:
        return a
    entries = server.tools._entries
    assert entries["one"].options is entries["two"].options
    assert entries["three"].options is not entries["one"].options and entries["three"].options["title"] == "Three"
    assert all(value is None for value in entries["one"].options.values())
    handle = server._request_handlers["tools/list"][0]
    listed = handle(_Ctx(), {})["tools"]
    assert [tool.get("title") for tool in listed] == [None, None, "Three"]


def test_tools_given_nothing_share_their_shape_s_schemas_and_the_rest_are_read_alone():
    """Rule 9: tools registered without options and without parameter descriptions have
    the schemas of their shape, made once; options (``structured_output``) or a
    docstring's ``Args:`` give a tool its own, and each is called as it is listed."""
    server = Server("shapes")
    namespace: dict = {}
    exec("".join(f'def t{i}(a: int) -> int:\n    """Tool {i}."""\n    return a\n' for i in range(3))
         + 'def d0(a: int) -> dict:\n    return {"a": a}\n\ndef d1(a: int) -> dict:\n    return {"a": a}\n'
         + 'def t3(a: int) -> int:\n    """Tool 3.\n\n    Args:\n        a: a number\n    """\n    return a\n',
         namespace)
    for name in ("t0", "t1", "d0", "d1", "t3"):
        server.tool(namespace[name])
    server.tool(namespace["t2"], structured_output=True)
    handle = server._request_handlers["tools/list"][0]
    listed = {tool["name"]: tool for tool in handle(_Ctx(), {})["tools"]}
    entries = server.tools._entries
    assert entries["t0"].input_schema is entries["t1"].input_schema is entries["d0"].input_schema
    assert (entries["t0"].output_schema, entries["t0"].wrap) == (None, False) and "outputSchema" not in listed["t1"]
    assert entries["d0"].output_schema is entries["d1"].output_schema and listed["d1"]["outputSchema"] == {
        "type": "object"}
    assert entries["t2"].wrap and listed["t2"]["outputSchema"] == {
        "type": "object", "properties": {"result": {"type": "integer"}}, "required": ["result"]}
    assert listed["t3"]["inputSchema"]["properties"]["a"] == {"type": "integer", "description": "a number"}
    assert "description" not in listed["t0"]["inputSchema"]["properties"]["a"]
    assert [listed[name]["description"] for name in ("t0", "t1", "t2", "t3")] == [
        "Tool 0.", "Tool 1.", "Tool 2.", "Tool 3."]
    for name, tool in listed.items():
        assert server.tools.get(name).to_dict("2025-11-25") == tool
    call = server.tools.handle_call
    assert call(_Ctx(), {"name": "t2", "arguments": {"a": 4}})["structuredContent"] == {"result": 4}
    assert "structuredContent" not in call(_Ctx(), {"name": "t1", "arguments": {"a": 4}})
    assert call(_Ctx(), {"name": "d1", "arguments": {"a": 4}})["structuredContent"] == {"a": 4}
