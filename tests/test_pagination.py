"""Pagination of the four list methods, in process: a configurable page size,
opaque cursors, -32602 for an invalid cursor, stable pages when the list changes
between requests, and the client's one-page and every-page calls. Every message
is validated against its revision's schema. Spec: server/utilities/pagination.
"""
import pytest

from conftest import REVISIONS
from features_helpers import connected
from mcp_ref import Server
from mcp_ref.errors import InvalidParamsError
from mcp_ref.server.pagination import Listing, make_cursor

COUNT = 7


def many_server(page_size=3) -> Server:
    server = Server("pages", page_size=page_size)
    for i in range(COUNT):
        server.add_tool(lambda: "", name=f"tool{i}")
        server.add_resource(f"text {i}", f"res://{i}", name=f"res{i}")
        server.add_resource(lambda v: v, f"tmpl{i}://{{v}}", name=f"tmpl{i}")
        server.add_prompt(lambda: "", name=f"prompt{i}")
    return server


LISTS = {
    "tools/list": ("tools", "list_tools_page", "list_tools", lambda item: item.name, [f"tool{i}" for i in range(COUNT)]),
    "resources/list": ("resources", "list_resources_page", "list_resources", lambda item: item.uri,
                       [f"res://{i}" for i in range(COUNT)]),
    "resources/templates/list": ("resourceTemplates", "list_resource_templates_page", "list_resource_templates",
                                 lambda item: item.uri_template, [f"tmpl{i}://{{v}}" for i in range(COUNT)]),
    "prompts/list": ("prompts", "list_prompts_page", "list_prompts", lambda item: item.name,
                     [f"prompt{i}" for i in range(COUNT)]),
}


@pytest.mark.req("PROM-8", "PAGE-1", "PAGE-3", "PAGE-4")
@pytest.mark.parametrize("revision", REVISIONS)
@pytest.mark.parametrize("method", list(LISTS))
def test_every_list_method_pages(method, revision, wire_validator):
    member, page_call, all_call, key, expected = LISTS[method]
    with connected(many_server(), revision, wire_validator) as (client, _, recorder):
        page, cursor = getattr(client, page_call)()
        assert [key(item) for item in page] == expected[:3] and isinstance(cursor, str)
        page, cursor = getattr(client, page_call)(cursor)
        assert [key(item) for item in page] == expected[3:6] and cursor
        page, cursor = getattr(client, page_call)(cursor)
        assert [key(item) for item in page] == expected[6:] and cursor is None
        assert [key(item) for item in getattr(client, all_call)()] == expected
        results = [m["result"] for m in recorder.received() if member in m.get("result", {})]
        assert [len(r[member]) for r in results] == [3, 3, 1, 3, 3, 1]
        assert ["nextCursor" in r for r in results] == [True, True, False] * 2


@pytest.mark.req("PAGE-3")
def test_no_page_size_means_one_page(wire_validator):
    with connected(many_server(page_size=None), "2025-11-25", wire_validator) as (client, _, recorder):
        tools, cursor = client.list_tools_page()
        assert len(tools) == COUNT and cursor is None
        assert "nextCursor" not in recorder.received()[-1]["result"]


@pytest.mark.req("PAGE-2", "PAGE-5")
@pytest.mark.parametrize("method", list(LISTS))
def test_invalid_cursors_are_32602(method):
    with connected(many_server()) as (client, _, _):           # no schema check: the requests are bad
        own = method.rsplit("/", 1)[0]              # the list's name inside our cursors
        assert client.session.request(method, {"cursor": make_cursor(own, 0)})      # a valid one
        for cursor in ("not a cursor", "e30=", make_cursor("somewhere else", 1), 5, make_cursor(own, -1)):
            with pytest.raises(InvalidParamsError) as info:
                client.session.request(method, {"cursor": cursor})
            assert info.value.code == -32602 and info.value.data == {"cursor": cursor}


