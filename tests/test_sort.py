"""Streaming ORDER BY and T-sort (the semantics, section 3.6; operators/sort.py): ordering, NULL
placement, output stamps, late and NULL rows of a T-sort, and the operator contract the Spark
runtime relies on (pickling, vectorised bound). Expected values are derived by hand in comments.
The scenario files tests/scenarios/order_by_*.sql and tsort_*.sql run on both runtimes
through tests/test_scenarios.py; the Spark tests here cover the other batch/bucket settings."""
from __future__ import annotations

import json
import pickle

from pathlib import Path

import numpy as np
import pytest

from streamsql.engine import time as T
from streamsql.engine.catalog import ERROR_FIELDS
from streamsql.engine.operators.sort import MAX_PENDING_ERRORS, SortOp, TSortOp
from streamsql.engine.plan import Sort
from streamsql.engine.runtime.plans import make_operator
from streamsql.engine.sql import analyze
from streamsql.engine.workbench import Workbench

DAY = "2020-01-06 "


def ts(hms: str) -> int:
    return T.parse_timestamp(DAY + hms)


def fmt(ms: int) -> str:
    return T.format_timestamp(ms)[len(DAY):]


def find_sort(node):
    while not isinstance(node, Sort):
        node = node.inputs()[0]
    return node


def sort_op(wb, sql):
    op = make_operator(find_sort(analyze(sql, wb.catalog).query.root), wb.catalog.tables)
    assert isinstance(op, (SortOp, TSortOp))
    return op


def released(q) -> list[tuple]:
    """(step, rowtime, values...) of every released row, times as HH:MM:SS."""
    return [(r.step, fmt(r.rowtime)) + tuple(fmt(v) if isinstance(v, int) and v > 10 ** 11 else v for v in r.values)
            for r in q.rows]


@pytest.fixture
def trades(tmp_path):
    wb = Workbench(tmp_path / "ws", engine="local")
    wb.execute("CREATE STREAM Trades (ticker VARCHAR(5), price INTEGER)")
    yield wb
    wb.close()


def feed_trades(wb):
    # steps 1-5 (the 09:00 minute, then a row at 09:01:05 that completes it)
    for t, tk, p in [("09:00:10", "ORCL", 20), ("09:00:20", "IBM", None), ("09:00:30", "MSFT", 25),
                     ("09:00:40", "AAPL", 20), ("09:01:05", "ORCL", 30)]:
        wb.insert("Trades", {"ticker": tk, "price": p}, rowtime=DAY + t)


# --------------------------------------------------------------------------- ORDER BY

def test_default_nulls_last_for_asc(trades):
    # price ASC puts NULL last (SQL default); ties on price by ticker. The 09:00 minute is complete
    # at step 5: AAPL 20 (09:00:40), ORCL 20 (09:00:10), MSFT 25 (09:00:30), IBM NULL (09:00:20).
    # Stamps are the running maximum of the rowtimes in that order: 09:00:40 for all four.
    q = trades.query("SELECT STREAM ticker, price FROM Trades ORDER BY FLOOR(ROWTIME TO MINUTE), price, ticker")
    feed_trades(trades)
    assert released(q) == [(5, "09:00:40", "AAPL", 20), (5, "09:00:40", "ORCL", 20),
                           (5, "09:00:40", "MSFT", 25), (5, "09:00:40", "IBM", None)]


def test_default_nulls_first_for_desc(trades):
    # price DESC puts NULL first (SQL default): IBM NULL (09:00:20), MSFT 25 (09:00:30),
    # AAPL 20 (09:00:40), ORCL 20 (09:00:10); running maximum: 20, 30, 40, 40.
    q = trades.query("SELECT STREAM ticker, price FROM Trades ORDER BY FLOOR(ROWTIME TO MINUTE), price DESC, ticker")
    feed_trades(trades)
    assert released(q) == [(5, "09:00:20", "IBM", None), (5, "09:00:30", "MSFT", 25),
                           (5, "09:00:40", "AAPL", 20), (5, "09:00:40", "ORCL", 20)]


