"""What goes out: the requests we send, and how a caller waits for their replies.

``Outbound`` is a mix-in of ``Session`` (session/__init__.py): the caller's half of the
session (``request``, ``notify``, writing), over the tables and locks the
session holds (``_lock``, ``_outbound``, ``_send_lock``). ``Pending`` is what a
caller holds for one request in flight, ``CancelToken`` what another thread
cancels it with. Spec: basic/index, basic/lifecycle#timeouts,
basic/utilities/cancellation, basic/utilities/progress, basic/utilities/ping.

Rules:

1. Every request gets a fresh integer id (never reused) and a timeout, and
   its ``Pending`` (the waiter) is filed under that id in ``_outbound`` before it is
   sent, so a reply read at once finds it (the reader settles it: ``_on_response``).
2. A caller's ``Pending.result()`` waits on its own lock, so the waiting
   thread is its own timer: on timeout it raises ``RequestTimeout`` and sends
   ``notifications/cancelled`` (never for ``initialize``). With
   ``reset_on_progress`` each progress notification restarts the timeout,
   up to a hard maximum (``MAX_TOTAL_FACTOR`` times the timeout).
3. A reply that arrives after the caller stopped waiting is dropped by the
   session (the waiter is forgotten first).
4. Another thread cancels a request through a ``CancelToken`` given as
   ``cancel=`` to any request method (the caller's Stop button): the token
   cancels every request in flight that carries it, as ``Pending.cancel``
   does, and a request started with a cancelled token is not sent.
5. One writer at a time (``_send_lock``, session/__init__.py rule 6). A message that
   cannot be encoded leaves the session as it was (nothing was written); a
   broken transport closes the session: every request pending fails once
   with ``ConnectionClosed``.

The way out, for one request: ``request -> start_request`` (file the
``Pending``, ``_send``) ``-> transport.send``, then ``Pending.result`` waits until
the reader settles it: ``_on_response`` here, called from the reading
loop (session/inbound.py ``_route``).
"""
from __future__ import annotations

import contextlib
import logging
import threading
import time
from typing import TYPE_CHECKING

from mcp_ref.errors import (ConnectionClosed, InvalidMessage, McpError, MessageTooLarge, RequestCancelled,
                            RequestTimeout, SessionError)
from mcp_ref.jsonrpc.messages import (EncodeError, ErrorObject, ErrorResponse, Notification, Request, Response,
                                     unencodable_text)
from mcp_ref.session.state import DEFAULT_TIMEOUT, SessionState

__all__ = ["Outbound", "Pending", "CancelToken", "DEFAULT_TIMEOUT", "MAX_TOTAL_FACTOR"]

if TYPE_CHECKING:
    from typing import Callable, Union
    ProgressCallback = Callable[[float, "float | None", "str | None"], None]
    RequestId = Union[int, str]            # a type alias: Python 3.9's mypy reads no X | Y here

log = logging.getLogger("mcp_ref.session")

MAX_TOTAL_FACTOR = 10      # rule 2: hard cap on a progress-extended wait, in multiples of its timeout


