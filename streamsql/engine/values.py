"""The one typed-value parser: a value enters a stream exactly as typed, or not at all.

Every way a value comes in goes through here: widget fields and strings in event files as text
(:func:`parse_text`), JSON numbers, ``INSERT`` literals and Python values from the API as values
(:func:`coerce`). Nothing is rounded, truncated, wrapped or guessed: ``3.7`` or ``12x`` is no
INTEGER, ``1,5`` no DOUBLE, ``1.234`` no DECIMAL(6,2), a string longer than its VARCHAR is
refused. A refusal is a :class:`ValueRefused` (a ``ValueError``) whose message names the column,
its type and what is wrong.
"""
from __future__ import annotations

import decimal
import math
import re

from . import time as sqltime
from .types import APPROX_TYPES, INT_BITS, INTEGER_TYPES, STRING_TYPES, SqlType

_INT_TEXT = re.compile(r"^[+-]?[0-9]+$")
_DEC_TEXT = re.compile(r"^[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)$")
_NUM_TEXT = re.compile(r"^[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$")
_REAL_MAX = 3.4028234663852886e38


class ValueRefused(ValueError):
    """A value the column's type does not accept; nothing was inserted."""

    def __init__(self, where: str, t: SqlType, reason: str):
        self.where, self.type, self.reason = where, t, reason
        super().__init__(f"{where} ({t}): {reason}")


def type_hint(t: SqlType) -> str:
    """What a text field of type ``t`` expects, for its placeholder."""
    n = t.name
    if n == "BOOLEAN":
        return "BOOLEAN: TRUE or FALSE"
    if n == "TIMESTAMP":
        return "TIMESTAMP: YYYY-MM-DD HH:MM:SS or HH:MM"
    return str(t.with_nullable(True))


def int_range(t: SqlType) -> tuple[int, int]:
    bits = INT_BITS[t.name]
    return -(1 << (bits - 1)), (1 << (bits - 1)) - 1


def _shown(v) -> str:
    if isinstance(v, str):
        return repr(v)
    if isinstance(v, bool):
        return "TRUE" if v else "FALSE"
    if isinstance(v, float):
        return repr(v)
    return str(v)


def parse_text(text: str, t: SqlType, *, where: str = "value", day: int | None = None):
    """The value of type ``t`` that ``text`` spells (what a person typed, or a string in an event
    file). Strings keep every character; other types allow spaces around the value. ``day``
    (midnight, ms) lets a TIMESTAMP be a time of day ``HH:MM[:SS]``."""
    if not isinstance(text, str):
        raise TypeError("parse_text reads text")
    n = t.name
    if n in STRING_TYPES:
        return _string(text, t, where)
    s = text.strip()
    if not s:
        raise ValueRefused(where, t, "no value given (an empty text is no " + n + ")")
    if n in INTEGER_TYPES:
        if not _INT_TEXT.match(s):
            if _NUM_TEXT.match(s) or _NUM_TEXT.match(s.replace(",", ".")):
                raise ValueRefused(where, t, f"{s!r} is not a whole number")
            raise ValueRefused(where, t, f"{s!r} is not a whole number (digits only, optionally signed)")
        return _integer(int(s), t, where)
    if n in APPROX_TYPES:
        if not _NUM_TEXT.match(s):
            hint = "; the decimal point is '.'" if "," in s else ""
            raise ValueRefused(where, t, f"{s!r} is not a number (like 1.5 or 2e-3{hint})")
        return _approx(float(s), t, where, s)
    if n == "DECIMAL":
        if not _DEC_TEXT.match(s):
            hint = "; the decimal point is '.'" if "," in s else ""
            raise ValueRefused(where, t, f"{s!r} is not a decimal number (like 12.50{hint})")
        return _decimal(decimal.Decimal(s), t, where, s)
    if n == "BOOLEAN":
        if s.upper() in ("TRUE", "FALSE"):
            return s.upper() == "TRUE"
        raise ValueRefused(where, t, f"{s!r} is not a BOOLEAN (TRUE or FALSE)")
    if n == "TIMESTAMP":
        try:
            return sqltime.parse_timestamp(s, day=day)
        except sqltime.TimeFormatError as e:
            raise ValueRefused(where, t, str(e)) from None
    if n == "INTERVAL":
        raise ValueRefused(where, t, "INTERVAL values cannot be typed in")
    raise ValueRefused(where, t, f"no text form for {n}")


