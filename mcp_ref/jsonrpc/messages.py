"""JSON-RPC 2.0 messages: four small value classes, one decoder, one encoder.

Rules (Spec: basic/index#messages, basic/index#json-rpc-batching (2025-03-26 only)):

1. A request has a string or integer id (never null, never a boolean) and a
   string method; ``params``, when present, is an object. MCP adds that a
   request id is never reused within a session (the session's job, not ours).
2. A notification is a request without an id; it is never answered.
3. A response carries the id of its request and exactly one of ``result``
   (an object) or ``error`` (``{"code": int, "message": str, "data"?}``). An
   error response may carry a null id when the request's id was unreadable.
4. ``params`` and ``result`` stay plain dicts here, ``_meta`` included: this
   layer knows JSON-RPC, not MCP. Unknown top-level members are kept in
   ``extra`` and written back, so nothing a peer sent is dropped.
5. ``decode`` never returns a half-valid message: it raises ``InvalidMessage``
   with the code to answer (-32700 for bad JSON, -32600 otherwise) and the id
   when one could be read. A batch (a JSON array) decodes to a list whose
   items are messages or ``InvalidMessage`` objects; whether a batch is
   acceptable is a revision question for the session, not for this module.
6. Any frame that cannot be decoded is bad input, never a broken connection:
   invalid UTF-8, bad JSON, and JSON nested too deeply for the parser
   (``RecursionError``) all raise ``InvalidMessage(-32700)``. When the head of
   such a frame shows a response with a readable id (``peek``), the error
   carries that id and ``is_response``, so the receiver fails the request it
   answers at once instead of leaving it to time out (and does not answer it).
7. ``encode_line`` gives the bytes of one frame, UTF-8. A string holding a lone
   surrogate (``"\\ud800"`` decodes to one; so do file names read with
   ``surrogateescape``) is not Unicode text and cannot be written as UTF-8: that
   is an ``EncodeError`` like any value JSON cannot carry, raised before
   anything is written.

Fast path; it holds seq. latency <= 2x the floor: the encoder is built once (``_encode``).

This module does no I/O.
"""
from __future__ import annotations

import json

from mcp_ref.errors import INTERNAL_ERROR, INVALID_REQUEST, PARSE_ERROR, InvalidMessage
from mcp_ref.jsonrpc.peek import peek

# Why hand-written classes and not ``@dataclass``: ``dataclasses`` pulls in
# ``inspect`` and generates code at import time, a cost every stdio server
# would pay at start-up (bench/bench_stdio.py measures cold start). These four
# classes need only slots, equality, a readable repr and immutability.

_set = object.__setattr__


class _Value:
    """Slots, equality by value, a readable repr, and no assignment after ``__init__``:
    messages are values, shared between threads without copies."""
    __slots__ = ()

    def __setattr__(self, name, value):
        raise AttributeError(f"{type(self).__name__} is immutable: build a new message instead")

    def __eq__(self, other):
        if type(other) is not type(self):
            return NotImplemented
        return all(getattr(self, name) == getattr(other, name) for name in self.__slots__)

    def __repr__(self):
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__slots__)
        return f"{type(self).__name__}({fields})"


class Request(_Value):
    """A call that expects exactly one Response or ErrorResponse with the same id."""
    __slots__ = ("id", "method", "params", "extra")
    id: int | str
    method: str
    params: dict | None
    extra: dict | None

    def __init__(self, id: int | str, method: str, params: dict | None = None, extra: dict | None = None):
        _set(self, "id", id)
        _set(self, "method", method)
        _set(self, "params", params)
        _set(self, "extra", extra)

    def to_dict(self) -> dict:
        data: dict = {"jsonrpc": "2.0", "id": self.id, "method": self.method}
        if self.params is not None:
            data["params"] = self.params
        return _with_extra(data, self.extra)


class Notification(_Value):
    """A one-way message; never answered."""
    __slots__ = ("method", "params", "extra")
    method: str
    params: dict | None
    extra: dict | None

    def __init__(self, method: str, params: dict | None = None, extra: dict | None = None):
        _set(self, "method", method)
        _set(self, "params", params)
        _set(self, "extra", extra)

    def to_dict(self) -> dict:
        data: dict = {"jsonrpc": "2.0", "method": self.method}
        if self.params is not None:
            data["params"] = self.params
        return _with_extra(data, self.extra)


class Response(_Value):
    """The successful answer to the request with the same id."""
    __slots__ = ("id", "result", "extra")
    id: int | str
    result: dict
    extra: dict | None

    def __init__(self, id: int | str, result: dict, extra: dict | None = None):
        _set(self, "id", id)
        _set(self, "result", result)
        _set(self, "extra", extra)

    def to_dict(self) -> dict:
        return _with_extra({"jsonrpc": "2.0", "id": self.id, "result": self.result}, self.extra)


