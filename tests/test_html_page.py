"""``python -m mcp_ref demo --html FILE``: the exchange as a sequence diagram
(mcp_ref/cli/sequence.py). The page has one arrow per wire message, in order,
labelled by what the message is, the narration as notes between them, and each
message's JSON as escaped text; nothing from the wire can become markup. The
last test opens the page in headless Chromium when one is installed and reads
the page's own self-check (sequence.py rule 7) from the browser's DOM."""
from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
from html.parser import HTMLParser
from pathlib import Path

import pytest

from mcp_ref.__main__ import Transcript, main
from mcp_ref.cli.sequence import label, page, participants, write
from mcp_ref.jsonrpc.messages import ErrorObject, ErrorResponse, Notification, Request, Response

ROOT = Path(__file__).resolve().parent.parent
ARROWS = ("client -> server  ", "server -> client  ")
HOSTILE = "</script><svg onload=\"document.body.setAttribute('data-pwned', 1)\">"
HOSTILE_TOO = "</pre><img src=x onerror=\"document.body.setAttribute('data-pwned', 2)\"> & 'q' \"dq\""


class Page(HTMLParser):
    """What a page holds: ``order`` (``("msg", attributes)``, ``("note", text)``, ``("line", text)``
    in document order), ``json`` (the text of each ``<pre id="jsonN">``), every tag and attribute."""

    def __init__(self, text: str):
        super().__init__()
        self.order, self.json, self.tags, self.attributes = [], {}, [], []
        self._note, self._pre = None, None
        self.feed(text)
        self.close()

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.tags.append(tag)
        self.attributes += list(attrs)
        classes = (attrs.get("class") or "").split()
        if tag == "g" and "msg" in classes:
            self.order.append(("msg", attrs))
        elif tag == "g" and classes and classes[0] in ("note", "line"):
            self._note = [classes[0], []]
            self.order.append(self._note)
        elif tag == "pre":
            self._pre = attrs["id"]
            self.json[self._pre] = ""

    def handle_endtag(self, tag):
        if tag == "g" and self._note is not None:
            self._note[1] = "".join(self._note[1])
            self._note = None
        if tag == "pre":
            self._pre = None

    def handle_data(self, data):
        if self._note is not None:
            self._note[1].append(data)
        if self._pre is not None:
            self.json[self._pre] += data

    def arrows(self) -> list:
        return [attrs for kind, attrs in self.order if kind == "msg"]


class Wire:
    """A body as the HTTP scenarios hand it to the transcript."""

    def __init__(self, data):
        self.data = data

    def to_dict(self):
        return self.data


def small_transcript() -> tuple:
    """A recorder fed as the demo feeds its transcript, and what was printed."""
    out = io.StringIO()
    recorder = Transcript(full=True, out=out, width=100)
    recorder.comment("initialize: the handshake")
    recorder("send", Request(1, "initialize", {"protocolVersion": "2025-11-25"}))
    recorder("receive", Response(1, {"protocolVersion": "2025-11-25"}))
    recorder("send", Notification("notifications/initialized"))
    recorder.emit("")
    recorder.comment("a hostile tool: " + HOSTILE)
    recorder("send", Request(2, "tools/call", {"name": "echo", "arguments": {"text": HOSTILE}}))
    recorder.emit("POST /mcp  " + HOSTILE_TOO)
    recorder("receive", Notification("notifications/message", {"level": "info", "data": HOSTILE_TOO}))
    recorder("receive", ErrorResponse(2, ErrorObject(-32602, "Invalid params: " + HOSTILE)))
    recorder("send", Wire([{"jsonrpc": "2.0", "id": 3, "method": "ping"},
                           {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 2}}]))
    recorder("receive", Wire({"jsonrpc": "2.0", "id": "s-1", "method": "sampling/createMessage", "params": {}}))
    recorder("send", Wire({"jsonrpc": "2.0", "id": "s-1", "result": {"role": "assistant"}}))
    return recorder, out.getvalue()


