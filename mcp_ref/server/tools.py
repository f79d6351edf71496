"""Tools: registration, argument validation, and turning what a tool function
returns into a ``CallToolResult``.

Spec: server/tools (every revision); server/tools#tool-names and
#error-handling of 2025-11-25; server/tools#structured-content and
#output-schema since 2025-06-18.

Rules:

1. A duplicate name is a ``ValueError``. A name outside the 2025-11-25
   guidance (1 to 128 characters of ``A-Z a-z 0-9 _ - .``) is registered with
   a ``ToolNameWarning`` naming the rule broken: the guidance is a SHOULD.
2. Schemas come from the function's signature unless given; a given schema
   is listed exactly as given (``$schema``, ``$defs``, ``$ref``,
   ``additionalProperties`` kept, nothing added).
3. Arguments are validated against ``inputSchema`` before the function runs,
   with a validator built once per tool. A validation failure, and anything
   the function raises, is a tool execution error (``isError: true`` with the
   message) so a model can correct itself; an unknown tool is -32602.
   (2025-11-25 lists input validation errors under tool execution errors; the
   earlier revisions list "invalid input data" there too.) One exception: in a
   task of the 2026-07-28 tasks extension (``ctx.json_rpc_errors_pass``), a
   JSON-RPC error the function raises (an ``McpError``) is passed on, so the
   task ends ``failed`` with it (server/tasks/extension.py rule 7); any other exception is
   still an ``isError`` result there, and the task ``completed``.
4. Results: ``str`` → text; image/audio bytes (or ``types.image()``/``audio()``)
   → base64 image/audio content; content blocks pass through; resource
   contents are embedded; a ``CallToolResult`` is sent as it is. With an
   ``outputSchema`` (from a dict/dataclass/TypedDict return annotation, or
   given), the value becomes ``structuredContent`` plus its JSON as text, and
   it is validated against the schema first (servers MUST conform). A
   ``CallToolResult`` the tool built itself is held to the same schema: its
   ``structuredContent`` must be there and match, unless it has ``isError``.
   A mismatch is an ``isError`` result naming the problem, either way.
5. Anything else (numbers, lists, ...) is sent as its JSON text.
6. A tool registered with ``same_thread=True`` runs on the server's one
   ``mcp-server-same-thread`` thread (``SameThread``), one call at a time in
   the order calls reach it, for code bound to one OS thread (COM apartments,
   GUI toolkits, thread-local connections, libraries that are not
   thread-safe). Everything else (validation, binding, results, errors) is
   what rules 3 to 5 say, on the handler thread, which waits for the call.
7. ``task_support`` (``"forbidden"``, ``"optional"``, ``"required"``; None
   lists nothing, which means forbidden) is listed as ``execution.taskSupport``
   (2025-11-25). A call whose params carry ``task``, or of a tool that declared
   ``task_support``, goes to ``server/tasks/legacy.py`` (``route_tool_call``), loaded
   then: it runs the call as a task, as an ordinary call, or answers -32601.
   The ordinary call pays one dict lookup and one attribute read for this.
   Spec: basic/utilities/tasks#tool-level-negotiation.
8. Registering a plain function keeps it and its options only; its schemas
   are made on its first listing, ``get`` or call (``_Entry.prepare``), its
   binder and validators on its first call (``_Entry.arm``), so a server of
   10,000 tools starts at once, a paginated listing builds only the page it
   sends, and listing keeps nothing a call alone needs (bench/bench_growth.py).
   A given ``annotations``/``icons``, or a function that is not a plain
   ``def`` (or has positional-only parameters), is read at registration,
   where its errors belong.
9. A listing writes each tool's wire dict from its fields (``listed_tool``),
   not through the ``Tool`` model: building a ``Tool`` and its ``to_dict``
   (which copies the schemas) were half of a first listing of 10,000 tools
   (bench/bench_growth.py, issue 17), and the listing would load
   ``mcp_ref.types`` for nothing. The schemas are shared with the fields,
   not copied (a listed dict is only read, pagination.py rule 5). The
   ``Tool`` of ``get`` is still the model; tests/test_tool_listing.py holds
   both to the same dict for every revision. Tools of the same parameters
   share one schema made from their signature (schema/signature_fast.py): schemas
   are read-only. A tool that fits the shape of one read before is not read
   again (``signature_fast.shape_of``), and what is read is kept in the
   entry's slots (``_Entry``), not in a dict per tool: reading every
   signature (~2-3 us a tool) and a dict per tool (with the garbage
   collections it brought) were ~40% of a first listing of 10,000 tools
   (bench/README.md, issue 17, third pass). A tool given no options, whose
   docstring describes no parameter, takes its schemas and ``wrap`` from its
   shape (``_analyse``: made for the first such tool of the shape, kept in
   ``Shape.derived``): reading the return annotation and asking for the
   schema again for each tool was ~20% of what ``_analyse`` did (1.6 us
   warm instead of 2.0; bench/README.md, fourth pass).

Start-up and ``tools/call`` latency are benchmark targets (bench/bench_stdio.py),
so registering the common tool (see schema/signature.py's fast path) and calling it
load neither ``inspect``/``typing`` nor ``mcp_ref.types``: the ``Tool`` object
is built when first listed or asked for (``add(build=False)``), and scalar,
structured and error results are written as wire dicts directly (``tool_result``
says why, and where the dataclass is still used).
"""
from __future__ import annotations


