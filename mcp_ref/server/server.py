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
6. The features live beside this module (tools.py, resources.py,
   prompts.py, utilities.py, pagination.py), one registry each; the table in
   ``__init__`` points at their handlers. registration.py holds the methods
   that fill them (a mix-in), context.py what a handler holds. ``notifications/*/list_changed`` go to the ready
   sessions that were told ``listChanged`` at initialization. The optional rooms
   (resources, prompts, tasks, server/modern/) are loaded on first use, so a
   plain stdio server starts without them (cold start and peak RSS, bench/README.md).
7. Tasks (2025-11-25 only): ``tasks`` is declared when a tool has
   ``task_support`` "optional" or "required", and only to 2025-11-25 sessions
   (older revisions do not define it, so they are neither told nor served it),
   never over stateless HTTP (a task cannot outlive its request's session there).
   The registry and its handlers are ``server/tasks/legacy.py``; closing a
   session cancels and forgets its tasks.
8. Dual-era (2026-07-28): a request whose ``_meta`` names its protocol version,
   or of a method only that era has (``server/discover``), is served by
   server/modern/serve.py on the request's own metadata, with or without a prior
   ``initialize`` on the connection; everything else is served as before.

Spec: basic/lifecycle, server/tools, server/resources, server/prompts,
server/utilities/completion, server/utilities/logging, server/utilities/pagination,
basic/utilities/tasks.
"""
from __future__ import annotations

import os
import threading
from typing import Callable

from mcp_ref.protocol import lifecycle
from mcp_ref.errors import InvalidParamsError, MethodNotFoundError
from mcp_ref.server.context import Context, ServerSession
from mcp_ref.server.registration import Registration
from mcp_ref.server.tools import Tools
from mcp_ref.server.features import as_icons
from mcp_ref.server.utilities import Completions, Logs, check_level, current
from mcp_ref.transports.stdio import StdioServerTransport
from mcp_ref.types import Implementation


def _modern():
    """The 2026-07-28 serving room (server/modern/), loaded on the first modern request:
    a 2025-11-25 session never needs it (see ``Server.tasks`` for the figure)."""
    from mcp_ref.server.modern import serve
    return serve


_MODERN_ONLY = frozenset({"server/discover", "subscriptions/listen"})     # protocol/modern.py rule 4

__all__ = ["Server", "Context", "ServerSession"]


class Server(Registration):
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
            already read finish and be answered (never longer; session/__init__.py rule 5).
    """

    def __init__(self, name: str, *, version: str = "0.1.0", instructions: str | None = None,
                 title: str | None = None, description: str | None = None, icons: list | None = None,
                 website_url: str | None = None, capabilities: dict | None = None,
                 timeout: float = 60.0, max_workers: int = 16, page_size: int | None = None,
                 log_level: str | None = None, logging_capability: bool | None = None,
                 eof_grace: float = 1.0):
        self.info = Implementation(name=name, version=version, title=title, description=description,
                                   icons=as_icons(icons), website_url=website_url)     # serverInfo
        self.instructions, self.timeout, self.max_workers = instructions, timeout, max_workers
        self.page_size, self.eof_grace = page_size, eof_grace
        self.log_level = check_level(log_level) if log_level is not None else None
        self._logging_capability = logging_capability
        self._changes = 0                       # registry changes (server/modern/serve.py rule 7)
        self._capability_override = capabilities
        self._roots_changed: list = []          # callbacks fn(session), see on_roots_changed
        self._lock = threading.Lock()
        self.sessions: set = set()
        self._listeners: set = set()            # open 2026-07-28 subscriptions/listen requests (rule 8)
        # Rule 6: the registries of features/, one each.
        self.tools = Tools(self, Context)
        self._resources = self._prompts = self._tasks = None    # rooms made on first use (``resources``...)
        self.completions = Completions(self)
        self._logs = Logs(self)
        self._bridges: list = []
        # 2026-07-28 cache hints, {method: (ttlMs, cacheScope)}; None: protocol/modern.py rule 3's defaults.
        self.cache_hints: dict | None = None
        self._modern_known: dict = {}   # method -> the last modern request's reading (server/modern/serve.py rule 7)
        # 2026-07-28 multi round-trip: the key that signs requestState (server/modern/mrtr.py rule 4).
        self.mrtr_secret: bytes = os.urandom(32)
        # Rule 1: one row per method, a literal each, with the capability it needs.
        self._request_handlers = {
            "initialize": (self._on_initialize, None),
            # Spec 2026-07-28: server/discover, basic/patterns/subscriptions (served only in that era, rule 8).
            "server/discover": (lambda ctx, params: _modern().discover(self, ctx), None),
            "subscriptions/listen": (lambda ctx, params: _modern().listen(self, ctx, params), None),
            "tools/list": (lambda ctx, params: self.tools.handle_list(ctx, params), "tools"),
            "tools/call": (lambda ctx, params: self.tools.handle_call(ctx, params), "tools"),
            "resources/list": (lambda ctx, params: self.resources.handle_list(ctx, params), "resources"),
            "resources/templates/list": (lambda ctx, params: self.resources.templates.handle_list(ctx, params),
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
            "tasks/update": (lambda ctx, params: self.tasks.ext.handle_update(ctx, params), "tasks"),
        }
        self._notification_handlers = {
            "notifications/initialized": self._on_initialized,
            "notifications/roots/list_changed": self._on_roots_list_changed,
        }

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
        tools, resources, prompts = len(self.tools), len(self._resources or ()), len(self._prompts or ())
        if tools:
            caps["tools"] = {"listChanged": True}
            if self.tools.supports_tasks():
                caps["tasks"] = {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}
        if resources:
            caps["resources"] = {"subscribe": True, "listChanged": True}
        if prompts:
            caps["prompts"] = {"listChanged": True}
        if self.completions:
            caps["completions"] = {}
        can_log = bool(tools or resources or prompts or self._bridges)
        if self._logging_capability or (self._logging_capability is None and can_log):
            caps["logging"] = {}
        return caps

    # ------------------------------------------------------------------ serving
    def serve(self, transport, **options) -> ServerSession:
        """Start serving one connection; returns its session at once."""
        options = {"timeout": self.timeout, "max_workers": self.max_workers, **options}
        session = ServerSession(self, transport, on_close=self._session_closed, **options)
        self.sessions.add(session)
        session.start()
        return session

    def _session_closed(self, session: ServerSession) -> None:
        """Forget a closed session; the thread of ``same_thread`` tools stops after the
        last one (server/tools.py rule 6: no thread outlives the sessions it served);
        its tasks are cancelled and their threads joined (rule 7)."""
        self.sessions.discard(session)
        if self._tasks is not None:
            self._tasks.session_closed(session)
        self.tools.session_closed()

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
            from mcp_ref.transports.http.server.app import serve_http
            serve_http(self, http, **options)
            return
        if "auth" in options or "resource_metadata" in options:
            raise TypeError("auth and resource_metadata apply to HTTP (http=(host, port)); stdio carries no "
                            "credentials (Spec: basic/authorization)")
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
        meta = params.get("_meta")                  # a modern request (protocol/lifecycle.py rule 6)
        if method in _MODERN_ONLY or (type(meta) is dict and lifecycle.PROTOCOL_VERSION_META in meta):
            return _modern().serve(self, ctx, method, params)
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
        return self._run_handler(handler, ctx, params)

    def _run_handler(self, handler: Callable, ctx: Context, params: dict) -> dict:
        if not self._bridges:
            return handler(ctx, params)
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
        result = {"protocolVersion": version, "capabilities": offered, "serverInfo": self.info.to_dict(version)}
        if self.instructions:
            result["instructions"] = self.instructions
        return result

    def check_modern_request(self, method: str, params, check_headers: Callable | None = None) -> None:
        """Raise the McpError a 2026-07-28 request is refused with before it is served
        (server/modern/serve.py rule 4); ``check_headers(version)`` returns a transport's
        header error, if any (the HTTP handler's)."""
        _modern().preflight(self, method, params, check_headers)

    @property
    def tasks(self):
        """The tasks room (server/tasks/), made on first use (rule 7): with the
        2026-07-28 room (``_modern``) and its HMAC signing (libcrypto), loading it at
        start-up took a plain stdio server's peak RSS from 1.14x to 1.88x the floor."""
        if self._tasks is None:
            from mcp_ref.server.tasks.legacy import Tasks
            with self._lock:
                self._tasks = self._tasks or Tasks(self)
        return self._tasks

    @property
    def resources(self):
        """The resources room, made on first use: with the prompts room, a tenth of a
        plain stdio server's start-up (cold start, bench/README.md "Schema and server")."""
        if self._resources is None:
            from mcp_ref.server.resources import Resources
            with self._lock:
                self._resources = self._resources or Resources(self, Context)
        return self._resources

    @property
    def prompts(self):
        """The prompts room, made on first use (see ``resources``)."""
        if self._prompts is None:
            from mcp_ref.server.prompts import Prompts
            with self._lock:
                self._prompts = self._prompts or Prompts(self, Context)
        return self._prompts

    def _on_initialized(self, session: ServerSession, params: dict) -> None:
        """Spec: basic/lifecycle#initialization: the client is ready for normal operation."""
        if session.state == lifecycle.INITIALIZING:
            session.state = lifecycle.READY
            session.ready.set()
