"""Elicitation: the form-schema subset, defaults, validation of answers, URL mode.

Rules:

1. Elicitation exists from revision 2025-06-18; URL mode, titled enums
   (``oneOf``/``anyOf`` of ``{const, title}``) and multi-select arrays from
   2025-11-25. Nothing a session's revision does not know is sent to it:
   asking anyway raises ``CapabilityNotSupported`` locally.
2. A form's ``requestedSchema`` is the flat subset of ``elicitation_schema``
   (string with formats, number/integer with bounds, boolean, every enum
   form, defaults); the server checks it before sending (``strict``), the
   client on receipt (tolerating extra annotations; -32602 otherwise).
   Spec: client/elicitation#requested-schema.
3. Modes: a client's ``elicitation: {}`` counts as form mode only;
   ``{"form": {}, "url": {}}`` names each. A server never sends a mode the
   client did not declare, and a client answers an undeclared mode with
   -32602. Spec: client/elicitation#capabilities, #error-handling.
4. Before an ``accept`` is answered, the client fills in every property that
   has a ``default`` and is missing (SEP-1034), then validates the content;
   content that does not match is never sent (-32603 instead). The server
   fills and validates again and raises ``InvalidElicitationContent``.
   Spec: client/elicitation#form-mode-security.
5. URL mode: the URL is an absolute http(s) URL. In 2025-11-25 an
   ``elicitationId`` is required, opaque and unique per server; the client
   remembers the ids it accepted (and those of a -32042 error) and reports
   ``notifications/elicitation/complete`` only for those, once; others are
   ignored. 2026-07-28 dropped the id, the notification and -32042 (its
   changelog, item 11): a URL elicitation is ``mode``, ``message`` and ``url``
   inside a result's ``inputRequests``, the callback sees ``elicitation_id``
   None, and the client learns the outcome by retrying; an id a server sends
   anyway is ignored. Spec: client/elicitation#url-mode-elicitation-requests,
   #completion-notifications-for-url-mode-elicitation,
   #url-elicitation-required-error; 2026-07-28 client/elicitation.

This module does no I/O and starts no threads. Spec: client/elicitation.
"""
import threading
import uuid
from typing import Any, Callable, Optional
from urllib.parse import urlsplit

from mcp_ref.protocol import lifecycle
from mcp_ref.client.approval import answer_with
from mcp_ref.client.elicitation_schema import (FORMATS, InvalidElicitationContent, InvalidElicitationSchema,
                                 check_requested_schema, content_problem, fill_defaults)
from mcp_ref.errors import CapabilityNotSupported, InternalError, InvalidParamsError, UrlElicitationRequiredError
from mcp_ref.types import ElicitRequestParams, ElicitResult

__all__ = ["InvalidElicitationSchema", "InvalidElicitationContent", "check_requested_schema", "fill_defaults",
           "content_problem", "client_modes", "check_mode_allowed", "check_url", "new_elicitation_id",
           "url_elicitation", "url_elicitation_required", "ElicitationTracker", "FORMATS", "elicit_form",
           "elicit_url", "send_complete", "answer_elicitation"]

FORM_SINCE = "2025-06-18"
URL_SINCE = "2025-11-25"


# ---------------------------------------------------------------------- modes (rules 1 and 3)
def client_modes(capabilities: Optional[dict]) -> set:
    """The elicitation modes a client declared: ``{}`` means form only (rule 3)."""
    declared = (capabilities or {}).get("elicitation")
    if not isinstance(declared, dict):
        return set()
    modes = {mode for mode in ("form", "url") if isinstance(declared.get(mode), dict)}
    return modes or {"form"}


def check_mode_allowed(mode: str, revision: Optional[str], capabilities: Optional[dict]) -> None:
    """Raise ``CapabilityNotSupported`` unless a server may send ``mode`` (rules 1 and 3)."""
    since = URL_SINCE if mode == "url" else FORM_SINCE
    if not lifecycle.at_least(revision, since):
        raise CapabilityNotSupported(f"{mode} mode elicitation needs protocol revision {since} or later; "
                                     f"this session speaks {revision}")
    if mode not in client_modes(capabilities):
        raise CapabilityNotSupported(f"the client did not declare elicitation {mode!r} mode "
                                     f"(capability {(capabilities or {}).get('elicitation')!r})")


# ---------------------------------------------------------------------- URL mode (rule 5)
def check_url(url: Any) -> str:
    """Return ``url`` when it is an absolute http(s) URL; raise ``ValueError`` otherwise."""
    if not isinstance(url, str):
        raise ValueError(f"an elicitation URL is a string, not {url!r}")
    parts = urlsplit(url)
    if parts.scheme not in ("https", "http") or not parts.netloc or any(c.isspace() for c in url):
        raise ValueError(f"an elicitation URL must be an absolute http(s) URL: {url!r}")
    return url


def new_elicitation_id() -> str:
    """A fresh, unguessable elicitation id."""
    return str(uuid.uuid4())