def test_explicit_nulls_first_and_desc_ticker(trades):
    # price ASC NULLS FIRST, then ticker DESC: IBM NULL, ORCL 20, AAPL 20, MSFT 25;
    # rowtimes 20, 10, 40, 30 -> stamps 20, 20, 40, 40.
    q = trades.query("SELECT STREAM ticker, price FROM Trades "
                     "ORDER BY FLOOR(ROWTIME TO MINUTE), price NULLS FIRST, ticker DESC")
    feed_trades(trades)
    assert released(q) == [(5, "09:00:20", "IBM", None), (5, "09:00:20", "ORCL", 20),
                           (5, "09:00:40", "AAPL", 20), (5, "09:00:40", "MSFT", 25)]


def test_strings_sort_by_code_point_and_equal_keys_keep_arrival(tmp_path):
    # 'B' (66) < 'a' (97) < 'é' (233); the two 'a' rows keep arrival order (x 2 before x 4).
    with Workbench(tmp_path / "ws", engine="local") as wb:
        wb.execute("CREATE STREAM S (s VARCHAR(5), x INTEGER)")
        q = wb.query("SELECT STREAM ROWTIME, s, x FROM S ORDER BY ROWTIME, s")
        for s, x in [("é", 1), ("a", 2), ("B", 3), ("a", 4)]:
            wb.insert("S", {"s": s, "x": x}, rowtime=DAY + "09:00:00")
        assert q.rows == []                 # equal rowtimes never complete ROWTIME's value
        wb.punctuate("S", DAY + "09:00:00", strict=True)     # step 5: the clock passes 09:00:00
        assert [(r.step, r.values) for r in q.rows] == [(5, ("B", 3)), (5, ("a", 2)), (5, ("a", 4)), (5, ("é", 1))]
        assert all(r.rowtime == ts("09:00:00") for r in q.rows)


def test_order_by_rowtime_alone_releases_rows_as_they_come(tmp_path):
    # No key after ROWTIME: nothing to reorder, every row leaves at its own step, and the output
    # bound is the input clock.
    with Workbench(tmp_path / "ws", engine="local") as wb:
        wb.execute("CREATE STREAM S (x INTEGER)")
        q = wb.query("SELECT STREAM x FROM S ORDER BY ROWTIME")
        wb.insert("S", {"x": 1}, rowtime=DAY + "09:00:00")
        wb.insert("S", {"x": 2}, rowtime=DAY + "09:00:00")
        wb.insert("S", {"x": 3}, rowtime=DAY + "09:05:00")
        assert [(r.step, fmt(r.rowtime), r.values) for r in q.rows] == [
            (1, "09:00:00", (1,)), (2, "09:00:00", (2,)), (3, "09:05:00", (3,))]
        assert q.output_bound == ts("09:05:00")


def test_group_completed_by_a_bound_and_output_bound(trades):
    # Rows at 09:00:10 and 09:00:40 in the 09:00 minute: the output bound is the earliest buffered
    # rowtime (09:00:10) until a bound at 09:01 completes the minute; then the clock (09:01).
    q = trades.query("SELECT STREAM ticker FROM Trades ORDER BY FLOOR(ROWTIME TO MINUTE), ticker")
    trades.insert("Trades", {"ticker": "ZZ", "price": 1}, rowtime=DAY + "09:00:10")
    trades.insert("Trades", {"ticker": "AA", "price": 2}, rowtime=DAY + "09:00:40")
    assert q.rows == [] and q.output_bound == ts("09:00:10")
    trades.punctuate("Trades", DAY + "09:01:00")
    assert released(q) == [(3, "09:00:40", "AA"), (3, "09:00:40", "ZZ")]
    assert q.output_bound == ts("09:01:00")


