"""``WWW-Authenticate`` challenges (RFC 9110 §11.6.1, RFC 6750 §3) and resource URIs.

Shared by both ends: the server writes ``Bearer resource_metadata="…", scope="…"``
(RFC 9728 §5.1) and ``error="insufficient_scope"``; the client reads them.
``canonical_resource`` is the RFC 8707 form of a server URI both ends compare.
Spec: basic/authorization#protected-resource-metadata-discovery-requirements,
#resource-parameter-implementation, #scope-challenge-handling.
"""
from __future__ import annotations

import re
from urllib.parse import urljoin, urlsplit, urlunsplit

__all__ = ["parse_challenges", "bearer_challenge", "format_challenge", "split_scopes", "canonical_resource",
           "resource_covers", "well_known_resource_metadata"]

_TOKEN = r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+"
_PARAM = re.compile(r"\s*(" + _TOKEN + r")\s*=\s*(\"(?:[^\"\\]|\\.)*\"|" + _TOKEN + r")\s*(,|$)")
_SCHEME = re.compile(r"[ ,]*\s*(" + _TOKEN + r")(?:\s+|$)")


def parse_challenges(value: str) -> list:
    """``[(scheme lower-case, {param lower-case: value})]`` for one header value; lenient:
    what cannot be parsed ends the list. A ``token=value`` (then a comma or the end) is a
    parameter of the current challenge; a token then a space or the end opens the next."""
    challenges: list = []
    pos, value = 0, value or ""
    while True:
        param = _PARAM.match(value, pos) if challenges else None
        if param:
            raw = param.group(2)
            if raw.startswith('"'):
                raw = re.sub(r"\\(.)", r"\1", raw[1:-1])
            challenges[-1][1].setdefault(param.group(1).lower(), raw)
            pos = param.end()
            continue
        scheme = _SCHEME.match(value, pos)
        if not scheme:
            return challenges
        challenges.append((scheme.group(1).lower(), {}))
        pos = scheme.end()


def bearer_challenge(headers) -> dict | None:
    """The parameters of the ``Bearer`` challenge among a response's ``WWW-Authenticate``
    headers (``headers``: a mapping or ``requests``' case-insensitive dict), None without one."""
    challenges = parse_challenges(headers.get("WWW-Authenticate"))
    return next((params for scheme, params in challenges if scheme == "bearer"), None)


def _quote(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def format_challenge(**params) -> str:
    """``Bearer k="v", ...`` for the parameters that are not None (in the order given)."""
    return "Bearer " + ", ".join(f"{key}={_quote(str(value))}" for key, value in params.items() if value is not None)


def split_scopes(value) -> list:
    """A ``scope`` value (space-separated, RFC 6749 §3.3) or a list of scopes, as a list."""
    if value is None:
        return []
    return value.split() if isinstance(value, str) else [str(v) for v in value]


def canonical_resource(url: str) -> str:
    """RFC 8707 §2 / basic/authorization#canonical-server-uri: lower-case scheme and host,
    no fragment, no default port, no trailing slash (unless the path is only ``/``... which
    is dropped too, the form the spec recommends)."""
    parts = urlsplit(url.strip())
    scheme, host = parts.scheme.lower(), (parts.hostname or "")
    if ":" in host:
        host = f"[{host}]"
    if parts.port is not None and {"http": 80, "https": 443}.get(scheme) != parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((scheme, host, parts.path.rstrip("/"), parts.query, ""))


def resource_covers(resource: str, server_url: str) -> bool:
    """True when the metadata's ``resource`` names ``server_url``: the same URI, or a parent
    of its path at the same origin (RFC 9728 §3.3 names the resource; RFC 8707 lets a
    client use the broader URI)."""
    r, s = canonical_resource(resource), canonical_resource(server_url)
    if r == s:
        return True
    rp, sp = urlsplit(r), urlsplit(s)
    return (rp.scheme, rp.netloc) == (sp.scheme, sp.netloc) and not rp.query and \
        (rp.path == "" or sp.path.startswith(rp.path + "/"))


def well_known_resource_metadata(server_url: str) -> list:
    """The protected resource metadata URIs in the spec's order: path-inserted, then root
    (RFC 9728 §3.1). Spec: basic/authorization#protected-resource-metadata-discovery-requirements."""
    root = urljoin(server_url, "/.well-known/oauth-protected-resource")
    path = urlsplit(server_url).path.rstrip("/")
    return [root + path, root] if path else [root]
