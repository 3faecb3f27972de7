"""Spark SQL of the timestamp functions (:mod:`streamsql.engine.functions.temporal`): fixed units
are integer arithmetic on epoch milliseconds, calendar ones ``date_trunc``/``timestampadd``."""
from __future__ import annotations

from .... import time as sqltime
from .. import sqltext as S
from . import SparkFn


def arith_spark(e, xs) -> str:
    """TIMESTAMP plus or minus a constant INTERVAL (either order)."""
    x, y = e.args
    if x.type.name == "TIMESTAMP" and y.type.name == "TIMESTAMP":
        raise ValueError("TIMESTAMP - TIMESTAMP is not supported in Spark expressions")
    base_sql = xs[0]
    if x.type.name == "INTERVAL" and y.type.name == "TIMESTAMP":
        x, y = y, x
        base_sql = xs[1]
    if not (type(y).__name__ == "Lit" and isinstance(y.value, sqltime.Interval)):
        raise ValueError("only constant intervals can be added to a timestamp")
    iv = y.value if e.fn == "+" else -y.value
    base = base_sql
    if iv.months:
        base = f"unix_millis(timestampadd(MONTH, {iv.months}, timestamp_millis({base})))"
    return f"({base} + CAST({iv.millis} AS BIGINT))" if iv.millis else base


def arith_fails(e, xs, v):
    return S.ts_out_of_range(v) if e.type.name == "TIMESTAMP" else None


def _floor_to_spark(e, xs):
    return S.floor_sql(xs[0], e.arg)


def _ceil_to_spark(e, xs):
    x = xs[0]
    f = S.floor_sql(x, e.arg)
    return f"CASE WHEN {f} = {x} THEN {x} ELSE {S.next_boundary_sql(f, e.arg)} END"


def _step_spark(e, xs):
    x = xs[0]
    return f"({x} - pmod({x}, CAST({e.arg.millis} AS BIGINT)))"


def _ts_fails(e, xs, v):
    return S.ts_out_of_range(v)


TABLE = [
    SparkFn("FLOOR_TO", _floor_to_spark, fails=_ts_fails),
    SparkFn("CEIL_TO", _ceil_to_spark, fails=_ts_fails),
    SparkFn("STEP", _step_spark, fails=_ts_fails),
]
