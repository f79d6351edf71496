"""The everything example over a real stdio subprocess, in every revision:
``Client.stdio([sys.executable, "-m", "mcp_ref.examples.everything"])`` lists
everything, calls every tool that needs no arguments, reads every resource, gets
every prompt, completes arguments, sets the log level, subscribes and hears an
update, sees a list change; every wire message (both directions) is validated
against the negotiated revision's ``schema.json``, strictly (no member the
revision does not define). Also: ``--http HOST:PORT`` serves it over HTTP.
"""
import re
import subprocess
import sys

import pytest

from conftest import REVISIONS
from features_helpers import EVERYTHING, ROOT, Collector, env, everything
from mcp_ref import Client
from mcp_ref.errors import InvalidParamsError, ResourceNotFoundError
from mcp_ref.types import BlobResourceContents, TextResourceContents

TOOLS = ["echo", "add", "get_image", "get_audio", "get_resource_link", "get_embedded_resource", "get_all_content",
         "get_weather", "long_operation", "log_messages", "fail", "touch_counter", "toggle_extra_tool",
         "sum_numbers"]
LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")


def content_types(result) -> list:
    return [block.to_dict()["type"] for block in result.content]


def known_types(revision: str, types: list) -> list:
    """``types`` without those the revision does not know (audio: 2025-03-26, resource_link: 2025-06-18)."""
    return [t for t in types if not (t == "audio" and revision < "2025-03-26")
            and not (t == "resource_link" and revision < "2025-06-18")]


@pytest.mark.parametrize("revision", REVISIONS)
def test_every_feature_over_stdio(revision, wire_validator):
    logs, updates, tools_changed = Collector(), Collector(), Collector()
    with everything(revision, wire_validator, on_log=logs, on_resource_updated=updates,
                    on_tools_list_changed=tools_changed) as (client, recorder):
        assert client.protocol_version == revision
        assert client.server_info.name == "everything"
        caps = client.server_capabilities
        assert set(caps) == {"tools", "resources", "prompts", "logging"} | (
            {"completions"} if revision >= "2025-03-26" else set())
        assert caps["resources"] == {"subscribe": True, "listChanged": True}

        # Tools: every one that needs no arguments.
        tools = client.list_tools()
        assert [tool.name for tool in tools] == TOOLS
        client.set_logging_level("warning")
        results = {}
        for tool in tools:
            assert not tool.input_schema.get("required"), tool.name
            results[tool.name] = client.call_tool(tool.name)
        assert [n for n, r in results.items() if r.is_error] == ["fail"]
        assert results["echo"].content[0].text == "hello" and results["add"].content[0].text == "5"
        assert content_types(results["get_image"]) == ["image"]
        assert content_types(results["get_audio"]) == known_types(revision, ["audio"])
        assert content_types(results["get_resource_link"]) == known_types(revision, ["resource_link"])
        assert content_types(results["get_embedded_resource"]) == ["resource"]
        assert content_types(results["get_all_content"]) == \
            known_types(revision, ["text", "image", "audio", "resource_link", "resource"])
        weather = results["get_weather"]
        assert weather.content[0].text == '{"city": "Paris", "temperature": 21.5, "conditions": "sunny"}'
        assert weather.structured_content == (
            {"city": "Paris", "temperature": 21.5, "conditions": "sunny"} if revision >= "2025-06-18" else None)
        assert results["log_messages"].content[0].text == ",".join(LEVELS)
        assert [m.level for m in logs.wait_for(5)][:5] == list(LEVELS[3:])     # warning and above only
        assert results["toggle_extra_tool"].content[0].text == "added"
        tools_changed.wait_for(1)
        assert "extra" in [tool.name for tool in client.list_tools()]
        assert client.call_tool("extra").content[0].text == "extra"
        assert client.call_tool("toggle_extra_tool").content[0].text == "removed"
        tools_changed.wait_for(2)
        assert "extra" not in [tool.name for tool in client.list_tools()]

        # Progress, arguments, a validation failure.
        progress = Collector()
        done = client.call_tool("long_operation", {"steps": 4}, on_progress=progress)
        assert done.content[0].text == "done 4 steps"
        assert [p[0] for p in progress.wait_for(4)] == [1, 2, 3, 4]
        messages = [p[2] for p in progress.items]
        assert messages == (["step 1", "step 2", "step 3", "step 4"] if revision >= "2025-03-26" else [None] * 4)
        assert client.call_tool("add", {"a": 40, "b": 2}).content[0].text == "42"
        assert client.call_tool("sum_numbers", {"numbers": [1, 2.5]}).content[0].text == "3.5"
        assert client.call_tool("sum_numbers", {"numbers": "x"}).is_error
        with pytest.raises(InvalidParamsError):
            client.call_tool("no_such_tool")

        # Resources: every one, the templates, a subscription.
        resources = client.list_resources()
        assert [r.uri for r in resources] == ["everything://readme", "everything://logo.png", "everything://counter"]
        for resource in resources:
            contents = client.read_resource(resource.uri).contents
            assert contents[0].uri == resource.uri and contents[0].mime_type == resource.mime_type
        assert isinstance(client.read_resource("everything://logo.png").contents[0], BlobResourceContents)
        assert isinstance(client.read_resource("everything://readme").contents[0], TextResourceContents)
        templates = [t.uri_template for t in client.list_resource_templates()]
        assert templates == ["everything://greeting/{name}", "everything://files/{+path}"]
        assert client.read_resource("everything://greeting/ada").contents[0].text == "Hello, ada!"
        assert client.read_resource("everything://files/docs/a.md").contents[0].text == "contents of docs/a.md"
        with pytest.raises(ResourceNotFoundError):
            client.read_resource("everything://nothing")
        client.subscribe_resource("everything://counter")
        before = int(client.read_resource("everything://counter").contents[0].text)
        client.call_tool("touch_counter")
        assert updates.wait_for(1) == ["everything://counter"]
        assert int(client.read_resource("everything://counter").contents[0].text) == before + 1
        client.unsubscribe_resource("everything://counter")

        # Prompts: every one, with its required arguments.
        prompts = client.list_prompts()
        assert [p.name for p in prompts] == ["simple", "code_review", "resource_prompt", "media_prompt"]
        for prompt in prompts:
            arguments = {a.name: "everything://readme" for a in prompt.arguments or () if a.required}
            assert client.get_prompt(prompt.name, arguments).messages
        media = client.get_prompt("media_prompt").messages
        assert [m.content.to_dict()["type"] for m in media] == \
            known_types(revision, ["text", "image", "audio", "resource_link", "resource"])
        assert [a.name for a in next(p for p in prompts if p.name == "resource_prompt").arguments] == ["resourceUri"]

        # Completion.
        languages = client.complete({"type": "ref/prompt", "name": "code_review"}, ("language", "p"))
        assert languages.values == ["python", "perl", "php", "pascal"] and languages.has_more is False
        paths = client.complete({"type": "ref/resource", "uri": "everything://files/{+path}"}, ("path", "src/"))
        assert paths.values == ["src/main.py", "src/util.py"]
    assert recorder.records


