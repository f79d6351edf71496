"""spec_notes/how-a-call-travels.md walks one ``tools/call``; this keeps the walk true.

* Every stop of the walk (`` `mcp_ref/x.py:LINE` `Name.qualname` ``) names a line that
  sits inside that function, so the page cannot drift when code moves.
* A real call is traced on both sides (``sys.setprofile`` in the client's process and
  in the server's subprocess): the modules on the stack whenever a message is framed,
  read, decoded or a result decoded (the walk's spine) are each named on the page, and
  no more of them than the page counts; every module the call enters at all is named
  on the page too (the spine or a side trip). Both eras: a 2025-11-25 session and a
  2026-07-28 one.
"""
import ast
import json
import re
import subprocess
import sys
import textwrap
import threading
import traceback
from functools import lru_cache
from pathlib import Path

import pytest

from mcp_ref import Client

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "spec_notes" / "how-a-call-travels.md"
STOP = re.compile(r"`(mcp_ref/[\w/]+\.py):(\d+)`\s+`([\w.]+)`")      # the two may be a line apart
TRANSPORT = {"transports/stdio.py", "transports/pipe_writer.py", "jsonrpc/messages.py"}
OWN_FILES_PER_SIDE = 4            # what the page says: four files a side plus the transport

# The probe: records, for every call into the framing or decoding code (the milestones),
# the package modules on the stack (the spine), and every package module entered at all.
PROBE = textwrap.dedent('''
    import os, sys, threading, traceback
    import mcp_ref
    ROOT = os.path.dirname(os.path.abspath(mcp_ref.__file__)) + os.sep
    MILESTONES = ("transports/stdio.py", "jsonrpc/messages.py")
    spines, entered, armed = set(), set(), [False]

    def _rel(path):
        return os.path.relpath(path, ROOT).replace(os.sep, "/")

    def _probe(frame, event, arg):
        if event != "call" or not armed[0]:
            return
        code = frame.f_code
        if not code.co_filename.startswith(ROOT):
            return
        path = _rel(code.co_filename)
        entered.add(path)
        if path.endswith(MILESTONES) or code.co_name == "from_dict":
            spines.add(tuple(_rel(f.filename) for f in traceback.extract_stack(frame)
                             if f.filename.startswith(ROOT)))

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
        return json.dumps({"spines": sorted(probe.spines), "entered": sorted(probe.entered)})

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
        named = set(re.findall(r"`([\w/]+\.py)`", files_line[0])) - TRANSPORT
        assert len(named) == OWN_FILES_PER_SIDE, (side, sorted(named))


@pytest.fixture(scope="module", params=["2025-11-25", "2026-07-28"])
def traced(request, tmp_path_factory):
    """Trace five ``tools/call`` on both sides; the probe is off for the warm-up."""
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
    client_side = {"spines": sorted(probe.spines), "entered": sorted(probe.entered)}
    return request.param, {"client": client_side, "server": server}


def _spine_files(spines) -> set:
    return {path for stack in spines for path in stack}


def test_the_spine_of_each_side_is_on_the_page_and_no_longer_than_it_says(traced):
    era, sides = traced
    text = _sides(_page())
    whole = _page()
    for side, seen in sides.items():
        spine = _spine_files(seen["spines"])
        assert spine, (era, side, "the probe saw nothing")
        own = spine - TRANSPORT
        if era == "2025-11-25":
            missing = sorted(path for path in spine if f"`{path}`" not in text[side])
            assert not missing, f"{side}: the call crosses {missing}, which the walk does not name"
            assert len(own) <= OWN_FILES_PER_SIDE, (side, sorted(own))
        else:
            missing = sorted(path for path in spine if path not in whole)
            assert not missing, f"{era} {side}: the call crosses {missing}, which the page does not name"


def test_every_module_a_legacy_call_enters_is_named(traced):
    era, sides = traced
    if era != "2025-11-25":
        pytest.skip("the side trips are listed for the 2025-11-25 walk")
    text = _sides(_page())
    for side, seen in sides.items():
        missing = sorted(path for path in seen["entered"]
                         if f"`{path}`" not in text[side] and f"`mcp_ref/{path}:" not in text[side])
        assert not missing, f"{side}: the call enters {missing}: name them on the page (a stop or a side trip)"


def test_the_servers_own_part_of_a_warm_call_enters_at_most_three_files(traced):
    """server/tools.py rule 9, server/modern/serve.py rule 7: past the session and the
    transport, a warm call of a plain tool enters at most three files (the dispatch table,
    the tool, and in 2026-07-28 the era's per-request checks): no protocol/ file, no
    schema/ file, no context, pagination or multi round-trip module."""
    era, sides = traced
    own = sorted(path for path in sides["server"]["entered"]
                 if path.startswith(("server/", "schema/", "protocol/")))
    assert len(own) <= 3 and not any(path.startswith(("schema/", "protocol/")) for path in own), (era, own)
