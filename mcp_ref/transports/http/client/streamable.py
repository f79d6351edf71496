"""Streamable HTTP client transport, on requests (imported lazily).

Spec: basic/transports#streamable-http, #sending-messages-to-the-server,
#listening-for-messages-from-the-server, #resumability-and-redelivery,
#session-management, #protocol-version-header.

Rules:

1. Every message is its own POST (``Accept: application/json,
   text/event-stream``; ``Mcp-Session-Id`` once assigned; ``MCP-Protocol-Version``
   once negotiated). Notifications and responses are POSTed on the caller's
   thread (202 expected; errors raise there; order is kept), within
   ``timeout`` seconds, answer included. ``initialize`` too, within
   ``init_timeout``, so the handshake raises HTTP failures (and auto-detection
   can fall back); ``Client`` sets both to its own. Other requests are POSTed
   on pool threads (``mcp-http-post-N``, started on demand, ended after a
   while idle), since an answer may take as long as the server's handler;
   the answer (one JSON body or an SSE stream) is read there into the inbox
   ``receive()`` reads. Cancelling a request cuts its
   connections (``http_common`` rule 3).
2. Right after ``notifications/initialized``, the standalone GET stream is
   opened (on a pool thread); ``send`` returns once its status is known: 200
   is a stream, anything else (405 included) means none.
3. Answers are read as ``http_streams`` says: one JSON body, or an SSE
   stream whose event ids are remembered (bounded), so a replay after a
   reconnect delivers each message once.
4. A broken stream, or a POST stream that ended before its response, is
   resumed with GET + ``Last-Event-ID`` after the server's ``retry``, floored
   and backed off (``http_streams`` rule 3), giving up after
   ``max_reconnects`` connections in a row that failed or carried nothing. A
   disconnect is never a cancellation: nothing is sent to the server about it.
5. 404 to a request carrying a session id: the session expired. With
   ``on_session_expired="reinitialize"`` the transport redoes the handshake
   (the client's ``initialize``, ``notifications/initialized``, the GET
   stream) and retries the request once; with ``"raise"`` it fails with
   ``SessionExpired`` from then on.
6. Failures are typed (``http_common`` rule 1). A request failing on a pool
   thread fails in the bound session (``transport.session``, set by
   ``Client.http``) with that exception; unbound, it is answered with a
   JSON-RPC error with ``httpStatus``.
7. ``close()`` cuts every connection at once (POSTs waiting for headers,
   bodies being read, streams), sends DELETE (1 s at most) and joins every
   thread it started.
8. A POST's answer is tied to its request, so the request never waits in
   vain (``http_streams`` rule 1): an answer without its response, or over
   ``max_message_size``, fails it at once saying what came back.
9. The session id must be visible ASCII (0x21-0x7E), else ``HttpError``
   and it is not used. Redirects, deadlines and size bounds: ``http_common``.
10. 2026-07-28 (a request whose ``_meta`` names its protocol version): the
    ``MCP-Protocol-Version``, ``Mcp-Method`` and ``Mcp-Name`` headers mirror the
    body (transports/http/modern.py), with a tool's ``Mcp-Param-*`` headers
    (``param_headers``, from the client's tool cache); no session id is ever
    held; a 4xx whose body is a JSON-RPC error is that request's answer (so the
    client can tell a modern refusal, -32022 say, from a legacy server's); such
    a request is cancelled by cutting its connection (no
    ``notifications/cancelled`` is POSTed, and a broken modern stream is never
    resumed: it has no event ids). Spec 2026-07-28:
    basic/transports/streamable-http#request-metadata, #backward-compatibility.
"""
import contextlib
import itertools
import threading
from typing import Optional

from mcp_ref.protocol import lifecycle
from mcp_ref.errors import ConnectionClosed, InvalidMessage
from mcp_ref.session.workers import WorkerPool
from mcp_ref.jsonrpc.messages import ErrorResponse, Notification, Request, Response, decode, encode
from mcp_ref.transports.http.client.common import (CLOSED, DEFAULT_MAX_MESSAGE_SIZE, REQUEST_ERRORS,
                                                   HttpError, RedirectRefused, ResponseTooLarge, SessionExpired,
                                                   content_type, log, visible_ascii)
