"""Roots: the ``file://`` URIs a client offers a server, and checking paths against them.

Rules:

1. A root URI is an absolute ``file://`` URI: ``file:///path`` or
   ``file://localhost/path``. Other hosts are refused (a server cannot
   resolve them locally), and so are queries, fragments and ``.``/``..``
   segments, so a root can never point somewhere other than it reads.
   ``validate_root_uri`` raises ``ValueError`` naming what is wrong.
   Spec: client/roots#root ("MUST be a file:// URI"),
   client/roots#security-considerations ("validate all root URIs to prevent
   path traversal").
2. A path is inside a root when, after resolving symlinks and ``..`` in both
   (``os.path.realpath``), the root is a whole-component prefix of the path:
   ``/data/project2`` is not inside ``/data/project``. A root that names a
   file contains only itself. Spec: client/roots#security-considerations
   ("servers SHOULD validate all paths against provided roots").
3. A relative path is resolved against ``base`` when one is given and is
   refused otherwise: a server's working directory says nothing about where
   the client meant.
4. ``as_roots`` accepts ``Root`` objects, ``{"uri", "name"}`` dicts,
   ``file://`` strings, and paths as ``str`` or ``os.PathLike`` (made
   absolute and turned into ``file://`` URIs), and validates each (rule 1);
   one path alone stands for a list of one. A string is a URI when it starts
   with a scheme of two letters or more (``file:``, ``https:``, refused by
   rule 1), otherwise a path (``C:\\data`` too). It is what
   ``Client(roots=...)`` and ``Client.set_roots`` use.

This module does no I/O of its own (``list_roots`` sends through the peer it
is given); the path checks read the file system only to resolve symlinks.
Spec: client/roots.
"""
import os
import re
from pathlib import Path
from typing import Iterable, Optional, Union
from urllib.parse import unquote, urlsplit

from mcp_ref.protocol import lifecycle
from mcp_ref.types import ListRootsResult, Root

__all__ = ["list_roots", "validate_root_uri", "uri_to_path", "path_to_uri", "as_roots", "resolve_path", "find_root",
           "is_inside", "require_inside", "PathOutsideRoots"]

PathLike = Union[str, os.PathLike]


class PathOutsideRoots(PermissionError):
    """A path lies outside every root the client offered."""


def list_roots(peer, *, timeout: Optional[float] = None) -> list:
    """Send ``roots/list`` through ``peer`` (a server ``Context`` or session) and
    return the client's ``Root`` list. Spec: client/roots#listing-roots.

    Raises:
        CapabilityNotSupported: the client did not declare ``roots`` (nothing is sent).
        McpError, RequestTimeout, RequestCancelled, ConnectionClosed: as for any request.
    """
    lifecycle.require_peer_capability(peer.client_capabilities, "roots", "roots/list")
    return ListRootsResult.from_dict(peer.request("roots/list", None, timeout=timeout)).roots


def validate_root_uri(uri) -> str:
    """Return ``uri`` when it is an acceptable root URI (rule 1); raise ``ValueError`` otherwise."""
    if not isinstance(uri, str) or not uri:
        raise ValueError(f"a root URI must be a non-empty string, not {uri!r}")
    parts = urlsplit(uri)
    if parts.scheme.lower() != "file":
        raise ValueError(f"a root URI must start with file:// (client/roots#root): {uri!r}")
    if not uri[len(parts.scheme):].startswith("://"):
        raise ValueError(f"a root URI must be written file://[localhost]/absolute/path: {uri!r}")
    if parts.netloc not in ("", "localhost"):
        raise ValueError(f"a root URI must name a local path (host {parts.netloc!r} refused): {uri!r}")
    if parts.query or parts.fragment or "?" in uri or "#" in uri:
        raise ValueError(f"a root URI has no query or fragment: {uri!r}")
    if not parts.path.startswith("/"):
        raise ValueError(f"a root URI needs an absolute path: {uri!r}")
    if {".", ".."} & set(unquote(parts.path).replace("\\", "/").split("/")):
        raise ValueError(f"a root URI must not contain '.' or '..' segments: {uri!r}")
    if "\x00" in unquote(parts.path):
        raise ValueError(f"a root URI must not contain NUL: {uri!r}")
    return uri


