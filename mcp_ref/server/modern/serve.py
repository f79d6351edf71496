"""How a Server serves a modern (2026-07-28) request, beside the legacy handshake.

The server is dual-era (Spec 2026-07-28: basic/versioning#backward-compatibility-
with-initialization-based-versions): ``initialize`` still opens a legacy
session; a request whose ``_meta`` names its protocol version is served here,
on that request alone, whatever the connection did before.

Rules:

1. ``Server._handle_request`` hands a request here when it is modern
   (protocol/lifecycle.py rule 6) or its method exists only in the modern era
   (protocol/modern.py rule 4). Its ``_meta`` is read first (protocol/modern.py rule 1: -32602,
   -32022); the method must be one of the server's dispatch table and not
   legacy-only (-32601); its capability must be one a modern client is told
   (protocol/modern.py rule 6, else -32601).
2. The handler runs with a ``Context`` whose ``era`` is the request's
   metadata: ``ctx.protocol_version``, ``ctx.client_capabilities``,
   ``ctx.client_info`` and the log level come from it, never from the session
   (Spec 2026-07-28: basic/index#statelessness).
3. The result is finished by protocol/modern.py rules 2 and 3 (``resultType``,
   ``serverInfo``, cache hints); errors by rule 5 (resource not found -32602).
4. ``preflight`` is what the HTTP transport checks before it makes a session
   for the request, so the refusals the spec gives a status (400, 404) get it.
   Order: malformed ``_meta`` (-32602), then the transport's header checks
   (-32020), then an unsupported body version (-32022), then the method
   (-32601). A body naming a version we do not serve under an
   ``MCP-Protocol-Version`` header naming another is a header mismatch: the
   header must match the body whatever either names (Spec 2026-07-28:
   basic/transports/streamable-http#protocol-version-header, both MUSTs; the
   spec orders neither, the official conformance suite's ``server-stateless``
   expects -32020). When header and body agree on an unknown version, -32022.
5. A function that asks the client (``ctx.elicit``, ``ctx.sample``,
   ``ctx.list_roots``) ends the call with an ``InputRequiredResult``
   (server/modern/mrtr.py); the retry runs it again with the answers.
6. ``subscriptions/listen`` (``listen``) replaces ``resources/subscribe`` and
   the HTTP GET stream: the server acknowledges the part of the filter it
   honours (``notifications/subscriptions/acknowledged``, first: a change
   broadcast while it is being sent waits for it), then sends
   each opted-in change notification with the subscription id (the listen
   request's id) in ``_meta``, on that request's stream, until the client
   cancels it or the connection closes (no response then). ``broadcast`` is
   called where the legacy sessions are notified.
7. A request whose ``_meta`` equals the last one of its method, while what
   the server tells (its registries, ``_stamp``) is unchanged, reuses that
   request's reading and checks (``Server._modern_known``), and a plain
   result is finished here (rule 3's ``resultType`` and ``serverInfo``).
   Figure: a warm call enters no ``protocol/`` file (tests/test_call_path.py).

Spec 2026-07-28: basic/versioning, basic/index#meta, server/discover.
"""
from __future__ import annotations

import threading

from mcp_ref.protocol import lifecycle, modern
from mcp_ref.errors import (InvalidParamsError, McpError, MethodNotFoundError, RequestCancelled,
                            UnsupportedProtocolVersionError)
from mcp_ref.server.modern.mrtr import ASKING_METHODS, InputRequired, MissingCapability, input_required_result, load

__all__ = ["serve", "preflight", "discover", "told_capabilities"]

TASK_METHODS = ("tasks/get", "tasks/update", "tasks/cancel")     # server/tasks/extension.py


def told_capabilities(server) -> dict:
    """What a modern client is told (protocol/modern.py rule 6)."""
    return modern.capabilities(server.capabilities(), listen="subscriptions/listen" in server._request_handlers,
                               tasks=True)


