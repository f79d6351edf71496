"""The client's requests for server features other than tools, the server's notifications
and their callbacks, and the checks of tools' arguments and structured output.

``Client`` inherits ``ServerFeatureRequests``; ``client.py``'s rules hold here
too: each public method sends exactly one wire method, written literally in
its body, and refuses locally (``CapabilityNotSupported``) when the server did
not declare the capability it needs.

Rules:

1. ``list_*_page(cursor)`` fetch one page: ``(items, next_cursor)``;
   ``list_*()`` follow ``nextCursor`` to the end. Spec: server/utilities/pagination.
   The walk is bounded: a repeated cursor ends it with a warning (an empty string
   is a cursor like any other, Spec 2026-07-28: pagination#implementation-guidelines), and
   after ``max_pages`` pages (``Client(max_pages=...)``) it raises ``TooManyPages``
   (carrying the items so far), so a server that hands out a fresh cursor forever
   cannot make the client send requests without end.
2. ``complete`` needs the ``completions`` capability only from 2025-03-26
   (2024-11-05 had none) and sends ``context`` only from 2025-06-18.
   Spec: server/utilities/completion.
3. Callbacks: ``on(method, fn)`` calls ``fn(params)`` for each notification
   of ``method``, on the session's notification thread, in wire order. The
   constructor keywords ``on_log`` (``LoggingMessageNotificationParams``),
   ``on_resource_updated`` (the URI) and ``on_tools_list_changed``,
   ``on_resources_list_changed``, ``on_prompts_list_changed`` (no argument)
   are shorthands. A failing callback is logged, never raised into the session.
4. Structured output (from 2025-06-18): when the cached tool (``list_tools``
   fills the cache, ``tools/list_changed`` empties it; a tool not in the cache
   is not checked, and no request is sent to fetch it) has an ``outputSchema``,
   a successful result must carry ``structuredContent`` matching it (Spec: server/tools#output-schema:
   clients SHOULD validate). ``validate_output="strict"`` raises
   ``StructuredOutputError`` carrying the result, ``"warn"`` warns
   (``StructuredOutputWarning``) and returns it, ``"off"`` skips the check.
5. Arguments (opt-in, ``validate_input=True``): when the cached tool is known
   (as in rule 4), ``call_tool`` checks ``arguments`` against its ``inputSchema``
   before sending and raises ``ToolInputError`` (nothing is sent). Servers
   check too (Spec: server/tools#security-considerations: servers MUST validate
   inputs); checking first saves a round trip and keeps a call the schema
   forbids off the wire. The check is offline (no ``$ref`` retrieval); a schema
   beyond the flat shape needs ``jsonschema`` (``MissingDependency`` otherwise,
   raised only when such a check is due).
6. Every request goes through ``_request`` (client.py), which lets a stdio
   client with ``auto_restart`` respawn a server that exited (client_restart.py).
"""
from __future__ import annotations

import warnings
from functools import partial
from typing import Callable

from mcp_ref import types
from mcp_ref.protocol import lifecycle
from mcp_ref.client.state import ClientState
from mcp_ref.errors import (InvalidParamsError, MissingDependency, StructuredOutputError, TooManyPages, ToolInputError,
                            get_logger)
from mcp_ref.schema.validation import compile_validator
from mcp_ref.session.outbound import CancelToken
from mcp_ref.types import CallToolResult, Completion, GetPromptResult, ReadResourceResult

log = get_logger("mcp_ref.client")

__all__ = ["ServerFeatureRequests", "StructuredOutputWarning", "VALIDATE_OUTPUT_MODES", "all_pages",
           "DEFAULT_MAX_PAGES"]

VALIDATE_OUTPUT_MODES = ("strict", "warn", "off")
DEFAULT_MAX_PAGES = 1000


class StructuredOutputWarning(UserWarning):
    """A tool's structured output does not match its outputSchema (``validate_output="warn"``)."""