def test_http_option_serves_the_same_server():
    pytest.importorskip("requests")
    proc = subprocess.Popen([*EVERYTHING, "--http", "127.0.0.1:0"], cwd=str(ROOT), env=env(),
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        line = proc.stdout.readline()                # the readiness line names the real URL
        match = re.search(r"(http://\S+/mcp)", line)
        assert match, line
        with Client.http(match.group(1), timeout=20) as client:
            assert client.server_info.name == "everything"
            assert client.call_tool("echo", {"message": "over http"}).content[0].text == "over http"
            assert client.read_resource("everything://readme").contents[0].text.startswith("# Everything")
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        proc.stdout.close()


def test_main_rejects_a_bad_http_address():
    done = subprocess.run([sys.executable, "-m", "mcp_ref.examples.everything", "--http", "nowhere"],
                          cwd=str(ROOT), env=env(), capture_output=True, text=True, timeout=30)
    assert done.returncode == 2 and "expected HOST:PORT" in done.stderr


def test_the_readme_features_example_works(tmp_path):
    """The python block under the README's "Resources, prompts, completion, logging"."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    code = re.search(r"^## Resources, prompts, completion, logging.*?```python\n(.*?)```", readme,
                     re.S | re.M).group(1)
    assert 'if __name__ == "__main__":\n    server.run()' in code      # a whole server script
    (tmp_path / "notes.py").write_text(code, encoding="utf-8")
    logs, updates = Collector(), Collector()
    with Client.stdio([sys.executable, str(tmp_path / "notes.py")], env=env(), on_log=logs,
                      on_resource_updated=updates, timeout=20) as client:
        assert set(client.server_capabilities) == {"tools", "resources", "prompts", "logging", "completions"}
        assert client.read_resource("notes://readme").contents[0].text == "# Notes"
        assert client.read_resource("notes://todo").contents[0].text == "the note called todo"
        assert client.get_prompt("summarize", {"topic": "MCP"}).messages[0].content.text == \
            "Summarize MCP in a short style."
        assert client.complete({"type": "ref/prompt", "name": "summarize"}, ("style", "b")).values == \
            ["bullet points"]
        client.subscribe_resource("notes://todo")
        assert client.call_tool("touch", {"name": "todo"}).content[0].text == "ok"
        assert updates.wait_for(1) == ["notes://todo"]
        assert logs.wait_for(1)[0].data == {"touched": "todo"}
