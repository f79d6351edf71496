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
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from mcp_ref.protocol import lifecycle
from mcp_ref.errors import CapabilityNotSupported, DuplicateInputKey
from mcp_ref.session import RequestContext, Session

if TYPE_CHECKING:
    from mcp_ref.types import CreateMessageResult, Implementation


class ServerSession(Session):
    """A Session plus what the server knows about this one client."""

    def __init__(self, server: Any, transport: Any, **options: Any):
        super().__init__(transport, server._handle_request,
                         lambda method, params: server._handle_notification(self, method, params),
                         context_class=Context, name="mcp-server", **options)
        self.server = server
        self.state = lifecycle.NEW
        self._client_info: Any = None           # clientInfo as sent (a dict), then an Implementation
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
            from mcp_ref.types import Implementation
            info = self._client_info = Implementation.from_dict(info)
        return info

    # -- client features (Spec: client/roots, client/elicitation); see roots.py, elicitation.py
    def list_roots(self, *, timeout: float | None = None) -> list:
        """The client's roots (``roots/list``); ``CapabilityNotSupported`` when it declared none."""
        from mcp_ref.client import roots  # client features load on first use
        return roots.list_roots(self, timeout=timeout)

    def complete_elicitation(self, elicitation_id: str) -> None:
        """Send ``notifications/elicitation/complete`` for a URL mode elicitation (2025-11-25)."""
        from mcp_ref.client import elicitation  # client features load on first use
        elicitation.send_complete(self, elicitation_id)


