"""An MCP server written with the official Python SDK (``mcp`` >= 2), served over stdio.

Run: ``python tests/interop/sdk_server.py`` (needs the ``mcp`` package).

The interop tests start it as a subprocess and talk to it with ``mcp_ref.Client``.
It offers one of everything a handshake-era (2024-11-05 … 2025-11-25) client can use:

Tools
    ``add(a, b) -> int``                 plain arithmetic (the SDK wraps an ``int`` return as
                                         structured output ``{"result": n}``)
    ``count(n) -> str``                  reports progress 1..n (total n, message "at i")
    ``fail(message="boom") -> str``     raises; the SDK answers ``isError: true``, text
                                         ``"Error executing tool fail: <message>"``
    ``weather(city) -> WeatherReport``   structured output (an ``outputSchema`` object)
    ``echo_text(text) -> str``           unstructured text only (``structured_output=False``)
    ``log_burst() -> str``               sends ``notifications/message`` at debug, info, warning
                                         and error, filtered by the level ``logging/setLevel`` set
    ``ask_llm(question) -> str``         sends ``sampling/createMessage`` and returns the reply text
    ``ask_user(question) -> str``        sends ``elicitation/create`` (form: name, age) and
                                         returns ``"accept:<name>:<age>"``, ``"decline"`` or ``"cancel"``
    ``show_roots() -> str``              sends ``roots/list`` and returns the URIs, comma-separated
    ``touch_resource(uri) -> str``       sends ``notifications/resources/updated`` for ``uri``
                                         when a client subscribed to it

Resources
    ``demo://readme``           text/plain ``"Hello from the official SDK."``
    ``demo://logo``             image/png, binary (``blob``) bytes ``b"\\x89PNG\\r\\n\\x1a\\n"``
    ``demo://greeting/{name}``  template; text ``"Hello, <name>!"``
    ``resources/subscribe`` / ``resources/unsubscribe`` are served (capability ``subscribe``).

Prompts
    ``review(code, language="python")``  one user message ``"Review this <language> code:\\n<code>"``
    ``greet()``                          no arguments; a user and an assistant message

Completion (``completion/complete``)
    prompt ``review`` argument ``language``: from ``python, perl, php, rust, ruby``,
    prefix-matched on the partial value.
    template ``demo://greeting/{name}`` argument ``name``: from ``alice, bob, carol``.

Logging
    ``logging/setLevel`` is served; the level is kept for ``log_burst``.
"""
import warnings
from typing import Optional

try:
    from mcp_types import (Completion, EmptyResult, ModelPreferences, PromptReference,  # noqa: F401
                           ResourceTemplateReference, SamplingMessage, SetLevelRequestParams,
                           SubscribeRequestParams, TextContent, UnsubscribeRequestParams)
    from pydantic import BaseModel, Field

    from mcp.server.mcpserver import Context, MCPServer
    from mcp.server.mcpserver.exceptions import ToolError
    from mcp.server.mcpserver.prompts.base import AssistantMessage, UserMessage
    from mcp.server.mcpserver.resources.types import BinaryResource
except ImportError as exc:                      # pragma: no cover - only without the SDK
    raise SystemExit(f"the official MCP SDK is needed (pip install mcp): {exc}")

warnings.simplefilter("ignore")                 # deprecation notices (logging, sampling, roots) on stderr

LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
state = {"level": "debug", "subscriptions": set()}

mcp = MCPServer("sdk-interop-server", version="2.0.0", instructions="An official-SDK server for interop tests.",
                log_level="WARNING")


# ---------------------------------------------------------------------- tools
@mcp.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@mcp.tool()
async def count(n: int, ctx: Context) -> str:
    """Count to n, reporting progress after each step."""
    for i in range(1, n + 1):
        await ctx.report_progress(i, total=n, message=f"at {i}")
    return f"counted to {n}"


@mcp.tool()
def fail(message: str = "boom") -> str:
    """Always raises, so the result is a tool error that carries ``message``."""
    raise ToolError(message)


class WeatherReport(BaseModel):
    city: str
    temperature: float = Field(description="degrees Celsius")
    conditions: str


@mcp.tool(title="Weather report")
def weather(city: str) -> WeatherReport:
    """A made-up weather report, as structured output."""
    return WeatherReport(city=city, temperature=21.5, conditions="sunny")


@mcp.tool(structured_output=False)
def echo_text(text: str) -> str:
    """Return the text unchanged, as unstructured content only."""
    return text


