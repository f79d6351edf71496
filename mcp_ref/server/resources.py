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
5. As tools do (tools.py rules 8 and 9): ``@server.resource`` of a plain
   function checks at registration what must fail there (the URI template's
   syntax, a fixed URI's function taking arguments, template variables and
   parameters, read from the signature's shape) and keeps the function; the
   ``Resource``/``ResourceTemplate`` is built on first use, and a listing
   writes its wire dict directly (``listed_item``, what the model's
   ``to_dict`` says; tests/test_resources.py holds both to the same dict for
   every revision). Building the models at registration made 10,000
   resources start 4.5x slower than a bare loop, templates 7.7x
   (bench/bench_growth.py, issue 17). ``add_resource`` still builds at once
   and returns the model.
6. A server registers all of its resources before it answers
   ``initialize``, so registering one does what rule 5's checks need and no
   more: a URI without a brace is a fixed URI and is not parsed as a
   template, and its function, when plain and of no parameters, is not read
   at all (``signature_fast.takes_nothing``: its code says there is nothing
   to check or inject); a template is parsed for its variable names
   (``uritemplate.variables_of``), which the entry keeps, and parsed again
   into a ``UriTemplate`` for its first match; the function's parameters come
   from its shape (``signature_fast.shape_of``, read once per shape) and the
   variables a shape was found to fit are kept with it (``Shape.derived``),
   so 10,000 templates ``x://rN/{id}`` of ``rN(id: str)`` are checked once;
   a resource registered without options shares one options dict. Every
   mistake still raises here, with the same type and message
   (tests/test_resource_registration.py). Why: registering took ~6 us a
   resource and ~18-21 us a template, then ~3.2 and ~5.3 (36,000 and 52,700
   CPU instructions, callgrind), now ~2.0 and ~3.3 us (23,800 and 38,200):
   10,000 in one process, warm, the decorator's way; a template's entry is
   one object for the garbage collector instead of three. The module loads
   neither ``inspect``/``typing`` nor ``mcp_ref.types`` until a model is
   built or a resource read: importing it took 17.6 ms, now 1.9 (``python
   -X importtime``), against a bare loop's whole start of ~50 ms.
"""
from __future__ import annotations

import json
import threading

from mcp_ref.schema import jsonable, signature, signature_fast
from mcp_ref.errors import InvalidParamsError, ResourceNotFoundError
from mcp_ref.schema.docstrings import parse_docstring
from mcp_ref.schema.uritemplate import variables_of
from mcp_ref.server.features import as_icons, as_model, built_once, injected, next_serial
from mcp_ref.server.pagination import Listing

TYPE_CHECKING = False
if TYPE_CHECKING:          # names for annotations only (rule 6: mcp_ref.types loads on first use)
    from typing import Any, Callable

    from mcp_ref.types import ResourceTemplate
    from mcp_ref.schema.uritemplate import UriTemplate

__all__ = ["Resources", "to_contents"]


def to_contents(value: Any, uri: str, mime_type: str | None) -> list:
    """Rule 3: what a resource function returned, as a list of resource contents."""
    from mcp_ref.types import BlobResourceContents, ReadResourceResult, TextResourceContents
    if isinstance(value, ReadResourceResult):
        return list(value.contents)
    if isinstance(value, (TextResourceContents, BlobResourceContents)):
        return [value]
    if isinstance(value, str):
        return [TextResourceContents(uri=uri, text=value, mime_type=mime_type or "text/plain")]
    if isinstance(value, (bytes, bytearray)):
        import base64
        return [BlobResourceContents(uri=uri, blob=base64.b64encode(value).decode("ascii"),
                                     mime_type=mime_type or "application/octet-stream")]
    if isinstance(value, (list, tuple)) and value and all(
            isinstance(v, (TextResourceContents, BlobResourceContents)) for v in value):
        return list(value)
    text = json.dumps(jsonable.to_jsonable(value), ensure_ascii=False)
    return [TextResourceContents(uri=uri, text=text, mime_type=mime_type or "application/json")]


class _Entry:
    """A registered resource or template (``variables`` None for a fixed URI, else the
    template's variable names): the function and what was given; the model, the
    context parameters and the parsed ``UriTemplate`` are made on first use, once
    (rules 5 and 6)."""

    __slots__ = ("uri", "fn", "options", "skip", "variables", "serial", "_item", "_inject", "_template")

    def __init__(self, uri: str, fn: Callable, options: dict, skip: tuple, variables: tuple | None):
        self.uri, self.fn, self.options, self.skip, self.variables = uri, fn, options, skip, variables
        self.serial = next_serial()
        self._item = self._inject = self._template = None

    @property
    def item(self):
        return built_once(self, "_item", _build_item)

    inject = property(injected)

    @property
    def template(self) -> UriTemplate:
        """The parsed template (a template's entry only), made for its first match (rule 6)."""
        return built_once(self, "_template", _parse_template)


def _parse_template(entry: _Entry) -> UriTemplate:
    from mcp_ref.schema.uritemplate import UriTemplate
    return UriTemplate(entry.uri)



def _build_item(entry: _Entry):
    from mcp_ref.types import Annotations, Resource, ResourceTemplate
    options, fn = entry.options, entry.fn
    common = dict(name=options["name"] or getattr(fn, "__name__", entry.uri), title=options["title"],
                  description=options["description"] if options["description"] is not None
                  else signature.description_of(fn), mime_type=options["mime_type"],
                  annotations=as_model(Annotations, options["annotations"]), icons=as_icons(options["icons"]),
                  meta=options["meta"])
    if entry.variables is not None:
        return ResourceTemplate(uri_template=entry.uri, **common)
    return Resource(uri=entry.uri, size=options["size"], **common)


def listed_item(entry: _Entry, version: str | None) -> dict:
    """Rule 5: ``entry``'s wire dict for ``version``, what ``entry.item.to_dict`` says,
    written directly when no model was built (deferred entries have no annotations and
    no icons)."""
    if entry._item is not None:
        return entry._item.to_dict(version)
    options = entry.options
    since_2025_06 = version is None or version >= "2025-06-18"
    out = {"uriTemplate" if entry.variables is not None else "uri": entry.uri,
           "name": options["name"] or entry.fn.__name__}
    if options["title"] is not None and since_2025_06:
        out["title"] = options["title"]
    description = options["description"]
    if description is None:
        description = parse_docstring(entry.fn.__doc__)[0]
    if description is not None:
        out["description"] = description
    if options["mime_type"] is not None:
        out["mimeType"] = options["mime_type"]
    if entry.variables is None and options["size"] is not None:
        out["size"] = options["size"]
    if options["meta"] is not None and since_2025_06:
        out["_meta"] = options["meta"]
    return out


_NOTHING = ()   # rule 6: the shape (and context parameters) of a plain function of no parameters
_CHECKED, _CHECKS_MAX = "resource template variables", 64       # rule 6: kept in ``Shape.derived``
_NO_OPTIONS = dict.fromkeys(("name", "title", "description", "mime_type", "size", "annotations", "icons", "meta"))


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
        self._skip = (context_class,)    # every entry's ``skip`` (rule 6: one tuple, not one per entry)
        self._static: dict = {}          # uri -> _Entry(Resource)
        self._templates: dict = {}       # uri template -> _Entry(ResourceTemplate)
        self._lock = threading.Lock()
        self._listings: dict = {}        # id(table) -> Listing (pagination.py rule 4)

    def __len__(self) -> int:
        return len(self._static) + len(self._templates)

    def resources(self) -> list:
        with self._lock:
            return [entry.item for entry in self._static.values()]

    def templates(self) -> list:
        with self._lock:
            return [entry.item for entry in self._templates.values()]

    # -- registration
    def add(self, fn, uri: str, *, name: str | None = None, title: str | None = None,
            description: str | None = None, mime_type: str | None = None, size: int | None = None,
            annotations=None, icons: list | None = None, meta: dict | None = None, build: bool = True):
        """See ``Server.add_resource``; returns the ``Resource`` or ``ResourceTemplate``, or
        None with ``build=False`` (the decorator: a plain function is kept, rule 5)."""
        if isinstance(fn, (str, bytes)):            # fixed contents
            contents = fn
            fn = lambda: contents                   # noqa: E731
            name = name or uri
        skip = self._skip
        if name is title is description is mime_type is size is annotations is icons is meta is None:
            options = _NO_OPTIONS                   # nothing given: one shared dict (read-only)
        else:
            options = {"name": name, "title": title, "description": description, "mime_type": mime_type,
                       "size": size, "annotations": annotations, "icons": icons, "meta": meta}
        if isinstance(uri, str) and "{" not in uri and "}" not in uri:
            # Rule 6: a URI without a brace is a fixed URI, with nothing to parse; a plain
            # function of no parameters has nothing to read, to check or to inject.
            variables, table = None, self._static
            shape = _NOTHING if signature_fast.takes_nothing(fn) else signature_fast.shape_of(fn, skip)
            if shape is not _NOTHING:
                # Only the names matter here: the shape's schema, without the docstring.
                params = signature.input_schema(fn, skip=skip, shape=shape, docs={} if shape is not None else None)
                if params["properties"]:
                    raise ValueError(f"resource {uri!r}: the function of a fixed URI takes no arguments "
                                     f"(it takes {', '.join(params['properties'])}); use a URI template")
        else:           # parsed here, where a bad template (or a URI that is not a string) raises
            variables, table = variables_of(uri), self._templates
            shape = signature_fast.shape_of(fn, skip)
            _check_template_function(fn, uri, variables, shape, skip)
        entry = _Entry(uri, fn, options, skip, variables)
        if shape is _NOTHING:
            entry._inject = _NOTHING
        # A function with a shape (or of no parameters) is plain, without positional-only
        # parameters (features.deferrable); the others are read here, where they raise.
        if build or annotations is not None or icons is not None or shape is None:
            entry.item, entry.inject                # errors in the annotations or icons raise here
        with self._lock:
            if uri in table:
                raise ValueError(f"a resource{' template' if variables is not None else ''} {uri!r} is already registered")
            table[uri] = entry
            self._listings.clear()
        self.owner._list_changed("notifications/resources/list_changed")
        return entry.item if build else None

    def remove(self, uri: str) -> None:
        """Unregister the resource with this URI, or the template with this URI template;
        KeyError when there is none."""
        with self._lock:
            if uri in self._static:
                del self._static[uri]
            else:
                del self._templates[uri]
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
            variables = entry.template.match(uri)
            if variables is not None:
                return entry, variables
        return None

    def has_template(self, uri_template: str) -> ResourceTemplate | None:
        with self._lock:
            entry = self._templates.get(uri_template)
        return entry.item if entry is not None else None

    def _page(self, table: dict, params: dict, list_name: str, version: str | None) -> tuple:
        """The wire dicts of a page of ``table``'s items, cut from its Listing (made once
        per change, each item's dict made once per revision: pagination.py rules 4, 5)."""
        with self._lock:
            listing = self._listings.get(id(table))
            if listing is None:
                listing = self._listings[id(table)] = Listing([(e.serial, e) for e in table.values()])
        return listing.wire(params, self.owner.page_size, list_name, version, listed_item)

    # -- handlers
    def handle_list(self, ctx, params: dict) -> dict:
        """Spec: server/resources#listing-resources."""
        page, cursor = self._page(self._static, params, "resources", ctx.protocol_version)
        result = {"resources": page}
        if cursor is not None:
            result["nextCursor"] = cursor
        return result

    def handle_templates_list(self, ctx, params: dict) -> dict:
        """Spec: server/resources#resource-templates."""
        page, cursor = self._page(self._templates, params, "resources/templates", ctx.protocol_version)
        result = {"resourceTemplates": page}
        if cursor is not None:
            result["nextCursor"] = cursor
        return result

    def handle_read(self, ctx, params: dict) -> dict:
        """Spec: server/resources#reading-resources; rules 2 and 3."""
        uri = _uri_param(params, "resources/read")
        found = self.find(uri)
        if found is None:
            raise ResourceNotFoundError("Resource not found", {"uri": uri})
        entry, variables = found
        kwargs = dict(variables)
        for name in entry.inject:
            kwargs[name] = ctx
        value = entry.fn(**kwargs)
        contents = to_contents(value, uri, entry.item.mime_type)
        from mcp_ref.types import ReadResourceResult
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


def _check_template_function(fn, uri: str, variables: tuple, shape, skip: tuple) -> None:
    """Each variable is a parameter (or ``fn`` takes ``**kwargs``); every other parameter
    has a default. Raises ValueError naming the mismatch. A function the fast path reads
    (``shape``, from ``signature_fast.shape_of``) takes no ``**kwargs``:
    ``inspect.signature`` was half of registering a template (bench/bench_growth.py).
    The variables a shape was found to fit are kept with the shape (rule 6), so the
    next function of that shape under a template of the same variables is not
    checked again."""
    if shape is not None:
        checked = shape.derived.get(_CHECKED)
        if checked is not None and variables in checked:
            return
        params = signature.input_schema(fn, skip=skip, shape=shape, docs={})
        takes_any = False
    else:
        import inspect
        params = signature.input_schema(fn, skip=skip)
        takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in inspect.signature(fn).parameters.values())
    required = params.get("required", ())
    names = set(variables)
    if (takes_any or names <= params["properties"].keys()) and names.issuperset(required):
        if shape is not None:
            checked = shape.derived.setdefault(_CHECKED, set())
            if len(checked) < _CHECKS_MAX:
                checked.add(variables)
        return                                      # (the lists below are for the message)
    unknown = [v for v in variables if v not in params["properties"] and not takes_any]
    unfilled = [p for p in required if p not in names]
    if unknown or unfilled:
        raise ValueError(f"resource template {uri!r}: "
                         + "; ".join(filter(None, [
                             unknown and f"variables without a parameter: {', '.join(unknown)}",
                             unfilled and f"required parameters not in the template: {', '.join(unfilled)}"])))
