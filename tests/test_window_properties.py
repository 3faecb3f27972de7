"""Properties of windowed aggregation (OVER, the semantics, section 3.4): for random event sequences over three
streams, every output row of an OVER query equals what a Spark *batch* query computes for that row
over the accepted rows: RANGE frames (with the peer rule: rows with the same rowtime that arrived
earlier are in) as an interval self-join, ROWS frames as Spark window functions; and released rows
never go backwards in stamp. The engine runs on the local runtime; the operator's batch path
(``WindowOp.on_rows``, one call per micro-batch) is held to the same Spark results with the rows cut into batches
of 1, 7 or all of them.
"""
from __future__ import annotations

import streamsql
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from streamsql.engine.operators.window_batch import STATS
from test_aggregate_support import (MINUTE, accepted_rows, assert_stamps_never_go_backwards, event_strategy,
                                          flush, multiset, spark_rows, start_queries)
from window_batch_support import cuts_every, make_batch, pieces, window_op

HOUR_MS = 3_600_000

DDL = """CREATE STREAM S (k VARCHAR(3), x INTEGER);
         CREATE STREAM T (k VARCHAR(3), x INTEGER);
         CREATE STREAM U (z INTEGER);"""

KEYS = st.sampled_from([None, "a", "b"])
XS = st.one_of(st.none(), st.integers(-20, 20))
EVENTS = event_strategy({"S": {"k": KEYS, "x": XS}, "T": {"k": KEYS, "x": XS}, "U": {"z": st.integers(0, 9)}},
                        deltas=(-3, 0, 0, 0, 1, 2, 5, 5, 10, 30))

QUERY = """
SELECT STREAM k, x,
       SUM(x) OVER w1 AS s1, COUNT(*) OVER w1 AS c1, MIN(x) OVER w1 AS m1, AVG(x) OVER w1 AS a1,
       FIRST_VALUE(x) OVER w1 AS f1, LAST_VALUE(x) OVER w1 AS l1,
       SUM(x) OVER w2 AS s2, COUNT(x) OVER w2 AS c2, MAX(x) OVER w2 AS m2,
       SUM(x) OVER w3 AS s3, COUNT(*) OVER w3 AS c3,
       SUM(x) OVER (PARTITION BY FLOOR(S.ROWTIME TO HOUR)) AS s4,
       SUM(x) OVER (ORDER BY FLOOR(S.ROWTIME TO HOUR) RANGE INTERVAL '1' HOUR PRECEDING) AS s5
FROM S
WINDOW w1 AS (PARTITION BY k RANGE INTERVAL '{A}' MINUTE PRECEDING),
       w2 AS (PARTITION BY k ROWS {n} PRECEDING),
       w3 AS (PARTITION BY k RANGE BETWEEN INTERVAL '{lo}' MINUTE PRECEDING AND INTERVAL '{hi}' MINUTE PRECEDING)"""

# the frame of each call as a relational condition on (a = the current row, b = a frame row)
REFERENCE = """
WITH base AS (SELECT i, t, k, x, t - pmod(t, {H}) AS h FROM s_rows),
w1 AS (SELECT a.i, sum(b.x) s1, count(b.i) c1, min(b.x) m1, sum(b.x) div count(b.x) a1,
              min_by(b.x, IF(b.x IS NULL, NULL, b.i)) f1, max_by(b.x, IF(b.x IS NULL, NULL, b.i)) l1
       FROM base a LEFT JOIN base b ON a.k <=> b.k AND b.t BETWEEN a.t - {A} AND a.t AND b.i <= a.i GROUP BY a.i),
w3 AS (SELECT a.i, sum(b.x) s3, count(b.i) c3
       FROM base a LEFT JOIN base b ON a.k <=> b.k AND b.t BETWEEN a.t - {lo} AND a.t - {hi} AND b.i <= a.i
       GROUP BY a.i),
w4 AS (SELECT a.i, sum(b.x) s4 FROM base a LEFT JOIN base b ON a.h = b.h AND b.i <= a.i GROUP BY a.i),
w5 AS (SELECT a.i, sum(b.x) s5 FROM base a LEFT JOIN base b ON b.h BETWEEN a.h - {H} AND a.h AND b.i <= a.i
       GROUP BY a.i)
SELECT base.t, base.k, base.x, s1, c1, m1, a1, f1, l1,
       sum(x) OVER (PARTITION BY k ORDER BY base.i ROWS BETWEEN {n} PRECEDING AND CURRENT ROW),
       count(x) OVER (PARTITION BY k ORDER BY base.i ROWS BETWEEN {n} PRECEDING AND CURRENT ROW),
       max(x) OVER (PARTITION BY k ORDER BY base.i ROWS BETWEEN {n} PRECEDING AND CURRENT ROW),
       s3, c3, s4, s5
FROM base JOIN w1 USING (i) JOIN w3 USING (i) JOIN w4 USING (i) JOIN w5 USING (i)"""

