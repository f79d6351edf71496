"""Resources, in process: static resources and templates (``{var}``, ``{+var}``,
``{var*}``), text and binary contents, listed metadata per revision, -32002 for
an unknown URI, subscriptions per session, list changes. Every message is
validated against its revision's schema. Spec: server/resources.
"""
import base64
import threading

import pytest

from conftest import REVISIONS
from features_helpers import Collector, connected
from helpers import WAIT, is_method
from mcp_ref import Context, Server
from mcp_ref.errors import CapabilityNotSupported, InvalidParamsError, ResourceNotFoundError
from mcp_ref.types import Annotations, BlobResourceContents, TextResourceContents

ICON = {"src": "https://example.com/r.png", "mimeType": "image/png"}


def resource_server() -> Server:
    server = Server("r")

    @server.resource("file:///readme.md", title="Read me", description="The readme", mime_type="text/markdown",
                     annotations={"audience": ["user"], "priority": 0.5, "last_modified": "2025-01-12T15:00:58Z"},
                     icons=[ICON], size=7)
    def readme() -> str:
        return "# Hello"

    @server.resource("file:///logo.png", mime_type="image/png")
    def logo() -> bytes:
        return b"\x89PNG\x00\x01"

    @server.resource("data://config")
    def config() -> dict:
        return {"debug": True}

    @server.resource("users://{user_id}/profile", name="profile", mime_type="application/json",
                     annotations=Annotations(priority=1.0))
    def profile(user_id: str) -> dict:
        return {"id": user_id}

    @server.resource("repo://{+path}")
    def repo_file(path: str) -> str:
        return f"file {path}"

    @server.resource("tags://{tags*}")
    def tagged(tags: list) -> str:
        return "|".join(tags)

    @server.resource("ctx://who")
    def who(ctx: Context) -> str:
        return f"read by {ctx.session.client_info.name}"

    @server.resource("multi://two")
    def two():
        return [TextResourceContents(uri="multi://two#a", text="a"),
                BlobResourceContents(uri="multi://two#b", blob="AA==", mime_type="application/x")]

    server.add_resource("fixed text", "const://text", name="constant")
    return server


@pytest.mark.req("RES-9")
@pytest.mark.parametrize("revision", REVISIONS)
def test_list_templates_and_read_in_every_revision(revision, wire_validator):
    with connected(resource_server(), revision, wire_validator) as (client, _, recorder):
        resources = {r.uri: r for r in client.list_resources()}
        assert list(resources) == ["file:///readme.md", "file:///logo.png", "data://config", "ctx://who",
                                   "multi://two", "const://text"]
        readme = resources["file:///readme.md"]
        assert (readme.name, readme.description, readme.mime_type, readme.size) == \
            ("readme", "The readme", "text/markdown", 7)
        assert readme.annotations.audience == ["user"] and readme.annotations.priority == 0.5
        assert (readme.title == "Read me") == (revision >= "2025-06-18")
        assert (readme.icons is not None) == (revision >= "2025-11-25")
        assert (readme.annotations.last_modified is not None) == (revision >= "2025-06-18")
        templates = [t.uri_template for t in client.list_resource_templates()]
        assert templates == ["users://{user_id}/profile", "repo://{+path}", "tags://{tags*}"]

        text = client.read_resource("file:///readme.md").contents
        assert text == [TextResourceContents(uri="file:///readme.md", text="# Hello", mime_type="text/markdown")]
        blob = client.read_resource("file:///logo.png").contents[0]
        assert isinstance(blob, BlobResourceContents) and base64.b64decode(blob.blob) == b"\x89PNG\x00\x01"
        config = client.read_resource("data://config").contents[0]
        assert (config.text, config.mime_type) == ('{"debug": true}', "application/json")
        assert client.read_resource("const://text").contents[0].text == "fixed text"
        assert client.read_resource("ctx://who").contents[0].text == "read by mcp_ref"
        assert [c.uri for c in client.read_resource("multi://two").contents] == ["multi://two#a", "multi://two#b"]


@pytest.mark.req("RES-7")
def test_templates_match_and_answer_the_requested_uri(wire_validator):
    with connected(resource_server(), "2025-11-25", wire_validator) as (client, _, _):
        profile = client.read_resource("users://42/profile").contents[0]
        assert (profile.uri, profile.text, profile.mime_type) == ("users://42/profile", '{"id": "42"}',
                                                                   "application/json")
        deep = client.read_resource("repo://src/pkg/main.py").contents[0]
        assert (deep.uri, deep.text) == ("repo://src/pkg/main.py", "file src/pkg/main.py")
        assert client.read_resource("tags://a,b,c").contents[0].text == "a|b|c"
        with pytest.raises(ResourceNotFoundError):
            client.read_resource("users://42/settings")             # {var} does not span "/"


@pytest.mark.req("RES-6", "RES-7")
def test_unknown_uri_is_32002_with_the_uri_in_data(wire_validator):
    with connected(resource_server(), "2025-11-25", wire_validator) as (client, _, recorder):
        with pytest.raises(ResourceNotFoundError) as info:
            client.read_resource("file:///missing.txt")
        assert info.value.code == -32002 and info.value.data == {"uri": "file:///missing.txt"}
        error = [m for m in recorder.received() if "error" in m][0]["error"]
        assert error == {"code": -32002, "message": "Resource not found", "data": {"uri": "file:///missing.txt"}}


@pytest.mark.req("RES-7")
def test_a_uri_that_is_not_a_string_is_32602():
    with connected(resource_server()) as (client, _, _):           # no schema check: the request is bad
        for method in ("resources/read", "resources/subscribe", "resources/unsubscribe"):
            with pytest.raises(InvalidParamsError):
                client.session.request(method, {"uri": 5})


