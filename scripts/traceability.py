#!/usr/bin/env python3
"""The requirement matrix: every RFC 2119 requirement of the 2025-11-25 spec pages,
with the code that meets it and the tests that prove it.

Why a script: the matrix must be reproducible. Requirement ids come from the spec
text alone (page prefix + ordinal of the requirement on its page), so rerunning the
extraction on the same spec always yields the same ids. The human part -- which
function meets a requirement, or why it does not apply -- lives in
``spec_notes/traceability_map.json``; which test proves it lives in the tests
themselves, as ``@pytest.mark.req("LIFE-3", ...)`` markers. This script joins the
three and writes ``spec_notes/traceability.md``.

What counts as a requirement: a sentence (or list item) of a page holding one of
the keywords MUST, MUST NOT, REQUIRED, SHALL, SHALL NOT, SHOULD, SHOULD NOT,
RECOMMENDED, NOT RECOMMENDED, in capitals and outside quotes (the boilerplate that
defines the keywords quotes them). A sentence that ends with ":" takes the list
below it along. The same sentence repeated on one page (schema.mdx repeats
inherited documentation) is one requirement.

Usage::

    python scripts/traceability.py            # rewrite spec_notes/traceability.md
    python scripts/traceability.py --check    # exit 1 if stale or a MUST lacks a test
    python scripts/traceability.py --init-map # add map entries for new ids
    python scripts/traceability.py --show LIFE  # print the requirements of one prefix
    python scripts/traceability.py --revision 2026-07-28 [...]
                                              # the same for spec_notes/traceability-2026-07-28.md

The spec folder comes from ``MCP_SPEC_DIR`` (default ``../shared/spec`` beside the
repository), as for the tests. Standard library only.
"""
from __future__ import annotations

import argparse
import ast
import difflib
import functools
import hashlib
import html
import json
import os
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
REVISION = "2025-11-25"
OLDER = ("2024-11-05", "2025-03-26", "2025-06-18")
MATRIX = REPO / "spec_notes" / "traceability.md"
MAP = REPO / "spec_notes" / "traceability_map.json"
TESTS = REPO / "tests"
# The revision whose matrix a row of this one may share a sentence with (its id is
# named in the row, and --init-map copies its map entry), or None.
BASE_REVISION = None
# Appended to every page prefix, so that the ids of two matrices never collide.
ID_SUFFIX = ""
# Extension pages: prefix -> (title, file of the repository holding the requirement
# sentences of the published page, with its source in the file's header).
EXTENSIONS: dict = {}

# Page -> id prefix. Every .mdx page of the revision must be listed (the check
# fails on a new page), in the order the matrix shows them.
PREFIXES = {
    "index.mdx": "INDEX",
    "architecture/index.mdx": "ARCH",
    "basic/index.mdx": "BASE",
    "basic/lifecycle.mdx": "LIFE",
    "basic/transports.mdx": "TRN",
    "basic/authorization.mdx": "AUTH",
    "basic/utilities/cancellation.mdx": "CANC",
    "basic/utilities/ping.mdx": "PING",
    "basic/utilities/progress.mdx": "PROG",
    "basic/utilities/tasks.mdx": "TASK",
    "server/index.mdx": "SRV",
    "server/tools.mdx": "TOOL",
    "server/resources.mdx": "RES",
    "server/prompts.mdx": "PROM",
    "server/utilities/completion.mdx": "COMP",
    "server/utilities/logging.mdx": "LOG",
    "server/utilities/pagination.mdx": "PAGE",
    "client/roots.mdx": "ROOT",
    "client/sampling.mdx": "SAMP",
    "client/elicitation.mdx": "ELIC",
    "security_best_practices.mdx": "SEC",
    "schema.mdx": "SCHEMA",
    "changelog.mdx": "CHG",
}
_PREFIXES_2025 = dict(PREFIXES)
# Areas mcp_ref does not implement: their rows are listed as "not implemented".
NOT_IMPLEMENTED_PAGES: dict = {}

# The current revision: the same page prefix where a page exists in 2025-11-25 too,
# new prefixes for new pages; every id carries the suffix "26" (TOOL26-3).
PREFIXES_2026 = {
    "index.mdx": "INDEX",
    "architecture/index.mdx": "ARCH",
    "basic/index.mdx": "BASE",
    "basic/versioning.mdx": "VERS",
    "basic/transports/index.mdx": "TRN",
    "basic/transports/stdio.mdx": "STDIO",
    "basic/transports/streamable-http.mdx": "HTTP",
    "basic/authorization/index.mdx": "AUTH",
    "basic/authorization/authorization-server-discovery.mdx": "ASD",
    "basic/authorization/client-registration.mdx": "REG",
    "basic/authorization/security-considerations.mdx": "ASEC",
    "basic/patterns/index.mdx": "PAT",
    "basic/patterns/mrtr.mdx": "MRTR",
    "basic/patterns/cancellation.mdx": "CANC",
    "basic/patterns/progress.mdx": "PROG",
    "basic/patterns/subscriptions.mdx": "SUBS",
    "server/index.mdx": "SRV",
    "server/discover.mdx": "DISC",
    "server/tools.mdx": "TOOL",
    "server/resources.mdx": "RES",
    "server/prompts.mdx": "PROM",
    "server/utilities/caching.mdx": "CACHE",
    "server/utilities/completion.mdx": "COMP",
    "server/utilities/logging.mdx": "LOG",
    "server/utilities/pagination.mdx": "PAGE",
    "client/roots.mdx": "ROOT",
    "client/sampling.mdx": "SAMP",
    "client/elicitation.mdx": "ELIC",
    "deprecated.mdx": "DEPR",
    "schema.mdx": "SCHEMA",
    "changelog.mdx": "CHG",
}

