"""Multi round-trip requests on the server side (2026-07-28): asking the client by
ending the call, and running it again with the answers.

In the modern era a server sends the client no requests. A tool (or prompt, or
resource function) that calls ``ctx.elicit``, ``ctx.sample`` or
``ctx.list_roots`` in a 2026-07-28 request ends the call with an
``InputRequiredResult``; the client answers and retries the request with
``inputResponses`` and the ``requestState`` we gave it; the function runs
again from the top, and this time the same call returns the answer. So one
function serves both eras. Spec 2026-07-28: basic/patterns/mrtr.

Rules:

1. ``Context.request`` of ``elicitation/create``, ``sampling/createMessage`` or
   ``roots/list`` during a modern ``tools/call``, ``prompts/get`` or
   ``resources/read`` comes here (``ask``); during any other request it is
   refused (the spec allows input requests only on
   those three; ``SessionError``). The capability checks of sampling.py, elicitation.py and
   roots.py run first, against the request's own client capabilities.
2. Keys are the function's to name (``key=`` of ``ctx.elicit``, ``ctx.sample``,
   ``ctx.list_roots``; the keys of ``ctx.gather``), else the n-th unnamed ask
   of a kind in a run is ``<kind>-<n>`` (``elicit-1``, ``sample-2``, ...; a
   name taken already is skipped). A key used twice in one run is
   ``DuplicateInputKey`` (keys MUST be unique within the request; the
   ``Context`` assigns and checks them). An answer is used only for the same
   key *and* the same request (a digest of method and params): a function
   that asks something else on its second run is asked again, never handed a
   stale answer.
3. The first unanswered ask ends the run (``InputRequired``, a
   ``BaseException`` so a function's ``except Exception`` does not swallow it)
   with one input request; ``ctx.gather`` ends it with every unanswered ask
   of the gather in one ``InputRequiredResult``. The answers so far travel in
   ``requestState``. A retry that lacks an answer is asked again (Spec:
   SHOULD re-ask, not fail); answers it brings are kept, so a partly
   answered gather asks again only what is missing.
4. ``requestState`` is ``base64url(JSON).base64url(HMAC-SHA256)`` under a
   per-server random key (``Server.mrtr_secret``), bound to the method and its
   ``name``/``uri`` and valid for ``STATE_TTL`` seconds: a state that fails
   any check is refused with -32602 (Spec: MUST treat it as attacker-controlled).
   A server restarted with a new key refuses old states; clients then start over.
5. Answers the client adds that we did not ask for are ignored.
6. A question the request's client capabilities do not allow ends the call
   with -32021 ``MissingRequiredClientCapabilityError`` whose
   ``data.requiredCapabilities`` names what was missing (Spec 2026-07-28:
   basic/index#meta: MUST), instead of the legacy era's ``isError`` result
   (``needs``; ``MissingCapability`` is a ``BaseException`` for the same reason
   as ``InputRequired``).

How a function should behave when it runs twice: everything before its last
ask runs once per round. Ask first, act after: do side effects (writes,
payments, messages) after the asks, or make them idempotent; keep asks in the
same order for the same inputs; do not rely on state kept between runs.
"""
from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from contextlib import contextmanager

from mcp_ref.errors import (CapabilityNotSupported, InvalidParamsError, MissingRequiredClientCapabilityError,
                            SessionError)

__all__ = ["InputRequired", "MissingCapability", "needs", "ask", "input_required_result", "STATE_TTL"]

STATE_TTL = 600.0           # seconds a requestState is accepted (rule 4)
ASKING_METHODS = ("tools/call", "prompts/get", "resources/read")     # Spec: mrtr#supported-requests


class InputRequired(BaseException):
    """Rule 3: the run ends here; the server answers an ``InputRequiredResult``.
    ``asks``: key -> (method, params) of each unanswered ask (one, or a gather's); ``state``:
    the run's verified answers so far, key -> [digest, answer] (None: not read)."""

    def __init__(self, asks: dict, state: dict | None):
        super().__init__("input required: " + ", ".join(f"{method} ({key})" for key, (method, _) in asks.items()))
        self.asks, self.state = asks, state


class MissingCapability(BaseException):
    """Rule 6: the call ends with -32021."""

    def __init__(self, required: dict, message: str):
        super().__init__(message)
        self.required, self.message = required, message

    def error(self) -> MissingRequiredClientCapabilityError:
        return MissingRequiredClientCapabilityError(f"Missing required client capability: {self.message}",
                                                    {"requiredCapabilities": self.required})


