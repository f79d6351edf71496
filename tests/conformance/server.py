"""The server the official conformance suite's server scenarios expect
(``@modelcontextprotocol/conformance``): its tool, resource and prompt names.

Run: ``python tests/conformance/server.py --http 127.0.0.1:PORT``, then
``npx conformance server --url http://127.0.0.1:PORT/mcp``.
"""
import argparse
import base64
import json
import sys
import time

from mcp_ref import Context, Server
from mcp_ref.types import EmbeddedResource, PromptMessage, TextContent, TextResourceContents, audio, image

PNG = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==")
WAV = base64.b64decode("UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQAAAAA=")

server = Server("mcp_ref-conformance", version="1.0.0")


# ---------------------------------------------------------------------- tools
@server.tool
def test_simple_text() -> str:
    """A simple text response."""
    return "This is a simple text response for testing."


@server.tool
def test_image_content():
    """Image content."""
    return image(PNG, "image/png")


@server.tool
def test_audio_content():
    """Audio content."""
    return audio(WAV, "audio/wav")


@server.tool
def test_embedded_resource():
    """An embedded resource."""
    return EmbeddedResource(resource=TextResourceContents(uri="test://embedded-resource", mime_type="text/plain",
                                                          text="This is an embedded resource content."))


@server.tool
def test_multiple_content_types() -> list:
    """Text, image and an embedded resource."""
    return ["Multiple content types test:", image(PNG, "image/png"),
            EmbeddedResource(resource=TextResourceContents(uri="test://mixed-content-resource",
                                                           mime_type="application/json",
                                                           text=json.dumps({"test": "data", "value": 123})))]


@server.tool
def test_tool_with_logging(ctx: Context) -> str:
    """Three info log messages, 50 ms apart."""
    for i, text in enumerate(("Tool execution started", "Tool processing data", "Tool execution completed")):
        if i:
            time.sleep(0.05)
        ctx.log("info", text)
    return "Logging test completed"


@server.tool
def test_tool_with_progress(ctx: Context) -> str:
    """Progress 0, 50, 100 of 100."""
    for i, value in enumerate((0, 50, 100)):
        if i:
            time.sleep(0.05)
        ctx.report_progress(value, total=100)
    return "Progress test completed"


@server.tool
def test_error_handling() -> str:
    """Always fails."""
    raise RuntimeError("This tool intentionally returns an error for testing")


@server.tool
def test_sampling(ctx: Context, prompt: str) -> str:
    """Ask the client's LLM.

    Args:
        prompt: the prompt to send to the LLM.
    """
    result = ctx.sample([prompt], max_tokens=100)
    content = result.content
    return f"LLM response: {getattr(content, 'text', content)}"


@server.tool
def test_elicitation(ctx: Context, message: str) -> str:
    """Ask the user.

    Args:
        message: the message to show the user.
    """
    result = ctx.elicit(message, {"type": "object", "properties": {
        "username": {"type": "string", "description": "User's response"},
        "email": {"type": "string", "description": "User's email address"}}, "required": ["username", "email"]})
    return f"User response: action={result.action}, content={json.dumps(result.content)}"


@server.tool
def test_elicitation_sep1034_defaults(ctx: Context) -> str:
    """Elicitation with defaults for every primitive type."""
    result = ctx.elicit("Please review and update the form fields with defaults", {"type": "object", "properties": {
        "name": {"type": "string", "description": "User name", "default": "John Doe"},
        "age": {"type": "integer", "description": "User age", "default": 30},
        "score": {"type": "number", "description": "User score", "default": 95.5},
        "status": {"type": "string", "description": "User status", "enum": ["active", "inactive", "pending"],
                   "default": "active"},
        "verified": {"type": "boolean", "description": "Verification status", "default": True}}})
    return f"Elicitation completed: action={result.action}, content={json.dumps(result.content)}"


