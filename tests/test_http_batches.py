"""Streamable HTTP: a JSON-RPC batch holding ``initialize`` is refused with 400.

Spec: 2025-03-26 basic/lifecycle#initialization ("The initialize request MUST
NOT be part of a JSON-RPC batch, as other requests and notifications are not
possible until initialization has completed"); 2025-03-26
basic/transports#sending-messages-to-the-server (an input the server cannot
accept gets an HTTP error status such as 400, whose body MAY be a JSON-RPC
error without ``id``). Batches themselves exist only in 2025-03-26.

The refusal holds with and without a session id, in stateless mode, and the
refused batch runs nothing: the session that received it keeps working and
is not re-initialized.
"""
import json

import pytest

requests = pytest.importorskip("requests", reason="the HTTP tests drive the server with requests")

from helpers import WAIT, http_tools_server, rpc  # noqa: E402
from mcp_ref.transports.http.server.app import start_http  # noqa: E402

HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


class Counter:
    """A tool with a visible side effect: how many times it ran."""

    def __init__(self):
        self.runs = 0

    def __call__(self) -> int:
        self.runs += 1
        return self.runs


@pytest.fixture
def http():
    """``http(**options) -> handle`` serving ``add`` and ``bump`` (``handle.bump.runs``)."""
    handles = []

    def start(**options):
        server = http_tools_server("batch-check")
        counter = Counter()
        server.add_tool(counter, name="bump", description="Count the calls.")
        handle = start_http(server, ("127.0.0.1", 0), response_mode="json", **options)
        handle.bump = counter
        handles.append(handle)
        return handle
    yield start
    for handle in handles:
        handle.shutdown()


def initialize(id_=0, version="2025-03-26"):
    return rpc(id_, "initialize", {"protocolVersion": version, "capabilities": {},
                                   "clientInfo": {"name": "raw", "version": "1"}})


def post(url, message, session_id=None, version=None):
    headers = dict(HEADERS)
    if session_id is not None:
        headers["Mcp-Session-Id"] = session_id
    if version is not None:
        headers["MCP-Protocol-Version"] = version
    return requests.post(url, data=json.dumps(message), headers=headers, timeout=WAIT)


def open_session(url, version="2025-03-26") -> str:
    response = post(url, initialize(version=version))
    assert response.status_code == 200, response.text
    assert response.json()["result"]["protocolVersion"] == version
    session_id = response.headers["Mcp-Session-Id"]
    assert post(url, {"jsonrpc": "2.0", "method": "notifications/initialized"}, session_id, version).status_code == 202
    return session_id


def assert_refused_as_initialize_in_batch(response) -> None:
    assert response.status_code == 400, response.text
    assert response.headers["Content-Type"] == "application/json"
    assert "Mcp-Session-Id" not in response.headers
    body = response.json()
    assert set(body) == {"jsonrpc", "id", "error"} and body["jsonrpc"] == "2.0" and body["id"] is None
    assert body["error"]["code"] == -32600
    assert "initialize must not be part of a JSON-RPC batch" in body["error"]["message"]


def test_a_batch_holding_initialize_in_a_2025_03_26_session_gets_400(http):
    handle = http()
    session_id = open_session(handle.url)
    # A batch is fine in this session...
    allowed = post(handle.url, [rpc("p", "ping"), rpc("t", "tools/list")], session_id, "2025-03-26")
    assert allowed.status_code == 200 and sorted(a["id"] for a in allowed.json()) == ["p", "t"]
    # ...but not one holding initialize, alone, first or last.
    bump = rpc("b", "tools/call", {"name": "bump", "arguments": {}})
    for batch in ([initialize(5)], [initialize(5), bump], [bump, initialize(5)]):
        assert_refused_as_initialize_in_batch(post(handle.url, batch, session_id, "2025-03-26"))
    # Nothing in the refused batches ran, and the session is neither re-initialized nor broken.
    assert handle.bump.runs == 0
    answer = post(handle.url, bump, session_id, "2025-03-26")
    assert answer.status_code == 200 and answer.json()["result"]["content"][0]["text"] == "1"
    assert handle.app.session_count == 1
    assert handle.app.lookup(session_id).session.protocol_version == "2025-03-26"


def test_a_batch_holding_initialize_without_a_session_gets_400_and_creates_none(http):
    handle = http()
    for batch in ([initialize()], [initialize(), {"jsonrpc": "2.0", "method": "notifications/initialized"}]):
        assert_refused_as_initialize_in_batch(post(handle.url, batch))
    assert handle.app.session_count == 0
    assert post(handle.url, initialize()).status_code == 200          # sent alone, it works


@pytest.mark.parametrize("version", ["2025-06-18", "2025-11-25"])
def test_a_batch_holding_initialize_gets_400_in_later_revisions_too(http, version):
    handle = http()
    session_id = open_session(handle.url, version)
    assert_refused_as_initialize_in_batch(post(handle.url, [initialize(5, version)], session_id, version))
    assert post(handle.url, rpc(1, "ping"), session_id, version).json() == {"jsonrpc": "2.0", "id": 1, "result": {}}


def test_a_batch_holding_initialize_gets_400_in_stateless_mode(http):
    handle = http(stateless=True)
    assert_refused_as_initialize_in_batch(post(handle.url, [initialize()], version="2025-03-26"))
    assert_refused_as_initialize_in_batch(post(handle.url, [rpc(1, "tools/call", {"name": "bump", "arguments": {}}),
                                                            initialize()]))
    assert handle.bump.runs == 0
    ok = post(handle.url, [rpc(1, "ping")], version="2025-03-26")        # a batch without it is answered
    assert ok.status_code == 200 and ok.json() == [{"jsonrpc": "2.0", "id": 1, "result": {}}]
