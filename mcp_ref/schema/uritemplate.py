"""URI templates for resource templates: a small RFC 6570 subset.

Spec: server/resources#resource-templates (``uriTemplate`` is an RFC 6570 template).

Expressions: ``{var}``, ``{+var}`` (reserved characters kept), ``{#var}``,
``{.var}``, ``{/var}``, ``{?a,b}`` and ``{&a}``, with the ``*`` (explode) and
``:N`` (prefix) modifiers. ``{;var}`` and the reserved operators raise ValueError.

``match`` reverses ``expand`` on the whole URI:

* ``{var}`` is one non-empty piece without ``/ ? #``; ``{+var}`` may span ``/``
  and stops before a query or fragment that the template matches itself.
* ``{/..}``, ``{.var}``, ``{#var}``, ``{?..}`` and ``{&..}`` are optional, as an
  undefined variable expands to nothing there.
* Exploded variables give lists (``{/path*}`` split on ``/``, ``{var*}`` on
  ``,``, ``{?tag*}`` from repeated ``tag=``); the others give strings.
* Query variables may come in any order; unnamed query parameters are ignored.
* Values are percent-decoded.

A server parses all of its templates before it answers ``initialize``, so
parsing is kept short. A catalogue repeats a few expressions (``{id}``,
``{?q}``) in many literal texts, and a parsed expression is only read after
it is made: each expression is parsed once (``_PARSED``, up to
``_PARSED_MAX``) and its ``_Expression`` shared by every template that holds
it; the template is cut at its braces by ``str.split``, and keeps its parts
only (one object less per template for the garbage collector). Making the ``UriTemplate`` of ``tpl://rN/{id}``
took ~4.5-5 us, now ~1.2, of a template's registration of ~18-21 us, now
~5.6 (10,000 in one process, warm; bench/bench_growth.py, issue 17). A
server keeps no ``UriTemplate`` at registration: ``variables_of`` checks
the template as parsing does and gives its variable names (~0.3 us for a
template of one known expression, which it reads without making parts;
~0.9 us by way of the parts), and the server parses the template again for
its first match (server/resources.py rule 6). ``urllib.parse`` loads on the first
expansion or match, not with the module (its import, ``ipaddress`` with it,
is a few milliseconds of a server's start).
"""
from __future__ import annotations

import re
from collections import namedtuple
from itertools import accumulate

_RESERVED = ":/?#[]@!$&'()*+,;="
_PCT = re.compile(r"%[0-9A-Fa-f]{2}")
_VARNAME = re.compile(r"(?:\w|%[0-9A-Fa-f]{2})+(?:\.(?:\w|%[0-9A-Fa-f]{2})+)*", re.ASCII)
# operator: (first, separator, named, if-empty, reserved allowed), RFC 6570 appendix A,
# then what ``match`` accepts for its expansion: (lead character or "", characters that
# end it, optional, shortest first). The text taken always starts at the lead and runs to
# any point before the first ending character, so the set of ends from one start is an
# interval: that is what keeps matching linear (see ``_Matcher``).
_OPERATORS = {
    "": ("", ",", False, "", False, ("", "/?#", False, False)),
    "+": ("", ",", False, "", True, ("", "#", False, True)),
    "#": ("#", ",", False, "", True, ("#", "", True, False)),
    ".": (".", ".", False, "", False, (".", "/?#", True, False)),
    "/": ("/", "/", False, "", False, ("/", "?#", True, False)),
    "?": ("?", "&", True, "=", False, ("?", "#", True, False)),
    "&": ("&", "&", True, "=", False, ("&", "#", True, False)),
}
_Var = namedtuple("_Var", "name explode prefix")


class _Expression:
    def __init__(self, operator: str, variables: list):
        self.operator, self.variables = operator, variables
        self.names = tuple(dict.fromkeys(var.name for var in variables))   # distinct, in order
        self.first, self.sep, self.named, self.ifemp, self.reserved, matching = _OPERATORS[operator]
        self.lead, self.stops, self.optional, self.lazy = matching


def _encode(value, reserved: bool) -> str:
    from urllib.parse import quote
    text = ("true" if value else "false") if isinstance(value, bool) else str(value)
    if not reserved:
        return quote(text, safe="")
    # Reserved expansion keeps reserved characters and existing %XX triplets.
    return "".join(piece if _PCT.fullmatch(piece) else quote(piece, safe=_RESERVED)
                   for piece in re.split(r"(%[0-9A-Fa-f]{2})", text))


