"""Example servers: run each with ``python -m mcp_ref.examples.<name>``.

* ``demo_server``: the small arithmetic server of the README (tools only).
* ``everything``: one server that exercises every server feature.

The demo (``python -m mcp_ref demo``) and the end-to-end tests spawn these as
real stdio subprocesses, so the examples cannot rot.
"""
