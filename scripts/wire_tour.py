"""Generate spec_notes/wire-tour.md: every method and notification of every revision, and
who sent it on the wire when the scenarios ran.

    python scripts/wire_tour.py            # rewrite spec_notes/wire-tour.md
    python scripts/wire_tour.py --check    # exit 1 when the committed file is stale

Rules:

1. The methods come from each revision's ``schema.json`` (``MCP_SPEC_DIR``, default
   ``../shared/spec``): the ``ClientRequest``, ``ServerRequest``, ``ClientNotification``
   and ``ServerNotification`` unions (a union of one may be the message itself, as
   2026-07-28's ``ClientNotification``), and 2026-07-28's ``InputRequest`` (a request
   the server puts in a result's ``inputRequests``, basic/patterns/mrtr). The revisions
   are ``mcp_ref.protocol.lifecycle.SUPPORTED_REVISIONS``.
2. Who sent what is what crossed the wire: every scenario of
   ``python -m mcp_ref demo --scenario`` and the main demo (over stdio, a subprocess)
   run in this process in each era of ``ERAS``, recorded by the demo's own
   ``Transcript`` (its ``entries``, cli/sequence.py rule 1); in the host scenario the
   host is the client and each named server a server. A message counts
   for the era it travelled in: the revision in its ``_meta``, or the one
   ``initialize`` agreed, else the one the run asked for.
3. The handler is the dispatch-table entry (or the comparison) where the method's
   literal stands, named by qualified name and file, not by line, so that moving
   code does not stale the page; the sender likewise. The test is the first test
   naming the literal, preferring the area's test file.
4. Nothing is typed by hand but ``ERRORS``, ``NOTIFICATION_CAPABILITY``, the
   transports of the scenarios (``TRANSPORT``) and the reasons a message is not in
   an era (``_absent``), so a new revision, scenario, method or handler shows up on
   the next run, and tests/test_wire_tour.py fails while the committed file is stale.
"""
from __future__ import annotations

import ast
import io
import json
import os
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUTPUT = ROOT / "spec_notes" / "wire-tour.md"
COMMAND = "python scripts/wire_tour.py"
sys.path.insert(0, str(ROOT))

ERAS = ("2026-07-28", "2025-11-25")       # what the scenarios are written for (cli/scenarios rule 5)
MODERN_META = "io.modelcontextprotocol/protocolVersion"
# Scenarios that do not talk over a memory pair (which follows stdio's rules: no HTTP, a cancel is a notification).
TRANSPORT = {"demo": "stdio", "http": "HTTP", "sse": "HTTP+SSE", "auth": "HTTP", "host": "HTTP"}
# What a method can be answered with besides its result (the "errors" column).
ERRORS = {
    "initialize": "-32602 protocolVersion or capabilities malformed; -32600 a second initialize; a version "
                  "we do not speak gets our latest (the client may disconnect)",
    "tools/call": "-32602 unknown tool or bad arguments; a failing tool is a result with isError; "
                  "-32042 URL elicitation required (2025-11-25)",
    "resources/read": "-32002 resource not found; -32602",
    "resources/subscribe": "-32002 resource not found; -32602 uri not a string",
    "resources/unsubscribe": "-32602 uri not a string (an URI not subscribed is fine)",
    "prompts/get": "-32602 unknown prompt or missing argument",
    "completion/complete": "-32602 unknown prompt, template or argument",
    "logging/setLevel": "-32602 unknown level",
    "tasks/get": "-32602 unknown or expired task",
    "tasks/result": "-32602 unknown task; the task's own error",
    "tasks/cancel": "-32602 unknown or already terminal task",
    "sampling/createMessage": "-1 the user (or on_approve) refused",
    "elicitation/create": "-1 refused by on_approve; -32602 a schema outside the subset or an undeclared mode (elicitation.py rules 2, 3)",
}
LIST_ERROR = "-32602 invalid cursor"
NOTIFICATION_CAPABILITY = {
    "notifications/tools/list_changed": ("tools.listChanged", "server"),
    "notifications/resources/list_changed": ("resources.listChanged", "server"),
    "notifications/prompts/list_changed": ("prompts.listChanged", "server"),
    "notifications/resources/updated": ("resources.subscribe", "server"),
    "notifications/message": ("logging", "server"),
    "notifications/roots/list_changed": ("roots.listChanged", "client"),
    "notifications/elicitation/complete": ("elicitation.url", "client"),
    "notifications/tasks/status": ("tasks", "receiver of the task request"),
}
SERVER_SIDE = ["mcp_ref/server", "mcp_ref/session", "mcp_ref/client/sampling.py",
               "mcp_ref/client/elicitation.py", "mcp_ref/client/roots.py"]
