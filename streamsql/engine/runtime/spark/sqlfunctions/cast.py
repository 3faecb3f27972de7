"""Spark SQL of CAST (:mod:`streamsql.engine.functions.cast`): ``try_cast`` (NULL where the value
does not convert), behind an ``RLIKE`` of the engine's string grammar where Spark's own reading is
wider (DOUBLE, REAL, TIMESTAMP)."""
from __future__ import annotations

from ....functions.cast import NUMBER_GRAMMAR, TIMESTAMP_GRAMMAR
from ....types import SqlType
from .. import sqltext as S
from . import SparkFn

# the engine's grammars as Java regular expressions in Spark SQL string literals; characters up
# to U+0020 around a value are ignored, as in the engine
_SP = "[\\\\x00-\\\\x20]*"
_NUM_JRE = f"'^{_SP}{NUMBER_GRAMMAR}{_SP}$'"
_TS_JRE = f"'^{_SP}{TIMESTAMP_GRAMMAR}{_SP}$'"


def cast_sql(x: str, src: SqlType, dst: SqlType, checked: bool = True) -> str:
    """Spark SQL converting ``x`` (of ``src``) to ``dst`` as the engine's ``cast_value`` does
    (NULL where it raises, when ``checked``)."""
    conv = S.try_cast if checked else S.plain_cast
    if dst.is_string:
        if src.name == "TIMESTAMP":
            ts = f"timestamp_millis({x})"
            return (f"CASE WHEN pmod({x}, 1000) = 0 THEN date_format({ts}, 'yyyy-MM-dd HH:mm:ss') "
                    f"ELSE date_format({ts}, 'yyyy-MM-dd HH:mm:ss.SSS') END")
        r = S.plain_cast(x, dst)
        if dst.name == "CHAR" and dst.precision is not None:
            r = f"substring({r}, 1, {dst.precision})"
        return r
    if dst.name == "TIMESTAMP":
        if src.name == "TIMESTAMP":
            return x
        if src.is_string:
            v = f"unix_millis(try_cast({x} AS TIMESTAMP))"
            return f"CASE WHEN {x} RLIKE {_TS_JRE} THEN {v} END" if checked else v
        if src.is_integer or src.name == "BOOLEAN":
            return f"try_multiply(CAST({x} AS BIGINT), CAST(1000 AS BIGINT))"
        if src.is_approx:
            return f"try_cast(CAST({x} AS DOUBLE) * CAST(1000 AS DOUBLE) AS BIGINT)"
        return f"try_cast(({x}) * 1000 AS BIGINT)"
    if src.name == "TIMESTAMP":
        if dst.is_integer:
            return conv(f"floor({x} / 1000)", dst)
        if dst.name == "DECIMAL":
            return conv(f"CAST({x} AS DECIMAL(38,3)) / 1000", dst)
        return conv(f"CAST({x} AS DOUBLE) / CAST(1000 AS DOUBLE)", dst)
    if src.is_string and dst.is_approx and checked:
        return f"CASE WHEN {x} RLIKE {_NUM_JRE} THEN {conv(x, dst)} END"
    return conv(x, dst)


def _cast_spark(e, xs):
    return cast_sql(xs[0], e.args[0].type, e.type)


def _cast_plain(e, xs):
    return cast_sql(xs[0], e.args[0].type, e.type, checked=False)


def _cast_fails(e, xs, v):
    src, dst = e.args[0].type, e.type
    x = xs[0]
    if dst.is_string or src.name == dst.name == "TIMESTAMP":
        return None
    checks = [f"{v} IS NULL"]
    if dst.name == "TIMESTAMP":
        checks.append(S.ts_out_of_range(v))
    if dst.is_approx:
        inf = S.INF_REAL if dst.name == "REAL" else S.INF_DOUBLE
        keep = f" AND abs({x}) <> {S.INF_DOUBLE}" if src.is_approx else ""
        checks.append(f"(abs({v}) = {inf}{keep})")
    if dst.name == "BIGINT" and src.is_approx:
        checks.append(f"{x} >= CAST('9.223372036854775807E18' AS DOUBLE)")   # 2**63: Spark saturates
    return "(" + " OR ".join(checks) + ")"


TABLE = [SparkFn("CAST", _cast_spark, fails=_cast_fails, plain=_cast_plain)]
