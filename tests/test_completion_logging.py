"""Completion and logging, in process. Spec: server/utilities/completion,
server/utilities/logging.

Completion: prompt arguments and template variables, ``context.arguments``
(2025-06-18), the 100-value cap with ``total``/``hasMore``, the capability only
with a completer, -32602 for unknown references. Logging: ``logging/setLevel``
per session, the eight levels, filtering, messages before the response, the
server-wide ``log``, and the bridge from Python's ``logging``. Every message is
validated against its revision's schema.
"""
import logging
import sys

import pytest

from conftest import REVISIONS
from features_helpers import Collector, connected, env
from helpers import WAIT, is_method, tap_stdio_clients
from mcp_ref import Client, Context, Server
from mcp_ref.errors import CapabilityNotSupported, InvalidParamsError, MethodNotFoundError
from mcp_ref.types import Completion, PromptReference, ResourceTemplateReference

LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
LANGUAGES = ["python", "perl", "php", "rust"]


def completion_server(seen=None) -> Server:
    server = Server("c")

    @server.prompt
    def review(code: str, language: str = "python", framework: str = "") -> str:
        return code

    @server.resource("repo://{owner}/{name}")
    def repo(owner: str, name: str) -> str:
        return f"{owner}/{name}"

    @server.completion
    def complete(ref, argument, context):
        if seen is not None:
            seen.append((ref, argument, context))
        if argument.name == "language":
            return [v for v in LANGUAGES if v.startswith(argument.value)]
        if argument.name == "framework" and context is not None:
            return {"python": ["flask", "fastapi"], "rust": ["axum"]}.get(context.arguments.get("language"), [])
        if argument.name == "name":
            return [f"{argument.value}{i}" for i in range(150)]
        if argument.name == "owner":
            return Completion(values=["me"], total=40, has_more=True)
        return None

    return server


@pytest.mark.req("COMP-1", "COMP-5")
@pytest.mark.parametrize("revision", REVISIONS)
def test_completion_of_prompt_arguments_and_template_variables(revision, wire_validator):
    seen = []
    with connected(completion_server(seen), revision, wire_validator) as (client, _, recorder):
        # The capability arrived in 2025-03-26; a 2024-11-05 client asks without it.
        assert ("completions" in client.server_capabilities) == (revision >= "2025-03-26")
        result = client.complete(PromptReference(name="review"), {"name": "language", "value": "p"})
        assert (result.values, result.total, result.has_more) == (["python", "perl", "php"], 3, False)
        ref, argument, context = seen[-1]
        assert isinstance(ref, PromptReference) and ref.name == "review"
        assert (argument.name, argument.value, context) == ("language", "p", None)
        result = client.complete({"type": "ref/resource", "uri": "repo://{owner}/{name}"}, ("owner", ""))
        assert (result.values, result.total, result.has_more) == (["me"], 40, True)
        assert isinstance(seen[-1][0], ResourceTemplateReference) and seen[-1][0].uri == "repo://{owner}/{name}"
        framework = client.complete({"type": "ref/prompt", "name": "review"}, ("framework", ""),
                                    context={"language": "rust"})
        sent = [m for m in recorder.sent() if m.get("method") == "completion/complete"][-1]["params"]
        if revision >= "2025-06-18":
            assert framework.values == ["axum"] and seen[-1][2].arguments == {"language": "rust"}
            assert sent["context"] == {"arguments": {"language": "rust"}}
        else:                                    # context.arguments arrived in 2025-06-18
            assert framework.values == [] and seen[-1][2] is None and "context" not in sent


@pytest.mark.req("COMP-5")
def test_at_most_100_values_with_total_and_has_more(wire_validator):
    with connected(completion_server(), "2025-11-25", wire_validator) as (client, _, _):
        result = client.complete({"type": "ref/resource", "uri": "repo://{owner}/{name}"}, ("name", "r"),
                                 context={"arguments": {"owner": "me"}})
        assert len(result.values) == 100 and result.values[0] == "r0"
        assert (result.total, result.has_more) == (150, True)
        empty = client.complete({"type": "ref/prompt", "name": "review"}, ("code", "x"))     # None -> nothing
        assert (empty.values, empty.total, empty.has_more) == ([], 0, False)


@pytest.mark.req("COMP-2", "COMP-5")
def test_unknown_references_are_32602(wire_validator):
    with connected(completion_server(), "2025-11-25", wire_validator) as (client, _, _):
        with pytest.raises(InvalidParamsError, match="Unknown prompt: nope"):
            client.complete({"type": "ref/prompt", "name": "nope"}, ("x", ""))
        with pytest.raises(InvalidParamsError, match="Unknown resource template"):
            client.complete({"type": "ref/resource", "uri": "other://{x}"}, ("x", ""))
        with pytest.raises(InvalidParamsError, match="not an argument"):
            client.complete({"type": "ref/prompt", "name": "review"}, ("colour", ""))