CLIENT_SIDE = ["mcp_ref/client", "mcp_ref/session"]
HANDLER_PATTERNS = (r'^\s*"{m}":\s', r'\.method == "{m}"', r'\.on\("{m}"', r'\("{m}", on_', r'setdefault\("{m}"')
SENDER_PATTERNS = (r'request\("{m}"', r'_page\("{m}"', r'notify\("{m}"', r'send\("{m}"', r'_list_changed\("{m}"',
                   r'CHANGED, ITEM = .*"{m}"', r'^\s*"{m}": "\w+"')
TEST_HINTS = {"completion": "completion", "logging": "logging", "message": "logging", "initialize": "lifecycle",
              "initialized": "lifecycle", "ping": "session", "cancelled": "cancel", "progress": "progress",
              "tasks": "task", "elicitation": "elicitation"}
INPUT = "server → client, in a result's inputRequests"


def spec_dir() -> Path:
    return Path(os.environ.get("MCP_SPEC_DIR") or ROOT.parent / "shared" / "spec")


# ---------------------------------------------------------------------- the schemas (rule 1)
def _definitions(schema: dict) -> dict:
    return schema.get("definitions") or schema.get("$defs") or {}


def _union(defs: dict, name: str) -> list:
    union = defs.get(name) or {}
    if "$ref" in union:
        return [union["$ref"].rsplit("/", 1)[-1]]
    if union.get("properties", {}).get("method"):
        return [name]                                  # a union of one, written out in place
    return [item["$ref"].rsplit("/", 1)[-1] for item in union.get("anyOf", union.get("oneOf", [])) if "$ref" in item]


def _resolve(defs: dict, node: dict) -> dict:
    while isinstance(node, dict) and "$ref" in node:
        node = defs.get(node["$ref"].rsplit("/", 1)[-1], {})
    return node or {}


def _fields(defs: dict, node: dict) -> tuple:
    """``(names, required)`` of an object schema (allOf merged, anyOf alternatives joined), ``_meta`` left out."""
    node = _resolve(defs, node)
    names, required = [], set(node.get("required", []))
    for part in node.get("allOf", []):
        more, more_required = _fields(defs, part)
        names += [n for n in more if n not in names]
        required |= more_required
    alternatives = [_fields(defs, part) for part in node.get("anyOf", node.get("oneOf", []))]
    for more, _ in alternatives:
        names += [n for n in more if n not in names]
    if alternatives:
        required |= set.intersection(*(more_required for _, more_required in alternatives))
    names += [n for n in node.get("properties", {}) if n not in names and n != "_meta"]
    return names, required


def messages_of(revision: str) -> list:
    """``[(method, kind, direction, params, result)]`` of one revision's schema."""
    with open(spec_dir() / revision / "schema.json", encoding="utf-8") as f:
        defs = _definitions(json.load(f))
    rows = []
    for union, kind, direction in (("ClientRequest", "request", "client → server"),
                                   ("ServerRequest", "request", "server → client"),
                                   ("InputRequest", "request", INPUT),
                                   ("ClientNotification", "notification", "client → server"),
                                   ("ServerNotification", "notification", "server → client")):
        for name in _union(defs, union):
            node = defs.get(name, {})
            method = node.get("properties", {}).get("method", {}).get("const")
            if method is None:
                continue
            params = _fields(defs, node.get("properties", {}).get("params", {}))
            result = None
            if kind == "request":
                result_name = name[:-len("Request")] + "Result" if name.endswith("Request") else None
                result = (result_name, _fields(defs, defs[result_name])) if result_name in defs else ("{}", ([], set()))
            rows.append((method, kind, direction, params, result))
    return rows


