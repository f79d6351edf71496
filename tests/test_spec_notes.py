"""The notes of spec_notes/ keep two promises of spec_notes/README.md.

1. Every page says near its top which revisions it covers: a line starting
   ``Revisions:`` before the page's first ``##`` heading, naming at least one
   revision (``all``, a list, or ``A to B``), and only revisions we speak
   (``SUPPORTED_REVISIONS``).
2. Every fenced Python example of a page runs, as the README's do: the same
   ``<!-- readme-test: ... -->`` line above each block, read and run by
   tests/test_readme.py's machinery (a page's ``server``/``add-to`` blocks build on
   the files the README builds, ``demo.py`` first), or it says it is a fragment and
   why: ``<!-- readme-test: fragment REASON -->`` (a block that needs what a test
   cannot have, such as a real authorization server and a browser). A block with
   neither fails.
"""
import re
import subprocess
import sys
from pathlib import Path

import pytest

import test_readme as readme
from mcp_ref.protocol.lifecycle import SUPPORTED_REVISIONS

ROOT = Path(__file__).resolve().parent.parent
PAGES = sorted((ROOT / "spec_notes").glob("*.md"))
DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")


def _revisions_line(text: str):
    head = re.split(r"(?m)^## ", text, maxsplit=1)[0]
    return next((line for line in head.splitlines() if line.startswith("Revisions:")), None)


@pytest.mark.parametrize("page", PAGES, ids=[page.name for page in PAGES])
def test_every_page_names_the_revisions_it_covers(page):
    line = _revisions_line(page.read_text(encoding="utf-8"))
    assert line is not None, f"spec_notes/{page.name}: no 'Revisions:' line before its first ## heading"
    named = DATE.findall(line)
    unknown = sorted(set(named) - set(SUPPORTED_REVISIONS))
    assert not unknown, f"spec_notes/{page.name}: {line!r} names {unknown}, not a revision we speak"
    assert named or re.search(r"\ball\b", line), f"spec_notes/{page.name}: {line!r} names no revision"


def _blocks():
    start = readme.files_after(readme.BLOCKS[-1])        # the files the README has built
    found = []
    for page in PAGES:
        blocks = readme.readme_blocks(page.read_text(encoding="utf-8"))
        found += [(page.name, block, blocks, start) for block in blocks]
    return found


BLOCKS = _blocks()


def test_the_notes_have_python_examples():
    assert len(BLOCKS) >= 10


@pytest.mark.parametrize("entry", BLOCKS, ids=[f"{name}:{block.line}" for name, block, _, _ in BLOCKS])
def test_notes_python_block_runs_or_says_why_not(entry, tmp_path):
    name, block, blocks, start = entry
    where = f"spec_notes/{name} line {block.line}"
    assert block.directive is not None, f"{where}: no <!-- readme-test: ... --> line above this ```python block"
    if block.directive.split()[0] == "fragment":
        assert len(block.directive.split()) > 1, f"{where}: a fragment says why it does not run"
        compile(block.code, where, "exec")               # still Python
        return
    kind, file_name, needs, expects = readme.parse(block.directive)
    earlier = [b for b in blocks[:block.index + 1] if b.directive and b.directive.split()[0] != "fragment"]
    earlier = [b._replace(index=i) for i, b in enumerate(earlier)]
    files = readme.files_after(earlier[-1], earlier, start) if earlier else dict(start)
    for each, code in files.items():
        (tmp_path / each).write_text(code, encoding="utf-8")
    env = readme.environment(tmp_path)
    if kind in ("server", "add-to"):
        readme.check_server(tmp_path, file_name, env)
        return
    if kind == "wsgi":
        for module in needs:
            pytest.importorskip(module, reason=f"{where}: the example needs {module}")
        readme.check_wsgi(tmp_path, block, file_name, expects[0], env)
        return
    unknown = [need for need in needs if need not in files]
    assert not unknown, f"{where}: needs {unknown}, which neither the README nor an earlier block defines"
    (tmp_path / "example.py").write_text(block.code, encoding="utf-8")
    done = subprocess.run([sys.executable, "example.py"], cwd=str(tmp_path), env=env, capture_output=True,
                          text=True, timeout=readme.TIMEOUT)
    assert done.returncode == 0, f"{where} failed:\n{done.stdout}\n{done.stderr}"
    for line in expects:
        assert line in done.stdout.splitlines(), f"{where}: {line!r} not printed; got {done.stdout!r}"
