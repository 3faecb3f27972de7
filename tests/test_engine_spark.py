"""The engine core on real Spark, through the Python API: late rows and the error stream,
producers, strict and eclipsed bounds, validation errors that leave the session usable."""
from __future__ import annotations

import json
import logging

import pytest

from streamsql import Event, EventError, LateRowError, SqlError
from streamsql.engine import time as T


def ts(s):
    return T.parse_timestamp("2006-10-10 " + s)


def test_late_rows_reach_the_error_stream_and_the_log(wb_spark, caplog):
    wb = wb_spark
    wb.execute("CREATE STREAM Orders (ticker VARCHAR(10), amount INTEGER)")
    errors = wb.query("SELECT STREAM ROWTIME, STREAM_NAME, DATA_ROWTIME, DATA_ROW, MESSAGE, STEP FROM ERRORS")
    orders = wb.query("SELECT STREAM ROWTIME, ticker FROM Orders")
    wb.insert("Orders", {"ticker": "ORCL", "amount": 1}, rowtime=ts("10:05"))
    with pytest.raises(LateRowError) as e:
        wb.insert("Orders", {"ticker": "IBM", "amount": 2}, rowtime=ts("10:01"))
    assert "ORDERS" in str(e.value) and "10:01" in str(e.value) and "10:05" in str(e.value)
    with caplog.at_level(logging.WARNING, logger="streamsql.late"):
        outcomes = wb.inject([Event("Orders", "row", ts("09:00"), {"ticker": "L"}) for _ in range(100)])
    assert {o.status for o in outcomes} == {"late"}
    logged = [r.getMessage() for r in caplog.records if r.name == "streamsql.late"]
    assert [m.split()[2] for m in logged] == ["#1", "#10", "#100"]   # powers of ten, with the count
    assert "(step 2)" in logged[0] and "(step 101)" in logged[2]
    errors.wait()
    orders.wait()
    assert [r.values for r in orders.rows] == [("ORCL",)]      # late rows never reach queries
    assert len(errors.rows) == 101
    first = errors.rows[0]
    assert first.step == 2 and first.rowtime == ts("10:05")
    stream, data_rowtime, data_row, message, step = first.values
    assert stream == "ORDERS" and data_rowtime == ts("10:01") and step == 2
    assert json.loads(data_row) == {"TICKER": "IBM", "AMOUNT": 2}
    assert "before the stream clock 2006-10-10 10:05:00" in message


def test_two_producers_seed_000_through_a_query(wb_spark):
    wb = wb_spark
    wb.execute("CREATE STREAM S (v VARCHAR(5))")
    q = wb.query("SELECT STREAM ROWTIME, v FROM S")
    wb.punctuate("S", ts("10:00"), producer="P1")                       # step 1
    wb.insert("S", {"v": "a"}, rowtime=ts("10:00"), producer="P1")      # 2: enters at once
    wb.punctuate("S", ts("10:05"), producer="P2")                       # 3
    wb.insert("S", {"v": "b"}, rowtime=ts("10:05"), producer="P2")      # 4: waits for P1
    with pytest.raises(LateRowError):
        wb.insert("S", {"v": "c"}, rowtime=ts("09:59"), producer="P2")  # 5: late
    q.wait()
    assert [(r.step, r.values) for r in q.rows] == [(2, ("a",))]
    assert wb.clock("S") == ts("10:00")
    wb.detach("S", "P1")                                                # 6: P2 alone now
    q.wait()
    assert [(r.step, r.values) for r in q.rows] == [(2, ("a",)), (6, ("b",))]
    assert wb.clock("S") == ts("10:05")
    wb.detach("S", "P2")
    with pytest.raises(LateRowError) as e:
        wb.insert("S", {"v": "d"}, rowtime=ts("10:01"), producer="P3")  # the stream remembers
    assert e.value.clock == ts("10:05")


def test_backwards_bound_is_an_error_and_changes_nothing(wb_spark):
    wb = wb_spark
    wb.execute("CREATE STREAM S (v INTEGER)")
    wb.punctuate("S", "2006-10-10 10:05:00")
    with pytest.raises(EventError, match="cannot move backwards"):
        wb.punctuate("S", "10:00")
    assert wb.clock("S") == ts("10:05")
    assert wb.punctuate("S", "10:05").status == "eclipsed"


