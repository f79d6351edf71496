"""Type hints read the same way on every supported Python (3.9 to 3.13).

Rules:

1. A union is ``typing.Union[...]`` (``Optional[X]`` included) or, from 3.10,
   a PEP 604 ``X | Y`` (``types.UnionType``): ``UNION_ORIGINS`` holds the
   origins that exist on the running Python, so code that asks "is this a
   union?" never names ``types.UnionType`` directly (3.9 has no such class).
2. ``get_type_hints`` is ``typing.get_type_hints(..., include_extras=True)``
   when that succeeds. When it fails, each annotation is evaluated on its own;
   a string that ``eval`` refuses because it writes ``X | Y`` (a module with
   ``from __future__ import annotations`` on 3.9, where classes have no ``|``)
   is evaluated again with every ``|`` read as ``typing.Union[X, Y]``. An
   annotation that still does not resolve (a class imported only under
   ``TYPE_CHECKING``) stays a string; the caller decides what a string means.
3. A string inside a builtin generic (``list["Node"]``, ``dict[str, "Node"]``)
   is resolved too: ``typing.get_type_hints`` does it only from 3.11 and
   leaves the bare string on 3.9 and 3.10. ``Literal`` values stay as written.
4. Before 3.11 ``typing.get_type_hints`` turned a function's ``x: T = None``
   into ``Optional[T]``; 3.11 stopped. A function's hints are read here as
   written on every version, so a tool's schema does not depend on the
   interpreter (``Annotated[int | None, ...] = None`` would otherwise nest a
   second ``anyOf`` on 3.10).
5. Why rule 2 instead of refusing: a tool module written for 3.10+ with
   ``from __future__ import annotations`` and ``int | None`` hints then lists
   and binds the same schema on 3.9, which is the Python of several long-term
   support systems people vendor this package into.

The kinds of hint schema/signature.py and schema/binding.py tell apart
(``_split_annotated``, ``_is_record``, ...) are here too. Pure: no I/O.
"""
import ast
import contextlib
import dataclasses
import inspect
import sys
import types
import typing
from collections import abc
from types import GenericAlias
from typing import Any, Union, get_args, get_origin

__all__ = ["UNION_ORIGINS", "is_union", "is_typeddict", "evaluate", "get_type_hints"]

UNION_ORIGINS: tuple = (Union, types.UnionType) if hasattr(types, "UnionType") else (Union,)

_UNION_NAME = "__mcp_ref_union__"        # how the rewritten expression names typing.Union


def is_union(tp) -> bool:
    """``Union[...]``, ``Optional[...]`` or (3.10+) ``X | Y``."""
    return typing.get_origin(tp) in UNION_ORIGINS


def is_typeddict(tp) -> bool:
    """A ``TypedDict`` class (``typing.is_typeddict`` is 3.10+; 3.9's classes
    already carry ``__required_keys__``)."""
    if hasattr(typing, "is_typeddict"):
        return typing.is_typeddict(tp)
    return (isinstance(tp, type) and not isinstance(tp, types.GenericAlias) and issubclass(tp, dict)
            and hasattr(tp, "__required_keys__") and hasattr(tp, "__total__"))


class _BarsToUnion(ast.NodeTransformer):
    """``X | Y`` -> ``Union[X, Y]`` in a type expression. Calls are left alone:
    ``Field(flags=A | B)`` inside ``Annotated`` is a value, not a type."""

    def visit_Call(self, node):
        return node

    def visit_BinOp(self, node):
        self.generic_visit(node)
        if not isinstance(node.op, ast.BitOr):
            return node
        members = ast.Tuple(elts=[node.left, node.right], ctx=ast.Load())
        return ast.Subscript(value=ast.Name(id=_UNION_NAME, ctx=ast.Load()), slice=members, ctx=ast.Load())


def evaluate(annotation, globalns: dict, localns=None):
    """One annotation as a type (rule 2); a string that does not resolve is returned as it is."""
    if isinstance(annotation, typing.ForwardRef):
        annotation = annotation.__forward_arg__
    if not isinstance(annotation, str):
        return annotation
    try:
        return eval(annotation, globalns, localns)
    except Exception as exc:
        if not isinstance(exc, TypeError) or "|" not in annotation:
            return annotation
    try:                                            # rule 2: again, with every | read as Union
        tree = _BarsToUnion().visit(ast.parse(annotation.strip(), mode="eval"))
        code = compile(ast.fix_missing_locations(tree), "<annotation>", "eval")
        return eval(code, globalns, {**(localns or {}), _UNION_NAME: Union})
    except Exception:
        return annotation


