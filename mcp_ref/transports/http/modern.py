"""Streamable HTTP in the modern era (2026-07-28): request metadata headers, no sessions.

Both ends use this module: the server's handler to tell a modern POST and
check its headers, the HTTP client to write them. Spec 2026-07-28:
basic/transports/streamable-http#request-metadata, #server-validation,
#value-encoding, #backward-compatibility.

Rules:

1. A POST without ``Mcp-Session-Id`` is modern when its ``MCP-Protocol-Version``
   header names a modern revision, or its body is a request that carries the
   modern ``_meta`` or has a modern-only method (``is_modern_post``). Anything
   else is served as before (``initialize`` opens a legacy session).
2. A modern POST holds one request (a batch → 400; a notification → 202, as
   no modern notification goes client-to-server over HTTP). There is no
   session: no ``Mcp-Session-Id`` is minted, events carry no ids (no
   resumability), the request's session ends with its response.
3. Header checks (``header_problem``), after the body's metadata is read: the
   ``MCP-Protocol-Version`` header equals the body's version, ``Mcp-Method``
   equals ``method``, and ``Mcp-Name`` (Base64 sentinel decoded) equals
   ``params.name`` (``tools/call``, ``prompts/get``) or ``params.uri``
   (``resources/read``); missing, different or undecodable → -32020. These
   come before the body's version is judged: a known header over an unknown
   body version is -32020, not -32022 (server/modern/serve.py rule 4 has the order).
4. Statuses (``status_for``): -32601 → 404; -32602, -32020, -32021, -32022 → 400.
5. Values that are not plain visible ASCII (or look like the sentinel) are sent
   as ``=?base64?...?=`` of their UTF-8 (``encode_value``).
6. ``x-mcp-header`` (Spec 2026-07-28: server/tools#x-mcp-header,
   streamable-http#custom-headers-from-tool-parameters): a tool's inputSchema
   may name parameters mirrored as ``Mcp-Param-{name}`` headers
   (``param_annotations``: only string, integer and boolean properties reached
   through ``properties`` alone, names that are HTTP tokens, unique ignoring
   case; anything else makes the tool invalid, ``ValueError``). The client sends
   one header per argument present (``param_headers``); the server requires
   each such header and compares it, decoded, with the argument (integers
   numerically): missing, undecodable or different → -32020 (``param_problem``).
"""
from __future__ import annotations

import base64
import binascii
from typing import Callable, Optional

from mcp_ref.protocol import lifecycle
from mcp_ref.errors import HeaderMismatchError
from mcp_ref.jsonrpc.messages import Request

__all__ = ["is_modern_post", "header_problem", "status_for", "encode_value", "decode_value", "request_headers",
           "NAME_PARAM", "param_annotations", "param_headers", "param_problem"]

MODERN_ONLY = ("server/discover", "subscriptions/listen")
# Rule 3: which params field Mcp-Name mirrors.
NAME_PARAM = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri",
              "tasks/get": "taskId", "tasks/update": "taskId", "tasks/cancel": "taskId"}   # the tasks extension
_STATUS = {-32601: 404, -32602: 400, -32020: 400, -32021: 400, -32022: 400}
_PREFIX, _SUFFIX = "=?base64?", "?="


def is_modern_post(message, version_header: Optional[str]) -> bool:
    """Rule 1 (the caller has checked there is no ``Mcp-Session-Id``)."""
    return version_header in lifecycle.MODERN_REVISIONS or (isinstance(message, Request) and (
        message.method in MODERN_ONLY or lifecycle.is_modern_request(message.params)))


def encode_value(value: str) -> str:
    """Rule 5."""
    if (value == value.strip() and all(0x20 <= ord(c) <= 0x7E for c in value)
            and not (value.startswith(_PREFIX) and value.endswith(_SUFFIX))):
        return value
    return _PREFIX + base64.b64encode(value.encode("utf-8")).decode("ascii") + _SUFFIX


def decode_value(value: str) -> Optional[str]:
    """A header value as sent before rule 5's encoding; None when it cannot be decoded."""
    if value.startswith(_PREFIX) and value.endswith(_SUFFIX) and len(value) >= len(_PREFIX) + len(_SUFFIX):
        try:
            return base64.b64decode(value[len(_PREFIX):-len(_SUFFIX)], validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):
            return None
    return value


def request_headers(method: str, params: Optional[dict], version: str) -> dict:
    """The headers a client sends with a modern request (rule 3)."""
    headers = {"MCP-Protocol-Version": version, "Mcp-Method": method}
    field = NAME_PARAM.get(method)
    if field is not None and isinstance(params, dict) and isinstance(params.get(field), str):
        headers["Mcp-Name"] = encode_value(params[field])
    return headers


