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
   ``task_support``, goes to ``server/tasks/legacy.py`` (``route_tool_call``):
   it runs the call as a task, as an ordinary call, or answers -32601.
   The ordinary call pays one dict lookup and one attribute read for this.
   Spec: basic/utilities/tasks#tool-level-negotiation.
8. A tool is read once (``_Entry.read``: one ``signature.Reading``, from which
   its schemas, its ``Binder`` and its checks are made; its ``Tool`` model on
   first use, since a listing needs only the shared dict below);
   tools of one shape share what is made (schema/signature.py rule 5).
   ``add_tool`` reads at once; ``@server.tool`` reads a plain ``def`` without
   positional-only parameters on the tool's first listing, get or call (what
   can fail, a positional-only parameter or another callable's signature, is
   read at once and refused at registration). Why: 10,000 tools start up in
   2.6x the floor, 3.9x read at once (medians; target 3x; bench_growth.py, catalog).
   A listing is each ``Tool``'s ``to_dict`` for the session's revision; tools
   of one shape that own only a name and a description copy the first one's
   (``Tools._wire``).
9. A warm call stays in this file: arguments that surely meet a flat schema
   (``_fits``) skip the checker, the ``Binder`` passes JSON values that are
   already their Python type as they are, and a ``str``, ``int``, ``float`` or
   ``bool`` result is a copy of one ``CallToolResult`` dict made per revision
   (``_text_result``). Figure: the server enters at most three of its own
   files per call (tests/test_call_path.py).