def _namespace(module_name) -> dict:
    """The globals of the module of that name, or {} when it is not loaded."""
    module = sys.modules.get(module_name or "")
    return vars(module) if module else {}


def _owners(obj) -> list:
    """``[(annotations, globals)]`` of ``obj``: a class's own and its bases' (oldest
    first, as typing does), else the object's."""
    if isinstance(obj, type):
        return [(base.__dict__.get("__annotations__", {}), _namespace(base.__module__))
                for base in reversed(obj.__mro__)]
    globalns = getattr(inspect.unwrap(obj), "__globals__", None) or _namespace(getattr(obj, "__module__", None))
    try:
        annotations = getattr(obj, "__annotations__", None) or {}
    except Exception:
        annotations = {}
    return [(annotations, globalns)]


# Before 3.11 typing.get_type_hints leaves strings inside list[...] / dict[...] unresolved
# (rule 3) and makes a function's None default Optional (rule 4).
_BEFORE_3_11 = sys.version_info < (3, 11)


def _resolve_nested(tp, globalns: dict, localns, depth: int = 0):
    """``tp`` with the strings and forward references among its arguments evaluated (rule 3)."""
    if isinstance(tp, (str, typing.ForwardRef)):
        tp = evaluate(tp, globalns, localns)
        if isinstance(tp, str) or depth > 20:
            return tp
    args = getattr(tp, "__args__", None)
    origin = typing.get_origin(tp)
    if not args or not isinstance(args, tuple) or origin is typing.Literal:
        return tp
    resolved = tuple(_resolve_nested(arg, globalns, localns, depth + 1) for arg in args)
    if all(new is old for new, old in zip(resolved, args)):
        return tp
    try:
        if isinstance(tp, types.GenericAlias):
            return types.GenericAlias(origin, resolved)
        return tp.copy_with(resolved)               # typing's aliases: Union, Optional, List, Annotated...
    except Exception:
        return tp


def get_type_hints(obj, localns=None) -> dict:
    """Type hints with ``Annotated`` kept (rules 2 to 4)."""
    hints = None
    if not _BEFORE_3_11 or isinstance(obj, type):
        with contextlib.suppress(Exception):
            hints = typing.get_type_hints(obj, localns=localns, include_extras=True)
        if hints is not None and not _BEFORE_3_11:
            return hints
    resolved = {}
    for annotations, globalns in _owners(obj):
        for name, annotation in annotations.items():
            hint = hints[name] if hints is not None and name in hints else evaluate(annotation, globalns, localns)
            resolved[name] = _resolve_nested(hint, globalns, localns)
    return resolved


# ---------------------------------------------------------------------- kinds of hint
_WRAPPERS = tuple(getattr(typing, name) for name in ("Required", "NotRequired", "ReadOnly") if hasattr(typing, name))
_LISTS = (list, abc.Sequence, abc.MutableSequence, abc.Iterable, abc.Collection)
_SETS = (set, frozenset, abc.Set, abc.MutableSet)
_MAPPINGS = (dict, abc.Mapping, abc.MutableMapping)


def _split_annotated(tp) -> tuple:
    """``Annotated[T, m...]`` -> ``(T, [m...])``; also unwraps Required/NotRequired and NewType."""
    if type(tp) is type:
        return tp, []                               # a plain class: nothing to unwrap
    metadata: list = []
    while True:
        if get_origin(tp) is typing.Annotated:
            metadata = list(tp.__metadata__) + metadata
            tp = tp.__origin__
        elif get_origin(tp) in _WRAPPERS:
            tp = get_args(tp)[0]
        elif hasattr(tp, "__supertype__"):
            tp = tp.__supertype__
        else:
            return tp, metadata


def _is_class(tp) -> bool:
    """A class, not a parametrized ``list[int]`` (which 3.9 and 3.10 report as a ``type``)."""
    return isinstance(tp, type) and not isinstance(tp, GenericAlias)


def _is_record(tp) -> bool:
    """A dataclass or TypedDict class: a JSON object with known properties."""
    return _is_class(tp) and (dataclasses.is_dataclass(tp) or is_typeddict(tp))


def _is_unknown(tp) -> bool:
    return tp is Any or isinstance(tp, (str, typing.ForwardRef, typing.TypeVar))
