"""The widgets driven through their models (values set, buttons clicked with ``.click()``), with
the engine state, the released rows and the chart data that result checked. The local engine
unless a test is about Spark."""
from __future__ import annotations

import decimal
import html
import json
import re
import time
from pathlib import Path

import ipywidgets as widgets
import pytest

from streamsql.engine import time as T
from streamsql.engine.cli import read_events
from streamsql.engine.steps import format_table, step_table
from streamsql.widgets import (Injector, QueryView, ScenarioPlayer, StepTable, TimelineView, WorkbenchView, held_rows,
                               query_step_table, timeline_chart, timeline_records, workbench)
from streamsql.widgets import vega
from streamsql.widgets.hooks import REDRAWER
from streamsql.widgets.timeline_labels import label_fits

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = ROOT / "streamsql" / "scenarios"         # the seeds' scenarios (tests/conftest.py: SCENARIOS)


def ms(text: str) -> int:
    return T.parse_timestamp(text)


def records(q, what: str) -> list[dict]:
    """The chart's data rows of one kind, from the Altair spec itself."""
    spec = vega.spec_of(TimelineView(q).chart())
    return [r for r in spec["data"]["values"] if r["what"] == what]


@pytest.fixture
def union(wb_local):
    wb_local.execute("CREATE STREAM P (name VARCHAR(10)); CREATE STREAM Q (name VARCHAR(10))")
    q = wb_local.query("SELECT STREAM ROWTIME, name FROM P UNION ALL SELECT STREAM ROWTIME, name FROM Q", name="m")
    return wb_local, q


JOIN = ("SELECT STREAM ROWTIME, o.orderId, o.ticker, o.amount AS orderAmount, t.amount AS tradeAmount "
        "FROM Orders AS o JOIN Trades OVER (RANGE INTERVAL '10' MINUTE FOLLOWING) AS t ON o.orderId = t.orderId")


@pytest.fixture
def join(wb_local):
    wb_local.execute("CREATE STREAM Orders (orderId INTEGER, ticker VARCHAR(10), amount INTEGER);"
                     "CREATE STREAM Trades (orderId INTEGER, ticker VARCHAR(10), amount INTEGER)")
    return wb_local, wb_local.query(JOIN, name="matched")


def fill(inj: Injector, at: str, **values) -> None:
    inj.rowtime.value = at
    for k, v in values.items():
        inj.inputs[k.upper()].value = v
    inj.insert()


def redrawn() -> None:
    """Views redraw on their own thread, shortly after the engine calls back: wait for it."""
    assert REDRAWER.idle(30)


# --------------------------------------------------------------------------- injector

def test_injector_fields_are_text_read_exactly_as_typed(wb_local):
    wb_local.execute("CREATE STREAM S (i INTEGER NOT NULL, b BIGINT, d DOUBLE, m DECIMAL(8,2), f BOOLEAN, "
                     "s VARCHAR(5), t TIMESTAMP)")
    inj = Injector(wb_local, "s")
    assert all(w.value == "" for w in inj.inputs.values())                       # text fields, blank
    assert {k: w.placeholder for k, w in inj.inputs.items()} == {
        "I": "INTEGER", "B": "BIGINT", "D": "DOUBLE", "M": "DECIMAL(8,2)", "F": "BOOLEAN: TRUE or FALSE",
        "S": "VARCHAR(5)", "T": "TIMESTAMP: YYYY-MM-DD HH:MM:SS or HH:MM"}
    assert set(inj.nulls) == {"B", "D", "M", "F", "S", "T"}          # I is NOT NULL
    assert inj.rowtime.value == "" and "no clock yet" in inj.rowtime.placeholder

    inj.inputs["I"].value, inj.inputs["B"].value, inj.inputs["D"].value = "7", str(2**40), "2.5"
    inj.inputs["M"].value, inj.inputs["F"].value, inj.inputs["S"].value = "12.34", "true", "abc"
    inj.inputs["T"].value = "2006-10-10 09:30:00"
    inj.nulls["B"].value = True
    assert inj.inputs["B"].disabled
    inj.rowtime.value = "2006-10-10 10:00:00"
    inj.insert()
    rec = wb_local.event_trace[-1]
    assert rec["status"] == "ok" and rec["kind"] == "row" and rec["rowtime"] == ms("2006-10-10 10:00:00")
    assert rec["values"] == {"I": 7, "B": None, "D": 2.5, "M": decimal.Decimal("12.34"), "F": True, "S": "abc",
                             "T": ms("2006-10-10 09:30:00")}
    assert wb_local.clock("S") == ms("2006-10-10 10:00:00")
    # the time fields keep what was typed; their placeholders follow the clock
    assert inj.rowtime.value == "2006-10-10 10:00:00"
    assert inj.rowtime.placeholder == "2006-10-10 10:00:00 (the clock)"
    assert inj.punct_time.value == "2006-10-10 10:00:00"         # the bound field follows the clock
    inj.inputs["T"].value = "08:15"                       # short times are on the clock's day
    inj.rowtime.value = "10:05"
    inj.insert()
    assert wb_local.event_trace[-1]["rowtime"] == ms("2006-10-10 10:05:00")
    assert wb_local.event_trace[-1]["values"]["T"] == ms("2006-10-10 08:15:00")
    assert "step 2: S row at 2006-10-10 10:05:00 inserted" in inj.last_message
    inj.rowtime.value = ""                                # blank: the stream clock
    inj.inputs["I"].value = 9                             # a Python number shows as its text
    assert inj.inputs["I"].value == "9"
    inj.insert()
    assert wb_local.event_trace[-1]["rowtime"] == ms("2006-10-10 10:05:00")


def test_injector_refuses_what_the_type_does_not_accept_and_inserts_nothing(wb_local):
    wb_local.execute("CREATE STREAM S (n INTEGER, d DOUBLE, v VARCHAR(3))")
    inj = Injector(wb_local, "S")
    inj.rowtime.value = "2006-10-10 10:00:00"
    for field, text, words in [("N", "3.7", "column N (INTEGER): '3.7' is not a whole number"),
                               ("N", "12x", "column N (INTEGER): '12x' is not a whole number"),
                               ("D", "1,5", "column D (DOUBLE): '1,5' is not a number"),
                               ("V", "abcd", "column V (VARCHAR(3)): 'abcd' is longer than VARCHAR(3)")]:
        inj.inputs["N"].value, inj.inputs["D"].value, inj.inputs["V"].value = "1", "1.5", "ok"
        inj.inputs[field].value = text
        inj.insert()
        assert "error" in inj.last_message and words in inj.last_message, inj.last_message
        assert inj.inputs[field].refused
        assert wb_local.event_trace == [] and wb_local.clock("S") is None       # nothing went in
    inj.inputs["N"].value, inj.inputs["D"].value, inj.inputs["V"].value = "3.7", "1,5", ""
    inj.insert()                               # both fields named in one message
    assert "column N (INTEGER)" in inj.last_message and "column D (DOUBLE)" in inj.last_message
    inj.inputs["N"].value, inj.inputs["D"].value = "37", "15"
    inj.insert()
    assert not inj.inputs["N"].refused
    assert wb_local.event_trace[-1]["values"] == {"N": 37, "D": 15.0, "V": ""}