REVISIONS = ("2025-11-25", "2026-07-28")


# The figures of scripts/mutate.py on the current revision's new rows, shown in its
# matrix (none for 2025-11-25): {"text": ..., "figures": [(prefix, mutants, killed, equivalent)]}.
MUTATION: dict = {}
MUTATION_2026 = {
    "text": ("scripts/mutate.py on the MUST rows new in this revision (no 2025-11-25 id; the shared rows "
             "were mutation-tested in the 2025-11-25 matrix): `python scripts/mutate.py --revision 2026-07-28 "
             "--new-only --per-row 3 --jobs 1`, one group of prefixes at a time (seed 15: 3 mutants sampled a "
             "row, of the lines the row's `lines` name). Every new in-scope MUST row names its lines, except "
             "AUTH26-45 (the SSRF check); rows naming only classes (BASE26-15/17/50, TRN26-2/3) "
             "have no mutant. Killed: a cited test failed; equivalent: listed under the row's `equivalent` in "
             "the map, with why. A mutant is counted once for each row it was sampled for. First run, before "
             "the tests of tests/test_mutation_kills_2026*.py: 480 of 609 killed (78.4 %); below, after them "
             "(the rows with a survivor run again). After the reading edition moved and merged code, the 92 rows "
             "whose anchored functions changed ran again on the merged tree (same sampling): 223 runs, every "
             "survivor either listed equivalent or killed by a new test on a third run (ELIC26-7's message "
             "check; HTTP26-2, -47, -60, -64 after the header checks merged: 12 of 12). BASE26-36/37 now name "
             "their lines (the no-retrieval registry, the refusal) and kill both mutants. Figures per prefix, "
             "first run and the reasons: bench/README.md."),
    "figures": [
        ('BASE26', 45, 42, 3), ('HTTP26', 138, 124, 14), ('MRTR26', 55, 53, 2), ('VERS26', 9, 9, 0),
        ('STDIO26', 17, 17, 0), ('AUTH26', 32, 32, 0), ('ASD26', 11, 11, 0), ('REG26', 10, 10, 0),
        ('PAT26', 3, 3, 0), ('CANC26', 8, 5, 3), ('SUBS26', 12, 12, 0), ('DISC26', 3, 3, 0),
        ('TOOL26', 38, 38, 0), ('RES26', 11, 11, 0), ('PROM26', 12, 12, 0), ('CACHE26', 18, 18, 0),
        ('COMP26', 3, 3, 0), ('LOG26', 4, 4, 0), ('PAGE26', 9, 9, 0), ('ROOT26', 3, 2, 1),
        ('SAMP26', 6, 6, 0), ('ELIC26', 4, 3, 1), ('SCHEMA26', 42, 38, 4), ('CHG26', 13, 13, 0),
        ('XTASK26', 103, 100, 3),
    ],
}


def configure(revision: str) -> None:
    """Point the module's settings at one revision's matrix (2025-11-25 by default)."""
    global REVISION, OLDER, MATRIX, MAP, PREFIXES, BASE_REVISION, ID_SUFFIX, EXTENSIONS, MUTATION
    if revision not in REVISIONS:
        raise SystemExit(f"unknown revision {revision}: one of {REVISIONS}")
    if revision == "2026-07-28":
        REVISION, BASE_REVISION, ID_SUFFIX = revision, "2025-11-25", "26"
        OLDER = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
        MATRIX = REPO / "spec_notes" / "traceability-2026-07-28.md"
        MAP = REPO / "spec_notes" / "traceability_map-2026-07-28.json"
        PREFIXES = dict(PREFIXES_2026)
        MUTATION = MUTATION_2026
        EXTENSIONS = {"XTASK": ("the tasks extension (io.modelcontextprotocol/tasks)",
                                REPO / "spec_notes" / "ext-tasks-2026-07-28.md")}


STATUSES = ("implemented", "gap", "not implemented", "n/a")
MUST_WORDS = ("MUST", "REQUIRED", "SHALL")
KEYWORD = re.compile(r'(?<![\w"\'`])(MUST NOT|MUST|SHALL NOT|SHALL|SHOULD NOT|SHOULD|REQUIRED|'
                     r'NOT RECOMMENDED|RECOMMENDED)(?![\w"\'`])')
ABBREVIATIONS = ("e.g.", "i.e.", "etc.", "vs.", "cf.")
QUOTE_LEN = 220
XFAIL = " (xfail)"          # a test that pins a known gap: it proves nothing implemented


def spec_root() -> Path:
    return Path(os.environ.get("MCP_SPEC_DIR") or REPO.parent / "shared" / "spec")


# ---------------------------------------------------------------------- extraction
class Requirement:
    __slots__ = ("id", "page", "section", "level", "keywords", "text", "revisions", "base")

    def __init__(self, id, page, section, level, keywords, text):
        self.id, self.page, self.section = id, page, section
        self.level, self.keywords, self.text = level, keywords, text
        self.revisions = REVISION
        self.base = None            # the id of the same sentence in BASE_REVISION's matrix

    @property
    def digest(self) -> str:
        return hashlib.sha1(self.text.encode("utf-8")).hexdigest()[:8]


