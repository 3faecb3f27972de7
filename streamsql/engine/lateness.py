"""The late-row rule (the semantics, section 2), in one place.

A row is late when its rowtime is below the clock it must respect: the higher of its stream's
bound and its producer's clock. A late row is rejected and never processed: it moves no clock, it
counts in its stream's ``late_count``, it goes to the error stream ``ERRORS`` stamped with the
clock it violated (made non-decreasing), and the log gets the 1st, 10th, 100th ... late row of
each stream.

The catalog applies the rule row by row (``Catalog.apply``), a bulk load to whole columns
(:mod:`streamsql.engine.bulk`). Both decide with :func:`is_late`, on one row or on arrays, and
both record a late row with :func:`reject`.
"""
from __future__ import annotations

import logging

import numpy as np

from . import time as sqltime
from .types import dumps_row

log = logging.getLogger("streamsql.late")


def producer_clock(st, producer: str) -> int:
    """The clock of ``producer`` on a stream whose state is ``st`` (NO_TIME unless attached)."""
    prod = st.producers.get(producer)
    return prod.clock if prod is not None and prod.attached else sqltime.NO_TIME


def clock(st, producer: str) -> int:
    """The clock a row from ``producer`` must not be below: the stream's bound (what its readers
    were already given) or that producer's own clock, whichever is higher. It is also the
    earliest rowtime that is not late (what a blank ROWTIME means)."""
    return max(st.bound, producer_clock(st, producer))


def is_late(rowtime, clock):
    """The comparison itself: ``rowtime < clock`` (equal rowtimes are on time). Row form on
    ints, vector form on numpy arrays (element-wise)."""
    return rowtime < clock


def running_clocks(clock0: int, times: np.ndarray) -> np.ndarray:
    """Vector form of the clock before each event of one producer's run: the running maximum
    of ``clock0`` and the times before it (rows and bounds alike; a late row is below the clock,
    so counting it changes nothing, which is why a late row moves no clock)."""
    if not len(times):
        return times
    return np.maximum.accumulate(np.concatenate([[clock0], times[:-1]]))


def late_rows(clocks: np.ndarray, times: np.ndarray, is_row: np.ndarray) -> np.ndarray:
    """Vector form of the rule: which events are late rows (bounds are never late)."""
    return is_row & is_late(times, clocks)


def message(stream: str, rowtime: int, clock: int, producer: str | None = None) -> str:
    """The error stream's MESSAGE; ``producer`` when the row violated its producer's clock
    rather than the stream's."""
    whose = "the stream clock" if producer is None else f"the clock of its producer {producer}"
    return (f"Late row in stream {stream}: rowtime {sqltime.format_timestamp(rowtime)} is before {whose} "
            f"{sqltime.format_timestamp(clock)}")


def reject(st, est, stream: str, rowtime: int, clock: int, data: dict, producer: str, step: int,
           *, by_producer: bool = False) -> tuple[int, tuple]:
    """Record one late row: counts it in ``st`` (the stream's state), stamps its error row with
    the clock it violated (never below the error stream ``est``'s bound, which moves) and logs it
    at powers of ten. Returns ``(time, ERRORS row)`` for the caller's log entry. ``data``: the
    row's values as JSON, by column name."""
    st.late_count += 1
    msg = message(stream, rowtime, clock, producer if by_producer else None)
    t = max(est.bound, clock)
    est.bound = t
    est.rows_in += 1
    if is_power_of_ten(st.late_count):
        log.warning("late row #%d in stream %s (step %d): rowtime %s is before the stream clock %s",
                    st.late_count, stream, step, sqltime.format_timestamp(rowtime), sqltime.format_timestamp(clock))
    return t, (t, "WARNING", "LATE_ROW", msg, rowtime, dumps_row(data), stream, producer, step)


def is_power_of_ten(n: int) -> bool:
    """1, 10, 100, ...: which occurrences of a repeated problem reach the log."""
    while n >= 10 and n % 10 == 0:
        n //= 10
    return n == 1
