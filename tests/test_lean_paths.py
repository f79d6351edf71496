"""JSON in and out is ``json.loads``/``json.dumps``, and what loads on first use stays unloaded.

``decode`` and ``encode`` (jsonrpc/messages.py) are checked against ``json`` itself: the
same results, the same errors. The feature modules a plain server does not use
(resources, prompts, tasks, sampling, elicitation, ``mcp_ref.types``, auth) are
loaded only when a server or client uses them: these tests pin that.
"""
import json
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from mcp_ref.errors import INTERNAL_ERROR, PARSE_ERROR, InvalidMessage
from mcp_ref.jsonrpc.messages import (EncodeError, ErrorObject, ErrorResponse, Notification, Request, Response, decode,
                                      encode)
from mcp_ref.session import Session
from mcp_ref.transports import memory_pair

from helpers import WAIT, RawPeer

ROOT = Path(__file__).resolve().parent.parent

VALID = [
    '{"jsonrpc":"2.0","id":1,"method":"ping"}',
    '  {"jsonrpc": "2.0", "id": "a", "method": "x", "params": {"k": [1, 2.5, null, true]}}\r\n',
    '\t{"jsonrpc":"2.0","method":"notifications/x","params":{"é":"ü ☃"}}\n',
    '{"jsonrpc":"2.0","id":7,"result":{}}',
    '{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"m","data":{"x":1}}}',
    '[{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","method":"b"}]',
    '{"jsonrpc":"2.0","id":1,"method":"m","params":{"n":1e400,"s":"\\ud83d\\ude00"}}',
]
INVALID = ['', '   ', '{', '{"a":1} {"b":2}', '{"a":1}x', 'nul', '[1,]', '{"a":NaN', "'x'", '\u00a0{}']


def _as_plain(message):
    return [_as_plain(m) for m in message] if isinstance(message, list) else message.to_dict()


@pytest.mark.parametrize("text", VALID)
def test_decode_gives_what_json_loads_gives(text):
    for frame in (text, text.encode("utf-8")):
        assert _as_plain(decode(frame)) == json.loads(text)


def test_a_utf8_bom_before_a_byte_frame_is_skipped():
    assert decode(b"\xef\xbb\xbf" + VALID[0].encode()) == Request(1, "ping")


@pytest.mark.parametrize("text", INVALID)
def test_decode_refuses_what_json_loads_refuses_with_a_parse_error(text):
    with pytest.raises(ValueError):
        json.loads(text)
    with pytest.raises(InvalidMessage) as info:
        decode(text)
    assert info.value.code == PARSE_ERROR and info.value.id is None
    assert info.value.message.startswith("Parse error: ")


def test_encode_matches_compact_json_dumps():
    message = Response("r", {"text": "é ☃ \u2028", "n": [1, 2.5, -0.0, None, True, {"a": {}}], "big": 10 ** 30})
    assert encode(message) == json.dumps(message.to_dict(), separators=(",", ":"), ensure_ascii=False)


@pytest.mark.parametrize("value", [{1, 2}, object(), float("nan"), float("inf"), b"bytes"])
def test_encode_refuses_what_json_cannot_carry(value):
    with pytest.raises(EncodeError) as info:
        encode(Response(1, {"value": value}))
    assert "cannot encode" in str(info.value)


def test_encode_refuses_a_cycle():
    looped: dict = {}
    looped["self"] = looped
    with pytest.raises(EncodeError):
        encode(Notification("x", looped))


def test_encode_is_safe_from_many_threads_at_once():
    messages = [Response(i, {"items": list(range(i % 50)), "text": "x" * (i % 7)}) for i in range(400)]
    expected = [json.dumps(m.to_dict(), separators=(",", ":")) for m in messages]
    results: dict = {}

    def work(offset):
        results[offset] = [encode(m) for m in messages[offset::4]]
    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(WAIT)
    for k in range(4):
        assert results[k] == expected[k::4]


def test_messages_are_values():
    assert Request(1, "m", {"a": 1}) == Request(1, "m", {"a": 1})
    assert Request(1, "m") != Request(2, "m") and Request(1, "m") != Notification("m")
    assert ErrorResponse(1, ErrorObject(-1, "x")) == ErrorResponse(1, ErrorObject(-1, "x"))
    assert repr(Request(1, "m")) == "Request(id=1, method='m', params=None, extra=None)"
    with pytest.raises(AttributeError):
        Response(1, {}).result = {"x": 1}


def _session_answering(result):
    ours, theirs = memory_pair()
    session = Session(ours, lambda ctx, method, params: result).start()
    return session, RawPeer(theirs)


