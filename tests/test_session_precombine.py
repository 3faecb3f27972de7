"""Sessions pre-combined on Spark (precombine.session_partials): in-process, the Spark runtime's
bucket host (host.run_bucket) over the combiner's partials must give what it gives stepping the
rows one by one (the reference: the operator the local runtime runs), batch by batch: the same
rows emitted at the same steps, the same frontier reports, the same trace and the same sessions
left open. Random rows cover several session keys interleaved, rows exactly one gap after the
last (a new session), several rows in one step, bounds between rows that close sessions, runs
that extend a session of an earlier batch, other keys within a session, the trace window, and
every stamp (end, start, time). The same on the Spark runtime, with hand-derived rows and steps:
test_windows.py; random events on both runtimes: test_runtimes_agree.py.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import streamsql
from streamsql.engine.operators.base import INF, encode_ints
from streamsql.engine.runtime.spark.host import BucketState, run_bucket
from streamsql.engine.runtime.spark.precombine import (Partial, PrecombinedWindowAggregate, ScanCombiner, eligible,
                                                        scan_spec)
from streamsql.engine.runtime.spark.timeline import NO_TRACE, Timeline
from streamsql.engine.runtime.spark.wire import unpack
from test_aggregate_support import hosts

MIN = 60_000
T0 = 1_160_470_000_000
DDL = "CREATE STREAM S (k VARCHAR(3), j INTEGER, x INTEGER);"
AGGS = "COUNT(*) AS n, SUM(x) AS s, MIN(x) AS mn, FIRST_VALUE(x) AS f, LAST_VALUE(x) AS l, AVG(x) AS a"
QUERIES = {
    "end": f"""SELECT STREAM SESSION_END(ROWTIME, INTERVAL '4' MINUTE) AS e, k, {AGGS}
               FROM S GROUP BY SESSION(ROWTIME, INTERVAL '4' MINUTE), k""",
    "start": f"""SELECT STREAM SESSION_START(ROWTIME, INTERVAL '4' MINUTE) AS ROWTIME, k, {AGGS}
                 FROM S GROUP BY SESSION(ROWTIME, INTERVAL '4' MINUTE), k""",
    # other keys within a session: a run's rows make one partial per value of j
    "inner_keys": f"""SELECT STREAM window_start, window_end, k, j, {AGGS}
                      FROM TABLE(SESSION(TABLE S PARTITION BY k, DESCRIPTOR(ROWTIME), INTERVAL '4' MINUTE))
                      GROUP BY window_start, window_end, k, j""",
    "global_time": f"""SELECT STREAM window_time AS ROWTIME, {AGGS}
                       FROM TABLE(SESSION(TABLE S, DESCRIPTOR(ROWTIME), INTERVAL '4' MINUTE))
                       GROUP BY window_start, window_end, window_time""",
}


@pytest.fixture(scope="module")
def ops():
    wb = streamsql.Workbench(engine="local", durable=False, trace=False)
    try:
        wb.execute(DDL)
        return {name: hosts(wb.query(sql))[0].op for name, sql in QUERIES.items()}
    finally:
        wb.close()


def fresh(op):
    from streamsql.engine.operators.windowagg import WindowAggOp
    return WindowAggOp(op.node)


def draw_events(rnd, n: int) -> list[tuple]:
    """``(step, rows, clock)`` per step: rows ``(t, (k, j, x))`` in rowtime order (several in one
    step: released together), the stream's clock after the step (a bound may move it on; None:
    no clock record at that step)."""
    out, t, clock = [], T0, T0 - 1
    for step in range(1, n + 1):
        rows = []
        if rnd.random() < 0.8:
            for _ in range(rnd.choice([1, 1, 1, 2, 3])):
                # 4 minutes: exactly one gap after the last row, a new session
                t += rnd.choice([0, MIN, 2 * MIN, 3 * MIN + 59_999, 4 * MIN, 4 * MIN, 5 * MIN])
                rows.append((t, (rnd.choice(["a", "b", "c", None]), rnd.choice([1, 2]), rnd.choice([None, -1, 2, 7]))))
            clock = max(clock, t)
        elif rnd.random() < 0.3:    # rows another producer holds back: the clock does not move
            out.append((step, [], None))
            continue
        else:                       # a bound, at most up to where the next row may come
            clock = max(clock, clock + rnd.choice([0, MIN, 4 * MIN, 9 * MIN]))
            t = max(t, clock)
        out.append((step, rows, clock))
    return out


def bucket_input(events, initial: int = T0 - 1):
    """The bucket's usable rows, their operator tuples and the clock timeline of ``events``."""
    rel, T, arrival, vals = [], [], [], []
    for step, rows, _clock in events:
        for sub, (t, v) in enumerate(rows):
            rel.append(step), T.append(t), arrival.append(encode_ints(step, sub)), vals.append(v)
    df = pd.DataFrame({"rel": np.array(rel, np.int64), "T": np.array(T, np.int64), "arrival": arrival})
    clocks = [(s, c) for s, _r, c in events if c is not None]
    tl = Timeline(np.array([s for s, _c in clocks], np.int64), np.array([c for _s, c in clocks], np.int64), initial)
    return df, vals, tl


