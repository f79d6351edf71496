"""Roots: file-URI validation, path-inside-roots checks, ``roots/list`` and list_changed.

Pure checks of ``mcp_ref.client.roots`` first (with real symlinks in ``tmp_path``),
then in-process flows over ``memory_pair()`` for every revision (each message
validated against its ``schema.json``), then stdio. Spec: client/roots.
"""
import os
import threading

import pytest

from client_features_helpers import FEATURE_SERVER, WAIT, connect, env, stdio_client, text, validated
from mcp_ref import Client, Context, Server
from mcp_ref.errors import CapabilityNotSupported, MethodNotFoundError
from mcp_ref.client.roots import (PathOutsideRoots, as_roots, find_root, is_inside, path_to_uri, require_inside,
                           resolve_path, uri_to_path, validate_root_uri)
from mcp_ref.types import Root

needs_symlinks = pytest.mark.skipif(not hasattr(os, "symlink") or os.name == "nt",
                                    reason="symlinks need a POSIX file system here")


# ---------------------------------------------------------------------- URIs
@pytest.mark.req("ROOT-3", "ROOT-5")
@pytest.mark.parametrize("uri", ["file:///home/user/projects/myproject", "file://localhost/srv/data",
                                 "file:///C:/Users/me", "file:///with%20space", "file:///"])
def test_good_root_uris(uri):
    assert validate_root_uri(uri) == uri


@pytest.mark.req("ROOT-3", "ROOT-5")
@pytest.mark.parametrize("uri, problem", [
    ("https://example.com/x", "must start with file://"),
    ("/home/user", "must start with file://"),
    ("file:/home/user", "file://"),
    ("file://server/share", "host 'server' refused"),
    ("file:///home/user/../etc", "'..'"),
    ("file:///home/%2E%2E/etc", "'..'"),
    ("file:///home/./user", "'.'"),
    ("file:///home?x=1", "query or fragment"),
    ("file:///home#top", "query or fragment"),
    ("file:///a%00b", "NUL"),
    ("", "non-empty string"),
    (None, "non-empty string"),
])
def test_bad_root_uris(uri, problem):
    with pytest.raises(ValueError, match=problem):
        validate_root_uri(uri)


def test_uri_and_path_round_trip(tmp_path):
    uri = path_to_uri(tmp_path / "a b")
    assert uri.startswith("file:///") and "a%20b" in uri
    assert uri_to_path(uri) == str(tmp_path / "a b")


@pytest.mark.req("ROOT-3", "ROOT-5")
def test_as_roots_accepts_each_form_and_validates(tmp_path):
    roots = as_roots([Root(uri="file:///srv", name="Server"), {"uri": "file:///data", "name": "Data"},
                      "file:///tmp", tmp_path])
    assert [r.uri for r in roots] == ["file:///srv", "file:///data", "file:///tmp", tmp_path.as_uri()]
    assert [r.name for r in roots] == ["Server", "Data", None, None]
    with pytest.raises(ValueError):
        as_roots(["https://example.com"])
    with pytest.raises(TypeError):
        as_roots([42])
    with pytest.raises(ValueError):                       # a Client refuses bad roots up front
        Client(None, roots=[{"uri": "file:///a/../b"}])


def test_as_roots_takes_plain_string_paths(tmp_path, monkeypatch):
    """``roots=["/home/me/project"]`` (and a single path, str or PathLike) become file:// URIs;
    a relative path is made absolute; a string with a URI scheme stays a URI."""
    monkeypatch.chdir(tmp_path)
    assert [r.uri for r in as_roots([str(tmp_path), "sub dir", "file:///srv"])] == [
        tmp_path.as_uri(), (tmp_path / "sub dir").as_uri(), "file:///srv"]
    assert [r.uri for r in as_roots(str(tmp_path))] == [tmp_path.as_uri()]
    assert [r.uri for r in as_roots(tmp_path)] == [tmp_path.as_uri()]
    with pytest.raises(ValueError, match="file://"):
        as_roots("https://example.com/data")
    client = Client(None, roots=[str(tmp_path)])
    assert client.roots[0].uri == tmp_path.as_uri()
    client.set_roots(str(tmp_path / "other"))
    assert [r.uri for r in client.roots] == [(tmp_path / "other").as_uri()]


