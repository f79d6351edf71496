"""What a scenario prints with (``Show``) and how long it waits (``WAIT``, ``wait_for``);
the rules are in __init__.py (1 to 6). Apart from the registry, so that the scenarios
import this and the registry imports them, with no circle."""
from __future__ import annotations

import functools
import re
import threading
from contextlib import closing, contextmanager
from pathlib import Path
from string import Template

from mcp_ref.protocol.lifecycle import MODERN_REVISIONS

WAIT = 5.0          # seconds any step waits for the other side before giving up
NARRATION = Path(__file__).resolve().parent.parent / "narration.txt"


@functools.lru_cache(maxsize=None)
def _notes() -> dict:
    """narration.txt as ``{key: text}``: a ``[key]`` line, then its text on the lines below, joined by spaces."""
    text = re.sub(r"^#.*$", "", NARRATION.read_text(encoding="utf-8"), flags=re.M)        # its # lines dropped
    _, *parts = re.split(r"^\[(.+)\]$", text, flags=re.M)               # [key 1, text 1, key 2, text 2, ...]
    return {key: " ".join(body.split()) for key, body in zip(parts[::2], parts[1::2])}


def note(text: str, modern: bool = True, **values) -> str:
    """Rule 6: a key of narration.txt (one word) becomes its text, the era's own (``key/modern``,
    ``key/legacy``) when there is no common one, with ``$name`` filled in from ``values``;
    a text with a space in it is printed as it is."""
    if " " in text:
        return text
    notes = _notes()
    return Template(notes.get(text) or notes[f"{text}/{'modern' if modern else 'legacy'}"]).substitute(values)


class Show:
    """What a scenario prints with: ``step`` opens a step, ``say`` adds a ``#`` line (both
    take a key of narration.txt or a text), ``connect`` gives a client talking to ``server``
    with the wire shown."""

    def __init__(self, transcript, version: str | None = None):
        self.transcript = transcript
        self.version = version or "auto"        # rule 5: what Client(protocol_version=...) is given
        self.modern = self.version == "auto" or self.version in MODERN_REVISIONS

    def say(self, text: str, **values) -> None:
        self.transcript.comment(note(text, self.modern, **{"version": self.version, **values}))

    def step(self, text: str, **values) -> None:
        self.transcript.emit("")
        self.say(text, **values)

    def failing(self, error: type[Exception], call, *args, **kwargs) -> None:
        """``call(*args, **kwargs)``, which is to raise ``error``: says what the caller got."""
        try:
            call(*args, **kwargs)
        except error as exc:
            self.say(f"the caller raised {error.__name__}: {exc}")

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
        if announce:
            self.step("connect")
        options = {"timeout": WAIT, "protocol_version": self.version, **client_options}
        with closing(session), Client(TapTransport(client_end, self.transcript), **options) as client:
            yield client


def wait_for(event: threading.Event, what: str) -> None:
    """Wait (bounded) for ``event``; a scenario that does not see it says so and fails."""
    if not event.wait(WAIT):
        raise RuntimeError(f"scenario: {what} did not happen within {WAIT:g} s")
