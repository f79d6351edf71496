"""Resources: static resources, resource templates, reading, subscriptions.

Spec: server/resources (every revision): ``resources/list``,
``resources/templates/list``, ``resources/read``, ``resources/subscribe``,
``resources/unsubscribe``, ``notifications/resources/updated`` and
``notifications/resources/list_changed``; error -32002 for an unknown URI
(server/resources#error-handling).

Rules:

1. A URI without ``{...}`` registers a resource: its function takes no
   arguments (a ``Context`` parameter aside). A URI template (RFC 6570, see
   ``uritemplate``) registers a template: each variable must be a parameter of
   the function, which is called with the variables of the requested URI as
   keyword arguments (strings; lists for exploded ``{var*}``).
2. ``resources/read`` looks the URI up among the resources first, then the
   templates in registration order. Unknown → -32002 with ``{"uri": uri}`` in
   ``data``.
3. What the function returns becomes contents whose ``uri`` is the one
   requested: ``str`` → ``text``; ``bytes`` → base64 ``blob``;
   ``TextResourceContents``/``BlobResourceContents`` (or a list) as given;
   anything else → JSON text. ``mimeType`` is the registered one, else
   ``text/plain``, ``application/octet-stream`` or ``application/json``.
4. Subscriptions belong to a session (``ServerSession.subscriptions``); one
   may subscribe to any URI ``resources/read`` would answer.
   ``notify_updated(uri)`` sends ``notifications/resources/updated`` to the
   ready sessions subscribed to exactly that URI, and to no one else.
5. As tools do (tools.py rule 8): registering reads the function and the URI
   once, there, so every mistake raises there: a template is parsed
   (``UriTemplate``) and each variable must be a parameter; a fixed URI's
   function takes no arguments. The ``Resource``/``ResourceTemplate`` model is
   built then; a listing is each model's ``to_dict`` for the session's revision.
   The resources, and the templates (``Resources.templates``), are each a
   ``NamedRegistry`` (pagination.py), as tools and prompts are.
"""
from __future__ import annotations

import base64
import inspect
import json
from typing import Any, Callable

from mcp_ref.errors import InvalidParamsError, ResourceNotFoundError
from mcp_ref.schema import jsonable, signature
from mcp_ref.schema.uritemplate import UriTemplate
from mcp_ref.server.features import as_icons, as_model
from mcp_ref.server.pagination import NamedRegistry
from mcp_ref.types import (Annotations, BlobResourceContents, ReadResourceResult, Resource, ResourceTemplate,
                           TextResourceContents)

__all__ = ["Resources", "to_contents"]


def to_contents(value: Any, uri: str, mime_type: str | None) -> list:
    """Rule 3: what a resource function returned, as a list of resource contents."""
    if isinstance(value, ReadResourceResult):
        return list(value.contents)
    if isinstance(value, (TextResourceContents, BlobResourceContents)):
        return [value]
    if isinstance(value, str):
        return [TextResourceContents(uri=uri, text=value, mime_type=mime_type or "text/plain")]
    if isinstance(value, (bytes, bytearray)):
        return [BlobResourceContents(uri=uri, blob=base64.b64encode(value).decode("ascii"),
                                     mime_type=mime_type or "application/octet-stream")]
    if isinstance(value, (list, tuple)) and value and all(
            isinstance(v, (TextResourceContents, BlobResourceContents)) for v in value):
        return list(value)
    text = json.dumps(jsonable.to_jsonable(value), ensure_ascii=False)
    return [TextResourceContents(uri=uri, text=text, mime_type=mime_type or "application/json")]


class _Entry:
    """A registered resource or template (``template`` None for a fixed URI): its model,
    its function and the names of the function's context parameters (rule 5)."""

    __slots__ = ("fn", "item", "template", "inject", "serial")

    def __init__(self, fn: Callable, item: Resource | ResourceTemplate, template: UriTemplate | None, inject: list):
        self.fn, self.item, self.template, self.inject = fn, item, template, inject


def _uri_param(params: dict, method: str) -> str:
    uri = params.get("uri")
    if not isinstance(uri, str):
        raise InvalidParamsError(f"{method}: uri must be a string")
    return uri


class _Templates(NamedRegistry):
    """The resource templates a server offers, by URI template (``Resources.templates``)."""

    KIND, KEY, ITEM = "resources/templates", "resourceTemplates", "item"
    CHANGED, DUPLICATE = "notifications/resources/list_changed", "a resource template {!r} is already registered"


