"""The command line (mcp_ref.cli): each inspector command against the everything server over
stdio and HTTP, serve, the shell through onecmd, --trace, errors, Ctrl-C, and an official SDK server."""
import io
import json
import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mcp_ref.__main__ import main

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
EVERYTHING = f"{shlex.quote(sys.executable)} -m mcp_ref.examples.everything"
WAIT = 15.0


def child_env() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return env


@pytest.fixture(scope="module")
def http_url():
    """``mcp-ref serve ... --http``: the everything server in its own process."""
    process = subprocess.Popen([sys.executable, "-m", "mcp_ref", "serve", "mcp_ref.examples.everything",
                                "--http", "127.0.0.1:0"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                               text=True, env=child_env())
    try:
        line = process.stdout.readline()
        assert "serving MCP at" in line, line
        yield line.split("serving MCP at ")[1].split()[0]
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(timeout=WAIT)
        process.stdout.close()


@pytest.fixture(params=["stdio", "http"])
def target(request):
    if request.param == "stdio":
        return ["--stdio", EVERYTHING]
    return ["--url", request.getfixturevalue("http_url")]


def run(capsys, *argv):
    """``(status, stdout, stderr)`` of the command line run in this process."""
    status = main(list(argv))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


GOLDEN = {
    ("info",): "server: everything 1.0.0 (Everything)\nprotocol: 2026-07-28\n"
               "capabilities: completions, logging, prompts, resources, tools\n"
               "instructions: Exercises every MCP server feature; every tool works without arguments.\n",
    ("resources",): "everything://readme    readme (text/markdown)\neverything://logo.png  logo (image/png)\n"
                    "everything://counter   counter_resource (text/plain)\n",
    ("templates",): "everything://greeting/{name}  greeting (text/plain)\n"
                    "everything://files/{+path}    files (text/plain)\n",
    ("call", "add", "a=5", "b=7"): "12\n",
    ("call", "echo", "message=hi there"): "hi there\n",
    ("call", "add", "--args-json", '{"a": 1, "b": 1}'): "2\n",
    # the text block mirrors structuredContent, so the result is printed once
    ("call", "get_weather", "city=Oslo"): '{"city": "Oslo", "temperature": 21.5, "conditions": "sunny"}\n',
    ("call", "get_image"): "[image image/png, 69 bytes base64-decoded]\n",
    ("read", "everything://greeting/ada"): "Hello, ada!\n",
    ("read", "everything://logo.png"): "[blob image/png, 69 bytes base64-decoded]\n",
    ("prompt", "code_review", "code=x = 1", "language=go"): "# Ask for a code review.\n"
                                                             "user: Please review this go code:\nx = 1\n"
                                                             "assistant: Sure, let me look at it.\n",
    ("complete", "code_review", "language", "p"): "python\nperl\nphp\npascal\n",
    ("complete", "everything://files/{+path}", "path", "docs/"): "docs/intro.md\ndocs/usage.md\n",
    ("ping",): "pong\n",
    ("log-level", "error"): "log level set to error\n",
}


@pytest.mark.parametrize("command", [c for c in GOLDEN if GOLDEN[c] is not None], ids=" ".join)
def test_golden_output(capsys, target, command):
    status, out, err = run(capsys, *command, *target)
    assert (status, out) == (0, GOLDEN[command]), err


def test_listings_and_json_output(capsys, target):
    status, out, _ = run(capsys, "tools", *target)
    assert status == 0 and out.splitlines()[0].split() == ["echo", "(message?:", "string)", "Echo", "a", "message",
                                                            "back."]
    _, out, _ = run(capsys, "tools", "--json", *target)
    tools = {tool["name"]: tool for tool in json.loads(out)}
    assert tools["sum_numbers"]["inputSchema"]["$defs"]
    _, out, _ = run(capsys, "prompts", *target)
    assert "code_review      (code, language?) Ask for a code review." in out
    _, out, _ = run(capsys, "info", "--json", *target)
    assert json.loads(out)["serverInfo"]["name"] == "everything"
    _, out, _ = run(capsys, "call", "add", "--args-json", '{"a": 1, "b": 1}', "--json", *target)
    assert json.loads(out) == {"content": [{"type": "text", "text": "2"}]}
    _, out, _ = run(capsys, "call", "get_weather", "--json", *target)
    assert json.loads(out)["structuredContent"]["city"] == "Paris"
    _, out, _ = run(capsys, "read", "everything://logo.png", "--json", *target)
    assert json.loads(out)["contents"][0]["blob"].startswith("iVBOR")
    _, out, _ = run(capsys, "complete", "code_review", "language", "r", "--json", *target)
    assert json.loads(out)["values"] == ["rust", "ruby"]
    _, out, _ = run(capsys, "ping", "--json", *target)
    assert json.loads(out)["ok"] is True


def test_json_output_and_json_arguments_are_two_options(capsys):
    """``--json`` only chooses the output; ``--args-json`` only gives the arguments."""
    target = ["--stdio", EVERYTHING]
    status, out, _ = run(capsys, "call", "add", "--json", "a=1", "b=2", *target)
    assert status == 0 and json.loads(out) == {"content": [{"type": "text", "text": "3"}]}
    status, out, _ = run(capsys, "prompt", "code_review", "--args-json", '{"code": "x = 1"}', *target)
    assert status == 0 and out.startswith("# Ask for a code review.\nuser: Please review this python code:")
    status, out, err = run(capsys, "call", "add", "--json", '{"a": 1, "b": 1}', *target)
    assert (status, out) == (1, "") and err == ("mcp-ref: error: arguments are key=value; give a JSON object "
                                                "with --args-json '{\"a\": 1, \"b\": 1}'\n")
    status, _, err = run(capsys, "call", "add", "a=1", "--args-json", '{"b": 1}', *target)
    assert status == 1 and "not both" in err


def test_structured_content_is_printed_once():
    from types import SimpleNamespace
    from mcp_ref.cli.commands import call
    from mcp_ref.types import CallToolResult, TextContent

    def printed(result):
        client = SimpleNamespace(call_tool=lambda *args, **options: result)
        out = io.StringIO()
        call(client, SimpleNamespace(tool="t", arguments=[], args_json=None, json=False), out)
        return out.getvalue()
    weather = {"city": "Oslo", "temperature": 21.5}
    assert printed(CallToolResult([TextContent(json.dumps(weather))], structured_content=weather)) == \
        json.dumps(weather) + "\n"
    # a wrapped value ({"result": X}, as SDKs send a non-object) whose text is X
    assert printed(CallToolResult([TextContent("5")], structured_content={"result": 5})) == "5\n"
    # text that says something else: both, once each
    assert printed(CallToolResult([TextContent("sunny")], structured_content=weather)) == \
        "sunny\nstructured: " + json.dumps(weather) + "\n"
    assert printed(CallToolResult([], structured_content=weather)) == "structured: " + json.dumps(weather) + "\n"


def test_tools_lists_each_parameter_with_its_type():
    from mcp_ref.cli.commands import _parameters
    assert _parameters({"type": "object", "properties": {"a": {"type": "number"}, "xs": {"type": "array",
                        "items": {"type": "string"}}, "p": {"$ref": "#/$defs/Point"}, "n": {"anyOf": [
                        {"type": "integer"}, {"type": "null"}]}, "c": {"enum": ["x", "y"]}, "any": {}},
                        "required": ["a", "p"]}) == '(a: number, xs?: string[], p: Point, n?: integer|null, ' \
                                                     'c?: "x"|"y", any?: any)'
    assert _parameters({"type": "object"}) == "()"


def test_version_names_the_package_and_the_revisions(capsys):
    import mcp_ref
    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    out = capsys.readouterr().out
    assert exit_info.value.code == 0
    assert out == f"mcp-ref {mcp_ref.__version__}\nMCP protocol revisions: {', '.join(mcp_ref.SUPPORTED_REVISIONS)}\n"


def test_progress_bar_and_errors(capsys, target):
    status, out, err = run(capsys, "call", "long_operation", "steps=4", *target)
    assert (status, out) == (0, "done 4 steps\n")
    assert "\r[" + "#" * 30 + "] 4/4 step 4" in err and err.endswith("\n")
    status, out, err = run(capsys, "call", "fail", "message=boom", *target)
    assert (status, out) == (1, "boom\n") and err == "mcp-ref: error: tool 'fail' reported an error (isError)\n"
    status, out, err = run(capsys, "call", "nosuch", *target)
    assert status == 1 and out == "" and err.startswith("mcp-ref: error: Unknown tool: nosuch") and "-32602" in err
    status, _, err = run(capsys, "read", "everything://nothing", *target)
    assert status == 1 and err.startswith("mcp-ref: error: ") and "\n" == err[-1] and err.count("\n") == 1
    status, _, err = run(capsys, "call", "add", "a", *target)
    assert status == 1 and "key=value" in err


def test_trace_prints_each_message_with_time_session_and_direction(capsys, target):
    import re
    pattern = re.compile(r"(\d\d:\d\d:\d\d\.\d{3}) \[(server(?: session=\S+)?)\] (->|<-) (\{.*\})")
    # The default era: the probe, the listen and its acknowledgement, then ping(), which is a
    # server/discover in 2026-07-28 (no ping method); no session, over HTTP either.
    status, out, err = run(capsys, "ping", "--trace", *target)
    assert (status, out) == (0, "pong\n")
    lines = err.splitlines()
    assert len(lines) == 6, err
    sent = [json.loads(pattern.fullmatch(line).group(4)).get("method") for line in lines
            if pattern.fullmatch(line).group(3) == "->"]
    assert sent == ["server/discover", "subscriptions/listen", "server/discover"], sent
    assert all(pattern.fullmatch(line).group(2) == "server" for line in lines)
    # The legacy era, asked for by name: initialize, its answer, initialized, ping, its answer.
    status, out, err = run(capsys, "ping", "--trace", "--protocol-version", "2025-11-25", *target)
    assert (status, out) == (0, "pong\n")
    lines = err.splitlines()
    assert len(lines) == 5, err
    stamp, where, arrow, body = pattern.fullmatch(lines[3]).groups()
    assert arrow == "->" and json.loads(body)["method"] == "ping"
    assert pattern.fullmatch(lines[4]).group(3) == "<-"
    if target[0] == "--url":                      # the HTTP session id, once the server gave one
        assert where.startswith("server session=")
    else:
        assert where == "server"


def test_protocol_version_is_forced(capsys, target):
    status, out, _ = run(capsys, "info", "--protocol-version", "2025-03-26", *target)
    assert status == 0 and "protocol: 2025-03-26" in out


def test_subscribe_prints_updates_over_http(http_url):
    process = subprocess.Popen([sys.executable, "-m", "mcp_ref", "subscribe", "everything://counter", "--count", "1",
                                "--url", http_url], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env=child_env())
    try:
        assert "subscribed to everything://counter" in process.stderr.readline()
        assert main(["call", "touch_counter", "--url", http_url]) == 0
        out, _ = process.communicate(timeout=WAIT)
    finally:
        process.kill() if process.poll() is None else None
    assert process.returncode == 0 and out.startswith("updated everything://counter: ")


def test_usage_and_target_errors(capsys, tmp_path):
    status, _, err = run(capsys, "tools")
    assert status == 1 and "give one target" in err
    status, _, err = run(capsys, "tools", "--stdio", "no-such-command-xyz")
    assert (status, err) == (1, "mcp-ref: error: cannot run 'no-such-command-xyz': no such file or command\n")
    status, _, err = run(capsys, "tools", "--url", "http://127.0.0.1:9/mcp", "--timeout", "5")
    assert status == 1 and err.startswith("mcp-ref: error: ")
    config = tmp_path / "servers.json"
    config.write_text(json.dumps({"mcpServers": {"everything": {"command": sys.executable,
                                                                "args": ["-m", "mcp_ref.examples.everything"]}}}))
    status, out, _ = run(capsys, "call", "add", "a=1", "b=2", "--config", str(config), "--server", "everything")
    assert (status, out) == (0, "3\n")
    status, _, err = run(capsys, "tools", "--config", str(config), "--server", "other")
    assert status == 1 and "no server 'other'" in err and "it has: everything" in err
    with pytest.raises(SystemExit) as exit_info:
        main(["log-level", "loud", "--stdio", EVERYTHING])
    assert exit_info.value.code == 2


def test_serve_finds_the_server_object_and_explains_when_it_cannot(capsys, tmp_path):
    from mcp_ref.cli.serve import load_server
    assert load_server("mcp_ref.examples.everything").info.name == "everything"
    assert load_server("mcp_ref.examples.demo_server:server").info.name == "demo"
    (tmp_path / "two.py").write_text("from mcp_ref import Server\na = Server('a')\nb = Server('b')\n")
    with pytest.raises(LookupError, match="several mcp_ref Server objects: a, b; name one"):
        load_server(str(tmp_path / "two.py"))
    assert load_server(str(tmp_path / "two.py") + ":b").info.name == "b"
    (tmp_path / "server.txt").write_text("from mcp_ref import Server\nserver = Server('t')\n")
    with pytest.raises(ImportError, match="server.txt: not a Python source file"):
        load_server(str(tmp_path / "server.txt"))
    status, _, err = run(capsys, "serve", "mcp_ref.examples.everything", "--stateless")
    assert status == 1 and "--stateless applies to --http only" in err
    # serve over stdio is a server any client can spawn
    serve = f"{shlex.quote(sys.executable)} -m mcp_ref serve {shlex.quote(str(tmp_path / 'two.py'))}:a"
    status, out, _ = run(capsys, "info", "--stdio", serve)
    assert status == 0 and out.startswith("server: a 0.1.0\n")
    # serve --trace: the server's own view of the wire, on its stderr
    ping = b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}\n'
    done = subprocess.run([sys.executable, "-m", "mcp_ref", "serve", "mcp_ref.examples.demo_server", "--trace"],
                          input=ping, capture_output=True, timeout=WAIT, env=child_env())
    assert json.loads(done.stdout) == {"jsonrpc": "2.0", "id": 1, "result": {}}
    assert [line.split("] ")[1][:2] for line in done.stderr.decode().splitlines()] == ["<-", "->"]


