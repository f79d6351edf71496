"""The legacy HTTP+SSE client transport (2024-11-05), and HTTP transport auto-detection.

Spec: 2024-11-05 basic/transports#http-with-sse;
2025-11-25 basic/transports#backwards-compatibility.

Rules:

1. Constructing ``SseClientTransport`` opens ``GET url`` and waits for the
   first event, ``endpoint``, whose data is a URI. It is resolved against the
   SSE URL and must have the same origin (scheme, host and port): a server may
   not send our messages elsewhere. Otherwise ``HttpError``, and nothing is
   sent. The GET's answer and the endpoint event together must come within
   ``endpoint_timeout``; the stream after that waits for data as ``read_timeout``
   says (by default, as long as the connection lasts), not as the endpoint's
   deadline: a session quiet for ``endpoint_timeout`` seconds stays open.
2. Every message is POSTed to the endpoint on the caller's thread (2xx
   expected, else ``HttpError``), within ``timeout`` seconds, answer included
   (``init_timeout`` for ``initialize``; ``Client`` sets both to its own).
   Everything from the server arrives as ``message`` events on the one
   stream, read by one thread (``mcp-http-sse``).
3. This transport has no resumption: when the stream ends, the connection
   has ended and ``receive()`` returns None.
4. ``AutoHttpTransport`` sends ``initialize`` with Streamable HTTP; when that
   POST fails with 400, 404 or 405 it opens the legacy transport at the same
   URL and sends ``initialize`` there. Everything after goes to whichever
   transport answered.
5. Redirects, deadlines, cutting connections at close and size bounds are
   those of ``http_common``: an event over ``max_message_size`` is dropped,
   and fails the one request the session waits for when there is exactly one
   (the stream says no more about whose answer it was).
"""
import contextlib
import threading
from typing import Optional
from urllib.parse import urljoin

from mcp_ref.errors import ConnectionClosed, InvalidMessage
from mcp_ref.jsonrpc.messages import Request, decode, encode
from mcp_ref.transports.http.client.streamable import StreamableHttpTransport
from mcp_ref.transports.http.client.exchange import socket_of
from mcp_ref.transports.http.client.common import (CLOSED, DEFAULT_MAX_MESSAGE_SIZE, ERROR_BODY, HttpError,
                                                   HttpTransport, ResponseTooLarge, SessionExpired, content_type,
                                                   log, origin, origin_text, settle_request)

__all__ = ["SseClientTransport", "AutoHttpTransport", "HttpError", "SessionExpired"]


