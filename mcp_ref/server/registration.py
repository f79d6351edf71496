"""How a server's offer is registered: ``tool``, ``resource``, ``prompt``,
``completion`` and their ``add_``/``remove_`` forms, ``log`` and ``bridge_logging``;
and ``wsgi_app``, the endpoint to mount in a WSGI web application.

``Registration`` is a mix-in of ``Server`` (server.py), kept apart so the class
reads in two sittings: this module is what an author calls while building a
server; server.py is what happens when a client connects (initialize, the
handler table, dispatch). Each method hands the work to its feature's
registry (server/tools.py, server/resources.py, server/prompts.py,
server/utilities.py); capabilities follow registrations (server.py rule 2).
Spec: server/tools, server/resources, server/prompts,
server/utilities/completion, server/utilities/logging.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from mcp_ref.protocol import lifecycle
from mcp_ref.errors import get_logger
from mcp_ref.session import Session

if TYPE_CHECKING:
    import logging

    from mcp_ref.server.prompts import Prompts
    from mcp_ref.server.resources import Resources
    from mcp_ref.server.tools import Tools
    from mcp_ref.server.utilities import Completions, Logs
    from mcp_ref.types import Prompt, Tool

log = get_logger("mcp_ref.server")


def _decorator(register: Callable, fn, kwargs):
    """Let a decorator work bare (``@server.tool``) and called (``@server.tool(...)``)."""
    def wrap(f):
        register(f, **kwargs)
        return f
    return wrap(fn) if fn is not None else wrap


class Registration:
    """Registration methods of ``Server`` (a mix-in: the registries are ``Server``'s)."""

    # Made by Server.__init__ (server.py): the registries and the state these methods use.
    tools: Tools
    resources: Resources
    prompts: Prompts
    completions: Completions
    _logs: Logs
    _bridges: list
    _listeners: set
    _changes: int
    _roots_changed: list
    sessions: set

    # ------------------------------------------------------------------ tools (server/tools.py)
    def tool(self, fn: Callable | None = None, **kwargs):
        """Register a tool: ``@server.tool`` or ``@server.tool(name=..., title=..., ...)``.

        Keyword arguments are those of ``add_tool``; the function is returned as it is,
        and read on the tool's first listing, get or call (server/tools.py rule 8).
        """
        return _decorator(self.tools.add, fn, {**kwargs, "read": False})

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
        None) never. It is listed as ``execution.taskSupport``. See server/tasks/legacy.py.
        """
        return self.tools.add(fn, name=name, title=title, description=description, input_schema=input_schema,
                              output_schema=output_schema, annotations=annotations, icons=icons, meta=meta,
                              structured_output=structured_output, same_thread=same_thread,
                              task_support=task_support).tool

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
        return _decorator(self.resources.add, None, {**kwargs, "uri": uri})

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
        (only those), and on the 2026-07-28 listen streams that subscribed to it; returns
        how many. Spec: server/resources#subscriptions, 2026-07-28 basic/patterns/subscriptions."""
        sent = self.resources.notify_updated(uri)
        if self._listeners:
            from mcp_ref.server.modern import serve as server_modern
            sent += server_modern.broadcast(self, "notifications/resources/updated", {"uri": uri})
        return sent

    # ------------------------------------------------------------------ prompts (server/prompts.py)
    def prompt(self, fn: Callable | None = None, **kwargs):
        """Register a prompt: ``@server.prompt`` or ``@server.prompt(name=..., title=...)``;
        the function is returned as it is."""
        return _decorator(self.prompts.add, fn, kwargs)

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
        return _decorator(lambda f: setattr(self.completions, "fn", f), fn, {})

    def log(self, level: str, data: Any, logger: str | None = None) -> int:
        """Send ``notifications/message`` to every ready session whose level lets it
        through; returns how many. Spec: server/utilities/logging."""
        return self._logs.broadcast(level, data, logger)

    def bridge_logging(self, logger=None, level: int = 20) -> logging.Handler:
        """Forward Python ``logging`` records of ``logger`` (a name or Logger; None: the
        root logger) at ``level`` and above to clients as ``notifications/message``.
        Returns the handler (remove it from the logger to stop). ``level`` 20 is ``logging.INFO``."""
        import logging
        from mcp_ref.server.logging_bridge import LoggingBridge
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
        self._changes += 1                          # what a modern client is told may differ now
        if not self.sessions and not self._listeners:
            return                                  # registering before any session: nobody to tell
        capability = method.split("/")[1] + ".listChanged"
        for session in self.ready_sessions():
            if lifecycle.has_capability(session.declared_capabilities, capability):
                try:
                    session.notify(method)
                except Exception:
                    log.debug("could not send %s", method, exc_info=True)
        if self._listeners:
            from mcp_ref.server.modern import serve as server_modern            # and on the 2026-07-28 listen streams
            server_modern.broadcast(self, method)

    # ------------------------------------------------------------------ client features
    def on_roots_changed(self, fn: Callable) -> Callable:
        """Register ``fn(session)``, called when a client sends
        ``notifications/roots/list_changed``; usable as a decorator. It runs on the
        session's notification thread and may call ``session.list_roots()``.
        Spec: client/roots#root-list-changes."""
        self._roots_changed.append(fn)
        return fn

    def _on_roots_list_changed(self, session: Session, params: dict) -> None:
        for fn in list(self._roots_changed):
            try:
                fn(session)
            except Exception:
                log.exception("roots list_changed callback %r failed", fn)

    # ------------------------------------------------------------------ mounting
    def wsgi_app(self, path: str = "/mcp", **options):
        """This server's MCP endpoint as a WSGI application (PEP 3333), to mount in Flask or
        Django or serve with gunicorn; ``options`` are ``run(http=...)``'s (``transports.wsgi``:
        the same request handler as the built-in HTTP server, ``transports.http_core``)."""
        from mcp_ref.transports.http.server.wsgi import WsgiApp
        return WsgiApp(self, path=path, **options)