@server.tool
def test_elicitation_sep1330_enums(ctx: Context) -> str:
    """Elicitation with the five enum schema variants."""
    result = ctx.elicit("Please select options from the enum fields", {"type": "object", "properties": {
        "untitledSingle": {"type": "string", "description": "Select one option",
                           "enum": ["option1", "option2", "option3"]},
        "titledSingle": {"type": "string", "description": "Select one option with titles", "oneOf": [
            {"const": "value1", "title": "First Option"}, {"const": "value2", "title": "Second Option"},
            {"const": "value3", "title": "Third Option"}]},
        "legacyEnum": {"type": "string", "description": "Select one option (legacy)",
                       "enum": ["opt1", "opt2", "opt3"], "enumNames": ["Option One", "Option Two", "Option Three"]},
        "untitledMulti": {"type": "array", "description": "Select multiple options",
                          "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
        "titledMulti": {"type": "array", "description": "Select multiple options with titles", "items": {"anyOf": [
            {"const": "value1", "title": "First Choice"}, {"const": "value2", "title": "Second Choice"},
            {"const": "value3", "title": "Third Choice"}]}}}})
    return f"Elicitation completed: action={result.action}, content={json.dumps(result.content)}"


@server.tool
def test_reconnection(ctx: Context) -> str:
    """Closes its SSE stream mid-call (SSE polling); the answer comes after the client resumes."""
    ctx.close_sse_stream()
    time.sleep(0.2)
    return "Reconnection test completed successfully"


# 2026-07-28 diagnostics (server-stateless)
@server.tool
def test_missing_capability(ctx: Context) -> str:
    """Needs the client's sampling capability."""
    result = ctx.sample(["Say hello"], max_tokens=10)
    return f"LLM response: {getattr(result.content, 'text', result.content)}"


@server.tool
def test_logging_tool(ctx: Context) -> str:
    """Logs one message at each of info and debug (none is sent without a requested level)."""
    ctx.log("info", "logging tool info message")
    ctx.log("debug", "logging tool debug message")
    return "Logging tool completed"


@server.tool
def test_streaming_elicitation(ctx: Context) -> str:
    """Asks the user a question: in 2026-07-28 an input-required result, never a request on the stream."""
    result = ctx.elicit("Please provide your name", {"type": "object", "properties": {"name": {"type": "string"}}})
    return f"Elicitation completed: action={result.action}, content={json.dumps(result.content)}"


def _extra_tool() -> str:
    """A tool added and removed by test_trigger_tool_change."""
    return "extra"


def _extra_prompt() -> str:
    """A prompt added and removed by test_trigger_prompt_change."""
    return "extra"


@server.tool
def test_trigger_tool_change() -> str:
    """Adds or removes a tool (tools list changed)."""
    if server.tools.get("test_extra_tool") is None:
        server.add_tool(_extra_tool, name="test_extra_tool")
        return "added test_extra_tool"
    server.remove_tool("test_extra_tool")
    return "removed test_extra_tool"


@server.tool
def test_trigger_prompt_change() -> str:
    """Adds or removes a prompt (prompts list changed)."""
    if server.prompts.get("test_extra_prompt") is None:
        server.add_prompt(_extra_prompt, name="test_extra_prompt")
        return "added test_extra_prompt"
    server.remove_prompt("test_extra_prompt")
    return "removed test_extra_prompt"


JSON_SCHEMA_2020_12 = {
    "$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
    "$defs": {"address": {"$anchor": "addressDef", "type": "object",
                          "properties": {"street": {"type": "string"}, "city": {"type": "string"}}}},
    "properties": {"name": {"type": "string"}, "address": {"$ref": "#/$defs/address"},
                   "contactMethod": {"type": "string", "enum": ["phone", "email"]},
                   "phone": {"type": "string"}, "email": {"type": "string"}},
    "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if": {"properties": {"contactMethod": {"const": "phone"}}},
    "then": {"required": ["phone"]}, "else": {"required": ["email"]},
    "additionalProperties": False}


def json_schema_2020_12_tool(**arguments) -> str:
    return json.dumps(arguments)


server.add_tool(json_schema_2020_12_tool, description="Tool with JSON Schema 2020-12 features",
                input_schema=JSON_SCHEMA_2020_12)


# ---------------------------------------------------------------------- resources
@server.resource("test://static-text", mime_type="text/plain")
def static_text() -> str:
    """A static text resource."""
    return "This is the content of the static text resource."


@server.resource("test://static-binary", mime_type="image/png")
def static_binary() -> bytes:
    """A static binary resource."""
    return PNG


@server.resource("test://watched-resource", mime_type="text/plain")
def watched_resource() -> str:
    """A resource to subscribe to."""
    return "Watched resource content"


@server.resource("test://template/{id}/data", mime_type="application/json")
def template_data(id: str) -> str:
    """Data for an id."""
    return json.dumps({"id": id, "templateTest": True, "data": f"Data for ID: {id}"})


# ---------------------------------------------------------------------- prompts
@server.prompt
def test_simple_prompt() -> str:
    """A prompt without arguments."""
    return "This is a simple prompt for testing."


@server.prompt
def test_prompt_with_arguments(arg1: str, arg2: str) -> str:
    """A prompt with two arguments.

    Args:
        arg1: First test argument.
        arg2: Second test argument.
    """
    return f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"


@server.prompt
def test_prompt_with_embedded_resource(resourceUri: str) -> list:
    """A prompt embedding a resource.

    Args:
        resourceUri: URI of the resource to embed.
    """
    return [PromptMessage(role="user", content=EmbeddedResource(resource=TextResourceContents(
                uri=resourceUri, mime_type="text/plain", text="Embedded resource content for testing."))),
            PromptMessage(role="user", content=TextContent(text="Please process the embedded resource above."))]


@server.prompt
def test_prompt_with_image() -> list:
    """A prompt with an image."""
    return [PromptMessage(role="user", content=image(PNG, "image/png")),
            PromptMessage(role="user", content=TextContent(text="Please analyze the image above."))]


@server.completion
def complete(ref, argument, context):
    """Prefix matches for any argument."""
    return [value for value in ("paris", "park", "party") if value.startswith(argument.value)]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--http", metavar="HOST:PORT", required=True)
    args = parser.parse_args(argv)
    host, _, port = args.http.rpartition(":")
    server.run(http=(host or "127.0.0.1", int(port)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
