"""The one decoder of ``mcp_ref/types/base.py`` (``Model.from_dict``) on a corpus.

The decoder reads each type hint once into a function and each class once into
a plan of its members (types/decoding.py), and carries the path of every member
for its error messages; there is no second decoder beside it. These tests hold
it to its contract:

* a corpus built from the type hints of every model class in
  ``mcp_ref.types`` (and a few local classes for shapes the package does not
  use: ``dict[str, X]``, a class that contains itself, unions of basics, an
  unresolvable hint), then every member of every sample replaced by a value
  of each JSON kind, removed, or given a wrong or unknown ``type`` tag;
* for each input: ``from_dict`` returns a model or raises
  ``InvalidParamsError`` (never anything else), the same answer twice, and
  ``to_dict`` of the result, on every revision, equals what the
  straightforward encoder kept below (``reference_to_dict``) gives;
* ``content_from_dict`` the same way, and a class decoded first by many threads
  at once;
* once a class has been decoded, decoding it again reads no type hint.
"""
import dataclasses
import json
import threading
from dataclasses import dataclass
from typing import Any, Optional, Union, get_args, get_origin

import pytest

import mcp_ref.types as t
from mcp_ref.types import base
from mcp_ref.schema.typehints import get_type_hints
from mcp_ref.types.base import Model, spec_field

REVISIONS = (None, "2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")


# ---------------------------------------------------------------------- field facts
@dataclass(frozen=True)
class FieldFacts:
    """What the reference encoder and the corpus read about one field, found here from
    the dataclass fields and hints (the package keeps them in its per-class plan)."""
    name: str
    wire: str
    tp: Any
    required: bool
    since: Optional[str]
    keep_none: bool
    omit_default: bool
    default: Any


def field_facts(cls) -> list:
    hints = get_type_hints(cls)
    return [FieldFacts(f.name, base.wire_name(f), hints.get(f.name, Any),
                       (f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING)
                       or bool(f.metadata.get("required")), f.metadata.get("since"),
                       bool(f.metadata.get("keep_none")), bool(f.metadata.get("omit_default")),
                       None if f.default is dataclasses.MISSING else f.default)
            for f in dataclasses.fields(cls) if f.name != "extra"]


def older(revision: Optional[str], since: Optional[str]) -> bool:
    return revision is not None and since is not None and revision < since


# ---------------------------------------------------------------------- local classes
@dataclass
class Node(Model):
    """Shapes no class of the package has, so the compiled decoder meets them too."""
    name: str
    children: Optional[list["Node"]] = None
    by_key: Optional[dict[str, "Node"]] = None
    counts: Optional[dict[str, int]] = None
    anything: Optional[dict[str, Any]] = None
    mixed: Optional[Union[str, int, list[int]]] = None
    raw: Optional[Union[list, dict]] = None
    number: Optional[float] = None
    bare_list: Optional[list] = None
    contents: Optional[Union[t.TextResourceContents, t.BlobResourceContents, str]] = None
    kept: Optional[int] = spec_field(keep_none=True)
    tagged: Optional[Union[t.PromptReference, t.ResourceTemplateReference]] = None
    table: Optional[dict[str, list[Optional[bool]]]] = None
    twin: Optional[Union["Tagged", "TaggedAgain"]] = None      # two members with one tag: the first wins
    picky: Optional[Union["Picky", t.TextResourceContents]] = None   # an untagged union with a hook


@dataclass
class Tagged(Model):
    TYPE = "tagged"
    count: int
    ratio: float = 1.0


@dataclass
class TaggedAgain(Model):
    TYPE = "tagged"
    count: str


@dataclass
class Picky(Model):
    """Says itself which objects it takes among untagged alternatives."""
    uri: Optional[str] = None

    @classmethod
    def _has_required(cls, data: dict) -> bool:
        return "picky" in data


@dataclass
class Broken(Model):
    """Its hint cannot be resolved: both decoders must fail alike."""
    thing: Optional["NoSuchType"] = None  # noqa: F821


def model_classes() -> list:
    found = {Model, Node, Tagged, TaggedAgain, Picky, Broken}
    for name in t.__all__:
        value = getattr(t, name)
        if isinstance(value, type) and issubclass(value, Model):
            found.add(value)
    return sorted(found, key=lambda cls: cls.__name__)


