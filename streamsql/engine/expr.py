"""Typed scalar expressions: the analyzed form of SQL expressions, and their Python evaluator.

The analyzer (``engine/sql``) resolves names and types and builds these nodes; the local runtime
compiles them to Python closures here (never ``eval``), and the Spark runtime renders the same
nodes as Spark SQL (``runtime/spark/sqlgen.py``). Both follow SQL, not Python or Spark: integer
division truncates toward zero, comparisons with NULL are unknown, AND/OR use three-valued logic.

A row is a tuple; ``Col(i)`` reads position ``i``. ``Rowtime(k)`` is the rowtime of input ``k``
(0 for single-input operators; a join numbers its inputs left to right).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

from . import functions as F
from . import time as sqltime
from .types import SqlType


class Expr:
    type: SqlType

    def children(self) -> Sequence["Expr"]:
        return ()


@dataclass(frozen=True, eq=False)
class Col(Expr):
    index: int
    name: str
    type: SqlType
    text: str | None = field(default=None, repr=False)   # as written, for messages

    def __repr__(self):
        return f"${self.index}:{self.name}"


@dataclass(frozen=True, eq=False)
class Rowtime(Expr):
    input: int = 0
    type: SqlType = field(default=SqlType("TIMESTAMP", nullable=False))

    def __repr__(self):
        return f"ROWTIME#{self.input}"


@dataclass(frozen=True, eq=False)
class Lit(Expr):
    value: Any
    type: SqlType

    def __repr__(self):
        return f"Lit({self.value!r}:{self.type})"


@dataclass(frozen=True, eq=False)
class Call(Expr):
    """``fn`` names an entry of the function table (:mod:`streamsql.engine.functions`); ``arg``
    carries a non-expression operand (the unit of FLOOR_TO, the target type of CAST, ...);
    ``text`` is the expression as the query wrote it (calculator error messages quote it)."""

    fn: str
    args: tuple
    type: SqlType
    arg: Any = None
    text: str | None = field(default=None, repr=False)   # as written, for messages

    def children(self):
        return self.args

    def __repr__(self):
        extra = f"[{self.arg}]" if self.arg is not None else ""
        return f"{self.fn}{extra}({', '.join(map(repr, self.args))})"


def walk(e: Expr):
    yield e
    for c in e.children():
        yield from walk(c)


def uses_rowtime(e: Expr) -> bool:
    return any(isinstance(x, Rowtime) for x in walk(e))


def columns_used(e: Expr) -> set[int]:
    return {x.index for x in walk(e) if isinstance(x, Col)}


def remap(e: Expr, cols: Callable[[Col], Expr] | None = None,
          rowtime: Callable[[Rowtime], Expr] | None = None) -> Expr:
    """A copy of ``e`` with column and rowtime references replaced."""
    if isinstance(e, Col):
        return cols(e) if cols else e
    if isinstance(e, Rowtime):
        return rowtime(e) if rowtime else e
    if isinstance(e, Call):
        return Call(e.fn, tuple(remap(a, cols, rowtime) for a in e.args), e.type, e.arg, e.text)
    return e


# --------------------------------------------------------------------------- monotonicity

INCREASING, CONSTANT, NOT_MONOTONIC = F.INCREASING, F.CONSTANT, F.NOT_MONOTONIC


def monotonicity(e: Expr, input: int | None = None) -> str:
    """Whether ``e`` is a non-decreasing function of the input rowtime (``increasing``), does not
    depend on the row (``constant``) or neither. Used by AS ROWTIME, GROUP BY and ORDER BY; each
    function's rule is in the function table."""
    if isinstance(e, Lit):
        return CONSTANT
    if isinstance(e, Rowtime):
        return INCREASING if input is None or e.input == input else NOT_MONOTONIC
    if isinstance(e, Col):
        return NOT_MONOTONIC
    if isinstance(e, Call):
        ms = [monotonicity(a, input) for a in e.args]
        if all(m == CONSTANT for m in ms):
            return CONSTANT
        rule = F.get(e.fn).monotonic
        if rule is not None:
            return rule(e, ms)
    return NOT_MONOTONIC


# --------------------------------------------------------------------------- evaluation

class EvalError(Exception):
    pass


CalcError = F.CalcError
cast_value = F.cast_value

Row = tuple
Fn = Callable[[tuple, tuple], Any]


