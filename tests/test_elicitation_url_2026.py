"""URL mode elicitation by revision: 2026-07-28 dropped ``elicitationId`` (and the
completion notification and -32042 with it; its changelog, item 11), 2025-11-25
requires it. Checked against the two schemas, then over ``memory_pair()`` with our
server, every message validated against the revision spoken
(client/elicitation.py rule 5). Spec: client/elicitation#url-mode-elicitation-requests."""
from __future__ import annotations

import jsonschema
import pytest

from conftest import _wire_validator
from mcp_ref import Server
from mcp_ref.client.elicitation import answer_elicitation, url_elicitation
from mcp_ref.errors import InvalidParamsError, McpError
from mcp_ref.server import Context
from mcp_ref.types import ElicitResult

from client_features_helpers import connect, feature_server, text

URL = "https://example.com/connect?service=mail"
MODERN = {"mode": "url", "message": "Connect your mail account.", "url": URL}      # 2026-07-28's shape
LEGACY = {**MODERN, "elicitationId": "e-1"}                                         # 2025-11-25's


def schema_problem(revision: str, name: str, value) -> str | None:
    """Why ``value`` is not a valid ``name`` of ``revision``'s schema.json (None: it is)."""
    key, definitions = _wire_validator.definitions(revision)
    validator = jsonschema.Draft202012Validator({"$ref": f"#/{key}/{name}", key: definitions})
    error = jsonschema.exceptions.best_match(validator.iter_errors(value))
    return None if error is None else error.message


class UrlAnswer:
    """An ``elicitation_url`` callback that accepts and keeps what it was given."""

    def __init__(self):
        self.requests = []

    def __call__(self, request):
        self.requests.append(request)
        return ElicitResult(action="accept")


def test_the_two_schemas_disagree_on_elicitation_id():
    assert schema_problem("2026-07-28", "ElicitRequestURLParams", MODERN) is None
    assert "elicitationId" in schema_problem("2025-11-25", "ElicitRequestURLParams", MODERN)
    assert schema_problem("2025-11-25", "ElicitRequestURLParams", LEGACY) is None
    assert schema_problem("2026-07-28", "ElicitRequest", {"method": "elicitation/create", "params": MODERN}) is None


def test_our_params_fit_each_revision_schema():
    modern = url_elicitation(MODERN["message"], URL, revision="2026-07-28")
    assert modern == MODERN and schema_problem("2026-07-28", "ElicitRequestURLParams", modern) is None
    legacy = url_elicitation(MODERN["message"], URL, revision="2025-11-25")
    assert isinstance(legacy["elicitationId"], str) and legacy["elicitationId"]
    assert schema_problem("2025-11-25", "ElicitRequestURLParams", legacy) is None
    assert url_elicitation(MODERN["message"], URL, "mine")["elicitationId"] == "mine"


def _answer(params, version):
    callback = UrlAnswer()
    result = answer_elicitation(None, params, form_callback=None, url_callback=callback, version=version)
    return result, callback.requests


@pytest.mark.parametrize("params", [MODERN, LEGACY], ids=["without-id", "with-id-ignored"])
def test_the_2026_client_accepts_the_2026_shape(params):
    result, [request] = _answer(params, "2026-07-28")
    assert result == {"action": "accept"}
    assert request.params.mode == "url" and request.params.url == URL and request.params.elicitation_id is None


def test_the_2025_11_25_client_still_demands_the_id():
    with pytest.raises(InvalidParamsError, match="elicitationId"):
        _answer(MODERN, "2025-11-25")
    with pytest.raises(InvalidParamsError, match="elicitationId"):
        _answer({**MODERN, "elicitationId": 7}, "2025-11-25")
    result, [request] = _answer(LEGACY, "2025-11-25")
    assert result == {"action": "accept"} and request.params.elicitation_id == "e-1"


def _url_server():
    server = Server("urls")

    @server.tool
    def connect_mail(ctx: Context) -> str:
        """URL mode, with no id in 2026-07-28."""
        return ctx.elicit_url("Connect your mail account.", URL, None).action

    @server.tool
    def connect_mail_with_id(ctx: Context) -> str:
        """An id given in 2026-07-28 is not sent."""
        return ctx.elicit_url("Connect your mail account.", URL, "e-9").action

    @server.tool
    def raw_without_id(ctx: Context) -> str:
        """2025-11-25: a URL elicitation without its id, which the client refuses."""
        try:
            ctx.request("elicitation/create", MODERN)
        except McpError as error:
            return f"refused {error.code}"
        return "answered"
    return server


@pytest.mark.parametrize("tool", ["connect_mail", "connect_mail_with_id"])
def test_our_server_and_client_in_2026_07_28(tool):
    callback = UrlAnswer()
    with connect(_url_server(), revision="2026-07-28", elicitation_url=callback) as (client, _, rec):
        assert client.protocol_version == "2026-07-28"
        assert text(client.call_tool(tool)) == "accept"
    [request] = callback.requests
    assert request.params.url == URL and request.params.elicitation_id is None
    asked = [m["result"]["inputRequests"] for d, m in rec.records
             if d == "receive" and isinstance(m.get("result"), dict) and "inputRequests" in m["result"]]
    [[wire]] = [list(requests.values()) for requests in asked]
    assert wire == {"method": "elicitation/create", "params": MODERN}
    assert schema_problem("2026-07-28", "ElicitRequest", wire) is None
    retried = [m["params"]["inputResponses"] for d, m in rec.records
               if d == "send" and "inputResponses" in (m.get("params") or {})]
    assert [list(responses.values()) for responses in retried] == [[{"action": "accept"}]]
    assert not any(m.get("method") == "notifications/elicitation/complete" for _, m in rec.records)


def test_our_2025_11_25_client_refuses_a_url_elicitation_without_its_id():
    callback = UrlAnswer()
    # validate=False: the request without its id is invalid in 2025-11-25 on purpose (the schema says so above)
    with connect(_url_server(), elicitation_url=callback, validate=False) as (client, _, rec):
        assert client.protocol_version == "2025-11-25"
        assert text(client.call_tool("raw_without_id")) == "refused -32602"
        assert text(client.call_tool("connect_mail_with_id")) == "accept"
    assert [r.params.elicitation_id for r in callback.requests] == ["e-9"]


@pytest.mark.parametrize("revision", ["2026-07-28", "2025-11-25"])
def test_the_example_connect_account_in_each_revision(revision):
    """The example tool asks once and ends in both eras: in 2026-07-28 its URL carries
    nothing random (the tool runs again with the answer, and asks the same question) and
    no completion is announced; in 2025-11-25 the id travels and its completion is sent."""
    callback = UrlAnswer()
    with connect(feature_server(), revision=revision, elicitation_url=callback) as (client, _, rec):
        reply = text(client.call_tool("connect_account", {"service": "github"}))
    [request] = callback.requests
    completions = [m for _, m in rec.records if m.get("method") == "notifications/elicitation/complete"]
    if revision == "2026-07-28":
        assert reply == "accept" and request.params.elicitation_id is None and not completions
    else:
        assert reply == f"accept:{request.params.elicitation_id}"
        rec.wait_for(lambda d, m: m.get("method") == "notifications/elicitation/complete")
