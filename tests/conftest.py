"""Shared test fixtures and checks.

* ``spec_path()`` / ``spec_dir`` / ``schema_for(revision)``: the official
  specification folder, one sub-folder per revision holding ``schema.json``.
  It comes from the environment variable ``MCP_SPEC_DIR``, by default
  ``../shared/spec`` beside the repository; tests that need it are skipped
  when it is absent.
* ``wire_validator`` (fixture) / ``validate_wire(...)``: checks a JSON-RPC
  message against one revision's ``schema.json``; see ``WireValidator``.
* ``pytest_terminal_summary``: the run ends with one line counting the skipped
  tests by reason (``skip_summary``).
* An autouse guard that fails a test leaving non-daemon threads or extra
  ``mcp-*`` threads alive (opt out with ``@pytest.mark.allow_thread_leaks``).
"""
import json
import os
import re
import threading
import time
from pathlib import Path
from typing import Any, Optional

import pytest
from helpers import as_dict
import ext_tasks_schema

EXT_REVISION = "2026-07-28"             # the revision of the tasks extension tests/ext_tasks_schema.py describes

REPO_ROOT = Path(__file__).resolve().parent.parent
REVISIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")   # the legacy (initialize) revisions
MODERN_REVISION = "2026-07-28"          # per-request metadata, no handshake (tests/test_modern_*.py)
THREAD_GRACE = 2.0          # seconds a test's threads get to finish after it


def pytest_configure(config):
    config.addinivalue_line("markers", "allow_thread_leaks: the test may leave threads running")
    config.addinivalue_line("markers", "slow: takes tens of seconds (a fresh virtualenv, an install); "
                                       "in the default run, left out with -m 'not slow'")
    config.addinivalue_line("markers", "req(*ids): the spec requirements the test proves "
                                       "(ids of spec_notes/traceability.md, read by scripts/traceability.py)")


# ---------------------------------------------------------------------- the spec folder
def spec_path() -> Path:
    """Where the official spec is expected (it may not exist)."""
    return Path(os.environ.get("MCP_SPEC_DIR") or REPO_ROOT.parent / "shared" / "spec")


_schemas: dict = {}


def schema_for(revision: str) -> dict:
    """The parsed ``schema.json`` of ``revision``; skips the test when it is missing."""
    if revision not in _schemas:
        path = spec_path() / revision / "schema.json"
        if not path.is_file():
            pytest.skip(f"{revision} schema.json not found at {path}: set MCP_SPEC_DIR")
        with open(path, encoding="utf-8") as f:
            _schemas[revision] = json.load(f)
    return _schemas[revision]


@pytest.fixture
def spec_dir() -> Path:
    path = spec_path()
    if not path.is_dir():
        pytest.skip(f"spec folder not found at {path} (schema.json not found): set MCP_SPEC_DIR")
    return path


