"""Differential fuzz (issue 13, item 6): random queries from a small grammar (``fuzz_queries.py``)
over random event sequences give the same released rows, at the same steps, the same output-bound
changes and the same refused rows on the local runtime (the oracle) and on Spark with a random
micro-batch size and number of key buckets.

CI runs one fixed-seed round (``STREAMSQL_FUZZ_SEED``, ``STREAMSQL_FUZZ_ROUNDS``);
``./scripts/fuzz.sh N`` runs N rounds and prints what it ran and every disagreement, each with
the SQL, the configuration and the events to replay it."""
from __future__ import annotations

import json
import os
import random

import pytest
import streamsql
from streamsql.engine import time as T
from streamsql.engine.errors import StreamSqlError

from fuzz_queries import DDL, events, queries
from test_aggregate_support import released

SEED = int(os.environ.get("STREAMSQL_FUZZ_SEED", "1125"))
ROUNDS = int(os.environ.get("STREAMSQL_FUZZ_ROUNDS", "1"))
N_QUERIES = int(os.environ.get("STREAMSQL_FUZZ_QUERIES", "10"))
N_EVENTS = int(os.environ.get("STREAMSQL_FUZZ_EVENTS", "30"))


def _result(q) -> tuple:
    return (released(q), {s - q.start_step: b for s, b in q.bounds.items()},
            [(e.step - q.start_step, e.name, e.stream) for e in q.errors])


def run_local(evs, qs: dict) -> tuple[dict, dict]:
    """``(results, rejected)``: each accepted query's result; the analyzer's message for the others."""
    wb = streamsql.Workbench(None, engine="local", durable=False, trace=False)
    out, rejected = {}, {}
    try:
        wb.execute(DDL)
        started = {}
        for name, sql in qs.items():
            try:
                started[name] = wb.query(sql, name=name)
            except StreamSqlError as e:
                rejected[name] = str(e)
        wb.inject(evs)
        for name, q in started.items():
            out[name] = _result(q.wait(timeout=300))
    finally:
        wb.close()
    return out, rejected


def run_spark(tmp, evs, qs: dict, batch, buckets) -> dict:
    """The queries on Spark one after the other, each reading the log from step 0 (as a query
    started before the events does), so one Spark query runs at a time."""
    from streamsql.engine.sql import analyze
    wb = streamsql.Workbench(tmp, engine="spark", batch_events=batch, buckets=buckets, trace=False)
    out = {}
    try:
        wb.execute(DDL)
        wb.inject(evs)
        for name, sql in qs.items():
            q = wb.lifecycle.start(analyze(sql, wb.catalog).query, name, start_step=0)
            q.wait(timeout=600)
            out[name] = _result(q)
            q.stop()
    finally:
        wb.close()
    return out


def _event_json(e) -> dict:
    d = {"stream": e.stream, "kind": e.kind, "rowtime": T.format_timestamp(e.rowtime)}
    if e.values is not None:
        d["values"] = e.values
    if e.strict:
        d["strict"] = True
    if e.producer:
        d["producer"] = e.producer
    return d


def fuzz_round(tmp_path_factory, seed: int) -> dict:
    rng = random.Random(seed)
    qs = queries(rng, N_QUERIES)
    evs = events(rng, N_EVENTS)
    batch, buckets = rng.choice([1, 4, None]), rng.choice([1, 2, 4])
    want, rejected = run_local(evs, qs)
    accepted = {n: s for n, s in qs.items() if n not in rejected}
    got = run_spark(tmp_path_factory.mktemp(f"fuzz{seed}"), evs, accepted, batch, buckets)
    bad = []
    for name in accepted:
        for what, i in (("released rows", 0), ("output bound changes", 1), ("refused rows", 2)):
            if got[name][i] != want[name][i]:
                bad.append({"seed": seed, "query": qs[name], "batch": batch, "buckets": buckets, "differs": what,
                            "local": repr(want[name][i])[:2000], "spark": repr(got[name][i])[:2000],
                            "events": [_event_json(e) for e in evs]})
                break
    return {"seed": seed, "queries": len(qs), "rejected": rejected, "events": len(evs), "batch": batch,
            "buckets": buckets, "rows": sum(len(w[0]) for w in want.values()), "disagreements": bad}


@pytest.mark.timeout(1800)
def test_random_queries_agree_on_both_runtimes(spark, tmp_path_factory):
    report = [fuzz_round(tmp_path_factory, SEED + r) for r in range(ROUNDS)]
    for r in report:
        print(f"seed {r['seed']}: {r['queries']} queries ({len(r['rejected'])} rejected), {r['events']} events, "
              f"batch {r['batch']}, buckets {r['buckets']}: {r['rows']} rows released, "
              f"{len(r['disagreements'])} disagreements")
    # the grammar only makes queries the dialect accepts, and they do something
    assert not any(r["rejected"] for r in report), [r["rejected"] for r in report]
    assert all(r["rows"] > 0 for r in report)
    bad = [d for r in report for d in r["disagreements"]]
    assert not bad, json.dumps(bad[:3], indent=1, default=str)