def preflight(server, method: str, params, check_headers=None) -> modern.RequestMeta:
    """Rules 1 and 4: the request's metadata, or the McpError it is answered with.
    ``check_headers(version)``: a transport's check, run once the metadata is read,
    before the body's version is judged (rule 4's order)."""
    try:
        meta = modern.read_meta(params)
    except UnsupportedProtocolVersionError as unsupported:
        if check_headers is not None:           # rule 4: a header that disagrees comes first
            data = unsupported.data
            problem = check_headers(data.get("requested") if isinstance(data, dict) else None)
            if problem is not None:
                raise problem from None
        raise
    if check_headers is not None:
        problem = check_headers(meta.version)
        if problem is not None:
            raise problem
    entry = server._request_handlers.get(method)
    if entry is None or method in modern.LEGACY_ONLY:
        raise MethodNotFoundError(f"Method not found: {method}")
    told = told_capabilities(server)
    if method in TASK_METHODS:                      # the tasks extension (server/tasks/extension.py rule 3)
        if modern.TASKS_EXTENSION not in (told.get("extensions") or {}):
            raise MethodNotFoundError(f"Method not found: {method} (no tool of this server runs as a task)")
    else:
        lifecycle.require_own_capability(told, entry[1], method)
    return meta


def _stamp(server) -> tuple:
    """Rule 7: what the told capabilities and ``serverInfo`` depend on, besides the request."""
    return (server._changes, server._capability_override, server.completions.fn is not None,
            server._logging_capability, len(server._bridges), server.info)


def serve(server, ctx, method: str, params: dict) -> dict:
    """Rules 1 to 3 and 7: serve one modern request."""
    meta, stamp = params.get("_meta"), _stamp(server)
    known = server._modern_known.get(method)
    if known is not None and known[0] == meta and known[1] == stamp:
        ctx.era, info = known[2], known[3]          # rule 7: as the last request of this method
    else:
        ctx.era = preflight(server, method, params)
        info = server.info.to_dict(ctx.era.version)
        server._modern_known[method] = (dict(meta or {}), stamp, ctx.era, info)
    handler = server._request_handlers[method][0]
    if "requestState" in params and method in ASKING_METHODS:
        load(ctx)                                   # a retry's requestState, checked first (rule 5)
    try:
        result = server._run_handler(handler, ctx, params)
    except InputRequired as stop:                   # rule 5: multi round-trip
        result = input_required_result(ctx, stop)
    except MissingCapability as missing:            # server/modern/mrtr.py rule 6
        raise missing.error() from None
    except McpError as exc:
        translated = modern.translate_error(exc)
        if translated is exc:
            raise
        raise translated from None
    if "resultType" not in result and "_meta" not in result and method not in modern.CACHEABLE:
        return {**result, "resultType": "complete", "_meta": {modern.SERVER_INFO: dict(info)}}   # rule 3
    return modern.finish(method, result, dict(info), server.cache_hints)


def discover(server, ctx) -> dict:
    """``server/discover``: versions, capabilities, identity (serverInfo is added by ``finish``).
    Spec 2026-07-28: server/discover#response."""
    result = {"supportedVersions": modern.supported_versions(), "capabilities": told_capabilities(server)}
    if server.instructions:
        result["instructions"] = server.instructions
    return result


# ---------------------------------------------------------------- subscriptions/listen (rule 6)
LIST_FLAGS = {"toolsListChanged": ("tools", "notifications/tools/list_changed"),
              "promptsListChanged": ("prompts", "notifications/prompts/list_changed"),
              "resourcesListChanged": ("resources", "notifications/resources/list_changed")}


