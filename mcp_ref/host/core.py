"""The host: many servers, one client each, one catalogue, one consent hook.

Spec: architecture (the host creates and manages clients, enforces consent and
security boundaries, coordinates sampling, aggregates context), basic/lifecycle.

Rules:

1. One ``Client`` per configured server, each with its own session and
   transport: no server sees another's messages, its roots or its sampling.
   A server that fails to start (refused launch, bad command, failed
   handshake) is recorded in ``failed`` and the others run on.
2. The catalogue names each tool and prompt ``server__name`` (config.py
   rule 2: never ambiguous); resources and templates keep their URIs and
   carry their server. Each server's lists are fetched on first use and
   again after its ``notifications/*/list_changed`` (or a restart); the
   application hears of a change through ``on_change(server, kind)``.
3. A call is routed by its qualified name (``call_tool``, ``get_prompt``),
   a read by the URI's server (``read_resource``: the server listing the URI,
   else the one whose template matches; ``server=`` picks when several do).
4. Every tool call, sampling request and elicitation goes through the
   consent hook (consent.py) before anything is sent or answered; launching
   a server and the roots it sees too, once, before its first start.
5. Sampling: the host owns the model. A server's ``sampling/createMessage``
   is answered by the application's ``model`` (loop.py: messages and tools in,
   text out) with the server's own messages only -- never the host's
   conversation -- or by a ``sampling`` callable given instead.
6. Health: ``ping_interval`` pings every server (a silent one is
   disconnected); a stdio server with ``autoRestart`` (or ``auto_restart``)
   is respawned on its next request (client_restart.py); an HTTP session the
   server forgot (404) is re-initialized by the transport. ``check()`` pings
   each server now.
7. Era: each client probes (``protocol_version="auto"``, the default): 2026-07-28
   with a server answering ``server/discover``, else the legacy handshake. A
   refused elicitation is answered ``{"action": "decline"}`` in 2026-07-28 (an
   ``InputResponses`` value is a result, never an error; Spec 2026-07-28:
   basic/patterns/mrtr#inputresponses, client/elicitation), -1 before. A refused
   sampling request ends the call at the client, no retry: "the server is not
   waiting" (Spec 2026-07-28: client/sampling#error-handling).
"""
import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from mcp_ref.client.approval import Denied, decide, rejected
from mcp_ref.client.client import Client
from mcp_ref.client.client_restart import Restarter
from mcp_ref.client.roots import as_roots
from mcp_ref.errors import InternalError, InvalidParamsError, get_logger
from mcp_ref.transports import TapTransport
from mcp_ref.transports.stdio import StdioClientTransport
from mcp_ref.host.config import SEPARATOR, ConfigError, ServerConfig, load_config, parse_config
from mcp_ref.host.consent import Consent, allow_all
from mcp_ref import types

log = get_logger("mcp_ref.host")

__all__ = ["Host", "HostTool", "HostPrompt", "HostResource", "HostTemplate"]

_FETCH = {"tools": "list_tools", "resources": "list_resources", "templates": "list_resource_templates",
          "prompts": "list_prompts"}
KINDS = tuple(_FETCH)


@dataclass
class HostTool:
    """A tool in the catalogue: ``name`` is qualified, ``tool`` is the server's own."""
    name: str
    server: str
    tool: types.Tool

    def to_dict(self) -> dict:
        """The tool as a model sees it: the server's definition under the qualified name."""
        return {**self.tool.to_dict(), "name": self.name}


@dataclass
class HostPrompt:
    name: str
    server: str
    prompt: types.Prompt


@dataclass
class HostResource:
    uri: str
    server: str
    resource: types.Resource


@dataclass
class HostTemplate:
    uri_template: str
    server: str
    template: types.ResourceTemplate


@dataclass
class _Server:
    """What the host keeps per server: its configuration, client and catalogue."""
    config: ServerConfig
    client: Optional[Client] = None
    lists: dict = field(default_factory=dict)               # kind -> list of the server's objects
    stale: set = field(default_factory=lambda: set(KINDS))  # kinds to fetch again (rule 2)
    launch_allowed: bool = False                            # the launch consent, asked once (rule 4)
    roots: Optional[list] = None


