"""Spark's own streaming model beside the rowtime bounds: which queries have a *native
twin* (the same query as plain Spark Structured Streaming: ``withWatermark`` on each input,
``window()``, an event-time interval join, ``union``), the typed record of what the twin did
step by step, and its comparison with what the query released.

This module knows no Spark: it reads the logical plan and the journal's events and works on
plain records. The Spark runtime builds and runs the twin (``runtime/spark/native.py``) from a
:class:`NativeShape`; :mod:`streamsql.engine.twin` puts the pieces together for a query.
"""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from . import time as sqltime
from .errors import StreamSqlError
from .expr import Call, Rowtime
from .operators.timekey import TimeKey
from .plan import (Aggregate, Join, Node, Project, Query, Rank, Sort, StreamScan, Union, Window, WindowAggregate,
                   WindowTable)
from .types import format_value

#: the aggregates Spark computes in a streaming ``groupBy`` as SQL defines them here
NATIVE_AGGS = ("COUNT", "SUM", "AVG", "MIN", "MAX")


class NativeUnsupported(StreamSqlError):
    """The query (or an event it read) has a construct plain Spark streaming cannot express."""


def _no(construct: str, why: str) -> NativeUnsupported:
    return NativeUnsupported(f"no native Spark twin: {construct} ({why})")


# --------------------------------------------------------------------------- the delay

_DELAY = re.compile(r"^\s*(\d+)\s*(ms|milliseconds?|s|seconds?|min|minutes?|h|hours?|days?)\s*$", re.I)
_UNIT_MS = {"ms": 1, "millisecond": 1, "s": 1000, "second": 1000, "min": 60_000, "minute": 60_000,
            "h": 3_600_000, "hour": 3_600_000, "day": 86_400_000}


def parse_delay(delay) -> int:
    """A watermark delay in milliseconds: an int (ms) or text like ``"10 minutes"``."""
    if isinstance(delay, bool):
        raise NativeUnsupported(f"a watermark delay is a time like '10 minutes', not {delay!r}")
    if isinstance(delay, int):
        if delay < 0:
            raise NativeUnsupported(f"a watermark delay cannot be negative ({delay} ms)")
        return delay
    m = _DELAY.match(str(delay))
    if not m:
        raise NativeUnsupported(f"a watermark delay is a time like '0 seconds' or '10 minutes', not {delay!r}")
    unit = m.group(2).lower()
    unit = unit if unit in _UNIT_MS else unit.rstrip("s")
    return int(m.group(1)) * _UNIT_MS[unit]


def delay_text(ms: int) -> str:
    for unit, size in (("day", 86_400_000), ("hour", 3_600_000), ("minute", 60_000), ("second", 1000)):
        if ms and ms % size == 0:
            n = ms // size
            return f"{n} {unit}{'s' if n != 1 else ''}"
    return f"{ms} milliseconds" if ms else "0 seconds"


# --------------------------------------------------------------------------- the subset

@dataclass
class NativeShape:
    """A query plain Spark can run. ``kind`` is its one stateful operator (``aggregate`` or
    ``join``) or ``stateless``; ``scans`` are its StreamScan leaves in query order (each one
    input of Spark's global watermark); ``window_ms`` the tumbling window of an aggregate."""
    plan: Query
    kind: str
    scans: list[StreamScan]
    window_ms: int | None = None
    #: a window shape (docs/semantics.md 3.7) as Spark's ``window()`` (TUMBLE, HOP) or
    #: ``session_window()`` (SESSION) takes it
    window: object = None

    @property
    def streams(self) -> list[str]:
        return list(dict.fromkeys(s.stream for s in self.scans))


