"""How a member of a wire object is decoded by its type hint (``Model.from_dict``'s
helpers), and the registry of content block tags.

Rules:

1. One decoder. Each type hint is read once into a function
   ``decode(value, path)`` (``decoder``); ``Model._from_wire`` (base.py) reads
   each class once into a plan of its members and calls these functions.
   Decoding a member is then one call, where walking the ``typing`` objects
   (``get_origin``, ``get_args``, ``issubclass``) on every member of every
   result cost a client about half of what ``call_tool`` spends above the
   session (``bench/README.md``, issue 17, target 6). There is no second
   decoder beside this one: what a hint accepts, the order of the checks and
   the words of each error are written once, here.
2. Basic JSON types are checked loosely: a ``float`` member takes an integer,
   an ``int`` member takes ``2.0`` (as ``2``), never a bool. A list or dict of
   a hinted item type is always a new container; a bare ``list``, ``dict`` or
   ``Any`` member is the peer's own value.
3. Unions are tried in order: a list by the first list member; an object
   among models by its ``type`` tag when the models are tagged (content
   blocks; two members with one tag: the first wins; a tag of another
   registered block still decodes to its class; an unknown tag to raw
   content), else by the first model whose required members are present;
   anything else by its JSON kind.
4. Every error is an ``InvalidParamsError`` naming the member's path
   (``"CallToolResult.content[1].data: expected string"``); the path is
   built only for members that are decoded further, not for those taken as
   they are.

Content blocks form a tagged union on ``"type"``; the registry that maps a
tag to its class (``CONTENT_TYPES``, filled by content.py) lives here because
decoding needs it.

Pure: no I/O, no threads. Spec: each revision's schema.json.
"""
from typing import Any, get_args, get_origin

from mcp_ref.errors import InvalidParamsError
from mcp_ref.schema.typehints import UNION_ORIGINS

__all__ = ["CONTENT_TYPES", "decoder", "exact_type", "as_is", "decode_tagged"]

# Wire "type" tag -> content block class. Filled by content.py.
CONTENT_TYPES: dict = {}
# The class that holds a block whose tag nobody registered (content.RawContent).
raw_content: list = []


_BASIC = {
    str: ("string", lambda v: isinstance(v, str)),
    bool: ("boolean", lambda v: isinstance(v, bool)),
    int: ("integer", lambda v: (isinstance(v, int) and not isinstance(v, bool))        # a bool is no integer
          or (isinstance(v, float) and v.is_integer())),
    float: ("number", lambda v: isinstance(v, (int, float)) and not isinstance(v, bool)),
    dict: ("object", lambda v: isinstance(v, dict)),
    list: ("array", lambda v: isinstance(v, list)),
}


def _type_label(tp: Any) -> str:
    """The words an error uses for the type a member should have ("string", "object")."""
    basic = _BASIC.get(tp) or _BASIC.get(get_origin(tp))      # list[X] is an array, dict[K, V] an object
    return basic[0] if basic else getattr(tp, "__name__", str(tp))


def _is_model(tp: Any) -> bool:
    """A ``Model`` subclass (a hint to decode as an object), not an instance: a class that
    decodes itself (base.py imports this module, so the test reads no name from it)."""
    return isinstance(tp, type) and callable(getattr(tp, "_from_wire", None))


def as_is(value: Any, path: str) -> Any:
    """The decoder of ``Any`` and of hints that say nothing checkable (rule 2)."""
    return value


_decoders: dict = {}            # hint -> its decoder


def decoder(tp: Any):
    """The function that decodes a member hinted ``tp`` (rule 1), made once per hint."""
    try:
        decode = _decoders.get(tp)
    except TypeError:                      # an unhashable hint: made each time it is asked for
        return _compile(tp)
    if decode is None:
        decode = _decoders[tp] = _compile(tp)
    return decode


