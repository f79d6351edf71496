"""One example server that exercises every server feature.

Run: ``python -m mcp_ref.examples.everything`` (stdio), or
``python -m mcp_ref.examples.everything --http 127.0.0.1:8000`` (Streamable HTTP).
``python -m mcp_ref demo`` walks through it; the end-to-end and interop tests
spawn it. Any MCP client can use all of it: every tool below works without
arguments, every resource reads, every prompt gets, every completion answers.

Tools
    ``echo(message="hello")``    text content
    ``add(a=2, b=3)``            a number, as text
    ``get_image()``              image content (a 1x1 PNG, base64)
    ``get_audio()``              audio content (10 ms of WAV silence, base64)
    ``get_resource_link()``      a resource_link to ``everything://readme``
    ``get_embedded_resource()``  an embedded text resource
    ``get_all_content()``        one block of every type
    ``get_weather(city="Paris")`` structured output (a dataclass → ``structuredContent``)
    ``long_operation(steps=3)``  reports progress ``1..steps`` (message "step i")
    ``log_messages()``           ``notifications/message`` at all eight levels
    ``fail(message="...")``      raises: an ``isError`` result
    ``touch_counter()``          increments ``everything://counter`` and notifies its subscribers
    ``toggle_extra_tool()``      adds or removes the tool ``extra`` (``tools/list_changed``)
    ``sum_numbers(numbers=[])``  a hand-written input schema (``$defs``, ``$ref``)

Resources
    ``everything://readme``           markdown, with annotations and an icon
    ``everything://logo.png``         binary (``blob``), with ``size``
    ``everything://counter``          text that ``touch_counter`` changes (subscribe to it)
    ``everything://greeting/{name}``  template: ``Hello, <name>!``
    ``everything://files/{+path}``    template: a pretend file at ``path`` (may contain ``/``)

Prompts
    ``simple``                                   no arguments
    ``code_review(code, language="python")``     a user and an assistant message
    ``resource_prompt(resourceUri)``             embeds the resource (argument name kept verbatim)
    ``media_prompt``                             image, audio, resource link and embedded resource

Completion: ``code_review``'s ``language``; ``greeting/{name}``'s ``name``;
``files/{+path}``'s ``path``. Logging: ``logging/setLevel``, and records of the
Python logger ``everything`` are bridged to the client.
"""
import base64
import logging
import struct
import sys
import threading
import time
from dataclasses import dataclass

from mcp_ref import Context, Server
from mcp_ref.types import (LOGGING_LEVELS, Annotations, EmbeddedResource, PromptMessage, ResourceLink, TextContent,
                           TextResourceContents, audio, image)

LANGUAGES = ("python", "perl", "php", "pascal", "rust", "ruby", "go", "javascript", "typescript")
NAMES = ("alice", "bob", "carol", "dave")
FILES = ("docs/intro.md", "docs/usage.md", "src/main.py", "src/util.py")
ICON = {"src": "data:image/svg+xml;base64," + base64.b64encode(
    b'<svg xmlns="http://www.w3.org/2000/svg" width="8" height="8"/>').decode("ascii"),
    "mimeType": "image/svg+xml", "sizes": ["any"]}

server = Server("everything", version="1.0.0", title="Everything",
                instructions="Exercises every MCP server feature; every tool works without arguments.")
py_log = logging.getLogger("everything")
py_log.setLevel(logging.INFO)
server.bridge_logging(py_log)

# A 1x1 red PNG, and 10 ms of silence as a WAV file (RIFF header; PCM, mono, 8 kHz, 16 bits; 80 zero samples).
PNG = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC")
WAV = (b"RIFF" + struct.pack("<I", 36 + 160) + b"WAVEfmt " + struct.pack("<IHHIIHH", 16, 1, 1, 8000, 16000, 2, 16)
       + b"data" + struct.pack("<I", 160) + bytes(160))
README = "# Everything\n\nAn example server that uses every MCP server feature.\n"
counter = {"value": 0}
_counter_lock = threading.Lock()


# ---------------------------------------------------------------------- tools
@server.tool(title="Echo", annotations={"read_only_hint": True}, icons=[ICON], meta={"example": True})
def echo(message: str = "hello") -> str:
    """Echo a message back.

    Args:
        message: the text to send back.
    """
    return message


@server.tool(annotations={"read_only_hint": True, "idempotent_hint": True})
def add(a: int = 2, b: int = 3) -> int:
    """Add two integers."""
    return a + b


@server.tool
def get_image():
    """A 1x1 PNG, as image content."""
    return image(PNG, "image/png", Annotations(audience=["user"], priority=0.5))


@server.tool
def get_audio():
    """10 ms of silence, as audio content (2025-03-26 and later; older sessions get no block)."""
    return audio(WAV, "audio/wav")


@server.tool
def get_resource_link():
    """A link to the readme resource (2025-06-18 and later; older sessions get no block)."""
    return ResourceLink(uri="everything://readme", name="readme", mime_type="text/markdown",
                        description="The readme of this server")


@server.tool
def get_embedded_resource():
    """The readme, embedded."""
    return EmbeddedResource(resource=TextResourceContents(uri="everything://readme", text=README,
                                                          mime_type="text/markdown"))


@server.tool
def get_all_content() -> list:
    """One content block of every type."""
    return [TextContent(text="every content type follows"), get_image(), get_audio(), get_resource_link(),
            get_embedded_resource()]