def test_shell_through_onecmd(http_url):
    from mcp_ref.cli.shell import Shell
    from mcp_ref.client import Client
    out = io.StringIO()
    with Client.http(http_url, timeout=WAIT) as client:
        shell = Shell(client, out=out)
        shell.onecmd(shell.precmd("call add a=2 b=40"))
        assert out.getvalue() == "42\n"
        assert shell.completedefault("ec", "call ec", 5, 7) == ["echo"]
        assert shell.completedefault("everything://c", "read everything://c", 5, 19) == ["everything://counter"]
        assert shell.completedefault("", "prompt ", 7, 7)[:2] == ["simple", "code_review"]
        assert shell.completedefault("", "call echo ", 10, 10) == shell.completedefault("e", "ping e", 5, 6) == []
        for line in ("subscribe everything://counter", "call touch_counter"):
            shell.onecmd(shell.precmd(line))
        deadline = time.monotonic() + WAIT
        while "notifications/resources/updated" not in out.getvalue() and time.monotonic() < deadline:
            time.sleep(0.02)
        assert '* notifications/resources/updated {"uri": "everything://counter"}' in out.getvalue()
        out.seek(0)
        out.truncate()
        shell.onecmd(shell.precmd("log-level nonsense"))
        assert "log-level: argument level: invalid choice" in out.getvalue()
        shell.onecmd(shell.precmd("read everything://missing"))
        assert "error: " in out.getvalue()
        shell.onecmd(shell.precmd("frobnicate"))
        assert "unknown command 'frobnicate'" in out.getvalue()
        shell.onecmd("help")
        assert "log-level" in out.getvalue() and "subscribe" in out.getvalue()
        assert shell.onecmd("quit") is True


