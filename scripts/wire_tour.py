"""Generate spec_notes/wire-tour.md: every method and notification of every revision we speak.

    python scripts/wire_tour.py            # rewrite spec_notes/wire-tour.md
    python scripts/wire_tour.py --check    # exit 1 when the committed file is stale

Nothing in the table is typed by hand except the errors a method can get and the
capability a notification needs (the two tables below): the revisions come from
``mcp_ref.protocol.lifecycle.SUPPORTED_REVISIONS``; the methods, their direction, params and
result from each revision's ``schema.json`` (``MCP_SPEC_DIR``, default
``../shared/spec``); the capability a request needs from the dispatch tables of
``Server`` and ``Client``; the sender and the handler (file:line) by finding the
method's literal string in the code; the test by finding it in ``tests/``. So a new
revision, method or handler shows up on the next run, and tests/test_wire_tour.py
fails while the committed file is stale.
"""
from __future__ import annotations

import ast
import json
import os
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUTPUT = ROOT / "spec_notes" / "wire-tour.md"
COMMAND = "python scripts/wire_tour.py"
sys.path.insert(0, str(ROOT))

# What a method can be answered with besides its result (the "errors" column): facts
# of the spec and of our server, cited in the notes of each area.
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
# The capability a notification needs, and who declares it.
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
SERVER_SIDE = ["mcp_ref/server/server.py", "mcp_ref/server/context.py", "mcp_ref/server/registration.py", "mcp_ref/session/__init__.py", "mcp_ref/session/outbound.py", "mcp_ref/session/inbound.py", "mcp_ref/session/notices.py",
               "mcp_ref/session/calls.py", "mcp_ref/client/sampling.py",
               "mcp_ref/client/elicitation.py", "mcp_ref/client/roots.py", "mcp_ref/server"]
CLIENT_SIDE = ["mcp_ref/client/client.py", "mcp_ref/client/answers.py", "mcp_ref/client/connect.py", "mcp_ref/client/client_requests.py", "mcp_ref/client/tasks/legacy.py", "mcp_ref/session/__init__.py", "mcp_ref/session/outbound.py",
               "mcp_ref/session/inbound.py", "mcp_ref/session/notices.py", "mcp_ref/session/calls.py"]
HANDLER_PATTERNS = (r'^\s*"{m}":\s', r'\.method == "{m}"', r'\.on\("{m}"', r'\("{m}", on_', r'setdefault\("{m}"')
SENDER_PATTERNS = (r'request\("{m}"', r'notify\("{m}"', r'_list_changed\("{m}"', r'CHANGED, ITEM = .*"{m}"')
# Test files to prefer for a method, by the first part of its name.
TEST_HINTS = {"completion": "completion", "logging": "logging", "message": "logging", "initialize": "lifecycle",
              "initialized": "lifecycle", "ping": "session", "cancelled": "cancel", "progress": "progress",
              "tasks": "task", "elicitation": "elicitation"}


def spec_dir() -> Path:
    return Path(os.environ.get("MCP_SPEC_DIR") or ROOT.parent / "shared" / "spec")


# ---------------------------------------------------------------------- the schemas
def _definitions(schema: dict) -> dict:
    return schema.get("definitions") or schema.get("$defs") or {}


def _union(defs: dict, name: str) -> list:
    union = defs.get(name) or {}
    return [item["$ref"].rsplit("/", 1)[-1] for item in union.get("anyOf", union.get("oneOf", [])) if "$ref" in item]


def _resolve(defs: dict, node: dict) -> dict:
    while isinstance(node, dict) and "$ref" in node:
        node = defs.get(node["$ref"].rsplit("/", 1)[-1], {})
    return node or {}


def _fields(defs: dict, node: dict) -> tuple:
    """``(names, required)`` of an object schema (allOf merged), ``_meta`` left out."""
    node = _resolve(defs, node)
    names, required = [], set(node.get("required", []))
    for part in node.get("allOf", []):
        more, more_required = _fields(defs, part)
        names += [n for n in more if n not in names]
        required |= more_required
    alternatives = [_fields(defs, part) for part in node.get("anyOf", node.get("oneOf", []))]
    for more, _ in alternatives:           # one of several shapes (elicitation's form and URL modes)
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


