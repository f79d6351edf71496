"""Docstrings as tool, prompt and resource descriptions.

``parse_docstring`` reads Google-style sections (``Args:``, ``Returns:``,
``Raises:`` ...) from a docstring cleaned by ``inspect.cleandoc``.
``schema/signature.py`` uses it for descriptions and parameter descriptions. No I/O.
A docstring of one printable line is read without the section loop: the first listing
of 10,000 tools (bench/bench_growth.py, catalog; a decorated tool is read then).
"""
from __future__ import annotations

from inspect import cleandoc

__all__ = ["cleandoc", "parse_docstring"]

_LETTERS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
_HEADER_CHARS = _LETTERS | {" "}
_PARAM_SECTIONS = {"args", "arguments", "parameters", "params", "keyword args", "keyword arguments",
                   "other parameters", "attributes"}
_DROPPED_SECTIONS = _PARAM_SECTIONS | {"returns", "return", "yields", "yield", "raises", "raise"}


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
    if doc.isprintable():       # one line, no tab: nothing to clean, no section (10,000 tools)
        text = doc.strip()
        return (text if text and _section(text) not in _DROPPED_SECTIONS else None), {}
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
