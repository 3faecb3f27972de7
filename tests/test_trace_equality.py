"""The Spark runtime computes everything a query shows from its own stages: no local
copy of a Spark query exists, and Spark with ``trace=True``, Spark with ``trace=False`` and the
local runtime (the oracle) give the same released rows and steps, output bounds and error-stream
rows (all columns but ERROR_TIME); the trace records of Spark (one event per micro-batch, and
all events in one) equal the local runtime's at every step the history keeps: every operator's
clocks, present, frontier, output bound, held rows with what each waits for, and state.

Every scenario (streamsql/scenarios and tests/scenarios) is checked, and random event sequences
over a union (with a post-merge projection and WHERE), GROUP BYs (pre-combined in the log source
and in Spark, with a HAVING after it), an OVER window, a full outer window join, a GROUP BY over
a join, a streaming ORDER BY and a T-sort (with late rows). Spark work is one workbench per
configuration with every query running side by side.
"""
from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

import streamsql
from streamsql.engine.catalog import ERROR_STREAM
from streamsql.engine.cli import read_events
from streamsql.engine.log import entry_schema
from streamsql.engine.runtime.local import stepper as local_query
from conftest import ALL_SCENARIOS
from test_aggregate_support import MINUTE, event_strategy, flush, start_queries, ts

SCENARIOS = ALL_SCENARIOS


# --------------------------------------------------------------------------- what is compared

def error_rows(wb) -> list[tuple]:
    """The error stream's rows, all columns but ERROR_TIME, in a canonical order (the Spark
    runtime appends an operator's errors after the event's commit; several queries' in any order)."""
    d = wb.catalog.streams[ERROR_STREAM]
    t = wb.log.read(d.uid, entry_schema(d.fields), 0, wb.last_step).to_pylist()
    names = [f.name for f in d.fields]
    rows = [tuple(r[f"c{i}"] for i, n in enumerate(names) if n != "ERROR_TIME") for r in t]
    return sorted(rows, key=repr)


def outputs(q) -> tuple:
    return ([(r.step - q.start_step, r.rowtime, r.values) for r in q.rows],
            {s - q.start_step: b for s, b in q.bounds.items()},
            sorted([(e.step - q.start_step, e.name, e.data_rowtime, e.data_row) for e in q.errors]))


def assert_traces_equal(local, spark, what: str) -> None:
    a, b = list(local.trace), list(spark.trace)
    assert [t.step for t in b] == [t.step for t in a], f"{what}: traced steps differ"
    for x, y in zip(a, b):
        if x != y:
            for o1, o2 in zip(x.operators, y.operators):
                assert o1 == o2, f"{what}, step {x.step}: operator {o1.operator} differs:\n{o1}\n{o2}"
            assert x == y, f"{what}, step {x.step}"


# --------------------------------------------------------------------------- no shadow

def test_no_local_query_is_created_for_a_spark_query(spark, tmp_path, monkeypatch):
    made = []
    init = local_query.LocalQuery.__init__

    def counting(self, *a, **kw):
        made.append(self)
        init(self, *a, **kw)
    monkeypatch.setattr(local_query.LocalQuery, "__init__", counting)
    wb = streamsql.Workbench(tmp_path / "ws", engine="spark")
    try:
        wb.execute("CREATE STREAM R (ts TIMESTAMP, x INTEGER); CREATE STREAM S (k VARCHAR(3), x INTEGER)")
        tsort = wb.query("SELECT STREAM ts AS ROWTIME, x FROM R ORDER BY ts WITHIN INTERVAL '1' MINUTE")
        agg = wb.query("SELECT STREAM FLOOR(S.ROWTIME TO MINUTE) AS m, COUNT(*) AS n FROM S "
                       "GROUP BY FLOOR(S.ROWTIME TO MINUTE)")
        for m, t in ((2, 5), (3, 1), (4, 4)):          # the second reading is late for the T-sort (W 10:04)
            wb.insert("R", {"ts": ts(f"10:0{t}"), "x": m}, rowtime=ts(f"10:0{m}"))
            wb.insert("S", {"k": "a", "x": m}, rowtime=ts(f"10:0{m}"))
        tsort.wait()
        agg.wait()
        assert not wb.commits.in_process
        assert [e.step for e in tsort.errors] == [3] and len(error_rows(wb)) == 1
        assert [t.step for t in agg.trace] == [2, 4, 6] and agg.trace[-1].operators[-1].state.group_count == 1
        assert made == []
    finally:
        wb.close()


