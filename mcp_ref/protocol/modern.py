"""The modern era (revision 2026-07-28): per-request metadata, discovery, result shapes.

A modern request is self-contained: no ``initialize``, no session state. Its
``_meta`` names the protocol version, the client's capabilities and (should)
the client; the server serves each request on that alone. This module holds
the rules both sides share; the server's use of them is server/modern/serve.py, the
client's is client/modern/era.py. protocol/lifecycle.py rule 6 tells the eras apart.

Rules (Spec 2026-07-28: basic/index#meta, basic/versioning, server/discover,
server/utilities/caching, basic/index#error-codes, server/resources#error-handling):

1. A modern request's ``_meta`` holds ``io.modelcontextprotocol/protocolVersion``
   (a string) and ``io.modelcontextprotocol/clientCapabilities`` (an object),
   both required, and may hold ``io.modelcontextprotocol/clientInfo`` (an
   Implementation: ``name`` and ``version`` strings) and
   ``io.modelcontextprotocol/logLevel`` (one of the eight levels). Missing or
   malformed → -32602 (``read_meta``). A version that is not modern →
   -32022 ``UnsupportedProtocolVersionError`` with ``data.supported`` (every
   revision we speak, newest first: a dual-era server offers both eras) and
   ``data.requested``.
2. Every result carries ``resultType`` (``"complete"``, or ``"input_required"``
   for a multi round-trip interim result) and ``io.modelcontextprotocol/serverInfo``
   in its ``_meta`` (``finish``).
3. The results of ``CACHEABLE`` methods carry ``ttlMs`` and ``cacheScope``.
   Our choice where the spec leaves room: ``ttlMs`` 0 (immediately stale: a
   server here can add and remove tools at any time) and scope ``"public"`` for
   the lists and discovery (the same for every caller), ``"private"`` for
   ``resources/read`` (a resource function may read per-user data). A server
   changes them in ``Server.cache_hints``. Interim results carry none.
4. ``LEGACY_ONLY`` methods do not exist in the modern era (-32601);
   ``MODERN_ONLY`` methods are served only there (without the ``_meta`` of
   rule 1 they are malformed, -32602, whatever the session's state).
5. Resource not found is -32602 (it was -32002): ``translate_error``.
6. What a modern client is told (``capabilities``): the server's capabilities
   without the legacy ``tasks`` (tasks are the ``io.modelcontextprotocol/tasks``
   extension here) and without the change notifications no request of this
   era can receive (``listChanged``, ``subscribe``) unless the server serves
   ``subscriptions/listen``.

This module does no I/O and starts no threads.
"""
from __future__ import annotations

from mcp_ref.protocol import lifecycle
from mcp_ref.errors import InvalidParamsError, McpError, ResourceNotFoundError, UnsupportedProtocolVersionError

MODERN_REVISION = lifecycle.MODERN_REVISIONS[0]

# Reserved _meta keys. Spec 2026-07-28: basic/index#meta.
PROTOCOL_VERSION = lifecycle.PROTOCOL_VERSION_META
CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
CLIENT_INFO = "io.modelcontextprotocol/clientInfo"
LOG_LEVEL = "io.modelcontextprotocol/logLevel"
SERVER_INFO = "io.modelcontextprotocol/serverInfo"
SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"
TASKS_EXTENSION = "io.modelcontextprotocol/tasks"

LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")

# Rule 3. Spec 2026-07-28: server/utilities/caching#cacheable-results.
CACHEABLE = ("server/discover", "tools/list", "prompts/list", "resources/list", "resources/templates/list",
             "resources/read")
CACHE_HINTS = {method: (0, "private" if method == "resources/read" else "public") for method in CACHEABLE}

# Rule 4. Spec 2026-07-28: changelog (removed methods), basic/patterns/subscriptions.
LEGACY_ONLY = frozenset({"initialize", "ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe",
                         "tasks/list", "tasks/result"})
MODERN_ONLY = frozenset({"server/discover", "subscriptions/listen", "tasks/update"})

# Spec 2026-07-28: basic/patterns/mrtr#supported-requests.
INPUT_REQUIRED_METHODS = frozenset({"tools/call", "prompts/get", "resources/read"})


def supported_versions() -> list:
    """Every revision we speak, newest first (rule 1; ``DiscoverResult.supportedVersions``)."""
    return list(lifecycle.SUPPORTED_REVISIONS)


