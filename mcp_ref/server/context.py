"""What a server's handlers hold: ``Context`` (one request) and ``ServerSession``
(one connection).

A tool, resource or prompt function that annotates a parameter with
``Context`` gets the request's context: the session's negotiated revision and
client capabilities, progress, cancellation, logging, and the requests a
server may send the client in the middle of a call (``sample``, ``elicit``,
``list_roots``; their server side lives with the client side in
client/sampling.py, client/elicitation.py and client/roots.py, loaded on first
use). ``ServerSession`` is a ``Session`` that also keeps what the server knows
of that one client. Spec: basic/lifecycle, basic/utilities/progress,
server/utilities/logging, client/sampling, client/elicitation, client/roots.
"""
from __future__ import annotations

import threading

from .. import lifecycle
from ..errors import CapabilityNotSupported
from ..session import RequestContext, Session

TYPE_CHECKING = False
if TYPE_CHECKING:          # names for annotations only
    from typing import Any

    from ..types import CreateMessageResult, Implementation
    from .server import Server


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
    # A modern (2026-07-28) request's metadata (modern.RequestMeta), else None: the
    # request, not the session, says who the client is (server_modern.py rule 2).
    era = None
    _mrtr = None            # server_mrtr.py: this run's answers, read from a retry on first ask

    @property
    def server(self) -> "Server":
        return self.session.server

    @property
    def client_capabilities(self) -> dict:
        era = self.era
        return era.capabilities if era is not None else self.session.client_capabilities

    @property
    def protocol_version(self) -> str | None:
        era = self.era
        return era.version if era is not None else self.session.protocol_version

    @property
    def client_info(self) -> Implementation | None:
        """The client's ``Implementation``: from this request's ``_meta`` (2026-07-28), else
        from ``initialize``; None when the client did not say."""
        era = self.era
        if era is None:
            return self.session.client_info
        from ..types import Implementation
        return Implementation.from_dict(era.client_info) if era.client_info is not None else None

    def request(self, method: str, params: dict | None = None, **options) -> dict:
        """Send a request to the client on behalf of this one (legacy era only: a
        2026-07-28 request has no server-to-client requests, ``CapabilityNotSupported``;
        ``elicit``, ``sample`` and ``list_roots`` ask there through multi round-trip)."""
        if self.era is not None:
            if method in ("elicitation/create", "sampling/createMessage", "roots/list"):
                from . import server_mrtr               # multi round-trip: answered, or the run ends
                return server_mrtr.ask(self, method, params)
            raise CapabilityNotSupported(f"{method}: a {self.era.version} server sends no requests to the client "
                                         "(Spec 2026-07-28: basic/patterns/mrtr)")
        return super().request(method, params, **options)

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
    # into an isError result. In a 2026-07-28 request each ends the call with an
    # InputRequiredResult and returns the answer when the client retries: the function
    # runs again (server_mrtr.py, which says how a function should behave then). Nested requests carry this request's id (related_id), honour
    # ``timeout`` (RequestTimeout) and are cancelled with this request.
    def sample(self, messages: list, *, max_tokens: int, system_prompt: str | None = None,
               **options) -> CreateMessageResult:
        """Ask the client's LLM for a message (``sampling/createMessage``); returns a
        ``CreateMessageResult``. ``messages`` holds ``SamplingMessage`` items (or wire
        dicts, or strings for user text). Options: ``model_preferences``,
        ``include_context``, ``temperature``, ``stop_sequences``, ``metadata``,
        ``tools``, ``tool_choice``, ``timeout``, ``meta``. Spec: client/sampling."""
        from ..client import sampling  # client features load on first use
        wanted = {"tools": {}} if options.get("tools") is not None else {}
        if options.get("include_context") not in (None, "none"):
            wanted["context"] = {}
        with self._needs({"sampling": wanted}):
            return sampling.create_message(self, messages, max_tokens=max_tokens, system_prompt=system_prompt,
                                           **options)

    def elicit(self, message: str, requested_schema: dict, *, timeout: float | None = None):
        """Ask the user to fill in a form (``elicitation/create``, form mode); returns an
        ``ElicitResult`` whose accepted content has been validated against the schema.
        Spec: client/elicitation."""
        from ..client import elicitation  # client features load on first use
        with self._needs({"elicitation": {"form": {}}}):
            return elicitation.elicit_form(self, message, requested_schema, timeout=timeout)

    def elicit_url(self, message: str, url: str, elicitation_id: str, *, timeout: float | None = None):
        """Send the user to ``url`` (URL mode elicitation, 2025-11-25); returns an
        ``ElicitResult`` (accept = the user consented). Finish with
        ``ctx.session.complete_elicitation(elicitation_id)``. Spec: client/elicitation."""
        from ..client import elicitation  # client features load on first use
        with self._needs({"elicitation": {"url": {}}}):
            return elicitation.elicit_url(self, message, url, elicitation_id, timeout=timeout)

    def list_roots(self, *, timeout: float | None = None) -> list:
        """The client's roots (``roots/list``) as ``Root`` objects. Spec: client/roots."""
        from ..client import roots  # client features load on first use
        with self._needs({"roots": {}}):
            return roots.list_roots(self, timeout=timeout)

    def _needs(self, required: dict):
        """In a 2026-07-28 request, a capability the request did not declare ends the
        call with -32021 (server_mrtr.py rule 6); elsewhere a no-op."""
        from . import server_mrtr
        return server_mrtr.needs(required, active=self.era is not None)

    # -- logging (Spec: server/utilities/logging); see server/utilities.py
    def log(self, level: str, data: Any, logger: str | None = None) -> bool:
        """Send ``notifications/message`` on this request's stream, before its response,
        unless the session's level filters it out (then False). ``level`` is one of the
        eight RFC 5424 levels (ValueError otherwise); ``data`` is any JSON value."""
        from .utilities import check_level
        check_level(level)
        if self.era is not None:        # 2026-07-28: the level is the request's, none means no messages
            return self.server._logs.send_for_request(self, level, data, logger)
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