class Outbound(SessionState):
    """The outbound half of ``Session`` (a mix-in): what a caller uses to send."""

    def request(self, method: str, params: dict | None = None, *, timeout: float | None = None,
                on_progress: ProgressCallback | None = None, reset_timeout_on_progress: bool = False,
                max_total_timeout: float | None = None, related_id: RequestId | None = None,
                cancel: CancelToken | None = None) -> dict:
        """Send a request and block until its result.

        A progress token (the request id) is attached when ``on_progress`` is
        given or ``reset_timeout_on_progress`` is asked for: without a token
        the peer could never reset the timeout. ``cancel``: a ``CancelToken``
        another thread may cancel the request with (rule 4).

        Raises:
            McpError: the peer answered an error (the subclass for its code).
            RequestTimeout: no reply within ``timeout`` (a cancellation was sent).
            RequestCancelled: ``cancel`` was cancelled (a cancellation was sent,
                unless the request never was).
            ConnectionClosed: the connection closed before the reply.
        """
        if cancel is not None and cancel.cancelled:
            raise cancel.error(method)
        pending = self.start_request(method, params, timeout=timeout, on_progress=on_progress,
                                     reset_timeout_on_progress=reset_timeout_on_progress,
                                     max_total_timeout=max_total_timeout, related_id=related_id)
        return pending.result() if cancel is None else cancel.run(pending)

    def start_request(self, method: str, params: dict | None = None, *, timeout: float | None = None,
                      on_progress: ProgressCallback | None = None, reset_timeout_on_progress: bool = False,
                      max_total_timeout: float | None = None,
                      related_id: RequestId | None = None) -> Pending:
        """Send a request and return a ``Pending`` handle without waiting."""
        request_id = next(self._ids)                   # rule 1
        timeout = self.default_timeout if timeout is None else timeout
        if reset_timeout_on_progress and max_total_timeout is None:
            # Spec: basic/lifecycle#timeouts: always enforce a maximum, even with progress.
            max_total_timeout = timeout * MAX_TOTAL_FACTOR
        pending = Pending(self, request_id, method, on_progress, timeout, reset_timeout_on_progress,
                          max_total_timeout)
        # From a callback on the notify thread (or lane), ordering would wait on ourselves.
        me = threading.current_thread()
        pending.ordered = on_progress is not None and me.name != f"{self._name}-notify" and me is not self._noticing
        if on_progress is not None or reset_timeout_on_progress:
            params = dict(params or {})
            params["_meta"] = {**(params.get("_meta") or {}), "progressToken": request_id}
        with self._lock:
            if self.closed:
                raise self._closed_error()
            self._outbound[request_id] = pending
        try:
            self._send(Request(request_id, method, params), related_id)
        except BaseException:
            self._forget(request_id)
            raise
        return pending

    def notify(self, method: str, params: dict | None = None, *, related_id: RequestId | None = None) -> None:
        """Send a notification. Raises ConnectionClosed when closed."""
        self._send(Notification(method, params), related_id)

    def ping(self, timeout: float | None = None) -> None:
        """Spec: basic/utilities/ping. Raises RequestTimeout or ConnectionClosed."""
        self.request("ping", timeout=timeout)

    # ------------------------------------------------------------------ writing
    def _send(self, message, related_id=None) -> None:
        """Write one message under the send lock (rule 5). An encoding error leaves the
        session as it was (nothing was written); a broken transport closes it."""
        if self.closed:
            raise self._closed_error()
        try:
            with self._send_lock:
                self.transport.send(message, related_id)
        except (SessionError, EncodeError):      # nothing was written: the session is fine
            raise
        except UnicodeEncodeError as exc:        # text UTF-8 cannot carry; nothing was written either
            raise unencodable_text(exc) from None
        except Exception as exc:                 # broken pipe, closed socket
            self._on_close(f"send failed: {exc}")
            raise self._closed_error() from exc

    def _closed_error(self) -> ConnectionClosed:
        """The ConnectionClosed the session closed with (its reason, the exit code)."""
        return self.close_error or ConnectionClosed("session closed")

    def _forget(self, request_id) -> None:
        """Drop the waiter of a request nobody waits for any more (rule 3)."""
        with self._lock:
            self._outbound.pop(request_id, None)


    # ------------------------------------------------------------------ answers (the reader settles them)
    def _on_response(self, message) -> None:
        """Settle the waiter of the request this reply answers (rule 7 for a null id);
        a reply to a request we stopped waiting for is dropped (session/outbound.py rule 3).
        A reply that did not decode (an ``InvalidMessage``) fails its request with what was wrong."""
        request_id = message.id
        if isinstance(request_id, str) and request_id.isascii() and request_id.isdigit():
            request_id = int(request_id)           # a peer that echoes our ids as strings
        with self._lock:
            waiter = self._outbound.pop(request_id, None)
            pending = len(self._outbound)
            if waiter is None and request_id is None and pending == 1:
                # Rule 7: the peer could not read a request of ours; with one in
                # flight, it is that one.
                request_id, waiter = self._outbound.popitem()
        if waiter is None:
            if request_id is None:
                error = getattr(message, "error", None)
                log.warning("%s: the peer could not read a request (%d pending): %s (code %s)", self._name,
                            pending, getattr(error, "message", "?"), getattr(error, "code", "?"))
            else:
                log.debug("%s: dropped a reply to unknown or abandoned id %r", self._name, message.id)
            return
        if isinstance(message, InvalidMessage) and message.size is None:
            message = ErrorResponse(message.id, ErrorObject(message.code,
                                                            f"the peer sent a malformed response: {message.message}"))
        elif isinstance(message, InvalidMessage):
            message = MessageTooLarge(f"the reply to {waiter.method} (id {message.id!r}) is {message.size} bytes, over "
                                      f"the limit of {message.limit} bytes (max_message_size); it was skipped unread",
                                      size=message.size, limit=message.limit)
        if waiter.ordered and (self._notices is not None or self._serial is not None):
            # Settle after the progress callbacks already queued, so the caller
            # has seen every progress notification by the time it has the result.
            self._notice(lambda: waiter.settle(message))
        else:
            waiter.settle(message)


