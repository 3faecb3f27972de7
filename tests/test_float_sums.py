"""Float SUM/AVG in a GROUP BY are exact (performance issue, item 3): a sum of doubles is the
correctly rounded exact sum (math.fsum's value), whatever the order of the rows and however they
were grouped into batches, so the Spark runtime pre-combines them too.

- the accumulator (operators/exactsum.py, ``Acc``): order-independence, subnormals, -0.0,
  infinities and NaN, refusal exactly at the row whose exact sum rounds to an infinity, AVG
  never refusing (the mean of doubles is in range);
- the pre-combiner (precombine.py) against the row path in-process, for many random batchings:
  identical group states, refusals and outputs; big values stepped as rows; the stop where a
  partial could take a group out of range;
- on Spark (one short run per configuration): a float SUM/AVG GROUP BY, straight over a stream
  (pre-combined in the log source) and with a WHERE before it (``mapInArrow``), gives the local
  runtime's rows, steps, bounds and errors with batch sizes 1, 7 and all and 1 and 4 buckets,
  its final content is the exact sums of the accepted rows, and Spark's own (naive) batch
  ``sum``/``avg`` agree up to its rounding.
"""
from __future__ import annotations

import itertools
import math
import random
import sys
from fractions import Fraction

import numpy as np
import pyarrow as pa
import pytest
import streamsql
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from streamsql.engine.functions import CalcError
from streamsql.engine.operators.aggregate import Acc
from streamsql.engine.runtime.spark.precombine import PrecombineReach, check_reach
from streamsql.engine.operators.base import encode_ints
from streamsql.engine.expr import Col
from streamsql.engine.plan import AggCall
from streamsql.engine.types import DOUBLE

from streamsql.engine.catalog import Event
from test_aggregate_support import (accepted_rows, flush, hosts, random_events, released, spark_rows,
                                    start_queries, ts)

MAX = sys.float_info.max


def _acc(fn: str, distinct: bool = False) -> Acc:
    return Acc(AggCall(fn, Col(0, "x", DOUBLE), DOUBLE, distinct))


def _sum(values, fn="SUM"):
    acc = _acc(fn)
    s = acc.init()
    for v in values:
        s = acc.add(s, v, b"")
    return acc.final(s)


def _exact(values) -> Fraction:
    return sum((Fraction(v) for v in values), Fraction(0))


# --------------------------------------------------------------------------- the accumulator

def test_sum_is_exact_in_any_order_and_any_split():
    vals = [1e16, 1.0, -1e16, 1.0]
    acc = _acc("SUM")
    for perm in itertools.permutations(vals):
        assert _sum(perm) == 2.0
        for cut in range(5):            # two partials, merged either way round
            a = b = acc.init()
            for v in perm[:cut]:
                a = acc.add(a, v, b"")
            for v in perm[cut:]:
                b = acc.add(b, v, b"")
            assert acc.final(acc.merge(a, b)) == acc.final(acc.merge(b, a)) == 2.0
    assert sum([1e16, 1.0, -1e16, 1.0]) != 2.0          # the naive running sum is not


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(allow_nan=False, allow_infinity=False, min_value=-1e300, max_value=1e300)
                | st.sampled_from([5e-324, -5e-324, 2.2250738585072014e-308, 1e16, -1e16, 0.1, -0.0]),
                min_size=1, max_size=30), st.randoms(use_true_random=False))
def test_sum_and_avg_are_the_exact_values_rounded_once(values, rnd):
    assert _sum(values) == math.fsum(values) or (_sum(values) == 0 == math.fsum(values))
    assert _sum(values, "AVG") == float(_exact(values) / len(values))
    # any batching: partials of random slices merged in random order
    for fn in ("SUM", "AVG"):
        acc = _acc(fn)
        cuts = sorted(rnd.sample(range(1, len(values) + 1), rnd.randint(0, len(values) - 1))) + [len(values)]
        parts, prev = [], 0
        for c in cuts:
            s = acc.init()
            for v in values[prev:c]:
                s = acc.add(s, v, b"")
            parts.append(s)
            prev = c
        rnd.shuffle(parts)
        s = parts[0]
        for p in parts[1:]:
            s = acc.merge(s, p)
        assert acc.final(s) == _sum(values, fn)


