"""Fetching OAuth metadata without being turned against the client's own network
(server-side request forgery). Spec: 2025-11-25 security_best_practices
#server-side-request-forgery-ssrf (SEC-9, SEC-11, SEC-12), RFC 9728 section 7.7;
2026-07-28 basic/authorization/security-considerations.

The URLs a client fetches while discovering authorization come from the server it
talks to: the ``resource_metadata`` URL of a 401 challenge, the
``authorization_servers`` of the protected resource metadata, and the token and
registration endpoints that metadata names. A hostile server can point them at
``http://169.254.169.254/`` (a cloud metadata service) or at an internal host.

Rules:

1. Only ``http`` and ``https`` URLs with a host are fetched.
2. The host is resolved and *every* address it resolves to is checked: private
   (10/8, 172.16/12, 192.168/16, fc00::/7), link-local (169.254/16, fe80::/10),
   shared (100.64/10), unspecified, multicast and reserved addresses are refused
   with ``UnsafeAddressError`` (a ``DiscoveryError``); loopback (127/8, ::1) is
   allowed by default, as ``check_endpoint`` allows ``http`` on loopback hosts
   (tests, local development). An IPv4-mapped IPv6 address is checked as IPv4.
3. Redirects are not followed blindly: each response is fetched with
   ``allow_redirects=False``; a redirect's target is checked (rules 1 and 2, and
   ``https`` stays ``https``) before it is requested, at most ``MAX_REDIRECTS`` times.
4. A host that does not resolve is not refused here: nothing can be reached there
   and the request fails on its own.
5. The caller can widen the policy: ``AddressPolicy(allow_private=True)`` (an MCP
   server and its authorization server on a private network), ``allow_loopback=False``
   (production), ``allowed_hosts`` (names fetched whatever they resolve to). The
   policy is the ``address_policy`` attribute of the HTTP session when it has one,
   else ``DEFAULT_POLICY``.
6. Every authorization fetch goes through here, not only the metadata GETs: the
   token request (every grant, refresh included) and the dynamic client
   registration POST are checked as rules 1 and 2 say before they are sent
   (``guarded_post``), and a POST never follows a redirect.

Not covered: the address is resolved again by the HTTP library when it connects,
so a DNS answer that changes between the check and the connection (rebinding) is
not caught; an egress proxy that enforces the policy on the connection itself is
the operator's tool for that (SEC-13).
"""
from __future__ import annotations

import ipaddress
import socket
from dataclasses import dataclass, field
from urllib.parse import urljoin, urlsplit

from mcp_ref.auth.exceptions import DiscoveryError

__all__ = ["AddressPolicy", "DEFAULT_POLICY", "UnsafeAddressError", "check_url", "guarded_get", "guarded_post",
           "MAX_REDIRECTS"]

MAX_REDIRECTS = 5
REDIRECTS = (301, 302, 303, 307, 308)
SHARED = ipaddress.ip_network("100.64.0.0/10")


class UnsafeAddressError(DiscoveryError):
    """An OAuth-related URL (or a redirect's target) names, or resolves to, an address
    the client's policy does not let it fetch (rule 2), or a scheme it never fetches."""


@dataclass(frozen=True)
class AddressPolicy:
    """Rule 5: which addresses an OAuth metadata fetch may reach."""
    allow_loopback: bool = True
    allow_private: bool = False
    allowed_hosts: frozenset = field(default_factory=frozenset)


DEFAULT_POLICY = AddressPolicy()


def _refusal(address: str, policy: AddressPolicy) -> str | None:
    """Why ``address`` may not be fetched, or None."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    if ip.is_loopback:
        return None if policy.allow_loopback else "a loopback address"
    if ip.is_link_local:
        return None if policy.allow_private else "a link-local address"
    if ip.is_unspecified or ip.is_multicast or ip.is_reserved:
        return "a reserved address"
    if ip.is_private or (isinstance(ip, ipaddress.IPv4Address) and ip in SHARED):
        return None if policy.allow_private else "a private address"
    return None


def check_url(url: str, policy: AddressPolicy = DEFAULT_POLICY) -> str:
    """Rules 1 and 2: ``url`` if it may be fetched, else ``UnsafeAddressError``."""
    parts = urlsplit(url) if isinstance(url, str) else None
    if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
        raise UnsafeAddressError(f"refusing to fetch {url!r}: not an http(s) URL with a host", url=str(url))
    host = parts.hostname
    if host in policy.allowed_hosts:
        return url
    try:
        addresses = [str(ipaddress.ip_address(host))]        # an address is not looked up
    except ValueError:
        try:
            addresses = [str(info[4][0]) for info in socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)]
        except (OSError, UnicodeError):
            addresses = []                                      # rule 4
    for address in addresses:
        why = _refusal(address, policy)
        if why is not None:
            raise UnsafeAddressError(f"refusing to fetch {url!r}: {host} is {why} ({address}); "
                                     f"allow it with AddressPolicy", url=url)
    return url


def guarded_get(http, url: str, *, headers=None, timeout=None):
    """``http.get(url)`` under rules 1-3; the first response that is not a redirect
    (``UnsafeAddressError`` beyond ``MAX_REDIRECTS`` redirects)."""
    policy = getattr(http, "address_policy", None) or DEFAULT_POLICY
    check_url(url, policy)
    for _ in range(MAX_REDIRECTS + 1):
        response = http.get(url, headers=headers, timeout=timeout, allow_redirects=False)
        location = response.headers.get("Location") if response.status_code in REDIRECTS else None
        if not location:
            return response
        target = urljoin(url, location)
        response.close()
        if urlsplit(url).scheme == "https" and urlsplit(target).scheme != "https":
            raise UnsafeAddressError(f"refusing the redirect from {url!r} to {target!r}: not https", url=target)
        url = check_url(target, policy)
    raise UnsafeAddressError(f"more than {MAX_REDIRECTS} redirects fetching OAuth metadata", url=url)


def guarded_post(http, url: str, **options):
    """Rule 6: ``http.post(url, **options)`` once ``url`` passed rules 1 and 2; no redirect followed."""
    check_url(url, getattr(http, "address_policy", None) or DEFAULT_POLICY)
    return http.post(url, allow_redirects=False, **options)