def test_injector_reports_bad_values_and_late_rows_and_keeps_going(wb_local):
    wb_local.execute("CREATE STREAM S (s VARCHAR(3))")
    inj = Injector(wb_local, "S")
    fill(inj, "2006-10-10 10:00:00", s="toolong")
    assert "error" in inj.last_message and "longer than VARCHAR(3)" in inj.last_message
    assert wb_local.clock("S") is None                     # refused: nothing changed
    fill(inj, "2006-10-10 10:00:00", s="ok")
    fill(inj, "09:59", s="old")
    assert "late" in inj.last_message and "before the stream clock" in inj.last_message
    assert [r["status"] for r in wb_local.event_trace] == ["ok", "late"]    # the refused row took no step
    assert next(s for s in wb_local.streams() if s["name"] == "S")["late"] == 1
    inj.rowtime.value = "not a time"
    inj.insert()
    assert "error" in inj.last_message and "invalid timestamp" in inj.last_message
    assert len(wb_local.event_trace) == 2


def test_punctuate_strict_and_eclipsed(union):
    wb, q = union
    p = Injector(wb, "P")
    fill(p, "2006-10-10 01:00:00", name="p1")
    p.punct_time.value = "01:05"
    p.strict.value = True
    p.punctuate()
    assert wb.clock("P") == ms("2006-10-10 01:05:00") + 1
    assert p.punct_time.value == "2006-10-10 01:05:00.001"
    p.strict.value = False
    p.punctuate()                                  # equal to the clock: says nothing new
    assert [r["status"] for r in wb.event_trace[-2:]] == ["ok", "eclipsed"]
    assert "eclipsed" in p.last_message
    p.punct_time.value = "01:01"                            # backwards for this producer: refused
    p.punctuate()
    assert "cannot move backwards" in p.last_message
    assert [r["status"] for r in wb.event_trace] == ["ok", "ok", "eclipsed", "error"]
    assert wb.clock("P") == ms("2006-10-10 01:05:00") + 1
    # on the chart: one bound and one eclipsed bound, on P's lane, at the strict bound + 1 ms
    assert [(r["lane"], r["t"], r["step"]) for r in records(q, "bound")] == [("P", ms("2006-10-10 01:05:00") + 1, 2)]
    assert [(r["lane"], r["t"], r["step"]) for r in records(q, "eclipsed bound")] == [
        ("P", ms("2006-10-10 01:05:00") + 1, 3)]


def test_producers_attach_and_detach_through_the_widget(union):
    wb, q = union
    p, qq = Injector(wb, "P"), Injector(wb, "Q")
    fill(qq, "2006-10-10 02:00:00", name="q")                # Q is far ahead: only P holds the merge
    fill(p, "2006-10-10 01:00:00", name="a")
    p.new_producer.value = "slow"
    p.attach()
    assert p.producer.options == ("default", "slow") and p.producer.value == "slow"
    p.producer.value = "default"
    fill(p, "01:10", name="b")                              # waits for the slow producer
    info = next(s for s in wb.streams() if s["name"] == "P")
    assert info["pending"] == 1 and "slow" in info["producers"]
    assert [r.values for r in q.rows] == [("a",)]
    p.producer.value = "slow"
    p.detach()                                 # no longer holds the stream back
    assert "producer slow detached" in p.last_message
    assert [r.values for r in q.rows] == [("a",), ("b",)]
    assert [r["kind"] for r in wb.event_trace] == ["row", "row", "attach", "row", "detach"]


# --------------------------------------------------------------------------- live view and step table

def test_query_view_shows_rows_bound_and_clocks(union):
    wb, q = union
    v = QueryView(q, limit=2)
    assert v.text().splitlines()[:3] == ["Query m (running): 0 rows released, output bound none",
                                         "Clocks: P none, Q none", "(no rows released yet)"]
    for s, t, n in [("P", "01:00", "p1"), ("P", "01:06", "p2"), ("Q", "01:02", "q1"), ("Q", "01:04", "q2")]:
        wb.insert(s, {"name": n}, rowtime=f"2006-10-10 {t}:00")
    v.refresh()
    text = v.text()
    assert "3 rows released, output bound 2006-10-10 01:04:00" in text
    assert "Clocks: P 2006-10-10 01:06:00, Q 2006-10-10 01:04:00" in text
    assert text.endswith("(last 2 of 3)")
    assert '<table class="streamsql-rows" data-rows="2"' in v.table.value
    assert "q2" in v.table.value and "p1" not in v.table.value
    wb.punctuate("Q", "01:10")
    b = QueryView(q, limit=10, bounds=True)
    lines = b.text().splitlines()
    assert "5    | bound 2006-10-10 01:10:00 |" not in lines             # p2 at 01:06 implies nothing more
    assert any(l.startswith("5    | 2006-10-10 01:06:00 | p2") for l in lines)
    assert b._repr_mimebundle_()["text/plain"] == b.text()


def test_query_view_redraws_its_status_when_the_query_stops(wb_local):
    wb_local.execute("CREATE STREAM S (x INTEGER)")
    q = wb_local.query("SELECT STREAM ROWTIME, x FROM S", name="s")
    v = QueryView(q)
    assert "Query s (running)" in v.status.value
    q.stop()                                   # no refresh() here: the view hears of the stop
    deadline = time.monotonic() + 5
    while "Query s (stopped)" not in v.status.value and time.monotonic() < deadline:
        time.sleep(0.02)
    assert "Query s (stopped)" in v.status.value


def test_bounds_mode_interleaves_output_bound_moves(wb_local):
    wb_local.execute("CREATE STREAM S (x INTEGER)")
    q = wb_local.query("SELECT STREAM ROWTIME, x FROM S", name="s")
    wb_local.insert("S", {"x": 1}, rowtime="2006-10-10 10:00:00")
    wb_local.punctuate("S", "10:05")
    v = QueryView(q, bounds=True)
    rows, classes, _ = v.rows()
    assert rows == [["1", "2006-10-10 10:00:00", "1"], ["2", "bound 2006-10-10 10:05:00", ""]]
    assert classes == ["", "bound"]


def test_step_table_matches_the_engine_table_for_the_seed(union):
    wb, q = union
    events = read_events(SCENARIOS / "union_merge.events.jsonl")
    outcomes = wb.inject(events)
    t = query_step_table(q)
    assert t == step_table(q, outcomes, 0, ["P", "Q"])
    assert format_table(t).splitlines() == [
        "Step | P        | Q           | Output",
        "-----+----------+-------------+-------------------",
        "1    | 01:00 p1 |             |",
        "2    | 01:06 p2 |             |",
        "3    |          | 01:02 q1    | 01:00 p1; 01:02 q1",
        "4    |          | 01:04 q2    | 01:04 q2",
        "5    |          | 01:10 bound | 01:06 p2"]
    st = StepTable(q)
    assert 'class="streamsql-step-table" data-rows="5"' in st.steps_html.value
    assert st.held_html.value == ""


# --------------------------------------------------------------------------- timeline data

