"""The client in the modern era (2026-07-28): choosing the era, request metadata,
reading modern results.

Rules (Spec 2026-07-28: basic/versioning#backward-compatibility-with-
initialization-based-versions, basic/transports/stdio#backward-compatibility,
basic/transports/streamable-http#backward-compatibility, basic/index#meta):

1. ``protocol_version="auto"`` (the default) probes with ``server/discover``
   carrying our newest modern revision. A ``DiscoverResult`` naming a modern
   revision we speak → the modern era. A recognized modern error
   (``is_modern_error``: -32020, -32021, -32022) → the server is modern: retry
   with a modern revision of its ``supported`` list, or, when it lists only
   legacy ones we speak (a dual-era server without our modern revision),
   ``initialize``. Any other error (legacy servers answer -32601, -32600 or
   -32602 before ``initialize``; over HTTP, 400, 404 or 405 without a modern
   error body), a success that is not a well-formed ``DiscoverResult`` (many
   legacy servers answer any method they do not know with ``{}``; "anything
   else identifies a legacy server") or no answer within ``init_timeout`` → the
   legacy ``initialize`` handshake, as before. Other HTTP failures (401, 403, no
   connection) are raised: they are not an answer about the era. The answer is kept for the
   client's life (a respawned stdio server is probed again).
2. A fixed revision is asked for as before: a legacy one runs ``initialize``
   with no probe; ``"2026-07-28"`` probes and refuses a server that is not
   modern (``UnsupportedProtocolVersion``).
3. In the modern era every request carries ``_meta``: the protocol version,
   the client capabilities, the client info, and the log level: the one set
   with ``set_logging_level`` (kept on the client, as the modern era has no
   ``logging/setLevel``), else ``"debug"`` when log messages have a listener
   (``on_log``, ``on("notifications/message")``, ``on_notification``: all of
   them, as a legacy server sends before ``logging/setLevel``), else none (no
   log messages). A caller's own ``_meta`` entries are kept. It is made again
   only when what it is made of changes (compared as objects: a new
   ``client_info`` is sent, one changed in place is not): made per request, it
   was a fifth of the client's own work per ``call_tool`` (bench/README.md).
4. Results are read as in the legacy era: ``strip`` removes ``resultType``,
   the cache hints and ``serverInfo`` from what the public methods parse, so a
   script sees the same objects in both eras. A ``resultType`` other than
   ``"complete"`` or ``"input_required"`` is invalid (-32603 locally). An
   absent one is ``"complete"``.

5. Multi round-trip (Spec 2026-07-28: basic/patterns/mrtr): an
   ``InputRequiredResult`` to ``tools/call``, ``prompts/get`` or
   ``resources/read`` is answered through the callbacks the client already
   has (``sampling``, ``elicitation``, ``elicitation_url``, ``roots``, and the
   approval hook), as a legacy server's requests are, and the request is sent
   again (a new id) with the original params, ``inputResponses`` and the
   ``requestState`` echoed exactly (``retry_params``). An answer that fails
   (the user rejected sampling) fails the call with
   that error: the modern era has no way to tell the server. At most
   ``MAX_INPUT_ROUNDS`` rounds. An interim result to another method is -32603.
6. Change notifications (Spec 2026-07-28: basic/patterns/subscriptions): in
   the modern era the client keeps one ``subscriptions/listen`` open
   (``Listening``) asking for every list change the server declares and for
   the resources subscribed with ``subscribe_resource``; subscribing or
   unsubscribing opens a new one (its acknowledgment awaited) and cancels the
   old. Notifications reach the same callbacks as in the legacy era; those of
   a replaced listen are dropped, so none is delivered twice.

7. ``x-mcp-header`` over HTTP (Spec 2026-07-28: streamable-http#custom-headers-
   from-tool-parameters): ``tools/call`` carries the ``Mcp-Param-*`` headers the
   tool's inputSchema asks for (the tool as last listed; one not listed yet gets
   none), and a listed tool whose annotations break the rules is left out of
   ``list_tools()`` with a warning (``valid_for_http``). Over stdio they are
   ignored, as the spec allows.

This module does no I/O and starts no threads: the Client sends (``ModernEra``, the
Client's methods of this era, send through its session).
"""
from __future__ import annotations

import threading
from typing import Any

from mcp_ref import types
from mcp_ref.protocol import lifecycle, modern
from mcp_ref.errors import (HEADER_MISMATCH, MISSING_REQUIRED_CLIENT_CAPABILITY, UNSUPPORTED_PROTOCOL_VERSION,
                            InvalidParamsError, McpError, RequestTimeout, SessionError,
                            UnsupportedProtocolVersion, get_logger)
