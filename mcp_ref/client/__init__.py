"""The client's room: the ``Client`` class, and what answers the server's requests.

* ``client``: ``Client`` (connect, the handshake, one method per MCP request).
* ``client_requests``: resources, prompts, completion and logging calls, callbacks,
  argument and output checks; ``client_tasks``: the task requests;
  ``client_restart``: stdio ``auto_restart``.
* What answers a server's request: ``sampling`` (``sampling/createMessage``),
  ``elicitation`` and ``elicitation_schema`` (``elicitation/create``), ``roots``
  (``roots/list``), and ``approval``, the human-in-the-loop hook they share.

The server's room uses ``sampling``, ``elicitation`` and ``roots`` for its own side
of those requests; nothing here imports the server.
"""
from mcp_ref.client.client import Client

__all__ = ["Client"]
