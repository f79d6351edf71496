"""The legacy HTTP+SSE client transport (2024-11-05), HTTP transport auto-detection,
and the plumbing both HTTP clients share (typed errors, reading and cutting responses).

Spec: 2024-11-05 basic/transports#http-with-sse;
2025-11-25 basic/transports#backwards-compatibility.

Rules:

1. Constructing ``SseClientTransport`` opens ``GET url`` and waits for the
   first event, ``endpoint``, whose data is a URI. It is resolved against the
   SSE URL and must have the same origin (scheme, host and port): a server may
   not send our messages elsewhere. Otherwise ``HttpError``, and nothing is
   sent.
2. Every message is POSTed to the endpoint on the caller's thread (2xx
   expected, else ``HttpError``); everything from the server arrives as
   ``message`` events on the one stream, read by one thread (``mcp-http-sse``).
3. This transport has no resumption: when the stream ends, the connection
   has ended and ``receive()`` returns None.
4. ``AutoHttpTransport`` sends ``initialize`` with Streamable HTTP; when that
   POST fails with 400, 404 or 405 it opens the legacy transport at the same
   URL and sends ``initialize`` there. Everything after goes to whichever
   transport answered.
5. Shared with ``http_client``: every failure is an ``HttpError`` (``.status``,
   ``.body``; ``SessionExpired`` for 404 to a session id); a thread reading a
   response is woken by shutting its socket down (closing would not wake it);
   the environment (proxies, CA bundle, netrc) is read once per transport, and
   explicit ``verify``/``auth`` win over it.
"""
import json
import logging
import os
import queue
import socket
import threading
from typing import Optional
from urllib.parse import urljoin, urlsplit

from ..errors import ConnectionClosed, InvalidMessage, SessionError, require
from ..messages import Request, decode, encode
from .stdio import DEFAULT_MAX_MESSAGE_SIZE

log = logging.getLogger("mcp_ref.http")

__all__ = ["SseClientTransport", "AutoHttpTransport", "HttpError", "SessionExpired"]

CLOSED = object()              # inbox sentinel


def take(inbox):
    """The next message of a reader-fed inbox; None once closed (and for every later call)."""
    item = inbox.get()
    if item is CLOSED:
        inbox.put(CLOSED)
        return None
    return item


class HttpError(SessionError):
    """An HTTP failure: an error status (``.status``), an unusable answer or no answer at all
    (``.status`` None). ``.body`` holds the start of the response body."""

    def __init__(self, message: str, *, status: Optional[int] = None, body: str = "", url: str = ""):
        super().__init__(message)
        self.status, self.body, self.url = status, body, url


class SessionExpired(HttpError):
    """The server answered 404 to a request carrying our session id (``.session_id``): the
    session is gone."""

    session_id: Optional[str] = None


def http_session(requests, url: str, *, headers=None, auth=None, verify=True, cert=None, pool_size: int = 10):
    """A ``requests.Session`` for ``url`` and the TLS options to pass on every request (rule 5).

    The environment (proxies, ``REQUESTS_CA_BUNDLE``/``CURL_CA_BUNDLE``, ``.netrc``)
    is read once, here: requests would read it again on every request, which
    costs more than a local round trip. Explicit ``verify``/``auth`` win over it.
    """
    http = requests.Session()
    http.trust_env = False
    http.proxies.update(requests.utils.get_environ_proxies(url))
    if verify is True:
        verify = os.environ.get("REQUESTS_CA_BUNDLE") or os.environ.get("CURL_CA_BUNDLE") or True
    http.auth = auth if auth is not None else requests.utils.get_netrc_auth(url)
    adapter = requests.adapters.HTTPAdapter(pool_connections=4, pool_maxsize=pool_size)
    http.mount("http://", adapter)
    http.mount("https://", adapter)
    http.headers.update({"User-Agent": "mcp_ref"})
    http.headers.update(headers or {})
    return http, {"verify": verify, "cert": cert}


def http_error(response, what: str, cls=HttpError) -> HttpError:
    """A typed error for a response with an error status, naming the JSON-RPC error when there is one."""
    try:
        body = response.text[:2000]
    except Exception:
        body = ""
    try:
        detail = (json.loads(body).get("error") or {}).get("message") or ""
    except Exception:
        detail = body[:200].strip()
    message = f"{what}: HTTP {response.status_code} {response.reason or ''}".rstrip()
    return cls(message + (f": {detail}" if detail else ""), status=response.status_code, body=body,
               url=str(response.url))