def test_timeline_of_the_join_shows_windows_held_rows_and_what_they_wait_for(join):
    wb, q = join
    ui = WorkbenchView(q)
    orders, trades = ui.injectors["ORDERS"], ui.injectors["TRADES"]
    fill(orders, "2006-10-10 10:00:00", orderId=1, ticker="ORCL", amount=100)
    fill(orders, "10:03", orderId=2, ticker="YHOO", amount=25)
    fill(trades, "2006-10-10 10:02:00", orderId=1, ticker="ORCL", amount=60)
    fill(trades, "10:04", orderId=2, ticker="YHOO", amount=25)
    assert [(r.step, r.values) for r in q.rows] == [(3, (1, "ORCL", 100, 60))]

    lanes, recs = timeline_records(q)
    # the join has nothing of its own to show: its inputs get lanes (its clock for each, the rows it keeps)
    assert lanes == ["ORDERS", "TRADES", "join input ORDERS", "join input TRADES", "output"]
    spec = ui.timeline.spec()
    assert spec["$schema"].endswith("vega-lite/v5.json")
    assert spec["data"]["values"] == recs                        # what is drawn is the data checked here
    by = lambda w: [(r["lane"], r["t"], r["t2"], r["step"]) for r in recs if r["what"] == w]
    assert by("row") == [("ORDERS", ms("2006-10-10 10:00:00"), ms("2006-10-10 10:00:00"), 1),
                         ("ORDERS", ms("2006-10-10 10:03:00"), ms("2006-10-10 10:03:00"), 2),
                         ("TRADES", ms("2006-10-10 10:02:00"), ms("2006-10-10 10:02:00"), 3),
                         ("TRADES", ms("2006-10-10 10:04:00"), ms("2006-10-10 10:04:00"), 4)]
    assert by("clock") == [("ORDERS", ms("2006-10-10 10:03:00"), ms("2006-10-10 10:03:00"), None),
                           ("TRADES", ms("2006-10-10 10:04:00"), ms("2006-10-10 10:04:00"), None),
                           ("join input ORDERS", ms("2006-10-10 10:03:00"), ms("2006-10-10 10:03:00"), None),
                           ("join input TRADES", ms("2006-10-10 10:04:00"), ms("2006-10-10 10:04:00"), None)]
    # both orders can still meet a trade up to 10 minutes after them (the TRADES clock is 10:04);
    # a trade meets orders up to 10 minutes before it, so with ORDERS at 10:03 the 10:02 trade is
    # done and only the 10:04 one is kept
    assert [(r[0], r[1]) for r in by("kept row")] == [("join input ORDERS", ms("2006-10-10 10:00:00")),
                                                     ("join input ORDERS", ms("2006-10-10 10:03:00")),
                                                     ("join input TRADES", ms("2006-10-10 10:04:00"))]
    # every event mark is labelled with its step; the tooltip says which step a state mark is as of
    assert [(r["label"], r["at"]) for r in recs if r["what"] == "row"] == [("1", "step 1"), ("2", "step 2"),
                                                                          ("3", "step 3"), ("4", "step 4")]
    assert {r["at"] for r in recs if r["what"] in ("clock", "held row", "kept row")} == {"after step 4"}
    assert all(r["at"] != "None" and "null" not in r["at"] for r in recs)
    # each kept trade can match orders with base times 10 minutes before it
    assert [(r[0], r[1], r[2]) for r in by("open window")] == [
        ("TRADES", ms("2006-10-10 09:54:00"), ms("2006-10-10 10:04:00"))]
    assert by("released row") == [("output", ms("2006-10-10 10:00:00"), ms("2006-10-10 10:00:00"), 3)]
    held = [r for r in recs if r["what"] == "held row"]
    assert [(r["lane"], r["t"]) for r in held] == [("output", ms("2006-10-10 10:03:00"))]
    assert "TRADES clock passes 2006-10-10 10:10:00" in held[0]["detail"]
    assert by("waits for") == [("TRADES", ms("2006-10-10 10:10:00"), ms("2006-10-10 10:10:00"), None)]
    redrawn()
    # the workbench shows the held row and what it waits for beside the rows, not in a tab
    assert held_rows(q)[0]["waits_for"] and "Held after step 4, and what each waits for" in ui.live.open_table.value
    assert "until the TRADES clock passes 2006-10-10 10:10:00" in ui.live.open_table.value
    ui.tabs.selected_index = 1                                  # the step table's tab: it catches up
    redrawn()
    assert "Held rows" in ui.steps.held_html.value

    trades.punct_time.value = "10:11"
    trades.punctuate()
    assert [(r.step, r.values) for r in q.rows][-1] == (5, (2, "YHOO", 25, 25))
    recs = timeline_records(q)[1]
    assert [r for r in recs if r["what"] in ("held row", "waits for")] == []
    assert [(r["lane"], r["t"], r["step"]) for r in recs if r["what"] == "bound"] == [
        ("TRADES", ms("2006-10-10 10:11:00"), 5)]
    redrawn()
    assert '<table class="streamsql-rows" data-rows="2"' in ui.live.table.value   # the view followed


def test_timeline_shows_rows_a_stream_holds_for_a_slower_producer(wb_local):
    wb_local.execute("CREATE STREAM S (x INTEGER)")
    q = wb_local.query("SELECT STREAM ROWTIME, x FROM S", name="s")
    wb_local.insert("S", {"x": 1}, rowtime="2006-10-10 10:00:00")
    wb_local.attach("S", "slow")
    wb_local.insert("S", {"x": 2}, rowtime="2006-10-10 10:05:00")      # waits: slow has no clock yet
    wb_local.insert("S", {"x": 3}, rowtime="2006-10-10 10:01:00", producer="slow")
    recs = timeline_records(q)[1]
    by = lambda w: [(r["t"], r["step"]) for r in recs if r["what"] == w]
    # x=3 left at once (its rowtime is behind every producer's clock); x=2 still waits for slow
    assert by("row") == [(ms("2006-10-10 10:00:00"), 1), (ms("2006-10-10 10:01:00"), 4)]
    assert by("pending row") == [(ms("2006-10-10 10:05:00"), 3)]
    detail = next(r["detail"] for r in recs if r["what"] == "pending row")
    assert "X=2" in detail and "from default" in detail and "waits for slow (clock 2006-10-10 10:01:00)" in detail
    wb_local.detach("S", "slow")                                         # lets x=2 into the stream
    recs = timeline_records(q)[1]
    assert [r for r in recs if r["what"] == "pending row"] == []
    assert (ms("2006-10-10 10:05:00"), 3) in [(r["t"], r["step"]) for r in recs if r["what"] == "row"]