@pytest.mark.req("COMP-1")
def test_completions_capability_only_with_a_completer():
    server = Server("c")
    server.add_prompt(lambda topic: topic, name="p")
    assert "completions" not in server.capabilities()
    with connected(server) as (client, _, _):
        with pytest.raises(CapabilityNotSupported):
            client.complete({"type": "ref/prompt", "name": "p"}, ("topic", ""))
        with pytest.raises(MethodNotFoundError):
            client.session.request("completion/complete", {"ref": {"type": "ref/prompt", "name": "p"},
                                                           "argument": {"name": "topic", "value": ""}})
    # 2024-11-05 had no completions capability: that client asks anyway (and is refused here).
    with connected(server, "2024-11-05") as (client, _, _):
        with pytest.raises(MethodNotFoundError):
            client.complete({"type": "ref/prompt", "name": "p"}, ("topic", ""))


# ---------------------------------------------------------------------- logging
def logging_server(**options) -> Server:
    server = Server("l", **options)

    @server.tool
    def shout(ctx: Context) -> str:
        sent = [level for level in LEVELS if ctx.log(level, {"level": level}, logger="shout")]
        return ",".join(sent)

    @server.tool
    def bad_level(ctx: Context) -> str:
        ctx.log("verbose", "x")
        return "unreachable"

    return server


def log_params(recorder) -> list:
    return [m["params"] for m in recorder.received() if m.get("method") == "notifications/message"]


@pytest.mark.parametrize("revision", REVISIONS)
def test_set_level_filters_messages_per_session(revision, wire_validator):
    server = logging_server()
    logs_a, logs_b = Collector(), Collector()
    with connected(server, revision, wire_validator, on_log=logs_a) as (a, _, rec_a), \
            connected(server, revision, wire_validator, on_log=logs_b) as (b, _, rec_b):
        assert a.server_capabilities["logging"] == {}
        a.set_logging_level("warning")
        assert a.call_tool("shout").content[0].text == "warning,error,critical,alert,emergency"
        assert [m.level for m in logs_a.wait_for(5)] == list(LEVELS[3:])
        assert logs_a.items[0].data == {"level": "warning"} and logs_a.items[0].logger == "shout"
        assert b.call_tool("shout").content[0].text == ",".join(LEVELS)        # no level set: everything
        assert len(logs_b.wait_for(8)) == 8
        b.set_logging_level("emergency")
        assert b.call_tool("shout").content[0].text == "emergency"
        assert len(log_params(rec_a)) == 5 and len(log_params(rec_b)) == 9


def test_messages_are_sent_before_the_response(wire_validator):
    with connected(logging_server(), "2025-11-25", wire_validator) as (client, _, recorder):
        client.call_tool("shout")
        received = recorder.received()
        call_id = [m for m in recorder.sent() if m.get("method") == "tools/call"][0]["id"]
        reply_at = next(i for i, m in enumerate(received) if m.get("id") == call_id and "result" in m)
        log_at = [i for i, m in enumerate(received) if m.get("method") == "notifications/message"]
        assert len(log_at) == 8 and max(log_at) < reply_at


@pytest.mark.req("LOG-2", "LOG-5")
def test_invalid_levels():
    with connected(logging_server()) as (client, _, _):           # no schema check: the request is bad
        with pytest.raises(InvalidParamsError, match="Invalid log level") as info:
            client.set_logging_level("verbose")
        assert info.value.code == -32602
        result = client.call_tool("bad_level")
        assert result.is_error and "unknown logging level 'verbose'" in result.content[0].text
    with pytest.raises(ValueError):
        Server("l", log_level="loud")
    with pytest.raises(ValueError):
        Server("l").log("loud", "x")


@pytest.mark.req("LOG-1")
def test_server_log_goes_to_every_ready_session_and_the_default_level_applies(wire_validator):
    server = logging_server(log_level="error")
    logs_a, logs_b = Collector(), Collector()
    with connected(server, "2025-11-25", wire_validator, on_log=logs_a) as (a, _, _), \
            connected(server, "2024-11-05", wire_validator, on_log=logs_b) as (b, _, _):
        assert server.log("info", "quiet") == 0                # below the server's default level
        b.set_logging_level("debug")
        assert server.log("info", {"n": 1}) == 1
        assert server.log("critical", "both", logger="srv") == 2
        assert [m.data for m in logs_b.wait_for(2)] == [{"n": 1}, "both"]
        assert [(m.level, m.data, m.logger) for m in logs_a.wait_for(1)] == [("critical", "both", "srv")]


