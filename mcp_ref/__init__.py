"""mcp_ref: a synchronous, thread-based reference implementation of the Model Context Protocol.

Importing this package needs only the standard library; the HTTP client
(requests) and schema validation (jsonschema) are imported
lazily by the features that need them.
"""
from mcp_ref.errors import (ApprovalDenied, CapabilityNotSupported, ConnectionClosed, HeaderMismatchError,
                            InternalError, InvalidParamsError, InvalidRequestError, McpError, MessageTooLarge,
                            MethodNotFoundError, MissingDependency, MissingRequiredClientCapabilityError, ParseError,
                            RequestCancelled, RequestTimeout, ResourceNotFoundError, SessionError,
                            StructuredOutputError, TooManyPages, ToolInputError, UnsupportedProtocolVersion,
                            UnsupportedProtocolVersionError, UrlElicitationRequiredError, UserRejectedError)
from mcp_ref.protocol.lifecycle import LATEST_REVISION, SUPPORTED_REVISIONS

# Server and Client load on first use (PEP 562), so a stdio server does not pay
# for the client's modules at start-up, nor a client for the server's.
_LAZY = {
    "Server": ".server.server", "Context": ".server.server", "Client": ".client.client",
    "Approval": ".client.approval", "Deny": ".client.approval",
    "HttpError": ".transports.http.client.sse_legacy", "SessionExpired": ".transports.http.client.streamable",
    "ToolNameWarning": ".server.tools", "CancelToken": ".session.outbound",
}

# The same names for type checkers and editors, which do not run __getattr__: without
# these, ``from mcp_ref import Client`` is ``Any`` to them. Never true at run time.
# tests/test_public_api.py keeps this list and _LAZY in step.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from mcp_ref.client.approval import Approval, Deny
    from mcp_ref.session.outbound import CancelToken
    from mcp_ref.client.client import Client
    from mcp_ref.server.tools import ToolNameWarning
    from mcp_ref.server.server import Context, Server
    from mcp_ref.transports.http.client.streamable import SessionExpired
    from mcp_ref.transports.http.client.sse_legacy import HttpError


def __getattr__(name):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'mcp_ref' has no attribute {name!r}")
    import importlib
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY))


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