def _slug(heading: str) -> str:
    heading = re.sub(r"[`*_]", "", heading).strip().lower()
    heading = re.sub(r"[^\w\s-]", "", heading)
    return re.sub(r"\s+", "-", heading)


def _clean_inline(text: str) -> str:
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)     # links -> their text
    text = text.replace("**", "").replace("__", "")
    text = re.sub(r"(?<![\w`])_([^_`]+)_(?![\w`])", r"\1", text)   # _emphasis_
    return re.sub(r"\s+", " ", text).strip()


def _html_to_lines(source: str) -> str:
    """schema.mdx is rendered HTML: keep the text, one paragraph per line."""
    source = re.sub(r"<div class=\"tsd-signature\">.*?</div>", "\n", source, flags=re.S)
    source = re.sub(r"<aside.*?</aside>", "\n", source, flags=re.S)
    source = re.sub(r"<(h[1-6])[^>]*>(.*?)</\1>", lambda m: "\n\n## " + re.sub("<[^>]+>", "", m.group(2)) + "\n\n",
                    source, flags=re.S)
    source = re.sub(r"</?(p|ul|ol|section|div|br)\b[^>]*>", "\n\n", source)
    source = re.sub(r"<li>", "\n- ", source)
    source = re.sub(r"<[^>]+>", "", source)
    return html.unescape(source)


def _blocks(source: str):
    """Yield ``(section, indent, text)`` for each paragraph, list item and table row."""
    source = re.sub(r"\A---\n.*?\n---\n", "", source, flags=re.S)
    if "tsd-" in source:
        source = _html_to_lines(source)
    lines = source.split("\n")
    section, block, indent, fence = "", [], 0, None

    def flush():
        text = _clean_inline(" ".join(block))
        block.clear()
        return text

    for line in lines:
        stripped = line.strip()
        if fence is not None:
            if stripped.startswith(fence):
                fence = None
            continue
        if stripped.startswith("```") or stripped.startswith("~~~"):
            if block:
                yield section, indent, flush()
            fence = stripped[:3]
            continue
        if re.match(r"</?[A-Z][A-Za-z]*[^>]*>$", stripped):       # <Note>, </Warning>, ...
            if block:
                yield section, indent, flush()
            continue
        heading = re.match(r"(#{1,6})\s+(.*)", stripped)
        item = re.match(r"(\s*)([-*+]|\d+\.)\s+(.*)", line)
        if not stripped or heading or item or stripped.startswith("|"):
            if block:
                yield section, indent, flush()
        if not stripped:
            continue
        if heading:
            section = _slug(heading.group(2))
        elif stripped.startswith("|"):
            if not re.match(r"\|[\s:|-]+\|?$", stripped):
                yield section, 0, _clean_inline(stripped.strip("|").replace("|", " | "))
        elif item:
            indent = len(item.group(1).expandtabs(4)) + 1
            block.append(item.group(3))
        else:
            if not block:
                indent = 0
            block.append(stripped)
    if block:
        yield section, indent, flush()


def _sentences(text: str) -> list:
    protected = text
    for i, abbr in enumerate(ABBREVIATIONS):
        protected = protected.replace(abbr, f"\x00{i}\x00")
    parts = re.split(r"(?<=[.!?])\s+(?=[A-Z`(\[])", protected)
    out = []
    for part in parts:
        for i, abbr in enumerate(ABBREVIATIONS):
            part = part.replace(f"\x00{i}\x00", abbr)
        out.append(part.strip())
    return [p for p in out if p]


def _keywords(text: str) -> list:
    return [m.group(1) for m in KEYWORD.finditer(text)]


def page_requirements(path: Path) -> list:
    """``[(section, text, keywords)]`` of one page, in page order, deduplicated."""
    blocks = list(_blocks(path.read_text(encoding="utf-8")))
    found, seen = [], set()
    i = 0
    while i < len(blocks):
        section, indent, text = blocks[i]
        i += 1
        sentences = _sentences(text)
        # "X SHOULD:" followed by a list without keywords of its own: one requirement.
        if sentences and sentences[-1].endswith(":") and _keywords(sentences[-1]):
            children = []
            while i < len(blocks) and blocks[i][0] == section and not _keywords(blocks[i][2]) \
                    and (blocks[i][1] > indent or (indent == 0 and blocks[i][1] > 0)):
                children.append(blocks[i][2])
                i += 1
            if children:
                sentences[-1] = sentences[-1] + " " + "; ".join(children)
        for sentence in sentences:
            words = _keywords(sentence)
            if not words:
                continue
            key = re.sub(r"\W+", " ", sentence).lower().strip()
            if key in seen:
                continue
            seen.add(key)
            found.append((section, sentence, words))
    return found


def _norm(text: str) -> str:
    return re.sub(r"\W+", " ", text).lower().strip()


