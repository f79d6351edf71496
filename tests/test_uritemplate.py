"""URI templates (RFC 6570 subset) for resource templates: parsing, expansion,
matching, round trips. Spec: server/resources#resource-templates."""
import pytest

from mcp_ref.schema.uritemplate import UriTemplate

# Values from the examples of RFC 6570 section 3.2.
VALUES = {
    "var": "value", "hello": "Hello World!", "path": "/foo/bar", "empty": "",
    "list": ["red", "green", "blue"], "x": "1024", "y": "768", "pct": "50%25 off",
}

EXPANSIONS = [
    ("{var}", "value"),
    ("{hello}", "Hello%20World%21"),
    ("{empty}", ""),
    ("{undef}", ""),
    ("{x,y}", "1024,768"),
    ("{x,undef,y}", "1024,768"),
    ("{var:3}", "val"),
    ("{list}", "red,green,blue"),
    ("{list*}", "red,green,blue"),
    ("{+var}", "value"),
    ("{+hello}", "Hello%20World!"),
    ("{+path}/here", "/foo/bar/here"),
    ("here?ref={+path}", "here?ref=/foo/bar"),
    ("{+path:6}/here", "/foo/b/here"),
    ("{+pct}", "50%25%20off"),
    ("{path}", "%2Ffoo%2Fbar"),
    ("{#var}", "#value"),
    ("{#hello}", "#Hello%20World!"),
    ("X{#undef}", "X"),
    ("X{.var}", "X.value"),
    ("X{.x,y}", "X.1024.768"),
    ("{/var}", "/value"),
    ("{/var,x}/here", "/value/1024/here"),
    ("{/list*}", "/red/green/blue"),
    ("{/list}", "/red,green,blue"),
    ("{?x,y}", "?x=1024&y=768"),
    ("{?x,y,undef}", "?x=1024&y=768"),
    ("{?empty}", "?empty="),
    ("{?undef}", ""),
    ("{?list}", "?list=red,green,blue"),
    ("{?list*}", "?list=red&list=green&list=blue"),
    ("?fixed=yes{&x}", "?fixed=yes&x=1024"),
    ("{&x,y}", "&x=1024&y=768"),
    ("file:///{+path}{?x}", "file:////foo/bar?x=1024"),
    ("no expressions", "no expressions"),
]


@pytest.mark.parametrize("template, expected", EXPANSIONS)
def test_expand(template, expected):
    assert UriTemplate(template).expand(**VALUES) == expected


def test_expand_other_values():
    t = UriTemplate("db://{table}/{id}{?active}")
    assert t.expand(table="users", id=42, active=True) == "db://users/42?active=true"
    assert t.expand(table="a b", id="é") == "db://a%20b/%C3%A9"
    assert UriTemplate("{/list*}").expand(list=[]) == ""
    assert UriTemplate("{?list}").expand(list=()) == ""


