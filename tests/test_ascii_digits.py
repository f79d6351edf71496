"""Numbers a peer sends are ASCII digits or not numbers at all.

``str.isdigit()`` is true for "²" and "٣", and ``int("²")`` raises ``ValueError``: every place that
checks with ``isdigit()`` before ``int()`` also checks ``isascii()``, so a hostile event id, retry
field, reply id, URI-template prefix or port is refused the documented way instead of raising
from inside a reader.
"""
import argparse

import pytest

from mcp_ref.cli.serve import address
from mcp_ref.schema.uritemplate import UriTemplate
from mcp_ref.transports.http.sse import EventParser, split_event_id
from test_session import _raw_session, call


@pytest.mark.parametrize("seq", ["²", "٣", "1²"])
def test_an_event_id_with_other_digits_is_not_ours(seq):
    assert split_event_id(f"stream:{seq}") is None
    assert split_event_id("stream:12") == ("stream", 12)


def test_a_retry_field_with_other_digits_is_ignored():
    events = EventParser().feed("retry: ²\ndata: x\n\nretry: 25\ndata: y\n\n".encode())
    assert [(e.data, e.retry) for e in events] == [("x", None), ("y", 25)]


def test_a_reply_whose_id_is_other_digits_is_dropped_and_reading_goes_on():
    peer, session, _ = _raw_session()
    try:
        pending = session.start_request("tools/call", call("x"))
        request = peer.recv()
        peer.send({"jsonrpc": "2.0", "id": "²", "result": {"content": []}})
        peer.send({"jsonrpc": "2.0", "id": request["id"], "result": {"content": [], "isError": False}})
        assert pending.result() == {"content": [], "isError": False}
    finally:
        session.close()


def test_a_template_prefix_with_other_digits_is_refused_with_its_message():
    with pytest.raises(ValueError, match="bad prefix modifier"):
        UriTemplate("res://{name:²}")


def test_a_port_with_other_digits_is_a_usage_error():
    with pytest.raises(argparse.ArgumentTypeError, match="expected HOST:PORT"):
        address("127.0.0.1:²")
    assert address(":8000") == ("127.0.0.1", 8000)