def test_shell_reads_commands_from_a_pipe():
    result = subprocess.run([sys.executable, "-m", "mcp_ref", "shell", EVERYTHING], input="ping\ncall echo\n",
                            capture_output=True, text=True, timeout=WAIT * 2, env=child_env())
    assert result.returncode == 0, result.stderr
    assert "pong\n" in result.stdout and "hello\n" in result.stdout


def test_ctrl_c_cancels_the_request_in_flight(tmp_path):
    log = tmp_path / "server.log"
    command = " ".join(shlex.quote(part) for part in (sys.executable, str(HERE / "host_servers.py"), "--log", str(log)))
    # Ctrl-C as a terminal sends it: a runner started in the background (nohup, a CI job) passes
    # SIGINT on ignored, and Python then installs no KeyboardInterrupt for the child to see.
    process = subprocess.Popen([sys.executable, "-m", "mcp_ref", "call", "wait", "--stdio", command],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=child_env(),
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        deadline = time.monotonic() + WAIT
        while '"tools/call"' not in (log.read_text() if log.exists() else "") and time.monotonic() < deadline:
            time.sleep(0.05)
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=WAIT)
    finally:
        process.kill() if process.poll() is None else None
    assert process.returncode == 130, err
    assert "interrupted; the request in flight was cancelled" in err and "Traceback" not in err
    messages = [json.loads(line)["message"] for line in log.read_text().splitlines()]
    call = next(m for m in messages if m.get("method") == "tools/call")
    cancels = [m for m in messages if m.get("method") == "notifications/cancelled"]
    assert cancels and cancels[0]["params"]["requestId"] == call["id"]