def coerce(value, t: SqlType, *, where: str = "value", day: int | None = None):
    """The representation of ``t`` for a value from JSON, an ``INSERT`` literal or the Python
    API (strings are read with :func:`parse_text`)."""
    if value is None:
        if not t.nullable:
            raise ValueRefused(where, t, "the column is NOT NULL but got NULL")
        return None
    if hasattr(value, "item") and type(value).__module__ == "numpy":   # numpy scalars
        value = value.item()
    if isinstance(value, str):
        return parse_text(value, t, where=where, day=day)
    n = t.name
    if n in INTEGER_TYPES:
        if isinstance(value, bool):
            raise ValueRefused(where, t, f"{_shown(value)} is a BOOLEAN, not a number")
        if isinstance(value, float):
            if not math.isfinite(value) or not value.is_integer():
                raise ValueRefused(where, t, f"{_shown(value)} is not a whole number")
            value = int(value)
        elif isinstance(value, decimal.Decimal):
            if not value.is_finite() or value != value.to_integral_value():
                raise ValueRefused(where, t, f"{value} is not a whole number")
            value = int(value)
        if not isinstance(value, int):
            raise ValueRefused(where, t, f"{_shown(value)} is not a whole number")
        return _integer(value, t, where)
    if n in APPROX_TYPES:
        if isinstance(value, bool) or not isinstance(value, (int, float, decimal.Decimal)):
            raise ValueRefused(where, t, f"{_shown(value)} is not a number")
        return _approx(float(value), t, where, _shown(value))
    if n == "DECIMAL":
        if isinstance(value, bool):
            raise ValueRefused(where, t, f"{_shown(value)} is a BOOLEAN, not a number")
        if isinstance(value, float):
            if not math.isfinite(value):
                raise ValueRefused(where, t, f"{_shown(value)} is not a finite number")
            value = decimal.Decimal(repr(value))
        elif isinstance(value, int):
            value = decimal.Decimal(value)
        if not isinstance(value, decimal.Decimal) or not value.is_finite():
            raise ValueRefused(where, t, f"{_shown(value)} is not a decimal number")
        return _decimal(value, t, where, str(value))
    if n in STRING_TYPES:
        raise ValueRefused(where, t, f"{_shown(value)} is not a string")
    if n == "BOOLEAN":
        if isinstance(value, bool):
            return value
        raise ValueRefused(where, t, f"{_shown(value)} is not a BOOLEAN (TRUE or FALSE)")
    if n == "TIMESTAMP":
        if isinstance(value, bool):
            raise ValueRefused(where, t, f"{_shown(value)} is not a timestamp")
        try:
            return sqltime.parse_timestamp(value, day=day)
        except sqltime.TimeFormatError as e:
            raise ValueRefused(where, t, str(e)) from None
    if n == "INTERVAL":
        if isinstance(value, sqltime.Interval):
            return value
        raise ValueRefused(where, t, f"{_shown(value)} is not an interval")
    raise ValueRefused(where, t, f"cannot store {_shown(value)}")


# --------------------------------------------------------------------------- per type

def _integer(v: int, t: SqlType, where: str) -> int:
    lo, hi = int_range(t)
    if not lo <= v <= hi:
        raise ValueRefused(where, t, f"{v} is out of range for {t.name} ({lo} to {hi})")
    return v


def _approx(v: float, t: SqlType, where: str, shown: str) -> float:
    if not math.isfinite(v):
        raise ValueRefused(where, t, f"{shown} is not a finite number")
    if t.name == "REAL" and abs(v) > _REAL_MAX:
        raise ValueRefused(where, t, f"{shown} is out of range for REAL")
    return v


