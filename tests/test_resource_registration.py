"""Registering resources and resource templates (server/resources.py rules 5 and 6):
every mistake raises at registration, with its type and message, whichever path
reads the function; a fixed URI's plain function of no parameters is not read at
all; a template's function is checked once per shape and set of variables; a
registered template keeps no parsed ``UriTemplate`` until its first match.
Spec: server/resources.
"""
import functools
import gc

import pytest

from mcp_ref import Context, Server
from mcp_ref.schema import signature, signature_fast
from mcp_ref.schema.uritemplate import UriTemplate


def _wrapped_zero():
    """A function of no parameters that inspect reads as ``inner``'s (``__wrapped__``)."""
    def inner(a):
        return a

    @functools.wraps(inner)
    def outer():
        return "x"
    return outer


class _CallableWithArgument:
    def __call__(self, a):
        return a


def _posonly(a, /):
    return a


def _template_posonly(id, /):
    return id


def _context_named_id(id: Context) -> str:
    return "x"


def _not_fast(id: "list[str]", extra: int) -> str:          # noqa: F821 (a string the full path reads)
    return "x"


def _page(page_ref: str) -> str:
    return page_ref


FIXED = "the function of a fixed URI takes no arguments"
# (function or contents, uri, options, the error's type and message or None) in order, on one server.
MISTAKES = [
    (lambda name: name, "fixed://x", {}, ValueError, f"resource 'fixed://x': {FIXED} (it takes name); use a URI template"),
    (_wrapped_zero(), "fixed://w", {}, ValueError, f"resource 'fixed://w': {FIXED} (it takes a); use a URI template"),
    (_CallableWithArgument(), "fixed://c", {}, ValueError,
     f"resource 'fixed://c': {FIXED} (it takes a); use a URI template"),
    (_posonly, "fixed://p", {}, TypeError, "_posonly: positional-only parameter 'a' cannot be given by name"),
    (lambda: "x", "t://{id", {}, ValueError, "unclosed '{' at position 4 in URI template 't://{id'"),
    (lambda: "x", "t://}x", {}, ValueError, "unmatched '}' at position 4 in URI template 't://}x'"),
    (lambda: "x", "t://{;x}", {}, ValueError, "unsupported operator ';' in the expression at position 4"),
    (lambda: "x", "t://{a:0}", {}, ValueError, "bad prefix modifier 'a:0' in the expression at position 4"),
    (lambda: "x", "t://{a-b}", {}, ValueError, "invalid variable name 'a-b' in the expression at position 4"),
    (lambda: "x", "t://{}", {}, ValueError, "empty variable name in the expression {} at position 4"),
    (lambda: "x", "t://{a}}", {}, ValueError, "unmatched '}' at position 7 in URI template 't://{a}}'"),
    (lambda other: other, "t://{id}", {}, ValueError,
     "resource template 't://{id}': variables without a parameter: id; required parameters not in the template: other"),
    (lambda id, extra: id, "t://{id}", {}, ValueError,
     "resource template 't://{id}': required parameters not in the template: extra"),
    (lambda other: other, "t://{id}{?q}", {}, ValueError, "resource template 't://{id}{?q}': variables without a "
     "parameter: id, q; required parameters not in the template: other"),
    (_context_named_id, "t://{id}", {}, ValueError, "resource template 't://{id}': variables without a parameter: id"),
    (_template_posonly, "t://{id}", {}, TypeError,
     "_template_posonly: positional-only parameter 'id' cannot be given by name"),
    (_not_fast, "t://{id}", {}, ValueError, "resource template 't://{id}': required parameters not in the template: extra"),
    (_page, "t://{page_ref}", {}, None, None),
    (_page, "u://{page_ref}/{other}", {}, ValueError,
     "resource template 'u://{page_ref}/{other}': variables without a parameter: other"),
    (lambda: "x", "fixed://a", {"annotations": "bad"}, TypeError, "expected Annotations or a dict, not str"),
    (lambda: "x", "fixed://b", {"icons": ["bad"]}, TypeError, "expected Icon or a dict, not str"),
    ("text", "t://{id}", {}, ValueError, "resource template 't://{id}': variables without a parameter: id"),
    (lambda: "x", "fixed://dup", {}, None, None),
    (lambda: "y", "fixed://dup", {}, ValueError, "a resource 'fixed://dup' is already registered"),
    (_page, "t://{page_ref}", {}, ValueError, "a resource template 't://{page_ref}' is already registered"),
]


@pytest.mark.parametrize("via", ["add_resource", "decorator"])
def test_every_mistake_raises_at_registration_with_its_type_and_message(via):
    """Rule 6's shortcuts (no reading for a function of no parameters, a template's
    variables read without keeping its parts, the check kept per shape) change no
    error: the same type and message as reading everything, for each path."""
    server = Server("mistakes")
    for fn, uri, options, error, message in MISTAKES:
        register = (lambda: server.add_resource(fn, uri, **options)) if via == "add_resource" else (
            lambda: server.resource(uri, **options)(fn))
        if error is None:
            register()
            continue
        with pytest.raises(error) as info:
            register()
        assert str(info.value) == message, uri
    if via == "add_resource":
        with pytest.raises(TypeError) as info:
            server.add_resource(lambda: "x", 5)
        assert str(info.value) == "a URI template must be a string"
    assert sorted(server.resources._static) == ["fixed://dup"]
    assert sorted(server.resources._templates) == ["t://{page_ref}"]


