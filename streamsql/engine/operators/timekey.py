"""Periods of a monotonic time key (FLOOR/CEIL/STEP of ROWTIME, ROWTIME itself, plus or minus a
fixed interval): for a rowtime, the key's value and the *end* of its period, the earliest rowtime
at which the key takes its next value (the semantics, section 3.3). Scalar and vectorised."""
from __future__ import annotations

import numpy as np

from .. import time as sqltime
from ..errors import SqlError
from ..expr import Call, Col, Expr, Lit, Rowtime, apply_rowtime_map, remap, rowtime_map_array
from ..types import SqlType


def _shift(e: Expr) -> int | None:
    """``c`` when ``e`` is ``ROWTIME + c`` for a fixed ``c`` (None otherwise)."""
    if isinstance(e, Rowtime):
        return 0
    if isinstance(e, Call) and e.fn == "CAST" and e.type.name == "TIMESTAMP":
        return _shift(e.args[0])
    if isinstance(e, Call) and e.fn in ("+", "-") and len(e.args) == 2:
        x, y = e.args
        if isinstance(y, Lit) and isinstance(y.value, sqltime.Interval) and y.value.is_fixed:
            s = _shift(x)
            return None if s is None else s + (y.value.millis if e.fn == "+" else -y.value.millis)
        if e.fn == "+" and isinstance(x, Lit) and isinstance(x.value, sqltime.Interval) and x.value.is_fixed:
            s = _shift(y)
            return None if s is None else s + x.value.millis
    return None


def _fixed(x: Expr) -> bool:
    return isinstance(x, Lit) and isinstance(x.value, sqltime.Interval) and x.value.is_fixed


def _peel(e: Expr) -> Expr:
    """``e`` without outer fixed shifts (``k + c``, ``k - c``, ``c + k``, CAST to TIMESTAMP):
    they change the key's values but not where its periods end."""
    while isinstance(e, Call):
        if e.fn in ("+", "-") and len(e.args) == 2 and _fixed(e.args[1]):
            e = e.args[0]
        elif e.fn == "+" and len(e.args) == 2 and _fixed(e.args[0]):
            e = e.args[1]
        elif e.fn == "CAST" and e.type.name == "TIMESTAMP":
            e = e.args[0]
        else:
            break
    return e


def resolve_time_expr(e: Expr, node) -> Expr | None:
    """``e``, an expression over ``node``'s output, as a function of ``node``'s output rowtime
    only, or None when some column is not such a function. Columns are followed through WHERE,
    projections that keep the rowtime (a sub-query's ``FLOOR(ROWTIME TO HOUR) AS h``), OVER (its
    input columns), and the time key of a GROUP BY or DISTINCT below (the rule SortOp's leading
    key follows too):

    - GROUP BY stamping a group at its period's end E: the key's value is the key at E - 1 ms
      (the group's rows were all before E, and the key did not change until E);
    - ``<time key> AS ROWTIME``: the output rowtime is the key's value itself;
    - DISTINCT stamps rows with their own rowtime: the key is the same function of it.
    """
    from ..expr import columns_used
    from ..plan import Aggregate, Filter, Project, Window
    from .windowkeys import window_time_expr
    while columns_used(e):
        w = window_time_expr(e, node)
        if w is not None:
            return w
        if isinstance(node, Filter):
            node = node.input
        elif isinstance(node, Project) and node.rowtime is None:
            exprs = node.exprs
            e = remap(e, cols=lambda c: exprs[c.index])
            node = node.input
        elif isinstance(node, Window) and max(columns_used(e)) < len(node.input.fields):
            node = node.input
        elif isinstance(node, Aggregate) and node.time_key is not None and columns_used(e) == {node.time_key}:
            inner = resolve_time_expr(node.keys[node.time_key], node.input)
            if inner is None:
                return None
            if node.distinct_rows:
                key = inner
            elif node.stamp is None:
                one_ms = Lit(sqltime.Interval(0, 1), SqlType("INTERVAL", nullable=False))
                before = Call("-", (Rowtime(0), one_ms), SqlType("TIMESTAMP", nullable=False))
                key = remap(inner, rowtime=lambda r: before)
            elif isinstance(node.stamp, Col) and node.stamp.index == node.time_key:
                key = Rowtime(0)
            else:
                return None
            return remap(e, cols=lambda c: key)
        else:
            return None
    return e


def try_time_key(e: Expr, node=None) -> "TimeKey | None":
    """The :class:`TimeKey` of a non-decreasing function of the rowtime (resolved through
    projections when ``node`` is given), or None when its periods cannot be found."""
    from ..expr import INCREASING, monotonicity
    if node is not None:
        e = resolve_time_expr(e, node)
        if e is None:
            return None
    if monotonicity(e) != INCREASING:
        return None
    try:
        return TimeKey(e)
    except SqlError:
        return None


