"""Arithmetic and numeric functions: exact integer and DECIMAL arithmetic with range checks,
DOUBLE/REAL with division by zero and overflow as errors (not IEEE infinities). Their Spark SQL
is :mod:`streamsql.engine.runtime.spark.sqlfunctions.numeric`."""
from __future__ import annotations

import decimal
import math

from .. import time as sqltime
from ..types import DOUBLE, arithmetic_type, decimal_type
from . import temporal
from .errors import DIVISION_BY_ZERO, INVALID_LOG, INVALID_POWER, CalcError
from .spec import (CONSTANT, INCREASING, NOT_MONOTONIC, Fn, fit_decimal, fit_float, fit_int, int_lits,
                   nullable, out_of_range, to_decimal, to_real)

_CTX = decimal.Context(prec=80)
NUMERIC_SAMPLE_TYPES = ("TINYINT", "SMALLINT", "INTEGER", "BIGINT", "DECIMAL(5,2)", "DECIMAL(38,0)", "REAL", "DOUBLE")


def _zero():
    return CalcError(DIVISION_BY_ZERO)


def _trunc_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _trunc_mod(a: int, b: int) -> int:
    r = abs(a) % abs(b)
    return r if a >= 0 else -r


# --------------------------------------------------------------------------- + - * / %

def _arith_python(e):
    op, t = e.fn, e.type
    ta, tb = e.args[0].type, e.args[1].type
    if temporal.is_temporal_arith(t, ta, tb):
        return temporal.arith_python(e)
    if t.is_integer:
        lo_hi = int_lits(t)
        lo, hi = lo_hi

        def check(r):
            if lo <= r <= hi:
                return r
            raise out_of_range(t)
        if op == "+":
            return lambda a, b: check(a + b)
        if op == "-":
            return lambda a, b: check(a - b)
        if op == "*":
            return lambda a, b: check(a * b)
        if op == "/":
            def div(a, b):
                if b == 0:
                    raise _zero()
                return check(_trunc_div(a, b))
            return div

        def mod(a, b):
            if b == 0:
                raise _zero()
            return _trunc_mod(a, b)
        return mod
    if t.name == "DECIMAL":
        f = {"+": _CTX.add, "-": _CTX.subtract, "*": _CTX.multiply, "/": _CTX.divide, "%": _CTX.remainder}[op]

        def dec(a, b):
            a, b = to_decimal(a), to_decimal(b)
            if op in "/%" and b == 0:
                raise _zero()
            return fit_decimal(f(a, b), t)
        return dec
    real = t.name == "REAL"
    conv = (lambda v: to_real(float(v))) if real else float

    def flt(a, b):
        a, b = conv(a), conv(b)
        if op == "+":
            r = a + b
        elif op == "-":
            r = a - b
        elif op == "*":
            r = a * b
        elif b == 0:
            raise _zero()
        elif op == "/":
            r = a / b
        else:
            r = math.fmod(a, b)
        return fit_float(r, t, a, b)
    return flt


def _arith_errors(op):
    return ("DIVISION_BY_ZERO", "NUMERIC_OUT_OF_RANGE", "DATETIME_FIELD_OVERFLOW") if op in "/%" \
        else ("NUMERIC_OUT_OF_RANGE", "DATETIME_FIELD_OVERFLOW")


def _plus_monotonic(e, ms):
    return INCREASING if NOT_MONOTONIC not in ms else NOT_MONOTONIC


def _minus_monotonic(e, ms):
    return INCREASING if ms[0] == INCREASING and ms[1] == CONSTANT else NOT_MONOTONIC


_PAIRS = tuple((a, a) for a in NUMERIC_SAMPLE_TYPES) + (("INTEGER", "BIGINT"), ("TINYINT", "INTEGER"),
                                                        ("INTEGER", "DECIMAL(5,2)"), ("INTEGER", "DOUBLE"),
                                                        ("DECIMAL(5,2)", "DOUBLE"), ("REAL", "INTEGER"))


def _arith(op: str) -> Fn:
    mono = {"+": _plus_monotonic, "-": _minus_monotonic}.get(op)
    ivs = (sqltime.Interval(millis=sqltime.DAY), sqltime.Interval(months=12), sqltime.Interval(millis=-sqltime.HOUR))
    samples = _PAIRS + (tuple(("TIMESTAMP", ("lit", "INTERVAL", iv)) for iv in ivs) if op in "+-" else ())
    return Fn(op, lambda ts, arg, op=op: arithmetic_type(op, ts[0], ts[1]), _arith_python,
              errors=_arith_errors(op), monotonic=mono, samples=samples)


# --------------------------------------------------------------------------- unary minus, ABS

def _neg_type(ts, arg):
    t = ts[0]
    return t if t.is_numeric or t.name in ("INTERVAL", "NULL") else None


def _neg_python(e):
    t = e.type
    if t.is_integer:
        return lambda v: fit_int(-v, t)
    if t.name == "DECIMAL":
        return lambda v: v.copy_negate()      # not ``-v``: that rounds to the context's 28 digits
    return lambda v: -v


def _numeric_type(ts, arg):
    t = ts[0]
    return t if t.is_numeric or t.name == "NULL" else None