@pytest.mark.req("RES-1")
def test_registration_mistakes_are_reported():
    server = Server("r")
    with pytest.raises(ValueError, match="takes no arguments"):
        server.add_resource(lambda name: name, "fixed://x")
    with pytest.raises(ValueError, match="variables without a parameter: id"):
        server.add_resource(lambda other: other, "t://{id}")
    with pytest.raises(ValueError, match="required parameters not in the template: extra"):
        server.add_resource(lambda id, extra: id, "t://{id}")
    server.add_resource(lambda: "x", "fixed://x")
    with pytest.raises(ValueError, match="already registered"):
        server.add_resource(lambda: "y", "fixed://x")
    server.add_resource(lambda id, **more: id, "t://{id}/{other}")        # **kwargs takes any variable
    with pytest.raises(TypeError, match="needs the URI"):
        server.resource(lambda: "x")                                        # used bare by mistake
    assert Server("r").capabilities() == {}
    assert server.capabilities()["resources"] == {"subscribe": True, "listChanged": True}


def test_subscriptions_are_per_session_and_updates_go_only_to_subscribers(wire_validator):
    server = resource_server()
    first, second = Collector(), Collector()
    with connected(server, "2025-11-25", wire_validator, on_resource_updated=first) as (a, _, rec_a), \
            connected(server, "2025-06-18", wire_validator, on_resource_updated=second) as (b, _, rec_b):
        a.subscribe_resource("file:///readme.md")
        b.subscribe_resource("users://7/profile")              # template URIs can be subscribed too
        assert server.notify_resource_updated("file:///readme.md") == 1
        assert first.wait_for(1) == ["file:///readme.md"]
        assert server.notify_resource_updated("users://7/profile") == 1
        assert second.wait_for(1) == ["users://7/profile"]
        assert server.notify_resource_updated("file:///logo.png") == 0
        a.unsubscribe_resource("file:///readme.md")
        a.unsubscribe_resource("file:///never-subscribed")      # not an error
        assert server.notify_resource_updated("file:///readme.md") == 0
        a.ping()
        b.ping()
        assert first.items == ["file:///readme.md"] and second.items == ["users://7/profile"]
        updates = [m for m in rec_a.received() if m.get("method") == "notifications/resources/updated"]
        assert updates == [{"jsonrpc": "2.0", "method": "notifications/resources/updated",
                            "params": {"uri": "file:///readme.md"}}]
        with pytest.raises(ResourceNotFoundError):
            a.subscribe_resource("file:///missing")


def test_subscribe_needs_the_capability():
    server = Server("r", capabilities={"resources": {}})
    server.add_resource("x", "fixed://x")
    with connected(server) as (client, _, _):
        assert client.read_resource("fixed://x").contents[0].text == "x"
        with pytest.raises(CapabilityNotSupported):
            client.subscribe_resource("fixed://x")


@pytest.mark.req("RES-2")
def test_adding_and_removing_resources_sends_list_changed(wire_validator):
    server = Server("r")
    server.add_resource("x", "fixed://x")
    changed = Collector()
    with connected(server, "2025-11-25", wire_validator, on_resources_list_changed=changed) as (client, _, rec):
        server.add_resource("y", "fixed://y")
        server.add_resource(lambda n: n, "tmpl://{n}")
        changed.wait_for(2)
        assert [r.uri for r in client.list_resources()] == ["fixed://x", "fixed://y"]
        server.remove_resource("fixed://x")
        server.remove_resource("tmpl://{n}")
        changed.wait_for(4)
        assert [r.uri for r in client.list_resources()] == ["fixed://y"]
        assert client.list_resource_templates() == []
        rec.wait_count(is_method("notifications/resources/list_changed", "receive"), 4)
    with pytest.raises(KeyError):
        server.remove_resource("fixed://nope")


@pytest.mark.req("RES-6")
def test_a_resource_function_error_is_an_internal_error():
    server = Server("r")

    @server.resource("broken://x")
    def broken():
        raise OSError("disk on fire")

    with connected(server) as (client, _, _):
        from mcp_ref.errors import InternalError
        with pytest.raises(InternalError):
            client.read_resource("broken://x")


def test_concurrent_reads_and_subscriptions():
    server = resource_server()
    errors = []
    with connected(server) as (client, _, _):
        def reader(i):
            try:
                for _ in range(10):
                    assert client.read_resource(f"users://{i}/profile").contents[0].text == f'{{"id": "{i}"}}'
                    client.subscribe_resource(f"users://{i}/profile")
            except Exception as exc:                 # reported below
                errors.append(exc)
        threads = [threading.Thread(target=reader, args=(i,)) for i in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(WAIT)
        assert not errors


def _listing_resources() -> Server:
    server = Server("listing", page_size=3)

    @server.resource("docs://readme")
    def readme() -> str:
        """The readme.

        More text."""
        return "x"

    @server.resource("docs://sized", title="Sized", mime_type="text/markdown", size=12, meta={"k": [1]})
    def sized(ctx: Context) -> str:
        return "x"

    @server.resource("users://{id}/profile", name="profile", description="Given.")
    def user(id: str, ctx: Context, detail: bool = False) -> str:
        """Not this one."""
        return id

    @server.resource("notes://{id}", annotations={"audience": ["user"]})
    def note(id: str) -> str:
        return id

    @server.resource("files://{path*}", title="Files", mime_type="text/plain")
    def files(path: list, **more) -> str:
        return "x"
    server.resource("fixed://text")("some text")
    server.add_resource(lambda: "x", "added://x")
    return server


