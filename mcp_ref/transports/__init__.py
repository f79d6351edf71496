"""The transport interface and an in-memory pair for tests and embedding.

A transport moves whole JSON-RPC messages; it knows framing, not MCP
semantics. Spec: basic/transports. The session calls three methods:

* ``send(message, related_id=None)``: write one message (or a list, for a
  batch reply). ``related_id`` names the inbound request this message belongs
  to, so HTTP can put it on that request's stream; stdio ignores it. The
  session serialises calls to ``send``; a transport need not lock. ``send``
  must not block for good on a peer that stops reading (stdio writes what
  the pipe takes now and queues the rest for a writer thread: stdio.py rule 4).
* ``receive()``: block until the next message and return it (a list for a
  batch), ``None`` once the peer has gone, or raise ``InvalidMessage`` for a
  frame that failed to decode or was too large (``messages.oversized``; the
  session answers it, or fails the request a reply answers, and reads on).
* ``close()``: idempotent; must make a blocked ``receive()`` return ``None``.

``send`` encodes before it writes: a message that cannot be encoded raises
``messages.EncodeError`` (or ``UnicodeEncodeError``) with nothing written, and
the session stays open.

Optional: ``close_details() -> dict`` with ``exit_code``/``stderr_tail`` (and
``late``, a non-blocking function giving them once known) to enrich
``ConnectionClosed``; a writable ``protocol_version`` attribute (HTTP sends it
as a header); ``max_message_size``, the largest message read, in bytes.
"""
from __future__ import annotations

import queue

from mcp_ref.jsonrpc.messages import decode, encode, oversized

__all__ = ["Transport", "MemoryTransport", "memory_pair", "TapTransport"]


class Transport:
    """The interface above, as a base class to document it (subclassing is optional:
    the session only calls the three methods)."""

    def send(self, message, related_id: int | str | None = None) -> None:
        raise NotImplementedError

    def receive(self):
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError


_CLOSED = object()


class MemoryTransport:
    """One end of an in-process link. Messages cross as JSON text, so tests
    exercise the real encoder and decoder; ``sent`` records every line sent
    when ``record=True``."""

    def __init__(self, inbox, max_message_size: int = 0, record: bool = False):
        self._inbox = inbox
        self.peer: MemoryTransport | None = None
        self.max_message_size = max_message_size
        self.sent: list | None = [] if record else None
        self.closed = False

    def send(self, message, related_id=None) -> None:
        if self.closed or self.peer is None or self.peer.closed:
            raise ConnectionError("memory transport is closed")
        line = encode(message)
        if self.sent is not None:
            self.sent.append(line)
        self.peer._inbox.put(line)

    def send_raw(self, line: str) -> None:
        """Deliver a raw frame to the peer (tests use this to send bad input)."""
        assert self.peer is not None, "send_raw needs a connected pair (memory_pair)"
        self.peer._inbox.put(line)

    def receive(self):
        line = self._inbox.get()
        if line is _CLOSED:
            self._inbox.put(_CLOSED)       # stay closed for any later reader
            return None
        if self.max_message_size and len(line) > self.max_message_size:
            raise oversized(line, len(line), self.max_message_size)
        return decode(line)

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self._inbox.put(_CLOSED)
            if self.peer is not None and not self.peer.closed:
                self.peer.close()


def memory_pair(max_message_size: int = 0, record: bool = False):
    """Two linked transports: what one sends, the other receives."""
    a, b = (MemoryTransport(queue.Queue(), max_message_size, record) for _ in range(2))
    a.peer, b.peer = b, a
    return a, b


class TapTransport:
    """Wraps a transport and shows every message to ``tap(direction, message)``,
    direction ``"send"`` or ``"receive"`` (the demo's transcript and the
    tests' schema checks use it). Everything else is delegated."""

    def __init__(self, inner, tap):
        vars(self).update(inner=inner, tap=tap)     # its own; every other attribute is set on ``inner``

    def send(self, message, related_id=None) -> None:
        self.tap("send", message)
        self.inner.send(message, related_id)

    def receive(self):
        message = self.inner.receive()
        if message is not None:
            self.tap("receive", message)
        return message

    def close(self) -> None:
        self.inner.close()

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def __setattr__(self, name, value):
        setattr(self.inner, name, value)