# ---------------------------------------------------------------------- wire validation
class WireValidator:
    """Validates JSON-RPC messages against a revision's ``schema.json``.

    ``check(message, revision, request_method=None, *, kind=None, sender=None)``:

    * ``message``: a JSON line (str/bytes), a dict, a ``mcp_ref.jsonrpc.messages``
      object (anything with ``to_dict()``), or a list of those (a batch,
      valid only in 2025-03-26).
    * The envelope is checked against ``JSONRPCRequest``/``JSONRPCNotification``/
      ``JSONRPCResponse`` (``JSONRPCResultResponse`` in 2025-11-25)/
      ``JSONRPCError`` (``JSONRPCErrorResponse`` in 2025-11-25).
    * A request or notification is also checked against the definition whose
      ``properties.method.const`` is its method (found by scanning the schema,
      so every revision works); a method the revision does not define fails.
    * A result is also checked against the result of ``request_method``
      (``CallToolRequest`` -> ``CallToolResult``; ``EmptyResult`` when the
      revision has no ``XResult``, as for ``ping``).
    * ``kind`` ("request", "notification", "result", "error") asserts the shape;
      ``sender`` ("client", "server") asserts that side may send the method.
    * One exemption, narrow: an *error* response whose ``id`` is ``null`` (our
      answer to a request whose id could not be read, as JSON-RPC 2.0 prescribes;
      no MCP schema allows it, see spec_notes/messages.md) is checked with a
      stand-in id, so everything else in it still is. A ``null`` id anywhere
      else (a request, a result) fails as the schema says.

    Raises AssertionError with the jsonschema message on failure.
    """

    def __init__(self):
        self._validators: dict = {}
        self._methods: dict = {}

    # -- schema lookups
    @staticmethod
    def definitions(revision: str) -> tuple:
        schema = schema_for(revision)
        key = "$defs" if "$defs" in schema else "definitions"
        return key, schema[key]

    def methods(self, revision: str) -> dict:
        """``{method: definition name}`` for every request and notification of ``revision``."""
        if revision not in self._methods:
            _, defs = self.definitions(revision)
            table = {}
            for name, definition in defs.items():
                method = definition.get("properties", {}).get("method", {})
                if isinstance(method, dict) and "const" in method:
                    table[method["const"]] = name
            self._methods[revision] = table
        return self._methods[revision]

    def _validator(self, revision: str, name: str):
        if (revision, name) not in self._validators:
            jsonschema = pytest.importorskip("jsonschema")
            schema = schema_for(revision)
            key, defs = self.definitions(revision)
            if name not in defs and name in ext_tasks_schema.DEFINITIONS and revision == EXT_REVISION:
                schema = {**schema, key: {**defs, **ext_tasks_schema.DEFINITIONS}}   # the tasks extension
            elif name not in defs:
                raise AssertionError(f"{name} is not defined in the {revision} schema")
            root = {k: v for k, v in schema.items() if k in ("$schema", key)}
            root["$ref"] = f"#/{key}/{name}"
            self._validators[revision, name] = jsonschema.validators.validator_for(schema)(root)
        return self._validators[revision, name]

    def _validate(self, instance: Any, revision: str, name: str, whole: Any) -> None:
        from jsonschema.exceptions import best_match
        error = best_match(self._validator(revision, name).iter_errors(instance))
        if error is not None:
            where = "/".join(str(p) for p in error.absolute_path) or "(top level)"
            raise AssertionError(f"{revision} {name}: {error.message} at {where}\n"
                                 f"message: {json.dumps(whole, ensure_ascii=False)[:2000]}")

    def _sent_by(self, revision: str, name: str) -> set:
        _, defs = self.definitions(revision)
        sides = set()
        for side in ("client", "server"):
            for union in ("Request", "Notification", "Result"):
                refs = json.dumps(defs.get(side.capitalize() + union, {}))
                if f'/{name}"' in refs:
                    sides.add(side)
        return sides

    # -- public
    def check(self, message: Any, revision: str, request_method: Optional[str] = None, *,
              kind: Optional[str] = None, sender: Optional[str] = None) -> dict:
        """Validate one message (see the class docstring); returns it as a dict."""
        message = _as_json(message)
        if isinstance(message, list):
            if revision != "2025-03-26":
                raise AssertionError(f"JSON-RPC batches are not part of revision {revision}")
            if not message:
                raise AssertionError("an empty batch is not a valid JSON-RPC message")
            for item in message:
                self.check(item, revision, sender=sender)
            shapes = {_shape(item) in ("request", "notification") for item in message}
            if len(shapes) != 1:
                raise AssertionError(f"a batch mixes requests/notifications with responses: {message}")
            return message
        if not isinstance(message, dict):
            raise AssertionError(f"a JSON-RPC message is an object, not {type(message).__name__}: {message!r}")
        shape = _shape(message)
        if kind is not None and shape != kind:
            raise AssertionError(f"expected a {kind}, got a {shape}: {message}")
        _, defs = self.definitions(revision)
        envelope = {
            "request": "JSONRPCRequest",
            "notification": "JSONRPCNotification",
            "result": "JSONRPCResultResponse" if "JSONRPCResultResponse" in defs else "JSONRPCResponse",
            "error": "JSONRPCErrorResponse" if "JSONRPCErrorResponse" in defs else "JSONRPCError",
        }.get(shape)
        if envelope is None:
            raise AssertionError(f"not a request, notification or response: {message}")
        checked = message
        if shape == "error" and "id" in message and message["id"] is None:
            checked = {**message, "id": 0}         # the one exemption (class docstring)
        self._validate(checked, revision, envelope, message)
        if shape in ("request", "notification"):
            name = self.methods(revision).get(message["method"])
            ext = revision == EXT_REVISION and name is None and message["method"] in ext_tasks_schema.METHODS
            if ext:                                 # the tasks extension (tests/ext_tasks_schema.py)
                name = ext_tasks_schema.METHODS[message["method"]][0]
            if name is None:
                raise AssertionError(f"method {message['method']!r} is not defined in revision {revision}")
            self._validate(message, revision, name, message)
            if ext:
                if sender is not None and sender != ("server" if shape == "notification" else "client"):
                    raise AssertionError(f"a {sender} does not send {message['method']} (the tasks extension)")
            elif sender is not None and sender not in self._sent_by(revision, name):
                raise AssertionError(f"a {sender} does not send {message['method']} ({name}) in {revision}")
        elif shape == "result" and request_method is not None:
            request_name = self.methods(revision).get(request_method)
            if request_name is None and revision == EXT_REVISION and request_method in ext_tasks_schema.METHODS:
                self._validate(message["result"], revision, ext_tasks_schema.METHODS[request_method][1], message)
                return message
            if request_name is None:
                raise AssertionError(f"method {request_method!r} is not defined in revision {revision}")
            name = request_name[:-len("Request")] + "Result"
            if name not in defs:
                name = "EmptyResult"
            result = message["result"]
            if isinstance(result, dict) and "task" in result and "CreateTaskResult" in defs:
                name = "CreateTaskResult"           # a task-augmented request (2025-11-25)
            if isinstance(result, dict) and result.get("resultType") == "input_required":
                name = "InputRequiredResult"        # a multi round-trip interim result (2026-07-28)
            if isinstance(result, dict) and result.get("resultType") == "task" and revision == EXT_REVISION:
                name = "CreateTaskResult"           # the tasks extension (tests/ext_tasks_schema.py)
            self._validate(result, revision, name, message)
        return message

    def check_transcript(self, records, revision: str) -> int:
        """Validate every message of ``records``, a list of ``(direction, message)`` pairs
        as ``TapTransport`` reports them ("send"/"receive"). Responses are matched to
        the request of the other direction with the same id, so results are checked
        against the right ``*Result``. Returns the number of messages checked."""
        asked: dict = {}
        count = 0
        for direction, message in records:
            data = _as_json(message)
            for item in (data if isinstance(data, list) else [data]):
                shape = _shape(item) if isinstance(item, dict) else None
                if shape == "request":
                    asked[direction, item.get("id")] = item.get("method")
                method = None
                if shape == "result":
                    other = "receive" if direction == "send" else "send"
                    method = asked.get((other, item.get("id")))
                self.check(item, revision, method)
                count += 1
        return count


