"""The runtimes agree: the same random events give the same released rows, at the
same steps, and the same output-bound changes on the local runtime (the oracle, one event at a
time) and on Spark, whatever the micro-batch size (1, 7, all events) and the number of key buckets
(1, 4), for a filter, a UNION ALL, a GROUP BY, an OVER window and a window join. Released rows never go backwards in stamp on either runtime.

Each configuration gets its own random event sequence (a hypothesis-drawn seed salted by the
configuration), so six sequences are checked per run; Spark work is kept to one workbench per
configuration with all queries running side by side.
"""
from __future__ import annotations

import random

import pytest
import streamsql
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from test_aggregate_support import (assert_stamps_never_go_backwards, flush, random_events, released,
                                          start_queries)

DDL = """CREATE STREAM S (k VARCHAR(3), x INTEGER);
         CREATE STREAM T (k VARCHAR(3), x INTEGER);
         CREATE STREAM U (z INTEGER);"""

QUERIES = {
    "filter": "SELECT STREAM ROWTIME, k, x FROM S WHERE x > 0 OR k IS NULL",
    "union": "SELECT STREAM ROWTIME, k, x FROM S UNION ALL SELECT STREAM ROWTIME, k, x FROM T",
    # SUM/AVG of DOUBLE (summed exactly) over expressions: on Spark pre-combined by mapInArrow
    "group_by": """SELECT STREAM STEP(S.ROWTIME BY INTERVAL '10' MINUTE) AS p, k, COUNT(*) AS n,
                          SUM(CAST(x AS DOUBLE)) AS s, AVG(CAST(x AS DOUBLE)) AS a, MIN(x) AS mn,
                          LAST_VALUE(x) AS l
                   FROM S GROUP BY STEP(S.ROWTIME BY INTERVAL '10' MINUTE), k""",
    # exact aggregates behind a WHERE and a projection the log source evaluates over Arrow
    # columns: on Spark the log source filters and pre-combines them (straight over a stream:
    # test_float_sums.py and test_trace_equality.py)
    "group_by_scan": """SELECT STREAM STEP(ROWTIME BY INTERVAL '10' MINUTE) AS p, kk, COUNT(*) AS n, COUNT(x) AS cx,
                               SUM(x) AS s, AVG(x) AS a, MAX(x) AS mx, FIRST_VALUE(x) AS f, LAST_VALUE(b) AS lb
                        FROM (SELECT STREAM ROWTIME, x, k AS kk, x > 1 AS b FROM S
                              WHERE NOT (x < 0 AND k = 'b') AND (k IS NULL OR k IN ('a', 'b')))
                        WHERE b OR x IS NULL OR x = 1 OR kk IS NULL
                        GROUP BY STEP(ROWTIME BY INTERVAL '10' MINUTE), kk""",
    "over": """SELECT STREAM k, x, SUM(x) OVER (PARTITION BY k RANGE INTERVAL '5' MINUTE PRECEDING) AS s,
                      COUNT(*) OVER (ROWS 2 PRECEDING) AS c, MIN(x) OVER (PARTITION BY FLOOR(S.ROWTIME TO HOUR)) AS m
               FROM S""",
    "join": """SELECT STREAM ROWTIME, s.k, s.x, t.x AS tx
               FROM S OVER (RANGE INTERVAL '5' MINUTE PRECEDING) AS s
               FULL JOIN T OVER (RANGE INTERVAL '3' MINUTE FOLLOWING) AS t ON s.k = t.k""",
    # window shapes (docs/semantics.md 3.7): a hop whose size is no multiple of its slide, sessions per
    # key, a cumulating window's Top-N, and a window join
    "hop": """SELECT STREAM window_start, window_end, k, COUNT(*) AS n, SUM(x) AS s
              FROM TABLE(HOP(TABLE S, DESCRIPTOR(ROWTIME), INTERVAL '5' MINUTE, INTERVAL '12' MINUTE))
              GROUP BY window_start, window_end, k""",
    "session": """SELECT STREAM SESSION_START(ROWTIME, INTERVAL '4' MINUTE) AS st, k, COUNT(*) AS n, MAX(x) AS m
                  FROM S GROUP BY SESSION(ROWTIME, INTERVAL '4' MINUTE), k""",
    "topn": """SELECT STREAM * FROM (SELECT STREAM k, x, window_end, RANK() OVER (PARTITION BY window_start, window_end
                                     ORDER BY x DESC) AS r
               FROM TABLE(CUMULATE(TABLE S, DESCRIPTOR(ROWTIME), INTERVAL '5' MINUTE, INTERVAL '15' MINUTE)))
               WHERE r <= 2""",
    "window_join": """SELECT STREAM s.k, s.x, t.x AS tx
                      FROM TABLE(TUMBLE(TABLE S, DESCRIPTOR(ROWTIME), INTERVAL '10' MINUTE)) AS s
                      LEFT JOIN TABLE(TUMBLE(TABLE T, DESCRIPTOR(ROWTIME), INTERVAL '10' MINUTE)) AS t
                      ON s.window_start = t.window_start AND s.window_end = t.window_end AND s.k = t.k""",
}

