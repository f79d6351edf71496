"""Client features across implementations: mcp_ref and the official Python SDK (``mcp`` >= 2).

Both roles, over stdio, with the SDK side in a subprocess (it is asyncio-based):

* the SDK's server (``tests/interop/sdk_features_server.py``) samples (plain, media, with
  tools), elicits (a raw form, its pydantic form, URL mode with the completion
  notification, the -32042 error) and lists roots from ``mcp_ref.Client``; every
  message our client writes is validated against the negotiated revision's schema;
* the SDK's client (``tests/interop/sdk_features_client.py``) answers sampling,
  elicitation and roots for ``mcp_ref.examples.client_features``, behind ``tee.py`` so
  that every line our server writes is recorded and validated.

Skipped without the SDK. Spec: client/sampling, client/elicitation, client/roots.
"""
import json
import subprocess
import sys
import threading

import pytest

from helpers import require_official_sdk

require_official_sdk()

from client_features_helpers import FEATURE_SERVER, REPO, WAIT, check_transcript, env  # noqa: E402
from conftest import _wire_validator, spec_path  # noqa: E402
from helpers import Recorder  # noqa: E402
from mcp_ref import Client, McpError, UrlElicitationRequiredError, UserRejectedError  # noqa: E402
from mcp_ref.transports import TapTransport  # noqa: E402
from mcp_ref.transports.stdio import StdioClientTransport  # noqa: E402
from mcp_ref.types import CreateMessageResult, TextContent, ToolUseContent  # noqa: E402

INTEROP = REPO / "tests" / "interop"
SDK_SERVER = [sys.executable, str(INTEROP / "sdk_features_server.py")]
TIMEOUT = 60


# ---------------------------------------------------------------------- our client, the SDK's server
def llm(request):
    """Our sampling callback: a pretend LLM that knows the weather tool loop."""
    llm.requests.append(request)
    if request.tools:
        last = request.messages[-1]
        blocks = last.content if isinstance(last.content, list) else [last.content]
        results = {b.tool_use_id: b.content[0].text for b in blocks if getattr(b, "type", None) == "tool_result"
                   or type(b).__name__ == "ToolResultContent"}
        if not results:
            return CreateMessageResult(role="assistant", model="ref-model", stop_reason="toolUse", content=[
                ToolUseContent(id="c1", name="get_weather", input={"city": "Paris"}),
                ToolUseContent(id="c2", name="get_weather", input={"city": "London"})])
        return CreateMessageResult(role="assistant", model="ref-model", stop_reason="endTurn", content=TextContent(
            text=f"Paris {results['c1']}; London {results['c2']}"))
    return {"role": "assistant", "content": {"type": "text", "text": "Bonjour"}, "model": "ref-model",
            "stopReason": "endTurn"}


llm.supports_tools = True


def form(request):
    form.requests.append(request)
    if "email" in request.requested_schema["properties"]:
        return {"action": "accept", "content": {"email": "ada@example.com", "plan": "pro"}}
    return {"action": "accept", "content": {"name": "Ada"}}


def sdk_client(revision, **options):
    recorder = Recorder()
    transport = StdioClientTransport(SDK_SERVER, env=env(), cwd=str(REPO))
    client = Client(TapTransport(transport, recorder), protocol_version=revision, timeout=30, **options)
    client.recorder = recorder
    return client