MATCHES = [
    ("weather://{city}/current", "weather://paris/current", {"city": "paris"}),
    ("weather://{city}/current", "weather://new%20york/current", {"city": "new york"}),
    ("file:///{name}.txt", "file:///notes.v2.txt", {"name": "notes.v2"}),
    ("file:///{+path}", "file:///a/b/c.txt", {"path": "a/b/c.txt"}),
    ("file:///{+path}", "file:///a/b?c", {"path": "a/b?c"}),
    ("file:///{+path}{?rev}", "file:///a/b?rev=3", {"path": "a/b", "rev": "3"}),
    ("file:///{+path}{?rev}", "file:///a/b", {"path": "a/b"}),
    ("users://{id}/posts/{post}", "users://7/posts/99", {"id": "7", "post": "99"}),
    ("{x,y}", "1024,768", {"x": "1024", "y": "768"}),
    ("{x,y}", "1024", {"x": "1024"}),
    ("{list*}", "red,green,blue", {"list": ["red", "green", "blue"]}),
    ("{list}", "red,green", {"list": "red,green"}),
    ("repo://{owner}{/path*}", "repo://me/src/a%2Fb/c", {"owner": "me", "path": ["src", "a/b", "c"]}),
    ("repo://{owner}{/path*}", "repo://me", {"owner": "me"}),
    ("repo://{owner}{/rest}", "repo://me/x", {"owner": "me", "rest": "x"}),
    ("doc://{id}{#section}", "doc://1#intro/part", {"id": "1", "section": "intro/part"}),
    ("doc://{id}{#section}", "doc://1", {"id": "1"}),
    ("X{.ext}", "X.json", {"ext": "json"}),
    ("search://q{?term,lang}", "search://q?lang=fr&term=caf%C3%A9", {"term": "café", "lang": "fr"}),
    ("search://q{?term,lang}", "search://q?term=x&other=1", {"term": "x"}),
    ("search://q{?term,lang}", "search://q", {}),
    ("search://q{?term}", "search://q?term=", {"term": ""}),
    ("search://q{?term}{&page}", "search://q?term=a&page=2", {"term": "a", "page": "2"}),
    ("search://q{?term}{&page}", "search://q?page=2&term=a", {"term": "a", "page": "2"}),
    ("search://q?fixed=1{&page}", "search://q?fixed=1&page=2", {"page": "2"}),
    ("tags://{?tag*}", "tags://?tag=a&tag=b", {"tag": ["a", "b"]}),
    ("static://fixed", "static://fixed", {}),
    ("a.b*(c)+[d]|e^$/{x}", "a.b*(c)+[d]|e^$/1", {"x": "1"}),
]


@pytest.mark.parametrize("template, uri, expected", MATCHES)
def test_match(template, uri, expected):
    assert UriTemplate(template).match(uri) == expected


NON_MATCHES = [
    ("weather://{city}/current", "weather://pa/ris/current"),     # {var} does not span "/"
    ("weather://{city}/current", "weather:///current"),           # nor match nothing
    ("weather://{city}/current", "weather://paris/current/x"),    # anchored at the end
    ("weather://{city}/current", "xweather://paris/current"),     # and at the start
    ("weather://{city}", "weather://paris?x=1"),
    ("weather://{city}", "weather://paris#top"),
    ("file:///{name}.txt", "file:///notes.md"),
    ("a.b*(c)/{x}", "aXb*(c)/1"),                                 # "." is not a wildcard
    ("a.b*(c)/{x}", "a.bbb(c)/1"),                                # nor "*"
    ("static://fixed", "static://fixed2"),
    ("repo://{owner}{/rest}", "repo://me/x/y"),                   # one segment only
    ("{x,y}", "1,2,3"),
    ("file:///{+path}", "file:///"),
    ("file:///{+path}", "file:///a#b"),
]


@pytest.mark.parametrize("template, uri", NON_MATCHES)
def test_no_match(template, uri):
    assert UriTemplate(template).match(uri) is None


ROUND_TRIPS = [
    ("weather://{city}/current", {"city": "São Paulo/Centro"}),
    ("file:///{+path}", {"path": "dir/sub dir/file%.txt"}),
    ("file:///{+path}{?rev,mode}", {"path": "a/b", "rev": "7", "mode": "r w"}),
    ("repo://{owner}{/path*}", {"owner": "o?x#y", "path": ["a", "b/c", "d e"]}),
    ("tags://all{?tag*}", {"tag": ["x&y", "z=1"]}),
    ("doc://{id}{#section}", {"id": "42", "section": "a,b"}),
    ("pair://{a,b}", {"a": "1", "b": "two words"}),
]


@pytest.mark.parametrize("template, values", ROUND_TRIPS)
def test_round_trip(template, values):
    t = UriTemplate(template)
    assert t.match(t.expand(**values)) == values


INVALID = [
    ("file:///{path", "unclosed"),
    ("file:///path}", "unmatched"),
    ("file:///{}", "empty variable name"),
    ("{a,}", "empty variable name"),
    ("{a{b}}", "unclosed"),
    ("{;a}", "unsupported operator"),
    ("{=a}", "unsupported operator"),
    ("{a b}", "invalid variable name"),
    ("{a-b}", "invalid variable name"),
    ("{a:0}", "prefix"),
    ("{a:x}", "prefix"),
]


@pytest.mark.parametrize("template, problem", INVALID)
def test_invalid_templates(template, problem):
    with pytest.raises(ValueError, match=problem):
        UriTemplate(template)