# --------------------------------------------------------------------------- scenarios

def run_scenario(tmp_path, base: Path, engine: str, **kw):
    wb = streamsql.Workbench(tmp_path / f"{engine}-{len(list(tmp_path.iterdir()))}", engine=engine, **kw)
    res = wb.execute(base.with_suffix(".sql").read_text())
    q = [r.query for r in res if r.query is not None][-1]
    wb.inject(read_events(str(base) + ".events.jsonl"))
    q.wait(timeout=600)
    return wb, q


@pytest.mark.parametrize("base", SCENARIOS, ids=[p.name for p in SCENARIOS])
def test_scenario_runtimes_and_traces_agree(spark, tmp_path, base):
    wbl, ql = run_scenario(tmp_path, base, "local")
    try:
        want, errors = outputs(ql), error_rows(wbl)
        assert ql.trace and len(ql.trace) == len({o for o in ql.trace.steps()})
        # one event per micro-batch over two buckets, traced (all at once without the trace:
        # test_scenarios.test_scenario_spark, against the expected lines)
        wbs, qs = run_scenario(tmp_path, base, "spark", batch_events=1, buckets=2)
        try:
            assert outputs(qs) == want
            assert error_rows(wbs) == errors
            assert_traces_equal(ql, qs, base.name)
        finally:
            wbs.close()
    finally:
        wbl.close()


# --------------------------------------------------------------------------- random events

DDL = """CREATE STREAM S (k VARCHAR(3), x INTEGER);
         CREATE STREAM T (k VARCHAR(3), x INTEGER);
         CREATE STREAM R (ts TIMESTAMP, x INTEGER);"""

QUERIES = {
    # a projection that is no fixed shift stays after the merge, with a WHERE after it
    "union_post": """SELECT STREAM * FROM (SELECT STREAM FLOOR(u.ROWTIME TO MINUTE) AS ROWTIME, k, x
                     FROM (SELECT STREAM ROWTIME, k, x FROM S UNION ALL SELECT STREAM ROWTIME, k, x FROM T) AS u) AS v
                     WHERE x > 0""",
    "group_by_scan": """SELECT STREAM STEP(S.ROWTIME BY INTERVAL '5' MINUTE) AS p, k, COUNT(*) AS n, SUM(x) AS s,
                               AVG(x) AS a, FIRST_VALUE(x) AS f, MAX(x) AS mx
                        FROM S GROUP BY STEP(S.ROWTIME BY INTERVAL '5' MINUTE), k""",
    "group_by_having": """SELECT STREAM FLOOR(S.ROWTIME TO MINUTE) AS m, k, COUNT(*) AS n, SUM(x) AS s FROM S
                          WHERE x <> 3 GROUP BY FLOOR(S.ROWTIME TO MINUTE), k HAVING COUNT(*) > 1""",
    "over": """SELECT STREAM k, x, SUM(x) OVER (PARTITION BY k RANGE INTERVAL '5' MINUTE PRECEDING) AS s,
                      COUNT(*) OVER (ROWS 2 PRECEDING) AS c FROM S""",
    "join": """SELECT STREAM ROWTIME, s.k, s.x, t.x AS tx
               FROM S OVER (RANGE INTERVAL '5' MINUTE PRECEDING) AS s
               FULL JOIN T OVER (RANGE INTERVAL '3' MINUTE FOLLOWING) AS t ON s.k = t.k""",
    "group_by_join": """SELECT STREAM STEP(j.ROWTIME BY INTERVAL '10' MINUTE) AS p, COUNT(*) AS n FROM (
                          SELECT STREAM ROWTIME, s.x, t.x AS tx FROM S OVER (RANGE INTERVAL '4' MINUTE PRECEDING) AS s
                          JOIN T AS t ON s.k = t.k) AS j
                        WHERE j.tx IS NOT NULL GROUP BY STEP(j.ROWTIME BY INTERVAL '10' MINUTE)""",
    "tsort": "SELECT STREAM ts AS ROWTIME, x FROM R ORDER BY ts, x DESC WITHIN INTERVAL '4' MINUTE",
    # window shapes (docs/semantics.md 3.7): held window rows, open windows and sessions in the trace
    "hop_rows": """SELECT STREAM k, x, window_end FROM TABLE(HOP(TABLE S, DESCRIPTOR(ROWTIME), INTERVAL '5' MINUTE,
                   INTERVAL '7' MINUTE))""",
    "session": """SELECT STREAM SESSION_END(ROWTIME, INTERVAL '4' MINUTE) AS e, k, COUNT(*) AS n, SUM(x) AS s
                  FROM S GROUP BY SESSION(ROWTIME, INTERVAL '4' MINUTE), k""",
}

