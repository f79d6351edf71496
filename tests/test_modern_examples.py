"""The 2026-07-28 specification's ``examples/`` read by our types and messages.

Each folder of ``examples/`` is named after a schema definition and holds JSON
examples of it. Every example must be read by the code that reads that
definition here: a ``mcp_ref.types`` model (and written back to the same
content), a JSON-RPC message (``messages.decode``), an error (its typed
exception by code), an elicitation field schema, or the modern-era readers of
the client (``client_modern``). A folder none of them covers fails the test,
so a new example in a later copy of the spec is not silently skipped.
"""
import json

import pytest

from conftest import MODERN_REVISION, spec_path

import mcp_ref.types as types
from mcp_ref import errors
from mcp_ref.client.elicitation_schema import check_requested_schema
from mcp_ref.client.modern import era, mrtr, requesting
from mcp_ref.protocol import modern
from mcp_ref.jsonrpc.messages import ErrorResponse, Notification, Request, Response, decode


def _examples():
    root = spec_path() / MODERN_REVISION / "examples"
    if not root.is_dir():
        return []
    return [(folder.name, path) for folder in sorted(root.iterdir()) if folder.is_dir()
            for path in sorted(folder.glob("*.json"))]


EXAMPLES = _examples()
ERRORS = {"HeaderMismatchError": errors.HeaderMismatchError, "InternalError": errors.InternalError,
          "InvalidParamsError": errors.InvalidParamsError, "MethodNotFoundError": errors.MethodNotFoundError,
          "MissingRequiredClientCapabilityError": errors.MissingRequiredClientCapabilityError,
          "ParseError": errors.ParseError, "UnsupportedProtocolVersionError": errors.UnsupportedProtocolVersionError}
FIELD_SCHEMAS = {"BooleanSchema", "NumberSchema", "StringSchema", "TitledMultiSelectEnumSchema",
                 "TitledSingleSelectEnumSchema", "UntitledMultiSelectEnumSchema", "UntitledSingleSelectEnumSchema"}
# Params and capability objects with no model of their own: read as the request that carries them.
PARAMS_OF = {"CallToolRequestParams": "tools/call", "CompleteRequestParams": "completion/complete",
             "GetPromptRequestParams": "prompts/get", "PaginatedRequestParams": "tools/list",
             "CancelledNotificationParams": "notifications/cancelled",
             "ResourceUpdatedNotificationParams": "notifications/resources/updated",
             "ElicitRequestFormParams": "elicitation/create", "ElicitRequestURLParams": "elicitation/create"}


def _without_defaults(data):
    """``isError: false`` and the like are the defaults our writer leaves out."""
    if isinstance(data, dict):
        return {k: _without_defaults(v) for k, v in data.items() if not (k == "isError" and v is False)}
    if isinstance(data, list):
        return [_without_defaults(v) for v in data]
    return data


def read_example(name: str, data):
    """Read one example the way this library reads its definition; returns what was made."""
    model = getattr(types, name, None)
    if model is not None and hasattr(model, "from_dict"):
        made = model.from_dict(data)
        assert made.to_dict(MODERN_REVISION) == _without_defaults(data)
        assert model.from_dict(made.to_dict(MODERN_REVISION)) == made
        return made
    if name in ERRORS:
        error = data
        if "jsonrpc" in data:
            reply = decode(json.dumps(data))
            assert isinstance(reply, ErrorResponse)
            error = reply.error.to_dict()
        made = errors.McpError.from_error(error)
        assert type(made) is ERRORS[name]
        return made
    if name in FIELD_SCHEMAS:
        return check_requested_schema({"type": "object", "properties": {"field": data}}, MODERN_REVISION)
    if name in PARAMS_OF:
        message = decode(json.dumps({"jsonrpc": "2.0", "id": 1, "method": PARAMS_OF[name], "params": data}))
        assert isinstance(message, Request) and message.params == data
        return message
    if name in ("ClientCapabilities", "ServerCapabilities", "InputRequests", "InputResponses", "CreateMessageRequest",
                "ElicitRequest", "ListRootsRequest") or \
            name.startswith(("Discover", "InputRequired", "SubscriptionsListenResult")):
        return _read_modern(name, data)
    if isinstance(data, dict) and data.get("jsonrpc") == "2.0":
        message = decode(json.dumps(data))
        assert isinstance(message, (Request, Notification, Response)), (name, message)
        if isinstance(message, Response) and name.endswith("ResultResponse"):
            read_example(name[:-len("Response")], message.result)
        return message
    raise AssertionError(f"no reader for the example definition {name}")


def _input_response(data):
    """One ``InputResponse``, read as the result type its shape names (the client sends
    these; it never reads them)."""
    if not isinstance(data, dict):
        raise errors.InvalidParamsError("an input response is an object")
    if "action" in data:
        return types.ElicitResult.from_dict(data)
    if "roots" in data:
        return types.ListRootsResult.from_dict(data)
    return types.CreateMessageResult.from_dict(data)


def _read_modern(name: str, data):
    """A modern-era definition, read by the readers the client uses (client/modern/)."""
    if name in ("ClientCapabilities", "ServerCapabilities"):
        return era.read_capabilities(data, name)
    if name in ("CreateMessageRequest", "ElicitRequest", "ListRootsRequest"):
        return mrtr.read_input_request(data)
    if name == "InputRequests":
        return {key: mrtr.read_input_request(value) for key, value in data.items()}
    if name == "InputResponses":
        return {key: _input_response(value) for key, value in data.items()}
    if name.endswith("Response") and isinstance(data, dict) and "result" in data:
        return _read_modern(name[:-len("Response")], data["result"])
    if name == "DiscoverResult":
        return era.read_discover(data)
    if name == "DiscoverRequest":
        return modern.read_meta(data.get("params"))
    if name == "InputRequiredResult":
        return mrtr.read_input_required(data)
    if name == "SubscriptionsListenResult":
        requesting.check_result_type(data)
        subscription = (data.get("_meta") or {}).get(modern.SUBSCRIPTION_ID)
        if subscription is None:
            raise errors.InvalidParamsError("SubscriptionsListenResult._meta needs the subscription id")
        return data
    raise errors.InvalidParamsError(f"no modern-era reader for {name}")


@pytest.mark.parametrize("name, path", EXAMPLES, ids=[f"{n}/{p.stem}" for n, p in EXAMPLES])
def test_every_example_is_read(name, path):
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    assert read_example(name, data) is not None


def test_the_examples_are_there():
    if not EXAMPLES:
        pytest.skip(f"{MODERN_REVISION} examples not found under {spec_path()}: set MCP_SPEC_DIR")
    assert len({name for name, _ in EXAMPLES}) >= 80
