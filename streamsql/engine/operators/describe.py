"""What an operator holds and why its frontier is where it is, as typed records for the trace.

The trace (``runtime/trace_records.py``) shows, for every operator after every step, its state (open
groups with their aggregates so far, OVER partitions, the rows a join keeps, ORDER BY groups,
the T-sort's bound) and, for a row held by rule 2 of the release rule, *why* the operator could
still produce an earlier row. Both are data here; the words are made in one place
(:func:`streamsql.engine.runtime.trace_records.describe_reason`).

An operator hands its state over in two steps so that the Spark runtime, which spreads an
operator over key buckets, gets the same record as the local runtime:
:meth:`Operator.state_view` is one bucket's part (``(items, totals)``: entries keyed so that
sorting the keys gives the trace's order, each bucket listing at most the trace's limit, and
totals to add up or take the minimum of), and :meth:`Operator.trace_state` turns the views of
all buckets (one view in the local runtime) into the record below.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

#: open groups, kept rows per side and ORDER BY groups listed in a state (the earliest ones)
STATE_LIMIT = 50
#: OVER partitions listed per window; rows listed per ORDER BY group
PARTITION_LIMIT = 20


# --------------------------------------------------------------------------- states

@dataclass(frozen=True)
class OpenGroup:
    """A GROUP BY group still accumulating rows."""
    keys: tuple                          # grouping-key values
    labels: tuple                        # the same, as the trace prints them
    start: int | None                    # the time key's value (the period's start for FLOOR/STEP)
    end: int                             # the input clock value that closes the group (period end)
    partials: tuple                      # ((aggregate column, value so far), ...)


@dataclass(frozen=True)
class AggregateState:
    groups: tuple                        # OpenGroup, the earliest STATE_LIMIT by (end, keys)
    group_count: int                     # all open groups


@dataclass(frozen=True)
class OverPartition:
    """One partition of an OVER window: the rows it still retains for future frames."""
    window: int                          # which window specification of the query (0, 1, ...)
    partition: tuple                     # PARTITION BY values
    rows: int                            # rows retained
    first: int | None                    # order value (ROWTIME, or the hopping key) of the earliest


@dataclass(frozen=True)
class WindowState:
    partitions: tuple                    # OverPartition, per window the first PARTITION_LIMIT by values


@dataclass(frozen=True)
class JoinSide:
    """The rows one side of a window join keeps, and its window ``[T - preceding, T + following]``."""
    preceding: int
    following: int
    kept: tuple                          # rowtimes of kept rows, earliest STATE_LIMIT, arrival order
    null_keys: tuple                     # rowtimes of kept rows with a NULL key (outer sides)
    first_unmatched: int | None          # rowtime of the earliest row not matched yet (outer sides)


@dataclass(frozen=True)
class JoinState:
    sides: tuple                         # (left JoinSide, right JoinSide)


@dataclass(frozen=True)
class TemporalState:
    """A temporal join over a version stream: the probe rows waiting for the version side's
    clock to pass their rowtime, and the versions it keeps."""
    waiting: tuple                       # rowtimes of waiting probe rows, earliest STATE_LIMIT
    versions: int                        # versions kept (all keys)


@dataclass(frozen=True)
class SortGroup:
    """Rows a streaming ORDER BY buffers for one value of its leading key."""
    complete_at: int | None              # the input clock value that completes it (None: a later value)
    rows: int
    held: tuple                          # ((rowtime, values), ...) the first PARTITION_LIMIT buffered


@dataclass(frozen=True)
class SortState:
    groups: tuple                        # SortGroup, the first STATE_LIMIT in leading-key order
    rows: int                            # rows buffered in all
    earliest: int | None                 # the earliest rowtime buffered
    next_complete: int | None            # the clock value that completes the first group


@dataclass(frozen=True)
class TSortState:
    max_ts: int | None                   # highest ts seen (None before the first row)
    bound: int                           # W: max_ts minus WITHIN
    within: int                          # ms
    late: int                            # rows refused as late so far
    null_ts: int                         # rows dropped for a NULL ts


# --------------------------------------------------------------------------- frontier reasons
# Why the operator's frontier F (the earliest stamp it could still produce) is where it is. Each
# carries ``stamp``, the value of F it explains; names are the trace's input names.

@dataclass(frozen=True)
class KeptRowCouldMatch:
    """A row a join keeps could still match a row of the other side."""
    side: str
    other: str
    rowtime: int
    until: int                           # ... until the other side's clock passes this
    stamp: int


@dataclass(frozen=True)
class LaterRowsCouldMatch:
    """Future rows of both sides of a join could still match."""
    left: str
    right: str
    stamp: int


@dataclass(frozen=True)
class UnmatchedRowReleased:
    """An outer join's unmatched row leaves once the other side's clock passes ``until``."""
    side: str
    other: str
    rowtime: int
    until: int
    stamp: int


@dataclass(frozen=True)
class LaterRowCouldBeUnmatched:
    """A future row of an outer side could still be released unmatched."""
    side: str
    stamp: int


@dataclass(frozen=True)
class ProbeRowWaits:
    """A temporal join's probe row meets the version valid at its rowtime once the version
    side's clock passes ``until`` (no version valid then can still come)."""
    side: str
    versions: str
    rowtime: int
    until: int
    stamp: int


