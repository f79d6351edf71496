"""How a client is made: ``Client.stdio`` (spawn a server), ``Client.http`` (Streamable
HTTP) and ``Client.sse`` (the legacy HTTP+SSE transport).

``Connections`` is a mix-in of ``Client`` (client.py): class methods that build
the transport, then the client over it. Nothing is sent until the first
request or ``connect()`` (client.py rule 1). Spec: basic/transports,
basic/authorization (an ``mcp_ref.auth`` provider is bound to the server's URL).
"""
from __future__ import annotations

from functools import partial
from typing import Any, Callable, Sequence, TypeVar, overload

from mcp_ref import types
from mcp_ref.client.client_restart import Restarter
from mcp_ref.client.modern import era as client_modern
from mcp_ref.client.state import ClientState
from mcp_ref.errors import UnsupportedProtocolVersion
from mcp_ref.protocol import lifecycle
from mcp_ref.session import Session
from mcp_ref.transports.stdio import DEFAULT_MAX_MESSAGE_SIZE, StdioClientTransport

# The HTTP transports load in the class methods that use them: requests and the HTTP client's
# modules are for HTTP clients only (``import mcp_ref`` needs the standard library alone).

_C = TypeVar("_C", bound="Connections")   # the class a constructor is called on: Client

_HTTP_MAX_MESSAGE_SIZE = 16 * 1024 * 1024   # http_common.DEFAULT_MAX_MESSAGE_SIZE (not imported: requests is optional)


def _bind_auth(auth, url: str) -> None:
    """An ``mcp_ref.auth`` provider serves one MCP server: bind it to ``url`` (its tokens go
    to that origin only). Any other requests auth object passes through untouched."""
    bind = getattr(auth, "bind", None)
    if callable(bind) and type(auth).__module__.startswith("mcp_ref.auth"):
        bind(url)


class _ClassOrInstance:
    """(HTTP transports) ``Client.connect(target, ...)`` builds a client for a URL or a
    command line; ``client.connect()`` runs the handshake. One name, two roles: the
    descriptor picks by how it is reached."""

    def __init__(self, on_instance, on_class):
        self.on_instance, self.on_class = on_instance, on_class
        self.__doc__ = on_instance.__doc__

    # What type checkers see: Client.connect(target, **options), client.connect().
    @overload
    def __get__(self, obj: None, cls: type[_C]) -> Callable[..., _C]: ...
    @overload
    def __get__(self, obj: _C, cls: type | None = None) -> Callable[[], _C]: ...

    def __get__(self, obj, cls=None):
        if obj is None:
            return self.on_class.__get__(cls, cls)
        return self.on_instance.__get__(obj, cls)


