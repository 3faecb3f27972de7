"""Typed expressions rendered as Spark SQL text, with SQL's semantics where Spark differs.

Times are epoch milliseconds (BIGINT) in Spark as everywhere else, so FLOOR/CEIL/STEP are
integer arithmetic for fixed units and ``date_trunc`` for calendar ones; integer division is
``DIV`` (truncation toward zero); string literals are hex-encoded when they hold anything
Spark's parser would unescape. The session runs with ANSI mode off: division by zero and bad
casts give NULL, exactly as the Python evaluator does.
"""
from __future__ import annotations

import decimal
from typing import Callable

from ... import time as T
from ...expr import Call, Col, Expr, Lit, Rowtime
from ...types import SqlType, spark_type_ddl


def quote_ident(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _string_lit(s: str) -> str:
    if all(c.isalnum() or c in " _-:.,;!?()[]{}#@$%^&*+=/<>|~" for c in s):
        return f"'{s}'"
    return f"decode(X'{s.encode('utf-8').hex()}', 'UTF-8')"


def literal(v, t: SqlType) -> str:
    ddl = spark_type_ddl(t)
    if v is None:
        return f"CAST(NULL AS {ddl})"
    n = t.name
    if n == "BOOLEAN":
        return "TRUE" if v else "FALSE"
    if n in ("TINYINT", "SMALLINT", "INTEGER"):
        return f"CAST({int(v)} AS {ddl})"
    if n in ("BIGINT", "TIMESTAMP"):
        return f"CAST({int(v)} AS BIGINT)"
    if n in ("DOUBLE", "REAL"):
        return f"CAST('{float(v)!r}' AS {ddl})"
    if n == "DECIMAL":
        return f"CAST('{decimal.Decimal(v)}' AS {ddl})"
    if n in ("VARCHAR", "CHAR"):
        return _string_lit(str(v))
    if n == "NULL":
        return "CAST(NULL AS STRING)"
    raise ValueError(f"no Spark literal for {v!r} of type {t}")


class SparkSql:
    """Renders expressions; ``col(i)`` names input column ``i``, ``rowtime(k)`` input k's rowtime."""

    def __init__(self, col: Callable[[int], str], rowtime: Callable[[int], str]):
        self.col = col
        self.rowtime = rowtime

    def __call__(self, e: Expr) -> str:
        return self.render(e)

    def render(self, e: Expr) -> str:
        if isinstance(e, Col):
            return self.col(e.index)
        if isinstance(e, Rowtime):
            return self.rowtime(e.input)
        if isinstance(e, Lit):
            if isinstance(e.value, T.Interval):
                raise ValueError("an INTERVAL can only be used in time arithmetic")
            return literal(e.value, e.type)
        assert isinstance(e, Call)
        return self._call(e)

    def _cast(self, sql: str, t: SqlType) -> str:
        return f"CAST({sql} AS {spark_type_ddl(t)})"

    def _call(self, e: Call) -> str:
        fn, a = e.fn, e.args
        r = self.render
        if fn in ("+", "-") and (e.type.name == "TIMESTAMP" or a[0].type.name in ("TIMESTAMP", "INTERVAL")):
            return self._temporal(e)
        if fn in ("+", "-", "*"):
            x, y = self._num_operands(e)
            return self._cast(f"({x} {fn} {y})", e.type)
        if fn == "/":
            x, y = self._num_operands(e)
            if e.type.is_integer:
                return self._cast(f"({x} DIV {y})", e.type)
            return self._cast(f"({x} / {y})", e.type)
        if fn == "%":
            x, y = self._num_operands(e)
            return self._cast(f"({x} % {y})", e.type)
        if fn == "NEG":
            return self._cast(f"(- {r(a[0])})", e.type)
        if fn in ("=", "<>", "<", "<=", ">", ">="):
            return f"({r(a[0])} {fn} {r(a[1])})"
        if fn in ("AND", "OR"):
            return "(" + f" {fn} ".join(r(x) for x in a) + ")"
        if fn == "NOT":
            return f"(NOT {r(a[0])})"
        if fn == "IS_NULL":
            return f"({r(a[0])} IS NULL)"
        if fn == "IS_NOT_NULL":
            return f"({r(a[0])} IS NOT NULL)"
        if fn in ("IS_TRUE", "IS_FALSE", "IS_NOT_TRUE", "IS_NOT_FALSE"):
            want = "TRUE" if fn.endswith("TRUE") else "FALSE"
            s = f"({r(a[0])} <=> {want})"
            return f"(NOT {s})" if "_NOT_" in fn else s
        if fn == "||":
            return f"concat({self._as_string(a[0])}, {self._as_string(a[1])})"
        if fn == "CAST":
            return self._cast_expr(r(a[0]), a[0].type, e.type)
        if fn in ("FLOOR_TO", "CEIL_TO"):
            x = r(a[0])
            f = floor_sql(x, e.arg)
            if fn == "FLOOR_TO":
                return f
            return f"CASE WHEN {f} = {x} THEN {x} ELSE {next_boundary_sql(f, e.arg)} END"
        if fn == "STEP":
            x = r(a[0])
            return f"({x} - pmod({x}, CAST({e.arg.millis} AS BIGINT)))"
        if fn == "CASE":
            parts = ["CASE"]
            for i in range(0, len(a) - 1, 2):
                parts.append(f"WHEN {r(a[i])} THEN {self._cast(r(a[i + 1]), e.type)}")
            parts.append(f"ELSE {self._cast(r(a[-1]), e.type)} END")
            return " ".join(parts)
        if fn == "COALESCE":
            return self._cast("coalesce(" + ", ".join(self._cast(r(x), e.type) for x in a) + ")", e.type)
        if fn == "NULLIF":
            return f"nullif({r(a[0])}, {r(a[1])})"
        if fn == "IN":
            return f"({r(a[0])} IN (" + ", ".join(r(x) for x in a[1:]) + "))"
        if fn == "LIKE":
            esc = f" ESCAPE {_string_lit(e.arg)}" if e.arg else ""
            return f"({r(a[0])} LIKE {r(a[1])}{esc})"
        if fn == "ABS":
            return self._cast(f"abs({r(a[0])})", e.type)
        if fn in ("UPPER", "LOWER"):
            return f"{fn.lower()}({r(a[0])})"
        if fn == "CHAR_LENGTH":
            return self._cast(f"char_length({r(a[0])})", e.type)
        if fn == "SUBSTRING":
            s, start = r(a[0]), r(a[1])
            if len(a) == 2:
                return f"CASE WHEN {start} >= 1 THEN substring({s}, {start}) ELSE {s} END"
            ln = r(a[2])
            return (f"CASE WHEN {ln} < 0 THEN NULL WHEN {start} >= 1 THEN substring({s}, {start}, {ln}) "
                    f"ELSE substring({s}, 1, greatest({start} + {ln} - 1, 0)) END")
        if fn == "TRIM":
            chars = r(a[1]) if len(a) > 1 else "' '"
            return f"trim({e.arg or 'BOTH'} {chars} FROM {r(a[0])})"
        if fn == "POSITION":
            return self._cast(f"locate({r(a[0])}, {r(a[1])})", e.type)
        if fn == "ROUND":
            d = r(a[1]) if len(a) > 1 else "0"
            return self._cast(f"round({r(a[0])}, {d})", e.type)
        if fn in ("FLOOR", "CEIL"):
            return self._cast(f"{fn.lower()}({r(a[0])})", e.type)
        if fn == "POWER":
            return self._cast(f"power({r(a[0])}, {r(a[1])})", e.type)
        if fn == "SQRT":
            x = r(a[0])
            return f"CASE WHEN {x} < 0 THEN NULL ELSE sqrt({x}) END"
        if fn == "LN":
            x = r(a[0])
            return f"CASE WHEN {x} <= 0 THEN NULL ELSE ln({x}) END"
        if fn == "EXP":
            return f"exp({r(a[0])})"
        raise ValueError(f"function {fn} has no Spark SQL rendering")

    def _num_operands(self, e: Call) -> tuple[str, str]:
        x, y = e.args
        t = e.type
        if t.is_integer or t.name == "DECIMAL":
            # let Spark apply its exact arithmetic; the result is cast to our type
            return self.render(x), self.render(y)
        return self._cast(self.render(x), t), self._cast(self.render(y), t)

    def _as_string(self, x: Expr) -> str:
        if x.type.is_string:
            return self.render(x)
        return self._cast_expr(self.render(x), x.type, SqlType("VARCHAR"))

    def _cast_expr(self, sql: str, src: SqlType, dst: SqlType) -> str:
        if dst.is_string and src.name == "TIMESTAMP":
            ts = f"timestamp_millis({sql})"
            return (f"CASE WHEN pmod({sql}, 1000) = 0 THEN date_format({ts}, 'yyyy-MM-dd HH:mm:ss') "
                    f"ELSE date_format({ts}, 'yyyy-MM-dd HH:mm:ss.SSS') END")
        if dst.name == "TIMESTAMP":
            if src.name == "TIMESTAMP":
                return sql
            if src.is_string:
                return f"unix_millis(CAST({sql} AS TIMESTAMP))"
            if src.is_integer:
                return f"CAST({sql} AS BIGINT) * 1000"
            return f"CAST(({sql}) * 1000 AS BIGINT)"
        if src.name == "TIMESTAMP":
            if dst.is_integer:
                return self._cast(f"floor({sql} / 1000)", dst)
            if dst.name == "DECIMAL":
                return self._cast(f"CAST({sql} AS DECIMAL(38,3)) / 1000", dst)
            return self._cast(f"{sql} / 1000.0", dst)
        return self._cast(sql, dst)

    def _temporal(self, e: Call) -> str:
        x, y = e.args
        if x.type.name == "TIMESTAMP" and y.type.name == "TIMESTAMP":
            raise ValueError("TIMESTAMP - TIMESTAMP is not supported in Spark expressions")
        if x.type.name == "INTERVAL" and y.type.name == "TIMESTAMP":
            x, y = y, x
        if not (isinstance(y, Lit) and isinstance(y.value, T.Interval)):
            raise ValueError("only constant intervals can be added to a timestamp")
        iv = y.value if e.fn == "+" else -y.value
        base = self.render(x)
        if iv.months:
            base = f"unix_millis(timestampadd(MONTH, {iv.months}, timestamp_millis({base})))"
        return f"({base} + CAST({iv.millis} AS BIGINT))" if iv.millis else base


def floor_sql(x: str, unit: str) -> str:
    unit = T.unit_name(unit)
    if unit in T.FIXED_UNITS:
        size = T.FIXED_UNITS[unit]
        if unit == "WEEK":
            shift = 4 * T.DAY
            return f"(({x} - {shift}) - pmod({x} - {shift}, CAST({size} AS BIGINT)) + {shift})"
        return f"({x} - pmod({x}, CAST({size} AS BIGINT)))"
    return f"unix_millis(date_trunc('{unit}', timestamp_millis({x})))"


def next_boundary_sql(f: str, unit: str) -> str:
    unit = T.unit_name(unit)
    if unit in T.FIXED_UNITS:
        return f"({f} + CAST({T.FIXED_UNITS[unit]} AS BIGINT))"
    months = T.CALENDAR_UNITS[unit]
    return f"unix_millis(timestampadd(MONTH, {months}, timestamp_millis({f})))"