def native_shape(plan: Query) -> NativeShape:
    """The plan's native shape, or :class:`NativeUnsupported` naming the construct."""
    scans: list[StreamScan] = []
    stateful: list[Node] = []
    window = [None]
    shape = [None]

    def walk(n: Node) -> None:
        if isinstance(n, StreamScan):
            scans.append(n)
            return
        if isinstance(n, Window):
            raise _no("an OVER window", "Spark streaming has no sliding windows over rows")
        if isinstance(n, Sort):
            raise _no("ORDER BY", "Spark streaming sorts only in complete output mode")
        if not n.is_stream:
            raise _no(f"a relational input ({type(n).__name__})", "the twin joins streams only")
        if isinstance(n, Project) and n.rowtime is not None:
            raise _no("an AS ROWTIME projection", "Spark's watermark stays on the input's event-time column")
        if isinstance(n, Union) and any(_stateful_below(i) for i in n.inputs()):
            raise _no("a UNION ALL of GROUP BY or join results", "the twin runs one stateful operator")
        if isinstance(n, Aggregate):
            window[0] = _check_aggregate(n)
        if isinstance(n, Rank):
            raise _no(f"a {n.fn} Top-N", "Spark streaming numbers rows only in complete output mode")
        if isinstance(n, (WindowAggregate, WindowTable)):
            shape[0] = _check_window(n)
        if isinstance(n, Join):
            _check_join(n)
        if isinstance(n, WindowAggregate):
            if stateful:
                raise _no(f"a window aggregation over a {_name(stateful[0])}", "the twin runs one stateful operator")
            stateful.append(n)
        if isinstance(n, (Aggregate, Join)):
            if stateful:
                raise _no(f"a {_name(stateful[0])} over a {_name(n)}", "the twin runs one stateful operator")
            stateful.append(n)
        for c in n.inputs():
            walk(c)

    walk(plan.root)
    kind = "stateless" if not stateful else ("join" if isinstance(stateful[0], Join) else "aggregate")
    return NativeShape(plan, kind, scans, window[0], shape[0])


def _stateful_below(n: Node) -> bool:
    return isinstance(n, (Aggregate, Join, WindowAggregate)) or any(_stateful_below(i) for i in n.inputs())


def _name(n: Node) -> str:
    return "GROUP BY" if isinstance(n, Aggregate) else "window aggregation" if isinstance(n, WindowAggregate) else "JOIN"


def _check_window(n) -> object:
    """A window shape Spark has: TUMBLE and HOP as ``window()``, SESSION as ``session_window()``
    (aggregated); a window table's rows without aggregation only for TUMBLE and HOP."""
    sh = n.shape
    if sh.kind == "CUMULATE":
        raise _no("a CUMULATE window", "Spark has no cumulating window: window() tumbles or hops, session_window() "
                                       "makes sessions")
    if sh.kind == "HOP" and sh.size < sh.slide:
        raise _no("a HOP shorter than its slide", "Spark's window() needs a slide no longer than the window")
    if isinstance(n, WindowTable):
        if sh.is_session:
            raise _no("a SESSION window table's rows", "Spark's session_window() only groups rows")
        return sh
    if n.stamp != "end":
        raise _no("a window aggregation stamped at its window's start or time", "Spark stamps a window by its end")
    for c in n.aggs:
        if c.fn not in NATIVE_AGGS:
            raise _no(c.fn, "Spark's streaming first()/last() depend on arrival order")
        if c.distinct:
            raise _no(f"{c.fn}(DISTINCT ...)", "Spark streaming has no distinct aggregates")
    if sh.is_session:
        plain = [k for i, k in enumerate(n.keys) if i not in n.window_keys]
        if len(plain) != len(n.partition) or not all(repr(a) == repr(b) for a, b in zip(plain, n.partition)):
            raise _no("a session grouped by more than its session keys",
                      "Spark's session_window() makes one session per value of all the grouping keys")
    for i, k in enumerate(n.keys):
        if i not in n.window_keys and _reads_rowtime(k):
            raise _no("a second time key in GROUP BY", "Spark groups by one event-time window")
    return sh


def _check_aggregate(a: Aggregate) -> int:
    if a.distinct_rows:
        raise _no("SELECT STREAM DISTINCT", "Spark streaming has no per-period DISTINCT")
    if a.stamp is not None:
        raise _no("an AS ROWTIME stamp on a GROUP BY", "Spark stamps a window by its end")
    for c in a.aggs:
        if c.fn not in NATIVE_AGGS:
            raise _no(c.fn, "Spark's streaming first()/last() depend on arrival order")
        if c.distinct:
            raise _no(f"{c.fn}(DISTINCT ...)", "Spark streaming has no distinct aggregates")
    tk = TimeKey(a.keys[a.time_key])
    if tk.shift:
        raise _no("a shifted period (FLOOR(ROWTIME + c))", "Spark's windows start at the epoch")
    if tk.kind == "FLOOR_TO" and tk.arg in sqltime.FIXED_UNITS and tk.arg != "WEEK":
        ms = sqltime.FIXED_UNITS[tk.arg]
    elif tk.kind == "STEP" and tk.arg.is_fixed:
        ms = tk.arg.millis
    else:
        raise _no(f"a {tk.kind.replace('_TO', '')} period key", "only FLOOR(ROWTIME TO unit) and STEP are Spark windows")
    for i, k in enumerate(a.keys):
        if i != a.time_key and _reads_rowtime(k):
            raise _no("a second time key in GROUP BY", "Spark groups by one event-time window")
    return ms


