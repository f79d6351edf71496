"""Small checks of 2026-07-28 requirements that the scenario tests do not pin one
by one (rows of spec_notes/traceability-2026-07-28.md)."""
import pytest

from mcp_ref.client.client_mrtr import check_result_type
from mcp_ref.errors import McpError


@pytest.mark.req("BASE26-11", "SCHEMA26-16", "CHG26-4")
def test_an_absent_result_type_is_complete():
    assert check_result_type({"content": []}, "tools/call") == "complete"
    assert check_result_type({"tools": []}, "tools/list") == "complete"


@pytest.mark.req("BASE26-10")
@pytest.mark.parametrize("kind", ["bogus", "", "Complete", None, 3])
def test_an_unrecognized_result_type_is_invalid(kind):
    with pytest.raises(McpError):
        check_result_type({"resultType": kind}, "tools/list")
    assert check_result_type({"resultType": "input_required"}, "tools/list") == "input_required"


# ---------------------------------------------------------------------- error codes (basic/index#error-codes)
SPEC_RESERVED = {-32020, -32021, -32022}            # the 2026-07-28 sub-range's defined codes
LEGACY_DEFINED = {-32002, -32042}                   # earlier revisions' codes, still spoken to their peers


@pytest.mark.req("BASE26-15", "BASE26-17")
def test_every_code_we_define_in_the_reserved_range_is_the_specs():
    import mcp_ref.errors as errors
    codes = {value for name, value in vars(errors).items() if name.isupper() and type(value) is int}
    codes |= {cls.code for cls in vars(errors).values() if isinstance(cls, type)
              and issubclass(cls, McpError) and type(getattr(cls, "code", None)) is int}
    reserved = {code for code in codes if -32099 <= code <= -32000}
    assert reserved <= SPEC_RESERVED | LEGACY_DEFINED, reserved - SPEC_RESERVED - LEGACY_DEFINED
    assert {errors.HEADER_MISMATCH, errors.MISSING_REQUIRED_CLIENT_CAPABILITY,
            errors.UNSUPPORTED_PROTOCOL_VERSION} == SPEC_RESERVED


@pytest.mark.req("BASE26-18", "RES26-9", "RES26-12")
def test_a_modern_request_never_gets_32002():
    from helpers import raw_server
    from test_modern_server import Exchange, meta, modern_server
    with raw_server(modern_server()) as (peer, session):
        reply = Exchange(peer).call("resources/read", {"uri": "demo://missing", **meta()})
    assert reply["error"]["code"] == -32602 and "result" not in reply


# ---------------------------------------------------------------------- $ref (basic/index#ref-resolution)
@pytest.mark.req("BASE26-36", "BASE26-37", "BASE26-38")
def test_a_remote_ref_is_never_fetched_and_fails_the_check(monkeypatch):
    pytest.importorskip("jsonschema")
    import socket
    import urllib.request

    from mcp_ref.validation import validate

    def no_network(*args, **kwargs):
        raise AssertionError("a $ref was fetched")
    monkeypatch.setattr(socket, "create_connection", no_network)
    monkeypatch.setattr(urllib.request, "urlopen", no_network)
    schema = {"type": "object", "properties": {"a": {"$ref": "http://127.0.0.1:9/schema.json"}}}
    message = validate({"a": 1}, schema)
    assert message is not None and "cannot validate" in message       # refused, not permissive


# ---------------------------------------------------------------------- x-mcp-header (server/tools, streamable-http)
def _prop(**schema):
    return {"type": "object", "properties": {"p": schema}}


@pytest.mark.req("HTTP26-32", "HTTP26-33", "HTTP26-34", "HTTP26-35", "HTTP26-36", "HTTP26-38", "HTTP26-39",
                 "TOOL26-19", "TOOL26-20", "TOOL26-21", "TOOL26-22", "TOOL26-23", "TOOL26-25")