def compile_expr(e: Expr, _text: str | None = None) -> Fn:
    """A closure ``f(row, rowtimes)`` computing ``e``. It raises :class:`CalcError` (with the
    failing call, its text as written and its operand values) where SQL raises a data exception."""
    if isinstance(e, Col):
        i = e.index
        return lambda row, rts: row[i]
    if isinstance(e, Rowtime):
        k = e.input
        return lambda row, rts: rts[k]
    if isinstance(e, Lit):
        v = e.value
        return lambda row, rts: v
    if not isinstance(e, Call):
        raise EvalError(f"cannot compile {e!r}")
    spec = F.TABLE.get(e.fn)
    if spec is None:
        raise EvalError(f"function {e.fn} has no Python implementation")
    text = e.text or _text
    args = [compile_expr(a, text) for a in e.args]
    if spec.lazy:
        return spec.python(e, args)
    return _eager(e, spec, spec.python(e), args, text)


def _eager(e: Call, spec, g, args, text):
    """Evaluate every argument (left to right), then the function; NULL in, NULL out for strict
    functions; a calculator error gets the call and its operands attached."""
    strict, checked = spec.strict, bool(spec.errors)
    if len(args) == 1 and strict:
        (a,) = args
        if not checked:
            return lambda row, rts: None if (x := a(row, rts)) is None else g(x)

        def f1(row, rts):
            x = a(row, rts)
            if x is None:
                return None
            try:
                return g(x)
            except CalcError as err:
                err.attach(e, (x,), text)
                raise
        return f1
    if len(args) == 2 and strict:
        a, b = args
        if not checked:
            def f2u(row, rts):
                x = a(row, rts)
                y = b(row, rts)
                return None if x is None or y is None else g(x, y)
            return f2u

        def f2(row, rts):
            x = a(row, rts)
            y = b(row, rts)
            if x is None or y is None:
                return None
            try:
                return g(x, y)
            except CalcError as err:
                err.attach(e, (x, y), text)
                raise
        return f2

    def fn(row, rts):
        vals = [f(row, rts) for f in args]
        if strict and None in vals:
            return None
        try:
            return g(*vals)
        except CalcError as err:
            err.attach(e, vals, text)
            raise
    return fn


#: Every function name a :class:`Call` may carry.
FUNCTIONS = frozenset(F.TABLE)


# --------------------------------------------------------------------------- over Arrow columns

ArrowFn = Callable[[list, Any], Any]


def arrow_expr(e: Expr) -> ArrowFn | None:
    """``f(columns, rowtimes)`` computing ``e`` over a whole batch with Arrow kernels (``columns``
    the input's Arrow arrays by position, ``rowtimes`` an int64 array), or None when some part of
    ``e`` has no exact Arrow form. Only expressions that cannot raise a calculator error qualify:
    the row evaluator decides which row raises first, and Arrow kernels would not."""
    if F.can_fail(e):
        return None
    return _arrow(e)


def _arrow(e: Expr) -> ArrowFn | None:
    import pyarrow as pa

    from .types import arrow_type
    if isinstance(e, Col):
        i = e.index
        return lambda cols, rts: cols[i]
    if isinstance(e, Rowtime):
        return (lambda cols, rts: rts) if e.input == 0 else None
    if isinstance(e, Lit):
        if e.value is None or e.type.name in ("DECIMAL", "INTERVAL", "NULL"):
            return None
        s = pa.scalar(e.value, arrow_type(e.type))
        return lambda cols, rts: s
    if not isinstance(e, Call):
        return None
    spec = F.TABLE.get(e.fn)
    kernel = spec.arrow(e) if spec is not None and spec.arrow is not None else None
    if kernel is None:
        return None
    args = [_arrow(a) for a in e.args]
    if any(a is None for a in args):
        return None
    return lambda cols, rts: kernel([a(cols, rts) for a in args])


# --------------------------------------------------------------------------- rowtime maps

def apply_rowtime_map(e: Expr, t: int, input: int = 0) -> int:
    """Value of a monotonic rowtime expression at rowtime ``t`` (maps bounds like rows)."""
    if t <= sqltime.NO_TIME:
        return sqltime.NO_TIME
    if t >= sqltime.END_OF_TIME:
        return sqltime.END_OF_TIME
    rts = (t,) * (input + 1)
    try:
        v = compile_expr(e)((), rts)
    except CalcError:      # beyond the TIMESTAMP range: no row at or after t can be stamped
        return sqltime.END_OF_TIME
    return sqltime.NO_TIME if v is None else int(v)


