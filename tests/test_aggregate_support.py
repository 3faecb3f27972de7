"""Helpers shared by the aggregation, window and join tests (no tests here).

Events are written compactly, on the day 2006-10-10 unless a full timestamp is given:

    row("Orders", "10:00", orderId=1, ticker="ORCL")     a row
    bound("Trades", "10:11")                              a bound (punctuation)
    bound("Trades", "10:59:59.999", strict=True)          a strict bound

:func:`run` replays them through one query and returns the released rows as
``(step, "HH:MM[:SS[.fff]]", {column: value})`` and the output bound after every step where it
changed, so a test compares against a table derived by hand from the semantics (docs/semantics.md).
"""
from __future__ import annotations

import re

import math
import shutil
import tempfile
from dataclasses import dataclass, field
from typing import Any

import streamsql
from streamsql.engine import time as T
from streamsql.engine.catalog import Event
from streamsql.engine.operators.base import Operator

DAY = "2006-10-10"
DAY_MS = T.parse_timestamp(f"{DAY} 00:00:00")
MINUTE = 60_000
HOUR = 60 * MINUTE


def ts(s: str) -> int:
    """Milliseconds for ``HH:MM[:SS[.fff]]`` on the default day, or a full timestamp."""
    return T.parse_timestamp(s if "-" in s[:5] else f"{DAY} {s}")


def hm(ms: int | None) -> str | None:
    """The short form of a time on the default day (full timestamp on another day)."""
    if ms is None:
        return None
    s = T.format_timestamp(ms)
    return s[len(DAY) + 1:] if s.startswith(DAY) else s


def row(stream: str, t: str, producer: str | None = None, **values) -> Event:
    return Event(stream, "row", ts(t), values, producer=producer)


def bound(stream: str, t: str, strict: bool = False, producer: str | None = None) -> Event:
    return Event(stream, "bound", ts(t), strict=strict, producer=producer)


@dataclass
class Run:
    wb: Any
    q: Any
    outcomes: list
    rows: list = field(default_factory=list)      # (step, "HH:MM", {COL: value})
    bounds: dict = field(default_factory=dict)    # step -> "HH:MM" output bound after it

    def table(self, *cols: str) -> list[tuple]:
        """Rows as ``(step, rowtime, col values...)`` for the named columns (case-insensitive)."""
        out = []
        for step, rt, vals in self.rows:
            up = {k.upper(): v for k, v in vals.items()}
            out.append((step, rt) + tuple(up[c.upper()] for c in cols))
        return out

    def hosts(self) -> list:
        return hosts(self.q)


def hosts(q) -> list:
    """The stateful nodes of a local query, bottom-up (``.op`` is the operator)."""
    out = []

    def walk(n):
        for c in getattr(n, "children", None) or ([n.child] if hasattr(n, "child") else []):
            walk(c)
        if isinstance(getattr(n, "op", None), Operator):
            out.append(n)

    walk(q.handle.root)
    return out


def op_of(q, cls) -> Operator:
    ops = [h.op for h in hosts(q) if isinstance(h.op, cls)]
    assert len(ops) == 1, ops
    return ops[0]


#: workbenches :func:`run` opened, closed (and their folders removed) after each test by conftest
OWNED: list = []


def close_owned() -> None:
    while OWNED:
        wb, folder = OWNED.pop()
        try:
            wb.close()
        finally:
            shutil.rmtree(folder, ignore_errors=True)


def run(ddl: str, query: str, events: list[Event], *, engine: str = "local", wb=None,
        **wb_kw) -> Run:
    """Create the streams/tables of ``ddl``, start ``query``, inject ``events`` (one event per
    step, in order) and collect what the query released."""
    own = wb is None
    if own:
        folder = tempfile.mkdtemp(prefix="streamsql-test-")
        wb = streamsql.Workbench(folder, engine=engine, **wb_kw)
        OWNED.append((wb, folder))
    if ddl.strip():
        wb.execute(ddl)
    q = wb.query(query)
    outcomes = wb.inject(events) if events else []
    q.wait(timeout=300)
    first = q.start_step
    r = Run(wb, q, outcomes)
    for o in q.rows:
        r.rows.append((o.step - first, hm(o.rowtime), dict(zip(q.columns, o.values))))
    r.bounds = {s - first: hm(b) for s, b in q.bounds.items()}
    return r


def drive(wb, q, events: list[Event]):
    """Inject more events into a running query; returns the new rows like :func:`run`."""
    n = len(q.rows)
    wb.inject(events)
    q.wait(timeout=300)
    return [(o.step - q.start_step, hm(o.rowtime), dict(zip(q.columns, o.values))) for o in q.rows[n:]]


def approx_equal(a, b, rel=1e-9, abs_=1e-9) -> bool:
    if isinstance(a, float) or isinstance(b, float):
        if a is None or b is None:
            return a is b
        return math.isclose(float(a), float(b), rel_tol=rel, abs_tol=abs_)
    return a == b