CLASSES = model_classes()


def test_the_corpus_covers_every_model_class_of_the_package():
    names = {cls.__name__ for cls in CLASSES}
    assert {"CallToolResult", "Tool", "ElicitRequestParams", "SamplingMessage", "RawContent",
            "CreateMessageRequestParams", "LoggingMessageNotificationParams"} <= names
    assert len(names) > 45


# ---------------------------------------------------------------------- valid samples
# Values some members need to be valid at all (the rest come from the hints).
OVERRIDES = {
    ("ElicitRequestParams", "mode"): ["form", "url"],
    ("Task", "status"): ["working", "completed"],
}
HAND_WRITTEN = {
    "ElicitRequestParams": [
        {"message": "Your name?", "requestedSchema": {"type": "object", "properties": {}}},
        {"message": "Sign in", "mode": "url", "elicitationId": "e1", "url": "https://example.com/a"},
        {"message": "x", "mode": "form", "requestedSchema": {}, "elicitationId": "e", "url": "u"},
    ],
    "CallToolResult": [
        {"content": [{"type": "text", "text": "3"}]},
        {"content": [{"type": "text", "text": "{}"}], "structuredContent": {"a": 1}, "isError": False},
        {"content": [{"type": "hologram", "frames": 3}, {"type": "tool_use", "id": "1", "name": "n",
                                                          "input": {}}]},
        {"content": [{"type": "tool_result", "toolUseId": "1",
                      "content": [{"type": "tool_result", "toolUseId": "2", "content": []}]}]},
        {"content": [{"type": "resource", "resource": {"uri": "u", "text": "t", "blob": "b"}}]},
        {"content": [{"type": "resource", "resource": {"uri": "u"}}]},
        {"content": [], "unknown": {"nested": [1]}, "_meta": {"k": "v"}, "type": "surprise"},
    ],
    "SamplingMessage": [
        {"role": "user", "content": {"type": "text", "text": "hi"}},
        {"role": "user", "content": [{"type": "text", "text": "hi"}, {"type": "image", "data": "", "mimeType": "m"}]},
        {"role": "user", "content": {"type": "resource_link", "uri": "u", "name": "n"}},
        {"role": "user", "content": "text"},
    ],
    "ProgressNotificationParams": [
        {"progressToken": "t", "progress": 1},
        {"progressToken": 7, "progress": 0.5, "total": 2.0},
        {"progressToken": 7.0, "progress": 1},
        {"progressToken": True, "progress": 1},
    ],
    "LoggingMessageNotificationParams": [
        {"level": "info", "data": None},
        {"level": "info", "data": [1, {"a": None}]},
        {"level": "info"},
    ],
    "Completion": [{"values": ["a", "b"], "total": 3.0, "hasMore": False}, {"values": [], "total": 2.5}],
    "Node": [
        {"name": "root", "children": [{"name": "a", "children": [{"name": "b"}]}],
         "byKey": {"x": {"name": "x", "byKey": {"y": {"name": "y"}}}}, "counts": {"a": 1, "b": 2.0},
         "anything": {"a": [1], "b": None}, "mixed": [1, 2.0], "raw": {"k": 1}, "number": 3,
         "bareList": [1, "a"], "contents": {"uri": "u", "blob": "b"}, "kept": None,
         "tagged": {"type": "ref/resource", "uri": "u"}, "table": {"a": [True, None, False]},
         "twin": {"type": "tagged", "count": 2.0}, "picky": {"uri": "u", "text": "t"}},
        {"name": "n", "mixed": "s", "raw": [1], "contents": "text", "tagged": {"type": "ref/prompt", "name": "p"},
         "picky": {"uri": "u", "text": "t", "picky": True}},
        {"name": "n", "mixed": 4.0, "contents": {"uri": "u", "text": "t"}, "kept": 5,
         "tagged": {"type": "text", "text": "registered elsewhere"}},
    ],
}
MAX_DEPTH = 3                   # optional members of models nested deeper are left out
_BASIC_SAMPLES = {str: ["s"], int: [3, 4.0], float: [0.5, 2], bool: [True], dict: [{"k": {"n": 1}}],
                  list: [[1, "a"]]}


