"""Multi round-trip requests of 2026-07-28, the client's side (client/modern/era.py
rule 5; a modern request and its result are client/modern/requesting.py): a result that asks for input
(``InputRequiredResult``) names what the server needs (sampling, elicitation,
roots); the client answers each and retries the request with the answers and
the ``requestState`` echoed exactly, at most ``MAX_INPUT_ROUNDS`` times.
Spec 2026-07-28: basic/patterns/mrtr.
"""
from __future__ import annotations

from mcp_ref import types
from mcp_ref.protocol import modern
from mcp_ref.errors import InternalError, InvalidParamsError

# The methods an input request may name, and the type its params are read by (roots/list has none).
INPUT_METHODS: dict = {"sampling/createMessage": types.CreateMessageRequestParams,
                        "elicitation/create": types.ElicitRequestParams, "roots/list": None}


# ---------------------------------------------------------------- multi round-trip (rule 5)
MAX_INPUT_ROUNDS = 32


def retry_params(base: dict, method: str, result: dict, answer) -> dict:
    """Rule 5: the params of the retry of ``method`` (``base`` without ``_meta``), after
    ``answer(method, params)`` answered each input request of ``result``."""
    if method not in modern.INPUT_REQUIRED_METHODS:
        raise InternalError(f"the server answered {method} with an InputRequiredResult, which only "
                            f"{', '.join(sorted(modern.INPUT_REQUIRED_METHODS))} may get")
    requests, state = read_input_required(result)
    params = {k: v for k, v in base.items() if k not in ("inputResponses", "requestState")}
    responses = {key: answer(input_method, input_params) for key, (input_method, input_params) in requests.items()}
    if responses:
        params["inputResponses"] = responses
    if state is not None:
        params["requestState"] = state
    return params


def read_input_request(data) -> tuple:
    """One ``InputRequest``: ``(method, params)`` with the params read by our types
    (Spec 2026-07-28: basic/patterns/mrtr#inputrequests)."""
    if not isinstance(data, dict) or data.get("method") not in INPUT_METHODS:
        raise InvalidParamsError("an input request is a sampling/createMessage, elicitation/create or "
                                 "roots/list request")
    method, params = data["method"], data.get("params")
    if params is not None and not isinstance(params, dict):
        raise InvalidParamsError(f"{method}: params must be an object")
    if INPUT_METHODS[method] is not None:
        INPUT_METHODS[method].from_dict(params or {})
    return method, params or {}


def read_input_required(result) -> tuple:
    """An ``InputRequiredResult``: ``({key: (method, params)}, requestState or None)``."""
    if not isinstance(result, dict) or result.get("resultType") != "input_required":
        raise InvalidParamsError("not an InputRequiredResult")
    requests = result.get("inputRequests") or {}
    if not isinstance(requests, dict):
        raise InvalidParamsError("InputRequiredResult.inputRequests: expected object")
    state = result.get("requestState")
    if state is not None and not isinstance(state, str):
        raise InvalidParamsError("InputRequiredResult.requestState: expected string")
    if not requests and state is None:
        raise InvalidParamsError("an InputRequiredResult holds inputRequests, requestState or both")
    return {key: read_input_request(value) for key, value in requests.items()}, state

