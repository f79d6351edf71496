#!/usr/bin/env python3
"""Mutation testing of the requirement matrix: do the tests that cite a MUST notice
when the code that meets it breaks?

For every MUST row of spec_notes/traceability.md whose status is ``implemented``,
this script takes the functions the row names (``module:Qual.name`` in
spec_notes/traceability_map.json; class and module references are too broad and are
skipped) -- only their lines holding one of the row's ``lines`` texts when the map
gives some for that function --, makes small mutants of them with the standard library's ``ast`` and runs
only the tests that cite the row (``@pytest.mark.req``) against each mutant:

* ``cmp``: flip a comparison (``==``/``!=``, ``<``/``>=``, ``in``/``not in``, ...);
* ``bool``: ``and`` <-> ``or``; ``not x`` -> ``x``;
* ``const``: a number n -> n - 1 (n >= 2) or n + 1, ``True`` <-> ``False``, a string
  compared with or used as a key -> another string;
* ``drop``: a statement -> ``pass`` (logging calls and docstrings are left alone).

A mutant is *killed* when a cited test fails, errors or times out, and *survives*
when they all pass. A survivor the map lists under the row's ``equivalent``
(``"Qual.name: <mutation> @ <text of the line>": "why"``) cannot change what the
requirement is about; it is counted apart. A row *kills its mutants* when none of
its sampled mutants survives except those. Mutants run in a private copy of the repository (``--jobs`` copies), so the
checkout is never touched; a baseline run of the cited tests on the unmutated copy
comes first.

This is a bench-style tool: minutes to hours, not run in CI. Usage::

    python scripts/mutate.py                      # every in-scope MUST row, 4 mutants each
    python scripts/mutate.py --rows LIFE,TRN-4    # some rows (prefix or id)
    python scripts/mutate.py --per-row 0          # every mutant of every row
    python scripts/mutate.py --list --rows CANC   # show the mutants, run nothing
    python scripts/mutate.py --json out.json      # also write the results
    python scripts/mutate.py --revision 2026-07-28 --rows XTASK26   # rows of the current revision's matrix

Needs ``MCP_SPEC_DIR`` like the tests (default ``../shared/spec``). Standard library
only (plus pytest, run as a subprocess).
"""
from __future__ import annotations

import argparse
import ast
import copy
import json
import os
import queue
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import traceability  # noqa: E402

REPO = traceability.REPO
FLIP = {ast.Eq: ast.NotEq, ast.NotEq: ast.Eq, ast.Lt: ast.GtE, ast.GtE: ast.Lt, ast.Gt: ast.LtE,
        ast.LtE: ast.Gt, ast.In: ast.NotIn, ast.NotIn: ast.In, ast.Is: ast.IsNot, ast.IsNot: ast.Is}
LOG_NAMES = {"log", "logger", "logging", "warnings"}
DROPPABLE = (ast.Expr, ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Return, ast.Raise, ast.If,
             ast.Delete, ast.Continue, ast.Break)


# ---------------------------------------------------------------------- finding code
def module_path(module: str) -> Path:
    path = REPO / (module.replace(".", "/") + ".py")
    return path if path.is_file() else REPO / module.replace(".", "/") / "__init__.py"


def find_function(tree: ast.AST, qualname: str):
    body, node = tree.body, None
    for part in qualname.split("."):
        node = next((n for n in body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                     and n.name == part), None)
        if node is None:
            return None
        body = node.body
    return node if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) else None


def _is_log_call(node) -> bool:
    call = node.value if isinstance(node, ast.Expr) else node
    if not isinstance(call, ast.Call):
        return False
    func = call.func
    while isinstance(func, ast.Attribute):
        if isinstance(func.value, ast.Name) and func.value.id in LOG_NAMES:
            return True
        func = func.value
    return False


def _docstring_nodes(function) -> set:
    out = set()
    for node in ast.walk(function):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) \
                    and isinstance(first.value.value, str):
                out.add(id(first))
                out.add(id(first.value))
    return out