def samples_of(tp: Any, depth: int) -> list:
    """Valid wire values of a type hint."""
    if tp is Any:
        return [{"any": [1, None]}, "x"]
    origin = get_origin(tp)
    if origin is Union:
        out = []
        for member in get_args(tp):
            if member is not type(None):
                out += samples_of(member, depth)
        return out
    if origin is list:
        items = samples_of(get_args(tp)[0], depth + 1) if depth < MAX_DEPTH else []
        return [items[:3], []] if items else [[]]
    if origin is dict:
        items = samples_of(get_args(tp)[1], depth + 1) if depth < MAX_DEPTH else []
        return [{"a": items[0], "b": items[-1]}] if items else [{}]
    if isinstance(tp, type) and issubclass(tp, Model):
        return model_samples(tp, depth + 1)[:2]
    return list(_BASIC_SAMPLES.get(tp, ["?"]))


def model_samples(cls, depth: int = 0) -> list:
    """A full object, a minimal one, and (at the top) one per alternative value of each member."""
    if cls is Broken:
        return [{}, {"thing": 1}]
    if cls is t.RawContent:
        return [{"type": "hologram", "frames": 3}]
    tag = getattr(cls, "TYPE", None)
    head = {"type": tag} if tag else {}
    specs = field_facts(cls)
    options = {}
    for spec in specs:
        values = OVERRIDES.get((cls.__name__, spec.wire))
        if values is None:
            values = samples_of(spec.tp, depth) if depth < MAX_DEPTH or spec.required else []
        options[spec.wire] = values
    full = dict(head, **{wire: values[0] for wire, values in options.items() if values})
    minimal = dict(head, **{s.wire: options[s.wire][0] for s in specs if s.required and options[s.wire]})
    out = [full, minimal]
    if depth == 0:
        for wire, values in options.items():
            for value in values[1:]:
                out.append(dict(full, **{wire: value}))
    return out


# ---------------------------------------------------------------------- malformed variants
TAGS = sorted(base.CONTENT_TYPES) + ["ref/prompt", "ref/resource", "tagged", "no-such-type"]
REPLACEMENTS = [None, "str", 1, 2.5, True, [], {}, [1, "x"], {"a": 1}, {"type": "no-such-type"},
                {"type": 5}, {"type": "text"}]


def nodes(value: Any, path: tuple = ()):
    """Every (path, value) in a JSON tree, the root first."""
    yield path, value
    if isinstance(value, dict):
        for key, item in value.items():
            yield from nodes(item, path + (key,))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from nodes(item, path + (i,))


def replaced(root: Any, path: tuple, make) -> Any:
    """A deep copy of ``root`` whose node at ``path`` is ``make(node)`` (or gone when it gives _GONE)."""
    if not path:
        return make(root)
    copy = json.loads(json.dumps(root))
    parent = copy
    for step in path[:-1]:
        parent = parent[step]
    new = make(parent[path[-1]])
    if new is _GONE:
        del parent[path[-1]]
    else:
        parent[path[-1]] = new
    return copy


_GONE = object()


def variants(sample: Any) -> list:
    out = [sample]
    for path, value in nodes(sample):
        if path:
            out.append(replaced(sample, path, lambda _: _GONE))
        for replacement in REPLACEMENTS:
            out.append(replaced(sample, path, lambda _, r=replacement: json.loads(json.dumps(r))))
        if isinstance(value, dict):
            out.append(replaced(sample, path, lambda node: dict(node, unknownMember=[1])))
            for tag in TAGS + [7, None]:
                out.append(replaced(sample, path, lambda node, tag=tag: dict(node, type=tag)))
    return out


def corpus_for(cls) -> list:
    generated = model_samples(cls)
    # Every member of the full, the minimal and the hand-written samples is
    # mutated; the alternatives are taken as they are.
    mutated = generated[:2] + HAND_WRITTEN.get(cls.__name__, [])
    seen, out = set(), []
    for sample in mutated + generated[2:]:
        for value in (variants(sample) if sample in mutated else [sample]):
            key = json.dumps(value, sort_keys=True)
            if key not in seen:
                seen.add(key)
                out.append(value)
    return out


