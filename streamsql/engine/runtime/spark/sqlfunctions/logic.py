"""Spark SQL of comparisons, boolean logic and conditional expressions
(:mod:`streamsql.engine.functions.logic`). AND, OR, CASE and COALESCE stop as soon as their
result is known, so their calculator-error flags (``flag``) follow the same order."""
from __future__ import annotations

from ....functions.logic import COMPARISONS, IS_TESTS
from .. import sqltext as S
from . import SparkFn


def _stop_flag(stop: str):
    """AND stops at the first FALSE argument, OR at the first TRUE one."""
    def flag(e, xs, flags):
        out, reached = "FALSE", []
        for x, f in zip(xs, flags):
            if f != "FALSE":
                guard = " AND ".join(f"NOT ({y} <=> {stop})" for y in reached)
                out = S.sql_or(out, f"({guard} AND {f})" if guard else f)
            reached.append(x)
        return out
    return flag


def _case_spark(e, xs):
    parts = ["CASE"]
    for i in range(0, len(xs) - 1, 2):
        parts.append(f"WHEN {xs[i]} THEN {S.plain_cast(xs[i + 1], e.type)}")
    parts.append(f"ELSE {S.plain_cast(xs[-1], e.type)} END")
    return " ".join(parts)


def _case_flag(e, xs, flags):
    rest = flags[-1]
    for i in range(len(xs) - 3, -1, -2):
        w, fw, ft = xs[i], flags[i], flags[i + 1]
        if ft == "FALSE" and rest == "FALSE":
            branch = "FALSE"
        else:
            branch = f"(CASE WHEN {w} <=> TRUE THEN {ft} ELSE {rest} END)"
        rest = S.sql_or(fw, branch)
    return rest


def _coalesce_spark(e, xs):
    return S.plain_cast("coalesce(" + ", ".join(S.plain_cast(x, e.type) for x in xs) + ")", e.type)


def _coalesce_flag(e, xs, flags):
    rest = flags[-1]
    for x, f in zip(reversed(xs[:-1]), reversed(flags[:-1])):
        rest = S.sql_or(f, "FALSE" if rest == "FALSE" else f"({x} IS NULL AND {rest})")
    return rest


def _is_spark(fn):
    if fn in ("IS_NULL", "IS_NOT_NULL"):
        return lambda e, xs: f"({xs[0]} {fn.replace('_', ' ')})"
    want = "TRUE" if fn.endswith("TRUE") else "FALSE"

    def r(e, xs):
        s = f"({xs[0]} <=> {want})"
        return f"(NOT {s})" if "_NOT_" in fn else s
    return r


TABLE = [
    *(SparkFn(op, lambda e, xs: f"({xs[0]} {e.fn} {xs[1]})") for op in COMPARISONS),
    SparkFn("AND", lambda e, xs: "(" + " AND ".join(xs) + ")", flag=_stop_flag("FALSE")),
    SparkFn("OR", lambda e, xs: "(" + " OR ".join(xs) + ")", flag=_stop_flag("TRUE")),
    SparkFn("NOT", lambda e, xs: f"(NOT {xs[0]})"),
    *(SparkFn(fn, _is_spark(fn)) for fn in IS_TESTS),
    SparkFn("CASE", _case_spark, flag=_case_flag),
    SparkFn("COALESCE", _coalesce_spark, flag=_coalesce_flag),
    SparkFn("NULLIF", lambda e, xs: f"nullif({xs[0]}, {xs[1]})"),
    SparkFn("IN", lambda e, xs: f"({xs[0]} IN (" + ", ".join(xs[1:]) + "))"),
]
