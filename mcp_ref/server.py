"""The MCP server: registration, the request-handler table, the handler Context.

A ``Server`` holds what is offered (tools, resources, prompts, completers)
and serves any number of sessions, one per connection; each session keeps
its own negotiated revision, client info, log level and subscriptions.

Rules:

1. Every MCP method a server answers appears once, as a literal, in
   ``Server.__init__``'s ``_request_handlers`` table, with the capability it
   needs; a request of a capability we did not declare gets -32601.
2. Capabilities follow registrations: the first tool declares ``tools``, and
   so on; ``capabilities=`` overrides.
3. Handlers run on the session's handler threads; user functions receive a
   ``Context`` when a parameter is annotated with it.
4. A tool failure is a result (``isError: true``), never a JSON-RPC error:
   the model sees the message and can correct itself. An unknown tool is
   -32602. Spec: server/tools#error-handling.
5. What a session's revision does not know is left out of what we send it
   (``to_dict(revision)``), so every message validates against that
   revision's schema.

Spec: basic/lifecycle, server/tools, server/utilities/*.
"""
import json
import logging
import threading
from typing import Any, Callable, Optional

from . import elicitation, lifecycle, roots, sampling, signature
from .errors import (InvalidParamsError, MethodNotFoundError, MissingDependency, UrlElicitationRequiredError)
from .session import RequestContext, Session
from .types import CallToolResult, Implementation, TextContent, Tool, content_from_dict

log = logging.getLogger("mcp_ref.server")

__all__ = ["Server", "Context", "ServerSession"]


class ServerSession(Session):
    """A Session plus what the server knows about this one client."""

    def __init__(self, server: "Server", transport, **options):
        super().__init__(transport, server._handle_request,
                         lambda method, params: server._handle_notification(self, method, params),
                         context_class=Context, name="mcp-server", **options)
        self.server = server
        self.state = lifecycle.NEW
        self.client_info: Optional[Implementation] = None
        self.client_capabilities: dict = {}
        self.log_level: Optional[str] = None
        self.subscriptions: set = set()

    # -- client features (Spec: client/roots, client/elicitation); see roots.py, elicitation.py
    def list_roots(self, *, timeout: Optional[float] = None) -> list:
        """The client's roots (``roots/list``); ``CapabilityNotSupported`` when it declared none."""
        return roots.list_roots(self, timeout=timeout)

    def complete_elicitation(self, elicitation_id: str) -> None:
        """Send ``notifications/elicitation/complete`` for a URL mode elicitation (2025-11-25)."""
        elicitation.send_complete(self, elicitation_id)


class Context(RequestContext):
    """What a tool, resource or prompt function can use while it runs.

    Inherits ``report_progress``, ``progress_token``, ``cancelled``,
    ``check_cancelled()``, ``request_id`` and ``session`` from
    ``RequestContext``. Spec: basic/utilities/progress, cancellation.
    """

    @property
    def server(self) -> "Server":
        return self.session.server

    @property
    def client_capabilities(self) -> dict:
        return self.session.client_capabilities

    @property
    def protocol_version(self) -> Optional[str]:
        return self.session.protocol_version

    # -- client features: sampling, elicitation, roots (sampling.py, elicitation.py, roots.py).
    # Each raises CapabilityNotSupported locally, before sending, when the client did not
    # declare the feature or the session's revision does not know it; a tool turns that
    # into an isError result. Nested requests carry this request's id (related_id), honour
    # ``timeout`` (RequestTimeout) and are cancelled with this request.
    def sample(self, messages: list, *, max_tokens: int, system_prompt: Optional[str] = None, **options):
        """Ask the client's LLM for a message (``sampling/createMessage``); returns a
        ``CreateMessageResult``. ``messages`` holds ``SamplingMessage`` items (or wire
        dicts, or strings for user text). Options: ``model_preferences``,
        ``include_context``, ``temperature``, ``stop_sequences``, ``metadata``,
        ``tools``, ``tool_choice``, ``timeout``, ``meta``. Spec: client/sampling."""
        return sampling.create_message(self, messages, max_tokens=max_tokens, system_prompt=system_prompt,
                                       **options)

    def elicit(self, message: str, requested_schema: dict, *, timeout: Optional[float] = None):
        """Ask the user to fill in a form (``elicitation/create``, form mode); returns an
        ``ElicitResult`` whose accepted content has been validated against the schema.
        Spec: client/elicitation."""
        return elicitation.elicit_form(self, message, requested_schema, timeout=timeout)

    def elicit_url(self, message: str, url: str, elicitation_id: str, *, timeout: Optional[float] = None):
        """Send the user to ``url`` (URL mode elicitation, 2025-11-25); returns an
        ``ElicitResult`` (accept = the user consented). Finish with
        ``ctx.session.complete_elicitation(elicitation_id)``. Spec: client/elicitation."""
        return elicitation.elicit_url(self, message, url, elicitation_id, timeout=timeout)

    def list_roots(self, *, timeout: Optional[float] = None) -> list:
        """The client's roots (``roots/list``) as ``Root`` objects. Spec: client/roots."""
        return roots.list_roots(self, timeout=timeout)