def extract(spec_dir: Path) -> list:
    """Every requirement of the revision, with ids and the revisions that share it."""
    if BASE_REVISION:
        return _extract_with_base(spec_dir)
    root = spec_dir / REVISION
    pages = sorted(str(p.relative_to(root)).replace(os.sep, "/") for p in root.rglob("*.mdx"))
    unknown = [p for p in pages if p not in PREFIXES]
    if unknown:
        raise SystemExit(f"pages without an id prefix (add them to PREFIXES): {unknown}")
    older = {}
    requirements = []
    for page in PREFIXES:
        if page not in pages:
            continue
        for n, (section, text, words) in enumerate(page_requirements(root / page), 1):
            level = "MUST" if any(w.split()[0] in MUST_WORDS for w in words) else "SHOULD"
            req = Requirement(f"{PREFIXES[page]}-{n}", page, section, level,
                              sorted(set(words), key=words.index), text)
            shared = []
            for revision in OLDER:
                key = (revision, page)
                if key not in older:
                    old_path = spec_dir / revision / page
                    older[key] = [_norm(t) for _, t, _ in page_requirements(old_path)] if old_path.is_file() else []
                mine = _norm(text)
                if any(o == mine or _similar(o, mine) for o in older[key]):
                    shared.append(revision)
            req.revisions = _revisions_label(shared)
            requirements.append(req)
    return requirements


@functools.lru_cache(maxsize=None)
def _revision_sentences(spec_dir: Path, revision: str) -> dict:
    """``{normalized sentence: page}`` of every page of an older revision."""
    root = spec_dir / revision
    out: dict = {}
    for path in sorted(root.rglob("*.mdx")):
        for _, text, _ in page_requirements(path):
            out.setdefault(_norm(text), path.relative_to(root).as_posix())
    return out


def _find_same(mine: str, sentences) -> str | None:
    """The sentence of ``sentences`` that is ``mine`` or nearly (same test as the
    revisions column), or None."""
    if mine in sentences:
        return mine
    n = len(mine)
    # ratio() <= 2 * min(len) / (len a + len b): skip the lengths that cannot reach 0.9
    return next((o for o in sentences if 0.9 * (n + len(o)) <= 2 * min(n, len(o)) and _similar(o, mine)), None)


def _extract_with_base(spec_dir: Path) -> list:
    """The current revision: pages moved (basic/transports.mdx became
    basic/transports/*, the utilities became patterns), so a sentence is looked for on
    every page of an older revision, and the row names the id of the same sentence in
    BASE_REVISION's matrix."""
    root = spec_dir / REVISION
    pages = sorted(str(p.relative_to(root)).replace(os.sep, "/") for p in root.rglob("*.mdx"))
    unknown = [p for p in pages if p not in PREFIXES]
    if unknown:
        raise SystemExit(f"pages without an id prefix (add them to PREFIXES): {unknown}")
    older = {revision: _revision_sentences(spec_dir, revision) for revision in OLDER}
    base = {}
    if (spec_dir / BASE_REVISION).is_dir():
        saved = (REVISION, OLDER, PREFIXES, BASE_REVISION, ID_SUFFIX)
        try:
            _set_base_settings()
            for r in extract(spec_dir):
                base.setdefault(_norm(r.text), r.id)
        finally:
            _restore_settings(saved)
    requirements = []
    sources = [(page, PREFIXES[page], page_requirements(root / page)) for page in PREFIXES if page in pages]
    sources += [(_extension_page(prefix), prefix, page_requirements(path))
                for prefix, (_, path) in EXTENSIONS.items()]
    for page, prefix, found in sources:
        extension = page not in PREFIXES
        for n, (section, text, words) in enumerate(found, 1):
            level = "MUST" if any(w.split()[0] in MUST_WORDS for w in words) else "SHOULD"
            req = Requirement(f"{prefix}{ID_SUFFIX}-{n}", page, section, level,
                              sorted(set(words), key=words.index), text)
            mine = _norm(text)
            if extension:
                req.revisions = "extension " + REVISION
            else:
                shared = [rev for rev in OLDER if _find_same(mine, older[rev]) is not None]
                req.revisions = _revisions_label(shared)
                same = _find_same(mine, base)
                req.base = base[same] if same is not None else None
            requirements.append(req)
    return requirements


def _extension_page(prefix: str) -> str:
    return "extension: " + EXTENSIONS[prefix][0]


def _set_base_settings() -> None:
    global REVISION, OLDER, PREFIXES, BASE_REVISION, ID_SUFFIX
    REVISION, OLDER, PREFIXES, BASE_REVISION, ID_SUFFIX = (
        "2025-11-25", ("2024-11-05", "2025-03-26", "2025-06-18"), dict(_PREFIXES_2025), None, "")


def _restore_settings(saved) -> None:
    global REVISION, OLDER, PREFIXES, BASE_REVISION, ID_SUFFIX
    REVISION, OLDER, PREFIXES, BASE_REVISION, ID_SUFFIX = saved


def _similar(a: str, b: str) -> bool:
    matcher = difflib.SequenceMatcher(None, a, b)
    return matcher.real_quick_ratio() >= 0.9 and matcher.quick_ratio() >= 0.9 and matcher.ratio() >= 0.9


def _revisions_label(shared: list) -> str:
    if len(shared) == len(OLDER):
        return "all"
    if shared and list(OLDER).index(shared[0]) + len(shared) == len(OLDER) \
            and shared == list(OLDER[list(OLDER).index(shared[0]):]):
        return shared[0] + "+"
    if not shared:
        return REVISION
    return ", ".join(shared + [REVISION])


