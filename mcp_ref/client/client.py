"""The MCP client: handshake, one method per MCP request, answers to server requests.

Rules:

1. Entering the context manager connects and runs the handshake (initialize,
   check the answered revision, notifications/initialized); leaving closes
   the session and the transport (for stdio: the shutdown ladder).
   Spec: basic/lifecycle. Without ``with`` (a notebook, a module-level
   client), the first request connects: one handshake, however many threads
   ask at once (``connect()`` is idempotent); a handshake that fails closes
   the client, as ``with`` does. A client nobody closed is closed at
   interpreter exit (``atexit``), so no server process outlives the script.
2. Each public method sends exactly one wire method, written literally in
   its body, and refuses locally (``CapabilityNotSupported``) when the server
   did not declare the capability it needs. (One exception: on a server that
   offers tasks, ``call_tool`` and ``call_tool_as_task`` list the tools first
   when none is cached, to honour their ``execution.taskSupport``;
   client/tasks/legacy.py rule 1.)
3. Server→client requests are answered from one table in ``__init__``; a
   request of a capability we did not declare gets -32601.
4. The client is safe to share between threads: concurrent calls are matched
   by id. It never uses an event loop, so it works inside one too.
5. A stdio client may respawn a server that exited (opt-in, ``auto_restart=N``;
   rules in client_restart.py): requests in flight fail with ``ConnectionClosed``
   and are never resent; the next request respawns the server and runs the
   handshake again, at most N times in a row. The respawn happens in
   ``_require`` and ``_request``, which every request goes through; ``close()``
   stops it for good.
6. A client belongs to the process that made it: its pipes, sockets and
   threads do. In a child made by ``fork()`` every request raises
   ``SessionError`` at once (its replies would go to the parent's reader and
   it would wait for its timeout), and ``close()`` there leaves the parent's
   server alone. Make a new client in the child.
7. Every request method takes ``cancel=``, a ``CancelToken`` (session/outbound.py rule 4):
   another thread's ``token.cancel(reason)`` sends ``notifications/cancelled``
   and the caller raises ``RequestCancelled``, on every transport. A list
   method hands it to each page it asks for.
8. Dual-era (Spec 2026-07-28: basic/versioning): ``protocol_version="auto"``
   (the default) probes with ``server/discover`` and speaks the modern era
   (no handshake, ``_meta`` on every request) when the server offers it, else
   runs ``initialize`` as before; client/modern/era.py has the rules. The public
   methods and what they return are the same in both eras.
"""
from __future__ import annotations

import atexit
import os
import threading
import weakref
from typing import Any, Callable

from mcp_ref import types
from mcp_ref.client.client_requests import DEFAULT_MAX_PAGES, VALIDATE_OUTPUT_MODES, ServerFeatureRequests, all_pages
from mcp_ref.client.modern import era as client_modern
from mcp_ref.client.connect import Connections, _ClassOrInstance
from mcp_ref.client.answers import ServerRequestAnswers
from mcp_ref.client.approval import Approval, Denied, ToolCall, decide
from mcp_ref.client.elicitation import ElicitationTracker
from mcp_ref.client.roots import as_roots
from mcp_ref.client.tasks.legacy import TASKS_SINCE, TaskRequests
from mcp_ref.errors import ApprovalDenied, CapabilityNotSupported, ConnectionClosed, SessionError, UnsupportedProtocolVersion, get_logger
from mcp_ref.session.outbound import CancelToken
from mcp_ref.session import Session
from mcp_ref.types import CallToolResult

log = get_logger("mcp_ref.client")

__all__ = ["Client"]

DEFAULT_CLIENT_INFO = {"name": "mcp_ref", "version": "0.1.0"}     # clientInfo when none is given

# Rule 1: the clients not closed yet, closed at interpreter exit. Weak: a client that
# was collected had no session running (its threads hold it), so nothing to close.
_unclosed: weakref.WeakSet = weakref.WeakSet()


@atexit.register
def _close_unclosed() -> None:
    for client in list(_unclosed):
        try:
            client.close()              # in a forked child: does nothing (rule 6)
        except Exception:
            log.debug("closing %r at exit failed", client, exc_info=True)


