"""Human in the loop: the client's ``on_approve`` hook.

It sees each sampling request and result, each elicitation and answer, and
each tool call before it is sent; it can allow, edit or deny. Denials reach
the server as -1 errors (sampling, elicitation) or the caller as
``ApprovalDenied`` (tool calls, never sent). Spec: client/sampling#user-
interaction-model, client/elicitation#security-considerations,
server/tools#user-interaction-model.
"""
import pytest

from client_features_helpers import connect, feature_server, sampler, stdio_client, text, validated
from mcp_ref.client.approval import Approval, Deny, Denied, ToolCall, decide
from mcp_ref.errors import ApprovalDenied, UserRejectedError
from mcp_ref.types import CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams, ElicitResult, \
    TextContent


class Hook:
    """Records every approval; ``rules[(kind, stage)]`` decides (default: allow)."""

    def __init__(self, **rules):
        self.rules = rules
        self.seen = []

    def __call__(self, approval: Approval):
        self.seen.append(approval)
        rule = self.rules.get(f"{approval.kind}_{approval.stage}", True)
        return rule(approval) if callable(rule) else rule

    def kinds(self):
        return [(a.kind, a.stage) for a in self.seen]


def form_answer(request):
    return {"action": "accept", "content": {"name": "Ada", "age": 36}}


# ---------------------------------------------------------------------- the decision rules
def test_decide_allow_edit_deny_and_fail_closed():
    approval = Approval("tool_call", "request", ToolCall("add", {"a": 1}))
    assert decide(None, approval) is approval.value
    assert decide(lambda a: True, approval) is approval.value
    assert decide(lambda a: ToolCall("add", {"a": 2}), approval).arguments == {"a": 2}
    assert decide(lambda a: {"name": "sub", "arguments": {}}, approval).name == "sub"
    for answer, reason in [(False, "denied by the user"), (Deny("not today"), "not today"),
                           (approval.deny("nope"), "nope"), (None, "NoneType"), ("yes", "str"),
                           ({"arguments": {}}, "not a valid ToolCall")]:
        with pytest.raises(Denied, match=reason):
            decide(lambda a, answer=answer: answer, approval)


# ---------------------------------------------------------------------- sampling
@pytest.mark.req("SAMP-1", "SAMP-12")
def test_sampling_request_and_result_are_shown_and_can_be_edited():
    def edit_request(approval):
        params = approval.value
        assert isinstance(params, CreateMessageRequestParams)
        params.system_prompt = "Answer in French."
        return params

    def edit_result(approval):
        assert isinstance(approval.value, CreateMessageResult)
        assert approval.request.system_prompt == "Answer in French."
        return {"role": "assistant", "content": {"type": "text", "text": "Paris (reviewed)"}, "model": "m"}
    hook = Hook(sampling_request=edit_request, sampling_result=edit_result)
    callback = sampler("Paris")
    with connect(feature_server(), sampling=callback, on_approve=hook) as (client, _, _rec):
        assert text(client.call_tool("ask_llm", {"question": "Capital?"})) == "m: Paris (reviewed)"
    assert hook.kinds() == [("tool_call", "request"), ("sampling", "request"), ("sampling", "result")]
    assert callback.requests[0].system_prompt == "Answer in French."
    assert hook.seen[1].server_info.name == "client-features"          # which server is asking


@pytest.mark.req("SAMP-1", "SAMP-11")
@pytest.mark.parametrize("stage", ["request", "result"])
def test_a_sampling_denial_is_error_minus_one_at_the_server(stage):
    hook = Hook(**{f"sampling_{stage}": Deny("the user said no")})
    callback = sampler()
    with connect(feature_server(), sampling=callback, on_approve=hook) as (client, _, rec):
        result = client.call_tool("ask_llm", {"question": "Capital?"})
        assert result.is_error
        assert text(result) == "User rejected sampling request: the user said no (code -1)"
    assert len(callback.requests) == (0 if stage == "request" else 1)
    error = rec.wait_for(lambda d, m: d == "send" and "error" in m)["error"]
    assert error == {"code": -1, "message": "User rejected sampling request: the user said no"}


# ---------------------------------------------------------------------- elicitation
@pytest.mark.req("ELIC-33")
def test_elicitation_request_and_answer_are_shown_and_can_be_edited():
    def edit_answer(approval):
        assert isinstance(approval.request.params, ElicitRequestParams)
        assert approval.value.content["name"] == "Ada"
        return ElicitResult(action="accept", content={"name": "Ada L."})
    hook = Hook(elicitation_result=edit_answer)
    with connect(feature_server(), elicitation=form_answer, on_approve=hook) as (client, _, _rec):
        assert text(client.call_tool("ask_user")) == 'accept:{"name": "Ada L.", "newsletter": false}'
    assert hook.kinds()[1:] == [("elicitation", "request"), ("elicitation", "result")]


