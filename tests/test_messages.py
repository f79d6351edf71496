"""JSON-RPC framing: ``mcp_ref.jsonrpc.messages.decode`` / ``encode`` (Spec: basic/index#messages).

Table-driven: every valid row must decode to the expected object and encode
back to the exact same JSON text; every invalid row must raise
``InvalidMessage`` with the code to answer and the id when it was readable.
"""
import json

import pytest

from mcp_ref.errors import INVALID_REQUEST, PARSE_ERROR, InvalidMessage
from mcp_ref.jsonrpc.messages import (ErrorObject, ErrorResponse, Notification, Request, Response, decode, encode,
                              error_response, from_dict, is_request_id)

# ---------------------------------------------------------------------- valid frames
# (wire text, the object it decodes to). The text is in canonical order, so
# encode(decode(text)) must give it back byte for byte.
VALID = [
    ('{"jsonrpc":"2.0","id":1,"method":"ping"}', Request(1, "ping")),
    ('{"jsonrpc":"2.0","id":0,"method":"ping"}', Request(0, "ping")),
    ('{"jsonrpc":"2.0","id":-7,"method":"ping"}', Request(-7, "ping")),
    ('{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}', Request(9007199254740993, "ping")),
    ('{"jsonrpc":"2.0","id":"abc","method":"ping"}', Request("abc", "ping")),
    ('{"jsonrpc":"2.0","id":"","method":"ping"}', Request("", "ping")),
    ('{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2}}}',
     Request(2, "tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}})),
    ('{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{}}', Request(3, "tools/list", {})),
    ('{"jsonrpc":"2.0","id":4,"method":"x","params":{"_meta":{"progressToken":"t-1","example.com/k":[1,{"z":null}]},'
     '"a":1}}',
     Request(4, "x", {"_meta": {"progressToken": "t-1", "example.com/k": [1, {"z": None}]}, "a": 1})),
    ('{"jsonrpc":"2.0","method":"notifications/initialized"}', Notification("notifications/initialized")),
    ('{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":5,"progress":0.5,"total":1}}',
     Notification("notifications/progress", {"progressToken": 5, "progress": 0.5, "total": 1})),
    ('{"jsonrpc":"2.0","id":1,"result":{}}', Response(1, {})),
    ('{"jsonrpc":"2.0","id":"r","result":{"content":[{"type":"text","text":"héllo ✓"}],"_meta":{"k":"v"}}}',
     Response("r", {"content": [{"type": "text", "text": "héllo ✓"}], "_meta": {"k": "v"}})),
    ('{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found"}}',
     ErrorResponse(1, ErrorObject(-32601, "Method not found"))),
    ('{"jsonrpc":"2.0","id":"e","error":{"code":-32002,"message":"Resource not found","data":{"uri":"file:///x"}}}',
     ErrorResponse("e", ErrorObject(-32002, "Resource not found", {"uri": "file:///x"}))),
    ('{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}',
     ErrorResponse(None, ErrorObject(-32700, "Parse error"))),
    # Unknown top-level members are kept and written back (after the known ones).
    ('{"jsonrpc":"2.0","id":1,"method":"ping","x-trace":"abc","extra":[1,2]}',
     Request(1, "ping", None, {"x-trace": "abc", "extra": [1, 2]})),
    ('{"jsonrpc":"2.0","method":"n","params":{"a":1},"vendor":{"k":true}}',
     Notification("n", {"a": 1}, {"vendor": {"k": True}})),
    ('{"jsonrpc":"2.0","id":1,"result":{"_meta":{"a":1}},"trace":1}', Response(1, {"_meta": {"a": 1}}, {"trace": 1})),
    ('{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":""},"z":null}',
     ErrorResponse(1, ErrorObject(1, ""), {"z": None})),
]


@pytest.mark.req("BASE-2", "BASE-12")
@pytest.mark.parametrize("text, expected", VALID, ids=[row[0][:60] for row in VALID])
def test_valid_frames_decode_and_encode_exactly(text, expected):
    message = decode(text)
    assert message == expected
    assert type(message) is type(expected)
    assert encode(message) == text
    assert decode(text.encode("utf-8")) == expected          # bytes in, same message


@pytest.mark.req("TRN-1", "TRN-3")
def test_encode_is_one_compact_line_and_keeps_non_ascii():
    text = encode(Request(1, "x", {"s": "line1\nline2", "u": "日本"}))
    assert "\n" not in text
    assert text == '{"jsonrpc":"2.0","id":1,"method":"x","params":{"s":"line1\\nline2","u":"日本"}}'


@pytest.mark.req("BASE-21")
def test_unknown_members_and_meta_survive_decode_encode_in_any_order():
    original = {"method": "tools/call", "zzz": {"nested": [1, 2]}, "id": "q", "jsonrpc": "2.0",
                "params": {"name": "t", "_meta": {"progressToken": 3, "io.example/trace": "t1"}}}
    back = json.loads(encode(decode(json.dumps(original))))
    assert back == original
    result = {"jsonrpc": "2.0", "id": 1, "result": {"_meta": {"io.example/x": {"deep": [None]}}, "v": 1},
              "other": "kept"}
    assert json.loads(encode(decode(json.dumps(result)))) == result


# ---------------------------------------------------------------------- invalid frames
# (wire text, code, the id the error answer must carry)
INVALID = [
    # not JSON at all: -32700 and no id
    ("not json", PARSE_ERROR, None),
    ('{"jsonrpc":"2.0","id":1,"method":"ping"', PARSE_ERROR, None),
    ("", PARSE_ERROR, None),
    ("{'jsonrpc': '2.0'}", PARSE_ERROR, None),
    # JSON, but not a message
    ("[]", INVALID_REQUEST, None),
    ("5", INVALID_REQUEST, None),
    ('"ping"', INVALID_REQUEST, None),
    ("null", INVALID_REQUEST, None),
    ("{}", INVALID_REQUEST, None),
    # jsonrpc member missing or wrong: the id is still answered
    ('{"id":1,"method":"ping"}', INVALID_REQUEST, 1),
    ('{"jsonrpc":"1.0","id":1,"method":"ping"}', INVALID_REQUEST, 1),
    ('{"jsonrpc":2.0,"id":"a","method":"ping"}', INVALID_REQUEST, "a"),
    ('{"jsonrpc":null,"id":1,"method":"ping"}', INVALID_REQUEST, 1),
    ('{"jsonrpc":"2.0 ","id":1,"result":{}}', INVALID_REQUEST, 1),
    # request ids: never null, never a boolean, never a fraction or an object
    ('{"jsonrpc":"2.0","id":null,"method":"ping"}', INVALID_REQUEST, None),
    ('{"jsonrpc":"2.0","id":true,"method":"ping"}', INVALID_REQUEST, None),
    ('{"jsonrpc":"2.0","id":false,"method":"ping"}', INVALID_REQUEST, None),
    ('{"jsonrpc":"2.0","id":1.5,"method":"ping"}', INVALID_REQUEST, None),
    ('{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}', INVALID_REQUEST, None),
    ('{"jsonrpc":"2.0","id":[1],"method":"ping"}', INVALID_REQUEST, None),
    # method must be a string
    ('{"jsonrpc":"2.0","id":1,"method":5}', INVALID_REQUEST, 1),
    ('{"jsonrpc":"2.0","id":1,"method":null}', INVALID_REQUEST, 1),
    ('{"jsonrpc":"2.0","id":"m","method":["ping"]}', INVALID_REQUEST, "m"),
    ('{"jsonrpc":"2.0","method":{}}', INVALID_REQUEST, None),
    # params must be an object
    ('{"jsonrpc":"2.0","id":1,"method":"x","params":[1,2]}', INVALID_REQUEST, 1),
    ('{"jsonrpc":"2.0","id":1,"method":"x","params":"a"}', INVALID_REQUEST, 1),
    ('{"jsonrpc":"2.0","id":1,"method":"x","params":5}', INVALID_REQUEST, 1),
    ('{"jsonrpc":"2.0","id":1,"method":"x","params":null}', INVALID_REQUEST, 1),
    ('{"jsonrpc":"2.0","id":1,"method":"x","params":true}', INVALID_REQUEST, 1),
    ('{"jsonrpc":"2.0","method":"n","params":[1]}', INVALID_REQUEST, None),
    # responses
    ('{"jsonrpc":"2.0","id":1}', INVALID_REQUEST, 1),
    ('{"jsonrpc":"2.0","id":1,"result":[]}', INVALID_REQUEST, 1),
    ('{"jsonrpc":"2.0","id":1,"result":"ok"}', INVALID_REQUEST, 1),
    ('{"jsonrpc":"2.0","id":1,"result":null}', INVALID_REQUEST, 1),
    ('{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"m"}}', INVALID_REQUEST, 1),
    ('{"jsonrpc":"2.0","id":null,"result":{}}', INVALID_REQUEST, None),
    ('{"jsonrpc":"2.0","id":true,"result":{}}', INVALID_REQUEST, None),
    # malformed error objects
    ('{"jsonrpc":"2.0","id":1,"error":"boom"}', INVALID_REQUEST, 1),
    ('{"jsonrpc":"2.0","id":1,"error":null}', INVALID_REQUEST, 1),
    ('{"jsonrpc":"2.0","id":1,"error":{}}', INVALID_REQUEST, 1),
    ('{"jsonrpc":"2.0","id":1,"error":{"message":"no code"}}', INVALID_REQUEST, 1),
    ('{"jsonrpc":"2.0","id":1,"error":{"code":-32600}}', INVALID_REQUEST, 1),
    ('{"jsonrpc":"2.0","id":1,"error":{"code":"-32600","message":"m"}}', INVALID_REQUEST, 1),
    ('{"jsonrpc":"2.0","id":1,"error":{"code":true,"message":"m"}}', INVALID_REQUEST, 1),
    ('{"jsonrpc":"2.0","id":1,"error":{"code":1.5,"message":"m"}}', INVALID_REQUEST, 1),
    ('{"jsonrpc":"2.0","id":"s","error":{"code":1,"message":5}}', INVALID_REQUEST, "s"),
    ('{"jsonrpc":"2.0","id":false,"error":{"code":1,"message":"m"}}', INVALID_REQUEST, None),
]


@pytest.mark.req("BASE-2", "BASE-3", "BASE-4", "BASE-10")
@pytest.mark.parametrize("text, code, expected_id", INVALID, ids=[row[0][:60] or "(empty)" for row in INVALID])
def test_invalid_frames_raise_with_code_and_id(text, code, expected_id):
    with pytest.raises(InvalidMessage) as info:
        decode(text)
    bad = info.value
    assert bad.code == code
    assert bad.id == expected_id
    assert type(bad.id) is type(expected_id)                 # 1 stays 1, never True
    assert isinstance(bad.message, str) and bad.message
    # The answer to it is a well-formed error response with that id.
    answer = json.loads(encode(error_response(bad)))
    assert answer == {"jsonrpc": "2.0", "id": expected_id, "error": {"code": code, "message": bad.message}}


@pytest.mark.req("TRN-1")
def test_invalid_utf8_is_a_parse_error():
    with pytest.raises(InvalidMessage) as info:
        decode(b'{"jsonrpc":"2.0","id":1,"method":"\xff"}')
    assert info.value.code == PARSE_ERROR and info.value.id is None


@pytest.mark.req("BASE-3", "BASE-4")
@pytest.mark.parametrize("value, ok", [(1, True), (0, True), (-3, True), ("x", True), ("", True),
                                       (True, False), (False, False), (None, False), (1.0, False),
                                       (1.5, False), ([1], False), ({}, False)])
def test_is_request_id(value, ok):
    assert is_request_id(value) is ok


def test_from_dict_rejects_non_objects():
    for value in ([], "x", 1, None):
        with pytest.raises(InvalidMessage) as info:
            from_dict(value)
        assert info.value.code == INVALID_REQUEST


# ---------------------------------------------------------------------- batches (2025-03-26)
def test_batch_decodes_to_a_list_in_order_and_encodes_back():
    text = ('[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"},'
            '{"jsonrpc":"2.0","id":"b","method":"tools/list","params":{"cursor":"c"}}]')
    batch = decode(text)
    assert batch == [Request(1, "ping"), Notification("notifications/initialized"),
                     Request("b", "tools/list", {"cursor": "c"})]
    assert encode(batch) == text


def test_batch_of_responses_encodes_as_an_array():
    replies = [Response(1, {}), ErrorResponse("b", ErrorObject(-32601, "Method not found: x"))]
    assert encode(replies) == ('[{"jsonrpc":"2.0","id":1,"result":{}},'
                               '{"jsonrpc":"2.0","id":"b","error":{"code":-32601,"message":"Method not found: x"}}]')


def test_batch_items_that_are_invalid_become_invalid_message_entries():
    batch = decode('[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":7},5,'
                   '{"jsonrpc":"2.0","id":true,"method":"ping"},[]]')
    assert isinstance(batch, list) and len(batch) == 5
    assert batch[0] == Request(1, "ping")
    bad = batch[1:]
    assert all(isinstance(item, InvalidMessage) for item in bad)
    assert [(item.code, item.id) for item in bad] == [(INVALID_REQUEST, 2), (INVALID_REQUEST, None),
                                                      (INVALID_REQUEST, None), (INVALID_REQUEST, None)]


def test_batch_with_bad_json_is_a_parse_error_not_a_list():
    with pytest.raises(InvalidMessage) as info:
        decode('[{"jsonrpc":"2.0","id":1,"method":"ping"},')
    assert info.value.code == PARSE_ERROR


def test_messages_are_immutable():
    request = Request(1, "ping")
    with pytest.raises(Exception):
        request.id = 2


# ---------------------------------------------------------------------- frames that cannot be decoded (rule 6)
DEEP = 100_000


def test_a_frame_nested_too_deeply_is_a_parse_error_not_a_crash():
    for frame in ('{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":%s%s}}' % ("[" * DEEP, "]" * DEEP),
                  "[" * DEEP + "]" * DEEP, b'{"a":' + b"{\"a\":" * DEEP + b"1" + b"}" * (DEEP + 1)):
        with pytest.raises(InvalidMessage) as info:
            decode(frame)
        assert info.value.code == PARSE_ERROR and "nested too deeply" in info.value.message
        assert info.value.id is None and not info.value.is_response      # a request: answered with id null


@pytest.mark.parametrize("frame, expected_id", [
    ('{"jsonrpc":"2.0","id":7,"result":{"a":%s%s}}' % ("[" * DEEP, "]" * DEEP), 7),
    ('{"jsonrpc":"2.0","id":"r-1","error":{"code":1,"message":"m","data":%s%s}}' % ("[" * DEEP, "]" * DEEP), "r-1"),
    (b'{"jsonrpc":"2.0","id":3,"result":{"text":"\xff"}}', 3),               # not UTF-8
    ('{"jsonrpc":"2.0","id":4,"result":{}', 4),                               # cut short
    ('{"jsonrpc":"2.0","id":5,"result":{}} trailing', 5),
])
def test_an_undecodable_reply_carries_the_id_its_head_shows(frame, expected_id):
    with pytest.raises(InvalidMessage) as info:
        decode(frame)
    assert info.value.code == PARSE_ERROR
    assert info.value.id == expected_id and type(info.value.id) is type(expected_id)
    assert info.value.is_response                                              # so it is never answered


@pytest.mark.parametrize("head, expected", [
    ('{"jsonrpc":"2.0","id":5,"result":' + "[" * 5000, (5, True)),
    ('  \ufeff{"id" : -7 , "error":', (None, False)),                          # a BOM only at the start
    ('\ufeff {"id" : -7 , "error":', (-7, True)),
    ('{"result":{"id":9,"x":"}]"},"id":"a\\u00e9","jsonrpc":"2.0"', ("a\u00e9", True)),  # nested ids do not count
    ('{"jsonrpc":"2.0","id":1.5,"result":{}}', (None, True)),                  # not an id
    ('{"jsonrpc":"2.0","id":true,"result":{}}', (None, True)),
    ('{"jsonrpc":"2.0","id":null,"error":{}}', (None, True)),
    ('{"jsonrpc":"2.0","id":3,"method":"x","params":[[[', (3, False)),       # a request
    ('{"jsonrpc":"2.0","result":{},"method":"x","id":3}', (3, False)),
    ('{"jsonrpc":"2.0","result":' + "[" * 5000 + "]" * 5000 + ',"id":3}', (None, True)),   # the id is past the head
    (b"\xff\xfe", (None, False)),
    ("", (None, False)),
    ("[1,2]", (None, False)),
    ('{"id":', (None, False)),
])
def test_peek_reads_top_level_members_of_the_head_only(head, expected):
    from mcp_ref.jsonrpc.peek import peek
    assert peek(head) == expected


def test_oversized_names_size_and_limit_and_the_id_of_a_reply():
    from mcp_ref.jsonrpc.messages import oversized
    bad = oversized(b'{"jsonrpc":"2.0","id":12,"result":{"text":"xxxx', 20_000_000, 16_777_216)
    assert (bad.code, bad.id, bad.is_response, bad.size, bad.limit) == (INVALID_REQUEST, 12, True, 20_000_000,
                                                                          16_777_216)
    assert "20000000" in bad.message and "16777216" in bad.message
    request = oversized(b'{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{', 20_000_000, 100)
    assert request.id is None and not request.is_response                  # answered -32600 with id null


# ---------------------------------------------------------------------- text UTF-8 cannot carry (rule 7)
def test_encode_line_refuses_lone_surrogates_before_writing_anything():
    from mcp_ref.jsonrpc.messages import EncodeError, NotUnicode, encode_line
    assert encode_line(Request(1, "x", {"t": "caf\u00e9 \U0001f600"})) == \
        '{"jsonrpc":"2.0","id":1,"method":"x","params":{"t":"caf\u00e9 \U0001f600"}}\n'.encode("utf-8")
    for text in ("\ud800", "a\udce9b", "\udfff\ud800"):
        with pytest.raises(NotUnicode, match="lone surrogate") as info:
            encode_line(Response(1, {"content": [{"type": "text", "text": text}]}))
        assert isinstance(info.value, EncodeError)
        str(info.value).encode("utf-8")                                       # the message itself is writable
    decoded = decode('{"jsonrpc":"2.0","id":1,"result":{"t":"\\ud800"}}')    # valid JSON: decoded as is
    assert decoded.result == {"t": "\ud800"}


def test_replace_unencodable_answers_internal_error_naming_the_surrogate():
    from mcp_ref.jsonrpc.messages import replace_unencodable
    ok = Response(1, {"t": "fine"})
    assert replace_unencodable(ok) is ok
    answer = replace_unencodable(Response(2, {"t": "\ud800"}))
    assert isinstance(answer, ErrorResponse) and answer.id == 2 and answer.error.code == -32603
    assert "lone surrogate" in answer.error.message
    assert replace_unencodable(Response(3, {"t": {1, 2}})).error.message == "Internal error: the result is not JSON"
