"""How the HTTP client inflates a compressed body under the size limit, which
counts the bytes after decompression (``_Inflater``: a small compressed body
must not become a huge one). Used by ``HttpClient`` (transports/http/client/common.py,
rule 5).
"""
import zlib

CHUNK = 65536                  # bytes read from the socket at a time


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