def test_leading_key_without_known_periods_completes_on_a_later_value(tmp_path):
    # m is FLOOR(ROWTIME TO MINUTE) of the input, under a projection that re-stamps rows by the
    # hour, so the sort cannot tell from its clock when a minute ends: a minute is complete when a
    # row of a later minute arrives (step 3), not on a bound (step 4 changes nothing).
    with Workbench(tmp_path / "ws", engine="local") as wb:
        wb.execute("CREATE STREAM S (x INTEGER)")
        q = wb.query("SELECT STREAM FLOOR(ROWTIME TO HOUR) AS ROWTIME, FLOOR(ROWTIME TO MINUTE) AS m, x "
                     "FROM S ORDER BY m, x DESC")
        wb.insert("S", {"x": 1}, rowtime=DAY + "09:00:10")
        wb.insert("S", {"x": 2}, rowtime=DAY + "09:00:20")
        wb.insert("S", {"x": 3}, rowtime=DAY + "09:01:00")
        wb.punctuate("S", DAY + "09:30:00")
        assert released(q) == [(3, "09:00:00", "09:00:00", 2), (3, "09:00:00", "09:00:00", 1)]


@pytest.mark.parametrize("sql,end_of_11", [
    # a GROUP BY stamps the 10:00 hour's rows 11:00 (the hour's end); h is 10:00 for rowtimes up to
    # 11:00 included, so that value is complete just after 11:00
    ("SELECT STREAM FLOOR(ROWTIME TO HOUR) AS h, ticker, SUM(price) AS s FROM Trades "
     "GROUP BY FLOOR(ROWTIME TO HOUR), ticker ORDER BY h, s DESC", "11:00:00.001"),
    # the same through HAVING
    ("SELECT STREAM FLOOR(ROWTIME TO HOUR) AS h, ticker FROM Trades GROUP BY FLOOR(ROWTIME TO HOUR), ticker "
     "HAVING COUNT(*) > 1 ORDER BY h, ticker DESC", "11:00:00.001"),
    # ORDER BY ROWTIME of a GROUP BY stamped AS ROWTIME: each stamp is its own value
    ("SELECT STREAM FLOOR(ROWTIME TO HOUR) AS ROWTIME, ticker, SUM(price) AS s FROM Trades "
     "GROUP BY FLOOR(ROWTIME TO HOUR), ticker ORDER BY ROWTIME, s DESC", "11:00:00.001"),
    # DISTINCT keeps the input's rowtime: the 11:00 hour ends at 12:00
    ("SELECT STREAM DISTINCT FLOOR(ROWTIME TO HOUR) AS h, ticker FROM Trades ORDER BY h, ticker DESC", "12:00:00"),
    # a sub-query's column
    ("SELECT STREAM h, price FROM (SELECT STREAM FLOOR(ROWTIME TO HOUR) AS h, price FROM Trades WHERE price > 1) "
     "ORDER BY h, price", "12:00:00"),
])
def test_leading_key_periods_through_the_plan(trades, sql, end_of_11):
    op = sort_op(trades, sql)
    assert op.time_key is not None
    assert fmt(op.time_key.period_end(ts("11:00:00"))) == end_of_11
    arr = op.time_key.period_end_array(np.array([ts("11:00:00"), T.NO_TIME], dtype=np.int64))
    assert [fmt(int(arr[0])), int(arr[1])] == [end_of_11, T.NO_TIME]


def test_sort_op_state_is_dropped_after_release(trades):
    op = sort_op(trades, "SELECT STREAM ticker FROM Trades ORDER BY FLOOR(ROWTIME TO MINUTE), ticker")
    assert op.on_row(0, 1, ts("09:00:10"), ("B", 1), [ts("09:00:10")], b"1") == []
    assert op.state_size() == 1 and op.wakeups() == (ts("09:01:00"),)
    assert op.on_clocks(2, [ts("09:00:59")]) == []            # below the wake-up: nothing
    out = op.on_clocks(3, [ts("09:01:00")])
    assert [(c.stamp, c.row) for c in out] == [(ts("09:00:10"), ("B", 1))]
    assert op.state_size() == 0 and op.wakeups() == (T.END_OF_TIME,)


# --------------------------------------------------------------------------- T-sort

