"""spec_notes/how-a-call-travels.md walks one ``tools/call``; this keeps the walk true.

* Every stop of the walk (`` `mcp_ref/x.py:LINE` `Name.qualname` ``) names a line that
  sits inside that function, so the page cannot drift when code moves.
* A real warm call is traced on both sides (``sys.setprofile`` in the client's process
  and in the server's subprocess), in both eras (2026-07-28, the default, and
  2025-11-25): every package module a function is entered in counts, not only the
  spine. At most ``MAX_FILES_PER_SIDE`` a side, each named on the page.
"""
import ast
import json
import re
import sys
import textwrap
import threading
from functools import lru_cache
from pathlib import Path

import pytest

from mcp_ref import Client

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "spec_notes" / "how-a-call-travels.md"
STOP = re.compile(r"`(mcp_ref/[\w/]+\.py):(\d+)`\s+`([\w.]+)`")      # the two may be a line apart
MAX_FILES_PER_SIDE = 8            # the issue "one path per job": a warm tools/call, every module entered

# The probe: records every package module a function is entered in while armed.
PROBE = textwrap.dedent('''
    import os, sys, threading
    import mcp_ref
    ROOT = os.path.dirname(os.path.abspath(mcp_ref.__file__)) + os.sep
    entered, armed = set(), [False]

    def _rel(path):
        return os.path.relpath(path, ROOT).replace(os.sep, "/")

    def _probe(frame, event, arg):
        if event != "call" or not armed[0]:
            return
        code = frame.f_code
        if not code.co_filename.startswith(ROOT):
            return
        entered.add(_rel(code.co_filename))

    def install():
        threading.setprofile(_probe)
        sys.setprofile(_probe)

    def uninstall():
        sys.setprofile(None)
        threading.setprofile(None)
''')

SERVER = textwrap.dedent('''
    import json, sys
    sys.path.insert(0, sys.argv[1])
    import probe
    probe.install()
    from mcp_ref import Server

    server = Server("traced", version="1.0")

    @server.tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    @server.tool
    def trace(on: bool) -> str:
        """Start (or stop) recording; returns what was recorded."""
        probe.armed[0] = on
        return json.dumps({"entered": sorted(probe.entered)})

    server.run()
''')


@lru_cache(maxsize=None)
def _functions(path: str) -> dict:
    """qualname -> (first line, last line) of every function in ``path``."""
    tree = ast.parse((ROOT / path).read_text(encoding="utf-8"))
    spans = {}

    def visit(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.ClassDef)):
                name = prefix + child.name
                if isinstance(child, ast.FunctionDef):
                    spans[name] = (child.lineno, child.end_lineno)
                visit(child, name + ".")
    visit(tree, "")
    return spans


def _page() -> str:
    return PAGE.read_text(encoding="utf-8")


def _sides(text: str) -> dict:
    """The page's text of each side: ``client`` and ``server`` sections."""
    client = text.split("## The client: from")[1].split("## The server: from")[0]
    server = text.split("## The server: from")[1].split("## Over HTTP")[0]
    return {"client": client, "server": server}


def test_every_stop_names_a_line_inside_its_function():
    stops = STOP.findall(_page())
    assert len(stops) >= 25, "the walk lost its stops"
    wrong = []
    for path, line, name in stops:
        spans = _functions(path)
        matches = [span for qual, span in spans.items() if qual == name or qual.endswith("." + name)
                   or (name.count(".") and qual.split(".")[-1] == name.split(".")[-1]
                       and qual.endswith(name.split(".", 1)[1]))]
        if not any(first <= int(line) <= last for first, last in matches):
            wrong.append(f"{path}:{line} is not inside {name} (functions named so: {matches})")
    assert not wrong, "re-point the walk in spec_notes/how-a-call-travels.md:\n" + "\n".join(wrong)


def test_the_page_counts_its_files_as_it_says():
    for side, text in _sides(_page()).items():
        files_line = [ln for ln in text.split("\n\n") if ln.startswith("Files:")]
        assert files_line, side
        named = set(re.findall(r"`([\w/]+\.py)`", files_line[0]))
        assert len(named) <= MAX_FILES_PER_SIDE, (side, sorted(named))


@pytest.fixture(scope="module", params=["2025-11-25", "2026-07-28"])
def traced(request, tmp_path_factory):
    """Trace five warm ``tools/call`` on both sides; the probe is off for the warm-up."""
    folder = tmp_path_factory.mktemp("call_path")
    (folder / "probe.py").write_text(PROBE, encoding="utf-8")
    (folder / "server.py").write_text(SERVER, encoding="utf-8")
    sys.path.insert(0, str(folder))
    try:
        import probe
    finally:
        sys.path.remove(str(folder))
    probe.install()
    try:
        with Client.stdio([sys.executable, str(folder / "server.py"), str(folder)],
                          protocol_version=request.param, timeout=30) as client:
            for _ in range(30):                      # warm-up: schemas built, checkers compiled
                client.call_tool("add", {"a": 1, "b": 2})
            client.call_tool("trace", {"on": False})
            client.call_tool("trace", {"on": True})
            probe.armed[0] = True
            for _ in range(5):
                assert client.call_tool("add", {"a": 2, "b": 3}).content[0].text == "5"
            probe.armed[0] = False
            server = json.loads(client.call_tool("trace", {"on": False}).content[0].text)
    finally:
        probe.uninstall()
        sys.modules.pop("probe", None)
    client_side = {"entered": sorted(probe.entered)}
    return request.param, {"client": client_side, "server": server}


def _check_side(traced, side: str) -> None:
    era, sides = traced
    entered = sides[side]["entered"]
    assert entered, (era, side, "the probe saw nothing")
    page = _page()
    missing = sorted(path for path in entered if f"`{path}`" not in page and f"`mcp_ref/{path}:" not in page)
    assert not missing, f"{era} {side}: the call enters {missing}: name them on the page (a stop or a side trip)"
    assert len(entered) <= MAX_FILES_PER_SIDE, (
        f"{era} {side}: a warm tools/call enters {len(entered)} package files, over {MAX_FILES_PER_SIDE}: "
        f"{entered}")


def test_the_client_side_enters_at_most_eight_files_all_named(traced):
    _check_side(traced, "client")


def test_the_server_side_enters_at_most_eight_files_all_named(traced):
    _check_side(traced, "server")


def test_the_client_side_of_the_walk_names_the_default_era_stops(traced):
    """The walk is the default era's: the modern request module is a stop, not a side trip."""
    era, sides = traced
    client = _sides(_page())["client"]
    if era == "2026-07-28":
        assert "client/modern/requesting.py" in set(sides["client"]["entered"])
        assert "`mcp_ref/client/modern/requesting.py:" in client
    else:
        assert "client/modern/requesting.py" not in set(sides["client"]["entered"])


def test_the_servers_own_part_of_a_warm_call_enters_at_most_three_files(traced):
    """server/tools.py rule 9, server/modern/serve.py rule 7: past the session and the
    transport, a warm call of a plain tool enters at most three files (the dispatch table,
    the tool, and in 2026-07-28 the era's per-request checks): no protocol/ file, no
    schema/ file, no context, pagination or multi round-trip module."""
    era, sides = traced
    own = sorted(path for path in sides["server"]["entered"]
                 if path.startswith(("server/", "schema/", "protocol/")))
    assert len(own) <= 3 and not any(path.startswith(("schema/", "protocol/")) for path in own), (era, own)