EXPECTED = [  # (from, to, label, class) of each arrow, in order
    ("client", "server", "initialize #1", "request"),
    ("server", "client", "result #1", "response"),
    ("client", "server", "notifications/initialized", "notification"),
    ("client", "server", "tools/call #2", "request"),
    ("server", "client", "notifications/message", "notification"),
    ("server", "client", "error #2 -32602", "error"),
    ("client", "server", "batch [ping #3, notifications/cancelled]", "batch"),
    ("server", "client", "sampling/createMessage #s-1", "request"),
    ("client", "server", "result #s-1", "response"),
]


def test_one_arrow_per_message_in_order_with_its_label_and_direction():
    recorder, printed = small_transcript()
    parsed = Page(page(recorder.entries, "a small exchange"))
    arrows = parsed.arrows()
    assert [(a["data-from"], a["data-to"], a["data-label"], a["class"].split()[1]) for a in arrows] == EXPECTED
    assert [int(a["data-index"]) for a in arrows] == list(range(len(EXPECTED)))
    assert len(EXPECTED) == sum(line.startswith(ARROWS) for line in printed.splitlines())


def test_narration_and_other_lines_are_notes_between_the_arrows():
    recorder, _ = small_transcript()
    order = Page(page(recorder.entries)).order
    kinds = [entry[0] for entry in order]
    assert kinds == ["note", "msg", "msg", "msg", "note", "msg", "line", "msg", "msg", "msg", "msg", "msg"]
    notes = [entry[1] for entry in order if entry[0] != "msg"]
    assert notes[0] == "initialize: the handshake"
    assert notes[1].replace(" ", "") == ("a hostile tool: " + HOSTILE).replace(" ", "")   # wrapped in lines
    assert notes[2].replace(" ", "") == ("POST /mcp  " + HOSTILE_TOO).replace(" ", "")


def test_each_message_json_is_in_the_page_whole_as_escaped_text():
    recorder, _ = small_transcript()
    text = page(recorder.entries)
    parsed = Page(text)
    sent = [entry[3] for entry in recorder.messages()]
    assert [json.loads(parsed.json[f"json{i}"]) for i in range(len(sent))] == sent
    # Nothing from the wire became markup: one script (the page's), one svg, no event attribute.
    assert parsed.tags.count("script") == 1 and parsed.tags.count("svg") == 1
    assert "img" not in parsed.tags and "pre" not in parsed.tags[:parsed.tags.index("aside")]
    assert not [name for name in parsed.attributes if name.startswith("on")]
    assert "</script><svg" not in text and "<img" not in text
    assert "&lt;/script&gt;&lt;svg onload=" in text


def test_labels_and_lifelines():
    assert label({"jsonrpc": "2.0", "id": 7, "result": {}}) == "result #7"
    assert label({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}}) == \
        "error -32700"
    assert label({"jsonrpc": "2.0", "method": "notifications/progress"}) == "notifications/progress"
    assert label("not an object") == "not a JSON-RPC message"
    entries = [("message", "host", "calc", {}), ("message", "server", "client", {}),
               ("message", "client", "authorization server", {})]
    assert participants(entries) == ["client", "server", "host", "calc", "authorization server"]
    recorder = Transcript(out=io.StringIO())
    recorder.relay("client", "authorization server", {"grant_type": "client_credentials"})
    assert [a["data-to"] for a in Page(page(recorder.entries)).arrows()] == ["authorization server"]


def _run(*argv) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    done = subprocess.run([sys.executable, "-m", "mcp_ref", *argv], capture_output=True, text=True,
                          timeout=90, env=env, cwd=str(ROOT))
    assert done.returncode == 0, done.stderr[-3000:]
    return done


