"""Spark SQL of the string functions (:mod:`streamsql.engine.functions.text`)."""
from __future__ import annotations

from .. import sqltext as S
from . import SparkFn


def _substring_spark(e, xs):
    s, start = xs[0], xs[1]
    if len(xs) == 2:
        return f"CASE WHEN {start} IS NULL THEN NULL WHEN {start} >= 1 THEN substring({s}, {start}) ELSE {s} END"
    ln = xs[2]
    return (f"CASE WHEN {start} IS NULL OR {ln} IS NULL OR {ln} < 0 THEN NULL "
            f"WHEN {start} >= 1 THEN substring({s}, {start}, {ln}) "
            f"ELSE substring({s}, 1, CAST(greatest(CAST({start} AS BIGINT) + {ln} - 1, 0) AS INT)) END")


def _substring_fails(e, xs, v):
    return f"({xs[2]} < 0)" if len(xs) > 2 else None


def _trim_spark(e, xs):
    chars = xs[1] if len(xs) > 1 else "' '"
    return f"trim({e.arg or 'BOTH'} {chars} FROM {xs[0]})"


def _like_spark(e, xs):
    esc = f" ESCAPE {S.string_lit(e.arg)}" if e.arg else ""
    return f"({xs[0]} LIKE {xs[1]}{esc})"


TABLE = [
    SparkFn("||", lambda e, xs: f"concat({xs[0]}, {xs[1]})"),
    SparkFn("UPPER", lambda e, xs: f"upper({xs[0]})"),
    SparkFn("LOWER", lambda e, xs: f"lower({xs[0]})"),
    SparkFn("CHAR_LENGTH", lambda e, xs: S.plain_cast(f"char_length({xs[0]})", e.type)),
    SparkFn("SUBSTRING", _substring_spark, fails=_substring_fails),
    SparkFn("TRIM", _trim_spark),
    SparkFn("POSITION", lambda e, xs: S.plain_cast(f"locate({xs[0]}, {xs[1]})", e.type)),
    SparkFn("LIKE", _like_spark),
]
