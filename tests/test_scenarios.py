"""Every scenario (the shared ones and the project's own) replayed in-process on both runtimes,
with one event per micro-batch and all at once, one bucket and four: output and steps must match
the expected file. The command line itself is exercised in test_cli.py."""
from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from streamsql.engine.cli import read_events, replay

from scenario_compare import load, mismatch

HERE = Path(__file__).parent / "scenarios"
SCENARIOS = sorted({p.with_suffix("") for p in HERE.glob("**/*.sql")})


def run(base: Path, engine: str, batch=None, buckets=1) -> list[dict]:
    sql, events, expected = load(base)
    out = io.StringIO()
    replay(sql, read_events(events), engine=engine, bounds=any("bound" in e for e in expected),
           batch=batch, buckets=buckets, out=out)   # all at once: the parallel log reader
    return [json.loads(l) for l in out.getvalue().splitlines() if l.startswith("{")]


@pytest.mark.parametrize("base", SCENARIOS, ids=lambda p: p.name)
def test_scenario_local(base):
    got = run(base, "local")
    diff = mismatch(got, load(base)[2])
    assert diff is None, diff


# one event per micro-batch and several buckets: test_trace_equality (batch 1; 2 buckets, trace on
# and off, against the local runtime, which test_scenario_local holds to the expected lines) and
# test_cluster (batch 4, 4 buckets) replay every scenario that way
@pytest.mark.parametrize("batch,buckets", [(None, 1)], ids=["all-at-once,1-bucket"])
@pytest.mark.parametrize("base", SCENARIOS, ids=lambda p: p.name)
def test_scenario_spark(base, batch, buckets, spark):
    got = run(base, "spark", batch, buckets)
    diff = mismatch(got, load(base)[2])
    assert diff is None, diff