# ---------------------------------------------------------------------- paths inside roots
@pytest.fixture
def tree(tmp_path):
    """``project/src/main.py``, ``project2/``, ``outside/secret``, and (POSIX) symlinks."""
    (tmp_path / "project" / "src").mkdir(parents=True)
    (tmp_path / "project" / "src" / "main.py").write_text("print()")
    (tmp_path / "project2").mkdir()
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret").write_text("x")
    (tmp_path / "notes.txt").write_text("n")
    return tmp_path


@pytest.mark.req("ROOT-6")
def test_inside_and_outside(tree):
    roots = [Root(uri=(tree / "project").as_uri(), name="p")]
    assert is_inside(tree / "project" / "src" / "main.py", roots)
    assert is_inside(tree / "project", roots)
    assert is_inside((tree / "project" / "src" / "main.py").as_uri(), roots)      # a file URI too
    assert not is_inside(tree / "project2", roots)                               # a prefix, not a parent
    assert not is_inside(tree / "project" / ".." / "outside" / "secret", roots)  # '..' resolved
    assert not is_inside(tree / "outside" / "secret", roots)
    assert find_root(tree / "project" / "src", roots) is roots[0]
    assert is_inside(tree / "project" / "new-file-not-yet-created", roots)


def test_a_file_root_contains_only_itself(tree):
    roots = [{"uri": (tree / "notes.txt").as_uri()}]
    assert is_inside(tree / "notes.txt", roots)
    assert not is_inside(tree / "project", roots)


def test_relative_paths_need_a_base(tree):
    roots = [(tree / "project").as_uri()]
    with pytest.raises(ValueError, match="relative path"):
        is_inside("src/main.py", roots)
    assert is_inside("src/main.py", roots, base=tree / "project")
    assert not is_inside("../outside/secret", roots, base=tree / "project")


@pytest.mark.req("ROOT-6")
def test_require_inside_returns_the_resolved_path_or_refuses(tree):
    roots = [Root(uri=(tree / "project").as_uri())]
    assert require_inside(tree / "project" / "src" / ".." / "src" / "main.py", roots) == \
        os.path.realpath(tree / "project" / "src" / "main.py")
    with pytest.raises(PathOutsideRoots, match="outside the client's roots") as info:
        require_inside(tree / "outside", roots)
    assert isinstance(info.value, PermissionError)
    with pytest.raises(PathOutsideRoots, match="no roots"):
        require_inside(tree, [])


def test_invalid_root_uris_never_match(tree):
    assert not is_inside(tree / "project", ["https://example.com/", {"uri": "file:///x/../" + str(tree)}])


@pytest.mark.req("ROOT-6")
@needs_symlinks
def test_symlinks_are_resolved_in_paths_and_roots(tree):
    (tree / "project" / "escape").symlink_to(tree / "outside")
    (tree / "link-to-project").symlink_to(tree / "project")
    roots = [Root(uri=(tree / "project").as_uri())]
    assert not is_inside(tree / "project" / "escape" / "secret", roots)        # a link out of the root
    assert is_inside(tree / "link-to-project" / "src" / "main.py", roots)      # a link into it
    linked_root = [Root(uri=(tree / "link-to-project").as_uri())]
    assert is_inside(tree / "project" / "src", linked_root)                    # the root is a link
    assert resolve_path(tree / "link-to-project") == os.path.realpath(tree / "project")


# ---------------------------------------------------------------------- in process
def roots_server() -> Server:
    server = Server("rooted")
    server.changed = threading.Event()
    server.seen = []

    @server.on_roots_changed
    def changed(session) -> None:
        server.seen.append([r.uri for r in session.list_roots()])     # may ask again from the callback
        server.changed.set()

    @server.tool
    def roots_here(ctx: Context) -> str:
        return ",".join(f"{r.name}={r.uri}" for r in ctx.list_roots())
    return server