def test_timeline_shows_late_rows_and_aggregation_periods(wb_local):
    wb_local.execute("CREATE STREAM S (k VARCHAR(3), x INTEGER)")
    q = wb_local.query("SELECT STREAM FLOOR(S.ROWTIME TO HOUR) AS h, k, SUM(x) AS total FROM S "
                       "GROUP BY FLOOR(S.ROWTIME TO HOUR), k", name="hourly")
    inj = Injector(wb_local, "S")
    fill(inj, "2006-10-10 10:15:00", k="a", x=1)
    fill(inj, "10:40", k="b", x=2)
    fill(inj, "10:20", k="a", x=5)                            # late
    lanes, recs = timeline_records(q)
    assert lanes == ["S", "aggregate", "output"]
    assert [(r["lane"], r["t"]) for r in recs if r["what"] == "late row"] == [("S", ms("2006-10-10 10:20:00"))]
    windows = [(r["lane"], r["t"], r["t2"]) for r in recs if r["what"] == "open window"]
    assert windows == [("aggregate", ms("2006-10-10 10:00:00"), ms("2006-10-10 11:00:00"))] * 2
    fill(inj, "11:00", k="a", x=3)                            # closes the 10:00 groups
    recs = timeline_records(q)[1]
    assert [(r["t"], r["step"]) for r in recs if r["what"] == "released row"] == [
        (ms("2006-10-10 11:00:00"), 4), (ms("2006-10-10 11:00:00"), 4)]
    assert [(r["t"], r["t2"]) for r in recs if r["what"] == "open window"] == [
        (ms("2006-10-10 11:00:00"), ms("2006-10-10 12:00:00"))]


def test_charts_and_texts_are_deterministic(tmp_path):
    """Two workbenches fed the same events draw byte-identical charts and texts."""
    from streamsql.engine.workbench import Workbench
    out = []
    for i in range(2):
        with Workbench(tmp_path / f"ws{i}", engine="local") as wb:
            wb.execute("CREATE STREAM Orders (orderId INTEGER, ticker VARCHAR(10), amount INTEGER);"
                       "CREATE STREAM Trades (orderId INTEGER, ticker VARCHAR(10), amount INTEGER)")
            q = wb.query(JOIN, name="j")
            wb.inject(read_events(SCENARIOS / "join1_inner_following.events.jsonl"))
            view = WorkbenchView(q)
            b = view._repr_mimebundle_()
            out.append((json.dumps(b[vega.MIMETYPE], sort_keys=True), b["text/plain"],
                        view.steps.steps_html.value, view.live.table.value, view.static_html()))
    assert out[0] == out[1]
    assert str(tmp_path) not in "".join(out[0])
    # the static snapshot (what a notebook shows without a kernel): rows, clocks, steps, the chart
    static = out[0][-1]
    assert static.count('class="streamsql-static"') == 1 and static.count("<svg") == 1
    for part in ('class="streamsql-rows"', "Clocks: ORDERS 2006-10-10 10:10:00", 'class="streamsql-step-table"',
                 "ORDERS</b>", "Timeline of query j"):
        assert part in static, part
    assert not re.search(r'id="clip\d+"', static)                 # ids made unique to the chart


def test_views_redraw_by_themselves_after_python_api_events(union):
    """No click and no refresh() call: the inject hook and the release callback redraw them."""
    import streamsql
    wb, q = union
    ui = streamsql.workbench(q)
    assert isinstance(ui, WorkbenchView)
    wb.insert("P", {"name": "p1"}, rowtime="2006-10-10 01:00:00")
    wb.insert("Q", {"name": "q1"}, rowtime="2006-10-10 01:00:00")

    def drawn():
        return ui.timeline.view.values
    deadline = time.time() + 10
    while time.time() < deadline and len([r for r in drawn() if r["what"] == "released row"]) < 2:
        time.sleep(0.05)
    assert [(r["lane"], r["step"]) for r in drawn() if r["what"] == "released row"] == [("output", 2), ("output", 2)]
    redrawn()
    assert '<table class="streamsql-rows" data-rows="2"' in ui.live.table.value
    assert "2006-10-10 01:00:00" in ui.injectors["P"].title_text()     # the injector shows the new clock
    assert ui.injectors["Q"].rowtime.placeholder == "2006-10-10 01:00:00 (the clock)"


# --------------------------------------------------------------------------- scenarios

def test_scenario_player_steps_forward_and_back(tmp_path):
    player = ScenarioPlayer(SCENARIOS / "join3_full_outer.sql", engine="local")
    assert (player.pos, player.total) == (0, 11)
    player.step()
    player.step()
    assert player.pos == 2 and player.check()[0] is True
    player.goto(11)
    ok, why = player.check()
    assert ok, why
    assert [r.step - player.base for r in player.q.rows] == [4, 6, 7, 7, 11]
    assert player.step_table()[0] == ["Step", "Orders", "Trades", "Output"]
    first_wb = player.wb
    player.goto(4)                                         # back: replays from the start
    assert player.wb is not first_wb and player.pos == 4
    assert [r.step for r in player.q.rows] == [4]
    player.close()


def test_scenario_view_buttons(tmp_path):
    view = workbench(scenario=SCENARIOS / "union_merge", engine="local")
    assert view.status_text().startswith("Scenario union_merge: step 0 of 5; next: P row 01:00 p1")
    # what the browser's buttons send: the click carries the fields as they are on screen
    view.controls._message(view.controls, {"op": "step", "id": "c1", "values": {"k": "0"}}, [])
    view.controls._message(view.controls, {"op": "go", "id": "c2", "values": {"k": "4"}}, [])
    assert view.player.pos == 4 and view.k.value == 4
    assert "✓ matches union_merge.expected.jsonl up to step 4" in view.status_text()
    q = view.player.q
    assert [(r.step, r.values) for r in q.rows] == [(3, ("p1",)), (3, ("q1",)), (4, ("q2",))]
    assert view.view.steps.rows()[-1] == ["4", "", "01:04 q2", "01:04 q2"]
    view.controls.click("step")
    assert view.controls.disabled == ["step"]               # all events injected
    view.controls._message(view.controls, {"op": "go", "id": "c3", "values": {"k": "four"}}, [])
    assert "step k: &#x27;four&#x27; is not a step number" in view.status.value and view.player.pos == 5
    view.controls.click("restart")
    assert view.player.pos == 0 and view.view.q is view.player.q and view.view.q is not q
    view.load(tmp_path / "missing")
    assert "not found" in view.status.value and view.player.pos == 0     # old scenario kept
    bad = tmp_path / "bad"
    (tmp_path / "bad.sql").write_text("CREATE STREAM X (a INTEGER);\nSELECT STREAM ROWTIME, b FROM X")
    (tmp_path / "bad.events.jsonl").write_text("")
    view.load(bad)
    assert "line 2:24: Column &#x27;B&#x27; not found" in view.status.value
    view.player.close()


# --------------------------------------------------------------------------- Spark