class ErrorObject(_Value):
    """The ``error`` member of an error response: a code, a message, optional data."""
    __slots__ = ("code", "message", "data")
    code: int
    message: str
    data: object

    def __init__(self, code: int, message: str, data: object = None):
        _set(self, "code", code)
        _set(self, "message", message)
        _set(self, "data", data)

    def to_dict(self) -> dict:
        error: dict = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error


class ErrorResponse(_Value):
    """The failed answer; ``id`` is None only when the request's id was unreadable."""
    __slots__ = ("id", "error", "extra")
    id: int | str | None
    error: ErrorObject
    extra: dict | None

    def __init__(self, id: int | str | None, error: ErrorObject, extra: dict | None = None):
        _set(self, "id", id)
        _set(self, "error", error)
        _set(self, "extra", extra)

    def to_dict(self) -> dict:
        return _with_extra({"jsonrpc": "2.0", "id": self.id, "error": self.error.to_dict()}, self.extra)


_KNOWN = frozenset(("jsonrpc", "id", "method", "params", "result", "error"))


def _with_extra(data: dict, extra: dict | None) -> dict:
    """Write the unknown top-level members back (rule 4), without overriding ours."""
    if extra:
        for key, value in extra.items():
            data.setdefault(key, value)
    return data


def is_request_id(value: object) -> bool:
    """True for a string or an integer (a bool is not an id, nor is 1.5)."""
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def error_response(invalid: InvalidMessage) -> ErrorResponse:
    """The answer to a frame that failed to decode."""
    return ErrorResponse(invalid.id, ErrorObject(invalid.code, invalid.message))


def decode(data: str | bytes):
    """Parse one frame (one JSON text) into a message, or a list for a batch.

    Raises:
        InvalidMessage: bad JSON (code -32700; id None, unless the frame's head
            shows a response: rule 6), or valid JSON that is not a JSON-RPC
            message (code -32600, with the id when readable).
    """
    try:
        obj = json.loads(data if isinstance(data, str) else str(data, "utf-8").removeprefix("\ufeff"))   # a BOM is skipped
    except ValueError as exc:              # bad JSON, and invalid UTF-8 (UnicodeDecodeError)
        raise _undecodable(data, f"Parse error: {exc}") from None
    except RecursionError:                 # nested deeper than the parser goes
        raise _undecodable(data, "Parse error: the message is nested too deeply to decode") from None
    if isinstance(obj, list):
        if not obj:
            raise InvalidMessage(INVALID_REQUEST, "Invalid Request: empty batch")
        items = []
        for item in obj:
            try:
                items.append(from_dict(item))
            except InvalidMessage as bad:
                items.append(bad)
        return items
    return from_dict(obj)


def _undecodable(head: str | bytes, message: str, code: int = PARSE_ERROR) -> InvalidMessage:
    """The error for a frame that was not read (a -32700 unless ``code`` says otherwise);
    its ``head`` may still name the response it was (rule 6), so the request it answers
    fails at once."""
    bad = InvalidMessage(code, message)
    request_id, is_response = peek(head)
    if is_response and request_id is not None:         # rule 6
        bad.id, bad.is_response = request_id, True
    return bad


def oversized(head: str | bytes, size: int, limit: int) -> InvalidMessage:
    """The error for a frame of ``size`` bytes over ``limit``, skipped unread; ``head``
    is its beginning, read for a response's id as for an undecodable frame (rule 6)."""
    bad = _undecodable(head, f"Invalid Request: message of {size} bytes exceeds the limit of {limit} bytes",
                       INVALID_REQUEST)
    bad.size, bad.limit = size, limit
    return bad


def from_dict(obj: object):
    """Turn one decoded JSON value into a message; see ``decode`` for errors.

    A bad frame shaped like a response (no ``method``; a ``result`` or an
    ``error``) raises with ``is_response`` set, so the receiver does not answer it.
    """
    try:
        return _from_dict(obj)
    except InvalidMessage as bad:
        if isinstance(obj, dict) and "method" not in obj and ("result" in obj or "error" in obj):
            bad.is_response = True
        raise


