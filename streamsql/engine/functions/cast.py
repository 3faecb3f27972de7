"""CAST: conversions between types, with SQL's errors where a value does not convert.

A number that does not fit the target (an integer, a DECIMAL's precision, REAL's range) is out
of range; a string that is no value of the target type is an invalid cast. Strings are read by
one grammar per type, the same in Python and Spark (leading and trailing characters up to
U+0020 are ignored, as Spark does):

- integers: ``[+-]digits``; DECIMAL, REAL, DOUBLE: ``[+-]digits[.digits][e[+-]digits]``
  (no NaN, Infinity or type suffixes); BOOLEAN: true/t/yes/y/1, false/f/no/n/0 (any case);
- TIMESTAMP: ``YYYY-MM-DD[( |T)HH:MM[:SS[.fff]]][Z|+00:00]``, a valid date and time.

A DOUBLE or REAL becomes text as Java writes it (:func:`double_text`), which is also what Spark's
CAST gives. The Spark SQL of CAST is :mod:`streamsql.engine.runtime.spark.sqlfunctions.cast`.
"""
from __future__ import annotations

import math
import re

import numpy as np

from .. import time as sqltime
from ..types import SqlType
from .errors import DATETIME_OVERFLOW, INVALID_CAST, CalcError
from .spec import (INCREASING, NOT_MONOTONIC, Fn, fit_decimal, fit_float, fit_int, fit_timestamp, out_of_range,
                   to_decimal)

_SPACE = "".join(chr(i) for i in range(33))
#: the grammars a string must match to convert (regular expressions both Python and Java read
#: alike; the Spark runtime checks strings against the same two before its own conversion)
NUMBER_GRAMMAR = "[+-]?([0-9]+[.]?[0-9]*|[.][0-9]+)([eE][+-]?[0-9]+)?"
TIMESTAMP_GRAMMAR = ("[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}([ T][0-9]{1,2}:[0-9]{2}(:[0-9]{2}([.][0-9]{1,3}0{0,6})?)?)?"
                     " *(Z|[+-]00:?00)?")
_INT_RE = re.compile(r"[+-]?[0-9]+\Z")
_NUM_RE = re.compile(NUMBER_GRAMMAR + r"\Z")
_TS_RE = re.compile(TIMESTAMP_GRAMMAR + r"\Z")
_TRUE = ("true", "t", "yes", "y", "1")
_FALSE = ("false", "f", "no", "n", "0")


def _invalid(dst: SqlType) -> CalcError:
    return CalcError(INVALID_CAST, f"to {dst.with_nullable(True)}")


def _text(v: str, pattern, dst: SqlType) -> str:
    s = v.strip(_SPACE)
    if not pattern.match(s):
        raise _invalid(dst)
    return s