def test_workbench_widget_on_spark(wb_spark):
    """The composed view over a Spark query: a click commits its event and returns (it does not
    wait for Spark); every part follows when Spark's micro-batch releases the row."""
    wb = wb_spark
    wb.execute("CREATE STREAM P (name VARCHAR(10)); CREATE STREAM Q (name VARCHAR(10))")
    q = wb.query("SELECT STREAM ROWTIME, name FROM P UNION ALL SELECT STREAM ROWTIME, name FROM Q", name="m")
    ui = WorkbenchView(q)
    ui.tabs.selected_index = 1                                # the step table's tab
    p, qq = ui.injectors["P"], ui.injectors["Q"]
    fill(p, "2006-10-10 01:00:00", name="p1")
    fill(qq, "2006-10-10 01:02:00", name="q1")
    q.wait()
    assert [(r.step, r.rowtime, r.values) for r in q.rows] == [(2, ms("2006-10-10 01:00:00"), ("p1",))]
    qq.punct_time.value = "01:10"
    qq.punctuate()
    q.wait()
    assert len(q.rows) == 1                                   # q1 (01:02) still waits for P's clock
    fill(p, "01:05", name="p2")
    q.wait()
    redrawn()
    assert [(r.step, r.values) for r in q.rows] == [(2, ("p1",)), (4, ("q1",)), (4, ("p2",))]
    assert [(r["lane"], r["step"]) for r in records(q, "released row")] == [("output", 2), ("output", 4),
                                                                             ("output", 4)]
    assert '<table class="streamsql-rows" data-rows="3"' in ui.live.table.value
    assert ui.steps.rows()[-1] == ["4", "01:05 p2", "", "01:02 q1; 01:05 p2"]
    assert "step 4: P row at 2006-10-10 01:05:00 inserted" in p.last_message
    # rows Spark releases later (an API insert, no click) reach the live view through on_release
    wb.insert("P", {"name": "p3"}, rowtime="01:07")
    q.wait()
    deadline = time.time() + 10
    while '<table class="streamsql-rows" data-rows="4"' not in ui.live.table.value and time.time() < deadline:
        time.sleep(0.05)
    assert "p3" in ui.live.table.value


def test_stop_button_stops_this_query_only(wb_local):
    wb_local.execute("CREATE STREAM S (x INTEGER)")
    q = wb_local.query("SELECT STREAM ROWTIME, x FROM S", name="s")
    other = wb_local.query("SELECT STREAM ROWTIME, x FROM S", name="t")
    v = QueryView(q)
    assert not v.stop_button.disabled
    v.stop_button.click()
    assert not q.running and other.running and v.stop_button.disabled
    redrawn()
    assert "Query s (stopped)" in v.status.value
    # a view of a query that a rerun replaced does not stop its successor of the same name
    old = QueryView(other)
    new = wb_local.query("SELECT STREAM ROWTIME, x FROM S", name="t", replace=True)
    old.stop_button.click()
    assert new.running and not other.running


def test_timeline_spreads_marks_names_backwards_bounds_and_bins_loaded_rows(wb_local):
    import numpy as np
    import pyarrow as pa
    wb = wb_local
    wb.execute("CREATE STREAM S (x INTEGER)")
    q = wb.query("SELECT STREAM ROWTIME, x FROM S", name="s")
    for x in (1, 2):
        wb.insert("S", {"x": x}, rowtime="2006-10-10 10:00:00")            # two rows at one time
    with pytest.raises(Exception, match="cannot move backwards"):
        wb.punctuate("S", "09:00")
    lanes, recs = timeline_records(q)
    spot = [(r["what"], r["dy"]) for r in recs if r["lane"] == "S" and r["t"] == ms("2006-10-10 10:00:00")]
    assert spot == [("row", -8.0), ("row", 0.0), ("clock", 8.0)]          # spread apart, not on top
    back = [r for r in recs if r["what"] == "backwards bound"]
    assert [(r["t"], r["step"], r["label"]) for r in back] == [(ms("2006-10-10 09:00:00"), 3, "3")]
    assert "refused" in back[0]["detail"]
    spec = vega.spec_of(timeline_chart(q))
    color = spec["vconcat"][0]["layer"][0]["encoding"]["color"]
    assert color["scale"]["domain"] == ["row", "backwards bound", "clock", "released row", "output bound"]  # only what is drawn
    assert "backwards bound: refused" in color["legend"]["labelExpr"]
    # a load: its rows are in the step table and the timeline; more than are drawn: binned as well
    t0 = ms("2006-10-10 10:01:00")
    wb.load("S", {"ROWTIME": pa.array(np.arange(t0, t0 + 600_000, 1000, dtype=np.int64)),
                  "x": pa.array(np.arange(600, dtype=np.int32))})
    table = query_step_table(q, last=3)
    assert table[-1] == ["603", "10:10:59 599", "10:10:59 599"]
    lanes, recs = timeline_records(q)
    drawn = [r for r in recs if r["what"] == "row"]
    assert len(drawn) == 500 and drawn[-1]["step"] == 603 and drawn[-1]["values"] == "X=599"
    bins = [r for r in recs if r["what"] == "rows (binned)"]
    assert sum(int(r["detail"].split()[0]) for r in bins) == 602           # every row, the inserted two too
    # one label per spot, drawn only from the zoom where it clears every mark and every other label
    # drawn with it: at the full ten minutes (640 px) few of the one-second-apart labels are, and
    # none overlaps; zoomed in 50 times, most are, and still none overlaps
    full = 592 / 600_000
    few = [r for r in recs if label_fits(r, full) and r["what"] == "row"]
    assert_no_label_overlaps(lanes, recs, full)
    zoomed = [r for r in recs if label_fits(r, 50 * full) and r["what"] == "row"]
    assert len(zoomed) > 400 > 10 * len(few)
    assert_no_label_overlaps(lanes, recs, 50 * full)


def assert_no_label_overlaps(lanes: list[str], recs: list[dict], px_per_ms: float) -> None:
    """No label drawn at ``px_per_ms`` overlaps another drawn label or any point mark, in the
    chart's own geometry: lanes 28 px apart, a label's box from its offsets and its width."""
    from streamsql.widgets.labels import LABEL_H, label_width
    from streamsql.widgets.timeline_labels import EXTENT, chart_height
    step = chart_height(lanes) / len(lanes)
    y = {lane: step * (i + 0.5) for i, lane in enumerate(lanes)}
    t0 = min(r["t"] for r in recs)
    marks, labels = [], []
    for r in recs:
        if r.get("stacked") or r["what"] not in EXTENT:
            continue
        x, cy = (r["t"] - t0) * px_per_ms, y[r["lane"]]
        hw, hh = EXTENT[r["what"]]
        marks.append((x - hw, cy + r["dy"] - hh, x + hw, cy + r["dy"] + hh, r["what"]))
        if label_fits(r, px_per_ms):
            w = label_width(r["label"])
            labels.append((x + r["lx"], cy + r["ly"] - LABEL_H / 2, x + r["lx"] + w, cy + r["ly"] + LABEL_H / 2,
                           r["label"]))

    def meet(a, b):
        return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]
    for i, a in enumerate(labels):
        assert not [b[4] for b in labels[i + 1:] if meet(a, b)], a
        assert not [m[4] for m in marks if meet(a, m)], a


def test_startup_phases_count_each_phase_until_the_first_result():
    from streamsql.engine.startup import StartupPhases
    from streamsql.widgets import StartupView
    now = [100.0]
    phases = StartupPhases(clock=lambda: now[0])
    view = StartupView(phases, tick=3600)
    for name, secs in [("JVM", 2.0), ("Spark session", 4.5), ("plan", 0.5), ("first batch", 1.0)]:
        phases(name)
        now[0] += secs
    view.refresh()                                                      # what the ticker does
    assert "first batch… 1.0 s (8.0 s so far)" in view.value           # under way: counting up
    phases(None)
    phases("JVM")                                                       # after the end: ignored
    assert phases.text() == ("Start-up: JVM 2.0 s · Spark session 4.5 s · plan 0.5 s · first batch 1.0 s"
                             " — first result after 8.0 s")
    assert phases.text() in view.value
    assert view._repr_mimebundle_()["text/plain"] == "Start-up: JVM · Spark session · plan · first batch"
    assert "0.5 s" not in view.static_html()                          # as displayed: no times


