"""Properties of window joins (the semantics, section 3.5): for random event sequences over three streams (NULL keys,
repeated rowtimes, bounds, occasional late rows) and random windows on either side, the final
output of an INNER, LEFT, RIGHT and FULL join equals a Spark *batch* join of all accepted rows with
the equivalent interval condition (stamps included: a pair is stamped max(r_L - f_L, r_R - f_R), an
unmatched row r + p); released rows never go backwards in stamp; and the state is empty once
both clocks have passed every window. The engine runs on the local runtime.
"""
from __future__ import annotations

import streamsql
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from streamsql.engine.operators.join import JoinOp
from test_aggregate_support import (MINUTE, accepted_rows, assert_stamps_never_go_backwards, event_strategy,
                                          flush, hosts, multiset, spark_rows, start_queries)

DDL = """CREATE STREAM L (k INTEGER, a INTEGER);
         CREATE STREAM R (k INTEGER, b INTEGER);
         CREATE STREAM M (z INTEGER);"""

KEYS = st.sampled_from([None, 1, 1, 1, 2])
VALS = st.one_of(st.none(), st.integers(0, 5))
EVENTS = event_strategy({"L": {"k": KEYS, "a": VALS}, "R": {"k": KEYS, "b": VALS}, "M": {"z": st.integers(0, 9)}},
                        deltas=(-3, 0, 0, 1, 2, 3, 5, 8))
WINDOWS = st.sampled_from([(0, 0), (5, 0), (0, 5), (20, 0), (0, 20), (5, 5), (3, 8), (15, 15)])
RESIDUALS = st.sampled_from([None, None, "l.a <= r.b", "l.a <> r.b OR r.b IS NULL"])
KINDS = ("JOIN", "LEFT JOIN", "RIGHT JOIN", "FULL OUTER JOIN")
SPARK_KINDS = {"JOIN": "INNER JOIN", "LEFT JOIN": "LEFT OUTER JOIN", "RIGHT JOIN": "RIGHT OUTER JOIN",
               "FULL OUTER JOIN": "FULL OUTER JOIN"}


def over(p: int, f: int, force: bool = False) -> str:
    if p and f:
        return f"OVER (RANGE BETWEEN INTERVAL '{p}' MINUTE PRECEDING AND INTERVAL '{f}' MINUTE FOLLOWING)"
    if p:
        return f"OVER (RANGE INTERVAL '{p}' MINUTE PRECEDING)"
    if f:
        return f"OVER (RANGE INTERVAL '{f}' MINUTE FOLLOWING)"
    return "OVER (RANGE CURRENT ROW)" if force else ""


def query(kind, lw, rw, residual) -> str:
    on = "l.k = r.k" + (f" AND ({residual})" if residual else "")
    return (f"SELECT STREAM ROWTIME, l.k, l.a, r.k AS rk, r.b FROM L {over(*lw, force=rw == (0, 0))} AS l "
            f"{kind} R {over(*rw)} AS r ON {on}")