def exact_type(tp: Any) -> Any:
    """The basic type whose exact instances a member hinted ``tp`` takes unchanged
    (``str`` for ``Optional[str]``), or None: the plan's shortcut past the decoder."""
    if get_origin(tp) in UNION_ORIGINS:
        members = [a for a in get_args(tp) if a is not type(None)]
        return exact_type(members[0]) if len(members) == 1 else None
    return tp if tp in _BASIC else None


def _compile(tp: Any):
    """A hint as a decoder: basic JSON types checked loosely, models decoded by their
    class, lists and dicts item by item, unions in order (rules 2 and 3)."""
    if tp is Any:
        return as_is
    origin = get_origin(tp)
    if origin in UNION_ORIGINS:
        return _union_decoder([a for a in get_args(tp) if a is not type(None)])
    if origin is list:
        args = get_args(tp)
        item = decoder(args[0] if args else Any)

        def decode_list(value, path):
            if not isinstance(value, list):
                raise InvalidParamsError(f"{path}: expected array")
            items = []              # a loop: a list comprehension is a call of its own before 3.12
            for i, member in enumerate(value):
                items.append(item(member, f"{path}[{i}]"))
            return items
        return decode_list
    if origin is dict:
        args = get_args(tp)
        item = decoder(args[1] if len(args) == 2 else Any)

        def decode_dict(value, path):
            if not isinstance(value, dict):
                raise InvalidParamsError(f"{path}: expected object")
            return {key: item(member, f"{path}.{key}") for key, member in value.items()}
        return decode_dict
    if _is_model(tp):
        return tp._from_wire
    if tp not in _BASIC:
        return as_is
    label, ok = _BASIC[tp]

    def decode_basic(value, path):
        if not ok(value):
            raise InvalidParamsError(f"{path}: expected {label}")
        return int(value) if tp is int and isinstance(value, float) else value
    return decode_basic


def _union_decoder(members: list):
    """The decoder of a union of ``members`` (``None`` left out), tried as rule 3 says."""
    if len(members) == 1:
        return decoder(members[0])
    if Any in members:
        return as_is
    as_list = next((decoder(m) for m in members if get_origin(m) is list or m is list), None)
    models = [m for m in members if _is_model(m)]
    # Reversed, so that the first member of a tag wins.
    by_tag = {model.TYPE: model._from_wire for model in reversed(models) if getattr(model, "TYPE", None) is not None}
    kinds = [(_BASIC.get(m, _BASIC[dict])[1], decoder(m)) for m in members
             if m in _BASIC or get_origin(m) is dict]
    names = ", ".join(m.__name__ for m in models)
    labels = " or ".join(_type_label(m) for m in members)

    def decode_union(value, path):
        if as_list is not None and isinstance(value, list):
            return as_list(value, path)
        if models and isinstance(value, dict):
            if by_tag:                                     # tagged models (content blocks)
                return decode_tagged(value, by_tag, path)
            # Untagged alternatives (e.g. text or blob resource contents): the first
            # whose required members are all present.
            for model in models:
                if model._has_required(value):
                    return model._from_wire(value, path)
            raise InvalidParamsError(f"{path}: expected one of {names}")
        for ok, decode in kinds:
            if ok(value):
                return decode(value, path)
        raise InvalidParamsError(f"{path}: expected {labels}")
    return decode_union


def decode_tagged(value: dict, by_tag: dict, path: str) -> Any:
    """A content block by its ``type`` tag: the union's own member for it
    (``by_tag``: tag -> decoder), else the registry's class; an unknown tag is kept
    whole as raw content, so nothing a peer sent is lost."""
    tag = value.get("type")
    if not isinstance(tag, str):
        raise InvalidParamsError(f"{path}.type: expected string")
    decode = by_tag.get(tag)
    if decode is not None:
        return decode(value, path)
    # A known block in a place that does not list it is still decoded to its
    # class; checking where a type may appear is the caller's business.
    if tag in CONTENT_TYPES:
        return CONTENT_TYPES[tag]._from_wire(value, path)
    if raw_content:
        return raw_content[0]._from_wire(value, path)
    raise InvalidParamsError(f"{path}.type: unknown type {tag!r}")