def test_demo_html_draws_every_message_the_same_run_printed(tmp_path):
    target = tmp_path / "demo.html"
    done = _run("demo", "--full", "--html", str(target))
    printed = [line for line in done.stdout.splitlines() if line.startswith(ARROWS)]
    parsed = Page(target.read_text(encoding="utf-8"))
    arrows = parsed.arrows()
    assert len(arrows) == len(printed) > 50
    for i, (line, arrow) in enumerate(zip(printed, arrows)):
        direction = ("client", "server") if line.startswith(ARROWS[0]) else ("server", "client")
        assert (arrow["data-from"], arrow["data-to"]) == direction
        assert json.loads(parsed.json[f"json{i}"]) == json.loads(line.split("  ", 1)[1])
    assert arrows[0]["data-label"] == "server/discover #1"      # the default era opens with the probe
    notes = [text for kind, text in parsed.order if kind == "note"]
    assert len(notes) > 20 and notes[-1] == "closed cleanly"
    assert f"wrote {target}: {len(printed)} wire messages" in done.stderr


def test_a_scenario_draws_the_server_requests_too(tmp_path, capsys):
    """In the legacy era the server asks the client with a request of its own: an arrow back."""
    target = tmp_path / "sampling.html"
    assert main(["demo", "--scenario", "sampling", "--protocol-version", "2025-11-25", "--html", str(target)]) == 0
    printed = [line for line in capsys.readouterr().out.splitlines() if line.startswith(ARROWS)]
    arrows = Page(target.read_text(encoding="utf-8")).arrows()
    assert len(arrows) == len(printed)
    asked = [a for a in arrows if a["data-label"].startswith("sampling/createMessage #")]
    assert len(asked) == 1 and (asked[0]["data-from"], asked[0]["data-to"]) == ("server", "client")


def test_html_does_not_go_with_host(capsys):
    with pytest.raises(SystemExit) as exit:
        main(["demo", "--host", "--html", "page.html"])
    assert exit.value.code == 2 and "does not go with --host" in capsys.readouterr().err


def chromium() -> str | None:
    return next(filter(None, map(shutil.which, ("chromium", "chromium-browser", "google-chrome"))), None)


def dump_dom(path: Path, fragment: str = "#check") -> str:
    """The DOM after the page's script ran, as headless Chromium serialises it."""
    with tempfile.TemporaryDirectory() as profile:
        done = subprocess.run([chromium(), "--headless", "--no-sandbox", "--disable-gpu",
                               "--disable-background-networking", "--disable-component-update", "--disable-sync",
                               "--no-first-run", f"--user-data-dir={profile}", "--dump-dom",
                               path.as_uri() + fragment], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


@pytest.mark.skipif(chromium() is None, reason="no Chromium on PATH (chromium, chromium-browser, google-chrome): "
                                               "the page is not opened in a browser")
def test_the_page_in_a_browser_clicks_through_every_arrow(tmp_path):
    recorder, _ = small_transcript()
    target = tmp_path / "small.html"
    write(str(target), recorder, "a hostile exchange")
    dom = dump_dom(target)

    class Check(HTMLParser):
        def __init__(self):
            super().__init__()
            self.items, self.inside = [], False

        def handle_starttag(self, tag, attrs):
            self.inside = tag == "li"
            if self.inside:
                self.items.append("")

        def handle_data(self, data):
            if self.inside:
                self.items[-1] += data

    check = Check()
    check.feed(dom[dom.index('<ol id="check"'):])
    seen = [json.loads(item) for item in check.items]
    assert [tuple(item[:3]) for item in seen] == [arrow[:3] for arrow in EXPECTED]
    assert [item[3] for item in seen] == [entry[3] for entry in recorder.messages()]
    assert "<body>" in dom and "<img" not in dom        # no onload/onerror ran: body has no data-pwned
    linked = dump_dom(target, "#m5")                    # a link to one message opens with it shown
    assert '<pre id="json5">' in linked and '<pre id="json4" hidden="">' in linked
    assert "on" in Page(linked).arrows()[5]["class"].split() and '<li>' not in linked
