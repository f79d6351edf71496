"""Server-Sent Events framing: pure encode and parse helpers, no I/O; and the
``Accept`` negotiation that decides between one JSON body and an SSE stream.

Rules (Spec: basic/transports#streamable-http, basic/transports#resumability-and-redelivery;
the event-stream format is the WHATWG HTML "server-sent events" section):

1. An event is ``field: value`` lines ending with a blank line. We write
   ``id``, ``event``, ``retry`` and ``data`` only; a JSON-RPC message is one
   ``data`` line (our encoder never writes a newline inside a message), and
   other text is split into one ``data`` line per line.
2. Every event we write has a ``data`` line, even an empty one: parsers such
   as sseclient-py drop events without data, and with them the ``id`` and
   ``retry`` they carry (the priming event and the polling disconnect rely
   on both).
3. Event ids name their stream: ``<stream-id>:<seq>`` (``make_event_id`` /
   ``split_event_id``), so a ``Last-Event-ID`` leads back to the one stream
   it came from and never to another.
4. ``EventParser`` is the incremental reader of both HTTP clients (and of the
   tests): feed it bytes as they arrive, it returns complete events. It follows
   the standard: a comment line starts with ``:``, a missing value is empty,
   one leading space is removed, ``\\r``, ``\\n`` and ``\\r\\n`` all end a
   line, a byte order mark opening the stream is dropped. Its work is linear in
   the bytes fed, however they are cut (a line is searched for once, each piece
   is appended to it once).
5. ``accepts(header)`` tells whether an ``Accept`` header admits JSON and SSE:
   no header admits both, wildcards count, ``q=0`` refuses (Spec:
   basic/transports#sending-messages-to-the-server: a server answers in a
   type the client accepts). A server asks on every POST.
6. With ``max_event_size`` the parser holds at most that many bytes for one
   event (its field lines and the line being read; comments are never kept).
   An event that grows past it is reported at once as an ``SseEvent`` with
   ``oversized`` set (no data), and the rest of it is read and dropped, so the
   stream goes on with the next event.
"""
from __future__ import annotations

import re
from typing import NamedTuple, Optional

__all__ = ["format_event", "format_comment", "make_event_id", "split_event_id", "SseEvent", "EventParser",
           "chunk", "accepts"]


def format_event(data: str = "", *, event: Optional[str] = None, id: Optional[str] = None,
                 retry: Optional[int] = None) -> bytes:
    """One event, UTF-8 encoded, ending with its blank line (rule 1, rule 2)."""
    if id is not None and ("\n" in id or "\r" in id or "\0" in id):
        raise ValueError("an SSE event id cannot contain a newline or NUL")
    fields = {"id": id, "event": event, "retry": None if retry is None else int(retry)}
    parts = [f"{name}: {value}\n" for name, value in fields.items() if value is not None]
    lines = data.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    parts.extend(f"data: {line}\n" if line else "data:\n" for line in lines)
    parts.append("\n")
    return "".join(parts).encode("utf-8")


def format_comment(text: str = "") -> bytes:
    """A comment line (ignored by parsers; keeps an idle connection alive)."""
    return f": {text}\n\n".encode("utf-8")


def chunk(data: bytes) -> bytes:
    """One HTTP/1.1 chunk of a ``Transfer-Encoding: chunked`` body (empty data: the last chunk,
    ``0\\r\\n\\r\\n``)."""
    return b"%x\r\n%s\r\n" % (len(data), data)


def make_event_id(stream_id: str, seq: int) -> str:
    """Rule 3: the id of the ``seq``-th event of ``stream_id``."""
    return f"{stream_id}:{seq}"


def split_event_id(event_id: str) -> Optional[tuple]:
    """``(stream_id, seq)`` for an id made by ``make_event_id``; None for anything else."""
    stream_id, sep, seq = event_id.rpartition(":")
    if not stream_id or not (seq.isascii() and seq.isdigit()):      # (no ":" leaves stream_id empty)
        return None
    return stream_id, int(seq)


class SseEvent(NamedTuple):
    """One parsed event. A named tuple, not a ``@dataclass``: ``dataclasses`` loads
    ``inspect`` (and ``ast``, ``dis``, ``tokenize``), a start-up cost every HTTP server
    would pay for a class only clients use (bench/bench_http.py, cold start)."""

    data: str = ""
    event: str = "message"
    id: Optional[str] = None
    retry: Optional[int] = None
    oversized: int = 0     # rule 6: bytes held when the event outgrew the limit (0: it did not)


_LINE_END = re.compile(rb"\r\n|\r|\n")


