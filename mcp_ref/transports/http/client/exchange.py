"""Connections that can be cut, for the HTTP clients (``http_common`` rules 3 and 4).

A thread blocked waiting for an answer's headers, or reading a trickled body,
wakes only when its socket is shut down; ``requests`` offers no way to reach
that socket. So every connection the client's pools hand out is tracked with
the *exchange* that took it: one request job, or one call on the caller's
thread. Cutting an exchange (a cancelled request), its deadline passing, or
closing the client shuts those sockets down; a connection made after that is
shut as soon as it connects.

Rules:

1. An exchange is current for the thread inside ``with client.exchange(...)``;
   the connections the thread takes from a pool meanwhile belong to it, until
   they go back to the pool.
2. ``cut()`` is final (a cancelled request stays cancelled); an expired
   deadline is not: ``arm(None)`` forgets it, so the exchange may go on.
3. Each armed deadline has its own timer (a daemon thread,
   ``mcp-http-deadline``), cancelled and joined when the exchange is disarmed
   (so no timer outlives the call that armed it, nor a closed client); when
   it fires, it expires the exchange.
4. The pools are urllib3's, subclassed only to tell the client when a
   connection is taken, connected and given back. Connections through a SOCKS
   proxy use urllib3's own pools: they are closed at close, not cut.
"""
import contextlib
import socket
import threading
import time
import weakref
from typing import Iterator, Optional

_current = threading.local()


def current_exchange(client) -> "Optional[Exchange]":
    """This thread's exchange with ``client`` (rule 1), or None."""
    exchange = getattr(_current, "exchange", None)
    return exchange if exchange is not None and exchange.client is client else None


def shut(sock) -> None:
    """Shut a socket down: a thread blocked on it wakes (closing alone would not wake it)."""
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)


def socket_of(conn):
    """The socket of a tracked connection, also once ``http.client`` has handed it to a
    response read until the server closes (``Connection: close``, as gunicorn's sync workers
    and ``wsgiref`` answer): ``conn.sock`` is None then, and only the socket kept at
    connect can be shut (a thread reading that response, a stream, would never wake)."""
    return getattr(conn, "sock", None) or getattr(conn, "_mcp_sock", None)


class Exchange:
    """What one request job (or one call on the caller's thread) has open: it can be cut
    (sticky: a cancelled request) or expire (its deadline passed)."""

    def __init__(self, client):
        self.client = client
        self.cut_off = self.expired = False       # cut (for good), or past its deadline (rule 2)
        self.deadline: Optional[float] = None
        self.timeout: Optional[float] = None
        self.conns: "weakref.WeakSet" = weakref.WeakSet()
        self._timer: Optional[threading.Timer] = None      # rule 3

    def arm(self, timeout: Optional[float]) -> None:
        """A total deadline of ``timeout`` seconds from now; None: no deadline any more, and a
        past expiry is forgotten (the exchange may go on)."""
        if self._timer is not None:              # rule 3; never called by the timer (nor under the lock it takes)
            self._timer.cancel()
            self._timer.join()
        with self.client._lock:
            self.expired = False
            self.timeout = timeout
            self.deadline = None if timeout is None else time.monotonic() + timeout
        if timeout is not None:
            self._timer = threading.Timer(timeout, self.cut, (self.deadline,))
            self._timer.name, self._timer.daemon = "mcp-http-deadline", True
            self._timer.start()

    def remaining(self) -> Optional[float]:
        return None if self.deadline is None else max(0.001, self.deadline - time.monotonic())

    def cut(self, when: Optional[float] = None) -> None:
        """Shut every connection of this exchange now, and any it makes later; with ``when``
        (the timer's), expire it instead, unless it was disarmed or armed again since."""
        with self.client._lock:
            if when is None:
                self.cut_off = True
            elif self.deadline == when:
                self.expired = True
            else:
                return                           # disarmed, or armed again since
            conns = list(self.conns)
        for conn in conns:
            shut(socket_of(conn))


def tracking_adapter(requests, client, pool_size: int):
    """A requests adapter whose connections are tracked by ``client`` (rule 4)."""
    from urllib3 import connection, connectionpool

    def tracked(conn_base, pool_base):
        class Connection(conn_base):
            def connect(self):
                super().connect()
                self._mcp_sock = self.sock
                client._connected(self)

        class Pool(pool_base):
            ConnectionCls = Connection

            def _get_conn(self, timeout=None):
                return client._taken(super()._get_conn(timeout))

            def _put_conn(self, conn):
                client._returned(conn)
                super()._put_conn(conn)
        return Pool

    pools = {"http": tracked(connection.HTTPConnection, connectionpool.HTTPConnectionPool),
             "https": tracked(connection.HTTPSConnection, connectionpool.HTTPSConnectionPool)}

    class Adapter(requests.adapters.HTTPAdapter):
        def init_poolmanager(self, *args, **kwargs):
            super().init_poolmanager(*args, **kwargs)
            self.poolmanager.pool_classes_by_scheme = pools

        def proxy_manager_for(self, proxy, **kwargs):
            manager = super().proxy_manager_for(proxy, **kwargs)
            if not proxy.lower().startswith("socks"):      # SOCKS pools are their own: closed, not cut
                manager.pool_classes_by_scheme = pools
            return manager
    return Adapter(pool_connections=4, pool_maxsize=pool_size)


@contextlib.contextmanager
def scope(client, timeout: Optional[float] = None) -> Iterator[Exchange]:
    """``HttpClient.exchange`` (rule 1): this thread's exchange with ``client`` for the block,
    a new one or, inside another exchange of the same client, that one, armed with
    ``timeout`` for the block when it has no deadline."""
    previous = getattr(_current, "exchange", None)
    exchange = current_exchange(client) or Exchange(client)
    armed = timeout is not None and exchange.deadline is None
    if armed:
        exchange.arm(timeout)
    _current.exchange = exchange
    try:
        yield exchange
    finally:
        if armed:
            exchange.arm(None)
        _current.exchange = previous