def test_subnormals_and_signed_zeros():
    assert _sum([5e-324] * 3) == 1.5e-323
    assert _sum([5e-324, -5e-324]) == 0.0
    assert _sum([2.2250738585072014e-308, -5e-324]) == 2.225073858507201e-308
    assert _sum([5e-324, 0.0], "AVG") == float(Fraction(5e-324) / 2) == 0.0      # ties to even
    assert _sum([1.5e-323, 0.0], "AVG") == 1e-323                               # 1.5 units: to even (2)
    assert math.copysign(1, _sum([-0.0, -0.0])) == -1          # IEEE: only -0 + -0 is -0
    assert math.copysign(1, _sum([-0.0, 0.0])) == 1
    assert math.copysign(1, _sum([-1.0, 1.0])) == 1
    assert math.copysign(1, _sum([-0.0], "AVG")) == -1


def test_infinities_and_nan_follow_ieee_and_are_never_refused():
    inf, nan = math.inf, math.nan
    assert _sum([inf, 1.0]) == inf and _sum([-inf, MAX, MAX]) == -inf
    assert math.isnan(_sum([inf, -inf])) and math.isnan(_sum([1.0, nan, 2.0]))
    assert _sum([inf, MAX, MAX, MAX]) == inf              # after an infinity no finite value is refused
    assert _sum([inf, 3.0], "AVG") == inf and math.isnan(_sum([-inf, inf], "AVG"))


def test_sum_refuses_exactly_the_row_whose_exact_sum_rounds_to_infinity():
    acc = _acc("SUM")
    s = acc.add(acc.init(), MAX, b"")
    s = acc.add(s, 2.0 ** 969, b"")          # just under half an ulp: still DBL_MAX, accepted
    assert acc.final(s) == MAX
    with pytest.raises(CalcError) as e:      # the exact sum now reaches the rounding boundary
        acc.add(s, 2.0 ** 969, b"")
    assert e.value.kind.name == "NUMERIC_OUT_OF_RANGE"
    assert acc.final(s) == MAX               # the refused row changed nothing
    s = acc.add(s, -MAX, b"")
    assert acc.final(s) == 2.0 ** 969


def test_avg_of_huge_doubles_is_their_mean_and_never_refused():
    assert _sum([1e308, 1e308], "AVG") == 1e308
    assert _sum([MAX, MAX, MAX, -MAX], "AVG") == MAX / 2


def test_distinct_float_sum_is_exact_and_refuses_only_on_overflow():
    acc = _acc("SUM", distinct=True)
    s = acc.init()
    for v in [1e16, 1.0, -1e16, 1.0, 2.0]:
        s = acc.add(s, v, b"")
    assert acc.final(s) == 3.0
    s = acc.add(acc.init(), 1e308, b"")
    with pytest.raises(CalcError):          # 1e308 + 9e307 rounds to an infinity
        acc.add(s, 9e307, b"")
    a = _acc("AVG", distinct=True)          # the mean is in range: never refused
    assert a.final(a.add(a.add(a.init(), 1e308, b""), 9e307, b"")) == float((Fraction(1e308) + Fraction(9e307)) / 2)


def test_states_survive_the_spark_state_codec():
    from streamsql.engine.runtime.spark.statecodec import dumps, loads
    acc = _acc("SUM")
    s = acc.init()
    for v in [MAX, 5e-324, -1e300, 0.1]:
        s = acc.add(s, v, b"")
    avg = _acc("AVG")
    a = avg.add(avg.add(avg.init(), 1e308, b""), 1e308, b"")
    back = loads(dumps([s, a]))
    assert back == [s, a] and acc.final(back[0]) == acc.final(s) and avg.final(back[1]) == 1e308


def test_a_running_sum_saved_before_exact_sums_is_read_as_it_is():
    acc = _acc("SUM")
    assert acc.final(acc.add(0.5, 0.25, b"")) == 0.75           # an old plain-float state
    avg = _acc("AVG")
    assert avg.final(avg.add([1.5, 1], 2.5, b"")) == 2.0


# --------------------------------------------------------------------------- the pre-combiner, in-process

DDL = "CREATE STREAM S (k VARCHAR(3), x DOUBLE, y INTEGER);"
GROUP_BY = """SELECT STREAM FLOOR(S.ROWTIME TO HOUR) AS h, k, COUNT(*) AS n, SUM(x) AS s, AVG(x) AS a,
                     MIN(x) AS mn, FIRST_VALUE(y) AS f, COUNT(x) AS cx
              FROM S GROUP BY FLOOR(S.ROWTIME TO HOUR), k"""