class Client(Connections, ServerRequestAnswers, ServerFeatureRequests, TaskRequests, client_modern.ModernEra):
    """An MCP client over any transport (see ``Client.stdio`` for the common case).

    Resources, prompts, completion, logging and the notification callbacks are
    in client_requests.py (``list_resources``, ``read_resource``, ``get_prompt``,
    ``complete``, ``set_logging_level``, ``on`` ...); tasks (2025-11-25) in
    client/tasks/legacy.py (``call_tool_as_task``, ``get_task``, ``task_result``,
    ``list_tasks``, ``cancel_task``).

    Args:
        transport: an object with ``send``/``receive``/``close``.
        client_info: ``Implementation`` or dict for ``clientInfo``.
        timeout: default seconds for every request.
        init_timeout: seconds for ``initialize`` alone.
        protocol_version: ``"auto"`` (the default: the modern era when the server
            offers it, else the newest legacy revision, rule 8), or one revision of
            ``SUPPORTED_REVISIONS`` to insist on; else ``ValueError`` before anything is sent.
        ping_interval: ping the server this often (None: never).
        max_pages: how many pages ``list_tools()`` and the other ``list_*()``
            helpers follow before raising ``TooManyPages`` (client_requests.py rule 1).

    Client features (each declared only when given; Spec: client/sampling,
    client/roots, client/elicitation; see approval.py for the callbacks' argument):
        sampling: ``fn(request) -> CreateMessageResult | dict`` answers
            ``sampling/createMessage``; raise ``UserRejectedError`` to refuse.
        sampling_tools: declare ``sampling.tools`` (2025-11-25); default: the
            callback's ``supports_tools`` attribute.
        elicitation: ``fn(request) -> ElicitResult | dict`` answers form mode.
        elicitation_url: the same for URL mode (2025-11-25).
        on_elicitation_complete: ``fn(elicitation_id)`` for each URL elicitation
            the server reports complete.
        roots: a list of ``Root``, ``{"uri", "name"}`` dicts, file URIs or paths
            (``[]`` offers roots, none yet); see ``set_roots``.
        on_approve: the human-in-the-loop hook (approval.py): sees each sampling
            request and result, each elicitation and answer, each tool call.

    Server features (client_requests.py):
        validate_output: ``"strict"`` (raise ``StructuredOutputError``), ``"warn"``
            or ``"off"``: checking ``structuredContent`` against the tool's outputSchema.
        validate_input: check ``call_tool`` arguments against the cached tool's
            inputSchema before sending (``ToolInputError``; off by default).
        on_log: ``fn(LoggingMessageNotificationParams)`` for ``notifications/message``.
        on_resource_updated: ``fn(uri)`` for ``notifications/resources/updated``.
        on_tools_list_changed, on_resources_list_changed, on_prompts_list_changed:
            ``fn()`` for each ``notifications/*/list_changed``; see also ``on()``.
        on_task_status: ``fn(Task)`` for each ``notifications/tasks/status`` (client/tasks/legacy.py).
    """

    def __init__(self, transport, *, client_info=None, timeout: float = 60.0, init_timeout: float = 10.0,
                 protocol_version: str = "auto", ping_interval: float | None = None,
                 max_workers: int = 8, on_notification: Callable | None = None,
                 sampling: Callable | None = None, sampling_tools: bool | None = None,
                 elicitation: Callable | None = None, elicitation_url: Callable | None = None,
                 on_elicitation_complete: Callable | None = None, roots=None,
                 on_approve: Callable | None = None, validate_output: str = "strict",
                 validate_input: bool = False, on_log: Callable | None = None,
                 on_resource_updated: Callable | None = None, on_tools_list_changed: Callable | None = None,
                 on_resources_list_changed: Callable | None = None,
                 on_prompts_list_changed: Callable | None = None, on_task_status: Callable | None = None,
                 max_pages: int = DEFAULT_MAX_PAGES):
        client_modern.check_requested(protocol_version)      # protocol/lifecycle.py rule 2, client/modern/era.py rule 2
        if validate_output not in VALIDATE_OUTPUT_MODES:
            raise ValueError(f"validate_output must be one of {VALIDATE_OUTPUT_MODES}, not {validate_output!r}")
        if client_info is None or isinstance(client_info, dict):
            client_info = types.Implementation.from_dict(client_info or DEFAULT_CLIENT_INFO)
        self.client_info = client_info
        self.transport = transport
        self.timeout = timeout
        self.init_timeout = init_timeout
        self.requested_version = protocol_version
        self.on_notification = on_notification
        self.max_pages = max_pages
        self.server_capabilities: dict = {}    # server_info, protocol_version, modern...: state.py, until learnt
        self._listening = client_modern.Listening()    # the modern era's subscriptions/listen
        self._tool_cache: dict = {}
        self._checks: dict = {}                # (tool name, input?) -> (schema, validator)
        self._task_tools, self._task_progress, self._ended = {}, {}, {}     # client/tasks/legacy.py rules 3, 5
        self.validate_output = validate_output
        self.validate_input = bool(validate_input)
        self._listeners: dict = {}             # method -> [fn(params)], see on()
        self._lock = threading.Lock()
        self._connect_lock = threading.Lock()  # rule 1: one handshake
        self._connected = False
        self._pid = os.getpid()                # rule 6
        self._max_workers, self._ping_interval = max_workers, ping_interval
        self.session = self._new_session(transport)
        # Rule 5: _restarter (state.py) is set by Client.stdio(auto_restart=N); these guard close().
        self._closing = False
        self._starting = None                  # a respawned server's session during its handshake
        # Client features: sampling.py, elicitation.py, roots.py, approval.py.
        self.sampling = sampling
        self.sampling_tools = bool(getattr(sampling, "supports_tools", False)) if sampling_tools is None \
            else sampling_tools
        self.elicitation = elicitation
        self.elicitation_url = elicitation_url
        self.elicitations = ElicitationTracker(on_elicitation_complete)     # the URL elicitations awaited
        self.on_approve = on_approve
        self._roots = None if roots is None else as_roots(roots)
        # Rule 3: one row per method the server may ask us, with our capability it needs.
        self._request_handlers: dict = {
            "sampling/createMessage": (self._on_sampling_create_message, "sampling"),
            "roots/list": (self._on_roots_list, "roots"),
            "elicitation/create": (self._on_elicitation_create, "elicitation"),
        }
        self._notification_handlers: dict = {
            # an unknown or already completed id is ignored (elicitation.py rule 5)
            "notifications/elicitation/complete": lambda p: self.elicitations.complete(p.get("elicitationId")),
            "notifications/tools/list_changed": self._on_tools_list_changed,
            "notifications/subscriptions/acknowledged": self._listening.acknowledged,
        }
        # Callbacks for server notifications (client_requests.py rule 3): what each one is given.
        for method, callback, argument in (
                ("notifications/message", on_log, types.LoggingMessageNotificationParams.from_dict),
                ("notifications/resources/updated", on_resource_updated, lambda p: p.get("uri")),
                ("notifications/tools/list_changed", on_tools_list_changed, None),
                ("notifications/resources/list_changed", on_resources_list_changed, None),
                ("notifications/prompts/list_changed", on_prompts_list_changed, None),
                ("notifications/tasks/status", on_task_status, types.Task.from_dict)):
            if callback is not None:
                self.on(method, lambda p, callback=callback, argument=argument:
                        callback() if argument is None else callback(argument(p)))
        _unclosed.add(self)

    # ------------------------------------------------------------------ construction
    def _new_session(self, transport) -> Session:
        return Session(transport, self._handle_request, self._handle_notification, timeout=self.timeout,
                       max_workers=self._max_workers, ping_interval=self._ping_interval, name="mcp-client")

    # ------------------------------------------------------------------ lifecycle
    def __enter__(self) -> "Client":
        self._ready()
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _connect(self) -> "Client":         # client.connect(): see `connect` below
        """Run the handshake, once: a connected client returns at once (rule 1). Raises
        UnsupportedProtocolVersion (after disconnecting), RequestTimeout, ConnectionClosed
        or McpError."""
        self._check_process()
        with self._connect_lock:
            if self._connected:
                return self
            if self._closing:                   # closed (or a failed first connect): no new handshake
                raise self.session.close_error or ConnectionClosed("client closed")
            try:
                self._handshake(self.session)
            except UnsupportedProtocolVersion:
                self.close()
                raise
            self._connected = True
        return self

    def _ready(self) -> None:
        """Before every request: in the process that made the client (rule 6), and
        connected; the first request of a client used without ``with`` connects (rule 1)."""
        if self._pid != os.getpid():
            self._check_process()
        if not self._connected:
            try:
                self.connect()
            except BaseException:
                self.close()                    # as a failed ``with`` does
                raise

    def _check_process(self) -> None:
        pid = os.getpid()
        if pid != self._pid:
            raise SessionError(f"this client was made in process {self._pid} and cannot be used in process {pid}, "
                               f"a child made by fork(): its connection and threads stay with the parent; "
                               f"make a new client in the child")

    def close(self) -> None:
        """Close the session and the transport (and stop any respawn, rule 5). Idempotent.
        In a forked child it only forgets the client: the server is the parent's (rule 6)."""
        _unclosed.discard(self)
        if self._pid != os.getpid():
            return
        with self._lock:
            self._closing = True
            sessions = (self.session, self._starting)
        for session in sessions:
            if session is not None:
                session.close("client closed")
        if self._restarter is not None:
            with self._restarter.lock:          # a respawn under way has shut its server down
                pass

    @property
    def closed(self) -> bool:
        return self.session.closed

    def _require(self, path: str, what: str) -> None:
        self._ready()
        if self._restarter is not None:
            self._live_session()                # check the respawned server's capabilities (rule 5)
        if not self._offers(path):
            raise CapabilityNotSupported(f"{what} needs the peer capability {path!r}, which it did not declare")

    def _offers(self, path: str) -> bool:
        """Whether the server declared ``path`` (``"tools"``, ``"resources.subscribe"``): a
        member at each step, neither null nor false (as protocol/lifecycle.py reads one)."""
        node: Any = self.server_capabilities
        for part in path.split("."):
            node = node.get(part) if isinstance(node, dict) else None
            if node is None or node is False:
                return False
        return True

    def _live_session(self) -> Session:
        """The session to send on; with ``auto_restart``, a dead one is replaced first (rule 5)."""
        session = self.session
        if self._restarter is not None and session.closed and not self._closing:
            session = self._restarter.revive(self, session)
        return session

    def _request(self, method: str, params: dict | None = None, **options) -> dict:
        """Send one request and wait (Session.request); with ``auto_restart``, on a live session."""
        self._ready()
        if self.modern:                         # rule 8
            return self._modern_request(method, params, options)
        if self._restarter is None:
            return self.session.request(method, params, **options)
        return self._restarter.request(self, method, params, options)

    connect = _ClassOrInstance(_connect, Connections.__dict__["_for_target"])   # Client.connect(target) or client.connect()

    # ------------------------------------------------------------------ requests
    def ping(self, timeout: float | None = None, *, cancel: CancelToken | None = None) -> None:
        """Spec: basic/utilities/ping. The modern era has no ping: there an answered
        ``server/discover`` proves the server alive (rule 8)."""
        self._ready()                           # connects first: the era decides the method
        self._request("server/discover" if self.modern else "ping", timeout=timeout, cancel=cancel)

    def list_tools_page(self, cursor: str | None = None, *,
                        cancel: CancelToken | None = None) -> tuple[list[types.Tool], str | None]:
        """One page of tools: ``(tools, next_cursor)``. Spec: server/tools#listing-tools."""
        self._require("tools", "tools/list")
        tools, cursor = self._page("tools/list", cursor, cancel, "tools", types.Tool.from_dict)
        if self.modern and getattr(getattr(self.transport, "inner", self.transport), "param_headers", None):
            tools = client_modern.valid_for_http(tools)       # client/modern/era.py rule 7
        with self._lock:
            self._tool_cache.update((tool.name, tool) for tool in tools)
        return tools, cursor

    def list_tools(self, *, cancel: CancelToken | None = None) -> list[types.Tool]:
        """Every tool, following ``nextCursor`` to the last page."""
        return all_pages(lambda cursor: self.list_tools_page(cursor, cancel=cancel), self.max_pages, "tools/list")

    def call_tool(self, name: str, arguments: dict | None = None, *, timeout: float | None = None,
                  on_progress: Callable | None = None, reset_timeout_on_progress: bool = False,
                  max_total_timeout: float | None = None, cancel: CancelToken | None = None) -> CallToolResult:
        """Call a tool. A result with ``is_error`` is returned, not raised.

        ``on_progress(progress, total, message)`` receives progress; with
        ``reset_timeout_on_progress`` each progress notification restarts the
        timeout, bounded by ``max_total_timeout``. With ``validate_input``,
        arguments that do not match the cached tool's inputSchema raise
        ``ToolInputError`` and nothing is sent. A tool listed with
        ``execution.taskSupport`` ``"required"`` raises ``CapabilityNotSupported``
        (use ``call_tool_as_task``; client/tasks/legacy.py rule 1). ``cancel``: a ``CancelToken``
        another thread may cancel the call with (rule 7). Spec: server/tools#calling-tools.
        """
        self._require("tools", "tools/call")
        params = self._tool_call_params(name, arguments)
        result = self._request("tools/call", params, timeout=timeout, on_progress=on_progress,
                               reset_timeout_on_progress=reset_timeout_on_progress,
                               max_total_timeout=max_total_timeout, cancel=cancel)
        result = types.CallToolResult.from_dict(result)
        if name in self._tool_cache:              # a listed tool may declare an outputSchema
            self._check_output(name, result)      # client_requests.py rule 4
        return result

    def _tool_call_params(self, name: str, arguments: dict | None, as_task: bool = False) -> dict:
        """``tools/call`` params after the tool-level task check (client/tasks/legacy.py rule 1),
        the approval hook (approval.py: allow, edit or deny) and, with ``validate_input``,
        the input check (client_requests.py rule 5); shared by ``call_tool`` and
        ``call_tool_as_task``."""
        tasks = self._offers("tasks.requests.tools.call") and (self.protocol_version or "") >= TASKS_SINCE
        if tasks:
            self._check_task_support(name, as_task)
        if self.on_approve is not None:      # human in the loop
            try:
                call = decide(self.on_approve, Approval("tool_call", "request", ToolCall(name, dict(arguments or {})),
                                                        server_info=self.server_info))
            except Denied as denied:
                raise ApprovalDenied(f"tool call {name!r} denied: {denied.reason}") from None
            if call.name != name and tasks:
                self._check_task_support(call.name, as_task)
            name, arguments = call.name, call.arguments
        params: dict = {"name": name, "arguments": arguments or {}}
        if self.validate_input:
            self._check_input(name, params["arguments"])
        return params