"""
from __future__ import annotations

import warnings
from inspect import Parameter
from typing import Any, Callable

from mcp_ref.errors import InvalidParamsError, McpError, UrlElicitationRequiredError, get_logger
from mcp_ref.schema import binding, signature
from mcp_ref.schema.validation import argument_checker, flat_types
from mcp_ref.server.features import as_icons, as_model
from mcp_ref.server.pagination import NamedRegistry
from mcp_ref.server.same_thread import SameThread
from mcp_ref.server.tool_results import _json_text, error_result, tool_result
from mcp_ref.types import CallToolResult, TextContent, Tool, ToolAnnotations, ToolExecution

log = get_logger("mcp_ref.server")

__all__ = ["Tools", "ToolNameWarning", "tool_name_problem"]

_NAMED = (Parameter.POSITIONAL_OR_KEYWORD, Parameter.KEYWORD_ONLY)
_SCALARS = frozenset((str, int, float, bool))
_TEXT_RESULTS: dict = {}            # revision -> a one-text CallToolResult's wire dict (_text_result)
_READ = ("wrap", "bind", "check_input", "flat", "check_output", "made", "inputs", "outputs", "description")
_OWN = ("title", "annotations", "icons", "meta", "task_support")    # options a listed copy cannot share
_NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-.")


class ToolNameWarning(UserWarning):
    """A tool name outside the 2025-11-25 naming guidance (server/tools#tool-names)."""


def tool_name_problem(name: str) -> str | None:
    """The naming rule ``name`` breaks, or None. Spec 2025-11-25: server/tools#tool-names."""
    if not 1 <= len(name) <= 128:
        return f"tool names SHOULD be between 1 and 128 characters (this one has {len(name)})"
    if _NAME_CHARS.issuperset(name):
        return None
    return ("tool names SHOULD contain only A-Z, a-z, 0-9, underscore, hyphen and dot "
            f"(not {', '.join(repr(c) for c in sorted(set(name) - _NAME_CHARS))})")


class Binder:
    """How JSON arguments become ``fn``'s keyword arguments (rule 3), decided once from its
    ``Reading``: the injected names (the context), the required ones, and those whose JSON
    value is already the Python value (``binding.as_is``: passed as they are); the rest
    become the annotated types (``binding.convert``)."""

    __slots__ = ("hints", "inject", "by_name", "var_keyword", "injected", "required", "as_is")

    def __init__(self, read: signature.Reading, inject: tuple = ()):
        params = read.params
        self.hints, self.inject = read.hints, frozenset(inject)
        self.by_name = {name: default for name, kind, default in params if kind in _NAMED}
        self.var_keyword = next((name for name, kind, _ in params if kind is Parameter.VAR_KEYWORD), None)
        self.injected = tuple(name for name in self.by_name if name in self.inject)
        self.required = tuple(name for name, default in self.by_name.items() if default is signature.NO_DEFAULT)
        self.as_is = frozenset(name for name in self.by_name
                               if name not in self.inject and binding.as_is(self.hints.get(name, Any)))

    def __call__(self, arguments: dict | None, context: Any = None) -> dict:
        """Keyword arguments for ``fn(**kwargs)``; ``context`` fills the injected names.
        Unknown names (unless ``fn`` takes ``**kwargs``; an injected name is unknown to a
        client), missing required parameters and values that do not convert raise
        InvalidParamsError naming them (also in ``data``)."""
        arguments = {} if arguments is None else arguments
        if not isinstance(arguments, dict):
            raise InvalidParamsError("arguments must be an object")
        by_name, var_keyword, as_is = self.by_name, self.var_keyword, self.as_is
        kwargs = {name: context for name in self.injected}
        unknown = []
        for name, value in arguments.items():
            if name in as_is:
                kwargs[name] = value
            elif name in self.inject or (name not in by_name and var_keyword is None):
                unknown.append(name)
            else:
                hint = self.hints.get(name if name in by_name else var_keyword, Any)
                kwargs[name] = binding.convert(value, hint, name)
        missing = [name for name in self.required if name not in kwargs]
        for problem, names in (("unknown", unknown), ("missing required", missing)):
            if names:
                raise InvalidParamsError(f"{problem} argument{'s' if len(names) > 1 else ''}: "
                                         + ", ".join(repr(name) for name in names), {problem.split()[0]: names})
        return kwargs


def _fits(flat: tuple, arguments: dict) -> bool:
    """Rule 3: whether ``arguments`` surely meet a flat inputSchema (``validation.flat_types``:
    the required names, and each typed property's exact JSON types). False sends the call
    to the schema's checker, which has the last word and the message."""
    required, types = flat
    if not required <= arguments.keys():
        return False
    for name, value in arguments.items():
        allowed = types.get(name)
        if allowed is not None and type(value) not in allowed:
            return False
    return True


class _Entry:
    """A registered tool: its ``Tool``, and what ``tools/call`` needs (rule 8), read by
    ``read`` at once (``add_tool``) or on the first use of one of ``_READ``."""

    __slots__ = ("name", "fn", "options", "skip", "same_thread", "task_support", "serial", "tool") + _READ

    def __init__(self, name: str, fn: Callable, options: dict, skip: tuple, same_thread: bool):
        self.name, self.fn, self.options, self.skip, self.same_thread = name, fn, options, skip, same_thread
        self.task_support = options["task_support"]                 # rule 7

    def __getattr__(self, attribute: str) -> Any:
        if attribute == "tool":                 # rule 8: made on first use, from the reading
            options, support = self.options, self.task_support
            self.tool = Tool(name=self.name, title=options["title"], input_schema=self.inputs,
                             output_schema=self.outputs, description=self.description,
                             annotations=options["annotations"], icons=options["icons"], meta=options["meta"],
                             execution=ToolExecution(task_support=support) if support is not None else None)
            return self.tool
        if attribute not in _READ:
            raise AttributeError(attribute)
        self.read()                             # a decorated tool's first listing, get or call
        return object.__getattribute__(self, attribute)

    def read(self) -> None:
        """Rule 8: the one reading of the tool, and what is made from it."""
        options = self.options
        read = signature.Reading(self.fn, self.skip)
        shared = options["input_schema"] is options["output_schema"] is options["structured_output"] is None \
            and not read.docs
        made = read.made.get("tool") if shared else None
        if made is None:
            made = _calling(read, options)
            if shared:
                made = read.made.setdefault("tool", made)           # schema/signature.py rule 5
        self.inputs, self.outputs, self.wrap, self.bind, self.check_input, self.flat, self.check_output = made
        description = self.description = read.description if options["description"] is None else options["description"]
        self.made = read.made if shared and description is not None and all(options[o] is None for o in _OWN) \
            else None                                               # Tools._wire


def _calling(read: signature.Reading, options: dict) -> tuple:
    """``(input_schema, output_schema, wrap, binder, input check, flat types, output check)``
    of a tool (rules 2 and 3): schemas given, else from its signature; ``wrap``: its result
    is sent as ``{"result": ...}``."""
    wrap = False
    output_schema = options["output_schema"]
    if output_schema is None and options["structured_output"] is not False:
        output_schema = signature.output_schema(read)
        if output_schema is None and options["structured_output"]:
            output_schema = signature.output_schema(read, wrap=True)   # {"result": ...}
            wrap = output_schema is not None
    input_schema = options["input_schema"] or signature.input_schema(read)     # one given is a non-empty dict (add)
    return (input_schema, output_schema, wrap, Binder(read, tuple(read.context)), argument_checker(input_schema),
            flat_types(input_schema), argument_checker(output_schema) if output_schema is not None else None)


def _text_result(text: str, version: str | None) -> dict:
    """Rule 4: ``CallToolResult(content=[TextContent(text=text)]).to_dict(version)``, a copy
    of the one made once per revision (``_TEXT_RESULTS``)."""
    shape = _TEXT_RESULTS.get(version)
    if shape is None:
        shape = _TEXT_RESULTS[version] = CallToolResult(content=[TextContent(text="")]).to_dict(version)
    return {**shape, "content": [{**shape["content"][0], "text": text}]}


# ---------------------------------------------------------------------- the registry
class Tools(NamedRegistry):
    """The tools a server offers. ``owner`` is the server: its ``page_size``,
    ``_list_changed(method)`` and (for ``same_thread`` tools) ``sessions`` are used."""

    KIND, CHANGED, ITEM = "tools", "notifications/tools/list_changed", "tool"
    DUPLICATE = "a tool named {!r} is already registered"

    _same_thread: SameThread | None = None

    @property
    def same_thread(self) -> SameThread:
        """The thread of ``same_thread`` tools (rule 6), made on first use; it runs while
        the server has an open session."""
        with self._lock:
            if self._same_thread is None:
                self._same_thread = SameThread(lambda: any(not session.closed for session in list(self.owner.sessions)))
            return self._same_thread

    def session_closed(self) -> None:
        """The owner lost a session: the same thread stops if it was the last one."""
        if self._same_thread is not None:
            self._same_thread.wake()

    def supports_tasks(self) -> bool:
        """Whether a tool may run as a task (rule 7): the server then declares ``tasks``."""
        return any(entry.task_support in ("optional", "required") for entry in self.entries())

    def _wire(self, entry: _Entry, version: str | None) -> dict:
        """Rule 8: a listed tool, its ``Tool``'s ``to_dict``; tools of one shape that own
        only a name and a description copy the first one's dict (``made``), each with
        its own two, and no ``Tool`` is made for it. Why: the first listing of 10,000 tools,
        which reads them, 2.4x the floor so, 3.1-3.3x with a ``Tool`` each, 5.6-6.7x with
        each ``to_dict`` (bench/bench_growth.py, catalog)."""
        made = entry.made
        if made is None:
            return entry.tool.to_dict(version)
        first = made.get(version) or made.setdefault(version, entry.tool.to_dict(version))
        return {**first, "name": entry.name, "description": entry.description}

    def add(self, fn: Callable, *, name: str | None = None, title: str | None = None,
            description: str | None = None, input_schema: dict | None = None,
            output_schema: dict | None = None, annotations: Any = None, icons: list | None = None,
            meta: dict | None = None, structured_output: bool | None = None, same_thread: bool = False,
            task_support: str | None = None, read: bool = True) -> _Entry:
        """See ``Server.add_tool``: the entry registered, its ``tool`` read at once unless
        ``read=False`` (rule 8)."""
        tool_name = name if name is not None else fn.__name__
        if not isinstance(tool_name, str):
            raise TypeError(f"a tool name is a string, not {type(tool_name).__name__}")
        problem = tool_name_problem(tool_name)
        if problem:
            warnings.warn(f"tool {tool_name!r}: {problem} (server/tools#tool-names, 2025-11-25)",
                          ToolNameWarning, stacklevel=3)
        if task_support is not None and task_support not in ("forbidden", "optional", "required"):
            raise ValueError(f"tool {tool_name!r}: task_support is 'forbidden', 'optional' or 'required' "
                             f"(execution.taskSupport), not {task_support!r}")
        for which, schema in (("inputSchema", input_schema), ("outputSchema", output_schema)):
            # Spec: server/tools#tool: "a valid JSON Schema object (not null)" of type object.
            if schema is not None and (not isinstance(schema, dict) or schema.get("type") != "object"):
                raise ValueError(f"tool {tool_name!r}: {which} must be a JSON Schema object with "
                                 f'"type": "object", not {schema!r}')
        options = {"title": title, "description": description, "input_schema": input_schema,
                   "output_schema": output_schema, "structured_output": structured_output,
                   "annotations": as_model(ToolAnnotations, annotations), "icons": as_icons(icons), "meta": meta,
                   "task_support": task_support}
        entry = _Entry(tool_name, fn, options, (self.context_class,), bool(same_thread))
        if read or not signature.plain(fn) or fn.__code__.co_posonlyargcount:
            entry.read()                        # rule 8: what may fail is refused here
        self._register(tool_name, entry)
        return entry

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
            from mcp_ref.server.tasks.legacy import route_tool_call     # the tasks room (server.py)
            return route_tool_call(self.owner.tasks, self, ctx, params, entry)
        era = ctx.era                               # ctx.protocol_version, read here (rule 9)
        version = era.version if era is not None else ctx.session.protocol_version
        flat = entry.flat
        if flat is None or not _fits(flat, arguments):
            problem = entry.check_input(arguments)
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
        kind = type(value)
        if kind in _SCALARS and entry.check_output is None:      # rule 4: the common result, one text
            return _text_result(value if kind is str else str(value) if kind is int else _json_text(value), version)
        try:
            return tool_result(value, version, name=name, wrap=entry.wrap, check_output=entry.check_output)
        except (TypeError, ValueError) as exc:
            log.warning("tool %s: %s", name, exc)
            return error_result(str(exc), version)
