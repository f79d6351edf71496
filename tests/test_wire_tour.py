"""spec_notes/wire-tour.md is what scripts/wire_tour.py makes of the code, the tests and
the schemas now: a stale file fails here, saying the command that regenerates it.
Also: every request a client may send in a revision we speak has a handler in ``Server``."""
import importlib.util
from pathlib import Path

import pytest

from conftest import spec_path
from mcp_ref.protocol.lifecycle import SUPPORTED_REVISIONS

ROOT = Path(__file__).resolve().parent.parent


def _generator():
    spec = importlib.util.spec_from_file_location("wire_tour", ROOT / "scripts" / "wire_tour.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def tour():
    missing = [r for r in SUPPORTED_REVISIONS if not (spec_path() / r / "schema.json").is_file()]
    if missing:
        pytest.skip(f"schema.json of {', '.join(missing)} not found under {spec_path()}: set MCP_SPEC_DIR")
    return _generator()


def test_the_committed_wire_tour_is_current(tour):
    committed = (ROOT / "spec_notes" / "wire-tour.md").read_text(encoding="utf-8")
    assert committed == tour.build(), f"spec_notes/wire-tour.md is stale: run `{tour.COMMAND}` and commit it"


def test_every_revision_and_every_client_request_is_in_the_tour(tour):
    text = tour.build()
    rows = [line.split(" | ") for line in text.splitlines() if line.startswith("| `")]
    for revision in SUPPORTED_REVISIONS:
        for method, kind, direction, _, _ in tour.messages_of(revision):
            assert any(row[0] == f"| `{method}`" and row[2] == direction for row in rows), (method, direction)
    for row in rows:
        if row[1] == "request" and row[2] == "client → server":
            assert row[9] != "—", f"{row[0]}: no handler in the server"
            assert row[10].startswith("tests/"), f"{row[0]}: no test names it"
