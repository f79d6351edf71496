"""The dependency direction of the package, checked by parsing every module.

Each layer may import only the layers of its row; a new module needs a row
here. Imports that run when a module is imported (module level, class bodies,
``if``/``try`` blocks at module level) must follow the table; so must imports
inside functions (loaded on first use, for start-up time), except the few
named in ``LOCAL_EXCEPTIONS`` with their reason. Imports under
``if TYPE_CHECKING:`` are for annotations only and are not checked against the
table; every import of every kind counts for the circle check.
"""
import ast
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "mcp_ref"
ANYTHING = None

ALLOWED = {
    "errors": set(),
    # JSON-RPC: the messages, and the head of a frame that did not decode.
    "jsonrpc": set(),
    "jsonrpc.messages": {"errors", "jsonrpc.peek"},
    "jsonrpc.peek": set(),
    # Type hints read alike on Python 3.9 to 3.13 (PEP 604 unions, "X | Y" strings).
    "schema": set(),
    "schema.typehints": set(),
    "types": {"errors", "jsonrpc.messages", "types", "schema.typehints"},
    # The protocol's rules above JSON-RPC.
    "protocol": set(),
    "protocol.lifecycle": {"errors", "jsonrpc.messages", "types"},
    "schema.docstrings": set(),
    "schema.validation": {"errors"},
    "schema.signature": {"errors", "schema.docstrings", "schema.typehints", "schema.schemas"},
    # Python types as JSON Schema.
    "schema.schemas": {"schema.docstrings", "schema.typehints", "schema.jsonable"},
    # Values as JSON.
    "schema.jsonable": set(),
    # Unguessable ids (session ids, task ids) from the OS's CSPRNG.
    "protocol.tokens": set(),
    # Arguments in (convert, as_is), from the hints signature.py reads.
    "schema.binding": {"errors", "schema.schemas", "schema.typehints"},
    "schema.uritemplate": {"errors"},
    "transports": {"errors", "jsonrpc.messages", "jsonrpc.peek", "transports"},
    "auth": {"errors", "jsonrpc.messages"},
    "session": {"errors", "jsonrpc.messages", "protocol.lifecycle", "session.workers", "session.pool",
                "session.outbound", "session.inbound", "session.notices", "session.batches", "session.closing",
                "session.state"},
    # The rooms of Session, each mixed into it. What goes out: requests, writing, Pending, CancelToken.
    "session.outbound": {"errors", "jsonrpc.messages", "session.state"},
    # What comes in: the pool's threads, the reader loop, routing, serving; RequestContext.
    "session.inbound": {"errors", "jsonrpc.messages", "protocol.lifecycle", "session.pool", "session.state"},
    # Cancellations, progress, notifications, and the helper threads that run callbacks in order.
    "session.notices": {"errors", "jsonrpc.messages", "session.state"},
    # JSON-RPC batches (2025-03-26).
    "session.batches": {"errors", "jsonrpc.messages", "protocol.lifecycle", "session.state"},
    # How a session ends (rule 5).
    "session.closing": {"errors", "session.notices", "session.state"},
    # What the rooms share: the attributes, set in one __init__ (a pool or lanes), and declared methods.
    "session.state": {"errors", "session.pool", "session.workers"},
    # Who runs a job (the leader/follower pool): threads only, no MCP.
    "session.pool": set(),
    # A bounded thread pool shared by sessions that have no reader of their own (HTTP).
    "session.workers": set(),
    # The modern era (2026-07-28): per-request metadata, discovery and result rules, pure.
    "protocol.modern": {"errors", "jsonrpc.messages", "protocol.lifecycle"},
}
SCHEMA = {"schema.signature", "schema.binding", "schema.jsonable", "schema.uritemplate",
          "schema.validation", "schema.docstrings", "schema.typehints"}