def is_time_key(e: Expr) -> bool:
    """Whether ``e`` is a TIMESTAMP key made of ROWTIME alone: FLOOR/CEIL/STEP of it and interval
    shifts, nested in any order. :func:`rowtime_map_array` computes such a key exactly for a
    whole array of rowtimes (the Spark log source pre-combines GROUP BYs keyed by one)."""
    def pure(x: Expr) -> bool:
        if isinstance(x, Rowtime):
            return True
        if isinstance(x, Call) and x.fn in ("FLOOR_TO", "CEIL_TO", "STEP"):
            return pure(x.args[0])
        if isinstance(x, Call) and x.fn in ("+", "-") and len(x.args) == 2:
            a, b = x.args
            return pure(a) and isinstance(b, Lit) and isinstance(b.value, sqltime.Interval)
        return False
    return e.type.name == "TIMESTAMP" and pure(e)


def rowtime_map_array(e: Expr, a: np.ndarray) -> np.ndarray:
    """Vectorised :func:`apply_rowtime_map` over int64 times (timelines of whole batches): a time
    whose mapping leaves the TIMESTAMP range anywhere on the way maps to END_OF_TIME, as there."""
    a = np.asarray(a, dtype=np.int64)
    lo, hi = a <= sqltime.NO_TIME, a >= sqltime.END_OF_TIME
    bad = np.zeros(len(a), dtype=bool)
    r = _map_array(e, np.where(lo | hi, F.TS_MIN, a), bad)
    r = np.where(bad, sqltime.END_OF_TIME, r)
    r = np.where(lo, sqltime.NO_TIME, np.where(hi, sqltime.END_OF_TIME, r))
    return r.astype(np.int64)


def _in_range(x: np.ndarray, bad: np.ndarray) -> np.ndarray:
    """``x`` with the times outside the TIMESTAMP range marked in ``bad`` (and replaced by a time
    inside it, so the steps after it compute something)."""
    out = (x < F.TS_MIN) | (x > F.TS_MAX)
    if out.any():
        bad |= out
        x = np.where(out, F.TS_MIN, x)
    return x


def _map_array(e: Expr, a: np.ndarray, bad: np.ndarray) -> np.ndarray:
    if isinstance(e, Rowtime):
        return a
    if isinstance(e, Lit):
        return np.full_like(a, e.value if not isinstance(e.value, sqltime.Interval) else 0)
    if isinstance(e, Call):
        if e.fn == "FLOOR_TO":
            return _in_range(sqltime.floor_to_array(_map_array(e.args[0], a, bad), e.arg), bad)
        if e.fn == "CEIL_TO":
            x = _map_array(e.args[0], a, bad)
            f = sqltime.floor_to_array(x, e.arg)
            return _in_range(np.where(f == x, x, sqltime.next_boundary_array(f, e.arg)), bad)
        if e.fn == "STEP":
            x = _map_array(e.args[0], a, bad)
            return _in_range(x - np.mod(x, e.arg.millis), bad)
        if e.fn == "CAST":
            return _map_array(e.args[0], a, bad)
        if e.fn in ("+", "-"):
            x, y = e.args
            if isinstance(y, Lit) and isinstance(y.value, sqltime.Interval):
                iv = y.value if e.fn == "+" else -y.value
                base = _map_array(x, a, bad)
                if iv.months:
                    base = _in_range(_add_months_exact(base, iv.months, bad), bad)
                return _in_range(base + iv.millis, bad)
            if isinstance(x, Lit) and isinstance(x.value, sqltime.Interval) and e.fn == "+":
                return _map_array(Call("+", (y, x), e.type), a, bad)
    # fall back to the scalar path (rare expressions)
    f = compile_expr(e)
    out = np.empty(len(a), dtype=np.int64)
    for k, v in enumerate(a.tolist()):
        try:
            r = f((), (int(v),))
        except CalcError:
            r = None
            bad[k] = True
        out[k] = sqltime.NO_TIME if r is None else int(r)
    return out


def _add_months_exact(a: np.ndarray, months: int, bad: np.ndarray) -> np.ndarray:
    out = np.empty(len(a), dtype=np.int64)
    for k, v in enumerate(a.tolist()):
        try:
            out[k] = sqltime.add_interval(int(v), sqltime.Interval(months=months))
        except (OverflowError, ValueError):     # beyond year 1 or 9999
            out[k] = F.TS_MIN
            bad[k] = True
    return out


