"""What the function table holds per function, and the value checks its evaluators share."""
from __future__ import annotations

import datetime as _dt
import decimal
import math
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from .. import time as sqltime
from ..types import INT_BITS, SqlType, quantize
from .errors import DATETIME_OVERFLOW, NUMERIC_OUT_OF_RANGE, CalcError

INCREASING, CONSTANT, NOT_MONOTONIC = "increasing", "constant", "none"


@dataclass(frozen=True)
class Fn:
    """One SQL function or operator, as the engine needs it (each runtime renders it its own way:
    the Spark runtime's SQL for it is ``runtime/spark/sqlfunctions/``, checked against this
    table row by row).

    - ``type(arg_types, arg)``: the result type, or None when the arguments do not fit (the
      dialect reports ``Cannot apply ...``);
    - ``python(call)``: a Python evaluator of the argument values (``lazy`` ones get the compiled
      arguments instead and decide what to evaluate: AND, OR, CASE, COALESCE; ``strict`` ones
      give NULL for a NULL argument without being called);
    - ``errors``: the kinds of calculator error it can raise (none: it never raises);
    - ``monotonic(call, ms)``: the call's monotonicity in ROWTIME from its arguments' (None:
      not monotonic unless constant);
    - ``arrow(call)``: a function of the arguments' Arrow arrays computing the value with Arrow
      kernels, or None where Arrow would not give exactly the Python value (a lossy numeric
      comparison, say); only for functions that never raise (the Spark log source filters with
      it, :func:`streamsql.engine.expr.arrow_expr`);
    - ``samples``: argument type lists (and the non-expression operand) the table test walks.
    """
    name: str
    type: Callable[[list, Any], SqlType | None]
    python: Callable
    errors: tuple = ()
    monotonic: Callable | None = None
    lazy: bool = False
    strict: bool = True
    samples: tuple = ()
    arrow: Callable | None = None


def nullable(*types: SqlType) -> bool:
    return any(t.nullable for t in types)


# --------------------------------------------------------------------------- ranges

INT_RANGE = {n: (-(1 << (b - 1)), (1 << (b - 1)) - 1) for n, b in INT_BITS.items()}
#: TIMESTAMP values: years 0001 to 9999, as SQL says, in epoch milliseconds
TS_MIN = sqltime.from_datetime(_dt.datetime(1, 1, 1))
TS_MAX = sqltime.from_datetime(_dt.datetime(9999, 12, 31, 23, 59, 59, 999000))


def out_of_range(t: SqlType) -> CalcError:
    return CalcError(NUMERIC_OUT_OF_RANGE, f"for {t.with_nullable(True)}")


def fit_int(v: int, t: SqlType) -> int:
    lo, hi = INT_RANGE[t.name]
    if lo <= v <= hi:
        return v
    raise out_of_range(t)


def fit_decimal(v: decimal.Decimal, t: SqlType) -> decimal.Decimal:
    if not v.is_finite() or (v != 0 and v.adjusted() >= t.precision - t.scale + 1):
        raise out_of_range(t)
    q = quantize(v, t)
    if q is None:
        raise out_of_range(t)
    return q


def to_real(v: float) -> float:
    """A double rounded to REAL (float32); infinity when it is beyond REAL's range."""
    with np.errstate(over="ignore"):
        return float(np.float32(v))


def fit_float(v: float, t: SqlType, *operands) -> float:
    """A DOUBLE or REAL result; an infinity from finite operands is out of range."""
    if t.name == "REAL":
        v = to_real(v)
    if math.isinf(v) and not any(isinstance(x, float) and math.isinf(x) for x in operands):
        raise out_of_range(t)
    return v


def fit_timestamp(v: int) -> int:
    if TS_MIN <= v <= TS_MAX:
        return v
    raise CalcError(DATETIME_OVERFLOW, "for TIMESTAMP")


def fit(v, t: SqlType):
    """``v`` as a value of ``t`` (numbers and timestamps checked; others as they are)."""
    if v is None:
        return None
    if t.is_integer:
        return fit_int(int(v), t)
    if t.name == "DECIMAL":
        return fit_decimal(to_decimal(v), t)
    if t.is_approx:
        return fit_float(float(v), t)
    if t.name == "TIMESTAMP":
        return fit_timestamp(int(v))
    return v


def to_decimal(v) -> decimal.Decimal:
    if isinstance(v, decimal.Decimal):
        return v
    if isinstance(v, float):
        return decimal.Decimal(repr(v))
    return decimal.Decimal(v)


def int_lits(t: SqlType) -> tuple[int, int]:
    return INT_RANGE[t.name]