# ---------------------------------------------------------------------- the wire (rule 2)
def _runs(era: str):
    """``(scenario, sender, data)`` of every message of every scenario and the demo, run in ``era``."""
    from mcp_ref.__main__ import Transcript, demo
    from mcp_ref.cli import scenarios
    version = None if era == ERAS[0] else era
    for name in list(scenarios.SCENARIOS) + ["demo"]:
        recorder = Transcript(full=True, out=io.StringIO(), width=10_000)        # it keeps what it printed
        if name == "demo":
            status = demo(protocol_version=version, transcript=recorder)
        else:
            status = scenarios.run(name, recorder, version)
        if status != 0:
            raise RuntimeError(f"scenario {name} ({era}) ended with status {status}")
        for entry in recorder.entries:
            if entry[0] == "message":        # the host scenario's lines name the host and each server
                yield name, "client" if entry[1] in ("client", "host") else "server", entry[3]


def observed() -> dict:
    """``{(method, direction): {era: [scenario, ...]}}`` of what crossed the wire."""
    seen: dict = {}
    for asked in ERAS:
        current = asked
        for scenario, sender, data in _runs(asked):
            for message in data if isinstance(data, list) else [data]:
                if not isinstance(message, dict):
                    continue
                params, result = message.get("params") or {}, message.get("result") or {}
                era = (params.get("_meta") or {}).get(MODERN_META) if isinstance(params, dict) else None
                if message.get("method") == "initialize":
                    era = params.get("protocolVersion")
                if isinstance(result, dict) and "protocolVersion" in result and "serverInfo" in result:
                    current = result["protocolVersion"]
                current = era or current
                found = []
                if isinstance(message.get("method"), str):
                    found.append((message["method"], f"{sender} → {'server' if sender == 'client' else 'client'}"))
                if isinstance(result, dict) and isinstance(result.get("inputRequests"), dict):
                    found += [(item.get("method"), INPUT) for item in result["inputRequests"].values()
                              if isinstance(item, dict)]
                for key in found:
                    names = seen.setdefault(key, {}).setdefault(current, [])
                    if scenario not in names:
                        names.append(scenario)
    return seen


# ---------------------------------------------------------------------- the code (rule 3)
def _files(places: list) -> list:
    found = []
    for place in places:
        path = ROOT / place
        found += sorted(path.rglob("*.py")) if path.is_dir() else [path]
    return list(dict.fromkeys(found))


def _name_at(path: Path, number: int) -> str:
    """What holds line ``number``: the table assigned there (``Client._request_handlers``,
    ``context.INPUT_KINDS``) or the innermost function (``Session._on_message``), by name."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    best, module = None, path.stem

    def visit(node, owner):
        nonlocal best
        for child in ast.iter_child_nodes(node):
            if not (getattr(child, "lineno", 0) <= number <= (getattr(child, "end_lineno", 0) or 0)):
                if not isinstance(child, (ast.ClassDef, ast.FunctionDef)):
                    visit(child, owner)
                continue
            if isinstance(child, ast.ClassDef):
                visit(child, child.name)
            elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                best = f"{owner}.{child.name}" if owner else f"{module}.{child.name}"
                visit(child, owner)
            elif isinstance(child, (ast.Assign, ast.AnnAssign)) and isinstance(child.value, ast.Dict):
                target = child.targets[0] if isinstance(child, ast.Assign) else child.target
                if isinstance(target, ast.Attribute) and owner:
                    best = f"{owner}.{target.attr}"
                elif isinstance(target, ast.Name):
                    best = f"{owner or module}.{target.id}"
                return
            else:
                visit(child, owner)
    visit(tree, None)
    return f"`{best}` (`{path.relative_to(ROOT).as_posix()}`)" if best else f"`{path.relative_to(ROOT).as_posix()}`"


def _locate(method: str, places: list, patterns: tuple, most: int = 1) -> str | None:
    """Where the first pattern that matches at all finds ``method``'s literal (``most`` places), by name."""
    for pattern in patterns:
        regex = re.compile(pattern.format(m=re.escape(method)))
        found = [_name_at(path, number) for path in _files(places)
                 for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
                 if regex.search(line)]
        if found:
            return ", ".join(list(dict.fromkeys(found))[:most])
    return None


def _capabilities() -> dict:
    """method -> capability path, from the dispatch tables of Server and Client."""
    from mcp_ref import Client, Server
    from mcp_ref.transports import memory_pair
    table = {method: cap for method, (_, cap) in Server("wire-tour")._request_handlers.items()}
    client_end, _ = memory_pair()
    client = Client(client_end)
    try:
        client_table = {method: cap for method, (_, cap) in client._request_handlers.items()}
    finally:
        client.close()
    return {"server": table, "client": client_table}


