"""Timestamp functions: FLOOR/CEIL ... TO unit, STEP, and timestamp/interval arithmetic.

A TIMESTAMP is epoch milliseconds; a result outside years 0001-9999 is a datetime field
overflow. Their Spark SQL is :mod:`streamsql.engine.runtime.spark.sqlfunctions.temporal`.
"""
from __future__ import annotations

from .. import time as sqltime
from ..types import TIMESTAMP
from .errors import DATETIME_OVERFLOW, DIVISION_BY_ZERO, CalcError
from .spec import NOT_MONOTONIC, Fn, fit_timestamp


def is_temporal_arith(t, ta, tb) -> bool:
    return "INTERVAL" in (t.name, ta.name, tb.name) or t.name == "TIMESTAMP"


def _shifted(ms: int, iv: sqltime.Interval) -> int:
    try:
        return fit_timestamp(sqltime.add_interval(ms, iv))
    except (OverflowError, ValueError):
        raise CalcError(DATETIME_OVERFLOW, "for TIMESTAMP") from None


def arith_python(e):
    op = e.fn
    ta, tb = e.args[0].type, e.args[1].type
    if ta.name == "TIMESTAMP" and tb.name == "INTERVAL":
        return lambda a, b: _shifted(a, b if op == "+" else -b)
    if ta.name == "INTERVAL" and tb.name == "TIMESTAMP":
        return lambda a, b: _shifted(b, a)
    if ta.name == "TIMESTAMP" and tb.name == "TIMESTAMP":
        return lambda a, b: sqltime.Interval(millis=a - b)
    if ta.name == "INTERVAL" and tb.name == "INTERVAL":
        return lambda a, b: a + b if op == "+" else a - b
    if ta.name == "INTERVAL":
        if op == "*":
            return lambda a, b: a.scale(b)

        def div(a, b):
            if b == 0:
                raise CalcError(DIVISION_BY_ZERO)
            return a.scale(1 / float(b))
        return div
    return lambda a, b: b.scale(a)


# --------------------------------------------------------------------------- FLOOR/CEIL TO, STEP

def _ts_type(ts, arg):
    t = ts[0]
    return TIMESTAMP.with_nullable(t.nullable) if t.name in ("TIMESTAMP", "NULL") else None


def _checked(f):
    def g(*a):
        try:
            return fit_timestamp(f(*a))
        except (OverflowError, ValueError):
            raise CalcError(DATETIME_OVERFLOW, "for TIMESTAMP") from None
    return g


def _floor_to_python(e):
    unit = e.arg
    return _checked(lambda v: sqltime.floor_to(v, unit))


def _ceil_to_python(e):
    unit = e.arg
    return _checked(lambda v: sqltime.ceil_to(v, unit))


def _step_python(e):
    iv = e.arg
    return _checked(lambda v: sqltime.step_floor(v, iv))


def _keeps_order(e, ms):
    """FLOOR/CEIL/STEP of a non-decreasing argument never decrease."""
    return ms[0] if ms[0] != NOT_MONOTONIC and all(m == "constant" for m in ms[1:]) else NOT_MONOTONIC


_UNITS = tuple((("TIMESTAMP",), u) for u in ("SECOND", "HOUR", "DAY", "WEEK", "MONTH", "YEAR"))

TABLE = [
    Fn("FLOOR_TO", _ts_type, _floor_to_python, errors=("DATETIME_FIELD_OVERFLOW",),
       monotonic=_keeps_order, samples=_UNITS),
    Fn("CEIL_TO", _ts_type, _ceil_to_python, errors=("DATETIME_FIELD_OVERFLOW",),
       monotonic=_keeps_order, samples=_UNITS),
    Fn("STEP", _ts_type, _step_python, errors=("DATETIME_FIELD_OVERFLOW",),
       monotonic=_keeps_order,
       samples=tuple((("TIMESTAMP",), sqltime.Interval(millis=m)) for m in (15 * sqltime.MINUTE, 1000 * sqltime.DAY))),
]