STREAMS = {
    "S": {"k": lambda r: r.choice([None, "a", "b"]), "x": lambda r: r.choice([None, -2, 1, 3, 5])},
    "T": {"k": lambda r: r.choice([None, "a", "b"]), "x": lambda r: r.choice([None, 0, 2])},
    "U": {"z": lambda r: r.randint(0, 9)},
}

#: every batch size (one event, seven, the whole input) and bucket count (one, four) occurs; each
#: run draws a new seed (``scripts/fuzz.sh`` runs many more random cases, CI keeps to its budget)
CONFIGS = [(1, 4), (7, 1), (None, 4)]
#: the same with the parallel log reader, its ranges cut into partitions of 3 events (one
#: configuration in CI: seven events a batch over four buckets, several partitions per batch)
PARALLEL = [(7, 4)]


def outputs(wb, events) -> dict:
    qs = start_queries(wb, DDL, QUERIES)
    if wb.engine == "spark":   # the two GROUP BY paths are both exercised
        assert qs["group_by_scan"].handle.scan_combined and not qs["group_by"].handle.scan_combined
    wb.inject(events)
    out = {}
    for name, q in qs.items():
        q.wait(timeout=600)
        assert_stamps_never_go_backwards(q)
        out[name] = (released(q), {s - q.start_step: b for s, b in q.bounds.items()})
    return out


@pytest.mark.parametrize("batch_events,buckets,reader",
                         [(b, k, "simple") for b, k in CONFIGS] + [(b, k, "parallel") for b, k in PARALLEL],
                         ids=[f"batch{b}-buckets{k}" for b, k in CONFIGS] +
                             [f"parallel-batch{b}-buckets{k}" for b, k in PARALLEL])
