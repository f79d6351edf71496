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
5. As tools do (tools.py rules 8 and 9): ``@server.prompt`` keeps a plain
   function and what was given; its ``Prompt`` model is built on first use
   (``get``, ``prompts/get``, ``Prompts.list``) and a listing writes its wire
   dict from the signature's shape (``listed_prompt``, what ``Prompt.to_dict``
   says; tests/test_prompts.py holds both to the same dict for every
   revision). Building the models at registration made 10,000 prompts start
   4-5x slower than a bare loop (bench/bench_growth.py, issue 17).
   ``add_prompt`` still builds at once and returns the ``Prompt``.
6. The module loads ``mcp_ref.types`` (and with it ``typing``,
   ``dataclasses``, ``inspect``) when a model is first built or a prompt
   first got, not with the module: importing it took 16.5 ms, now 1.4
   (``python -X importtime``), against a bare loop's whole start of ~50 ms
   for 10,000 prompts (bench/bench_growth.py, issue 17).
7. Prompts registered without options share one read-only options dict
   (``_NO_OPTIONS``), as resources do (resources.py): a dict per prompt was one
   more object per prompt in the garbage collector's count, which with ~2.4
   more per prompt listed brought the first full collection of a 10,000-prompt
   server into its first listing (~9 ms of ~60-110; bench/bench_growth.py,
   issue 17).