def test_python_logging_bridge(wire_validator):
    server = Server("bridge")
    logger = logging.getLogger("test_bridge_logger")
    logger.setLevel(logging.DEBUG)
    logger.propagate = False
    handler = server.bridge_logging(logger, level=logging.INFO)

    @server.tool
    def work() -> str:
        logger.warning("inside %s", "work")
        logger.debug("too detailed")
        return "ok"

    assert server.capabilities() == {"tools": {"listChanged": True}, "logging": {}}
    logs_a, logs_b = Collector(), Collector()
    try:
        with connected(server, "2025-11-25", wire_validator, on_log=logs_a) as (a, _, rec_a), \
                connected(server, "2025-03-26", wire_validator, on_log=logs_b) as (b, _, rec_b):
            assert a.call_tool("work").content[0].text == "ok"
            assert [(m.level, m.data, m.logger) for m in logs_a.wait_for(1)] == \
                [("warning", "inside work", "test_bridge_logger")]
            logger.error("outside any request")
            logger.critical("and again")
            assert [m.data for m in logs_b.wait_for(2)] == ["outside any request", "and again"]
            assert [(m.level, m.data) for m in logs_a.wait_for(3)][1:] == \
                [("error", "outside any request"), ("critical", "and again")]
            b.ping()
            assert len(logs_b.items) == 2                      # the record logged inside a's request: a only
            rec_a.wait_count(is_method("notifications/message", "receive"), 3)
    finally:
        logger.removeHandler(handler)


FAILING_SERVER = """
import logging, sys
from mcp_ref import Server

logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="server log %(levelname)s: %(message)s")
server = Server("failing")
server.bridge_logging()              # the root logger: the library's own records included


@server.tool
def boom(secret: str) -> str:
    raise RuntimeError(f"kaput ({len(secret)} characters)")


server.run()
"""


def test_a_failing_tools_traceback_stays_in_the_servers_own_log_over_stdio(tmp_path, monkeypatch, wire_validator):
    """Spec: server/utilities/logging#security (no internal details in log messages):
    over a real stdio session, the client gets the failure's message through the bridge,
    never its traceback; the traceback is in the server's own log (stderr here)."""
    script = tmp_path / "failing_server.py"
    script.write_text(FAILING_SERVER)
    stderr, logs = Collector(), Collector()
    tapped = tap_stdio_clients(monkeypatch)
    with Client.stdio([sys.executable, str(script)], env=env(), on_stderr=stderr, on_log=logs,
                      timeout=WAIT * 2, init_timeout=WAIT * 2) as client:
        result = client.call_tool("boom", {"secret": "hunter2"})
        assert result.is_error and result.content[0].text == "kaput (7 characters)"
        failed = next(m for m in logs.wait_for(1) if "boom" in str(m.data))
        assert (failed.level, failed.data, failed.logger) == ("info", "tool boom failed: kaput (7 characters)",
                                                              "mcp_ref.server")
        client.ping()                    # every log message of the call has been read
        assert not [m for m in logs.items if "Traceback" in str(m.data) or "line " in str(m.data)]
    text = "\n".join(stderr.items)
    assert "server log INFO: tool boom failed: kaput (7 characters)" in text
    assert "Traceback (most recent call last):" in text and "RuntimeError: kaput (7 characters)" in text
    assert wire_validator.check_transcript(tapped[0].recorder.raw, client.protocol_version) > 0


def test_the_bridge_never_forwards_a_traceback_or_stack_and_alone_it_leaves_stderr_to_last_resort(capsys):
    server = Server("quiet")
    logger = logging.getLogger("test_bridge_tracebacks")
    logger.setLevel(logging.DEBUG)
    logger.propagate = False
    handler = server.bridge_logging(logger, level=logging.INFO)

    @server.tool
    def work() -> str:
        try:
            raise ValueError("inner detail")
        except ValueError:
            logger.exception("could not work")
        logger.info("where am I", stack_info=True)
        logger.info("fine")              # below lastResort's WARNING: not on stderr
        return "ok"

    logs = Collector()
    try:
        with connected(server, "2025-11-25", on_log=logs) as (client, _, _):
            assert client.call_tool("work").content[0].text == "ok"
            assert [(m.level, m.data) for m in logs.wait_for(3)] == [
                ("error", "could not work"), ("info", "where am I"), ("info", "fine")]
    finally:
        logger.removeHandler(handler)
    err = capsys.readouterr().err                # the bridge alone: Python's last resort prints it
    assert "could not work" in err and "ValueError: inner detail" in err
    assert "where am I" not in err and "fine" not in err


@pytest.mark.req("LOG-1")
def test_no_log_messages_without_the_logging_capability():
    server = logging_server(logging_capability=False)
    assert "logging" not in server.capabilities()
    with connected(server) as (client, _, recorder):
        assert client.call_tool("shout").content[0].text == ""
        assert server.log("emergency", "nobody hears this") == 0
        client.ping()
        assert log_params(recorder) == []