def _abs_python(e):
    t = e.type
    if t.is_integer:
        return lambda v: fit_int(abs(v), t)
    if t.name == "DECIMAL":
        return lambda v: v.copy_abs()
    return abs


_ONE_NUMERIC = tuple((a,) for a in NUMERIC_SAMPLE_TYPES)


# --------------------------------------------------------------------------- ROUND, FLOOR, CEIL

def _round_type(ts, arg):
    x = ts[0]
    if not (x.is_numeric or x.name == "NULL"):
        return None
    if len(ts) > 1 and not (ts[1].is_integer or ts[1].name == "NULL"):
        return None
    return x.with_nullable(nullable(*ts))


_WIDE = decimal.Context(prec=1000)


def _round_python(e):
    t = e.type
    real = t.name == "REAL"

    def f(v, d=0):
        q = decimal.Decimal(1).scaleb(-d)
        if isinstance(v, float):
            if not math.isfinite(v):
                return v
            r = float(decimal.Decimal(repr(v)).quantize(q, rounding=decimal.ROUND_HALF_UP, context=_WIDE))
            return to_real(r) if real else r
        if isinstance(v, decimal.Decimal):
            return fit_decimal(v.quantize(q, rounding=decimal.ROUND_HALF_UP, context=_CTX), t)
        if d >= 0:
            return v
        m = 10 ** (-d)
        r = (abs(v) + m // 2) // m * m
        return fit_int(r if v >= 0 else -r, t)
    return f


def _floor_ceil_type(ts, arg):
    t = ts[0]
    if not t.is_numeric:
        return None
    if t.name == "DECIMAL":
        return decimal_type(min(38, t.precision - t.scale + 1), 0, t.nullable)
    return t


def _floor_ceil_python(e):
    t = e.type
    floor = e.fn == "FLOOR"
    g = math.floor if floor else math.ceil
    rounding = decimal.ROUND_FLOOR if floor else decimal.ROUND_CEILING

    def f(v):
        if isinstance(v, int):
            return v
        if isinstance(v, decimal.Decimal):
            return fit_decimal(v.to_integral_value(rounding=rounding), t)
        return float(g(v)) if math.isfinite(v) else v
    return f


# --------------------------------------------------------------------------- POWER, SQRT, LN, EXP

def _double_type(ts, arg):
    if not all(t.is_numeric or t.name == "NULL" for t in ts):
        return None
    return DOUBLE.with_nullable(nullable(*ts))


def _power_python(e):
    def f(a, b):
        a, b = float(a), float(b)
        if a == 0 and b < 0:
            raise CalcError(INVALID_POWER)
        if a < 0 and math.isfinite(b) and b != int(b):
            raise CalcError(INVALID_POWER)
        try:
            r = a ** b
        except OverflowError:
            raise out_of_range(e.type) from None
        return fit_float(r, e.type, a, b)
    return f


def _sqrt_python(e):
    def f(a):
        a = float(a)
        if a < 0:
            raise CalcError(INVALID_POWER)
        return math.sqrt(a)
    return f


def _ln_python(e):
    def f(a):
        a = float(a)
        if a <= 0:
            raise CalcError(INVALID_LOG)
        return math.log(a)
    return f


def _exp_python(e):
    def f(a):
        try:
            return fit_float(math.exp(float(a)), e.type)
        except OverflowError:
            raise out_of_range(e.type) from None
    return f


def _double_fn(name, python, errors, samples=_ONE_NUMERIC) -> Fn:
    return Fn(name, _double_type, python, errors=errors, samples=samples)


TABLE = [
    *(_arith(op) for op in ("+", "-", "*", "/", "%")),
    Fn("NEG", _neg_type, _neg_python, errors=("NUMERIC_OUT_OF_RANGE",), samples=_ONE_NUMERIC),
    Fn("ABS", _numeric_type, _abs_python, errors=("NUMERIC_OUT_OF_RANGE",), samples=_ONE_NUMERIC),
    Fn("ROUND", _round_type, _round_python, errors=("NUMERIC_OUT_OF_RANGE",),
       samples=tuple((a, ("lit", "INTEGER", d)) for a in NUMERIC_SAMPLE_TYPES for d in (0, 1, -1))),
    Fn("FLOOR", _floor_ceil_type, _floor_ceil_python, samples=_ONE_NUMERIC),
    Fn("CEIL", _floor_ceil_type, _floor_ceil_python, samples=_ONE_NUMERIC),
    _double_fn("POWER", _power_python, ("INVALID_ARGUMENT_FOR_POWER_FUNCTION", "NUMERIC_OUT_OF_RANGE"),
               samples=(("DOUBLE", "DOUBLE"), ("INTEGER", "INTEGER"), ("DECIMAL(5,2)", "INTEGER"))),
    _double_fn("SQRT", _sqrt_python, ("INVALID_ARGUMENT_FOR_POWER_FUNCTION",)),
    _double_fn("LN", _ln_python, ("INVALID_ARGUMENT_FOR_LOGARITHM",)),
    _double_fn("EXP", _exp_python, ("NUMERIC_OUT_OF_RANGE",)),
]
