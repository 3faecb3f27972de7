"""Timestamps, intervals and bounds.

Every time in the engine is an ``int`` of milliseconds since 1970-01-01 00:00 UTC: rowtimes, clocks
and bounds compare exactly, survive the event log unchanged and cost nothing to ship to Spark.
A strict bound at ``t`` is the non-strict bound ``t + 1`` (the semantics, section 1), so only
non-strict bounds exist past :func:`bound_value`.
"""
from __future__ import annotations

import datetime as _dt
import re
from dataclasses import dataclass

import numpy as np

MS = 1
SECOND = 1000
MINUTE = 60 * SECOND
HOUR = 60 * MINUTE
DAY = 24 * HOUR
WEEK = 7 * DAY

#: The clock of a stream that has seen nothing yet. Smaller than every real time.
NO_TIME = -(2**62)
#: A bound no row can pass (used for "nothing can still be produced").
END_OF_TIME = 2**62

_EPOCH = _dt.datetime(1970, 1, 1)

FIXED_UNITS = {
    "MILLISECOND": MS,
    "SECOND": SECOND,
    "MINUTE": MINUTE,
    "HOUR": HOUR,
    "DAY": DAY,
    "WEEK": WEEK,
}
CALENDAR_UNITS = {"MONTH": 1, "QUARTER": 3, "YEAR": 12}
UNITS = tuple(FIXED_UNITS) + tuple(CALENDAR_UNITS)
_UNIT_ALIASES = {u + "S": u for u in UNITS}


class TimeFormatError(ValueError):
    """A timestamp or interval text that cannot be read; the message says what was expected."""


def unit_name(text: str) -> str:
    """Normalise a time unit (``hours`` -> ``HOUR``) or raise :class:`TimeFormatError`."""
    u = text.upper()
    u = _UNIT_ALIASES.get(u, u)
    if u not in UNITS:
        raise TimeFormatError(f"unknown time unit {text!r}; expected one of {', '.join(UNITS)}")
    return u


# --------------------------------------------------------------------------- timestamps

_TS_RE = re.compile(
    r"^\s*(\d{4})-(\d{1,2})-(\d{1,2})(?:[ T](\d{1,2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?)?\s*(Z|[+-]00:?00)?\s*$"
)
_TIME_RE = re.compile(r"^\s*(\d{1,2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?\s*$")


def _frac_ms(frac: str | None) -> int:
    if not frac:
        return 0
    if len(frac) > 3 and int(frac[3:]) != 0:
        raise TimeFormatError(f"timestamps have millisecond precision; got fraction .{frac}")
    return int((frac + "00")[:3])


def parse_timestamp(text: str, *, day: int | None = None) -> int:
    """Parse ``YYYY-MM-DD[ HH:MM[:SS[.fff]]]`` (or a short ``HH:MM[:SS]`` when ``day`` gives the
    date, as ms since epoch of that day's midnight) into milliseconds since the epoch."""
    if isinstance(text, (int, np.integer)) and not isinstance(text, bool):
        return int(text)
    if isinstance(text, _dt.datetime):
        if text.microsecond % 1000 or getattr(text, "nanosecond", 0):
            raise TimeFormatError(f"timestamps have millisecond precision; got {text.isoformat()}")
        return from_datetime(text)
    if not isinstance(text, str):
        raise TimeFormatError(f"expected a timestamp, got {text!r}")
    m = _TS_RE.match(text)
    if m:
        y, mo, d, h, mi, s, frac, _tz = m.groups()
        try:
            base = _dt.datetime(int(y), int(mo), int(d), int(h or 0), int(mi or 0), int(s or 0))
        except ValueError as e:
            raise TimeFormatError(f"invalid timestamp {text!r}: {e}") from None
        return from_datetime(base) + _frac_ms(frac)
    m = _TIME_RE.match(text)
    if m and day is not None:
        h, mi, s, frac = m.groups()
        if int(h) > 23 or int(mi) > 59 or int(s or 0) > 59:
            raise TimeFormatError(f"invalid time of day {text!r}; expected 'HH:MM[:SS]' with HH < 24")
        return day + int(h) * HOUR + int(mi) * MINUTE + int(s or 0) * SECOND + _frac_ms(frac)
    expected = "'YYYY-MM-DD HH:MM:SS[.fff]'" + (" or 'HH:MM[:SS]'" if day is not None else "")
    raise TimeFormatError(f"invalid timestamp {text!r}; expected {expected}")


def is_time_of_day(text) -> bool:
    """Whether ``text`` is a short ``HH:MM[:SS[.fff]]`` (a time that needs a date from a clock)."""
    return isinstance(text, str) and _TIME_RE.match(text) is not None