class Context(RequestContext):
    """What a tool, resource or prompt function can use while it runs.

    Inherits ``report_progress``, ``progress_token``, ``cancelled``,
    ``check_cancelled()``, ``request_id`` and ``session`` from
    ``RequestContext``. Spec: basic/utilities/progress, cancellation.
    ``task_id`` names the task when the call runs as one (server/tasks/legacy.py), else None.

    Asking the client: ``elicit``, ``elicit_url``, ``sample`` and ``list_roots`` ask one
    thing and return its answer; ``gather({key: ask, ...})`` asks several at once and
    returns ``{key: answer}``. In 2026-07-28 each ask is an input request of an
    ``InputRequiredResult`` (multi round-trip: the function runs again with the
    answers, server/modern/mrtr.py), keyed as the function names it (``key=``, or the keys
    of ``gather``) or else ``elicit-1``, ``sample-2``...; keys are unique within the
    request (``DuplicateInputKey``). ``gather`` puts all its asks in one round. In a
    task of the tasks extension the asks wait for ``tasks/update`` (server/tasks/extension.py);
    in the legacy era they are server-to-client requests, ``gather``'s one after
    another.
    """

    task_id: str | None = None
    # A modern (2026-07-28) request's metadata (modern.RequestMeta), else None: the
    # request, not the session, says who the client is (server/modern/serve.py rule 2).
    era = None
    _mrtr = None            # server/modern/mrtr.py: this run's answers, read from a retry on first ask
    # tools.py rule 3: True where an McpError a tool raises is the call's outcome, not an
    # isError result: a task of the 2026-07-28 tasks extension (server/tasks/extension.py rule 7).
    json_rpc_errors_pass = False

    @property
    def server(self) -> Any:
        """The ``Server`` (server/server.py, which imports this module)."""
        return self.session.server

    @property
    def client_capabilities(self) -> dict:
        return self.era.capabilities if self.era is not None else self.session.client_capabilities

    @property
    def protocol_version(self) -> str | None:
        return self.era.version if self.era is not None else self.session.protocol_version

    @property
    def client_info(self) -> Implementation | None:
        """The client's ``Implementation``: from this request's ``_meta`` (2026-07-28), else
        from ``initialize``; None when the client did not say."""
        era = self.era
        if era is None:
            return self.session.client_info
        from mcp_ref.types import Implementation
        return Implementation.from_dict(era.client_info) if era.client_info is not None else None

    def request(self, method: str, params: dict | None = None, **options) -> dict:
        """Send a request to the client on behalf of this one (legacy era only: a
        2026-07-28 request has no server-to-client requests, ``CapabilityNotSupported``;
        ``elicit``, ``sample`` and ``list_roots`` ask there through multi round-trip)."""
        key = self._input_key(method) if method in INPUT_KINDS else None
        if self.era is not None:
            if key is not None:
                from mcp_ref.server.modern import mrtr as server_mrtr               # multi round-trip: answered, or the run ends
                return server_mrtr.ask(self, method, params, key)
            raise CapabilityNotSupported(f"{method}: a {self.era.version} server sends no requests to the client "
                                         "(Spec 2026-07-28: basic/patterns/mrtr)")
        return super().request(method, params, **options)

    # -- input requests: their keys, and several in one round (server/modern/mrtr.py rules 2 and 3)
    _ask_key = None         # the key the next ask takes: key= of elicit/sample/list_roots, or gather's
    _input_keys: set | None = None      # the keys this run (a task: its whole life) has used
    _gathering = False      # inside gather: an unanswered ask ends the entry, not the run

    def _input_key(self, method: str) -> str:
        """The key of this ask: the one named (``key=``, ``gather``), else ``<kind>-<n>``
        skipping names taken; ``DuplicateInputKey`` for a name this run has used."""
        key, self._ask_key = self._ask_key, None
        if self._input_keys is None:
            self._input_keys = set()
        used = self._input_keys
        if key is None:                         # the first <kind>-<n> not used: the n-th unnamed ask, names skipped
            kind, n = INPUT_KINDS[method], 1
            while f"{kind}-{n}" in used:
                n += 1
            key = f"{kind}-{n}"
        elif key in used:
            raise DuplicateInputKey(key)
        used.add(key)
        return key

    @contextmanager
    def _keyed(self, key: str | None):
        """``with self._keyed(key):`` the ask inside takes ``key`` (None: as named before,
        or ``<kind>-<n>``), forgotten after it (asked or not)."""
        if key is not None and (not isinstance(key, str) or not key):
            raise TypeError(f"an input request key is a non-empty string, not {key!r}")
        if key is not None:
            self._ask_key = key
        try:
            yield
        finally:
            self._ask_key = None

    def gather(self, asks: dict) -> dict:
        """Ask the client several things at once; returns ``{key: answer}`` in the order of ``asks``.

        ``asks`` maps each input request key (a non-empty string, unique in the request)
        to a function of no arguments that makes one ask and returns its answer::

            answers = ctx.gather({
                "user_name": lambda: ctx.elicit("Your name?", name_schema),
                "summary": lambda: ctx.sample(["Summarise the report"], max_tokens=200),
            })
            answers["user_name"].content, answers["summary"].content

        In a 2026-07-28 request every unanswered ask of the gather goes in one
        ``InputRequiredResult`` (``inputRequests`` keyed by these keys) and the run
        ends; the retry runs the function again and the gather returns the answers
        (a retry that lacks some asks again for those only). In a task of the tasks
        extension they are the task's ``inputRequests`` together and the tool waits
        for them all (``tasks/update``). In the legacy era (2025-11-25 and before)
        they are sent one after another as server-to-client requests. A key used
        already in the request raises ``DuplicateInputKey``. Spec 2026-07-28:
        basic/patterns/mrtr#inputrequests."""
        if not isinstance(asks, dict) or not asks:
            raise TypeError("gather takes a non-empty dict: input request key -> a function that asks")
        for key, ask in asks.items():
            if not isinstance(key, str) or not key or not callable(ask):
                raise TypeError(f"gather: {key!r} must be a non-empty string mapped to a function that asks")
        from mcp_ref.server.modern.mrtr import InputRequired       # never raised in the legacy era
        answers, pending, state = {}, {}, None
        self._gathering = True
        try:
            for key, ask in asks.items():
                try:
                    with self._keyed(key):
                        answers[key] = ask()
                except InputRequired as stop:
                    pending.update(stop.asks)
                    state = stop.state
        finally:
            self._gathering = False
        if pending:
            answers.update(self._ask_together(asks, pending, state))
        return {key: answers[key] for key in asks}

    def _ask_together(self, asks: dict, pending: dict, state) -> dict:
        """``gather``'s unanswered asks (key -> (method, params)): in a modern request the run
        ends with all of them in one ``InputRequiredResult`` (server/modern/mrtr.py rule 3)."""
        from mcp_ref.server.modern.mrtr import InputRequired
        raise InputRequired(pending, state)

    # -- authorization (HTTP with auth=; Spec: basic/authorization): the caller's token
    @property
    def auth(self):
        """The ``auth.AccessToken`` of the request's bearer (subject, scopes, expiry,
        audience, client_id, claims); None over stdio or an unprotected server."""
        return getattr(self.session.transport, "auth", None)

    @property
    def subject(self) -> str | None:
        """Who the access token speaks for (``auth.subject``), or None."""
        return getattr(self.auth, "subject", None)

    @property
    def scopes(self) -> tuple:
        """The scopes the access token grants (empty without one)."""
        return tuple(getattr(self.auth, "scopes", ()))

    # -- client features: sampling, elicitation, roots (sampling.py, elicitation.py, roots.py).
    # Each raises CapabilityNotSupported locally, before sending, when the client did not
    # declare the feature or the session's revision does not know it; a tool turns that
    # into an isError result. In a 2026-07-28 request each ends the call with an
    # InputRequiredResult and returns the answer when the client retries: the function
    # runs again (server/modern/mrtr.py, which says how a function should behave then). Nested requests carry this request's id (related_id), honour
    # ``timeout`` (RequestTimeout) and are cancelled with this request.
    def sample(self, messages: list, *, max_tokens: int, system_prompt: str | None = None,
               key: str | None = None, **options) -> CreateMessageResult:
        """Ask the client's LLM for a message (``sampling/createMessage``); returns a
        ``CreateMessageResult``. ``messages`` holds ``SamplingMessage`` items (or wire
        dicts, or strings for user text). Options: ``model_preferences``,
        ``include_context``, ``temperature``, ``stop_sequences``, ``metadata``,
        ``tools``, ``tool_choice``, ``timeout``, ``meta``; ``key`` names the input
        request (see ``elicit``). Spec: client/sampling."""
        from mcp_ref.client import sampling  # client features load on first use
        wanted: dict = {"tools": {}} if options.get("tools") is not None else {}
        if options.get("include_context") not in (None, "none"):
            wanted["context"] = {}
        with self._needs({"sampling": wanted}), self._keyed(key):
            return sampling.create_message(self, messages, max_tokens=max_tokens, system_prompt=system_prompt,
                                           **options)

    def elicit(self, message: str, requested_schema: dict, *, timeout: float | None = None,
               key: str | None = None):
        """Ask the user to fill in a form (``elicitation/create``, form mode); returns an
        ``ElicitResult`` whose accepted content has been validated against the schema.
        ``key`` names the input request in 2026-07-28 (``inputRequests``; default
        ``elicit-<n>``); it must be unique in the request (``DuplicateInputKey``).
        Spec: client/elicitation; 2026-07-28 basic/patterns/mrtr."""
        from mcp_ref.client import elicitation  # client features load on first use
        with self._needs({"elicitation": {"form": {}}}), self._keyed(key):
            return elicitation.elicit_form(self, message, requested_schema, timeout=timeout)

    def elicit_url(self, message: str, url: str, elicitation_id: str | None = None, *,
                   timeout: float | None = None, key: str | None = None):
        """Send the user to ``url`` (URL mode elicitation, 2025-11-25 and later); returns an
        ``ElicitResult`` (accept = the user consented). In 2025-11-25 an ``elicitation_id``
        is required, and ``ctx.session.complete_elicitation(elicitation_id)`` announces the
        end; 2026-07-28 has neither (its changelog, item 11). Spec: client/elicitation."""
        from mcp_ref.client import elicitation  # client features load on first use
        with self._needs({"elicitation": {"url": {}}}), self._keyed(key):
            return elicitation.elicit_url(self, message, url, elicitation_id, timeout=timeout)

    def list_roots(self, *, timeout: float | None = None, key: str | None = None) -> list:
        """The client's roots (``roots/list``) as ``Root`` objects; ``key`` names the input
        request (see ``elicit``). Spec: client/roots."""
        from mcp_ref.client import roots  # client features load on first use
        with self._needs({"roots": {}}), self._keyed(key):
            return roots.list_roots(self, timeout=timeout)

    def _needs(self, required: dict):
        """In a 2026-07-28 request, a capability the request did not declare ends the
        call with -32021 (server/modern/mrtr.py rule 6); elsewhere a no-op."""
        from mcp_ref.server.modern import mrtr as server_mrtr
        return server_mrtr.needs(required, active=self.era is not None)

    # -- logging (Spec: server/utilities/logging); see server/utilities.py
    def log(self, level: str, data: Any, logger: str | None = None) -> bool:
        """Send ``notifications/message`` on this request's stream, before its response,
        unless the session's level filters it out (then False). ``level`` is one of the
        eight RFC 5424 levels (ValueError otherwise); ``data`` is any JSON value."""
        from mcp_ref.server.utilities import check_level
        check_level(level)
        return self.server._logs.send(self.session, level, data, logger, related_id=self.request_id, era=self.era)

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


# The requests a server function may ask the client, and the kind that names their keys
# (server/modern/mrtr.py rule 2).
INPUT_KINDS = {"elicitation/create": "elicit", "sampling/createMessage": "sample", "roots/list": "roots"}