def test_the_sdk_server_samples_elicits_and_lists_roots_from_our_client():
    llm.requests, form.requests = [], []
    completed = threading.Event()
    url_requests = []
    client = sdk_client("2025-11-25", sampling=llm, elicitation=form, roots=["file:///srv/app"],
                        elicitation_url=lambda r: url_requests.append(r) or {"action": "accept"},
                        on_elicitation_complete=lambda elicitation_id: completed.set())
    with client:
        assert client.protocol_version == "2025-11-25"
        assert client.call_tool("ask_llm", {"question": "Hello?"}).content[0].text == "ref-model|endTurn|Bonjour"
        request = llm.requests[0]
        assert request.system_prompt == "You are a helpful assistant." and request.temperature == 0.5
        assert request.stop_sequences == ["STOP"] and request.metadata == {"origin": "sdk"}
        assert request.model_preferences.hints[0].name == "claude"
        assert request.model_preferences.intelligence_priority == 0.9
        assert client.call_tool("ask_llm_media").content[0].text == "Bonjour"
        assert [type(m.content).__name__ for m in llm.requests[1].messages] == ["ImageContent", "AudioContent"]
        assert client.call_tool("weather_agent", {"question": "Weather?"}).content[0].text == \
            "Paris 18°C, partly cloudy; London 15°C, rainy"
        # the SDK's raw form: our client fills in the defaults before replying
        answer = json.loads(client.call_tool("ask_user").content[0].text)
        assert answer == {"action": "accept", "content": {"email": "ada@example.com", "plan": "pro", "age": 30,
                                                          "subscribe": True, "topics": ["mcp"]}}
        assert client.call_tool("ask_user_model").content[0].text == "accept:Ada:30"
        # URL mode, then the SDK's completion notification
        assert client.call_tool("connect_url").content[0].text == "accept:sdk-elicitation-1"
        assert completed.wait(WAIT) and client.wait_elicitation("sdk-elicitation-1", 0)
        assert url_requests[0].url == "https://example.com/connect?id=sdk-elicitation-1"
        with pytest.raises(UrlElicitationRequiredError) as info:
            client.call_tool("needs_auth")
        assert info.value.elicitations[0]["elicitationId"] == "sdk-auth-1"
        assert [r.action for r in client.handle_url_elicitations(info.value)] == ["accept"]
        # roots, and list_changed
        assert client.call_tool("show_roots").content[0].text == "=file:///srv/app"
        client.set_roots([{"uri": "file:///srv/other", "name": "Other"}])
        assert client.call_tool("roots_changes", {"at_least": 1}).content[0].text == "1"
        assert client.call_tool("show_roots").content[0].text == "Other=file:///srv/other"
    check_transcript(client.recorder, "2025-11-25")


def test_an_older_revision_with_the_sdk_server():
    client = sdk_client("2025-06-18", sampling=llm, elicitation=form, roots=["file:///srv/app"])
    with client:
        assert client.protocol_version == "2025-06-18"
        assert client.capabilities() == {"sampling": {}, "roots": {"listChanged": True}, "elicitation": {}}
        assert client.call_tool("ask_llm", {"question": "Hello?"}).content[0].text == "ref-model|endTurn|Bonjour"
        assert client.call_tool("ask_user_model").content[0].text == "accept:Ada:30"
        assert client.call_tool("show_roots").content[0].text == "=file:///srv/app"
        with pytest.raises(McpError, match="sampling tools"):      # no sampling.tools declared: the SDK refuses
            client.call_tool("weather_agent", {"question": "Weather?"})
    check_transcript(client.recorder, "2025-06-18")


def test_refusals_reach_the_sdk_server_as_errors():
    def refuse(request):
        raise UserRejectedError("User rejected sampling request")
    client = sdk_client("2025-11-25", sampling=refuse)
    with client:
        # the SDK's tool lets the client's error through as the tools/call error
        with pytest.raises(UserRejectedError, match="User rejected sampling request"):
            client.call_tool("ask_llm", {"question": "Hello?"})
        with pytest.raises(McpError) as info:                 # roots not declared: -32601 from our client
            client.call_tool("show_roots")
        assert info.value.code == -32601
    errors = [m["error"]["code"] for d, m in client.recorder.records if d == "send" and "error" in m]
    assert errors == [-1, -32601]
    check_transcript(client.recorder, "2025-11-25")


# ---------------------------------------------------------------------- the SDK's client, our server
def run_sdk_client(log, *options) -> dict:
    argv = [sys.executable, str(INTEROP / "sdk_features_client.py"), *options, "--",
            sys.executable, str(INTEROP / "tee.py"), str(log), "--", *FEATURE_SERVER]
    proc = subprocess.run(argv, cwd=REPO, env=env(), capture_output=True, text=True, timeout=TIMEOUT)
    lines = proc.stdout.strip().splitlines()
    assert lines, f"sdk_features_client.py printed nothing (exit {proc.returncode})\n{proc.stderr[-4000:]}"
    report = json.loads(lines[-1])
    assert "fatal" not in report, f"{report}\nstderr:\n{proc.stderr[-4000:]}"
    assert report["exceptions"] == []
    return report


