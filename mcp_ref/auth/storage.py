"""Where a client keeps its OAuth credentials: client registrations keyed by the
authorization server's ``issuer``, tokens keyed by issuer and resource.

Spec: 2026-07-28 basic/authorization/client-registration#authorization-server-binding
(credentials are associated with the issuer that issued them, never reused with
another), authorization-server-discovery (separate state per authorization server),
security_best_practices (tokens stay confidential: this store never logs them).

Any object with these four methods will do (a keyring, an encrypted file); the
default keeps everything in memory for the life of the process.
"""
from __future__ import annotations

import threading
from typing import Protocol

__all__ = ["TokenStorage", "InMemoryStorage"]


class TokenStorage(Protocol):
    """The interface. ``client``: the registration (``client_id``, optional
    ``client_secret``, ``token_endpoint_auth_method``, ...). ``tokens``: the token
    response with ``expires_at`` (seconds since the epoch) added."""

    def get_client(self, issuer: str) -> dict | None: ...
    def set_client(self, issuer: str, client: dict | None) -> None: ...
    def get_tokens(self, issuer: str, resource: str) -> dict | None: ...
    def set_tokens(self, issuer: str, resource: str, tokens: dict | None) -> None: ...


class InMemoryStorage(TokenStorage):
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._clients: dict = {}
        self._tokens: dict = {}

    def _get(self, table: dict, key):
        with self._lock:
            value = table.get(key)
            return dict(value) if value is not None else None        # a copy: the caller cannot alter ours

    def _set(self, table: dict, key, value) -> None:
        with self._lock:
            if value is None:
                table.pop(key, None)
            else:
                table[key] = dict(value)

    def get_client(self, issuer):
        return self._get(self._clients, issuer)

    def set_client(self, issuer, client):
        self._set(self._clients, issuer, client)

    def get_tokens(self, issuer, resource):
        return self._get(self._tokens, (issuer, resource))

    def set_tokens(self, issuer, resource, tokens):
        self._set(self._tokens, (issuer, resource), tokens)

    def __repr__(self) -> str:                         # never the secrets themselves
        with self._lock:
            return f"<InMemoryStorage: {len(self._clients)} clients, {len(self._tokens)} token sets>"
