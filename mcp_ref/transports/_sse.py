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
4. ``EventParser`` is the incremental reader used by tests and tools: feed it
   bytes as they arrive, it returns complete events. It follows the standard:
   a comment line starts with ``:``, a missing value is empty, one leading
   space is removed, ``\\r``, ``\\n`` and ``\\r\\n`` all end a line.
5. ``accepts(header)`` tells whether an ``Accept`` header admits JSON and SSE:
   no header admits both, wildcards count, ``q=0`` refuses (Spec:
   basic/transports#sending-messages-to-the-server: a server answers in a
   type the client accepts).
"""
from dataclasses import dataclass
from typing import Optional

__all__ = ["format_event", "format_comment", "make_event_id", "split_event_id", "SseEvent", "EventParser",
           "chunk", "accepts"]


def format_event(data: str = "", *, event: Optional[str] = None, id: Optional[str] = None,
                 retry: Optional[int] = None) -> bytes:
    """One event, UTF-8 encoded, ending with its blank line (rule 1, rule 2)."""
    parts = []
    if id is not None:
        if "\n" in id or "\r" in id or "\0" in id:
            raise ValueError("an SSE event id cannot contain a newline or NUL")
        parts.append(f"id: {id}\n")
    if event is not None:
        parts.append(f"event: {event}\n")
    if retry is not None:
        parts.append(f"retry: {int(retry)}\n")
    lines = data.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    parts.extend(f"data: {line}\n" if line else "data:\n" for line in lines)
    parts.append("\n")
    return "".join(parts).encode("utf-8")


def format_comment(text: str = "") -> bytes:
    """A comment line (ignored by parsers; keeps an idle connection alive)."""
    return f": {text}\n\n".encode("utf-8")


def chunk(data: bytes) -> bytes:
    """One HTTP/1.1 chunk of a ``Transfer-Encoding: chunked`` body (empty data: the last chunk)."""
    if not data:
        return b"0\r\n\r\n"
    return b"%x\r\n%s\r\n" % (len(data), data)


def make_event_id(stream_id: str, seq: int) -> str:
    """Rule 3: the id of the ``seq``-th event of ``stream_id``."""
    return f"{stream_id}:{seq}"


def split_event_id(event_id: str) -> Optional[tuple]:
    """``(stream_id, seq)`` for an id made by ``make_event_id``; None for anything else."""
    stream_id, sep, seq = event_id.rpartition(":")
    if not sep or not stream_id or not seq.isdigit():
        return None
    return stream_id, int(seq)


@dataclass
class SseEvent:
    data: str = ""
    event: str = "message"
    id: Optional[str] = None
    retry: Optional[int] = None


class EventParser:
    """Incremental event-stream parser (rule 4): ``feed(bytes) -> [SseEvent]``.

    Events are returned even when their data is empty, so a caller sees the
    ``id`` and ``retry`` of a priming event. ``last_event_id`` follows the
    standard: it keeps the last id seen, across events.
    """

    def __init__(self):
        self._buffer = b""
        self._fields: dict = {}
        self._data: list = []
        self.last_event_id: Optional[str] = None
        self.retry: Optional[int] = None

    def feed(self, data: bytes) -> list:
        self._buffer += data
        events = []
        while True:
            cut = _line_end(self._buffer)
            if cut is None:
                return events
            line, self._buffer = self._buffer[:cut[0]], self._buffer[cut[1]:]
            event = self._line(line.decode("utf-8", "replace"))
            if event is not None:
                events.append(event)

    def _line(self, line: str) -> Optional[SseEvent]:
        if not line:
            if not self._fields and not self._data:
                return None
            event = SseEvent(data="\n".join(self._data), event=self._fields.get("event") or "message",
                             id=self._fields.get("id"), retry=self._fields.get("retry"))
            self._fields, self._data = {}, []
            return event
        if line.startswith(":"):
            return None
        name, _, value = line.partition(":")
        if value.startswith(" "):
            value = value[1:]
        if name == "data":
            self._data.append(value)
        elif name == "id" and "\0" not in value:
            self._fields["id"] = value
            self.last_event_id = value
        elif name == "event":
            self._fields["event"] = value
        elif name == "retry" and value.isdigit():
            self._fields["retry"] = int(value)
            self.retry = int(value)
        return None


def _line_end(buffer: bytes) -> Optional[tuple]:
    """``(end of line, start of next line)`` for the first complete line, else None."""
    lf, cr = buffer.find(b"\n"), buffer.find(b"\r")
    if cr == -1 or (lf != -1 and lf < cr):
        return None if lf == -1 else (lf, lf + 1)
    if cr + 1 == len(buffer):
        return None                          # a \r\n may be split across reads
    return (cr, cr + 2) if buffer[cr + 1] == 0x0A else (cr, cr + 1)


def accepts(header: Optional[str]) -> tuple:
    """``(json, sse)``: what an ``Accept`` header admits (none at all admits both)."""
    if not header or not header.strip():
        return True, True
    json_ok = sse_ok = False
    for part in header.split(","):
        media, *params = part.split(";")
        media = media.strip().lower()
        quality = 1.0
        for param in params:
            key, _, value = param.partition("=")
            if key.strip().lower() == "q":
                try:
                    quality = float(value)
                except ValueError:
                    quality = 0.0
        if quality <= 0:
            continue
        if media == "*/*":
            json_ok = sse_ok = True
        elif media in ("application/json", "application/*"):
            json_ok = True
        elif media in ("text/event-stream", "text/*"):
            sse_ok = True
    return json_ok, sse_ok
