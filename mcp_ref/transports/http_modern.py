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
   (``resources/read``); missing, different or undecodable → -32020.
4. Statuses (``status_for``): -32601 → 404; -32602, -32020, -32021, -32022 → 400.
5. Values that are not plain visible ASCII (or look like the sentinel) are sent
   as ``=?base64?...?=`` of their UTF-8 (``encode_value``).
"""
from __future__ import annotations

import base64
import binascii
from typing import Callable, Optional

from .. import lifecycle
from ..errors import HeaderMismatchError
from ..messages import Request

__all__ = ["is_modern_post", "header_problem", "status_for", "encode_value", "decode_value", "request_headers",
           "NAME_PARAM"]

MODERN_ONLY = ("server/discover", "subscriptions/listen")
# Rule 3: which params field Mcp-Name mirrors.
NAME_PARAM = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}
_STATUS = {-32601: 404, -32602: 400, -32020: 400, -32021: 400, -32022: 400}
_PREFIX, _SUFFIX = "=?base64?", "?="


def is_modern_post(message, version_header: Optional[str]) -> bool:
    """Rule 1 (the caller has checked there is no ``Mcp-Session-Id``)."""
    if version_header in lifecycle.MODERN_REVISIONS:
        return True
    if isinstance(message, Request):
        return message.method in MODERN_ONLY or lifecycle.is_modern_request(message.params)
    return False


def encode_value(value: str) -> str:
    """Rule 5."""
    plain = (value == value.strip() and all(0x20 <= ord(c) <= 0x7E for c in value)
             and not (value.startswith(_PREFIX) and value.endswith(_SUFFIX)))
    if plain:
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
    sent = header("mcp-protocol-version")
    if sent != version:
        return HeaderMismatchError(f"Header mismatch: MCP-Protocol-Version header {sent!r} does not match "
                                   f"the body's protocol version {version!r}" if sent is not None else
                                   "Header mismatch: the MCP-Protocol-Version header is required")
    sent = header("mcp-method")
    if sent != request.method:
        return HeaderMismatchError(f"Header mismatch: Mcp-Method header {sent!r} does not match body value "
                                   f"{request.method!r}" if sent is not None else
                                   "Header mismatch: the Mcp-Method header is required")
    field = NAME_PARAM.get(request.method)
    if field is not None:
        params = request.params if isinstance(request.params, dict) else {}
        body = params.get(field)
        sent = header("mcp-name")
        if sent is None:
            return HeaderMismatchError(f"Header mismatch: the Mcp-Name header is required for {request.method}")
        decoded = decode_value(sent)
        if decoded is None:
            return HeaderMismatchError("Header mismatch: the Mcp-Name header is not valid Base64 UTF-8")
        if decoded != body:
            return HeaderMismatchError(f"Header mismatch: Mcp-Name header value {decoded!r} does not match "
                                       f"body value {body!r}")
    return None


def status_for(code: int) -> int:
    """Rule 4: the HTTP status of a refusal with JSON-RPC error ``code``."""
    return _STATUS.get(code, 400)
