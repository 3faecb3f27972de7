"""Where the windows of a shape are (the semantics, section 3.7): the windows a rowtime falls in,
and the earliest window end (or start) a row at or after a clock can still produce. Scalar and
vectorised; the one place both runtimes, the planner and the timeline take them from.

Windows are half-open ``[start, end)`` in milliseconds, aligned to the epoch plus the offset:
TUMBLE ``[k*size + o, (k+1)*size + o)``; HOP ``[k*slide + o, k*slide + o + size)`` for every k (its
size need not be a multiple of its slide, and a size below the slide leaves gaps); CUMULATE, per
period ``[p, p + size)`` with ``p = k*size + o``, the windows ``[p, p + j*step)``, j = 1 .. size/step.
Sessions depend on the rows, so their operators keep them (``session_end``).
"""
from __future__ import annotations

import numpy as np

from .. import time as sqltime
from ..plan import WindowShape

NO_TIME, END_OF_TIME = sqltime.NO_TIME, sqltime.END_OF_TIME


def normalized(shape: WindowShape) -> WindowShape:
    """The same windows with the offset brought into ``[0, period)``."""
    if shape.kind == "SESSION":
        return shape
    period = shape.size if shape.kind == "CUMULATE" else shape.slide
    return WindowShape(shape.kind, shape.size, shape.slide, shape.offset % period, shape.gap)


def _floor(t: int, period: int, offset: int) -> int:
    return t - (t - offset) % period


def windows_of(shape: WindowShape, t: int) -> list[tuple[int, int]]:
    """The windows a row at ``t`` falls in, ``(start, end)`` by ascending end."""
    k = shape.kind
    if k == "TUMBLE":
        s = _floor(t, shape.size, shape.offset)
        return [(s, s + shape.size)]
    if k == "HOP":
        last = _floor(t, shape.slide, shape.offset)      # the latest start at or before t
        out = []
        s = last
        while s + shape.size > t:
            out.append((s, s + shape.size))
            s -= shape.slide
        out.reverse()
        return out
    if k == "CUMULATE":
        p = _floor(t, shape.size, shape.offset)
        first = _floor(t, shape.slide, shape.offset) + shape.slide   # the first step boundary after t
        return [(p, e) for e in range(first, p + shape.size + 1, shape.slide)]
    raise ValueError(f"{k} windows depend on the rows (sessions)")


def next_end(shape: WindowShape, c: int) -> int:
    """The least window end after ``c``: the earliest stamp a row at or after clock ``c`` can
    still give a window (every window that ends after ``c`` can still get such a row)."""
    if c <= NO_TIME:
        return NO_TIME
    if c >= END_OF_TIME:
        return END_OF_TIME
    k = shape.kind
    if k == "TUMBLE":
        return _floor(c, shape.size, shape.offset) + shape.size
    if k == "HOP":
        base = (shape.offset + shape.size) % shape.slide
        return _floor(c, shape.slide, base) + shape.slide
    if k == "CUMULATE":
        return _floor(c, shape.slide, shape.offset) + shape.slide
    raise ValueError(k)


def next_start(shape: WindowShape, c: int) -> int:
    """The least start of a window that ends after ``c`` (what a ``start`` stamp can still be)."""
    if c <= NO_TIME:
        return NO_TIME
    if c >= END_OF_TIME:
        return END_OF_TIME
    k = shape.kind
    if k == "TUMBLE":
        return _floor(c, shape.size, shape.offset)
    if k == "HOP":
        return _floor(c - shape.size, shape.slide, shape.offset) + shape.slide
    if k == "CUMULATE":
        return _floor(c, shape.size, shape.offset)
    raise ValueError(k)


def _floor_array(t: np.ndarray, period: int, offset: int) -> np.ndarray:
    return t - np.mod(t - offset, period)


