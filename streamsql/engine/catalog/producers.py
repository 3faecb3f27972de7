"""What leaves a named stream, event by event (the semantics, section 2): each producer has its
own clock, a row waits until every attached producer's clock has reached it, the stream's bound
is the slowest attached producer's clock, and a producer may not move its own bound backwards.
A row below the stream's bound or its producer's clock is late (the comparison is
:mod:`streamsql.engine.lateness`); the caller reports it to the error stream."""
from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from typing import Callable

from .. import lateness
from .. import time as sqltime
from ..errors import EventError, StreamSqlError, one_line
from ..paths import check_sql_name
from .definitions import DEFAULT_PRODUCER, Event, LogEntry, Outcome, StreamDef, is_event_time


@dataclass
class Producer:
    clock: int = sqltime.NO_TIME
    attached: bool = True


@dataclass
class StreamState:
    """The moving parts of a stream: its bound (the strongest bound passed to readers), its
    producers and the rows waiting for slower producers."""
    bound: int = sqltime.NO_TIME
    producers: dict[str, Producer] = field(default_factory=dict)
    pending: list = field(default_factory=list)   # sorted [(rowtime, step, producer, values)]
    late_count: int = 0
    rows_in: int = 0
    bounds_in: int = 0
    eclipsed: int = 0

    def attached(self) -> list[str]:
        return [p for p, s in self.producers.items() if s.attached]

    def outgoing(self) -> int:
        """The bound the stream can pass on: the slowest attached producer's clock."""
        att = [max(s.clock, self.bound) for s in self.producers.values() if s.attached]
        return min(att) if att else sqltime.END_OF_TIME


class Late(Exception):
    """A row below its stream's bound or its producer's clock (``by_producer``: the latter)."""

    def __init__(self, clock: int, by_producer: bool):
        self.clock, self.by_producer = clock, by_producer


def admit(d: StreamDef, st: StreamState, ev: Event, step: int, out: dict[str, list[LogEntry]],
          coerce: Callable[[StreamDef, dict | None], tuple]) -> Outcome:
    """Apply one event of stream ``d`` to its state, appending what leaves the stream to
    ``out[d.name]``; ``coerce`` types a row's values (raising :class:`EventError`). Raises
    :class:`Late` for a late row (nothing changed); anything else it cannot apply gets an
    ``error`` outcome and changes nothing."""
    if ev.producer is not None:
        try:
            check_sql_name(ev.producer, "producer")
        except StreamSqlError as e:
            return Outcome(step, ev, "error", f"stream {d.name}: {e}")
    p = ev.producer or DEFAULT_PRODUCER
    before = st.bound
    if ev.kind in ("row", "bound") and ev.rowtime is not None and not is_event_time(ev.rowtime):
        what = "a row's rowtime" if ev.kind == "row" else "a bound"
        return Outcome(step, ev, "error", one_line(f"{what} for stream {d.name} must be a time between 0001-01-01 "
                                                  f"and 9999-12-31, not {ev.rowtime!r}", limit=200))
    if ev.kind == "row":
        if ev.rowtime is None:
            return Outcome(step, ev, "error", f"a row for stream {d.name} needs a rowtime")
        try:
            values = coerce(d, ev.values)
        except EventError as e:
            return Outcome(step, ev, "error", str(e), bound_before=before, bound_after=before)
        clock = lateness.clock(st, p)
        if lateness.is_late(ev.rowtime, clock):
            raise Late(clock, clock > st.bound)     # by the producer's clock, not the stream's
        prod = st.producers.get(p)
        if prod is None or not prod.attached:
            prod = st.producers[p] = Producer()
        prod.clock = max(prod.clock, ev.rowtime)
        st.rows_in += 1
        bisect.insort(st.pending, (ev.rowtime, step, p, values), key=lambda x: (x[0], x[1]))
        released = flush(d, st, step, out)
        return Outcome(step, ev, "ok", bound_before=before, bound_after=st.bound, released=released)
    if ev.kind == "bound":
        if ev.rowtime is None:
            return Outcome(step, ev, "error", f"a bound for stream {d.name} needs a time")
        t = sqltime.bound_value(ev.rowtime, ev.strict)
        prod = st.producers.get(p)
        if prod is not None and prod.attached and t < prod.clock:
            who = "" if p == DEFAULT_PRODUCER else f"producer {p} of "
            return Outcome(step, ev, "error",
                           f"bound {sqltime.format_timestamp(t)} on {who}stream {d.name} is before that "
                           f"producer's clock {sqltime.format_timestamp(prod.clock)}; a producer's bound "
                           f"cannot move backwards", bound_before=before, bound_after=before)
        if prod is None or not prod.attached:
            prod = st.producers[p] = Producer()
        eclipsed = t <= max(st.bound, prod.clock)
        prod.clock = max(prod.clock, t)
        st.bounds_in += 1
        released = flush(d, st, step, out)
        if eclipsed:
            st.eclipsed += 1
        return Outcome(step, ev, "eclipsed" if eclipsed else "ok", bound_before=before,
                       bound_after=st.bound, released=released)
    if ev.kind == "attach":
        prod = st.producers.get(p)
        if prod is not None and prod.attached:
            return Outcome(step, ev, "eclipsed", f"producer {p} is already attached to {d.name}",
                           bound_before=before, bound_after=before)
        st.producers[p] = Producer()
        return Outcome(step, ev, "ok", bound_before=before, bound_after=before)
    if ev.kind == "detach":
        prod = st.producers.get(p)
        if prod is None or not prod.attached:
            return Outcome(step, ev, "error", f"producer {p} is not attached to stream {d.name}",
                           bound_before=before, bound_after=before)
        prod.attached = False
        released = flush(d, st, step, out)
        return Outcome(step, ev, "ok", bound_before=before, bound_after=st.bound, released=released)
    return Outcome(step, ev, "error", f"unknown event kind {ev.kind!r}")


def flush(d: StreamDef, st: StreamState, step: int, out: dict[str, list[LogEntry]]) -> int:
    """Let out every pending row the slowest producer allows; move the stream's bound."""
    limit = st.outgoing()
    n = 0
    while n < len(st.pending) and st.pending[n][0] <= limit:
        n += 1
    leaving, st.pending = st.pending[:n], st.pending[n:]
    new_bound = st.bound
    if leaving:
        new_bound = max(new_bound, leaving[-1][0])
    if limit < sqltime.END_OF_TIME:
        new_bound = max(new_bound, limit)
    if not leaving and new_bound == st.bound:
        return 0
    entries = out.setdefault(d.name, [])
    for rowtime, _s, _p, values in leaving:
        entries.append(LogEntry(step, 0, rowtime, new_bound, values))
    if not leaving or new_bound > leaving[-1][0]:
        entries.append(LogEntry(step, 1, new_bound, new_bound, None))
    st.bound = new_bound
    return len(leaving)
