"""spec_notes/wire-tour.md is what scripts/wire_tour.py makes of the schemas, the code, the
tests and traced runs of the scenarios now: a stale file fails here, saying the command that
regenerates it. Also: every message of every revision has a row in both tables, every request
a client may send has a handler in ``Server`` and a test, and what the wire is known to carry
is there (2026-07-28's client cancels with notifications/cancelled over stdio; the listen
scenario opens subscriptions/listen and is acknowledged). One build, about 25 s."""
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
    module = _generator()
    return module, module.build()


def _tables(text):
    """The two tables' rows, split into cells: (what each message is, who sent it)."""
    first, _, second = text.partition("## Who sent it on the wire")
    rows = lambda part: [line.split(" | ") for line in part.splitlines() if line.startswith("| `")]
    return rows(first), rows(second)


def _wire(text, method, direction):
    _, wire = _tables(text)
    matches = [row for row in wire if row[0] == f"| `{method}`" and row[1] == direction]
    assert len(matches) == 1, (method, direction)
    return dict(zip(_generator().ERAS, (cell.rstrip(" |") for cell in matches[0][2:])))


def test_the_committed_wire_tour_is_current(tour):
    module, text = tour
    committed = (ROOT / "spec_notes" / "wire-tour.md").read_text(encoding="utf-8")
    assert committed == text, f"spec_notes/wire-tour.md is stale: run `{module.COMMAND}` and commit it"


def test_every_message_of_every_revision_is_in_both_tables(tour):
    module, text = tour
    messages, wire = _tables(text)
    for revision in SUPPORTED_REVISIONS:
        for method, kind, direction, _, _ in module.messages_of(revision):
            for rows in (messages, wire):
                assert any(row[0] == f"| `{method}`" and row[1 if rows is wire else 2] == direction
                           for row in rows), (revision, method, direction)
    for row in messages:
        if row[1] == "request" and row[2] == "client → server":
            assert row[9] != "—", f"{row[0]}: no handler in the server"
            assert row[10].startswith("tests/"), f"{row[0]}: no test names it"
    for row in wire:                        # each cell names runs, or says why there are none
        assert all(cell.strip(" |") for cell in row[2:]), row


def test_what_the_wire_is_known_to_carry(tour):
    _, text = tour
    cancelled = _wire(text, "notifications/cancelled", "client → server")
    assert "demo (stdio)" in cancelled["2026-07-28"] and "cancel" in cancelled["2026-07-28"].split(", ")
    assert "cancel" in cancelled["2025-11-25"]
    listen = _wire(text, "subscriptions/listen", "client → server")
    assert "listen" in listen["2026-07-28"].split(", ") and listen["2025-11-25"].startswith("not yet")
    acknowledged = _wire(text, "notifications/subscriptions/acknowledged", "server → client")
    assert "listen" in acknowledged["2026-07-28"].split(", ")
    assert "initialize" not in _wire(text, "initialize", "client → server")["2026-07-28"]
    assert _wire(text, "initialize", "client → server")["2026-07-28"] == "dropped in 2026-07-28"
    assert "sampling" in _wire(text, "sampling/createMessage", "server → client, in a result's inputRequests")["2026-07-28"]
    assert _wire(text, "tasks/get", "server → client")["2025-11-25"].startswith("not sent")