def _parse_expression(body: str, where: int) -> _Expression:
    operator = body[:1] if body[:1] and body[:1] in "+#./?&;=,!@|" else ""
    if operator not in _OPERATORS:
        raise ValueError(f"unsupported operator {operator!r} in the expression at position {where}")
    variables = []
    for spec in body[len(operator):].split(","):
        explode, prefix = spec.endswith("*"), None
        name = spec[:-1] if explode else spec
        if ":" in name and not explode:
            name, _, digits = name.partition(":")
            if not (digits.isascii() and digits.isdigit() and 0 < int(digits) < 10000):
                raise ValueError(f"bad prefix modifier {spec!r} in the expression at position {where}")
            prefix = int(digits)
        if not name:
            raise ValueError(f"empty variable name in the expression {{{body}}} at position {where}")
        if not _VARNAME.fullmatch(name):
            raise ValueError(f"invalid variable name {name!r} in the expression at position {where}")
        variables.append(_Var(name, explode, prefix))
    return _Expression(operator, variables)


_PARSED: dict = {}                      # an expression's text ("id") -> its _Expression (module docstring)
_PARSED_MAX = 1024


def _parse(template: str) -> list:
    """``template`` cut into literal strings and (shared) ``_Expression`` objects; TypeError
    or ValueError naming the first mistake and its position."""
    if not isinstance(template, str):
        raise TypeError("a URI template must be a string")
    parts: list = []
    where = -1                          # the position of the "{" that starts ``piece`` (none for the first)
    for piece in template.split("{"):
        if where < 0:
            text, start = piece, 0
        else:                           # an expression, then literal text up to the next "{"
            body, closed, text = piece.partition("}")
            if not closed:
                raise ValueError(f"unclosed '{{' at position {where} in URI template {template!r}")
            expression = _PARSED.get(body)
            if expression is None:
                expression = _parse_expression(body, where)
                if len(_PARSED) < _PARSED_MAX:
                    _PARSED[body] = expression
            parts.append(expression)
            start = where + len(body) + 2
        if "}" in text:
            raise ValueError(f"unmatched '}}' at position {start + text.index('}')} in URI template {template!r}")
        if text:
            parts.append(text)
        where = start + len(text)
    return parts


def _names(parts: list) -> tuple:
    """The variable names of a template's parts, in order of first appearance."""
    expressions = [part for part in parts if type(part) is _Expression]
    if len(expressions) == 1:
        return expressions[0].names     # the common case: the expression's own tuple, shared
    return tuple(dict.fromkeys(name for expression in expressions for name in expression.names))


def variables_of(template: str) -> tuple:
    """The variable names of ``template`` (in order of first appearance), checking its
    syntax as ``UriTemplate(template)`` does, with the same errors, and keeping nothing
    else: a server registering a resource template checks it and its function at once,
    and parses it again for its first match (server/resources.py rule 6). A template of
    one expression met before (``x://rN/{id}``) is read without making its parts."""
    if isinstance(template, str):
        head, brace, rest = template.partition("{")
        if brace and "{" not in rest and "}" not in head:
            body, closed, tail = rest.partition("}")
            expression = _PARSED.get(body)
            if closed and expression is not None and "}" not in tail:
                return expression.names         # what _parse would find, without a mistake
    return _names(_parse(template))


class UriTemplate:
    """A parsed URI template: ``variables``, ``is_template``, ``expand(**values)``, ``match(uri)``."""

    __slots__ = ("template", "_parts")

    def __init__(self, template: str):
        self.template = template
        self._parts: list = _parse(template)   # literal strings and _Expression objects (shared)

    def __repr__(self) -> str:
        return f"UriTemplate({self.template!r})"

    @property
    def variables(self) -> list:
        """Variable names in order of first appearance."""
        return list(_names(self._parts))

    @property
    def is_template(self) -> bool:
        """True when there is at least one ``{...}`` expression."""
        return any(type(part) is _Expression for part in self._parts)

    def expand(self, **values) -> str:
        """Expand with ``values`` (str, number or list); None, missing and empty
        lists are undefined and expand to nothing."""
        out = []
        for part in self._parts:
            if isinstance(part, str):
                out.append(part)
                continue
            pieces = [self._expand_var(part, var, values[var.name]) for var in part.variables
                      if values.get(var.name) not in (None, [], ())]
            if pieces:
                out.append(part.first + part.sep.join(pieces))
        return "".join(out)

    @staticmethod
    def _expand_var(e: _Expression, var: _Var, value) -> str:
        def named(encoded):
            return f"{var.name}={encoded}" if encoded or e.ifemp else var.name

        if isinstance(value, (list, tuple)):
            items = [_encode(v, e.reserved) for v in value]
            if var.explode:
                return e.sep.join(named(i) for i in items) if e.named else e.sep.join(items)
            joined = ",".join(items)
        else:
            text = value if var.prefix is None else str(value)[:var.prefix]
            joined = _encode(text, e.reserved)
        return named(joined) if e.named else joined

    def match(self, uri: str) -> dict | None:
        """The variables of ``uri`` (str, or list for exploded ones), or None
        when the whole URI does not match the template."""
        captures = _Matcher(self._parts, uri).run() if isinstance(uri, str) else None
        if captures is None:
            return None
        from urllib.parse import unquote
        result: dict = {}
        query: list = []
        for part, captured in zip(self._parts, captures):
            if captured is None:
                continue
            if part.named:
                query.extend(pair.partition("=")[::2] for pair in captured.split("&") if pair)
            elif captured and not self._assign(part, captured, result):
                return None
        for part in self._parts:
            for var in part.variables if getattr(part, "named", False) else ():
                found = [unquote(v) for k, v in query if unquote(k) == var.name]
                if found:
                    result[var.name] = found if var.explode else found[0]
        return result

    @staticmethod
    def _assign(e: _Expression, captured: str, result: dict) -> bool:
        """Split one expression's text among its variables; False when it does not fit."""
        from urllib.parse import unquote
        if e.operator in ("/", "."):
            items = captured.split(e.sep)[1:]
        elif len(e.variables) == 1 and not e.variables[0].explode:
            items = [captured]
        else:
            items = captured.split(",")
        for position, var in enumerate(e.variables):
            if not items:
                break
            if var.explode:
                take = max(len(items) - sum(not v.explode for v in e.variables[position + 1:]), 0)
                result[var.name] = [unquote(i) for i in items[:take]]
                items = items[take:]
            else:
                result[var.name] = unquote(items.pop(0))
        return not items


