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


# all at once over two buckets, without the trace (as the command line runs); one event per
# micro-batch with the trace: test_trace_equality (against the local runtime, which
# test_scenario_local holds to the expected lines); batch 4 over 4 buckets: test_cluster
@pytest.mark.parametrize("batch,buckets", [(None, 2)], ids=["all-at-once,2-buckets"])
@pytest.mark.parametrize("base", SCENARIOS, ids=lambda p: p.name)
def test_scenario_spark(base, batch, buckets, spark):
    got = run(base, "spark", batch, buckets)
    diff = mismatch(got, load(base)[2])
    assert diff is None, diff