@pytest.mark.parametrize("template, message", [
    ("file:///{path", "unclosed '{' at position 8 in URI template 'file:///{path'"),
    ("a}{b}", "unmatched '}' at position 1 in URI template 'a}{b}'"),
    ("{x}/{y}/{;z}", "unsupported operator ';' in the expression at position 8"),
    ("zz{a:x}", "bad prefix modifier 'a:x' in the expression at position 2"),
    ("q{a-b}", "invalid variable name 'a-b' in the expression at position 1"),
])
def test_a_mistake_is_named_with_its_position(template, message):
    """Expressions are parsed once per text and shared (module docstring): the first
    template to hold a bad one still gets its own position in the message."""
    with pytest.raises(ValueError) as info:
        UriTemplate(template)
    assert str(info.value) == message


def _oracle_parts(template: str):
    """The parts the parser made before it cut templates with ``str.split``: each piece
    found by a regular expression, parsed as it was met; or the first mistake's message."""
    import re
    from mcp_ref.schema.uritemplate import _parse_expression
    parts = []
    try:
        for m in re.finditer(r"\{([^{}]*)\}|[^{}]+|[{}]", template):
            if m.group() == "{":
                raise ValueError(f"unclosed '{{' at position {m.start()} in URI template {template!r}")
            if m.group() == "}":
                raise ValueError(f"unmatched '}}' at position {m.start()} in URI template {template!r}")
            parts.append(m.group() if m.group(1) is None else _parse_expression(m.group(1), m.start()))
    except ValueError as exc:
        return str(exc)
    return [p if isinstance(p, str) else (p.operator, p.variables) for p in parts]


def test_templates_are_cut_where_the_regular_expression_cut_them():
    """schema/uritemplate.py cuts a template at its braces with ``str.split``: the same parts,
    or the same first mistake at the same position, as the regular expression it
    replaced, on random templates."""
    import random
    rng = random.Random(6570)
    for _ in range(3000):
        template = "".join(rng.choice("{}ab,*:1/?+#.") for _ in range(rng.randint(0, 10)))
        try:
            parts = [p if isinstance(p, str) else (p.operator, p.variables) for p in UriTemplate(template)._parts]
        except ValueError as exc:
            parts = str(exc)
        assert parts == _oracle_parts(template), template


def test_templates_share_the_expressions_they_hold_alike():
    first, second = UriTemplate("a://{id}/x"), UriTemplate("b://{id}{?q}")
    assert first._parts[1] is second._parts[1] and first.variables == ["id"] and second.variables == ["id", "q"]
    assert second.match("b://7?q=z") == {"id": "7", "q": "z"} and first.expand(id="7") == "a://7/x"


def test_variables_and_is_template():
    t = UriTemplate("x://{a}/{+b}{/c*}{?d,a}{&e}{#f}")
    assert t.variables == ["a", "b", "c", "d", "e", "f"]
    assert t.is_template
    assert not UriTemplate("x://plain").is_template
    assert UriTemplate("x://plain").variables == []
    assert str(UriTemplate("x://{a}").template) == "x://{a}"


def test_match_rejects_non_strings():
    assert UriTemplate("x://{a}").match(None) is None


# ---------------------------------------------------------------------- linear matching
# The regular expressions ``match`` used before it became linear: the oracle for the
# split a backtracking matcher picks. Only run on short URIs, where backtracking is cheap.
_ORACLE = {"": r"(?P<{g}>[^/?#]+)", "+": r"(?P<{g}>[^#]+?)", "#": r"(?:#(?P<{g}>.*))?",
           ".": r"(?P<{g}>(?:\.[^/?#.]*)*)", "/": r"(?P<{g}>(?:/[^/?#]*)*)",
           "?": r"(?:\?(?P<{g}>[^#]*))?", "&": r"(?:&(?P<{g}>[^#]*))?"}


def _oracle_match(template: UriTemplate, uri: str):
    import re
    parts = template._parts
    regex = re.compile("".join(re.escape(p) if isinstance(p, str) else _ORACLE[p.operator].format(g=f"g{i}")
                               for i, p in enumerate(parts)), re.DOTALL)
    m = regex.fullmatch(uri)
    return None if m is None else [None if isinstance(p, str) else (m.group(f"g{i}") or None)
                                   for i, p in enumerate(parts)]


