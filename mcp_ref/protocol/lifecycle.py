"""Protocol revisions, version negotiation, and what each connection state allows.

Rules (Spec: basic/lifecycle):

1. Revisions we speak, newest first: ``SUPPORTED_REVISIONS`` (both eras, rule
   6); ``LATEST_REVISION`` is the newest. ``LEGACY_REVISIONS`` are those an
   ``initialize`` negotiates, newest ``LATEST_LEGACY_REVISION``; ``negotiate``,
   ``is_supported`` and ``check_requested`` speak of them.
2. Negotiation: the client sends the revision it wants in ``initialize``, one
   it supports (``check_requested``: anything else is refused before
   connecting). A server answers that revision when it supports it, otherwise
   its latest. A client that does not support the answer disconnects
   (``UnsupportedProtocolVersion``). Spec: basic/lifecycle#version-negotiation
   (the client MUST send a version it supports).
3. Before ``initialize`` has been answered, a server answers only ``ping`` and
   ``initialize``; anything else gets a JSON-RPC error (never silence), so a
   client that probes with a method we do not know can fall back.
   ``initialize`` is accepted once per session.
4. JSON-RPC batches exist only in revision 2025-03-26 (added there, removed
   in 2025-06-18); every other revision rejects them.
5. Requests of a capability the receiver did not declare are answered -32601;
   a sender refuses locally to use a capability the peer did not declare.

6. Two eras (Spec 2026-07-28: basic/versioning#terminology). The revisions
   above open with ``initialize`` (legacy); ``MODERN_REVISIONS`` carry their
   version, client capabilities and client info in every request's ``_meta``
   and have no handshake. ``is_modern_request`` tells them apart per request;
   their rules are in protocol/modern.py.

Per-revision differences are data here (``since``), so feature code asks
``at_least(version, "2025-06-18")`` instead of comparing strings by hand.
This module does no I/O and starts no threads.
"""
from __future__ import annotations

from mcp_ref.errors import CapabilityNotSupported, InvalidRequestError, MethodNotFoundError

LATEST_LEGACY_REVISION = "2025-11-25"
LEGACY_REVISIONS = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
# Rule 6: the per-request revisions (no initialize), newest first; see protocol/modern.py.
MODERN_REVISIONS = ("2026-07-28",)
LATEST_REVISION = MODERN_REVISIONS[0]
SUPPORTED_REVISIONS = MODERN_REVISIONS + LEGACY_REVISIONS
PROTOCOL_VERSION_META = "io.modelcontextprotocol/protocolVersion"
# Spec: basic/transports#protocol-version-header: a server without the header assumes this.
HTTP_DEFAULT_REVISION = "2025-03-26"

# Connection states, in order.
NEW = "new"                  # nothing yet
INITIALIZING = "initializing"  # initialize answered, initialized not yet received
READY = "ready"              # initialized received (server) / sent (client)


def negotiate(requested: str | None) -> str:
    """The revision a server answers to a client that asked for ``requested`` in ``initialize``."""
    return requested if requested in LEGACY_REVISIONS else LATEST_LEGACY_REVISION


def is_supported(version: str | None) -> bool:
    """Rule 1: a revision an ``initialize`` may settle on (a legacy one)."""
    return version in LEGACY_REVISIONS


def is_modern_request(params) -> bool:
    """Rule 6: does this request's ``_meta`` name its protocol version (a modern request)?"""
    if type(params) is not dict:
        return False
    meta = params.get("_meta")
    return type(meta) is dict and PROTOCOL_VERSION_META in meta


def check_requested(version) -> str:
    """Rule 2: the legacy revision a client may ask for in ``initialize``, or ValueError
    naming the ones it may."""
    if not (isinstance(version, str) and version in LEGACY_REVISIONS):
        raise ValueError(f"protocol_version {version!r} is not a revision this library speaks; "
                         f"use one of {', '.join(LEGACY_REVISIONS)} (default {LATEST_LEGACY_REVISION})")
    return version


def at_least(version: str | None, revision: str) -> bool:
    """True when ``version`` is ``revision`` or newer (ISO dates compare as strings)."""
    return version is not None and version >= revision


def batches_allowed(version: str | None) -> bool:
    """Spec: 2025-03-26 basic/index#batching; removed in 2025-06-18."""
    return version == "2025-03-26"


def check_inbound(state: str, method: str) -> None:
    """Raise the error a server answers for ``method`` arriving in ``state``.

    Raises:
        InvalidRequestError: a request other than ping/initialize before
            initialization, or a second initialize.
    """
    if method == "initialize" and state != NEW:
        raise InvalidRequestError("Invalid Request: the session is already initialized")
    if state == NEW and method not in ("ping", "initialize"):
        raise InvalidRequestError(f"Invalid Request: {method!r} received before initialization "
                                  "(send initialize first)")


def has_capability(capabilities: dict | None, path: str) -> bool:
    """``path`` like ``"tools"`` or ``"resources.subscribe"`` or ``"elicitation.url"``."""
    node = capabilities or {}
    for part in path.split("."):
        if not isinstance(node, dict) or part not in node or node[part] is None or node[part] is False:
            return False
        node = node[part]
    return True


def require_peer_capability(capabilities: dict | None, path: str, what: str) -> None:
    """Refuse locally to use a feature the peer did not declare."""
    if not has_capability(capabilities, path):
        raise CapabilityNotSupported(f"{what} needs the peer capability {path!r}, which it did not declare")


def require_own_capability(capabilities: dict | None, path: str | None, method: str) -> None:
    """Answer -32601 for a request of a capability we did not declare."""
    if path and not has_capability(capabilities, path):
        raise MethodNotFoundError(f"Method not found: {method} (capability {path!r} not declared)")