from mcp_ref.schema import signature, signature_fast
from mcp_ref.schema.docstrings import parse_docstring
from mcp_ref.errors import InvalidParamsError, McpError, UrlElicitationRequiredError, get_logger
from mcp_ref.server.features import BUILD_LOCK, as_icons, as_model, built_once, deferrable, next_serial
from mcp_ref.server.pagination import NamedRegistry
from mcp_ref.server.tool_binding import _Binder, _Checker, _direct_params
from mcp_ref.server.tool_results import error_result, tool_result

TYPE_CHECKING = False
if TYPE_CHECKING:          # names for annotations only
    from typing import Callable

    from mcp_ref.types import Tool
    from mcp_ref.server.same_thread import SameThread

log = get_logger("mcp_ref.server")

__all__ = ["Tools", "ToolNameWarning", "tool_name_problem"]

_NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-.")


class ToolNameWarning(UserWarning):
    """A tool name outside the 2025-11-25 naming guidance (server/tools#tool-names)."""


def tool_name_problem(name: str) -> str | None:
    """The naming rule ``name`` breaks, or None. Spec 2025-11-25: server/tools#tool-names."""
    if 1 <= len(name) <= 128 and _NAME_CHARS.issuperset(name):
        return None                                 # the common case, without building sets
    if not 1 <= len(name) <= 128:
        return f"tool names SHOULD be between 1 and 128 characters (this one has {len(name)})"
    bad = sorted(set(name) - _NAME_CHARS)
    if bad:
        return ("tool names SHOULD contain only A-Z, a-z, 0-9, underscore, hyphen and dot "
                f"(not {', '.join(repr(c) for c in bad)})")
    return None


def _build_tool(entry: _Entry) -> Tool:
    from mcp_ref.types import Tool, ToolAnnotations, ToolExecution
    options, support = entry.options, entry.task_support
    return Tool(name=entry.name, title=options["title"], description=entry.description,
                input_schema=entry.input_schema, output_schema=entry.output_schema,
                annotations=as_model(ToolAnnotations, options["annotations"]), icons=as_icons(options["icons"]),
                execution=ToolExecution(task_support=support) if support is not None else None,
                meta=options["meta"])