class RequestMeta:
    """What one modern request says about its client (rule 1)."""

    __slots__ = ("version", "capabilities", "client_info", "log_level")

    def __init__(self, version: str, capabilities: dict, client_info: dict | None = None,
                 log_level: str | None = None):
        self.version, self.capabilities, self.client_info, self.log_level = version, capabilities, client_info, log_level

    def to_meta(self) -> dict:
        """The ``_meta`` entries a client sends for this request."""
        meta = {PROTOCOL_VERSION: self.version, CLIENT_CAPABILITIES: self.capabilities,
                CLIENT_INFO: self.client_info, LOG_LEVEL: self.log_level}
        return {key: value for key, value in meta.items() if value is not None}


def read_meta(params) -> RequestMeta:
    """Rule 1: the request's metadata, or the error the server answers.

    Raises:
        InvalidParamsError: a required field is missing or a field is malformed.
        UnsupportedProtocolVersionError: the version is not a modern one we serve.
    """
    meta = params.get("_meta") if isinstance(params, dict) else None
    if not isinstance(meta, dict):
        raise InvalidParamsError(f"Invalid params: a {MODERN_REVISION} request needs _meta with "
                                 f"{PROTOCOL_VERSION} and {CLIENT_CAPABILITIES}")
    version = meta.get(PROTOCOL_VERSION)
    if not isinstance(version, str):
        raise InvalidParamsError(f"Invalid params: _meta[{PROTOCOL_VERSION!r}] must be a string"
                                 if PROTOCOL_VERSION in meta else
                                 f"Invalid params: _meta[{PROTOCOL_VERSION!r}] is required")
    if version not in lifecycle.MODERN_REVISIONS:
        note = " (it is served after initialize)" if version in lifecycle.LEGACY_REVISIONS else ""
        raise UnsupportedProtocolVersionError(f"Unsupported protocol version: {version!r}{note}",
                                              {"supported": supported_versions(), "requested": version})
    capabilities = meta.get(CLIENT_CAPABILITIES)
    if not isinstance(capabilities, dict):
        raise InvalidParamsError(f"Invalid params: _meta[{CLIENT_CAPABILITIES!r}] must be an object"
                                 if CLIENT_CAPABILITIES in meta else
                                 f"Invalid params: _meta[{CLIENT_CAPABILITIES!r}] is required")
    info = meta.get(CLIENT_INFO)
    if info is not None and not (isinstance(info, dict) and isinstance(info.get("name"), str)
                                 and isinstance(info.get("version"), str)):
        raise InvalidParamsError(f"Invalid params: _meta[{CLIENT_INFO!r}] must be an Implementation "
                                 "(name and version strings)")
    level = meta.get(LOG_LEVEL)
    if level is not None and level not in LOG_LEVELS:
        raise InvalidParamsError(f"Invalid params: _meta[{LOG_LEVEL!r}] must be one of {', '.join(LOG_LEVELS)}",
                                 {"level": level})
    return RequestMeta(version, capabilities, info, level)


def finish(method: str, result: dict, server_info: dict | None, hints: dict | None = None) -> dict:
    """Rules 2 and 3: a handler's result as a modern client receives it."""
    result = dict(result)
    result.setdefault("resultType", "complete")
    if server_info is not None:
        meta = result.get("_meta")
        result["_meta"] = {**meta, SERVER_INFO: server_info} if isinstance(meta, dict) else {SERVER_INFO: server_info}
    if result["resultType"] == "complete" and method in CACHEABLE:
        ttl, scope = (hints or CACHE_HINTS).get(method, CACHE_HINTS[method])
        result.setdefault("ttlMs", ttl)
        result.setdefault("cacheScope", scope)
    return result


def translate_error(exc: McpError) -> McpError:
    """Rule 5: the error a modern client gets for ``exc``."""
    if isinstance(exc, ResourceNotFoundError):
        return InvalidParamsError(exc.message, exc.data)
    return exc


def capabilities(declared: dict, *, listen: bool = False, tasks: bool = False) -> dict:
    """Rule 6: what a modern client is told, from what the server declares.
    ``listen``: ``subscriptions/listen`` is served (change notifications exist);
    ``tasks``: the tasks extension is offered."""
    told = {}
    for key, value in declared.items():
        if key == "tasks":
            continue
        if key in ("tools", "prompts", "resources") and isinstance(value, dict) and not listen:
            value = {k: v for k, v in value.items() if k not in ("listChanged", "subscribe")}
        told[key] = value
    if tasks and "tasks" in declared:
        told["extensions"] = {**(told.get("extensions") or {}), TASKS_EXTENSION: {}}
    return told
