"""Unguessable ids: ``Mcp-Session-Id`` values and task ids.

Spec: basic/transports#session-management (a session id SHOULD be globally
unique and cryptographically secure, and MUST be visible ASCII),
basic/security_best_practices#session-hijacking, basic/utilities/tasks
#task-id-requirements and #task-isolation-and-access-control (unique, and
with enough entropy that nobody can guess another's).

The bytes come from ``os.urandom``, the operating system's CSPRNG: the same
source the ``secrets`` module reads (``secrets.token_bytes`` is
``SystemRandom().randbytes``, which is ``os.urandom``), written the same way
as ``secrets.token_urlsafe`` writes them. ``secrets`` itself is not loaded: it
brings ``hmac``, ``hashlib`` and OpenSSL with it, about 2.3 ms of an HTTP
server's way to its first answer, where the first session is made
(``bench/bench_http.py``, spawn to first answer).
"""
import os

__all__ = ["token_urlsafe"]


def token_urlsafe(nbytes: int) -> str:
    """``nbytes`` random bytes as URL-safe base64 without padding (``[A-Za-z0-9_-]``,
    ``ceil(nbytes * 4 / 3)`` characters): what ``secrets.token_urlsafe`` gives."""
    import base64                   # here: a stdio server makes ids only for tasks (start-up time)
    return base64.urlsafe_b64encode(os.urandom(nbytes)).rstrip(b"=").decode("ascii")