def from_datetime(d: _dt.datetime) -> int:
    if d.tzinfo is not None:
        d = d.astimezone(_dt.timezone.utc).replace(tzinfo=None)
    delta = d - _EPOCH
    return (delta.days * 86400 + delta.seconds) * 1000 + delta.microseconds // 1000


def to_datetime(ms: int) -> _dt.datetime:
    return _EPOCH + _dt.timedelta(milliseconds=int(ms))


def format_timestamp(ms: int | None) -> str | None:
    """``YYYY-MM-DD HH:MM:SS`` with ``.fff`` only when the milliseconds are not zero."""
    if ms is None:
        return None
    if ms <= NO_TIME:
        return "-infinity"
    if ms >= END_OF_TIME:
        return "+infinity"
    d = to_datetime(ms)
    s = f"{d.year:04d}-{d.month:02d}-{d.day:02d} {d.hour:02d}:{d.minute:02d}:{d.second:02d}"
    frac = int(ms) % 1000
    return f"{s}.{frac:03d}" if frac else s


def format_time_of_day(ms: int) -> str:
    """``HH:MM[:SS[.fff]]``, the short form the step tables and widgets use."""
    d = to_datetime(ms)
    frac = int(ms) % 1000
    if frac:
        return d.strftime("%H:%M:%S") + f".{frac:03d}"
    if d.second:
        return d.strftime("%H:%M:%S")
    return d.strftime("%H:%M")


def show_time(ms: int | None, *, short: bool = False) -> str:
    """A time for people, the one form every view and table uses: ``2006-10-10 10:00:00``, or
    with ``short`` the time of day (``10:00``, as the seeds' step tables); ``none`` before a
    stream has a clock, ``end of time`` at its end."""
    if ms is None or ms <= NO_TIME:
        return "none"
    if ms >= END_OF_TIME:
        return "end of time"
    return format_time_of_day(ms) if short else format_timestamp(ms)


def day_of(ms: int) -> int:
    """Midnight (UTC) of the day containing ``ms``."""
    return ms - ms % DAY


# --------------------------------------------------------------------------- intervals

@dataclass(frozen=True, order=True)
class Interval:
    """A SQL interval: year-month part in months, day-time part in milliseconds."""

    months: int = 0
    millis: int = 0

    @property
    def is_fixed(self) -> bool:
        return self.months == 0

    def __neg__(self) -> "Interval":
        return Interval(-self.months, -self.millis)

    def __add__(self, other: "Interval") -> "Interval":
        return Interval(self.months + other.months, self.millis + other.millis)

    def __sub__(self, other: "Interval") -> "Interval":
        return self + (-other)

    def scale(self, k: int | float) -> "Interval":
        return Interval(int(self.months * k), int(round(self.millis * k)))

    def __str__(self) -> str:
        return format_interval(self)


_SINGLE_RE = re.compile(r"^\s*([+-])?\s*(\d+)(?:\.(\d{1,9}))?\s*$")


def parse_interval(text: str, unit: str, to_unit: str | None = None) -> Interval:
    """The value of ``INTERVAL 'text' unit [TO to_unit]``, e.g. ``('1:30', 'HOUR', 'MINUTE')``."""
    unit = unit_name(unit)
    text = str(text)
    if to_unit is None:
        m = _SINGLE_RE.match(text)
        if not m:
            raise TimeFormatError(f"invalid interval value {text!r} for unit {unit}")
        sign = -1 if m.group(1) == "-" else 1
        whole, frac = int(m.group(2)), m.group(3)
        if unit in CALENDAR_UNITS:
            if frac:
                raise TimeFormatError(f"a {unit} interval must be a whole number, got {text!r}")
            return Interval(months=sign * whole * CALENDAR_UNITS[unit])
        if frac and unit != "SECOND":
            raise TimeFormatError(f"only SECOND intervals may have a fraction, got {text!r} {unit}")
        return Interval(millis=sign * (whole * FIXED_UNITS[unit] + _frac_ms(frac)))
    to_unit = unit_name(to_unit)
    sign = 1
    t = text.strip()
    if t[:1] in "+-":
        sign = -1 if t[0] == "-" else 1
        t = t[1:].strip()
    if unit == "YEAR" and to_unit == "MONTH":
        m = re.match(r"^(\d+)-(\d+)$", t)
        if not m:
            raise TimeFormatError(f"invalid YEAR TO MONTH interval {text!r}; expected 'Y-M'")
        return Interval(months=sign * (int(m.group(1)) * 12 + int(m.group(2))))
    order = ["DAY", "HOUR", "MINUTE", "SECOND"]
    if unit not in order or to_unit not in order or order.index(to_unit) <= order.index(unit):
        raise TimeFormatError(f"invalid interval qualifier {unit} TO {to_unit}")
    fields = order[order.index(unit): order.index(to_unit) + 1]
    parts = re.split(r"[ :]", t)
    if len(parts) != len(fields):
        pattern = " ".join(["D"] if "DAY" in fields else []) + (" " if "DAY" in fields and len(fields) > 1 else "")
        pattern += ":".join({"HOUR": "H", "MINUTE": "M", "SECOND": "S"}[f] for f in fields if f != "DAY")
        raise TimeFormatError(f"invalid {unit} TO {to_unit} interval {text!r}; expected '{pattern.strip()}'")
    total = 0
    for f, p in zip(fields, parts):
        if f == "SECOND" and "." in p:
            w, fr = p.split(".", 1)
            total += int(w) * SECOND + _frac_ms(fr)
        else:
            if not p.isdigit():
                raise TimeFormatError(f"invalid interval field {p!r} in {text!r}")
            total += int(p) * FIXED_UNITS[f]
    return Interval(millis=sign * total)


