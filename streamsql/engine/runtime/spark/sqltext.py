"""Pieces of Spark SQL text: the Spark type of each SQL type, literals, conversions, time floors,
and the checks calculator errors are flagged with (strings only: nothing here imports pyspark).
Times are epoch milliseconds (BIGINT) in Spark as everywhere else."""
from __future__ import annotations

import decimal

from ... import time as sqltime
from ...functions.spec import TS_MAX, TS_MIN
from ...types import SqlType


def spark_type_ddl(t: SqlType) -> str:
    """The Spark SQL type a value of ``t`` is kept in (a TIMESTAMP as BIGINT milliseconds)."""
    n = t.name
    return {
        "BOOLEAN": "BOOLEAN", "TINYINT": "TINYINT", "SMALLINT": "SMALLINT", "INTEGER": "INT",
        "BIGINT": "BIGINT", "TIMESTAMP": "BIGINT", "REAL": "FLOAT", "DOUBLE": "DOUBLE",
        "VARCHAR": "STRING", "CHAR": "STRING", "INTERVAL": "STRING", "NULL": "STRING",
    }.get(n) or f"DECIMAL({t.precision},{t.scale})"

#: Java's infinities, for the overflow checks of DOUBLE and REAL results
INF_DOUBLE = "CAST('Infinity' AS DOUBLE)"
INF_REAL = "CAST('Infinity' AS FLOAT)"


def ddl(t: SqlType) -> str:
    return spark_type_ddl(t)


def string_lit(s: str) -> str:
    if all(c.isalnum() or c in " _-:.,;!?()[]{}#@$%^&*+=/<>|~" for c in s):
        return f"'{s}'"
    return f"decode(X'{s.encode('utf-8').hex()}', 'UTF-8')"


def literal(v, t: SqlType) -> str:
    d = ddl(t)
    if v is None:
        return f"CAST(NULL AS {d})"
    n = t.name
    if n == "BOOLEAN":
        return "TRUE" if v else "FALSE"
    if n in ("TINYINT", "SMALLINT", "INTEGER"):
        return f"CAST({int(v)} AS {d})"
    if n in ("BIGINT", "TIMESTAMP"):
        return f"CAST({int(v)} AS BIGINT)"
    if n in ("DOUBLE", "REAL"):
        return f"CAST('{float(v)!r}' AS {d})"
    if n == "DECIMAL":
        return f"CAST('{decimal.Decimal(v)}' AS {d})"
    if n in ("VARCHAR", "CHAR"):
        return string_lit(str(v))
    if n == "NULL":
        return "CAST(NULL AS STRING)"
    raise ValueError(f"no Spark literal for {v!r} of type {t}")


def try_cast(sql: str, t: SqlType) -> str:
    """A conversion that gives NULL where the value does not fit (in both ANSI modes)."""
    return f"try_cast({sql} AS {ddl(t)})"


def plain_cast(sql: str, t: SqlType) -> str:
    return f"CAST({sql} AS {ddl(t)})"


def floor_sql(x: str, unit: str) -> str:
    unit = sqltime.unit_name(unit)
    if unit in sqltime.FIXED_UNITS:
        size = sqltime.FIXED_UNITS[unit]
        if unit == "WEEK":
            shift = 4 * sqltime.DAY
            return f"(({x} - {shift}) - pmod({x} - {shift}, CAST({size} AS BIGINT)) + {shift})"
        return f"({x} - pmod({x}, CAST({size} AS BIGINT)))"
    return f"unix_millis(date_trunc('{unit}', timestamp_millis({x})))"


def next_boundary_sql(f: str, unit: str) -> str:
    unit = sqltime.unit_name(unit)
    if unit in sqltime.FIXED_UNITS:
        return f"({f} + CAST({sqltime.FIXED_UNITS[unit]} AS BIGINT))"
    months = sqltime.CALENDAR_UNITS[unit]
    return f"unix_millis(timestampadd(MONTH, {months}, timestamp_millis({f})))"


def sql_or(a: str, b: str) -> str:
    """``a OR b`` in Spark SQL, where ``FALSE`` (no condition yet) drops out."""
    if a == "FALSE":
        return b
    if b == "FALSE":
        return a
    return f"({a} OR {b})"


def ts_out_of_range(v: str) -> str:
    """TRUE where the BIGINT ``v`` is no TIMESTAMP (outside the years 0001-9999)."""
    return f"({v} < {TS_MIN} OR {v} > {TS_MAX})"
