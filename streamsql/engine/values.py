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