class _ToolEntry:
    __slots__ = ("tool", "fn", "inject", "raw_schema", "structured")

    def __init__(self, tool: Tool, fn: Callable, inject: list, raw_schema: bool, structured: bool):
        self.tool, self.fn, self.inject, self.raw_schema, self.structured = tool, fn, inject, raw_schema, structured


def _decorator(register: Callable, fn, kwargs):
    """Let a decorator work bare (``@server.tool``) and called (``@server.tool(...)``)."""
    if fn is not None:
        register(fn, **kwargs)
        return fn

    def wrap(f):
        register(f, **kwargs)
        return f
    return wrap


class Server:
    """An MCP server.

    Args:
        name: ``serverInfo.name``.
        version: ``serverInfo.version``.
        instructions: sent in the initialize result (how to use this server).
        title, description, icons, website_url: optional ``serverInfo`` fields
            (sent only to revisions that know them).
        capabilities: overrides the capabilities derived from registrations.
        timeout: default seconds for requests the server sends to a client.
        max_workers: requests served at once per session.
    """

    def __init__(self, name: str, *, version: str = "0.1.0", instructions: Optional[str] = None,
                 title: Optional[str] = None, description: Optional[str] = None, icons: Optional[list] = None,
                 website_url: Optional[str] = None, capabilities: Optional[dict] = None,
                 timeout: float = 60.0, max_workers: int = 16):
        self.info = Implementation(name=name, version=version, title=title, description=description,
                                   icons=icons, website_url=website_url)
        self.instructions = instructions
        self.timeout = timeout
        self.max_workers = max_workers
        self._capability_override = capabilities
        self._tools: dict = {}
        self._roots_changed: list = []          # callbacks fn(session), see on_roots_changed
        self._lock = threading.Lock()
        self.sessions: set = set()
        # Rule 1: one row per method, a literal each, with the capability it needs.
        self._request_handlers = {
            "initialize": (self._on_initialize, None),
            "tools/list": (self._on_tools_list, "tools"),
            "tools/call": (self._on_tools_call, "tools"),
        }
        self._notification_handlers = {
            "notifications/initialized": self._on_initialized,
            "notifications/roots/list_changed": self._on_roots_list_changed,
        }

    # ------------------------------------------------------------------ capabilities
    def capabilities(self) -> dict:
        """What this server declares (rule 2). Spec: basic/lifecycle#capability-negotiation."""
        if self._capability_override is not None:
            return self._capability_override
        caps: dict = {}
        if self._tools:
            caps["tools"] = {"listChanged": True}
        return caps

    # ------------------------------------------------------------------ tools
    def tool(self, fn: Optional[Callable] = None, **kwargs):
        """Register a tool: ``@server.tool`` or ``@server.tool(name=..., title=..., ...)``.

        Keyword arguments are those of ``add_tool``.
        """
        return _decorator(self.add_tool, fn, kwargs)

    def add_tool(self, fn: Callable, *, name: Optional[str] = None, title: Optional[str] = None,
                 description: Optional[str] = None, input_schema: Optional[dict] = None,
                 output_schema: Optional[dict] = None, annotations=None, icons: Optional[list] = None,
                 meta: Optional[dict] = None, structured_output: Optional[bool] = None) -> Tool:
        """Register ``fn`` as a tool; its name, description and schemas come from the
        function unless given. A duplicate name raises ValueError.

        ``input_schema``, when given, is listed exactly as given and the
        arguments are validated against it, then bound by name.
        """
        tool_name = name or fn.__name__
        if output_schema is None and structured_output is not False:
            output_schema = signature.output_schema(fn)
        tool = Tool(name=tool_name, title=title,
                    description=description if description is not None else signature.description_of(fn),
                    input_schema=input_schema if input_schema is not None
                    else signature.input_schema(fn, skip=(Context,)),
                    output_schema=output_schema, annotations=annotations, icons=icons, meta=meta)
        entry = _ToolEntry(tool, fn, signature.context_params(fn, skip=(Context,)), input_schema is not None,
                           output_schema is not None)
        with self._lock:
            if tool_name in self._tools:
                raise ValueError(f"a tool named {tool_name!r} is already registered")
            self._tools[tool_name] = entry
        self._list_changed("notifications/tools/list_changed")
        return tool

    def remove_tool(self, name: str) -> None:
        """Unregister a tool; KeyError when there is none of that name."""
        with self._lock:
            del self._tools[name]
        self._list_changed("notifications/tools/list_changed")

    def _list_changed(self, method: str) -> None:
        for session in list(self.sessions):
            if session.state == lifecycle.READY and not session.closed:
                try:
                    session.notify(method)
                except Exception:
                    log.debug("could not send %s", method, exc_info=True)

    # ------------------------------------------------------------------ serving
    def serve(self, transport, **options) -> ServerSession:
        """Start serving one connection; returns its session at once."""
        options.setdefault("timeout", self.timeout)
        options.setdefault("max_workers", self.max_workers)
        session = ServerSession(self, transport, on_close=self.sessions.discard, **options)
        self.sessions.add(session)
        return session.start()

    def run(self, http=None, **options) -> None:
        """Serve stdio until the client goes away (stdin EOF), or HTTP when
        ``http=(host, port)`` is given (see ``transports.http_server``)."""
        if http is not None:
            from .transports.http_server import serve_http
            serve_http(self, http, **options)
            return
        from .transports.stdio import StdioServerTransport
        transport = StdioServerTransport(**options)
        session = self.serve(transport)
        try:
            session.wait_closed()
        except KeyboardInterrupt:
            pass
        finally:
            session._on_close("server stopped")

    # ------------------------------------------------------------------ dispatch
    def _handle_request(self, ctx: Context, method: str, params: dict) -> dict:
        entry = self._request_handlers.get(method)
        if entry is None:
            raise MethodNotFoundError(f"Method not found: {method}")
        session: ServerSession = ctx.session
        lifecycle.check_inbound(session.state, method)
        handler, capability = entry
        lifecycle.require_own_capability(self.capabilities(), capability, method)
        return handler(ctx, params)

    def _handle_notification(self, session: ServerSession, method: str, params: dict) -> None:
        handler = self._notification_handlers.get(method)
        if handler is not None:
            handler(session, params)

    # ------------------------------------------------------------------ lifecycle handlers
    def _on_initialize(self, ctx: Context, params: dict) -> dict:
        """Spec: basic/lifecycle#initialization."""
        session: ServerSession = ctx.session
        requested = params.get("protocolVersion")
        if not isinstance(requested, str):
            raise InvalidParamsError("initialize: protocolVersion must be a string")
        capabilities = params.get("capabilities", {})
        if not isinstance(capabilities, dict):
            raise InvalidParamsError("initialize: capabilities must be an object")
        info = params.get("clientInfo")
        if isinstance(info, dict) and isinstance(info.get("name"), str):
            session.client_info = Implementation.from_dict(info)
        version = lifecycle.negotiate(requested)
        session.protocol_version = version
        session.client_capabilities = capabilities
        session.state = lifecycle.INITIALIZING
        result = {"protocolVersion": version, "capabilities": self.capabilities(),
                  "serverInfo": self.info.to_dict(version)}
        if self.instructions:
            result["instructions"] = self.instructions
        return result

    # ------------------------------------------------------------------ client features
    def on_roots_changed(self, fn: Callable) -> Callable:
        """Register ``fn(session)``, called when a client sends
        ``notifications/roots/list_changed``; usable as a decorator. It runs on the
        session's notification thread and may call ``session.list_roots()``.
        Spec: client/roots#root-list-changes."""
        self._roots_changed.append(fn)
        return fn

    def _on_roots_list_changed(self, session: ServerSession, params: dict) -> None:
        for fn in list(self._roots_changed):
            try:
                fn(session)
            except Exception:
                log.exception("roots list_changed callback %r failed", fn)

    def _on_initialized(self, session: ServerSession, params: dict) -> None:
        """Spec: basic/lifecycle#initialization: the client is ready for normal operation."""
        if session.state == lifecycle.INITIALIZING:
            session.state = lifecycle.READY

    # ------------------------------------------------------------------ tools handlers
    def _on_tools_list(self, ctx: Context, params: dict) -> dict:
        """Spec: server/tools#listing-tools."""
        with self._lock:
            tools = [entry.tool.to_dict(ctx.protocol_version) for entry in self._tools.values()]
        return {"tools": tools}

    def _on_tools_call(self, ctx: Context, params: dict) -> dict:
        """Spec: server/tools#calling-tools. Rule 4."""
        name = params.get("name")
        if not isinstance(name, str):
            raise InvalidParamsError("tools/call: name must be a string")
        arguments = params.get("arguments")
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, dict):
            raise InvalidParamsError("tools/call: arguments must be an object")
        with self._lock:
            entry = self._tools.get(name)
        if entry is None:
            raise InvalidParamsError(f"Unknown tool: {name}", {"name": name})
        problem = _check_arguments(arguments, entry.tool.input_schema)
        if problem:
            return _error_result(f"Invalid arguments for tool {name}: {problem}", ctx.protocol_version)
        try:
            kwargs = signature.bind_arguments(entry.fn, arguments, inject={p: ctx for p in entry.inject})
            value = entry.fn(**kwargs)
        except UrlElicitationRequiredError:
            raise                                   # Spec 2025-11-25: travels as a JSON-RPC error
        except Exception as exc:
            if ctx.cancelled.is_set():
                raise
            log.info("tool %s failed: %s", name, exc, exc_info=True)
            return _error_result(str(exc) or type(exc).__name__, ctx.protocol_version)
        result = self._tool_result(entry, value)
        return result.to_dict(ctx.protocol_version)

    def _tool_result(self, entry: _ToolEntry, value: Any) -> CallToolResult:
        """Turn what a tool function returned into a CallToolResult."""
        if isinstance(value, CallToolResult):
            return value
        if entry.structured and entry.tool.output_schema is not None and not _is_content(value):
            structured = signature.to_jsonable(value)
            if not isinstance(structured, dict):
                structured = {"result": structured}
            problem = _check_arguments(structured, entry.tool.output_schema, strict=True)
            if problem:
                raise ValueError(f"tool {entry.tool.name} returned output that does not match its "
                                 f"outputSchema: {problem}")
            return CallToolResult(content=[TextContent(text=json.dumps(structured, ensure_ascii=False))],
                                  structured_content=structured)
        return CallToolResult(content=_to_content(value))