def test_a_result_json_cannot_carry_is_answered_internal_error_and_the_session_lives():
    session, peer = _session_answering({"tags": {"a", "b"}})
    try:
        reply = peer.request(5, "anything", {})
        assert reply["id"] == 5 and reply["error"]["code"] == INTERNAL_ERROR
        assert "not JSON" in reply["error"]["message"]
        peer.ping()
        assert not session.closed
    finally:
        session.close()


@pytest.mark.req("TRN-6")
def test_sending_a_request_json_cannot_carry_raises_and_nothing_is_written():
    session, peer = _session_answering({})
    try:
        with pytest.raises(EncodeError):
            session.request("x", {"when": object()}, timeout=WAIT)
        with pytest.raises(EncodeError):
            session.notify("notifications/x", {"n": float("nan")})
        peer.assert_silent()
        peer.ping()
        assert session.in_flight == 0 and not session.closed
    finally:
        session.close()


# Checked against what the interpreter had loaded before our import: a site hook
# (an editable install's finder, for one) may load some of these itself.
OPTIONAL = ["requests", "jsonschema", "mcp_ref.auth", "mcp_ref.transports.http.client.common"]
# A server builds its models (mcp_ref.types, dataclasses) and its registries at registration
# (tools.py rule 8): those load with it by design.
HEAVY = OPTIONAL + ["urllib.parse", "mcp_ref.server.resources", "mcp_ref.server.prompts",
                    "mcp_ref.client.elicitation", "mcp_ref.client.sampling",
                    "mcp_ref.client.approval", "mcp_ref.server.tasks.legacy", "mcp_ref.server.tasks.context",
                    "secrets"]
# The client's room imports its features and types at the top (its rooms share them).
CLIENT_HEAVY = OPTIONAL + ["mcp_ref.server.server", "mcp_ref.server.resources", "mcp_ref.server.prompts",
                           "mcp_ref.server.tasks.legacy"]


@pytest.mark.parametrize("modules, heavy", [("mcp_ref.server, mcp_ref.transports.stdio", HEAVY),
                                            ("mcp_ref.client, mcp_ref.transports.stdio", CLIENT_HEAVY),
                                            ("mcp_ref", HEAVY)])
def test_importing_a_stdio_server_or_client_loads_nothing_heavy(modules, heavy):
    code = (f"import sys, json\n_BASE = set(sys.modules)\nimport {modules}\n"
            f"print(json.dumps(sorted((set(sys.modules) - _BASE) & set({heavy!r}))))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == [], f"import {modules} loaded these at import time"


# How the two servers below are driven: ``lines`` through a stdio transport in memory, then
# the replies and the heavy modules loaded, as JSON.
SERVE_LINES = """
out = io.BytesIO()
transport = StdioServerTransport(stdin=io.BytesIO("".join(json.dumps(m) + "\\n" for m in lines).encode()),
                                 stdout=out)
server.serve(transport, eof_grace=30).wait_closed()      # every answer, then EOF closes
replies = [json.loads(line) for line in out.getvalue().splitlines()]
print(json.dumps({"replies": replies, "heavy": sorted((set(sys.modules) - _BASE) & set(HEAVY))}))
"""


SERVE_ONE_CALL = """
import io, json, sys
from mcp_ref import Server
from mcp_ref.transports.stdio import StdioServerTransport
server = Server("lean", version="1.0")

@server.tool
def add(a: int, b: int) -> int:
    \"\"\"Add two numbers.\"\"\"
    return a + b

lines = [{"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25",
          "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}},
         {"jsonrpc": "2.0", "method": "notifications/initialized"},
         {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "add", "arguments": {"a": 1, "b": 2}}}]
"""


def test_a_stdio_server_with_a_plain_tool_answers_without_loading_anything_heavy():
    code = f"import sys\n_BASE = set(sys.modules)\nHEAVY = {HEAVY!r}\n" + SERVE_ONE_CALL + SERVE_LINES
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["replies"][0]["result"]["serverInfo"] == {"name": "lean", "version": "1.0"}
    assert report["replies"][1] == {"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": "3"}]}}
    assert report["heavy"] == [], "serving initialize and one call loaded these"


SERVE_CATALOG = """
import io, json, sys
from mcp_ref import Server
from mcp_ref.transports.stdio import StdioServerTransport
server = Server("lean", version="1.0")

@server.resource("docs://readme")
def readme() -> str:
    \"\"\"The readme.\"\"\"
    return "hello"

@server.resource("users://{id}/profile")
def profile(id: str) -> str:
    \"\"\"A profile.\"\"\"
    return id

@server.prompt
def review(topic: str, style: str = "short") -> str:
    \"\"\"Review a topic.\"\"\"
    return topic

requests = [("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                            "clientInfo": {"name": "t", "version": "1"}}),
            ("resources/list", {}), ("resources/templates/list", {}), ("prompts/list", {})]
lines = [{"jsonrpc": "2.0", "id": i, "method": method, "params": params}
         for i, (method, params) in enumerate(requests)]
"""