def mutation_points(function) -> list:
    """``[(walk index, kind, line, description)]`` for one function, in walk order."""
    skip = _docstring_nodes(function)
    in_log = set()
    for node in ast.walk(function):
        if _is_log_call(node):
            in_log.update(id(n) for n in ast.walk(node))
    keyish = set()                   # string constants compared with, or used as keys
    for node in ast.walk(function):
        if isinstance(node, ast.Compare):
            keyish.update(id(n) for n in [node.left, *node.comparators] if isinstance(n, ast.Constant))
        elif isinstance(node, ast.Dict):
            keyish.update(id(k) for k in node.keys if isinstance(k, ast.Constant))
        elif isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
            keyish.add(id(node.slice))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr in ("get", "pop", "setdefault") and node.args \
                and isinstance(node.args[0], ast.Constant):
            keyish.add(id(node.args[0]))
    points = []
    for index, node in enumerate(ast.walk(function)):
        if id(node) in skip or id(node) in in_log or node is function:
            continue
        line = getattr(node, "lineno", None)
        if isinstance(node, ast.Compare) and type(node.ops[0]) in FLIP:
            points.append((index, "cmp", line, f"flip {type(node.ops[0]).__name__}"))
        elif isinstance(node, ast.BoolOp):
            points.append((index, "bool", line, "and<->or"))
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            points.append((index, "bool", line, "drop not"))
        elif isinstance(node, ast.Constant):
            value = node.value
            if isinstance(value, bool):
                points.append((index, "const", line, f"{value} -> {not value}"))
            elif isinstance(value, (int, float)):
                points.append((index, "const", line, f"{value!r} -> {_shifted(value)!r}"))
            elif isinstance(value, str) and id(node) in keyish:
                points.append((index, "const", line, f"{value[:30]!r} -> other string"))
        if isinstance(node, DROPPABLE) and not _is_log_call(node):
            points.append((index, "drop", line, f"drop {type(node).__name__}"))
    return points


def _shifted(value):
    """A number's mutant: one less for a count or size of 2 or more (where a bound is
    usually a minimum), one more otherwise."""
    return value - 1 if isinstance(value, int) and value >= 2 else value + 1


class _Apply(ast.NodeTransformer):
    def __init__(self, target, kind):
        self.target, self.kind = target, kind

    def generic_visit(self, node):
        node = super().generic_visit(node)
        if node is not self.target:
            return node
        if self.kind == "drop":
            return ast.copy_location(ast.Pass(), node)
        if isinstance(node, ast.Compare):
            node.ops = [FLIP[type(node.ops[0])]()] + node.ops[1:]
        elif isinstance(node, ast.BoolOp):
            node.op = ast.Or() if isinstance(node.op, ast.And) else ast.And()
        elif isinstance(node, ast.UnaryOp):
            return node.operand
        elif isinstance(node, ast.Constant):
            value = node.value
            if isinstance(value, bool):
                node.value = not value
            elif isinstance(value, (int, float)):
                node.value = _shifted(value)
            elif isinstance(value, str):
                node.value = value + "\x00mutant"
        return node


def mutated_source(source: str, qualname: str, index: int, kind: str) -> str:
    tree = ast.parse(source)
    function = find_function(tree, qualname)
    target = list(ast.walk(function))[index]
    _Apply(target, kind).visit(function)
    ast.fix_missing_locations(tree)
    return ast.unparse(tree)


# ---------------------------------------------------------------------- the plan
class Mutant:
    __slots__ = ("ref", "index", "kind", "line", "what", "file", "equivalent")

    def __init__(self, ref, index, kind, line, what, file):
        self.ref, self.index, self.kind, self.line, self.what, self.file = ref, index, kind, line, what, file
        self.equivalent = None               # why it cannot be killed, from the map (reviewed by hand)

    @property
    def key(self):
        return (self.ref, self.index, self.kind)

    def label(self) -> str:
        return f"{self.file}:{self.line} {self.ref.split(':')[1]} {self.what}"