# ---------------------------------------------------------------------- comparisons
def shape(value: Any, inputs: dict) -> Any:
    """Everything about a decoded value that matters: classes, fields (``extra``
    included), exact Python types, and which containers are the input's own."""
    if isinstance(value, Model):
        return (type(value).__name__,
                tuple((f.name, shape(getattr(value, f.name), inputs)) for f in dataclasses.fields(value)))
    if isinstance(value, list):
        return ("list", inputs.get(id(value)), tuple(shape(item, inputs) for item in value))
    if isinstance(value, dict):
        return ("dict", inputs.get(id(value)), tuple((k, shape(v, inputs)) for k, v in value.items()))
    return (type(value).__name__, value)


def reference_to_dict(obj: Model, revision: Optional[str]) -> dict:
    """``Model.to_dict`` as it was before its per-class plans (and its ``_encode``),
    with the package's own encoders (raw content, sampling messages) on top."""
    if isinstance(obj, t.RawContent):
        return reference_encode(obj.data, None)
    out: dict = {}
    tag = getattr(type(obj), "TYPE", None)
    if tag is not None:
        out["type"] = tag
    for spec in field_facts(type(obj)):
        value = getattr(obj, spec.name)
        if value is None and not spec.keep_none:
            continue
        if spec.omit_default and value == spec.default:
            continue
        if older(revision, spec.since):
            continue
        out[spec.wire] = reference_encode(value, revision)
    for key, value in obj.extra.items():
        if key not in out:
            out[key] = reference_encode(value, revision)
    content = out.get("content")
    if isinstance(obj, (t.SamplingMessage, t.CreateMessageResult)) and older(revision, "2025-11-25") \
            and isinstance(content, list) and len(content) == 1:
        out["content"] = content[0]             # one block before 2025-11-25
    return out


def reference_encode(value: Any, revision: Optional[str]) -> Any:
    if isinstance(value, Model):
        return reference_to_dict(value, revision)
    if isinstance(value, (list, tuple)):
        return [reference_encode(item, revision) for item in value
                if not (isinstance(item, Model) and older(revision, type(item).SINCE))]
    if isinstance(value, dict):
        return {key: reference_encode(item, revision) for key, item in value.items()}
    return value


def outcome(fn) -> tuple:
    try:
        return "ok", fn()
    except Exception as exc:                    # noqa: BLE001 - compared, not handled
        return "error", type(exc), str(exc)


def check_decoder(data: Any, decode) -> str:
    """Run ``decode`` on ``data``; returns "ok" or "error" for the tally."""
    inputs = {id(node): path for path, node in nodes(data) if isinstance(node, (dict, list))}
    got = outcome(lambda: decode(data))
    if got[0] == "error":
        assert got[1] is t.base.InvalidParamsError, (data, got)
        return "error"
    result = got[1]
    again = outcome(lambda: decode(data))
    assert again[0] == "ok" and again[1] == result, data          # the same answer twice
    for revision in REVISIONS:
        # As JSON text: key order too.
        assert json.dumps(result.to_dict(revision)) == json.dumps(reference_to_dict(result, revision)), \
            (data, revision)
    return "ok"


@pytest.mark.parametrize("cls", CLASSES, ids=lambda cls: cls.__name__)
def test_the_decoder_answers_a_model_or_a_clear_error(cls):
    tally = {"ok": 0, "error": 0}
    for data in corpus_for(cls):
        tally[check_decoder(data, cls.from_dict)] += 1
    if cls is not Broken:
        assert tally["ok"] >= 1, tally          # the corpus has valid inputs for every class
    assert tally["error"] >= 1, tally


def test_decode_content_answers_a_block_or_a_clear_error():
    corpus = []
    for cls in CLASSES:
        if getattr(cls, "TYPE", None) and cls not in (Tagged, TaggedAgain):
            for sample in model_samples(cls)[:2]:
                corpus += variants(sample)
    corpus += [None, [], "text", {}, {"type": 1}, {"type": "no-such-type", "x": [1]}]
    tally = {"ok": 0, "error": 0}
    for data in corpus:
        tally[check_decoder(data, t.content_from_dict)] += 1
    assert tally["ok"] > 100 and tally["error"] > 100, tally


class Text(str):
    """A str subclass: not a JSON scalar type for the encoder's shortcut."""