@pytest.mark.req("PAGE-2")
def test_cursors_are_stable_when_the_list_changes():
    server = many_server()
    with connected(server) as (client, _, _):
        page, cursor = client.list_tools_page()
        assert [t.name for t in page] == ["tool0", "tool1", "tool2"]
        server.remove_tool("tool0")                  # already sent: nothing shifts
        page, cursor = client.list_tools_page(cursor)
        assert [t.name for t in page] == ["tool3", "tool4", "tool5"]
        server.remove_tool("tool5")                  # the cursor's own item
        server.add_tool(lambda: "", name="tool9")    # new items come at the end
        page, cursor = client.list_tools_page(cursor)
        assert [t.name for t in page] == ["tool6", "tool9"] and cursor is None


def test_listing_pages_directly():
    def paginate(numbered, params, page_size, name):
        return Listing(numbered).page(params, page_size, name)
    items = list(enumerate("abcde", start=1))
    assert paginate(items, None, 2, "x") == (["a", "b"], make_cursor("x", 2))
    assert paginate(items, {"cursor": make_cursor("x", 4)}, 2, "x") == (["e"], None)
    assert paginate(items, {"cursor": make_cursor("x", 9)}, 2, "x") == ([], None)
    assert paginate(items, {"cursor": make_cursor("x", 1)}, 2, "x") == (["b", "c"], make_cursor("x", 3))
    assert paginate([], None, 2, "x") == ([], None)
    assert paginate(items, {}, 0, "x") == (list("abcde"), None)
    assert paginate(items, None, 5, "x") == (list("abcde"), None)
    gaps = [(2, "b"), (5, "e"), (9, "i")]              # serials of removed items are skipped
    assert paginate(gaps, {"cursor": make_cursor("x", 3)}, 1, "x") == (["e"], make_cursor("x", 5))
    assert paginate(gaps, {"cursor": make_cursor("x", 5)}, 1, "x") == (["i"], None)


def test_a_listing_makes_each_wire_dict_once_per_revision():
    """pagination.py rule 5: listing again reuses each item's wire dict; another revision
    makes its own; a new Listing (after a change) starts afresh."""
    made = []

    def to_dict(item, version):
        made.append((item, version))
        return {"name": item, "revision": version}
    listing = Listing(list(enumerate("abcde", start=1)))
    first = listing.wire(None, 2, "x", "2025-11-25", to_dict)
    assert first == ([{"name": "a", "revision": "2025-11-25"}, {"name": "b", "revision": "2025-11-25"}],
                     make_cursor("x", 2))
    again = listing.wire(None, 2, "x", "2025-11-25", to_dict)
    assert again[0][0] is first[0][0] and len(made) == 2
    listing.wire({"cursor": make_cursor("x", 2)}, 2, "x", "2025-11-25", to_dict)
    assert [item for item, _ in made] == ["a", "b", "c", "d"]        # only the page asked for
    listing.wire(None, 2, "x", "2025-03-26", to_dict)
    assert made[-2:] == [("a", "2025-03-26"), ("b", "2025-03-26")]


@pytest.mark.parametrize("kind", ["tools", "prompts", "resources", "resources/templates"])
def test_listing_again_does_not_rebuild_the_items_and_a_change_does(kind):
    """pagination.py rule 5 through a server: the second listing reuses the wire dicts
    of the first; adding an item makes a new Listing, listed afresh."""
    server = Server("many", page_size=3)

    def add(i):
        if kind == "tools":
            server.add_tool(lambda: "", name=f"tool{i}")
        elif kind == "prompts":
            server.add_prompt(lambda: "", name=f"prompt{i}")
        elif kind == "resources":
            server.add_resource(f"text {i}", f"mem://r{i}")
        else:
            server.add_resource(lambda x: x, f"mem://t{i}/{{x}}")
    for i in range(7):
        add(i)
    method, key = {"tools": ("tools/list", "tools"), "prompts": ("prompts/list", "prompts"),
                   "resources": ("resources/list", "resources"),
                   "resources/templates": ("resources/templates/list", "resourceTemplates")}[kind]
    handle = server._request_handlers[method][0]

    def list_all():
        listed, cursor = [], None
        while True:
            result = handle(_Ctx(), {"cursor": cursor} if cursor else {})
            listed += result[key]
            cursor = result.get("nextCursor")
            if cursor is None:
                return listed
    first, again = list_all(), list_all()
    assert first == again and all(a is b for a, b in zip(first, again))
    add(7)
    after = list_all()
    assert len(after) == 8 and after[:7] == first and not any(a is b for a, b in zip(first, after))


