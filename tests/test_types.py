"""Tests of ``mcp_ref.types``: wire names, round trips, decoding errors,
revision filtering, the content registry, ``select_model``, logging levels,
and conformance of every model with each revision's ``schema.json``.

The spec folder comes from ``MCP_SPEC_DIR`` (default ``../shared/spec`` beside
the repository); schema tests are skipped with a reason when it is absent.
"""
import ast
import base64
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import mcp_ref.types as t
from mcp_ref.errors import INVALID_PARAMS, InvalidParamsError

REPO = Path(__file__).resolve().parents[1]
REVISIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
META = {"example.com/trace": "abc"}


# ---------------------------------------------------------------------- examples
def examples() -> dict:
    """A fully populated instance of every model class (fresh on each call)."""
    icon = t.Icon(src="https://example.com/icon.png", mime_type="image/png", sizes=["48x48"], theme="light")
    ann = t.Annotations(audience=["user", "assistant"], priority=0.5, last_modified="2025-01-12T15:00:58Z")
    text = t.TextContent(text="hello", annotations=ann, meta=META)
    image = t.ImageContent(data="aGk=", mime_type="image/png", annotations=ann, meta=META)
    audio = t.AudioContent(data="aGk=", mime_type="audio/wav", annotations=ann, meta=META)
    link = t.ResourceLink(uri="file:///project/a.txt", name="a.txt", title="A", description="a file",
                          mime_type="text/plain", size=3, annotations=ann, icons=[icon], meta=META)
    text_contents = t.TextResourceContents(uri="file:///project/a.txt", text="abc", mime_type="text/plain",
                                           meta=META)
    blob_contents = t.BlobResourceContents(uri="file:///project/b.bin", blob="YWJj",
                                           mime_type="application/octet-stream", meta=META)
    embedded = t.EmbeddedResource(resource=text_contents, annotations=ann, meta=META)
    tool_use = t.ToolUseContent(id="call-1", name="get_weather", input={"city": "Paris"}, meta=META)
    tool_result = t.ToolResultContent(tool_use_id="call-1", content=[text, image, audio, link, embedded],
                                      structured_content={"temperature": 20}, is_error=False, meta=META)
    impl = t.Implementation(name="srv", version="1.0.0", title="Server", description="A server",
                            icons=[icon], website_url="https://example.com")
    tool_annotations = t.ToolAnnotations(title="Weather", read_only_hint=True, destructive_hint=False,
                                         idempotent_hint=True, open_world_hint=True)
    execution = t.ToolExecution(task_support="optional")
    tool = t.Tool(name="get_weather",
                  input_schema={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
                  title="Get weather", description="Current weather",
                  output_schema={"type": "object", "properties": {"temperature": {"type": "number"}}},
                  annotations=tool_annotations, icons=[icon], execution=execution, meta=META)
    resource = t.Resource(uri="file:///project/a.txt", name="a.txt", title="A", description="a file",
                          mime_type="text/plain", size=3, annotations=ann, icons=[icon], meta=META)
    template = t.ResourceTemplate(uri_template="file:///project/{path}", name="project", title="Project",
                                  description="files", mime_type="text/plain", annotations=ann, icons=[icon],
                                  meta=META)
    argument = t.PromptArgument(name="code", title="Code", description="the code", required=True)
    prompt = t.Prompt(name="review", title="Review", description="review code", arguments=[argument],
                      icons=[icon], meta=META)
    message = t.PromptMessage(role="user", content=embedded)
    hint = t.ModelHint(name="claude-3-sonnet")
    preferences = t.ModelPreferences(hints=[hint], cost_priority=0.3, speed_priority=0.8, intelligence_priority=0.5)
    # A one-block list: older revisions get the single block (see SamplingMessage.to_dict).
    sampling_message = t.SamplingMessage(role="user", content=[text], meta=META)
    tool_choice = t.ToolChoice(mode="auto")
    root = t.Root(uri="file:///home/user/project", name="project", meta=META)
    completion = t.Completion(values=["python", "pytorch"], total=10, has_more=True)
    task = t.Task(task_id="786512e2", status="working", created_at="2025-11-25T10:30:00Z",
                  last_updated_at="2025-11-25T10:40:00Z", ttl=60000, status_message="In progress.",
                  poll_interval=5000)
    items = [
        icon, ann, text, image, audio, link, text_contents, blob_contents, embedded, tool_use, tool_result,
        t.RawContent(data={"type": "hologram", "frames": 3}),
        impl,
        t.InitializeResult(protocol_version="2025-06-18", capabilities={"tools": {"listChanged": True}},
                           server_info=impl, instructions="Ask for the weather.", meta=META),
        t.InitializeParams(protocol_version="2025-06-18", capabilities={"roots": {"listChanged": True}},
                           client_info=impl, meta=META),
        tool_annotations, execution, tool,
        t.CallToolResult(content=[text, image, audio, link, embedded], structured_content={"temperature": 20},
                         is_error=True, meta=META),
        t.ListToolsResult(tools=[tool], next_cursor="page-2", meta=META),
        resource, template,
        t.ReadResourceResult(contents=[text_contents, blob_contents], meta=META),
        t.ListResourcesResult(resources=[resource], next_cursor="page-2", meta=META),
        t.ListResourceTemplatesResult(resource_templates=[template], next_cursor="page-2", meta=META),
        argument, prompt, message,
        t.GetPromptResult(messages=[message, t.PromptMessage(role="assistant", content=text)],
                          description="a review", meta=META),
        t.ListPromptsResult(prompts=[prompt], next_cursor="page-2", meta=META),
        hint, preferences, sampling_message, tool_choice,
        t.CreateMessageRequestParams(
            messages=[sampling_message, t.SamplingMessage(role="assistant", content=image)], max_tokens=100,
            system_prompt="Be brief.", include_context="none", temperature=0.2, stop_sequences=["\n\n"],
            metadata={"provider": "x"}, model_preferences=preferences, tools=[tool], tool_choice=tool_choice,
            meta={"progressToken": 7}),
        t.CreateMessageResult(role="assistant", content=[text], model="claude-3-sonnet", stop_reason="endTurn",
                              meta=META),
        root, t.ListRootsResult(roots=[root], meta=META),
        t.ElicitRequestParams(message="Your name?", mode="form",
                              requested_schema={"type": "object", "properties": {"name": {"type": "string"}},
                                                "required": ["name"]}, meta=META),
        t.ElicitResult(action="accept", content={"name": "Ada"}, meta=META),
        completion, t.CompleteResult(completion=completion, meta=META),
        t.PromptReference(name="review", title="Review"),
        t.ResourceTemplateReference(uri="file:///project/{path}"),
        t.ProgressNotificationParams(progress_token="tok-1", progress=1, total=2, message="half way", meta=META),
        t.LoggingMessageNotificationParams(level="info", data={"rows": 3}, logger="db", meta=META),
        task, t.TaskMetadata(ttl=60000), t.RelatedTaskMetadata(task_id="786512e2"),
        t.CreateTaskResult(task=task, meta={"io.modelcontextprotocol/model-immediate-response": "Working on it."}),
        t.ListTasksResult(tasks=[task], next_cursor="page-2", meta=META),
    ]
    return {type(item): item for item in items}


def model_classes() -> list:
    """Every public model class of the package (so a new one cannot be forgotten)."""
    found = [getattr(t, name) for name in t.__all__]
    classes = {c for c in found if isinstance(c, type) and issubclass(c, t.Model) and c is not t.Model}
    return sorted(classes, key=lambda c: c.__name__)


def test_every_model_class_has_an_example():
    missing = [c.__name__ for c in model_classes() if c not in examples()]
    assert not missing


# ---------------------------------------------------------------------- wire names and round trips
def test_wire_names_are_camel_case_and_meta():
    assert t.Tool.wire_fields() == {
        "name": "name", "input_schema": "inputSchema", "title": "title", "description": "description",
        "output_schema": "outputSchema", "annotations": "annotations", "icons": "icons",
        "execution": "execution", "meta": "_meta"}
    assert t.ResourceTemplate.wire_fields()["uri_template"] == "uriTemplate"
    assert t.ListToolsResult.wire_fields()["next_cursor"] == "nextCursor"
    assert t.ToolResultContent.wire_fields()["tool_use_id"] == "toolUseId"
    assert t.Implementation.wire_fields()["website_url"] == "websiteUrl"


def test_exact_dict_none_omitted_and_type_from_class():
    tool = t.Tool(name="echo", description="Echo", meta={"a": 1})
    assert tool.to_dict() == {"name": "echo", "inputSchema": {"type": "object"}, "description": "Echo",
                              "_meta": {"a": 1}}
    assert t.TextContent(text="hi").to_dict() == {"type": "text", "text": "hi"}
    assert t.ImageContent(data="aGk=", mime_type="image/png").to_dict() == \
        {"type": "image", "data": "aGk=", "mimeType": "image/png"}


@pytest.mark.req("BASE-21")
def test_round_trip_keeps_unknown_fields_at_every_level():
    wire = {
        "tools": [{
            "name": "t", "inputSchema": {"type": "object"}, "x-vendor": "y", "_meta": {"m": 1},
            "icons": [{"src": "https://example.com/i.png", "futureField": 1}],
            "annotations": {"readOnlyHint": True, "newHint": 2},
        }],
        "nextCursor": "n", "_meta": {"a": 1}, "futureTop": [1, 2],
    }
    typed = t.ListToolsResult.from_dict(wire)
    tool = typed.tools[0]
    assert isinstance(tool, t.Tool) and isinstance(tool.icons[0], t.Icon)
    assert tool.annotations.read_only_hint is True
    assert tool.extra == {"x-vendor": "y"} and tool.meta == {"m": 1}
    assert typed.extra == {"futureTop": [1, 2]} and typed.next_cursor == "n"
    assert typed.to_dict() == wire


def test_round_trip_content_blocks_and_unknown_content():
    wire = {"content": [
        {"type": "text", "text": "a", "annotations": {"audience": ["user"], "priority": 1}},
        {"type": "resource", "resource": {"uri": "file:///b", "blob": "YWJj", "mimeType": "x/y"}},
        {"type": "resource", "resource": {"uri": "file:///a", "text": "abc"}},
        {"type": "hologram", "frames": [1, 2], "_meta": {"k": 1}},
    ], "structuredContent": {"x": 1}, "isError": True}
    result = t.CallToolResult.from_dict(wire)
    kinds = [type(block) for block in result.content]
    assert kinds == [t.TextContent, t.EmbeddedResource, t.EmbeddedResource, t.RawContent]
    assert isinstance(result.content[1].resource, t.BlobResourceContents)
    assert isinstance(result.content[2].resource, t.TextResourceContents)
    assert result.content[3].type == "hologram"
    assert result.is_error is True and result.structured_content == {"x": 1}
    assert result.to_dict() == wire


@pytest.mark.parametrize("cls", model_classes(), ids=lambda c: c.__name__)
def test_every_example_round_trips(cls):
    item = examples()[cls]
    wire = item.to_dict()
    assert json.loads(json.dumps(wire)) == wire          # plain JSON values only
    again = cls.from_dict(wire)
    assert again == item
    assert again.to_dict() == wire


def test_is_error_false_is_omitted_and_true_is_sent():
    assert t.CallToolResult(content=[]).to_dict() == {"content": []}
    assert t.CallToolResult(content=[], is_error=True).to_dict() == {"content": [], "isError": True}
    assert t.CallToolResult.from_dict({"content": [], "isError": False}).is_error is False


def test_logging_data_null_is_sent():
    params = t.LoggingMessageNotificationParams.from_dict({"level": "info", "data": None})
    assert params.data is None
    assert params.to_dict() == {"level": "info", "data": None}


def test_sampling_content_single_block_or_list():
    single = t.SamplingMessage.from_dict({"role": "user", "content": {"type": "text", "text": "hi"}})
    assert isinstance(single.content, t.TextContent) and single.blocks() == [single.content]
    many = t.CreateMessageResult.from_dict({
        "role": "assistant", "model": "m", "stopReason": "toolUse",
        "content": [{"type": "tool_use", "id": "c1", "name": "f", "input": {"a": 1}}]})
    assert isinstance(many.content, list) and isinstance(many.content[0], t.ToolUseContent)
    assert many.content[0].input == {"a": 1}
    result = t.SamplingMessage.from_dict({"role": "user", "content": [
        {"type": "tool_result", "toolUseId": "c1", "content": [{"type": "text", "text": "ok"}]}]})
    assert isinstance(result.content[0], t.ToolResultContent)
    assert isinstance(result.content[0].content[0], t.TextContent)


def test_elicit_request_url_mode_round_trip():
    wire = {"mode": "url", "message": "Sign in", "elicitationId": "e-1", "url": "https://example.com/auth"}
    params = t.ElicitRequestParams.from_dict(wire)
    assert params.is_url and params.elicitation_id == "e-1" and params.requested_schema is None
    assert params.to_dict() == wire


# ---------------------------------------------------------------------- from_dict errors
@pytest.mark.parametrize("cls, data, message", [
    (t.Tool, {"name": "t", "inputSchema": "x"}, "Tool.inputSchema: expected object"),
    (t.Tool, {"inputSchema": {}}, "Tool.name: required field missing"),
    (t.Tool, {"name": "t"}, "Tool.inputSchema: required field missing"),
    (t.Tool, "not an object", "Tool: expected object"),
    (t.Tool, {"name": "t", "inputSchema": {}, "annotations": {"readOnlyHint": "yes"}},
     "Tool.annotations.readOnlyHint: expected boolean"),
    (t.ListToolsResult, {"tools": [{"name": "a", "inputSchema": {}}, {"name": 3, "inputSchema": {}}]},
     "ListToolsResult.tools[1].name: expected string"),
    (t.CallToolResult, {"content": [{"type": "text"}]}, "CallToolResult.content[0].text: required field missing"),
    (t.CallToolResult, {"content": {"type": "text", "text": "x"}}, "CallToolResult.content: expected array"),
    (t.CallToolResult, {"content": [{"text": "x"}]}, "CallToolResult.content[0].type: expected string"),
    (t.CallToolResult, {"content": [], "isError": "no"}, "CallToolResult.isError: expected boolean"),
    (t.TextContent, {"type": "image", "text": "x"}, "TextContent.type: expected 'text'"),
    (t.Resource, {"uri": "u", "name": "n", "size": "big"}, "Resource.size: expected integer"),
    (t.EmbeddedResource, {"type": "resource", "resource": {"uri": "u"}},
     "EmbeddedResource.resource: expected one of TextResourceContents, BlobResourceContents"),
    (t.ElicitRequestParams, {"message": "m", "mode": "url", "elicitationId": "e"},   # the id: by revision, in
     "ElicitRequestParams.url: required field missing"),                           # client/elicitation.py
    (t.ElicitRequestParams, {"message": "m", "mode": "url", "url": "https://x", "elicitationId": 7},
     "ElicitRequestParams.elicitationId: expected string"),
    (t.ElicitRequestParams, {"message": "m"}, "ElicitRequestParams.requestedSchema: required field missing"),
    (t.ElicitRequestParams, {"message": "m", "mode": "telepathy"}, "ElicitRequestParams.mode: expected"),
    (t.ProgressNotificationParams, {"progressToken": True, "progress": 1},
     "ProgressNotificationParams.progressToken: expected string or integer"),
    (t.LoggingMessageNotificationParams, {"level": "info"}, "LoggingMessageNotificationParams.data: required"),
    (t.CreateMessageRequestParams, {"messages": [], "maxTokens": "10"},
     "CreateMessageRequestParams.maxTokens: expected integer"),
    (t.InitializeResult, {"protocolVersion": "x", "capabilities": {}, "serverInfo": {"name": "s"}},
     "InitializeResult.serverInfo.version: required field missing"),
    (t.SamplingMessage, {"role": "user", "content": "hi"}, "SamplingMessage.content: expected"),
])
def test_from_dict_errors(cls, data, message):
    with pytest.raises(InvalidParamsError) as info:
        cls.from_dict(data)
    assert message in info.value.message
    assert info.value.code == INVALID_PARAMS


def test_content_registry():
    assert t.CONTENT_TYPES["text"] is t.TextContent and t.CONTENT_TYPES["tool_use"] is t.ToolUseContent
    assert set(t.CONTENT_TYPES) == {"text", "image", "audio", "resource_link", "resource", "tool_use", "tool_result"}
    block = t.content_from_dict({"type": "audio", "data": "aGk=", "mimeType": "audio/wav"})
    assert isinstance(block, t.AudioContent)
    raw = t.content_from_dict({"type": "hologram", "x": {"y": 1}})
    assert isinstance(raw, t.RawContent) and raw.to_dict() == {"type": "hologram", "x": {"y": 1}}
    with pytest.raises(InvalidParamsError, match="content.type: expected string"):
        t.content_from_dict({"text": "no type"})
    with pytest.raises(InvalidParamsError, match="content: expected object"):
        t.content_from_dict("text")


def test_every_content_block_has_its_wire_type():
    """``block.type`` is the wire name, on built and on decoded blocks alike (as
    ``block["type"]`` is in the JSON), for every block class and the unknown kind."""
    blocks = {cls: example for cls, example in examples().items() if cls in t.CONTENT_TYPES.values()}
    assert set(blocks) == set(t.CONTENT_TYPES.values())
    for cls, block in blocks.items():
        wire = block.to_dict()
        assert block.type == cls.TYPE == wire["type"]
        assert t.content_from_dict(wire).type == wire["type"]
    assert t.image(b"png", "image/png").type == "image" and t.audio(b"wav", "audio/wav").type == "audio"
    assert t.content_from_dict({"type": "hologram"}).type == "hologram"


def test_resource_contents_from_dict_and_bytes_helpers():
    assert isinstance(t.resource_contents_from_dict({"uri": "u", "text": "x"}), t.TextResourceContents)
    assert isinstance(t.resource_contents_from_dict({"uri": "u", "blob": "eA=="}), t.BlobResourceContents)
    with pytest.raises(InvalidParamsError):
        t.resource_contents_from_dict({"uri": "u"})
    img = t.image(b"\x89PNG", "image/png")
    assert img.to_dict() == {"type": "image", "data": base64.b64encode(b"\x89PNG").decode(), "mimeType": "image/png"}
    snd = t.audio(b"RIFF", "audio/wav")
    assert isinstance(snd, t.AudioContent) and base64.b64decode(snd.data) == b"RIFF"


# ---------------------------------------------------------------------- revision filtering
def mixed_result() -> "t.CallToolResult":
    return t.CallToolResult(
        content=[t.TextContent(text="20 C"), t.audio(b"RIFF", "audio/wav"),
                 t.ResourceLink(uri="file:///w.json", name="w.json", icons=[t.Icon(src="https://e.com/i.png")])],
        structured_content={"temperature": 20})


@pytest.mark.req("LIFE-14")
def test_revision_filtering_exact_dicts():
    assert mixed_result().to_dict("2024-11-05") == {"content": [{"type": "text", "text": "20 C"}]}
    assert [b["type"] for b in mixed_result().to_dict("2025-03-26")["content"]] == ["text", "audio"]
    for_06 = mixed_result().to_dict("2025-06-18")
    assert for_06["structuredContent"] == {"temperature": 20}
    assert for_06["content"][2] == {"type": "resource_link", "uri": "file:///w.json", "name": "w.json"}
    assert mixed_result().to_dict("2025-11-25") == mixed_result().to_dict()
    assert mixed_result().to_dict("2025-11-25")["content"][2]["icons"] == [{"src": "https://e.com/i.png"}]


def test_sampling_list_becomes_one_block_before_2025_11_25():
    message = t.SamplingMessage(role="user", content=[t.TextContent(text="hi")])
    assert message.to_dict("2025-06-18") == {"role": "user", "content": {"type": "text", "text": "hi"}}
    assert message.to_dict("2025-11-25") == {"role": "user", "content": [{"type": "text", "text": "hi"}]}


def test_fields_since_newer_revisions_are_left_out():
    impl = examples()[t.Implementation]
    assert impl.to_dict("2024-11-05") == {"name": "srv", "version": "1.0.0"}
    assert impl.to_dict("2025-06-18") == {"name": "srv", "version": "1.0.0", "title": "Server"}
    tool = examples()[t.Tool]
    assert set(tool.to_dict("2024-11-05")) == {"name", "inputSchema", "description"}
    assert set(tool.to_dict("2025-03-26")) == {"name", "inputSchema", "description", "annotations"}
    assert "lastModified" not in t.TextContent(text="x", annotations=t.Annotations(
        priority=1, last_modified="2025-01-01T00:00:00Z")).to_dict("2025-03-26")["annotations"]


# ---------------------------------------------------------------------- select_model and logging levels
MODELS = ["gpt-4o", "claude-3-sonnet-20240229", "claude-3-haiku-20240307"]
TABLE = {
    "gpt-4o": {"cost": 0.6, "speed": 0.6, "intelligence": 0.8},
    "claude-3-sonnet-20240229": {"cost": 0.5, "speed": 0.5, "intelligence": 0.9},
    "claude-3-haiku-20240307": {"cost": 0.1, "speed": 0.95, "intelligence": 0.5},
}


def hints(*names):
    return t.ModelPreferences(hints=[t.ModelHint(name=n) for n in names])


@pytest.mark.req("SCHEMA-19")
def test_select_model_hints_in_order():
    assert t.select_model(MODELS, hints("gemini", "claude-3-sonnet", "claude")) == "claude-3-sonnet-20240229"
    assert t.select_model(MODELS, hints("haiku", "gpt")) == "claude-3-haiku-20240307"
    assert t.select_model(MODELS, hints("GPT-4")) == "gpt-4o"          # case-insensitive
    assert t.select_model(MODELS, {"hints": [{"name": "haiku"}]}) == "claude-3-haiku-20240307"


def test_select_model_priorities():
    fast = t.ModelPreferences(speed_priority=1.0, intelligence_priority=0.1)
    smart = t.ModelPreferences(hints=[t.ModelHint(name="claude")], intelligence_priority=1.0)
    assert t.select_model(MODELS, fast, TABLE) == "claude-3-haiku-20240307"
    assert t.select_model(MODELS, smart, TABLE) == "claude-3-sonnet-20240229"   # among the hint's matches
    assert t.select_model(MODELS, t.ModelPreferences(intelligence_priority=1.0), TABLE) == \
        "claude-3-sonnet-20240229"
    assert t.select_model(MODELS, fast) == "gpt-4o"                  # no table: the first model
    assert t.select_model(MODELS, None, TABLE) == "gpt-4o"
    with pytest.raises(ValueError):
        t.select_model([], fast)


def test_logging_levels():
    assert t.LOGGING_LEVELS == ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
    assert t.level_at_least("error", "warning") and t.level_at_least("warning", "warning")
    assert not t.level_at_least("info", "warning")
    assert t.level_at_least("emergency", "debug")
    with pytest.raises(ValueError):
        t.level_at_least("verbose", "info")


# ---------------------------------------------------------------------- purity
def test_modules_are_small_documented_and_import_only_stdlib():
    allowed = {"dataclasses", "typing", "types", "base64", "importlib"}   # importlib: lazy re-exports
    for path in sorted((REPO / "mcp_ref" / "types").glob("*.py")):
        source = path.read_text(encoding="utf-8")
        assert source.count("\n") < 500, path.name
        tree = ast.parse(source)
        doc = ast.get_docstring(tree) or ""
        assert "Spec:" in doc, f"{path.name}: module docstring must cite the spec"
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                assert {a.name.split(".")[0] for a in node.names} <= allowed, (path.name, ast.dump(node))
            elif isinstance(node, ast.ImportFrom):
                ok = node.level == 0 and (node.module.split(".")[0] in allowed or node.module == "mcp_ref.types"
                                          or node.module.startswith("mcp_ref.types.")
                                          or node.module in ("mcp_ref.errors", "mcp_ref.schema.typehints"))
                assert ok, (path.name, ast.dump(node))


def test_import_with_a_stdlib_only_interpreter():
    code = ("import sys; import mcp_ref.types; "
            "assert 'jsonschema' not in sys.modules, 'jsonschema imported'; print('ok')")
    done = subprocess.run([sys.executable, "-S", "-c", code], cwd=REPO, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr


# ---------------------------------------------------------------------- schema conformance
def spec_dir() -> Path:
    return Path(os.environ.get("MCP_SPEC_DIR") or REPO.parent / "shared" / "spec")


_schemas: dict = {}


def load_schema(revision: str) -> dict:
    path = spec_dir() / revision / "schema.json"
    if not path.is_file():
        pytest.skip(f"{path} not found: set MCP_SPEC_DIR to the spec folder to run schema tests")
    if revision not in _schemas:
        _schemas[revision] = json.loads(path.read_text(encoding="utf-8"))
    return _schemas[revision]


def defs_key(schema: dict) -> str:
    return "$defs" if "$defs" in schema else "definitions"


# Schema names that differ from the class name, in order of preference.
NAMES = {"InitializeParams": ["InitializeRequestParams"],
         "ResourceTemplateReference": ["ResourceTemplateReference", "ResourceReference"]}
# Types the schema declares inline inside another definition (params before 2025-11-25).
INLINE = {"InitializeParams": "InitializeRequest/properties/params",
          "CreateMessageRequestParams": "CreateMessageRequest/properties/params",
          "ElicitRequestParams": "ElicitRequest/properties/params",
          "LoggingMessageNotificationParams": "LoggingMessageNotification/properties/params",
          "ProgressNotificationParams": "ProgressNotification/properties/params",
          "Completion": "CompleteResult/properties/completion"}
# Members no model needs: "type" is implied by the class, "task" belongs to tasks.
NOT_MODELLED = {"type", "task"}


def pointer_for(schema: dict, cls) -> "str | None":
    """The JSON pointer of ``cls``'s definition in ``schema``, or None."""
    key = defs_key(schema)
    for name in NAMES.get(cls.__name__, [cls.__name__]):
        if name in schema[key]:
            return f"#/{key}/{name}"
    inline = INLINE.get(cls.__name__)
    if inline and inline.split("/")[0] in schema[key]:
        return f"#/{key}/{inline}"
    return None


def resolve(schema: dict, pointer: str) -> dict:
    node = schema
    for part in pointer.lstrip("#/").split("/"):
        node = node[part]
    return resolve(schema, node["$ref"]) if "$ref" in node else node


def schema_properties(schema: dict, pointer: str) -> set:
    """Property names of a definition; an anyOf of objects gives their union."""
    node = resolve(schema, pointer)
    names = set(node.get("properties", {}))
    for branch in node.get("anyOf", []):
        if "$ref" in branch:
            names |= schema_properties(schema, branch["$ref"])
    if pointer.endswith("/properties/params"):
        names.add("_meta")          # every request/notification params may carry _meta
    return names


def wire_names_for(cls, revision: str) -> set:
    import dataclasses
    names = {t.wire_name(f) for f in dataclasses.fields(cls) if f.name != "extra"
             and not (f.metadata.get("since") and revision < f.metadata["since"])}
    return names | ({"type"} if getattr(cls, "TYPE", None) else set())


def strict(node):
    """A copy of a schema in which objects with declared properties allow no
    others (unless they say otherwise): an unknown or misplaced member, at any
    depth, then fails validation. The real schemas allow extra members."""
    if isinstance(node, list):
        return [strict(item) for item in node]
    if not isinstance(node, dict):
        return node
    copy = {key: strict(value) for key, value in node.items()}
    if isinstance(node.get("properties"), dict) and "additionalProperties" not in node:
        copy["additionalProperties"] = False
    return copy


def validate(schema: dict, pointer: str, instance: dict, *, closed: bool = False) -> list:
    """jsonschema errors of ``instance`` against the definition at ``pointer``
    (with ``closed``, against the ``strict()`` form of the schema)."""
    from jsonschema.validators import validator_for
    if closed:
        schema = strict(schema)
        if pointer.endswith("/properties/params"):
            # Inline params inherit _meta from Request/Notification params.
            resolve(schema, pointer).setdefault("properties", {})["_meta"] = {"type": "object"}
    root = {k: v for k, v in schema.items() if k in ("$schema", defs_key(schema))}
    root["$ref"] = pointer
    validator = validator_for(schema)(root)
    return [f"{'/'.join(map(str, e.absolute_path)) or '(top)'}: {e.message}"
            for e in validator.iter_errors(instance)]


@pytest.mark.parametrize("revision", REVISIONS)
@pytest.mark.parametrize("cls", model_classes(), ids=lambda c: c.__name__)
def test_example_validates_against_schema(cls, revision):
    pytest.importorskip("jsonschema")
    schema = load_schema(revision)
    pointer = pointer_for(schema, cls)
    if pointer is None:
        pytest.skip(f"{cls.__name__} is not defined in {revision}")
    wire = examples()[cls].to_dict(revision)
    assert validate(schema, pointer, wire) == [], wire
    # No member anywhere in it that the revision does not declare (e.g. lastModified
    # inside 2024-11-05's inline annotations).
    assert validate(schema, pointer, wire, closed=True) == [], wire


@pytest.mark.parametrize("revision", REVISIONS)
@pytest.mark.parametrize("cls", model_classes(), ids=lambda c: c.__name__)
def test_wire_names_exist_in_schema(cls, revision):
    """Each field sent for a revision is a property of that revision's definition:
    the camelCase mapping and the ``since`` marks cannot drift."""
    schema = load_schema(revision)
    pointer = pointer_for(schema, cls)
    if pointer is None:
        pytest.skip(f"{cls.__name__} is not defined in {revision}")
    unknown = wire_names_for(cls, revision) - schema_properties(schema, pointer)
    assert not unknown, f"{cls.__name__} sends {sorted(unknown)} which {revision} does not define"
    # Fields sent for this revision really appear in the example's wire form for it.
    assert set(examples()[cls].to_dict(revision)) <= schema_properties(schema, pointer) | {"type"}


@pytest.mark.parametrize("cls", model_classes(), ids=lambda c: c.__name__)
def test_models_cover_the_newest_schema(cls):
    """Every property of the newest definition is modelled (nothing silently lands in ``extra``)."""
    for revision in reversed(REVISIONS):
        schema = load_schema(revision)
        pointer = pointer_for(schema, cls)
        if pointer is not None:
            missing = schema_properties(schema, pointer) - wire_names_for(cls, revision) - NOT_MODELLED
            assert not missing, f"{cls.__name__} lacks {sorted(missing)} of {revision}"
            return
    if cls is not t.RawContent:
        pytest.fail(f"{cls.__name__} has no definition in any revision")


def test_unfiltered_result_fails_the_old_schema():
    """The conformance check can fail: unfiltered audio is not 2024-11-05 content."""
    pytest.importorskip("jsonschema")
    schema = load_schema("2024-11-05")
    pointer = pointer_for(schema, t.CallToolResult)
    assert validate(schema, pointer, mixed_result().to_dict()) != []
    assert validate(schema, pointer, mixed_result().to_dict("2024-11-05")) == []
    assert validate(load_schema("2025-11-25"), pointer_for(load_schema("2025-11-25"), t.CallToolResult),
                    mixed_result().to_dict("2025-11-25")) == []


def test_tool_use_sampling_validates_for_2025_11_25():
    pytest.importorskip("jsonschema")
    schema = load_schema("2025-11-25")
    ex = examples()
    params = t.CreateMessageRequestParams(messages=[
        t.SamplingMessage(role="user", content=t.TextContent(text="Weather in Paris?")),
        t.SamplingMessage(role="assistant", content=[ex[t.ToolUseContent]]),
        t.SamplingMessage(role="user", content=[ex[t.ToolResultContent]]),
    ], max_tokens=50, tools=[ex[t.Tool]], tool_choice=t.ToolChoice(mode="required"))
    assert validate(schema, pointer_for(schema, t.CreateMessageRequestParams), params.to_dict("2025-11-25")) == []
    url = t.ElicitRequestParams(message="Sign in", mode="url", elicitation_id="e-1", url="https://example.com/a")
    assert validate(schema, pointer_for(schema, t.ElicitRequestParams), url.to_dict("2025-11-25")) == []
