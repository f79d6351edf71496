"""The HTTP client's second way in and its way back: the ``GET`` stream for what the
server sends unprompted (started once the session exists, resumed with
``Last-Event-ID``), and re-initialization when the server forgot the session
(404 with a session id: a fresh ``initialize``, then the request again).

``GetStream`` is a mix-in of ``StreamableHttpTransport`` (transports/http/client/streamable.py).
Spec: basic/transports#listening-for-messages-from-the-server,
#session-management, #resumability-and-redelivery.
"""
import logging
import threading
from typing import Any, Callable, Iterator, Optional

from mcp_ref.protocol import lifecycle
from mcp_ref.jsonrpc.messages import Notification, Request, Response
from mcp_ref.transports.http.client.exchange import Exchange
from mcp_ref.transports.http.client.common import REQUEST_ERRORS, HttpError, SessionExpired
from mcp_ref.transports.http.client.streams import AnswerReader, StreamState

log = logging.getLogger("mcp_ref.http")


class GetStream(AnswerReader):
    """The GET stream and re-initialization of ``StreamableHttpTransport`` (a mix-in over
    ``AnswerReader``), which sets these in its ``__init__`` and defines the methods named here."""

    open_get_stream: bool
    _get_exchange: Optional[Exchange]
    _init: Optional[Request]
    _get_wait: float
    _reinit_lock: threading.Lock
    _reinit_ids: Iterator[int]
    _post: Callable[[Any], Any]
    _take_session_id: Callable[[Any], None]

    def _start_get_stream(self) -> None:
        """Rule 2: open the standalone stream and wait until its status is known."""
        known = threading.Event()
        self._submit(lambda: self._run_get(known))
        known.wait(self._get_wait + 1.0)

    def _run_get(self, known: threading.Event) -> None:
        with self._http.exchange() as exchange:
            with self._lock:
                self._get_exchange = exchange
            try:
                response = self._get(None)
            except REQUEST_ERRORS as exc:      # an auth provider may fail too
                self.get_status = exc.status
                known.set()
                if exc.status != 405:
                    log.info("no standalone SSE stream: %s", exc)
                return
            self.get_status = response.status_code
            state = StreamState(self.session_id, standalone=True)
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
            state = StreamState(None, [init.id], capture=init.id)
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