_as_json = as_dict          # one definition, in tests/helpers.py


def _shape(message: dict) -> str:
    if "method" in message:
        return "request" if "id" in message else "notification"
    if "result" in message:
        return "result"
    if "error" in message:
        return "error"
    return "unknown"


_wire_validator = WireValidator()


def validate_wire(message: Any, revision: str, kind: Optional[str] = None, *,
                  request_method: Optional[str] = None, sender: Optional[str] = None) -> dict:
    """Module-level shortcut for ``WireValidator.check``."""
    return _wire_validator.check(message, revision, request_method, kind=kind, sender=sender)


@pytest.fixture
def wire_validator() -> WireValidator:
    return _wire_validator


# ---------------------------------------------------------------------- the era of a default Client
@pytest.fixture
def legacy_client_default(monkeypatch):
    """``Client(...)`` without ``protocol_version`` asks for 2025-11-25 (no 2026-07-28 probe)
    during the test. For a module of tests about the legacy era's own mechanics (HTTP
    sessions, the GET stream, resumability, tasks as in 2025-11-25): opt in with
    ``pytestmark = pytest.mark.usefixtures("legacy_client_default")``."""
    from mcp_ref import Client
    monkeypatch.setitem(Client.__init__.__kwdefaults__, "protocol_version", "2025-11-25")


