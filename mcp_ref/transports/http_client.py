"""Streamable HTTP client transport, on requests and sseclient-py (imported lazily).

Spec: basic/transports#streamable-http, #sending-messages-to-the-server,
#listening-for-messages-from-the-server, #resumability-and-redelivery,
#session-management, #protocol-version-header.

Rules:

1. Every message is its own POST (``Accept: application/json,
   text/event-stream``; ``Mcp-Session-Id`` once assigned; ``MCP-Protocol-Version``
   once negotiated). Notifications and responses are POSTed on the caller's
   thread (202 expected; errors raise there; order is kept). ``initialize``
   too, so the handshake raises HTTP failures (and auto-detection can fall
   back). Other requests are POSTed on pool threads (``mcp-http-post-N``), since
   an answer may take as long as the server's handler; the answer (one JSON
   body or an SSE stream) is read there into the inbox ``receive()`` reads.
2. Right after ``notifications/initialized``, the standalone GET stream is
   opened (``mcp-http-get``); ``send`` returns once its status is known: 200
   is a stream, anything else (405 included) means none.
3. Every SSE event id is remembered (bounded): an event seen before is
   dropped, so a replay after a reconnect delivers each message once.
4. A broken stream, or a POST stream that ended before its response, is
   resumed with GET + ``Last-Event-ID`` after the ``retry`` the server sent on
   that stream (else ``default_retry``, doubling per failure), giving up after
   ``max_reconnects`` consecutive failures. A disconnect is never a
   cancellation: nothing is sent to the server about it.
5. 404 to a request carrying a session id: the session expired. With
   ``on_session_expired="reinitialize"`` the transport redoes the handshake
   (the client's ``initialize``, ``notifications/initialized``, the GET
   stream) and retries the request once; with ``"raise"`` it fails with
   ``SessionExpired`` from then on.
6. Failures are typed: ``HttpError`` (``.status``, ``.body``), ``SessionExpired``
   (404 with a session id). A request failing on a pool thread fails in the
   bound session (``transport.session``, set by ``Client.http``) with that
   exception; unbound, it is answered with a JSON-RPC error with ``httpStatus``.
7. ``close()`` shuts the GET stream's connection, sends DELETE (about 1 s at
   most), shuts every other open stream and joins every thread it started.
8. 2026-07-28 (a request whose ``_meta`` names its protocol version): the
   ``MCP-Protocol-Version``, ``Mcp-Method`` and ``Mcp-Name`` headers mirror the
   body (transports/http_modern.py), with a tool's ``Mcp-Param-*`` headers
   (``param_headers``, from the client's tool cache); no session id is ever held; a 4xx whose
   body is a JSON-RPC error is that request's answer (so the client can tell a
   modern refusal, -32022 say, from a legacy server's); such a request is
   cancelled by closing its answer (no ``notifications/cancelled`` is POSTed,
   and a broken modern stream is never resumed: it has no event ids). Spec 2026-07-28:
   basic/transports/streamable-http#request-metadata, #backward-compatibility.
"""
import collections
import itertools
import logging
import queue
import threading
from typing import Optional

from .. import lifecycle
from ..errors import INTERNAL_ERROR, ConnectionClosed, InvalidMessage, require
from ..messages import ErrorObject, ErrorResponse, Notification, Request, Response, decode, encode
from .sse_client import (CLOSED, HttpError, SessionExpired, content_type, http_error, http_session, iter_body,
                         settle_request, shutdown_response, take)
from .http_modern import request_headers
from .stdio import DEFAULT_MAX_MESSAGE_SIZE

log = logging.getLogger("mcp_ref.http")

__all__ = ["StreamableHttpTransport", "HttpError", "SessionExpired"]

ACCEPT = "application/json, text/event-stream"


def _modern_refusal(message: Request, exc: HttpError) -> Optional[ErrorResponse]:
    """Rule 8: the JSON-RPC error a modern server sent with a 4xx to a modern request,
    as the request's answer (None when the body holds none: a legacy server's refusal)."""
    if exc.status not in (400, 404) or not lifecycle.is_modern_request(message.params):
        return None
    try:
        reply = decode(exc.body)
    except InvalidMessage:
        return None
    if not isinstance(reply, ErrorResponse) or reply.id not in (None, message.id):
        return None
    return ErrorResponse(message.id, reply.error)


