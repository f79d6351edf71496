"""``McpError.to_error``: the JSON-RPC error object an ``McpError`` puts on the wire,
and its round trip through ``McpError.from_error``.

Spec: basic/index#responses (an error has an integer ``code``, a string
``message`` and optional ``data``), server/resources#error-handling (-32002),
2025-11-25 client/elicitation (-32042), client/sampling#error-handling (-1).
"""
import json

import pytest

from conftest import REVISIONS
from mcp_ref.errors import (INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, PARSE_ERROR,
                            RESOURCE_NOT_FOUND, URL_ELICITATION_REQUIRED, USER_REJECTED, InternalError,
                            InvalidParamsError, InvalidRequestError, McpError, MethodNotFoundError, ParseError,
                            ResourceNotFoundError, UrlElicitationRequiredError, UserRejectedError)

SUBCLASSES = [
    (ParseError, PARSE_ERROR, -32700),
    (InvalidRequestError, INVALID_REQUEST, -32600),
    (MethodNotFoundError, METHOD_NOT_FOUND, -32601),
    (InvalidParamsError, INVALID_PARAMS, -32602),
    (InternalError, INTERNAL_ERROR, -32603),
    (ResourceNotFoundError, RESOURCE_NOT_FOUND, -32002),
    (UrlElicitationRequiredError, URL_ELICITATION_REQUIRED, -32042),
    (UserRejectedError, USER_REJECTED, -1),
]


@pytest.mark.req("BASE-9")
def test_code_and_message_without_data():
    error = InvalidParamsError("Unknown tool: nope")
    assert error.to_error() == {"code": -32602, "message": "Unknown tool: nope"}
    assert "data" not in error.to_error()


def test_data_is_kept_when_present_even_when_falsy():
    assert McpError("boom", {"uri": "file:///x"}).to_error() == {
        "code": -32603, "message": "boom", "data": {"uri": "file:///x"}}
    for falsy in (0, "", False, [], {}):
        assert McpError("boom", falsy).to_error() == {"code": -32603, "message": "boom", "data": falsy}


def test_a_plain_mcp_error_is_an_internal_error_unless_given_a_code():
    assert McpError("x").to_error()["code"] == INTERNAL_ERROR
    assert McpError("x", code=-32050).to_error() == {"code": -32050, "message": "x"}
    assert McpError("x", code=-32050).code == -32050
    assert McpError.code == INTERNAL_ERROR            # the explicit code is the instance's, not the class's


@pytest.mark.parametrize("cls, code, literal", SUBCLASSES, ids=[c[0].__name__ for c in SUBCLASSES])
def test_each_subclass_sends_its_own_code(cls, code, literal):
    assert code == literal                            # the constants are the spec's numbers
    error = cls("went wrong", {"detail": 1})
    assert error.to_error() == {"code": literal, "message": "went wrong", "data": {"detail": 1}}
    assert isinstance(error.to_error()["code"], int)


@pytest.mark.parametrize("cls, code, literal", SUBCLASSES, ids=[c[0].__name__ for c in SUBCLASSES])
@pytest.mark.parametrize("data", [None, {"uri": "notes://a"}, ["a", 1], "text", 0])
def test_round_trip_through_from_error(cls, code, literal, data):
    original = cls("round trip", data)
    wire = json.loads(json.dumps(original.to_error()))        # what crosses the wire
    back = McpError.from_error(wire)
    assert type(back) is cls
    assert (back.code, back.message, back.data) == (code, "round trip", data)
    assert back.to_error() == original.to_error()


def test_round_trip_of_an_unknown_code_keeps_the_code():
    wire = McpError("custom", {"k": "v"}, code=-32099).to_error()
    back = McpError.from_error(wire)
    assert type(back) is McpError
    assert back.to_error() == {"code": -32099, "message": "custom", "data": {"k": "v"}}


def test_an_explicit_code_of_a_known_subclass_comes_back_as_that_subclass():
    back = McpError.from_error(McpError("not here", code=RESOURCE_NOT_FOUND).to_error())
    assert type(back) is ResourceNotFoundError and back.code == -32002


def test_url_elicitation_data_survives_the_round_trip():
    data = {"elicitations": [{"mode": "url", "elicitationId": "e1", "url": "https://example.com/auth",
                              "message": "Please sign in"}]}
    back = McpError.from_error(UrlElicitationRequiredError("sign in first", data).to_error())
    assert isinstance(back, UrlElicitationRequiredError)
    assert back.elicitations == data["elicitations"]


@pytest.mark.req("BASE-9", "BASE-10")
@pytest.mark.parametrize("revision", REVISIONS)
@pytest.mark.parametrize("cls", [c[0] for c in SUBCLASSES] + [McpError], ids=lambda c: c.__name__)
def test_the_error_object_is_valid_in_every_revision(wire_validator, revision, cls):
    for data in (None, {"detail": "x"}):
        message = {"jsonrpc": "2.0", "id": 7, "error": cls("failed", data).to_error()}
        wire_validator.check(message, revision, kind="error")
