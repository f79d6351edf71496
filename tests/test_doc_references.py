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
* code named in backticks by a dotted path (the form spec_notes/README.md,
  *How the notes name code*, defines): the module, function, class, method or
  attribute exists in the package. Three forms:

  - ``mcp_ref.session.outbound.CancelToken.cancel``: the full path, from the
    package (checked in every note, the generated ones too);
  - ``outbound.request``, ``session.outbound.request``, ``lifecycle.negotiate``: the
    same path without its leading packages (any tail of a module's path);
  - ``Client.call_tool``, ``Session._on_response``: a class of the package and
    one of its members (its methods, properties, class attributes, attributes
    set on ``self``, and those of its bases in the package).

  The lower-case names the examples give objects are read as those objects:
  ``server.`` a ``Server``, ``client.`` a ``Client``, ``ctx.`` a ``Context``,
  ``token.`` a ``CancelToken``, ``host.`` a ``Host``, ``approval.`` an
  ``Approval``, ``handle.`` the handle ``start_http`` returns (``server`` and
  ``client`` are tried as modules first). Anything else is not a reference: a
  file name (``server.py``), a field of a message (``params._meta``, a
  camelCase member, a schema type's field such as ``ServerCapabilities.tasks``,
  a capability field of ``CAPABILITY_FIELDS`` such as ``sampling.tools``), or
  the standard library's (``os.environ``). A dotted path whose first word names a class
  that is not the package's fails, unless listed in ``FOREIGN_CLASSES``.
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


# ---------------------------------------------------------------------- dotted code references
GENERATED = ("wire-tour.md", "traceability.md", "traceability-2026-07-28.md")   # quote the spec's own words
DOTTED = re.compile(r"`([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+)(?:\([^`]*\))?`")
# The lower-case names the examples give objects, and the class each stands for.
VALUES = {"server": "Server", "client": "Client", "ctx": "Context", "token": "CancelToken", "host": "Host",
          "approval": "Approval", "handle": "HttpServerHandle"}
# Capitalised names that are not the package's classes (the standard library's, the web frameworks').
FOREIGN_CLASSES = frozenset({"BaseHTTPRequestHandler", "ThreadingHTTPServer", "DispatcherMiddleware", "Thread",
                             "ClientSession"})     # (the official SDK's)


@lru_cache(maxsize=None)
def _schema_types() -> frozenset:
    """The type names of every revision's schema.json: ``ServerCapabilities.tasks`` is a field of a
    message, not code (empty when the spec folder is absent: such names are then not checked)."""
    import json
    spec, found = spec_path(), set()
    for schema in sorted(spec.glob("*/schema.json")) if spec.is_dir() else ():
        data = json.loads(schema.read_text(encoding="utf-8"))
        found.update(data.get("definitions", data.get("$defs", {})))
    return frozenset(found)
# Capability fields as the spec writes them (``sampling.tools`` is a field of ``ClientCapabilities``).
CAPABILITY_FIELDS = frozenset({"sampling.tools", "sampling.context", "resources.subscribe", "resources.listChanged",
                               "tasks.list", "tasks.cancel", "tasks.requests.tools.call", "elicitation.url",
                               "elicitation.form", "context.arguments"})
PACKAGE = ROOT / "mcp_ref"


class _Index:
    """The package read with ``ast``: modules by dotted name, classes by name, each one's members."""

    def __init__(self) -> None:
        self.modules: dict = {}                  # "mcp_ref.session.outbound" -> its top-level names
        self.classes: dict = {}                  # "CancelToken" -> [(ClassDef, module name)]
        for path in sorted(PACKAGE.rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            name = ".".join(parts)
            tree = ast.parse(path.read_text(encoding="utf-8"))
            names = set()
            for node in tree.body:
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    names.add(node.name)
                elif isinstance(node, (ast.Import, ast.ImportFrom)):
                    names.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
                elif isinstance(node, (ast.Assign, ast.AnnAssign)):
                    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                    for target in targets:
                        names.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
                elif isinstance(node, (ast.If, ast.Try)):     # names defined under a version test
                    names.update(n.name for n in ast.walk(node)
                                 if isinstance(n, (ast.FunctionDef, ast.ClassDef)))
                    names.update(n.id for n in ast.walk(node)
                                 if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store))
                    names.update((alias.asname or alias.name).split(".")[0] for n in ast.walk(node)
                                 if isinstance(n, (ast.Import, ast.ImportFrom)) for alias in n.names)
            self.modules[name] = names
            for node in ast.walk(tree):
                if isinstance(node, ast.ClassDef):
                    self.classes.setdefault(node.name, []).append(node)

    def members(self, class_name: str, seen=None) -> set:
        seen = set() if seen is None else seen
        if class_name in seen:
            return set()
        seen.add(class_name)
        found: set = set()
        for node in self.classes.get(class_name, ()):
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    found.add(item.name)
                elif isinstance(item, ast.Assign):
                    found.update(t.id for t in item.targets if isinstance(t, ast.Name))
                elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                    found.add(item.target.id)
            for sub in ast.walk(node):                         # self.x = ... in any method
                targets = sub.targets if isinstance(sub, ast.Assign) else \
                    [sub.target] if isinstance(sub, (ast.AnnAssign, ast.AugAssign)) else []
                for target in targets:
                    for element in ast.walk(target):
                        if isinstance(element, ast.Attribute) and isinstance(element.value, ast.Name) \
                                and element.value.id == "self":
                            found.add(element.attr)
            for base in node.bases:
                base_name = base.id if isinstance(base, ast.Name) else \
                    base.attr if isinstance(base, ast.Attribute) else None
                if base_name:
                    found |= self.members(base_name, seen)
        return found

    def in_module(self, module: str, rest: list) -> bool:
        """``rest`` names something in ``module``: a submodule, a top-level name, a class's member."""
        if not rest:
            return True
        if f"{module}.{rest[0]}" in self.modules:
            return self.in_module(f"{module}.{rest[0]}", rest[1:])
        if rest[0] not in self.modules[module]:
            return False
        if len(rest) == 1:
            return True
        return rest[0] in self.classes and len(rest) == 2 and rest[1] in self.members(rest[0])

    def module_path(self, parts: list):
        """None when ``parts`` does not start with a module's path (or a tail of one), else whether
        the rest resolves in one of the modules it may name."""
        tried = None
        for cut in range(len(parts), 0, -1):
            head = ".".join(parts[:cut])
            for module in self.modules:
                if module == head or module.endswith("." + head):
                    tried = False
                    if self.in_module(module, parts[cut:]):
                        return True
        return tried

    def check(self, dotted: str, short: bool) -> tuple:
        """``(form, ok)``; form None when ``dotted`` is not a code reference."""
        parts = dotted.split(".")
        if dotted in CAPABILITY_FIELDS:
            return None, True
        if parts[0] == "mcp_ref":
            return "full", bool(self.module_path(parts))
        if not short:
            return None, True
        if parts[0][0].isupper():
            if parts[0] in FOREIGN_CLASSES or re.search(r"[a-z][A-Z]|^_meta$", parts[-1]):
                return None, True                         # a foreign class, a message's field
            if parts[0] not in self.classes and (parts[0] in _schema_types() or not _schema_types()):
                return None, True
            if parts[0] not in self.classes:
                return "class", False
            return "class", len(parts) == 2 and parts[1] in self.members(parts[0])
        resolved = self.module_path(parts)
        if resolved:
            return "module", True
        if parts[0] in VALUES:
            return "value", parts[1] in self.members(VALUES[parts[0]])
        if resolved is False:
            return "module", False
        return None, True


def test_dotted_code_references_resolve():
    index, bad, counts = _Index(), [], {"full": 0, "module": 0, "class": 0, "value": 0}
    for doc, text in _docs():
        short = not doc.endswith(GENERATED)
        for match in DOTTED.finditer(text):
            dotted = match.group(1)
            if re.search(r"\.(py|md|json|txt|toml|cfg|ts|mdx|sh)$", dotted):        # a file name
                continue
            form, ok = index.check(dotted, short)
            if form:
                counts[form] += 1
                if not ok:
                    bad.append(f"{doc}: `{dotted}`: no such {form if form != 'value' else 'member'} in mcp_ref")
    assert counts["full"] > 5 and counts["module"] > 20 and counts["class"] > 20, counts
    assert not bad, "\n".join(sorted(set(bad))) + f"\n({len(bad)} of {sum(counts.values())}: {counts})"


def test_the_dotted_reference_checker_fails_on_what_is_not_there():
    index = _Index()
    assert index.check("mcp_ref.session.outbound.CancelToken.cancel", True) == ("full", True)
    assert index.check("mcp_ref.session.outbound.no_such_thing", True) == ("full", False)
    assert index.check("outbound.CancelToken", True) == ("module", True)
    assert index.check("lifecycle.no_such_function", True) == ("module", False)
    assert index.check("Client.call_tool", True) == ("class", True)
    assert index.check("Client.no_such_method", True) == ("class", False)
    assert index.check("NoSuchClass.method", True) == ("class", False)
    assert index.check("ctx.report_progress", True) == ("value", True)
    assert index.check("ctx.no_such_method", True) == ("value", False)
    assert index.check("os.environ", True) == (None, True)
    assert index.check("capabilities.sampling.tools", True) == (None, True)
