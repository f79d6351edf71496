"""Scenarios: ``python -m mcp_ref demo --scenario NAME`` shows one topic on the wire.

The main demo walks through every server feature; each scenario here shows one
thing it does not: a request cancelled by another thread or by its timeout,
the requests a server sends its client (sampling, elicitation, roots),
pagination, tasks, the HTTP transports byte for byte, the era probe
(``discover``), change notifications (``listen``), OAuth (``auth``) and the
host (``host``). ``--scenario list`` names them.

Rules:

1. A scenario is short enough to read on one screen: a few ``#`` steps, each
   saying what the following messages show, printed through the demo's
   ``Transcript`` (``client -> server  {json}``), so it reads like the demo.
2. It runs offline and in this process: client and server talk over a memory
   pair (``show.connect``), or, for ``http``, ``sse``, ``auth`` and ``host``,
   over sockets on 127.0.0.1 at free ports (``auth`` brings its own tiny
   authorization server, auth.py). No subprocess, no network.
3. It is deterministic and bounded: what the server side notices is reported
   from the main thread after it happened (never printed from a server
   thread), and every wait has a timeout (``WAIT``).
4. Each is run by ``tests/test_scenarios.py``, which checks the messages it
   promises to show.
5. A scenario runs the era a default ``Client`` and ``Server`` agree on
   (2026-07-28: ``server/discover``, then requests carrying ``_meta``);
   ``--protocol-version REVISION`` runs the same story in that revision
   (``show.version``). Where a topic differs by era, the ``#`` lines say what
   the other era does and cite the spec page.
   Spec 2026-07-28: basic/versioning, basic/patterns/mrtr.
6. What a step says is data: the ``#`` lines are in ``cli/narration.txt``, by
   key (``cancel.button``; ``key/modern`` and ``key/legacy`` where the eras
   differ; a scenario's own name keys its one-line summary), and the code
   names the key (``show.step("cancel.button")``), so a scenario reads as
   the calls it makes and the narration reads as one story.
7. ``SCENARIOS`` names each scenario's function; its module is imported only
   when it runs, so the command line does not pay for every scenario's imports.
"""
from __future__ import annotations

import importlib

from mcp_ref.cli.scenarios.show import Show, note

# Each scenario's function, as ``module.function`` of this package: imported when the
# scenario runs (rule 7), so ``python -m mcp_ref`` starts without loading them all.
SCENARIOS = {"discover": "eras.discover", "listen": "eras.listen", "cancel": "inprocess.cancel",
             "sampling": "inprocess.sampling", "elicitation": "inprocess.elicitation", "roots": "inprocess.roots",
             "pagination": "inprocess.pagination", "tasks": "inprocess.tasks", "http": "http.streamable_http",
             "sse": "http.legacy_sse", "auth": "auth.auth", "host": "host.host"}


def run(name: str, transcript, protocol_version: str | None = None) -> int:
    """Print scenario ``name`` (``list``: the names and what each shows); 2 for an unknown name.
    ``protocol_version``: the revision to show (rule 5; default: the era a default client agrees on)."""
    if name == "list" or name not in SCENARIOS:
        if name != "list":
            transcript.out.write(f"unknown scenario {name!r}; the scenarios are:\n")
        width = max(len(n) for n in SCENARIOS)
        for key in SCENARIOS:
            transcript.out.write(f"  {key.ljust(width)}  {note(key)}\n")
        transcript.out.write("run one with: python -m mcp_ref demo --scenario NAME\n")
        return 0 if name == "list" else 2
    show = Show(transcript, protocol_version)
    era = "the default era, 2026-07-28" if protocol_version in (None, "auto") else protocol_version
    show.say(f"scenario {name} ({era}): {note(name)}")
    module, function = SCENARIOS[name].split(".")
    getattr(importlib.import_module(f"{__name__}.{module}"), function)(show)
    show.step("done")
    return 0
