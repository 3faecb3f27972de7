"""Spark SQL of the arithmetic and numeric functions (:mod:`streamsql.engine.functions.numeric`):
the ``try_*`` family (NULL exactly where the value cannot be computed) plus explicit checks
where Spark's answer would be a value (``MIN DIV -1``, infinities, NaN)."""
from __future__ import annotations

import decimal

from ....functions import temporal as engine_temporal
from ....functions.spec import int_lits
from .. import sqltext as S
from . import SparkFn
from .temporal import arith_fails as _temporal_fails, arith_spark as _temporal_spark

_CTX = decimal.Context(prec=80)
_TRY = {"+": "try_add", "-": "try_subtract", "*": "try_multiply", "/": "try_divide", "%": "try_mod"}


def _exact(t) -> bool:
    return t.is_integer or t.name == "DECIMAL"


def _as(x: str, src, dst) -> str:
    return x if src.name == dst.name and src.scale == dst.scale else S.plain_cast(x, dst)


def _temporal(e) -> bool:
    return engine_temporal.is_temporal_arith(e.type, e.args[0].type, e.args[1].type)


# --------------------------------------------------------------------------- + - * / %

def _arith_spark(e, xs):
    op, t = e.fn, e.type
    ta, tb = e.args[0].type, e.args[1].type
    if _temporal(e):
        return _temporal_spark(e, xs)
    x, y = xs
    if t.is_integer:
        x, y = _as(x, ta, t), _as(y, tb, t)
        if op == "/":
            return S.try_cast(f"({x} DIV nullif({y}, 0))", t)
        return f"{_TRY[op]}({x}, {y})"
    if t.name == "DECIMAL":
        # Spark's exact decimal arithmetic on the operands as typed; the result then fits ours
        return S.try_cast(f"{_TRY[op]}({x}, {y})", t)
    x, y = S.plain_cast(x, t), S.plain_cast(y, t)
    if op in "/%":
        return S.plain_cast(f"{_TRY[op]}({x}, {y})", t)
    return f"({x} {op} {y})"


def _arith_fails(e, xs, v):
    op, t = e.fn, e.type
    if _temporal(e):
        return _temporal_fails(e, xs, v)
    x, y = xs
    if t.is_integer and op == "/":
        lo, _hi = int_lits(t)
        return f"({y} = 0 OR ({x} = {lo} AND {y} = -1))"
    if t.is_integer or t.name == "DECIMAL":
        return f"({v} IS NULL)"
    inf = S.INF_REAL if t.name == "REAL" else S.INF_DOUBLE
    finite = "".join(f" AND abs({z}) <> {S.INF_DOUBLE}" for z, a in zip(xs, e.args) if a.type.is_approx)
    return f"({v} IS NULL OR (abs({v}) = {inf}{finite}))"


def _arith_plain(e, xs):
    op, t = e.fn, e.type
    if _temporal(e):
        return _temporal_spark(e, xs)
    x, y = xs
    if not (t.is_integer or t.name == "DECIMAL"):
        x, y = S.plain_cast(x, t), S.plain_cast(y, t)
    if op == "/" and t.is_integer:
        return S.plain_cast(f"({x} DIV {y})", t)
    return S.plain_cast(f"({x} {op} {y})", t)


# --------------------------------------------------------------------------- unary minus, ABS

def _neg_spark(e, xs):
    # exact types through try_subtract: Spark's unary minus on a DECIMAL(38) rounds it (and throws)
    t = e.type
    if _exact(t):
        return f"try_subtract({S.literal(0, t)}, {xs[0]})"
    return S.plain_cast(f"(- {xs[0]})", t)


def _int_null_fails(e, xs, v):
    return f"({v} IS NULL)" if _exact(e.type) else None


def _abs_spark(e, xs):
    t, x = e.type, xs[0]
    if _exact(t):
        return f"CASE WHEN {x} < 0 THEN try_subtract({S.literal(0, t)}, {x}) ELSE {x} END"
    return S.plain_cast(f"abs({x})", t)


# --------------------------------------------------------------------------- ROUND, FLOOR, CEIL

def _round_spark(e, xs):
    t = e.type
    x = xs[0]
    d = xs[1] if len(xs) > 1 else "0"
    if t.is_integer:
        return S.try_cast(f"round(CAST({x} AS DECIMAL(20,0)), {d})", t)
    if t.name == "DECIMAL":
        # Spark's round throws (in both ANSI modes) where the rounded value has no room: those
        # rows are out of range, so they do not reach it
        dv = e.args[1].value if len(e.args) > 1 and type(e.args[1]).__name__ == "Lit" else 0
        if isinstance(dv, int) and dv < t.scale:
            lim = _CTX.subtract(decimal.Decimal(10 ** (t.precision - t.scale)), decimal.Decimal(5).scaleb(-dv - 1))
            return (f"CASE WHEN {x} < {S.literal(lim, t)} AND {x} > {S.literal(lim.copy_negate(), t)} "
                    f"THEN {S.try_cast(f'round({x}, {d})', t)} END")
    return S.try_cast(f"round({x}, {d})", t)


def _round_plain(e, xs):
    d = xs[1] if len(xs) > 1 else "0"
    return S.plain_cast(f"round({xs[0]}, {d})", e.type)


def _null_fails(e, xs, v):
    return f"({v} IS NULL)"


def _floor_ceil_spark(e, xs):
    t, x = e.type, xs[0]
    if t.is_integer:
        return x
    if t.is_approx:
        # Spark's floor() goes through BIGINT: only below 2**52 (above, every double is whole)
        return f"CASE WHEN abs({x}) < 4503599627370496D THEN CAST({e.fn.lower()}({x}) AS {S.ddl(t)}) ELSE {x} END"
    return S.try_cast(f"{e.fn.lower()}({x})", t)


def _floor_ceil_plain(e, xs):
    return S.plain_cast(f"{e.fn.lower()}({xs[0]})", e.type)


# --------------------------------------------------------------------------- POWER, SQRT, LN, EXP

def _nan_or_inf(e, xs, v):
    finite = "".join(f" AND abs({x}) <> {S.INF_DOUBLE} AND NOT isnan({x})"
                     for x, a in zip(xs, e.args) if a.type.is_approx)
    return f"(({v} IS NULL OR isnan({v}) OR abs({v}) = {S.INF_DOUBLE}){finite})"


def _double_fn(name, value) -> SparkFn:
    return SparkFn(name, value, fails=_nan_or_inf, plain=value)


TABLE = [
    *(SparkFn(op, _arith_spark, fails=_arith_fails, plain=_arith_plain) for op in ("+", "-", "*", "/", "%")),
    SparkFn("NEG", _neg_spark, fails=_int_null_fails, plain=lambda e, xs: S.plain_cast(f"(- {xs[0]})", e.type)),
    SparkFn("ABS", _abs_spark, fails=_int_null_fails, plain=lambda e, xs: S.plain_cast(f"abs({xs[0]})", e.type)),
    SparkFn("ROUND", _round_spark, fails=_null_fails, plain=_round_plain),
    SparkFn("FLOOR", _floor_ceil_spark, plain=_floor_ceil_plain),
    SparkFn("CEIL", _floor_ceil_spark, plain=_floor_ceil_plain),
    _double_fn("POWER", lambda e, xs: f"power({xs[0]}, {xs[1]})"),
    _double_fn("SQRT", lambda e, xs: f"sqrt({xs[0]})"),
    _double_fn("LN", lambda e, xs: f"ln({xs[0]})"),
    _double_fn("EXP", lambda e, xs: f"exp({xs[0]})"),
]
