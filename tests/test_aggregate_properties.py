"""Properties of streaming GROUP BY and DISTINCT (the semantics, section 3.3): for random event sequences over three
streams (rows with NULL keys and values, repeated rowtimes, bounds, occasional late rows), the
final output of each query equals the relational result a Spark *batch* query computes over the
rows the catalog accepted, and released rows never go backwards in stamp.

The engine runs on the local runtime (the runtimes are compared in test_runtimes_agree.py); Spark
is the independent relational reference.
"""
from __future__ import annotations

import streamsql
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from test_aggregate_support import (accepted_rows, assert_stamps_never_go_backwards, event_strategy, flush,
                                          multiset, spark_rows, start_queries)

HOUR_MS, TEN_MIN_MS = 3_600_000, 600_000

DDL = """CREATE STREAM S (k VARCHAR(3), x INTEGER);
         CREATE STREAM T (k VARCHAR(3), x INTEGER);
         CREATE STREAM U (z INTEGER);"""

KEYS = st.sampled_from([None, "a", "b", "c"])
XS = st.one_of(st.none(), st.integers(-20, 20))
EVENTS = event_strategy({"S": {"k": KEYS, "x": XS}, "T": {"k": KEYS, "x": XS}, "U": {"z": st.integers(0, 9)}})

QUERIES = {
    # tumbling 10-minute windows over a merge of two streams
    "union_step": """
        SELECT STREAM STEP(u.ROWTIME BY INTERVAL '10' MINUTE) AS p, k, COUNT(*) AS n, COUNT(x) AS cx,
               SUM(x) AS s, AVG(x) AS a, MIN(x) AS mn, MAX(x) AS mx
        FROM (SELECT STREAM ROWTIME, k, x FROM S UNION ALL SELECT STREAM ROWTIME, k, x FROM T) AS u
        GROUP BY STEP(u.ROWTIME BY INTERVAL '10' MINUTE), k""",
    # hourly groups of S, order-dependent aggregates, integer division, HAVING
    "hourly": """
        SELECT STREAM FLOOR(S.ROWTIME TO HOUR) AS h, k, COUNT(*) AS n, SUM(x) AS s, FIRST_VALUE(x) AS f,
               LAST_VALUE(x) AS l, SUM(x) / COUNT(x) AS d
        FROM S GROUP BY FLOOR(S.ROWTIME TO HOUR), k HAVING COUNT(*) > 1""",
    # Calcite's explicit AS ROWTIME: stamped with the hour's start
    "hourly_as_rowtime": """
        SELECT STREAM FLOOR(S.ROWTIME TO HOUR) AS ROWTIME, k, MAX(x) AS mx, MIN(x) AS mn
        FROM S GROUP BY FLOOR(S.ROWTIME TO HOUR), k""",
    "distinct": "SELECT STREAM DISTINCT FLOOR(S.ROWTIME TO HOUR) AS h, k FROM S",
}

REFERENCE = {
    "union_step": f"""
        SELECT p + {TEN_MIN_MS} AS stamp, p, k, count(*), count(x), sum(x), sum(x) div count(x), min(x), max(x)
        FROM (SELECT *, t - pmod(t, {TEN_MIN_MS}) AS p FROM st_rows) GROUP BY p, k""",
    "hourly": f"""
        SELECT p + {HOUR_MS} AS stamp, p, k, count(*), sum(x), min_by(x, IF(x IS NULL, NULL, i)),
               max_by(x, IF(x IS NULL, NULL, i)), sum(x) div count(x)
        FROM (SELECT *, t - pmod(t, {HOUR_MS}) AS p FROM s_rows) GROUP BY p, k HAVING count(*) > 1""",
    "hourly_as_rowtime": f"""
        SELECT p AS stamp, k, max(x), min(x)
        FROM (SELECT *, t - pmod(t, {HOUR_MS}) AS p FROM s_rows) GROUP BY p, k""",
    "distinct": f"""
        SELECT min_by(t, i) AS stamp, p, k FROM (SELECT *, t - pmod(t, {HOUR_MS}) AS p FROM s_rows) GROUP BY p, k""",
}

SCHEMA = "i long, src int, t long, k string, x int"


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                 HealthCheck.too_slow, HealthCheck.data_too_large])
@given(events=EVENTS)
def test_group_by_final_content_equals_spark_batch(spark, events):
    wb = streamsql.Workbench(engine="local", durable=False, trace=False)
    try:
        qs = start_queries(wb, DDL, QUERIES)
        outcomes = wb.inject(events)
        wb.inject(flush(["S", "T", "U"]))
        acc = accepted_rows(events, outcomes)
        s_rows = [(i, 0, t, v["k"], v["x"]) for i, t, v in acc.get("S", [])]
        t_rows = [(i, 1, t, v["k"], v["x"]) for i, t, v in acc.get("T", [])]
        spark_rows(spark, "s_rows", s_rows, SCHEMA)
        spark_rows(spark, "st_rows", s_rows + t_rows, SCHEMA)
        for name, q in qs.items():
            assert_stamps_never_go_backwards(q)
            got = multiset([(o.rowtime,) + tuple(o.values) for o in q.rows])
            want = multiset([tuple(r) for r in spark.sql(REFERENCE[name]).collect()])
            assert got == want, name
            event(f"{name}: {'no rows' if not got else 'rows'}")
        event(f"late rows: {sum(o.status == 'late' for o in outcomes) > 0}")
    finally:
        wb.close()
