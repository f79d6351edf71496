"""What the HTTP client reads from a response body: SSE events one by one
(``EventStream``) and compressed bodies inflated under the size limit, which
counts the bytes after decompression (``_Inflater``: a small compressed body
must not become a huge one). Used by ``HttpClient`` (transports/http/client/common.py).
Spec: basic/transports#streamable-http (text/event-stream).
"""
import zlib
from typing import Iterable, Iterator

from mcp_ref.transports.http.sse import EventParser, SseEvent

__all__ = ["EventStream"]

CHUNK = 65536                  # bytes read from the socket at a time


class EventStream:
    """The SSE events of a response (rule 5): bounded by ``max_message_size`` per event;
    ``received`` counts the bytes read."""

    def __init__(self, chunks: Iterable[bytes], max_message_size: int):
        self._chunks = chunks
        self.parser = EventParser(max_message_size)
        self.received = 0

    def __iter__(self) -> Iterator[SseEvent]:
        for data in self._chunks:
            self.received += len(data)
            yield from self.parser.feed(data)


class _Inflater:
    """gzip or deflate, decoded in steps of at most CHUNK bytes of output (rule 5)."""

    def __init__(self, coding: str):
        self.gzip = coding != "deflate"
        self._first = True
        self._obj = zlib.decompressobj(16 + zlib.MAX_WBITS if self.gzip else zlib.MAX_WBITS)

    def feed(self, data: bytes):
        while True:
            try:
                out = self._obj.decompress(data, CHUNK)
            except zlib.error:
                if self.gzip or not self._first:
                    raise
                self._obj = zlib.decompressobj(-zlib.MAX_WBITS)   # "deflate" sent without its zlib header
                self._first = False
                continue
            self._first = False
            if out:
                yield out
            if self._obj.eof:
                data = self._obj.unused_data
                if not (self.gzip and data):
                    return                                       # what follows the stream is ignored
                self._obj = zlib.decompressobj(16 + zlib.MAX_WBITS)  # the next gzip member
                continue
            data = self._obj.unconsumed_tail
            if not data and len(out) < CHUNK:                     # all input used, no output held back
                return

    def finish(self):
        out = self._obj.flush()
        if out:
            yield out
