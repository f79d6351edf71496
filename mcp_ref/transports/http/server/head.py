"""A request's head (request line and header fields) as ``http_handler`` reads it off the
socket, in place of ``BaseHTTPRequestHandler.parse_request``. Spec: RFC 9112 §2-5 and §9.3,
RFC 9110 §5 and §10.1.1; basic/transports#streamable-http.

Why not ``http.server``'s own: it hands the header section to the email package
(``http.client.parse_headers``), which splits, classifies and re-joins every line
through its feed parser and header policy: 43 µs for the nine lines ``requests``
sends, against 13 µs here, where a field line is one bounded ``readline`` and one
regular expression, which states the grammar it checks. In ``bench/bench_http.py``
the server's CPU per ``tools/call`` went from 250 to 190 µs (1.60× the floor's to
1.30×; bench/README.md, "Issue 17, target 7, third pass"). The email parser was also more
lenient than RFC 9112 allows: a bare CR split a line in two (a way to smuggle a
second header past a proxy), a line without a colon silently ended the header
section, folded lines were kept with their CRLF inside the value.

Rules:

1. Request line (RFC 9112 §3): ``method SP request-target SP HTTP-version``,
   single spaces, the method a token, the target visible ASCII; else 400
   (an HTTP/0.9 line of two words too). A version other than ``HTTP/1.x``
   gets 505. Over 64 KiB: 414, by ``http.server``'s ``handle_one_request``,
   which reads the line. Empty: the connection is closed without an answer,
   as ``http.server`` did. A target starting ``//`` keeps one slash, as
   ``http.server`` does (gh-87389).
2. Field lines (RFC 9112 §5, RFC 9110 §5.5): ``name ":" OWS value OWS``, the
   name a token with nothing between it and the colon; the value of visible
   ASCII, SP, HTAB and obs-text (bytes 0x80-0xFF, kept as Latin-1, as before);
   CR, NUL and every other control byte in a line → 400. A line that starts
   with SP or HTAB (obsolete line folding, §5.2) → 400. A line ends in CRLF or
   a bare LF (§2.2 allows a recipient to accept the bare LF, and ``http.server``
   did). The header section ends at an empty line; the connection's end before
   it → 400.
3. Bounds (status 431, RFC 6585 §5): the field lines are at most ``MAX_HEAD``
   bytes together (64 KiB, which was ``http.server``'s bound for each line,
   so up to 6.4 MB a head) and ``MAX_FIELDS`` lines (100, as before). Beyond
   either: 431, and the connection is closed; nothing past the bound is read.
4. ``Host`` given more than once → 400 (RFC 9112 §3.2: which one would the
   rebinding check of ``http_server`` rule 2 trust?). A missing ``Host`` is
   refused there (403), as before.
5. Persistence (RFC 9112 §9.3): the ``Connection`` fields are read as token
   lists; ``close`` ends the connection after the response; an HTTP/1.0
   request keeps it open only with ``keep-alive``.
6. ``Expect: 100-continue`` on an HTTP/1.1 request gets the interim
   ``100 Continue`` before the body is read (RFC 9110 §10.1.1), as
   ``http.server`` sent it; other expectations are ignored, as before.
"""
import re

__all__ = ["RequestHead", "HeadRefused", "read_head", "MAX_HEAD", "MAX_FIELDS"]

MAX_HEAD = 65536               # bytes of the field lines, CRLFs included (rule 3)
MAX_FIELDS = 100               # field lines (rule 3)

_TOKEN = rb"[!#$%&'*+\-.^_`|~0-9A-Za-z]+"
_REQUEST_LINE = re.compile(rb"(" + _TOKEN + rb") ([\x21-\x7e]+) HTTP/([0-9])\.([0-9])\r?\n")
_FIELD_LINE = re.compile(rb"(" + _TOKEN + rb"):([\t\x20-\x7e\x80-\xff]*)\r?\n")
_END = (b"\r\n", b"\n")


