"""The batch path of OVER windows: ``WindowOp.on_rows`` over a whole micro-batch must
give the outputs (stamps, ties, values bit for bit) and leave the state (rows kept, frames,
running aggregates, partitions in order, expiry heap, wake-up) that calling ``on_row`` and
``on_clocks`` step by step gives, for any cut of the steps into batches (1, 7, all, random, and
batches mixed with row-by-row steps), so that a host may batch some steps and step others.

Row batches are random: NULLs, partitions (NULL keys too), tied rowtimes within and across
steps, several rows per step (released together by another producer's bound, so some arrive
already outside their window), bounds that expire rows without any row arriving, and values that
make float sums order-sensitive (1e16 beside 0.1). Expected values of the hand-written cases are
derived from the semantics, section 3.4.
"""
from __future__ import annotations

import decimal
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import streamsql
from streamsql.engine.operators import window_batch as wbatch
from streamsql.engine.operators.arrays import I64_MAX, GroupedSearch, range_min, segmented_accumulate
from test_aggregate_support import ts
from window_batch_support import assert_batch_path_equals_row_path, cuts_every, make_batch, norm, state, window_op

MIN, HOUR = 60_000, 3_600_000
T0 = ts("09:00")
DDL = "CREATE STREAM S (k VARCHAR(3), x INTEGER, d DOUBLE, m DECIMAL(8,2), b BIGINT)"

WINDOWS = [
    "PARTITION BY k RANGE INTERVAL '0' MINUTE PRECEDING",
    "PARTITION BY k RANGE INTERVAL '5' MINUTE PRECEDING",
    "PARTITION BY k RANGE INTERVAL '30' MINUTE PRECEDING",
    "PARTITION BY k RANGE INTERVAL '1' HOUR PRECEDING",
    "RANGE INTERVAL '30' MINUTE PRECEDING",
    "PARTITION BY k RANGE CURRENT ROW",
    "PARTITION BY k ROWS 0 PRECEDING",
    "PARTITION BY k ROWS 1 PRECEDING",
    "ROWS 3 PRECEDING",
    "PARTITION BY k RANGE BETWEEN INTERVAL '30' MINUTE PRECEDING AND INTERVAL '10' MINUTE PRECEDING",
    "RANGE BETWEEN INTERVAL '5' MINUTE PRECEDING AND INTERVAL '5' MINUTE PRECEDING",
    "PARTITION BY k ROWS BETWEEN 3 PRECEDING AND 1 PRECEDING",
    "PARTITION BY k",
    "PARTITION BY k ROWS UNBOUNDED PRECEDING",
    "RANGE BETWEEN UNBOUNDED PRECEDING AND INTERVAL '10' MINUTE PRECEDING",
    "PARTITION BY k ROWS BETWEEN UNBOUNDED PRECEDING AND 2 PRECEDING",
    "PARTITION BY FLOOR(S.ROWTIME TO HOUR)",
    "PARTITION BY FLOOR(S.ROWTIME TO HOUR), k ROWS 2 PRECEDING",
    "PARTITION BY FLOOR(S.ROWTIME TO HOUR) RANGE INTERVAL '10' MINUTE PRECEDING",
    "ORDER BY FLOOR(S.ROWTIME TO HOUR) RANGE INTERVAL '1' HOUR PRECEDING",
    "PARTITION BY k ORDER BY FLOOR(S.ROWTIME TO MINUTE) RANGE INTERVAL '30' MINUTE PRECEDING",
    "PARTITION BY x RANGE INTERVAL '10' MINUTE PRECEDING",
    "PARTITION BY k, x ROWS 1 PRECEDING",
]
CALLS = ["COUNT(*)", "COUNT(x)", "SUM(x)", "AVG(x)", "MIN(x)", "MAX(x)", "FIRST_VALUE(x)", "LAST_VALUE(x)",
         "SUM(d)", "AVG(d)", "MIN(d)", "MAX(d)", "FIRST_VALUE(d)", "LAST_VALUE(d)", "COUNT(d)",
         "SUM(m)", "AVG(m)", "MIN(m)", "MAX(m)", "SUM(b)", "AVG(b)", "MAX(b)", "MIN(k)", "MAX(k)",
         "LAST_VALUE(k)", "SUM(x * 2)", "AVG(d * x)", "SUM(d + 0.5)"]

