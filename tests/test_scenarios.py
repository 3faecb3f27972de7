"""Every scenario (the seeds' ones shipped in streamsql/scenarios and the project's own in tests/scenarios) replayed in-process on both runtimes,
with one event per micro-batch and all at once, one bucket and four: output and steps must match
the expected file. The command line itself is exercised in test_cli.py."""
from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from streamsql.engine.cli import read_events, replay

from conftest import ALL_SCENARIOS
from scenario_compare import load, mismatch

SCENARIOS = ALL_SCENARIOS


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


ROW = {"step": 2, "rowtime": "2006-10-10 10:00:00", "values": {"ORDERID": 1, "AMOUNT": 2.5}}
CALC = {"step": 1, "calc_error": {"rowtime": "2006-10-10 10:00:00", "name": "DIVISION_BY_ZERO", "sqlstate": "22012"}}


@pytest.mark.parametrize("got,agrees", [
    ([{"STEP": 2, "rowtime": "2006-10-10T10:00:00Z", "values": {"orderid": 1.0, "amount": 2.5 + 1e-12}}], True),
    ([{**ROW, "values": {"ORDERID": 1, "AMOUNT": 2.6}}], False),           # a value
    ([{**ROW, "step": 3}], False),                                         # a step
    ([{**ROW, "rowtime": "2006-10-10 10:00:01"}], False),                  # an instant
    ([{**ROW, "values": {"ORDERID": 1}}], False),                          # a key missing
    ([ROW, {"step": 2, "bound": "2006-10-10 10:01:00"}], True),            # bound lines not expected
    ([], False),
])
def test_replay_lines_compare_as_the_replay_format_says(got, agrees):
    from streamsql.engine.steps import lines_agree
    assert lines_agree(got, [ROW]) is agrees


def test_a_calc_error_line_may_say_more_but_not_less():
    from streamsql.engine.steps import lines_agree
    more = {"step": 1, "calc_error": {**CALC["calc_error"], "stream": "S", "message": "Query q1: ..."}}
    assert lines_agree([more], [CALC])
    assert not lines_agree([CALC], [more])
    assert not lines_agree([{"step": 1, "calc_error": {**CALC["calc_error"], "sqlstate": "22003"}}], [CALC])