class _Entry:
    """A registered tool: what ``tools/call`` needs, and the ``Tool`` it is listed as.

    Rule 8: only the name, the function and the options are kept at
    registration; ``prepare`` reads the signature (the schemas) on the first
    listing, ``get`` or call, once, whoever comes first; ``arm`` makes the
    binder and the validators on the first call. What ``prepare`` reads is kept
    in the entry's own slots, not in a dict of its own: one object less per tool
    for the garbage collector to walk (rule 9)."""

    __slots__ = ("name", "fn", "options", "same_thread", "task_support", "serial", "prepared",
                 "description", "input_schema", "output_schema", "wrap",
                 "bind", "check_input", "check_output", "_tool")

    def __init__(self, name: str, fn: Callable, options: dict, same_thread: bool = False):
        self.name, self.fn, self.options = name, fn, options
        self.same_thread = same_thread
        self.task_support = options["task_support"]  # rule 7: None, or as given
        self.serial = next_serial()
        self.prepared = False
        self.description = self.input_schema = self.output_schema = self.wrap = self._tool = None
        self.bind = self.check_input = self.check_output = None

    def prepare(self, skip: tuple) -> None:
        """Rule 8: read the signature for a listing, once (``skip``: the server's Context
        class): the listed description and schemas, and whether a result is wrapped."""
        if self.prepared:
            return
        with BUILD_LOCK:
            if not self.prepared:
                self.description, self.input_schema, self.output_schema, self.wrap = _analyse(
                    self.fn, self.options, skip)
                self.prepared = True                # last: a reader that sees it sees the rest

    def arm(self, skip: tuple) -> Callable:
        """Rule 8: what a call needs, made on the first call: the binder and the
        validators (most tools of a large catalogue are listed, never called).
        Returns the input check."""
        self.prepare(skip)
        with BUILD_LOCK:
            if self.bind is None:
                output = self.output_schema
                self.check_output = _Checker(output) if output is not None else None
                self.bind = _binder(self.fn, skip)
        check = self.check_input = _Checker(self.input_schema).compiled()   # may load jsonschema
        return check

    @property
    def tool(self) -> Tool:
        return built_once(self, "_tool", _build_tool)
_NO_OPTIONS = dict.fromkeys(("title", "description", "input_schema", "output_schema", "structured_output",
                             "annotations", "icons", "meta", "task_support"))


def listed_tool(entry: _Entry, version: str | None) -> dict:
    """Rule 9: ``entry``'s wire dict for ``version`` (prepared), what ``entry.tool.to_dict``
    says, member for member and in its order; each optional member from the revision it
    appeared in (the Tool model's spec fields say the same). Given annotations and icons
    are models already (``add`` built the ``Tool``)."""
    options = entry.options
    out = {"name": entry.name, "inputSchema": entry.input_schema}
    since_2025_06 = version is None or version >= "2025-06-18"
    if options["title"] is not None and since_2025_06:
        out["title"] = options["title"]
    if entry.description is not None:
        out["description"] = entry.description
    if entry.output_schema is not None and since_2025_06:
        out["outputSchema"] = entry.output_schema
    if options["annotations"] is not None and (version is None or version >= "2025-03-26"):
        out["annotations"] = entry.tool.annotations.to_dict(version)
    if version is None or version >= "2025-11-25":
        if options["icons"] is not None:
            out["icons"] = [icon.to_dict(version) for icon in entry.tool.icons]
        if entry.task_support is not None:
            out["execution"] = {"taskSupport": entry.task_support}
    if options["meta"] is not None and since_2025_06:
        out["_meta"] = options["meta"]
    return out


def _analyse(fn: Callable, options: dict, skip: tuple) -> tuple:
    """``(description, input_schema, output_schema, wrap)`` of a tool: what it is listed
    with (rule 2), and whether its result is wrapped as ``{"result": ...}``."""
    # The signature (once per shape, schema/signature_fast.py) and the docstring are read once
    # each, for the schemas and the description.
    shape = signature_fast.shape_of(fn, skip)
    docs = parse_docstring(fn.__doc__) if shape is not None else None
    description = options["description"]
    if description is None:
        description = docs[0] if docs is not None else signature.description_of(fn)
    if options is not _NO_OPTIONS or docs is None or docs[1]:
        return (description,) + _schemas(fn, options, skip, shape, docs and docs[1])
    # Rule 9: given nothing, and without parameter descriptions, every tool of a shape
    # has the same schemas: made for the first, kept with the shape.
    schemas = shape.derived.get("tool")
    if schemas is None:
        schemas = shape.derived.setdefault("tool", _schemas(fn, options, skip, shape, {}))
    return (description,) + schemas


