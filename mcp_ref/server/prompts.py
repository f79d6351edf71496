"""Prompts: registration, ``prompts/list`` and ``prompts/get``.

Spec: server/prompts (every revision); error handling: an invalid prompt
name and a missing required argument are -32602 (Invalid params).

Rules:

1. A prompt's arguments are its function's parameters, names kept verbatim
   (a parameter ``resourceUri`` is the argument ``resourceUri``), required
   when they have no default; descriptions come from the docstring's ``Args:``
   section or ``typing.Annotated``. A ``Context`` parameter is not an argument.
2. ``prompts/get`` arguments are strings (``{[key: string]: string}`` in the
   schema); an unknown prompt, a missing required argument, an argument the
   prompt does not take or a value that is not a string is -32602.
3. The function may return a string (one user message), a ``PromptMessage``,
   a content block (a user message holding it), a ``{"role", "content"}``
   dict, a list of any of these, or a whole ``GetPromptResult``.
4. A message whose content a session's revision does not know (audio before
   2025-03-26, resource_link before 2025-06-18) is left out for that session.
5. As tools do (tools.py rule 8): registering a prompt reads it once, there:
   its ``Prompt`` model and its binder; a listing is each ``Prompt``'s
   ``to_dict`` for the session's revision.
"""
from __future__ import annotations

from typing import Any, Callable

from mcp_ref.errors import InvalidParamsError
from mcp_ref.schema import signature
from mcp_ref.server.features import as_icons
from mcp_ref.server.pagination import NamedRegistry
from mcp_ref.server.tools import Binder
from mcp_ref.types import (GetPromptResult, Model, Prompt, PromptArgument, PromptMessage, TextContent,
                           content_from_dict)

__all__ = ["Prompts", "to_messages"]


def _message(item: Any) -> PromptMessage:
    if isinstance(item, PromptMessage):
        return item
    if isinstance(item, str):
        return PromptMessage(role="user", content=TextContent(text=item))
    if isinstance(item, Model) and hasattr(type(item), "TYPE"):
        return PromptMessage(role="user", content=item)  # type: ignore[arg-type]  # a content block: it has a TYPE
    if isinstance(item, dict) and "role" in item:
        return PromptMessage.from_dict(item)
    if isinstance(item, dict) and isinstance(item.get("type"), str):
        return PromptMessage(role="user", content=content_from_dict(item))  # type: ignore[arg-type]  # decodes a block
    raise TypeError(f"a prompt returned {type(item).__name__}; expected a string, a PromptMessage "
                    "or a content block")


def to_messages(value: Any) -> list:
    """Rule 3 (a ``GetPromptResult`` is handled by the caller)."""
    items = value if isinstance(value, (list, tuple)) else [value]
    return [_message(item) for item in items]


class _Entry:
    """A registered prompt: its ``Prompt`` and what ``prompts/get`` needs (rule 5)."""

    __slots__ = ("fn", "prompt", "bind", "serial")

    def __init__(self, read: signature.Reading, prompt: Prompt):
        self.fn, self.prompt = read.fn, prompt
        self.bind = Binder(read, tuple(read.context))


class Prompts(NamedRegistry):
    """The prompts a server offers. ``owner`` is the server (``page_size``, ``_list_changed``)."""

    KIND, CHANGED, ITEM = "prompts", "notifications/prompts/list_changed", "prompt"
    DUPLICATE = "a prompt named {!r} is already registered"

    def add(self, fn: Callable, *, name: str | None = None, title: str | None = None,
            description: str | None = None, icons: list | None = None, meta: dict | None = None) -> Prompt:
        """See ``Server.add_prompt``: the ``Prompt`` registered (rule 5)."""
        read = signature.Reading(fn, (self.context_class,))    # one reading: arguments and binder
        schema = signature.input_schema(read)                   # rule 1: an argument per parameter
        required = set(schema.get("required", ()))
        arguments = [PromptArgument(name=name, description=prop.get("description"), required=name in required)
                     for name, prop in schema["properties"].items()]
        prompt = Prompt(name=name if name is not None else fn.__name__, title=title,
                        description=description if description is not None else read.description,
                        arguments=arguments, icons=as_icons(icons), meta=meta)
        self._register(prompt.name, _Entry(read, prompt))
        return prompt

    def handle_get(self, ctx, params: dict) -> dict:
        """Spec: server/prompts#getting-a-prompt; rules 2 to 4."""
        name = params.get("name")
        if not isinstance(name, str):
            raise InvalidParamsError("prompts/get: name must be a string")
        entry = self._entries.get(name)
        if entry is None:
            raise InvalidParamsError(f"Unknown prompt: {name}", {"name": name})
        arguments = params.get("arguments") or {}
        if not isinstance(arguments, dict):
            raise InvalidParamsError("prompts/get: arguments must be an object")
        bad = [key for key, value in arguments.items() if not isinstance(value, str)]
        if bad:
            raise InvalidParamsError(f"prompts/get: argument values are strings ({', '.join(bad)} "
                                     "are not)", {"arguments": bad})
        missing = [a.name for a in entry.prompt.arguments or () if a.required and a.name not in arguments]
        if missing:
            raise InvalidParamsError(f"Missing required argument{'s' if len(missing) > 1 else ''} for prompt "
                                     f"{name}: {', '.join(missing)}", {"missing": missing})
        value = entry.fn(**entry.bind(arguments, ctx))
        if not isinstance(value, GetPromptResult):
            value = GetPromptResult(messages=to_messages(value), description=entry.prompt.description)
        version = ctx.protocol_version
        return GetPromptResult(messages=[m for m in value.messages if _known(m, version)],
                               description=value.description, meta=value.meta,
                               extra=value.extra).to_dict(version)  # type: ignore[call-arg]  # every model takes extra=


def _known(message: PromptMessage, version: str | None) -> bool:
    """Rule 4: does ``version`` know the type of this message's content?"""
    since = getattr(type(message.content), "SINCE", None)
    return version is None or since is None or since <= version
