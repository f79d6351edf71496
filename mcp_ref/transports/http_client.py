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
   on pool threads (``mcp-http-post-N``), since an answer may take as long as
   the server's handler; the answer (one JSON body or an SSE stream) is read
   there into the inbox ``receive()`` reads. Cancelling a request cuts its
   connections (``http_common`` rule 3).
2. Right after ``notifications/initialized``, the standalone GET stream is
   opened (``mcp-http-get``); ``send`` returns once its status is known: 200
   is a stream, anything else (405 included) means none.
3. Every SSE event id is remembered (bounded): an event seen before is
   dropped, so a replay after a reconnect delivers each message once.
4. A broken stream, or a POST stream that ended before its response, is
   resumed with GET + ``Last-Event-ID``. The wait before each attempt is the
   ``retry`` the server sent on that stream (else ``default_retry``), never
   less than ``MIN_RETRY``, and doubles (up to ``MAX_BACKOFF``, or the
   server's ``retry`` when longer) for every connection in a row that
   delivered no message; a message delivered resets it. It gives up after
   ``max_reconnects`` connections in a row that failed or carried nothing at
   all. A disconnect is never a cancellation: nothing is sent to the server
   about it.
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
   vain: an answer with no response to it (202, an empty body, a JSON body
   holding something else, a stream that ends without it and cannot be
   resumed) or one over ``max_message_size`` fails it at once, saying what came
   back. An error with a null id on a POST's answer is that request's error;
   the elements of a batch are delivered one by one.
9. The session id must be visible ASCII (0x21-0x7E), else ``HttpError``
   and it is not used. Redirects, deadlines and size bounds: ``http_common``.
"""
import collections
import itertools
import logging
import queue
import threading
from typing import Optional

from .. import lifecycle
from ..errors import INTERNAL_ERROR, ConnectionClosed, InvalidMessage
from ..messages import ErrorObject, ErrorResponse, Notification, Request, Response, decode, encode
from .http_common import (CLOSED, DEFAULT_MAX_MESSAGE_SIZE, HttpClient, HttpError, RedirectRefused,
                          ResponseTooLarge, SessionExpired, content_type, settle_request, take, visible_ascii)

log = logging.getLogger("mcp_ref.http")

__all__ = ["StreamableHttpTransport", "HttpError", "SessionExpired", "RedirectRefused", "ResponseTooLarge"]

ACCEPT = "application/json, text/event-stream"
MIN_RETRY = 0.25          # seconds: the least wait before a reconnection, whatever ``retry`` says (rule 4)
MAX_BACKOFF = 5.0         # seconds: how far the wait grows for connections that deliver nothing (rule 4)


class _StreamState:
    """What a reader knows about one logical SSE stream (rule 4)."""

    def __init__(self, session_id, pending=(), standalone: bool = False, capture=None, what: str = ""):
        self.session_id = session_id          # a stream belongs to one session: never resumed in another
        self.pending = set(pending)           # our request ids still unanswered on this stream
        self.standalone = standalone
        self.capture = capture                # a request id whose answer is kept, not delivered
        self.captured = None
        self.what = what                      # the request, for messages: "tools/call (id 3)"
        self.last_event_id: Optional[str] = None
        self.retry: Optional[float] = None    # seconds, as the server last said on this stream


def _about(message: Request) -> str:
    return f"{message.method} (id {message.id})"


class StreamableHttpTransport:
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
        self.url = url
        self.session_id: Optional[str] = None
        self.protocol_version: Optional[str] = None
        self.session = None                   # the bound Session (rule 6)
        self.get_status: Optional[int] = None  # the standalone GET's status (None: not opened)
        self.on_session_expired = on_session_expired
        self.open_get_stream = open_get_stream
        self.max_reconnects, self.default_retry = max_reconnects, default_retry
        self.timeout, self.init_timeout = 60.0, 10.0       # rule 1; Client sets its own
        self._http = HttpClient(url, headers={"Accept": ACCEPT, **(headers or {})}, auth=auth, verify=verify,
                                cert=cert, pool_size=64, connect_timeout=connect_timeout,
                                read_timeout=read_timeout, max_message_size=max_message_size)
        self._get_wait = (connect_timeout or 10.0) + 5.0  # for the GET's status (rule 2)
        self._inbox: queue.SimpleQueue = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._closed = threading.Event()
        self._threads: set = set()
        self._jobs: queue.SimpleQueue = queue.SimpleQueue()
        self._idle = self._workers = 0
        self._seen: collections.OrderedDict = collections.OrderedDict()
        self._init: Optional[Request] = None
        self._expired: Optional[SessionExpired] = None
        self._get_exchange = None             # the standalone stream's (cut on re-initialization)
        self._get_state: Optional[_StreamState] = None
        self._exchanges: dict = {}            # request id -> its Exchange (cut when it is cancelled)
        self._abandoned: set = set()          # requests we cancelled: their streams are not resumed
        self._reinit_lock = threading.Lock()
        self._reinit_ids = itertools.count(1)

    @property
    def max_message_size(self) -> int:
        return self._http.max_message_size

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
                with self._http.exchange(self.init_timeout):
                    response = self._post(message)
                    self._take_session_id(response)
                    self._consume(response, _StreamState(self.session_id, [message.id], what=_about(message)),
                                  in_background=True)
            else:
                self._submit(lambda: self._run_request(message))
            return
        if isinstance(message, Notification) and message.method == "notifications/cancelled":
            self._abandon((message.params or {}).get("requestId"))
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
        with self._lock:
            workers = self._workers
        for _ in range(workers):
            self._jobs.put(None)
        self._inbox.put(CLOSED)
        me = threading.current_thread()
        for thread in list(self._threads):
            if thread is not me:
                thread.join(2.0)

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
        response = self._http.request("POST", self.url, data=encode(message).encode("utf-8"),
                                      headers=self._headers({"Content-Type": "application/json"}))
        return self._check(response, "POST", sent_session)

    def _get(self, last_event_id: Optional[str]):
        """Open a GET stream (rule 2, rule 4); its status within ``_get_wait``. Raises HttpError."""
        headers = self._headers({"Accept": "text/event-stream"})
        if last_event_id is not None:
            headers["Last-Event-ID"] = last_event_id
        with self._http.exchange(self._get_wait):
            response = self._http.request("GET", self.url, headers=headers)
            return self._check(response, "GET", headers.get("Mcp-Session-Id"))

    def _check(self, response, method: str, sent_session: Optional[str]):
        """The response when its status is usable; else close it and raise (rule 6)."""
        if response.status_code == 404 and sent_session is not None:
            error = self._http.error(response, f"{method} {self.url}: the MCP session has expired", SessionExpired)
            error.session_id = sent_session
        elif response.status_code >= 300 or (method == "GET" and response.status_code != 200):
            error = self._http.error(response, f"{method} {self.url}")
        elif method == "GET" and content_type(response) != "text/event-stream":
            error = HttpError(f"GET {self.url}: expected text/event-stream, got {content_type(response)!r}",
                              status=response.status_code, url=self.url)
            response.close()
        else:
            return response
        raise error

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
            self._consume(response, _StreamState(self.session_id), in_background=True)

    def _abandon(self, request_id) -> None:
        """A request we cancelled: its stream is not resumed, its connections are cut (rule 1)."""
        with self._lock:
            if len(self._abandoned) > 10000:
                self._abandoned.clear()
            self._abandoned.add(request_id)
            exchange = self._exchanges.get(request_id)
        if exchange is not None:
            exchange.cut()

    # ------------------------------------------------------------------ answers
    def _run_request(self, message: Request) -> None:
        """On a pool thread: POST one request and read its answer (rules 1, 5)."""
        with self._http.exchange() as exchange:
            with self._lock:
                if message.id in self._abandoned:
                    self._abandoned.discard(message.id)
                    return
                self._exchanges[message.id] = exchange
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
                    except HttpError as exc:
                        return self._fail([message.id], exc)
                    return self._consume(response, _StreamState(self.session_id, [message.id], what=_about(message)))
            finally:
                with self._lock:
                    self._exchanges.pop(message.id, None)

    def _consume(self, response, state: _StreamState, in_background: bool = False) -> None:
        """Deliver a POST's answer: a JSON body now, an SSE stream here or on a pool thread (rule 8)."""
        kind = content_type(response)
        if kind == "text/event-stream":
            if in_background:
                self._submit(lambda: self._follow(response, state))
            else:
                self._follow(response, state)
            return
        what = f"POST {self.url}" + (f" ({state.what})" if state.what else "")
        try:
            body = self._http.read_body(response, what)
        except HttpError as exc:
            return self._fail(state.pending, exc)
        status = response.status_code
        if not body.strip():
            got = "202 Accepted" if status == 202 else f"HTTP {status} with an empty body"
            return self._unanswered(state, got, status)
        if kind != "application/json":
            return self._fail(state.pending, HttpError(f"{what}: unexpected Content-Type {kind!r}", status=status,
                                                       body=body[:2000].decode("utf-8", "replace"), url=self.url))
        try:
            decoded = decode(body)
        except (InvalidMessage, RecursionError) as bad:
            return self._fail(state.pending, HttpError(f"{what}: invalid JSON-RPC answer: "
                                                       f"{getattr(bad, 'message', bad)}", status=status, url=self.url))
        self._deliver(decoded, state)
        self._unanswered(state, "a JSON body holding no response to it", status)

    def _unanswered(self, state: _StreamState, got: str, status: Optional[int] = None) -> None:
        """Rule 8: the answer has ended and holds no response to these requests."""
        waiting = [request_id for request_id in state.pending if request_id != state.capture]
        state.pending -= set(waiting)
        for request_id in waiting:
            self._fail([request_id], HttpError(f"POST {self.url}: the server answered {state.what or 'a request'} "
                                               f"with {got}; no response will come", status=status, url=self.url))

    def _deliver(self, decoded, state: _StreamState) -> int:
        """Put the messages of one body or event in the inbox (rule 8); returns how many."""
        count = 0
        for message in decoded if isinstance(decoded, list) else [decoded]:
            if isinstance(message, InvalidMessage):
                log.warning("ignored an invalid message from the server: %s", message.message)
                continue
            if isinstance(message, ErrorResponse) and message.id is None and not state.standalone \
                    and len(state.pending) == 1:
                request_id = next(iter(state.pending))
                log.info("an error with a null id answered %s: %s", state.what or request_id, message.error.message)
                message = ErrorResponse(request_id, message.error)
            count += 1
            if isinstance(message, (Response, ErrorResponse)):
                state.pending.discard(message.id)
                if state.capture is not None and message.id == state.capture:
                    state.captured = message
                    continue
            self._inbox.put(message)
        return count

    def _follow(self, response, state: _StreamState) -> None:
        """Read an SSE stream to its end, resuming it as rule 4 says."""
        quiet = empty = 0            # connections in a row that delivered no message / carried nothing
        while True:
            carried, delivered, stop = self._read_events(response, state)
            quiet = 0 if delivered else quiet + 1
            empty = 0 if carried else empty + 1
            with self._lock:
                dropped = state.pending & self._abandoned
                state.pending -= dropped
                self._abandoned -= dropped
            if stop or self._closed.is_set() or (not state.standalone and not state.pending) or \
                    (state.standalone and state is not self._get_state):
                return
            if empty >= self.max_reconnects:           # connections that end at once, with nothing
                return self._fail(state.pending, HttpError(f"{self.url}: the SSE stream keeps ending at once"))
            if state.session_id != self.session_id:      # renewed (rule 5): this stream cannot resume
                return self._fail(state.pending, SessionExpired(f"{self.url}: the MCP session ended before "
                                                                "the response", status=404, url=self.url))
            if not state.standalone and state.last_event_id is None:
                return self._fail(state.pending, HttpError(
                    f"{self.url}: the SSE stream ended before the response to {state.what or 'the request'}, "
                    "with no event id to resume from"))
            response = None
            while response is None:
                if self._closed.wait(self._delay(state, quiet)):
                    return
                try:
                    response = self._get(state.last_event_id)
                except HttpError as exc:
                    empty += 1
                    quiet += 1
                    if isinstance(exc, SessionExpired) or exc.status == 405 or empty >= self.max_reconnects:
                        log.info("gave up resuming an SSE stream: %s", exc)
                        return self._fail(state.pending, exc)

    def _delay(self, state: _StreamState, quiet: int) -> float:
        """Rule 4: the wait before the next reconnection."""
        base = max(MIN_RETRY, state.retry if state.retry is not None else self.default_retry)
        return max(base, min(MAX_BACKOFF, base * 2 ** min(16, max(0, quiet - 1))))

    def _read_events(self, response, state: _StreamState) -> tuple:
        """Deliver one connection's events (rule 3); returns (bytes read, messages delivered, stop)."""
        stream = self._http.events(response)
        delivered, stop, clean = 0, False, False
        try:
            for event in stream:
                if event.oversized:
                    if self._oversized(event.oversized, state):
                        stop = True
                        break
                    continue
                if event.retry is not None:
                    state.retry = event.retry / 1000.0
                if event.id:
                    state.last_event_id = event.id
                if not event.data or event.event != "message" or (event.id and self._seen_before(event.id)):
                    continue
                try:
                    delivered += self._deliver(decode(event.data), state)
                except (InvalidMessage, RecursionError) as bad:
                    log.warning("ignored an invalid SSE event from the server: %s", getattr(bad, "message", bad))
            clean = not stop and not self._http.interrupted()
        except Exception as exc:                 # requests, urllib3 and socket errors alike
            if not self._closed.is_set():
                log.debug("SSE stream from %s broke: %s", self.url, exc)
        finally:
            if clean:
                response.raw.release_conn()      # read to the end: the connection can be reused
            else:
                response.close()
        return stream.received, delivered, stop

    def _oversized(self, size: int, state: _StreamState) -> bool:
        """An SSE event over the limit (rule 8): fails what this POST's stream answers (True: stop
        reading it); on the standalone stream it is dropped and the stream goes on."""
        limit = self._http.max_message_size
        where = f"an SSE event on the answer to {state.what}" if state.what else "an SSE event"
        error = ResponseTooLarge(f"{self.url}: {where} is larger than the message size limit of {limit} bytes "
                                 "(max_message_size); dropped", limit=limit, size=size, url=self.url)
        if state.standalone or not state.pending:
            log.warning("%s", error)
            return False
        waiting = [request_id for request_id in state.pending if request_id != state.capture]
        state.pending.clear()
        self._fail(waiting, error)
        return True

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
        known.wait(self._get_wait + 1.0)

    def _run_get(self, known: threading.Event) -> None:
        with self._http.exchange() as exchange:
            with self._lock:
                self._get_exchange = exchange
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
                if self._get_exchange is exchange:
                    self._get_state = state
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
                old_get, self._get_exchange, self._get_state = self._get_exchange, None, None
            if old_get is not None:
                old_get.cut()
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