def _test_for(method: str, tests: list) -> str:
    """The first test naming the method's literal, preferring the area's test file and
    a test whose name holds the method's last word (``tasks/get`` -> ``get``)."""
    parts = method.split("/")
    head = parts[1] if parts[0] == "notifications" else parts[0]
    hint = TEST_HINTS.get(head, head)
    word = re.sub(r"(?<!^)(?=[A-Z])", "_", parts[-1]).lower()
    literal = f'"{method}"'
    best, best_score = None, -1
    for path, functions in tests:
        for name, source in functions:
            if literal not in source:
                continue
            score = 2 * (hint in path.name) + (word in name)
            if score > best_score:
                best, best_score = f"tests/{path.name}::{name}", score
    return best or "none yet"


def _test_functions() -> list:
    tests = []
    for path in sorted((ROOT / "tests").glob("test_*.py")):
        text = path.read_text(encoding="utf-8")
        tree = ast.parse(text)
        functions = [(node.name, ast.get_source_segment(text, node) or "") for node in tree.body
                     if isinstance(node, ast.FunctionDef) and node.name.startswith("test_")]
        tests.append((path, functions))
    return tests


# ---------------------------------------------------------------------- the page
def _outline(names: list, required: set, since: dict) -> str:
    parts = []
    for name in names:
        text = name if name in required else f"{name}?"
        if name in since:
            text += f" ({since[name]}+)"
        parts.append(text)
    return ", ".join(parts) or "—"


def _span(revs: list, revisions: list) -> str:
    if len(revs) == 1:
        return revs[0]
    return f"{revs[0]}+" if revs == revisions[revisions.index(revs[0]):] else ", ".join(revs)


def _absent(era: str, revs: list, revisions: list, sender_code: str | None) -> str:
    """Why no scenario sent a message in ``era`` (rule 4)."""
    if era not in revs:
        later = [r for r in revs if r > era]
        if not later:
            return f"dropped in {revisions[revisions.index(revs[-1]) + 1]}"
        return f"not yet: new in {later[0]}"
    if sender_code is None:
        return "not sent: no code of ours sends it this way"
    return "not shown by a scenario (sent by the code named in the first table)"


def _wire_cell(scenarios: list, in_schema: bool) -> str:
    """The runs that sent it; one outside the era's schema is a 2026-07-28 extension's (the tasks one)."""
    text = ", ".join(f"{name} ({TRANSPORT[name]})" if name in TRANSPORT else name for name in scenarios)
    return text + ("" if in_schema or not text else " — outside this revision's schema: an extension's "
                   "message ([ext-tasks-2026-07-28.md](ext-tasks-2026-07-28.md))")