def _check_join(j: Join) -> None:
    if j.versions is not None:
        raise _no("a temporal join (FOR SYSTEM_TIME AS OF)", "Spark streaming has no event-time temporal join")
    if j.left_window is None or j.right_window is None:
        raise _no("a join with a table", "the twin joins streams only")


def _reads_rowtime(e) -> bool:
    if isinstance(e, Rowtime):
        return True
    return isinstance(e, Call) and any(_reads_rowtime(a) for a in e.args)


# --------------------------------------------------------------------------- the events

@dataclass
class NativeEvent:
    """One event of the query's streams as the twin reads it (late rows included: Spark decides
    for itself what is late). ``status`` is this engine's outcome (``ok``, ``late``, ...)."""
    step: int
    stream: str
    kind: str                    # "row" or "bound"
    rowtime: int | None
    values: tuple = ()
    status: str = "ok"
    clock: int | None = None     # the clock a late row violated

    def text(self, fields) -> str:
        """The event as the step tables print it (``ORDERS 10:00 1 ORCL 100``)."""
        if self.kind == "bound":
            return f"{self.stream} bound {sqltime.show_time(self.rowtime, short=True)}"
        return f"{self.stream} {sqltime.show_time(self.rowtime, short=True)} {values_text(self.values, fields)}"


def native_events(journaled, coerce) -> list[NativeEvent]:
    """The twin's events from journal entries (``JournalEvent``), in step order; ``coerce(stream,
    values)`` gives a row's tuple. Refused events are left out (they entered no stream)."""
    out = []
    for e in journaled:
        if e.producer is not None or e.kind in ("attach", "detach"):
            raise _no(f"a bound from one producer (step {e.step}, stream {e.stream})",
                      "Spark's watermark is one per input, never one per producer")
        if e.kind == "bound" and e.strict:
            raise _no(f"a strict bound (step {e.step}, stream {e.stream})",
                      "Spark's watermark has no strict form")
        if e.status == "error":
            continue
        if e.kind == "row":
            out.append(NativeEvent(e.step, e.stream, "row", e.time, coerce(e.stream, e.values), e.status, e.clock))
        elif e.kind == "bound":
            out.append(NativeEvent(e.step, e.stream, "bound", e.time, (), e.status))
    return out


# --------------------------------------------------------------------------- what the twin did

@dataclass
class NativeRow:
    """A row the twin emitted: its batch, and the step whose micro-batches emitted it."""
    step: int
    batch: int
    rowtime: int
    values: tuple


@dataclass
class NativeBatch:
    """One micro-batch: the step it belongs to, whether it read the step's event (``no_data``:
    one Spark ran after it because the watermark moved), the watermark in force during it, the
    rows it emitted and how many rows its stateful operator dropped as late."""
    batch: int
    step: int
    no_data: bool
    watermark: int | None
    rows: list[NativeRow] = field(default_factory=list)
    dropped: int = 0


@dataclass
class NativeStep:
    """One step as the twin saw it: the event, its batches, the watermark after them (None while
    Spark has none: not every input has had a row), and whether Spark dropped the event's row."""
    event: NativeEvent
    batches: list[NativeBatch]
    watermark: int | None
    dropped: bool = False

    @property
    def step(self) -> int:
        """The step (the event's global sequence number)."""
        return self.event.step

    @property
    def rows(self) -> list[NativeRow]:
        """The rows Spark emitted in the step's batches."""
        return [r for b in self.batches for r in b.rows]


# --------------------------------------------------------------------------- the comparison

@dataclass
class RowTiming:
    """One output row (rowtime and values) with the step each side released it at (None: not
    released), Spark's batch, and one line on why the two differ ('' when they agree)."""
    rowtime: int
    values: tuple
    ours: int | None
    spark: int | None
    batch: int | None
    why: str = ""