def shutdown_response(response) -> None:
    """Wake a thread blocked reading ``response``: shut its socket down (closing alone would not)."""
    raw = getattr(response, "raw", None)
    sock = getattr(getattr(raw, "_connection", None), "sock", None)
    if sock is None:
        fp = getattr(getattr(raw, "_fp", None), "fp", None)
        sock = getattr(getattr(fp, "raw", None), "_sock", None)
    if sock is not None:
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def iter_body(response):
    """The body as it arrives: one read per chunk (``iter_content`` would wait for a full buffer)."""
    raw = response.raw
    while True:
        data = raw.read1(65536, decode_content=True)
        if not data:
            return
        yield data


def content_type(response) -> str:
    return response.headers.get("Content-Type", "").split(";")[0].strip().lower()


def settle_request(session, request_id, exc: Exception) -> bool:
    """Fail one pending request of ``session`` with a local exception (``http_client`` rule 6). Uses the
    session's ``fail_request`` when it has one, else its waiter table."""
    fail = getattr(session, "fail_request", None)
    if fail is not None:
        return bool(fail(request_id, exc))
    lock, outbound = getattr(session, "_lock", None), getattr(session, "_outbound", None)
    if lock is None or outbound is None:
        return False
    with lock:
        waiter = outbound.pop(request_id, None)
    if waiter is None:
        return False
    waiter.settle(exc)
    return True


def _origin(url: str) -> tuple:
    parts = urlsplit(url)
    default = {"http": 80, "https": 443}.get(parts.scheme)
    return parts.scheme, parts.hostname, parts.port or default


class SseClientTransport:
    """The client end of the 2024-11-05 HTTP+SSE transport (see the module rules).

    Options as ``StreamableHttpTransport`` (headers, auth, verify, cert,
    connect_timeout, read_timeout), plus ``endpoint_timeout``: seconds to wait
    for the ``endpoint`` event.
    """

    def __init__(self, url: str, *, headers: Optional[dict] = None, auth=None, verify=True, cert=None,
                 connect_timeout: float = 10.0, read_timeout: Optional[float] = None,
                 endpoint_timeout: float = 10.0, max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE):
        requests = require("requests", "requests", "the HTTP client")
        self.max_message_size = max_message_size  # the largest message read, in bytes
        self._sse = require("sseclient", "sseclient-py", "the HTTP client")
        self.url = url
        self.endpoint: Optional[str] = None
        self.session = None
        self._errors = (requests.RequestException, OSError, ValueError)
        self._http, self._tls = http_session(requests, url, headers=headers, auth=auth, verify=verify, cert=cert)
        self._timeout = (connect_timeout, read_timeout)
        self._inbox: queue.SimpleQueue = queue.SimpleQueue()
        self._closed = threading.Event()
        self._ready = threading.Event()
        self._problem: Optional[HttpError] = None
        try:
            response = self._http.get(url, headers={"Accept": "text/event-stream"}, stream=True, **self._tls,
                                      timeout=(connect_timeout, None))
        except self._errors as exc:
            self._http.close()
            raise HttpError(f"GET {url} failed: {exc}", url=url) from None
        if response.status_code != 200 or content_type(response) != "text/event-stream":
            error = http_error(response, f"GET {url} (expected an SSE stream)")
            response.close()
            self._http.close()
            raise error
        self._response = response
        self._reader = threading.Thread(target=self._read, name="mcp-http-sse", daemon=True)
        self._reader.start()
        if not self._ready.wait(endpoint_timeout):
            self._problem = HttpError(f"GET {url}: no endpoint event within {endpoint_timeout:g} s", url=url)
        if self._problem is not None:
            self.close()
            raise self._problem

    def _read(self) -> None:
        try:
            for event in self._sse.SSEClient(iter_body(self._response)).events():
                if event.event == "endpoint" and self.endpoint is None:
                    self._set_endpoint(event.data.strip())
                elif event.event == "message" and self.endpoint is not None:
                    try:
                        self._deliver(decode(event.data))
                    except InvalidMessage as bad:
                        log.warning("ignored an invalid SSE event from the server: %s", bad.message)
        except Exception as exc:                 # requests, urllib3 and socket errors alike
            if not self._closed.is_set():
                log.debug("SSE stream from %s broke: %s", self.url, exc)
        finally:
            if self.endpoint is None and self._problem is None:
                self._problem = HttpError(f"GET {self.url}: the stream ended before the endpoint event",
                                          url=self.url)
            self._ready.set()
            self._inbox.put(CLOSED)

    def _set_endpoint(self, data: str) -> None:
        """Rule 1."""
        endpoint = urljoin(self.url, data)
        if _origin(endpoint) != _origin(self.url):
            self._problem = HttpError(f"the server's endpoint {endpoint!r} is not on the origin of {self.url!r}; "
                                      "refusing to send messages there", url=self.url)
            shutdown_response(self._response)
        else:
            self.endpoint = endpoint
        self._ready.set()

    def _deliver(self, decoded) -> None:
        for message in decoded if isinstance(decoded, list) else [decoded]:
            if not isinstance(message, InvalidMessage):
                self._inbox.put(message)

    def send(self, message, related_id=None) -> None:
        """Rule 2. Raises HttpError or ConnectionClosed."""
        if self._closed.is_set():
            raise ConnectionClosed("the SSE transport is closed")
        try:
            response = self._http.post(self.endpoint, data=encode(message).encode("utf-8"), **self._tls,
                                       headers={"Content-Type": "application/json"}, timeout=self._timeout)
        except self._errors as exc:
            raise HttpError(f"POST {self.endpoint} failed: {exc}", url=self.endpoint) from None
        if response.status_code >= 300:
            raise http_error(response, f"POST {self.endpoint}")

    def receive(self):
        return take(self._inbox)

    def close(self) -> None:
        if self._closed.is_set():
            return
        self._closed.set()
        shutdown_response(self._response)
        if self._reader is not threading.current_thread():
            self._reader.join(2.0)
        self._response.close()
        self._http.close()
        self._inbox.put(CLOSED)


