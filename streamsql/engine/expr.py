"""Typed scalar expressions: the analyzed form of SQL expressions, and their Python evaluator.

The analyzer (``engine/sql``) resolves names and types and builds these nodes; the local runtime
compiles them to Python closures here (never ``eval``), and the Spark runtime renders the same
nodes as Spark SQL (``runtime/spark/sqlgen.py``). Both follow SQL, not Python or Spark: integer
division truncates toward zero, comparisons with NULL are unknown, AND/OR use three-valued logic.

A row is a tuple; ``Col(i)`` reads position ``i``. ``Rowtime(k)`` is the rowtime of input ``k``
(0 for single-input operators; a join numbers its inputs left to right).
"""
from __future__ import annotations

import decimal
import math
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

from . import time as T
from .types import (SqlType, quantize, wrap_int)


class Expr:
    type: SqlType

    def children(self) -> Sequence["Expr"]:
        return ()


@dataclass(frozen=True, eq=False)
class Col(Expr):
    index: int
    name: str
    type: SqlType

    def __repr__(self):
        return f"${self.index}:{self.name}"


@dataclass(frozen=True, eq=False)
class Rowtime(Expr):
    input: int = 0
    type: SqlType = field(default=SqlType("TIMESTAMP", nullable=False))

    def __repr__(self):
        return f"ROWTIME#{self.input}"


@dataclass(frozen=True, eq=False)
class Lit(Expr):
    value: Any
    type: SqlType

    def __repr__(self):
        return f"Lit({self.value!r}:{self.type})"


@dataclass(frozen=True, eq=False)
class Call(Expr):
    """``fn`` is one of :data:`FUNCTIONS`; ``arg`` carries a non-expression operand
    (the unit of FLOOR_TO, the target type of CAST, ...)."""

    fn: str
    args: tuple
    type: SqlType
    arg: Any = None

    def children(self):
        return self.args

    def __repr__(self):
        extra = f"[{self.arg}]" if self.arg is not None else ""
        return f"{self.fn}{extra}({', '.join(map(repr, self.args))})"


def walk(e: Expr):
    yield e
    for c in e.children():
        yield from walk(c)


def uses_rowtime(e: Expr) -> bool:
    return any(isinstance(x, Rowtime) for x in walk(e))


def columns_used(e: Expr) -> set[int]:
    return {x.index for x in walk(e) if isinstance(x, Col)}


def remap(e: Expr, cols: Callable[[Col], Expr] | None = None,
          rowtime: Callable[[Rowtime], Expr] | None = None) -> Expr:
    """A copy of ``e`` with column and rowtime references replaced."""
    if isinstance(e, Col):
        return cols(e) if cols else e
    if isinstance(e, Rowtime):
        return rowtime(e) if rowtime else e
    if isinstance(e, Call):
        return Call(e.fn, tuple(remap(a, cols, rowtime) for a in e.args), e.type, e.arg)
    return e


# --------------------------------------------------------------------------- monotonicity

INCREASING, CONSTANT, NOT_MONOTONIC = "increasing", "constant", "none"


def monotonicity(e: Expr, input: int | None = None) -> str:
    """Whether ``e`` is a non-decreasing function of the input rowtime (``increasing``), does not
    depend on the row (``constant``) or neither. Used by AS ROWTIME, GROUP BY and ORDER BY."""
    if isinstance(e, Lit):
        return CONSTANT
    if isinstance(e, Rowtime):
        return INCREASING if input is None or e.input == input else NOT_MONOTONIC
    if isinstance(e, Col):
        return NOT_MONOTONIC
    if isinstance(e, Call):
        ms = [monotonicity(a, input) for a in e.args]
        if all(m == CONSTANT for m in ms):
            return CONSTANT
        if e.fn in ("FLOOR_TO", "CEIL_TO", "STEP"):
            return ms[0] if ms[0] != NOT_MONOTONIC and all(m == CONSTANT for m in ms[1:]) else NOT_MONOTONIC
        if e.fn == "+" and NOT_MONOTONIC not in ms:
            return INCREASING
        if e.fn == "-" and ms[1] == CONSTANT and ms[0] == INCREASING:
            return INCREASING
        if e.fn == "CAST" and e.type.name in ("TIMESTAMP", "BIGINT") and ms[0] == INCREASING:
            return INCREASING
    return NOT_MONOTONIC


# --------------------------------------------------------------------------- evaluation