TRICKY = [1e16, -1e16, 1.0, 0.1, 0.2, 0.3, -0.0, 5e-324, 3.5, 1e300, -1e300, 1e308, -1e308, MAX, 2.0 ** 969, None]


def _operator(sql: str = GROUP_BY):
    wb = streamsql.Workbench(engine="local", durable=False, trace=False)
    try:
        wb.execute(DDL)
        return hosts(wb.query(sql))[0].op
    finally:
        wb.close()


def _fresh(op):
    from streamsql.engine.operators.aggregate import AggregateOp
    return AggregateOp(op.node)


def _row_path(op, rows):
    for step, sub, rt, vals in rows:
        op.on_row(0, step, rt, vals, None, encode_ints(step, sub))
    return op


def _combined(op, rows, size, solo_from):
    """``rows`` through the log source's combiner in batches of ``size``, then the operator."""
    from streamsql.engine.runtime.spark.precombine import Partial, PrecombinedAggregate, ScanCombiner, scan_spec
    from streamsql.engine.runtime.spark.wire import unpack
    comb = ScanCombiner(scan_spec(op.node, 1))
    host = PrecombinedAggregate(op)
    for i in range(0, len(rows), size):
        b = rows[i:i + size]
        step = np.array([r[0] for r in b], np.int64)
        vals = pa.table({"c0": pa.array([r[3][0] for r in b], pa.string()), "c1": pa.array([r[3][1] for r in b], pa.float64()),
                         "c2": pa.array([r[3][2] for r in b], pa.int32())})
        g = comb.combine(step, np.array([r[1] for r in b], np.int32), np.array([r[2] for r in b], np.int64), vals, solo_from)
        out = sorted(zip(g.column("step").to_pylist(), g.column("sub").to_pylist(), g.column("T").to_pylist(),
                         g.column("part").to_pylist()))
        for step, sub, t, part in out:
            host.on_row(0, step, t, Partial(*unpack(part)), None, encode_ints(step, sub))
    return op


def _draw_rows(rnd, n):
    rows, step, t = [], 0, 1_160_470_000_000
    for _ in range(n):
        step += rnd.choice([1, 1, 1, 0]) if rows else 1      # several rows in one event (sub > 0)
        t += rnd.choice([0, 0, 60_000, 1_200_000])
        sub = 0 if not rows or rows[-1][0] != step else rows[-1][1] + 1
        rows.append((step, sub, t, (rnd.choice(["a", "b", None]), rnd.choice(TRICKY), rnd.choice([None, 1, 2]))))
    return rows


def _view(op):
    return ({k: v for k, v in op.groups.items()}, [(e.step, e.message) for e in op.take_errors()],
            [(c.stamp, c.row) for c in op.on_clocks(10**9, [2**62])])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.randoms(use_true_random=False), st.integers(1, 40))