def url_elicitation(message: str, url: str, elicitation_id: Optional[str] = None,
                    revision: Optional[str] = None) -> dict:
    """The wire params of a URL mode elicitation (``ElicitRequestURLParams``): with an
    ``elicitationId`` (a fresh one unless given), except in 2026-07-28, which has none (rule 5)."""
    if not isinstance(message, str):
        raise TypeError("message must be a string")
    params = {"mode": "url", "message": message, "url": check_url(url)}
    if revision not in lifecycle.MODERN_REVISIONS:
        params["elicitationId"] = elicitation_id or new_elicitation_id()
    return params


def url_elicitation_required(elicitations: list, message: str = "This request requires more information.",
                             capabilities: Optional[dict] = None,
                             revision: Optional[str] = None) -> UrlElicitationRequiredError:
    """The -32042 error carrying ``elicitations`` (each a dict from ``url_elicitation``).

    With ``capabilities``/``revision`` given, first checks the client may
    receive it (rules 1 and 3), raising ``CapabilityNotSupported`` if not.
    Raise the returned error from a tool: it travels as a JSON-RPC error.
    """
    if capabilities is not None or revision is not None:
        check_mode_allowed("url", revision, capabilities)
    items = [dict(item) for item in elicitations]
    for item in items:
        if item.get("mode") != "url" or not isinstance(item.get("elicitationId"), str):
            raise ValueError("a URL-elicitation-required error carries only URL mode elicitations with an "
                             "elicitationId (client/elicitation#url-elicitation-required-error)")
        check_url(item.get("url"))
    if not items:
        raise ValueError("a URL-elicitation-required error needs at least one elicitation")
    return UrlElicitationRequiredError(message, {"elicitations": items})


class ElicitationTracker:
    """The client's record of URL elicitations it is waiting on (rule 5). Thread-safe.

    ``expect(id)`` before (or when) the user is sent to the URL; the
    notification calls ``complete(id)``, which is true only the first time for
    an expected id; ``wait(id, timeout)`` blocks until then.
    """

    def __init__(self, on_complete: Optional[Callable[[str], None]] = None):
        self.on_complete = on_complete
        self._lock = threading.Lock()
        self._events: dict = {}                # id -> Event, set once the id completed

    def expect(self, elicitation_id: str) -> None:
        with self._lock:
            self._events.setdefault(elicitation_id, threading.Event())

    def complete(self, elicitation_id: Any) -> bool:
        """Record a completion; False (ignored) for an unknown or already completed id."""
        with self._lock:
            event = self._events.get(elicitation_id) if isinstance(elicitation_id, str) else None
            if event is None or event.is_set():
                return False
            event.set()
        if self.on_complete is not None:
            self.on_complete(elicitation_id)
        return True

    def is_pending(self, elicitation_id: str) -> bool:
        with self._lock:
            return elicitation_id in self._events and not self._events[elicitation_id].is_set()

    def wait(self, elicitation_id: str, timeout: Optional[float] = None) -> bool:
        """Block until ``elicitation_id`` completes; False on timeout. An id never
        expected is expected from now on."""
        with self._lock:
            event = self._events.setdefault(elicitation_id, threading.Event())
        return event.wait(timeout)


# ---------------------------------------------------------------------- the server side
def _action(data: Any) -> str:
    action = data.get("action") if isinstance(data, dict) else None
    if action not in ("accept", "decline", "cancel"):
        raise InvalidElicitationContent(f"an elicitation result's action is accept, decline or cancel: {data!r}")
    return action


def _filled(schema: dict, content: Any, error: type, whose: str) -> dict:
    """``content`` with the missing defaults filled in, when it then matches ``schema`` (rule 4);
    else ``error`` saying ``whose`` answer does not match."""
    content = fill_defaults(schema, content)
    problem = content_problem(schema, content)
    if problem:
        raise error(f"{whose} answer does not match the requested schema: {problem}")
    return content


def elicit_form(peer, message: str, requested_schema: dict, *, timeout: Optional[float] = None) -> ElicitResult:
    """Send a form mode ``elicitation/create`` through ``peer`` (a server ``Context``
    or session); see ``Context.elicit``.

    Raises:
        CapabilityNotSupported: rules 1 and 3, before sending.
        InvalidElicitationSchema: rule 2, before sending.
        InvalidElicitationContent: the accepted content does not match (rule 4).
        McpError, RequestTimeout, RequestCancelled, ConnectionClosed: as for any request.
    """
    version = peer.protocol_version
    check_mode_allowed("form", version, peer.client_capabilities)
    if not isinstance(message, str):
        raise TypeError("the elicitation message is a string")
    check_requested_schema(requested_schema, version)
    params = {"message": message, "requestedSchema": requested_schema}
    if lifecycle.at_least(version, URL_SINCE):
        params = {"mode": "form", **params}
    data = peer.request("elicitation/create", params, timeout=timeout)
    if _action(data) == "accept":
        content = _filled(requested_schema, data.get("content"), InvalidElicitationContent, "the client's")
        return ElicitResult.from_dict(dict(data, content=content))
    return ElicitResult.from_dict({k: v for k, v in data.items() if k != "content"})


