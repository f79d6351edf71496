"""The head of a frame that did not decode (rule 6 of jsonrpc/messages.py): is it a
response, and with which id?

A reply too large to read, or one that is not valid JSON, still fails the
request it answers at once instead of leaving it to time out, when its first
characters show ``"id"`` (and no ``"method"``). ``peek`` reads only the
top-level members that fit in the first ``PEEK_CHARS`` characters, in order,
with the JSON decoder's own reader, and never raises. Spec:
basic/index#responses. This module does no I/O.
"""
from __future__ import annotations

import json
import re

__all__ = ["peek", "PEEK_CHARS"]


# Reading the head of a frame that did not decode (rule 6). Only the top-level members
# that fit in the first PEEK_CHARS characters are read, in order, until one does not
# end there (the value nested too deeply, the part of a line too long to keep). A
# response written by mcp_ref or the official SDKs starts with "jsonrpc" and "id".
PEEK_CHARS = 4096
_SPACE = re.compile(r"[ \t\n\r]*")
_NESTED = object()                                      # a member seen whose value never ends
_value = json.JSONDecoder().raw_decode     # one JSON value at an index: (value, the index after it)


def peek(data: str | bytes) -> tuple:
    """``(id, is_response)`` as far as the head of a frame shows them: ``id`` is a
    string or integer read from a top-level ``"id"`` member (else None); ``is_response``
    is True when a top-level ``result`` or ``error`` was seen and no ``method``. Never raises."""
    if not isinstance(data, str):
        data = bytes(data[:PEEK_CHARS]).decode("utf-8", "replace")
    keys: dict = {}
    try:
        _members(data[:PEEK_CHARS], keys)
    except (ValueError, IndexError, RecursionError):
        pass                                            # the head ends (or breaks) here
    raw_id = keys.get("id")             # an id as messages.is_request_id reads one (this module stays below it)
    request_id = raw_id if isinstance(raw_id, (int, str)) and not isinstance(raw_id, bool) else None
    is_response = ("result" in keys or "error" in keys) and "method" not in keys
    return request_id, is_response


def _after_space(text: str, i: int) -> int:
    """Where the white space at ``i`` ends (``i`` itself when there is none)."""
    match = _SPACE.match(text, i)
    return match.end() if match is not None else i


def _members(text: str, keys: dict) -> None:
    """Fill ``keys`` with the top-level members of the object ``text`` begins with."""
    i = _after_space(text, 1 if text[:1] == "\ufeff" else 0)
    if text[i] != "{":
        return
    i = _after_space(text, i + 1)
    while text[i] == '"':
        key, i = _value(text, i)                        # a string: it starts with a quote
        i = _after_space(text, i)
        if text[i] != ":":
            return
        keys[key] = _NESTED                             # seen, even when its value never ends
        keys[key], i = _value(text, _after_space(text, i + 1))
        i = _after_space(text, i)
        if text[i] != ",":
            return
        i = _after_space(text, i + 1)