# ---------------------------------------------------------------------- tests and map
def collect_markers(tests_dir: Path = TESTS) -> dict:
    """``{requirement id: [test node id, ...]}`` from ``pytest.mark.req`` decorators
    (on functions and classes) and module-level ``pytestmark``, read statically. A test
    whose function carries ``pytest.mark.xfail`` ends with " (xfail)": it pins a gap."""
    cited: dict = {}

    def ids_of(node) -> list:
        out = []
        for call in ast.walk(node):
            if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "req":
                out += [a.value for a in call.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
        return out

    for path in sorted(tests_dir.rglob("test_*.py")):
        rel = path.relative_to(REPO).as_posix()
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        module_ids = []
        for stmt in tree.body:
            if isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "pytestmark"
                                                    for t in stmt.targets):
                module_ids += ids_of(stmt.value)

        def visit(body, prefix, inherited):
            for stmt in body:
                if isinstance(stmt, ast.ClassDef) and stmt.name.startswith("Test"):
                    own = [i for d in stmt.decorator_list for i in ids_of(d)]
                    visit(stmt.body, prefix + stmt.name + "::", inherited + own)
                elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name.startswith("test"):
                    own = [i for d in stmt.decorator_list for i in ids_of(d)]
                    xfail = any(isinstance(d, ast.Call) and isinstance(d.func, ast.Attribute)
                                and d.func.attr == "xfail" for d in stmt.decorator_list)
                    for rid in dict.fromkeys(inherited + own):
                        cited.setdefault(rid, []).append(f"{rel}::{prefix}{stmt.name}" + (XFAIL if xfail else ""))

        visit(tree.body, "", module_ids)
    return cited


def load_map(path: Path | None = None) -> dict:
    path = path or MAP
    if not path.is_file():
        return {}
    with open(path, encoding="utf-8") as f:
        return json.load(f)


_parsed: dict = {}


def _module_body(path: Path) -> list:
    """The parsed top level of a source file, parsed once per run."""
    key = (path, path.stat().st_mtime_ns)
    if key not in _parsed:
        _parsed[key] = ast.parse(path.read_text(encoding="utf-8")).body
    return _parsed[key]


def function_span(ref: str):
    """``(path, first line, last line)`` of the function or class ``module:Qual.name``, or None."""
    module, _, qualname = ref.partition(":")
    path = REPO / (module.replace(".", "/") + ".py")
    if not path.is_file() or not qualname:
        return None
    node, body = None, _module_body(path)
    for part in qualname.split("."):
        node = next((n for n in body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                     and n.name == part), None)
        if node is None:
            return None
        body = node.body
    return path, node.lineno, node.end_lineno


def anchored_lines(ref: str, anchors: list) -> set:
    """The line numbers of ``ref`` whose text holds one of ``anchors`` (the "lines" of a
    map entry: the code lines that meet the requirement, for scripts/mutate.py)."""
    span = function_span(ref)
    if span is None:
        return set()
    path, first, last = span
    lines = path.read_text(encoding="utf-8").split("\n")
    return {n for n in range(first, last + 1) if any(a in lines[n - 1] for a in anchors)}


def resolve_code(ref: str) -> bool:
    """True when ``module:Qual.name`` names a function or class defined in the repository."""
    module, _, qualname = ref.partition(":")
    path = REPO / (module.replace(".", "/") + ".py")
    if not path.is_file():
        path = REPO / module.replace(".", "/") / "__init__.py"
    if not path.is_file():
        return False
    if not qualname:
        return True
    body = _module_body(path)
    for part in qualname.split("."):
        match = [n for n in body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                 and n.name == part]
        if not match:
            return False
        body = match[0].body
    return True


# ---------------------------------------------------------------------- rendering
def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _quote(text: str) -> str:
    return text if len(text) <= QUOTE_LEN else text[:QUOTE_LEN - 1].rstrip() + "…"


def status_of(req: Requirement, entry: dict) -> str:
    if req.page in NOT_IMPLEMENTED_PAGES:
        return "not implemented"
    return entry.get("status", "unmapped")


def _proven(tests) -> bool:
    return any(not t.endswith(XFAIL) for t in tests or ())


def tests_of(req: Requirement, cited: dict) -> list:
    """The tests that prove a row: those citing its id and, for a row whose sentence
    BASE_REVISION has too, those citing that row's id (the same code meets both)."""
    return list(cited.get(req.id, [])) + (list(cited.get(req.base, [])) if req.base else [])


def prefix_of(page: str) -> str:
    if page in PREFIXES:
        return PREFIXES[page] + ID_SUFFIX
    return next(p for p in EXTENSIONS if _extension_page(p) == page) + ID_SUFFIX


def _source_lines(prefix: str) -> list:
    """The "Source:" lines of an extension's stored requirement sentences."""
    path = EXTENSIONS[prefix][1]
    return [line.lstrip("> ").strip() for line in path.read_text(encoding="utf-8").split("\n")
            if line.lstrip("> ").startswith(("Source:", "Stored:"))]