class SseClientTransport(HttpTransport):
    """The client end of the 2024-11-05 HTTP+SSE transport (see the module rules).

    Options as ``StreamableHttpTransport`` (headers, auth, verify, cert,
    connect_timeout, read_timeout, max_message_size), plus ``endpoint_timeout``:
    seconds to wait for the stream and its ``endpoint`` event.
    """

    def __init__(self, url: str, *, headers: Optional[dict] = None, auth=None, verify=True, cert=None,
                 connect_timeout: float = 10.0, read_timeout: Optional[float] = None,
                 endpoint_timeout: float = 10.0, max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE):
        super().__init__(url, headers=headers, auth=auth, verify=verify, cert=cert, connect_timeout=connect_timeout,
                         read_timeout=read_timeout, max_message_size=max_message_size)
        self.endpoint: Optional[str] = None
        self._ready = threading.Event()
        self._problem: Optional[HttpError] = None
        try:
            with self._http.exchange(endpoint_timeout) as exchange:
                response = self._http.request("GET", url, headers={"Accept": "text/event-stream"})
                if response.status_code != 200 or content_type(response) != "text/event-stream":
                    raise self._http.error(response, f"GET {url} (expected an SSE stream)")
                for sock in filter(None, map(socket_of, list(exchange.conns))):
                    sock.settimeout(self._http.read_timeout)     # rule 1: the stream's reads, not the deadline's
                left = exchange.remaining()              # for the endpoint event
        except HttpError:
            self._http.close()
            raise
        self._response = response
        self._reader = threading.Thread(target=self._read, name="mcp-http-sse", daemon=True)
        self._reader.start()
        if not self._ready.wait(left):
            self._problem = HttpError(f"GET {url}: no endpoint event within {endpoint_timeout:g} s", url=url)
        if self._problem is not None:
            self.close()
            raise self._problem

    def _read(self) -> None:
        try:
            for event in self._http.events(self._response):
                if event.oversized:
                    self._oversized(event.oversized)
                elif event.event == "endpoint" and self.endpoint is None:
                    self._set_endpoint(event.data.strip())
                elif event.event == "message" and self.endpoint is not None and event.data:
                    try:
                        decoded = decode(event.data)
                    except InvalidMessage as bad:
                        log.warning("ignored an invalid SSE event from the server: %s", bad.message)
                        continue
                    for message in decoded if isinstance(decoded, list) else [decoded]:
                        if not isinstance(message, InvalidMessage):
                            self._inbox.put(message)
        except Exception as exc:                 # requests, urllib3 and socket errors alike
            if not self._closed.is_set():
                log.debug("SSE stream from %s broke: %s", self.url, exc)
        finally:
            if self.endpoint is None and self._problem is None:
                self._problem = HttpError(f"GET {self.url}: the stream ended before the endpoint event", url=self.url)
            self._ready.set()
            self._inbox.put(CLOSED)

    def _set_endpoint(self, data: str) -> None:
        """Rule 1."""
        endpoint = urljoin(self._response.url or self.url, data)
        if origin(endpoint) != origin(self.url):
            self._problem = HttpError(f"the server's endpoint on {origin_text(endpoint)} is not on the origin of "
                                      f"{self.url!r}; refusing to send messages there", url=self.url)
            self._http.cut_all()
        else:
            self.endpoint = endpoint
        self._ready.set()

    def _oversized(self, size: int) -> None:
        """Rule 5: an event too large to keep."""
        limit = self._http.max_message_size
        error = ResponseTooLarge(f"GET {self.url}: an SSE event is larger than the message size limit of {limit} "
                                 "bytes (max_message_size); dropped", limit=limit, size=size, url=self.url)
        session = self.session
        if session is not None:
            with session._lock:
                pending = list(session._outbound)
            if len(pending) == 1 and settle_request(session, pending[0], error):
                return
        log.warning("%s", error)

    def send(self, message, related_id=None) -> None:
        """Rule 2. Raises HttpError or ConnectionClosed."""
        if self._closed.is_set():
            raise ConnectionClosed("the SSE transport is closed")
        initialize = isinstance(message, Request) and message.method == "initialize"
        endpoint = self.endpoint
        assert endpoint is not None                # __init__ returns only once the endpoint is known
        what = f"POST {endpoint}"
        with self._http.exchange((self.init_timeout or self.timeout) if initialize else self.timeout):
            response = self._http.request("POST", endpoint, data=encode(message).encode("utf-8"),
                                          headers={"Content-Type": "application/json"})
            if response.status_code >= 300:
                raise self._http.error(response, what)
            # Read (and dropped) so the connection is reused; too long, or too slow: the
            # message was accepted all the same.
            with contextlib.suppress(HttpError):
                self._http.read_body(response, what, limit=ERROR_BODY)

    def close(self) -> None:
        if self._closed.is_set():
            return
        self._closed.set()
        self._http.close()                       # cuts the stream and any POST in flight
        if self._reader is not threading.current_thread():
            self._reader.join(2.0)
        self._response.close()
        self._inbox.put(CLOSED)


def _forwarded(name: str) -> property:
    """An attribute of ``AutoHttpTransport`` that is its current inner transport's."""
    return property(lambda self: getattr(self.inner, name, None), lambda self, value: setattr(self.inner, name, value))


class AutoHttpTransport:
    """Streamable HTTP, or the legacy HTTP+SSE transport when the server wants it (rule 4).

    ``kind`` is None until the handshake, then ``"streamable-http"`` or ``"sse"``.
    Options are those of both transports (``endpoint_timeout`` for the legacy one).
    """

    FALLBACK_STATUSES = (400, 404, 405)

    def __init__(self, url: str, **options):
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
            legacy.timeout, legacy.init_timeout = self.inner.timeout, self.inner.init_timeout
            old, self.inner = self.inner, legacy  # type: ignore[assignment]  # the legacy transport takes its place
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

    protocol_version = _forwarded("protocol_version")
    timeout = _forwarded("timeout")
    init_timeout = _forwarded("init_timeout")
    session = _forwarded("session")