@pytest.mark.parametrize("schema", [
    _prop(type="string", **{"x-mcp-header": ""}),                                   # empty
    _prop(type="string", **{"x-mcp-header": "Re gion"}),                            # not a token
    _prop(type="string", **{"x-mcp-header": "Region:"}),
    _prop(type="string", **{"x-mcp-header": "a\r\nb"}),                             # control characters
    _prop(type="string", **{"x-mcp-header": "a\x7fb"}),
    _prop(type="string", **{"x-mcp-header": 7}),
    {"type": "object", "properties": {"a": {"type": "string", "x-mcp-header": "Region"},
                                      "b": {"type": "string", "x-mcp-header": "region"}}},   # case-insensitive twice
    _prop(type="number", **{"x-mcp-header": "N"}),                                  # not a primitive we allow
    _prop(type="object", **{"x-mcp-header": "O"}),
    _prop(type="array", **{"x-mcp-header": "A"}),
    _prop(type="array", items={"type": "string", "x-mcp-header": "Item"}),          # through items
    {"anyOf": [_prop(type="string", **{"x-mcp-header": "Any"})]},                   # through composition
    {"type": "object", "if": _prop(type="string", **{"x-mcp-header": "If"})},       # through a conditional
    {"$defs": {"d": {"type": "string", "x-mcp-header": "Def"}},
     "type": "object", "properties": {"p": {"$ref": "#/$defs/d"}}},                 # through $ref
    {"type": "string", "x-mcp-header": "Root"},                                     # the root itself
])
def test_an_x_mcp_header_breaking_a_constraint_makes_the_tool_invalid(schema):
    from mcp_ref.transports.http_modern import param_annotations
    with pytest.raises(ValueError):
        param_annotations(schema)


def test_x_mcp_header_reached_through_properties_alone_is_valid():
    from mcp_ref.transports.http_modern import param_annotations
    schema = {"type": "object", "properties": {"o": {"type": "object", "properties": {
        "r": {"type": "string", "x-mcp-header": "Region"}, "n": {"type": "integer", "x-mcp-header": "N-1"},
        "b": {"type": "boolean", "x-mcp-header": "b.ok"}}}}}
    assert param_annotations(schema) == {"Region": (("o", "r"), "string"), "N-1": (("o", "n"), "integer"),
                                         "b.ok": (("o", "b"), "boolean")}


@pytest.mark.req("HTTP26-37", "TOOL26-24", "HTTP26-56", "HTTP26-57", "HTTP26-58", "HTTP26-46", "HTTP26-62")
def test_param_headers_follow_the_table_and_the_safe_integer_range():
    from mcp_ref.transports.http_modern import decode_value, param_annotations, param_headers, param_problem
    annotations = param_annotations({"type": "object", "properties": {
        "n": {"type": "integer", "x-mcp-header": "N"}, "s": {"type": "string", "x-mcp-header": "S"}}})

    def headers(sent):
        return lambda name: {k.lower(): v for k, v in sent.items()}.get(name)
    assert param_headers(annotations, {"n": 5, "s": None}) == {"Mcp-Param-N": "5"}      # null: omitted
    assert param_headers(annotations, {}) == {}                                          # absent: omitted
    assert param_problem(headers({}), annotations, {"s": None}) is None                  # null: not expected
    assert param_problem(headers({}), annotations, {}) is None                           # absent: not expected
    assert param_problem(headers({}), annotations, {"n": 5}).code == -32020              # provided: required
    assert param_problem(headers({"Mcp-Param-N": "42.0"}), annotations, {"n": 42}) is None   # numerically
    safe = 2 ** 53 - 1
    assert param_problem(headers({"Mcp-Param-N": str(safe)}), annotations, {"n": safe}) is None
    for unsafe in (2 ** 53, -(2 ** 53)):
        assert param_problem(headers({"Mcp-Param-N": str(unsafe)}), annotations, {"n": unsafe}).code == -32020
    assert decode_value("=?base64?eA==?=") == "x"
    assert decode_value("=?BASE64?eA==?=") == "=?BASE64?eA==?="        # the markers are lowercase only


@pytest.mark.req("HTTP26-42", "TOOL26-26", "TOOL26-27", "TOOL26-28")
def test_our_client_leaves_out_an_invalid_tool_with_a_warning(caplog):
    from mcp_ref import types
    from mcp_ref.client.client_modern import valid_for_http
    good = types.Tool.from_dict({"name": "good", "inputSchema": _prop(type="string", **{"x-mcp-header": "G"})})
    bad = types.Tool.from_dict({"name": "bad", "inputSchema": _prop(type="number", **{"x-mcp-header": "B"})})
    with caplog.at_level("WARNING", logger="mcp_ref.client"):
        kept = valid_for_http([good, bad])
    assert kept == [good]
    assert "'bad'" in caplog.text and "number" in caplog.text