def uri_to_path(uri: str) -> str:
    """The local path of a ``file://`` URI (validated first, rule 1)."""
    validate_root_uri(uri)
    from urllib.request import url2pathname   # here, not at import: urllib.request costs ~20 ms
    return url2pathname(urlsplit(uri).path)


def path_to_uri(path: PathLike) -> str:
    """The ``file://`` URI of ``path``, made absolute (not resolved: symlinks are kept)."""
    return Path(os.path.abspath(os.fspath(path))).as_uri()


# A URI scheme (RFC 3986) of two characters or more: one letter is a Windows drive.
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]+:")


def as_roots(items: Optional[Iterable]) -> list:
    """``Root`` objects for ``items`` (rule 4). Raises ``ValueError`` or ``TypeError``."""
    if isinstance(items, (str, os.PathLike)):
        items = [items]                           # one path: a list of one
    roots = []
    for item in items or ():
        if isinstance(item, Root):
            root = item
        elif isinstance(item, dict):
            root = Root.from_dict(item)
        elif isinstance(item, (str, os.PathLike)):
            root = Root(uri=item if isinstance(item, str) and _SCHEME.match(item) else path_to_uri(item))
        else:
            raise TypeError(f"a root is a Root, a {{'uri', 'name'}} dict, a file:// URI or a path, "
                            f"not {type(item).__name__}")
        validate_root_uri(root.uri)
        if root.name is not None and not isinstance(root.name, str):
            raise TypeError(f"a root's name is a string, not {type(root.name).__name__}")
        roots.append(root)
    return roots


def _root_uri(root) -> str:
    if isinstance(root, Root):
        return root.uri
    if isinstance(root, dict):
        return root["uri"]
    if isinstance(root, os.PathLike):
        return path_to_uri(root)
    return root


def resolve_path(path: PathLike, base: Optional[PathLike] = None) -> str:
    """``path`` with symlinks and ``..`` resolved (rule 2); a ``file://`` URI is accepted.

    Raises:
        ValueError: ``path`` is relative and no ``base`` was given (rule 3).
    """
    if isinstance(path, str) and path.lower().startswith("file:"):
        path = uri_to_path(path)
    path = os.fspath(path)
    if not os.path.isabs(path):
        if base is None:
            raise ValueError(f"relative path {path!r}: give an absolute path or a base to resolve it against")
        path = os.path.join(os.fspath(base), path)
    return os.path.realpath(path)


def _contains(root_path: str, path: str) -> bool:
    root_path, path = os.path.normcase(root_path), os.path.normcase(path)
    if os.path.isfile(root_path):
        return path == root_path
    try:
        return os.path.commonpath([root_path, path]) == root_path
    except ValueError:                        # different drives on Windows
        return False


def find_root(path: PathLike, roots: Iterable, base: Optional[PathLike] = None):
    """The first of ``roots`` that contains ``path`` (rule 2), or ``None``.

    ``roots`` holds ``Root`` objects, dicts or URIs (as ``list_roots()``
    returns them). A root whose URI is not a valid file URI never matches.
    """
    resolved = resolve_path(path, base)
    for root in roots:
        try:
            root_path = os.path.realpath(uri_to_path(_root_uri(root)))
        except ValueError:
            continue
        if _contains(root_path, resolved):
            return root
    return None


def is_inside(path: PathLike, roots: Iterable, base: Optional[PathLike] = None) -> bool:
    """True when ``path`` lies inside one of ``roots`` (rule 2)."""
    return find_root(path, roots, base) is not None


def require_inside(path: PathLike, roots: Iterable, base: Optional[PathLike] = None) -> str:
    """The resolved ``path`` when it lies inside one of ``roots``.

    Raises:
        PathOutsideRoots: it does not (a ``PermissionError``).
        ValueError: ``path`` is relative without ``base``.
    """
    roots = list(roots)
    if find_root(path, roots, base) is None:
        names = ", ".join(str(_root_uri(r)) for r in roots) or "(no roots)"
        raise PathOutsideRoots(f"{os.fspath(path)!r} is outside the client's roots: {names}")
    return resolve_path(path, base)
