"""Scenarios: ``python -m mcp_ref demo --scenario NAME`` shows one topic on the wire.

The main demo walks through every server feature; each scenario here shows one
thing it does not: a request cancelled by another thread or by its timeout,
the requests a server sends its client (sampling, elicitation, roots),
pagination, tasks, and the HTTP transports byte for byte.
``--scenario list`` names them.

Rules:

1. A scenario is short enough to read on one screen: a few ``#`` steps, each
   saying what the following messages show, printed through the demo's
   ``Transcript`` (``client -> server  {json}``), so it reads like the demo.
2. It runs offline and in this process: client and server talk over a memory
   pair (``show.connect``), or, for ``http`` and ``sse``, over a socket on
   127.0.0.1 at a free port. No subprocess, no network.
3. It is deterministic and bounded: what the server side notices is reported
   from the main thread after it happened (never printed from a server
   thread), and every wait has a timeout (``WAIT``).
4. Each is run by ``tests/test_scenarios.py``, which checks the messages it
   promises to show.
"""
from __future__ import annotations

import threading
from contextlib import contextmanager

WAIT = 5.0          # seconds any step waits for the other side before giving up


class Show:
    """What a scenario prints with: ``step`` opens a step, ``say`` adds a ``#`` line,
    ``connect`` gives a client talking to ``server`` with the wire shown."""

    def __init__(self, transcript):
        self.transcript = transcript

    def say(self, text: str) -> None:
        self.transcript.comment(text)

    def step(self, text: str) -> None:
        self.transcript.emit("")
        self.say(text)

    def line(self, text: str) -> None:
        """A line that is neither a message nor a comment (raw HTTP, for example)."""
        self.transcript.emit(text)

    @contextmanager
    def connect(self, server, **client_options):
        """A connected ``Client`` for ``server`` over a memory pair, the client's end tapped
        (every message both ways is printed once). Closes both sides on exit."""
        from mcp_ref.client.client import Client
        from mcp_ref.transports import TapTransport, memory_pair
        client_end, server_end = memory_pair()
        session = server.serve(server_end)
        client_options.setdefault("timeout", WAIT)
        # The scenarios show the handshake era (its wire is what they explain); the
        # 2026-07-28 era has its own pages (spec_notes/revision-2026-07-28.md).
        client_options.setdefault("protocol_version", "2025-11-25")
        self.step("initialize, then notifications/initialized: the handshake; the capabilities each side "
                  "declares decide what may follow")
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


def _registry() -> dict:
    from mcp_ref.cli.scenarios import http, inprocess
    return {**inprocess.SCENARIOS, **http.SCENARIOS}


def names() -> list:
    return list(_registry())


def run(name: str, transcript) -> int:
    """Print scenario ``name`` (``list``: the names and what each shows); 2 for an unknown name."""
    scenarios = _registry()
    if name == "list" or name not in scenarios:
        out = transcript.out
        if name != "list":
            out.write(f"unknown scenario {name!r}; the scenarios are:\n")
        width = max(len(n) for n in scenarios)
        for key, (summary, _) in scenarios.items():
            out.write(f"  {key.ljust(width)}  {summary}\n")
        out.write("run one with: python -m mcp_ref demo --scenario NAME\n")
        return 0 if name == "list" else 2
    summary, function = scenarios[name]
    show = Show(transcript)
    show.say(f"scenario {name}: {summary}")
    function(show)
    show.step("done")
    return 0
