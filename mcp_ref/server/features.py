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

These modules import no server code; the server hands them its ``Context``
class and a callback for list changes.
"""
from __future__ import annotations

import itertools
import threading
from types import FunctionType

from mcp_ref.schema import signature

__all__ = ["as_model", "as_icons", "built_once", "deferrable", "injected", "next_serial", "BUILD_LOCK"]

# Guards what a registry makes on first use (a model, a tool's schemas and binder): made
# once, whichever thread asks first; the building never waits on anything else.
BUILD_LOCK = threading.Lock()

# Serial numbers of registered items, increasing in registration order (pagination.py rule 1).
next_serial = itertools.count(1).__next__


def built_once(entry, slot: str, build):
    """``entry``'s ``slot``, made by ``build(entry)`` the first time anyone asks (the model
    of a tool, prompt or resource registered by decorator: tools.py rule 8, prompts.py
    rule 5, resources.py rule 5), once, whichever thread asks first."""
    value = getattr(entry, slot)
    if value is None:
        with BUILD_LOCK:
            value = getattr(entry, slot)
            if value is None:
                value = build(entry)
                setattr(entry, slot, value)
    return value


def injected(entry) -> list:
    """The names of ``entry.fn``'s parameters typed as one of ``entry.skip`` (the server's
    Context), which a call fills in: read the first time, once; the ``inject`` property
    of a prompt's and of a resource's entry (prompts.py, resources.py)."""
    return built_once(entry, "_inject", _read_injected)


def _read_injected(entry) -> list:
    return signature.context_params(entry.fn, skip=entry.skip)


def deferrable(fn) -> bool:
    """Whether reading ``fn`` may wait for its first listing or use (tools.py rule 8,
    prompts.py rule 5): a plain function without positional-only parameters. The rest
    (methods, partials, callable objects, and a positional-only parameter, which is a
    TypeError the author should see at once) is read at registration."""
    return type(fn) is FunctionType and not fn.__code__.co_posonlyargcount


def as_model(cls, value):
    """``value`` as a ``cls`` instance, given as one, as a wire dict (camelCase) or as a
    dict of its snake_case attributes; None stays None."""
    if value is None or isinstance(value, cls):
        return value
    if isinstance(value, dict):
        if value and set(value) <= set(cls.wire_fields()):
            return cls(**value)
        return cls.from_dict(value)
    raise TypeError(f"expected {cls.__name__} or a dict, not {type(value).__name__}")


def as_icons(icons) -> list | None:
    """A list of ``Icon`` from icons given as objects or dicts."""
    if icons is None:
        return None
    from mcp_ref.types import Icon   # types/ load on first use (start-up time, bench/bench_stdio.py)
    return [as_model(Icon, icon) for icon in icons]