def reference(kind, lw, rw, residual) -> str:
    (pl, fl), (pr, fr) = [(p * MINUTE, f * MINUTE) for p, f in (lw, rw)]
    cond = f"l.k = r.k AND l.t - {fl} <= r.t + {pr} AND r.t - {fr} <= l.t + {pl}"
    if residual:
        cond += f" AND ({residual})"
    return f"""
        SELECT CASE WHEN l.i IS NOT NULL AND r.i IS NOT NULL THEN greatest(l.t - {fl}, r.t - {fr})
                    WHEN r.i IS NULL THEN l.t + {pl} ELSE r.t + {pr} END AS stamp, l.k, l.a, r.k, r.b
        FROM l_rows l {SPARK_KINDS[kind]} r_rows r ON {cond}"""


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                 HealthCheck.too_slow, HealthCheck.data_too_large])
@given(events=EVENTS, lw=WINDOWS, rw=WINDOWS, residual=RESIDUALS)
def test_join_final_content_equals_spark_batch_interval_join(spark, events, lw, rw, residual):
    wb = streamsql.Workbench(engine="local", durable=False, trace=False)
    try:
        qs = start_queries(wb, DDL, {k: query(k, lw, rw, residual) for k in KINDS})
        outcomes = wb.inject(events)
        wb.inject(flush(["L", "R", "M"]))
        acc = accepted_rows(events, outcomes)
        spark_rows(spark, "l_rows", [(i, t, v["k"], v["a"]) for i, t, v in acc.get("L", [])],
                   "i long, t long, k int, a int")
        spark_rows(spark, "r_rows", [(i, t, v["k"], v["b"]) for i, t, v in acc.get("R", [])],
                   "i long, t long, k int, b int")
        for kind, q in qs.items():
            assert_stamps_never_go_backwards(q)
            got = multiset([(o.rowtime,) + tuple(o.values) for o in q.rows])
            want = multiset([tuple(r) for r in spark.sql(reference(kind, lw, rw, residual)).collect()])
            assert got == want, kind
            # both clocks are past every window: nothing can match or be released any more
            assert [h.op.state_size() for h in hosts(q) if isinstance(h.op, JoinOp)] == [0]
            event(f"{kind}: {'rows' if got else 'no rows'}")
    finally:
        wb.close()


AGG_QUERY = """
SELECT STREAM ROWTIME, l.k, l.a, h.p, h.n FROM L AS l
{kind} (SELECT STREAM STEP(L.ROWTIME BY INTERVAL '10' MINUTE) AS p, k, COUNT(*) AS n FROM L
       GROUP BY STEP(L.ROWTIME BY INTERVAL '10' MINUTE), k) OVER (RANGE INTERVAL '10' MINUTE PRECEDING) AS h
ON l.k = h.k"""

# the aggregate's rows are stamped with the end of their 10 minutes (p + 10 min); h's window is
# 10 minutes PRECEDING, L's the current row: a pair matches when h.t <= l.t <= h.t + 10 min
AGG_REFERENCE = """
WITH h AS (SELECT p + 600000 AS t, p, k, count(*) AS n FROM (SELECT *, t - pmod(t, 600000) AS p FROM l_rows)
           GROUP BY p, k)
SELECT CASE WHEN h.t IS NULL THEN l.t ELSE greatest(l.t, h.t) END, l.k, l.a, h.p, h.n
FROM l_rows l {kind} h ON l.k = h.k AND h.t <= l.t AND l.t <= h.t + 600000"""


L_EVENTS = event_strategy({"L": {"k": st.sampled_from([None, 1, 1, 2]), "a": VALS}, "M": {"z": st.integers(0, 9)}},
                          deltas=(-3, 0, 1, 2, 3, 4, 6, 12), n_min=6)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                 HealthCheck.too_slow, HealthCheck.data_too_large])
@given(events=L_EVENTS)
def test_join_of_a_stream_with_its_own_aggregate_equals_spark_batch(spark, events):
    # Composition: the aggregate of L releases its rows in the same events as L's rows arrive, so
    # the join sees rows of both inputs in one event (the case where a row below the other input's
    # clock must still meet the rows of that same event).
    wb = streamsql.Workbench(engine="local", durable=False, trace=False)
    try:
        qs = start_queries(wb, DDL, {k: AGG_QUERY.format(kind=k) for k in ("JOIN", "LEFT JOIN")})
        outcomes = wb.inject(events)
        wb.inject(flush(["L", "R", "M"]))
        acc = accepted_rows(events, outcomes)
        spark_rows(spark, "l_rows", [(i, t, v["k"], v["a"]) for i, t, v in acc.get("L", [])],
                   "i long, t long, k int, a int")
        for kind, q in qs.items():
            assert_stamps_never_go_backwards(q)
            got = multiset([(o.rowtime,) + tuple(o.values) for o in q.rows])
            want = multiset([tuple(r) for r in spark.sql(AGG_REFERENCE.format(kind=SPARK_KINDS[kind])).collect()])
            assert got == want, kind
            event(f"{kind}: {'rows' if got else 'no rows'}")
    finally:
        wb.close()
