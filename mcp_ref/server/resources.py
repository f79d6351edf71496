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
"""
from __future__ import annotations

import base64
import inspect
import json
import threading
from typing import Any, Callable

from mcp_ref.errors import InvalidParamsError, ResourceNotFoundError
from mcp_ref.schema import jsonable, signature
from mcp_ref.schema.uritemplate import UriTemplate
from mcp_ref.server.features import as_icons, as_model, next_serial
from mcp_ref.server.pagination import Listing
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
        self.serial = next_serial()


def _uri_param(params: dict, method: str) -> str:
    uri = params.get("uri")
    if not isinstance(uri, str):
        raise InvalidParamsError(f"{method}: uri must be a string")
    return uri


class Resources:
    """The resources and templates a server offers. ``owner`` is the server (its
    ``page_size``, ``_list_changed`` and ``ready_sessions()`` are used)."""

    def __init__(self, owner, context_class: type):
        self.owner = owner
        self.context_class = context_class
        self._static: dict = {}          # uri -> _Entry(Resource)
        self._templates: dict = {}       # uri template -> _Entry(ResourceTemplate)
        self._lock = threading.Lock()
        self._listings: dict = {}        # id(table) -> Listing (pagination.py rule 4)

    def __len__(self) -> int:
        return len(self._static) + len(self._templates)

    def resources(self) -> list:
        with self._lock:
            return [entry.item for entry in self._static.values()]

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
        entry = _Entry(fn, item, template, read.context)
        table = self._templates if template is not None else self._static
        with self._lock:
            if uri in table:
                raise ValueError(f"a resource{' template' if template is not None else ''} {uri!r} "
                                 "is already registered")
            table[uri] = entry
            self._listings.clear()
        self.owner._list_changed("notifications/resources/list_changed")
        return item

    def remove(self, uri: str) -> None:
        """Unregister the resource with this URI, or the template with this URI template;
        KeyError when there is none."""
        with self._lock:
            del (self._static if uri in self._static else self._templates)[uri]
            self._listings.clear()
        self.owner._list_changed("notifications/resources/list_changed")

    def find(self, uri: str) -> tuple | None:
        """``(entry, variables)`` for the resource or template that answers ``uri`` (rule 2)."""
        with self._lock:
            entry = self._static.get(uri)
            if entry is not None:
                return entry, {}
            templates = list(self._templates.values())
        for entry in templates:
            variables = entry.template.match(uri) if entry.template is not None else None
            if variables is not None:
                return entry, variables
        return None

    def has_template(self, uri_template: str) -> ResourceTemplate | None:
        with self._lock:
            entry = self._templates.get(uri_template)
        return entry.item if entry is not None else None

    def _page(self, table: dict, ctx, params: dict, list_name: str, key: str) -> dict:
        """The list result ``{key: page}`` of ``table``'s items, cut from its Listing (made once
        per change, each item's dict made once per revision: pagination.py rules 4, 5)."""
        with self._lock:
            listing = self._listings.get(id(table))
            if listing is None:
                listing = self._listings[id(table)] = Listing([(e.serial, e) for e in table.values()])
        page, cursor = listing.wire(params, self.owner.page_size, list_name, ctx.protocol_version,
                                    lambda entry, version: entry.item.to_dict(version))
        return {key: page, "nextCursor": cursor} if cursor is not None else {key: page}

    # -- handlers
    def handle_list(self, ctx, params: dict) -> dict:
        """Spec: server/resources#listing-resources."""
        return self._page(self._static, ctx, params, "resources", "resources")

    def handle_templates_list(self, ctx, params: dict) -> dict:
        """Spec: server/resources#resource-templates."""
        return self._page(self._templates, ctx, params, "resources/templates", "resourceTemplates")

    def handle_read(self, ctx, params: dict) -> dict:
        """Spec: server/resources#reading-resources; rules 2 and 3."""
        uri = _uri_param(params, "resources/read")
        found = self.find(uri)
        if found is None:
            raise ResourceNotFoundError("Resource not found", {"uri": uri})
        entry, variables = found
        kwargs = {**variables, **dict.fromkeys(entry.inject, ctx)}
        contents = to_contents(entry.fn(**kwargs), uri, entry.item.mime_type)
        return ReadResourceResult(contents=contents).to_dict(ctx.protocol_version)

    def handle_subscribe(self, ctx, params: dict) -> dict:
        """Spec: server/resources#subscriptions; rule 4."""
        uri = _uri_param(params, "resources/subscribe")
        if self.find(uri) is None:
            raise ResourceNotFoundError("Resource not found", {"uri": uri})
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
        sent = 0
        for session in self.owner.ready_sessions():
            with self._lock:
                subscribed = uri in session.subscriptions
            if subscribed:
                try:
                    session.notify("notifications/resources/updated", {"uri": uri})
                    sent += 1
                except Exception:                   # a session that just closed
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