SESSION = {"session", "session.inbound", "session.outbound"}
ALLOWED.update({
    # The server's room: Server, Context, and the features (tools, resources, prompts, completion,
    # logging, pagination, tasks), and its serving of a modern request. Its side of sampling,
    # elicitation and roots lives in the client's room (one module per request, both sides):
    # see LOCAL_EXCEPTIONS.
    "server": SESSION | SCHEMA | {"protocol.lifecycle", "protocol.modern", "types", "errors", "jsonrpc.messages",
                                  "transports", "protocol.tokens"},
    # The client's room: Client, its requests, its modern era, and what answers the server's requests
    # (sampling, elicitation, roots, approval, tasks, restart). It never imports the server.
    "client": SESSION | {"protocol.lifecycle", "protocol.modern", "types", "errors", "jsonrpc.messages", "transports",
                         "schema.validation"},
    "host": ANYTHING,
    # The tooling room: the command line (serve, the inspector, the shell, demo --host) and
    # `demo --scenario NAME` (a client and a server together): on top of everything.
    "cli": ANYTHING,
    "__main__": ANYTHING,
    "examples": ANYTHING,
    "__init__": ANYTHING,           # the package itself re-exports the public API
})
# HTTP transports also need the negotiated-revision rules, the OAuth helpers, the shared worker pool
# and session ids (tokens).
HTTP_TRANSPORT_EXTRA = {"protocol.lifecycle", "auth", "session.workers", "protocol.tokens"}
# Function-local imports allowed to point outside their row, and why.
# The server's half of sampling, elicitation and roots lives beside the client's half, one module
# per request in the client's room; Context loads it on the first ctx.sample/elicit/list_roots.
_SHARED = "one module per request holds both sides; loaded on first use"
LOCAL_EXCEPTIONS = {
    ("mcp_ref.server.context", "mcp_ref.client.roots"): _SHARED,
    ("mcp_ref.server.context", "mcp_ref.client.elicitation"): _SHARED,
    ("mcp_ref.server.context", "mcp_ref.client.sampling"): _SHARED,
}
OPTIONAL = {"jsonschema", "requests", "sseclient"}


def _modules():
    return sorted((ROOT / PACKAGE).rglob("*.py"))


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _exists(module: str) -> bool:
    base = ROOT.joinpath(*module.split("."))
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()


def _layer(module: str) -> str:
    """The row of ``module``: the longest name in ALLOWED it lies in (``session.pool``,
    else ``session``); a module in no row is its room's first name."""
    parts = module.split(".")[1:]
    for cut in range(len(parts), 0, -1):
        if ".".join(parts[:cut]) in ALLOWED:
            return ".".join(parts[:cut])
    return parts[0] if parts else "__init__"


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _import_time_imports(tree: ast.Module) -> list:
    """Import statements that run when the module is imported."""
    found = []

    def visit(nodes):
        for node in nodes:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                found.append(node)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                continue
            elif isinstance(node, ast.If) and _is_type_checking(node.test):
                visit(node.orelse)
            else:
                for name in ("body", "orelse", "finalbody", "handlers", "cases"):
                    visit(getattr(node, name, None) or [])
    visit(tree.body)
    return found


def _function_local_imports(tree: ast.Module) -> list:
    """Import statements inside functions (run on first use, not at import time)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            for inner in ast.walk(node):
                if isinstance(inner, (ast.Import, ast.ImportFrom)) and inner not in found:
                    found.append(inner)
    return found


def _targets(node, module: str, is_package: bool) -> list:
    """Absolute names of what ``node`` imports (a submodule when ``from . import x`` names one)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if node.level == 0:
        base = node.module or ""
    else:
        package = module.split(".") if is_package else module.split(".")[:-1]
        package = package[:len(package) - (node.level - 1)]
        base = ".".join(package + ([node.module] if node.module else []))
    names = []
    for alias in node.names:
        candidate = f"{base}.{alias.name}"
        if base == PACKAGE or (base.startswith(PACKAGE + ".") and _exists(candidate)):
            names.append(candidate)     # a submodule, or a name taken from the package root
        else:
            names.append(base)
    return names