class Connections(ClientState):
    """The constructors of ``Client`` (a mix-in)."""

    @classmethod
    def stdio(cls: type[_C], argv: Sequence[str], *, env: dict | None = None, cwd: str | None = None,
              on_stderr: Callable[[str], None] | None = None, close_timeout: float = 2.0,
              terminate_timeout: float = 2.0, auto_restart: int = 0, on_restart: Callable | None = None,
              inherit_env: bool = False, max_message_size: int | None = None, **options) -> _C:
        """A client for a server spawned as a subprocess (spawned here). Use it in a ``with``
        block, or call it directly: the first request connects (rule 1).

        The server sees only a small safe set of this process's environment
        variables (``PATH``, ``HOME``, ... : ``transports.stdio.SAFE_ENV_VARS``)
        plus those ``env`` names; ``inherit_env=True`` passes them all.
        ``max_message_size``: the longest line read from the server, in bytes
        (default 16 MiB); a longer reply fails its request with ``MessageTooLarge``.
        ``auto_restart``: how many times in a row a server that exited may be
        respawned, on the next request (0, the default: never; rule 5).
        ``on_restart(attempt)`` is called before each respawn (1 for the first
        since the last answered request)."""
        if isinstance(auto_restart, bool) or not isinstance(auto_restart, int) or auto_restart < 0:
            raise ValueError(f"auto_restart must be a whole number of restarts >= 0, not {auto_restart!r}")
        spawn_options: dict[str, Any] = dict(env=dict(env) if env else None, cwd=cwd, on_stderr=on_stderr,
                             close_timeout=close_timeout, terminate_timeout=terminate_timeout, inherit_env=inherit_env,
                             max_message_size=DEFAULT_MAX_MESSAGE_SIZE if max_message_size is None
                             else max_message_size)
        transport = StdioClientTransport(argv, **spawn_options)
        try:
            client = cls(transport, **options)
        except BaseException:                   # e.g. an unknown option: do not leave the server running
            transport.close()
            raise
        if auto_restart:                        # a respawn: the same command line and options as the first
            client._restarter = Restarter(auto_restart, partial(StdioClientTransport, transport.argv, **spawn_options),
                                          on_restart)
        return client

    @classmethod
    def http(cls: type[_C], url: str, *, timeout: float | None = None, headers: dict | None = None, auth=None,
             verify=True, cert=None, connect_timeout: float = 10.0, read_timeout: float | None = None,
             on_session_expired: str = "reinitialize", open_get_stream: bool = True,
             max_message_size: int = _HTTP_MAX_MESSAGE_SIZE, **options) -> _C:
        """A client for a Streamable HTTP server at ``url``; use it in a ``with`` block, or
        call it directly: the first request connects (rule 1).

        ``timeout`` is the default request timeout (as for ``Client``);
        ``connect_timeout``/``read_timeout`` are HTTP's. ``headers`` go on every
        request, ``auth`` is an ``mcp_ref.auth`` provider (OAuth: bound to ``url``, its
        token on every request; 401 and 403 ``insufficient_scope`` start its flow) or
        any requests auth object, ``verify``/``cert`` are
        requests' TLS options. ``on_session_expired``: ``"reinitialize"`` starts a
        new session transparently, ``"raise"`` raises ``SessionExpired``.
        ``max_message_size``: the largest body or SSE event accepted, in bytes
        (16 MiB). Other options are ``Client``'s. See ``transports.http_client``.
        """
        from mcp_ref.transports.http.client.streamable import StreamableHttpTransport
        _bind_auth(auth, url)
        transport = StreamableHttpTransport(url, headers=headers, auth=auth, verify=verify, cert=cert,
                                            connect_timeout=connect_timeout, read_timeout=read_timeout,
                                            on_session_expired=on_session_expired, open_get_stream=open_get_stream,
                                            max_message_size=max_message_size)
        return cls._over_http(transport, timeout, options)

    @classmethod
    def sse(cls: type[_C], url: str, *, timeout: float | None = None, headers: dict | None = None, auth=None,
            verify=True, cert=None, connect_timeout: float = 10.0, read_timeout: float | None = None,
            endpoint_timeout: float = 10.0, max_message_size: int = _HTTP_MAX_MESSAGE_SIZE,
            **options) -> _C:
        """A client for a legacy HTTP+SSE server (2024-11-05) whose SSE stream is at ``url``.
        Connects at once (waits for the ``endpoint`` event); options as ``Client.http``."""
        from mcp_ref.transports.http.client.sse_legacy import SseClientTransport
        _bind_auth(auth, url)
        transport = SseClientTransport(url, headers=headers, auth=auth, verify=verify, cert=cert,
                                       connect_timeout=connect_timeout, read_timeout=read_timeout,
                                       endpoint_timeout=endpoint_timeout, max_message_size=max_message_size)
        return cls._over_http(transport, timeout, options)

    @classmethod
    def _over_http(cls: type[_C], transport, timeout: float | None, options: dict) -> _C:
        if timeout is not None:
            options["timeout"] = timeout
        try:
            client = cls(transport, **options)
        except BaseException:
            transport.close()
            raise
        transport.session = client.session       # typed HTTP failures reach the waiting caller
        # What the transport waits for on the caller's thread ends by the client's timeouts.
        transport.timeout, transport.init_timeout = client.timeout, client.init_timeout
        streamable = getattr(transport, "inner", transport)
        if hasattr(streamable, "param_headers"):  # 2026-07-28 x-mcp-header (client/modern/era.py rule 7)
            streamable.param_headers = client._param_headers
        return client

    @classmethod
    def _for_target(cls: type[_C], target, **options) -> _C:
        """``Client.connect(target, **options)``: an ``http(s)://`` URL → Streamable HTTP, falling
        back to legacy HTTP+SSE when the server refuses the initialize POST with 400/404/405
        (Spec: basic/transports#backwards-compatibility); a list of strings → ``Client.stdio``."""
        if isinstance(target, str) and target.startswith(("http://", "https://")):
            from mcp_ref.transports.http.client.sse_legacy import AutoHttpTransport
            names = ("headers", "auth", "verify", "cert", "connect_timeout", "read_timeout", "on_session_expired",
                     "open_get_stream", "endpoint_timeout", "max_message_size")
            http_options = {name: options.pop(name) for name in names if name in options}
            _bind_auth(http_options.get("auth"), target)
            timeout = options.pop("timeout", None)      # None: the default, as for Client.http
            return cls._over_http(AutoHttpTransport(target, **http_options), timeout, options)
        if isinstance(target, (list, tuple)):
            return cls.stdio(target, **options)
        raise TypeError(f"Client.connect() needs an http(s):// URL or a command line (a list), not {target!r}")

    def _handshake(self, session: Session) -> None:
        """The era first (rule 8: ``server/discover``, unless a legacy revision is asked
        for), then, for a legacy server, initialize, the revision check,
        notifications/initialized (rule 1); also a respawned server's (rule 5), which
        replaces everything learnt from the old one."""
        session.start()
        requested = self.requested_version
        self.modern = False
        self._asking = None
        if requested == client_modern.AUTO or requested in lifecycle.MODERN_REVISIONS:
            chosen = client_modern.probe(partial(session.request, timeout=self.init_timeout), requested,
                                         self._modern_meta)
            if chosen is not None:
                version, discovery = chosen
                self.modern = True
                self._speak(session, version, discovery.capabilities,
                            discovery.server_info or types.Implementation(name="", version=""), discovery.instructions)
                self._relisten(session)
                return
            requested = lifecycle.LATEST_LEGACY_REVISION
        self._asking = requested
        result = session.request("initialize", {
            "protocolVersion": requested,
            "capabilities": self.capabilities(),
            "clientInfo": self.client_info.to_dict(requested),
        }, timeout=self.init_timeout)
        version = result.get("protocolVersion")
        if not isinstance(version, str) or not lifecycle.is_supported(version):
            raise UnsupportedProtocolVersion(version, lifecycle.LEGACY_REVISIONS)
        self._speak(session, version, result.get("capabilities") or {},
                    types.Implementation.from_dict(result.get("serverInfo") or {"name": "", "version": ""}),
                    result.get("instructions"))
        session.notify("notifications/initialized")

    def _speak(self, session: Session, version: str, capabilities: dict, server_info: types.Implementation,
               instructions: str | None) -> None:
        """Keep what the handshake learnt: the revision (the session and its transport speak it too)."""
        self.protocol_version = session.protocol_version = version
        if hasattr(session.transport, "protocol_version"):
            session.transport.protocol_version = version
        self.server_capabilities, self.server_info, self.instructions = capabilities, server_info, instructions
