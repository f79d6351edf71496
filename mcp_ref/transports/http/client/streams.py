"""How the Streamable HTTP client reads the answers to what it POSTs: one JSON body,
or an SSE stream followed to its end and resumed when it breaks (``http_client``
rules 3, 4 and 8; ``AnswerReader`` is a part of ``StreamableHttpTransport``).

Spec: basic/transports#sending-messages-to-the-server,
#listening-for-messages-from-the-server, #resumability-and-redelivery.

Rules:

1. A POST's answer is tied to its request: when the answer ends without the
   response (202, an empty body, a JSON body holding something else, a stream
   that cannot be resumed) or carries one over ``max_message_size``, the
   request fails at once with an ``HttpError`` saying what came back. An
   error with a null id on a POST's answer is that request's error; the
   elements of a batch are delivered one by one.
2. Every SSE event id is remembered (bounded): an event seen before is
   dropped, so a replay after a reconnect delivers each message once.
3. Reconnecting (``_follow``, ``_delay``): the wait before each attempt is the
   ``retry`` the server sent on that stream (else ``default_retry``), never
   less than ``MIN_RETRY``; it doubles, up to ``MAX_BACKOFF`` (or the server's
   ``retry`` when longer), for every connection in a row that delivered no
   message, and a delivered message resets it. So a server that ends its
   streams at once with ``retry: 0`` is asked a few times a second at first,
   then every ``MAX_BACKOFF`` seconds. After ``max_reconnects`` connections in
   a row that failed or carried nothing at all, the stream is given up.
4. On the standalone stream an oversized event is dropped and the stream goes
   on; on a POST's stream it fails the request and the stream is not read
   further.
"""
from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any, Callable, Optional

from mcp_ref.auth.exceptions import AuthorizationError
from mcp_ref.errors import INTERNAL_ERROR, InvalidMessage
from mcp_ref.jsonrpc.messages import ErrorObject, ErrorResponse, Response, decode
from mcp_ref.transports.http.sse import EventParser
from mcp_ref.transports.http.client.common import (REQUEST_ERRORS, HttpError, HttpTransport, ResponseTooLarge,
                                                   SessionExpired, content_type, log, settle_request)

MIN_RETRY = 0.25          # seconds: the least wait before a reconnection, whatever ``retry`` says (rule 3)
MAX_BACKOFF = 5.0         # seconds: how far the wait grows for connections that deliver nothing (rule 3)


class StreamState:
    """What a reader knows about one logical SSE stream (rule 3)."""

    def __init__(self, session_id, request=None, standalone: bool = False, capture: bool = False, exchange=None):
        self.session_id = session_id          # a stream belongs to one session: never resumed in another
        self.pending = {request.id} if request is not None else set()   # our request ids still unanswered on it
        self.standalone = standalone
        self.exchange = exchange              # the standalone stream's (cut when the session is renewed)
        self.capture = request.id if capture else None    # a request whose answer is kept, not delivered
        self.captured: Response | ErrorResponse | None = None
        self.what = f"{request.method} (id {request.id})" if request is not None else ""   # for messages
        self.last_event_id: Optional[str] = None
        self.retry: Optional[float] = None    # seconds, as the server last said on this stream


