"""The MCP server: registration, the request-handler table, the handler Context.

A ``Server`` holds what is offered (tools, resources, prompts, completers)
and serves any number of sessions, one per connection; each session keeps
its own negotiated revision, client info, log level and subscriptions.

Rules:

1. Every MCP method a server answers appears once, as a literal, in
   ``Server.__init__``'s ``_request_handlers`` table, with the capability it
   needs; a request of a capability we did not declare gets -32601.
2. Capabilities follow registrations: the first tool declares ``tools``, and
   so on; ``capabilities=`` overrides. A session is served (and sent
   notifications) by what its initialize result declared.
3. Handlers run on the session's handler threads; user functions receive a
   ``Context`` when a parameter is annotated with it.
4. A tool failure is a result (``isError: true``), never a JSON-RPC error:
   the model sees the message and can correct itself. An unknown tool is
   -32602. Spec: server/tools#error-handling.
5. What a session's revision does not know is left out of what we send it
   (``to_dict(revision)``), so every message validates against that
   revision's schema.
6. The features live in ``features/`` (tools, resources, prompts, completion
   and logging, pagination), one registry each; the table in ``__init__``
   points at their handlers. ``notifications/*/list_changed`` go to the ready
   sessions that were told ``listChanged`` at initialization.
7. Tasks (2025-11-25 only): ``tasks`` is declared when a tool has
   ``task_support`` "optional" or "required", and only to 2025-11-25 sessions
   (older revisions do not define it, so they are neither told nor served it),
   never over stateless HTTP (a task cannot outlive its request's session there).
   The registry and its handlers are ``server/tasks.py``, loaded when a task
   is first needed; closing a session cancels and forgets its tasks.

Spec: basic/lifecycle, server/tools, server/resources, server/prompts,
server/utilities/completion, server/utilities/logging, server/utilities/pagination,
basic/utilities/tasks.
"""
from __future__ import annotations

import threading

from .. import lifecycle
from ..errors import InvalidParamsError, MethodNotFoundError, get_logger
from ..session import RequestContext, Session

TYPE_CHECKING = False
if TYPE_CHECKING:          # names for annotations only
    import logging
    from typing import Any, Callable

    from .prompts import Prompts
    from .resources import Resources
    from .tasks import Tasks
    from .tools import Tools
    from .utilities import Completions
    from ..types import Implementation, Prompt, Tool

log = get_logger("mcp_ref.server")

__all__ = ["Server", "Context", "ServerSession"]


class ServerSession(Session):
    """A Session plus what the server knows about this one client."""

    def __init__(self, server: "Server", transport, **options):
        super().__init__(transport, server._handle_request,
                         lambda method, params: server._handle_notification(self, method, params),
                         context_class=Context, name="mcp-server", **options)
        self.server = server
        self.state = lifecycle.NEW
        self._client_info = None                # clientInfo as sent; see client_info
        self.client_capabilities: dict = {}
        self.log_level: str | None = None     # set by logging/setLevel
        self.subscriptions: set = set()         # URIs of resources/subscribe
        self.declared_capabilities: dict = {}   # what initialize offered (the wire copy may omit some)
        self.checked_capabilities: set = set()  # of those, the ones a request has already needed
        self.ready = threading.Event()          # set once notifications/initialized arrived

    @property
    def client_info(self) -> Implementation | None:
        """The client's ``clientInfo`` as an ``Implementation`` (None before initialize)."""
        info = self._client_info
        if isinstance(info, dict):      # built on first use: types/ cost start-up time
            from ..types import Implementation
            info = self._client_info = Implementation.from_dict(info)
        return info

    # -- client features (Spec: client/roots, client/elicitation); see roots.py, elicitation.py
    def list_roots(self, *, timeout: float | None = None) -> list:
        """The client's roots (``roots/list``); ``CapabilityNotSupported`` when it declared none."""
        from ..client import roots  # client features load on first use
        return roots.list_roots(self, timeout=timeout)

    def complete_elicitation(self, elicitation_id: str) -> None:
        """Send ``notifications/elicitation/complete`` for a URL mode elicitation (2025-11-25)."""
        from ..client import elicitation  # client features load on first use
        elicitation.send_complete(self, elicitation_id)