def test_strict_bound_releases_the_hour(wb_spark):
    wb = wb_spark
    wb.execute("CREATE STREAM E (color VARCHAR(10))")
    q = wb.query("SELECT STREAM color, COUNT(*) AS c FROM E GROUP BY FLOOR(E.ROWTIME TO HOUR), color")
    wb.insert("E", {"color": "red"}, rowtime=ts("06:15"))
    wb.punctuate("E", ts("06:59:59.999"))              # non-strict: 06:59:59.999, hour still open
    q.wait()
    assert q.rows == []
    wb.punctuate("E", ts("06:59:59.999"), strict=True)  # strict: >= 07:00:00.000
    q.wait()
    assert [(r.step, r.rowtime, r.values) for r in q.rows] == [(3, ts("07:00"), ("red", 1))]
    assert wb.clock("E") == ts("07:00")


def test_eclipsed_bounds_are_in_the_trace(wb_spark):
    wb = wb_spark
    wb.execute("CREATE STREAM P (n VARCHAR(5)); CREATE STREAM Q (n VARCHAR(5))")
    q = wb.query("SELECT STREAM ROWTIME, n FROM P UNION ALL SELECT STREAM ROWTIME, n FROM Q")
    wb.insert("P", {"n": "p1"}, rowtime=ts("01:06"))
    wb.punctuate("Q", ts("01:10"))
    o = wb.punctuate("Q", ts("01:08"), producer="other")   # weaker than Q's clock: no news
    assert o.status == "eclipsed"
    q.wait()
    rec = wb.event_trace[-1]
    assert rec["eclipsed"] and rec["bound_before"] == rec["bound_after"] == ts("01:10")
    assert [r["eclipsed"] for r in wb.event_trace] == [False, False, True]
    # the query's trace shows the union's inputs and present at each step
    steps = {t.step: t for t in q.trace}
    union = steps[2].operators[-1]
    assert union.clocks == (ts("01:06"), ts("01:10")) and union.present == ts("01:06")
    assert [(r.step, r.values) for r in q.rows] == [(2, ("p1",))]


@pytest.mark.parametrize("sql,message,pos", [
    ("SELECT * FROM Orders", "Cannot convert stream 'ORDERS' to a table", (1, 15)),
    ("SELECT STREAM * FROM Products", "Cannot convert table 'PRODUCTS' to a stream", (1, 22)),
    ("SELECT STREAM * FROM (VALUES (1, 'abc'))", "Cannot stream VALUES", (1, 23)),
    ("SELECT STREAM ticker, COUNT(*) FROM Orders GROUP BY ticker",
     "Streaming aggregation requires at least one monotonic expression in GROUP BY clause", None),
    ("SELECT STREAM ticker FROM Orders ORDER BY ticker", "Streaming ORDER BY must start with monotonic expression", None),
    ("SELECT STREAM nosuch FROM Orders", "Column 'NOSUCH' not found", (1, 15)),
    ("SELECT STREAM * FROM Nowhere", "Stream or table 'NOWHERE' not found", (1, 22)),
    ("INSERT INTO Orders (ticker, amount) VALUES ('X', 'many')",
     "Cannot assign to target column 'AMOUNT' of type INTEGER from source of type VARCHAR", None),
])
def test_validation_errors_leave_the_session_usable(wb_spark, sql, message, pos):
    wb = wb_spark
    wb.execute("CREATE STREAM Orders (ticker VARCHAR(10), amount INTEGER); CREATE TABLE Products (id INTEGER)")
    with pytest.raises(SqlError) as e:
        wb.execute(sql)
    assert message in str(e.value)
    if pos:
        assert (e.value.line, e.value.col) == pos
    # nothing changed: the session still works
    q = wb.query("SELECT STREAM ROWTIME, ticker FROM Orders")
    wb.insert("Orders", {"ticker": "ORCL", "amount": 1}, rowtime=ts("10:00"))
    assert [r.values for r in q.wait().rows] == [("ORCL",)]


