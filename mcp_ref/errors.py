"""Error codes and exception families.

Two families, so a caller can always tell whose fault a failure is:

* ``McpError`` and subclasses: what the *peer* answered, or what we answer the
  peer. Each carries a JSON-RPC ``code``; ``McpError.from_error()`` picks the
  subclass by code, ``to_error()`` gives the wire object.
* ``SessionError`` and subclasses: local conditions that never crossed the wire
  (timeout, closed connection, cancellation, a capability the peer did not
  declare, an unsupported protocol revision, a bad transport).

``InvalidMessage`` is the peer breaking JSON-RPC framing: it carries the code
and the id (when readable) so the receiver can answer it.

This module does no I/O. Spec: basic/index#responses (error codes),
server/resources#error-handling (-32002), client/elicitation (-32042),
client/sampling#error-handling (-1).

``get_logger`` is here because every layer needs a log for the details an
error answer leaves out: it is ``logging.getLogger``.
"""
from __future__ import annotations

import importlib
import logging

# JSON-RPC 2.0 standard codes.
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
# MCP codes.
RESOURCE_NOT_FOUND = -32002
URL_ELICITATION_REQUIRED = -32042
# 2026-07-28 (basic/index#error-codes): the sub-range -32020..-32099 is the specification's.
HEADER_MISMATCH = -32020
MISSING_REQUIRED_CLIENT_CAPABILITY = -32021
UNSUPPORTED_PROTOCOL_VERSION = -32022
USER_REJECTED = -1               # client/sampling#error-handling: "User rejected sampling request"


class McpError(Exception):
    """An error that travels on the wire as a JSON-RPC error object."""

    code = INTERNAL_ERROR
    _by_code: dict = {}

    def __init__(self, message: str, data: object = None, *, code: int | None = None):
        super().__init__(message)
        self.message, self.data = message, data
        if code is not None:
            self.code = code

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        McpError._by_code.setdefault(cls.code, cls)

    def to_error(self) -> dict:
        """The JSON-RPC error object: ``{"code", "message"[, "data"]}``."""
        error = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error

    @classmethod
    def from_error(cls, error: dict) -> "McpError":
        """Build the matching subclass from a wire error object."""
        code, message = error.get("code", INTERNAL_ERROR), error.get("message", "")
        return McpError._by_code.get(code, McpError)(str(message), error.get("data"), code=code)

    def __str__(self) -> str:
        return f"{self.message} (code {self.code})"


class ParseError(McpError):
    code = PARSE_ERROR


class InvalidRequestError(McpError):
    code = INVALID_REQUEST


class MethodNotFoundError(McpError):
    code = METHOD_NOT_FOUND


class InvalidParamsError(McpError):
    code = INVALID_PARAMS


class InternalError(McpError):
    code = INTERNAL_ERROR


class ResourceNotFoundError(McpError):
    """Spec: server/resources#error-handling: unknown URI, with the uri in data."""
    code = RESOURCE_NOT_FOUND


class UrlElicitationRequiredError(McpError):
    """Spec (2025-11-25): client/elicitation#url-elicitation-required-error."""
    code = URL_ELICITATION_REQUIRED

    @property
    def elicitations(self) -> list:
        return list(self.data.get("elicitations") or []) if isinstance(self.data, dict) else []


class UserRejectedError(McpError):
    """Spec: client/sampling#error-handling: the user (or the client's approval
    hook) rejected a request from the server. Code -1."""
    code = USER_REJECTED


class HeaderMismatchError(McpError):
    """Spec 2026-07-28: basic/transports/streamable-http#server-validation: an HTTP
    header (``MCP-Protocol-Version``, ``Mcp-Method``, ``Mcp-Name``) is missing or
    disagrees with the body. HTTP status 400."""
    code = HEADER_MISMATCH


class MissingRequiredClientCapabilityError(McpError):
    """Spec 2026-07-28: basic/index#meta: serving the request needs a client
    capability the request's ``_meta`` did not declare; ``data.requiredCapabilities``."""
    code = MISSING_REQUIRED_CLIENT_CAPABILITY


class UnsupportedProtocolVersionError(McpError):
    """Spec 2026-07-28: basic/versioning#protocol-version-negotiation: the request's
    version is not one the server serves; ``data`` is ``{"supported": [...],
    "requested": "..."}`` so the client can retry with one of ``supported``."""
    code = UNSUPPORTED_PROTOCOL_VERSION

    @property
    def supported(self) -> list:
        versions = self.data.get("supported") if isinstance(self.data, dict) else None
        return [v for v in versions if isinstance(v, str)] if isinstance(versions, list) else []


class SessionError(Exception):
    """A local condition: nothing was answered by the peer."""


class ConnectionClosed(SessionError):
    """The connection is gone; every pending request fails with this, once.

    ``exit_code`` and ``stderr_tail`` are filled in by the stdio client when
    the server process ended. The error is raised as soon as the connection
    is gone, without waiting for the process: a server may close its stdout
    and keep running. ``late_details`` (from the transport) is asked again,
    without blocking, while the exit code is still unknown, so the code is
    there once the process has ended, whenever the error is looked at.
    """

    def __init__(self, reason: str = "connection closed", *, exit_code: int | None = None,
                 stderr_tail: str = "", late_details=None):
        super().__init__(reason)
        self.reason, self._exit_code, self._stderr_tail = reason, exit_code, stderr_tail
        self._late = late_details if exit_code is None else None

    def _refresh(self) -> None:
        late = self._late
        try:
            details = late() if late is not None else None
        except Exception:                # a transport that fails to tell: still unknown
            details = None
        if details and details.get("exit_code") is not None:
            self._late = None
            self._exit_code = details["exit_code"]
            self._stderr_tail = details.get("stderr_tail", self._stderr_tail)

    @property
    def exit_code(self) -> int | None:
        self._refresh()
        return self._exit_code

    @property
    def stderr_tail(self) -> str:
        self._refresh()
        return self._stderr_tail

    def __str__(self) -> str:
        detail = self.reason
        if self.exit_code is not None:
            detail += f" (exit code {self.exit_code})"
        if self.stderr_tail:
            detail += "; last stderr lines:\n" + self.stderr_tail
        return detail