def elicit_url(peer, message: str, url: str, elicitation_id: Optional[str] = None, *,
               timeout: Optional[float] = None) -> ElicitResult:
    """Send a URL mode ``elicitation/create`` (2025-11-25 and later) through ``peer``.

    ``accept`` means the user consented to open the URL, not that the
    interaction is done; in 2025-11-25 send ``notifications/elicitation/complete``
    with ``send_complete`` when it is. 2026-07-28 has no ``elicitation_id``
    (rule 5): one given is not sent (``server/modern/mrtr.py`` drops it). Raises as ``elicit_form``, and
    ``ValueError`` for a URL that is not absolute http(s) or, in 2025-11-25, a
    missing ``elicitation_id``.
    """
    version = peer.protocol_version
    check_mode_allowed("url", version, peer.client_capabilities)
    if version not in lifecycle.MODERN_REVISIONS and not (isinstance(elicitation_id, str) and elicitation_id):
        raise ValueError("a URL mode elicitation needs an elicitation_id (see new_elicitation_id())")
    # In 2026-07-28 the id (given, or a fresh one) is left out by server/modern/mrtr.py's ask.
    data = peer.request("elicitation/create", url_elicitation(message, url, elicitation_id), timeout=timeout)
    _action(data)
    return ElicitResult.from_dict({k: v for k, v in data.items() if k != "content"})


def send_complete(session, elicitation_id: str) -> None:
    """Send ``notifications/elicitation/complete`` to the client of ``session``
    (the one that was asked; rule 5). Raises ``CapabilityNotSupported`` when it
    cannot have URL elicitations."""
    check_mode_allowed("url", session.protocol_version, session.client_capabilities)
    session.notify("notifications/elicitation/complete", {"elicitationId": elicitation_id})


# ---------------------------------------------------------------------- the client side
def answer_elicitation(ctx, params: dict, *, form_callback: Optional[Callable], url_callback: Optional[Callable],
                       approve: Optional[Callable] = None, server_info: Any = None,
                       version: Optional[str] = None, tracker: Optional[ElicitationTracker] = None) -> dict:
    """Answer ``elicitation/create`` with the callback of its mode; returns the wire result.

    Raises:
        InvalidParamsError: an undeclared mode, or a malformed request (-32602).
        UserRejectedError: the approval hook denied (-1).
        InternalError: the accepted content does not match the schema (rule 4);
            nothing that does not match is ever sent.
    """
    mode = params.get("mode", "form")
    callback = {"form": form_callback, "url": url_callback}.get(mode)
    if mode == "url" and not lifecycle.at_least(version, URL_SINCE):
        callback = None
    if callback is None:
        raise InvalidParamsError(f"elicitation/create: mode {mode!r} was not declared by this client")
    if not isinstance(params.get("message"), str):
        raise InvalidParamsError("elicitation/create: message must be a string")
    schema = params.get("requestedSchema")
    try:
        if mode == "form":
            check_requested_schema(schema, version, strict=False)
        else:
            check_url(params.get("url"))
            if version in lifecycle.MODERN_REVISIONS:       # rule 5: 2026-07-28 has no elicitationId
                params = {key: value for key, value in params.items() if key != "elicitationId"}
            elif not isinstance(params.get("elicitationId"), str):
                raise ValueError("a 2025-11-25 URL mode elicitation needs an elicitationId, a string")
        typed = ElicitRequestParams.from_dict(params)
    except (CapabilityNotSupported, KeyError, TypeError, ValueError) as exc:
        raise InvalidParamsError(f"elicitation/create: {exc}") from None
    result = answer_with(approve, "elicitation", "elicitation/create", typed, ctx, server_info,
                         lambda request: _client_result(callback(request), mode, schema, version))
    result = _client_result(result, mode, schema, version)         # the hook's edit is checked too
    if mode == "url" and result.action == "accept" and tracker is not None and "elicitationId" in params:
        tracker.expect(params["elicitationId"])
    return result.to_dict(version)


def _client_result(answer: Any, mode: str, schema: Optional[dict], version: Optional[str]) -> ElicitResult:
    """The callback's answer as a checked ElicitResult: defaults filled, content validated (rule 4)."""
    data = answer.to_dict(version) if hasattr(answer, "to_dict") else answer
    try:
        action = _action(data)
    except InvalidElicitationContent as exc:
        raise InternalError(f"the elicitation callback returned no valid answer: {exc}") from None
    if action != "accept" or mode == "url":
        return ElicitResult.from_dict({"action": action})
    assert schema is not None               # form mode: requestedSchema was checked on arrival
    content = _filled(schema, data.get("content"), InternalError, "the user's")
    return ElicitResult.from_dict({**data, "content": content})
