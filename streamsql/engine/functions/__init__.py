"""SQL functions and operators as one table (as sqlglot keeps dialect differences as tables).

Each :class:`~.spec.Fn` holds what the engine knows of one function: its type rule (the dialect
asks it), its Python evaluator (the local runtime and constant folding), its monotonicity in
ROWTIME, the calculator errors it can raise, and its Arrow form where one is exact. The dialect
and :mod:`streamsql.engine.expr` look functions up here; none of them has a list of its own.
Each runtime renders the table its own way: the Spark runtime's SQL of every entry is
``runtime/spark/sqlfunctions/`` (as Ibis keeps each backend's compiler with the backend),
held to this table row by row by ``tests/test_functions.py``.
"""
from __future__ import annotations

from . import cast, logic, numeric, temporal, text
from .cast import cast_value, double_text
from .errors import KINDS, CalcError, ErrorKind
from .spec import CONSTANT, INCREASING, NOT_MONOTONIC, TS_MAX, TS_MIN, Fn

#: name -> Fn, every function a typed expression (``expr.Call``) may carry
TABLE: dict[str, Fn] = {f.name: f for mod in (numeric, temporal, cast, text, logic) for f in mod.TABLE}


def get(name: str) -> Fn:
    try:
        return TABLE[name]
    except KeyError:
        raise ValueError(f"unknown function {name}") from None


def can_fail(e) -> bool:
    """Whether evaluating ``e`` can raise a calculator error (some call in it can)."""
    stack = [e]
    while stack:
        x = stack.pop()
        fn = getattr(x, "fn", None)
        if fn is not None and TABLE[fn].errors and may_fail(x):
            return True
        stack.extend(x.children())
    return False


def may_fail(call) -> bool:
    """Table entries list what a function can raise for some argument types; a few calls are
    known safe (casts to strings, widening numeric casts)."""
    if call.fn == "CAST":
        src, dst = call.args[0].type, call.type
        if dst.is_string or src.name == dst.name == "TIMESTAMP":
            return False
        if src.is_integer and dst.is_integer:
            from ..types import INT_BITS
            return INT_BITS[src.name] > INT_BITS[dst.name]
        if src.is_integer and dst.name == "DOUBLE":
            return False
    return True


__all__ = ["TABLE", "Fn", "get", "can_fail", "may_fail", "CalcError", "ErrorKind", "KINDS", "cast_value",
           "double_text", "INCREASING", "CONSTANT", "NOT_MONOTONIC", "TS_MIN", "TS_MAX"]
