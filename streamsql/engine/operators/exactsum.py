"""Exact sums of doubles (a GROUP BY's float SUM and AVG).

Every finite double is an integer multiple of 2**-1074, so a sum of doubles is kept exactly as
one Python int, the sum scaled by 2**1074, with flags for what IEEE arithmetic does not keep in
a number: an infinity of either sign, a NaN, and whether any value was other than -0.0. The
result is rounded once, at the end (int / int true division is correctly rounded, subnormals
included), so it does not depend on the order of the values or on how they were grouped into
batches: it is the correctly rounded exact sum (``math.fsum``'s value, where fsum does not
overflow on the way).

A state is ``None`` (no value yet) or the tuple ``(scaled sum, flags)``: plain Python values,
as the Spark state store wants them (statecodec.py writes ints of any size exactly).

A finite sum whose rounding is an infinity leaves DOUBLE's range (the semantics, section 1: a SUM
accumulator, 22003, not IEEE infinity); an infinity or NaN among the values makes the result
non-finite as IEEE says (NaN if any NaN or both infinities, else that infinity) and is never
refused.
"""
from __future__ import annotations

import math

import numpy as np

SCALE = 1074
_SHIFT = SCALE + 1
#: the smallest scaled magnitude that rounds to an infinity (halfway from DBL_MAX to 2**1024:
#: ties go to the even 2**1024)
OVERFLOW = ((1 << 1024) - (1 << 970)) << SCALE
#: values at least this large (or non-finite) are not pre-combined: a GROUP BY steps them as
#: rows (fewer than 2**62 values below it sum to less than 2**1022)
BIG = 2.0 ** 960
#: a group's scaled sum below this takes any pre-combined partial of values below ``BIG`` exactly
_SAFE = 1 << (1022 + SCALE)

POS_INF, NEG_INF, NAN, NOT_NEG_ZERO = 1, 2, 4, 8
NON_FINITE = POS_INF | NEG_INF | NAN


def scaled(v: float) -> int:
    """A finite double times 2**1074, exactly."""
    n, d = v.as_integer_ratio()
    return n << (_SHIFT - d.bit_length())


def flag_of(v: float) -> int:
    if v != v:
        return NAN | NOT_NEG_ZERO
    if v == math.inf:
        return POS_INF | NOT_NEG_ZERO
    if v == -math.inf:
        return NEG_INF | NOT_NEG_ZERO
    return 0 if v == 0 and math.copysign(1.0, v) < 0 else NOT_NEG_ZERO


def _state(st):
    """A state (a plain float: a running sum saved before sums were exact, taken as it is)."""
    if type(st) is tuple or st is None:
        return st
    v = float(st)
    f = flag_of(v)
    return (0 if f & NON_FINITE else scaled(v), f)


def add(st, v: float):
    """``st`` with ``v`` added, and whether the sum just left DOUBLE's range (a finite sum that
    rounds to an infinity, all values so far finite: the caller refuses the value)."""
    if st is None:
        s = f = 0
    else:
        s, f = st if type(st) is tuple else _state(st)
    try:
        n, d = v.as_integer_ratio()
    except (OverflowError, ValueError):         # an infinity, a NaN
        return (s, f | flag_of(v)), False
    s += n << (_SHIFT - d.bit_length())
    if n or math.copysign(1.0, v) > 0:
        f |= NOT_NEG_ZERO
    return (s, f), (s >= OVERFLOW or s <= -OVERFLOW) and not f & NON_FINITE


def total(values) -> tuple | None:
    """The exact state of ``values`` added one by one (none refused when they came)."""
    st = None
    for x in values:
        st = add(st, x)[0]
    return st


def merge(a, b):
    a, b = _state(a), _state(b)
    if a is None:
        return b
    if b is None:
        return a
    return (a[0] + b[0], a[1] | b[1])


def fits(st, reach: float | None) -> bool:
    """Whether adding, one by one and in any order, values whose magnitudes sum to at most
    ``reach`` (None: no bound known) to ``st`` keeps every intermediate sum in range."""
    st = _state(st)
    if st is None or st[1] & NON_FINITE:
        return True
    s = abs(st[0])
    if s < _SAFE:
        return True
    return reach is not None and math.isfinite(reach) and s + scaled(reach) < OVERFLOW


def value(st, n: int = 1) -> float | None:
    """The sum (``n`` = 1) or mean of ``n`` values, rounded once."""
    if st is None:
        return None
    s, f = _state(st)
    if f & NON_FINITE:
        if f & NAN or (f & POS_INF and f & NEG_INF):
            return math.nan
        return math.inf if f & POS_INF else -math.inf
    if s == 0:
        return 0.0 if f & NOT_NEG_ZERO else -0.0
    return s / (n << SCALE)


# --------------------------------------------------------------------------- whole arrays

_MANT = (1 << 52) - 1


def split(v: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Finite doubles as ``hi * 2**26 + lo`` (signed, |hi| < 2**27, |lo| < 2**26) times
    ``2**(shift - 1074)``: sums of up to 2**36 of either part per shift fit an int64."""
    bits = np.ascontiguousarray(v, dtype=np.float64).view(np.uint64)
    e = ((bits >> np.uint64(52)) & np.uint64(0x7FF)).astype(np.int64)
    frac = (bits & np.uint64(_MANT)).astype(np.int64)
    mant = np.where(e == 0, frac, frac | (1 << 52))
    sign = np.where((bits >> np.uint64(63)) != 0, -1, 1)
    shift = np.maximum(e, 1) - 1
    return sign * (mant >> 26), sign * (mant & ((1 << 26) - 1)), shift


def not_neg_zero(v: np.ndarray) -> np.ndarray:
    return ~((v == 0) & np.signbit(v))


def reach_bound(abs_sum: float, n: int) -> float:
    """An upper bound of an exact sum of ``n`` magnitudes whose float sum (any order) is
    ``abs_sum``: rounding loses at most (n - 1) units of 2**-53 of it."""
    return abs_sum * (1 + n * 2.0 ** -50)