def test_precombined_batches_leave_the_row_paths_states_refusals_and_output(rnd, n):
    base = _operator()
    rows = _draw_rows(rnd, n)
    want = _view(_row_path(_fresh(base), rows))
    huge = any(abs(op_sum) >= 2.0 ** 1022 for op_sum in (v[3] for _s, v in want[2] if v[3] is not None))
    for size in (1, 7, len(rows)):
        solo = rnd.choice([10**9, rows[len(rows) // 2][0]])     # sometimes a trace window
        try:
            got = _view(_combined(_fresh(base), rows, size, solo))
        except PrecombineReach:
            # only where a group's sum came near DOUBLE's range (through big values, as rows)
            assert huge, (size, solo)
            continue
        assert got == want, (size, solo)


def test_big_values_travel_as_rows_and_split_their_groups_partial():
    from streamsql.engine.runtime.spark.precombine import Partial, ScanCombiner, scan_spec
    from streamsql.engine.runtime.spark.wire import unpack
    op = _operator()
    rows = [(1, 0, 1_160_470_000_000, ("a", 1.0, 1)), (2, 0, 1_160_470_000_001, ("a", MAX, 2)),
            (3, 0, 1_160_470_000_002, ("a", 2.0, 3)), (3, 1, 1_160_470_000_002, ("a", MAX, None))]
    comb = ScanCombiner(scan_spec(op.node, 1))
    vals = pa.table({"c0": ["a"] * 4, "c1": [r[3][1] for r in rows], "c2": pa.array([r[3][2] for r in rows], pa.int32())})
    g = comb.combine(np.array([1, 2, 3, 3]), np.array([0, 0, 0, 1], np.int32), np.array([r[2] for r in rows]), vals)
    parts = sorted(zip(g.column("step").to_pylist(), g.column("sub").to_pylist(),
                       [Partial(*unpack(p)) for p in g.column("part").to_pylist()]), key=lambda p: p[:2])
    assert [(s, b, p.row) for s, b, p in parts] == [(1, 0, None), (2, 0, ("a", MAX, 2)), (3, 0, None),
                                                    (3, 1, ("a", MAX, None))]
    op = _combined(_fresh(op), rows, 4, 10**9)
    errors = op.take_errors()
    assert [(e.step, e.name) for e in errors] == [(3, "NUMERIC_OUT_OF_RANGE")]
    (_end, _keys), states = next(iter(op.groups.items()))
    assert op.accs[1].final(states[1]) == MAX and states[0] == 3     # 1 + MAX + 2 rounds to MAX


def test_a_partial_that_could_take_a_huge_group_out_of_range_stops_the_query():
    acc = _acc("SUM")

    def merge(a, b, reach):           # as PrecombinedAggregate merges a partial into its group
        check_reach([acc], [a], [reach])
        return acc.merge(a, b)
    huge = acc.add(acc.init(), MAX, b"")
    small = acc.add(acc.init(), 1e300, b"")
    assert acc.final(merge(huge, acc.add(acc.init(), 1.0, b""), reach=1.0)) == MAX
    with pytest.raises(PrecombineReach) as e:
        merge(huge, small, reach=1e300)
    assert "STREAMSQL_PRECOMBINE=0" in str(e.value) and "SUM" in str(e.value)
    assert acc.final(merge(acc.add(acc.init(), 1e300, b""), small, reach=1e300)) == 2e300


def test_precombining_can_be_turned_off(monkeypatch):
    from streamsql.engine.runtime.spark import precombine
    monkeypatch.setenv("STREAMSQL_PRECOMBINE", "0")
    op = _operator()

    class Stage:
        class inputs_0:
            class leaf:
                stream = "S"
            leaves = [leaf]
        inputs = [inputs_0]
    assert not precombine.eligible(op.node, Stage)
    monkeypatch.delenv("STREAMSQL_PRECOMBINE")
    assert precombine.eligible(op.node, Stage)


# --------------------------------------------------------------------------- on Spark

SPARK_QUERIES = {
    # straight over the stream: the log source pre-combines
    "scan": """SELECT STREAM FLOOR(S.ROWTIME TO HOUR) AS h, k, COUNT(*) AS n, SUM(x) AS s, AVG(x) AS a
               FROM S GROUP BY FLOOR(S.ROWTIME TO HOUR), k""",
    # behind a WHERE the source evaluates over Arrow columns: the log source pre-combines too
    "scan_filtered": """SELECT STREAM STEP(S.ROWTIME BY INTERVAL '10' MINUTE) AS p, k, COUNT(*) AS n, SUM(x) AS s,
                               AVG(x) AS a, SUM(y) AS sy
                        FROM S WHERE y > 0 OR k = 'b' GROUP BY STEP(S.ROWTIME BY INTERVAL '10' MINUTE), k""",
    # behind a WHERE that could fail (y * 2 can leave INTEGER): mapInArrow pre-combines
    "filtered": """SELECT STREAM STEP(S.ROWTIME BY INTERVAL '10' MINUTE) AS p, k, COUNT(*) AS n, SUM(x) AS s,
                          AVG(x) AS a, SUM(y) AS sy
                   FROM S WHERE y * 2 > 0 OR k = 'b' GROUP BY STEP(S.ROWTIME BY INTERVAL '10' MINUTE), k""",
}
VALUES = [1e16, -1e16, 1.0, 0.1, 0.7, 2.5, -3.25, 1e-300, 5e-324, 1e308, -1e308, 1.7e308, None]
STREAMS = {"S": {"k": lambda r: r.choice(["a", "b", None]), "x": lambda r: r.choice(VALUES),
                 "y": lambda r: r.choice([None, -1, 1, 2])}}
CONFIGS = [(1, 4), (7, 1), (None, 4)]


def _outputs(wb, events):
    qs = start_queries(wb, DDL, SPARK_QUERIES)
    if wb.engine == "spark":
        assert qs["scan"].handle.scan_combined and qs["scan_filtered"].handle.scan_combined
        assert not qs["filtered"].handle.scan_combined
    outcomes = wb.inject(events)
    out = {}
    for name, q in qs.items():
        q.wait(timeout=600)
        out[name] = (released(q), {s - q.start_step: b for s, b in q.bounds.items()},
                     [(e.step - q.start_step, e.message) for e in q.errors])
    return out, outcomes


def _oracle(rows, key):
    """The exact SUM/AVG per group, refusing a row whose exact sum would round to an infinity;
    and the rows kept."""
    groups: dict = {}
    kept = []
    for t, v in rows:
        k = key(t, v)
        g = groups.setdefault(k, [0, [], Fraction(0)])
        if v["x"] is not None:
            s = g[2] + Fraction(v["x"])
            try:
                float(s)
            except OverflowError:
                continue
            g[2] = s
            g[1].append(v["x"])
        g[0] += 1
        kept.append((k[0], k[1], v["x"]))
    return {k: (n, float(s) if xs else None, float(s / len(xs)) if xs else None)
            for k, (n, xs, s) in groups.items()}, kept


@pytest.mark.parametrize("batch_events,buckets", CONFIGS, ids=[f"batch{b}-buckets{k}" for b, k in CONFIGS])
@settings(max_examples=1, deadline=None, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(seed=st.integers(0, 2**31 - 1))
def test_float_group_by_on_spark_equals_local_and_exact_sums(spark, tmp_path_factory, batch_events, buckets, seed):
    rng = random.Random(seed * 7 + CONFIGS.index((batch_events, buckets)))
    # a fixed start: big values stepped as rows, one refused (1.7e308 + 1e16 + 1.7e308 rounds to an
    # infinity), small values around them in the same group and event
    events = [Event("S", "row", ts("09:40"), {"k": "a", "x": 1.7e308, "y": 1}),
              Event("S", "row", ts("09:41"), {"k": "a", "x": 1e16, "y": 1}),
              Event("S", "row", ts("09:41"), {"k": "a", "x": 1.7e308, "y": 2}),
              Event("S", "row", ts("09:42"), {"k": "a", "x": 1.0, "y": 2})]
    events += random_events(rng, STREAMS, 20, deltas=(0, 0, 1, 3, 7, 20)) + flush(["S"])
    local = streamsql.Workbench(tmp_path_factory.mktemp("local"), engine="local")
    try:
        want, outcomes = _outputs(local, events)
    finally:
        local.close()
    wb = streamsql.Workbench(tmp_path_factory.mktemp("spark"), engine="spark", batch_events=batch_events,
                             buckets=buckets)
    try:
        got, _ = _outputs(wb, events)
    finally:
        wb.close()
    assert want["scan"][2] and want["filtered"][2] and want["scan_filtered"][2]   # the refused row
    assert want["scan_filtered"][0] == want["filtered"][0]
    for name in SPARK_QUERIES:
        assert got[name] == want[name], name
    # the final content: exact sums of the rows accepted (the oracle refuses as the semantics, section 1, says)
    acc = [(t, v) for _i, t, v in accepted_rows(events, outcomes).get("S", [])]
    hour = 3_600_000
    oracle, kept = _oracle(acc, lambda t, v: (t - t % hour, v["k"]))
    got_scan = {(r[2], r[3]): r[4:] for r in want["scan"][0]}
    assert got_scan == oracle
    assert len(want["scan"][2]) == len(acc) - len(kept)          # one error per refused row
    # Spark's own batch count/sum/avg of the rows kept: equal up to its naive rounding
    spark_rows(spark, "fs_rows", kept, "p long, k string, x double")
    ref = {(r[0], r[1]): (r[2], r[3], r[4]) for r in
           spark.sql("SELECT p, k, count(*), sum(x), avg(x) FROM fs_rows GROUP BY p, k").collect()}
    assert set(ref) == set(got_scan)
    mag: dict = {}
    for p, kk, x in kept:
        mag[(p, kk)] = mag.get((p, kk), 0.0) + (abs(x) if x is not None else 0.0)
    for k, (n, s, a) in got_scan.items():
        rn, rs, ra = ref[k]
        assert rn == n and (s is None) == (rs is None)
        if s is None or not abs(rs) < 1e300:
            continue        # Spark's running sum left the range on the way (or came near it)
        # a running sum of n values is off by at most (n - 1) units of 2**-53 of their magnitudes
        tol = n * 2.0 ** -52 * mag[k]
        assert abs(s - rs) <= tol and abs(a - ra) <= tol / n + abs(a) * 2.0 ** -52, k