def _imports(find=_import_time_imports):
    """``(module, lineno, imported name)`` for every import-time import of the package
    (``find=_function_local_imports``: every import inside a function)."""
    rows = []
    for path in _modules():
        module = _module_name(path)
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node in find(tree):
            for target in _targets(node, module, path.name == "__init__.py"):
                rows.append((module, node.lineno, target))
    return rows


def _allowed(module: str):
    layer = _layer(module)
    allowed = ALLOWED[layer]
    if allowed is not ANYTHING and module.startswith(f"{PACKAGE}.transports.http"):
        allowed = allowed | HTTP_TRANSPORT_EXTRA
    return allowed


def test_every_module_has_a_row():
    unknown = sorted({_layer(_module_name(p)) for p in _modules()} - set(ALLOWED))
    assert not unknown, f"add a row for {unknown} to ALLOWED in tests/test_layering.py (who may it import?)"


def _violations(rows, exceptions=frozenset()) -> list:
    problems = []
    for module, line, target in rows:
        if not (target == PACKAGE or target.startswith(PACKAGE + ".")):
            continue
        allowed = _allowed(module) if _layer(module) in ALLOWED else ANYTHING
        if allowed is ANYTHING:
            continue
        if _layer(target) not in allowed and _layer(target) != _layer(module) and \
                (module, target) not in exceptions:
            problems.append(f"{module}:{line} imports {target} (layer {_layer(module)!r} may import "
                            f"{sorted(allowed) or 'nothing from the package'})")
    return problems


def test_imports_follow_the_layer_table():
    problems = _violations(_imports())
    assert not problems, "layering violations (move the import into the function that needs it):\n" + \
        "\n".join(problems)


def test_function_local_imports_follow_the_layer_table_too():
    """An import inside a function is still a dependency: it may not point up the
    table (a circle hidden by deferral) unless named in LOCAL_EXCEPTIONS."""
    problems = _violations(_imports(_function_local_imports), set(LOCAL_EXCEPTIONS))
    assert not problems, "function-local imports that point up the layer table (add a reason to " \
        "LOCAL_EXCEPTIONS or move the code):\n" + "\n".join(problems)
    stale = [pair for pair in LOCAL_EXCEPTIONS
             if pair not in {(m, t) for m, _, t in _imports(_function_local_imports)}]
    assert not stale, f"LOCAL_EXCEPTIONS names imports that no longer exist: {stale}"


def test_optional_packages_are_imported_lazily():
    eager = [f"{module}:{line} imports {target}" for module, line, target in _imports()
             if target.split(".")[0] in OPTIONAL]
    assert not eager, "import these inside the function that needs them:\n" + "\n".join(eager)


@pytest.mark.skipif(sys.version_info < (3, 10), reason="sys.stdlib_module_names needs Python 3.10")
def test_import_time_imports_are_stdlib_only():
    stdlib = set(sys.stdlib_module_names)
    foreign = [f"{module}:{line} imports {target}" for module, line, target in _imports()
               if target.split(".")[0] not in stdlib and target.split(".")[0] != PACKAGE]
    assert not foreign, "the package must import with the standard library alone:\n" + "\n".join(foreign)


def _circles(edges: dict) -> list:
    """The groups of modules that import each other, directly or round a loop (Tarjan)."""
    order, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(module):
        order[module] = low[module] = len(order)
        stack.append(module)
        on_stack.add(module)
        for other in sorted(edges.get(module, ())):
            if other not in order:
                visit(other)
                low[module] = min(low[module], low[other])
            elif other in on_stack:
                low[module] = min(low[module], order[other])
        if low[module] == order[module]:
            group = []
            while True:
                other = stack.pop()
                on_stack.discard(other)
                group.append(other)
                if other == module:
                    break
            if len(group) > 1:
                found.append(sorted(group))
    for module in sorted(edges):
        if module not in order:
            visit(module)
    return found


