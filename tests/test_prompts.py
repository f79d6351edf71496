"""Prompts, in process: registration (bare and called decorator, by call),
arguments from the signature (names verbatim, required without a default,
descriptions), ``prompts/list``, ``prompts/get`` with every return form and
content type per revision, -32602 errors, list changes. Every message is
validated against its revision's schema. Spec: server/prompts.
"""
from typing import Annotated, Optional

import pytest

from conftest import REVISIONS
from features_helpers import Collector, connected
from mcp_ref import Context, Server
from mcp_ref.errors import InvalidParamsError
from mcp_ref.types import (AudioContent, BlobResourceContents, EmbeddedResource, GetPromptResult, ImageContent,
                           PromptMessage, ResourceLink, TextContent, TextResourceContents)

BLOCKS = [TextContent(text="text"), ImageContent(data="aGk=", mime_type="image/png"),
          AudioContent(data="aGk=", mime_type="audio/wav"), ResourceLink(uri="file:///a", name="a"),
          EmbeddedResource(resource=TextResourceContents(uri="file:///b", text="b", mime_type="text/plain")),
          EmbeddedResource(resource=BlobResourceContents(uri="file:///c", blob="aGk=", mime_type="image/png"))]


def prompt_server() -> Server:
    server = Server("p")

    @server.prompt
    def simple() -> str:
        """A prompt without arguments."""
        return "Hello there"

    @server.prompt(name="review", title="Code review", description="Review some code")
    def code_review(code: str, language: str = "python") -> list:
        """Ignored: the description is given.

        Args:
            code: the code to review.
            language: its language.
        """
        return [PromptMessage(role="user", content=TextContent(text=f"Review this {language}:\n{code}")),
                PromptMessage(role="assistant", content=TextContent(text="Looking."))]

    @server.prompt()
    def embed(resourceUri: Annotated[str, "the URI to embed"], ctx: Context) -> list:
        return [f"From {ctx.method}:", EmbeddedResource(resource=TextResourceContents(
            uri=resourceUri, text="contents", mime_type="text/plain"))]

    @server.prompt
    def media() -> list:
        return list(BLOCKS)

    @server.prompt
    def wire_forms() -> list:
        return [{"role": "assistant", "content": {"type": "text", "text": "a dict message"}},
                {"type": "text", "text": "a dict block"}]

    @server.prompt
    def whole() -> GetPromptResult:
        return GetPromptResult(description="made by hand", messages=[PromptMessage(
            role="user", content=TextContent(text="whole"))])

    def by_call(topic: str) -> str:
        return f"Tell me about {topic}"

    server.add_prompt(by_call, name="topic", title="Topic", icons=[{"src": "https://example.com/i.png"}])
    return server


@pytest.mark.parametrize("revision", REVISIONS)
def test_list_prompts_with_arguments_from_the_signature(revision, wire_validator):
    with connected(prompt_server(), revision, wire_validator) as (client, _, recorder):
        prompts = {p.name: p for p in client.list_prompts()}
        assert list(prompts) == ["simple", "review", "embed", "media", "wire_forms", "whole", "topic"]
        assert prompts["simple"].arguments == [] and prompts["simple"].description == "A prompt without arguments."
        review = prompts["review"]
        assert review.description == "Review some code"
        assert [(a.name, a.required, a.description) for a in review.arguments] == \
            [("code", True, "the code to review."), ("language", False, "its language.")]
        assert [(a.name, a.required, a.description) for a in prompts["embed"].arguments] == \
            [("resourceUri", True, "the URI to embed")]          # verbatim, Context left out
        assert (review.title == "Code review") == (revision >= "2025-06-18")
        assert (prompts["topic"].icons is not None) == (revision >= "2025-11-25")


@pytest.mark.req("PROM-3", "PROM-4", "PROM-5")
@pytest.mark.parametrize("revision", REVISIONS)
def test_get_prompt_return_forms_and_content_types(revision, wire_validator):
    with connected(prompt_server(), revision, wire_validator) as (client, _, recorder):
        simple = client.get_prompt("simple")
        assert simple.messages == [PromptMessage(role="user", content=TextContent(text="Hello there"))]
        assert simple.description == "A prompt without arguments."
        review = client.get_prompt("review", {"code": "x = 1"})
        assert [(m.role, m.content.text) for m in review.messages] == \
            [("user", "Review this python:\nx = 1"), ("assistant", "Looking.")]
        assert client.get_prompt("review", {"code": "fn", "language": "rust"}).messages[0].content.text == \
            "Review this rust:\nfn"
        embed = client.get_prompt("embed", {"resourceUri": "file:///doc.txt"})
        assert embed.messages[0].content.text == "From prompts/get:"
        assert embed.messages[1].content.resource.uri == "file:///doc.txt"
        types = [m.content.to_dict()["type"] for m in client.get_prompt("media").messages]
        expected = ["text", "image", "audio", "resource_link", "resource", "resource"]
        if revision < "2025-06-18":
            expected.remove("resource_link")
        if revision < "2025-03-26":
            expected.remove("audio")
        assert types == expected
        forms = client.get_prompt("wire_forms").messages
        assert [(m.role, m.content.text) for m in forms] == [("assistant", "a dict message"), ("user", "a dict block")]
        whole = client.get_prompt("whole")
        assert whole.description == "made by hand" and whole.messages[0].content.text == "whole"
        assert client.get_prompt("topic", {"topic": "MCP"}).messages[0].content.text == "Tell me about MCP"


