"""mcp_ref: a synchronous, thread-based reference implementation of the Model Context Protocol.

Importing this package needs only the standard library; the HTTP client
(requests, sseclient-py) and schema validation (jsonschema) are imported
lazily by the features that need them.
"""
from .approval import Approval, Deny
from .client import Client
from .errors import (ApprovalDenied, CapabilityNotSupported, ConnectionClosed, InternalError, InvalidParamsError,
                     InvalidRequestError, McpError, MethodNotFoundError, MissingDependency, ParseError,
                     RequestCancelled, RequestTimeout, ResourceNotFoundError, SessionError, StructuredOutputError,
                     UnsupportedProtocolVersion, UrlElicitationRequiredError, UserRejectedError)
from .lifecycle import LATEST_REVISION, SUPPORTED_REVISIONS
from .server import Context, Server

__version__ = "0.1.0"

__all__ = [
    "Server", "Client", "Context",
    "McpError", "ParseError", "InvalidRequestError", "MethodNotFoundError", "InvalidParamsError",
    "InternalError", "ResourceNotFoundError", "UrlElicitationRequiredError", "UserRejectedError",
    "SessionError", "ConnectionClosed", "RequestTimeout", "RequestCancelled", "CapabilityNotSupported",
    "UnsupportedProtocolVersion", "MissingDependency", "ApprovalDenied", "StructuredOutputError",
    "Approval", "Deny",
    "LATEST_REVISION", "SUPPORTED_REVISIONS", "__version__",
]