class MessageTooLarge(InvalidRequestError):
    """The peer's reply to a request was over the size limit (``max_message_size``)
    and was skipped unread. Raised to that request's caller at once, like any reply
    that cannot be read (see ``InvalidMessage``); ``size`` and ``limit`` are in bytes
    (``size`` counts what was read before giving up when the frame had no end).
    Code -32600, as the frame is answered when it is a request."""

    def __init__(self, message: str, data: object = None, *, size: int | None = None, limit: int | None = None):
        super().__init__(message, data)
        self.size, self.limit = size, limit


class RequestTimeout(SessionError):
    """No reply in time; the peer was sent notifications/cancelled."""

    def __init__(self, method: str, timeout: float):
        super().__init__(f"{method} timed out after {timeout:g} s")
        self.method, self.timeout = method, timeout


class RequestCancelled(SessionError):
    """The request was cancelled (by us, or by the peer for a request we serve)."""


class CapabilityNotSupported(SessionError):
    """The other side did not declare the capability this needs."""


class DuplicateInputKey(SessionError, ValueError):
    """A server function named an input request key (``key=`` of ``Context.elicit``,
    ``sample``, ``list_roots``, or a ``Context.gather`` key) that this run of the
    request (or this task) has used already: keys MUST be unique within the
    request (Spec 2026-07-28: basic/patterns/mrtr#server-requirements-basic-workflow).
    ``key`` is the key. Nothing was sent."""

    def __init__(self, key: str):
        super().__init__(f"input request key {key!r} is used already in this request: keys must be unique "
                         "within a request (Spec 2026-07-28: basic/patterns/mrtr); nothing was asked")
        self.key = key


class ApprovalDenied(SessionError):
    """The client's approval hook denied a tool call; nothing was sent."""


class StructuredOutputError(SessionError):
    """A tool result's ``structuredContent`` does not match the tool's ``outputSchema``
    (checked by the client; Spec: server/tools#output-schema). ``result`` holds the
    whole ``CallToolResult``, so nothing is lost; ``tool`` is the tool's name."""

    def __init__(self, message: str, result: object, tool: str):
        super().__init__(message)
        self.result, self.tool = result, tool


class ToolInputError(SessionError):
    """A tool call's ``arguments`` do not match the tool's ``inputSchema``, checked by the
    client before sending (``Client(validate_input=True)``); nothing was sent.
    ``tool`` is the tool's name, ``arguments`` what would have been sent, ``problem``
    the validator's message (with the path of the offending value)."""

    def __init__(self, tool: str, arguments: object, problem: str):
        super().__init__(f"arguments for tool {tool!r} do not match its inputSchema: {problem} (not sent)")
        self.tool, self.arguments, self.problem = tool, arguments, problem


class TooManyPages(SessionError):
    """A ``list_*()`` helper followed ``nextCursor`` for ``pages`` pages without
    reaching the end (a server that hands out a fresh cursor forever).
    ``items`` holds what the pages brought, so nothing is lost; raise the limit
    with ``Client(max_pages=...)`` or walk ``list_*_page`` by hand.
    Spec: server/utilities/pagination."""

    def __init__(self, method: str, pages: int, items: list):
        super().__init__(f"{method}: still more pages after {pages} pages ({len(items)} items); "
                         f"stopped (max_pages={pages})")
        self.method, self.pages, self.items = method, pages, items


class UnsupportedProtocolVersion(SessionError):
    """The peer chose a protocol revision we do not support."""

    def __init__(self, version: object, supported=()):
        super().__init__(f"unsupported protocol version {version!r}; supported: {', '.join(supported)}")
        self.version, self.supported = version, tuple(supported)


class MissingDependency(SessionError, ImportError):
    """A package a feature needs is not installed.

    The core and stdio need only the standard library. The HTTP clients need
    ``requests``; JSON Schema checks beyond flat schemas need ``jsonschema``.
    ``pip install mcp_ref`` installs both (they are
    its dependencies, imported only where used); a vendored copy of the package
    folder, or an install with ``--no-deps``, may lack them.
    """

    def __init__(self, package: str, feature: str):
        super().__init__(f"{feature} needs the package {package!r}, which is not installed (a dependency of "
                         f"mcp_ref, missing from a vendored copy or a --no-deps install): pip install {package}")
        self.package, self.feature = package, feature


class InvalidMessage(Exception):
    """The peer sent something that is not valid JSON-RPC.

    ``code`` is PARSE_ERROR or INVALID_REQUEST (or INVALID_REQUEST for an
    oversized frame); ``id`` is the request id when it could be read, so the
    receiver answers ``{"id": id, "error": ...}`` (id null otherwise).
    """

    def __init__(self, code: int, message: str, id: int | str | None = None):
        super().__init__(message)
        self.code, self.message, self.id = code, message, id
        # A malformed *response* is never answered: the peer would match an error
        # carrying that id to its own request of the same id.
        self.is_response = False
        # A frame over the size limit, skipped unread: its size and the limit, in bytes.
        self.size: int | None = None
        self.limit: int | None = None


def require(module: str, package: str, feature: str):
    """Import an optional module lazily, or raise MissingDependency naming it."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise MissingDependency(package, feature) from None


get_logger = logging.getLogger     # the logger every module of the package logs to (module docstring)