def test_a_plain_function_of_no_parameters_is_not_read(monkeypatch):
    """Rule 6: a fixed URI's plain function of no parameters has nothing to check and
    nothing to inject, said by its code alone: no shape, no schema, no signature; the
    others (a parameter, a ``Context``, ``__wrapped__``, a callable object) are read."""
    reads = []
    shape_of, input_schema = signature_fast.shape_of, signature.input_schema
    monkeypatch.setattr(signature_fast, "shape_of", lambda fn, *a: reads.append(fn) or shape_of(fn, *a))
    monkeypatch.setattr(signature, "input_schema", lambda fn, **k: reads.append(fn) or input_schema(fn, **k))
    server = Server("lean")
    plain = [eval("lambda: 'x'") for _ in range(20)]
    for i, fn in enumerate(plain):
        server.resource(f"r://{i}")(fn)

    @server.resource("r://annotated")
    def annotated() -> str:
        return "x"
    assert reads == []
    entries = server.resources._static
    assert all(entry._inject == () and entry._item is None for entry in entries.values())

    def with_context(ctx: Context) -> str:
        return "x"
    wrapped, callable_object = _wrapped_zero(), _CallableWithArgument()
    server.resource("r://context")(with_context)
    assert with_context in reads and entries["r://context"].inject == ["ctx"]
    for uri, fn in (("r://wrapped", wrapped), ("r://object", callable_object)):
        with pytest.raises(ValueError, match=FIXED):
            server.resource(uri)(fn)
        assert fn in reads
    assert server.resources.find("r://annotated")[0].fn is annotated


def test_a_template_function_is_checked_once_per_shape_and_variables(monkeypatch):
    """Rule 6: 30 templates ``x://rN/{page_ref}`` of functions of one shape read that
    shape's schema for the check once; other variables, or another shape (a default
    more), are checked on their own, and a mismatch still raises."""
    monkeypatch.setattr(signature_fast, "_SHAPES", {})
    checks = []
    input_schema = signature.input_schema
    monkeypatch.setattr(signature, "input_schema", lambda fn, **k: checks.append(fn) or input_schema(fn, **k))
    namespace: dict = {}
    exec("".join(f"def r{i}(page_ref: str) -> str:\n    return page_ref\n" for i in range(30))
         + "def other(page_ref: str, size: int = 1) -> str:\n    return page_ref\n", namespace)
    server = Server("checks")
    for i in range(30):
        server.resource(f"x://r{i}/{{page_ref}}")(namespace[f"r{i}"])
    assert len(checks) == 1
    server.resource("y://{page_ref}{?page_ref}")(namespace["r0"])       # the same variable, twice
    server.resource("z://{page_ref}")(namespace["other"])
    assert len(checks) == 2
    with pytest.raises(ValueError, match="variables without a parameter: size2"):
        server.resource("w://{page_ref}/{size2}")(namespace["r1"])
    with pytest.raises(ValueError, match="variables without a parameter: size2"):
        server.resource("w://{page_ref}/{size2}")(namespace["r2"])
    assert len(server.resources._templates) == 32


def test_a_registered_template_is_parsed_again_on_its_first_match_only():
    """Rule 6: registering a template checks its syntax and keeps its variable names,
    not its parts; the ``UriTemplate`` is made for the first match, once. So a
    template's entry is one object for the garbage collector, not three."""
    server = Server("lazy")
    namespace: dict = {}
    exec("".join(f"def r{i}(id: str) -> str:\n    return 'item ' + id\n" for i in range(300)), namespace)
    functions = [namespace[f"r{i}"] for i in range(300)]
    for fn in functions:                    # what reading a function makes, made before counting
        fn.__annotations__, fn.__dict__
    server.resource("warm://{id}")(namespace["r0"])
    gc.collect()
    before = len(gc.get_objects())
    for i, fn in enumerate(functions):
        server.resource(f"t://r{i}/{{id}}")(fn)
    gc.collect()
    assert len(gc.get_objects()) - before <= 300 + 10
    entry = server.resources._templates["t://r7/{id}"]
    assert entry._template is None and entry.variables == ("id",)
    read = server._request_handlers["resources/read"][0]

    class Ctx:
        protocol_version = "2025-11-25"
    assert read(Ctx(), {"uri": "t://r7/42"})["contents"][0]["text"] == "item 42"
    assert isinstance(entry._template, UriTemplate) and entry.template is entry._template
    assert entry.template.match("t://r7/x") == {"id": "x"}