class Resources(NamedRegistry):
    """The resources a server offers, by URI, and its resource ``templates``. ``owner`` is
    the server (its ``page_size``, ``_list_changed`` and ``ready_sessions()`` are used);
    the lock also guards the sessions' ``subscriptions``."""

    KIND, CHANGED, ITEM = "resources", "notifications/resources/list_changed", "item"
    DUPLICATE = "a resource {!r} is already registered"

    def __init__(self, owner, context_class: type):
        super().__init__(owner, context_class)
        self.templates = _Templates(owner, context_class)

    def __len__(self) -> int:
        return len(self._entries) + len(self.templates)

    def resources(self) -> list:
        return self.list()

    # -- registration
    def add(self, fn: Any, uri: str, *, name: str | None = None, title: str | None = None,
            description: str | None = None, mime_type: str | None = None, size: int | None = None,
            annotations: Any = None, icons: list | None = None,
            meta: dict | None = None) -> Resource | ResourceTemplate:
        """See ``Server.add_resource``: the ``Resource`` or ``ResourceTemplate`` registered."""
        if isinstance(fn, (str, bytes)):            # fixed contents
            contents = fn
            fn = lambda: contents                   # noqa: E731
            name = name or uri
        read = signature.Reading(fn, (self.context_class,))    # one reading: schema and context
        template = UriTemplate(uri) if not isinstance(uri, str) or "{" in uri or "}" in uri else None
        params = signature.input_schema(read)
        if template is None and params["properties"]:
            raise ValueError(f"resource {uri!r}: the function of a fixed URI takes no arguments "
                             f"(it takes {', '.join(params['properties'])}); use a URI template")
        if template is not None:
            _check_template_function(read, uri, tuple(template.variables), params)
        common: dict = dict(name=name or getattr(fn, "__name__", uri), title=title,
                            description=description if description is not None else read.description,
                            mime_type=mime_type, annotations=as_model(Annotations, annotations),
                            icons=as_icons(icons), meta=meta)
        item = ResourceTemplate(uri_template=uri, **common) if template is not None else \
            Resource(uri=uri, size=size, **common)
        (self.templates if template is not None else self)._register(uri, _Entry(fn, item, template, read.context))
        return item

    def remove(self, uri: str) -> None:
        """Unregister the resource with this URI, or the template with this URI template;
        KeyError when there is none."""
        if uri in self._entries:
            super().remove(uri)
        else:
            self.templates.remove(uri)

    def find(self, uri: str) -> tuple:
        """``(entry, variables)`` for the resource or template that answers ``uri``; -32002
        when none does (rule 2)."""
        entry = self._entries.get(uri)              # one dict read: atomic, no lock needed
        if entry is not None:
            return entry, {}
        for entry in self.templates.entries():
            variables = entry.template.match(uri) if entry.template is not None else None
            if variables is not None:
                return entry, variables
        raise ResourceNotFoundError("Resource not found", {"uri": uri})

    # -- handlers (resources/list and resources/templates/list: NamedRegistry.handle_list, of each registry)
    def handle_read(self, ctx, params: dict) -> dict:
        """Spec: server/resources#reading-resources; rules 2 and 3."""
        uri = _uri_param(params, "resources/read")
        entry, variables = self.find(uri)
        kwargs = {**variables, **dict.fromkeys(entry.inject, ctx)}
        contents = to_contents(entry.fn(**kwargs), uri, entry.item.mime_type)
        return ReadResourceResult(contents=contents).to_dict(ctx.protocol_version)

    def handle_subscribe(self, ctx, params: dict) -> dict:
        """Spec: server/resources#subscriptions; rule 4."""
        uri = _uri_param(params, "resources/subscribe")
        self.find(uri)                              # -32002 unless resources/read would answer it
        with self._lock:
            ctx.session.subscriptions.add(uri)
        return {}

    def handle_unsubscribe(self, ctx, params: dict) -> dict:
        """Unsubscribing from a URI one is not subscribed to is not an error."""
        uri = _uri_param(params, "resources/unsubscribe")
        with self._lock:
            ctx.session.subscriptions.discard(uri)
        return {}

    def notify_updated(self, uri: str) -> int:
        """Rule 4; returns how many sessions were sent the notification."""
        with self._lock:
            subscribed = [session for session in self.owner.ready_sessions() if uri in session.subscriptions]
        sent = 0
        for session in subscribed:
            try:
                session.notify("notifications/resources/updated", {"uri": uri})
                sent += 1
            except Exception:                       # a session that just closed
                continue
        return sent


def _check_template_function(read: signature.Reading, uri: str, variables: tuple, params: dict) -> None:
    """Each variable is a parameter (or the function takes ``**kwargs``); every other parameter
    has a default. Raises ValueError naming the mismatch (``params``: the function's inputSchema)."""
    takes_any = any(kind is inspect.Parameter.VAR_KEYWORD for _, kind, _ in read.params)
    unknown = [] if takes_any else [v for v in variables if v not in params["properties"]]
    unfilled = [p for p in params.get("required", ()) if p not in variables]
    problems = ([f"variables without a parameter: {', '.join(unknown)}"] if unknown else []) + \
        ([f"required parameters not in the template: {', '.join(unfilled)}"] if unfilled else [])
    if problems:
        raise ValueError(f"resource template {uri!r}: " + "; ".join(problems))
