"""Docstrings as tool, prompt and resource descriptions.

``parse_docstring`` reads Google-style sections (``Args:``, ``Returns:``,
``Raises:`` ...) from a docstring cleaned by ``inspect.cleandoc``.
``schema/signature.py`` uses it for descriptions and parameter descriptions. No I/O.
A docstring of one printable line is read without the section loop: the first listing
of 10,000 tools (bench/bench_growth.py, catalog; a decorated tool is read then).
"""
from __future__ import annotations

import re
from inspect import cleandoc

__all__ = ["cleandoc", "parse_docstring"]

_PARAM_SECTIONS = {"args", "arguments", "parameters", "params", "keyword args", "keyword arguments",
                   "other parameters", "attributes"}
_DROPPED_SECTIONS = _PARAM_SECTIONS | {"returns", "return", "yields", "yield", "raises", "raise"}
_HEADER = re.compile(r"([A-Za-z][A-Za-z ]*):\s*")            # ``Args:``: ASCII letters and spaces, a colon
_ENTRY = re.compile(r"\*{0,2}(\w+)\s*(?:\([^)]*\)\s*)?:(.*)")   # ``[*[*]]name [(type)]: description``


def _section(line: str) -> str | None:
    """The lower-cased name of a section header (``_HEADER``), else None."""
    header = _HEADER.fullmatch(line)
    return header.group(1).strip().lower() if header else None


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
            entry = _ENTRY.fullmatch(line.strip())
            if entry and (indent is None or depth <= indent):
                indent, current = depth, entry.group(1)
                params[current] = entry.group(2).strip()
            elif current is not None:               # a continuation line
                params[current] = (params[current] + " " + line.strip()).strip()
    text = re.sub(r"\n{3,}", "\n\n", "\n".join(body).strip())     # at most one blank line in a row
    return text or None, {name: about for name, about in params.items() if about}