class HeadRefused(Exception):
    """The head cannot be read: ``status`` and a message for the answer; the connection closes."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status, self.message = status, message


class RequestHead:
    """A request's head: ``fields`` lists ``(lower-case name, value)`` in order, ``headers``
    maps each name to its last value (what ``http_core`` reads)."""

    __slots__ = ("method", "target", "version", "fields", "headers", "close", "expect_continue")

    def __init__(self, method: str, target: str, version: str, fields: list, headers: dict):
        self.method, self.target, self.version, self.fields, self.headers = method, target, version, fields, headers
        if len(headers) == len(fields):                   # each name once: the usual case
            connection = headers.get("connection")
            tokens = [t.strip().lower() for t in connection.split(",")] if connection else ()
        else:
            tokens = [t.strip().lower() for name, value in fields if name == "connection" for t in value.split(",")]
        self.close = "close" in tokens or (version == "HTTP/1.0" and "keep-alive" not in tokens)    # rule 5
        self.expect_continue = version != "HTTP/1.0" and \
            headers.get("expect", "").lower() == "100-continue"                                    # rule 6


def read_head(request_line: bytes, rfile) -> RequestHead:
    """Rules 1-4: parse ``request_line`` (read by ``http.server``, CRLF included) and read
    the header section from ``rfile``; raises ``HeadRefused``."""
    match = _REQUEST_LINE.fullmatch(request_line)
    if match is None:
        raise _bad_request_line(request_line)
    method, target, major, minor = match.groups()
    if major != b"1":
        raise HeadRefused(505, f"HTTP Version Not Supported: HTTP/{major.decode()}.{minor.decode()}")
    fields, left = [], MAX_HEAD
    readline, parse = rfile.readline, _FIELD_LINE.fullmatch
    while True:
        line = readline(max(left, 2) + 1)               # room for one byte too many, or the empty line
        if line in _END:
            break
        left -= len(line)
        if left < 0:
            raise HeadRefused(431, f"Request Header Fields Too Large: the header section exceeds {MAX_HEAD} bytes")
        if len(fields) == MAX_FIELDS:
            raise HeadRefused(431, f"Request Header Fields Too Large: more than {MAX_FIELDS} header fields")
        field = parse(line)
        if field is None:
            raise _bad_field_line(line)
        name, value = field.groups()
        fields.append((name.decode("ascii").lower(), value.strip(b" \t").decode("latin-1")))
    headers = dict(fields)
    if len(headers) != len(fields) and sum(1 for name, _ in fields if name == "host") > 1:
        raise HeadRefused(400, "Bad Request: more than one Host header field")             # rule 4
    version = "HTTP/1.0" if minor == b"0" else "HTTP/1.1"
    if target.startswith(b"//"):               # as http.server (gh-87389): one leading slash
        target = b"/" + target.lstrip(b"/")
    return RequestHead(method.decode("ascii"), target.decode("ascii"), version, fields, headers)


def _bad_request_line(line: bytes) -> HeadRefused:
    """Rule 1: the most specific reason a request line was refused."""
    words = line.rstrip(b"\r\n").split(b" ")
    version = re.fullmatch(rb"HTTP/([0-9]+)\.[0-9]+", words[-1]) if len(words) == 3 else None
    if version is not None and version.group(1) != b"1":
        return HeadRefused(505, f"HTTP Version Not Supported: {words[-1].decode('ascii')}")
    return HeadRefused(400, f"Bad Request: malformed request line {line[:80]!r}")


def _bad_field_line(line: bytes) -> HeadRefused:
    """Rule 2: the most specific reason a field line was refused."""
    shown = line[:80]
    if not line.endswith(b"\n"):
        reason = "the header section ended before its empty line"
    elif line[:1] in (b" ", b"\t"):
        reason = "obsolete line folding (RFC 9112 §5.2)"
    elif not re.match(_TOKEN + rb":", line):            # compiled only for a refused line
        reason = "a header field name must be a token followed by ':' with no whitespace"
    elif b"\r" in (line[:-2] if line.endswith(b"\r\n") else line[:-1]):
        reason = "a bare CR in a header field"
    else:
        reason = "a control character in a header field value"
    return HeadRefused(400, f"Bad Request: {reason}: {shown!r}")
