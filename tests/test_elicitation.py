"""Elicitation: the form-schema subset, defaults, validation, URL mode, both sides.

Pure checks of ``mcp_ref.elicitation_schema`` first, then in-process flows over
``memory_pair()`` (every message validated against the negotiated revision's
schema), then the same flows end to end over stdio against
``mcp_ref.examples.client_features``. Spec: client/elicitation.
"""
import sys
import threading

import pytest

from mcp_ref import Client, Server
from mcp_ref.elicitation import (ElicitationTracker, check_url, client_modes, url_elicitation,
                                 url_elicitation_required)
from mcp_ref.elicitation_schema import (InvalidElicitationSchema, check_requested_schema, content_problem,
                                        fill_defaults)
from mcp_ref.errors import (CapabilityNotSupported, InternalError, InvalidParamsError, McpError,
                            UrlElicitationRequiredError)
from mcp_ref.server import Context
from mcp_ref.types import ElicitResult

from client_features_helpers import WAIT, connect, feature_server, stdio_client

# ---------------------------------------------------------------------- every 2025-11-25 form shape
STRING = {"type": "string", "title": "Name", "description": "Your name", "minLength": 1, "maxLength": 20,
          "pattern": "^[A-Za-z ]+$", "default": "Ada"}
EMAIL = {"type": "string", "format": "email", "default": "ada@example.com"}
URI = {"type": "string", "format": "uri"}
DATE = {"type": "string", "format": "date", "default": "2025-11-25"}
DATE_TIME = {"type": "string", "format": "date-time"}
NUMBER = {"type": "number", "minimum": 0, "maximum": 10, "default": 2.5}
INTEGER = {"type": "integer", "minimum": 18, "default": 36}
BOOLEAN = {"type": "boolean", "default": False}
UNTITLED = {"type": "string", "enum": ["red", "green", "blue"], "default": "red"}
TITLED = {"type": "string", "oneOf": [{"const": "#f00", "title": "Red"}, {"const": "#0f0", "title": "Green"}],
          "default": "#f00"}
LEGACY = {"type": "string", "enum": ["s", "m", "l"], "enumNames": ["Small", "Medium", "Large"], "default": "m"}
MULTI = {"type": "array", "items": {"type": "string", "enum": ["a", "b", "c"]}, "minItems": 1, "maxItems": 2,
         "default": ["a"]}
TITLED_MULTI = {"type": "array", "items": {"anyOf": [{"const": "x", "title": "Ex"}, {"const": "y", "title": "Why"}]},
                "default": ["x", "y"]}
EVERY_SHAPE = {"type": "object", "properties": {
    "name": STRING, "email": EMAIL, "home": URI, "day": DATE, "at": DATE_TIME, "score": NUMBER, "age": INTEGER,
    "agree": BOOLEAN, "color": UNTITLED, "hex": TITLED, "size": LEGACY, "tags": MULTI, "marks": TITLED_MULTI},
    "required": ["name", "agree"]}


def obj(properties, required=()):
    return {"type": "object", "properties": properties, "required": list(required)}


def test_every_2025_11_25_shape_passes_the_pre_send_check():
    assert check_requested_schema(EVERY_SHAPE, "2025-11-25") is EVERY_SHAPE
    assert check_requested_schema({**EVERY_SHAPE, "$schema": "https://json-schema.org/draft/2020-12/schema"})


@pytest.mark.parametrize("prop, problem", [
    ({"type": "object", "properties": {}}, "property type 'object'"),
    ({"type": "array", "items": {"type": "object"}}, "multi-select enum"),
    ({"type": "array", "items": {"type": "string"}}, "multi-select enum"),
    ({"type": "string", "format": "password"}, "format 'password'"),
    ({"type": "string", "enum": []}, "non-empty list"),
    ({"type": "string", "enum": ["a", 1]}, "list of strings"),
    ({"type": "string", "enum": ["a", "b"], "enumNames": ["A"]}, "enumNames"),
    ({"type": "string", "oneOf": [{"const": "a"}]}, "const"),
    ({"type": "string", "oneOf": [{"const": "a", "title": "A", "description": "x"}]}, "const"),
    ({"type": "number", "minimum": "0"}, "minimum must be a number"),
    ({"type": "string", "minLength": -1}, "minLength"),
    ({"type": "string", "pattern": "("}, "pattern"),
    ({"type": "string", "default": 3}, "default 3"),
    ({"type": "integer", "default": 2.5}, "default 2.5"),
    ({"type": "boolean", "default": "yes"}, "default 'yes'"),
    ({"type": "string", "enum": ["a"], "default": "b"}, "default 'b'"),
    ({"type": "array", "items": {"type": "string", "enum": ["a"]}, "default": ["z"]}, "default"),
    ({"type": "string", "$ref": "#/x"}, "outside the elicitation subset"),
    ({"type": "string", "properties": {}}, "outside the elicitation subset"),
    ({"type": "null"}, "property type 'null'"),
    ({"enum": ["a"]}, "property type None"),
    ("string", "a property schema is an object"),
])
def test_schemas_outside_the_subset_are_refused(prop, problem):
    with pytest.raises(InvalidElicitationSchema, match=problem.replace("(", r"\(")):
        check_requested_schema(obj({"p": prop}))


