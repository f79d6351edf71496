"""``python -m mcp_ref demo --scenario NAME``: each scenario runs, fits on a screen, and
shows on the wire what it promises; every JSON-RPC message it prints whole (``--full``)
validates against the revision it negotiated. Run in this process (the scenarios
need no subprocess), plus the command line once."""
from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mcp_ref.cli import scenarios
from mcp_ref.__main__ import Transcript, main

ROOT = Path(__file__).resolve().parent.parent
ARROWS = ("client -> server  ", "server -> client  ")
SCREEN = 64          # lines of at most 100 columns (comments wrapped): "short enough to read on one screen"
NAMES = ["discover", "listen", "cancel", "sampling", "elicitation", "roots", "pagination", "tasks", "http", "sse",
         "auth", "host"]
IN_PROCESS = [n for n in NAMES if n not in ("http", "sse", "auth", "host")]
LEGACY = "2025-11-25"
META = "io.modelcontextprotocol/"


def run(name: str, full: bool = True, version: str | None = None) -> list:
    out = io.StringIO()
    assert scenarios.run(name, Transcript(full, out=out, width=100), version) == 0
    return out.getvalue().splitlines()


def messages(lines: list) -> list:
    return [("send" if line.startswith(ARROWS[0]) else "receive", json.loads(line.split("  ", 1)[1]))
            for line in lines if line.startswith(ARROWS)]


def methods(records: list, direction: str) -> list:
    return [m.get("method") for d, m in records if d == direction and "method" in m]


def test_the_list_names_every_scenario():
    assert list(scenarios.SCENARIOS) == NAMES
    out = io.StringIO()
    assert scenarios.run("list", Transcript(out=out)) == 0
    for name in NAMES:
        assert f"  {name} " in out.getvalue()
    out = io.StringIO()
    assert scenarios.run("no-such-scenario", Transcript(out=out)) == 2
    assert "unknown scenario 'no-such-scenario'" in out.getvalue()


@pytest.mark.parametrize("version", [None, LEGACY], ids=["default", "legacy"])
@pytest.mark.parametrize("name", NAMES)
def test_each_scenario_fits_on_a_screen(name, version):
    lines = run(name, full=False, version=version)
    assert len(lines) <= SCREEN, f"{name}: {len(lines)} lines"
    assert lines[0].startswith(f"# scenario {name} (") and lines[-1] == "# done"


@pytest.mark.parametrize("version", [None, LEGACY], ids=["default", "legacy"])
@pytest.mark.parametrize("name", IN_PROCESS)
def test_in_process_scenarios_open_with_their_era_and_validate(name, version, wire_validator):
    """The default era opens with the server/discover probe and names its revision in every
    request's _meta; --protocol-version 2025-11-25 opens with initialize. Every message validates."""
    records = messages(run(name, version=version))
    first = records[0][1]["method"]
    if version is None:
        revision = "2026-07-28"
        assert first == "server/discover" and revision in records[1][1]["result"]["supportedVersions"]
        if name != "discover":       # discover's second server is a legacy one
            assert all(m["params"]["_meta"][META + "protocolVersion"] == revision
                       for d, m in records if d == "send" and "id" in m and "method" in m)
    else:
        revision = records[1][1]["result"]["protocolVersion"]
        assert first == "initialize" and revision == LEGACY and "server/discover" not in methods(records, "send")
    if name != "discover":           # discover talks to two servers, one in each era
        assert wire_validator.check_transcript(records, revision) == len(records)


def test_cancel_shows_both_cancellations():
    records = messages(run("cancel"))
    cancels = [m["params"] for d, m in records if m.get("method") == "notifications/cancelled"]
    assert [c["reason"] for c in cancels][0] == "the user pressed Stop"
    assert cancels[1]["reason"].startswith("timed out after")
    answered = {m["id"] for d, m in records if d == "receive" and "method" not in m}
    assert not answered & {c["requestId"] for c in cancels}, "a cancelled request was answered"


