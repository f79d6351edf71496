"""``python -m mcp_ref demo --html FILE`` (also with ``--scenario NAME``): the exchange
drawn as a sequence diagram, one self-contained HTML page.

Rules:

1. The page is drawn from what the demo's transcript was given, not from the
   lines it printed: the ``Transcript`` (wire.py) keeps, in its ``entries``,
   each wire message (its sender, receiver and JSON, whole, as ``--full``
   would print it), each ``#`` comment and each other printed line (raw HTTP,
   ``cli/scenarios/http.py``), in the order they were printed (one lock for
   both).
2. One page, nothing fetched: inline CSS, an inline SVG and a few lines of
   plain inline JavaScript; no framework, no network, no external file. It
   opens from disk in any browser. The page around the diagram, its style and
   its script are ``sequence.html`` beside this module, filled in here.
3. The diagram has one lifeline per participant (client and server; any other
   sender or receiver recorded gets its own, in order of first appearance)
   and one arrow per wire message, top to bottom in wire order. An arrow's
   label says what the message is (``label``): a request by its method and id
   (``tools/call #3``), a response by its id (``result #3``, ``error #3
   -32602``), a notification by its method; a batch lists its members.
   Spec: basic/index#messages.
4. Comments are notes across the lifelines, between the arrows they explain;
   other printed lines are smaller notes in a fixed-width font.
5. Clicking an arrow (or Enter on it) shows that message's JSON, pretty-
   printed, in the side panel; ``page.html#m3`` opens with message 3 shown.
   Each message's JSON is in the page as the text of a hidden ``<pre>``, so
   the browser shows it as text, never as markup.
6. Everything that comes from the wire or the narration is escaped
   (``html.escape``, quotes too) before it enters the page: a message holding
   ``</script>`` or ``<svg onload=...>`` is shown, never run or parsed.
7. ``page.html#check`` is the page's self-check, for a headless browser: on
   load the script clicks every arrow in turn and lists, in a hidden
   ``<ol id="check">``, each arrow's sender, receiver and label and the JSON it
   showed, as the browser parsed it (tests/test_html_page.py reads it).
"""
from __future__ import annotations

import html
import json
import textwrap
from pathlib import Path
from string import Template


__all__ = ["write", "label", "page", "participants"]

LANE = 300          # px between two lifelines
MARGIN = 130        # px left and right of the outer lifelines
TOP = 56            # px: below the participants' boxes
ARROW_ROW = 30      # px a message takes
NOTE_LINE = 16      # px a line of a note takes
CHAR = 6.4          # px a character of a note takes, roughly (13 px sans-serif)


def write(path: str, transcript, title: str) -> None:
    """The page of what ``transcript`` printed (its ``entries``), written to ``path``."""
    Path(path).write_text(page(transcript.entries, title), encoding="utf-8")


def label(data) -> str:
    """What an arrow says (rule 3)."""
    if isinstance(data, list):
        return f"batch [{', '.join(label(item) for item in data)}]"
    data = data if isinstance(data, dict) else {}           # anything else is no JSON-RPC message
    ident = f" #{data['id']}" if data.get("id") is not None else ""
    if isinstance(data.get("method"), str):
        return data["method"] + ident
    if "error" in data:
        code = data["error"].get("code") if isinstance(data["error"], dict) else None
        return f"error{ident}" + (f" {code}" if code is not None else "")
    if "result" in data:
        return f"result{ident}"
    return "not a JSON-RPC message"


def _kind(data) -> str:
    """The arrow's class: request, response, error, notification (or batch)."""
    if not isinstance(data, dict):
        return "batch"
    if "method" in data:
        return "request" if "id" in data else "notification"
    return "error" if "error" in data else "response"


def participants(entries) -> list:
    """The lifelines, client and server first, then any other in order of first appearance (rule 3)."""
    names = list(dict.fromkeys(name for entry in entries if entry[0] == "message" for name in entry[1:3]))
    return sorted(names, key=lambda name: ({"client": 0, "server": 1}.get(name, 2), names.index(name)))


