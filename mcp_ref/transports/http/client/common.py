"""What both HTTP clients share: typed errors, one ``requests`` session per transport
whose connections can be cut, same-origin redirects, deadlines and bounded reading.

A client connects to servers it did not write: nothing a server answers may send
our headers elsewhere, hold a thread past its time, or fill memory.
Spec: basic/transports#streamable-http, #session-management (session ids),
#security-warning; 2024-11-05 basic/transports#http-with-sse;
security_best_practices (session hijacking; a server is not trusted).

Rules:

1. Every failure is an ``HttpError`` (``.status``, ``.body``, ``.url``);
   ``SessionExpired`` for 404 to a session id, ``RedirectRefused`` for a
   redirect we do not follow, ``ResponseTooLarge`` for an answer over
   ``max_message_size``.
2. Redirects: ``requests`` never follows one. We follow a redirect only within
   the origin (scheme, host and port) of the URL we were given, at most
   ``MAX_REDIRECTS`` times: 307 and 308 keep the method and body; 301, 302 and
   303 are followed for GET only (they would turn a POST or a DELETE into a
   GET). Any other redirect raises ``RedirectRefused`` naming the target's
   origin, and nothing is sent there. Headers are read from the final answer
   only, never from a redirect (so a session id is never taken from one).
3. Connections can be cut (``http_exchange``): every connection is tracked
   with the *exchange* (one request job, or one call on the caller's thread)
   that uses it. Cutting an exchange (a cancelled request) or closing the
   client shuts the sockets down, which wakes a thread waiting for headers or
   reading a body; a connection made after the cut is shut at once. Once
   closed, no new connection is made.
4. Deadlines: an exchange may be armed with a total deadline, headers and
   body together; a timer thread shuts its connections down when it
   passes, and the socket's read timeout is never longer than what is left.
5. Bounded reading: a body, or one SSE event, holds at most
   ``max_message_size`` bytes counted after decompression. ``gzip`` and
   ``deflate`` are decoded here in steps of at most ``CHUNK`` bytes of output
   (a compression bomb stops at the limit); another ``Content-Encoding`` is
   refused. An error body is read up to ``ERROR_BODY`` bytes.
6. The environment (proxies, CA bundle, netrc) is read once per client, and
   explicit ``verify``/``auth`` win over it.
"""
import json
import logging
import os
import queue
import threading
import weakref
from typing import Any, Iterator, Optional
from urllib.parse import urljoin, urlsplit

from mcp_ref.auth.exceptions import AuthorizationError
from mcp_ref.errors import SessionError, require
from mcp_ref.transports.http.client.reading import CHUNK, inflated
from mcp_ref.transports.http.client.exchange import current_exchange, scope, shut, socket_of, tracking_adapter
from mcp_ref.transports.http.sse import EventParser, SseEvent
from mcp_ref.transports.stdio import DEFAULT_MAX_MESSAGE_SIZE         # one limit for every transport (16 MiB)

log = logging.getLogger("mcp_ref.http")     # the HTTP client modules' one logger

__all__ = ["HttpError", "SessionExpired", "RedirectRefused", "ResponseTooLarge", "HttpClient", "HttpTransport",
           "DEFAULT_MAX_MESSAGE_SIZE", "MAX_REDIRECTS"]

MAX_REDIRECTS = 5
REDIRECTS = (301, 302, 303, 307, 308)
ERROR_BODY = 65536
CLOSED = object()              # inbox sentinel


# ---------------------------------------------------------------------- errors (rule 1)
class HttpError(SessionError):
    """An HTTP failure: an error status (``.status``), an unusable answer or no answer at all
    (``.status`` None). ``.body`` holds the start of the response body; a subclass's own
    attributes come as keywords (``location=``, ``limit=``, ``size=``)."""

    def __init__(self, message: str, *, status: Optional[int] = None, body: str = "", url: str = "", **details):
        super().__init__(message)
        self.status, self.body, self.url = status, body, url
        self.__dict__.update(details)


