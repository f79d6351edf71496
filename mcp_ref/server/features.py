"""What the server's features share; one module per area beside this one, and
``server.py`` wires them up.

* ``tools``: tool registration, argument validation, results (server/tools).
* ``resources``: resources, templates, reading, subscriptions (server/resources).
* ``prompts``: prompt registration and ``prompts/get`` (server/prompts).
* ``utilities``: completion and logging (server/utilities/completion, logging).
* ``pagination``: opaque cursors for the four list methods (server/utilities/pagination).
* ``tasks``: task-augmented ``tools/call`` and the ``tasks/*`` methods (basic/utilities/tasks, 2025-11-25);
  ``task_context``: the ``Context`` a task's code gets.

Rules shared by every area:

1. A registry holds what was registered, in registration order, under one lock;
   user code never runs under that lock.
2. Each ``handle_*`` method answers one MCP method: ``(ctx, params) -> dict``.
   ``Server.__init__`` holds the one table that maps methods to them.
3. What a session's revision does not know is left out of what it is sent
   (``to_dict(revision)``; content of newer types is dropped).

These modules import no server code (tools.py hands task calls to tasks/legacy.py); the server hands them its ``Context``
class and a callback for list changes.
"""
from __future__ import annotations

import itertools
from typing import Any

from mcp_ref.types import Icon

__all__ = ["as_model", "as_icons", "next_serial"]

# Serial numbers of registered items, increasing in registration order (pagination.py rule 1).
next_serial = itertools.count(1).__next__


def as_model(cls: Any, value: Any) -> Any:
    """``value`` as a ``cls`` instance, given as one, as a wire dict (camelCase) or as a
    dict of its snake_case attributes; None stays None."""
    if value is None or isinstance(value, cls):
        return value
    if isinstance(value, dict):
        if value and set(value) <= set(cls.wire_fields()):
            return cls(**value)
        return cls.from_dict(value)
    raise TypeError(f"expected {cls.__name__} or a dict, not {type(value).__name__}")


def as_icons(icons: list | None) -> list | None:
    """A list of ``Icon`` from icons given as objects or dicts."""
    return None if icons is None else [as_model(Icon, icon) for icon in icons]