class EvalError(Exception):
    pass


def _null_safe(f):
    def g(*xs):
        for x in xs:
            if x is None:
                return None
        return f(*xs)
    return g


def _to_decimal(v):
    if isinstance(v, decimal.Decimal):
        return v
    if isinstance(v, float):
        return decimal.Decimal(repr(v))
    return decimal.Decimal(v)


def _numeric_binop(op: str, t: SqlType, ta: SqlType, tb: SqlType):
    if t.name == "INTERVAL" or t.name == "TIMESTAMP" or ta.name == "INTERVAL" or tb.name == "INTERVAL":
        return _temporal_binop(op, t, ta, tb)
    if t.is_integer:
        def f(a, b):
            if op == "+":
                r = a + b
            elif op == "-":
                r = a - b
            elif op == "*":
                r = a * b
            elif op == "/":
                if b == 0:
                    return None
                q = abs(a) // abs(b)
                r = q if (a >= 0) == (b >= 0) else -q
            else:
                if b == 0:
                    return None
                r = int(math.fmod(a, b))
            return wrap_int(r, t)
        return _null_safe(f)
    if t.name == "DECIMAL":
        ctx = decimal.Context(prec=80)

        def f(a, b):
            a, b = _to_decimal(a), _to_decimal(b)
            if op == "+":
                r = ctx.add(a, b)
            elif op == "-":
                r = ctx.subtract(a, b)
            elif op == "*":
                r = ctx.multiply(a, b)
            elif op == "/":
                if b == 0:
                    return None
                r = ctx.divide(a, b)
            else:
                if b == 0:
                    return None
                r = ctx.remainder(a, b)
            return quantize(r, t)
        return _null_safe(f)

    def f(a, b):
        a, b = float(a), float(b)
        if op == "+":
            r = a + b
        elif op == "-":
            r = a - b
        elif op == "*":
            r = a * b
        elif op == "/":
            if b == 0:
                return None
            r = a / b
        else:
            if b == 0:
                return None
            r = math.fmod(a, b)
        return r
    return _null_safe(f)


def _temporal_binop(op, t, ta, tb):
    if ta.name == "TIMESTAMP" and tb.name == "INTERVAL":
        return _null_safe(lambda a, b: T.add_interval(a, b if op == "+" else -b))
    if ta.name == "INTERVAL" and tb.name == "TIMESTAMP":
        return _null_safe(lambda a, b: T.add_interval(b, a))
    if ta.name == "TIMESTAMP" and tb.name == "TIMESTAMP":
        return _null_safe(lambda a, b: T.Interval(millis=a - b))
    if ta.name == "INTERVAL" and tb.name == "INTERVAL":
        return _null_safe(lambda a, b: a + b if op == "+" else a - b)
    if ta.name == "INTERVAL":
        if op == "*":
            return _null_safe(lambda a, b: a.scale(b))
        return _null_safe(lambda a, b: None if b == 0 else a.scale(1 / float(b)))
    return _null_safe(lambda a, b: b.scale(a))


def _compare(op: str):
    import operator as o
    f = {"=": o.eq, "<>": o.ne, "<": o.lt, "<=": o.le, ">": o.gt, ">=": o.ge}[op]

    def g(a, b):
        if a is None or b is None:
            return None
        if isinstance(a, decimal.Decimal) and isinstance(b, float):
            a = float(a)
        elif isinstance(b, decimal.Decimal) and isinstance(a, float):
            b = float(b)
        return f(a, b)
    return g