@pytest.fixture
def readings(tmp_path):
    wb = Workbench(tmp_path / "ws", engine="local")
    wb.execute("CREATE STREAM Readings (ts TIMESTAMP, sensor VARCHAR(5), val INTEGER)")
    yield wb
    wb.close()


TSORT = "SELECT STREAM ts AS ROWTIME, sensor, val FROM Readings ORDER BY ts WITHIN INTERVAL '1' MINUTE"


def test_tsort_reorders_within_the_interval(readings):
    # W = highest ts - 1 min. Step 3 (ts 10:01:15) makes W 10:00:15 and releases 10:00:05, 10:00:10.
    q = readings.query(TSORT)
    for rt, t, s, v in [("10:00:30", "10:00:10", "A", 1), ("10:00:40", "10:00:05", "B", 2),
                        ("10:01:20", "10:01:15", "C", 3)]:
        readings.insert("Readings", {"ts": DAY + t, "sensor": s, "val": v}, rowtime=DAY + rt)
    assert released(q) == [(3, "10:00:05", "B", 2), (3, "10:00:10", "A", 1)]
    assert q.output_bound == ts("10:00:15")


def test_tsort_late_row_goes_to_the_side_channel(readings):
    # After ts 10:01:15 the bound is 10:00:15: ts 10:00:12 is late (below it), ts 10:00:15 is not.
    op = sort_op(readings, TSORT)
    assert [c.stamp for c in op.on_row(0, 1, ts("10:01:20"), (ts("10:01:15"), "C", 3), [ts("10:01:20")], b"1")] \
        == [ts("10:01:15")]
    assert op.future_bound([ts("10:01:20")]) == ts("10:00:15")
    assert op.on_row(0, 2, ts("10:01:30"), (ts("10:00:12"), "D", 4), [ts("10:01:30")], b"2") == []
    assert [c.stamp for c in op.on_row(0, 3, ts("10:01:31"), (ts("10:00:15"), "E", 5), [ts("10:01:31")], b"3")] \
        == [ts("10:00:15")]
    errs = op.take_errors()
    assert op.take_errors() == [] and op.late_count == 1
    (e,) = errs
    assert (e.step, e.name, e.bound, e.data_rowtime) == (2, "LATE_ROW", ts("10:00:15"), ts("10:00:12"))
    assert json.loads(e.data_row) == {"TS": DAY + "10:00:12", "SENSOR": "D", "VAL": 4}
    assert "10:00:12" in e.message and "10:00:15" in e.message
    row = e.error_values("READINGS", ts("10:00:15"))
    assert len(row) == len(ERROR_FIELDS)
    by = {f.name: v for f, v in zip(ERROR_FIELDS, row)}
    assert (by["ERROR_TIME"], by["ERROR_NAME"], by["DATA_ROWTIME"], by["STREAM_NAME"], by["STEP"]) == \
        (ts("10:00:15"), "LATE_ROW", ts("10:00:12"), "READINGS", 2)


def test_tsort_late_and_null_rows_never_reach_the_output(readings):
    # ts 10:00:12 is late once W is 10:00:15; a NULL ts is dropped; the rest still flows.
    q = readings.query(TSORT)
    for rt, t, s, v in [("10:01:20", "10:01:15", "A", 1), ("10:01:30", "10:00:12", "B", 2),
                        ("10:01:40", None, "C", 3), ("10:02:40", "10:02:30", "D", 4)]:
        readings.insert("Readings", {"ts": None if t is None else DAY + t, "sensor": s, "val": v}, rowtime=DAY + rt)
    assert released(q) == [(4, "10:01:15", "A", 1)]
    op = q.handle.root.child.op          # the local runtime: Project over the T-sort's host
    assert (op.late_count, op.null_count) == (1, 1)