def plan(rows_filter: list | None, per_row: int, seed: int) -> list:
    """``[(requirement, [tests], [Mutant])]`` for the in-scope MUST rows."""
    requirements = traceability.extract(traceability.spec_root())
    mapping = traceability.load_map()
    cited = traceability.collect_markers()
    cache: dict = {}
    out = []
    for req in requirements:
        entry = mapping.get(req.id, {})
        if req.level != "MUST" or traceability.status_of(req, entry) != "implemented":
            continue
        if rows_filter and not any(req.id == f or req.id.split("-")[0] == f for f in rows_filter):
            continue
        mutants = []
        for ref in entry.get("code", []):
            module, _, qualname = ref.partition(":")
            if not qualname:
                continue
            path = module_path(module)
            if ref not in cache:
                tree = ast.parse(path.read_text(encoding="utf-8"))
                function = find_function(tree, qualname)
                cache[ref] = [] if function is None else mutation_points(function)
            rel = path.relative_to(REPO).as_posix()
            anchors = entry.get("lines", {}).get(ref)
            keep = traceability.anchored_lines(ref, anchors) if anchors else None
            source = path.read_text(encoding="utf-8").split("\n")
            for i, kind, line, what in cache[ref]:
                if keep is not None and line not in keep:
                    continue
                mutant = Mutant(ref, i, kind, line, what, rel)
                for claim, why in entry.get("equivalent", {}).items():
                    name, _, rest = claim.partition(": ")
                    kind_text, _, text = rest.partition(" @ ")
                    if name == qualname and kind_text == what and text in source[line - 1]:
                        mutant.equivalent = why
                mutants.append(mutant)
        if per_row and len(mutants) > per_row:
            mutants = random.Random(f"{seed}:{req.id}").sample(mutants, per_row)
            mutants.sort(key=lambda m: (m.file, m.line or 0, m.index))
        tests = sorted(t for t in traceability.tests_of(req, cited) if not t.endswith(traceability.XFAIL))
        out.append((req, tests, mutants))
    return out


# ---------------------------------------------------------------------- running
def make_copy(root: Path) -> Path:
    dest = root / f"repo-{len(list(root.iterdir()))}"
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", ".git", ".venv*", "*.egg-info", "build", "dist")
    dest.mkdir()
    for name in ("mcp_ref", "tests", "scripts", "bench", "spec_notes"):
        if (REPO / name).exists():
            shutil.copytree(REPO / name, dest / name, ignore=ignore)
    for name in ("setup.cfg", "pyproject.toml", "README.md", "LICENSE"):
        if (REPO / name).exists():
            shutil.copy2(REPO / name, dest / name)
    return dest