@dataclass(frozen=True)
class OrderByHolds:
    """A streaming ORDER BY buffers rows until their leading key's value is complete."""
    rows: int
    earliest: int
    complete_at: int | None              # None: until a row with a later leading value arrives


@dataclass(frozen=True)
class TSortNoRowYet:
    """A T-sort that has seen no row can still receive any ts."""


@dataclass(frozen=True)
class TSortWithin:
    """A T-sort releases a row once the highest ts seen minus WITHIN reaches it."""
    max_ts: int
    within: int
    bound: int


# --------------------------------------------------------------------------- views

def merged_items(views: list) -> list[tuple[Any, Any]]:
    """The items of several bucket views, sorted by key."""
    items = {}
    for its, _tot in views:
        items.update(its)
    return sorted(items.items(), key=lambda kv: kv[0])


def total(views: list, name: str, default=0):
    return sum((tot.get(name, default) for _its, tot in views), default)


def least(views: list, name: str):
    """The smallest non-None value of a total (with its order key ``(key, value)`` pairs)."""
    vals = [tot[name] for _its, tot in views if tot.get(name) is not None]
    return min(vals, key=lambda kv: kv[0])[1] if vals else None


# --------------------------------------------------------------------------- window shapes (3.7)

@dataclass(frozen=True)
class OpenWindow:
    """A window (or a session) that is still open: what it holds is released once the input clock
    reaches ``end`` (a session's end moves on with each row: its last row plus the gap)."""
    start: int
    end: int
    keys: tuple                          # grouping key values (a window table's: its session keys)
    labels: tuple                        # the same, as the trace prints them
    partials: tuple = ()                 # ((aggregate column, value so far), ...) of a window aggregate
    rows: int | None = None              # rows it holds (a window table, a Top-N partition)


@dataclass(frozen=True)
class WindowsState:
    """The open windows of a window operator (a window table function, a window aggregation, a
    window Top-N), the earliest STATE_LIMIT by (end, start, keys)."""
    shape: str                           # the shape in words ("HOP of 2 hours every 1 hour")
    windows: tuple
    window_count: int


@dataclass(frozen=True)
class WindowStillOpen:
    """A window that ends at ``stamp`` is still open, or a later row can still open it."""
    input: str
    start: int | None                    # None: a window a later row would open
    stamp: int



def window_still_open(state, names, bound: int, stamp=lambda w: w.end) -> WindowStillOpen:
    """Why a window operator's output bound is ``bound``: the open window of ``state`` stamped
    there (``stamp``: where a window's rows are stamped), else one a later row would open."""
    name = names[0] if names else "input"
    for w in getattr(state, "windows", ()):
        if stamp(w) == bound:
            return WindowStillOpen(name, w.start, bound)
    return WindowStillOpen(name, None, bound)