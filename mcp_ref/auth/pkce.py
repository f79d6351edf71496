"""PKCE (RFC 7636, S256 only) and the ``state`` value of an authorization request.

Spec: basic/authorization#authorization-code-protection (S256 "when technically
capable": always, here), #open-redirection (``state``). ``secrets`` gives the
randomness; nothing here is logged.
"""
import base64
import hashlib
import hmac
import secrets

__all__ = ["new_verifier", "challenge_for", "new_state", "same_secret"]


def new_verifier() -> str:
    """A code verifier: 64 characters of ``[A-Za-z0-9_-]`` (RFC 7636 §4.1 allows 43 to 128)."""
    return secrets.token_urlsafe(48)


def challenge_for(verifier: str) -> str:
    """``BASE64URL(SHA256(verifier))`` without padding (RFC 7636 §4.2, method S256)."""
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def new_state() -> str:
    return secrets.token_urlsafe(32)


def same_secret(a, b) -> bool:
    """Constant-time comparison of two strings (None never matches)."""
    return isinstance(a, str) and isinstance(b, str) and hmac.compare_digest(a.encode("utf-8"), b.encode("utf-8"))