def _header() -> list:
    return [f"# Requirement traceability ({REVISION})", "",
            f"Revisions: {REVISION} (each row names the revisions holding the same sentence).", "",
            f"Generated by `scripts/traceability.py --revision {REVISION}` from the spec pages, "
            f"`spec_notes/{MAP.name}` (code, status) and the `@pytest.mark.req` markers of the "
            "tests. Do not edit by hand: edit the map or the markers and rerun the script; "
            "`tests/test_traceability.py` fails when this file is stale or a MUST row of an "
            "implemented area has no test.", "",
            f"Ids are `<PAGE>{ID_SUFFIX}-<n>`: the n-th requirement sentence of the page, in page "
            f"order; the page prefix is the {BASE_REVISION} one where the page exists in both "
            f"revisions, and the suffix `{ID_SUFFIX}` keeps the ids apart from those of "
            f"`spec_notes/traceability.md`. Revisions: the revisions with the same sentence on "
            "any page (pages moved: basic/transports.mdx became basic/transports/*, the utilities "
            "became basic/patterns/*; `all` = every revision since 2024-11-05). "
            f"{BASE_REVISION}: the id of the same sentence in the {BASE_REVISION} matrix; such a "
            "row's map entry was prefilled from that row's (`--init-map`), and the tests citing "
            "that id prove this row too (shown as `as <id>: n`). "
            "Code: `module:function`, followed by the text of the lines that meet the requirement "
            "when the function does more (scripts/mutate.py mutates only those lines). "
            "Status: `implemented` (code names where), `gap` (a requirement of an implemented area "
            "that mcp_ref does not meet yet; a MUST gap is pinned by a strict xfail test), "
            "`n/a` (the requirement binds someone "
            "mcp_ref is not -- a host UI, a user, an authorization server -- or permits a choice "
            "mcp_ref does not make; the note says why), `not implemented` (an area mcp_ref does not "
            "implement yet).", ""] + _mutation_section()


def _mutation_section() -> list:
    """The "Mutation" section of the current revision's matrix: the last figures of
    scripts/mutate.py on its new rows (MUTATION, edited by hand after a run)."""
    if not MUTATION:
        return []
    return ["## Mutation", "", MUTATION["text"], "",
            "| prefix | mutants | killed | equivalent | survivors |", "| --- | ---: | ---: | ---: | ---: |"] + \
        [f"| {p} | {m} | {k} | {e} | {m - k - e} |" for p, m, k, e in MUTATION["figures"]] + [""]


