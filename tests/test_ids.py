"""Session ids and task ids are unguessable and unique.

* ``Mcp-Session-Id`` (Streamable HTTP and the legacy HTTP+SSE ``session_id``): SHOULD be
  globally unique and cryptographically secure, MUST be visible ASCII (0x21 to 0x7E).
  Spec: basic/transports#session-management, basic/security_best_practices#session-hijacking.
* Task ids: MUST be unique among the receiver's tasks; without context binding MUST be
  cryptographically secure with enough entropy to prevent guessing. Spec:
  basic/utilities/tasks#task-id-requirements, #task-isolation-and-access-control.

Both are ``secrets.token_urlsafe`` (``os.urandom``, the operating system's CSPRNG) with
at least 128 random bits, unchanged, as URL-safe base64. ``check_unguessable``
checks a generator; its own test shows it refuses the weak ones (a counter, too few bits,
a non-cryptographic generator, a shortened id).
"""
import base64
import os
import random
import secrets
import string

import pytest

from features_helpers import connected
from mcp_ref import Server
from mcp_ref.server.tasks import legacy as tasks_module
from mcp_ref.server.tasks.legacy import new_task_id
from mcp_ref.transports.http.server import app as http_server
from mcp_ref.transports.http.server.app import new_session_id

COUNT = 10_000
MIN_BITS = 128
URL_SAFE = frozenset(string.ascii_letters + string.digits + "-_")


def check_unguessable(make_id, monkeypatch) -> list:
    """``COUNT`` ids of ``make_id()``: each is exactly the URL-safe base64 of what
    ``os.urandom`` gave, at least ``MIN_BITS`` random bits, of visible ASCII, and no two are
    equal. Returns them. Raises AssertionError naming the first rule broken."""
    calls = []
    real = os.urandom

    def spy(nbytes):
        raw = real(nbytes)
        calls.append((nbytes, base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")))
        return raw

    with monkeypatch.context() as patch:
        patch.setattr(os, "urandom", spy)
        patch.setattr(random, "_urandom", spy)       # what secrets reads, through SystemRandom
        ids = [make_id() for _ in range(COUNT)]
    assert len(calls) == COUNT, f"{len(calls)} of {COUNT} ids came from os.urandom"
    for (nbytes, token), made in zip(calls, ids):
        assert nbytes is not None and nbytes * 8 >= MIN_BITS, f"{nbytes} random bytes: fewer than {MIN_BITS} bits"
        assert made == token, f"the id {made!r} is not the random token {token!r} unchanged"
        assert isinstance(made, str) and len(made) >= 22 and set(made) <= URL_SAFE, made
        assert all(0x21 <= ord(c) <= 0x7E for c in made), made
    assert len(set(ids)) == COUNT, f"{COUNT - len(set(ids))} repeated ids"
    return ids


def test_session_ids_are_unguessable_and_unique(monkeypatch):
    ids = check_unguessable(new_session_id, monkeypatch)
    assert {len(i) for i in ids} == {32}                    # 24 bytes: 192 bits


def test_task_ids_are_unguessable_and_unique(monkeypatch):
    ids = check_unguessable(new_task_id, monkeypatch)
    assert {len(i) for i in ids} == {22}                    # 16 bytes: 128 bits


def test_the_check_refuses_weak_ids(monkeypatch):
    counter = iter(range(10 ** 9))
    weak = [
        (lambda: f"session-{next(counter)}", "came from os.urandom"),
        (lambda: secrets.token_urlsafe(8), "fewer than 128 bits"),
        (lambda: "%032x" % random.getrandbits(128), "came from os.urandom"),
        (lambda: secrets.token_urlsafe(16)[:12], "unchanged"),
    ]
    for make_id, complaint in weak:
        with pytest.raises(AssertionError, match=complaint):
            check_unguessable(make_id, monkeypatch)


def test_the_http_server_and_the_task_registry_use_these_ids(monkeypatch):
    """The ids on the wire are the ones the generators made (no other path makes them)."""
    made = []

    def recording(make):
        def wrapper():
            made.append(make())
            return made[-1]
        return wrapper

    monkeypatch.setattr(http_server, "new_session_id", recording(new_session_id))
    monkeypatch.setattr(tasks_module, "new_task_id", recording(new_task_id))
    server = Server("ids")

    @server.tool(task_support="optional")
    def work() -> str:
        return "done"

    requests = pytest.importorskip("requests")
    handle = http_server.start_http(server, ("127.0.0.1", 0))
    try:
        answer = requests.post(handle.url, json={
            "jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                       "clientInfo": {"name": "raw", "version": "1"}}},
            headers={"Accept": "application/json, text/event-stream"}, timeout=10)
        assert answer.headers["Mcp-Session-Id"] == made[-1]
        requests.delete(handle.url, headers={"Mcp-Session-Id": made[-1], "MCP-Protocol-Version": "2025-11-25"},
                        timeout=10)
    finally:
        handle.shutdown()
    with connected(server, "2025-11-25") as (client, _, _):
        assert client.call_tool_as_task("work").task_id == made[-1]
    assert len(made) == 2


def test_stream_ids_are_48_random_bits_and_unique():
    """``http_events.new_stream_id``: the part of an SSE event id before its colon, 12 hex
    digits from ``secrets`` (a server's event store is shared by its sessions)."""
    from mcp_ref.transports.http.server import events as http_events
    ids = [http_events.new_stream_id() for _ in range(1000)]
    assert len(set(ids)) == len(ids)
    assert all(len(i) == 12 and set(i) <= set("0123456789abcdef") for i in ids)