@pytest.mark.parametrize("schema, problem", [
    (None, "object schema"),
    ({"type": "array"}, "object schema"),
    ({"type": "object"}, "needs \"properties\""),
    ({"type": "object", "properties": {}, "required": "p"}, "required must be a list"),
    ({"type": "object", "properties": {}, "required": ["p"]}, "unknown properties"),
    ({"type": "object", "properties": {}, "additionalProperties": True}, "outside the elicitation subset"),
])
def test_top_level_shape_is_checked(schema, problem):
    with pytest.raises(InvalidElicitationSchema, match=problem):
        check_requested_schema(schema)


def test_the_client_side_check_tolerates_extra_annotations():
    schema = obj({"name": {"type": "string", "examples": ["x"], "x-widget": "text"}})
    with pytest.raises(InvalidElicitationSchema):
        check_requested_schema(schema)
    assert check_requested_schema(schema, strict=False)
    with pytest.raises(InvalidElicitationSchema):       # but never a nested object
        check_requested_schema(obj({"o": {"type": "object"}}), strict=False)


@pytest.mark.parametrize("prop", [TITLED, MULTI, TITLED_MULTI])
def test_shapes_of_2025_11_25_are_not_sent_to_2025_06_18(prop):
    with pytest.raises(CapabilityNotSupported, match="2025-11-25"):
        check_requested_schema(obj({"p": prop}), "2025-06-18")
    for prop in (STRING, NUMBER, BOOLEAN, UNTITLED, LEGACY):
        check_requested_schema(obj({"p": prop}), "2025-06-18")


def test_defaults_fill_only_missing_properties():
    content = fill_defaults(EVERY_SHAPE, {"name": "Grace", "agree": True})
    assert content == {"name": "Grace", "email": "ada@example.com", "day": "2025-11-25", "score": 2.5,
                       "age": 36, "agree": True, "color": "red", "hex": "#f00", "size": "m", "tags": ["a"],
                       "marks": ["x", "y"]}
    assert content_problem(EVERY_SHAPE, content) is None
    content["tags"].append("b")
    assert MULTI["default"] == ["a"]                      # the schema's default is not shared


@pytest.mark.parametrize("name, value, problem", [
    ("name", 3, "not a string"),
    ("name", "", "wrong length"),
    ("name", "R2D2", "pattern"),
    ("email", "not-an-email", "valid email"),
    ("home", "no scheme", "valid uri"),
    ("day", "2025-13-01", "valid date"),
    ("day", "25/11/2025", "valid date"),
    ("at", "2025-11-25 10:00", "valid date-time"),
    ("score", 11, "out of range"),
    ("score", "5", "not a number"),
    ("age", 17, "out of range"),
    ("age", 18.5, "not an integer"),
    ("agree", 1, "not a boolean"),
    ("age", True, "not an integer"),
    ("color", "pink", "not one of"),
    ("hex", "Red", "not one of"),
    ("size", "Small", "not one of"),
    ("tags", ["a", "z"], "not among"),
    ("tags", [], "number of items"),
    ("tags", ["a", "b", "c"], "number of items"),
    ("tags", "a", "list of strings"),
    ("marks", ["Ex"], "not among"),
    ("nickname", "x", "not in the requested schema"),
])
def test_invalid_content_is_named(name, value, problem):
    content = fill_defaults(EVERY_SHAPE, {"name": "Grace", "agree": True, "at": "2025-11-25T10:00:00Z"})
    content[name] = value
    assert problem in content_problem(EVERY_SHAPE, content)


def test_required_and_shape_of_content():
    assert "required properties ['agree']" in content_problem(EVERY_SHAPE, {"name": "Grace"})
    assert content_problem(EVERY_SHAPE, ["name"]) == "content must be an object"
    assert content_problem(obj({"at": DATE_TIME}), {"at": "2025-11-25T10:00:00.5+02:00"}) is None


def test_modes_from_capabilities():
    assert client_modes({}) == set()
    assert client_modes({"elicitation": {}}) == {"form"}        # backwards compatibility
    assert client_modes({"elicitation": {"url": {}}}) == {"url"}
    assert client_modes({"elicitation": {"form": {}, "url": {}}}) == {"form", "url"}


def test_url_helpers():
    params = url_elicitation("Connect your account", "https://example.com/connect?x=1", "abc")
    assert params == {"mode": "url", "message": "Connect your account", "url": "https://example.com/connect?x=1",
                      "elicitationId": "abc"}
    assert len(url_elicitation("m", "https://example.com")["elicitationId"]) == 36
    for bad in ("example.com", "javascript:alert(1)", "https:///x", "https://a b", 3):
        with pytest.raises(ValueError):
            check_url(bad)
    error = url_elicitation_required([params])
    assert isinstance(error, UrlElicitationRequiredError) and error.code == -32042
    assert error.elicitations == [params]
    with pytest.raises(ValueError):
        url_elicitation_required([{"mode": "form", "message": "x"}])
    with pytest.raises(CapabilityNotSupported):
        url_elicitation_required([params], capabilities={"elicitation": {}}, revision="2025-11-25")


def test_tracker_reports_each_known_id_once():
    seen = []
    tracker = ElicitationTracker(seen.append)
    assert tracker.complete("unknown") is False
    tracker.expect("a")
    assert tracker.is_pending("a")
    assert tracker.complete("a") is True
    assert tracker.complete("a") is False                     # already completed: ignored
    assert tracker.wait("a", 0) is True
    assert tracker.wait("b", 0.01) is False
    assert tracker.complete(5) is False
    assert seen == ["a"]