def input_round(records: list, method: str) -> tuple:
    """The first tools/call answered with an InputRequiredResult asking for ``method``, and its retry."""
    for index, (d, m) in enumerate(records):
        requests = (m.get("result") or {}).get("inputRequests") or {}
        keys = [key for key, request in requests.items() if request["method"] == method]
        if keys:
            retry = next(m2 for d2, m2 in records[index + 1:] if m2.get("method") == "tools/call")
            assert retry["params"]["requestState"] == m["result"]["requestState"]       # echoed exactly
            return keys[0], m["result"], retry["params"]
    raise AssertionError(f"no input request for {method}")


def test_sampling_nests_a_server_request_in_the_call():
    records = messages(run("sampling", version=LEGACY))
    assert methods(records, "receive") == ["sampling/createMessage"]
    call = next(i for i, (d, m) in enumerate(records) if m.get("method") == "tools/call")
    sample = next(i for i, (d, m) in enumerate(records) if m.get("method") == "sampling/createMessage")
    result = next(i for i, (d, m) in enumerate(records) if m.get("id") == records[call][1]["id"] and "result" in m)
    assert call < sample < result


def test_sampling_in_the_default_era_is_a_multi_round_trip_request():
    records = messages(run("sampling"))
    assert "sampling/createMessage" not in methods(records, "receive")       # no server-sent request
    key, asked, retry = input_round(records, "sampling/createMessage")
    assert asked["resultType"] == "input_required"
    assert retry["inputResponses"][key]["content"] == {"type": "text", "text": "Paris"}
    assert records[-1][1]["result"]["content"][0]["text"] == "Paris"


def test_elicitation_shows_form_and_url():
    records = messages(run("elicitation", version=LEGACY))
    modes = [m["params"]["mode"] for d, m in records if m.get("method") == "elicitation/create"]
    assert modes == ["form", "url"]
    assert "notifications/elicitation/complete" in methods(records, "receive")


def test_elicitation_in_the_default_era_answers_in_input_responses():
    records = messages(run("elicitation"))
    key, asked, retry = input_round(records, "elicitation/create")
    assert asked["inputRequests"][key]["params"]["mode"] == "form"
    assert retry["inputResponses"][key] == {"action": "accept", "content": {"name": "Ada"}}


def test_roots_shows_list_and_change():
    records = messages(run("roots", version=LEGACY))
    assert methods(records, "receive") == ["roots/list", "roots/list"]
    assert "notifications/roots/list_changed" in methods(records, "send")


def test_roots_in_the_default_era_are_asked_for_each_time_and_never_announced():
    records = messages(run("roots"))
    assert "notifications/roots/list_changed" not in methods(records, "send")
    answers = [m["params"]["inputResponses"] for d, m in records
               if m.get("method") == "tools/call" and "inputResponses" in m["params"]]
    assert [[r["uri"] for r in list(a.values())[0]["roots"]] for a in answers] == [
        ["file:///home/ada/project"], ["file:///home/ada/project", "file:///srv/data"]]


def test_discover_probes_then_falls_back_to_initialize():
    records = messages(run("discover"))
    sent = methods(records, "send")
    assert sent.count("server/discover") == 2 and sent.count("initialize") == 1
    assert sent.index("initialize") > [i for i, m in enumerate(sent) if m == "server/discover"][1]
    errors = [m["error"]["code"] for d, m in records if "error" in m]
    assert errors == [-32601]                                  # the legacy server's answer to the probe
    calls = [m for d, m in records if m.get("method") == "tools/call"]
    assert META + "protocolVersion" in calls[0]["params"]["_meta"] and "_meta" not in calls[1]["params"]
    legacy = messages(run("discover", version=LEGACY))
    assert methods(legacy, "send")[0] == "initialize" and "server/discover" not in methods(legacy, "send")