def test_an_edited_answer_is_validated_too():
    hook = Hook(elicitation_result=lambda a: {"action": "accept", "content": {"age": 36}})   # name missing
    with connect(feature_server(), elicitation=form_answer, on_approve=hook) as (client, _, rec):
        result = client.call_tool("ask_user")
        assert result.is_error and "required properties ['name']" in text(result)


@pytest.mark.parametrize("mode", ["form", "url"])
def test_an_elicitation_denial_is_error_minus_one_at_the_server(mode):
    hook = Hook(elicitation_request=False)
    called = []
    options = {"elicitation": lambda r: called.append(r)} if mode == "form" else \
        {"elicitation_url": lambda r: called.append(r)}
    with connect(feature_server(), on_approve=hook, **options) as (client, _, rec):
        result = client.call_tool("ask_user" if mode == "form" else "connect_account", {"service": "s"}
                                  if mode == "url" else {})
        assert result.is_error and "User rejected elicitation request: denied by the user (code -1)" in text(result)
    assert called == []


# ---------------------------------------------------------------------- tool calls
def test_tool_calls_are_shown_before_sending_and_can_be_edited():
    hook = Hook(tool_call_request=lambda a: ToolCall(a.value.name, {**a.value.arguments, "question": "edited"}))
    with connect(feature_server(), sampling=sampler("ok"), on_approve=hook) as (client, _, rec):
        client.call_tool("ask_llm", {"question": "original"})
    sent = rec.wait_for(lambda d, m: d == "send" and m.get("method") == "tools/call")
    assert sent["params"]["arguments"] == {"question": "edited"}
    assert hook.seen[0].value.name == "ask_llm" and hook.seen[0].server_info.name == "client-features"


@pytest.mark.req("TOOL-1", "TOOL-18")
def test_a_denied_tool_call_is_never_sent():
    hook = Hook(tool_call_request=lambda a: Deny("not this tool") if a.value.name == "show_roots" else True)
    with connect(feature_server(), roots=["file:///a"], on_approve=hook) as (client, _, rec):
        with pytest.raises(ApprovalDenied, match="'show_roots' denied: not this tool"):
            client.call_tool("show_roots")
        assert text(client.call_tool("roots_changes")) == "0"
    calls = [m["params"]["name"] for d, m in rec.records if d == "send" and m.get("method") == "tools/call"]
    assert calls == ["roots_changes"]


def test_a_hook_that_returns_nothing_denies():
    with connect(feature_server(), sampling=sampler(), on_approve=lambda approval: None) as (client, _, rec):
        with pytest.raises(ApprovalDenied, match="NoneType"):
            client.call_tool("ask_llm", {"question": "q"})
    assert not any(m.get("method") == "tools/call" for _, m in rec.records)


def test_a_hook_that_raises_an_mcp_error_sends_that_error():
    def hook(approval):
        if approval.kind == "sampling":
            raise UserRejectedError("rate limited by the host")
        return True
    with connect(feature_server(), sampling=sampler(), on_approve=hook) as (client, _, _rec):
        result = client.call_tool("ask_llm", {"question": "q"})
        assert result.is_error and "rate limited by the host (code -1)" in text(result)


# ---------------------------------------------------------------------- end to end over stdio
def test_stdio_approval_of_a_call_that_samples_and_elicits():
    def review(approval):
        if approval.kind == "elicitation" and approval.stage == "request":
            return Deny("the user closed the dialog")
        if approval.kind == "sampling" and approval.stage == "result":
            approval.value.content = TextContent(text="reviewed plan")
            return approval.value
        return True
    seen = []

    def on_approve(approval):
        seen.append((approval.kind, approval.stage))
        return review(approval)
    with stdio_client(sampling=sampler("raw plan"), elicitation=form_answer, on_approve=on_approve) as client:
        result = client.call_tool("plan_trip", {"city": "Rome"})
        assert result.is_error and "User rejected elicitation request: the user closed the dialog" in text(result)
        sent = [m for d, m in client.recorder.records if d == "send" and "result" in m and "model" in m["result"]]
        assert sent[0]["result"]["content"]["text"] == "reviewed plan"
    assert seen == [("tool_call", "request"), ("sampling", "request"), ("sampling", "result"),
                    ("elicitation", "request")]
    validated(client)


def test_an_edit_that_is_not_a_valid_value_denies():
    hook = Hook(sampling_result=lambda a: {"role": "assistant"})          # content and model missing
    with connect(feature_server(), sampling=sampler(), on_approve=hook) as (client, _, _rec):
        result = client.call_tool("ask_llm", {"question": "q"})
        assert result.is_error and "not a valid CreateMessageResult" in text(result) and "code -1" in text(result)