# What a request can fail with: the HTTP failures, and an auth provider (mcp_ref.auth)
# that could not obtain a token while the request was being sent.
REQUEST_ERRORS = (HttpError, AuthorizationError)


class SessionExpired(HttpError):
    """The server answered 404 to a request carrying our session id (``.session_id``): the
    session is gone."""

    session_id: Optional[str] = None


class RedirectRefused(HttpError):
    """A redirect we do not follow (rule 2): to another origin (``.location`` is the target's
    origin), one that would change the method, or one too many. Nothing was sent to the target."""

    location = ""


class ResponseTooLarge(HttpError):
    """An answer (a body, or one SSE event) over the message size limit (``.limit`` bytes; raise
    it with ``max_message_size``). ``.size`` is how much had been read when we stopped."""

    limit = size = 0


def origin(url: str) -> tuple:
    """(scheme, host, port) with the scheme's default port filled in."""
    parts = urlsplit(url)
    try:
        port = parts.port or {"http": 80, "https": 443}.get(parts.scheme)
    except ValueError:                       # a port that is not a number: no origin at all
        return (parts.scheme, None, None)
    return parts.scheme, (parts.hostname or "").lower(), port


def origin_text(url: str) -> str:
    """An origin for a message: ``scheme://host:port``, without a path, query or credentials."""
    scheme, host, port = origin(url)
    return f"{scheme}://{host}:{port}" if host else repr(url[:200])


def visible_ascii(value: str) -> bool:
    """Spec: basic/transports#session-management: a session id holds visible ASCII only (0x21-0x7E)."""
    return bool(value) and all("\x21" <= ch <= "\x7e" for ch in value)


def content_type(response) -> str:
    return response.headers.get("Content-Type", "").split(";")[0].strip().lower()


def settle_request(session, request_id, exc: Exception) -> bool:
    """Fail one pending request of ``session`` (a ``Session``) with a local exception;
    False when it waits for no such answer."""
    with session._lock:
        waiter = session._outbound.pop(request_id, None)
    if waiter is not None:
        waiter.settle(exc)
    return waiter is not None