def build() -> str:
    from mcp_ref.protocol.lifecycle import SUPPORTED_REVISIONS
    revisions = sorted(SUPPORTED_REVISIONS)
    rows: dict = {}
    for revision in revisions:
        for method, kind, direction, params, result in messages_of(revision):
            row = rows.setdefault((method, direction), {"kind": kind, "revisions": [], "params": {}, "result": {}})
            row["revisions"].append(revision)
            row["params"][revision] = params
            row["result"][revision] = result
    capabilities, tests, seen = _capabilities(), _test_functions(), observed()
    lines = [
        "# Wire tour: every method and notification",
        "",
        "Revisions: " + ", ".join(revisions) + " (the schemas); on the wire: " + " and ".join(ERAS),
        "",
        f"Generated by `{COMMAND}` from the schemas of {', '.join(revisions)} (the revisions in",
        "`mcp_ref.protocol.lifecycle.SUPPORTED_REVISIONS`), the dispatch tables of `Server` and `Client`, the",
        "code and tests that name each method, and traced runs of every scenario",
        "(`python -m mcp_ref demo --scenario NAME`) and of the main demo, each in " + " and in ".join(ERAS) + ".",
        f"Do not edit: run `{COMMAND}`; `tests/test_wire_tour.py` fails while this file is stale.",
        "",
        "## What each message is",
        "",
        "Columns: *revisions* that define the message; *capability* it needs and who declares it;",
        "*params* and *result* in outline (`?` optional, `(X+)` since revision X); *errors* besides the",
        "result (JSON-RPC codes); the code that *sends* it and the entry that *handles* it (by name; —",
        "when this side never does); one *test* that sends or checks it. In 2026-07-28 a server does not",
        "send requests: it answers with an `input_required` result whose `inputRequests` hold them, and the",
        "client retries with `inputResponses` (basic/patterns/mrtr); those rows say so in *direction*.",
        "",
        "| method | kind | direction | revisions | capability (declared by) | params | result | errors | sent by | handled by | test |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    order = {"client → server": 0, "server → client": 1, INPUT: 2}
    ordered = sorted(rows.items(), key=lambda item: (item[1]["kind"], item[0][0], order[item[0][1]]))
    wire = []
    for (method, direction), row in ordered:
        revs = row["revisions"]
        names, required = row["params"][revs[-1]]
        since = {name: next(r for r in revs if name in row["params"][r][0]) for name in names}
        since = {name: first for name, first in since.items() if first != revs[0]}
        to_server = direction.startswith("client")
        if row["kind"] == "request":
            side = "server" if to_server else "client"
            capability = capabilities[side].get(method) if method != "ping" else None
            if method in capabilities[side] or method == "ping":
                cap = f"`{capability}` ({side})" if capability else "none"
            else:
                cap = "— (not in our dispatch table)"
            result_name, (result_names, result_required) = row["result"][revs[-1]]
            if result_name == "{}":
                result = "{}"
            elif result_names:
                result = f"{result_name}: {_outline(result_names, result_required, {})}"
            else:
                result = f"{result_name}: the result of the task's request"
            errors = ERRORS.get(method) or (LIST_ERROR if method.endswith("/list") and "cursor" in names else "—")
            if capability and method in capabilities[side]:
                errors += "; -32601 when not declared"
        else:
            capability, declarer = NOTIFICATION_CAPABILITY.get(method, (None, None))
            cap = f"`{capability}` ({declarer})" if capability else "none"
            result, errors = "—", "— (never answered)"
        senders, handlers = (CLIENT_SIDE, SERVER_SIDE) if to_server else (SERVER_SIDE, CLIENT_SIDE)
        sender_code = _locate(method, senders, SENDER_PATTERNS, most=2)
        handled = _locate(method, handlers, HANDLER_PATTERNS) or "—"
        test = _test_for(method, tests) if (sender_code, handled) != (None, "—") else "— (neither side of ours does it)"
        lines.append(f"| `{method}` | {row['kind']} | {direction} | {_span(revs, revisions)} | {cap} "
                     f"| {_outline(names, required, since)} | {result} | {errors} | {sender_code or '—'} "
                     f"| {handled} | {test} |")
        cells = [_wire_cell(seen.get((method, direction), {}).get(era, []), era in revs)
                 or _absent(era, revs, revisions, sender_code) for era in ERAS]
        wire.append(f"| `{method}` | {direction} | " + " | ".join(cells) + " |")
    unexpected = sorted(f"{method} ({direction})" for method, direction in seen if (method, direction) not in rows)
    lines += [
        "",
        "## Who sent it on the wire",
        "",
        "Each cell names the runs in which the message crossed the wire in that era: a scenario",
        "(`python -m mcp_ref demo --scenario NAME`, which talks over a memory pair with stdio's rules",
        "unless a transport is named) or `demo` (the main demo, a server spawned over stdio). A message",
        "counts for the era it travelled in, so `discover`'s fallback to a legacy server shows under",
        f"{ERAS[1]}. The other revisions ({', '.join(r for r in revisions if r not in ERAS)}) speak the",
        f"legacy wire of {ERAS[1]} less what the first table's *revisions* column leaves out; the scenarios",
        "are written for the two eras.",
        "",
        "| method | direction | " + " | ".join(ERAS) + " |",
        "| --- | --- | " + " | ".join("---" for _ in ERAS) + " |",
        *wire,
        "",
    ]
    if unexpected:
        lines += ["Seen on the wire but in no schema: " + ", ".join(unexpected) + ".", ""]
    return "\n".join(lines)


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    text = build()
    if "--check" in argv:
        current = OUTPUT.read_text(encoding="utf-8") if OUTPUT.exists() else ""
        if current != text:
            print(f"{OUTPUT.relative_to(ROOT)} is stale: run `{COMMAND}`", file=sys.stderr)
            return 1
        return 0
    OUTPUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUTPUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
