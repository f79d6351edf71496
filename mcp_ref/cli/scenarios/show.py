"""What a scenario prints with (``Show``) and how long it waits (``WAIT``, ``wait_for``);
the rules are in __init__.py (1 to 5). Apart from the registry, so that the scenarios
import this and the registry imports them, with no circle."""
from __future__ import annotations

import threading
from contextlib import contextmanager

from mcp_ref.protocol.lifecycle import MODERN_REVISIONS

WAIT = 5.0          # seconds any step waits for the other side before giving up


class Show:
    """What a scenario prints with: ``step`` opens a step, ``say`` adds a ``#`` line,
    ``connect`` gives a client talking to ``server`` with the wire shown."""

    def __init__(self, transcript, version: str | None = None):
        self.transcript = transcript
        self.version = version or "auto"        # rule 5: what Client(protocol_version=...) is given
        self.modern = self.version == "auto" or self.version in MODERN_REVISIONS

    def say(self, text: str) -> None:
        self.transcript.comment(text)

    def step(self, text: str) -> None:
        self.transcript.emit("")
        self.say(text)

    def line(self, text: str) -> None:
        """A line that is neither a message nor a comment (raw HTTP, for example)."""
        self.transcript.emit(text)

    @contextmanager
    def connect(self, server, wrap=None, announce: bool = True, **client_options):
        """A connected ``Client`` for ``server`` over a memory pair, the client's end tapped
        (every message both ways is printed once); ``wrap(end)`` stands between the pair and
        the server when given; ``announce`` opens a step saying how the client connects.
        Closes both sides on exit."""
        from mcp_ref.client.client import Client
        from mcp_ref.transports import TapTransport, memory_pair
        client_end, server_end = memory_pair()
        session = server.serve(server_end if wrap is None else wrap(server_end))
        client_options.setdefault("timeout", WAIT)
        client_options.setdefault("protocol_version", self.version)
        if announce and self.modern:
            self.step("server/discover: the client asks which revisions the server speaks (2026-07-28 has no "
                      "handshake; every request carries the revision, the client's capabilities and info in "
                      "_meta). A client with callbacks keeps one subscriptions/listen open for changes")
        elif announce:
            self.step(f"initialize, then notifications/initialized: the {self.version} handshake; the "
                      "capabilities each side declares there decide what may follow")
        client = Client(TapTransport(client_end, self.transcript), **client_options)
        try:
            with client:
                yield client
        finally:
            session.close()


def wait_for(event: threading.Event, what: str) -> bool:
    """Wait (bounded) for ``event``; a scenario that does not see it says so and fails."""
    if not event.wait(WAIT):
        raise RuntimeError(f"scenario: {what} did not happen within {WAIT:g} s")
    return True
