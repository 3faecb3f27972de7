"""The per-step trace of a query as typed records, the one formatter that puts them in words, and
the bounded history a query keeps.

After every step that fed one of the query's streams, each operator (in the order the local
runtime builds them: inputs before the operator reading them) reports its input clocks, present,
frontier ``future`` (the earliest stamp it could still produce), output ``bound``, the rows it
holds (the earliest :data:`TRACE_HELD` by ``(stamp, tie)``, and the exact count), each with what it
waits for, and its state (``operators/describe.py``). Both runtimes build these records: the local
runtime from its operators after each event, the Spark runtime from what its stages report
(``runtime/spark/trace_assembly.py``). Prose is made only by :func:`describe_wait` and
:func:`describe_reason`.
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Any, Iterator

from .. import time as sqltime
from ..operators import describe as D

#: held rows listed per operator in each trace record (the earliest ones; the count is exact)
TRACE_HELD = 20


@dataclass(frozen=True)
class Wait:
    """Why a held row is not released yet. Rule 1 (``input`` set): that input's clock must reach
    ``time`` (the row's stamp); ``clock`` is its value now. Rule 2 (``input`` None): the operator
    could still produce a row stamped ``frontier``, earlier than ``time``; ``reason`` says why."""
    input: str | None
    time: int
    clock: int | None = None
    frontier: int | None = None
    reason: Any = None
    operator: str = ""
    #: the window the held row belongs to, ``(start, end)`` (a window operator's rows), for the words
    window: tuple | None = None


@dataclass(frozen=True)
class HeldRow:
    rowtime: int                # the row's stamp
    values: tuple
    waits: tuple                # Wait, rule-1 waits (inputs in order) first

    @property
    def waits_for(self) -> list[str]:
        """The waits in words."""
        return [describe_wait(w) for w in self.waits]


@dataclass(frozen=True)
class OperatorTrace:
    operator: str               # union, aggregate, window, join, sort
    inputs: tuple               # input names: streams, or the operators feeding it
    clocks: tuple               # each input's clock after the step
    present: int                # min(clocks)
    future: int                 # the earliest stamp it could still produce
    bound: int                  # its output bound: min(future, held stamps)
    held: tuple                 # HeldRow, the earliest TRACE_HELD by (stamp, tie)
    held_count: int             # all held rows
    state: Any = None           # a state record of operators/describe.py (None: stateless)

    @property
    def reason(self):
        """Why ``future`` is where it is (None when no held row needs it)."""
        for h in self.held:
            for w in h.waits:
                if w.input is None:
                    return w.reason
        return None


@dataclass(frozen=True)
class StepTrace:
    step: int                   # the event's sequence number
    operators: tuple            # OperatorTrace, inputs before the operators reading them
    released: int               # rows the query released at this step
    bound: int | None           # the query's output bound after it


# --------------------------------------------------------------------------- building

def held_row(op_name: str, names, clocks, future: int, stamp: int, values: tuple, reason,
             window: tuple | None = None) -> HeldRow:
    """A held row with its waits (the semantics, section 3, rules 1 and 2); ``window``: the window
    it belongs to, ``(start, end)``, when the operator says (a window table function's rows)."""
    waits = [Wait(n, stamp, clock=ck, window=window) for n, ck in zip(names, clocks) if ck < stamp]
    if stamp > future:
        waits.append(Wait(None, stamp, frontier=future, reason=reason, operator=op_name))
    return HeldRow(stamp, tuple(values), tuple(waits))


def operator_trace(op, name: str, names, clocks, future: int, held: list, held_count: int, state) -> OperatorTrace:
    """``held``: ``(stamp, values)`` of the earliest held rows in ``(stamp, tie)`` order."""
    present = min(clocks) if clocks else sqltime.NO_TIME
    lowest = min((s for s, _v in held), default=sqltime.END_OF_TIME)
    reason = None
    if any(s > future for s, _v in held) and op is not None:
        reason = op.frontier_reason(state, clocks, names)
    window_of = getattr(op, "held_window", None)
    rows = tuple(held_row(name, names, clocks, future, s, v, reason,
                          window_of(tuple(v)) if window_of is not None else None) for s, v in held)
    return OperatorTrace(name, tuple(names), tuple(clocks), present, future, min(future, lowest), rows,
                         held_count, state)


# --------------------------------------------------------------------------- words

def _t(t: int) -> str:
    return sqltime.format_timestamp(t)


def window_text(start: int, end: int) -> str:
    """A window as people read it: ``10:00-11:00`` within a day, else with the dates."""
    if sqltime.day_of(start) == sqltime.day_of(end - 1) and end - start < sqltime.DAY:
        return f"{sqltime.show_time(start, short=True)}-{sqltime.show_time(end, short=True)}"
    return f"{_t(start)} to {_t(end)}"


def _near(t: int | None, ref: int) -> str:
    """``t`` as the time of day when it is on ``ref``'s day (or the midnight after it), else in full."""
    if t is None or t <= sqltime.NO_TIME or t >= sqltime.END_OF_TIME:
        return sqltime.show_time(t)
    if sqltime.day_of(ref) <= t <= sqltime.day_of(ref) + sqltime.DAY:
        return sqltime.show_time(t, short=True)
    return _t(t)


def _clamped(t: int) -> str:
    return sqltime.format_timestamp(max(sqltime.NO_TIME, min(sqltime.END_OF_TIME, t)))


def describe_reason(r) -> str:
    """Why an operator's frontier is where it is, in words."""
    if isinstance(r, D.KeptRowCouldMatch):
        why = (f"the {r.side} row at {_clamped(r.rowtime)} could still match a {r.other} row until the "
               f"{r.other} clock passes {_clamped(r.until)}")
    elif isinstance(r, D.LaterRowsCouldMatch):
        why = f"a later {r.left} row and a later {r.right} row could still match"
    elif isinstance(r, D.UnmatchedRowReleased):
        why = (f"the unmatched {r.side} row at {_clamped(r.rowtime)} is released when the {r.other} clock "
               f"passes {_clamped(r.until)}")
    elif isinstance(r, D.LaterRowCouldBeUnmatched):
        why = f"a later {r.side} row could still be unmatched"
    elif isinstance(r, D.ProbeRowWaits):
        why = (f"the {r.side} row at {_clamped(r.rowtime)} meets the {r.versions} version valid then once the "
               f"{r.versions} clock passes {_clamped(r.until)}")
    elif isinstance(r, D.OrderByHolds):
        when = ("until the input clock reaches " + _t(r.complete_at) if r.complete_at is not None
                else "until a row with a later leading ORDER BY value arrives")
        return f"the ORDER BY holds {r.rows} row{'s' if r.rows != 1 else ''} from {_t(r.earliest)} ({when})"
    elif isinstance(r, D.WindowStillOpen):
        if r.start is not None:
            return (f"the window {window_text(r.start, r.stamp)} is still open: it closes when {r.input}'s clock "
                    f"reaches {_near(r.stamp, r.start)}")
        return f"a later {r.input} row can still open a window that ends at {_clamped(r.stamp)}"
    elif isinstance(r, D.TSortNoRowYet):
        return "the T-sort has seen no row yet, so any ts can still come"
    elif isinstance(r, D.TSortWithin):
        return (f"the T-sort releases a row once the highest ts seen minus the WITHIN interval reaches it "
                f"(now {_t(r.max_ts)} minus {r.within} ms = {_t(r.bound)})")
    else:
        raise TypeError(f"not a frontier reason: {r!r}")
    return f"{why} (could still produce a row stamped {_clamped(r.stamp)})"


def describe_wait(w: Wait) -> str:
    """What a held row waits for, in words ("ORDERS clock must reach ... (now ...)")."""
    if w.input is not None:
        now = _t(w.clock) if w.clock is not None and w.clock > sqltime.NO_TIME else "none"
        if w.window is not None:
            return (f"the window {window_text(*w.window)} closes when {w.input}'s clock reaches "
                    f"{_near(w.time, w.window[0])}; the clock is {_near(w.clock, w.window[0])}")
        return f"{w.input} clock must reach {_t(w.time)} (now {now})"
    if w.reason is not None:
        return describe_reason(w.reason)
    return f"the {w.operator} could still produce a row stamped {_t(w.frontier)}"


def clock_targets(w: Wait) -> list[tuple[str, int]]:
    """``(input, time)``: the input clocks a held row waits for and the value each must reach (a
    join's kept or unmatched row names the other side's clock)."""
    if w.input is not None:
        return [(w.input, w.time)]
    r = w.reason
    if isinstance(r, (D.KeptRowCouldMatch, D.UnmatchedRowReleased)):
        return [(r.other, r.until)]
    if isinstance(r, D.ProbeRowWaits):
        return [(r.versions, r.until + 1)]
    return []


# --------------------------------------------------------------------------- history

class TraceHistory:
    """The last ``limit`` step records of a query, oldest first; a list as far as reading goes
    (``trace[-1]``, ``len``, iteration). An entry is a :class:`StepTrace` or a lazy one (the Spark
    runtime builds a micro-batch's records when they are first read)."""

    def __init__(self, limit: int):
        self.limit = max(0, int(limit))
        self._items: deque = deque(maxlen=self.limit or None)

    def append(self, rec) -> None:
        if self.limit:
            self._items.append(rec)

    def extend(self, recs) -> None:
        if self.limit:
            self._items.extend(recs)

    def clear(self) -> None:
        self._items.clear()

    def drop_after(self, step: int) -> None:
        """Forget the records of steps after ``step`` (an append that was undone)."""
        while self._items and self._items[-1].step > step:
            self._items.pop()

    def __len__(self) -> int:
        return len(self._items)

    def __bool__(self) -> bool:
        return bool(self._items)

    def _get(self, i: int) -> StepTrace:
        rec = self._items[i]
        if not isinstance(rec, StepTrace):
            rec = rec.build()
            self._items[i] = rec
        return rec

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self._get(k) for k in range(len(self._items))[i]]
        n = len(self._items)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError("trace index out of range")
        return self._get(i)

    def __iter__(self) -> Iterator[StepTrace]:
        for k in range(len(self._items)):
            yield self._get(k)

    def steps(self) -> list[int]:
        """The steps that have a record (without building lazy ones)."""
        return [r.step for r in self._items]

    def __repr__(self) -> str:
        return f"<TraceHistory {len(self)} of at most {self.limit} steps>"