class _Ctx:
    protocol_version = "2025-11-25"


class _CountingDict(dict):
    """A registry table that counts how often the whole of it is walked."""
    walks = 0

    def values(self):
        type(self).walks += 1
        return super().values()


@pytest.mark.parametrize("kind", ["tools", "prompts", "resources", "resources/templates"])
def test_a_page_does_not_walk_the_whole_registry(kind):
    """pagination.py rule 4: listing n items in pages walks the registry once, not once
    per page (which made a paginated list cost the square of the catalogue)."""
    server = Server("many", page_size=10)
    for i in range(95):
        if kind == "tools":
            server.add_tool(lambda: "", name=f"tool{i}")
        elif kind == "prompts":
            server.add_prompt(lambda: "", name=f"prompt{i}")
        elif kind == "resources":
            server.add_resource(f"text {i}", f"mem://r{i}")
        else:
            server.add_resource(lambda x: x, f"mem://t{i}/{{x}}")
    registry = server.tools if kind == "tools" else server.prompts if kind == "prompts" else server.resources
    if kind == "resources/templates":
        registry = registry.templates
    registry._entries = _CountingDict(registry._entries)
    method = {"tools": "tools/list", "prompts": "prompts/list", "resources": "resources/list",
              "resources/templates": "resources/templates/list"}[kind]
    key = {"tools": "tools", "prompts": "prompts", "resources": "resources",
           "resources/templates": "resourceTemplates"}[kind]
    with connected(server) as (client, _, _):
        _CountingDict.walks = 0                         # the handshake's own looks do not count
        listed, cursor = [], None
        while True:
            result = client.session.request(method, {"cursor": cursor} if cursor else {})
            listed += result[key]
            cursor = result.get("nextCursor")
            if cursor is None:
                break
    assert len(listed) == 95
    assert _CountingDict.walks == 1                     # one Listing, shared by the ten pages


@pytest.mark.req("PAGE-4")
def test_all_pages_stops_on_a_repeated_cursor(caplog):
    from mcp_ref.client.client_requests import all_pages
    pages = iter([([1], "c1"), ([2], "c1")])
    assert all_pages(lambda cursor: next(pages)) == [1, 2]
    assert "repeated pagination cursor" in caplog.text


def test_all_pages_raises_after_the_page_limit_keeping_the_items():
    from mcp_ref.client.client_requests import all_pages
    from mcp_ref.errors import SessionError, TooManyPages
    asked = []

    def endless(cursor):
        asked.append(cursor)
        n = int(cursor or 0)
        return [n], str(n + 1)
    with pytest.raises(TooManyPages) as info:
        all_pages(endless, 5, "prompts/list")
    assert (info.value.method, info.value.pages, info.value.items) == ("prompts/list", 5, [0, 1, 2, 3, 4])
    assert asked == [None, "1", "2", "3", "4"] and isinstance(info.value, SessionError)
    assert "prompts/list" in str(info.value) and "5 pages" in str(info.value)
    pages = iter([([1], "a"), ([2], "b"), ([3], None)])
    assert all_pages(lambda cursor: next(pages), 3) == [1, 2, 3]      # ending on the last allowed page is fine


@pytest.mark.req("PAGE26-6", "PAGE26-5")
def test_all_pages_follows_an_empty_cursor_and_stops_on_a_repeated_one(caplog):
    from mcp_ref.client.client_requests import all_pages
    asked = []

    def fetch(cursor):
        asked.append(cursor)
        return next(pages)
    pages = iter([([1], "c1"), ([2], ""), ([3], None)])
    assert all_pages(fetch) == [1, 2, 3] and asked == [None, "c1", ""]     # "" is a cursor, sent as it came
    assert "repeated" not in caplog.text
    pages = iter([([1], ""), ([2], "")])
    assert all_pages(lambda cursor: next(pages)) == [1, 2]
    assert "repeated pagination cursor ''" in caplog.text