class TimeKey:
    """A monotonic key ``k`` of the rowtime: ``value(t)`` and ``period_end(t)``."""

    def __init__(self, expr: Expr):
        self.expr = expr
        self.kind, self.shift, self.arg = self._analyse(expr)

    @staticmethod
    def _analyse(e: Expr):
        s = _shift(e)
        if s is not None:
            return "identity", s, None
        inner = _peel(e)
        if isinstance(inner, Call) and inner.fn in ("FLOOR_TO", "CEIL_TO", "STEP"):
            s = _shift(inner.args[0])
            if s is not None:
                return inner.fn, s, inner.arg
        if isinstance(inner, Call) and inner.fn == "CAST" and inner.type.is_integer:
            # CAST(ROWTIME + c AS BIGINT) counts whole seconds since the epoch: a 1-second STEP
            s = _shift(inner.args[0])
            if s is not None:
                return "STEP", s, sqltime.Interval(0, sqltime.SECOND)
        raise SqlError(f"cannot find the periods of the monotonic expression {e!r}; use FLOOR, CEIL or STEP "
                       "of ROWTIME (plus or minus a constant)")

    def value(self, t: int) -> int:
        return apply_rowtime_map(self.expr, t)

    def period_end(self, t: int) -> int:
        if t <= sqltime.NO_TIME:
            return sqltime.NO_TIME
        if t >= sqltime.END_OF_TIME:
            return sqltime.END_OF_TIME
        x = t + self.shift
        if self.kind == "identity":
            return t + 1
        if self.kind == "FLOOR_TO":
            return sqltime.next_boundary(sqltime.floor_to(x, self.arg), self.arg) - self.shift
        if self.kind == "CEIL_TO":
            return sqltime.ceil_to(x, self.arg) + 1 - self.shift
        return sqltime.step_floor(x, self.arg) + self.arg.millis - self.shift

    def end_expr(self, t: Expr) -> Expr:
        """:meth:`period_end` of ``t`` (a TIMESTAMP expression, inside the time range) as an
        expression of the function table, so that a runtime renders it as it renders any other
        (the Spark runtime's relational GROUP BY stamps its groups with it): the rule stays here."""
        ts = SqlType("TIMESTAMP", nullable=False)

        def plus(x: Expr, iv: sqltime.Interval) -> Expr:
            if not iv.months and not iv.millis:
                return x
            return Call("+", (x, Lit(iv, SqlType("INTERVAL", nullable=False))), ts)
        if self.kind == "identity":
            return plus(t, sqltime.Interval(millis=1))
        x = plus(t, sqltime.Interval(millis=self.shift))
        if self.kind == "STEP":
            end = plus(Call("STEP", (x,), ts, arg=self.arg), self.arg)
        elif self.kind == "CEIL_TO":
            end = plus(Call("CEIL_TO", (x,), ts, arg=self.arg), sqltime.Interval(millis=1))
        else:
            unit = sqltime.unit_name(self.arg)
            one = (sqltime.Interval(millis=sqltime.FIXED_UNITS[unit]) if unit in sqltime.FIXED_UNITS
                   else sqltime.Interval(months=sqltime.CALENDAR_UNITS[unit]))
            end = plus(Call("FLOOR_TO", (x,), ts, arg=self.arg), one)
        return plus(end, sqltime.Interval(millis=-self.shift))

    def period_end_array(self, t: np.ndarray) -> np.ndarray:
        t = np.asarray(t, dtype=np.int64)
        lo, hi = t <= sqltime.NO_TIME, t >= sqltime.END_OF_TIME
        safe = np.where(lo | hi, 0, t)
        x = safe + self.shift
        if self.kind == "identity":
            r = safe + 1
        elif self.kind == "FLOOR_TO":
            r = sqltime.next_boundary_array(sqltime.floor_to_array(x, self.arg), self.arg) - self.shift
        elif self.kind == "CEIL_TO":
            f = sqltime.floor_to_array(x, self.arg)
            c = np.where(f == x, x, sqltime.next_boundary_array(f, self.arg))
            r = c + 1 - self.shift
        else:
            r = x - np.mod(x, self.arg.millis) + self.arg.millis - self.shift
        return np.where(lo, sqltime.NO_TIME, np.where(hi, sqltime.END_OF_TIME, r)).astype(np.int64)

    def value_array(self, t: np.ndarray) -> np.ndarray:
        return rowtime_map_array(self.expr, t)
