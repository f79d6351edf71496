"""The server the fuzz and fault tests attack: run as a script it serves stdio
(``python tests/fuzz_target.py``), imported it builds the same ``Server`` for the
in-process and HTTP tests.

It offers a little of everything a hostile peer can aim at: tools with generated
and hand-written schemas, a tool that elicits a form, tools that block (until
cancelled, or for good), file resources served from a base folder behind
``roots.require_inside``, a template built for catastrophic backtracking, a prompt
with a completion, and logging.

Environment: ``FUZZ_BASE`` the folder the file resources serve (default: none:
every file read is refused); ``FUZZ_STDERR_BYTES`` writes that many bytes to
stderr at start (the chatty-server fault); ``FUZZ_IGNORE_SIGTERM`` installs a
SIGTERM handler that does nothing; ``FUZZ_HANG_AT_EXIT`` starts a thread that keeps
the process alive after stdin closes (so only SIGKILL ends it).
"""
import os
import sys
import threading
from pathlib import Path

if __name__ == "__main__":                      # run from a checkout without installing it
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from mcp_ref import Context, Server  # noqa: E402
from mcp_ref.errors import ResourceNotFoundError  # noqa: E402
from mcp_ref.client.roots import path_to_uri, require_inside  # noqa: E402

SHAPE_SCHEMA = {
    "type": "object",
    "properties": {
        "kind": {"type": "string", "enum": ["circle", "square"]},
        "size": {"type": "number", "minimum": 0, "maximum": 1000},
        "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 5},
        "origin": {"type": "object", "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}},
                   "required": ["x", "y"], "additionalProperties": False},
    },
    "required": ["kind", "size"],
    "additionalProperties": False,
}
FORM = {"type": "object", "properties": {"name": {"type": "string", "minLength": 1, "maxLength": 20},
                                         "age": {"type": "integer", "minimum": 0, "maximum": 150},
                                         "color": {"type": "string", "enum": ["red", "green"]}},
        "required": ["name", "age"]}
# Ten adjacent variables: a regular expression matcher tries every split of a long
# piece among them before it can fail.
BACKTRACK_TEMPLATE = "cat://" + "".join("{v%d}" % i for i in range(10))


def build(base=None) -> Server:
    server = Server("fuzz-target", version="1.0")
    calls = server.calls = []                   # what ran, for "the tool never ran" checks

    @server.tool()
    def echo(text: str) -> str:
        """Echo text back."""
        calls.append(("echo", text))
        return text

    @server.tool()
    def add(a: int, b: int) -> int:
        """Add two integers."""
        calls.append(("add", a, b))
        return a + b

    @server.tool(input_schema=SHAPE_SCHEMA)
    def shape(kind, size, tags=(), origin=None) -> str:
        """A hand-written schema with enum, bounds, nesting and no extra properties."""
        calls.append(("shape", kind, size))
        return f"{kind}:{size}:{len(tags)}"

    @server.tool()
    def ask(ctx: Context) -> str:
        """Elicit a form and report what came back."""
        result = ctx.elicit("Who are you?", FORM)
        return f"{result.action}:{sorted((result.content or {}).items())}"

    @server.tool()
    def wait_cancel(ctx: Context, seconds: float = 30.0) -> str:
        """Block until cancelled (or ``seconds``)."""
        calls.append(("wait_cancel",))
        return "cancelled" if ctx.cancelled.wait(seconds) else "waited"

    @server.tool()
    def never_returns() -> str:
        """A handler that ignores cancellation and never returns."""
        calls.append(("never_returns",))
        threading.Event().wait()
        return "unreachable"

    @server.tool()
    def progress(ctx: Context, steps: int = 3) -> str:
        """Report ``steps`` progress notifications."""
        for i in range(1, min(steps, 50) + 1):
            ctx.report_progress(i, total=steps)
        return "done"

    @server.resource("file:///{+path}")
    def read_file(path: str) -> bytes:
        """A file under FUZZ_BASE, never outside it (symlinks and ``..`` resolved)."""
        uri = "file:///" + path
        try:
            if base is None:
                raise PermissionError("no base folder")
            inside = require_inside("/" + path.lstrip("/"), [path_to_uri(base)])
            with open(inside, "rb") as f:
                return f.read()
        except (OSError, ValueError) as exc:         # outside the base, missing, a folder, NUL...
            raise ResourceNotFoundError(f"Resource not found: {uri} ({type(exc).__name__})", {"uri": uri})

    @server.resource(BACKTRACK_TEMPLATE)
    def backtrack(**parts) -> str:
        return "|".join(parts.values())

    @server.prompt()
    def greet(name: str) -> str:
        """Greet someone."""
        return f"Hello, {name}!"

    server.completion(lambda ref, argument, context=None: ["alice", "bob"])
    return server


def main() -> None:
    noise = int(os.environ.get("FUZZ_STDERR_BYTES") or 0)
    if noise:
        chunk = b"stderr noise " * 79 + b"\n"
        written = 0
        while written < noise:
            sys.stderr.buffer.write(chunk)
            written += len(chunk)
        sys.stderr.flush()
    if os.environ.get("FUZZ_IGNORE_SIGTERM"):
        import signal
        signal.signal(signal.SIGTERM, lambda *args: None)
    if os.environ.get("FUZZ_HANG_AT_EXIT"):
        threading.Thread(target=threading.Event().wait, name="hang-at-exit", daemon=False).start()
    build(os.environ.get("FUZZ_BASE") or None).run()


if __name__ == "__main__":
    main()