@mcp.tool()
async def log_burst(ctx: Context) -> str:
    """Send a log message at debug, info, warning and error (those at or above the set level)."""
    threshold = LEVELS.index(state["level"])
    sent = []
    for level in ("debug", "info", "warning", "error"):
        if LEVELS.index(level) >= threshold:
            await ctx.log(level, {"msg": f"{level} message"}, logger_name="sdk-interop")
            sent.append(level)
    return ",".join(sent)


@mcp.tool()
async def ask_llm(question: str, ctx: Context) -> str:
    """Ask the client's model (sampling/createMessage) and return its text."""
    result = await ctx.session.create_message(
        [SamplingMessage(role="user", content=TextContent(type="text", text=question))],
        max_tokens=50, system_prompt="Answer briefly.",
        model_preferences=ModelPreferences(speed_priority=0.5),
        related_request_id=ctx.request_id)
    content = result.content
    text = content.text if getattr(content, "type", None) == "text" else str(content)
    return f"{result.model}:{text}"


class Person(BaseModel):
    name: str = Field(description="Your name")
    age: int = Field(description="Your age")


@mcp.tool()
async def ask_user(question: str, ctx: Context) -> str:
    """Ask the user (elicitation/create, form mode) for a name and an age."""
    answer = await ctx.elicit(question, schema=Person)
    if answer.action == "accept":
        return f"accept:{answer.data.name}:{answer.data.age}"
    return answer.action


@mcp.tool()
async def show_roots(ctx: Context) -> str:
    """List the client's roots (roots/list)."""
    result = await ctx.session.list_roots()
    return ",".join(str(root.uri) for root in result.roots)


@mcp.tool()
async def touch_resource(uri: str, ctx: Context) -> str:
    """Send notifications/resources/updated for ``uri`` when it is subscribed."""
    if uri in state["subscriptions"]:
        await ctx.session.send_resource_updated(uri)
        return "notified"
    return "not subscribed"


# ---------------------------------------------------------------------- resources
@mcp.resource("demo://readme", name="readme", title="Read me", mime_type="text/plain")
def readme() -> str:
    return "Hello from the official SDK."


mcp.add_resource(BinaryResource(uri="demo://logo", name="logo", mime_type="image/png",
                                data=b"\x89PNG\r\n\x1a\n"))


@mcp.resource("demo://greeting/{name}", name="greeting", description="A greeting for someone",
              mime_type="text/plain")
def greeting(name: str) -> str:
    return f"Hello, {name}!"


async def _subscribe(ctx, params: SubscribeRequestParams) -> EmptyResult:
    state["subscriptions"].add(str(params.uri))
    return EmptyResult()


async def _unsubscribe(ctx, params: UnsubscribeRequestParams) -> EmptyResult:
    state["subscriptions"].discard(str(params.uri))
    return EmptyResult()


mcp._lowlevel_server.add_request_handler("resources/subscribe", SubscribeRequestParams, _subscribe)
mcp._lowlevel_server.add_request_handler("resources/unsubscribe", UnsubscribeRequestParams, _unsubscribe)


# ---------------------------------------------------------------------- prompts
@mcp.prompt(title="Code review")
def review(code: str, language: str = "python") -> str:
    """Ask for a review of some code."""
    return f"Review this {language} code:\n{code}"


@mcp.prompt()
def greet() -> list:
    """A fixed two-message conversation."""
    return [UserMessage("Hello!"), AssistantMessage("Hi, how can I help?")]


# ---------------------------------------------------------------------- completion
LANGUAGES = ("python", "perl", "php", "rust", "ruby")
NAMES = ("alice", "bob", "carol")


@mcp.completion()
async def complete(ref, argument, context) -> Optional[Completion]:
    if isinstance(ref, PromptReference) and ref.name == "review" and argument.name == "language":
        values = [v for v in LANGUAGES if v.startswith(argument.value)]
    elif isinstance(ref, ResourceTemplateReference) and argument.name == "name":
        values = [v for v in NAMES if v.startswith(argument.value)]
    else:
        return None
    return Completion(values=values, total=len(values), has_more=False)


# ---------------------------------------------------------------------- logging
async def _set_level(ctx, params: SetLevelRequestParams) -> EmptyResult:
    state["level"] = params.level
    return EmptyResult()


mcp._lowlevel_server.add_request_handler("logging/setLevel", SetLevelRequestParams, _set_level)


if __name__ == "__main__":
    mcp.run("stdio")