def cast_value(v, src: SqlType, dst: SqlType):
    """SQL CAST of ``v`` from ``src`` to ``dst``; raises :class:`CalcError` where it does not
    convert."""
    if v is None:
        return None
    d, s = dst.name, src.name
    if d in ("VARCHAR", "CHAR"):
        if s == "TIMESTAMP":
            r = sqltime.format_timestamp(v)
        elif s == "BOOLEAN":
            r = "true" if v else "false"
        elif s in ("DOUBLE", "REAL"):
            r = double_text(v, s == "REAL")
        else:
            r = str(v)
        return r[:dst.precision] if dst.precision is not None and d == "CHAR" else r
    if d in ("TINYINT", "SMALLINT", "INTEGER", "BIGINT"):
        if s == "TIMESTAMP":
            return fit_int(v // 1000, dst)
        if isinstance(v, str):
            return fit_int(int(_text(v, _INT_RE, dst)), dst)
        if isinstance(v, float):
            if not math.isfinite(v):
                raise out_of_range(dst)
            return fit_int(int(v), dst)
        return fit_int(int(v), dst)
    if d in ("DOUBLE", "REAL"):
        if s == "TIMESTAMP":
            return fit_float(v / 1000.0, dst)
        if isinstance(v, str):
            return fit_float(float(_text(v, _NUM_RE, dst)), dst)
        return fit_float(float(v), dst, v if isinstance(v, float) else 0.0)
    if d == "DECIMAL":
        if s == "TIMESTAMP":
            return fit_decimal(to_decimal(v).scaleb(-3), dst)
        if isinstance(v, str):
            return fit_decimal(to_decimal(_text(v, _NUM_RE, dst)), dst)
        if isinstance(v, float) and not math.isfinite(v):
            raise out_of_range(dst)
        return fit_decimal(to_decimal(int(v) if isinstance(v, bool) else v), dst)
    if d == "BOOLEAN":
        if isinstance(v, str):
            u = v.strip(_SPACE).lower()
            if u in _TRUE:
                return True
            if u in _FALSE:
                return False
            raise _invalid(dst)
        return bool(v)
    if d == "TIMESTAMP":
        if s == "TIMESTAMP":
            return v
        if isinstance(v, str):
            text = _text(v, _TS_RE, dst)
            try:
                return fit_timestamp(sqltime.parse_timestamp(text))
            except sqltime.TimeFormatError:
                raise _invalid(dst) from None
        if isinstance(v, float) and not math.isfinite(v):
            raise out_of_range(dst)
        if s == "DECIMAL":
            ms = int(v.scaleb(3))
        elif s in ("DOUBLE", "REAL"):
            x = v * 1000
            if not math.isfinite(x):
                raise CalcError(DATETIME_OVERFLOW, "for TIMESTAMP")
            ms = int(x)
        else:
            ms = int(v) * 1000
        return fit_timestamp(ms)
    if d == s:
        return v
    raise ValueError(f"cannot cast {src} to {dst}")


def double_text(v: float, single: bool) -> str:
    """A DOUBLE (``single``: a REAL) as text: Java's ``Double.toString``/``Float.toString``, what
    Spark's CAST to a string gives too."""
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "Infinity" if v > 0 else "-Infinity"
    x = np.float32(v) if single else np.float64(v)
    if x == 0:
        return "-0.0" if math.copysign(1, v) < 0 else "0.0"
    if 1e-3 <= abs(float(x)) < 1e7:
        return np.format_float_positional(x, unique=True, trim="0")
    mant, exp = np.format_float_scientific(x, unique=True, trim="0").split("e")
    return f"{mant}E{int(exp)}"


def _cast_type(ts, arg):
    src = ts[0]
    if src.name == "INTERVAL" and not arg.is_string:
        return None
    return arg.with_nullable(src.nullable)


def _cast_python(e):
    src, dst = e.args[0].type, e.type
    return lambda v: cast_value(v, src, dst)


def _cast_monotonic(e, ms):
    return INCREASING if e.type.name in ("TIMESTAMP", "BIGINT") and ms[0] == INCREASING else NOT_MONOTONIC


def _cast_samples():
    nums = ("TINYINT", "SMALLINT", "INTEGER", "BIGINT", "DECIMAL(5,2)", "DECIMAL(38,0)", "REAL", "DOUBLE")
    out = []
    for a in nums:
        for b in nums + ("VARCHAR", "BOOLEAN", "TIMESTAMP"):
            out.append(((a,), b))
    for b in nums + ("BOOLEAN", "TIMESTAMP", "CHAR(3)"):
        out.append((("VARCHAR",), b))
    for b in ("BIGINT", "INTEGER", "DECIMAL(20,3)", "DOUBLE", "VARCHAR"):
        out.append((("TIMESTAMP",), b))
    out += [(("BOOLEAN",), b) for b in ("INTEGER", "DOUBLE", "VARCHAR")]
    return tuple(out)


TABLE = [
    Fn("CAST", _cast_type, _cast_python,
       errors=("NUMERIC_OUT_OF_RANGE", "INVALID_CAST", "DATETIME_FIELD_OVERFLOW"), monotonic=_cast_monotonic,
       samples=_cast_samples()),
]
