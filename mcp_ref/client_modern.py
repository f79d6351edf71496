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
   -32602 before ``initialize``) or no answer within ``init_timeout`` → the
   legacy ``initialize`` handshake, as before. The answer is kept for the
   client's life (a respawned stdio server is probed again).
2. A fixed revision is asked for as before: a legacy one runs ``initialize``
   with no probe; ``"2026-07-28"`` probes and refuses a server that is not
   modern (``UnsupportedProtocolVersion``).
3. In the modern era every request carries ``_meta``: the protocol version,
   the client capabilities, the client info, and the log level when one was
   set (``set_logging_level`` keeps it on the client, as the modern era has no
   ``logging/setLevel``). A caller's own ``_meta`` entries are kept.
4. Results are read as in the legacy era: ``strip`` removes ``resultType``,
   the cache hints and ``serverInfo`` from what the public methods parse, so a
   script sees the same objects in both eras. A ``resultType`` other than
   ``"complete"`` or ``"input_required"`` is invalid (-32603 locally). An
   absent one is ``"complete"``.

This module does no I/O and starts no threads: the Client sends.
"""
from __future__ import annotations

from . import lifecycle, modern, types
from .errors import (HEADER_MISMATCH, MISSING_REQUIRED_CLIENT_CAPABILITY, UNSUPPORTED_PROTOCOL_VERSION,
                     InternalError, InvalidParamsError, McpError)

AUTO = "auto"
MODERN_ERRORS = (HEADER_MISMATCH, MISSING_REQUIRED_CLIENT_CAPABILITY, UNSUPPORTED_PROTOCOL_VERSION)
INPUT_METHODS = {"sampling/createMessage": "sampling", "elicitation/create": "elicitation", "roots/list": "roots"}
_STRIPPED = ("resultType", "ttlMs", "cacheScope")


def check_requested(version) -> str:
    """Rule 2: ``"auto"``, a modern revision, or a legacy one (lifecycle.check_requested)."""
    if version == AUTO or version in lifecycle.MODERN_REVISIONS:
        return version
    try:
        return lifecycle.check_requested(version)
    except ValueError:
        raise ValueError(f"protocol_version {version!r} is not a revision this library speaks; use 'auto' "
                         f"(the default), or one of {', '.join(modern.supported_versions())}") from None


def is_modern_error(exc: BaseException) -> bool:
    """Rule 1: an error only a modern server answers."""
    return isinstance(exc, McpError) and exc.code in MODERN_ERRORS


def pick_modern(versions) -> str | None:
    """Our newest modern revision among ``versions``."""
    for version in lifecycle.MODERN_REVISIONS:
        if version in (versions or ()):
            return version
    return None


def pick_legacy(versions) -> str | None:
    for version in lifecycle.SUPPORTED_REVISIONS:
        if version in (versions or ()):
            return version
    return None


class Discovery:
    """A ``DiscoverResult`` as read (Spec 2026-07-28: server/discover#discoverresult)."""

    def __init__(self, versions: list, capabilities: dict, server_info, instructions: str | None):
        self.versions, self.capabilities = versions, capabilities
        self.server_info, self.instructions = server_info, instructions


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


def check_result_type(result) -> str:
    """Rule 4: ``"complete"`` or ``"input_required"``; absent is ``"complete"``."""
    if not isinstance(result, dict):
        raise InvalidParamsError("a result is an object")
    kind = result.get("resultType", "complete")
    if kind not in ("complete", "input_required"):
        raise InternalError(f"the server answered an unknown resultType {kind!r}")
    return kind


def strip(result: dict) -> dict:
    """Rule 4: what the public methods parse, the same in both eras."""
    if not any(key in result for key in _STRIPPED) and not isinstance(result.get("_meta"), dict):
        return result
    result = {k: v for k, v in result.items() if k not in _STRIPPED}
    meta = result.get("_meta")
    if isinstance(meta, dict) and modern.SERVER_INFO in meta:
        meta = {k: v for k, v in meta.items() if k != modern.SERVER_INFO}
        if meta:
            result["_meta"] = meta
        else:
            del result["_meta"]
    return result


def with_meta(params: dict | None, meta: dict) -> dict:
    """Rule 3: ``params`` with the request metadata (a caller's own ``_meta`` entries kept)."""
    params = dict(params or {})
    own = params.get("_meta")
    params["_meta"] = {**own, **meta} if isinstance(own, dict) else dict(meta)
    return params


# ---------------------------------------------------------------- multi round-trip (client_mrtr)
def read_input_request(data) -> tuple:
    """One ``InputRequest``: ``(method, params)`` with the params read by our types
    (Spec 2026-07-28: basic/patterns/mrtr#inputrequests)."""
    if not isinstance(data, dict) or data.get("method") not in INPUT_METHODS:
        raise InvalidParamsError("an input request is a sampling/createMessage, elicitation/create or "
                                 "roots/list request")
    method, params = data["method"], data.get("params")
    if params is not None and not isinstance(params, dict):
        raise InvalidParamsError(f"{method}: params must be an object")
    if method == "sampling/createMessage":
        types.CreateMessageRequestParams.from_dict(params or {})
    elif method == "elicitation/create":
        types.ElicitRequestParams.from_dict(params or {})
    return method, params or {}


def read_input_required(result) -> tuple:
    """An ``InputRequiredResult``: ``({key: (method, params)}, requestState or None)``."""
    if check_result_type(result) != "input_required":
        raise InvalidParamsError("not an InputRequiredResult")
    requests = result.get("inputRequests") or {}
    if not isinstance(requests, dict):
        raise InvalidParamsError("InputRequiredResult.inputRequests: expected object")
    state = result.get("requestState")
    if state is not None and not isinstance(state, str):
        raise InvalidParamsError("InputRequiredResult.requestState: expected string")
    if not requests and state is None:
        raise InvalidParamsError("an InputRequiredResult holds inputRequests, requestState or both")
    return {key: read_input_request(value) for key, value in requests.items()}, state


def read_input_response(data):
    """One ``InputResponse``, read as the result type its shape names."""
    if not isinstance(data, dict):
        raise InvalidParamsError("an input response is an object")
    if "action" in data:
        return types.ElicitResult.from_dict(data)
    if "roots" in data:
        return types.ListRootsResult.from_dict(data)
    return types.CreateMessageResult.from_dict(data)


def read_example(name: str, data):
    """Read a specification example of a modern-era definition (tests/test_modern_examples.py)."""
    if name in ("ClientCapabilities", "ServerCapabilities"):
        return read_capabilities(data, name)
    if name in ("CreateMessageRequest", "ElicitRequest", "ListRootsRequest"):
        return read_input_request(data)
    if name == "InputRequests":
        return {key: read_input_request(value) for key, value in data.items()}
    if name == "InputResponses":
        return {key: read_input_response(value) for key, value in data.items()}
    if name.endswith("Response") and isinstance(data, dict) and "result" in data:
        return read_example(name[:-len("Response")], data["result"])
    if name == "DiscoverResult":
        return read_discover(data)
    if name == "DiscoverRequest":
        return modern.read_meta(data.get("params"))
    if name == "InputRequiredResult":
        return read_input_required(data)
    if name == "SubscriptionsListenResult":
        check_result_type(data)
        subscription = (data.get("_meta") or {}).get(modern.SUBSCRIPTION_ID)
        if subscription is None:
            raise InvalidParamsError("SubscriptionsListenResult._meta needs the subscription id")
        return data
    raise InvalidParamsError(f"no modern-era reader for {name}")
