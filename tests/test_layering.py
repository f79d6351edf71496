"""The dependency direction of the package, checked by parsing every module.

Each layer may import only the layers of its row; a new module needs a row
here. Imports that run when a module is imported (module level, class bodies,
``if``/``try`` blocks at module level) must follow the table; so must imports
inside functions (loaded on first use, for start-up time), except the few
named in ``LOCAL_EXCEPTIONS`` with their reason. Imports under
``if TYPE_CHECKING:`` are for annotations only and are not checked.
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
    "messages": {"errors", "peek"},
    # The head of a frame that did not decode: is it a response, and with which id?
    "peek": set(),
    # Type hints read alike on Python 3.9 to 3.13 (PEP 604 unions, "X | Y" strings).
    "typehints": set(),
    "types": {"errors", "messages", "types", "typehints"},
    "lifecycle": {"errors", "messages", "types"},
    "docstrings": set(),
    "validation": {"errors"},
    "signature": {"errors", "docstrings", "typehints", "signature_fast", "jsonable"},
    # The fast path of schema/signature.py (plain functions, no inspect or typing), and values as JSON.
    "signature_fast": {"docstrings", "jsonable"},
    "jsonable": set(),
    # Arguments in (bind_arguments), through schema/signature.py's full path when it must.
    "binding": {"errors", "signature", "signature_fast"},
    "uritemplate": {"errors"},
    "transports": {"errors", "messages", "peek", "transports"},
    "auth": {"errors", "messages"},
    # What a handler knows of the request it serves (RequestContext).
    "calls": {"errors", "messages", "lifecycle"},
    "session": {"errors", "messages", "lifecycle", "calls", "workers", "pool", "outbound", "inbound", "notices",
                "batches", "closing"},
    # The rooms of Session, each mixed into it. What goes out: requests, writing, Pending, CancelToken.
    "outbound": {"errors", "messages"},
    # What comes in: the reader loop, routing, serving.
    "inbound": {"errors", "messages", "lifecycle", "pool"},
    # Cancellations, progress, notifications, and the helper threads that run callbacks in order.
    "notices": {"errors", "messages"},
    # JSON-RPC batches (2025-03-26).
    "batches": {"errors", "messages", "lifecycle"},
    # How a session ends (rule 5).
    "closing": {"errors", "notices"},
    # The bounded pool of worker threads that serve requests: threads only, no MCP.
    "pool": set(),
    # A bounded thread pool shared by sessions that have no reader of their own (HTTP).
    "workers": set(),
    # The modern era (2026-07-28): per-request metadata, discovery and result rules, pure.
    "modern": {"errors", "messages", "lifecycle"},
    # The server's room: Server, Context, and the features (tools, resources, prompts, completion,
    # logging, pagination, tasks), and its serving of a modern request. Its side of sampling,
    # elicitation and roots lives in the client's room (one module per request, both sides):
    # see LOCAL_EXCEPTIONS.
    "server": {"session", "calls", "lifecycle", "modern", "types", "signature", "signature_fast", "binding",
               "jsonable", "uritemplate", "validation", "docstrings",
               "typehints", "errors", "messages", "transports", "tokens"},
    # The client's room: Client, its requests, its modern era, and what answers the server's requests
    # (sampling, elicitation, roots, approval, tasks, restart). It never imports the server.
    "client": {"session", "calls", "outbound", "lifecycle", "modern", "types", "errors", "messages", "transports", "validation"},
    "host": ANYTHING,
    # The command line (serve, the inspector, the shell, demo --host): on top of everything.
    "cli": ANYTHING,
    "__main__": ANYTHING,
    "scenarios": ANYTHING,          # `demo --scenario NAME`: a client and a server together, like the demo
    "examples": ANYTHING,
    "__init__": ANYTHING,           # the package itself re-exports the public API
}
# HTTP transports also need the negotiated-revision rules, the OAuth helpers, the shared worker pool
# and session ids (tokens).
HTTP_TRANSPORT_EXTRA = {"lifecycle", "auth", "workers", "tokens"}
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
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


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
    if allowed is not ANYTHING and layer == "transports" and any(
            word in module.rsplit(".", 1)[-1] for word in ("http", "sse")):
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
    assert _targets(ast.parse("from ..messages import encode").body[0], "mcp_ref.transports.stdio", False) == \
        ["mcp_ref.jsonrpc.messages"]
    assert _targets(ast.parse("from . import stdio").body[0], "mcp_ref.transports", True) == \
        ["mcp_ref.transports.stdio"]
    assert _targets(ast.parse("from mcp_ref import Server").body[0], "mcp_ref.client", False) == \
        ["mcp_ref.Server"]
    assert _allowed("mcp_ref.transports.http.client.streamable") >= {"lifecycle"}
    assert "lifecycle" not in _allowed("mcp_ref.transports.stdio")


def test_an_http_server_does_not_load_dataclasses():
    """Cold start (bench/bench_http.py): ``dataclasses`` loads ``inspect``, ``ast``,
    ``dis`` and ``tokenize``; nothing an HTTP server imports to serve needs it."""
    import subprocess
    import sys
    code = ("import sys; from mcp_ref import Server; from mcp_ref.transports.http.server.app import serve_http; "
            "print('dataclasses' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "False", out.stderr