def header_problem(header: Callable[[str], Optional[str]], request: Request,
                   version: str) -> Optional[HeaderMismatchError]:
    """Rule 3: the HeaderMismatch error for ``request`` (None when the headers agree).
    ``header(name)`` reads a request header (case-insensitively); ``version`` is the
    body's ``_meta`` protocol version."""
    problem = (_mismatch("MCP-Protocol-Version", header("mcp-protocol-version"), version)
               or _mismatch("Mcp-Method", header("mcp-method"), request.method))
    field = NAME_PARAM.get(request.method)
    if problem is not None or field is None:
        return problem
    params = request.params if isinstance(request.params, dict) else {}
    return _mismatch("Mcp-Name", header("mcp-name"), params.get(field), encoded=True)


def _mismatch(name: str, sent: Optional[str], body, encoded: bool = False) -> Optional[HeaderMismatchError]:
    """The error when header ``name`` (``sent``; rule 5's encoding when ``encoded``) is missing
    or does not mirror ``body`` (the spec's wording: basic/transports/streamable-http)."""
    if sent is None:
        return HeaderMismatchError(f"Header mismatch: the {name} header is required")
    decoded = decode_value(sent) if encoded else sent
    if decoded is None:
        return HeaderMismatchError(f"Header mismatch: the {name} header is not valid Base64 UTF-8")
    if decoded != body:
        return HeaderMismatchError(f"Header mismatch: {name} header value {decoded!r} does not match body value "
                                   f"{body!r}")
    return None


def status_for(code: int) -> int:
    """Rule 4: the HTTP status of a refusal with JSON-RPC error ``code``."""
    return _STATUS.get(code, 400)


# ---------------------------------------------------------------- x-mcp-header (rule 6)
_TCHAR = frozenset("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
_SAFE_INT = 2 ** 53 - 1


def param_annotations(schema) -> dict:
    """Rule 6: ``{header name: (path, type)}`` of an inputSchema. Raises ValueError when an
    annotation breaks a constraint (the tool is then invalid)."""
    found: dict = {}

    def walk(node, path, reachable):
        if isinstance(node, list):
            for item in node:
                walk(item, path, False)
            return
        if not isinstance(node, dict):
            return
        if "x-mcp-header" in node:
            name = node["x-mcp-header"]
            if not reachable or not path:
                raise ValueError(f"x-mcp-header {name!r} is not on a property reached through properties alone")
            if not isinstance(name, str) or not name or not set(name) <= _TCHAR:
                raise ValueError(f"x-mcp-header {name!r} is not an HTTP token")
            kind = node.get("type")
            if kind not in ("string", "integer", "boolean"):
                raise ValueError(f"x-mcp-header {name!r} is on a {kind!r} property (string, integer or boolean only)")
            if name.lower() in {n.lower() for n in found}:
                raise ValueError(f"x-mcp-header {name!r} is used twice")
            found[name] = (tuple(path), kind)
        for key, value in node.items():
            if key == "properties" and isinstance(value, dict):
                for prop, sub in value.items():
                    walk(sub, path + [prop], reachable)
            elif key != "x-mcp-header":
                walk(value, path, False)
    walk(schema, [], True)
    return found


def _argument(arguments, path):
    """The argument at ``path``; None when it is absent or null (no header for it)."""
    node = arguments
    for key in path:
        node = node.get(key) if isinstance(node, dict) else None
    return node


def _text(value, kind):
    if kind == "boolean" and isinstance(value, bool):
        return "true" if value else "false"
    if kind == "integer" and isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if kind == "string" and isinstance(value, str):
        return value
    return None


def param_headers(annotations: dict, arguments) -> dict:
    """Rule 6: the ``Mcp-Param-*`` headers a client sends for ``arguments``."""
    headers = {}
    for name, (path, kind) in annotations.items():
        text = _text(_argument(arguments, path), kind)
        if text is not None:
            headers["Mcp-Param-" + name] = encode_value(text)
    return headers


def param_problem(header: Callable[[str], Optional[str]], annotations: dict,
                  arguments) -> Optional[HeaderMismatchError]:
    """Rule 6: the -32020 error for a ``tools/call`` whose ``Mcp-Param-*`` headers do not
    mirror its arguments (None when they do)."""
    for name, (path, kind) in annotations.items():
        value = _argument(arguments, path)
        if value is None:
            continue                                  # no value: no header expected
        sent = header("mcp-param-" + name.lower())
        if kind == "integer" and sent is not None and _same_integer(decode_value(sent), value):
            continue
        problem = _mismatch(f"Mcp-Param-{name}", sent, value if kind == "integer" else _text(value, kind), True)
        if problem is not None:
            return problem
    return None


def _same_integer(decoded: Optional[str], value) -> bool:
    """An integer header mirrors its argument when it names the same number (``42``, ``42.0``)."""
    try:
        return float(decoded) == value and abs(value) <= _SAFE_INT      # type: ignore[arg-type]
    except (TypeError, ValueError):
        return False