class _Matcher:
    """Match a URI against template parts in O(parts x length), whatever the template.

    A regular expression with adjacent variables (``{a}{b}{c}``, or ``{a}-{b}-{c}``
    against a URI full of dashes) backtracks through every split before it fails:
    C(n, k) tries for k variables, and ``re`` holds the GIL meanwhile, so one crafted
    URI would freeze the whole server. Here each part taken at position p ends at p
    (optional parts) or anywhere in one interval, so two passes suffice: backwards,
    ``able[i][p]`` says whether parts i.. can match ``uri[p:]`` exactly; forwards, each
    part takes its preferred end among those from which the rest can still match
    (longest first, shortest first for ``{+var}``; an optional part rather than
    nothing). That is the split a backtracking ``re`` would have found, without trying
    the others. Spec: server/resources#resource-templates (RFC 6570).
    """

    def __init__(self, parts: list, uri: str):
        self.parts, self.uri, self.n = parts, uri, len(uri)
        self._stops: dict = {}

    def _next_stop(self, stops: str) -> list:
        """``[p]``: the first position at or after p holding one of ``stops`` (or n)."""
        if stops not in self._stops:
            table = [self.n] * (self.n + 1)
            for p in range(self.n - 1, -1, -1):
                table[p] = p if self.uri[p] in stops else table[p + 1]
            self._stops[stops] = table
        return self._stops[stops]

    def _ends(self, part, p: int):
        """The interval ``(lo, hi)`` of ends when ``part`` is taken at p, or None."""
        if isinstance(part, str):
            return (p + len(part),) * 2 if self.uri.startswith(part, p) else None
        if p >= self.n or (part.lead and self.uri[p] != part.lead):
            return None
        hi = self._next_stop(part.stops)[p] if part.stops else self.n
        return (p + 1, hi) if hi > p else None

    def run(self) -> list | None:
        """Per part, the text it captured (None for an optional part not taken, and
        for literals), or None when the URI does not match."""
        n, parts = self.n, self.parts
        able = [[False] * (n + 1) for _ in range(len(parts))] + [[False] * n + [True]]
        for i in range(len(parts) - 1, -1, -1):
            after, here = able[i + 1], able[i]
            count = [0, *accumulate(after)]   # count[x]: positions below x where the rest matches
            optional = not isinstance(parts[i], str) and parts[i].optional
            for p in range(n + 1):
                ends = self._ends(parts[i], p)
                here[p] = (optional and after[p]) or (ends is not None and count[ends[1] + 1] > count[ends[0]])
        if not able[0][0]:
            return None
        captures: list = []
        p = 0
        for i, part in enumerate(parts):
            after, ends = able[i + 1], self._ends(part, p)
            span = () if ends is None else range(ends[0], ends[1] + 1)
            order = span if getattr(part, "lazy", False) else reversed(span)
            end = next((e for e in order if after[e]), None)
            if end is None:                    # an optional part, not taken
                captures.append(None)
                continue
            skip = 1 if getattr(part, "lead", "") in ("#", "?", "&") else 0
            captures.append(None if isinstance(part, str) else self.uri[p + skip:end])
            p = end
        return captures