class AutoHttpTransport:
    """Streamable HTTP, or the legacy HTTP+SSE transport when the server wants it (rule 4).

    ``kind`` is None until the handshake, then ``"streamable-http"`` or ``"sse"``.
    Options are those of both transports (``endpoint_timeout`` for the legacy one).
    """

    FALLBACK_STATUSES = (400, 404, 405)

    def __init__(self, url: str, **options):
        from .http_client import StreamableHttpTransport     # here: http_client imports this module
        self.url = url
        self.kind: Optional[str] = None
        self._legacy_options = {k: v for k, v in options.items()
                                if k in ("headers", "auth", "verify", "cert", "connect_timeout", "read_timeout",
                                         "endpoint_timeout", "max_message_size")}
        options.pop("endpoint_timeout", None)
        self.inner = StreamableHttpTransport(url, **options)
        self._closed = False

    def send(self, message, related_id=None) -> None:
        if self.kind is None and isinstance(message, Request) and message.method == "initialize":
            try:
                self.inner.send(message, related_id)
                self.kind = "streamable-http"
                return
            except HttpError as exc:
                if exc.status not in self.FALLBACK_STATUSES:
                    raise
                log.info("POST initialize got HTTP %s: trying the legacy HTTP+SSE transport", exc.status)
            legacy = SseClientTransport(self.url, **self._legacy_options)
            legacy.session = self.inner.session
            old, self.inner = self.inner, legacy
            old.close()                          # wakes a reader blocked on it; receive() moves on
            self.kind = "sse"
        self.inner.send(message, related_id)

    def receive(self):
        while True:
            inner = self.inner
            message = inner.receive()
            if message is None and inner is not self.inner and not self._closed:
                continue                          # the abandoned Streamable transport closed
            return message

    def close(self) -> None:
        self._closed = True
        self.inner.close()

    @property
    def protocol_version(self):
        return getattr(self.inner, "protocol_version", None)

    @protocol_version.setter
    def protocol_version(self, value) -> None:
        self.inner.protocol_version = value

    @property
    def session(self):
        return self.inner.session

    @session.setter
    def session(self, value) -> None:
        self.inner.session = value
