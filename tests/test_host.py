"""The host (mcp_ref.host) against real server processes: two over stdio, one over HTTP."""
import json
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from mcp_ref.errors import ApprovalDenied, ConnectionClosed, UserRejectedError
from mcp_ref.host import (AllowList, ConfigError, Host, ScriptedModel, TerminalPolicy, ToolCall, parse_config,
                          run_conversation)

HERE = Path(__file__).resolve().parent
SERVER = str(HERE / "host_servers.py")
WAIT = 10.0


def stdio_entry(name, log=None, **extra):
    args = [SERVER, "--name", name] + (["--log", str(log)] if log else [])
    return {"command": sys.executable, "args": args, **extra}


@pytest.fixture(scope="module")
def http_url():
    """The test server over HTTP, in its own process (the library's HTTP server)."""
    process = subprocess.Popen([sys.executable, SERVER, "--name", "gamma", "--http", "127.0.0.1:0"],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        line = process.stdout.readline()
        assert "serving MCP at" in line, line
        yield line.split("serving MCP at ")[1].split()[0]
    finally:
        process.terminate()
        process.wait(timeout=WAIT)
        process.stdout.close()


def received(log: Path) -> list:
    if not log.exists():
        return []
    return [json.loads(line)["message"] for line in log.read_text(encoding="utf-8").splitlines()]


def tool_calls(log: Path) -> list:
    return [m["params"]["name"] for m in received(log) if isinstance(m, dict) and m.get("method") == "tools/call"]


@pytest.mark.req("TOOL26-17", "TOOL26-18")
def test_three_servers_at_once_with_qualified_names_and_isolation(tmp_path, http_url):
    logs = {name: tmp_path / f"{name}.log" for name in ("alpha", "beta")}
    config = {"mcpServers": {"alpha": stdio_entry("alpha", logs["alpha"]),
                             "beta": stdio_entry("beta", logs["beta"]),
                             "gamma": {"url": http_url, "transport": "http"}}}
    with Host(config, timeout=WAIT) as host:
        assert host.failed == {}
        names = [tool.name for tool in host.tools()]
        for server in ("alpha", "beta", "gamma"):
            assert f"{server}__echo" in names                  # the same tool name, three servers
        assert len(names) == len(set(names))
        assert host.tools()[0].to_dict()["name"] == names[0]
        for server in ("alpha", "beta", "gamma"):
            result = host.call_tool(f"{server}__echo", {"message": f"for-{server}"})
            assert result.content[0].text == f"{server}: for-{server}"
        # each server saw only its own call
        assert tool_calls(logs["alpha"]) == ["echo"] and tool_calls(logs["beta"]) == ["echo"]
        assert "for-beta" not in logs["alpha"].read_text() and "for-alpha" not in logs["beta"].read_text()
        # prompts and resources: routed by name and by URI
        assert host.get_prompt("beta__hello", {"who": "you"}).messages[0].content.text == "hello you from beta"
        assert host.read_resource("gamma://status").contents[0].text == "gamma ok"
        with pytest.raises(Exception, match="several servers"):
            host.read_resource("shared://same")
        assert host.read_resource("shared://same", server="alpha").contents[0].text == "same from alpha"
        assert {t.server for t in host.resources() if t.uri == "shared://same"} == {"alpha", "beta", "gamma"}
        assert host.check() == {"alpha": None, "beta": None, "gamma": None}
        with pytest.raises(Exception, match="not a qualified name"):
            host.call_tool("echo")


def test_consent_denials_reach_the_server_as_errors(tmp_path):
    """The legacy era: a denied sampling request is answered -1 while the call runs."""
    log = tmp_path / "alpha.log"
    seen = []

    def consent(request):
        seen.append((request.kind, request.stage, request.server))
        return AllowList({"alpha": ["ask"]})(request)          # sampling is not allowed for anyone
    with Host({"mcpServers": {"alpha": stdio_entry("alpha", log)}}, consent=consent,
              model=ScriptedModel([]), timeout=WAIT, protocol_version="2025-11-25") as host:
        with pytest.raises(ApprovalDenied, match="not on the allow-list"):
            host.call_tool("alpha__echo", {"message": "x"})
        assert tool_calls(log) == []                              # never sent
        result = host.call_tool("alpha__ask", {"question": "hi"})
        assert result.is_error and "rejected" in result.content[0].text.lower()
    errors = [m for m in received(log) if isinstance(m, dict) and "error" in m]
    assert errors and errors[0]["error"]["code"] == -1            # the sampling request answered -1
    assert ("launch", "request", "alpha") in seen and ("sampling", "request", "alpha") in seen


def test_the_host_speaks_the_default_era_and_a_refused_sampling_ends_the_call_at_the_client(tmp_path):
    """2026-07-28 (the host's default): the client probes; a refused sampling entry of an
    InputRequiredResult is not retried (client/sampling#error-handling: the server is not waiting)."""
    log = tmp_path / "alpha.log"
    with Host({"mcpServers": {"alpha": stdio_entry("alpha", log)}}, consent=AllowList({"alpha": ["ask"]}),
              model=ScriptedModel([]), timeout=WAIT) as host:
        assert host.client("alpha").protocol_version == "2026-07-28"
        with pytest.raises(UserRejectedError, match="not on the allow-list"):
            host.call_tool("alpha__ask", {"question": "hi"})
    methods = [m.get("method") for m in received(log) if isinstance(m, dict)]
    assert methods[0] == "server/discover" and "initialize" not in methods
    calls = [m["params"] for m in received(log) if isinstance(m, dict) and m.get("method") == "tools/call"]
    assert len(calls) == 1 and "inputResponses" not in calls[0]          # asked once, no retry


def test_sampling_goes_through_the_hook_to_the_model_with_the_servers_messages_only(tmp_path):
    asked = []

    def model(messages, tools):
        asked.append(messages)
        return "forty-two"
    model.name = "test-model"
    stages = []

    def consent(request):
        if request.kind == "sampling":
            stages.append(request.stage)
            if request.stage == "result":                        # edit the model's answer before it goes back
                data = request.value.to_dict()
                data["content"]["text"] += " (edited)"
                return data
        return True
    with Host({"mcpServers": {"alpha": stdio_entry("alpha")}}, consent=consent, model=model, timeout=WAIT) as host:
        result = host.call_tool("alpha__ask", {"question": "the answer?"})
    assert result.content[0].text == "test-model: forty-two (edited)"
    assert stages == ["request", "result"]
    assert asked == [[{"role": "system", "content": {"type": "text", "text": "be brief"}},
                      {"role": "user", "content": {"type": "text", "text": "the answer?"}}]]


@pytest.mark.parametrize("revision", ["2026-07-28", "2025-11-25"])
def test_elicitation_goes_through_the_hook_and_a_denial_reaches_the_server(revision, tmp_path):
    asked = []

    def consent(request):
        if request.kind == "elicitation":
            asked.append((request.server, request.stage))
            return request.server == "alpha"
        return True
    log = tmp_path / "beta.log"
    config = {"mcpServers": {"alpha": stdio_entry("alpha"), "beta": stdio_entry("beta", log)}}
    with Host(config, consent=consent, elicitation=lambda request: {"action": "accept", "content": {"ok": True}},
              timeout=WAIT, protocol_version=revision) as host:
        assert host.call_tool("alpha__confirm").content[0].text == 'accept {"ok": true}'
        refused = host.call_tool("beta__confirm")
    assert asked == [("alpha", "request"), ("alpha", "result"), ("beta", "request")]
    if revision == "2025-11-25":         # the legacy era: the elicitation request is answered -1
        assert refused.is_error and "rejected" in refused.content[0].text.lower()
        return
    # 2026-07-28: an inputResponses value is a result, so the refusal is a decline in the retried call
    assert not refused.is_error and refused.content[0].text == "decline null"
    retry = [m["params"] for m in received(log) if isinstance(m, dict) and m.get("method") == "tools/call"][-1]
    assert list(retry["inputResponses"].values()) == [{"action": "decline"}] and "requestState" in retry


def test_a_killed_stdio_server_is_restarted_and_its_lists_fetched_again(tmp_path):
    changes = []
    config = {"mcpServers": {"alpha": stdio_entry("alpha", autoRestart=2), "beta": stdio_entry("beta")}}
    with Host(config, timeout=WAIT, on_change=lambda server, kind: changes.append((server, kind))) as host:
        first = host.call_tool("alpha__whoami").content[0].text
        host.tools()
        with pytest.raises(ConnectionClosed):
            host.call_tool("alpha__crash")
        second = host.call_tool("alpha__whoami").content[0].text
        assert first.split()[0] == second.split()[0] == "alpha" and first != second     # a new process
        assert ("alpha", "tools") in changes
        assert "alpha__echo" in [tool.name for tool in host.tools()]
        assert host.call_tool("beta__echo").content[0].text == "beta: hello"      # the other never noticed


def test_list_changed_refreshes_the_catalogue():
    changed = threading.Event()
    with Host({"mcpServers": {"alpha": stdio_entry("alpha")}}, timeout=WAIT,
              on_change=lambda server, kind: kind == "tools" and changed.set()) as host:
        assert "alpha__extra" not in [tool.name for tool in host.tools()]
        host.call_tool("alpha__grow")
        assert changed.wait(WAIT)
        assert "alpha__extra" in [tool.name for tool in host.tools()]
        assert host.call_tool("alpha__extra").content[0].text == "extra"


def test_a_refused_launch_leaves_that_server_out_and_roots_are_per_server(tmp_path):
    shown = []

    def consent(request):
        shown.append((request.kind, request.server, request.value))
        if request.kind == "launch":
            return request.server != "beta"
        if request.kind == "roots":
            return [root for root in request.value if "secret" not in root.uri]
        return True
    config = {"mcpServers": {"alpha": stdio_entry("alpha", roots=[str(tmp_path / "work"), str(tmp_path / "secret")]),
                             "beta": stdio_entry("beta"), "gamma": stdio_entry("gamma")}}
    with Host(config, consent=consent, timeout=WAIT) as host:
        assert list(host.failed) == ["beta"] and isinstance(host.failed["beta"], PermissionError)
        assert [tool.server for tool in host.tools()].count("beta") == 0
        with pytest.raises(KeyError, match="server 'beta' is not running: launch of server 'beta' denied"):
            host.client("beta")
        assert host.call_tool("alpha__roots").content[0].text == (tmp_path / "work").as_uri()
        assert "roots" not in host.client("gamma").capabilities()          # gamma was given no roots
    launch = [value for kind, server, value in shown if kind == "launch" and server == "alpha"][0]
    assert SERVER in launch and "--name alpha" in launch                     # the exact command line


def test_http_session_forgotten_by_the_server_is_reinitialized(http_url):
    import requests
    # Sessions exist in the legacy era only (2026-07-28 HTTP is stateless): asked for by name.
    with Host({"mcpServers": {"gamma": {"url": http_url, "transport": "http"}}}, timeout=WAIT,
              protocol_version="2025-11-25") as host:
        client = host.client("gamma")
        session_id = client.transport.inner.session_id if hasattr(client.transport, "inner") else \
            client.transport.session_id
        response = requests.delete(http_url, headers={"Mcp-Session-Id": session_id,
                                                      "MCP-Protocol-Version": client.protocol_version}, timeout=WAIT)
        assert response.status_code in (200, 202, 204)
        assert host.call_tool("gamma__echo", {"message": "again"}).content[0].text == "gamma: again"


def test_the_tool_use_loop_runs_across_servers_and_reads_denials():
    model = ScriptedModel([[ToolCall("alpha__echo", {"message": "a"}), ToolCall("beta__echo", {"message": "b"})],
                           ToolCall("beta__whoami"), "done: {last}"])
    consent = AllowList({"alpha": "*", "beta": ["echo"]})
    with Host({"mcpServers": {"alpha": stdio_entry("alpha"), "beta": stdio_entry("beta")}}, consent=consent,
              timeout=WAIT) as host:
        messages = run_conversation(host, model, "go")
    results = [block for m in messages if m["role"] == "user" and isinstance(m["content"], list)
               for block in m["content"]]
    assert [r["content"][0]["text"] for r in results[:2]] == ["alpha: a", "beta: b"]
    assert results[2]["isError"] and "not on the allow-list" in results[2]["content"][0]["text"]
    assert messages[-1] == {"role": "assistant", "content": {"type": "text", "text": "done: " +
                                                                      results[2]["content"][0]["text"]}}


def test_the_loop_stops_a_model_that_never_answers():
    with Host({"mcpServers": {"alpha": stdio_entry("alpha")}}, timeout=WAIT) as host:
        with pytest.raises(RuntimeError, match="2 rounds"):
            run_conversation(host, lambda messages, tools: [ToolCall("alpha__whoami")], "loop", max_rounds=2)


def test_terminal_policy_shows_the_arguments_and_edits_them():
    from io import StringIO

    from mcp_ref.client.approval import ToolCall as Call
    from mcp_ref.host import Consent
    out = StringIO()
    answers = iter(["e", '{"message": "edited"}'])
    policy = TerminalPolicy(ask=lambda prompt: next(answers), out=out)
    edited = policy(Consent("tool_call", "request", Call("echo", {"message": "x"}), server="alpha"))
    assert edited == Call("echo", {"message": "edited"})
    assert "call tool 'echo' of server 'alpha' with arguments {\"message\": \"x\"}" in out.getvalue()
    refused = TerminalPolicy(ask=lambda prompt: "", out=out)(Consent("launch", "request", "run x", server="a"))
    assert refused.reason == "denied on the terminal"


@pytest.mark.parametrize("servers, message", [
    ({"a__b": {"command": "x"}}, "single '_'"),
    ({"a_": {"command": "x"}}, "single '_'"),
    ({"a": {"command": "x", "url": "http://h"}}, "not both"),
    ({"a": {}}, "found neither"),
    ({"a": {"url": "ftp://h"}}, "http://"),
    ({"a": {"command": "x", "args": "-m y"}}, "'args' must be a list"),
    ({"a": {"url": "http://h", "transport": "carrier-pigeon"}}, "'transport'"),
    ({"a": {"command": "x", "autoRestart": True}}, "autoRestart"),
])
def test_configuration_errors_name_the_server_and_the_key(servers, message):
    with pytest.raises(ConfigError, match=message):
        parse_config({"mcpServers": servers})


def test_configuration_file_errors(tmp_path):
    from mcp_ref.host import load_config
    with pytest.raises(ConfigError, match="cannot read"):
        load_config(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{", encoding="utf-8")
    with pytest.raises(ConfigError, match="not JSON"):
        load_config(bad)
    good = tmp_path / "good.json"
    good.write_text(json.dumps({"mcpServers": {"files": {"command": "python", "args": ["-m", "x"], "env": {"K": "v"},
                                                         "cwd": "/", "autoRestart": 1},
                                               "web": {"url": "https://example.com/mcp", "type": "sse"}}}),
                    encoding="utf-8")
    servers = load_config(good)
    assert servers["files"].argv == ["python", "-m", "x"] and servers["files"].auto_restart == 1
    assert servers["web"].transport == "sse"


def test_ping_interval_pings_every_server(tmp_path):
    logs = {name: tmp_path / f"{name}.log" for name in ("alpha", "beta")}
    config = {"mcpServers": {name: stdio_entry(name, log) for name, log in logs.items()}}
    import time
    with Host(config, timeout=WAIT, ping_interval=1.0):        # each ping may take up to 1 s
        deadline = time.monotonic() + WAIT
        while time.monotonic() < deadline and not all(
                sum(1 for m in received(log) if m.get("method") == "ping") >= 2 for log in logs.values()):
            time.sleep(0.05)
    for log in logs.values():
        assert sum(1 for m in received(log) if m.get("method") == "ping") >= 2


def test_terminal_policy_edits_a_sampling_answer_before_it_goes_back():
    from io import StringIO

    from mcp_ref.host import Consent
    from mcp_ref.types import CreateMessageResult
    answer = CreateMessageResult.from_dict({"role": "assistant", "content": {"type": "text", "text": "raw"},
                                            "model": "m"})
    answers = iter(["e", "reviewed"])
    out = StringIO()
    edited = TerminalPolicy(ask=lambda prompt: next(answers), out=out)(
        Consent("sampling", "result", answer, server="alpha"))
    assert edited["content"] == {"type": "text", "text": "reviewed"}
    assert "the model answers server 'alpha': {\"type\": \"text\", \"text\": \"raw\"}" in out.getvalue()