class EventParser:
    """Incremental event-stream parser (rules 4 and 6): ``feed(bytes) -> [SseEvent]``.

    Events are returned even when their data is empty, so a caller sees the
    ``id`` and ``retry`` of a priming event. ``last_event_id`` follows the
    standard: it keeps the last id seen, across events. ``max_event_size``
    (bytes, 0 for none) bounds what one event may hold (rule 6). ``received``
    counts the bytes fed.
    """

    def __init__(self, max_event_size: int = 0):
        self.max_event_size = max_event_size
        self._line = bytearray()             # what is kept of the line not ended yet
        self._line_bytes = 0                 # bytes of the line not ended yet, kept or not
        self._comment = False                # the line not ended yet is a comment: nothing of it is kept
        self._skip_lf = False                # the last feed ended in \r: a \n starting the next one is its pair
        self._skipping = False               # rule 6: the rest of an oversized event is dropped
        self.received = 0                    # bytes fed so far
        self._fields: dict = {}
        self._data: list = []
        self._size = 0                       # bytes held for the current event
        self.last_event_id: Optional[str] = None

    def feed(self, data: bytes) -> list:
        if not data:
            return []
        events: list = []
        start = 1 if self._skip_lf and data[:1] == b"\n" else 0
        if not self.received and data.startswith(b"\xef\xbb\xbf"):     # a byte order mark opening the stream is dropped
            start = 3
        self.received += len(data)
        for end in _LINE_END.finditer(data, start):
            self._take(data[start:end.start()])
            events.append(self._end_line())
            start = end.end()
        self._take(data[start:])
        events.append(self._overflow())
        self._skip_lf = data.endswith(b"\r")
        return [event for event in events if event is not None]

    def _take(self, piece: bytes) -> None:
        """Keep a piece of the current line (nothing of a comment, or of an event being skipped)."""
        if not self._line_bytes and piece[:1] == b":":
            self._comment = True
        self._line_bytes += len(piece)
        if not (self._comment or self._skipping):
            self._line += piece

    def _end_line(self) -> Optional[SseEvent]:
        line, blank, ignored = self._line, not self._line_bytes, self._comment or self._skipping
        self._line, self._line_bytes, self._comment = bytearray(), 0, False
        if blank:
            return self._dispatch()
        return None if ignored else self._field(line)

    def _overflow(self) -> Optional[SseEvent]:
        """Rule 6: an event grown past the limit is reported now and the rest of it dropped
        (None while it is within the limit, or already reported)."""
        size = self._size + len(self._line)
        if not self.max_event_size or self._skipping or size <= self.max_event_size:
            return None
        self._skipping = True
        self._line, self._data = bytearray(), []
        return SseEvent(event=self._fields.get("event") or "message", id=self._fields.get("id"), oversized=size)

    def _dispatch(self) -> Optional[SseEvent]:
        """A blank line ends the event (an oversized one was reported already)."""
        skipped, fields, data = self._skipping, self._fields, self._data
        self._skipping, self._fields, self._data, self._size = False, {}, [], 0
        if skipped or (not fields and not data):
            return None
        return SseEvent(data="\n".join(data), event=fields.get("event") or "message", id=fields.get("id"),
                        retry=fields.get("retry"))

    def _field(self, raw: bytearray) -> Optional[SseEvent]:
        self._size += len(raw)
        event = self._overflow()
        if event is not None:
            return event
        name, _, value = raw.decode("utf-8", "replace").partition(":")
        value = value.removeprefix(" ")
        if name == "data":
            self._data.append(value)
        elif name == "id" and "\0" not in value:
            self._fields["id"] = value
            self.last_event_id = value
        elif name == "event":
            self._fields["event"] = value
        elif name == "retry" and value.isascii() and value.isdigit():
            self._fields["retry"] = int(value)
        return None


def accepts(header: Optional[str]) -> tuple:
    """``(json, sse)``: what an ``Accept`` header admits (none at all admits both)."""
    if not header or not header.strip():
        return True, True
    json_ok = sse_ok = False
    for part in header.split(","):
        media, *params = part.split(";")
        media = media.strip().lower()
        qs = [value for key, _, value in (param.partition("=") for param in params) if key.strip().lower() == "q"]
        try:
            quality = float(qs[-1]) if qs else 1.0      # the last q counts
        except ValueError:
            quality = 0.0
        if quality <= 0:
            continue
        json_ok = json_ok or media in ("*/*", "application/json", "application/*")
        sse_ok = sse_ok or media in ("*/*", "text/event-stream", "text/*")
    return json_ok, sse_ok
