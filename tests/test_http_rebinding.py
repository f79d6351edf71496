"""DNS-rebinding protection on every bind, not only loopback: ``Host`` must name the server
and ``Origin`` must be its own unless the application lists others; and
``MCP-Protocol-Version`` is checked on the ``initialize`` POST too.

``http.client`` sends exactly the ``Host`` and ``Origin`` each case needs. Spec:
basic/transports#security-warning (403 for a bad ``Origin``),
basic/transports#protocol-version-header, security_best_practices#local-mcp-server-compromise.
"""
import http.client
import json
import logging
import socket

import pytest

from mcp_ref import Server
from mcp_ref.transports.http.server.app import start_http

from helpers import rpc

HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


def init_body() -> str:
    return json.dumps(rpc(0, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                            "clientInfo": {"name": "raw", "version": "1"}}))


def status(address: str, port: int, host=None, origin=None, **headers) -> int:
    """POST initialize to ``address:port`` with exactly this ``Host`` (default: ``address:port``)."""
    conn = http.client.HTTPConnection(address, port, timeout=30)
    try:
        conn.putrequest("POST", "/mcp", skip_host=True, skip_accept_encoding=True)
        conn.putheader("Host", host if host is not None else f"{address}:{port}")
        if origin is not None:
            conn.putheader("Origin", origin)
        body = init_body().encode()
        for name, value in {**HEADERS, **headers, "Content-Length": str(len(body))}.items():
            conn.putheader(name, value)
        conn.endheaders(body)
        response = conn.getresponse()
        payload = response.read()
        if response.status == 403:
            error = json.loads(payload)
            assert error["id"] is None and error["error"]["code"] == -32600
        return response.status
    finally:
        conn.close()


def _lan_address():
    """This machine's address on its default route, or None (a loopback-only machine)."""
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        probe.connect(("192.0.2.1", 9))          # UDP: nothing is sent
        address = probe.getsockname()[0]
    except OSError:
        return None
    finally:
        probe.close()
    return None if address.startswith("127.") else address


LAN = _lan_address()
needs_lan = pytest.mark.skipif(LAN is None, reason="no non-loopback address on this machine")


@pytest.fixture
def serve():
    handles = []

    def start(host, **options):
        handle = start_http(Server("rebinding"), (host, 0), **options)
        handles.append(handle)
        return handle
    yield start
    for handle in handles:
        handle.shutdown()


def test_a_specific_non_loopback_bind_checks_host_and_origin(serve):
    """127.0.0.2 is a loopback address but not one of the loopback *names*: it stands for any
    specific address here, and needs no network. Before, such a bind accepted any Host."""
    port = serve("127.0.0.2").port
    assert status("127.0.0.2", port) == 200
    assert status("127.0.0.2", port, host=f"{socket.gethostname()}:{port}") == 200   # the machine's name
    assert status("127.0.0.2", port, host="evil.example") == 403
    assert status("127.0.0.2", port, host=f"evil.example:{port}") == 403          # DNS rebinding
    assert status("127.0.0.2", port, host="127.0.0.2:1") == 403                   # another port
    assert status("127.0.0.2", port, host="127.0.0.2") == 403                     # port 80 implied
    assert status("127.0.0.2", port, host=f"127.0.0.2:{port}x") == 403
    assert status("127.0.0.2", port, host="") == 403
    assert status("127.0.0.2", port, origin=f"http://127.0.0.2:{port}") == 200    # its own origin
    assert status("127.0.0.2", port, origin="http://evil.example") == 403
    assert status("127.0.0.2", port, origin=f"http://evil.example:{port}") == 403
    assert status("127.0.0.2", port, origin="http://localhost:5173") == 403       # not a loopback bind
    assert status("127.0.0.2", port, origin="null") == 403


