"""Rule 2 of transports/http/server/app.py: which ``Host`` and ``Origin`` headers the MCP
endpoint accepts (protection against DNS rebinding: a page on another site
must not reach a server on localhost through the browser).

``HostChecks`` is a mix-in of ``HttpApp`` (transports/http/server/app.py), which holds the
allowed hosts and origins. Spec: basic/transports#security-warning,
security_best_practices.
"""
from __future__ import annotations

from urllib.parse import urlsplit
import socket
from typing import Optional

from mcp_ref.errors import get_logger

log = get_logger("mcp_ref.http")

LOOPBACK = frozenset(("localhost", "127.0.0.1", "::1"))
WILDCARD = frozenset(("", "0.0.0.0", "::"))
DEFAULT_PORTS = {"http": 80, "https": 443}
MAX_WARNED_HOSTS = 64                  # distinct refused Host values logged, at most


class HostChecks:
    """The Host and Origin checks of ``HttpApp`` (a mix-in)."""

    def __init__(self, host: str, allowed_origins=None, allowed_hosts=None):
        self.allowed_origins = list(allowed_origins) if allowed_origins is not None else None
        self.allowed_hosts = list(allowed_hosts) if allowed_hosts is not None else None
        # The names this server answers to (the port is set once the socket is bound).
        bind = host.strip("[]").lower()
        self.loopback, self.wildcard = bind in LOOPBACK, bind in WILDCARD
        self.own_names = frozenset(name for name in (bind, socket.gethostname().lower()) if name not in WILDCARD)
        self.port, self.scheme = 0, "http"
        self._warned: set = set()             # refused Host values logged (a race at worst logs one twice)

    def host_allowed(self, host: Optional[str], local_address=None) -> bool:
        """``local_address``: a callable giving the address the connection arrived on
        (asked only on a wildcard bind without ``allowed_hosts``)."""
        if not host:
            return False
        name, port = _split_host(host)
        if self.allowed_hosts is not None:
            return any(p == "*" or _matches(p, host, name) for p in self.allowed_hosts)
        if self.loopback:
            return name in LOOPBACK
        # On a wildcard bind, also the address the connection arrived on (over loopback, any loopback name).
        local = _plain_address(local_address()) if self.wildcard and local_address is not None else None
        allowed = (DEFAULT_PORTS[self.scheme] if port is None else port) == self.port and (
            name in self.own_names or name == local or (local in LOOPBACK and (name in LOOPBACK or name in WILDCARD)))
        if not allowed and host not in self._warned and len(self._warned) < MAX_WARNED_HOSTS:
            self._warned.add(host)             # each refused Host logged once (a proxy needs allowed_hosts)
            log.warning("refused an HTTP request with Host %r: not one of this server's names (port %d); "
                        "list the names clients use in allowed_hosts", host, self.port)
        return allowed

    def origin_allowed(self, origin: Optional[str], host: Optional[str], local_address=None) -> bool:
        if origin is None:
            return True                                    # not a browser: nothing to check
        parts = urlsplit(origin)
        if self.allowed_origins is not None:         # "scheme://host:*" patterns match the base, any port
            base = f"{parts.scheme}://{parts.hostname}" if parts.hostname else origin
            return any(p == "*" or _matches(p, origin, base) for p in self.allowed_origins)
        if not parts.scheme or not parts.hostname:
            return False                                   # "null", garbage
        if host and parts.netloc.lower() == host.strip().lower():
            return True                                    # same origin (Host is checked first)
        if parts.hostname not in LOOPBACK:
            return False
        return self.loopback or (self.wildcard and self.allowed_hosts is None and local_address is not None
                                 and _plain_address(local_address()) in LOOPBACK)


def _split_host(host: str):
    """``example.com:8000`` → ``("example.com", 8000)``, ``[::1]:80`` → ``("::1", 80)``; the name in
    lower case; no port → None; a bad port → -1."""
    host = host.strip().lower()
    if host.startswith("[") and "]" in host:
        name, _, rest = host[1:].partition("]")
    elif host.count(":") == 1:
        name, rest = host[:host.find(":")], host[host.find(":"):]
    else:
        name, rest = host, ""
    if not rest:
        return name, None
    port = rest[1:]
    return name, int(port) if rest.startswith(":") and port.isdigit() and port.isascii() else -1


def _plain_address(address: str) -> str:
    """A socket address as ``Host`` would name it: no IPv6 zone, IPv4 not mapped into IPv6."""
    address = address.split("%", 1)[0].lower()
    return address[7:] if address.startswith("::ffff:") and "." in address else address


def _matches(pattern: str, full: str, base: str) -> bool:
    """``pattern`` is exact, or ends with ``:*`` (any port)."""
    pattern, full, base = pattern.lower(), full.lower(), base.lower()
    if pattern.endswith(":*"):
        return base == pattern[:-2].strip("[]") or base == pattern[:-2]
    return full == pattern or base == pattern