def test_tsort_waits_for_the_input_clock_when_ts_is_ahead(readings):
    # Rule 1 of the release rule still holds: a row stamped ts is released only once the input
    # clock (the arrival rowtime) has reached ts too. ts 10:03 arrives at 10:00; at step 2 (ts
    # 10:05) W is 10:04, which passes 10:03, but the input clock is only 10:01.
    q = readings.query(TSORT)
    readings.insert("Readings", {"ts": DAY + "10:03:00", "sensor": "A", "val": 1}, rowtime=DAY + "10:00:00")
    readings.insert("Readings", {"ts": DAY + "10:05:00", "sensor": "B", "val": 2}, rowtime=DAY + "10:01:00")
    assert q.rows == []
    readings.punctuate("Readings", DAY + "10:03:00")          # step 3: the input clock reaches 10:03
    assert released(q) == [(3, "10:03:00", "A", 1)]


def test_tsort_errors_are_capped_when_nobody_drains_them(readings):
    op = sort_op(readings, TSORT)
    op.on_row(0, 1, ts("11:00:00"), (ts("11:00:00"), "A", 0), [ts("11:00:00")], b"")
    for i in range(MAX_PENDING_ERRORS + 5):
        op.on_row(0, 2 + i, ts("11:00:00"), (ts("10:00:00"), "A", i), [ts("11:00:00")], b"")
    assert op.late_count == MAX_PENDING_ERRORS + 5
    errs = op.take_errors()
    assert len(errs) == MAX_PENDING_ERRORS and errs[-1].step == MAX_PENDING_ERRORS + 6


# --------------------------------------------------------------------------- the operator contract

@pytest.mark.parametrize("sql", [
    "SELECT STREAM ticker, price FROM Trades ORDER BY FLOOR(ROWTIME TO MINUTE), price DESC",
    "SELECT STREAM ts AS ROWTIME, sensor, val FROM Readings ORDER BY ts, val DESC WITHIN INTERVAL '10' SECOND",
])
def test_pickled_operator_keeps_going_and_bound_is_vectorised(trades, sql):
    # The Spark runtime keeps operators pickled in its state store (compiled closures rebuilt).
    trades.execute("CREATE STREAM Readings (ts TIMESTAMP, sensor VARCHAR(5), val INTEGER)")
    tsort = "WITHIN" in sql
    op = sort_op(trades, sql)

    def row(t, s, v):
        return (ts(t), s, v) if tsort else (s, v)
    op.on_row(0, 1, ts("09:00:10"), row("09:00:10", "B", 1), [ts("09:00:10")], b"1")
    op2 = pickle.loads(pickle.dumps(op))
    c1 = op.on_row(0, 2, ts("09:00:30"), row("09:00:30", "A", 2), [ts("09:00:30")], b"2") + \
        op.on_clocks(3, [ts("09:01:00")])
    c2 = op2.on_row(0, 2, ts("09:00:30"), row("09:00:30", "A", 2), [ts("09:00:30")], b"2") + \
        op2.on_clocks(3, [ts("09:01:00")])
    assert [(c.stamp, c.tie, c.row) for c in c1] == [(c.stamp, c.tie, c.row) for c in c2] and c1
    clocks = np.array([[ts("09:01:00")], [ts("09:02:00")]], dtype=np.int64)
    params = np.array([op.bound_params()] * 2, dtype=np.int64)
    assert list(op.bound_eval(params, clocks)) == [op.future_bound([int(c)]) for c in clocks[:, 0]]


# --------------------------------------------------------------------------- Spark

def test_order_by_on_spark_four_buckets_all_at_once(tmp_path, spark):
    # Same expectation as test_default_nulls_first_for_desc, on Spark with 4 buckets, one batch.
    with Workbench(tmp_path / "ws", engine="spark", buckets=4) as wb:
        wb.execute("CREATE STREAM Trades (ticker VARCHAR(5), price INTEGER)")
        q = wb.query("SELECT STREAM ticker, price FROM Trades ORDER BY FLOOR(ROWTIME TO MINUTE), price DESC, ticker")
        from streamsql.engine.catalog import Event
        wb.inject([Event("Trades", "row", ts(t), {"ticker": tk, "price": p}) for t, tk, p in
                   [("09:00:10", "ORCL", 20), ("09:00:20", "IBM", None), ("09:00:30", "MSFT", 25),
                    ("09:00:40", "AAPL", 20), ("09:01:05", "ORCL", 30)]])
        q.wait()
        assert released(q) == [(5, "09:00:20", "IBM", None), (5, "09:00:30", "MSFT", 25),
                               (5, "09:00:40", "AAPL", 20), (5, "09:00:40", "ORCL", 20)]