# ---------------------------------------------------------------------- the code
def _files(places: list) -> list:
    found = []
    for place in places:
        path = ROOT / place
        found += sorted(path.rglob("*.py")) if path.is_dir() else [path]
    return found


def _locate(method: str, places: list, patterns: tuple, most: int = 1) -> str | None:
    """Where the first pattern that matches at all finds ``method``'s literal (``most`` places)."""
    for pattern in patterns:
        regex = re.compile(pattern.format(m=re.escape(method)))
        found = [f"{path.relative_to(ROOT).as_posix()}:{number}" for path in _files(places)
                 for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
                 if regex.search(line)]
        if found:
            return ", ".join(dict.fromkeys(found[:most]))
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


# ---------------------------------------------------------------------- the table
def _outline(names: list, required: set, since: dict) -> str:
    parts = []
    for name in names:
        text = name if name in required else f"{name}?"
        if name in since:
            text += f" ({since[name]}+)"
        parts.append(text)
    return ", ".join(parts) or "—"


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
    capabilities = _capabilities()
    tests = _test_functions()
    lines = [
        "# Wire tour: every method and notification",
        "",
        f"Generated by `{COMMAND}` from the schemas of {', '.join(revisions)} (the revisions in",
        "`mcp_ref.protocol.lifecycle.SUPPORTED_REVISIONS`), the dispatch tables of `Server` and `Client`, and",
        f"the code and tests that name each method. Do not edit: run `{COMMAND}`;",
        "`tests/test_wire_tour.py` fails while this file is stale.",
        "",
        "Columns: *revisions* that define the message; *capability* it needs and who declares it",
        "(in `initialize`); *params* and *result* in outline (`?` optional, `(X+)` since revision",
        "X); *errors* besides the result (JSON-RPC codes); where we *send* it and where we",
        "*handle* it (file:line; — when this side never does); one *test* that sends or checks it.",
        "Each side numbers its own requests: a response matches a request its receiver sent.",
        "`python -m mcp_ref demo` and `demo --scenario NAME` show them on the wire.",
        "",
        "| method | kind | direction | revisions | capability (declared by) | params | result | errors | sent by | handled by | test |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    order = {"client → server": 0, "server → client": 1}
    for (method, direction), row in sorted(rows.items(), key=lambda item: (item[1]["kind"], item[0][0],
                                                                          order[item[0][1]])):
        revs = row["revisions"]
        span = revs[0] if len(revs) == 1 else (f"{revs[0]}+" if revs == revisions[revisions.index(revs[0]):]
                                               else ", ".join(revs))
        latest = revs[-1]
        names, required = row["params"][latest]
        since = {}
        for name in names:
            first = next(r for r in revs if name in row["params"][r][0])
            if first != revs[0]:
                since[name] = first
        to_server = direction.startswith("client")
        if row["kind"] == "request":
            side, declarer = ("server", "server") if to_server else ("client", "client")
            capability = capabilities[side].get(method, "—") if method != "ping" else None
            if method in capabilities[side] or method == "ping":
                cap = f"`{capability}` ({declarer})" if capability else "none"
            else:
                cap = "— (not in our dispatch table)"
            result_name, (result_names, result_required) = row["result"][latest]
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
        sent = _locate(method, senders, SENDER_PATTERNS, most=3) or "—"
        handled = _locate(method, handlers, HANDLER_PATTERNS) or "—"
        test = _test_for(method, tests) if (sent, handled) != ("—", "—") else "— (neither side of ours does it)"
        lines.append(f"| `{method}` | {row['kind']} | {direction} | {span} | {cap} | {_outline(names, required, since)} "
                     f"| {result} | {errors} | {sent} | {handled} | {test} |")
    lines.append("")
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