@pytest.mark.req("PROM-6", "PROM-7", "PROM-10")
def test_errors_are_32602(wire_validator):
    with connected(prompt_server(), "2025-11-25", wire_validator) as (client, _, _):
        with pytest.raises(InvalidParamsError, match="Unknown prompt: nope") as info:
            client.get_prompt("nope")
        assert info.value.code == -32602
        with pytest.raises(InvalidParamsError, match="Missing required argument for prompt review: code") as info:
            client.get_prompt("review", {"language": "go"})
        assert info.value.data == {"missing": ["code"]}
        with pytest.raises(InvalidParamsError, match="unknown argument"):
            client.get_prompt("simple", {"surprise": "x"})


@pytest.mark.req("PROM-7", "PROM-10")
def test_non_string_argument_values_are_32602():
    with connected(prompt_server()) as (client, _, _):           # no schema check: the request is bad
        with pytest.raises(InvalidParamsError, match="argument values are strings"):
            client.session.request("prompts/get", {"name": "review", "arguments": {"code": 5}})
        with pytest.raises(InvalidParamsError):
            client.session.request("prompts/get", {"name": 5})


@pytest.mark.req("PROM-1", "PROM-2")
def test_registration_rules_and_list_changes(wire_validator):
    server = Server("p")
    assert server.capabilities() == {}

    @server.prompt
    def first() -> str:
        return "1"

    assert server.capabilities()["prompts"] == {"listChanged": True}
    with pytest.raises(ValueError, match="already registered"):
        server.add_prompt(lambda: "x", name="first")
    changed = Collector()
    with connected(server, "2025-11-25", wire_validator, on_prompts_list_changed=changed) as (client, _, _):
        server.add_prompt(lambda: "2", name="second")
        changed.wait_for(1)
        server.remove_prompt("first")
        changed.wait_for(2)
        assert [p.name for p in client.list_prompts()] == ["second"]
    with pytest.raises(KeyError):
        server.remove_prompt("first")


@pytest.mark.req("PROM-6", "PROM-10")
def test_a_prompt_returning_something_else_is_an_internal_error():
    server = Server("p")
    server.add_prompt(lambda: 42, name="number")
    with connected(server) as (client, _, _):
        from mcp_ref.errors import InternalError
        with pytest.raises(InternalError):
            client.get_prompt("number")


def test_adding_and_removing_prompts_sends_list_changed(wire_validator):
    """Spec: server/prompts#list-changed-notification: a server that declared
    prompts.listChanged tells initialized clients when its prompts change."""
    from helpers import is_method
    server = Server("p")
    server.add_prompt(lambda: "one", name="first")
    changed = Collector()
    with connected(server, "2025-11-25", wire_validator, on_prompts_list_changed=changed) as (client, _, recorder):
        assert client.server_capabilities["prompts"] == {"listChanged": True}
        server.add_prompt(lambda: "two", name="second")
        changed.wait_for(1)
        server.remove_prompt("first")
        changed.wait_for(2)
        assert [p.name for p in client.list_prompts()] == ["second"]
        recorder.wait_count(is_method("notifications/prompts/list_changed", "receive"), 2)


def _listing_prompts() -> Server:
    server = Server("listing", page_size=3)

    @server.prompt
    def plain(topic: str, ctx: Context, style: str = "short") -> str:
        """Write about a topic.

        Args:
            topic: what to write about
        """
        return topic

    @server.prompt(title="Bare", meta={"k": [1]})
    def bare() -> str:
        return "x"

    @server.prompt(name="described", description="Given.")
    def undescribed(a: int, b: bool = True) -> str:
        """Not this one."""
        return "x"

    @server.prompt(icons=[{"src": "https://example.com/i.png"}])
    def with_icons(a: str) -> str:
        """Icons are read at registration."""
        return a

    @server.prompt
    def full_path(a: Annotated[str, "an annotated argument"], b: Optional[int] = None) -> str:
        return a
    server.add_prompt(lambda x, y="": x, name="added")
    return server


def _gc_counted(action) -> int:
    """What ``action()`` adds to the garbage collector's allocation count (objects it
    tracks, made and not freed), with the collector paused so no collection resets it."""
    import gc
    enabled = gc.isenabled()
    gc.disable()
    try:
        before = gc.get_count()[0]
        action()
        return gc.get_count()[0] - before
    finally:
        if enabled:
            gc.enable()