def test_tsort_on_spark_one_event_per_batch(tmp_path, spark):
    # As test_tsort_late_and_null_rows_never_reach_the_output, one event per micro-batch.
    with Workbench(tmp_path / "ws", engine="spark", batch_events=1) as wb:
        wb.execute("CREATE STREAM Readings (ts TIMESTAMP, sensor VARCHAR(5), val INTEGER)")
        q = wb.query(TSORT)
        for rt, t, s, v in [("10:01:20", "10:01:15", "A", 1), ("10:01:30", "10:00:12", "B", 2),
                            ("10:01:40", None, "C", 3), ("10:02:40", "10:02:30", "D", 4)]:
            wb.insert("Readings", {"ts": None if t is None else DAY + t, "sensor": s, "val": v}, rowtime=DAY + rt)
        q.wait()
        assert released(q) == [(4, "10:01:15", "A", 1)]
        assert q.output_bound == ts("10:01:30")


# --------------------------------------------------------------------------- late rows reach ERRORS

@pytest.mark.parametrize("engine", ["local", "spark"])
def test_tsort_late_rows_reach_the_error_stream(tmp_path, engine, request):
    """Step 5 of tsort_readings is late for the T-sort (ts 10:00:12 < W 10:00:15): the error
    stream gets a row for it, with STEP 5, stamped with the bound it violated, and the query
    keeps it in ``q.errors``. On the local runtime the row is in ERRORS before step 5 commits,
    so a query on the error stream sees it at step 5; on Spark the T-sort's stage refuses it and
    the workbench appends it when the sink delivers it (an error-only commit, no new step)."""
    import json as _json
    from streamsql import Workbench
    from streamsql.engine import time as T
    from streamsql.engine.catalog import ERROR_STREAM
    from streamsql.engine.cli import read_events
    from streamsql.engine.log import entry_schema
    if engine == "spark":
        request.getfixturevalue("spark")
    base = Path(__file__).parent / "scenarios" / "tsort_readings"
    wb = Workbench(tmp_path / "ws", engine=engine)
    try:
        q = [r.query for r in wb.execute(base.with_suffix(".sql").read_text()) if r.query][0]
        errs = wb.query("SELECT STREAM ROWTIME, ERROR_NAME, DATA_ROWTIME, DATA_ROW, STREAM_NAME, PRODUCER, STEP FROM ERRORS")
        wb.inject(read_events(str(base) + ".events.jsonl"))
        q.wait()
        errs.wait()
        assert [(e.step, e.name, e.data_rowtime) for e in q.errors] == [
            (5, "LATE_ROW", T.parse_timestamp("2021-03-01 10:00:12"))]
        d = wb.catalog.streams[ERROR_STREAM]
        t = wb.log.read(d.uid, entry_schema(d.fields), 0, wb.last_step).to_pylist()
        rows = [tuple(r[f"c{i}"] for i in range(len(d.fields))) for r in t]
        assert len(rows) == 1 and t[0]["step"] == 5
        _time, level, name, _msg, data_rowtime, data_row, stream, producer, at = rows[0]
        assert at == 5 and name == "LATE_ROW" and stream == "READINGS" and producer == q.name and level == "WARNING"
        assert t[0]["rowtime"] == T.parse_timestamp("2021-03-01 10:00:15")
        assert data_rowtime == T.parse_timestamp("2021-03-01 10:00:12")
        assert _json.loads(data_row)["SENSOR"] == "C"
        if engine == "local":
            got = [(r.step, r.values) for r in errs.rows]
            assert len(got) == 1 and got[0][0] == 5 and got[0][1][-1] == 5
            assert errs.rows[0].rowtime == T.parse_timestamp("2021-03-01 10:00:15")
    finally:
        wb.close()