def normalize_value(v, digits: int = 6):
    """A hashable, tolerance-friendly form of a value for multiset comparison."""
    if v is None:
        return None
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        return round(v, digits)
    if hasattr(v, "is_finite"):       # Decimal
        return round(float(v), digits)
    return v


def multiset(rows) -> list:
    """Sorted list of normalized tuples (a multiset with a stable order)."""
    norm = [tuple(normalize_value(v) for v in r) for r in rows]
    return sorted(norm, key=lambda t: tuple((x is None, str(type(x)), x if x is not None else 0) for x in t))


# --------------------------------------------------------------------------- random event sequences

def event_strategy(streams: dict, *, n_min: int = 4, n_max: int = 24, start: str = "09:40",
                   deltas=(-3, 0, 0, 0, 1, 2, 4, 7, 15, 40), p_bound: float = 0.2):
    """A hypothesis strategy of event lists over ``streams`` (``{name: {column: value strategy}}``):
    rows and bounds; a row's time is its stream's clock plus a delta in minutes, so rows repeat
    rowtimes, move on, and now and then (negative delta) fall below the clock and are late.
    Bounds never move backwards (a bound equal to the clock is eclipsed)."""
    from hypothesis import strategies as st

    names = sorted(streams)

    @st.composite
    def events(draw):
        clock = {s: ts(start) for s in names}
        out = []
        for _ in range(draw(st.integers(n_min, n_max))):
            s = draw(st.sampled_from(names))
            d = draw(st.sampled_from(deltas))
            if draw(st.floats(0, 1)) < p_bound:
                t = clock[s] + max(d, 0) * MINUTE + draw(st.sampled_from([0, 0, 1]))   # sometimes strict-like
                out.append(Event(s, "bound", t))
                clock[s] = max(clock[s], t)
            else:
                t = clock[s] + d * MINUTE + draw(st.sampled_from([0, 0, 0, 30_000]))
                vals = {c: draw(v) for c, v in streams[s].items()}
                out.append(Event(s, "row", t, vals))
                if t >= clock[s]:
                    clock[s] = t
        return out

    return events()


def accepted_rows(events: list[Event], outcomes) -> dict[str, list[tuple[int, int, dict]]]:
    """Per stream, the rows the catalog accepted: (global index, rowtime, values)."""
    out: dict[str, list] = {}
    for i, (e, o) in enumerate(zip(events, outcomes)):
        if e.kind == "row" and o.status == "ok":
            out.setdefault(e.stream.upper(), []).append((i, e.rowtime, e.values))
    return out


def flush(streams, t: str = "2006-10-12 00:00:00") -> list[Event]:
    """Bounds far ahead on every stream: everything still held is released."""
    return [Event(s, "bound", ts(t)) for s in streams]


def start_queries(wb, ddl: str, queries: dict[str, str]) -> dict:
    if ddl.strip():
        wb.execute(ddl)
    # keys may be labels such as "LEFT JOIN"; query names are plain identifiers
    return {name: wb.query(sql, name=re.sub(r"\W+", "_", name)) for name, sql in queries.items()}


def released(q, start_step: int | None = None) -> list[tuple]:
    """A query's released rows as (step, rowtime, values...), steps relative to its start."""
    s0 = q.start_step if start_step is None else start_step
    return [(o.step - s0, o.rowtime) + tuple(o.values) for o in q.rows]


def assert_stamps_never_go_backwards(q) -> None:
    times = [o.rowtime for o in q.rows]
    assert all(a <= b for a, b in zip(times, times[1:])), f"{q.name}: released rows go backwards in stamp"


def spark_rows(spark, name: str, rows: list[tuple], schema: str):
    """Register ``rows`` as the temporary view ``name`` (a Spark batch DataFrame)."""
    df = spark.createDataFrame(rows, schema)
    df.createOrReplaceTempView(name)
    return df


def random_events(rng, streams: dict, n: int, *, start: str = "09:50", p_bound: float = 0.2,
                  deltas=(-3, 0, 0, 1, 1, 2, 3, 5, 12), weights: dict | None = None) -> list[Event]:
    """Like :func:`event_strategy`, from a ``random.Random`` (``streams``: ``{name: {column:
    function(rng) -> value}}``): rows at the stream's clock plus a delta in minutes (negative:
    late), repeated rowtimes, bounds that never move backwards."""
    names = sorted(streams)
    clock = {s: ts(start) for s in names}
    out = []
    w = [1.0 if weights is None else weights.get(s, 1.0) for s in names]
    for _ in range(n):
        s = rng.choices(names, w)[0]
        d = rng.choice(deltas)
        if rng.random() < p_bound:
            t = clock[s] + max(d, 0) * MINUTE + rng.choice([0, 0, 1])
            out.append(Event(s, "bound", t))
            clock[s] = max(clock[s], t)
        else:
            t = clock[s] + d * MINUTE
            out.append(Event(s, "row", t, {c: f(rng) for c, f in streams[s].items()}))
            clock[s] = max(clock[s], t)
    return out