def cast_value(v, src: SqlType, dst: SqlType):
    """SQL CAST with Spark's non-ANSI behaviour for what does not convert (NULL)."""
    if v is None:
        return None
    d, s = dst.name, src.name
    try:
        if d in ("VARCHAR", "CHAR"):
            if s == "TIMESTAMP":
                r = T.format_timestamp(v)
            elif s == "BOOLEAN":
                r = "true" if v else "false"
            elif s in ("DOUBLE", "REAL"):
                r = _spark_double_str(v, s == "REAL")
            elif isinstance(v, T.Interval):
                r = str(v)
            else:
                r = str(v)
            return r[:dst.precision] if dst.precision is not None and d == "CHAR" else r
        if d in ("TINYINT", "SMALLINT", "INTEGER", "BIGINT"):
            if s == "TIMESTAMP":
                return wrap_int(v // 1000, dst)
            if isinstance(v, str):
                v = v.strip()
                try:
                    x = int(v)
                except ValueError:
                    x = decimal.Decimal(v)
                    if not x.is_finite():
                        return None
                    x = int(x)
                lo, hi = -(1 << 63), (1 << 63) - 1
                if d != "BIGINT":
                    from .types import INT_BITS
                    lo, hi = -(1 << (INT_BITS[d] - 1)), (1 << (INT_BITS[d] - 1)) - 1
                return x if lo <= x <= hi else None
            if isinstance(v, bool):
                return int(v)
            if isinstance(v, float):
                if math.isnan(v) or math.isinf(v):
                    return None
                return wrap_int(int(v), dst)
            return wrap_int(int(v), dst)
        if d in ("DOUBLE", "REAL"):
            if s == "TIMESTAMP":
                return v / 1000.0
            if isinstance(v, str):
                return float(v.strip())
            return float(v)
        if d == "DECIMAL":
            if s == "TIMESTAMP":
                v = decimal.Decimal(v) / 1000
            return quantize(_to_decimal(v.strip() if isinstance(v, str) else v), dst)
        if d == "BOOLEAN":
            if isinstance(v, str):
                u = v.strip().lower()
                return True if u in ("true", "t", "yes", "y", "1") else False if u in ("false", "f", "no", "n", "0") else None
            return bool(v)
        if d == "TIMESTAMP":
            if s == "TIMESTAMP":
                return v
            if isinstance(v, str):
                return T.parse_timestamp(v)
            return int(v * 1000) if s in ("DOUBLE", "REAL", "DECIMAL") else int(v) * 1000
    except (ValueError, ArithmeticError, T.TimeFormatError, decimal.InvalidOperation):
        return None
    if d == s:
        return v
    raise EvalError(f"cannot cast {src} to {dst}")


def _spark_double_str(v: float, single: bool) -> str:
    """Java's ``Double.toString``/``Float.toString``, which Spark uses to cast to a string."""
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


def _like(pattern: str, escape: str | None):
    import re
    out = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if escape and c == escape and i + 1 < len(pattern):
            out.append(re.escape(pattern[i + 1]))
            i += 2
            continue
        out.append(".*" if c == "%" else "." if c == "_" else re.escape(c))
        i += 1
    return re.compile("".join(out), re.S)


Row = tuple
Fn = Callable[[tuple, tuple], Any]


def compile_expr(e: Expr) -> Fn:
    """A closure ``f(row, rowtimes)`` computing ``e``."""
    if isinstance(e, Col):
        i = e.index
        return lambda row, rts: row[i]
    if isinstance(e, Rowtime):
        k = e.input
        return lambda row, rts: rts[k]
    if isinstance(e, Lit):
        v = e.value
        return lambda row, rts: v
    if not isinstance(e, Call):
        raise EvalError(f"cannot compile {e!r}")
    fn, args = e.fn, [compile_expr(a) for a in e.args]
    at = [a.type for a in e.args]

    if fn in ("+", "-", "*", "/", "%"):
        op = _numeric_binop(fn, e.type, at[0], at[1])
        a, b = args
        return lambda row, rts: op(a(row, rts), b(row, rts))
    if fn == "NEG":
        a = args[0]
        t = e.type

        def neg(row, rts):
            v = a(row, rts)
            if v is None:
                return None
            if t.is_integer:
                return wrap_int(-v, t)
            return -v
        return neg
    if fn in ("=", "<>", "<", "<=", ">", ">="):
        c = _compare(fn)
        a, b = args
        return lambda row, rts: c(a(row, rts), b(row, rts))
    if fn == "AND":
        def and_(row, rts):
            r = True
            for f in args:
                v = f(row, rts)
                if v is False:
                    return False
                if v is None:
                    r = None
            return r
        return and_
    if fn == "OR":
        def or_(row, rts):
            r = False
            for f in args:
                v = f(row, rts)
                if v is True:
                    return True
                if v is None:
                    r = None
            return r
        return or_
    if fn == "NOT":
        a = args[0]
        return lambda row, rts: None if (v := a(row, rts)) is None else not v
    if fn == "IS_NULL":
        a = args[0]
        return lambda row, rts: a(row, rts) is None
    if fn == "IS_NOT_NULL":
        a = args[0]
        return lambda row, rts: a(row, rts) is not None
    if fn in ("IS_TRUE", "IS_FALSE", "IS_NOT_TRUE", "IS_NOT_FALSE"):
        a = args[0]
        want = fn.endswith("TRUE")
        neg = "_NOT_" in fn
        return lambda row, rts: ((a(row, rts) is want) != neg)
    if fn == "||":
        a, b = args
        return lambda row, rts: None if (x := a(row, rts)) is None or (y := b(row, rts)) is None else x + y
    if fn == "CAST":
        a = args[0]
        src, dst = at[0], e.type
        return lambda row, rts: cast_value(a(row, rts), src, dst)
    if fn in ("FLOOR_TO", "CEIL_TO"):
        a = args[0]
        unit = e.arg
        g = T.floor_to if fn == "FLOOR_TO" else T.ceil_to
        return lambda row, rts: None if (v := a(row, rts)) is None else g(v, unit)
    if fn == "STEP":
        a = args[0]
        iv = e.arg
        return lambda row, rts: None if (v := a(row, rts)) is None else T.step_floor(v, iv)
    if fn == "CASE":
        # args: when1, then1, when2, then2, ..., else
        pairs = [(args[i], args[i + 1]) for i in range(0, len(args) - 1, 2)]
        other = args[-1]

        def case(row, rts):
            for w, th in pairs:
                if w(row, rts) is True:
                    return th(row, rts)
            return other(row, rts)
        return case
    if fn == "COALESCE":
        def coalesce(row, rts):
            for f in args:
                v = f(row, rts)
                if v is not None:
                    return v
            return None
        return coalesce
    if fn == "NULLIF":
        a, b = args
        c = _compare("=")
        return lambda row, rts: None if c(x := a(row, rts), b(row, rts)) is True else x
    if fn == "IN":
        a, rest = args[0], args[1:]
        c = _compare("=")

        def in_(row, rts):
            v = a(row, rts)
            if v is None:
                return None
            r = False
            for f in rest:
                m = c(v, f(row, rts))
                if m is True:
                    return True
                if m is None:
                    r = None
            return r
        return in_
    if fn == "LIKE":
        a, p = args
        esc = e.arg
        cache: dict = {}

        def like(row, rts):
            v, pat = a(row, rts), p(row, rts)
            if v is None or pat is None:
                return None
            rx = cache.get(pat)
            if rx is None:
                rx = cache[pat] = _like(pat, esc)
            return rx.fullmatch(v) is not None
        return like
    simple = _SIMPLE.get(fn)
    if simple is not None:
        f = simple(e)
        if len(args) == 1:
            a = args[0]
            return lambda row, rts: f(a(row, rts))
        return lambda row, rts: f(*[g(row, rts) for g in args])
    raise EvalError(f"function {fn} has no Python implementation")


def _abs(e):
    t = e.type
    return _null_safe(lambda v: wrap_int(abs(v), t) if t.is_integer else abs(v))


def _round_num(e):
    t = e.type

    def f(v, d=0):
        if v is None or d is None:
            return None
        if isinstance(v, float):
            q = decimal.Decimal(repr(v)).quantize(decimal.Decimal(1).scaleb(-d), rounding=decimal.ROUND_HALF_UP)
            return float(q)
        if isinstance(v, decimal.Decimal):
            return quantize(v.quantize(decimal.Decimal(1).scaleb(-d), rounding=decimal.ROUND_HALF_UP), t)
        if d >= 0:
            return v
        m = 10 ** (-d)
        r = (abs(v) + m // 2) // m * m
        return r if v >= 0 else -r
    return f


def _floor_num(e):
    t = e.type
    return _null_safe(lambda v: (math.floor(v) if not isinstance(v, decimal.Decimal)
                                 else quantize(v.to_integral_value(rounding=decimal.ROUND_FLOOR), t))
                      if not isinstance(v, int) else v)


def _ceil_num(e):
    t = e.type
    return _null_safe(lambda v: (math.ceil(v) if not isinstance(v, decimal.Decimal)
                                 else quantize(v.to_integral_value(rounding=decimal.ROUND_CEILING), t))
                      if not isinstance(v, int) else v)


def _substring(e):
    def f(s, start, length=None):
        if s is None or start is None:
            return None
        # SQL: 1-based; a start below 1 eats into the length
        begin = start - 1
        if length is None:
            return s[max(begin, 0):]
        if length < 0:
            return None
        end = begin + length
        return s[max(begin, 0):max(end, 0)]
    return f


def _trim(e):
    mode = e.arg or "BOTH"

    def f(s, chars=" "):
        if s is None or chars is None:
            return None
        if mode == "LEADING":
            return s.lstrip(chars)
        if mode == "TRAILING":
            return s.rstrip(chars)
        return s.strip(chars)
    return f


_SIMPLE: dict[str, Callable[[Call], Callable]] = {
    "ABS": _abs,
    "UPPER": lambda e: _null_safe(str.upper),
    "LOWER": lambda e: _null_safe(str.lower),
    "CHAR_LENGTH": lambda e: _null_safe(len),
    "SUBSTRING": _substring,
    "TRIM": _trim,
    "POSITION": lambda e: _null_safe(lambda sub, s: s.find(sub) + 1),
    "ROUND": _round_num,
    "FLOOR": _floor_num,
    "CEIL": _ceil_num,
    "POWER": lambda e: _null_safe(lambda a, b: float(a) ** float(b)),
    "SQRT": lambda e: _null_safe(lambda a: math.sqrt(a) if a >= 0 else None),
    "LN": lambda e: _null_safe(lambda a: math.log(a) if a > 0 else None),
    "EXP": lambda e: _null_safe(lambda a: math.exp(a)),
}

#: Every function name a :class:`Call` may carry.
FUNCTIONS = frozenset(
    ["+", "-", "*", "/", "%", "NEG", "=", "<>", "<", "<=", ">", ">=", "AND", "OR", "NOT",
     "IS_NULL", "IS_NOT_NULL", "IS_TRUE", "IS_FALSE", "IS_NOT_TRUE", "IS_NOT_FALSE", "||", "CAST",
     "FLOOR_TO", "CEIL_TO", "STEP", "CASE", "COALESCE", "NULLIF", "IN", "LIKE"] + list(_SIMPLE))


# --------------------------------------------------------------------------- rowtime maps

def apply_rowtime_map(e: Expr, t: int, input: int = 0) -> int:
    """Value of a monotonic rowtime expression at rowtime ``t`` (maps bounds like rows)."""
    if t <= T.NO_TIME:
        return T.NO_TIME
    if t >= T.END_OF_TIME:
        return T.END_OF_TIME
    rts = (t,) * (input + 1)
    v = compile_expr(e)((), rts)
    return T.NO_TIME if v is None else int(v)


def rowtime_map_array(e: Expr, a: np.ndarray) -> np.ndarray:
    """Vectorised :func:`apply_rowtime_map` over int64 times (timelines of whole batches)."""
    a = np.asarray(a, dtype=np.int64)
    lo, hi = a <= T.NO_TIME, a >= T.END_OF_TIME
    r = _map_array(e, a)
    r = np.where(lo, T.NO_TIME, np.where(hi, T.END_OF_TIME, r))
    return r.astype(np.int64)


def _map_array(e: Expr, a: np.ndarray) -> np.ndarray:
    if isinstance(e, Rowtime):
        return a
    if isinstance(e, Lit):
        return np.full_like(a, e.value if not isinstance(e.value, T.Interval) else 0)
    if isinstance(e, Call):
        if e.fn == "FLOOR_TO":
            return T.floor_to_array(_map_array(e.args[0], a), e.arg)
        if e.fn == "CEIL_TO":
            x = _map_array(e.args[0], a)
            f = T.floor_to_array(x, e.arg)
            return np.where(f == x, x, T.next_boundary_array(f, e.arg))
        if e.fn == "STEP":
            x = _map_array(e.args[0], a)
            return x - np.mod(x, e.arg.millis)
        if e.fn == "CAST":
            return _map_array(e.args[0], a)
        if e.fn in ("+", "-"):
            x, y = e.args
            if isinstance(y, Lit) and isinstance(y.value, T.Interval):
                iv = y.value if e.fn == "+" else -y.value
                base = _map_array(x, a)
                if iv.months:
                    base = _add_months_exact(base, iv.months)
                return base + iv.millis
            if isinstance(x, Lit) and isinstance(x.value, T.Interval) and e.fn == "+":
                return _map_array(Call("+", (y, x), e.type), a)
    # fall back to the scalar path (rare expressions)
    f = compile_expr(e)
    return np.fromiter((f((), (int(v),)) for v in a), dtype=np.int64, count=len(a))


def _add_months_exact(a: np.ndarray, months: int) -> np.ndarray:
    return np.fromiter((T.add_interval(int(v), T.Interval(months=months)) for v in a), dtype=np.int64,
                       count=len(a))