SCHEMA = "i long, src int, t long, k string, x int"


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                 HealthCheck.too_slow, HealthCheck.data_too_large])
@given(events=EVENTS, A=st.sampled_from([0, 5, 30, 60]), n=st.sampled_from([0, 1, 3]),
       offset=st.sampled_from([(10, 5), (30, 0), (5, 5), (60, 20)]))
def test_over_final_content_equals_spark_batch(spark, events, A, n, offset):
    lo, hi = offset
    wb = streamsql.Workbench(engine="local", durable=False, trace=False)
    try:
        q = start_queries(wb, DDL, {"w": QUERY.format(A=A, n=n, lo=lo, hi=hi)})["w"]
        outcomes = wb.inject(events)
        wb.inject(flush(["S", "T", "U"]))
        acc = accepted_rows(events, outcomes)
        spark_rows(spark, "s_rows", [(i, 0, t, v["k"], v["x"]) for i, t, v in acc.get("S", [])], SCHEMA)
        assert_stamps_never_go_backwards(q)
        # one output per accepted row, released at the row's own step
        assert len(q.rows) == len(acc.get("S", []))
        assert [o.step - q.start_step - 1 for o in q.rows] == [i for i, _t, _v in acc.get("S", [])]
        got = multiset([(o.rowtime,) + tuple(o.values) for o in q.rows])
        assert got == spark_reference(spark, A, n, lo, hi)
        event("rows" if got else "no rows")
    finally:
        wb.close()


def spark_reference(spark, A, n, lo, hi):
    ref = REFERENCE.format(H=HOUR_MS, A=A * MINUTE, n=n, lo=lo * MINUTE, hi=hi * MINUTE)
    return multiset([tuple(r) for r in spark.sql(ref).collect()])


def s_steps(events, outcomes):
    """The steps of S as its OVER operator sees them: (S's clock after the event, its row)."""
    steps = []
    for e, o in zip(events, outcomes):
        if e.stream.upper() != "S" or o.status not in ("ok", "eclipsed"):
            continue
        rows = [(e.rowtime, (e.values["k"], e.values["x"]))] if e.kind == "row" else []
        steps.append((o.bound_after, rows))
    return steps


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                 HealthCheck.too_slow, HealthCheck.data_too_large])
@given(events=EVENTS, A=st.sampled_from([0, 5, 30, 60]), n=st.sampled_from([0, 1, 3]),
       offset=st.sampled_from([(10, 5), (30, 0), (5, 5), (60, 20)]), size=st.sampled_from([1, 7, 1000]))
def test_over_batch_path_equals_spark_batch(spark, events, A, n, offset, size):
    lo, hi = offset
    wb = streamsql.Workbench(engine="local", durable=False, trace=False)
    try:
        wb.execute(DDL)
        outcomes = wb.inject(events)
        acc = accepted_rows(events, outcomes)
        spark_rows(spark, "s_rows", [(i, 0, t, v["k"], v["x"]) for i, t, v in acc.get("S", [])], SCHEMA)
        op, proj = window_op(wb, QUERY.format(A=A, n=n, lo=lo, hi=hi))
        batch = make_batch(s_steps(events, outcomes))
        before = STATS["vectorised"]
        got = []
        for piece in pieces(batch, cuts_every(batch, size)):
            got += [proj.apply(c.stamp, c.row) for c in op.on_rows(piece)]
        assert STATS["vectorised"] - before == len(batch)
        assert multiset([(rt,) + tuple(v) for rt, v in got]) == spark_reference(spark, A, n, lo, hi)
    finally:
        wb.close()
