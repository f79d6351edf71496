"""Helpers for the server-feature tests (tools, resources, prompts, completion,
logging, pagination, the everything server).

* ``connected(server, revision)``: ``server`` on one end of ``memory_pair()``, a
  ``Client`` on the other behind a ``TapTransport``; yields ``(client, session,
  recorder)`` and, on the way out, validates every recorded message against the
  revision's ``schema.json`` (``check_wire``).
* ``everything(revision)``: a ``Client`` for ``python -m mcp_ref.examples.everything``
  over a real stdio subprocess, validated the same way.
* ``check_wire(records, revision)``: ``wire_validator.check_transcript`` plus a
  stricter check that no object carries a member its revision does not define
  (what a revision does not know is left out, server.py rule 5).
* ``Collector``: a thread-safe list with ``wait_for(count)`` on a Condition.
"""
import copy
import json
import os
import sys
import threading
from contextlib import contextmanager
from pathlib import Path

import pytest

from conftest import schema_for
from helpers import WAIT, Recorder
from mcp_ref import Client
from mcp_ref.transports import TapTransport, memory_pair
from mcp_ref.transports.stdio import StdioClientTransport

ROOT = Path(__file__).resolve().parent.parent
EVERYTHING = [sys.executable, "-m", "mcp_ref.examples.everything"]
# Members whose values are open by design (JSON Schema documents, free-form data).
_OPEN = {"inputSchema", "outputSchema", "requestedSchema", "structuredContent", "arguments", "_meta",
         "experimental", "data", "metadata", "extensions", "capabilities"}
_strict: dict = {}


def env() -> dict:
    """The subprocess environment: this checkout first on PYTHONPATH."""
    out = dict(os.environ)
    out["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), out.get("PYTHONPATH")) if p)
    return out


def _strictify(node):
    if isinstance(node, list):
        return [_strictify(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {key: ({name: sub if name in _OPEN else _strictify(sub) for name, sub in value.items()}
                 if key == "properties" and isinstance(value, dict) else _strictify(value))
           for key, value in node.items()}
    if isinstance(out.get("properties"), dict) and "additionalProperties" not in out:
        out["additionalProperties"] = False
    return out


def _close_intersections(schema: dict, original: dict, key: str) -> None:
    """A definition that is an ``allOf`` of ``$ref``s (2025-11-25: ``GetTaskResult`` is
    ``Result`` and ``Task``, ``TaskStatusNotificationParams`` is ``NotificationParams``
    and ``Task``) cannot be closed branch by branch: each closed branch would refuse
    the other's members. It becomes its open branches plus one closure over the union
    of their members."""
    for name, definition in original[key].items():
        branches = definition.get("allOf")
        if not branches or not all("$ref" in b for b in branches):
            continue
        parts = [copy.deepcopy(original[key][b["$ref"].rsplit("/", 1)[1]]) for b in branches]
        members = {member for part in parts for member in part.get("properties", {})}
        schema[key][name] = {"allOf": parts, "properties": {member: {} for member in members},
                             "additionalProperties": False}


def _strict_validator(revision: str, name: str):
    if (revision, name) not in _strict:
        jsonschema = pytest.importorskip("jsonschema")
        original = schema_for(revision)
        schema = _strictify(copy.deepcopy(original))
        key = "$defs" if "$defs" in schema else "definitions"
        _close_intersections(schema, original, key)
        root = {k: v for k, v in schema.items() if k in ("$schema", key)}
        root["$ref"] = f"#/{key}/{name}"
        _strict[revision, name] = jsonschema.validators.validator_for(schema)(root)
    return _strict[revision, name]


def strict_check(message: dict, revision: str, request_method, wire_validator) -> None:
    """No member ``revision`` does not define, in a request/notification's params or a result."""
    methods = wire_validator.methods(revision)
    schema = schema_for(revision)
    key = "$defs" if "$defs" in schema else "definitions"
    if "method" in message:
        name = methods[message["method"]]
        params = {k: v for k, v in (message.get("params") or {}).items() if k != "_meta"}
        instance = {"method": message["method"], **({"params": params} if "params" in message else {})}
        defined = schema[key][name].get("properties", {})
        instance.update({k: v for k, v in message.items() if k in defined and k not in instance})
    elif "result" in message and request_method in methods:
        name = methods[request_method][:-len("Request")] + "Result"
        if isinstance(message["result"], dict) and "task" in message["result"] and "CreateTaskResult" in schema[key]:
            name = "CreateTaskResult"               # a task-augmented request (2025-11-25)
        if name not in schema[key]:
            return
        instance = {k: v for k, v in message["result"].items() if k != "_meta"}
    else:
        return
    errors = list(_strict_validator(revision, name).iter_errors(instance))
    assert not errors, (f"{revision} {name}: {errors[0].message} at "
                        f"{'/'.join(map(str, errors[0].absolute_path))}\n{json.dumps(message)[:1500]}")


def check_wire(records, revision: str, wire_validator, strict: tuple = ("send", "receive")) -> int:
    """Validate every ``(direction, message)`` record, and strictly those of the
    ``strict`` directions (ours: another implementation may add members); returns
    how many were checked."""
    count = wire_validator.check_transcript(records, revision)
    asked = {}
    for direction, message in records:
        if "method" in message and "id" in message:
            asked[direction, message["id"]] = message["method"]
        method = None
        if "result" in message:
            method = asked.get(("receive" if direction == "send" else "send", message.get("id")))
        if direction in strict:
            strict_check(message, revision, method, wire_validator)
    return count


@contextmanager
def connected(server, revision: str = "2025-11-25", wire_validator=None, **client_options):
    """An in-process client and server; every message is schema-checked at the end."""
    client_end, server_end = memory_pair()
    recorder = Recorder()
    session = server.serve(server_end)
    client = Client(TapTransport(client_end, recorder), protocol_version=revision, timeout=WAIT, **client_options)
    try:
        with client:
            # notifications/initialized is handled on the server's notification thread: wait
            # for it, so that list changes and log broadcasts reach this session.
            assert session.ready.wait(WAIT), "the server session never became ready"
            yield client, session, recorder
    finally:
        session.close()
    if wire_validator is not None:
        check_wire(recorder.records, client.protocol_version or revision, wire_validator)


@contextmanager
def everything(revision: str = "2025-11-25", wire_validator=None, **client_options):
    """A client for the everything example over a real stdio subprocess."""
    recorder = Recorder()
    transport = StdioClientTransport(EVERYTHING, env=env(), cwd=str(ROOT))
    client = Client(TapTransport(transport, recorder), protocol_version=revision, timeout=20, **client_options)
    with client:
        yield client, recorder
    if wire_validator is not None:
        assert check_wire(recorder.records, revision, wire_validator) == len(recorder.records)


class Collector:
    """Items appended from any thread; ``wait_for(n)`` blocks until there are ``n``."""

    def __init__(self):
        self.items: list = []
        self._cond = threading.Condition()

    def __call__(self, *args) -> None:
        with self._cond:
            self.items.append(args[0] if len(args) == 1 else args)
            self._cond.notify_all()

    def wait_for(self, count: int, timeout: float = WAIT) -> list:
        with self._cond:
            if not self._cond.wait_for(lambda: len(self.items) >= count, timeout):
                raise AssertionError(f"only {len(self.items)} of {count} items within {timeout:g} s: {self.items}")
            return list(self.items)
