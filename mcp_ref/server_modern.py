"""How a Server serves a modern (2026-07-28) request, beside the legacy handshake.

The server is dual-era (Spec 2026-07-28: basic/versioning#backward-compatibility-
with-initialization-based-versions): ``initialize`` still opens a legacy
session; a request whose ``_meta`` names its protocol version is served here,
on that request alone, whatever the connection did before.

Rules:

1. ``Server._handle_request`` hands a request here when it is modern
   (lifecycle.py rule 6) or its method exists only in the modern era
   (modern.py rule 4). Its ``_meta`` is read first (modern.py rule 1: -32602,
   -32022); the method must be one of the server's dispatch table and not
   legacy-only (-32601); its capability must be one a modern client is told
   (modern.py rule 6, else -32601).
2. The handler runs with a ``Context`` whose ``era`` is the request's
   metadata: ``ctx.protocol_version``, ``ctx.client_capabilities``,
   ``ctx.client_info`` and the log level come from it, never from the session
   (Spec 2026-07-28: basic/index#statelessness).
3. The result is finished by modern.py rules 2 and 3 (``resultType``,
   ``serverInfo``, cache hints); errors by rule 5 (resource not found -32602).
4. ``preflight`` is what the HTTP transport checks before it makes a session
   for the request, so the refusals the spec gives a status (400, 404) get it.

Spec 2026-07-28: basic/versioning, basic/index#meta, server/discover.
"""
from __future__ import annotations

from . import lifecycle, modern
from .errors import McpError, MethodNotFoundError

__all__ = ["serve", "preflight", "discover", "told_capabilities"]


def is_modern(method: str, params) -> bool:
    """Rule 1: is this request served here?"""
    return method in modern.MODERN_ONLY or lifecycle.is_modern_request(params)


def told_capabilities(server) -> dict:
    """What a modern client is told (modern.py rule 6)."""
    return modern.capabilities(server.capabilities(), listen="subscriptions/listen" in server._request_handlers)


def preflight(server, method: str, params, check_headers=None) -> modern.RequestMeta:
    """Rules 1 and 4: the request's metadata, or the McpError it is answered with.
    ``check_headers(version)``: a transport's check, run once the metadata is read."""
    meta = modern.read_meta(params)
    if check_headers is not None:
        problem = check_headers(meta.version)
        if problem is not None:
            raise problem
    entry = server._request_handlers.get(method)
    if entry is None or method in modern.LEGACY_ONLY:
        raise MethodNotFoundError(f"Method not found: {method}")
    lifecycle.require_own_capability(told_capabilities(server), entry[1], method)
    return meta


def serve(server, ctx, method: str, params: dict) -> dict:
    """Rules 1 to 3: serve one modern request."""
    ctx.era = preflight(server, method, params)
    handler = server._request_handlers[method][0]
    try:
        result = server._run_handler(handler, ctx, params)
    except McpError as exc:
        translated = modern.translate_error(exc)
        if translated is exc:
            raise
        raise translated from None
    return modern.finish(method, result, server._server_info(ctx.era.version), server.cache_hints)


def discover(server, ctx) -> dict:
    """``server/discover``: versions, capabilities, identity (serverInfo is added by ``finish``).
    Spec 2026-07-28: server/discover#response."""
    result = {"supportedVersions": modern.supported_versions(), "capabilities": told_capabilities(server)}
    if server.instructions:
        result["instructions"] = server.instructions
    return result
