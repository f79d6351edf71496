"""Resumability (rule 5 of transports/http/server/session.py): every SSE event of a stream is stored
under an event id before it is sent, so a client that lost the connection
sends ``Last-Event-ID`` and gets what it missed, on that stream only.

``EventStore`` is the interface a server may implement (a database, say);
``InMemoryEventStore`` the bounded default. Spec:
basic/transports#resumability-and-redelivery.

A stream's id (``new_stream_id``, the part of each event id before the colon)
is 48 random bits from ``os.urandom`` (``secrets``): a server's store is shared
by all its sessions, so ids must not collide.
"""
import collections
import threading
from secrets import token_hex
from typing import Protocol

from mcp_ref.transports.http.sse import make_event_id, split_event_id

__all__ = ["EventStore", "InMemoryEventStore", "new_stream_id"]


def new_stream_id() -> str:
    """A fresh stream id: 12 hex digits (see the module docstring)."""
    return token_hex(6)


class EventStore(Protocol):
    """Where SSE events wait for resumption (rule 3). ``message`` is None for a priming event.

    ``replay_after`` returns ``(stream_id, [(event_id, message), ...])`` for the
    events of that id's stream stored after it (priming events left out), or
    None when the id is unknown or its successors were dropped. ``forget`` is
    optional: the session calls it for streams it no longer needs.
    """

    def store(self, stream_id: str, message) -> str: ...
    def replay_after(self, event_id: str): ...


class InMemoryEventStore:
    """The default store: the last ``max_events`` events of each of the last ``max_streams`` streams."""

    def __init__(self, max_events: int = 1000, max_streams: int = 10000):
        self.max_events, self.max_streams = max_events, max_streams
        self._lock = threading.Lock()
        self._streams: "collections.OrderedDict" = collections.OrderedDict()   # id -> [seq, deque]

    def store(self, stream_id: str, message) -> str:
        with self._lock:
            entry = self._streams.get(stream_id)
            if entry is None:
                entry = self._streams[stream_id] = [0, collections.deque(maxlen=self.max_events)]
                while len(self._streams) > self.max_streams:
                    self._streams.popitem(last=False)
            entry[0] += 1
            entry[1].append((entry[0], message))
            return make_event_id(stream_id, entry[0])

    def replay_after(self, event_id: str):
        parsed = split_event_id(event_id)
        if parsed is None:
            return None
        stream_id, seq = parsed
        with self._lock:
            entry = self._streams.get(stream_id)
            if entry is None or seq > entry[0]:
                return None
            events = list(entry[1])
        if events and events[0][0] > seq + 1:
            return None                       # the bound dropped events the client never saw
        return stream_id, [(make_event_id(stream_id, s), m) for s, m in events if s > seq and m is not None]

    def forget(self, stream_id: str) -> None:
        with self._lock:
            self._streams.pop(stream_id, None)