KEYS = st.sampled_from([None, "a", "b", "b"])
VALS = st.one_of(st.none(), st.integers(0, 5))
TSS = st.integers(0, 40).map(lambda m: ts("09:40") + m * MINUTE)
EVENTS = event_strategy({"S": {"k": KEYS, "x": VALS}, "T": {"k": KEYS, "x": VALS}, "R": {"ts": TSS, "x": VALS}},
                        n_min=6, n_max=18, deltas=(-2, 0, 0, 1, 1, 2, 3, 6))


def local_queries(path, events, **kw) -> tuple:
    wb = streamsql.Workbench(path, engine="local", **kw)
    qs = start_queries(wb, DDL, QUERIES)
    wb.inject(events)
    return wb, qs


def spark_queries(path, events, **kw) -> tuple:
    """The queries on Spark one after the other (each reads the log from its start, as a query
    started before the events does), so that a shared machine runs one Spark query at a time."""
    from streamsql.engine.sql import analyze
    wb = streamsql.Workbench(path, engine="spark", **kw)
    wb.execute(DDL)
    wb.inject(events)
    qs = {}
    for name, sql in QUERIES.items():
        q = qs[name] = wb.lifecycle.start(analyze(sql, wb.catalog).query, name, start_step=0)
        q.wait(timeout=600)
        q.stop()
    return wb, qs


@settings(max_examples=2, deadline=None, database=None, phases=[Phase.explicit, Phase.generate],
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                 HealthCheck.data_too_large])
@given(events=EVENTS, batch_events=st.sampled_from([5, None]), buckets=st.sampled_from([1, 3]),
       trace_steps=st.sampled_from([4, 10_000]), trace=st.sampled_from([True, True, False]))
def test_random_events_runtimes_and_traces_agree(spark, tmp_path_factory, events, batch_events, buckets, trace_steps,
                                                 trace):
    events = events + flush(["S", "T", "R"])
    wbl, local = local_queries(tmp_path_factory.mktemp("local"), events, trace_steps=trace_steps)
    wbs, sp = spark_queries(tmp_path_factory.mktemp("spark"), events, trace_steps=trace_steps,
                            batch_events=batch_events, buckets=buckets, trace=trace)
    try:
        assert error_rows(wbs) == error_rows(wbl)
        for name in QUERIES:
            assert outputs(sp[name]) == outputs(local[name]), name
            if trace:
                assert_traces_equal(local[name], sp[name], name)
            else:
                assert len(sp[name].trace) == 0, name
    finally:
        wbl.close()
        wbs.close()