def _e(text) -> str:
    """Rule 6: text and attribute values, escaped."""
    return html.escape(str(text), quote=True)


def _note(text: str, y: float, width: float, kind: str) -> tuple:
    """A note across the lifelines: its SVG and its height."""
    per_line = max(20, int((width - 24) / (CHAR if kind == "note" else 7.4)))
    lines = textwrap.wrap(text, per_line, break_on_hyphens=False) or [""]
    height = len(lines) * NOTE_LINE + 10
    spans = "".join(f'<tspan x="24" dy="{NOTE_LINE if i else 0}">{_e(line)}</tspan>'
                    for i, line in enumerate(lines))
    return (f'<g class="{kind}"><rect x="12" y="{y}" width="{width}" height="{height}" rx="4"/>'
            f'<text x="24" y="{y + 17}">{spans}</text></g>'), height


def _arrow(index: int, sender: str, receiver: str, data, x: dict, y: float) -> str:
    """One message (rule 3): a line with a head, its label above, a wide invisible line to click."""
    x1, x2 = x[sender], x[receiver]
    kind, text = _kind(data), label(data)
    end = x2 - 6 if x2 > x1 else x2 + 6
    shown = text if len(text) <= 42 else text[:40] + "…"
    return (f'<g class="msg {kind}" data-index="{index}" data-from="{_e(sender)}" data-to="{_e(receiver)}" '
            f'data-label="{_e(text)}" tabindex="0" role="button">'
            f'<title>{_e(text)}</title>'
            f'<line class="hit" x1="{x1}" y1="{y}" x2="{x2}" y2="{y}"/>'
            f'<line class="arrow" x1="{x1}" y1="{y}" x2="{end}" y2="{y}" marker-end="url(#head)"/>'
            f'<text x="{(x1 + x2) / 2}" y="{y - 6}" text-anchor="middle">{_e(shown)}</text></g>')


def svg(entries) -> str:
    """The sequence diagram (rules 3 and 4), an ``<svg>`` element."""
    names = participants(entries) or ["client", "server"]
    x = {name: MARGIN + LANE * i for i, name in enumerate(names)}
    width = 2 * MARGIN + LANE * (len(names) - 1)
    y, body, index = TOP + 14, [], 0
    for entry in entries:
        if entry[0] == "message":
            y += ARROW_ROW
            body.append(_arrow(index, entry[1], entry[2], entry[3], x, y))
            index += 1
            y += 8
        else:
            drawn, height = _note(entry[1], y + 6, width - 24, entry[0])
            body.append(drawn)
            y += height + 12
    height = y + 24
    heads = "".join(f'<g class="who"><rect x="{x[name] - 60}" y="8" width="120" height="30" rx="4"/>'
                    f'<text x="{x[name]}" y="28" text-anchor="middle">{_e(name)}</text></g>'
                    f'<line class="life" x1="{x[name]}" y1="38" x2="{x[name]}" y2="{height}"/>'
                    for name in names)
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="13">'
            '<defs><marker id="head" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="10" markerHeight="10" '
            'markerUnits="userSpaceOnUse" orient="auto-start-reverse">'
            '<path d="M0,0 L10,5 L0,10 z" fill="context-stroke"/></marker></defs>'
            f'{heads}{"".join(body)}</svg>')


def page(entries, title: str = "mcp_ref demo") -> str:
    """The whole page (rule 2): the diagram, the panel with each message's JSON, the script."""
    messages = [entry for entry in entries if entry[0] == "message"]
    panels = "".join(f'<pre id="json{i}" hidden>{_e(json.dumps(entry[3], indent=2, ensure_ascii=False))}</pre>'
                     for i, entry in enumerate(messages))
    template = Template((Path(__file__).parent / "sequence.html").read_text(encoding="utf-8"))
    return template.substitute(title=_e(title), count=len(messages), svg=svg(entries), panels=panels)
