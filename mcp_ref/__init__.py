"""mcp_ref: a synchronous, thread-based reference implementation of the Model Context Protocol.

Importing this package needs only the standard library; the HTTP client
(requests) and schema validation (jsonschema) are imported
lazily by the features that need them.
"""
import importlib
from typing import TYPE_CHECKING

from mcp_ref.errors import (ApprovalDenied, CapabilityNotSupported, ConnectionClosed, HeaderMismatchError,
                            InternalError, InvalidParamsError, InvalidRequestError, McpError, MessageTooLarge,
                            MethodNotFoundError, MissingDependency, MissingRequiredClientCapabilityError, ParseError,
                            RequestCancelled, RequestTimeout, ResourceNotFoundError, SessionError,
                            StructuredOutputError, TooManyPages, ToolInputError, UnsupportedProtocolVersion,
                            UnsupportedProtocolVersionError, UrlElicitationRequiredError, UserRejectedError)
from mcp_ref.protocol.lifecycle import LATEST_REVISION, SUPPORTED_REVISIONS
from mcp_ref.session.outbound import CancelToken

# Each room loads with the first of its names (PEP 562): a stdio server does not import
# the client's room (its types, sampling, elicitation...: more than doubling its cold
# start, bench/bench_stdio.py), a client not the server's, and neither the HTTP client
# (requests' room). Type checkers do not run __getattr__: they read the same imports below.
_ROOMS = {"Server": "mcp_ref.server.server", "Context": "mcp_ref.server.server",
          "ToolNameWarning": "mcp_ref.server.tools",
          "Client": "mcp_ref.client.client", "Approval": "mcp_ref.client.approval", "Deny": "mcp_ref.client.approval",
          "HttpError": "mcp_ref.transports.http.client.common",
          "SessionExpired": "mcp_ref.transports.http.client.common"}
if TYPE_CHECKING:
    from mcp_ref.server.server import Context, Server
    from mcp_ref.server.tools import ToolNameWarning
    from mcp_ref.client.client import Client
    from mcp_ref.client.approval import Approval, Deny
    from mcp_ref.transports.http.client.common import HttpError, SessionExpired


def __getattr__(name: str) -> object:
    module = _ROOMS.get(name)
    if module is None:
        raise AttributeError(f"module 'mcp_ref' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_ROOMS))


__version__ = "0.1.0"

__all__ = [
    "Server", "Client", "Context",
    "McpError", "ParseError", "InvalidRequestError", "MethodNotFoundError", "InvalidParamsError",
    "InternalError", "ResourceNotFoundError", "UrlElicitationRequiredError", "UserRejectedError",
    "SessionError", "ConnectionClosed", "RequestTimeout", "RequestCancelled", "CapabilityNotSupported",
    "UnsupportedProtocolVersion", "MissingDependency", "ApprovalDenied", "StructuredOutputError",
    "ToolInputError", "MessageTooLarge", "TooManyPages",
    "HeaderMismatchError", "MissingRequiredClientCapabilityError", "UnsupportedProtocolVersionError",
    "Approval", "Deny", "HttpError", "SessionExpired", "ToolNameWarning", "CancelToken",
    "LATEST_REVISION", "SUPPORTED_REVISIONS", "__version__",
]
