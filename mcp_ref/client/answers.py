"""What a client answers: the requests a server sends it, and the notifications only the
client itself handles (the server's notifications reach the callbacks in client_requests.py).

``ServerRequestAnswers`` is a mix-in of ``Client`` (client.py). A request from
the server (``sampling/createMessage``, ``elicitation/create``, ``roots/list``)
is answered by the client feature it names (sampling.py, elicitation.py,
roots.py); a client that did not declare the
capability answers -32601. Spec: client/sampling, client/elicitation,
client/roots.
"""
from __future__ import annotations

from mcp_ref.client.modern import era as client_modern
from mcp_ref import types
from mcp_ref.protocol import lifecycle
from mcp_ref.client.elicitation import answer_elicitation, client_modes
from mcp_ref.client.roots import as_roots
from mcp_ref.client.sampling import answer_create_message
from mcp_ref.client.state import ClientState
from mcp_ref.client.tasks.legacy import answer_related_task
from mcp_ref.errors import CapabilityNotSupported, MethodNotFoundError, get_logger
from mcp_ref.protocol.modern import TASKS_EXTENSION

log = get_logger("mcp_ref.client")


class ServerRequestAnswers(ClientState):
    """How ``Client`` answers the server (a mix-in)."""

    def capabilities(self) -> dict:
        """What this client declares: a feature only when its callback (or roots) was
        given, and only what the revision knows (the one spoken, else the one being
        asked for; ``sampling.tools`` and ``elicitation`` modes from 2025-11-25,
        elicitation from 2025-06-18, roots without ``listChanged`` from 2026-07-28).
        Spec: basic/lifecycle#capability-negotiation, 2026-07-28 basic/index#meta."""
        version = self.protocol_version or self._asking or self.requested_version
        if version == client_modern.AUTO:
            version = lifecycle.MODERN_REVISIONS[0]
        modern = version in lifecycle.MODERN_REVISIONS
        caps: dict = {}
        if self.sampling is not None:
            tools = self.sampling_tools and lifecycle.at_least(version, "2025-11-25")
            caps["sampling"] = {"tools": {}} if tools else {}
        if self._roots is not None:
            caps["roots"] = {} if modern else {"listChanged": True}
        modes: dict = {mode: {} for mode, callback, since in (("form", self.elicitation, "2025-06-18"),
                                                               ("url", self.elicitation_url, "2025-11-25"))
                       if callback is not None and lifecycle.at_least(version, since)}
        if modes:        # 2025-06-18 has no modes: {} there means form (client/elicitation#capabilities)
            caps["elicitation"] = modes if lifecycle.at_least(version, "2025-11-25") else {}
        if modern:                # client/tasks/extension.py rule 1: a task is followed to its end
            caps["extensions"] = {TASKS_EXTENSION: {}}
        return caps

    def _handle_request(self, ctx, method: str, params: dict) -> dict:
        return answer_related_task(params, self._answer_input(method, params, ctx))    # client/tasks/legacy.py rule 6

    def _answer_input(self, method: str, params: dict, ctx=None) -> dict:
        """A server's request, or one input request of a modern multi round-trip answer
        (client/modern/era.py rule 5, no ``ctx``): the same callbacks, capability checks
        and approval hook in both eras."""
        entry = self._request_handlers.get(method)
        if entry is None:
            raise MethodNotFoundError(f"Method not found: {method}")
        handler, capability = entry
        lifecycle.require_own_capability(self.capabilities(), capability, method)
        return handler(ctx, params)

    # -- client features: the bodies live in sampling.py, elicitation.py, roots.py
    def _on_sampling_create_message(self, ctx, params: dict) -> dict:
        """Spec: client/sampling#creating-messages."""
        callback = self.sampling
        if callback is None:                 # the callback was removed after the capability check
            raise MethodNotFoundError("Method not found: sampling/createMessage (no sampling callback)")
        return answer_create_message(ctx, params, callback=callback,
                                     tools_declared=lifecycle.has_capability(self.capabilities(), "sampling.tools"),
                                     approve=self.on_approve, server_info=self.server_info,
                                     version=self.protocol_version)

    def _on_elicitation_create(self, ctx, params: dict, form: bool = True) -> dict:
        """Spec: client/elicitation#elicitation-requests (``form=False``: URL mode only, for a -32042 error)."""
        modes = client_modes(self.capabilities())
        return answer_elicitation(ctx, params, form_callback=self.elicitation if form and "form" in modes else None,
                                  url_callback=self.elicitation_url if "url" in modes else None,
                                  approve=self.on_approve, server_info=self.server_info,
                                  version=self.protocol_version, tracker=self.elicitations)

    def _on_roots_list(self, ctx, params: dict) -> dict:
        """Spec: client/roots#listing-roots."""
        return {"roots": [root.to_dict(self.protocol_version) for root in self.roots or ()]}

    @property
    def roots(self) -> list | None:
        """The roots offered (``None``: roots are not offered)."""
        with self._lock:
            return None if self._roots is None else list(self._roots)

    def set_roots(self, roots) -> None:
        """Replace the roots and, once connected, send ``notifications/roots/list_changed``.

        Raises ``ValueError``/``TypeError`` for an invalid root (nothing changes) and
        ``CapabilityNotSupported`` when connected without having offered roots.
        Spec: client/roots#root-list-changes."""
        new = as_roots(roots)
        with self._lock:
            if self._roots is None and self.protocol_version is not None:
                raise CapabilityNotSupported("roots were not declared when this client connected; "
                                             "pass roots=[] to the constructor to offer them")
            self._roots = new
        if self.protocol_version is not None and not self.closed and not self.modern:
            self._check_process()               # (2026-07-28 has no such notification: roots are asked anew)
            self.session.notify("notifications/roots/list_changed")

    def handle_url_elicitations(self, error) -> list:
        """Show each elicitation of a -32042 error (``UrlElicitationRequiredError``) to
        the ``elicitation_url`` callback and the approval hook; returns their
        ``ElicitResult`` list. Accepted ids are awaited: ``wait_elicitation(id)``
        returns once the server reports them complete, then retry the request.
        Spec: client/elicitation#url-elicitation-required-error."""
        if self.elicitation_url is None or "url" not in client_modes(self.capabilities()):
            raise CapabilityNotSupported("URL mode elicitation needs an elicitation_url callback (and 2025-11-25)")
        return [types.ElicitResult.from_dict(self._on_elicitation_create(None, params, form=False))
                for params in error.elicitations]

    def wait_elicitation(self, elicitation_id: str, timeout: float | None = None) -> bool:
        """Block until the server reports ``elicitation_id`` complete; False on timeout."""
        return self.elicitations.wait(elicitation_id, timeout)