def test_startup_phases_done_ahead_count_their_time_but_not_the_typing():
    """Spark started in the background at 90 (JVM 2 s, session 4 s, up at 96); the query came at
    100 (the user typed for 4 s): the line shows the phases with their times, and the first
    result counts from the query, not from the background start."""
    from streamsql.engine.startup import READY, StartupPhases
    now = [100.0]
    phases = StartupPhases(clock=lambda: now[0])
    phases("JVM", 90.0)
    phases("Spark session", 92.0)
    phases(READY, 96.0)
    phases("plan")
    now[0] += 0.5
    phases("first batch")
    now[0] += 1.0
    phases(None)
    assert phases.durations() == [("JVM", 2.0), ("Spark session", 4.0), ("plan", 0.5), ("first batch", 1.0)]
    assert phases.text() == ("Start-up: JVM 2.0 s · Spark session 4.0 s · plan 0.5 s · first batch 1.0 s"
                             " — first result after 1.5 s (Spark started ahead, in the background)")
    assert phases.text(times=False) == "Start-up: JVM · Spark session · plan · first batch"
    # the query came at 100 while the background start was still going (up at 103): it waited 3 s
    now = [100.0]
    phases = StartupPhases(clock=lambda: now[0])
    phases("JVM", 98.0)
    phases("Spark session", 99.0)
    phases(READY, 103.0)
    now[0] = 103.0
    phases("plan")
    now[0] = 104.0
    phases(None)
    assert phases.text() == ("Start-up: JVM 1.0 s · Spark session 4.0 s · plan 1.0 s — first result after 4.0 s"
                             " (3.0 s of it waiting for Spark, which started ahead in the background)")


def test_query_view_shows_open_groups_frames_and_kept_join_rows(wb):
    """What a query holds, on both runtimes (their typed traces). Orders at 10:00 (10, 3) and 10:20
    (10, 5), 10:30 (20, 1): the hourly GROUP BY has not released anything; its groups for 10:00
    are open with COUNT/SUM so far and close when ORDERS reaches 11:00 (the period's end). The
    OVER query keeps 2 rows of partition 10 and 1 of 20 for later frames; the join keeps the three
    Orders rows (no Shipments yet). A bound at 11:00 closes both groups: nothing is open, two rows
    are released."""
    wb.execute("CREATE STREAM Orders (productId INTEGER, units INTEGER); CREATE STREAM Shipments (productId INTEGER)")
    agg = wb.query("SELECT STREAM FLOOR(Orders.ROWTIME TO HOUR) AS ROWTIME, productId, COUNT(*) AS c, "
                   "SUM(units) AS units FROM Orders GROUP BY FLOOR(Orders.ROWTIME TO HOUR), productId", name="agg")
    over = wb.query("SELECT STREAM productId, SUM(units) OVER (PARTITION BY productId RANGE INTERVAL '1' HOUR "
                    "PRECEDING) AS s FROM Orders", name="ov")
    join = wb.query("SELECT STREAM ROWTIME, o.units FROM Orders OVER (RANGE INTERVAL '10' MINUTE PRECEDING) AS o "
                    "JOIN Shipments AS s ON o.productId = s.productId", name="j")
    wb.insert("Orders", {"productId": 10, "units": 3}, rowtime="2006-10-10 10:00:00")
    wb.insert("Orders", {"productId": 10, "units": 5}, rowtime="10:20")
    wb.insert("Orders", {"productId": 20, "units": 1}, rowtime="10:30")
    for q in (agg, over, join):
        q.wait()
    from streamsql.widgets.openstate import open_state_rows
    assert open_state_rows(agg) == [
        ["aggregate", "group 2006-10-10 10:00:00, 10", "COUNT(*) = 2, SUM(units) = 8",
         "when ORDERS reaches 2006-10-10 11:00:00"],
        ["aggregate", "group 2006-10-10 10:00:00, 20", "COUNT(*) = 1, SUM(units) = 1",
         "when ORDERS reaches 2006-10-10 11:00:00"]]
    assert [r[1:3] for r in open_state_rows(over)] == [
        ["partition 10", "2 rows kept since 2006-10-10 10:00:00"],
        ["partition 20", "1 row kept since 2006-10-10 10:30:00"]]
    assert [r[1:] for r in open_state_rows(join)] == [
        ["ORDERS: 3 rows kept", "rowtimes 2006-10-10 10:00:00 to 2006-10-10 10:30:00",
         "the earliest when the other side passes 2006-10-10 10:10:00"]]
    text = QueryView(agg).text()
    assert "Open after step 3" in text and "COUNT(*) = 2, SUM(units) = 8" in text
    wb.punctuate("Orders", "11:00")
    agg.wait()
    assert open_state_rows(agg) == [] and len(agg.rows) == 2
    assert "Open after" not in QueryView(agg).text()


