"""Docstrings as tool, prompt and resource descriptions.

``cleandoc`` is ``inspect.cleandoc`` and ``parse_docstring`` reads
Google-style sections (``Args:``, ``Returns:``, ``Raises:`` ...), both
without ``inspect`` or ``re``: every registration reads a docstring, and a
stdio server's start-up is a benchmark target (bench/bench_stdio.py). A
docstring of one printable line is read without the section loop: the common
tool's, read once per tool by a first listing (bench/bench_growth.py, issue 17).
``schema/signature.py`` uses them for descriptions and parameter descriptions.
No I/O.
"""
from __future__ import annotations

import sys

__all__ = ["cleandoc", "parse_docstring"]

# 3.13 made cleandoc strip spaces only, as the compiler now does with docstrings.
_CLEANDOC_STRIP = " " if sys.version_info >= (3, 13) else None
_LETTERS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
_HEADER_CHARS = _LETTERS | {" "}
_PARAM_SECTIONS = {"args", "arguments", "parameters", "params", "keyword args", "keyword arguments",
                   "other parameters", "attributes"}
_DROPPED_SECTIONS = _PARAM_SECTIONS | {"returns", "return", "yields", "yield", "raises", "raise"}


def cleandoc(doc: str) -> str:
    """``inspect.cleandoc``: tabs expanded, the first line and the common indentation
    of the others stripped, blank lines at both ends dropped."""
    lines = doc.expandtabs().split("\n")
    margin = sys.maxsize
    for line in lines[1:]:
        content = len(line.lstrip(_CLEANDOC_STRIP))
        if content:
            margin = min(margin, len(line) - content)
    if lines:
        lines[0] = lines[0].lstrip(_CLEANDOC_STRIP)
    if margin < sys.maxsize:
        lines[1:] = [line[margin:] for line in lines[1:]]
    while lines and not lines[-1]:
        lines.pop()
    while lines and not lines[0]:
        lines.pop(0)
    return "\n".join(lines)


def _section(line: str) -> str | None:
    """The lower-cased name of a section header (``Args:``: ASCII letters and spaces
    starting with a letter, a colon, then only whitespace), else None."""
    head, colon, rest = line.partition(":")
    if colon and head and head[0] in _LETTERS and _HEADER_CHARS.issuperset(head) and (not rest or rest.isspace()):
        return head.strip().lower()
    return None


def _param_entry(text: str) -> tuple | None:
    """``(name, description)`` of an entry ``[*[*]]name [(type)]: description`` (text
    stripped), else None."""
    i = 2 if text.startswith("**") else 1 if text.startswith("*") else 0
    start = i
    while i < len(text) and (text[i].isalnum() or text[i] == "_"):
        i += 1
    if i == start:
        return None
    rest = text[i:].lstrip()
    if rest.startswith("("):
        close = rest.find(")")
        if close < 0:
            return None
        rest = rest[close + 1:].lstrip()
    return (text[start:i], rest[1:].strip()) if rest.startswith(":") else None


def parse_docstring(doc: str | None) -> tuple:
    """Google style: ``(text without Args/Returns/Raises sections or None, {name: description})``."""
    if not doc:
        return None, {}
    if doc.isprintable():
        # One line without tabs (splitlines splits at nothing printable): nothing to clean,
        # and no section to read. The common tool's docstring; half the cost of the loop
        # below, per tool of a first listing (bench/bench_growth.py, issue 17).
        # A header ends with its colon here (the text is stripped): others skip _section.
        text = doc.strip()
        header = text[-1:] == ":" and _section(text) in _DROPPED_SECTIONS
        return (text if text and not header else None), {}
    body, params, section, indent, current = [], {}, None, None, None
    for line in cleandoc(doc).splitlines():
        header = _section(line)
        if header in _DROPPED_SECTIONS:
            section, indent, current = header, None, None
            continue
        if section is not None and line.strip() and not line[0].isspace():
            section = None                          # text back at the margin ends a section
        if section is None:
            body.append(line)
        elif section in _PARAM_SECTIONS and line.strip():
            depth = len(line) - len(line.lstrip())
            entry = _param_entry(line.strip())
            if entry and (indent is None or depth <= indent):
                indent, current = depth, entry[0]
                params[current] = entry[1]
            elif current is not None:               # a continuation line
                params[current] = (params[current] + " " + line.strip()).strip()
    text = "\n".join(body).strip()
    while "\n\n\n" in text:                         # at most one blank line in a row
        text = text.replace("\n\n\n", "\n\n")
    return text or None, {name: about for name, about in params.items() if about}