def test_wildcards_only_when_the_application_says_so(serve):
    port = serve("127.0.0.2", allowed_hosts=["*"]).port
    assert status("127.0.0.2", port, host="anything.example") == 200
    assert status("127.0.0.2", port, host="anything.example", origin="http://anything.example") == 200
    assert status("127.0.0.2", port, host="anything.example", origin="http://evil.example") == 403
    port = serve("127.0.0.2", allowed_hosts=["mcp.example:*"], allowed_origins=["*"]).port
    assert status("127.0.0.2", port, host="mcp.example:443", origin="http://evil.example") == 200
    assert status("127.0.0.2", port) == 403                       # listing hosts replaces the default


def test_a_wildcard_bind_reached_over_loopback(serve):
    port = serve("0.0.0.0").port
    for host in (f"127.0.0.1:{port}", f"localhost:{port}", f"0.0.0.0:{port}", f"{socket.gethostname()}:{port}"):
        assert status("127.0.0.1", port, host=host) == 200, host
    assert status("127.0.0.1", port, host=f"evil.example:{port}") == 403
    assert status("127.0.0.1", port, host="127.0.0.1:1") == 403
    assert status("127.0.0.1", port, origin="http://localhost:5173") == 200       # a local page, as on loopback
    assert status("127.0.0.1", port, origin="http://evil.example") == 403


@needs_lan
def test_a_wildcard_bind_reached_over_the_network(serve):
    port = serve("0.0.0.0").port
    assert status(LAN, port) == 200                                               # the address it arrived on
    assert status(LAN, port, host=f"{socket.gethostname()}:{port}") == 200
    assert status(LAN, port, host=f"localhost:{port}") == 403                     # not over loopback
    assert status(LAN, port, host=f"evil.example:{port}") == 403
    assert status(LAN, port, origin=f"http://{LAN}:{port}") == 200
    assert status(LAN, port, origin="http://localhost:5173") == 403
    assert status(LAN, port, origin="http://evil.example") == 403


def test_an_ipv6_wildcard_bind_takes_ipv4_mapped_connections(serve):
    try:
        port = serve("::").port
    except OSError:
        pytest.skip("no IPv6 on this machine")
    assert status("::1", port, host=f"[::1]:{port}") == 200
    assert status("::1", port, host=f"evil.example:{port}") == 403
    try:
        socket.create_connection(("127.0.0.1", port), timeout=5).close()
    except OSError:
        return                                                                     # an IPv6-only socket
    assert status("127.0.0.1", port) == 200                                       # ::ffff:127.0.0.1
    assert status("127.0.0.1", port, host=f"evil.example:{port}") == 403


def test_a_refused_host_is_logged_once_with_what_to_do(serve, caplog):
    port = serve("127.0.0.2").port
    with caplog.at_level(logging.WARNING, logger="mcp_ref.http"):
        for _ in range(3):
            assert status("127.0.0.2", port, host="proxy.example") == 403
    warnings = [r.getMessage() for r in caplog.records if "proxy.example" in r.getMessage()]
    assert len(warnings) == 1 and "allowed_hosts" in warnings[0]


def test_loopback_binds_behave_as_before(serve):
    port = serve("127.0.0.1").port
    assert status("127.0.0.1", port, host="localhost:9999") == 200                # any port
    assert status("127.0.0.1", port, host="[::1]:1") == 200
    assert status("127.0.0.1", port, host="evil.example") == 403
    assert status("127.0.0.1", port, origin="http://localhost:5173") == 200
    assert status("127.0.0.1", port, origin="http://evil.example") == 403


@pytest.mark.parametrize("version, expected", [("1999-01-01", 400), ("not a version", 400),
                                               ("2025-11-25", 200), ("2025-03-26", 200), (None, 200)])
def test_the_protocol_version_header_is_checked_on_initialize(serve, version, expected):
    handle = serve("127.0.0.1")
    headers = {} if version is None else {"MCP-Protocol-Version": version}
    assert status("127.0.0.1", handle.port, **headers) == expected
    assert handle.app.session_count == (1 if expected == 200 else 0)               # a refusal creates none
