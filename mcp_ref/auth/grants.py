"""Machines acting for themselves: the ``client_credentials`` grant and the JWT bearer
grant (RFC 7523), on the token handling every provider shares (providers.py
``_Provider``: discovery, the token, refresh, step-up, and the token request of
the form each grant names in ``_form``). Spec: basic/authorization.
"""
from mcp_ref.auth.oauth import JWT_BEARER
from mcp_ref.auth.providers import _Provider

__all__ = ["ClientCredentialsProvider", "JwtBearerGrantProvider"]


class ClientCredentialsProvider(_Provider):
    """A machine acting for itself: the ``client_credentials`` grant. Authenticates with
    ``client_secret`` or, for ``private_key_jwt``, ``client_assertion(audience) -> JWT``
    (the audience is the authorization server's issuer; the application signs)."""

    def __init__(self, client_id, *, client_secret=None, client_assertion=None, scope=None, storage=None):
        if client_secret is None and client_assertion is None:
            raise ValueError("client credentials need a client_secret or a client_assertion callback")
        super().__init__(client_id=client_id, client_secret=client_secret, scope=scope, storage=storage)
        self.client_assertion = client_assertion

    def _form(self, scope) -> dict:
        return {"grant_type": "client_credentials", "scope": scope, "resource": self.resource}


class JwtBearerGrantProvider(_Provider):
    """The JWT bearer grant (RFC 7523 §2.1): ``assertion(issuer, resource) -> JWT``, an
    identity assertion the application obtained (enterprise single sign-on); the client
    authenticates with ``client_secret`` when it has one."""

    def __init__(self, client_id, *, client_secret=None, assertion, scope=None, storage=None):
        if not callable(assertion):
            raise TypeError("assertion is a function (issuer, resource) -> a signed JWT")
        super().__init__(client_id=client_id, client_secret=client_secret, scope=scope, storage=storage)
        self.assertion = assertion

    def _form(self, scope) -> dict:
        return {"grant_type": JWT_BEARER, "assertion": self.assertion(self.issuer, self.resource),
                "scope": scope, "resource": self.resource}