class AnswerReader(HttpTransport):
    """The answer-reading half of ``StreamableHttpTransport`` (see the module rules), which
    defines ``_get`` and ``_submit``."""

    _get: Callable[[Optional[str]], Any]
    _submit: Callable[[Callable[[], None]], None]

    def __init__(self, url: str, *, max_reconnects: int, default_retry: float, **options):
        super().__init__(url, **options)
        self.session_id: Optional[str] = None
        self.max_reconnects, self.default_retry = max_reconnects, default_retry
        self._lock = threading.Lock()
        self._seen: OrderedDict = OrderedDict()     # rule 2: event ids, oldest first (popped from the front:
        # a plain dict leaves dead slots there that every later ``next(iter())`` scans past)
        self._abandoned: set = set()          # requests we cancelled: their streams are not resumed
        self._get_state: Optional[StreamState] = None    # the standalone stream's

    def _consume(self, response, state: StreamState, in_background: bool = False) -> None:
        """Deliver a POST's answer: a JSON body now, an SSE stream here or on a pool thread (rule 1)."""
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
        except InvalidMessage as bad:
            return self._fail(state.pending, HttpError(f"{what}: invalid JSON-RPC answer: {bad.message}",
                                                       status=status, url=self.url))
        self._deliver(decoded, state)
        self._unanswered(state, "a JSON body holding no response to it", status)

    def _unanswered(self, state: StreamState, got: str, status: Optional[int] = None) -> None:
        """Rule 1: the answer has ended and holds no response to these requests."""
        self._fail_waiting(state, HttpError(f"POST {self.url}: the server answered {state.what or 'a request'} "
                                            f"with {got}; no response will come", status=status, url=self.url))

    def _fail_waiting(self, state: StreamState, exc: HttpError) -> None:
        """Fail the requests this answer was for (the captured one aside) and stop waiting for them."""
        waiting = {request_id for request_id in state.pending if request_id != state.capture}
        state.pending -= waiting
        self._fail(waiting, exc)

    def _deliver(self, decoded, state: StreamState) -> int:
        """Put the messages of one body or event in the inbox (rule 1); returns how many."""
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

    def _follow(self, response, state: StreamState) -> None:
        """Read an SSE stream to its end, resuming it as rule 3 says."""
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
            if state.session_id != self.session_id:      # renewed (http_client rule 5): this stream cannot resume
                return self._fail(state.pending, SessionExpired(f"{self.url}: the MCP session ended before "
                                                                "the response", status=404, url=self.url))
            if not state.standalone and state.last_event_id is None:
                return self._fail(state.pending, HttpError(
                    f"{self.url}: the SSE stream ended before the response to {state.what or 'the request'}, "
                    "with no event id to resume from"))
            response = None
            while response is None:
                if self._closed.wait(self._delay(state, quiet)) or self._http.interrupted():
                    return                               # closed, or the request was cancelled meanwhile
                try:
                    response = self._get(state.last_event_id)
                except REQUEST_ERRORS as exc:       # an auth provider may fail too
                    empty += 1
                    quiet += 1
                    if isinstance(exc, SessionExpired) or exc.status == 405 or empty >= self.max_reconnects:
                        log.info("gave up resuming an SSE stream: %s", exc)
                        return self._fail(state.pending, exc)

    def _delay(self, state: StreamState, quiet: int) -> float:
        """Rule 3: the wait before the next reconnection."""
        base = max(MIN_RETRY, state.retry if state.retry is not None else self.default_retry)
        return max(base, min(MAX_BACKOFF, base * 2 ** min(16, max(0, quiet - 1))))

    def _read_events(self, response, state: StreamState) -> tuple:
        """Deliver one connection's events (rule 2); returns (bytes read, messages delivered, stop)."""
        parser = EventParser(self._http.max_message_size)
        delivered, stop, clean = 0, False, False
        try:
            for event in self._http.events(response, parser):
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
                except InvalidMessage as bad:
                    log.warning("ignored an invalid SSE event from the server: %s", bad.message)
            clean = not stop and not self._http.interrupted()
        except HttpError as exc:                 # an answer we cannot read at all (its Content-Encoding)
            self._fail_waiting(state, exc)
            stop = True
        except Exception as exc:                 # requests, urllib3 and socket errors alike
            if not self._closed.is_set():
                log.debug("SSE stream from %s broke: %s", self.url, exc)
        finally:
            if clean:
                response.raw.release_conn()      # read to the end: the connection can be reused
            else:
                response.close()
        return parser.received, delivered, stop

    def _oversized(self, size: int, state: StreamState) -> bool:
        """An SSE event over the limit (rule 4): fails what this POST's stream answers (True: stop
        reading it); on the standalone stream it is dropped and the stream goes on."""
        limit = self._http.max_message_size
        where = f"an SSE event on the answer to {state.what}" if state.what else "an SSE event"
        error = ResponseTooLarge(f"{self.url}: {where} is larger than the message size limit of {limit} bytes "
                                 "(max_message_size); dropped", limit=limit, size=size, url=self.url)
        if state.standalone or not state.pending:
            log.warning("%s", error)
            return False
        self._fail_waiting(state, error)
        return True

    def _seen_before(self, event_id: str) -> bool:
        with self._lock:
            if event_id in self._seen:
                return True
            self._seen[event_id] = None
            if len(self._seen) > 10000:
                self._seen.popitem(last=False)
            return False

    def _fail(self, request_ids, exc: HttpError | AuthorizationError) -> None:
        """Fail our requests with a local error (``http_client`` rule 6)."""
        for request_id in list(request_ids):
            if self.session is not None and settle_request(self.session, request_id, exc):
                continue
            data = {"httpStatus": exc.status} if exc.status is not None else None
            self._inbox.put(ErrorResponse(request_id, ErrorObject(INTERNAL_ERROR, str(exc), data)))