def test_step_scrubber_shows_the_query_as_it_was_and_changes_nothing(wb):
    """The step scrubber. Orders (10, 3) at 10:00, (10, 5) at 10:20, (20, 1) at 11:05, a bound at
    12:00, into an hourly GROUP BY: after step 2 nothing is released and the 10:00 group is open
    with COUNT 2, SUM 8; step 3 closes it (ORDERS passes 11:00), releasing (10:00, 10, 2, 8) and
    opening 11:00's group; step 4 (the bound) releases (11:00, 20, 1, 1). Moving back and forth
    leaves the query as it is."""
    from streamsql.widgets import StepScrubber
    wb.execute("CREATE STREAM Orders (productId INTEGER, units INTEGER)")
    q = wb.query("SELECT STREAM FLOOR(Orders.ROWTIME TO HOUR) AS ROWTIME, productId, COUNT(*) AS c, "
                 "SUM(units) AS units FROM Orders GROUP BY FLOOR(Orders.ROWTIME TO HOUR), productId", name="agg")
    wb.insert("Orders", {"productId": 10, "units": 3}, rowtime="2006-10-10 10:00:00")
    wb.insert("Orders", {"productId": 10, "units": 5}, rowtime="10:20")
    wb.insert("Orders", {"productId": 20, "units": 1}, rowtime="11:05")
    wb.punctuate("Orders", "12:00")
    q.wait()
    before = [(r.step, r.values) for r in q.rows]
    s = StepScrubber(q)
    assert (s.first, s.last, s.slider.value) == (1, 4, 4)
    # it says where it is: at the last step it follows the query, elsewhere it holds its step
    assert s.position() == "step 4 of 4 · following" and "step 4 of 4 · following" in s.where.value
    s.slider.value = 2
    assert s.position() == "step 2 of 4 · held at step 2" and "held at step 2" in s.where.value
    assert s.text().startswith("step 2 of 4 · held at step 2\nAfter step 2: ORDERS 10:20 10 5")
    st = s.state()
    assert st.event == "ORDERS 10:20 10 5" and st.rows == [] and st.clocks == [("ORDERS", ms("2006-10-10 10:20:00"))]
    assert st.open == [["aggregate", "group 2006-10-10 10:00:00, 10", "COUNT(*) = 2, SUM(units) = 8",
                        "when ORDERS reaches 2006-10-10 11:00:00"]]
    assert "After step 2" in s.panel.value and "SUM(units) = 8" in s.panel.value
    s.next.click()
    st = s.state()
    assert st.step == 3 and st.rows == [["3", "2006-10-10 10:00:00", "10", "2", "8"]] and st.row_classes == ["at-step"]
    assert st.bound == ms("2006-10-10 11:00:00") and [r[1] for r in st.open] == ["group 2006-10-10 11:00:00, 20"]
    s.move(5)
    assert s.slider.value == 4 and [r[0] for r in s.state().rows] == ["3", "4"] and s.state().open == []
    s.prev.click()
    s.prev.click()
    assert s.slider.value == 2
    assert [(r.step, r.values) for r in q.rows] == before and q.running
    # in the workbench, the step table marks the scrubber's step
    ui = workbench(q)
    ui.tabs.selected_index = 1
    ui.scrubber.slider.value = 3
    redrawn()
    assert ui.steps.highlight == 3 and re.search(r'<tr class="at-step"><td style="[^"]*">3</td>', ui.steps.steps_html.value)
    assert ui.steps.steps_html.value.count('class="at-step"') == 1
    assert "at-step" not in "".join(ui.steps.static_parts())
    # and the timeline marks it on its step axis (not when the scrubber is at the last step)
    marks = lambda: [v["step"] for v in vega.spec_of(ui.timeline.chart())["data"]["values"]
                     if v["what"] == "scrubber step"]
    assert marks() == [3]
    ui.tabs.selected_index = 0
    redrawn()
    assert [v["step"] for v in ui.timeline.view.values if v["what"] == "scrubber step"] == [3]   # the live chart too
    ui.scrubber.slider.value = ui.scrubber.last
    assert marks() == []
    # a new event: the slider reaches it; it was not at the end, so it stays where it was
    wb.insert("Orders", {"productId": 30, "units": 2}, rowtime="12:10")
    q.wait()
    s.extend()
    assert (s.last, s.slider.value) == (5, 2) and s.position() == "step 2 of 5 · held at step 2"
    s.slider.value = 5
    wb.insert("Orders", {"productId": 30, "units": 4}, rowtime="12:20")
    q.wait()
    s.extend()          # at the end, it moves on with the query
    assert (s.last, s.slider.value) == (6, 6) and s.position() == "step 6 of 6 · following"


def test_timeline_stacks_many_marks_at_one_spot_and_labels_them_once(wb_local):
    """Twelve rows at one rowtime: the chart draws five of them spread apart, the fifth's tooltip
    counts the other seven, and the spot carries one label naming the run of steps."""
    from streamsql.widgets.timeline_data import STACK, drawn
    wb_local.execute("CREATE STREAM S (x INTEGER)")
    q = wb_local.query("SELECT STREAM ROWTIME, x FROM S", name="s")
    for x in range(12):
        wb_local.insert("S", {"x": x}, rowtime="2006-10-10 10:00:00")
    lanes, recs = timeline_records(q)
    rows = [r for r in recs if r["what"] == "row"]
    assert len(rows) == 12                                             # the data keeps every row
    shown = [r for r in drawn(recs) if r["lane"] == "S" and r["t"] == ms("2006-10-10 10:00:00")]
    assert len(shown) == STACK == 5
    assert sorted(r["dy"] for r in shown) == [-12.0, -6.0, 0.0, 6.0, 12.0]      # 24 px, 5 marks
    assert shown[-1]["detail"].endswith("(and 8 more marks at this time)")   # 7 rows and the clock
    assert [r["label"] for r in recs if r["label"]] == ["1–12", "1–12"]      # the input spot, the output spot
    spec = vega.spec_of(timeline_chart(q))
    assert len([v for v in spec["data"]["values"] if v["what"] == "row"]) == 5


def test_calculator_errors_are_wrapped_in_the_error_colour_and_marked_in_the_step_table(wb_local):
    """A row refused for a calculator error: one cell spanning the value columns, wrapped and in the
    error colour, in the live table; the step table marks it at its step, before that step's rows."""
    wb_local.execute("CREATE STREAM S (a INTEGER, b INTEGER)")
    q = wb_local.query("SELECT STREAM ROWTIME, a, a / b AS r, b FROM S", name="div")
    wb_local.insert("S", {"a": 6, "b": 2}, rowtime="2006-10-10 10:00:00")
    wb_local.insert("S", {"a": 1, "b": 0}, rowtime="10:05")
    v = QueryView(q)
    assert re.search(r'<td colspan="3" style="[^"]*white-space:normal;color:#b00020[^"]*">x DIVISION_BY_ZERO:',
                     v.table.value)
    t = query_step_table(q)
    assert t[1][-1] == "10:00 6 3 2"
    assert t[2][-1] == "✗ 10:05 DIVISION_BY_ZERO"


def test_a_view_redraws_only_when_what_it_shows_changed(wb_local):
    """Events on a stream the query does not read, and a second look with nothing new, redraw
    nothing; an event on its own stream redraws each part once, off the injecting thread."""
    wb_local.execute("CREATE STREAM S (x INTEGER); CREATE STREAM R (x INTEGER)")
    q = wb_local.query("SELECT STREAM ROWTIME, x FROM S", name="s")
    wb_local.insert("S", {"x": 0}, rowtime="2006-10-10 09:00:00")
    ui = WorkbenchView(q)
    redrawn()
    parts = [ui.live, ui.timeline, ui.injectors["S"]]
    before = [p.redraws for p in parts]
    hidden = ui.steps.redraws
    for k in range(5):
        wb_local.insert("R", {"x": k}, rowtime=f"2006-10-10 10:0{k}:00")
    redrawn()
    for p in parts:
        p.mark()                                   # asked again, nothing new
    redrawn()
    assert [p.redraws for p in parts] == before
    wb_local.insert("S", {"x": 1}, rowtime="2006-10-10 10:10:00")
    redrawn()
    assert [p.redraws - b for p, b in zip(parts, before)] == [1, 1, 1]
    assert not ui.steps.visible and ui.steps.redraws == hidden      # a hidden tab (the step table) is not redrawn