def all_pages(fetch_page: Callable, limit: int = DEFAULT_MAX_PAGES, method: str = "list") -> list:
    """Follow cursors to the end (rule 1): a repeated cursor ends the walk with a warning
    (an empty one is followed); ``limit`` pages without an end raise ``TooManyPages`` naming ``method``."""
    items, cursor, seen = [], None, set()
    for _ in range(limit):
        page, cursor = fetch_page(cursor)
        items.extend(page)
        if cursor is None:
            return items
        if cursor in seen:
            log.warning("%s: the server sent a repeated pagination cursor %r; stopping", method, cursor)
            return items
        seen.add(cursor)
    raise TooManyPages(method, limit, items)


class ServerFeatureRequests(ClientState):
    """Resources, prompts, completion and logging requests; callbacks; argument and output checks.
    Needs ``_request``, ``_live_session``, ``protocol_version``, ``_require``, ``_lock``, ``max_pages``,
    ``_tool_cache``, ``_listeners``, ``_checks``, ``_notification_handlers``, ``_listening``, ``modern``,
    ``on_notification``, ``validate_output`` and ``validate_input`` (set by ``Client``)."""

    def _page(self, method: str, cursor: str | None, cancel: CancelToken | None, key: str,
              decode: Callable) -> tuple:
        """One page of ``method``'s list (rule 1): ``(items, next_cursor)``, each item decoded. A page
        whose list is not a list, or whose ``nextCursor`` is not a string, is malformed
        (``InvalidParamsError``, as ``Model.from_dict`` says of a malformed object)."""
        result = self._request(method, {"cursor": cursor} if cursor is not None else None, cancel=cancel)
        items, cursor = result.get(key, []), result.get("nextCursor")
        if not isinstance(items, list):
            raise InvalidParamsError(f"malformed page: {key} must be a list, not {type(items).__name__}")
        if cursor is not None and not isinstance(cursor, str):
            raise InvalidParamsError(f"malformed page: nextCursor must be a string, not {type(cursor).__name__}")
        return [decode(item) for item in items], cursor

    # ------------------------------------------------------------------ resources
    def list_resources_page(self, cursor: str | None = None, *,
                            cancel: CancelToken | None = None) -> tuple[list[types.Resource], str | None]:
        """One page of resources: ``(resources, next_cursor)``. Spec: server/resources#listing-resources."""
        self._require("resources", "resources/list")
        return self._page("resources/list", cursor, cancel, "resources", types.Resource.from_dict)

    def list_resources(self, *, cancel: CancelToken | None = None) -> list[types.Resource]:
        """Every resource, following ``nextCursor``."""
        return all_pages(partial(self.list_resources_page, cancel=cancel), self.max_pages, "resources/list")

    def list_resource_templates_page(self, cursor: str | None = None, *, cancel: CancelToken | None = None
                                     ) -> tuple[list[types.ResourceTemplate], str | None]:
        """One page of resource templates: ``(templates, next_cursor)``.
        Spec: server/resources#resource-templates."""
        self._require("resources", "resources/templates/list")
        return self._page("resources/templates/list", cursor, cancel, "resourceTemplates", types.ResourceTemplate.from_dict)

    def list_resource_templates(self, *, cancel: CancelToken | None = None) -> list[types.ResourceTemplate]:
        """Every resource template, following ``nextCursor``."""
        return all_pages(partial(self.list_resource_templates_page, cancel=cancel), self.max_pages,
                         "resources/templates/list")

    def read_resource(self, uri: str, *, timeout: float | None = None,
                      cancel: CancelToken | None = None) -> ReadResourceResult:
        """Read a resource: ``result.contents`` holds ``TextResourceContents``/``BlobResourceContents``.
        An unknown URI raises ``ResourceNotFoundError`` (-32002). Spec: server/resources#reading-resources."""
        self._require("resources", "resources/read")
        result = self._request("resources/read", {"uri": uri}, timeout=timeout, cancel=cancel)
        return types.ReadResourceResult.from_dict(result)

    def subscribe_resource(self, uri: str, *, cancel: CancelToken | None = None) -> None:
        """Ask for ``notifications/resources/updated`` about ``uri`` (see ``on_resource_updated``).
        In the 2026-07-28 era the client's ``subscriptions/listen`` is reopened with ``uri``
        added (client/modern/era.py rule 6). Spec: server/resources#subscriptions."""
        self._require("resources.subscribe", "resources/subscribe")
        if self.modern:                 # 2026-07-28: the subscriptions/listen stream changes
            return self._relisten_for(self._listening.uris.add, uri, "resources/subscribe", cancel)
        self._request("resources/subscribe", {"uri": uri}, cancel=cancel)

    def unsubscribe_resource(self, uri: str, *, cancel: CancelToken | None = None) -> None:
        """Stop the updates about ``uri``."""
        self._require("resources.subscribe", "resources/unsubscribe")
        if self.modern:
            return self._relisten_for(self._listening.uris.discard, uri, "resources/unsubscribe", cancel)
        self._request("resources/unsubscribe", {"uri": uri}, cancel=cancel)

    def _relisten_for(self, change: Callable, uri: str, method: str, cancel: CancelToken | None) -> None:
        """2026-07-28: ``change(uri)`` in the subscribed set, then reopen the listen (client/modern/era.py rule 6)."""
        if cancel is not None and cancel.cancelled:
            raise cancel.error(method)
        change(uri)
        self._relisten()

    # ------------------------------------------------------------------ prompts
    def list_prompts_page(self, cursor: str | None = None, *,
                          cancel: CancelToken | None = None) -> tuple[list[types.Prompt], str | None]:
        """One page of prompts: ``(prompts, next_cursor)``. Spec: server/prompts#listing-prompts."""
        self._require("prompts", "prompts/list")
        return self._page("prompts/list", cursor, cancel, "prompts", types.Prompt.from_dict)

    def list_prompts(self, *, cancel: CancelToken | None = None) -> list[types.Prompt]:
        """Every prompt, following ``nextCursor``."""
        return all_pages(partial(self.list_prompts_page, cancel=cancel), self.max_pages, "prompts/list")

    def get_prompt(self, name: str, arguments: dict | None = None, *,
                   cancel: CancelToken | None = None) -> GetPromptResult:
        """Get a prompt's messages; argument values are strings. An unknown prompt or a
        missing required argument raises ``InvalidParamsError``. Spec: server/prompts#getting-a-prompt."""
        self._require("prompts", "prompts/get")
        params: dict = {"name": name}
        if arguments:
            params["arguments"] = dict(arguments)
        return types.GetPromptResult.from_dict(self._request("prompts/get", params, cancel=cancel))

    # ------------------------------------------------------------------ completion and logging
    def complete(self, ref, argument, context: dict | None = None, *,
                 cancel: CancelToken | None = None) -> Completion:
        """Completion values for one argument of a prompt or resource template (rule 2).

        ``ref``: a ``PromptReference``/``ResourceTemplateReference`` or its wire dict
        (``{"type": "ref/prompt", "name": ...}``). ``argument``: ``{"name", "value"}``
        or a ``(name, value)`` pair. ``context``: the arguments already chosen,
        ``{name: value}`` (or the wire ``{"arguments": {...}}``).
        Returns a ``Completion`` (``values``, ``total``, ``has_more``)."""
        self._live_session()             # a restarted server (rule 6) may speak another revision
        version = self.protocol_version
        if lifecycle.at_least(version, "2025-03-26"):
            self._require("completions", "completion/complete")
        if isinstance(argument, (tuple, list)):
            argument = {"name": argument[0], "value": argument[1]}
        params = {"ref": ref.to_dict(version) if hasattr(ref, "to_dict") else dict(ref), "argument": dict(argument)}
        if context is not None and lifecycle.at_least(version, "2025-06-18"):
            wire = set(context) == {"arguments"} and isinstance(context["arguments"], dict)
            params["context"] = dict(context) if wire else {"arguments": dict(context)}
        result = self._request("completion/complete", params, cancel=cancel)
        return types.Completion.from_dict(result.get("completion") or {"values": []})

    def set_logging_level(self, level: str, *, cancel: CancelToken | None = None) -> None:
        """Ask for log messages at ``level`` and above (see ``on_log``); an invalid level
        raises ``InvalidParamsError``. Spec: server/utilities/logging#setting-log-level."""
        self._require("logging", "logging/setLevel")
        if self.modern:             # 2026-07-28: no logging/setLevel; the level rides on every request's _meta
            if cancel is not None and cancel.cancelled:
                raise cancel.error("logging/setLevel")
            if level not in types.LOGGING_LEVELS:
                raise InvalidParamsError(f"Invalid log level: {level!r}; expected one of "
                                         f"{', '.join(types.LOGGING_LEVELS)}", {"level": level})
            self._log_level = level
            return
        self._request("logging/setLevel", {"level": level}, cancel=cancel)

    # ------------------------------------------------------------------ callbacks (rule 3)
    def on(self, method: str, callback: Callable) -> Callable:
        """Call ``callback(params)`` for every notification ``method``; usable as
        ``@client.on("notifications/message")``. Returns the callback."""
        with self._lock:
            self._listeners.setdefault(method, []).append(callback)
        return callback

    def _handle_notification(self, method: str, params: dict) -> None:
        """A server notification: the client's own handler of it (``_notification_handlers``),
        then the callbacks of ``on()`` and ``on_notification``."""
        if self.modern and method != "notifications/subscriptions/acknowledged" and self._listening.stale(params):
            return                              # client/modern/era.py rule 6: a replaced listen's
        handler = self._notification_handlers.get(method)
        if handler is not None:
            handler(params)
        with self._lock:
            listeners = list(self._listeners.get(method, ()))
        for callback in listeners:
            try:
                callback(params)
            except Exception:
                log.exception("callback %r for %s failed", callback, method)
        if self.on_notification is not None:
            self.on_notification(method, params)

    def _on_tools_list_changed(self, params: dict) -> None:
        """The cached tools (and their argument and output checks) are stale."""
        with self._lock:
            self._tool_cache.clear()
            self._checks.clear()

    # ------------------------------------------------------------------ arguments (rule 5)
    def _check_input(self, name: str, arguments: dict) -> None:
        with self._lock:
            tool = self._tool_cache.get(name)
        if tool is None:
            return
        problem = self._validator(tool, tool.input_schema)(arguments)
        if problem is not None:
            raise ToolInputError(name, arguments, problem)

    # ------------------------------------------------------------------ structured output (rule 4)
    def _check_output(self, name: str, result: CallToolResult) -> None:
        if self.validate_output == "off" or result.is_error or \
                not lifecycle.at_least(self.protocol_version, "2025-06-18"):
            return
        with self._lock:
            tool = self._tool_cache.get(name)
        if tool is None or tool.output_schema is None:
            return
        problem = "the result has no structuredContent" if result.structured_content is None \
            else self._validator(tool, tool.output_schema)(result.structured_content)
        if problem is None:
            return
        message = f"tool {name!r} returned structured output that does not match its outputSchema: {problem}"
        if self.validate_output == "warn":
            warnings.warn(message, StructuredOutputWarning, stacklevel=3)
            return
        raise StructuredOutputError(message, result, name)

    def _validator(self, tool, schema: dict) -> Callable:
        """The check of ``tool``'s input or output ``schema``, built once per schema (rules 4, 5).
        Without jsonschema, a schema beyond the flat shape fails an input check
        (``MissingDependency``) and passes every output check (with one warning)."""
        key = (tool.name, schema is tool.input_schema)
        with self._lock:
            cached = self._checks.get(key)
        if cached is not None and cached[0] is schema:
            return cached[1]
        try:
            check = compile_validator(schema)
        except MissingDependency:
            if schema is tool.input_schema:
                raise MissingDependency("jsonschema", "validate_input=True (client-side checks of tool arguments "
                                                      "against a non-flat inputSchema)") from None
            log.warning("jsonschema is not installed: structured tool output is not validated")
            check = lambda value: None          # noqa: E731  (finds nothing wrong)
        with self._lock:
            self._checks[key] = (schema, check)
        return check