def render(requirements: list, mapping: dict, cited: dict) -> str:
    if BASE_REVISION:
        return _render_with_base(requirements, mapping, cited)
    out = ["# Requirement traceability (2025-11-25)", "",
           "Revisions: 2025-11-25 (each row names the revisions holding the same sentence, from 2024-11-05).", "",
           "Generated by `scripts/traceability.py` from the spec pages, "
           "`spec_notes/traceability_map.json` (code, status) and the `@pytest.mark.req` markers of "
           "the tests. Do not edit by hand: edit the map or the markers and rerun the script; "
           "`tests/test_traceability.py` fails when this file is stale or a MUST row of an "
           "implemented area has no test.", "",
           "Ids are `<PAGE>-<n>`: the n-th requirement sentence of the page, in page order. "
           "Revisions: the revisions whose same page holds the same sentence (`all` = every revision "
           "since 2024-11-05; a later requirement may exist in other words on an older page). "
           "Code: `module:function`, followed by the text of the lines that meet the requirement "
           "when the function does more (scripts/mutate.py mutates only those lines). "
           "Status: `implemented` (code names where), `gap` (a requirement of an implemented area "
           "that mcp_ref does not meet yet; a MUST gap is pinned by a strict xfail test), "
           "`n/a` (the requirement binds someone "
           "mcp_ref is not -- a host UI, a user, an authorization server -- or permits a choice "
           "mcp_ref does not make; the note says why), `not implemented` (an area mcp_ref does not "
           "implement yet).", ""]
    pages = list(dict.fromkeys(r.page for r in requirements))
    out += ["## Summary", "",
            "| page | MUST rows | MUST in scope | in scope with test | SHOULD rows | SHOULD with test | gap | n/a "
            "| not implemented |",
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    totals = [0] * 8
    for page in pages:
        rows = [r for r in requirements if r.page == page]
        must = [r for r in rows if r.level == "MUST"]
        should = [r for r in rows if r.level == "SHOULD"]
        scope = [r for r in must if status_of(r, mapping.get(r.id, {})) in ("implemented", "gap")]
        figures = [len(must), len(scope), sum(1 for r in scope if cited.get(r.id)),
                   len(should), sum(1 for r in should if _proven(cited.get(r.id))),
                   sum(1 for r in rows if status_of(r, mapping.get(r.id, {})) == "gap"),
                   sum(1 for r in rows if status_of(r, mapping.get(r.id, {})) == "n/a"),
                   sum(1 for r in rows if status_of(r, mapping.get(r.id, {})) == "not implemented")]
        totals = [a + b for a, b in zip(totals, figures)]
        out.append(f"| {page} ({PREFIXES[page]}) | " + " | ".join(str(x) for x in figures) + " |")
    out.append("| **total** | " + " | ".join(f"**{x}**" for x in totals) + " |")
    out.append("")
    for page in pages:
        out += [f"## {page} ({PREFIXES[page]})", ""]
        if page in NOT_IMPLEMENTED_PAGES:
            out += [f"Not implemented: {NOT_IMPLEMENTED_PAGES[page]}.", ""]
        out += ["| id | level | requirement | revisions | status | code | tests |",
                "| --- | --- | --- | --- | --- | --- | --- |"]
        for req in (r for r in requirements if r.page == page):
            entry = mapping.get(req.id, {})
            status = status_of(req, entry)
            lines = entry.get("lines", {})
            code = "<br>".join(f"`{c}`" + "".join(f" `{_cell(a)}`" for a in lines.get(c, ()))
                               for c in entry.get("code", []))
            if entry.get("note"):
                code = (code + "<br>" if code else "") + _cell(entry["note"])
            tests = "<br>".join(f"`{t.split('/', 1)[-1]}`" for t in cited.get(req.id, []))
            quote = _cell(_quote(req.text))
            out.append(f"| {req.id} | {'/'.join(req.keywords)} | {quote} (#{req.section or 'top'}) | {req.revisions} | "
                       f"{status} | {code} | {tests} |")
        out.append("")
    return "\n".join(out)


def _render_with_base(requirements: list, mapping: dict, cited: dict) -> str:
    out = _header()
    pages = list(dict.fromkeys(r.page for r in requirements))
    out += ["## Summary", "",
            f"| page | MUST rows | MUST in scope | in scope with test | SHOULD rows | SHOULD with test | gap | n/a "
            f"| not implemented | rows shared with {BASE_REVISION} |",
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    totals = [0] * 9
    for page in pages:
        rows = [r for r in requirements if r.page == page]
        must = [r for r in rows if r.level == "MUST"]
        should = [r for r in rows if r.level == "SHOULD"]
        status = {r.id: status_of(r, mapping.get(r.id, {})) for r in rows}
        scope = [r for r in must if status[r.id] in ("implemented", "gap")]
        figures = [len(must), len(scope), sum(1 for r in scope if tests_of(r, cited)),
                   len(should), sum(1 for r in should if _proven(tests_of(r, cited))),
                   sum(1 for r in rows if status[r.id] == "gap"),
                   sum(1 for r in rows if status[r.id] == "n/a"),
                   sum(1 for r in rows if status[r.id] == "not implemented"),
                   sum(1 for r in rows if r.base)]
        totals = [a + b for a, b in zip(totals, figures)]
        out.append(f"| {page} ({prefix_of(page)}) | " + " | ".join(str(x) for x in figures) + " |")
    out.append("| **total** | " + " | ".join(f"**{x}**" for x in totals) + " |")
    out.append("")
    for page in pages:
        out += [f"## {page} ({prefix_of(page)})", ""]
        prefix = prefix_of(page)[:len(prefix_of(page)) - len(ID_SUFFIX)]
        if prefix in EXTENSIONS and page not in PREFIXES:
            out += [f"Requirement sentences of the extension's published page, stored in "
                    f"`{EXTENSIONS[prefix][1].relative_to(REPO).as_posix()}`:", ""]
            out += [f"- {line}" for line in _source_lines(prefix)] + [""]
        out += [f"| id | level | requirement | revisions | {BASE_REVISION} | status | code | tests |",
                "| --- | --- | --- | --- | --- | --- | --- | --- |"]
        for req in (r for r in requirements if r.page == page):
            entry = mapping.get(req.id, {})
            status = status_of(req, entry)
            lines = entry.get("lines", {})
            code = "<br>".join(f"`{c}`" + "".join(f" `{_cell(a)}`" for a in lines.get(c, ()))
                               for c in entry.get("code", []))
            if entry.get("note"):
                code = (code + "<br>" if code else "") + _cell(entry["note"])
            tests = [f"`{t.split('/', 1)[-1]}`" for t in cited.get(req.id, [])]
            if req.base and cited.get(req.base):
                tests.append(f"as `{req.base}`: {len(cited[req.base])}")
            quote = _cell(_quote(req.text))
            out.append(f"| {req.id} | {'/'.join(req.keywords)} | {quote} (#{req.section or 'top'}) | {req.revisions} | "
                       f"{req.base or ''} | {status} | {code} | {'<br>'.join(tests)} |")
        out.append("")
    return "\n".join(out)


# ---------------------------------------------------------------------- checks
def problems(requirements: list, mapping: dict, cited: dict) -> list:
    """Everything that makes the matrix untrustworthy (empty when all is well)."""
    found = []
    by_id = {r.id: r for r in requirements}
    for rid in sorted(rid for rid in set(cited) - set(by_id) if _ours(rid)):
        found.append(f"tests cite an unknown requirement id {rid}: {cited[rid]}")
    for rid in sorted(set(mapping) - set(by_id)):
        found.append(f"the map names an unknown requirement id {rid}")
    for req in requirements:
        entry = mapping.get(req.id)
        if entry is None:
            found.append(f"{req.id} has no entry in {MAP.name} (run --init-map)")
            continue
        if entry.get("digest") != req.digest:
            found.append(f"{req.id}: the spec text changed since it was mapped (digest "
                         f"{entry.get('digest')} != {req.digest}); review the row")
        status = status_of(req, entry)
        if status not in STATUSES:
            found.append(f"{req.id}: status {status!r} is not one of {STATUSES}")
        for ref in entry.get("code", []):
            if not resolve_code(ref):
                found.append(f"{req.id}: code reference {ref} does not resolve")
        for claim in entry.get("equivalent", {}):
            name, _, rest = claim.partition(": ")
            text = rest.partition(" @ ")[2]
            refs = [r for r in entry.get("code", []) if r.partition(":")[2] == name]
            if not refs or not text or not any(anchored_lines(r, [text]) for r in refs):
                found.append(f"{req.id}: the equivalent mutant {claim!r} names no line of the row's code")
        for ref, anchors in entry.get("lines", {}).items():
            if ref not in entry.get("code", []):
                found.append(f"{req.id}: lines given for {ref}, which the row does not name")
            for anchor in anchors:
                if not anchored_lines(ref, [anchor]):
                    found.append(f"{req.id}: no line of {ref} holds {anchor!r} (the code changed: update the map)")
        if status == "implemented" and not entry.get("code"):
            found.append(f"{req.id}: implemented but no code named")
        if status == "n/a" and not entry.get("note"):
            found.append(f"{req.id}: n/a needs a note saying why")
        if status == "not implemented" and req.page not in NOT_IMPLEMENTED_PAGES and not entry.get("note"):
            found.append(f"{req.id}: not implemented outside an unimplemented area needs a note saying why")
        if status == "gap" and not entry.get("note"):
            found.append(f"{req.id}: a gap needs a note saying what is missing")
        if status == "implemented" and req.level == "MUST" and \
                not [t for t in tests_of(req, cited) if not t.endswith(XFAIL)]:
            found.append(f"{req.id}: a MUST of an implemented area has no test "
                         f"(mark one with @pytest.mark.req({req.id!r}))")
        if status == "gap" and req.level == "MUST" and not tests_of(req, cited):
            found.append(f"{req.id}: a MUST gap needs a strict xfail test that pins it "
                         f"(marked @pytest.mark.req({req.id!r}))")
    return found


def _ours(rid: str) -> bool:
    """Whether a cited id belongs to this revision's matrix (the other matrix's ids
    carry, or lack, the suffix)."""
    m = re.fullmatch(r"([A-Z]+?)(\d\d)?-\d+", rid)
    if ID_SUFFIX:
        return bool(m) and m.group(2) == ID_SUFFIX
    return not (m and m.group(2))


def init_map(requirements: list, mapping: dict) -> dict:
    base_map = {}
    if BASE_REVISION:
        base_map = load_map(REPO / "spec_notes" / "traceability_map.json")
    for req in requirements:
        if req.id not in mapping and req.base and req.base in base_map:
            shared = base_map[req.base]
            mapping[req.id] = {k: shared[k] for k in ("status", "code", "lines", "note", "equivalent")
                               if k in shared}
        entry = mapping.setdefault(req.id, {})
        entry.setdefault("status", "not implemented" if req.page in NOT_IMPLEMENTED_PAGES
                         else "implemented")
        entry.setdefault("code", [])
        entry["digest"] = entry.get("digest") or req.digest
    return {r.id: mapping[r.id] for r in requirements} | {k: v for k, v in mapping.items()
                                                           if k not in {r.id for r in requirements}}


def save_map(mapping: dict, path: Path | None = None) -> None:
    path = path or MAP
    with open(path, "w", encoding="utf-8") as f:
        f.write("{\n")
        items = list(mapping.items())
        for i, (rid, entry) in enumerate(items):
            f.write(f"  {json.dumps(rid)}: {json.dumps(entry, ensure_ascii=False)}")
            f.write(",\n" if i < len(items) - 1 else "\n")
        f.write("}\n")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="fail if the matrix is stale or incomplete")
    parser.add_argument("--init-map", action="store_true", help="add map entries for new requirement ids")
    parser.add_argument("--show", metavar="PREFIX", help="print the requirements of one id prefix")
    parser.add_argument("--revision", default="2025-11-25", choices=REVISIONS,
                        help="the revision whose matrix to build (default 2025-11-25)")
    args = parser.parse_args(argv)
    configure(args.revision)
    spec = spec_root()
    if not (spec / REVISION).is_dir():
        print(f"spec folder {spec / REVISION} not found: set MCP_SPEC_DIR", file=sys.stderr)
        return 2
    requirements = extract(spec)
    mapping = load_map()
    if args.show:
        cited = collect_markers()
        for r in requirements:
            if r.id.split("-")[0] == args.show:
                e = mapping.get(r.id, {})
                print(f"{r.id} [{r.level}] #{r.section} ({r.revisions}{' = ' + r.base if r.base else ''}) "
                      f"{e.get('status')} {e.get('code')} {tests_of(r, cited)}\n    {r.text}\n")
        return 0
    if args.init_map:
        save_map(init_map(requirements, mapping))
        mapping = load_map()
    cited = collect_markers()
    text = render(requirements, mapping, cited)
    if args.check:
        issues = problems(requirements, mapping, cited)
        current = MATRIX.read_text(encoding="utf-8") if MATRIX.is_file() else ""
        if current != text:
            issues.insert(0, f"{MATRIX.relative_to(REPO)} is stale: run python scripts/traceability.py")
        for issue in issues:
            print(issue, file=sys.stderr)
        return 1 if issues else 0
    MATRIX.write_text(text, encoding="utf-8")
    issues = problems(requirements, mapping, cited)
    print(f"{len(requirements)} requirements; wrote {MATRIX.relative_to(REPO)}; {len(issues)} problem(s)")
    for issue in issues[:40]:
        print("  " + issue)
    return 0


if __name__ == "__main__":
    sys.exit(main())