@pytest.mark.req("RES-7")
def test_linear_matching_splits_as_a_backtracking_regex_would():
    import random
    from mcp_ref.schema.uritemplate import _Matcher
    rng = random.Random(6570)
    pieces = ["{a}", "{+b}", "{#c}", "{.d}", "{/e}", "{?f}", "{&g}", "-", "/", "x", ".", "?", "#", "&", "{h,i}"]
    checked = matched = 0
    for _ in range(3000):
        template = UriTemplate("".join(rng.choice(pieces) for _ in range(rng.randint(1, 4))))
        uri = "".join(rng.choice("ax-/.?#&,=") for _ in range(rng.randint(0, 9)))
        if rng.random() < 0.5:                        # half of them expanded from the template itself
            uri = template.expand(**{name: "".join(rng.choice("ax-/.") for _ in range(rng.randint(0, 3)))
                                     for name in template.variables})
        got = _Matcher(template._parts, uri).run()
        got = None if got is None else [c or None for c in got]
        assert got == _oracle_match(template, uri), (template, uri)
        checked, matched = checked + 1, matched + (got is not None)
    assert matched > 1000, matched                     # the sample exercises matches, not only refusals


@pytest.mark.req("RES-7")
@pytest.mark.parametrize("template, uri", [
    ("cat://" + "".join("{v%d}" % i for i in range(12)), "cat://" + "a" * 3000 + "/"),
    ("cat://" + "-".join("{v%d}" % i for i in range(12)), "cat://" + "a-" * 1500 + "/"),
    ("cat://" + "".join("{+v%d}" % i for i in range(12)), "cat://" + "a" * 3000 + "#"),
    ("cat://" + "".join("{/v%d*}{.w%d*}" % (i, i) for i in range(6)), "cat://" + "/a.b" * 800 + "#"),
    ("cat://x" + "".join("{?v%d}{&w%d}" % (i, i) for i in range(6)), "cat://x?" + "&a" * 1500 + "#"),
])
def test_templates_built_for_backtracking_are_matched_in_linear_time(template, uri):
    """Each of these took a backtracking matcher longer than the age of the universe
    (C(3000, 12) splits); the thread must finish well within the join bound."""
    import threading
    results = []
    worker = threading.Thread(target=lambda: results.append(UriTemplate(template).match(uri)), daemon=True)
    worker.start()
    worker.join(20)
    assert not worker.is_alive(), f"match({template!r}) is still running"
    assert results == [None]
    assert UriTemplate(template).match(uri[:-1]) is not None    # and the same URI without its last character matches


def test_variables_of_checks_as_parsing_does_and_reads_a_known_expression_alone(monkeypatch):
    """``variables_of`` (what a server keeps of a registered template): the variables of
    ``UriTemplate(t)`` or its error, type and message, on random templates, before and
    after their expressions are known; a template of one known expression is read
    without cutting it into parts."""
    import random
    from mcp_ref.schema import uritemplate
    from mcp_ref.schema.uritemplate import variables_of

    def outcome(read, template):
        try:
            return tuple(read(template))
        except (TypeError, ValueError) as exc:
            return type(exc), str(exc)
    rng = random.Random(6571)
    for _ in range(3000):
        template = "".join(rng.choice(["{", "}", "a", "b", ",", "*", ":1", "/", "?", "+", "#", ".", "x://"])
                           for _ in range(rng.randint(0, 10)))
        for _ in range(2):
            assert outcome(variables_of, template) == outcome(lambda t: UriTemplate(t).variables, template), template
    assert outcome(variables_of, 5) == (TypeError, "a URI template must be a string")
    assert variables_of("x://{a}/{+b}{/c*}{?d,a}") == ("a", "b", "c", "d") and variables_of("x://plain") == ()
    variables_of("x://r0/{id}")

    def no_parts(template):
        raise AssertionError("cut into parts")
    monkeypatch.setattr(uritemplate, "_parse", no_parts)
    assert variables_of("x://r1/{id}") == ("id",) and variables_of("{id}") == ("id",)