def run_tests(copy_root: Path, tests: list, timeout: float) -> str:
    env = dict(os.environ)
    env["MCP_SPEC_DIR"] = str(traceability.spec_root())
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env.setdefault("MCP_SOAK_SESSIONS", "3")       # tests/test_faults.py soak: small for each mutant
    env.setdefault("MCP_SOAK_CALLS", "20")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(copy_root), env.get("PYTHONPATH")) if p)
    command = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "--no-header",
               "-o", "addopts=", *tests]
    process = subprocess.Popen(command, cwd=str(copy_root), env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        returncode = process.wait(timeout)
    except subprocess.TimeoutExpired:
        returncode = None
    try:                    # the whole group: servers a hung test spawned go too
        os.killpg(process.pid, signal.SIGKILL)
    except OSError:
        pass
    process.wait()
    if returncode is None:
        return "timeout"
    if returncode == 0:
        return "survived"
    if returncode == 5:
        return "no tests"
    return "killed"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", help="comma-separated ids or id prefixes (default: every in-scope MUST row)")
    parser.add_argument("--per-row", type=int, default=4, help="mutants sampled per row (0: all)")
    parser.add_argument("--seed", type=int, default=15)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per mutant run")
    parser.add_argument("--list", action="store_true", help="list the mutants and run nothing")
    parser.add_argument("--json", metavar="FILE", help="write the results as JSON")
    parser.add_argument("--revision", default="2025-11-25", choices=traceability.REVISIONS,
                        help="the matrix whose rows to mutate (default 2025-11-25)")
    parser.add_argument("--no-baseline", action="store_true", help="skip the run of the cited tests on unmutated code")
    args = parser.parse_args(argv)
    traceability.configure(args.revision)
    rows = plan(args.rows.split(",") if args.rows else None, args.per_row, args.seed)
    total = sum(len(m) for _, _, m in rows)
    print(f"{len(rows)} MUST rows, {total} mutants", flush=True)
    if args.list:
        for req, tests, mutants in rows:
            print(f"{req.id}: {len(tests)} tests")
            for m in mutants:
                print(f"    {m.label()}")
        return 0

    workdir = Path(tempfile.mkdtemp(prefix="mcp-ref-mutants-"))
    copies: queue.Queue = queue.Queue()
    for _ in range(max(1, args.jobs)):
        copies.put(make_copy(workdir))
    try:
        union = sorted({t for _, tests, _ in rows for t in tests})
        first = copies.get()
        baseline = "survived" if args.no_baseline else run_tests(first, union, args.timeout * 10)
        copies.put(first)
        if baseline != "survived":
            print(f"baseline run of the cited tests: {baseline}; fix that first", file=sys.stderr)
            return 2
        results: dict = {}               # (mutant key, tests) -> outcome
        lock = threading.Lock()
        jobs = []
        for req, tests, mutants in rows:
            for m in mutants:
                key = (m.key, tuple(tests))
                if key not in results:
                    results[key] = None
                    jobs.append((m, tests, key))
        started = time.monotonic()

        def work(job):
            m, tests, key = job
            root = copies.get()
            try:
                target = root / m.file
                original = target.read_text(encoding="utf-8")      # as copied when the plan was made
                try:
                    mutated = mutated_source(original, m.ref.split(":")[1], m.index, m.kind)
                except ValueError:          # ast.unparse cannot write some f-strings back (Python < 3.12)
                    mutated = None
                if mutated is None:
                    outcome = "not generated"
                else:
                    target.write_text(mutated, encoding="utf-8")
                    try:
                        outcome = run_tests(root, tests, args.timeout) if tests else "no tests"
                    finally:
                        target.write_text(original, encoding="utf-8")
            finally:
                copies.put(root)
            with lock:
                results[key] = outcome
                done = sum(1 for v in results.values() if v is not None)
                if outcome == "survived":
                    print(f"  survived: {m.label()}  [{', '.join(t.split('::')[-1] for t in tests)[:150]}]",
                          flush=True)
                if done % 25 == 0:
                    print(f"  {done}/{len(results)} mutants run ({time.monotonic() - started:.0f} s)", flush=True)

        with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            list(pool.map(work, jobs))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)

    report = []
    for req, tests, mutants in rows:
        outcomes = [(m, results[(m.key, tuple(tests))]) for m in mutants
                    if results[(m.key, tuple(tests))] != "not generated"]
        survived = [m.label() for m, o in outcomes if o in ("survived", "no tests") and not m.equivalent]
        equivalent = [m.label() for m, o in outcomes if o in ("survived", "no tests") and m.equivalent]
        report.append({"id": req.id, "tests": len(tests), "mutants": len(outcomes),
                       "killed": sum(1 for _, o in outcomes if o in ("killed", "timeout")),
                       "timeouts": sum(1 for _, o in outcomes if o == "timeout"), "survived": survived,
                       "equivalent": equivalent})
    mutant_runs = sum(1 for v in results.values() if v != "not generated")
    killed_runs = sum(1 for v in results.values() if v in ("killed", "timeout"))
    with_mutants = [r for r in report if r["mutants"]]
    clean = [r for r in with_mutants if not r["survived"]]
    print()
    print("| row | tests | mutants | killed | equivalent | survivors |")
    print("| --- | ---: | ---: | ---: | ---: | --- |")
    for r in report:
        print(f"| {r['id']} | {r['tests']} | {r['mutants']} | {r['killed']} | {len(r['equivalent'])} | "
              f"{'; '.join(r['survived'])} |")
    print()
    equivalents = sum(len(r["equivalent"]) for r in report)
    print(f"equivalent survivors (the map's 'equivalent', reviewed by hand): {equivalents}")
    print(f"mutant runs: {mutant_runs}, killed {killed_runs} "
          f"({100.0 * killed_runs / max(1, mutant_runs):.1f} %), survived {mutant_runs - killed_runs}")
    print(f"MUST rows with mutants: {len(with_mutants)}; rows that kill all their mutants: {len(clean)} "
          f"({100.0 * len(clean) / max(1, len(with_mutants)):.1f} %); rows without a function to mutate: "
          f"{len(report) - len(with_mutants)}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"rows": report, "mutant_runs": mutant_runs, "killed": killed_runs,
                       "seed": args.seed, "per_row": args.per_row}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