def next_end_array(shape: WindowShape, c: np.ndarray) -> np.ndarray:
    """:func:`next_end` of every clock in ``c``."""
    return _edges(shape, c, "end")


def next_start_array(shape: WindowShape, c: np.ndarray) -> np.ndarray:
    """:func:`next_start` of every clock in ``c``."""
    return _edges(shape, c, "start")


def _edges(shape: WindowShape, c: np.ndarray, which: str) -> np.ndarray:
    c = np.asarray(c, dtype=np.int64)
    lo, hi = c <= NO_TIME, c >= END_OF_TIME
    x = np.where(lo | hi, 0, c)
    k = shape.kind
    if which == "end":
        if k == "TUMBLE":
            r = _floor_array(x, shape.size, shape.offset) + shape.size
        elif k == "HOP":
            r = _floor_array(x, shape.slide, (shape.offset + shape.size) % shape.slide) + shape.slide
        else:
            r = _floor_array(x, shape.slide, shape.offset) + shape.slide
    else:
        if k == "HOP":
            r = _floor_array(x - shape.size, shape.slide, shape.offset) + shape.slide
        else:
            r = _floor_array(x, shape.size, shape.offset)
    return np.where(lo, NO_TIME, np.where(hi, END_OF_TIME, r)).astype(np.int64)


def window_count(shape: WindowShape) -> int:
    """The most windows one row can fall in (a hop's ``ceil(size / slide)``)."""
    if shape.kind == "HOP":
        return -(-shape.size // shape.slide)
    if shape.kind == "CUMULATE":
        return shape.size // shape.slide
    return 1


def windows_array(shape: WindowShape, t: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The windows of every rowtime in ``t`` at once: ``(row index, start, end)``, a row's windows
    by ascending end, rows in order (what :func:`windows_of` gives row by row)."""
    t = np.asarray(t, dtype=np.int64)
    n = len(t)
    k = shape.kind
    if k == "TUMBLE":
        s = _floor_array(t, shape.size, shape.offset)
        return np.arange(n, dtype=np.int64), s, s + shape.size
    m = window_count(shape)
    idx = np.repeat(np.arange(n, dtype=np.int64), m)
    j = np.tile(np.arange(m, dtype=np.int64), n)
    tt = t[idx]
    if k == "HOP":
        # starts last - (m-1-j)*slide, j = 0 .. m-1 (ascending), kept where start + size > t
        last = _floor_array(tt, shape.slide, shape.offset)
        s = last - (m - 1 - j) * shape.slide
        e = s + shape.size
        keep = e > tt
    elif k == "CUMULATE":
        p = _floor_array(tt, shape.size, shape.offset)
        e = p + (j + 1) * shape.slide
        s = p
        keep = e > tt
    else:
        raise ValueError(f"{k} windows depend on the rows (sessions)")
    return idx[keep], s[keep], e[keep]


def duration(ms: int) -> str:
    """A length of time in the largest unit that holds it whole ("2 hours", "15 minutes", "7007 seconds")."""
    for unit, n in (("day", sqltime.DAY), ("hour", sqltime.HOUR), ("minute", sqltime.MINUTE), ("second", sqltime.SECOND)):
        if ms % n == 0:
            k = ms // n
            return f"{k} {unit}{'s' if k != 1 else ''}"
    return f"{ms} ms"


def describe(shape: WindowShape) -> str:
    """The shape in words, for the trace and messages ("HOP of 2 hours every 1 hour")."""
    k = shape.kind
    at = f", offset {duration(shape.offset)}" if shape.offset else ""
    if k == "TUMBLE":
        return f"TUMBLE of {duration(shape.size)}{at}"
    if k == "HOP":
        return f"HOP of {duration(shape.size)} every {duration(shape.slide)}{at}"
    if k == "CUMULATE":
        return f"CUMULATE of {duration(shape.size)} by {duration(shape.slide)}{at}"
    return f"SESSION with a gap of {duration(shape.gap)}"