from mcp_ref.client.modern.requesting import ModernRequests, check_result_type, with_meta
from mcp_ref.session.outbound import Pending
from mcp_ref.transports.http.modern import param_annotations, param_headers

AUTO = "auto"
MODERN_ERRORS = (HEADER_MISMATCH, MISSING_REQUIRED_CLIENT_CAPABILITY, UNSUPPORTED_PROTOCOL_VERSION)
# Spec 2026-07-28: basic/transports/streamable-http#backward-compatibility: the statuses a
# legacy server refuses a modern request with (a modern server adds a JSON-RPC error body).
LEGACY_STATUSES = (400, 404, 405)


def check_requested(version) -> str:
    """Rule 2: ``"auto"``, or a revision we speak (modern or legacy); else ``ValueError``."""
    if version == AUTO or version in lifecycle.SUPPORTED_REVISIONS:
        return version
    raise ValueError(f"protocol_version {version!r} is not a revision this library speaks; use 'auto' "
                     f"(the default), or one of {', '.join(modern.supported_versions())}")


def is_modern_error(exc: BaseException) -> bool:
    """Rule 1: an error only a modern server answers."""
    return isinstance(exc, McpError) and exc.code in MODERN_ERRORS


def newest(ours, versions) -> str | None:
    """The newest revision of ``ours`` (newest first) among ``versions``."""
    return next((version for version in ours if version in (versions or ())), None)


class Discovery:
    """A ``DiscoverResult`` as read (Spec 2026-07-28: server/discover#discoverresult)."""

    def __init__(self, versions: list, capabilities: dict, server_info, instructions: str | None):
        self.versions, self.capabilities = versions, capabilities
        self.server_info, self.instructions = server_info, instructions


def probe(request, requested: str, meta_for) -> tuple | None:
    """Rules 1 and 2: ``(version, Discovery)`` for a modern server, None for a legacy one.

    ``request(method, params)`` sends and waits (the caller's timeout); ``meta_for(version)``
    gives the ``_meta`` of a request in ``version``. Raises ``UnsupportedProtocolVersion``
    when the server is modern but shares no revision with us, or when ``requested`` is a
    modern revision the server does not speak."""
    version = requested if requested != AUTO else lifecycle.MODERN_REVISIONS[0]
    tried = set()
    while True:
        tried.add(version)
        discovery = None
        try:
            result = request("server/discover", with_meta(None, meta_for(version)))
            discovery = read_discover(result)          # a success that is no DiscoverResult raises (rule 1)
            offered = discovery.versions
        except McpError as exc:
            if not is_modern_error(exc):
                return _legacy(requested)              # a legacy server's refusal, or no DiscoverResult
            data: Any = exc.data if isinstance(exc.data, dict) else {}
            offered = data.get("supported") if isinstance(data.get("supported"), list) else []
        except SessionError as exc:
            if not isinstance(exc, RequestTimeout) and getattr(exc, "status", None) not in LEGACY_STATUSES:
                raise                                  # no connection, or auth: not an era question
            return _legacy(requested)                  # no answer in time, or HTTP 400/404/405 (no modern error)
        if discovery is not None and version in offered:
            return version, discovery
        other = newest(lifecycle.MODERN_REVISIONS, offered)
        if other is not None and other not in tried and (discovery is not None or requested == AUTO):
            version = other                            # a modern error retries only when asked for "auto"
            continue
        if requested == AUTO and newest(lifecycle.LEGACY_REVISIONS, offered):
            return None                                # a dual-era server without our modern revision
        raise UnsupportedProtocolVersion(version, offered)


def _legacy(requested: str):
    if requested != AUTO:
        raise UnsupportedProtocolVersion(requested, lifecycle.LEGACY_REVISIONS)
    return None


def read_discover(result) -> Discovery:
    """Raises InvalidParamsError for a result that is not a DiscoverResult."""
    check_result_type(result)
    versions = result.get("supportedVersions")
    if not (isinstance(versions, list) and all(isinstance(v, str) for v in versions)):
        raise InvalidParamsError("DiscoverResult.supportedVersions: expected a list of strings")
    capabilities = read_capabilities(result.get("capabilities"), "DiscoverResult.capabilities")
    info = (result.get("_meta") or {}).get(modern.SERVER_INFO) if isinstance(result.get("_meta"), dict) else None
    server_info = types.Implementation.from_dict(info) if isinstance(info, dict) else None
    instructions = result.get("instructions")
    return Discovery(versions, capabilities, server_info, instructions if isinstance(instructions, str) else None)