def test_listen_acknowledges_then_tags_notifications_with_the_subscription_id():
    records = messages(run("listen"))
    listens = [m for d, m in records if m.get("method") == "subscriptions/listen"]
    assert listens[-1]["params"]["notifications"]["resourceSubscriptions"] == ["config://app"]
    acks = [m for d, m in records if m.get("method") == "notifications/subscriptions/acknowledged"]
    assert [a["params"]["_meta"][META + "subscriptionId"] for a in acks] == [m["id"] for m in listens]
    cancelled = [m["params"]["requestId"] for d, m in records if m.get("method") == "notifications/cancelled"]
    assert cancelled == [listens[0]["id"]]                     # the replaced listen
    for method in ("notifications/resources/updated", "notifications/tools/list_changed"):
        tagged = [m for d, m in records if m.get("method") == method]
        # the new listen's id (the replaced one may still hear a change its cancellation overtook: the
        # client drops those, client/modern/era.py rule 6)
        assert listens[-1]["id"] in [m["params"]["_meta"][META + "subscriptionId"] for m in tagged]
    assert "resources/subscribe" not in methods(records, "send")
    legacy = messages(run("listen", version=LEGACY))
    assert "resources/subscribe" in methods(legacy, "send") and "subscriptions/listen" not in methods(legacy, "send")


@pytest.mark.parametrize("version", [None, LEGACY], ids=["default", "legacy"])
def test_auth_walks_the_whole_oauth_flow(version):
    pytest.importorskip("requests")          # the OAuth client side needs requests
    lines = run("auth", version=version)
    flow = [line.split("  ")[0] for line in lines if line.startswith(("GET ", "POST ", "browser: "))]
    first = "POST /mcp (server/discover)" if version is None else "POST /mcp (initialize)"
    assert flow[:7] == [first, "GET /.well-known/oauth-protected-resource/mcp",
                        "GET /.well-known/oauth-authorization-server", "POST /register", "browser: GET /authorize",
                        "POST /token", first], flow             # the refused request, retried with the token
    assert "POST /mcp (tools/call)" in flow
    statuses = [line.rsplit("<- ", 1)[1] for line in lines if line.startswith("POST /mcp")]
    assert statuses[0] == "401" and statuses.count("403") == 1 and statuses[-1] == "200"
    text = "\n".join(lines)
    assert 'WWW-Authenticate: Bearer resource_metadata="' in text and 'error="insufficient_scope"' in text
    assert "code_challenge_method=S256 code_challenge=" in text and "grant_type=authorization_code" in text
    assert "scope 'mcp admin'" in text                   # the step-up asked the union of the scopes
    assert "# result: ada: mcp" in lines and "# result: reset done" in lines


def test_host_grants_one_elicitation_and_declines_the_other():
    lines = run("host")
    sent = [json.loads(line.split("  ", 1)[1]) for line in lines if line.startswith("host -> mail  ")]
    assert sent[0]["method"] == "server/discover"
    retry = [m for m in sent if m.get("method") == "tools/call" and "inputResponses" in m["params"]]
    assert list(retry[0]["params"]["inputResponses"].values()) == [{"action": "decline"}]
    assert "# result: files: the user said accept" in lines and "# result: mail: the user said decline" in lines
    legacy = run("host", version=LEGACY)
    errors = [json.loads(line.split("  ", 1)[1]) for line in legacy if line.startswith("host -> mail  ")]
    assert [m["error"]["code"] for m in errors if "error" in m] == [-1]


def test_pagination_follows_cursors_and_refuses_a_bad_one():
    records = messages(run("pagination"))
    lists = [m for d, m in records if m.get("method") == "tools/list"]
    assert len(lists) == 4 and "cursor" not in lists[0].get("params", {})
    assert lists[-1]["params"]["cursor"] == "not-a-cursor"
    assert any(m.get("error", {}).get("code") == -32602 for d, m in records)


def test_tasks_shows_every_task_method():
    records = messages(run("tasks", version=LEGACY))
    sent = methods(records, "send")
    for method in ("tasks/get", "tasks/result", "tasks/list", "tasks/cancel"):
        assert method in sent
    statuses = [m["params"]["status"] for d, m in records if m.get("method") == "notifications/tasks/status"]
    assert "cancelled" in statuses


