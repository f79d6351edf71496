"""Every reference the notes and the README make resolves, so they cannot silently go stale.

In ``spec_notes/*.md`` and ``README.md``:

* ``path/file.py:LINE``: the file exists and has that line;
* ``path/file.py`` in backticks: the file exists (from the repository root, or
  inside ``mcp_ref/``);
* ``tests/test_x.py::name``, and a following ``::name`` (same file): the test
  function (or class) exists in that file;
* ``Spec: <page>`` and ``<revision> <page>`` citations: the page exists in the
  official spec (``MCP_SPEC_DIR``), in that revision when one is named, else in
  some revision. Skipped, with the reason, when the spec folder is absent.
"""
import ast
import re
from functools import lru_cache
from pathlib import Path

import pytest

from conftest import spec_path

ROOT = Path(__file__).resolve().parent.parent
DOCS = sorted((ROOT / "spec_notes").glob("*.md")) + [ROOT / "README.md"]
FILE_LINE = re.compile(r"\b((?:mcp_ref|tests|scripts|bench)/[\w/.-]+\.py):(\d+)\b")
BACKTICKED_FILE = re.compile(r"`([\w./-]+/[\w.-]+\.py)`")
# A test file (any mention of one sets the file a following bare ``::name`` belongs to),
# with or without ``::name``, or a bare ``::name``.
TEST_REF = re.compile(r"(tests/[\w/.-]+\.py)(?:::(\w+))?(?:::(\w+))?|(?<![\w/.\[])::([A-Za-z_]\w*)(?:::(\w+))?")
SPEC_TAG = re.compile(r"Spec:\s*((?:[a-z_]+/[\w/-]*[\w-](?:#[\w-]+)?(?:,\s*|\s+and\s+)?)+)")
CITED = re.compile(r"\b(20\d\d-\d\d-\d\d) ((?:basic|server|client)(?:/[\w-]+)+|security_best_practices|changelog)\b")
PAGE = re.compile(r"((?:basic|server|client)(?:/[\w-]+)*|security_best_practices|changelog)")


def _docs():
    for path in DOCS:
        yield path.relative_to(ROOT).as_posix(), path.read_text(encoding="utf-8")


@lru_cache(maxsize=None)
def _lines(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


@lru_cache(maxsize=None)
def _names(path: Path) -> frozenset:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return frozenset(node.name for node in ast.walk(tree)
                     if isinstance(node, (ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef)))


def test_file_line_references_resolve():
    bad = []
    for doc, text in _docs():
        for match in FILE_LINE.finditer(text):
            path, line = ROOT / match.group(1), int(match.group(2))
            if not path.is_file():
                bad.append(f"{doc}: {match.group(0)}: no such file")
            elif not 1 <= line <= _lines(path):
                bad.append(f"{doc}: {match.group(0)}: the file has {_lines(path)} lines")
    assert not bad, "\n".join(bad)


def test_named_files_exist():
    bad = []
    for doc, text in _docs():
        for match in BACKTICKED_FILE.finditer(text):
            name = match.group(1)
            if "test_x" in name:                      # the format's placeholder (spec_notes/README.md)
                continue
            if not any((base / name).is_file() for base in (ROOT, ROOT / "mcp_ref", ROOT / "tests")):
                bad.append(f"{doc}: `{name}`: no such file")
    assert not bad, "\n".join(bad)


def test_named_tests_exist():
    """``file::name`` must be in that file; a bare ``::name`` in one of the test files the
    same section (since its last heading) named: notes list a file once, then its tests."""
    bad, checked = [], 0
    for doc, text in _docs():
        for section in re.split(r"^#+ ", text, flags=re.M):
            files: list = []
            for match in TEST_REF.finditer(section):
                if match.group(1):
                    path = ROOT / match.group(1)
                    if "test_x" in path.name:          # the format's placeholder (spec_notes/README.md)
                        continue
                    if not path.is_file():
                        bad.append(f"{doc}: {match.group(1)}: no such file")
                        continue
                    files.append(path)
                    candidates = [path]
                else:
                    candidates = files
                for name in filter(None, match.group(2, 3, 4, 5)):
                    checked += 1
                    if not any(name in _names(path) for path in candidates):
                        where = ", ".join(p.name for p in candidates) or "no test file named before it"
                        bad.append(f"{doc}: ::{name}: no such test in {where}")
    assert checked > 50
    assert not bad, "\n".join(bad)


def _page_exists(revision_dir: Path, page: str) -> bool:
    page = page.split("#", 1)[0].rstrip("/")
    return (revision_dir / f"{page}.mdx").is_file() or (revision_dir / page / "index.mdx").is_file()


def test_spec_pages_exist():
    spec = spec_path()
    if not spec.is_dir():
        pytest.skip(f"the spec folder {spec} is absent (set MCP_SPEC_DIR): spec pages not checked")
    revisions = sorted(p for p in spec.iterdir() if p.is_dir())
    if not any((r / "index.mdx").is_file() for r in revisions):
        pytest.skip(f"the spec folder {spec} has no pages (schemas alone): spec pages not checked")
    bad, checked = [], 0
    for doc, text in _docs():
        for match in SPEC_TAG.finditer(text):
            for page in PAGE.findall(match.group(1)):
                checked += 1
                if not any(_page_exists(r, page) for r in revisions):
                    bad.append(f"{doc}: Spec: {page}: no such page in any revision")
        for revision, page in CITED.findall(text):
            checked += 1
            if (spec / revision).is_dir() and not _page_exists(spec / revision, page):
                bad.append(f"{doc}: {revision} {page}: no such page in {revision}")
    assert checked > 50
    assert not bad, "\n".join(bad)