def test_demo_host_shows_the_loop_and_consent():
    from mcp_ref.cli.host_demo import demo_host
    out = io.StringIO()
    assert demo_host(out=out, width=100) == 0
    text = out.getvalue()
    for line in ("# model asks for calc__add {\"a\": 2, \"b\": 3}", "# tool result: 5",
                 "# consent: server 'assistant' asks the model (max 100 tokens):",
                 "# tool result: scripted: five",
                 "#   -> denied (tool 'divide' of server 'calc' is not on the allow-list)",
                 "# model answers: 2 + 3 = 5; dividing by zero was not allowed.", "# closed cleanly"):
        assert line in text.splitlines(), line
    assert any(line.startswith('host -> calc  {"jsonrpc": "2.0", "id": 1, "method": "server/discover"')
               for line in text.splitlines())              # the host speaks the default era
    assert any(line.startswith('host -> calc  {"jsonrpc": "2.0", "id": 4, "method": "tools/call"')
               for line in text.splitlines())
    assert max(len(line) for line in text.splitlines()) <= 100


def test_demo_host_honours_the_protocol_version():
    from mcp_ref.cli.host_demo import demo_host
    out = io.StringIO()
    assert demo_host(out=out, width=100, protocol_version="2025-11-25") == 0
    lines = out.getvalue().splitlines()
    assert any(line.startswith('host -> calc  {"jsonrpc": "2.0", "id": 1, "method": "initialize"') for line in lines)
    assert not any('"method": "server/discover"' in line for line in lines)       # the legacy era: no probe
    assert "# model answers: 2 + 3 = 5; dividing by zero was not allowed." in lines