def test_a_chart_redraws_once_per_click_after_the_queries_caught_up(wb_spark, monkeypatch):
    """On Spark a click's row shows twice in a view: as an input when it is committed, and as a
    release when the micro-batch is through. The rows table follows both; the timeline chart (dear
    to draw) waits until every query of the workbench has caught up, then draws once, the release
    included, so that the click's micro-batches get the CPU first."""
    monkeypatch.setattr(REDRAWER, "QUIET_MAX", 60.0)        # a loaded machine must not time it out
    wb_spark.execute("CREATE STREAM S (x INTEGER)")
    q = wb_spark.query("SELECT STREAM ROWTIME, x FROM S WHERE x > 0", name="f")
    other = wb_spark.query("SELECT STREAM ROWTIME, x * 2 AS y FROM S", name="g")
    live, chart = QueryView(q), TimelineView(q)
    q.wait(60)
    redrawn()
    for k in range(3):
        rows, charts = live.redraws, chart.redraws
        wb_spark.insert("S", {"x": k + 1}, rowtime=f"2006-10-10 10:0{k}:00")
        redrawn()
        assert q.wb.runtime.caught_up(q) and q.wb.runtime.caught_up(other)
        assert chart.redraws - charts == 1, f"click {k}: the chart drew {chart.redraws - charts} times"
        assert live.redraws - rows >= 1
        released = [r for r in chart.view.values if r["what"] == "released row"]
        assert len(released) == k + 1, released          # the one drawing has the click's release


def test_a_static_snapshot_makes_no_widget(wb_local):
    """The snapshot keeper draws each view's static HTML after every quiet spell: that must not
    open widgets (each one is sent to the browser and never closed: a leak per snapshot)."""
    from ipywidgets.widgets.widget import _instances
    wb_local.execute("CREATE STREAM S (x INTEGER)")
    q = wb_local.query("SELECT STREAM ROWTIME, x FROM S", name="s")
    ui = WorkbenchView(q)
    wb_local.insert("S", {"x": 1}, rowtime="2006-10-10 10:00:00")
    redrawn()
    before = set(_instances)
    for k in range(3):
        wb_local.insert("S", {"x": k}, rowtime=f"2006-10-10 10:0{k + 1}:00")
        redrawn()
        html = ui.static_html()
        assert "Timeline" in html and "Inject" in html and "Steps" in html
    assert set(_instances) == before


def test_the_live_table_of_a_long_query_formats_only_its_last_rows(wb_local):
    """The last ``limit`` entries made from the last rows equal those of the whole list (a
    calculator error among them, before the rows of its step), and the count is of them all."""
    from streamsql.widgets.live import output_entries, output_entries_of, snapshot
    wb_local.execute("CREATE STREAM S (a INTEGER, b INTEGER)")
    q = wb_local.query("SELECT STREAM ROWTIME, a, a / b AS r FROM S", name="div")
    for k in range(40):
        wb_local.insert("S", {"a": k, "b": 0 if k == 35 else 1}, rowtime=f"2006-10-10 10:{k:02d}:00")
    whole, n = output_entries_of(snapshot(q), False)
    assert n == 40 and sum("error" in e for e in whole) == 1
    for last in (0, 1, 3, 5, 6, 20, 60):
        got, total = output_entries(q, last=last)
        assert total == 40 and got == (whole[-last:] if last else []), last


def test_the_snapshot_keeper_waits_for_quiet_and_an_event_stops_its_sweep(wb_local):
    """Snapshots are drawn between clicks: not while events come (up to ``LONGEST``, then one per
    pass), and a sweep that an event interrupts leaves the rest for the next quiet spell."""
    from streamsql.widgets import static
    from streamsql.widgets.static import SnapshotKeeper
    keeper = SnapshotKeeper()
    drawn: list[str] = []

    poke = [False]

    class Frontend:               # where update_display would send the snapshot
        def __init__(self, name):
            self.name = name

        def update(self, data, raw=False):
            assert "streamsql-static" in data["text/html"]
            drawn.append(self.name)
            if poke[0]:               # an event arrives while this snapshot is drawn
                poke[0] = False
                keeper._poked_at = time.monotonic() + 0.01

    wb_local.execute("CREATE STREAM S (x INTEGER)")
    views = []
    for name in "abc":
        v = QueryView(wb_local.query("SELECT STREAM ROWTIME, x FROM S", name=name))
        v._static_handle = Frontend(name)
        views.append(v)
    wb_local.insert("S", {"x": 1}, rowtime="2006-10-10 10:00:00")
    others = list(static._shown)               # the views this process displayed: only these three now
    # (a WeakSet: the keeper draws them in no set order)
    static._shown.clear()
    try:
        for v in views:
            static._shown.add(v)
        _keeper_sweeps(wb_local, keeper, views, drawn, poke)
    finally:
        static._shown.clear()
        for v in others:
            static._shown.add(v)


def _keeper_sweeps(wb_local, keeper, views, drawn, poke) -> None:
    keeper._poked_at = keeper._stale_since = time.monotonic()
    assert keeper.sweep() is False and drawn == []                 # events a moment ago: not yet
    keeper._poked_at = keeper._stale_since = time.monotonic() - keeper.QUIET - 0.1
    poke[0] = True
    assert keeper.sweep() is False and len(drawn) == 1, drawn      # an event came during the first
    keeper._poked_at = time.monotonic() - keeper.QUIET - 0.1
    for v in views:
        v._static_at = 0.0
    assert keeper.sweep() is True and sorted(drawn) == ["a", "b", "c"]     # the rest at the next quiet spell
    # while events keep coming, a snapshot waits at most LONGEST, then they are drawn one per pass
    keeper._poked_at, keeper._stale_since = time.monotonic(), time.monotonic() - keeper.LONGEST - 1
    wb_local.insert("S", {"x": 2}, rowtime="2006-10-10 10:01:00")
    for v in views:
        v._static_at = 0.0
    assert [keeper.sweep() for _ in range(3)] == [False, False, True] and sorted(drawn[3:]) == ["a", "b", "c"]
    assert views[0].static_key() == views[0]._static_last


def test_a_snapshot_and_the_live_view_name_the_step_the_step_table_ends_at(wb):
    """Rows, then a bound that says nothing new (eclipsed) and a late row: both are steps of the
    query's step table but add no trace record. Once the query has caught up, what is held or
    open is as of the step table's last step, in the live view, its snapshot and the workbench's
    (the union holds p2 at 01:06 for Q's clock: a held row, so the title names a step)."""
    wb.execute("CREATE STREAM P (name VARCHAR(10))")
    wb.execute("CREATE STREAM Q (name VARCHAR(10))")
    q = wb.query("SELECT STREAM ROWTIME, name FROM P UNION ALL SELECT STREAM ROWTIME, name FROM Q", name="u")
    wb.insert("P", {"name": "p1"}, rowtime="2006-10-10 01:00:00")
    wb.insert("P", {"name": "p2"}, rowtime="01:06")
    wb.insert("Q", {"name": "q1"}, rowtime="01:02")
    wb.punctuate("Q", "01:04")
    wb.punctuate("Q", "01:04")                                   # step 5: eclipsed (says nothing new)
    with pytest.raises(Exception, match="late"):
        wb.insert("Q", {"name": "late"}, rowtime="01:01")        # step 6: late
    q.wait()
    assert [r["status"] for r in wb.event_trace][-2:] == ["eclipsed", "late"]
    assert query_step_table(q)[-1][0] == "6"
    v = QueryView(q, held=True)
    ui = workbench(q)
    redrawn()
    for html_text in (v.open_table.value, "".join(v.static_parts()), ui.static_html()):
        assert "Held after step 6, and what each waits for" in html_text
        assert "after step 4" not in html_text and "after step 5" not in html_text