def test_a_stdio_server_of_resources_templates_and_prompts_starts_and_lists_without_anything_heavy():
    """resources.py and prompts.py rule 6: registering plain functions, answering
    ``initialize`` and listing them loads neither ``mcp_ref.types`` nor
    ``urllib.parse`` (schema/uritemplate.py): a server of 10,000
    resources, templates or prompts starts in what its registrations cost
    (bench/bench_growth.py, issue 17)."""
    heavy = [name for name in HEAVY if name not in ("mcp_ref.server.resources", "mcp_ref.server.prompts")]
    code = f"import sys\n_BASE = set(sys.modules)\nHEAVY = {heavy!r}\n" + SERVE_CATALOG + SERVE_LINES
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    results = {reply["id"]: reply["result"] for reply in report["replies"]}
    assert results[0]["capabilities"]["resources"] and results[0]["capabilities"]["prompts"]
    assert results[1] == {"resources": [{"uri": "docs://readme", "name": "readme", "description": "The readme."}]}
    assert results[2] == {"resourceTemplates": [{"uriTemplate": "users://{id}/profile", "name": "profile",
                                                 "description": "A profile."}]}
    assert results[3] == {"prompts": [{"name": "review", "description": "Review a topic.", "arguments": [
        {"name": "topic", "required": True}, {"name": "style", "required": False}]}]}
    assert report["heavy"] == [], "registering, initialize and the listings loaded these"


def test_an_http_server_without_auth_loads_no_auth():
    """The auth room loads whole on its first use (auth/__init__.py): an HTTP server without
    ``auth=`` needs none of it; the names import from ``mcp_ref.auth``."""
    code = ("import sys, json\nimport mcp_ref.server, mcp_ref.transports.http.server.app\n"
            "auth = lambda: sorted(m for m in sys.modules if m.startswith('mcp_ref.auth.'))\n"
            "loaded = auth()\n"
            "from mcp_ref.auth import OAuthClientProvider, TokenStorage, StaticTokenVerifier\n"
            "print(json.dumps([loaded, auth(), OAuthClientProvider.__module__, TokenStorage.__module__]))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    loaded, after, provider, storage = json.loads(out.stdout)
    assert loaded == [] and [provider, storage] == ["mcp_ref.auth.providers", "mcp_ref.auth.storage"]
    assert "mcp_ref.auth.resource_server" in after


HTTP_ONE_CALL = """
import http.client, json, sys
from mcp_ref import Server
from mcp_ref.transports.http.server.app import start_http
server = Server("lean", version="1.0")

@server.tool
def add(a: int, b: int) -> int:
    \"\"\"Add two numbers.\"\"\"
    return a + b

handle = start_http(server, ("127.0.0.1", 0))
conn = http.client.HTTPConnection("127.0.0.1", handle.port, timeout=30)
headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
replies = []
for message in ({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25",
                 "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}},
                {"jsonrpc": "2.0", "method": "notifications/initialized"},
                {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "add",
                 "arguments": {"a": 1, "b": 2}}}):
    conn.request("POST", "/mcp", json.dumps(message), headers)
    response = conn.getresponse()
    body = response.read()
    headers.setdefault("Mcp-Session-Id", response.getheader("Mcp-Session-Id"))
    headers["MCP-Protocol-Version"] = "2025-11-25"
    replies.append(json.loads(body) if body else response.status)
heavy = sorted((set(sys.modules) - _BASE) & set(HEAVY))
handle.shutdown()
print(json.dumps({"replies": replies, "heavy": heavy}))
"""


def test_an_http_server_answers_a_call_without_loading_auth():
    """A server that has no ``auth=`` needs no ``mcp_ref.auth`` module."""
    heavy = ["mcp_ref.auth.resource_server", "mcp_ref.auth.challenge"]
    code = f"import sys\n_BASE = set(sys.modules)\nHEAVY = {heavy!r}\n" + HTTP_ONE_CALL
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["replies"][0]["result"]["serverInfo"] == {"name": "lean", "version": "1.0"}
    assert report["replies"][1:] == [202, {"jsonrpc": "2.0", "id": 1,
                                           "result": {"content": [{"type": "text", "text": "3"}]}}]
    assert report["heavy"] == [], "serving initialize and one call over HTTP loaded these"