KEYS = st.sampled_from([None, "a", "b", "c"])
XS = st.one_of(st.none(), st.integers(-20, 20))
DS = st.one_of(st.none(), st.sampled_from([0.0, -0.0, 0.1, 0.2, 0.3, 2.5, 1e16, -1e16, 1e-3, 123.45]),
               st.integers(-10_000, 10_000).map(lambda i: i / 100))
MS = st.one_of(st.none(), st.integers(-99_999, 99_999).map(lambda i: decimal.Decimal(i).scaleb(-2)))
BS = st.one_of(st.none(), st.integers(-(1 << 40), 1 << 40))
ROWS = st.tuples(KEYS, XS, DS, MS, BS)
DELTAS = [0, 0, 0, 1, 1000, 30_000, MIN, 5 * MIN, 10 * MIN, 30 * MIN, 59 * MIN, HOUR, 61 * MIN, 2 * HOUR]


@st.composite
def batches(draw, rows=ROWS, n_max=40):
    """Steps of one input: a bound (the clock moves, no row), one row, or several rows released
    together (in rowtime order), the clock sometimes going well past them."""
    clock, steps = T0, []
    for _ in range(draw(st.integers(1, n_max))):
        kind = draw(st.sampled_from(["row"] * 6 + ["rows", "bound", "bound"]))
        if kind == "bound":
            clock += draw(st.sampled_from([0, 1, MIN, 5 * MIN, 30 * MIN, 61 * MIN, 3 * HOUR]))
            steps.append((clock, []))
            continue
        k = 1 if kind == "row" else draw(st.integers(2, 4))
        times = sorted(clock + draw(st.sampled_from(DELTAS)) for _ in range(k))
        new = times[-1]
        if kind == "rows" and draw(st.booleans()):
            new += draw(st.sampled_from([MIN, HOUR, 2 * HOUR]))
        steps.append((new, [(t, draw(rows)) for t in times]))
        clock = new
    return make_batch(steps)


@st.composite
def queries(draw):
    n = draw(st.integers(1, 3))
    items = [f"{draw(st.sampled_from(CALLS))} OVER ({draw(st.sampled_from(WINDOWS))}) AS r{i}" for i in range(n)]
    return f"SELECT STREAM k, {', '.join(items)} FROM S"


@pytest.fixture(scope="module")
def wb():
    w = streamsql.Workbench(engine="local", durable=False, trace=False)
    w.execute(DDL)
    yield w
    w.close()


def maker(wb, query):
    return lambda: window_op(wb, query)[0]


SETTINGS = settings(max_examples=100, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                           HealthCheck.data_too_large])


@SETTINGS
@given(batch=batches(), query=queries(), mode=st.sampled_from(["1", "7", "all", "random", "mixed"]), data=st.data())
def test_batch_path_equals_row_path(wb, batch, query, mode, data):
    n = len(batch.points)
    if mode in ("1", "7"):
        cuts = cuts_every(batch, int(mode))
    elif mode == "all":
        cuts = []
    else:
        cuts = data.draw(st.lists(st.integers(1, max(1, n - 1)), max_size=6))
    stepped = set(data.draw(st.lists(st.integers(0, 6), max_size=3))) if mode == "mixed" else set()
    # these rows and calls need no row-by-row step: every batch is vectorised
    assert_batch_path_equals_row_path(maker(wb, query), batch, cuts, stepped, vectorised=True)


def test_the_vectorised_path_runs(wb):
    # a sliding AVG over floats, several partitions, bounds: no step needs the row path
    batch = make_batch([(T0 + i * MIN, [(T0 + i * MIN, ("ab"[i % 2], i, i / 10, None, None))]) for i in range(50)]
                       + [(T0 + 3 * HOUR, [])])
    before = dict(wbatch.STATS)
    assert_batch_path_equals_row_path(
        maker(wb, "SELECT STREAM AVG(d) OVER (PARTITION BY k RANGE INTERVAL '10' MINUTE PRECEDING) AS a, "
                  "MIN(x) OVER (PARTITION BY k ROWS 3 PRECEDING) AS m FROM S"), batch, [20])
    assert wbatch.STATS["vectorised"] - before["vectorised"] == 50
    assert wbatch.STATS["stepped"] - before["stepped"] == 50     # the reference only