@contextmanager
def needs(required: dict, active: bool = True):
    """Rule 6: ``with needs({"sampling": {}}, active=...):`` turns the capability refusal
    of the code inside into ``MissingCapability`` (when ``active``: a modern request)."""
    try:
        yield
    except CapabilityNotSupported as exc:
        if not active:
            raise
        raise MissingCapability(required, str(exc)) from None


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _digest(method: str, params) -> str:
    data = json.dumps([method, params], sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(data.encode("utf-8")).hexdigest()[:32]


def _target(ctx) -> list:
    params = ctx.params if isinstance(ctx.params, dict) else {}
    return [ctx.method, params.get("name") if ctx.method != "resources/read" else params.get("uri")]


def _sign(secret: bytes, payload: dict) -> str:
    body = json.dumps(payload, sort_keys=True, separators=(",", ":")).encode("utf-8")
    return _b64(body) + "." + _b64(hmac.new(secret, body, hashlib.sha256).digest())


def _verify(secret: bytes, token, target: list) -> dict:
    """Rule 4: the state's payload, or -32602."""
    try:
        body_text, mac_text = token.split(".")
        body = _unb64(body_text)
        good = hmac.compare_digest(_unb64(mac_text), hmac.new(secret, body, hashlib.sha256).digest())
        payload = json.loads(body) if good else None
    except (AttributeError, ValueError, TypeError):
        payload = None
    if not isinstance(payload, dict):
        raise InvalidParamsError("Invalid params: requestState failed verification")
    if payload.get("t") != target:
        raise InvalidParamsError("Invalid params: requestState belongs to another request")
    if not isinstance(payload.get("e"), (int, float)) or payload["e"] < time.time():
        raise InvalidParamsError("Invalid params: requestState has expired; send the request again without it")
    return payload


def load(ctx) -> dict:
    """Rules 4 and 5: the run's answers, from a retry's ``requestState`` and
    ``inputResponses``, kept as ``ctx._mrtr``. serve.py calls it before the function runs
    when the request carries a state (its refusal is the request's error, not the
    function's); ``ask`` on the first ask otherwise."""
    params = ctx.params if isinstance(ctx.params, dict) else {}
    token = params.get("requestState")
    answers: dict = {}
    if token is not None:
        payload = _verify(ctx.server.mrtr_secret, token, _target(ctx))
        if isinstance(payload.get("a"), dict):
            answers = payload["a"]
        responses = params.get("inputResponses")
        if responses is not None and not isinstance(responses, dict):
            raise InvalidParamsError("Invalid params: inputResponses must be an object")
        pending = payload.get("p")
        for key, digest in (pending.items() if isinstance(pending, dict) else ()):
            if responses and key in responses:
                if not isinstance(responses[key], dict):
                    raise InvalidParamsError(f"Invalid params: inputResponses[{key!r}] must be an object")
                answers[key] = [digest, responses[key]]
    ctx._mrtr = answers
    return answers


def ask(ctx, method: str, params, key: str) -> dict:
    """Rules 1 to 3: the client's answer to this ask (``key``: given by the ``Context``,
    rule 2), or ``InputRequired``."""
    if ctx.method not in ASKING_METHODS:
        raise SessionError(f"{method}: a {ctx.era.version} server may ask the client only during "
                                     f"{', '.join(ASKING_METHODS)} (Spec 2026-07-28: basic/patterns/mrtr)")
    state = ctx._mrtr if ctx._mrtr is not None else load(ctx)
    if method == "elicitation/create" and isinstance(params, dict):
        params = {k: v for k, v in params.items() if k != "elicitationId"}   # 2026-07-28 has none
    digest = _digest(method, params)
    entry = state.get(key)
    if isinstance(entry, list) and len(entry) == 2 and entry[0] == digest:
        return entry[1]
    raise InputRequired({key: (method, params)}, state)


def input_required_result(ctx, stop: InputRequired) -> dict:
    """Rule 3: the ``InputRequiredResult`` that ends this run, asking every ask of ``stop``."""
    requests = {}
    for key, (method, params) in stop.asks.items():
        requests[key] = {"method": method} if params is None else {"method": method, "params": params}
    payload = {"t": _target(ctx), "e": time.time() + STATE_TTL,
               "a": {k: v for k, v in (stop.state or {}).items() if k not in stop.asks},
               "p": {key: _digest(method, params) for key, (method, params) in stop.asks.items()}}
    return {"resultType": "input_required", "inputRequests": requests,
            "requestState": _sign(ctx.server.mrtr_secret, payload)}