def partials_of(node, events, solo_from, parts: int):
    """The combiner's partials of ``events`` (cut into ``parts`` source partitions, as the
    parallel reader cuts a batch), in the order the host steps them."""
    comb = ScanCombiner(scan_spec(node, 1))
    rows = [(step, sub, t, v) for step, rs, _c in events for sub, (t, v) in enumerate(rs)]
    out = []
    cuts = np.array_split(np.arange(len(rows)), parts)
    for idx in cuts:
        b = [rows[i] for i in idx]
        if not b:
            continue
        vals = pa.table({"c0": pa.array([r[3][0] for r in b], pa.string()), "c1": pa.array([r[3][1] for r in b], pa.int32()),
                         "c2": pa.array([r[3][2] for r in b], pa.int32())})
        g = comb.combine(np.array([r[0] for r in b], np.int64), np.array([r[1] for r in b], np.int32),
                         np.array([r[2] for r in b], np.int64), vals, solo_from)
        out += zip(g.column("step").to_pylist(), g.column("sub").to_pylist(), g.column("T").to_pylist(),
                   g.column("part").to_pylist())
    out.sort(key=lambda r: (r[0], r[1]))
    df = pd.DataFrame({"rel": np.array([r[0] for r in out], np.int64), "T": np.array([r[2] for r in out], np.int64),
                       "arrival": [encode_ints(r[0], r[1]) for r in out]})
    return df, [Partial(*unpack(r[3])) for r in out]


def record(run, changes):
    em = [(e.step, e.cand.stamp, e.cand.tie, e.cand.row) for e in run.emitted]
    tr = None if run.trace is None else (run.trace.start, run.trace.base, run.trace.views,
                                         [(b, s, c.stamp, c.tie, c.row) for b, s, c in run.trace.held])
    return em, changes, tr


def sessions(op):
    return {p: (s[0], s[1], s[2]) for p, s in op.sessions.items()}, op.min_end


def step_both(base, events, cuts, trace_from, parts):
    ref, sref = fresh(base), BucketState()
    op, sop = fresh(base), BucketState()
    lo, clock = 0, T0 - 1
    for hi in list(cuts) + [len(events)]:
        batch = events[lo:hi]
        lo = hi
        if not batch:
            continue
        df, vals, tl = bucket_input(batch, clock)
        clock = tl.last
        tr = trace_from if trace_from is not None and trace_from <= batch[-1][0] else None
        want = run_bucket(ref, sref, [(df, tl)], lambda i, j, vals=vals: vals[j], tr, batched=False)
        want = record(want, want.changes)
        pdf, pvals = partials_of(base.node, batch, tr if tr is not None else NO_TRACE, parts)
        host = PrecombinedWindowAggregate(op)
        before = sop.last
        got = run_bucket(host, sop, [(pdf, tl)], lambda i, j, pvals=pvals: pvals[j], tr)
        got = record(got, host.exact_changes(got.changes, before, tl))
        assert got == want, (batch[0][0], batch[-1][0])
        assert sessions(op) == sessions(ref)
        assert sop.last == sref.last and sop.held == sref.held


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                 HealthCheck.too_slow])
@given(rnd=st.randoms(use_true_random=False), n=st.integers(1, 40), query=st.sampled_from(sorted(QUERIES)),
       data=st.data())
