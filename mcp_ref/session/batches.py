"""JSON-RPC batches: an array of messages in one frame (2025-03-26 only).

2025-03-26 allowed a client to send several requests and notifications as one
JSON array, answered by one array of replies; 2024-11-05 did not define
them and 2025-06-18 removed them. ``Batches`` is a mix-in of ``Session``: the
reader (session/inbound.py ``_route``) hands an array here. Replies inside an array
are settled whatever the revision (session/__init__.py rule 7): a peer that batches
its replies still answers our requests. Spec: 2025-03-26
basic/index#batching.
"""
from __future__ import annotations

import threading

from mcp_ref.protocol import lifecycle
from mcp_ref.errors import INVALID_REQUEST, InvalidMessage
from mcp_ref.jsonrpc.messages import ErrorObject, ErrorResponse, Notification, Request, Response, error_response
from mcp_ref.session.state import SessionState


class Batches(SessionState):
    """The batch half of ``Session`` (a mix-in)."""

    def _route_batch(self, items: list):
        """A JSON array (rule 7): replies are settled one by one whatever the revision (a bad
        one never answered); in 2025-03-26 the notifications are routed and the requests run as
        one job whose answers go back as one array (``_Batch``), else the rest is refused."""
        rest = []
        for item in items:
            if isinstance(item, (Response, ErrorResponse)) or getattr(item, "is_response", False):
                self._route(item)
            else:
                rest.append(item)
        if not rest:
            return None
        if not lifecycle.batches_allowed(self.protocol_version):
            return self._reply_job(ErrorResponse(None, ErrorObject(
                INVALID_REQUEST, f"Invalid Request: JSON-RPC batches are not supported in protocol revision "
                                 f"{self.protocol_version or '(not negotiated)'}")))
        replies = [error_response(b) for b in rest if isinstance(b, InvalidMessage)]
        requests = [m for m in rest if isinstance(m, Request)]
        for message in rest:
            if isinstance(message, Notification):
                self._route(message)
        if not requests:
            return self._reply_job(replies) if replies else None
        batch = _Batch(len(requests), replies)
        jobs = [job for job in (self._on_request(request, batch) for request in requests) if job is not None]

        def run_all():
            for job in jobs:
                job()
        return run_all if jobs else None


class _Batch:
    """Collects the replies to the requests of one inbound batch (2025-03-26)."""

    def __init__(self, expected: int, replies: list):
        self.expected, self.replies, self.lock = expected, replies, threading.Lock()

    def add(self, reply) -> list | None:
        """Count one reply of the batch (None: a notification's, or a cancelled request's);
        returns every reply once the last one is in, else None."""
        with self.lock:
            if reply is not None:
                self.replies.append(reply)
            self.expected -= 1
            return self.replies if self.expected == 0 else None