class Pending:
    """An outgoing request in flight: ``result()`` waits, ``cancel()`` abandons it. The
    reader settles it with the reply (``settle``); so do cancel and close. ``ordered``:
    settle after queued progress callbacks (see _on_response).

    ``_done`` is a lock held from the start: the first ``settle`` to take ``_once``
    releases it, and the caller's ``wait`` is a timed acquire of it (an Event would
    build a Condition and a lock per wait for the same thing)."""
    __slots__ = ("_session", "id", "method", "on_progress", "_timeout", "_reset", "_max_total", "_done", "_once",
                 "settled", "reply", "heard_at", "_start", "ordered")

    def __init__(self, session, request_id: int, method: str, on_progress=None, timeout: float = DEFAULT_TIMEOUT,
                 reset_on_progress: bool = False, max_total: float | None = None):
        self._session, self.id, self.method, self.on_progress = session, request_id, method, on_progress
        self._timeout, self._reset, self._max_total = timeout, reset_on_progress, max_total
        self._done = threading.Lock()
        self._done.acquire()
        self._once = threading.Lock()
        self.settled = False                 # True once ``reply`` is final
        self.reply: Response | ErrorResponse | Exception | None = None
        self.heard_at = self._start = time.monotonic()
        self.ordered = False

    def settle(self, reply) -> None:
        """Record the reply and wake the caller; the first settle wins (a reply,
        a timeout, a cancellation or close), later ones are ignored (rule 3)."""
        if self._once.acquire(False):        # the first settle wins; later ones are dropped
            self.reply = reply
            self.settled = True
            self._done.release()

    def wait(self, timeout: float) -> bool:
        """Block until settled, at most ``timeout`` seconds; whether it is."""
        if self._done.acquire(True, max(timeout, 0.0)):
            self._done.release()             # settled for good: a later wait passes too
        return self.settled

    def result(self) -> dict:
        """Block until the reply. Raises McpError, RequestTimeout, RequestCancelled, ConnectionClosed."""
        try:
            while not self.settled:
                since = self.heard_at if self._reset else self._start
                deadline = since + self._timeout
                if self._max_total is not None:
                    deadline = min(deadline, self._start + self._max_total)
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    elapsed = time.monotonic() - self._start
                    self.cancel(f"timed out after {elapsed:.3g} s")
                    raise RequestTimeout(self.method, self._timeout)
                self.wait(remaining)
        except BaseException:
            if not self.settled:                 # Ctrl-C in a script, for example
                self.cancel("the caller stopped waiting")
            raise
        finally:
            self._session._forget(self.id)
        reply = self.reply
        if isinstance(reply, Response):
            return reply.result
        if isinstance(reply, ErrorResponse):
            raise McpError.from_error(reply.error.to_dict())
        assert reply is not None                  # settled
        raise reply                               # a SessionError settled locally

    def cancel(self, reason: str | None = None) -> None:
        """Abandon the request: it fails with RequestCancelled and the peer is sent
        ``notifications/cancelled`` (never for ``initialize``)."""
        if self.settled:
            return
        self.settle(RequestCancelled(f"{self.method} (id {self.id}) cancelled" + (f": {reason}" if reason else "")))
        self._session._forget(self.id)
        if self.method != "initialize":
            params: dict = {"requestId": self.id}
            if reason:
                params["reason"] = reason
            with contextlib.suppress(SessionError):       # closed meanwhile: nothing to tell
                self._session.notify("notifications/cancelled", params)


class CancelToken:
    """Cancels requests in flight from any thread (rule 4).

    Pass it as ``cancel=`` to a request method (``client.call_tool(...,
    cancel=token)``, ``Session.request``); ``token.cancel(reason)`` from
    another thread then sends ``notifications/cancelled`` with ``reason`` for
    every request in flight that carries it, and each waiting caller raises
    ``RequestCancelled``. A reply that comes later is dropped. A request
    started after the token was cancelled raises at once and is not sent.
    One token may serve several requests (every page of ``list_tools()``, a
    batch of calls): cancelling is final. Spec: basic/utilities/cancellation.
    """

    def __init__(self):
        self._lock = threading.Lock()
        self._pending: set = set()
        self._event = threading.Event()
        self.reason: str | None = None

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    def cancel(self, reason: str = "cancelled by the caller") -> None:
        """Cancel every request carrying this token, now and later. Idempotent: the
        first reason is the one sent. Safe from any thread, also before any request."""
        with self._lock:
            if self._event.is_set():
                return
            self.reason = reason
            self._event.set()
            pending = list(self._pending)
        for handle in pending:
            handle.cancel(reason)

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the token is cancelled (True) or ``timeout`` passes (False)."""
        return self._event.wait(timeout)

    def error(self, method: str) -> RequestCancelled:
        """What a request raises when it was not sent because the token was cancelled."""
        return RequestCancelled(f"{method} not sent: cancelled" + (f": {self.reason}" if self.reason else ""))

    def run(self, pending: "Pending") -> dict:
        """Wait for ``pending`` unless the token is (or becomes) cancelled, which cancels it."""
        with self._lock:
            live = not self._event.is_set()
            if live:
                self._pending.add(pending)
        if not live:
            pending.cancel(self.reason)
        try:
            return pending.result()
        finally:
            with self._lock:
                self._pending.discard(pending)

    def __repr__(self) -> str:
        return f"CancelToken(cancelled={self.cancelled}, reason={self.reason!r})"