def test_tasks_in_the_default_era_are_the_extension_polled_and_cancelled():
    records = messages(run("tasks"))
    sent = methods(records, "send")
    assert "tasks/result" not in sent and "tasks/list" not in sent
    assert "tasks/get" in sent and sent[-1] == "tasks/cancel"
    created = [m["result"] for d, m in records if (m.get("result") or {}).get("resultType") == "task"]
    assert len(created) == 2 and created[0]["status"] == "working"
    assert any((m.get("result") or {}).get("status") == "completed" for d, m in records)


def test_http_in_the_default_era_has_no_session_and_cancels_by_closing():
    lines = run("http")
    posts = [line for line in lines if line.startswith("POST /mcp")]
    assert len(posts) == 3 and all("MCP-Protocol-Version: 2026-07-28" in line for line in posts)
    assert "Mcp-Method: server/discover" in posts[0] and "Mcp-Name: add" in posts[1]
    text = "\n".join(line for line in lines if not line.startswith("#"))
    assert "mcp-session-id" not in text and '"initialize"' not in text and "Last-Event-ID" not in text
    assert "<- 200 OK  content-type: text/event-stream" in text
    assert "notifications/cancelled" not in text
    assert any(line.startswith("# the tool's ctx.cancelled was set: True;") for line in lines)


def test_http_shows_json_sse_resume_and_404():
    pytest.importorskip("requests")          # the HTTP server needs nothing; kept with the HTTP tests
    lines = run("http", version=LEGACY)
    text = "\n".join(lines)
    assert "<- 200 OK  content-type: application/json" in text
    assert "<- 200 OK  content-type: text/event-stream" in text
    priming = next(line for line in lines if line.startswith("  event  id: "))
    assert "retry: " in priming and priming.endswith("data: ''")
    assert any(line.startswith("GET /mcp ") and "Last-Event-ID: " in line for line in lines)
    assert "<- 404 Not Found" in text
    sessions = {line.split("mcp-session-id: ")[1] for line in lines if "mcp-session-id: " in line}
    assert len(sessions) == 2, "a new session after the 404"
    records = messages(lines)
    assert any(m.get("result") == {"content": [{"type": "text", "text": "counted to 2"}]} for d, m in records)


def test_sse_shows_the_endpoint_event_and_answers_on_the_stream():
    lines = run("sse")
    text = "\n".join(lines)
    assert "event: endpoint  data: '/messages?session_id=" in text
    assert text.count("<- 202 Accepted") == 3
    assert text.count("  event  event: message") == 2
    records = messages(lines)
    assert records[-1][1]["result"]["content"][0]["text"] == "5"


def test_the_command_line_runs_a_scenario():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    done = subprocess.run([sys.executable, "-m", "mcp_ref", "demo", "--scenario", "list"], capture_output=True,
                          text=True, timeout=60, env=env, cwd=str(ROOT))
    assert done.returncode == 0 and "sampling" in done.stdout, done.stderr
    out = io.StringIO()
    sys_stdout, sys.stdout = sys.stdout, out
    try:
        assert main(["demo", "--scenario", "nothing"]) == 2
    finally:
        sys.stdout = sys_stdout
    assert "unknown scenario" in out.getvalue()


def test_the_narration_names_each_era_and_each_scenario():
    """Rule 6: a note written per era is written for both; every scenario has its summary."""
    from mcp_ref.cli.scenarios.show import _notes, note
    keys = set(_notes())
    for key in keys:
        base, _, era = key.partition("/")
        assert era in ("", "modern", "legacy"), key
        if era:         # both eras, and no common note the era's own would hide
            assert f"{base}/{'legacy' if era == 'modern' else 'modern'}" in keys and base not in keys, key
    assert all(name in keys for name in scenarios.SCENARIOS)
    assert note("connect", False, version="2025-11-25").startswith("initialize, then notifications/initialized: the "
                                                                   "2025-11-25 handshake")
    assert note("a text with spaces is printed as it is") == "a text with spaces is printed as it is"