@dataclass
class StepComparison:
    """One step side by side: the event, the rows each side released at it, the watermark after
    it, and the row Spark dropped as late at it (its text)."""
    step: int
    event: str
    ours: list[RowTiming]
    spark: list[RowTiming]
    watermark: int | None
    dropped: str = ""
    late_here: bool = False


@dataclass
class Comparison:
    """The query's releases beside its twin's emissions: per step (``steps``), per output row
    (``rows``, in the order the first side released them), with the watermark delay."""
    query: str
    delay_ms: int
    fields: list
    steps: list[StepComparison]
    rows: list[RowTiming]

    @property
    def differing(self) -> list[RowTiming]:
        """The rows released at different steps (or by one side only), each with its why."""
        return [r for r in self.rows if r.why]

    def row_text(self, r) -> str:
        """A row as the seeds' step tables print it: rowtime, then the values."""
        return f"{sqltime.show_time(r.rowtime, short=True)} {values_text(r.values, self.fields)}"


def values_text(values, fields) -> str:
    """Values as the step tables print them (timestamps as times of day)."""
    return " ".join(sqltime.show_time(v, short=True) if f.type.name == "TIMESTAMP" and v is not None
                    else format_value(v, f.type) for v, f in zip(values, fields))


def compare(name: str, shape: NativeShape, delay_ms: int, fields, ours: list, steps: list[NativeStep]) -> Comparison:
    """Pairs the query's released rows (``OutputRow``) with the twin's emissions by rowtime and
    values, and says why each pair (or unpaired row) differs in time."""
    by_key: dict[tuple, list] = {}
    for r in ours:
        by_key.setdefault((r.rowtime, tuple(r.values)), []).append(r)
    spark_rows = [r for s in steps for r in s.rows]
    timings: list[RowTiming] = []
    for sr in spark_rows:
        mine = by_key.get((sr.rowtime, tuple(sr.values)))
        o = mine.pop(0) if mine else None
        timings.append(RowTiming(sr.rowtime, tuple(sr.values), o.step if o else None, sr.step, sr.batch))
    for left in by_key.values():
        for o in left:
            timings.append(RowTiming(o.rowtime, tuple(o.values), o.step, None, None))
    timings.sort(key=lambda t: (min(x for x in (t.ours, t.spark) if x is not None), t.rowtime))
    why = _Why(shape, delay_ms, steps)
    for t in timings:
        t.why = why.line(t)
    table = []
    for s in steps:
        drop = s.event.text(_fields_of(shape, s.event.stream)) if s.dropped else ""
        table.append(StepComparison(s.step, s.event.text(_fields_of(shape, s.event.stream)),
                                    [t for t in timings if t.ours == s.step],
                                    [t for t in timings if t.spark == s.step], s.watermark, drop,
                                    s.event.status == "late"))
    return Comparison(name, delay_ms, list(fields), table, timings)


def spark_waits_for(shape: NativeShape, rowtime: int, values: tuple) -> int | None:
    """The time Spark's watermark must pass before it can emit this output row: a window's end
    (aggregate), an unmatched row's last possible partner time (outer join: its time plus the
    other side's reach), None where Spark emits without waiting (stateless, a joined pair)."""
    if shape.kind == "aggregate":
        return rowtime
    if shape.kind != "join":
        return None
    node, cols = shape.plan.root, None        # which join side each output column comes from
    while not isinstance(node, Join):
        if isinstance(node, Project):
            if cols is None:
                cols = [e for e in node.exprs]
            else:
                return None
        node = node.inputs()[0]
    nl = len(node.left.fields)
    refs = [_col_refs(e) for e in cols] if cols is not None else [{i} for i in range(len(node.fields))]
    left_null = any(v is None for v, r in zip(values, refs) if r and max(r) < nl) and \
        all(v is None for v, r in zip(values, refs) if r and max(r) < nl)
    right_null = all(v is None for v, r in zip(values, refs) if r and min(r) >= nl) and \
        any(r and min(r) >= nl for r in refs)
    lw, rw = node.left_window, node.right_window
    if right_null and not left_null:      # a left row no right row matched: stamp r + p_l
        return rowtime + rw.following
    if left_null and not right_null:
        return rowtime + lw.following
    return None


def _col_refs(e) -> set:
    from .expr import Col
    if isinstance(e, Col):
        return {e.index}
    if isinstance(e, Call):
        out = set()
        for a in e.args:
            out |= _col_refs(a)
        return out
    return set()


def _fields_of(shape: NativeShape, stream: str):
    for s in shape.scans:
        if s.stream == stream:
            return s.fields
    return []