"""
from __future__ import annotations

from mcp_ref.schema import binding, signature, signature_fast
from mcp_ref.schema.docstrings import parse_docstring
from mcp_ref.errors import InvalidParamsError
from mcp_ref.server.features import as_icons, built_once, deferrable, injected, next_serial
from mcp_ref.server.pagination import NamedRegistry

TYPE_CHECKING = False
if TYPE_CHECKING:          # names for annotations only (rule 6: mcp_ref.types loads on first use)
    from typing import Any, Callable

    from mcp_ref.types import Prompt, PromptMessage

__all__ = ["Prompts", "to_messages", "prompt_arguments"]


def prompt_arguments(fn, skip: tuple) -> list:
    """Rule 1: the ``PromptArgument`` list of ``fn``."""
    from mcp_ref.types import PromptArgument
    schema = signature.input_schema(fn, skip=skip)
    required = set(schema.get("required", ()))
    return [PromptArgument(name=name, description=prop.get("description"), required=name in required)
            for name, prop in schema["properties"].items()]


def _message(item: Any) -> PromptMessage:
    from mcp_ref.types import Model, PromptMessage, TextContent, content_from_dict
    if isinstance(item, PromptMessage):
        return item
    if isinstance(item, str):
        return PromptMessage(role="user", content=TextContent(text=item))
    if isinstance(item, Model) and hasattr(type(item), "TYPE"):
        return PromptMessage(role="user", content=item)
    if isinstance(item, dict) and "role" in item:
        return PromptMessage.from_dict(item)
    if isinstance(item, dict) and isinstance(item.get("type"), str):
        return PromptMessage(role="user", content=content_from_dict(item))
    raise TypeError(f"a prompt returned {type(item).__name__}; expected a string, a PromptMessage "
                    "or a content block")


def to_messages(value: Any) -> list:
    """Rule 3 (a ``GetPromptResult`` is handled by the caller)."""
    items = value if isinstance(value, (list, tuple)) else [value]
    return [_message(item) for item in items]


_NO_OPTIONS = dict.fromkeys(("title", "description", "icons", "meta"))


class _Entry:
    """A registered prompt: its name, function and options (rule 5); the ``Prompt`` and
    the context parameters are made on first use, once."""

    __slots__ = ("name", "fn", "options", "skip", "serial", "_prompt", "_inject")

    def __init__(self, name: str, fn: Callable, options: dict, skip: tuple):
        self.name, self.fn, self.options, self.skip = name, fn, options, skip
        self.serial = next_serial()
        self._prompt = self._inject = None

    @property
    def prompt(self) -> Prompt:
        return built_once(self, "_prompt", _build_prompt)

    inject = property(injected)


def _build_prompt(entry: _Entry) -> Prompt:
    from mcp_ref.types import Prompt
    options, fn = entry.options, entry.fn
    description = options["description"]
    return Prompt(name=entry.name, title=options["title"],
                  description=description if description is not None else signature.description_of(fn),
                  arguments=prompt_arguments(fn, entry.skip), icons=as_icons(options["icons"]), meta=options["meta"])


def listed_prompt(entry: _Entry, version: str | None) -> dict:
    """Rule 5: ``entry``'s wire dict for ``version``, what ``entry.prompt.to_dict`` says,
    written from the signature's shape when no ``Prompt`` was built (deferred entries
    have no icons)."""
    shape = signature_fast.shape_of(entry.fn, entry.skip) if entry._prompt is None else None
    if shape is None:
        return entry.prompt.to_dict(version)
    options = entry.options
    text, docs = parse_docstring(entry.fn.__doc__)
    out = {"name": entry.name}
    if options["title"] is not None and (version is None or version >= "2025-06-18"):
        out["title"] = options["title"]
    description = options["description"] if options["description"] is not None else text
    if description is not None:
        out["description"] = description
    out["arguments"] = _listed_arguments(shape, docs)
    if options["meta"] is not None and (version is None or version >= "2025-06-18"):
        out["_meta"] = options["meta"]
    return out


def _listed_arguments(shape, docs: dict) -> list:
    """The listed arguments of a prompt of this shape. Without parameter descriptions
    they are the same for every prompt of the shape: one list, kept with the shape and
    shared by their wire dicts (read-only, as a shared schema is, pagination.py rule 5),
    instead of a list and a dict per argument for each of 10,000 prompts."""
    if not docs:
        arguments = shape.derived.get("prompt_arguments")
        if arguments is not None:
            return arguments
    arguments = []
    for name, _, default in shape.parameters[0]:
        argument = {"name": name}
        if docs.get(name):
            argument["description"] = docs[name]
        argument["required"] = default is signature_fast.NO_DEFAULT
        arguments.append(argument)
    if not docs:
        arguments = shape.derived.setdefault("prompt_arguments", arguments)
    return arguments


class Prompts(NamedRegistry):
    """The prompts a server offers. ``owner`` is the server (``page_size``, ``_list_changed``)."""

    KIND, NOUN, CHANGED, ITEM = "prompts", "prompt", "notifications/prompts/list_changed", "prompt"

    def __init__(self, owner, context_class: type):
        super().__init__(owner, context_class)
        self._skip = (context_class,)    # every entry's ``skip``: one tuple, not one per prompt (rule 6)

    def get(self, name: str) -> Prompt | None:
        entry = self._entries.get(name)
        return entry.prompt if entry is not None else None

    def _wire(self, entry: _Entry, version: str | None) -> dict:
        return listed_prompt(entry, version)        # rule 5

    def add(self, fn: Callable, *, name: str | None = None, title: str | None = None,
            description: str | None = None, icons: list | None = None,
            meta: dict | None = None, build: bool = True) -> Prompt | None:
        """See ``Server.add_prompt``. With ``build=False`` (the decorator) a plain function
        is kept as it is and None returned (rule 5)."""
        prompt_name = name if name is not None else fn.__name__
        if title is description is icons is meta is None:
            options = _NO_OPTIONS                   # nothing given: one shared dict (read-only, rule 7)
        else:
            options = {"title": title, "description": description, "icons": icons, "meta": meta}
        entry = _Entry(prompt_name, fn, options, self._skip)
        if build or icons is not None or not deferrable(fn):
            entry.prompt, entry.inject              # errors in the signature or the icons raise here
        self._register(prompt_name, entry)
        return entry.prompt if build else None

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
        from mcp_ref.types import GetPromptResult
        kwargs = binding.bind_arguments(entry.fn, arguments, inject={p: ctx for p in entry.inject})
        value = entry.fn(**kwargs)
        if not isinstance(value, GetPromptResult):
            value = GetPromptResult(messages=to_messages(value), description=entry.prompt.description)
        version = ctx.protocol_version
        result = GetPromptResult(messages=[m for m in value.messages if _known(m, version)],
                                 description=value.description, meta=value.meta, extra=value.extra)
        return result.to_dict(version)


def _known(message: PromptMessage, version: str | None) -> bool:
    """Rule 4: does ``version`` know the type of this message's content?"""
    since = getattr(type(message.content), "SINCE", None)
    return version is None or since is None or since <= version
