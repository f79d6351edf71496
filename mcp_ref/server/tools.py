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
   earlier revisions list "invalid input data" there too.)
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
   ``task_support``, goes to ``server/tasks.py`` (``route_tool_call``), loaded
   then: it runs the call as a task, as an ordinary call, or answers -32601.
   The ordinary call pays one dict lookup and one attribute read for this.
   Spec: basic/utilities/tasks#tool-level-negotiation.
8. Registering a plain function keeps it and its options only; its schemas,
   binder and validators are made on its first listing, ``get`` or call
   (``_Entry.prepare``), so a server of 10,000 tools starts at once and a
   paginated listing builds only the page it sends (bench/bench_growth.py).
   A given ``annotations``/``icons``, or a function that is not a plain
   ``def`` (or has positional-only parameters), is read at registration,
   where its errors belong.

Start-up and ``tools/call`` latency are benchmark targets (bench/bench_stdio.py),
so registering the common tool (see signature.py's fast path) and calling it
load neither ``inspect``/``typing`` nor ``mcp_ref.types``: the ``Tool`` object
is built when first listed or asked for (``add(build=False)``), and scalar,
structured and error results are written as wire dicts directly (``tool_result``
says why, and where the dataclass is still used).
"""
from __future__ import annotations

import json
import sys
import threading
from collections import deque
from types import FunctionType

from .. import signature, validation
from ..errors import InvalidParamsError, MissingDependency, RequestCancelled, UrlElicitationRequiredError, get_logger
from .features import as_icons, as_model, next_serial
from .pagination import NamedRegistry

TYPE_CHECKING = False
if TYPE_CHECKING:          # names for annotations only
    from typing import Any, Callable

    from ..types import CallToolResult, Tool

log = get_logger("mcp_ref.server")

__all__ = ["Tools", "ToolNameWarning", "tool_name_problem", "to_content", "is_content", "SameThread",
           "SAME_THREAD_NAME"]

_NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-.")
# Magic numbers of the binary formats a bare ``bytes`` return may be (else use image()/audio()).
_MAGIC = ((b"\x89PNG\r\n\x1a\n", "image", "image/png"), (b"\xff\xd8\xff", "image", "image/jpeg"),
          (b"GIF87a", "image", "image/gif"), (b"GIF89a", "image", "image/gif"),
          (b"RIFF", "riff", None), (b"ID3", "audio", "audio/mpeg"), (b"OggS", "audio", "audio/ogg"),
          (b"fLaC", "audio", "audio/flac"))
# mcp_ref.types loads on first use; until it has, no value can be one of its objects.
_TYPES_BASE = __package__.rpartition(".")[0] + ".types.base"
# CallToolResult.structuredContent: since 2025-06-18 (types/tools.py); older revisions omit it.
_STRUCTURED_SINCE = "2025-06-18"
# json.dumps(value, ensure_ascii=False), without building an encoder per call.
_json_text = json.JSONEncoder(ensure_ascii=False).encode
# Rule 6: the thread that runs every same_thread tool of a server.
SAME_THREAD_NAME = "mcp-server-same-thread"
# The logging bridge finds the request it logs for in utilities.current (a thread-local).
_UTILITIES = __package__ + ".utilities"


class ToolNameWarning(UserWarning):
    """A tool name outside the 2025-11-25 naming guidance (server/tools#tool-names)."""


def tool_name_problem(name: str) -> str | None:
    """The naming rule ``name`` breaks, or None. Spec 2025-11-25: server/tools#tool-names."""
    if not 1 <= len(name) <= 128:
        return f"tool names SHOULD be between 1 and 128 characters (this one has {len(name)})"
    bad = sorted(set(name) - _NAME_CHARS)
    if bad:
        return ("tool names SHOULD contain only A-Z, a-z, 0-9, underscore, hyphen and dot "
                f"(not {', '.join(repr(c) for c in bad)})")
    return None


# ---------------------------------------------------------------------- results
def _is_model(value: Any) -> bool:
    base = sys.modules.get(_TYPES_BASE)
    return base is not None and isinstance(value, base.Model)


def is_content(value: Any) -> bool:
    """A content block object (text, image, audio, resource link, embedded resource, ...)."""
    return _is_model(value) and hasattr(type(value), "TYPE")


def _bytes_block(data: bytes):
    from ..types import audio, image
    for magic, kind, mime in _MAGIC:
        if data.startswith(magic):
            if kind == "riff":                      # RIFF: WAVE audio or WEBP image
                kind, mime = ("audio", "audio/wav") if data[8:12] == b"WAVE" else \
                    ("image", "image/webp") if data[8:12] == b"WEBP" else (None, None)
            if kind == "image":
                return image(data, mime)
            if kind == "audio":
                return audio(data, mime)
    raise TypeError("a tool returned bytes of an unknown format: return "
                    "mcp_ref.types.image(data, mime_type) or audio(data, mime_type)")


_SCALARS = frozenset((str, int, float, bool))


def to_content(value: Any) -> list:
    """What a tool returned, as a list of content blocks (rules 4 and 5)."""
    from ..types import BlobResourceContents, EmbeddedResource, TextContent, TextResourceContents, content_from_dict
    if value is None:
        return []
    if isinstance(value, str):
        return [TextContent(text=value)]
    if isinstance(value, (bytes, bytearray)):
        return [_bytes_block(bytes(value))]
    if is_content(value):
        return [value]
    if isinstance(value, (TextResourceContents, BlobResourceContents)):
        return [EmbeddedResource(resource=value)]
    if isinstance(value, dict) and isinstance(value.get("type"), str):
        return [content_from_dict(value)]
    if isinstance(value, (list, tuple)) and value and all(
            isinstance(v, (str, bytes, bytearray, TextResourceContents, BlobResourceContents)) or is_content(v)
            or (isinstance(v, dict) and isinstance(v.get("type"), str)) for v in value):
        return [block for item in value for block in to_content(item)]
    return [TextContent(text=_json_text(signature.to_jsonable(value)))]


def _scalar_text(value) -> str:
    """``json.dumps(value)`` of an int, float or bool (a str is its own text), without
    the encoder's overhead: json writes exactly these reprs."""
    kind = type(value)
    if kind is str:
        return value
    if kind is bool:
        return "true" if value else "false"
    if kind is int or value - value == 0.0:         # a finite float
        return repr(value)
    return json.dumps(value)                        # NaN, Infinity, -Infinity


def error_result(message: str, version: str | None) -> dict:
    """``CallToolResult(content=[TextContent(text=message)], is_error=True).to_dict(version)``:
    the same on every revision."""
    return {"content": [{"type": "text", "text": message}], "isError": True}


def tool_result(entry: _Entry, value: Any, version: str | None) -> dict:
    """What a tool returned, as the wire ``CallToolResult`` (rules 4 and 5): the one
    place a value becomes a result. Raises TypeError or ValueError (the caller answers
    them as an ``isError`` result) when the value cannot be content or breaks the
    outputSchema.

    Three cases, in order:

    * a scalar of a tool without outputSchema: one text block;
    * a value of a tool with an outputSchema (not content, not a model):
      ``structuredContent`` and its JSON text;
    * anything else (content blocks, bytes, a ``CallToolResult`` the tool built,
      lists of those): through ``CallToolResult`` and its ``to_dict``.

    The first two are written as wire dicts, the same ones ``CallToolResult.to_dict``
    gives (tests/test_tools.py compares them), and are the only path for those
    values: building the dataclass and encoding it costs about 4.7 µs, some 20 % of
    a server's whole ``tools/call`` (bench/bench_stdio.py), and would load
    ``mcp_ref.types`` for the common tool.
    """
    check_output = entry.check_output
    if check_output is None:
        if type(value) in _SCALARS:
            return {"content": [{"type": "text", "text": _scalar_text(value)}]}
    elif not _is_model(value) and (entry.wrap or not isinstance(value, (str, list, tuple))):
        structured = _structured(entry, value)              # rule 4
        result = {"content": [{"type": "text", "text": _json_text(structured)}]}
        if version is None or version >= _STRUCTURED_SINCE:
            result["structuredContent"] = structured
        return result
    from ..types import CallToolResult, TextContent
    if isinstance(value, CallToolResult):
        _check_result(entry, value)
        return value.to_dict(version)
    unstructured = is_content(value) or (not entry.wrap and isinstance(value, (str, list, tuple)))
    if check_output is None or unstructured:
        return CallToolResult(content=to_content(value)).to_dict(version)
    structured = _structured(entry, value)                  # rule 4: a model value
    return CallToolResult(content=[TextContent(text=_json_text(structured))],
                          structured_content=structured).to_dict(version)


def _structured(entry: _Entry, value: Any) -> dict:
    """Rule 4: the value as ``structuredContent``; ValueError when it breaks the outputSchema."""
    structured = signature.to_jsonable(value)
    if entry.wrap:
        structured = {"result": structured}
    if not isinstance(structured, dict):
        raise ValueError(f"tool {entry.name} has an outputSchema but returned "
                         f"{type(value).__name__}, not an object")
    _check_structured(entry, structured)
    return structured


def _check_structured(entry: _Entry, structured: dict) -> None:
    """ValueError when ``structured`` breaks the tool's outputSchema (rule 4)."""
    problem = entry.check_output(structured)
    if problem:
        raise ValueError(f"tool {entry.name} returned output that does not match its "
                         f"outputSchema: {problem}")


def _check_result(entry: _Entry, result: CallToolResult) -> None:
    """Rule 4 for a ``CallToolResult`` the tool built: with an outputSchema, a result
    without ``isError`` must carry conforming ``structuredContent`` (Spec:
    server/tools#output-schema: servers MUST provide structured results that conform)."""
    if entry.check_output is None or result.is_error:
        return
    structured = result.structured_content
    if structured is None:
        raise ValueError(f"tool {entry.name} has an outputSchema but returned a CallToolResult "
                         f"without structuredContent")
    if not isinstance(structured, dict):
        raise ValueError(f"tool {entry.name} has an outputSchema but its structuredContent is "
                         f"{type(structured).__name__}, not an object")
    _check_structured(entry, structured)


# ---------------------------------------------------------------------- validation and binding
_warned_no_jsonschema: list = []


def _compile(schema: dict) -> Callable:
    """A checker for ``schema``; without jsonschema, one that checks required keys only
    (so a stdlib-only server still works), with a warning once."""
    try:
        return validation.compile_validator(schema)
    except MissingDependency:
        if not _warned_no_jsonschema:
            _warned_no_jsonschema.append(True)
            log.warning("jsonschema is not installed: tool arguments are only checked for required keys")
        required = tuple(schema.get("required", ()))

        def check(instance) -> str | None:
            missing = [key for key in required if not isinstance(instance, dict) or key not in instance]
            return f"missing required properties: {', '.join(missing)}" if missing else None
        return check


def _needs_conversion(hint) -> bool:
    """Could ``signature.bind_arguments`` turn a schema-valid JSON value of this type into
    something else? (Floats, enums, records, tuples, bytes... do; str, int, bool, lists
    and dicts of them do not.)"""
    import inspect
    import typing

    from ..typehints import UNION_ORIGINS
    while typing.get_origin(hint) is typing.Annotated:
        hint = hint.__origin__
    if hint in (str, int, bool, dict, list, typing.Any, inspect.Parameter.empty, type(None)):
        return False
    origin = typing.get_origin(hint)
    if origin is typing.Literal:
        return False
    if origin in (list, dict) or origin in UNION_ORIGINS:
        return any(_needs_conversion(arg) for arg in typing.get_args(hint))
    return True


def _direct_params(fn: Callable, inject: list) -> list | None:
    """For what the fast path does not read (methods, ``Optional``, ``Literal``...): the
    parameters as ``[(name, hint, default)]`` when each can be bound as it is, or as a
    float (from an int), else None."""
    import inspect
    import typing

    from ..typehints import get_type_hints
    if not (inspect.isfunction(fn) or inspect.ismethod(fn)):
        return None
    try:
        hints = get_type_hints(fn)
        params = inspect.signature(fn).parameters
    except Exception:
        return None
    kinds = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    direct = []
    for name, p in params.items():
        if name in inject:
            continue
        hint = hints.get(name, typing.Any)
        if p.kind not in kinds or (hint is not float and _needs_conversion(hint)):
            return None
        direct.append((name, hint, signature.NO_DEFAULT if p.default is p.empty else p.default))
    return direct


class _Binder:
    """Arguments to keyword arguments. Parameters that need no conversion (see
    ``_direct_params``; a float converts from an int) are bound with a dict copy plus
    the context, prepared once; anything else goes through ``signature.bind_arguments``,
    which also words the errors."""

    __slots__ = ("fn", "inject", "direct", "required", "floats")

    def __init__(self, fn: Callable, inject: list, params: list | None):
        self.fn, self.inject = fn, tuple(inject)
        self.direct = self.required = None
        self.floats = ()
        if params is not None:
            self.direct = frozenset(name for name, _, _ in params)
            self.required = frozenset(name for name, _, default in params if default is signature.NO_DEFAULT)
            self.floats = tuple(name for name, hint, _ in params if hint is float)

    def __call__(self, arguments: dict, ctx) -> dict:
        if self.direct is not None and arguments.keys() <= self.direct and self.required <= arguments.keys():
            kwargs = dict(arguments)
            for name in self.floats:                # as signature._convert: int to float, not bool
                value = kwargs.get(name)
                if isinstance(value, int) and not isinstance(value, bool):
                    kwargs[name] = float(value)
            for name in self.inject:
                kwargs[name] = ctx
            return kwargs
        return signature.bind_arguments(self.fn, arguments, inject={name: ctx for name in self.inject})


_build_lock = threading.Lock()


def _build_tool(fields: dict) -> Tool:
    from ..types import Tool, ToolAnnotations, ToolExecution
    support = fields.get("task_support")
    return Tool(name=fields["name"], title=fields["title"], description=fields["description"],
                input_schema=fields["input_schema"], output_schema=fields["output_schema"],
                annotations=as_model(ToolAnnotations, fields["annotations"]), icons=as_icons(fields["icons"]),
                execution=ToolExecution(task_support=support) if support is not None else None,
                meta=fields["meta"])


class _Entry:
    """A registered tool: what ``tools/call`` needs, and the ``Tool`` it is listed as.

    Rule 8: only the name, the function and the options are kept at
    registration; ``prepare`` reads the signature (schemas, binder, validators)
    on the first listing, ``get`` or call, once, whoever comes first."""

    __slots__ = ("name", "fn", "options", "same_thread", "task_support", "serial",
                 "bind", "check_input", "check_output", "wrap", "_fields", "_tool")

    def __init__(self, name: str, fn: Callable, options: dict, same_thread: bool = False):
        self.name, self.fn, self.options = name, fn, options
        self.same_thread = same_thread
        self.task_support = options["task_support"]  # rule 7: None, or as given
        self.serial = next_serial()
        self._fields = self._tool = None
        self.bind = self.check_input = self.check_output = self.wrap = None

    def prepare(self, skip: tuple) -> None:
        """Rule 8: read the signature once (``skip``: the server's Context class)."""
        if self._fields is not None:
            return
        with _build_lock:
            if self._fields is None:
                fields, self.bind, self.wrap = _analyse(self.fn, self.name, self.options, skip)
                self.check_input = _compile(fields["input_schema"])
                output = fields["output_schema"]
                self.check_output = _compile(output) if output is not None else None
                self._fields = fields                # last: a reader that sees it sees the rest

    @property
    def tool(self) -> Tool:
        tool = self._tool
        if tool is None:
            with _build_lock:                       # one Tool per entry, whoever asks first
                tool = self._tool
                if tool is None:
                    tool = self._tool = _build_tool(self._fields)
        return tool


def _deferrable(fn) -> bool:
    """Rule 8 defers reading plain functions without positional-only parameters; the
    rest (methods, partials, callable objects, and a positional-only parameter, which
    is a TypeError the author should see at once) is read at registration."""
    return type(fn) is FunctionType and not fn.__code__.co_posonlyargcount


def _analyse(fn: Callable, name: str, options: dict, skip: tuple) -> tuple:
    """``(fields, binder, wrap)`` of a tool: its listed fields (rule 2), how its
    arguments are bound, and whether its result is wrapped as ``{"result": ...}``."""
    wrap = False
    output_schema = options["output_schema"]
    structured_output = options["structured_output"]
    if output_schema is None and structured_output is not False:
        output_schema = signature.output_schema(fn)
        if output_schema is None and structured_output:
            output_schema = signature.output_schema(fn, wrap=True)   # {"result": ...}
            wrap = output_schema is not None
    description, input_schema = options["description"], options["input_schema"]
    fields = {"name": name, "title": options["title"],
              "description": description if description is not None else signature.description_of(fn),
              "input_schema": input_schema if input_schema is not None else signature.input_schema(fn, skip=skip),
              "output_schema": output_schema, "annotations": options["annotations"], "icons": options["icons"],
              "meta": options["meta"], "task_support": options["task_support"]}
    fast = signature.fast_parameters(fn, skip)
    if fast is not None:
        params, inject = fast
    else:
        inject = signature.context_params(fn, skip=skip)
        params = _direct_params(fn, inject)
    return fields, _Binder(fn, inject, params), wrap


# ---------------------------------------------------------------------- the same thread (rule 6)
_QUEUED, _RUNNING, _DONE, _SKIPPED = range(4)


class _Job:
    """One same_thread call: what to run, and how it ended (set before ``done``)."""
    __slots__ = ("fn", "kwargs", "ctx", "state", "value", "error", "done")

    def __init__(self, fn: Callable, kwargs: dict, ctx):
        self.fn, self.kwargs, self.ctx = fn, kwargs, ctx
        self.state = _QUEUED                         # changed under SameThread's lock
        self.value = self.error = None
        self.done = threading.Event()


class SameThread:
    """The one thread that runs a server's ``same_thread`` tools (rule 6).

    Why: some code must always run on the same OS thread (a COM apartment, a
    tkinter root, a thread-local database connection, a library that is not
    thread-safe), while the session serves each request on whichever pool
    thread read it (session.py). So those calls go through one queue to one
    daemon thread, named ``mcp-server-same-thread``, in the order they reach
    it, one at a time.

    Lifetime: started on the first call; it runs while ``keep()`` (the server
    has an open session) and ends once its queue is empty and ``keep()`` is
    false. ``wake()`` (called when a session closes) makes it look again, so
    no thread outlives the last session. A later call starts a new thread:
    state a tool keeps per thread (``threading.local``) is then made anew.

    Cancellation (Spec: basic/utilities/cancellation): a call whose request was
    cancelled before it started is skipped; one cancelled while it runs runs to
    its end (a Python thread cannot be stopped) and its result is dropped, as
    the session drops an ordinary handler's answer to a cancelled request.
    """

    def __init__(self, keep: Callable[[], bool]):
        self._keep = keep
        self._cv = threading.Condition(threading.Lock())
        self._jobs: deque = deque()
        self._thread: threading.Thread | None = None

    def call(self, fn: Callable, kwargs: dict, ctx) -> Any:
        """Run ``fn(**kwargs)`` on the thread and return what it returned (or raise
        what it raised), on behalf of the request of ``ctx``.

        The calling handler hands the session's reading role on before it waits
        (``_before_blocking``), so replies, cancellations and pings are read
        meanwhile. A cancellation wakes the wait (``ctx.on_cancel``).

        Raises:
            RequestCancelled: the request was cancelled (or its session closed)
                before the call ended.
        """
        job = _Job(fn, kwargs, ctx)
        with self._cv:
            self._jobs.append(job)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name=SAME_THREAD_NAME, daemon=True)
                self._thread.start()
            else:
                self._cv.notify()
        done = job.done
        if not done.is_set():
            ctx.session._before_blocking()
            ctx.on_cancel(done.set)                 # the call ended, or the request was cancelled
            done.wait()
            if job.state != _DONE and ctx.is_cancelled():
                with self._cv:
                    if job.state == _QUEUED:            # not started: it never will
                        job.state = _SKIPPED
                        self._jobs.remove(job)
        if job.state != _DONE:
            raise RequestCancelled(f"request {ctx.request_id!r} ({ctx.method}) was cancelled")
        if job.error is not None:
            error, job.error = job.error, None
            raise error
        return job.value

    def wake(self) -> None:
        """Make an idle thread check ``keep()`` again (a session closed)."""
        with self._cv:
            self._cv.notify()

    @property
    def thread(self) -> threading.Thread | None:
        """The running thread, or None."""
        return self._thread

    def _run(self) -> None:
        cv, jobs = self._cv, self._jobs
        while True:
            with cv:
                while True:
                    if jobs:
                        job = jobs.popleft()
                        if job.ctx.is_cancelled():      # cancelled while queued
                            job.state = _SKIPPED
                            job.done.set()
                            continue
                        job.state = _RUNNING
                        break
                    if not self._keep():
                        self._thread = None             # under the lock: the next call starts another
                        return
                    cv.wait()
            utilities = sys.modules.get(_UTILITIES)
            if utilities is not None:                   # the logging bridge (server._handle_request)
                utilities.current.ctx = job.ctx
            try:
                job.value = job.fn(**job.kwargs)
            except BaseException as exc:                # handed to the handler, as if raised there
                job.error = exc
            finally:
                if utilities is not None:
                    utilities.current.ctx = None
                job.kwargs = None
                job.state = _DONE
                job.done.set()
            job = None


# ---------------------------------------------------------------------- the registry
class Tools(NamedRegistry):
    """The tools a server offers. ``owner`` is the server: its ``page_size``,
    ``_list_changed(method)`` and (for ``same_thread`` tools) ``sessions`` are used."""

    KIND, NOUN, CHANGED, ITEM = "tools", "tool", "notifications/tools/list_changed", "tool"

    def _item(self, entry: _Entry) -> Tool:
        entry.prepare((self.context_class,))        # rule 8
        return entry.tool
    _same_thread: SameThread | None = None

    @property
    def same_thread(self) -> SameThread:
        """The thread of ``same_thread`` tools (rule 6), made on first use."""
        runner = self._same_thread
        if runner is None:
            with self._lock:
                runner = self._same_thread
                if runner is None:
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
        options = {"title": title, "description": description, "input_schema": input_schema,
                   "output_schema": output_schema, "structured_output": structured_output,
                   "annotations": annotations, "icons": icons, "meta": meta, "task_support": task_support}
        entry = _Entry(tool_name, fn, options, bool(same_thread))
        if build or annotations is not None or icons is not None or not _deferrable(fn):
            entry.prepare((self.context_class,))    # errors in the signature raise here
            entry.tool                              # built now: bad annotations or icons raise here
        self._register(tool_name, entry)
        return entry.tool if build else None

    def handle_call(self, ctx, params: dict, routed: bool = False) -> dict:
        """Spec: server/tools#calling-tools; rules 3 to 7. ``routed``: server/tasks.py
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
            from .tasks import route_tool_call      # rule 7: loaded when a task is first needed
            return route_tool_call(self.owner.tasks, self, ctx, params, entry)
        version = ctx.protocol_version
        if entry._fields is None:
            entry.prepare((self.context_class,))    # rule 8: the first call reads the signature
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
            log.info("tool %s failed: %s", name, exc, exc_info=True)
            return error_result(str(exc) or type(exc).__name__, version)
        try:
            return tool_result(entry, value, version)
        except (TypeError, ValueError) as exc:
            log.warning("tool %s: %s", name, exc)
            return error_result(str(exc), version)
