"""The package stays readable in one sitting per module: no module over
``MAX_LINES`` lines, and the protocol core explained at least as much as it
is coded (docstring and comment lines per code line, ``MIN_CORE_DENSITY``).

Lines are counted as ``wc -l`` does. A docstring line is a line of a module,
class or function docstring; a comment line holds a ``#`` comment (beside code
or alone); a code line holds any other token (a line with code and a comment is
both). Blank lines count for nothing.
A size budget holds the whole package to ``PACKAGE_BUDGET`` code lines and its
core (the package without the tooling room ``cli/``, ``auth/``, ``host/`` and
``examples/``) to ``CORE_BUDGET``: a minimal reference stays small enough to read
through.
A module that grows past the bound is split into cohesive parts (see how
session/__init__.py, server/server.py and client/client.py lean on mix-ins).
"""
import ast
import io
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "mcp_ref"
MAX_LINES = 400
MIN_CORE_DENSITY = 0.5
CORE_BUDGET = 10_500
PACKAGE_BUDGET = 13_000
# Where the package stands: it may shrink, never grow, until the budget holds.
CORE_NOW = 9_934
PACKAGE_NOW = 12_986
OUTSIDE_CORE = ("cli", "auth", "host", "examples", "__main__.py")
# The protocol core: no roles, no I/O but the session's threads (README, module map).
CORE = ["errors.py", "jsonrpc", "types", "protocol/lifecycle.py", "session/__init__.py",
        "session/outbound.py", "session/inbound.py", "session/notices.py", "session/batches.py", "session/closing.py",
        "session/pool.py"]


def counts(source: str) -> tuple:
    """``(docstring and comment lines, code lines)`` of one module's source."""
    docstrings, comments, code = set(), set(), set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and \
                    isinstance(first.value.value, str):
                docstrings.update(range(first.lineno, first.end_lineno + 1))
    skip = (tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER)
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            comments.add(token.start[0])
        elif token.type not in skip:
            code.update(range(token.start[0], token.end[0] + 1))
    return len(docstrings | comments), len(code - docstrings)


def core_modules() -> list:
    paths = []
    for name in CORE:
        path = PACKAGE / name
        paths += sorted(path.glob("*.py")) if path.is_dir() else [path]
    return paths


def test_no_module_is_over_the_bound():
    long = {str(p.relative_to(ROOT)): n for p in sorted(PACKAGE.rglob("*.py"))
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert not long, f"modules over {MAX_LINES} lines (split out a cohesive part): {long}"


def test_the_core_is_explained_at_least_as_much_as_it_is_coded():
    text = code = 0
    for path in core_modules():
        assert path.is_file(), f"{path} is named in CORE but does not exist"
        t, c = counts(path.read_text(encoding="utf-8"))
        text, code = text + t, code + c
    density = text / code
    assert density >= MIN_CORE_DENSITY, f"core docstring+comment density {density:.3f} < {MIN_CORE_DENSITY}"


def test_the_counter_tells_docstrings_comments_and_code_apart():
    source = ('"""Module.\n\nMore."""\nimport os  # why\n\n\ndef f():\n    """One line."""\n'
              '    # a comment\n    return (1 +\n            2)\n')
    assert counts(source) == (3 + 1 + 1 + 1, 1 + 1 + 2)    # text: 1-3, 4, 8, 9; code: 4, 7, 10, 11


def code_lines_by_room() -> dict:
    """Code lines per top-level room of the package (a loose module is its own room)."""
    rooms: dict = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        room = path.relative_to(PACKAGE).parts[0]
        rooms[room] = rooms.get(room, 0) + counts(path.read_text(encoding="utf-8"))[1]
    return rooms


def _sizes() -> tuple:
    rooms = code_lines_by_room()
    core = sum(n for room, n in rooms.items() if room not in OUTSIDE_CORE)
    by_size = ", ".join(f"{room} {n}" for room, n in sorted(rooms.items(), key=lambda kv: -kv[1]))
    return core, sum(rooms.values()), by_size


def test_the_package_and_its_core_never_grow():
    core, package, by_size = _sizes()
    assert core <= CORE_NOW, f"core: {core} code lines > {CORE_NOW} ({by_size})"
    assert package <= PACKAGE_NOW, f"package: {package} code lines > {PACKAGE_NOW} ({by_size})"


def test_the_core_stays_within_the_size_budget():
    core, _, by_size = _sizes()
    assert core <= CORE_BUDGET, f"core: {core} code lines > {CORE_BUDGET} ({by_size})"


def test_the_package_stays_within_the_size_budget():
    _, package, by_size = _sizes()
    assert package <= PACKAGE_BUDGET, f"package: {package} code lines > {PACKAGE_BUDGET} ({by_size})"