# --------------------------------------------------------------------------- what goes row by row

ODD_DS = st.one_of(DS, st.sampled_from([math.nan, math.inf, -math.inf, 1e308, -1e308]))
ODD_BS = st.one_of(BS, st.sampled_from([(1 << 63) - 1, -(1 << 63), (1 << 62) + 1, -(1 << 62)]))
ODD_ROWS = st.tuples(KEYS, XS, ODD_DS, MS, ODD_BS)
ODD_CALLS = ["SUM(d)", "AVG(d)", "MIN(d)", "MAX(d)", "SUM(b)", "AVG(b)", "COUNT(DISTINCT x)", "SUM(DISTINCT x)",
             "FIRST_VALUE(d)"]


@SETTINGS
@given(batch=batches(rows=ODD_ROWS), call=st.sampled_from(ODD_CALLS), window=st.sampled_from(WINDOWS),
       k=st.sampled_from([1, 7, 1000]))
def test_batches_the_vectorised_path_does_not_take_still_equal_the_row_path(wb, batch, call, window, k):
    # NaN and infinities, BIGINT sums that may leave 64 bits, DISTINCT: stepped row by row, in
    # the middle of batches that are otherwise vectorised
    query = f"SELECT STREAM k, {call} OVER ({window}) AS r, COUNT(*) OVER ({window}) AS n FROM S"
    assert_batch_path_equals_row_path(maker(wb, query), batch, cuts_every(batch, k))


def test_distinct_goes_row_by_row(wb):
    batch = make_batch([(T0 + i * MIN, [(T0 + i * MIN, ("a", i % 3, None, None, None))]) for i in range(10)])
    before = wbatch.STATS["vectorised"]
    assert_batch_path_equals_row_path(
        maker(wb, "SELECT STREAM COUNT(DISTINCT x) OVER (RANGE INTERVAL '5' MINUTE PRECEDING) AS c FROM S"), batch, [])
    assert wbatch.STATS["vectorised"] == before


# --------------------------------------------------------------------------- by hand (semantics 3.4)

def test_one_batch_follows_the_rules(wb):
    # SUM/COUNT/MIN over RANGE INTERVAL '1' HOUR PRECEDING per k, ROWS 1 PRECEDING, and an offset
    # window RANGE BETWEEN 30 and 10 MINUTE PRECEDING, all in one batch:
    #   step 1 09:00 a x=1                  1h: {1}           rows1: {1}    offset [08:30, 08:50]: {}
    #   step 2 09:10 a x=2, 09:10 a x=3     x=2: {1, 2}       {1, 2}        [08:40, 09:00]: {1}
    #          (one step, two producers)    x=3: {1, 2, 3}    {2, 3}        {1}   (peer 09:10 x=2 in, by arrival)
    #   step 3 09:10 b x=NULL               {} -> SUM NULL, COUNT 0 for b's non-null... COUNT(*) 1
    #   step 4 bound 10:05                  (a's 09:00 row leaves every a frame: a keeps 09:10 x2, x3)
    #   step 5 10:10 a x=4                  [09:10, 10:10]: {2, 3, 4}   {3, 4}   [09:40, 10:00]: {}
    q = """SELECT STREAM x,
             SUM(x) OVER h AS s, COUNT(*) OVER h AS c, MIN(x) OVER h AS mn,
             SUM(x) OVER (PARTITION BY k ROWS 1 PRECEDING) AS r1,
             SUM(x) OVER (PARTITION BY k RANGE BETWEEN INTERVAL '30' MINUTE PRECEDING AND INTERVAL '10' MINUTE PRECEDING) AS o
           FROM S WINDOW h AS (PARTITION BY k RANGE INTERVAL '1' HOUR PRECEDING)"""
    op, proj = window_op(wb, q)
    row = lambda k, x: (k, x, None, None, None)  # noqa: E731
    batch = make_batch([(ts("09:00"), [(ts("09:00"), row("a", 1))]),
                        (ts("09:10"), [(ts("09:10"), row("a", 2)), (ts("09:10"), row("a", 3))]),
                        (ts("09:10"), [(ts("09:10"), row("b", None))]),
                        (ts("10:05"), []),
                        (ts("10:10"), [(ts("10:10"), row("a", 4))])])
    out = [proj.apply(c.stamp, c.row)[1] for c in op.on_rows(batch)]
    assert out == [(1, 1, 1, 1, 1, None),
                   (2, 3, 2, 1, 3, 1),
                   (3, 6, 3, 1, 5, 1),
                   (None, None, 1, None, None, None),
                   (4, 9, 3, 2, 7, None)]
    # kept: a's rows from 09:10 (3), b's row until 10:10 (clock 10:10 > 09:10 + 1h); two
    # windows hold rows (the ROWS one keeps the last two of a, the last of b)
    by_window = [{part: len(r.o) for part, r in g.runs.items()} for g in op.groups]
    assert {("a",): 3, ("b",): 1} in by_window
    # the next expiry: b's and a's 09:10 rows leave the hour window once the clock passes 10:10
    assert op.wakeups() == (ts("10:10") + 1,)