def _schemas(fn: Callable, options: dict, skip: tuple, shape, docs) -> tuple:
    """``(input_schema, output_schema, wrap)`` of a tool (``_analyse``)."""
    wrap = False
    output_schema = options["output_schema"]
    structured_output = options["structured_output"]
    if output_schema is None and structured_output is not False:
        output_schema = signature.output_schema(fn, shape=shape)
        if output_schema is None and structured_output:
            output_schema = signature.output_schema(fn, wrap=True, shape=shape)   # {"result": ...}
            wrap = output_schema is not None
    input_schema = options["input_schema"]
    if input_schema is None:
        input_schema = signature.input_schema(fn, skip=skip, shape=shape, docs=docs)
    return input_schema, output_schema, wrap


def _binder(fn: Callable, skip: tuple) -> _Binder:
    """How a tool's arguments are bound (rule 8: made on its first call)."""
    shape = signature_fast.shape_of(fn, skip)
    if shape is not None:
        params, inject = shape.parameters
    else:
        inject = signature.context_params(fn, skip=skip)
        params = _direct_params(fn, inject)
    return _Binder(fn, inject, params)


# ---------------------------------------------------------------------- the registry
class Tools(NamedRegistry):
    """The tools a server offers. ``owner`` is the server: its ``page_size``,
    ``_list_changed(method)`` and (for ``same_thread`` tools) ``sessions`` are used."""

    KIND, NOUN, CHANGED, ITEM = "tools", "tool", "notifications/tools/list_changed", "tool"

    def _item(self, entry: _Entry) -> Tool:
        entry.prepare((self.context_class,))        # rule 8
        return entry.tool

    def _wire(self, entry: _Entry, version: str | None) -> dict:
        entry.prepare((self.context_class,))        # rule 8
        return listed_tool(entry, version)          # rule 9
    _same_thread: SameThread | None = None

    @property
    def same_thread(self) -> SameThread:
        """The thread of ``same_thread`` tools (rule 6), made on first use."""
        runner = self._same_thread
        if runner is None:
            with self._lock:
                runner = self._same_thread
                if runner is None:
                    from mcp_ref.server.same_thread import SameThread     # loaded by a server that has such a tool
                    runner = self._same_thread = SameThread(self._has_open_session)
        return runner

    def _has_open_session(self) -> bool:
        return any(not session.closed for session in list(getattr(self.owner, "sessions", ())))

    def session_closed(self) -> None:
        """The owner lost a session: the same thread stops if it was the last one."""
        runner = self._same_thread
        if runner is not None:
            runner.wake()

    def supports_tasks(self) -> bool:
        """Whether a tool may run as a task (rule 7): the server then declares ``tasks``."""
        with self._lock:
            return any(entry.task_support in ("optional", "required") for entry in self._entries.values())

    def get(self, name: str) -> Tool | None:
        """The registered ``Tool`` of that name, or None."""
        entry = self._entries.get(name)
        if entry is None:
            return None
        entry.prepare((self.context_class,))
        return entry.tool

    def add(self, fn: Callable, *, name: str | None = None, title: str | None = None,
            description: str | None = None, input_schema: dict | None = None,
            output_schema: dict | None = None, annotations=None, icons: list | None = None,
            meta: dict | None = None, structured_output: bool | None = None, same_thread: bool = False,
            task_support: str | None = None, build: bool = True) -> Tool | None:
        """See ``Server.add_tool``. With ``build=False`` (the decorator) it returns None and
        the ``Tool`` is built when first listed or asked for (``get``); given
        ``annotations`` or ``icons`` are still checked here."""
        tool_name = name if name is not None else fn.__name__
        if not isinstance(tool_name, str):
            raise TypeError(f"a tool name is a string, not {type(tool_name).__name__}")
        problem = tool_name_problem(tool_name)
        if problem:
            import warnings
            warnings.warn(f"tool {tool_name!r}: {problem} (server/tools#tool-names, 2025-11-25)",
                          ToolNameWarning, stacklevel=3)
        if task_support is not None and task_support not in ("forbidden", "optional", "required"):
            raise ValueError(f"tool {tool_name!r}: task_support is 'forbidden', 'optional' or 'required' "
                             f"(execution.taskSupport), not {task_support!r}")
        if (title is description is input_schema is output_schema is structured_output is annotations
                is icons is meta is task_support is None):
            options = _NO_OPTIONS                   # nothing given: one shared dict (read-only)
        else:
            for which, schema in (("inputSchema", input_schema), ("outputSchema", output_schema)):
                # Spec: server/tools#tool: "a valid JSON Schema object (not null)" of type object.
                if schema is not None and (not isinstance(schema, dict) or schema.get("type") != "object"):
                    raise ValueError(f"tool {tool_name!r}: {which} must be a JSON Schema object with "
                                     f'"type": "object", not {schema!r}')
            options = {"title": title, "description": description, "input_schema": input_schema,
                       "output_schema": output_schema, "structured_output": structured_output,
                       "annotations": annotations, "icons": icons, "meta": meta, "task_support": task_support}
        entry = _Entry(tool_name, fn, options, bool(same_thread))
        if build or annotations is not None or icons is not None or not deferrable(fn):
            entry.prepare((self.context_class,))    # errors in the signature raise here
            entry.tool                              # built now: bad annotations or icons raise here
        self._register(tool_name, entry)
        return entry.tool if build else None

    def handle_call(self, ctx, params: dict, routed: bool = False) -> dict:
        """Spec: server/tools#calling-tools; rules 3 to 7. ``routed``: server/tasks/legacy.py
        decided already how this call runs (rule 7)."""
        name = params.get("name")
        if not isinstance(name, str):
            raise InvalidParamsError("tools/call: name must be a string")
        arguments = params.get("arguments")
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, dict):
            raise InvalidParamsError("tools/call: arguments must be an object")
        entry = self._entries.get(name)             # one dict read: atomic, no lock needed
        if entry is None:
            raise InvalidParamsError(f"Unknown tool: {name}", {"name": name})
        if ("task" in params or entry.task_support is not None) and not routed:
            if getattr(ctx, "era", None) is not None:   # rule 7: 2026-07-28, the tasks extension
                return self.owner.tasks.ext.route(self, ctx, params, entry)
            from mcp_ref.server.tasks.legacy import route_tool_call      # rule 7: loaded when a task is first needed
            return route_tool_call(self.owner.tasks, self, ctx, params, entry)
        version = ctx.protocol_version
        check = entry.check_input
        if check is None:                           # rule 8: the first call makes what calling needs
            check = entry.arm((self.context_class,))
        problem = check(arguments)
        if problem:
            return error_result(f"Invalid arguments for tool {name}: {problem}", version)
        try:
            if entry.same_thread:                   # rule 6: bound here, run there
                value = self.same_thread.call(entry.fn, entry.bind(arguments, ctx), ctx)
            else:
                value = entry.fn(**entry.bind(arguments, ctx))
        except UrlElicitationRequiredError:
            raise                                   # Spec 2025-11-25: travels as a JSON-RPC error
        except Exception as exc:
            if ctx.cancelled.is_set():
                raise
            if isinstance(exc, McpError) and getattr(ctx, "json_rpc_errors_pass", False):
                raise                               # rule 3: a task of the tasks extension fails with it
            log.info("tool %s failed: %s", name, exc, exc_info=True)
            return error_result(str(exc) or type(exc).__name__, version)
        try:
            return tool_result(entry, value, version)
        except (TypeError, ValueError) as exc:
            log.warning("tool %s: %s", name, exc)
            return error_result(str(exc), version)