def test_to_dict_agrees_with_the_reference_on_built_objects():
    audio = t.AudioContent(data="", mime_type="audio/wav")
    objects = [
        t.TextContent(text="a", extra={"text": "stale", "type": "x", "more": [audio, (audio, 1)]}),
        t.CallToolResult(content=(t.TextContent(text="a"), audio), is_error=False, extra={"isError": True}),
        t.CallToolResult(content=[audio], is_error=True, meta={"k": t.TextContent(text=Text("in a dict"))}),
        t.LoggingMessageNotificationParams(level="info", data=None),
        t.LoggingMessageNotificationParams(level="info", data=[audio, 1.5, True, None, {"a": audio}]),
        t.Tool(name="n", annotations=t.ToolAnnotations(title="T"), icons=[t.Icon(src="s")], execution=None),
        t.SamplingMessage(role="user", content=[audio]),
        t.RawContent(data={"type": "x", "y": [audio]}),
        Node(name="n", kept=None, children=[Node(name="c", number=1)], by_key={"k": Node(name="k")}),
        Model(extra={"only": "extra"}),
    ]
    for obj in objects:
        for revision in REVISIONS:
            assert json.dumps(obj.to_dict(revision)) == json.dumps(reference_to_dict(obj, revision)), (obj, revision)


def test_errors_name_the_path_exactly_as_before():
    cases = [
        (t.CallToolResult, {"content": [{"type": "text", "text": "a"}, {"type": "image", "data": 1}]},
         "CallToolResult.content[1].data: expected string"),
        (t.CallToolResult, {"content": [{"type": 5}]}, "CallToolResult.content[0].type: expected string"),
        (t.Tool, {"name": "x", "inputSchema": []}, "Tool.inputSchema: expected object"),
        (t.Tool, {"name": "x"}, "Tool.inputSchema: required field missing"),
        (t.ListToolsResult, {"tools": [{"name": "a", "inputSchema": {}}, {"name": 1, "inputSchema": {}}]},
         "ListToolsResult.tools[1].name: expected string"),
        (t.EmbeddedResource, {"type": "resource", "resource": {"uri": "u"}},
         "EmbeddedResource.resource: expected one of TextResourceContents, BlobResourceContents"),
        (t.ProgressNotificationParams, {"progressToken": [], "progress": 1},
         "ProgressNotificationParams.progressToken: expected string or integer"),
        (t.ElicitRequestParams, {"message": "m", "mode": "url", "elicitationId": "e"},
         "ElicitRequestParams.url: required field missing (url mode)"),
        (Node, {"name": "n", "byKey": {"k": {"name": 2}}}, "Node.byKey.k.name: expected string"),
    ]
    for cls, data, message in cases:
        with pytest.raises(t.base.InvalidParamsError) as info:
            cls.from_dict(data)
        assert info.value.message == message
        assert info.value.__context__ is None     # no chained private exception


def test_many_threads_decoding_a_class_first_at_once_agree():
    @dataclass
    class Fresh(Model):
        label: str
        blocks: list[t.ContentBlock] = spec_field(default_factory=list)

    data = {"label": "x", "blocks": [{"type": "text", "text": "a"}, {"type": "audio", "data": "", "mimeType": "m"}]}
    expected = Fresh._from_wire(data, "Fresh")
    start, results = threading.Barrier(8), []

    def work():
        start.wait()
        results.extend(Fresh.from_dict(data) for _ in range(50))

    threads = [threading.Thread(target=work) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(results) == 400 and all(result == expected for result in results)


def test_a_class_decoded_once_is_decoded_again_without_reading_its_hints(monkeypatch):
    from mcp_ref.types import decoding
    data = {"content": [{"type": "text", "text": "a"}, {"type": "hologram"},
                        {"type": "resource", "resource": {"uri": "u", "blob": "b"}}],
            "structuredContent": {"n": 1}, "isError": True, "_meta": {"k": "v"}, "more": 1}
    first = t.CallToolResult.from_dict(data)

    def read_again(*args):
        raise AssertionError("a type hint was read again")
    for name in ("get_origin", "get_args"):
        monkeypatch.setattr(decoding, name, read_again)
    monkeypatch.setattr(base, "get_type_hints", read_again)
    monkeypatch.setattr(decoding, "_compile", read_again)
    assert t.CallToolResult.from_dict(data) == first
    assert first.extra == {"more": 1} and first.content[1].data == {"type": "hologram"}
    with pytest.raises(t.base.InvalidParamsError, match=r"^CallToolResult.content\[0\].text: expected string "):
        t.CallToolResult.from_dict({"content": [{"type": "text", "text": 1}]})
