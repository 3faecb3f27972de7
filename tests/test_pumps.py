"""Pumps: rows and bounds of a query inserted into a stream at the step that caused them; start
and stop in dependency order; cycles rejected; a reopened workspace keeps pumping."""
from __future__ import annotations

import pytest

from streamsql import SqlError, Workbench
from streamsql.engine import time as T

DDL = """
CREATE STREAM Raw (ticker VARCHAR(10), amount INTEGER);
CREATE STREAM Big (ticker VARCHAR(10), amount INTEGER);
CREATE STREAM Hourly (ticker VARCHAR(10), total BIGINT);
CREATE PUMP p1 AS INSERT INTO Big SELECT STREAM ROWTIME, ticker, amount FROM Raw WHERE amount > 10;
CREATE PUMP p2 AS INSERT INTO Hourly
  SELECT STREAM ticker, SUM(amount) FROM Big GROUP BY FLOOR(Big.ROWTIME TO HOUR), ticker;
"""


def ts(s):
    return T.parse_timestamp("2006-10-10 " + s)


def test_cycles_are_rejected(wb_local):
    wb_local.execute(DDL)
    with pytest.raises(SqlError, match="would make a cycle"):
        wb_local.execute("CREATE PUMP p3 AS INSERT INTO Raw SELECT STREAM ROWTIME, ticker, total FROM Hourly")
    with pytest.raises(SqlError, match="would make a cycle"):
        wb_local.execute("CREATE PUMP p4 AS INSERT INTO Big SELECT STREAM ROWTIME, ticker, amount FROM Big")
    assert set(wb_local.catalog.pumps) == {"P1", "P2"}


def test_start_and_stop_in_dependency_order(wb_local):
    wb_local.execute(DDL.replace("AS INSERT", "STOPPED AS INSERT"))
    assert not any(p["started"] for p in wb_local.catalog.pumps.values())
    assert wb_local.execute("ALTER PUMP p2, p1 START")[0].message == "Pumps P1, P2 started"
    assert wb_local.execute("ALTER PUMP p1, p2 STOP")[0].message == "Pumps P2, P1 stopped"
    assert wb_local.execute("ALTER PUMP SALES.* START")[0].message == "Pumps P1, P2 started"


def test_a_stopped_pump_no_longer_holds_its_target(wb_local):
    wb = wb_local
    wb.execute(DDL)
    q = wb.query("SELECT STREAM ROWTIME, ticker, amount FROM Big")
    wb.insert("Big", {"ticker": "direct", "amount": 1}, rowtime=ts("10:30"))   # held: p1 is at no time
    assert q.rows == []
    wb.insert("Raw", {"ticker": "A", "amount": 20}, rowtime=ts("10:40"))       # p1 moves to 10:40
    # the direct row leaves; p1's row waits for the direct producer (at 10:30): two producers
    assert [r.values for r in q.rows] == [("direct", 1)]
    wb.insert("Big", {"ticker": "direct", "amount": 2}, rowtime=ts("10:50"))   # p1's row leaves,
    assert [r.values for r in q.rows] == [("direct", 1), ("A", 20)]            # this one waits for p1
    wb.execute("ALTER PUMP p1 STOP")                                           # p1 detaches: released
    assert [r.values for r in q.rows] == [("direct", 1), ("A", 20), ("direct", 2)]


def test_pumps_resume_in_a_reopened_workspace(tmp_path):
    ws = tmp_path / "ws"
    wb = Workbench(ws, engine="local")
    wb.execute(DDL)
    wb.insert("Raw", {"ticker": "A", "amount": 20}, rowtime=ts("10:05"))
    wb.insert("Raw", {"ticker": "A", "amount": 30}, rowtime=ts("10:50"))
    wb.close()
    wb = Workbench(ws, engine="local")
    q = wb.query("SELECT STREAM ROWTIME, ticker, total FROM Hourly")
    wb.insert("Raw", {"ticker": "B", "amount": 50}, rowtime=ts("11:05"))      # the 10:00 hour completes
    assert [(T.format_time_of_day(r.rowtime), r.values) for r in q.rows] == [("11:00", ("A", 50))]
    wb.close()


def test_dropping_a_stream_a_pump_uses_is_refused(wb_local):
    wb_local.execute(DDL)
    with pytest.raises(SqlError, match="used by pump P1"):
        wb_local.execute("DROP STREAM Raw")
    wb_local.execute("DROP PUMP p2")
    assert "P2" not in wb_local.catalog.pumps


def test_a_load_writes_what_pumps_insert_as_inserts_do(tmp_path):
    """``Workbench.load`` and row-by-row inserts of the same events leave the same log in every
    stream, the pumps' targets included, read back from a reopened workspace."""
    import pyarrow as pa
    from streamsql.engine.log import entry_schema
    rows = [("A", 20, "10:05"), ("A", 5, "10:20"), ("B", 30, "10:50"), ("A", 40, "11:10"), ("B", 15, "12:01")]
    logs = []
    for how in ("insert", "load"):
        ws = tmp_path / how
        wb = Workbench(ws, engine="local")
        wb.execute(DDL)
        if how == "insert":
            for t, a, at in rows:
                wb.insert("Raw", {"ticker": t, "amount": a}, rowtime=ts(at))
        else:
            wb.load("Raw", pa.table({"ticker": [r[0] for r in rows], "amount": [r[1] for r in rows],
                                     "ROWTIME": [ts(r[2]) for r in rows]}))
        wb.close()
        wb = Workbench(ws, engine="local")
        got = {}
        for name in ("RAW", "BIG", "HOURLY"):
            d = wb.catalog.streams[name]
            got[name] = wb.log.read(d.uid, entry_schema(d.fields), 0, wb.last_step).to_pylist()
        logs.append(got)
        wb.close()
    def rows_of(log):
        return [e for e in log if e["kind"] == 0]
    assert len(rows_of(logs[0]["BIG"])) == 4 and len(rows_of(logs[0]["HOURLY"])) == 3   # the pumps inserted
    assert logs[1] == logs[0]
