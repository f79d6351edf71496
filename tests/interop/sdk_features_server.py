"""An official-SDK (``mcp`` >= 2) stdio server that uses the client features of its client.

Run: ``python tests/interop/sdk_features_server.py``. ``tests/test_interop_client_features.py``
starts it and talks to it with ``mcp_ref.Client`` (sampling, elicitation, roots callbacks).

Tools:

``ask_llm(question)``         ``sampling/createMessage`` with system prompt, temperature, stop
                              sequences, metadata and model preferences; returns
                              ``"<model>|<stopReason>|<text>"``
``ask_llm_media()``           sampling with image and audio content; returns the reply text
``weather_agent(question)``   sampling with a ``get_weather`` tool (2025-11-25), answering each
                              ``tool_use`` with a ``tool_result``; returns the final text
``ask_user()``                form elicitation with a raw schema (string with format, integer with
                              bounds, boolean, titled enum, multi-select, defaults); returns the
                              result as JSON ``{"action", "content"}``
``ask_user_model()``          form elicitation through the SDK's pydantic path (``ctx.elicit``)
``connect_url()``             URL mode elicitation, then ``notifications/elicitation/complete``;
                              returns ``"<action>:<elicitationId>"``
``needs_auth()``              raises the SDK's ``UrlElicitationRequiredError`` (-32042)
``show_roots()``              ``roots/list``; returns ``"name=uri"`` lines
``roots_changes(at_least)``   how many ``notifications/roots/list_changed`` arrived (waits up
                              to 5 s for ``at_least``)
"""
import json
import warnings

try:
    import anyio
    from mcp_types import (AudioContent, ElicitRequestURLParams, ImageContent, ModelHint, ModelPreferences,
                           NotificationParams, SamplingMessage, TextContent, Tool, ToolChoice, ToolResultContent)
    from pydantic import BaseModel, Field

    from mcp.server.mcpserver import Context, MCPServer
    from mcp.shared.exceptions import UrlElicitationRequiredError
except ImportError as exc:                      # pragma: no cover - only without the SDK
    raise SystemExit(f"the official MCP SDK is needed (pip install mcp): {exc}")

warnings.simplefilter("ignore")                 # deprecation notices (sampling, roots) on stderr

mcp = MCPServer("sdk-features-server", version="2.0.0")
state = {"roots_changes": 0, "changed": None}

FORM = {"type": "object", "properties": {
    "email": {"type": "string", "format": "email", "title": "Email"},
    "age": {"type": "integer", "minimum": 0, "maximum": 150, "default": 30},
    "subscribe": {"type": "boolean", "default": True},
    "plan": {"type": "string", "oneOf": [{"const": "free", "title": "Free"}, {"const": "pro", "title": "Pro"}],
             "default": "free"},
    "topics": {"type": "array", "items": {"type": "string", "enum": ["mcp", "python", "rust"]},
               "default": ["mcp"]},
}, "required": ["email"]}

WEATHER = {"Paris": "18°C, partly cloudy", "London": "15°C, rainy"}
GET_WEATHER = Tool(name="get_weather", description="Current weather for a city",
                   input_schema={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]})


def _text(content) -> str:
    blocks = content if isinstance(content, list) else [content]
    return " ".join(getattr(b, "text", "") for b in blocks)


@mcp.tool()
async def ask_llm(question: str, ctx: Context) -> str:
    """Ask the client's LLM."""
    result = await ctx.session.create_message(
        [SamplingMessage(role="user", content=TextContent(type="text", text=question))], max_tokens=100,
        system_prompt="You are a helpful assistant.", temperature=0.5, stop_sequences=["STOP"],
        metadata={"origin": "sdk"}, include_context="none",
        model_preferences=ModelPreferences(hints=[ModelHint(name="claude")], intelligence_priority=0.9,
                                           speed_priority=0.2, cost_priority=0.1),
        related_request_id=ctx.request_id)
    return f"{result.model}|{result.stop_reason}|{_text(result.content)}"


@mcp.tool()
async def ask_llm_media(ctx: Context) -> str:
    """Sampling with image and audio content."""
    result = await ctx.session.create_message([
        SamplingMessage(role="user", content=ImageContent(type="image", data="iVBORw0K", mime_type="image/png")),
        SamplingMessage(role="user", content=AudioContent(type="audio", data="UklGRg==", mime_type="audio/wav")),
    ], max_tokens=20, related_request_id=ctx.request_id)
    return _text(result.content)


@mcp.tool()
async def weather_agent(question: str, ctx: Context) -> str:
    """Sampling with tools: a tool loop."""
    messages = [SamplingMessage(role="user", content=TextContent(type="text", text=question))]
    for _ in range(3):
        result = await ctx.session.create_message(messages, max_tokens=200, tools=[GET_WEATHER],
                                                  tool_choice=ToolChoice(mode="auto"),
                                                  related_request_id=ctx.request_id)
        if result.stop_reason != "toolUse":
            return _text(result.content)
        uses = result.content if isinstance(result.content, list) else [result.content]
        messages.append(SamplingMessage(role="assistant", content=uses))
        messages.append(SamplingMessage(role="user", content=[
            ToolResultContent(type="tool_result", tool_use_id=use.id, content=[
                TextContent(type="text", text=WEATHER.get(use.input.get("city"), "unknown"))]) for use in uses]))
    return "no answer"


@mcp.tool()
async def ask_user(ctx: Context) -> str:
    """Form elicitation with every kind of field."""
    result = await ctx.session.elicit_form("Your details, please", FORM, related_request_id=ctx.request_id)
    return json.dumps({"action": result.action, "content": result.content}, sort_keys=True)


class Person(BaseModel):
    name: str = Field(description="Your name")
    age: int = Field(default=30, description="Your age")


@mcp.tool()
async def ask_user_model(ctx: Context) -> str:
    """Form elicitation through the SDK's pydantic path."""
    answer = await ctx.elicit("Who are you?", schema=Person)
    if answer.action == "accept":
        return f"accept:{answer.data.name}:{answer.data.age}"
    return answer.action


@mcp.tool()
async def connect_url(ctx: Context) -> str:
    """URL mode elicitation, then the completion notification."""
    elicitation_id = "sdk-elicitation-1"
    result = await ctx.elicit_url("Connect your account", "https://example.com/connect?id=sdk-elicitation-1",
                                  elicitation_id)
    if result.action == "accept":
        await ctx.session.send_elicit_complete(elicitation_id)
    return f"{result.action}:{elicitation_id}"


@mcp.tool()
async def needs_auth(ctx: Context) -> str:
    """Always -32042."""
    raise UrlElicitationRequiredError([ElicitRequestURLParams(
        mode="url", message="Authorize access", url="https://example.com/authorize?id=sdk-auth-1",
        elicitation_id="sdk-auth-1")], "Authorization is required.")


@mcp.tool()
async def show_roots(ctx: Context) -> str:
    """The client's roots."""
    result = await ctx.session.list_roots()
    return "\n".join(f"{root.name or ''}={root.uri}" for root in result.roots)


@mcp.tool()
async def roots_changes(at_least: int = 0) -> int:
    """How many roots list_changed notifications arrived."""
    with anyio.move_on_after(5):
        while state["roots_changes"] < at_least:
            state["changed"] = anyio.Event()
            await state["changed"].wait()
    return state["roots_changes"]


async def _roots_changed(ctx, params) -> None:
    state["roots_changes"] += 1
    if state["changed"] is not None:
        state["changed"].set()


mcp._lowlevel_server.add_notification_handler("notifications/roots/list_changed", NotificationParams, _roots_changed)


if __name__ == "__main__":
    mcp.run("stdio")