def format_interval(iv: Interval) -> str:
    if iv.months and not iv.millis:
        return f"INTERVAL '{iv.months}' MONTH"
    ms = iv.millis
    for unit in ("DAY", "HOUR", "MINUTE", "SECOND"):
        size = FIXED_UNITS[unit]
        if ms % size == 0 and ms != 0:
            return f"INTERVAL '{ms // size}' {unit}"
    if ms == 0 and not iv.months:
        return "INTERVAL '0' SECOND"
    return f"INTERVAL '{ms / 1000:g}' SECOND"


def add_interval(ms: int, iv: Interval) -> int:
    """``ts + interval`` with calendar arithmetic for months (day clamped to the month's end)."""
    if iv.months:
        d = to_datetime(ms)
        total = d.year * 12 + (d.month - 1) + iv.months
        y, mo = divmod(total, 12)
        import calendar

        day = min(d.day, calendar.monthrange(y, mo + 1)[1])
        d = d.replace(year=y, month=mo + 1, day=day)
        ms = from_datetime(d)
    return ms + iv.millis


# --------------------------------------------------------------------------- floor / ceil / step

def floor_to(ms: int, unit: str) -> int:
    unit = unit_name(unit)
    if unit in FIXED_UNITS:
        size = FIXED_UNITS[unit]
        if unit == "WEEK":  # weeks start on Monday; 1970-01-01 was a Thursday
            return (ms - 4 * DAY) - (ms - 4 * DAY) % WEEK + 4 * DAY
        return ms - ms % size
    d = to_datetime(ms)
    months = CALENDAR_UNITS[unit]
    m0 = (d.month - 1) - (d.month - 1) % months
    return from_datetime(_dt.datetime(d.year, m0 + 1, 1))


def ceil_to(ms: int, unit: str) -> int:
    f = floor_to(ms, unit)
    if f == ms:
        return ms
    return next_boundary(f, unit)


def next_boundary(floor_ms: int, unit: str) -> int:
    """The first instant of the period after the one starting at ``floor_ms``."""
    unit = unit_name(unit)
    if unit in FIXED_UNITS:
        return floor_ms + FIXED_UNITS[unit]
    return add_interval(floor_ms, Interval(months=CALENDAR_UNITS[unit]))


def step_floor(ms: int, iv: Interval) -> int:
    """``STEP(ts BY interval)``: epoch-aligned floor to a multiple of a fixed interval."""
    if not iv.is_fixed or iv.millis <= 0:
        raise TimeFormatError("STEP needs a positive day-time interval")
    return ms - ms % iv.millis


# Vectorised forms (numpy int64 arrays), used by bound formulas on whole micro-batches.

def floor_to_array(a: np.ndarray, unit: str) -> np.ndarray:
    unit = unit_name(unit)
    a = np.asarray(a, dtype=np.int64)
    if unit in FIXED_UNITS:
        size = FIXED_UNITS[unit]
        if unit == "WEEK":
            b = a - 4 * DAY
            return b - np.mod(b, WEEK) + 4 * DAY
        return a - np.mod(a, size)
    dt = a.astype("datetime64[ms]").astype("datetime64[M]")
    months = CALENDAR_UNITS[unit]
    if months > 1:
        mi = dt.astype(np.int64)
        dt = (mi - np.mod(mi, months)).astype("datetime64[M]")
    return dt.astype("datetime64[ms]").astype(np.int64)


def next_boundary_array(floors: np.ndarray, unit: str) -> np.ndarray:
    unit = unit_name(unit)
    if unit in FIXED_UNITS:
        return floors + FIXED_UNITS[unit]
    m = floors.astype("datetime64[ms]").astype("datetime64[M]") + CALENDAR_UNITS[unit]
    return m.astype("datetime64[ms]").astype(np.int64)


# --------------------------------------------------------------------------- bounds

def bound_value(t: int, strict: bool = False) -> int:
    """The non-strict bound equivalent to a (possibly strict) bound at ``t``."""
    return t + 1 if strict else t