def test_expiry_and_recreation_keep_the_row_paths_order(wb):
    # partition a expires at 10:00:00.001 on a bound, is created again by its next row, and is
    # then listed after b, as the row path lists it (a new entry)
    q = "SELECT STREAM SUM(x) OVER (PARTITION BY k RANGE INTERVAL '1' HOUR PRECEDING) AS s FROM S"
    row = lambda k, x: (k, x, None, None, None)  # noqa: E731
    batch = make_batch([(ts("09:00"), [(ts("09:00"), row("a", 1))]),
                        (ts("09:30"), [(ts("09:30"), row("b", 2))]),
                        (ts("10:01"), []),
                        (ts("10:02"), [(ts("10:02"), row("a", 3))])])
    for cuts in ([], [1], [2], [3], [1, 2, 3]):
        assert_batch_path_equals_row_path(maker(wb, q), batch, cuts)
    op = window_op(wb, q)[0]
    op.on_rows(batch)
    assert list(op.groups[0].runs) == [("b",), ("a",)]
    assert state(op)["state_size"] == 4


def test_values_without_candidates_equal_candidates(wb):
    q = "SELECT STREAM AVG(d) OVER (PARTITION BY k ROWS 2 PRECEDING) AS a, MAX(k) OVER (RANGE CURRENT ROW) AS m FROM S"
    batch = make_batch([(T0 + i * MIN, [(T0 + i * MIN, ("abc"[i % 3], i, i * 0.1, None, None))]) for i in range(30)])
    cands = window_op(wb, q)[0].on_rows(batch)
    idx, cols = window_op(wb, q)[0].on_rows_values(batch)
    assert idx.tolist() == list(range(30))
    assert [c.row[5:] for c in cands] == list(zip(*cols))


# --------------------------------------------------------------------------- array helpers

@settings(max_examples=200, deadline=None)
@given(a=st.lists(st.integers(-50, 50), min_size=1, max_size=300), data=st.data(),
       block=st.sampled_from([2, 4, 8, 32]))
def test_range_min_is_the_minimum_of_each_range(a, data, block):
    n = len(a)
    q = data.draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(-2, n - 1)), max_size=50))
    lo = np.array([x for x, _ in q], np.int64)
    hi = np.array([y for _, y in q], np.int64)
    got = range_min(np.array(a, np.int64), lo, hi, block=block)
    assert got.tolist() == [min(a[x:y + 1]) if x <= y else I64_MAX for x, y in q]


@settings(max_examples=200, deadline=None)
@given(v=st.lists(st.floats(-1e17, 1e17), min_size=1, max_size=600), data=st.data())
def test_segmented_accumulate_is_a_python_loop(v, data):
    starts = [True] + data.draw(st.lists(st.booleans(), min_size=len(v) - 1, max_size=len(v) - 1))
    want = []
    for x, s in zip(v, starts):
        want.append(x if s else want[-1] + x)
    got = segmented_accumulate(np.array(v), np.array(starts))
    assert [x.hex() for x in got.tolist()] == [x.hex() for x in want]


@settings(max_examples=200, deadline=None)
@given(groups=st.lists(st.lists(st.integers(-100, 100), max_size=8).map(sorted), min_size=1, max_size=6),
       data=st.data())