def _is_content(value: Any) -> bool:
    return hasattr(value, "TYPE") or (isinstance(value, list) and any(hasattr(v, "TYPE") for v in value))


def _to_content(value: Any) -> list:
    """str → one text block; content blocks kept in order; anything else as JSON text."""
    if value is None:
        return []
    if isinstance(value, str):
        return [TextContent(text=value)]
    if hasattr(value, "TYPE"):
        return [value]
    if isinstance(value, dict) and isinstance(value.get("type"), str):
        return [content_from_dict(value)]
    if isinstance(value, (list, tuple)) and value and all(
            isinstance(v, str) or hasattr(v, "TYPE") or (isinstance(v, dict) and "type" in v) for v in value):
        blocks = []
        for item in value:
            blocks.extend(_to_content(item))
        return blocks
    return [TextContent(text=json.dumps(signature.to_jsonable(value), ensure_ascii=False))]


def _error_result(message: str, version: Optional[str]) -> dict:
    return CallToolResult(content=[TextContent(text=message)], is_error=True).to_dict(version)


_warned_no_jsonschema = []


def _check_arguments(instance: Any, schema: dict, strict: bool = False) -> Optional[str]:
    """Validate with jsonschema; without it, fall back to checking required keys
    (so a stdlib-only stdio server still works) and warn once."""
    try:
        return signature.validate(instance, schema)
    except MissingDependency:
        if not _warned_no_jsonschema:
            _warned_no_jsonschema.append(True)
            log.warning("jsonschema is not installed: tool arguments are only checked for required keys")
        missing = [key for key in schema.get("required", ()) if key not in instance]
        return f"missing required properties: {', '.join(missing)}" if missing else None