class _StreamState:
    """What a reader knows about one logical SSE stream (rule 4)."""

    def __init__(self, session_id, pending=(), standalone: bool = False, capture=None):
        self.session_id = session_id          # a stream belongs to one session: never resumed in another
        self.pending = set(pending)           # our request ids still unanswered on this stream
        self.standalone = standalone
        self.capture = capture                # a request id whose answer is kept, not delivered
        self.captured = None
        self.last_event_id: Optional[str] = None
        self.retry: Optional[float] = None    # seconds, as the server last said on this stream


class StreamableHttpTransport:
    """The client end of Streamable HTTP (see the module rules).

    ``url`` is the MCP endpoint; ``headers`` go on every request; ``auth`` is a
    requests auth object or ``(user, password)``; ``verify`` (True, False or a CA
    bundle path) and ``cert`` (a path or ``(cert, key)``) are the TLS options;
    ``read_timeout`` bounds the wait for a POST's answer to start (never the GET
    stream's). ``on_session_expired``: rule 5; ``max_reconnects``,
    ``default_retry`` (seconds): rule 4.
    """

    def __init__(self, url: str, *, headers: Optional[dict] = None, auth=None, verify=True, cert=None,
                 connect_timeout: float = 10.0, read_timeout: Optional[float] = None,
                 on_session_expired: str = "reinitialize", open_get_stream: bool = True,
                 max_reconnects: int = 5, default_retry: float = 1.0,
                 max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE):
        requests = require("requests", "requests", "the HTTP client")
        self.max_message_size = max_message_size  # the largest message read, in bytes
        self._sse = require("sseclient", "sseclient-py", "the HTTP client")
        if on_session_expired not in ("reinitialize", "raise"):
            raise ValueError("on_session_expired must be 'reinitialize' or 'raise'")
        self.url = url
        self.session_id: Optional[str] = None
        self.protocol_version: Optional[str] = None
        self.session = None                   # the bound Session (rule 6)
        self.get_status: Optional[int] = None  # the standalone GET's status (None: not opened)
        self.on_session_expired = on_session_expired
        self.open_get_stream = open_get_stream
        self.max_reconnects, self.default_retry = max_reconnects, default_retry
        self._errors = (requests.RequestException, OSError, ValueError)
        self._http, self._tls = http_session(requests, url, headers={"Accept": ACCEPT, **(headers or {})},
                                             auth=auth, verify=verify, cert=cert, pool_size=64)
        self._timeout = (connect_timeout, read_timeout)
        self._inbox: queue.SimpleQueue = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._closed = threading.Event()
        self._open: set = set()               # responses being read (shut down by close)
        self._threads: set = set()
        self._jobs: queue.SimpleQueue = queue.SimpleQueue()
        self._idle = self._workers = 0
        self._seen: collections.OrderedDict = collections.OrderedDict()
        self._init: Optional[Request] = None
        self._expired: Optional[SessionExpired] = None
        self._get_response = None
        self._get_state: Optional[_StreamState] = None
        self._abandoned: set = set()          # requests we cancelled: their streams are not resumed
        self._reinit_lock = threading.Lock()
        self._reinit_ids = itertools.count(1)
        self._modern_answers: dict = {}       # rule 8: a modern request's id -> its open answer
        # rule 8: fn(tools/call params) -> the tool's Mcp-Param-* headers (set by Client.http)
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
                response = self._post(message)
                self._take_session_id(response)
                self._consume(response, _StreamState(self.session_id, [message.id]), in_background=True)
            else:
                self._submit(lambda: self._run_request(message))
            return
        if isinstance(message, Notification) and message.method == "notifications/cancelled":
            with self._lock:
                if len(self._abandoned) > 10000:
                    self._abandoned.clear()
                self._abandoned.add((message.params or {}).get("requestId"))
                answer = self._modern_answers.pop((message.params or {}).get("requestId"), None)
            if answer is not None:          # rule 8: closing a modern request's stream cancels it
                shutdown_response(answer)
                return
        self._post_and_forget(message)
        if isinstance(message, Notification) and message.method == "notifications/initialized" \
                and self.open_get_stream:
            self._start_get_stream()

    def receive(self):
        return take(self._inbox)

    def close(self) -> None:
        """Rule 7. Idempotent."""
        with self._lock:
            if self._closed.is_set():
                return
            self._closed.set()
            get_response = self._get_response
        if get_response is not None:
            shutdown_response(get_response)
        if self.session_id is not None and self._expired is None:
            try:
                response = self._http.delete(self.url, headers=self._headers(), timeout=(1.0, 1.0),
                                             **self._tls)
                if response.status_code not in (200, 202, 204, 404, 405):
                    log.info("DELETE of the HTTP session answered %s", response.status_code)
                response.close()
            except self._errors as exc:
                log.debug("DELETE of the HTTP session failed: %s", exc)
        with self._lock:
            responses = list(self._open)
            workers = self._workers
        for response in responses:
            shutdown_response(response)
        for _ in range(workers):
            self._jobs.put(None)
        self._inbox.put(CLOSED)
        me = threading.current_thread()
        for thread in list(self._threads):
            if thread is not me:
                thread.join(2.0)
        self._http.close()

    # ------------------------------------------------------------------ HTTP
    def _headers(self, extra: Optional[dict] = None) -> dict:
        headers = dict(extra or {})
        if self.session_id is not None:
            headers["Mcp-Session-Id"] = self.session_id
        if self.protocol_version is not None:
            headers["MCP-Protocol-Version"] = self.protocol_version
        return headers

    def _post(self, message):
        """POST one message; returns the response (status 2xx) or raises (rule 6)."""
        sent_session = self.session_id
        headers = self._headers({"Content-Type": "application/json"})
        if isinstance(message, Request) and lifecycle.is_modern_request(message.params):     # rule 8
            headers.update(request_headers(message.method, message.params,
                                           message.params["_meta"][lifecycle.PROTOCOL_VERSION_META]))
            if self.param_headers is not None and message.method == "tools/call":
                headers.update(self.param_headers(message.params))
        try:
            response = self._http.post(self.url, data=encode(message).encode("utf-8"), stream=True,
                                       headers=headers,
                                       timeout=self._timeout, **self._tls)
        except self._errors as exc:
            raise HttpError(f"POST {self.url} failed: {exc}", url=self.url) from None
        return self._check(response, "POST", sent_session)

    def _get(self, last_event_id: Optional[str]):
        """Open a GET stream (rule 2, rule 4); raises HttpError or SessionExpired."""
        headers = self._headers({"Accept": "text/event-stream"})
        if last_event_id is not None:
            headers["Last-Event-ID"] = last_event_id
        try:
            response = self._http.get(self.url, headers=headers, stream=True, timeout=(self._timeout[0], None),
                                      **self._tls)
        except self._errors as exc:
            raise HttpError(f"GET {self.url} failed: {exc}", url=self.url) from None
        return self._check(response, "GET", headers.get("Mcp-Session-Id"))

    def _check(self, response, method: str, sent_session: Optional[str]):
        """The response when its status is usable; else close it and raise (rule 6)."""
        if response.status_code == 404 and sent_session is not None:
            error = http_error(response, f"{method} {self.url}: the MCP session has expired", SessionExpired)
            error.session_id = sent_session
        elif response.status_code >= 300 or (method == "GET" and response.status_code != 200):
            error = http_error(response, f"{method} {self.url}")
        elif method == "GET" and content_type(response) != "text/event-stream":
            error = HttpError(f"GET {self.url}: expected text/event-stream, got {content_type(response)!r}",
                              status=response.status_code, url=self.url)
        else:
            return response
        response.close()
        raise error

    def _take_session_id(self, response) -> None:
        session_id = response.headers.get("Mcp-Session-Id")
        if session_id:
            self.session_id = session_id

    def _post_and_forget(self, message) -> None:
        """A notification or response (rule 1): on the caller's thread, 202 expected."""
        try:
            response = self._post(message)
        except SessionExpired as exc:
            if self.on_session_expired == "raise" or not self._reinitialize(exc):
                self._expired = exc
                raise
            log.info("dropped a %s meant for the expired session", type(message).__name__)
            return
        self._consume(response, _StreamState(self.session_id), in_background=True)

    # ------------------------------------------------------------------ answers
    def _run_request(self, message: Request) -> None:
        """On a pool thread: POST one request and read its answer (rules 1, 5)."""
        for attempt in (1, 2):
            try:
                response = self._post(message)
            except SessionExpired as exc:
                if attempt == 1 and self.on_session_expired == "reinitialize" and self._reinitialize(exc):
                    continue
                if self.on_session_expired == "raise":
                    self._expired = exc
                return self._fail([message.id], exc)
            except HttpError as exc:
                reply = _modern_refusal(message, exc)
                if reply is not None:                   # rule 8: the server's JSON-RPC answer
                    return self._deliver(reply, _StreamState(None, [message.id]))
                return self._fail([message.id], exc)
            if not lifecycle.is_modern_request(message.params):
                return self._consume(response, _StreamState(self.session_id, [message.id]))
            with self._lock:
                self._modern_answers[message.id] = response     # rule 8: closed to cancel
            try:
                return self._consume(response, _StreamState(self.session_id, [message.id]))
            finally:
                with self._lock:
                    self._modern_answers.pop(message.id, None)

    def _consume(self, response, state: _StreamState, in_background: bool = False) -> None:
        """Deliver a POST's answer: a JSON body now, an SSE stream here or on a pool thread."""
        kind = content_type(response)
        if kind == "text/event-stream":
            if in_background:
                self._submit(lambda: self._follow(response, state))
            else:
                self._follow(response, state)
            return
        try:
            body = response.content
        except self._errors as exc:
            return self._fail(state.pending, HttpError(f"reading the answer from {self.url} failed: {exc}"))
        if response.status_code == 202 or not body.strip():
            return
        if kind != "application/json":
            return self._fail(state.pending, HttpError(f"POST {self.url}: unexpected Content-Type {kind!r}",
                                                       status=response.status_code, body=body[:2000].decode(
                                                           "utf-8", "replace"), url=self.url))
        try:
            self._deliver(decode(body), state)
        except InvalidMessage as bad:
            self._fail(state.pending, HttpError(f"POST {self.url}: invalid JSON-RPC answer: {bad.message}",
                                                status=response.status_code, url=self.url))

    def _deliver(self, decoded, state: _StreamState) -> None:
        for message in decoded if isinstance(decoded, list) else [decoded]:
            if isinstance(message, InvalidMessage):
                log.warning("ignored an invalid message from the server: %s", message.message)
                continue
            if isinstance(message, (Response, ErrorResponse)):
                state.pending.discard(message.id)
                if state.capture is not None and message.id == state.capture:
                    state.captured = message
                    continue
            self._inbox.put(message)

    def _follow(self, response, state: _StreamState) -> None:
        """Read an SSE stream to its end, resuming it as rule 4 says."""
        failures = 0
        while True:
            failures = 0 if self._read_events(response, state) else failures + 1
            with self._lock:
                dropped = state.pending & self._abandoned
                state.pending -= dropped
                self._abandoned -= dropped
            if self._closed.is_set() or (not state.standalone and not state.pending) or \
                    (state.standalone and state is not self._get_state):
                return
            if failures >= self.max_reconnects:           # connections that end at once, with nothing
                return self._fail(state.pending, HttpError(f"{self.url}: the SSE stream keeps ending at once"))
            if state.session_id != self.session_id:      # renewed (rule 5): this stream cannot resume
                return self._fail(state.pending, SessionExpired(f"{self.url}: the MCP session ended before "
                                                                "the response", status=404, url=self.url))
            if not state.standalone and state.last_event_id is None:
                return self._fail(state.pending, HttpError(
                    f"{self.url}: the SSE stream ended before the response, with no event id to resume from"))
            response = None
            while response is None:
                delay = state.retry if state.retry is not None else min(30.0, self.default_retry * 2 ** failures)
                if self._closed.wait(delay):
                    return
                try:
                    response = self._get(state.last_event_id)
                except HttpError as exc:
                    failures += 1
                    if isinstance(exc, SessionExpired) or exc.status == 405 or failures >= self.max_reconnects:
                        log.info("gave up resuming an SSE stream: %s", exc)
                        return self._fail(state.pending, exc)
            if state.standalone:
                with self._lock:
                    self._get_response = response

    def _read_events(self, response, state: _StreamState) -> int:
        """Deliver one connection's events (rule 3); returns how many bytes it carried."""
        with self._lock:
            self._open.add(response)
            closing = self._closed.is_set()
        if closing:
            shutdown_response(response)
        received = [0]
        clean = False

        def counted(chunks):
            for data in chunks:
                received[0] += len(data)
                yield data
        try:
            for event in self._sse.SSEClient(counted(iter_body(response))).events():
                if event.retry is not None and str(event.retry).isdigit():
                    state.retry = int(event.retry) / 1000.0
                if event.id:
                    state.last_event_id = event.id
                if not event.data or event.event != "message" or (event.id and self._seen_before(event.id)):
                    continue
                try:
                    self._deliver(decode(event.data), state)
                except InvalidMessage as bad:
                    log.warning("ignored an invalid SSE event from the server: %s", bad.message)
            clean = True
        except Exception as exc:                 # requests, urllib3 and socket errors alike
            if not self._closed.is_set():
                log.debug("SSE stream from %s broke: %s", self.url, exc)
        finally:
            with self._lock:
                self._open.discard(response)
            if clean:
                response.raw.release_conn()      # read to the end: the connection can be reused
            else:
                response.close()
        return received[0]

    def _seen_before(self, event_id: str) -> bool:
        with self._lock:
            if event_id in self._seen:
                return True
            self._seen[event_id] = None
            if len(self._seen) > 10000:
                self._seen.popitem(last=False)
            return False

    def _fail(self, request_ids, exc: HttpError) -> None:
        """Rule 6."""
        for request_id in list(request_ids):
            if self.session is not None and settle_request(self.session, request_id, exc):
                continue
            data = {"httpStatus": exc.status} if exc.status is not None else None
            self._inbox.put(ErrorResponse(request_id, ErrorObject(INTERNAL_ERROR, str(exc), data)))

    # ------------------------------------------------------------------ the GET stream, re-initialization
    def _start_get_stream(self) -> None:
        """Rule 2: open the standalone stream and wait until its status is known."""
        known = threading.Event()
        self._spawn(lambda: self._run_get(known), "mcp-http-get")
        known.wait((self._timeout[0] or 10.0) + 5.0)

    def _run_get(self, known: threading.Event) -> None:
        try:
            response = self._get(None)
        except HttpError as exc:
            self.get_status = exc.status
            known.set()
            if exc.status != 405:
                log.info("no standalone SSE stream: %s", exc)
            return
        self.get_status = response.status_code
        state = _StreamState(self.session_id, standalone=True)
        with self._lock:
            self._get_response, self._get_state = response, state
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
                old_get, self._get_response, self._get_state = self._get_response, None, None
            if old_get is not None:
                shutdown_response(old_get)
            self.session_id = None
            init = Request(f"mcp_ref-reinitialize-{next(self._reinit_ids)}", "initialize", self._init.params)
            state = _StreamState(None, [init.id], capture=init.id)
            try:
                response = self._post(init)
                self._take_session_id(response)
                self._consume(response, state)
                if not isinstance(state.captured, Response):
                    return False
                version = state.captured.result.get("protocolVersion")
                if lifecycle.is_supported(version):
                    self.protocol_version = version
                self._consume(self._post(Notification("notifications/initialized")), _StreamState(self.session_id))
            except HttpError as exc:
                log.warning("re-initialization failed: %s", exc)
                return False
            if self.open_get_stream:
                self._start_get_stream()
            return True

    # ------------------------------------------------------------------ threads
    def _submit(self, job) -> None:
        with self._lock:
            if self._closed.is_set():
                return                               # closing: nobody would read the answer
            if self._idle:
                self._idle -= 1
                spawn = None
            else:
                self._workers += 1
                spawn = self._workers
        if spawn is not None:
            self._spawn(self._worker, f"mcp-http-post-{spawn}")
        self._jobs.put(job)

    def _worker(self) -> None:
        while True:
            job = self._jobs.get()
            if job is None:
                return
            try:
                job()
            except Exception:
                log.exception("HTTP client job failed")
            with self._lock:
                self._idle += 1

    def _spawn(self, target, name: str) -> None:
        def run():
            try:
                target()
            finally:
                with self._lock:
                    self._threads.discard(thread)
        thread = threading.Thread(target=run, name=name, daemon=True)
        with self._lock:
            self._threads.add(thread)
        thread.start()