def test_grouped_search_searches_inside_each_group(groups, data):
    gid = np.array([g for g, vs in enumerate(groups) for _ in vs], np.int64)
    vals = np.array([v for vs in groups for v in vs], np.int64)
    start = np.cumsum([0] + [len(vs) for vs in groups])
    gs = GroupedSearch(gid, vals)
    g = data.draw(st.integers(0, len(groups) - 1))
    x = data.draw(st.integers(-200, 200))
    for side in ("left", "right"):
        got = int(gs.search(np.array([g]), np.array([x]), side)[0])
        assert got == start[g] + int(np.searchsorted(np.array(groups[g], np.int64), x, side))


# --------------------------------------------------------------------------- the Spark host

# calls that refuse rows (calculator errors: x = 0, b * 10**7 past BIGINT), beside plain ones
FAILING_CALLS = CALLS + ["SUM(100 / x)", "AVG(b * 10000000)", "MAX(10 / (x + 3))"]
FAILING_WINDOWS = WINDOWS + ["PARTITION BY 6 / x ROWS 1 PRECEDING"]


@st.composite
def host_queries(draw):
    n = draw(st.integers(1, 3))
    items = [f"{draw(st.sampled_from(FAILING_CALLS))} OVER ({draw(st.sampled_from(FAILING_WINDOWS))}) AS r{i}"
             for i in range(n)]
    return f"SELECT STREAM k, {', '.join(items)} FROM S"


def bucket_rows(batch):
    import pandas as pd
    return pd.DataFrame({"rel": batch.steps, "T": batch.rowtimes, "arrival": list(batch.arrivals)})


def run_record(r, shown):
    """What a bucket run gives its stage: emitted rows with their steps, frontier reports, the
    refused rows' records (with the stream each came from), the trace's part."""
    em = [(e.step, e.cand.stamp, e.cand.tie, tuple(norm(v) for v in e.cand.row)) for e in r.emitted]
    errs = [(e.step, e.name, e.sqlstate, e.data_rowtime, e.data_row, e.message, e.stream) for e in r.errors]
    tr = None if r.trace is None else (r.trace.start, r.trace.base, r.trace.views,
                                       [(b, s, c.stamp, c.tie, c.row) for b, s, c in r.trace.held])
    return em, r.changes, errs, tr, shown


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                 HealthCheck.too_slow, HealthCheck.data_too_large])
@given(batch=batches(), query=host_queries(), data=st.data())
def test_run_bucket_batches_the_steps_before_the_trace_window(wb, batch, query, data):
    # run_bucket over one or two micro-batches, with the trace window from a random step (or no
    # trace): the batch path for the steps before the window, the loop for the window's, against
    # the loop for every step. Same emitted rows at the same steps, frontier reports, refused
    # rows (each with its own row's stream), trace part, and operator state after each batch
    from streamsql.engine.runtime.spark.host import BucketState, run_bucket
    from streamsql.engine.runtime.spark.timeline import Timeline
    pts = batch.points
    split = data.draw(st.sampled_from([None, int(pts[len(pts) // 2])]))
    parts = [batch] if split is None else list(batch.cut(split))
    ref, sref = window_op(wb, query)[0], BucketState()
    op, sop = window_op(wb, query)[0], BucketState()
    initial = T0 - 1
    for part in parts:
        if not len(part.points):
            continue
        rows, values = bucket_rows(part), list(part.rows)
        tl = Timeline(part.points, part.clocks, initial)
        initial = int(part.clocks[-1])
        cut = data.draw(st.one_of(st.none(), st.integers(int(part.points[0]), int(part.points[-1]) + 1)))
        streams = lambda i, j, rows=rows: f"S{int(rows['rel'][j]) % 3}"   # noqa: E731
        before = dict(wbatch.STATS)
        want = run_record(run_bucket(ref, sref, [(rows, tl)], lambda i, j: values[j], cut, streams,
                                     batched=False), None)
        assert wbatch.STATS["vectorised"] == before["vectorised"]
        got = run_record(run_bucket(op, sop, [(rows, tl)], lambda i, j: values[j], cut, streams,
                                    values=[values]), None)
        assert got == want
        assert state(op) == state(ref)
        assert sop.last == sref.last and sop.held == sref.held == []
        # the rows before the window went through the batch path (vectorised unless refused)
        before_cut = int(np.searchsorted(part.steps, cut if cut is not None else 2 ** 62))
        taken = wbatch.STATS["vectorised"] + wbatch.STATS["stepped"] - before["vectorised"] - before["stepped"]
        assert taken == before_cut                 # (the reference's loop steps rows itself, uncounted)