class Context(RequestContext):
    """What a tool, resource or prompt function can use while it runs.

    Inherits ``report_progress``, ``progress_token``, ``cancelled``,
    ``check_cancelled()``, ``request_id`` and ``session`` from
    ``RequestContext``. Spec: basic/utilities/progress, cancellation.
    ``task_id`` names the task when the call runs as one (server/tasks.py), else None.
    """

    task_id: str | None = None

    @property
    def server(self) -> "Server":
        return self.session.server

    @property
    def client_capabilities(self) -> dict:
        return self.session.client_capabilities

    @property
    def protocol_version(self) -> str | None:
        return self.session.protocol_version

    # -- authorization (HTTP with auth=; Spec: basic/authorization): the caller's token
    @property
    def auth(self):
        """The ``auth.AccessToken`` of the request's bearer (subject, scopes, expiry,
        audience, client_id, claims); None over stdio or an unprotected server."""
        return getattr(self.session.transport, "auth", None)

    @property
    def subject(self) -> str | None:
        """Who the access token speaks for (``auth.subject``), or None."""
        access = self.auth
        return access.subject if access is not None else None

    @property
    def scopes(self) -> tuple:
        """The scopes the access token grants (empty without one)."""
        access = self.auth
        return tuple(access.scopes) if access is not None else ()

    # -- client features: sampling, elicitation, roots (sampling.py, elicitation.py, roots.py).
    # Each raises CapabilityNotSupported locally, before sending, when the client did not
    # declare the feature or the session's revision does not know it; a tool turns that
    # into an isError result. Nested requests carry this request's id (related_id), honour
    # ``timeout`` (RequestTimeout) and are cancelled with this request.
    def sample(self, messages: list, *, max_tokens: int, system_prompt: str | None = None, **options):
        """Ask the client's LLM for a message (``sampling/createMessage``); returns a
        ``CreateMessageResult``. ``messages`` holds ``SamplingMessage`` items (or wire
        dicts, or strings for user text). Options: ``model_preferences``,
        ``include_context``, ``temperature``, ``stop_sequences``, ``metadata``,
        ``tools``, ``tool_choice``, ``timeout``, ``meta``. Spec: client/sampling."""
        from ..client import sampling  # client features load on first use
        return sampling.create_message(self, messages, max_tokens=max_tokens, system_prompt=system_prompt,
                                       **options)

    def elicit(self, message: str, requested_schema: dict, *, timeout: float | None = None):
        """Ask the user to fill in a form (``elicitation/create``, form mode); returns an
        ``ElicitResult`` whose accepted content has been validated against the schema.
        Spec: client/elicitation."""
        from ..client import elicitation  # client features load on first use
        return elicitation.elicit_form(self, message, requested_schema, timeout=timeout)

    def elicit_url(self, message: str, url: str, elicitation_id: str, *, timeout: float | None = None):
        """Send the user to ``url`` (URL mode elicitation, 2025-11-25); returns an
        ``ElicitResult`` (accept = the user consented). Finish with
        ``ctx.session.complete_elicitation(elicitation_id)``. Spec: client/elicitation."""
        from ..client import elicitation  # client features load on first use
        return elicitation.elicit_url(self, message, url, elicitation_id, timeout=timeout)

    def list_roots(self, *, timeout: float | None = None) -> list:
        """The client's roots (``roots/list``) as ``Root`` objects. Spec: client/roots."""
        from ..client import roots  # client features load on first use
        return roots.list_roots(self, timeout=timeout)

    # -- logging (Spec: server/utilities/logging); see server/utilities.py
    def log(self, level: str, data: Any, logger: str | None = None) -> bool:
        """Send ``notifications/message`` on this request's stream, before its response,
        unless the session's level filters it out (then False). ``level`` is one of the
        eight RFC 5424 levels (ValueError otherwise); ``data`` is any JSON value."""
        from .utilities import check_level
        check_level(level)
        return self.server._logs.send(self.session, level, data, logger, related_id=self.request_id)

    # -- Streamable HTTP (Spec: basic/transports#sending-messages-to-the-server, 2025-11-25)
    def close_sse_stream(self) -> bool:
        """End the HTTP response (SSE stream) carrying this request now, while the
        handler goes on: SSE polling. The client reconnects after the ``retry`` interval
        (GET with ``Last-Event-ID``) and gets what is sent later, the result included.
        Frees the connection during a long call. A no-op returning False off HTTP, or where
        the stream cannot be resumed (no event store, a JSON response, an older revision);
        True once closed. See ``transports.http_session`` ``close_stream``."""
        close_stream = getattr(self.session.transport, "close_stream", None)
        return bool(close_stream(self.request_id)) if close_stream is not None else False


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
        page_size: items per page of the four list methods (None: one page).
        log_level: the level a session has until its client sends
            ``logging/setLevel`` (None: every message is sent).
        logging_capability: declare ``logging`` always (True), never (False),
            or (None) once something that can log is registered.
        eof_grace: when stdin closes under ``run()``, seconds to let the requests
            already read finish and be answered (never longer; session.py rule 5).
    """

    def __init__(self, name: str, *, version: str = "0.1.0", instructions: str | None = None,
                 title: str | None = None, description: str | None = None, icons: list | None = None,
                 website_url: str | None = None, capabilities: dict | None = None,
                 timeout: float = 60.0, max_workers: int = 16, page_size: int | None = None,
                 log_level: str | None = None, logging_capability: bool | None = None,
                 eof_grace: float = 1.0):
        self._info_fields = dict(name=name, version=version, title=title, description=description,
                                 icons=icons, website_url=website_url)
        self._info = None                       # the Implementation, built on first use (see info)
        self.instructions = instructions
        self.timeout = timeout
        self.max_workers = max_workers
        self.page_size = page_size
        self.eof_grace = eof_grace
        if log_level is not None:
            from .utilities import check_level
            log_level = check_level(log_level)
        self.log_level = log_level
        self._logging_capability = logging_capability
        self._capability_override = capabilities
        self._roots_changed: list = []          # callbacks fn(session), see on_roots_changed
        self._lock = threading.Lock()
        self.sessions: set = set()
        # Rule 6: the registries of features/, made on first use (see _feature).
        self._features: dict = {}
        self._features_lock = threading.Lock()
        self._bridges: list = []
        # Rule 1: one row per method, a literal each, with the capability it needs.
        self._request_handlers = {
            "initialize": (self._on_initialize, None),
            "tools/list": (lambda ctx, params: self.tools.handle_list(ctx, params), "tools"),
            "tools/call": (lambda ctx, params: self.tools.handle_call(ctx, params), "tools"),
            "resources/list": (lambda ctx, params: self.resources.handle_list(ctx, params), "resources"),
            "resources/templates/list": (lambda ctx, params: self.resources.handle_templates_list(ctx, params),
                                         "resources"),
            "resources/read": (lambda ctx, params: self.resources.handle_read(ctx, params), "resources"),
            "resources/subscribe": (lambda ctx, params: self.resources.handle_subscribe(ctx, params),
                                    "resources.subscribe"),
            "resources/unsubscribe": (lambda ctx, params: self.resources.handle_unsubscribe(ctx, params),
                                      "resources.subscribe"),
            "prompts/list": (lambda ctx, params: self.prompts.handle_list(ctx, params), "prompts"),
            "prompts/get": (lambda ctx, params: self.prompts.handle_get(ctx, params), "prompts"),
            "completion/complete": (lambda ctx, params: self.completions.handle_complete(ctx, params),
                                    "completions"),
            "logging/setLevel": (lambda ctx, params: self._logs.handle_set_level(ctx, params), "logging"),
            "tasks/get": (lambda ctx, params: self.tasks.handle_get(ctx, params), "tasks"),
            "tasks/result": (lambda ctx, params: self.tasks.handle_result(ctx, params), "tasks"),
            "tasks/list": (lambda ctx, params: self.tasks.handle_list(ctx, params), "tasks.list"),
            "tasks/cancel": (lambda ctx, params: self.tasks.handle_cancel(ctx, params), "tasks.cancel"),
        }
        self._notification_handlers = {
            "notifications/initialized": self._on_initialized,
            "notifications/roots/list_changed": self._on_roots_list_changed,
        }

    # ------------------------------------------------------------------ the registries
    # Made on first use, so a server that offers only tools never imports the modules
    # of resources, prompts, completion and logging (start-up time, bench/bench_stdio.py).
    @property
    def tools(self) -> Tools:
        """The tools registry (``list()``, ``get(name)``, ``remove(name)``)."""
        return self._feature("tools")

    @property
    def resources(self) -> Resources:
        """The resources and templates registry."""
        return self._feature("resources")

    @property
    def prompts(self) -> Prompts:
        """The prompts registry."""
        return self._feature("prompts")

    @property
    def completions(self) -> Completions:
        """The completer holder (true once a completer is set)."""
        return self._feature("completions")

    @property
    def tasks(self) -> Tasks:
        """The tasks registry (rule 7): its limits ``default_ttl``, ``max_ttl``, ``max_tasks``,
        ``poll_interval`` are attributes. Made (and server/tasks.py loaded) on first use."""
        return self._feature("tasks")

    @property
    def _logs(self):
        return self._feature("logs")

    def _feature(self, name: str):
        registry = self._features.get(name)
        if registry is None:
            with self._features_lock:
                registry = self._features.get(name)
                if registry is None:
                    registry = self._features[name] = self._make_feature(name)
        return registry

    def _make_feature(self, name: str):
        if name == "tools":
            from .tools import Tools
            return Tools(self, Context)
        if name == "resources":
            from .resources import Resources
            return Resources(self, Context)
        if name == "prompts":
            from .prompts import Prompts
            return Prompts(self, Context)
        if name == "tasks":
            from .tasks import Tasks
            return Tasks(self)
        from .utilities import Completions, Logs
        return Completions(self) if name == "completions" else Logs(self)

    def _count(self, name: str) -> int:
        """How many items registry ``name`` holds (0 when it was never made)."""
        registry = self._features.get(name)
        return len(registry) if registry is not None else 0

    @property
    def info(self) -> Implementation:
        """``serverInfo`` as an ``Implementation``."""
        if self._info is None:
            from ..types import Implementation
            self._info = Implementation(**self._info_fields)
        return self._info

    @info.setter
    def info(self, value: Implementation) -> None:
        self._info = value

    # ------------------------------------------------------------------ capabilities
    def capabilities(self) -> dict:
        """What this server declares (rule 2): ``tools``, ``resources`` (``subscribe``,
        ``listChanged``), ``prompts``, ``completions`` when a completer is set,
        ``logging`` (see ``logging_capability``), and ``tasks`` when a tool supports
        tasks (rule 7; ``_on_initialize`` keeps it from older revisions).
        Spec: basic/lifecycle#capability-negotiation, basic/utilities/tasks#server-capabilities."""
        if self._capability_override is not None:
            return self._capability_override
        caps: dict = {}
        tools, resources, prompts = self._count("tools"), self._count("resources"), self._count("prompts")
        if tools:
            caps["tools"] = {"listChanged": True}
            if self._features["tools"].supports_tasks():
                caps["tasks"] = {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}
        if resources:
            caps["resources"] = {"subscribe": True, "listChanged": True}
        if prompts:
            caps["prompts"] = {"listChanged": True}
        if self._features.get("completions"):
            caps["completions"] = {}
        can_log = bool(tools or resources or prompts or self._bridges)
        if self._logging_capability or (self._logging_capability is None and can_log):
            caps["logging"] = {}
        return caps

    # ------------------------------------------------------------------ tools (server/tools.py)
    def tool(self, fn: Callable | None = None, **kwargs):
        """Register a tool: ``@server.tool`` or ``@server.tool(name=..., title=..., ...)``.

        Keyword arguments are those of ``add_tool``. The ``Tool`` object is built
        when first listed (``add_tool`` returns it at once): start-up time.
        """
        return _decorator(lambda f, **kw: self.tools.add(f, build=False, **kw), fn, kwargs)

    def add_tool(self, fn: Callable, *, name: str | None = None, title: str | None = None,
                 description: str | None = None, input_schema: dict | None = None,
                 output_schema: dict | None = None, annotations=None, icons: list | None = None,
                 meta: dict | None = None, structured_output: bool | None = None,
                 same_thread: bool = False, task_support: str | None = None) -> Tool:
        """Register ``fn`` as a tool; its name, description and schemas come from the
        function unless given. A duplicate name raises ValueError; a name outside the
        2025-11-25 naming guidance warns (``ToolNameWarning``).

        ``input_schema``, when given, is listed exactly as given and the arguments
        are validated against it, then bound by name. ``output_schema`` defaults to
        the return annotation's (dict, dataclass, TypedDict); ``structured_output=True``
        also wraps other return types as ``{"result": ...}``, ``False`` turns it off.
        ``annotations`` is a ``ToolAnnotations`` or dict, ``icons`` ``Icon`` objects or dicts.

        ``same_thread=True`` is for code tied to one OS thread (COM apartments, GUI
        toolkits, thread-local connections, libraries that are not thread-safe): every
        call of every such tool of this server, from all its sessions, runs on one
        daemon thread, ``mcp-server-same-thread``, one at a time, in the order the
        calls reach it. Arguments are validated and bound first; the handler thread
        then waits, while the session keeps reading, pings included. A call cancelled
        before it started is skipped; one cancelled while it runs finishes and its
        result is dropped. Results, errors and ``Context`` are those of any tool. The
        thread starts on the first call and ends once no session is open (a later
        call starts another, so keep per-thread state in a ``threading.local``).

        ``task_support`` (2025-11-25, rule 7): ``"optional"`` lets a client run the
        call as a task (``tools/call`` with ``task``: answered at once, the tool runs
        on its own thread, the result is fetched with ``tasks/result``),
        ``"required"`` allows only that, ``"forbidden"`` (the default, also when
        None) never. It is listed as ``execution.taskSupport``. See server/tasks.py.
        """
        return self.tools.add(fn, name=name, title=title, description=description, input_schema=input_schema,
                              output_schema=output_schema, annotations=annotations, icons=icons, meta=meta,
                              structured_output=structured_output, same_thread=same_thread,
                              task_support=task_support)

    def remove_tool(self, name: str) -> None:
        """Unregister a tool; KeyError when there is none of that name."""
        self.tools.remove(name)

    # ------------------------------------------------------------------ resources (server/resources.py)
    def resource(self, uri: str, **kwargs):
        """Decorator: ``@server.resource("demo://readme")`` registers a resource, and
        ``@server.resource("demo://users/{id}")`` a resource template; keywords are
        those of ``add_resource``."""
        if not isinstance(uri, str):
            raise TypeError("@server.resource needs the URI: @server.resource('scheme://path')")

        def wrap(fn):
            self.add_resource(fn, uri, **kwargs)
            return fn
        return wrap

    def add_resource(self, fn, uri: str, *, name: str | None = None, title: str | None = None,
                     description: str | None = None, mime_type: str | None = None,
                     size: int | None = None, annotations=None, icons: list | None = None,
                     meta: dict | None = None):
        """Register a resource (fixed ``uri``; ``fn`` takes no arguments, or is the
        contents itself as ``str``/``bytes``) or a resource template (``uri`` with
        ``{var}``; ``fn`` gets the variables as keyword arguments). ``fn`` returns
        ``str`` (text), ``bytes`` (blob), resource contents, or JSON data.
        ``annotations`` is an ``Annotations`` or dict (audience, priority, last_modified).
        Returns the ``Resource`` or ``ResourceTemplate``."""
        return self.resources.add(fn, uri, name=name, title=title, description=description, mime_type=mime_type,
                                  size=size, annotations=annotations, icons=icons, meta=meta)

    def remove_resource(self, uri: str) -> None:
        """Unregister a resource (by URI) or template (by URI template); KeyError when unknown."""
        self.resources.remove(uri)

    def notify_resource_updated(self, uri: str) -> int:
        """Send ``notifications/resources/updated`` to the sessions subscribed to ``uri``
        (only those); returns how many. Spec: server/resources#subscriptions."""
        return self.resources.notify_updated(uri)

    # ------------------------------------------------------------------ prompts (server/prompts.py)
    def prompt(self, fn: Callable | None = None, **kwargs):
        """Register a prompt: ``@server.prompt`` or ``@server.prompt(name=..., title=...)``."""
        return _decorator(self.add_prompt, fn, kwargs)

    def add_prompt(self, fn: Callable, *, name: str | None = None, title: str | None = None,
                   description: str | None = None, icons: list | None = None,
                   meta: dict | None = None) -> Prompt:
        """Register ``fn`` as a prompt: its parameters are the arguments (names verbatim,
        required without a default). It returns a string, ``PromptMessage`` objects,
        content blocks, or a list of them. A duplicate name raises ValueError."""
        return self.prompts.add(fn, name=name, title=title, description=description, icons=icons, meta=meta)

    def remove_prompt(self, name: str) -> None:
        """Unregister a prompt; KeyError when there is none of that name."""
        self.prompts.remove(name)

    # ------------------------------------------------------------------ completion and logging
    def completion(self, fn: Callable | None = None):
        """Register the completer ``fn(ref, argument, context) -> list[str]`` (bare or
        called decorator): ``ref.name`` (prompts) or ``ref.uri`` (templates),
        ``argument.name``/``.value``, ``context.arguments`` or ``context`` None.
        At most 100 values are sent, with ``total`` and ``hasMore``.
        Spec: server/utilities/completion."""
        def register(f):
            self.completions.fn = f
            return f
        return register(fn) if fn is not None else register

    def log(self, level: str, data: Any, logger: str | None = None) -> int:
        """Send ``notifications/message`` to every ready session whose level lets it
        through; returns how many. Spec: server/utilities/logging."""
        return self._logs.broadcast(level, data, logger)

    def bridge_logging(self, logger=None, level: int = 20) -> logging.Handler:
        """Forward Python ``logging`` records of ``logger`` (a name or Logger; None: the
        root logger) at ``level`` and above to clients as ``notifications/message``.
        Returns the handler (remove it from the logger to stop). ``level`` 20 is ``logging.INFO``."""
        import logging
        from .utilities import LoggingBridge
        handler = LoggingBridge(self, level)
        target = logger if isinstance(logger, logging.Logger) else logging.getLogger(logger)
        target.addHandler(handler)
        self._bridges.append(handler)
        return handler

    # ------------------------------------------------------------------ sessions
    def ready_sessions(self) -> list:
        """The sessions that finished initialization and are open."""
        return [s for s in list(self.sessions) if s.state == lifecycle.READY and not s.closed]

    def _list_changed(self, method: str) -> None:
        """Rule 6: ``notifications/<list>/list_changed`` to sessions told ``listChanged``."""
        capability = method.split("/")[1] + ".listChanged"
        for session in self.ready_sessions():
            if lifecycle.has_capability(session.declared_capabilities, capability):
                try:
                    session.notify(method)
                except Exception:
                    log.debug("could not send %s", method, exc_info=True)

    # ------------------------------------------------------------------ serving
    def serve(self, transport, **options) -> ServerSession:
        """Start serving one connection; returns its session at once."""
        options.setdefault("timeout", self.timeout)
        options.setdefault("max_workers", self.max_workers)
        session = ServerSession(self, transport, on_close=self._session_closed, **options)
        self.sessions.add(session)
        return session.start()

    def _session_closed(self, session: ServerSession) -> None:
        """Forget a closed session; the thread of ``same_thread`` tools stops after the
        last one (server/tools.py rule 6: no thread outlives the sessions it served);
        its tasks are cancelled and their threads joined (rule 7)."""
        self.sessions.discard(session)
        tasks = self._features.get("tasks")
        if tasks is not None:
            tasks.session_closed(session)
        tools = self._features.get("tools")
        if tools is not None:
            tools.session_closed()

    def run(self, http=None, *, eof_grace: float | None = None, **options) -> None:
        """Serve stdio until the client goes away (stdin EOF), or HTTP when
        ``http=(host, port)`` is given (see ``transports.http_server``).

        At stdin EOF the requests already read are answered when they finish
        within ``eof_grace`` seconds (default: the server's, 1 s), so
        ``printf '...' | python server.py`` prints every answer; a request still
        running then is cancelled and the server returns. Spec: basic/lifecycle#shutdown."""
        if http is not None:
            if eof_grace is not None:
                raise TypeError("eof_grace applies to stdio; an HTTP server ends with shutdown()")
            from ..transports.http_server import serve_http
            serve_http(self, http, **options)
            return
        if "auth" in options or "resource_metadata" in options:
            raise TypeError("auth and resource_metadata apply to HTTP (http=(host, port)); stdio carries no "
                            "credentials (Spec: basic/authorization)")
        from ..transports.stdio import StdioServerTransport
        transport = StdioServerTransport(**options)
        session = self.serve(transport, eof_grace=self.eof_grace if eof_grace is None else eof_grace)
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
        handler, capability = entry
        session: ServerSession = ctx.session
        if session.state != lifecycle.READY or capability not in session.checked_capabilities:
            lifecycle.check_inbound(session.state, method)
            # What this session was told at initialization (rule 2); a stateless HTTP session had none.
            declared = session.declared_capabilities
            lifecycle.require_own_capability(declared or self.capabilities(), capability, method)
            if declared and capability is not None and session.state == lifecycle.READY:
                session.checked_capabilities.add(capability)    # what it was told never changes
        if not self._bridges:
            return handler(ctx, params)
        from .utilities import current     # the logging bridge finds the request here
        current.ctx = ctx
        try:
            return handler(ctx, params)
        finally:
            current.ctx = None

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
            session._client_info = info              # an Implementation on first use
        version = lifecycle.negotiate(requested)
        session.protocol_version = version
        session.client_capabilities = capabilities
        session.state = lifecycle.INITIALIZING
        session.declared_capabilities = offered = self.capabilities()
        if "tasks" in offered and (not lifecycle.at_least(version, "2025-11-25")
                                   or getattr(session.transport, "session_id", "") is None):
            # Rule 7: older revisions define no tasks; not told, not served (-32601). Nor is a
            # stateless HTTP session (session_id None): each request has a session of its own,
            # closed with it, so a task could not outlive the call that created it.
            offered = session.declared_capabilities = {k: v for k, v in offered.items() if k != "tasks"}
        if not lifecycle.at_least(version, "2025-03-26") and "completions" in offered:
            # The capability arrived in 2025-03-26; before, completion/complete needed none,
            # so it stays served (declared_capabilities) but is not named on the wire.
            offered = {key: value for key, value in offered.items() if key != "completions"}
        result = {"protocolVersion": version, "capabilities": offered,
                  "serverInfo": self._server_info(version)}
        if self.instructions:
            result["instructions"] = self.instructions
        return result

    def _server_info(self, version: str) -> dict:
        fields = self._info_fields
        if self._info is None and fields["title"] is fields["description"] is fields["icons"] is \
                fields["website_url"] is None:
            return {"name": fields["name"], "version": fields["version"]}   # without loading types/
        return self.info.to_dict(version)

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
            session.ready.set()