def test_no_two_modules_import_each_other():
    """A circle makes the import order matter and hides which module is the lower one."""
    modules = {_module_name(p) for p in _modules()}
    edges = {}
    for module, _, target in _imports():
        while target not in modules and "." in target:
            target = target.rsplit(".", 1)[0]         # a name taken from a module: that module
        if target in modules and target != module and target != PACKAGE:
            edges.setdefault(module, set()).add(target)
    assert not _circles(edges), "modules that import each other at import time"
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def _every_import(tree: ast.Module) -> list:
    """Every import statement: module level, in functions, under ``if TYPE_CHECKING:``."""
    return [node for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom))]


# Circles still to break (each pair's modules read one another only for annotations, or a
# package's registry and its members): listed so that a new circle fails, and a broken one
# must leave the list.
KNOWN_CIRCLES = [
]


def test_no_circles_among_all_imports():
    """Counting imports inside functions and under TYPE_CHECKING too: a deferred import
    hides a circle from the import machinery, not from the reader."""
    modules = {_module_name(p) for p in _modules()}
    edges = {}
    for module, _, target in _imports(_every_import):
        while target not in modules and "." in target:
            target = target.rsplit(".", 1)[0]
        if target in modules and target != module and target != PACKAGE:
            edges.setdefault(module, set()).add(target)
    circles = _circles(edges)
    new = [c for c in circles if c not in KNOWN_CIRCLES]
    gone = [c for c in KNOWN_CIRCLES if c not in circles]
    assert not new, f"modules that import each other (at any level): {new}"
    assert not gone, f"circles broken: remove them from KNOWN_CIRCLES: {gone}"


def test_the_parser_sees_every_kind_of_import():
    source = ("import os\n"
              "def f():\n    from mcp_ref.jsonrpc import messages\n"
              "TYPE_CHECKING = False\n"
              "if TYPE_CHECKING:\n    from mcp_ref.server.server import Server\n")
    tree = ast.parse(source)
    found = sorted(t for node in _every_import(tree) for t in _targets(node, "mcp_ref.session", False))
    assert found == ["mcp_ref.jsonrpc.messages", "mcp_ref.server.server", "os"]
    assert [n.lineno for n in _import_time_imports(tree)] == [1]
    assert [n.lineno for n in _function_local_imports(tree)] == [3]


def test_the_checker_sees_violations(tmp_path):
    """The parser finds imports at module level, in class bodies and try blocks, and
    skips functions and TYPE_CHECKING blocks."""
    source = (
        "import os\n"
        "from typing import TYPE_CHECKING\n"
        "try:\n    import json\nexcept ImportError:\n    json = None\n"
        "class A:\n    from . import errors\n"
        "def f():\n    import requests\n"
        "if TYPE_CHECKING:\n    from .server import Server\n"
    )
    nodes = _import_time_imports(ast.parse(source))
    names = [t for node in nodes for t in _targets(node, "mcp_ref.session", False)]
    assert names == ["os", "typing", "json", "mcp_ref.errors"]
    assert _targets(ast.parse("from ..jsonrpc.messages import encode").body[0], "mcp_ref.transports.stdio", False) == \
        ["mcp_ref.jsonrpc.messages"]
    assert _targets(ast.parse("from . import stdio").body[0], "mcp_ref.transports", True) == \
        ["mcp_ref.transports.stdio"]
    assert _targets(ast.parse("from mcp_ref import Server").body[0], "mcp_ref.client", False) == \
        ["mcp_ref.Server"]
    assert _allowed("mcp_ref.transports.http.client.streamable") >= {"protocol.lifecycle"}
    assert "protocol.lifecycle" not in _allowed("mcp_ref.transports.stdio")
    assert _layer("mcp_ref.session.pool") == "session.pool" and _layer("mcp_ref.server.tasks.legacy") == "server"