def test_precombined_sessions_step_as_their_rows(ops, rnd, n, query, data):
    events = draw_events(rnd, n)
    cuts = sorted(set(data.draw(st.lists(st.integers(1, n), max_size=3))))
    trace_from = data.draw(st.one_of(st.none(), st.integers(1, n)))
    parts = data.draw(st.integers(1, 3))
    step_both(ops[query], events, cuts, trace_from, parts)


def test_a_run_bridges_nothing_the_rows_would_not(ops):
    # gap 4 minutes. Key a: 10:00 (step 1, the first batch); in the second batch 10:03:59 (step 2)
    # extends it (less than a gap after 10:00); 10:07:59 (step 3) is exactly a gap after it: it
    # closes [10:00, 10:07:59) at its own step and opens the next session, which 10:09 (step 4)
    # extends. Key b: 10:08 (step 3, the step's second row), a session of its own. The bound 10:20
    # (step 5) closes b's [10:08, 10:12) and a's [10:07:59, 10:13).
    a, b = ("a", 1, 1), ("b", 1, 10)
    t = lambda m, s=0: T0 + m * MIN + s * 1000         # noqa: E731
    events = [(1, [(t(0), a)], t(0)), (2, [(t(3, 59), a)], t(3, 59)), (3, [(t(7, 59), a), (t(8), b)], t(8)),
              (4, [(t(9), a)], t(9)), (5, [], t(20))]
    step_both(ops["end"], events, [1], None, 1)
    op, host = fresh(ops["end"]), BucketState()
    df, vals, tl = bucket_input(events)
    run = run_bucket(op, host, [(df, tl)], lambda i, j: vals[j], None, batched=False)
    # (window start, window end, k, COUNT(*))
    assert [(e.step, e.cand.row[:4]) for e in run.emitted] == [
        (3, (t(0), t(7, 59), "a", 2)), (5, (t(8), t(12), "b", 1)), (5, (t(7, 59), t(13), "a", 2))]
    # the least end of an open session: step 1 10:04 (a); 2: 10:07:59; 3: a reopened until
    # 10:11:59, b until 10:12; 4: a until 10:13, b's 10:12 the least; 5: none open
    assert [c[:2] for c in run.changes] == [(1, t(4)), (2, t(7, 59)), (3, t(11, 59)), (4, t(12)), (5, INF)]


def test_a_batch_without_rows_or_clocks_reports_nothing_new(ops):
    # a bucket's batches without rows: one with bounds only before any row, one in which the
    # clock does not move at all (its events were rows another producer still holds back: no
    # clock record, ``None`` here) while a session is open
    a = ("a", 1, 1)
    events = [(1, [], T0), (2, [(T0 + 2 * MIN, a)], T0 + 2 * MIN), (3, [], None), (4, [], None),
              (5, [(T0 + 3 * MIN, a)], T0 + 3 * MIN), (6, [], T0 + 9 * MIN)]
    step_both(ops["end"], events, [1, 2, 4], None, 1)


def test_sessions_with_approximate_keys_are_stepped_row_by_row():
    wb = streamsql.Workbench(engine="local", durable=False, trace=False)
    try:
        wb.execute("CREATE STREAM F (d DOUBLE, x INTEGER);")
        op = hosts(wb.query("""SELECT STREAM d, COUNT(*) AS n FROM F
                               GROUP BY SESSION(ROWTIME, INTERVAL '4' MINUTE), d"""))[0].op
    finally:
        wb.close()

    class Leaf:
        stream, chain = "F", []

    class Input:
        leaves = [Leaf()]

    class Stage:
        inputs = [Input()]
    assert not eligible(op.node, Stage)