from mcp_ref.transports.http.modern import request_headers
from mcp_ref.transports.http.client.streams import AnswerReader, StreamState

__all__ = ["StreamableHttpTransport", "HttpError", "SessionExpired", "RedirectRefused", "ResponseTooLarge"]

ACCEPT = "application/json, text/event-stream"
MAX_THREADS = 1024        # pool threads at once: requests being answered, streams being read (rule 1)


def _modern_refusal(message: Request, exc) -> Optional[ErrorResponse]:
    """Rule 10: the JSON-RPC error a modern server sent with a 4xx to a modern request,
    as the request's answer (None when the body holds none: a legacy server's refusal)."""
    if not isinstance(exc, HttpError) or exc.status not in (400, 404) \
            or not lifecycle.is_modern_request(message.params):
        return None
    try:
        reply = decode(exc.body)
    except InvalidMessage:
        return None
    if not isinstance(reply, ErrorResponse) or reply.id not in (None, message.id):
        return None
    return ErrorResponse(message.id, reply.error)


class StreamableHttpTransport(AnswerReader):
    """The client end of Streamable HTTP (see the module rules).

    ``url`` is the MCP endpoint; ``headers`` go on every request; ``auth`` is a
    requests auth object or ``(user, password)``; ``verify`` (True, False or a CA
    bundle path) and ``cert`` (a path or ``(cert, key)``) are the TLS options;
    ``read_timeout`` bounds each wait for data of a POST's answer (never the
    GET stream's). ``on_session_expired``: rule 5; ``max_reconnects``,
    ``default_retry`` (seconds): rule 4; ``max_message_size``: the largest body
    or SSE event accepted, in bytes (16 MiB, as stdio). ``timeout`` and
    ``init_timeout`` (attributes): rule 1.
    """

    def __init__(self, url: str, *, headers: Optional[dict] = None, auth=None, verify=True, cert=None,
                 connect_timeout: float = 10.0, read_timeout: Optional[float] = None,
                 on_session_expired: str = "reinitialize", open_get_stream: bool = True,
                 max_reconnects: int = 5, default_retry: float = 1.0,
                 max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE):
        if on_session_expired not in ("reinitialize", "raise"):
            raise ValueError("on_session_expired must be 'reinitialize' or 'raise'")
        super().__init__(url, headers={"Accept": ACCEPT, **(headers or {})}, auth=auth, verify=verify, cert=cert,
                         pool_size=64, connect_timeout=connect_timeout, read_timeout=read_timeout,
                         max_message_size=max_message_size, max_reconnects=max_reconnects, default_retry=default_retry)
        self.protocol_version: Optional[str] = None
        self.get_status: Optional[int] = None  # the standalone GET's status (None: not opened)
        self.on_session_expired = on_session_expired
        self.open_get_stream = open_get_stream
        self._get_wait = (connect_timeout or 10.0) + 5.0  # for the GET's status (rule 2)
        self._pool = WorkerPool(MAX_THREADS, name="mcp-http-post")     # rules 1 and 2
        self._init: Optional[Request] = None
        self._expired: Optional[SessionExpired] = None
        # request id -> (its Exchange, cut when it is cancelled; whether it is modern: rule 10)
        self._exchanges: dict = {}
        self._reinit_lock = threading.Lock()
        self._reinit_ids = itertools.count(1)
        # rule 10: fn(tools/call params) -> the tool's Mcp-Param-* headers (set by Client.http)
        self.param_headers = None

    # ------------------------------------------------------------------ Transport interface
    def send(self, message, related_id=None) -> None:
        """Rule 1. Raises HttpError, SessionExpired or ConnectionClosed."""
        if self._closed.is_set():
            raise ConnectionClosed("the HTTP transport is closed")
        if self._expired is not None:
            raise self._expired
        if isinstance(message, Request):
            if message.method == "initialize":
                self._init = message
                with self._http.exchange(self.init_timeout or self.timeout):
                    response = self._post(message)
                    self._take_session_id(response)
                    self._consume(response, StreamState(self.session_id, message), in_background=True)
            else:
                self._submit(lambda: self._run_request(message))
            return
        method = getattr(message, "method", None)        # a notification's (a response has none)
        if method == "notifications/cancelled" and self._abandon((message.params or {}).get("requestId")):
            return                          # rule 10: cutting its connection was the cancellation
        self._post_and_forget(message)
        if method == "notifications/initialized" and self.open_get_stream:
            self._start_get_stream()

    def close(self) -> None:
        """Rule 7. Idempotent."""
        with self._lock:
            if self._closed.is_set():
                return
            self._closed.set()
        self._http.cut_all()
        if self.session_id is not None and self._expired is None:
            try:
                with self._http.exchange(1.0):
                    response = self._http.request("DELETE", self.url, headers=self._headers())
                    if response.status_code not in (200, 202, 204, 404, 405):
                        log.info("DELETE of the HTTP session answered %s", response.status_code)
                    response.close()
            except HttpError as exc:
                log.debug("DELETE of the HTTP session failed: %s", exc)
        self._http.close()
        self._inbox.put(CLOSED)
        self._pool.close()

    # ------------------------------------------------------------------ HTTP
    def _headers(self, extra: Optional[dict] = None) -> dict:
        """``extra`` and the session id and protocol version, each header whose value is known."""
        headers = {**(extra or {}), "Mcp-Session-Id": self.session_id, "MCP-Protocol-Version": self.protocol_version}
        return {name: value for name, value in headers.items() if value is not None}

    def _post(self, message):
        """POST one message; returns the response (status 2xx) or raises (rule 6)."""
        headers = self._headers({"Content-Type": "application/json"})
        if isinstance(message, Request) and lifecycle.is_modern_request(message.params):     # rule 10
            headers.update(request_headers(message.method, message.params,
                                           message.params["_meta"][lifecycle.PROTOCOL_VERSION_META]))
            if self.param_headers is not None and message.method == "tools/call":
                headers.update(self.param_headers(message.params))
        response = self._http.request("POST", self.url, data=encode(message).encode("utf-8"), headers=headers)
        return self._check(response, "POST", headers.get("Mcp-Session-Id"))

    def _get(self, last_event_id: Optional[str]):
        """Open a GET stream (rule 2, rule 4); its status within ``_get_wait``. Raises HttpError."""
        headers = self._headers({"Accept": "text/event-stream", "Last-Event-ID": last_event_id})
        with self._http.exchange(self._get_wait):
            response = self._http.request("GET", self.url, headers=headers)
            return self._check(response, "GET", headers.get("Mcp-Session-Id"))

    def _check(self, response, method: str, sent_session: Optional[str]):
        """The response when its status is usable; else close it and raise (rule 6)."""
        if response.status_code == 404 and sent_session is not None:
            raise self._http.error(response, f"{method} {self.url}: the MCP session has expired", SessionExpired,
                                   session_id=sent_session)
        if response.status_code >= 300 or (method == "GET" and response.status_code != 200):
            raise self._http.error(response, f"{method} {self.url}")
        if method == "GET" and content_type(response) != "text/event-stream":
            response.close()
            raise HttpError(f"GET {self.url}: expected text/event-stream, got {content_type(response)!r}",
                            status=response.status_code, url=self.url)
        return response

    def _take_session_id(self, response) -> None:
        """Rule 9."""
        session_id = response.headers.get("Mcp-Session-Id")
        if not session_id:
            return
        if not visible_ascii(session_id):
            response.close()
            raise HttpError(f"POST {self.url}: the server's Mcp-Session-Id {ascii(session_id[:100])} holds bytes "
                            "outside visible ASCII (0x21-0x7E); refused", status=response.status_code, url=self.url)
        self.session_id = session_id

    def _post_and_forget(self, message) -> None:
        """A notification or response (rule 1): on the caller's thread, 202 expected."""
        with self._http.exchange(self.timeout):
            try:
                response = self._post(message)
            except SessionExpired as exc:
                if self.on_session_expired == "raise" or not self._reinitialize(exc):
                    self._expired = exc
                    raise
                log.info("dropped a %s meant for the expired session", type(message).__name__)
                return
            self._consume(response, StreamState(self.session_id), in_background=True)

    def _abandon(self, request_id) -> bool:
        """A request we cancelled: its stream is not resumed, its connections are cut (rule 1).
        True when it is a modern request (rule 10: the cut was the cancellation)."""
        with self._lock:
            if len(self._abandoned) > 10000:
                self._abandoned.clear()
            self._abandoned.add(request_id)
            exchange, modern = self._exchanges.get(request_id, (None, False))
        if exchange is not None:
            exchange.cut()
        return modern

    # ------------------------------------------------------------------ answers
    def _run_request(self, message: Request) -> None:
        """On a pool thread: POST one request and read its answer (rules 1, 5)."""
        with self._http.exchange() as exchange:
            with self._lock:
                if message.id in self._abandoned:
                    self._abandoned.discard(message.id)
                    return
                self._exchanges[message.id] = (exchange, lifecycle.is_modern_request(message.params))
            try:
                for attempt in (1, 2):
                    try:
                        response = self._post(message)
                    except SessionExpired as exc:
                        if attempt == 1 and self.on_session_expired == "reinitialize" and self._reinitialize(exc):
                            continue
                        if self.on_session_expired == "raise":
                            self._expired = exc
                        return self._fail([message.id], exc)
                    except REQUEST_ERRORS as exc:      # an auth provider may fail too
                        reply = _modern_refusal(message, exc)
                        if reply is not None:           # rule 10: the server's JSON-RPC answer
                            self._inbox.put(reply)
                            return
                        return self._fail([message.id], exc)
                    return self._consume(response, StreamState(self.session_id, message))
            finally:
                with self._lock:
                    self._exchanges.pop(message.id, None)

    # ------------------------------------------------------------------ the GET stream, a new session
    def _start_get_stream(self) -> None:
        """Rule 2: open the standalone stream and wait until its status is known."""
        known = threading.Event()
        self._submit(lambda: self._run_get(known))
        known.wait(self._get_wait + 1.0)

    def _run_get(self, known: threading.Event) -> None:
        with self._http.exchange() as exchange:
            state = StreamState(self.session_id, standalone=True, exchange=exchange)
            with self._lock:
                self._get_state = state
            try:
                response = self._get(None)
                self.get_status = response.status_code
            except REQUEST_ERRORS as exc:      # an auth provider may fail too
                self.get_status = exc.status
                if exc.status != 405:
                    log.info("no standalone SSE stream: %s", exc)
                return
            finally:
                known.set()
            self._follow(response, state)

    def _reinitialize(self, expired: SessionExpired) -> bool:
        """Rule 5: a new session with the same initialize; True when requests may be retried."""
        with self._reinit_lock:
            if self._closed.is_set() or self._init is None:
                return False
            if self.session_id is not None and self.session_id != expired.session_id:
                return True                          # another thread already renewed the session
            log.info("the MCP session expired; starting a new one")
            with self._lock:
                old_get, self._get_state = self._get_state, None
            if old_get is not None:
                old_get.exchange.cut()
            self.session_id = None
            init = Request(f"mcp_ref-reinitialize-{next(self._reinit_ids)}", "initialize", self._init.params)
            state = StreamState(None, init, capture=True)
            try:
                response = self._post(init)
                self._take_session_id(response)
                self._consume(response, state)
                if not isinstance(state.captured, Response):
                    return False
                version = state.captured.result.get("protocolVersion")
                if lifecycle.is_supported(version):
                    self.protocol_version = version
                self._consume(self._post(Notification("notifications/initialized")), StreamState(self.session_id))
            except HttpError as exc:
                log.warning("re-initialization failed: %s", exc)
                return False
            if self.open_get_stream:
                self._start_get_stream()
            return True

    # ------------------------------------------------------------------ threads
    def _submit(self, job) -> None:
        with contextlib.suppress(RuntimeError):      # closing: nobody would read the answer
            self._pool.submit(job)