class _Why:
    """The one-line reasons: what released a row here, what Spark waited for."""

    def __init__(self, shape: NativeShape, delay_ms: int, steps: list[NativeStep]):
        self.shape = shape
        self.delay = delay_ms
        self.steps = {s.step: s for s in steps}
        self.last = steps[-1] if steps else None

    def wm_words(self) -> str:
        n = len(self.shape.scans)
        base = ("the minimum of both inputs' maximum event times" if n == 2 else
                f"the minimum of the {n} inputs' maximum event times" if n > 2 else "the maximum event time")
        return base + (f" minus {delay_text(self.delay)}" if self.delay else "")

    def ours(self, step: int) -> str:
        s = self.steps.get(step)
        if s is None:
            return f"this query released it at step {step}"
        e = s.event
        if e.kind == "bound":
            return f"the bound of {e.stream} alone released it at step {step}"
        return f"the {e.stream} row at {sqltime.show_time(e.rowtime, short=True)} released it at step {step}"

    def spark(self, t: RowTiming) -> str:
        s = self.steps[t.spark]
        kind = self.shape.kind
        if kind == "stateless":
            return (f"Spark emits a row of a query without state as soon as it reads it, at step {t.spark}, "
                    f"in no rowtime order")
        until = spark_waits_for(self.shape, t.rowtime, t.values)
        if until is None:
            return f"Spark emits a joined pair as soon as both rows are in, at step {t.spark}, in no rowtime order"
        return (f"Spark waits until {self.wm_words()} passes {sqltime.show_time(until, short=True)}, "
                f"at step {t.spark} (watermark {sqltime.show_time(s.watermark, short=True)})")

    def line(self, t: RowTiming) -> str:
        if t.ours is not None and t.spark is not None:
            return "" if t.ours == t.spark else f"{self.ours(t.ours)}; {self.spark(t)}"
        if t.spark is None:
            return f"{self.ours(t.ours)}; {self.spark_missing(t)}"
        return f"{self.spark(t)}; {self.ours_missing(t)}"

    def spark_missing(self, t: RowTiming) -> str:
        dropped = [s for s in self.steps.values() if s.dropped]
        wm = self.last.watermark if self.last else None
        if dropped:
            d = dropped[0]
            return (f"Spark has no such row: it dropped the {d.event.stream} row at "
                    f"{sqltime.show_time(d.event.rowtime, short=True)} (step {d.step}) as late")
        until = spark_waits_for(self.shape, t.rowtime, t.values)
        if until is not None and wm is not None and wm >= until and self._sessions():
            return ("Spark has no such session: its session_window() keeps a row at exactly the last one plus "
                    "the gap in that session, where this query starts a new one")
        if until is not None and (wm is None or wm < until):
            return (f"Spark has not emitted it: {self.wm_words()} ({sqltime.show_time(wm, short=True)}) "
                    f"has not passed {sqltime.show_time(until, short=True)}")
        return "Spark has not emitted it"

    def _sessions(self) -> bool:
        w = self.shape.window
        return w is not None and w.kind == "SESSION"

    def ours_missing(self, t: RowTiming) -> str:
        late = [s for s in self.steps.values() if s.event.status == "late" and not s.dropped]
        if late:
            e = late[0].event
            return (f"this query rejected the {e.stream} row at {sqltime.show_time(e.rowtime, short=True)} "
                    f"(step {e.step}) as late, into the error stream, where Spark's watermark let it in")
        # a hop's late row: Spark drops it from the windows that ended, keeps it in the others
        if self._sessions():
            return ("this query has no such session: a row at exactly the last one plus the gap opens a new "
                    "session here (the semantics, section 3.7)")
        some = [s for s in self.steps.values() if s.event.status == "late" and s.dropped
                and self.shape.window is not None and self.shape.window.kind == "HOP"]
        if some:
            e = some[0].event
            return (f"this query rejected the {e.stream} row at {sqltime.show_time(e.rowtime, short=True)} "
                    f"(step {e.step}) as late, into the error stream; Spark dropped it only from the windows "
                    f"its watermark had closed and counted it in the others")
        return "this query has not released it (yet)"


def content(rows) -> Counter:
    """A multiset of ``(rowtime, values)``: the content of a result, whatever the order."""
    return Counter((r.rowtime, tuple(r.values)) for r in rows)