def _decimal(v: decimal.Decimal, t: SqlType, where: str, shown: str) -> decimal.Decimal:
    """``v`` at the type's scale, when that changes nothing (trailing zeros may go or come)."""
    exp = v.normalize().as_tuple().exponent if v != 0 else 0
    if -exp > t.scale:
        raise ValueRefused(where, t, f"{shown} has more than {t.scale} digit{'s' if t.scale != 1 else ''} "
                                     f"after the decimal point")
    q = v.quantize(decimal.Decimal(1).scaleb(-t.scale), context=decimal.Context(prec=80))
    if q != 0 and q.adjusted() >= t.precision - t.scale:
        whole = t.precision - t.scale
        raise ValueRefused(where, t, f"{shown} needs more than {whole} digit{'s' if whole != 1 else ''} "
                                     f"before the decimal point")
    return q


def _string(s: str, t: SqlType, where: str) -> str:
    if t.precision is not None and len(s) > t.precision:
        raise ValueRefused(where, t, f"{s!r} is longer than {t.with_nullable(True)} ({len(s)} characters)")
    return s


# --------------------------------------------------------------------------- a column at a time

def column(col, t: SqlType, where: str):
    """A column of values (Arrow, or a Python list) as type ``t``'s Arrow column, by :func:`coerce`'s rules: a bulk
    load stores what inserting its rows one by one would store, or refuses what that refuses.
    Arrow converts the columns whose every value the rules accept as they are (checked with the
    rules' own patterns); any other column goes value by value through :func:`coerce`, so the
    refusal of the first bad value is :func:`coerce`'s, with ``row N`` (1-based) added. NULLs pass
    (whether the column may hold them is the caller's question)."""
    import pyarrow as pa
    import pyarrow.compute as pc
    from .types import arrow_type

    if isinstance(col, pa.ChunkedArray):
        col = col.combine_chunks()
    at = arrow_type(t)
    if isinstance(col, pa.Array):
        fast = _fast(col, t, at, pa, pc)
        if fast is not None:
            return fast
        col = col.to_pylist()
    nullable = t.with_nullable(True)
    out = []
    for i, v in enumerate(col):
        try:
            out.append(None if v is None else coerce(v, nullable, where=where))
        except ValueRefused as e:
            raise ValueRefused(e.where, e.type, f"{e.reason} (row {i + 1})") from None
    return pa.array(out, type=at)


def _fast(col, t: SqlType, at, pa, pc):
    """``col`` converted by Arrow when the rules accept every value unchanged, else None."""
    src, n = col.type, t.name
    valid = col.null_count < len(col)

    def cast(c, to, safe=True):
        try:
            return pc.cast(c, to, safe=safe)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            return None

    def matches(pattern):
        s = pc.utf8_trim_whitespace(col)
        return s if pc.all(pc.match_substring_regex(s, pattern)).as_py() is not False else None

    is_int = pa.types.is_integer(src)
    is_text = pa.types.is_string(src) or pa.types.is_large_string(src)
    if not valid:
        return pa.nulls(len(col), at)
    if n in INTEGER_TYPES:
        if is_int:
            return cast(col, at)
        if is_text and (s := matches(_INT_TEXT.pattern)) is not None:
            return cast(s, at)
        return None
    if n in APPROX_TYPES:
        if is_text:
            s = matches(_NUM_TEXT.pattern)
            out = cast(s, pa.float64()) if s is not None else None
        elif is_int or pa.types.is_floating(src) or pa.types.is_decimal(src):
            out = cast(col, pa.float64(), safe=False)    # as float(value) does
        else:
            return None
        if out is None or pc.all(pc.is_finite(out)).as_py() is False:
            return None
        if n == "REAL":
            if pc.max(pc.abs(out)).as_py() > _REAL_MAX:
                return None
            return cast(out, at, safe=False)
        return out
    if n == "DECIMAL":
        if is_int or pa.types.is_decimal(src):
            return cast(col, at)
        if is_text and (s := matches(_DEC_TEXT.pattern)) is not None:
            return cast(s, at)
        return None
    if n in STRING_TYPES:
        if not is_text:
            return None
        if t.precision is not None and (pc.max(pc.utf8_length(col)).as_py() or 0) > t.precision:
            return None
        return cast(col, at)
    if n == "BOOLEAN":
        return col if pa.types.is_boolean(src) else None
    if n == "TIMESTAMP":
        if is_int:
            return cast(col, at)
        if pa.types.is_timestamp(src):
            ms = cast(col, pa.timestamp("ms", tz=src.tz))
            return None if ms is None else cast(ms, pa.int64())
        return None
    return None
