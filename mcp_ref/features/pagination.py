"""Opaque cursors for ``tools/list``, ``resources/list``, ``resources/templates/list``
and ``prompts/list``.

Spec: server/utilities/pagination (every revision): the cursor is an opaque
string; page size is the server's choice; a missing ``nextCursor`` ends the
results; an invalid cursor SHOULD be answered -32602 (Invalid params).

Rules:

1. A cursor is base64url JSON ``{"l": list, "a": key of the last item sent,
   "i": index of the next item}``. The next page starts after that key, so
   adding or removing other items between pages skips or repeats nothing
   ("stable cursors"); when the key itself was removed, the index is used.
2. A cursor of another list, or one that does not decode, is -32602 with the
   cursor in ``data``.
3. ``page_size`` None or 0 means one page holding everything.
"""
import base64
import binascii
import json
from typing import Callable, Optional

from ..errors import InvalidParamsError

__all__ = ["paginate", "make_cursor"]


def make_cursor(list_name: str, last_key: str, next_index: int) -> str:
    data = json.dumps({"l": list_name, "a": last_key, "i": next_index}, separators=(",", ":"))
    return base64.urlsafe_b64encode(data.encode("utf-8")).decode("ascii")


def _read_cursor(list_name: str, cursor) -> tuple:
    """``(last key, next index)``; InvalidParamsError when ``cursor`` is not one of ours."""
    try:
        if not isinstance(cursor, str):
            raise ValueError("not a string")
        data = json.loads(base64.urlsafe_b64decode(cursor.encode("ascii")))
        key, index = data["a"], data["i"]
        if data["l"] != list_name or not isinstance(key, str) or not isinstance(index, int) or index < 0:
            raise ValueError("not a cursor of this list")
    except (ValueError, KeyError, TypeError, binascii.Error, UnicodeError):
        raise InvalidParamsError(f"Invalid cursor for {list_name}", {"cursor": cursor}) from None
    return key, index


def paginate(items: list, params: Optional[dict], page_size: Optional[int], list_name: str,
             key: Callable) -> tuple:
    """``(page, next_cursor or None)`` of ``items`` for a list request's ``params``.

    ``key(item)`` names an item uniquely (a tool's name, a resource's URI)."""
    cursor = (params or {}).get("cursor")
    start = 0
    if cursor is not None:
        last_key, start = _read_cursor(list_name, cursor)
        for position, item in enumerate(items):
            if key(item) == last_key:
                start = position + 1
                break
    if not page_size:
        return items[start:], None
    page = items[start:start + page_size]
    end = start + len(page)
    if end >= len(items) or not page:
        return page, None
    return page, make_cursor(list_name, key(page[-1]), end)
