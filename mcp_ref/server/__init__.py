"""The server's room: the ``Server`` class, the ``Context`` its handlers get, and its
features, one module per area.

* ``server``: ``Server`` (registration, the request-handler table, initialize,
  ``run``/``serve``), ``Context``, ``ServerSession``.
* ``features``: the rules every feature area shares, and their small helpers.
* ``tools``, ``resources``, ``prompts``, ``utilities`` (completion and logging),
  ``pagination``, ``tasks`` and ``task_context``: one area each.

A server sits on the protocol core (``session``, ``calls``, ``lifecycle``,
``messages``, ``types``) and reaches the client's room only for what it shares
with it (``ctx.sample``, ``ctx.elicit``, ``ctx.list_roots``: client/sampling.py,
client/elicitation.py, client/roots.py, loaded on first use).
"""
from mcp_ref.server.server import Context, Server, ServerSession

__all__ = ["Server", "Context", "ServerSession"]