class Listener:
    """One open ``subscriptions/listen`` request: what it agreed to, where it goes."""

    def __init__(self, ctx, agreed: dict):
        self.ctx, self.agreed = ctx, agreed
        self.sending = threading.RLock()            # held by listen() until the acknowledgment is sent
        self.uris = set(agreed.get("resourceSubscriptions") or ())
        self.task_ids = set(agreed.get("taskIds") or ())

    def wants(self, method: str, params: dict | None) -> bool:
        if method == "notifications/resources/updated":
            return isinstance(params, dict) and params.get("uri") in self.uris
        if method == "notifications/tasks":        # server/tasks/extension.py rule 8
            return isinstance(params, dict) and params.get("taskId") in self.task_ids
        return any(self.agreed.get(flag) and note == method for flag, (_, note) in LIST_FLAGS.items())

    def send(self, method: str, params: dict | None) -> bool:
        params = dict(params or {})
        params["_meta"] = {**(params.get("_meta") or {}), modern.SUBSCRIPTION_ID: self.ctx.request_id}
        try:
            with self.sending:                      # never before the acknowledgment (rule 6)
                self.ctx.session.notify(method, params, related_id=self.ctx.request_id)
            return True
        except Exception:                           # the stream just closed
            return False


def agreed_filter(server, requested, ctx=None) -> dict:
    """The part of the client's filter we honour (Spec 2026-07-28: basic/patterns/subscriptions#acknowledgment)."""
    if not isinstance(requested, dict):
        raise InvalidParamsError("Invalid params: subscriptions/listen needs a notifications filter (an object)")
    told = told_capabilities(server)
    agreed: dict = {}
    for flag, (capability, _) in LIST_FLAGS.items():
        value = requested.get(flag)
        if value is not None and not isinstance(value, bool):
            raise InvalidParamsError(f"Invalid params: notifications.{flag} must be a boolean")
        if value and lifecycle.has_capability(told, capability + ".listChanged"):
            agreed[flag] = True
    uris = requested.get("resourceSubscriptions")
    if uris is not None:
        if not (isinstance(uris, list) and all(isinstance(u, str) for u in uris)):
            raise InvalidParamsError("Invalid params: notifications.resourceSubscriptions must be a list of URIs")
        if lifecycle.has_capability(told, "resources.subscribe"):
            agreed["resourceSubscriptions"] = list(dict.fromkeys(uris))
    task_ids = requested.get("taskIds")
    if task_ids is not None:                        # server/tasks/extension.py rule 8
        if not (isinstance(task_ids, list) and all(isinstance(i, str) for i in task_ids)):
            raise InvalidParamsError("Invalid params: notifications.taskIds must be a list of task ids")
        ext = server.tasks.ext                      # the extension's module imports this one
        if ctx is None or not ext.declares(ctx):
            raise ext.missing_extension("notifications.taskIds")
        agreed["taskIds"] = ext.visible(ctx, task_ids)
    return agreed


def listen(server, ctx, params: dict) -> dict:
    """Rule 6: acknowledge, then deliver the agreed notifications until the client cancels
    (stdio: ``notifications/cancelled``; HTTP: it closes the stream) or the session closes.
    Spec 2026-07-28: basic/patterns/subscriptions."""
    listener = Listener(ctx, agreed_filter(server, params.get("notifications"), ctx))
    ended = threading.Event()
    ctx.ends_with_input = True                      # at stdin EOF it ends at once (session/__init__.py rule 5)
    ctx.on_cancel(ended.set)
    try:
        with listener.sending:                      # a broadcast meanwhile waits for the acknowledgment
            with server._lock:
                server._listeners.add(listener)
            listener.send("notifications/subscriptions/acknowledged", {"notifications": listener.agreed})
        ended.wait()
    finally:
        with server._lock:
            server._listeners.discard(listener)
    raise RequestCancelled(f"subscriptions/listen {ctx.request_id!r} ended")


def broadcast(server, method: str, params: dict | None = None) -> int:
    """Rule 6: send ``method`` on every open listen stream that opted in to it."""
    with server._lock:
        listeners = [each for each in server._listeners if each.wants(method, params)]
    return sum(each.send(method, params) for each in listeners)