class Host:
    """Many MCP servers behind one consent hook (the rules above).

    Args:
        servers: ``{name: ServerConfig}``, the parsed ``{"mcpServers": ...}`` dict, or a file path.
        consent: the hook (consent.py); default ``allow_all``.
        model: ``model(messages, tools) -> str | [ToolCall]`` (loop.py), answers sampling.
        sampling: a ``Client`` sampling callback used instead of ``model``.
        elicitation: a ``Client`` elicitation callback (none: not offered).
        roots: ``{server: [roots]}``, added to each configuration's ``roots``.
        trace: ``trace(server, direction, message, session_id)`` for every message.
        on_change: ``on_change(server, kind)`` when a server's list changed.
        auto_restart: respawns for every stdio server without its own ``autoRestart``.
        client_options: more ``Client`` options (``timeout``, ``ping_interval``, ``protocol_version`` ...).
    """

    def __init__(self, servers, *, consent: Callable = allow_all, model: Optional[Callable] = None,
                 sampling: Optional[Callable] = None, elicitation: Optional[Callable] = None,
                 roots: Optional[dict] = None, trace: Optional[Callable] = None,
                 on_change: Optional[Callable] = None, on_stderr: Optional[Callable] = None,
                 auto_restart: int = 0, **client_options):
        if isinstance(servers, (str, bytes)) or hasattr(servers, "__fspath__"):
            servers = load_config(servers)
        elif isinstance(servers, dict) and "mcpServers" in servers:
            servers = parse_config(servers)
        self._servers = {name: _Server(config) for name, config in servers.items()}
        for name, extra in (roots or {}).items():
            if name not in self._servers:
                raise ConfigError(f"roots given for {name!r}, which is not configured")
            self._servers[name].config.roots = list(self._servers[name].config.roots or []) + list(extra)
        self.consent = consent
        self.model, self.sampling, self.elicitation = model, sampling, elicitation
        self.trace, self.on_change, self.on_stderr = trace, on_change, on_stderr
        self.auto_restart = auto_restart
        self.client_options = client_options        # protocol_version: "auto" unless given (rule 7)
        self.failed: dict = {}              # server -> the exception that kept it out (rule 1)
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ lifecycle
    def __enter__(self) -> "Host":
        try:
            return self.start()
        except BaseException:
            self.close()
            raise

    def __exit__(self, *exc) -> None:
        self.close()

    def start(self, names=None, *, strict: bool = False) -> "Host":
        """Start and connect each configured server (or those ``names``); a failure is recorded
        in ``failed`` (rule 1), or raised with ``strict``. Servers start one after another, in
        configuration order."""
        for name in (names or list(self._servers)):
            entry = self._entry(name)
            if entry.config.disabled or (entry.client is not None and not entry.client.closed):
                continue
            try:
                self._start(entry)
                self.failed.pop(name, None)
            except Exception as exc:     # noqa: BLE001 -- recorded, the other servers run on
                if entry.client is not None:
                    entry.client.close()
                    entry.client = None
                if strict:
                    raise
                log.warning("server %r did not start: %s", name, exc)
                self.failed[name] = exc
        return self

    def close(self) -> None:
        """Close every client (so every server process stops); idempotent."""
        for entry in self._servers.values():
            if entry.client is not None:
                entry.client.close()

    @property
    def servers(self) -> list:
        return list(self._servers)          # the configured names, in order

    def client(self, name: str) -> Client:
        """The client of server ``name`` (started); KeyError when it is not running."""
        entry = self._entry(name)
        if entry.client is None:
            raise KeyError(f"server {name!r} is not running" + (f": {self.failed[name]}" if name in self.failed
                                                                  else ""))
        return entry.client

    def _entry(self, name: str) -> _Server:
        if name not in self._servers:
            raise KeyError(f"no server named {name!r}; configured: {', '.join(self._servers) or 'none'}")
        return self._servers[name]

    def _ask(self, kind: str, value, server: str):
        try:
            return decide(self.consent, Consent(kind, "request", value, server=server))
        except Denied as denied:
            raise PermissionError(f"{kind} of server {server!r} denied: {denied.reason}") from None

    def _start(self, entry: _Server) -> None:
        config, name = entry.config, entry.config.name
        if not entry.launch_allowed:                        # rule 4: once, before the first start
            self._ask("launch", config.describe(), name)
            entry.launch_allowed = True
            if config.roots is not None:
                entry.roots = self._ask("roots", as_roots(config.roots), name)
        options = dict(self.client_options, on_approve=lambda approval, name=name: approval.kind == "elicitation"
                       or self.consent(Consent(**vars(approval), server=name)))    # an elicitation: in _elicit (rule 7)
        if self.sampling is not None or self.model is not None:
            options["sampling"] = lambda request, name=name: self._sample(name, request)
        if self.elicitation is not None:
            options["elicitation"] = lambda request, name=name: self._elicit(name, request)
        if entry.roots is not None:
            options["roots"] = entry.roots
        for kind in ("tools", "resources", "prompts"):
            options[f"on_{kind}_list_changed"] = lambda kind=kind, name=name: self._changed(name, kind)
        client = self._stdio(config, options) if config.url is None else self._http(config, options)
        with self._lock:
            entry.client, entry.stale = client, set(KINDS)
        client.connect()

    def _tap(self, name: str, transport):
        if self.trace is None:
            return transport
        trace = self.trace

        def session_id():                    # HTTP: the Mcp-Session-Id once assigned (auto: the chosen inner)
            return getattr(getattr(transport, "inner", transport), "session_id", None)
        return TapTransport(transport, lambda direction, message: trace(name, direction, message, session_id()))

    def _stdio(self, config: ServerConfig, options: dict) -> Client:
        on_stderr = None if (report := self.on_stderr) is None else (lambda line, name=config.name: report(name, line))

        def spawn():
            return self._tap(config.name, StdioClientTransport(config.argv, env=config.env or None, cwd=config.cwd,
                                                               on_stderr=on_stderr))
        transport = spawn()
        try:
            client = Client(transport, **options)
        except BaseException:
            transport.close()
            raise
        restarts = config.auto_restart or self.auto_restart
        if restarts:
            client._restarter = Restarter(restarts, spawn, lambda attempt: self._changed(config.name, None))
        return client

    def _http(self, config: ServerConfig, options: dict) -> Client:
        from mcp_ref.transports.http.client import sse_legacy          # streamable.py's class with it
        classes = {"http": sse_legacy.StreamableHttpTransport, "sse": sse_legacy.SseClientTransport}
        Transport: Callable[..., Any] = classes.get(config.transport, sse_legacy.AutoHttpTransport)
        transport = Transport(config.url, headers=config.headers or None)
        return Client._over_http(self._tap(config.name, transport), None, options)

    # ------------------------------------------------------------------ catalogue (rule 2)
    def _changed(self, name: str, kind: Optional[str]) -> None:
        kinds = set(KINDS) if kind is None else ({kind, "templates"} if kind == "resources" else {kind})
        with self._lock:
            self._servers[name].stale |= kinds
        if self.on_change is not None:
            for changed in sorted(kinds):
                self.on_change(name, changed)

    def _list(self, kind: str) -> list:
        """``[(server, items)]`` for every running server offering ``kind``, fetched when stale."""
        found = []
        for name, entry in self._servers.items():
            client = entry.client
            if client is None or (client.closed and client._restarter is None) or \
                    ("resources" if kind == "templates" else kind) not in client.server_capabilities:
                continue
            with self._lock:
                stale = kind in entry.stale
                entry.stale.discard(kind)            # a list_changed during the fetch marks it again
            if stale:
                try:
                    entry.lists[kind] = getattr(client, _FETCH[kind])()
                except BaseException:
                    entry.stale.add(kind)
                    raise
            found.append((name, list(entry.lists.get(kind, ()))))
        return found

    def tools(self) -> list:
        """Every running server's tools, as ``HostTool`` with qualified names."""
        return [HostTool(name + SEPARATOR + t.name, name, t) for name, items in self._list("tools") for t in items]

    def prompts(self) -> list:
        return [HostPrompt(name + SEPARATOR + p.name, name, p) for name, items in self._list("prompts") for p in items]

    def resources(self) -> list:
        return [HostResource(r.uri, name, r) for name, items in self._list("resources") for r in items]

    def resource_templates(self) -> list:
        return [HostTemplate(t.uri_template, name, t) for name, items in self._list("templates") for t in items]

    def _split(self, qualified: str) -> tuple:
        server, sep, name = qualified.partition(SEPARATOR)
        if not sep or server not in self._servers:
            raise InvalidParamsError(f"{qualified!r} is not a qualified name (server{SEPARATOR}name); "
                                     f"servers: {', '.join(self._servers)}")
        return server, name

    # ------------------------------------------------------------------ routing (rule 3)
    def call_tool(self, qualified: str, arguments: Optional[dict] = None, **options):
        """Call ``server__tool`` on its server; consent first (the client's ``on_approve``)."""
        server, name = self._split(qualified)
        return self.client(server).call_tool(name, arguments, **options)

    def get_prompt(self, qualified: str, arguments: Optional[dict] = None):
        server, name = self._split(qualified)
        return self.client(server).get_prompt(name, arguments)

    def read_resource(self, uri: str, server: Optional[str] = None):
        """Read ``uri`` from the server listing it, else the one whose template matches."""
        if server is None:
            owners = sorted({r.server for r in self.resources() if r.uri == uri})
            if not owners:
                from mcp_ref.schema.uritemplate import UriTemplate
                owners = sorted({t.server for t in self.resource_templates()
                                 if UriTemplate(t.uri_template).match(uri) is not None})
            if len(owners) != 1:
                raise InvalidParamsError(f"resource {uri!r} is offered by " + (
                    f"several servers ({', '.join(owners)}): pass server=" if owners else "no running server"))
            server = owners[0]
        return self.client(server).read_resource(uri)

    def check(self, timeout: float = 5.0) -> dict:
        """Ping every running server now: ``{server: None (alive) or the exception}`` (rule 6)."""
        def ping(client):
            try:
                client.ping(timeout=timeout)
            except Exception as exc:      # noqa: BLE001 -- reported, not raised
                return exc
            return None
        return {name: ping(entry.client) for name, entry in self._servers.items() if entry.client is not None}

    # ------------------------------------------------------------------ elicitation (rules 4, 7)
    def _elicit(self, name: str, request):
        client, server_info = self._servers[name].client, getattr(request, "server_info", None)

        def ask(stage: str, value, asked=None):
            return decide(self.consent, Consent("elicitation", stage, value, asked, server_info, server=name))
        try:
            request.params = ask("request", request.params)
            answer = self.elicitation(request)  # type: ignore[misc]  # not None: _start installs _elicit only then
            return ask("result", answer if isinstance(answer, types.ElicitResult) else
                       types.ElicitResult.from_dict(answer), request)
        except Denied as denied:
            if client is not None and client.modern:
                return types.ElicitResult(action="decline")
            raise rejected(denied) from None

    # ------------------------------------------------------------------ sampling (rule 5)
    def _sample(self, server: str, request):
        if self.sampling is not None:
            return self.sampling(request)
        params = request.params
        messages = [message.to_dict() for message in params.messages]
        if params.system_prompt:
            messages.insert(0, {"role": "system", "content": {"type": "text", "text": params.system_prompt}})
        reply = self.model(messages, [])   # type: ignore[misc]  # not None: _start installs _sample only then
        if not isinstance(reply, str):
            raise InternalError("the model answered a sampling request with tool calls, but no tools were offered")
        return {"role": "assistant", "content": {"type": "text", "text": reply},
                "model": getattr(self.model, "name", type(self.model).__name__), "stopReason": "endTurn"}