def _from_dict(obj: object):
    """Rules 1 to 3, checked in wire order: an object, ``jsonrpc`` 2.0, then a
    request or notification (``method``), else a response (``result`` xor
    ``error``). The id is kept whenever it is readable, for the error answer."""
    if not isinstance(obj, dict):
        raise InvalidMessage(INVALID_REQUEST, "Invalid Request: a message must be a JSON object")
    raw_id = obj.get("id")
    readable_id: int | str | None = raw_id if is_request_id(raw_id) else None
    if obj.get("jsonrpc") != "2.0":
        raise InvalidMessage(INVALID_REQUEST, 'Invalid Request: "jsonrpc" must be "2.0"', readable_id)
    extra = None
    if len(obj) > 3 and not obj.keys() <= _KNOWN:
        extra = {k: v for k, v in obj.items() if k not in _KNOWN}
    if "method" in obj:
        method = obj["method"]
        if not isinstance(method, str):
            raise InvalidMessage(INVALID_REQUEST, 'Invalid Request: "method" must be a string', readable_id)
        params = obj.get("params")
        if "params" in obj and not isinstance(params, dict):
            raise InvalidMessage(INVALID_REQUEST, 'Invalid Request: "params" must be an object', readable_id)
        if "id" not in obj:
            return Notification(method, params, extra)
        if readable_id is None:
            raise InvalidMessage(INVALID_REQUEST, "Invalid Request: id must be a string or an integer")
        return Request(readable_id, method, params, extra)
    if "result" in obj and "error" not in obj:
        if readable_id is None:
            raise InvalidMessage(INVALID_REQUEST, "Invalid Request: response id must be a string or an integer")
        if not isinstance(obj["result"], dict):
            raise InvalidMessage(INVALID_REQUEST, 'Invalid Request: "result" must be an object', readable_id)
        return Response(readable_id, obj["result"], extra)
    if "error" in obj and "result" not in obj:
        error = obj["error"]
        if not (isinstance(error, dict) and isinstance(error.get("code"), int)
                and not isinstance(error.get("code"), bool) and isinstance(error.get("message"), str)):
            raise InvalidMessage(INVALID_REQUEST, "Invalid Request: malformed error object", readable_id)
        if raw_id is not None and readable_id is None:
            raise InvalidMessage(INVALID_REQUEST, "Invalid Request: response id must be a string or an integer")
        return ErrorResponse(raw_id, ErrorObject(error["code"], error["message"], error.get("data")), extra)
    raise InvalidMessage(INVALID_REQUEST, "Invalid Request: not a request, notification or response",
                         readable_id)


class EncodeError(ValueError):
    """A message holds a value JSON cannot carry (a set, an object, a cycle): the
    sender's bug, reported before anything is written."""


# Built once: ``json.dumps`` with options builds an encoder on every call (5.7 µs
# against 3.7 µs for a one-line tools/call result).
_encode = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode


def encode(message) -> str:
    """One line of compact JSON, no trailing newline (a list encodes a batch);
    NaN and infinities are refused (they are not JSON).

    Raises:
        EncodeError: the message holds a value JSON cannot carry.
    """
    try:
        return _encode([m.to_dict() for m in message] if isinstance(message, list) else message.to_dict())
    except (TypeError, ValueError, RecursionError) as exc:
        raise EncodeError(f"cannot encode the message as JSON: {exc}") from None


def encode_line(message) -> bytes:
    """``encode`` as UTF-8 bytes with the closing newline: one stdio frame (rule 7).

    Raises:
        EncodeError: the message holds a value JSON cannot carry, or text that is
            not Unicode (a lone surrogate).
    """
    try:
        return (encode(message) + "\n").encode("utf-8")
    except UnicodeEncodeError as exc:
        raise unencodable_text(exc) from None


class NotUnicode(EncodeError):
    """A message holds text that is not Unicode (a lone surrogate): UTF-8 cannot carry it (rule 7)."""


def unencodable_text(exc: UnicodeEncodeError) -> NotUnicode:
    """The error for the text of ``exc``, which UTF-8 cannot carry (rule 7)."""
    return NotUnicode(f"cannot encode the message as UTF-8: it holds {ascii(exc.object[exc.start:exc.end])}, "
                      f"a lone surrogate, which is not Unicode text")


def replace_unencodable(reply):
    """``reply`` with every message JSON (or UTF-8, rule 7) cannot carry replaced by a -32603 error."""
    if isinstance(reply, list):
        return [replace_unencodable(item) for item in reply]
    try:
        encode_line(reply)
        return reply
    except EncodeError as exc:
        what = "holds text that is not Unicode (a lone surrogate)" if isinstance(exc, NotUnicode) else "is not JSON"
        error = ErrorResponse(reply.id, ErrorObject(INTERNAL_ERROR, f"Internal error: the result {what}"))
        try:
            encode_line(error)
        except EncodeError:                        # the id itself cannot be written back
            error = ErrorResponse(None, ErrorObject(INVALID_REQUEST, "Invalid Request: the request id is "
                                                                     "not Unicode text (a lone surrogate)"))
        return error
