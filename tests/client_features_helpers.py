"""Helpers for the client-feature tests (sampling, roots, elicitation, approval).

* ``connect(server, revision=..., **client_options)``: a context manager that
  serves ``server`` over ``memory_pair()`` and yields ``(client, session,
  recorder)``; the client's transport is tapped, and on exit every message
  of the transcript is validated against the negotiated revision's
  ``schema.json`` (skipped without the spec folder).
* ``stdio_client(**client_options)``: a ``Client`` for
  ``python -m mcp_ref.examples.client_features`` over stdio, tapped the same
  way (``client.recorder``); ``validated(client)`` checks its transcript.
* ``text(result)``: the text of a ``CallToolResult``'s first block.
* ``sampler(text, model)``: a sampling callback answering a fixed text, which
  records the requests it saw.
"""
import os
import sys
from contextlib import contextmanager
from pathlib import Path

from conftest import _wire_validator, spec_path
from helpers import WAIT, Recorder  # noqa: F401  (WAIT re-exported)
from mcp_ref import Client
from mcp_ref.transports import TapTransport, memory_pair
from mcp_ref.transports.stdio import StdioClientTransport
from mcp_ref.types import CreateMessageResult, TextContent

REPO = Path(__file__).resolve().parent.parent
FEATURE_SERVER = [sys.executable, "-m", "mcp_ref.examples.client_features"]


def feature_server():
    """A fresh instance of the example server (one per test: it keeps state)."""
    from mcp_ref.examples.client_features import build_server
    return build_server()


def env() -> dict:
    environment = dict(os.environ)
    environment["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), environment.get("PYTHONPATH")) if p)
    return environment


def check_transcript(recorder: Recorder, revision: str) -> int:
    """Validate every recorded message against ``revision``; returns how many (0 without the spec)."""
    if not (spec_path() / revision / "schema.json").is_file():
        return 0
    return _wire_validator.check_transcript(recorder.raw, revision)


@contextmanager
def connect(server, revision: str = "2025-11-25", validate: bool = True, client_class=Client, **client_options):
    """Serve ``server`` in process; yield ``(client, session, recorder)``."""
    a, b = memory_pair()
    recorder = Recorder()
    session = server.serve(a)
    client = client_class(TapTransport(b, recorder), protocol_version=revision, timeout=WAIT, **client_options)
    try:
        with client:
            yield client, session, recorder
    finally:
        client.close()
        session.close()
    if validate:
        check_transcript(recorder, client.protocol_version or revision)


def stdio_client(revision: str = "2025-11-25", **client_options) -> Client:
    """A tapped stdio client of the example server (use it as a context manager)."""
    recorder = Recorder()
    transport = StdioClientTransport(FEATURE_SERVER, env=env(), cwd=str(REPO))
    client = Client(TapTransport(transport, recorder), protocol_version=revision,
                    timeout=client_options.pop("timeout", 20), **client_options)
    client.recorder = recorder
    return client


def validated(client: Client) -> int:
    """Validate a ``stdio_client``'s transcript; returns the number of messages checked."""
    return check_transcript(client.recorder, client.protocol_version)


def text(result) -> str:
    return result.content[0].text


def sampler(answer: str = "Paris.", model: str = "test-model-1"):
    """A sampling callback that answers ``answer`` and records each request in ``.requests``."""
    def callback(request):
        callback.requests.append(request)
        return CreateMessageResult(role="assistant", content=TextContent(text=answer), model=model,
                                   stop_reason="endTurn")
    callback.requests = []
    return callback
