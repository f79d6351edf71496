"""How the HTTP client inflates a compressed body under the size limit, which
counts the bytes after decompression (``inflated``: a small compressed body
must not become a huge one). Used by ``HttpClient`` (transports/http/client/common.py,
rule 5).
"""
import zlib

CHUNK = 65536                  # bytes read from the socket at a time


def inflated(pieces, coding: str):
    """The body ``pieces`` (gzip or deflate, as it arrives) decoded, in steps of at most
    CHUNK bytes of output (rule 5)."""
    gzip = coding != "deflate"
    obj = zlib.decompressobj(16 + zlib.MAX_WBITS if gzip else zlib.MAX_WBITS)
    first = True
    for data in pieces:
        while True:
            try:
                out = obj.decompress(data, CHUNK)
            except zlib.error:
                if gzip or not first:
                    raise
                obj = zlib.decompressobj(-zlib.MAX_WBITS)        # "deflate" sent without its zlib header
                first = False
                continue
            first = False
            if out:
                yield out
            if obj.eof:
                data = obj.unused_data
                if not (gzip and data):
                    break                                        # what follows the stream is ignored
                obj = zlib.decompressobj(16 + zlib.MAX_WBITS)    # the next gzip member
                continue
            data = obj.unconsumed_tail
            if not data and len(out) < CHUNK:                    # all input used, no output held back
                break
    yield obj.flush()