def test_error_positions_count_from_the_start_of_the_script(wb_spark):
    with pytest.raises(SqlError) as e:
        wb_spark.execute("CREATE STREAM A (x INTEGER);\n\nSELECT STREAM\n  y FROM A;")
    assert (e.value.line, e.value.col) == (4, 3)
    assert e.value.caret().splitlines()[-1].index("^") == 4
    assert "A" in wb_spark.catalog.streams        # the statement before the error stayed done


@pytest.mark.parametrize("batch_events", [None, 1])
def test_events_of_other_streams_run_no_micro_batch(tmp_path, spark, batch_events):
    """A click into one stream runs only the queries that read it: events of other streams do not
    move a query's source (no micro-batch, so a lesson's other views cost nothing), yet the query
    is up to date (``caught_up``, ``wait``), and its next batch, which spans those steps, releases
    exactly what the in-process runtime releases, at the same steps."""
    from streamsql.engine.workbench import Workbench

    def run(engine):
        wb = Workbench(tmp_path / engine, engine=engine, batch_events=batch_events)
        wb.execute("CREATE STREAM S (k INTEGER, v INTEGER); CREATE STREAM T (k INTEGER, v INTEGER)")
        q = wb.query("SELECT STREAM FLOOR(S.ROWTIME TO MINUTE) AS m, k, SUM(v) AS t FROM S "
                     "GROUP BY FLOOR(S.ROWTIME TO MINUTE), k")
        wb.insert("S", {"k": 1, "v": 5}, rowtime=ts("10:00"))
        q.wait(120)
        batches = []
        if engine == "spark":
            handle = wb.runtime.running[q.name][2]
            batches.append(handle.lastProgress["batchId"])
        for i in range(5):
            wb.insert("T", {"k": 1, "v": i}, rowtime=ts(f"10:0{i}"))
        wb.punctuate("T", ts("10:09"))
        q.wait(120)
        if engine == "spark":
            assert wb.runtime.caught_up(q), "events of T leave a query on S to do nothing"
            assert handle.lastProgress["batchId"] == batches[0], "events of T ran a micro-batch of a query on S"
        wb.insert("S", {"k": 1, "v": 6}, rowtime=ts("10:01"))     # releases 10:00 at step 8
        q.wait(120)
        if engine == "spark":
            assert wb.runtime.caught_up(q)
            assert handle.lastProgress["batchId"] > batches[0]
        out = [(r.step, r.rowtime, r.values) for r in q.rows]
        trace = [e.step for e in q.trace]
        wb.close()
        return out, trace

    spark_out, spark_trace = run("spark")
    assert spark_out == [(8, ts("10:01"), (ts("10:00"), 1, 5))]     # ROWTIME: the end of its minute
    assert (spark_out, spark_trace) == run("local")


def test_events_sent_right_after_a_query_starts_are_in_its_first_micro_batch(wb_spark):
    """Spark runs a new query's first micro-batch whatever it holds, and the first one costs the
    most (planning, the state stores). ``query()`` returns before Spark has initialized the
    sources, so the events a user sends right after it are read by that batch instead of
    waiting for a second one; the next start waits for them (one Python runner at a time)."""
    from streamsql.engine.runtime.spark.source import offset_step
    wb = wb_spark
    firsts = []
    for n in range(3):
        wb.execute(f"CREATE STREAM S{n} (k INTEGER, x INTEGER)")
        q = wb.query(f"SELECT STREAM FLOOR(S{n}.ROWTIME TO MINUTE) AS m, k, SUM(x) AS t FROM S{n} "
                     f"GROUP BY FLOOR(S{n}.ROWTIME TO MINUTE), k", name=f"q{n}")
        wb.insert(f"S{n}", {"k": 1, "x": 5}, rowtime=ts("10:00"))
        wb.insert(f"S{n}", {"k": 1, "x": 6}, rowtime=ts("10:01"))
        last = wb.last_step
        q.wait(120)
        assert [r.values for r in q.rows] == [(ts("10:00"), 1, 5)]
        first = wb.runtime.running[q.name][2].recentProgress[0]
        assert first["batchId"] == 0
        firsts.append(offset_step(json.loads(first["sources"][0]["endOffset"])) == last)
        q.stop()
    # a machine busy enough to delay the inserts past the sources' start may miss it once
    assert sum(firsts) >= 2, f"the first micro-batch held the events {sum(firsts)} times of 3"