def check_our_lines(log, revision) -> int:
    """Validate every line our server wrote, results against the SDK client's requests."""
    if not (spec_path() / revision / "schema.json").is_file():
        return 0
    asked, count = {}, 0
    with open(log, encoding="utf-8") as f:
        for line in f:
            entry = json.loads(line)
            message = json.loads(entry["line"])
            if entry["from"] == "client":
                if "method" in message and "id" in message:
                    asked[message["id"]] = message["method"]
                continue
            method = asked.get(message.get("id")) if "method" not in message else None
            _wire_validator.check(message, revision, method, sender="server" if "method" in message else None)
            count += 1
    return count


def steps_of(report) -> dict:
    return {step["name"] or step["op"]: step for step in report["steps"]}


def test_the_sdk_client_answers_our_server(tmp_path):
    log = tmp_path / "wire.jsonl"
    report = run_sdk_client(log)
    assert report["protocol_version"] == "2025-11-25"
    steps = steps_of(report)
    text = {name: step["result"]["content"][0]["text"] for name, step in steps.items() if "result" in step
            and step["result"].get("content")}
    assert text["ask_llm"] == "sdk-model: SDK says: Capital of France?"
    assert text["weather_agent"] == "Paris 18°C, partly cloudy; London 15°C, rainy"
    assert text["ask_user"] == 'accept:{"age": 36, "name": "Ada", "newsletter": false}'     # default filled
    assert text["plan_trip"] == "booked for 1: SDK says: Plan a day in Lisbon"
    assert steps["plan_trip"]["progress"] == [[1, 3, "asking the LLM"], [2, 3, "asking the user"], [3, 3, "done"]]
    assert text["connect_account"].startswith("accept:")
    assert text["show_roots"] == "Project=file:///sdk/project"
    assert text["roots_changes"] == "1"
    error = steps["needs_connection"]["error"]
    assert error["code"] == -32042 and error["data"]["elicitations"][0]["mode"] == "url"
    elicitation_id = text["connect_account"].split(":", 1)[1]
    assert {"method": "notifications/elicitation/complete", "params": {"elicitationId": elicitation_id}} in [
        {k: n.get(k) for k in ("method", "params")} for n in report["notifications"]]
    sampled = report["sampling_requests"][0]
    assert sampled["maxTokens"] == 100 and sampled["modelPreferences"]["hints"] == [{"name": "sdk"}]
    assert report["elicitation_requests"][0]["mode"] == "form"
    assert check_our_lines(log, "2025-11-25") > 20 or not (spec_path() / "2025-11-25").is_dir()


def test_the_sdk_client_at_2025_06_18(tmp_path):
    log = tmp_path / "wire.jsonl"
    steps = [{"op": "call_tool", "name": "ask_llm", "arguments": {"question": "q"}},
             {"op": "call_tool", "name": "ask_user", "arguments": {}},
             {"op": "call_tool", "name": "weather_agent", "arguments": {"question": "q"}},
             {"op": "call_tool", "name": "connect_account", "arguments": {"service": "s"}},
             {"op": "call_tool", "name": "show_roots", "arguments": {}}]
    report = run_sdk_client(log, "--force-version", "2025-06-18", "--steps", json.dumps(steps))
    assert report["protocol_version"] == "2025-06-18"
    steps = steps_of(report)
    assert steps["ask_llm"]["result"]["content"][0]["text"] == "sdk-model: SDK says: q"
    assert steps["ask_user"]["result"]["content"][0]["text"].startswith("accept:")
    with open(log, encoding="utf-8") as f:                          # what our server wrote
        sent = [json.loads(json.loads(line)["line"]) for line in f if '"from": "server"' in line]
    [elicit] = [m for m in sent if m.get("method") == "elicitation/create"]
    assert "mode" not in elicit["params"]                          # 2025-06-18 has no modes
    for name in ("weather_agent", "connect_account"):               # 2025-11-25 features: refused locally
        assert steps[name]["result"]["isError"] and "2025-11-25" in steps[name]["result"]["content"][0]["text"]
    check_our_lines(log, "2025-06-18")