def test_demo_host_takes_protocol_version_on_the_command_line(capsys):
    from mcp_ref.__main__ import main
    assert main(["demo", "--host", "--protocol-version", "2025-11-25"]) == 0
    out = capsys.readouterr().out
    assert '"method": "initialize"' in out and '"method": "server/discover"' not in out


def test_against_an_official_sdk_server(capsys):
    """tests/interop/sdk_server.py is written with the official Python SDK (mcp >= 2): two one-shot
    commands, then the rest through the shell on one connection (the SDK starts slowly)."""
    pytest.importorskip("mcp.server.mcpserver", reason="the official SDK (mcp >= 2) is not installed")
    from mcp_ref.cli.shell import Shell
    from mcp_ref.client import Client
    argv = [sys.executable, str(HERE / "interop" / "sdk_server.py")]
    target = ["--stdio", " ".join(shlex.quote(part) for part in argv)]
    status, out, err = run(capsys, "info", *target)
    assert status == 0 and "protocol: 2026-07-28" in out, err         # the SDK answers server/discover
    status, out, _ = run(capsys, "call", "add", "a=2", "b=3", *target)
    assert (status, out) == (0, "5\n")
    out = io.StringIO()
    with Client.stdio(argv, timeout=WAIT) as client:
        shell = Shell(client, out=out)
        expected = {"tools": "add ", "call count n=3": "", "read demo://readme": "Hello from the official SDK.\n",
                    "prompt review code=x": "Review this python code:", "complete review language p":
                    "python\nperl\nphp\n", "complete demo://greeting/{name} name": "alice\nbob\ncarol\n",
                    "ping": "pong\n", "log-level warning": "log level set to warning\n",
                    "templates": "demo://greeting/{name}", "prompts": "review", "resources": "demo://readme"}
        for line, text in expected.items():
            out.seek(0)
            out.truncate()
            shell.onecmd(shell.precmd(line))
            assert text in out.getvalue() and not out.getvalue().startswith("error: "), (line, out.getvalue())
