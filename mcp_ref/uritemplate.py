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
"""
import re
from collections import namedtuple
from typing import Optional
from urllib.parse import quote, unquote

_RESERVED = ":/?#[]@!$&'()*+,;="
_PCT = re.compile(r"%[0-9A-Fa-f]{2}")
_VARNAME = re.compile(r"(?:\w|%[0-9A-Fa-f]{2})+(?:\.(?:\w|%[0-9A-Fa-f]{2})+)*", re.ASCII)
_TOKEN = re.compile(r"\{([^{}]*)\}|[^{}]+|[{}]")
# operator: (first, separator, named, if-empty, reserved allowed), RFC 6570 appendix A,
# and the regular expression that matches its expansion (group {g}).
_OPERATORS = {
    "": ("", ",", False, "", False, r"(?P<{g}>[^/?#]+)"),
    "+": ("", ",", False, "", True, r"(?P<{g}>[^#]+?)"),
    "#": ("#", ",", False, "", True, r"(?:#(?P<{g}>.*))?"),
    ".": (".", ".", False, "", False, r"(?P<{g}>(?:\.[^/?#.]*)*)"),
    "/": ("/", "/", False, "", False, r"(?P<{g}>(?:/[^/?#]*)*)"),
    "?": ("?", "&", True, "=", False, r"(?:\?(?P<{g}>[^#]*))?"),
    "&": ("&", "&", True, "=", False, r"(?:&(?P<{g}>[^#]*))?"),
}
_Var = namedtuple("_Var", "name explode prefix")


class _Expression:
    def __init__(self, operator: str, variables: list):
        self.operator, self.variables = operator, variables
        self.first, self.sep, self.named, self.ifemp, self.reserved, self.pattern = _OPERATORS[operator]


def _encode(value, reserved: bool) -> str:
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
            if not (digits.isdigit() and 0 < int(digits) < 10000):
                raise ValueError(f"bad prefix modifier {spec!r} in the expression at position {where}")
            prefix = int(digits)
        if not name:
            raise ValueError(f"empty variable name in the expression {{{body}}} at position {where}")
        if not _VARNAME.fullmatch(name):
            raise ValueError(f"invalid variable name {name!r} in the expression at position {where}")
        variables.append(_Var(name, explode, prefix))
    return _Expression(operator, variables)


class UriTemplate:
    """A parsed URI template: ``variables``, ``is_template``, ``expand(**values)``, ``match(uri)``."""

    def __init__(self, template: str):
        if not isinstance(template, str):
            raise TypeError("a URI template must be a string")
        self.template = template
        self._parts: list = []          # literal strings and _Expression objects
        for m in _TOKEN.finditer(template):
            if m.group() == "{":
                raise ValueError(f"unclosed '{{' at position {m.start()} in URI template {template!r}")
            if m.group() == "}":
                raise ValueError(f"unmatched '}}' at position {m.start()} in URI template {template!r}")
            self._parts.append(m.group() if m.group(1) is None else _parse_expression(m.group(1), m.start()))
        self._expressions = [p for p in self._parts if isinstance(p, _Expression)]
        self._regex = re.compile("".join(
            re.escape(p) if isinstance(p, str) else p.pattern.format(g=f"g{i}") for i, p in enumerate(self._parts)),
            re.DOTALL)

    def __repr__(self) -> str:
        return f"UriTemplate({self.template!r})"

    @property
    def variables(self) -> list:
        """Variable names in order of first appearance."""
        names: list = []
        for expression in self._expressions:
            for var in expression.variables:
                if var.name not in names:
                    names.append(var.name)
        return names

    @property
    def is_template(self) -> bool:
        """True when there is at least one ``{...}`` expression."""
        return bool(self._expressions)

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

    def match(self, uri: str) -> Optional[dict]:
        """The variables of ``uri`` (str, or list for exploded ones), or None
        when the whole URI does not match the template."""
        m = self._regex.fullmatch(uri) if isinstance(uri, str) else None
        if m is None:
            return None
        result: dict = {}
        query: list = []
        for index, part in enumerate(self._parts):
            captured = None if isinstance(part, str) else m.group(f"g{index}")
            if captured is None:
                continue
            if part.named:
                query.extend(pair.partition("=")[::2] for pair in captured.split("&") if pair)
            elif captured and not self._assign(part, captured, result):
                return None
        for expression in self._expressions:
            for var in expression.variables if expression.named else ():
                found = [unquote(v) for k, v in query if unquote(k) == var.name]
                if found:
                    result[var.name] = found if var.explode else found[0]
        return result

    @staticmethod
    def _assign(e: _Expression, captured: str, result: dict) -> bool:
        """Split one expression's text among its variables; False when it does not fit."""
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