@settings(max_examples=1, deadline=None, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(seed=st.integers(0, 2**31 - 1))
def test_local_and_spark_agree(spark, tmp_path_factory, batch_events, buckets, reader, seed):
    rng = random.Random(seed * 31 + (CONFIGS + PARALLEL).index((batch_events, buckets)))
    # random rows and bounds, then bounds that release everything still held
    events = random_events(rng, STREAMS, 8 if batch_events == 1 else 14, weights={"U": 0.2}) + flush(["S", "T"])
    local = streamsql.Workbench(tmp_path_factory.mktemp("local"), engine="local")
    try:
        want = outputs(local, events)
    finally:
        local.close()
    wb = streamsql.Workbench(tmp_path_factory.mktemp("spark"), engine="spark", batch_events=batch_events,
                             buckets=buckets, reader=reader, partition_events=3)
    try:
        got = outputs(wb, events)
    finally:
        wb.close()
    for name in QUERIES:
        assert got[name][0] == want[name][0], f"{name}: released rows differ"
        assert got[name][1] == want[name][1], f"{name}: output bound changes differ"
    # the sequence exercised the stateful operators: each released something
    assert all(want[n][0] for n in ("union", "group_by", "group_by_scan", "join", "hop", "session"))


# --------------------------------------------------------------------------- the operator contract

CONTRACT_QUERIES = {
    "group_by": QUERIES["group_by"],
    "group_by_as_rowtime": """SELECT STREAM FLOOR(S.ROWTIME TO HOUR) AS ROWTIME, k, COUNT(*) AS n FROM S
                              GROUP BY FLOOR(S.ROWTIME TO HOUR), k""",
    "group_by_two_keys": """SELECT STREAM COUNT(*) AS n FROM S
                            GROUP BY FLOOR(S.ROWTIME TO HOUR), STEP(S.ROWTIME BY INTERVAL '7' MINUTE)""",
    "distinct": "SELECT STREAM DISTINCT STEP(S.ROWTIME BY INTERVAL '10' MINUTE) AS p, k FROM S",
    "group_by_over_group_by": """SELECT STREAM p, SUM(c) AS n FROM (
            SELECT STREAM STEP(S.ROWTIME BY INTERVAL '10' MINUTE) AS p, k, COUNT(*) AS c FROM S
            GROUP BY STEP(S.ROWTIME BY INTERVAL '10' MINUTE), k) AS x GROUP BY p""",
    "over": QUERIES["over"],
    "over_offset_hopping": """SELECT STREAM x,
            SUM(x) OVER (PARTITION BY k RANGE BETWEEN INTERVAL '10' MINUTE PRECEDING AND INTERVAL '2' MINUTE PRECEDING) AS a,
            SUM(x) OVER (ORDER BY FLOOR(S.ROWTIME TO HOUR) RANGE INTERVAL '1' HOUR PRECEDING) AS b FROM S""",
    "inner": """SELECT STREAM ROWTIME, s.x, t.x AS tx FROM S OVER (RANGE INTERVAL '4' MINUTE PRECEDING) AS s
                JOIN T AS t ON s.k = t.k""",
    "left_following": """SELECT STREAM ROWTIME, s.x, t.x AS tx FROM S AS s
                         LEFT JOIN T OVER (RANGE INTERVAL '6' MINUTE FOLLOWING) AS t ON s.k = t.k""",
    "full_both": """SELECT STREAM ROWTIME, s.x, t.x AS tx
                    FROM S OVER (RANGE BETWEEN INTERVAL '2' MINUTE PRECEDING AND INTERVAL '3' MINUTE FOLLOWING) AS s
                    FULL JOIN T OVER (RANGE INTERVAL '5' MINUTE PRECEDING) AS t ON s.k = t.k AND s.x <= t.x""",
    "hop": QUERIES["hop"],
    "session_rows": """SELECT STREAM k, x FROM TABLE(SESSION(TABLE S PARTITION BY k, DESCRIPTOR(ROWTIME),
                       INTERVAL '4' MINUTE))""",
    "session_start": """SELECT STREAM SESSION_START(ROWTIME, INTERVAL '3' MINUTE) AS ROWTIME, COUNT(*) AS n FROM S
                        GROUP BY SESSION(ROWTIME, INTERVAL '3' MINUTE), k""",
    "cumulate_time": """SELECT STREAM window_time AS ROWTIME, SUM(x) AS s FROM TABLE(CUMULATE(TABLE S,
                        DESCRIPTOR(ROWTIME), INTERVAL '5' MINUTE, INTERVAL '20' MINUTE)) GROUP BY window_start, window_end, window_time""",
    "dedup_period": """SELECT STREAM * FROM (SELECT STREAM k, x, DENSE_RANK() OVER (PARTITION BY STEP(ROWTIME BY
                       INTERVAL '10' MINUTE), k ORDER BY x) AS r FROM S) WHERE r = 1""",
    "join_over_aggregate": """SELECT STREAM ROWTIME, s.x, h.n FROM S AS s
        RIGHT JOIN (SELECT STREAM STEP(S.ROWTIME BY INTERVAL '10' MINUTE) AS p, k, COUNT(*) AS n FROM S
                    GROUP BY STEP(S.ROWTIME BY INTERVAL '10' MINUTE), k) OVER (RANGE INTERVAL '10' MINUTE PRECEDING) AS h
        ON s.k = h.k""",
}


class _Recorder:
    """Stands in for a hosted operator: records every candidate it produces, with the step."""

    def __init__(self, op, log):
        self.op, self.log = op, log

    def __getattr__(self, name):
        return getattr(self.op, name)

    def on_row(self, ch, step, rowtime, row, clocks, arrival):
        out = self.op.on_row(ch, step, rowtime, row, clocks, arrival)
        self.log.extend((step, c.stamp) for c in out)
        return out

    def on_clocks(self, step, clocks):
        out = self.op.on_clocks(step, clocks)
        self.log.extend((step, c.stamp) for c in out)
        return out


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**31 - 1))
def test_operator_contract_wakeups_exact_and_bound_sound(seed):
    # What the Spark runtime relies on (operators/base.py), checked on the local runtime after
    # every event, for every stateful operator of the queries above:
    #   - wakeups() is exact: with every input clock just below its threshold, on_clocks produces
    #     nothing and leaves the state unchanged (a copy of the operator is stepped);
    #   - F (bound_params + bound_eval) is sound: no candidate produced later is stamped below it.
    import pickle

    from streamsql.engine import time as T
    from streamsql.engine.operators.base import INF
    from test_aggregate_support import hosts

    rng = random.Random(seed)
    events = random_events(rng, STREAMS, 30, weights={"U": 0.2}) + flush(["S", "T"])
    wb = streamsql.Workbench(engine="local", durable=False, trace=False)
    try:
        qs = start_queries(wb, DDL, CONTRACT_QUERIES)
        logs, nodes = {}, {}
        for name, q in qs.items():
            for i, h in enumerate(hosts(q)):
                log = logs[(name, i)] = []
                nodes[(name, i)] = h
                h.op = _Recorder(h.op, log)
        assert len(nodes) == 18
        bounds = {key: [] for key in logs}
        for ev in events:
            wb.inject([ev])
            step = wb.last_step
            for (name, i), h in nodes.items():
                op, clocks = h.op.op, list(h.clocks)
                bounds[(name, i)].append((step, op.future_bound(clocks)))
                copy = pickle.loads(pickle.dumps(op))
                before = pickle.dumps(copy.__getstate__())
                wake = copy.wakeups()
                below = []
                for c, w in zip(clocks, wake):
                    assert w > c, f"{name}: a wake-up threshold already reached after on_clocks"
                    below.append(c + T.DAY if w >= INF else w - 1)
                assert copy.on_clocks(step, below) == [], f"{name}: on_clocks below the thresholds produced rows"
                assert pickle.dumps(copy.__getstate__()) == before, f"{name}: on_clocks below the thresholds " \
                                                                    "changed the state"
        for key, log in logs.items():
            for step, f in bounds[key]:
                late = [stamp for s, stamp in log if s > step and stamp < f]
                assert not late, f"{key}: produced a row stamped below the bound {f} it gave after step {step}"
    finally:
        wb.close()
