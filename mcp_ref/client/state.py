"""What the rooms of ``Client`` share: its attributes and the methods one room calls in another.

Rules:
1. ``Client`` (client.py) is one class written in rooms, each a mix-in: connect.py (how a
   client is made), answers.py (what it answers), client_requests.py (the server's features),
   tasks/legacy.py (tasks) and modern/era.py (the 2026-07-28 era). Each room inherits
   ``ClientState``, so a name one room uses and another sets is declared here once, with its
   type, and a type checker reads every room as part of one client.
2. Declarations: the attributes are set in ``Client.__init__`` (or by the handshake), except
   those whose starting value is a constant (None, False), given here; each method is
   defined in the room named beside it; the method declarations exist for type checkers
   alone and never run.
"""
from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any, Callable

from mcp_ref import types
from mcp_ref.session import Session
from mcp_ref.session.outbound import CancelToken

__all__ = ["ClientState"]


class ClientState:
    """The state of one ``Client``, as every room sees it."""

    # Set by Client.__init__ from its arguments.
    client_info: types.Implementation
    timeout: float
    init_timeout: float
    requested_version: str                 # "auto" or one revision
    on_notification: Callable | None
    max_pages: int
    validate_output: str
    sampling: Callable | None
    sampling_tools: bool
    elicitation: Callable | None
    elicitation_url: Callable | None
    on_approve: Callable | None
    elicitations: Any                      # elicitation.ElicitationTracker: the URL elicitations awaited
    # Learnt by the handshake (connect.py) or the modern era's discovery (modern/era.py).
    server_info: types.Implementation | None = None
    server_capabilities: dict
    protocol_version: str | None = None
    instructions: str | None = None
    modern: bool = False                   # client.py rule 8: the modern era was chosen
    _asking: str | None = None             # the revision a handshake request is sent in
    # The session and what guards it.
    session: Session
    _lock: threading.Lock
    _restarter: Any = None                 # client_restart.Restarter, set by Client.stdio(auto_restart=N)
    # Caches and tables of the rooms.
    _listening: Any                        # modern/era.py Listening
    _log_level: str | None = None          # the modern era's per-request log level (set_logging_level)
    _tool_cache: dict
    _checks: dict
    _listeners: dict
    _roots: list[types.Root] | None
    _request_handlers: dict
    _notification_handlers: dict

    if TYPE_CHECKING:
        def __init__(self, transport: Any, **options: Any) -> None: ...     # client.py

        # client.py
        @property
        def closed(self) -> bool: ...
        def _request(self, method: str, params: dict | None = None, **options: Any) -> dict: ...
        def _require(self, path: str, what: str) -> None: ...
        def _live_session(self) -> Session: ...
        def _check_process(self) -> None: ...
        def _tool_call_params(self, name: str, arguments: dict | None, as_task: bool = False) -> dict: ...
        def list_tools(self, *, cancel: CancelToken | None = None) -> list[types.Tool]: ...

        # answers.py
        def capabilities(self) -> dict: ...
        def _answer_input(self, method: str, params: dict, ctx: Any = None) -> dict: ...

        # client_requests.py
        def _check_output(self, name: str, result: types.CallToolResult) -> None: ...
        def _page(self, method: str, cursor: str | None, cancel: CancelToken | None, key: str,
                  decode: Callable) -> tuple: ...

        # modern/era.py
        def _relisten(self, session: Session | None = None) -> None: ...
        def _param_headers(self, params: dict) -> dict: ...

        # modern/request.py
        def _modern_meta(self, version: str) -> dict: ...