@dataclass
class WeatherReport:
    """Current weather.

    Attributes:
        city: where.
        temperature: degrees Celsius.
        conditions: a short description.
    """
    city: str
    temperature: float
    conditions: str


@server.tool(title="Weather")
def get_weather(city: str = "Paris") -> WeatherReport:
    """Structured weather (made up) for a city.

    Args:
        city: the city name.
    """
    return WeatherReport(city=city, temperature=21.5, conditions="sunny")


@server.tool
def long_operation(ctx: Context, steps: int = 3) -> str:
    """Report progress once per step; stops when cancelled.

    Args:
        steps: how many steps.
    """
    for i in range(1, steps + 1):
        ctx.check_cancelled()
        ctx.report_progress(i, total=steps, message=f"step {i}")
        time.sleep(0.01)
    return f"done {steps} steps"


@server.tool
def log_messages(ctx: Context) -> str:
    """Send a log message at each of the eight levels (filtered by logging/setLevel)."""
    for level in LOGGING_LEVELS:
        article = "an" if level[0] in "aeiou" else "a"
        ctx.log(level, {"message": f"{article} {level} message"}, logger="everything.tool")
    return ",".join(LOGGING_LEVELS)


@server.tool
def fail(message: str = "this tool always fails") -> str:
    """Raise an error: the result is a tool execution error (isError)."""
    raise RuntimeError(message)


@server.tool
def touch_counter() -> str:
    """Increment the counter resource and notify the sessions subscribed to it."""
    with _counter_lock:
        counter["value"] += 1
        value = counter["value"]
    py_log.info("counter is now %d", value)
    server.notify_resource_updated("everything://counter")
    return f"counter={value}"


def extra() -> str:
    """A tool that comes and goes (see toggle_extra_tool)."""
    return "extra"


@server.tool
def toggle_extra_tool() -> str:
    """Add the tool "extra", or remove it: each change sends notifications/tools/list_changed."""
    if any(tool.name == "extra" for tool in server.tools.list()):
        server.remove_tool("extra")
        return "removed"
    server.add_tool(extra)
    return "added"


SUM_SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {"number_list": {"type": "array", "items": {"type": "number"}}},
    "properties": {"numbers": {"$ref": "#/$defs/number_list", "default": []}},
    "additionalProperties": False,
}


@server.tool(input_schema=SUM_SCHEMA)
def sum_numbers(numbers=()) -> str:
    """Add up numbers (a hand-written input schema, listed as given)."""
    return str(sum(numbers))


# ---------------------------------------------------------------------- resources
@server.resource("everything://readme", title="Read me", mime_type="text/markdown", icons=[ICON],
                 annotations={"audience": ["user", "assistant"], "priority": 0.8,
                              "last_modified": "2025-01-12T15:00:58Z"})
def readme() -> str:
    """What this server is."""
    return README


@server.resource("everything://logo.png", mime_type="image/png", size=len(PNG))
def logo() -> bytes:
    """A 1x1 PNG (binary contents)."""
    return PNG


@server.resource("everything://counter", mime_type="text/plain")
def counter_resource() -> str:
    """A number that touch_counter increments; subscribe to hear about it."""
    return str(counter["value"])


@server.resource("everything://greeting/{name}", mime_type="text/plain")
def greeting(name: str) -> str:
    """A greeting for anyone."""
    return f"Hello, {name}!"


@server.resource("everything://files/{+path}", mime_type="text/plain")
def files(path: str) -> str:
    """A pretend file tree; ``path`` may contain slashes."""
    return f"contents of {path}"


# ---------------------------------------------------------------------- prompts
@server.prompt
def simple() -> str:
    """A prompt without arguments."""
    return "Say hello to the user."


@server.prompt(title="Code review")
def code_review(code: str, language: str = "python") -> list:
    """Ask for a code review.

    Args:
        code: the code to review.
        language: its programming language.
    """
    return [PromptMessage(role="user", content=TextContent(text=f"Please review this {language} code:\n{code}")),
            PromptMessage(role="assistant", content=TextContent(text="Sure, let me look at it."))]


@server.prompt
def resource_prompt(resourceUri: str) -> list:
    """Embed a resource of this server in the conversation.

    Args:
        resourceUri: the URI of the resource to embed (for example everything://readme).
    """
    text = README if resourceUri == "everything://readme" else f"(contents of {resourceUri})"
    return [PromptMessage(role="user", content=TextContent(text="Here is a resource:")),
            PromptMessage(role="user", content=EmbeddedResource(
                resource=TextResourceContents(uri=resourceUri, text=text, mime_type="text/plain")))]


@server.prompt
def media_prompt() -> list:
    """Messages with an image, audio, a resource link and an embedded resource (each
    revision gets the types it knows)."""
    return ["Look at these:", get_image(), get_audio(), get_resource_link(), get_embedded_resource()]


# ---------------------------------------------------------------------- completion
@server.completion
def complete(ref, argument, context):
    """Prefix matches for code_review.language, greeting names and file paths."""
    choices = {"language": LANGUAGES, "name": NAMES, "path": FILES}.get(argument.name, ())
    return [value for value in choices if value.startswith(argument.value)]


if __name__ == "__main__":         # `mcp-ref serve` of this server: stdio, or --http HOST:PORT, and the other options
    from mcp_ref.__main__ import main
    sys.exit(main(["serve", "mcp_ref.examples.everything:server", *sys.argv[1:]]))
