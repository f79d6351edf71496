"""Registering resources and resource templates (server/resources.py rule 5):
every mistake raises at registration, with its type and message, whichever way
the function is registered. Spec: server/resources.
"""
import functools
import gc

import pytest

from mcp_ref import Context, Server
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
    """Rule 5: the same type and message through ``add_resource`` and the decorator."""
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
    assert [resource.uri for resource in server.resources.resources()] == ["fixed://dup"]
    assert [template.uri_template for template in server.resources.templates.list()] == ["t://{page_ref}"]