# ---------------------------------------------------------------------- the client
class HttpClient:
    """One transport's ``requests`` session with the rules above.

    ``url`` is the URL the transport was given: its origin is the only one
    redirects may lead to. ``read_timeout`` bounds each wait for data (None:
    only a deadline does).
    """

    def __init__(self, url: str, *, headers: Optional[dict] = None, auth=None, verify=True, cert=None,
                 pool_size: int = 10, connect_timeout: float = 10.0, read_timeout: Optional[float] = None,
                 max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE):
        requests = require("requests", "requests", "the HTTP client")
        if isinstance(max_message_size, bool) or not isinstance(max_message_size, int) or max_message_size <= 0:
            raise ValueError(f"max_message_size must be a positive number of bytes, not {max_message_size!r}")
        self.origin = origin(url)
        self.max_message_size = max_message_size
        self.connect_timeout, self.read_timeout = connect_timeout, read_timeout
        self.closed = False
        self._errors = (requests.RequestException, OSError, ValueError)
        self._lock = threading.Lock()
        self._conns: "weakref.WeakSet" = weakref.WeakSet()
        self._http = http = requests.Session()
        http.trust_env = False
        http.proxies.update(requests.utils.get_environ_proxies(url))
        if verify is True:
            verify = os.environ.get("REQUESTS_CA_BUNDLE") or os.environ.get("CURL_CA_BUNDLE") or True
        http.auth = auth if auth is not None else requests.utils.get_netrc_auth(url)
        http.verify, http.cert = verify, cert          # what requests would read from the environment
        adapter = tracking_adapter(requests, self, pool_size)
        for scheme in ("http://", "https://"):
            http.mount(scheme, adapter)
        http.headers.update({"User-Agent": "mcp_ref", "Accept-Encoding": "gzip, deflate", **(headers or {})})

    # -- exchanges (rule 3): ``with client.exchange(timeout) as ex:`` everything this thread
    # sends in the block belongs to ``ex``; a block inside another one joins the outer exchange.
    exchange = scope

    def _taken(self, conn):
        exchange = current_exchange(self)
        with self._lock:
            conn._mcp_exchange = exchange
            self._conns.add(conn)
            if exchange is not None:
                exchange.conns.add(conn)
        if self._dead(exchange):            # a cut from now on finds the connection tracked, and shuts it
            shut(socket_of(conn))
        return conn

    def _connected(self, conn) -> None:
        if self._dead(getattr(conn, "_mcp_exchange", None)):      # cut since it was taken (it is tracked)
            shut(conn.sock)
            raise ConnectionAbortedError("the HTTP exchange was cut")

    def _returned(self, conn) -> None:
        if conn is None:
            return
        with self._lock:
            exchange = getattr(conn, "_mcp_exchange", None)
            if exchange is not None:
                exchange.conns.discard(conn)
            conn._mcp_exchange = None

    def cut_all(self) -> None:
        """Shut down every connection now (close's first step)."""
        with self._lock:
            conns = list(self._conns)
        for conn in conns:
            shut(socket_of(conn))

    def close(self) -> None:
        """No new connection from now on; every open one is shut."""
        self.closed = True            # before cut_all's snapshot: a connection taken later sees it (_taken)
        self.cut_all()
        self._http.close()

    # -- requests (rule 2)
    def request(self, method: str, url: str, *, headers: Optional[dict] = None, data: Optional[bytes] = None):
        """Send one request, following redirects as rule 2 says; returns the final response
        (any status but a redirect's), its body unread. Raises HttpError."""
        exchange = current_exchange(self)
        target = url
        for _ in range(MAX_REDIRECTS + 1):
            left = exchange.remaining() if exchange is not None else None
            read = min((t for t in (self.read_timeout, left) if t is not None), default=None)   # rule 4
            try:
                response = self._http.request(method, target, headers=headers, data=data, stream=True,
                                              allow_redirects=False, timeout=(self.connect_timeout, read))
            except self._errors as exc:
                raise self.failure(f"{method} {target}", exc, url=target) from None
            if response.status_code not in REDIRECTS or not response.headers.get("Location"):
                return response
            response.close()
            target = self._redirect(method, url, target, response)
        raise RedirectRefused(f"{method} {url}: more than {MAX_REDIRECTS} redirects; not followed", url=url)

    def _redirect(self, method: str, url: str, here: str, response) -> str:
        status = response.status_code
        location = urljoin(here, response.headers["Location"].strip())
        if origin(location) != self.origin or urlsplit(location).username is not None:    # credentials: refused too
            raise RedirectRefused(f"{method} {url} was redirected ({status}) to another origin, "
                                  f"{origin_text(location)}; not followed: nothing was sent there",
                                  status=status, url=url, location=origin_text(location))
        if status in (301, 302, 303) and method != "GET":
            raise RedirectRefused(f"{method} {url} was redirected with {status}, which would turn it into a GET; "
                                  "not followed (only 307 and 308 keep the method)", status=status, url=url,
                                  location=origin_text(location))
        log.debug("%s %s: following a %s redirect within the origin", method, here, status)
        return location

    def failure(self, what: str, exc: BaseException, url: str = "") -> HttpError:
        """An HttpError for an exception raised while sending or reading (timeouts named as such)."""
        if isinstance(exc, HttpError):
            return exc
        exchange = current_exchange(self)
        if exchange is not None and exchange.expired:
            return HttpError(f"{what}: no complete answer within {exchange.timeout:g} s (timed out)", url=url)
        if self.closed:
            return HttpError(f"{what}: the transport was closed", url=url)
        if exchange is not None and exchange.cut_off:
            return HttpError(f"{what}: abandoned (the request was cancelled)", url=url)
        return HttpError(f"{what} failed: {exc}", url=url)

    def interrupted(self) -> bool:
        """True when this thread's exchange was cut or expired, or the client closed: a read
        that ended may have been cut short (a shut socket reads as the end of the body)."""
        return self._dead(current_exchange(self))

    def _dead(self, exchange) -> bool:
        """No new connection for ``exchange``: it was cut or expired, or the client closed."""
        return self.closed or (exchange is not None and (exchange.cut_off or exchange.expired))

    # -- reading (rule 5)
    def chunks(self, response):
        """The body as it arrives, decoded (rule 5): one read per chunk, never a full buffer's wait."""
        coding = response.headers.get("Content-Encoding", "").strip().lower()
        if coding not in ("", "identity", "gzip", "x-gzip", "deflate"):
            raise HttpError(f"{response.request.method} {response.url}: unsupported Content-Encoding {coding!r}",
                            status=response.status_code, url=str(response.url))
        pieces = iter(lambda: response.raw.read1(CHUNK, decode_content=False), b"")
        return pieces if coding in ("", "identity") else inflated(pieces, coding)

    def read_body(self, response, what: str, limit: Optional[int] = None) -> bytes:
        """The whole body, at most ``limit`` bytes (default: ``max_message_size``) after
        decompression; raises ResponseTooLarge at once past it, HttpError on a broken read."""
        limit = self.max_message_size if limit is None else limit
        body = bytearray()
        try:
            for data in self.chunks(response):
                body += data
                if len(body) > limit:
                    raise ResponseTooLarge(f"{what}: the answer is larger than the message size limit of {limit} "
                                           "bytes (max_message_size); not read further", limit=limit, size=len(body),
                                           status=response.status_code, url=str(response.url))
            if self.interrupted():
                raise ConnectionAbortedError("cut short")
        except Exception as exc:                 # ours, and requests, urllib3, zlib and socket errors alike
            response.close()
            raise self.failure(what, exc, url=str(response.url)) from None
        return bytes(body)

    def events(self, response, parser: Optional[EventParser] = None) -> Iterator[SseEvent]:
        """The SSE events of a response, each bounded by ``max_message_size`` (rule 5), read by
        ``parser`` (its ``received`` counts the bytes) or a new one."""
        parser = parser or EventParser(self.max_message_size)
        for data in self.chunks(response):
            yield from parser.feed(data)

    def error(self, response, what: str, cls=HttpError, **details) -> HttpError:
        """A typed error for a response with an error status, naming the JSON-RPC error when
        there is one. Reads at most ERROR_BODY bytes of the body, then closes the response."""
        try:
            raw = b""
            for data in self.chunks(response):
                raw += data[:ERROR_BODY - len(raw)]
                if len(raw) >= ERROR_BODY:
                    break
            body = raw.decode("utf-8", "replace")[:2000]
        except Exception:
            body = ""
        finally:
            response.close()
        try:
            detail = (json.loads(body).get("error") or {}).get("message") or ""
        except Exception:
            detail = body[:200].strip()
        message = f"{what}: HTTP {response.status_code} {response.reason or ''}".rstrip()
        return cls(message + (f": {str(detail)[:500]}" if detail else ""), status=response.status_code, body=body,
                   url=str(response.url), **details)


class HttpTransport:
    """What both client transports (``StreamableHttpTransport``, ``SseClientTransport``) hold:
    their ``HttpClient`` (``options``: its keywords), the bound session, the timeouts the
    ``Client`` sets, and the inbox their readers fill and ``receive()`` reads."""

    def __init__(self, url: str, **options):
        self.url = url
        self.session: Any = None              # the bound Session (set by Client.http)
        self.timeout, self.init_timeout = 60.0, 10.0       # seconds; Client sets its own
        self._http = HttpClient(url, **options)
        self._inbox: queue.SimpleQueue = queue.SimpleQueue()
        self._closed = threading.Event()

    @property
    def max_message_size(self) -> int:
        return self._http.max_message_size

    def receive(self):
        """The next message from the readers; None once closed (and for every later call)."""
        item = self._inbox.get()
        if item is CLOSED:
            self._inbox.put(CLOSED)
            return None
        return item