def read_capabilities(data, where: str = "capabilities") -> dict:
    if not isinstance(data, dict):
        raise InvalidParamsError(f"{where}: expected object")
    extensions = data.get("extensions")
    if extensions is not None and not (isinstance(extensions, dict) and all(
            isinstance(k, str) and "/" in k and isinstance(v, dict) for k, v in extensions.items())):
        raise InvalidParamsError(f"{where}.extensions: expected an object of prefixed names to objects")
    return data


# ---------------------------------------------------------------- subscriptions/listen (rule 6)
LIST_FLAGS = {"toolsListChanged": "tools", "promptsListChanged": "prompts", "resourcesListChanged": "resources"}


class Listening:
    """The client's one open ``subscriptions/listen`` (rule 6). ``start(params)`` sends the
    request and returns its ``Pending``; the Client feeds acknowledgments to ``acknowledged``."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.uris: set = set()              # resources subscribed (subscribe_resource)
        self.current: Pending | None = None     # the Pending of the open listen
        self._acks: dict = {}               # listen id -> Event, set by its acknowledgment
        self.active: object = None          # the listen acknowledged last, in wire order

    def reopen(self, start, capabilities: dict, timeout: float) -> None:
        """Open a listen for the current filter (every change the server can announce, and the
        subscribed URIs; none when empty), wait for its acknowledgment (up to ``timeout``),
        then cancel the one it replaces."""
        with self._lock:
            wanted: dict = {flag: True for flag, feature in LIST_FLAGS.items()
                            if lifecycle.has_capability(capabilities, feature + ".listChanged")}
            if self.uris and lifecycle.has_capability(capabilities, "resources.subscribe"):
                wanted["resourceSubscriptions"] = sorted(self.uris)
            old, self.current = self.current, None
            if wanted:
                self.current = start({"notifications": wanted})
                self._acks[self.current.id] = threading.Event()
            pending = self.current
        if pending is not None:
            self._acks[pending.id].wait(timeout)
        if old is not None:
            old.cancel("replaced by a new subscriptions/listen")
            self._acks.pop(old.id, None)

    def acknowledged(self, params: dict) -> None:
        subscription = (params.get("_meta") or {}).get(modern.SUBSCRIPTION_ID) \
            if isinstance(params.get("_meta"), dict) else None
        event = self._acks.get(subscription)
        if event is not None:
            self.active = subscription
            event.set()

    def stale(self, params) -> bool:
        """A notification of a listen already replaced when it was read: the one
        acknowledged after it delivers the same notifications. Notifications and
        acknowledgments are handled in wire order (one thread), so none is lost."""
        meta = params.get("_meta") if isinstance(params, dict) else None
        if not isinstance(meta, dict) or modern.SUBSCRIPTION_ID not in meta:
            return False
        return meta[modern.SUBSCRIPTION_ID] != self.active


# ---------------------------------------------------------------- x-mcp-header (rule 7)
def valid_for_http(tools: list) -> list:
    kept = []
    for tool in tools:
        try:
            param_annotations(tool.input_schema)
        except ValueError as exc:
            get_logger("mcp_ref.client").warning("tool %r left out: invalid x-mcp-header: %s", tool.name, exc)
            continue
        kept.append(tool)
    return kept


# ---------------------------------------------------------------- the Client's modern-era methods
class ModernEra(ModernRequests):
    """The ``Client`` methods of rules 3 to 7 (a mixin, as client_requests.py's).
    Needs the Client's ``session``, ``protocol_version``, ``capabilities()``,
    ``client_info``, ``_log_level``, ``_listeners``, ``on_notification``, ``_asking``,
    ``_listening``, ``_restarter``, ``_answer_input()``, ``_tool_cache``, ``_lock``,
    ``server_capabilities``, ``init_timeout`` and ``_live_session()``."""

    def _relisten(self, session=None) -> None:
        """Rule 6: (re)open the listen stream for the current filter."""
        session = session or self._live_session()
        version = self.protocol_version

        def start(params):
            return session.start_request("subscriptions/listen", with_meta(params, self._modern_meta(version)))
        self._listening.reopen(start, self.server_capabilities, self.init_timeout)

    def _param_headers(self, params: dict) -> dict:
        """The ``Mcp-Param-*`` headers of a ``tools/call`` (the tool as last listed; none for a
        tool not listed, or whose annotations break the rules)."""
        with self._lock:
            tool = self._tool_cache.get(params.get("name"))
        arguments = params.get("arguments")
        if tool is None or not isinstance(arguments, dict):
            return {}
        try:
            return param_headers(param_annotations(tool.input_schema), arguments)
        except ValueError:
            return {}