# ---------------------------------------------------------------------- why tests skipped
# (what the group says, a pattern of the skip reasons it gathers), the first match wins
SKIP_GROUPS = (
    ("need the official schemas (set MCP_SPEC_DIR, see README)",
     re.compile(r"MCP_SPEC_DIR|schema\.json|spec folder|specification's pages")),
    ("need the official mcp SDK (Python 3.10+)",
     re.compile(r"official (mcp|MCP) SDK|official SDK|SDK's|import 'mcp|module named 'mcp")),
    ("need the test extra (pip install -e '.[test]')",
     re.compile(r"`?test`? extra|test-only|'(mypy|gunicorn|flask|django|uvicorn)'")),
    ("check what a revision does not have", re.compile(r"not defined in 20\d\d-|not in 20\d\d-|before 20\d\d-")),
    ("need what this platform or Python lacks",
     re.compile(r"POSIX|Linux|/proc|IPv6|pseudo-terminal|pidfd|kernel|pipe|loopback|symlink|fork|signal"
                r"|poll|Python 3\.\d+|oldest supported|certificate")),
)
OTHER_SKIPS = "for other reasons (pytest -rs lists them)"


def skip_summary(reasons) -> str:
    """One line counting skip ``reasons`` by ``SKIP_GROUPS``, largest first; "" for none."""
    counts: dict = {}
    for reason in reasons:
        group = next((label for label, pattern in SKIP_GROUPS if pattern.search(reason)), OTHER_SKIPS)
        counts[group] = counts.get(group, 0) + 1
    if not counts:
        return ""
    ordered = sorted(counts.items(), key=lambda item: (item[0] == OTHER_SKIPS, -item[1]))
    return "skipped: " + ", ".join(f"{count} {label}" for label, count in ordered)


def _skip_reason(report) -> str:
    longrepr = report.longrepr
    reason = longrepr[2] if isinstance(longrepr, tuple) and len(longrepr) == 3 else str(longrepr)
    return reason[len("Skipped: "):] if reason.startswith("Skipped: ") else reason


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_terminal_summary(terminalreporter):
    """End the run with one line saying how many tests skipped and why (README, *Tests*),
    after the short test summary, just above pytest's own count."""
    yield
    line = skip_summary(_skip_reason(report) for report in terminalreporter.stats.get("skipped", ())
                        if report.skipped)
    if line:
        terminalreporter.write_line(line)


# ---------------------------------------------------------------------- thread hygiene
def _suspect_threads(before: set) -> list:
    return [t for t in threading.enumerate()
            if t not in before and t.is_alive() and (not t.daemon or t.name.startswith("mcp-"))]


@pytest.fixture(autouse=True)
def no_leaked_threads(request):
    """Fail a test that leaves non-daemon threads or extra ``mcp-*`` threads behind."""
    before = set(threading.enumerate())
    yield
    if request.node.get_closest_marker("allow_thread_leaks"):
        return
    deadline = time.monotonic() + THREAD_GRACE
    for thread in _suspect_threads(before):
        thread.join(max(0.0, deadline - time.monotonic()))
    left = _suspect_threads(before)
    if left:
        names = ", ".join(f"{t.name} (daemon={t.daemon})" for t in left)
        pytest.fail(f"threads still alive {THREAD_GRACE:g} s after the test: {names}", pytrace=False)
