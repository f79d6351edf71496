"""Opaque cursors for ``tools/list``, ``resources/list``, ``resources/templates/list``
and ``prompts/list``.

Spec: server/utilities/pagination (every revision): the cursor is an opaque
string; page size is the server's choice; a missing ``nextCursor`` ends the
results; an invalid cursor SHOULD be answered -32602 (Invalid params).

Rules:

1. Every registered item gets a serial number, increasing in registration
   order. A cursor is base64url JSON ``{"l": list, "n": serial of the last
   item sent}``; the next page holds the items with a larger serial. So
   adding or removing items between pages never skips or repeats one that
   stayed ("stable cursors"); items added meanwhile come at the end.
2. A cursor of another list, or one that does not decode, is -32602 with the
   cursor in ``data``.
3. ``page_size`` None or 0 means one page holding everything.
4. A page costs O(page size), not O(catalogue): a registry keeps a
   ``Listing`` (its items and their serials, in order) made on the first list
   request after a change and shared by every page until the next change; a
   cursor is found in it by binary search. Rebuilding the list for every page
   made listing n items in pages of k cost n*n/k (``bench/bench_growth.py``).
5. An item is turned into its wire dict once per protocol revision and kept
   in the ``Listing`` (``Listing.wire``), so listing again costs what
   sending does, not what building does (10,000 tools: the ``Tool`` object,
   its ``to_dict`` and schema work were ~95% of a listing). A change makes a
   new ``Listing``, which drops them; listed items are immutable models, and
   a kept dict is only ever read (encoded), never changed.
"""
from __future__ import annotations

import json
import threading
from bisect import bisect_right

from mcp_ref.errors import InvalidParamsError
from mcp_ref.server.features import next_serial

__all__ = ["Listing", "make_cursor"]


def make_cursor(list_name: str, last_serial: int) -> str:
    import base64   # here, not at the top: only a paginated list needs it (start-up time)
    data = json.dumps({"l": list_name, "n": last_serial}, separators=(",", ":"))
    return base64.urlsafe_b64encode(data.encode("utf-8")).decode("ascii")


def _read_cursor(list_name: str, cursor) -> int:
    """The serial after which the page starts; InvalidParamsError when ``cursor`` is not ours."""
    import base64
    try:
        data = json.loads(base64.urlsafe_b64decode(cursor.encode("ascii")))     # AttributeError: not a str
        serial = data["n"]
        if data["l"] != list_name or not isinstance(serial, int) or isinstance(serial, bool) or serial < 0:
            raise ValueError("not a cursor of this list")
    except (ValueError, KeyError, TypeError, AttributeError):     # binascii.Error, UnicodeError: ValueErrors
        raise InvalidParamsError(f"Invalid cursor for {list_name}", {"cursor": cursor}) from None
    return serial


class Listing:
    """A snapshot of a list in serial order: ``serials[i]`` is the serial of
    ``items[i]`` (rule 1). Never changed after it is made (rule 4), so pages are
    cut from it without a lock."""

    __slots__ = ("serials", "items", "_wire")

    def __init__(self, numbered):
        """``numbered``: ``(serial, item)`` pairs in increasing serial order."""
        self.serials = [serial for serial, _ in numbered]
        self.items = [item for _, item in numbered]
        self._wire: dict = {}               # rule 5: revision -> [wire dict or None per item]

    def _bounds(self, params: dict | None, page_size: int | None, list_name: str) -> tuple:
        cursor = (params or {}).get("cursor")
        start = 0 if cursor is None else bisect_right(self.serials, _read_cursor(list_name, cursor))
        end = len(self.items)
        if page_size and end - start > page_size:
            end = start + page_size
            return start, end, make_cursor(list_name, self.serials[end - 1])
        return start, end, None

    def page(self, params: dict | None, page_size: int | None, list_name: str) -> tuple:
        """``(items of the page, next_cursor or None)`` for a list request's ``params``."""
        start, end, cursor = self._bounds(params, page_size, list_name)
        return self.items[start:end], cursor

    def wire(self, params: dict | None, page_size: int | None, list_name: str, version: str | None,
             to_dict) -> tuple:
        """``(wire dicts of the page, next_cursor or None)``: ``to_dict(item, version)`` made
        once per item and revision (rule 5). Two threads may make the same dict at once;
        either result is the same, and storing one is atomic."""
        start, end, cursor = self._bounds(params, page_size, list_name)
        kept = self._wire.get(version) or self._wire.setdefault(version, [None] * len(self.items))
        items = self.items
        for i in range(start, end):
            if kept[i] is None:
                kept[i] = to_dict(items[i], version)
        return kept[start:end], cursor


class NamedRegistry:
    """What tools, prompts, resources and resource templates share: entries by name
    (or URI) in registration order (each with a ``serial``), a lock, ``remove``, the
    paginated list handler, and the list_changed notification. A subclass sets
    ``KIND`` (the list's name in its cursors, and the result's member unless ``KEY``
    names another), ``DUPLICATE`` (the error of a name registered twice), ``CHANGED``
    (the notification method) and ``ITEM`` (the entry attribute holding the listed object)."""

    KIND = KEY = DUPLICATE = CHANGED = ITEM = ""

    def __init__(self, owner, context_class: type):
        self.owner = owner                   # the server: page_size, _list_changed(method)
        self.context_class = context_class
        self._entries: dict = {}
        self._lock = threading.Lock()
        self._listing: Listing | None = None        # rule 4: made on demand, dropped on change

    def __len__(self) -> int:
        return len(self._entries)

    def entries(self) -> list:
        """The registered entries, in registration order."""
        with self._lock:
            return list(self._entries.values())

    def list(self) -> list:
        """The registered objects, in registration order."""
        return [getattr(entry, self.ITEM) for entry in self.entries()]

    def get(self, name: str):
        """The registered object of that name (the entry's ``ITEM``), or None."""
        entry = self._entries.get(name)
        return getattr(entry, self.ITEM) if entry is not None else None

    def _register(self, name: str, entry) -> None:
        with self._lock:
            if name in self._entries:
                raise ValueError(self.DUPLICATE.format(name))
            entry.serial = next_serial()            # rule 1: drawn under the lock, so in the table's order
            self._entries[name] = entry
            self._listing = None
        self.owner._list_changed(self.CHANGED)

    def remove(self, name: str) -> None:
        """Unregister by name; KeyError when there is none of that name."""
        with self._lock:
            del self._entries[name]
            self._listing = None
        self.owner._list_changed(self.CHANGED)

    def _wire(self, entry, version: str | None) -> dict:
        """An entry's dict in a listing for ``version``: its model's ``to_dict`` (``Tools._wire``
        shares one per tool shape)."""
        return getattr(entry, self.ITEM).to_dict(version)

    def handle_list(self, ctx, params: dict) -> dict:
        """Spec: server/tools#listing-tools, server/prompts#listing-prompts,
        server/resources#listing-resources, server/resources#resource-templates, server/utilities/pagination."""
        with self._lock:
            listing = self._listing
            if listing is None:
                listing = self._listing = Listing([(entry.serial, entry) for entry in self._entries.values()])
        page, cursor = listing.wire(params, self.owner.page_size, self.KIND, ctx.protocol_version, self._wire)
        key = self.KEY or self.KIND
        return {key: page, "nextCursor": cursor} if cursor is not None else {key: page}