@pytest.mark.req("ROOT-1")
@pytest.mark.parametrize("revision", ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"])
def test_list_roots_from_context_and_session_in_every_revision(revision):
    server = roots_server()
    roots = [Root(uri="file:///srv/app", name="App", meta={"k": 1}), {"uri": "file:///data"}]
    with connect(server, revision=revision, roots=roots) as (client, session, rec):
        assert client.capabilities() == {"roots": {"listChanged": True}}
        assert text(client.call_tool("roots_here")) == "App=file:///srv/app,None=file:///data"
        listed = session.list_roots()
        assert [(r.uri, r.name) for r in listed] == [("file:///srv/app", "App"), ("file:///data", None)]
    reply = rec.wait_for(lambda d, m: d == "send" and "roots" in m.get("result", {}))
    assert ("_meta" in reply["result"]["roots"][0]) == (revision >= "2025-06-18")


@pytest.mark.req("ROOT-2")
def test_set_roots_replaces_them_and_notifies():
    server = roots_server()
    with connect(server, roots=[]) as (client, session, rec):
        assert session.list_roots() == []
        client.set_roots(["file:///proj/one", {"uri": "file:///proj/two", "name": "Two"}])
        assert server.changed.wait(WAIT)
        assert server.seen == [["file:///proj/one", "file:///proj/two"]]
        assert [r.name for r in client.roots] == [None, "Two"]
        with pytest.raises(ValueError):                             # nothing changes, nothing is sent
            client.set_roots(["file:///proj/../etc"])
        assert len(client.roots) == 2
    sent = [m.get("method") for d, m in rec.records if d == "send"]
    assert sent.count("notifications/roots/list_changed") == 1


def test_set_roots_before_connecting_only_replaces():
    client = Client(None, roots=["file:///a"])
    client.set_roots(["file:///b"])
    assert [r.uri for r in client.roots] == ["file:///b"]
    with connect(roots_server(), roots=None) as (client, _, _rec):
        with pytest.raises(CapabilityNotSupported, match="roots=\\[\\]"):
            client.set_roots(["file:///x"])


@pytest.mark.req("ROOT-4", "ROOT-8")
def test_without_roots_the_server_refuses_locally_and_the_client_answers_32601():
    server = roots_server()
    with connect(server) as (client, session, rec):
        assert client.roots is None and "roots" not in client.capabilities()
        result = client.call_tool("roots_here")
        assert result.is_error and "roots" in text(result) and "did not declare" in text(result)
        with pytest.raises(CapabilityNotSupported):
            session.list_roots()
        assert not any(m.get("method") == "roots/list" for _, m in rec.records)
        with pytest.raises(MethodNotFoundError):
            session.request("roots/list", timeout=WAIT)


@pytest.mark.req("ROOT-8")
def test_a_failing_roots_changed_callback_does_not_break_the_session():
    server = roots_server()
    done = threading.Event()

    @server.on_roots_changed
    def broken(session):
        done.set()
        raise RuntimeError("boom")
    with connect(server, roots=["file:///a"]) as (client, session, _rec):
        client.set_roots(["file:///b"])
        assert done.wait(WAIT) and server.changed.wait(WAIT)
        assert text(client.call_tool("roots_here")) == "None=file:///b"


# ---------------------------------------------------------------------- end to end over stdio
def test_stdio_roots_with_client_stdio(tree):
    roots = [{"uri": (tree / "project").as_uri(), "name": "Project"}]
    with Client.stdio(FEATURE_SERVER, env=env(), roots=roots, timeout=20) as client:
        assert text(client.call_tool("show_roots")) == f"Project={(tree / 'project').as_uri()}"
        assert text(client.call_tool("check_path", {"path": str(tree / "project" / "src" / "main.py")})) == \
            f"inside {(tree / 'project').as_uri()}"
        outside = client.call_tool("check_path", {"path": str(tree / "project" / ".." / "outside" / "secret")})
        assert outside.is_error and "outside the client's roots" in text(outside)


@pytest.mark.req("ROOT-2")
def test_stdio_list_changed(tree):
    with stdio_client(roots=[tree / "project"]) as client:
        assert text(client.call_tool("roots_changes")) == "0"
        client.set_roots([tree / "project", tree / "outside"])
        client.set_roots([tree / "outside"])
        assert text(client.call_tool("roots_changes", {"at_least": 2})) == "2"
        assert text(client.call_tool("show_roots")) == f"={(tree / 'outside').as_uri()}"
        inside = text(client.call_tool("check_path", {"path": str(tree / "outside" / "secret")}))
        assert inside == f"inside {(tree / 'outside').as_uri()}"
    validated(client)
