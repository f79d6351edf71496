"""How a tool's arguments are checked and bound (rules 2 and 3 of tools.py).

``_compile`` makes the argument checker from the inputSchema (plain Python for
flat schemas, else jsonschema; without jsonschema, required keys only);
``_Binder`` turns checked JSON arguments into the keyword arguments of the
tool function, converting only what needs it (floats, enums, records...).
Spec: server/tools#calling-tools.
"""
from __future__ import annotations


from mcp_ref.schema import binding, signature, validation
from mcp_ref.errors import MissingDependency, get_logger

TYPE_CHECKING = False
if TYPE_CHECKING:          # names for annotations only
    from typing import Callable


log = get_logger("mcp_ref.server")

__all__ = []



# ---------------------------------------------------------------------- validation and binding
_warned_no_jsonschema: list = []


def _compile(schema: dict) -> Callable:
    """A checker for ``schema``; without jsonschema, one that checks required keys only
    (so a stdlib-only server still works), with a warning once."""
    try:
        return validation.compile_validator(schema)
    except MissingDependency:
        if not _warned_no_jsonschema:
            _warned_no_jsonschema.append(True)
            log.warning("jsonschema is not installed: tool arguments are only checked for required keys")
        required = tuple(schema.get("required", ()))

        def check(instance) -> str | None:
            missing = [key for key in required if not isinstance(instance, dict) or key not in instance]
            return f"missing required properties: {', '.join(missing)}" if missing else None
        return check


class _Checker:
    """A schema's checker, compiled on its first use (tools.py rule 8): a listing needs
    the schema, not its validator, and most tools of a large catalogue are never called."""

    __slots__ = ("schema", "check")

    def __init__(self, schema: dict):
        self.schema, self.check = schema, None

    def compiled(self) -> Callable:
        check = self.check
        if check is None:
            check = self.check = _compile(self.schema)
        return check

    def __call__(self, instance) -> str | None:
        return self.compiled()(instance)


def _needs_conversion(hint) -> bool:
    """Could ``binding.bind_arguments`` turn a schema-valid JSON value of this type into
    something else? (Floats, enums, records, tuples, bytes... do; str, int, bool, lists
    and dicts of them do not.)"""
    import inspect
    import typing

    from mcp_ref.schema.typehints import UNION_ORIGINS
    while typing.get_origin(hint) is typing.Annotated:
        hint = hint.__origin__
    if hint in (str, int, bool, dict, list, typing.Any, inspect.Parameter.empty, type(None)):
        return False
    origin = typing.get_origin(hint)
    if origin is typing.Literal:
        return False
    if origin in (list, dict) or origin in UNION_ORIGINS:
        return any(_needs_conversion(arg) for arg in typing.get_args(hint))
    return True


def _direct_params(fn: Callable, inject: list) -> list | None:
    """For what the fast path does not read (methods, ``Optional``, ``Literal``...): the
    parameters as ``[(name, hint, default)]`` when each can be bound as it is, or as a
    float (from an int), else None."""
    import inspect
    import typing

    from mcp_ref.schema.typehints import get_type_hints
    if not (inspect.isfunction(fn) or inspect.ismethod(fn)):
        return None
    try:
        hints = get_type_hints(fn)
        params = inspect.signature(fn).parameters
    except Exception:
        return None
    kinds = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    direct = []
    for name, p in params.items():
        if name in inject:
            continue
        hint = hints.get(name, typing.Any)
        if p.kind not in kinds or (hint is not float and _needs_conversion(hint)):
            return None
        direct.append((name, hint, signature.NO_DEFAULT if p.default is p.empty else p.default))
    return direct


class _Binder:
    """Arguments to keyword arguments. Parameters that need no conversion (see
    ``_direct_params``; a float converts from an int) are bound with a dict copy plus
    the context, prepared once; anything else goes through ``binding.bind_arguments``,
    which also words the errors."""

    __slots__ = ("fn", "inject", "direct", "required", "floats")

    def __init__(self, fn: Callable, inject: list, params: list | None):
        self.fn, self.inject = fn, tuple(inject)
        self.direct = self.required = None
        self.floats = ()
        if params is not None:
            self.direct = frozenset(name for name, _, _ in params)
            self.required = frozenset(name for name, _, default in params if default is signature.NO_DEFAULT)
            self.floats = tuple(name for name, hint, _ in params if hint is float)

    def __call__(self, arguments: dict, ctx) -> dict:
        if self.direct is not None and arguments.keys() <= self.direct and self.required <= arguments.keys():
            kwargs = dict(arguments)
            for name in self.floats:                # as binding._convert: int to float, not bool
                value = kwargs.get(name)
                if isinstance(value, int) and not isinstance(value, bool):
                    kwargs[name] = float(value)
            for name in self.inject:
                kwargs[name] = ctx
            return kwargs
        return binding.bind_arguments(self.fn, arguments, inject={name: ctx for name in self.inject})

