"""Window shapes (docs/semantics.md 3.7): what the scenarios (tests/scenarios/window_*) do not show.
Every expected row, step and bound below is derived by hand from the rules; the derivation is
written next to it. Times are on 2006-10-10.

The scenarios replay TUMBLE, HOP, CUMULATE and SESSION (as group windows and as window table
functions), Top-N, deduplication and a window join on both runtimes (test_scenarios.py,
test_trace_equality.py); here: RANK and DENSE_RANK with ties, stamps at a window's start or time,
hops with gaps, offsets, named arguments, views and sub-queries as the table, calculator errors,
the unfused path, global sessions, late rows, Top-N over a window aggregation, the trace's words,
state that ends with its windows, and the refusals.
"""
from __future__ import annotations

import pytest

from streamsql.engine.errors import SqlError
from streamsql.engine.plan import Aggregate, Rank, WindowAggregate, WindowTable
from test_aggregate_support import bound, hm, hosts, row, run, ts

S = "CREATE STREAM S (k VARCHAR(5), x INTEGER);"


def plan_nodes(q) -> list:
    out = []

    def walk(n):
        out.append(n)
        for c in n.inputs():
            walk(c)
    walk(q.plan.root)
    return out


# --------------------------------------------------------------------------- Top-N with ties

RANKED = [row("S", "10:01", k="a1", x=5), row("S", "10:02", k="a2", x=7), row("S", "10:03", k="a3", x=7),
          row("S", "10:04", k="a4", x=3), row("S", "10:05", k="a5", x=5), bound("S", "10:10")]


def topn(fn: str, n: int) -> str:
    return (f"SELECT STREAM k, x, r FROM (SELECT STREAM k, x, {fn}() OVER (PARTITION BY window_start, window_end "
            f"ORDER BY x DESC) AS r FROM TABLE(TUMBLE(TABLE S, DESCRIPTOR(ROWTIME), INTERVAL '10' MINUTE))) "
            f"WHERE r <= {n}")


@pytest.mark.parametrize("fn,n,expected,kept", [
    # x by descending value: 7 (a2), 7 (a3), 5 (a1), 5 (a5), 3 (a4); ties by arrival
    ("ROW_NUMBER", 3, [("a2", 7, 1), ("a3", 7, 2), ("a1", 5, 3)], 3),
    # RANK: the 7s share 1, the 5s share 3 (two rows before them), 3 is 5: r <= 3 keeps four rows
    ("RANK", 3, [("a2", 7, 1), ("a3", 7, 1), ("a1", 5, 3), ("a5", 5, 3)], 4),
    # DENSE_RANK: 7 -> 1, 5 -> 2, 3 -> 3: r <= 2 keeps the same four
    ("DENSE_RANK", 2, [("a2", 7, 1), ("a3", 7, 1), ("a1", 5, 2), ("a5", 5, 2)], 4),
])
def test_ranking_functions_number_a_window_once_it_is_complete(wb, fn, n, expected, kept):
    # the 10:00-10:10 window's rows reach the Top-N when the bound 10:10 closes it (step 6); all are
    # released there, stamped 10:10, by number, then arrival
    r = run(S, topn(fn, n), RANKED, wb=wb)
    assert r.table("k", "x", "r") == [(6, "10:10:00") + e for e in expected]
    if wb.engine == "local":
        ranks = [h for h in hosts(r.q) if type(h.op).__name__ == "RankOp"]
        assert ranks[0].op.node.limit == n            # the WHERE went inside
        # a partition holds only the rows it can still release (checked before the window closes)
        r2 = run(S, topn(fn, n), RANKED[:-1])
        op = [h.op for h in hosts(r2.q) if type(h.op).__name__ == "RankOp"][0]
        assert op.state_size() == 0       # the window table holds the rows until 10:10 ...
        wt = [h for h in hosts(r2.q) if type(h.op).__name__ == "WindowTableOp"][0]
        assert len(wt.pending) == 5       # ... as rows waiting for the present (rule 1)


def test_top_n_keeps_only_what_it_can_release():
    # over a period, the Top-N partition itself accumulates: ROW_NUMBER <= 2 keeps two rows
    q = """SELECT STREAM k, x FROM (SELECT STREAM k, x, ROW_NUMBER() OVER (PARTITION BY FLOOR(ROWTIME TO HOUR)
           ORDER BY x DESC) AS rn FROM S) WHERE rn <= 2"""
    r = run(S, q, RANKED[:-1])
    op = [h.op for h in hosts(r.q) if type(h.op).__name__ == "RankOp"][0]
    assert op.state_size() == 2
    more = run(S, q, RANKED[:-1] + [bound("S", "11:00")])
    # the 10:00 hour completes at 11:00 (step 6), stamped 11:00: a2 (7), a3 (7)
    assert more.table("k", "x") == [(6, "11:00:00", "a2", 7), (6, "11:00:00", "a3", 7)]
    op = [h.op for h in hosts(more.q) if type(h.op).__name__ == "RankOp"][0]
    assert op.state_size() == 0


def test_top_n_over_a_window_aggregation():
    # Flink's "Top-N after window aggregation": per 10 minutes the key with the largest total.
    #   10:00-10:10: a 1 + 4 = 5, b 3: a first. The aggregation releases both at the bound 10:10 (step 4),
    #   stamped 10:10; its output clock is then the next end, 10:20, past 10:10: the Top-N's
    #   partition is complete at the same step and releases (10:10, a, 5, 1).
    #   10:10-10:20: b 2: released at the bound 10:20 (step 6).
    q = """SELECT STREAM * FROM (
             SELECT STREAM window_end, k, total, ROW_NUMBER() OVER (PARTITION BY window_start, window_end
                                                                    ORDER BY total DESC) AS rn
             FROM (SELECT STREAM window_start, window_end, k, SUM(x) AS total
                   FROM TABLE(TUMBLE(TABLE S, DESCRIPTOR(ROWTIME), INTERVAL '10' MINUTE))
                   GROUP BY window_start, window_end, k)) WHERE rn = 1"""
    r = run(S, q, [row("S", "10:01", k="a", x=1), row("S", "10:02", k="b", x=3), row("S", "10:03", k="a", x=4),
                   bound("S", "10:10"), row("S", "10:12", k="b", x=2), bound("S", "10:20")])
    assert r.table("window_end", "k", "total", "rn") == [(4, "10:10:00", ts("10:10"), "a", 5, 1),
                                                       (6, "10:20:00", ts("10:20"), "b", 2, 1)]
    assert any(isinstance(n, Rank) and n.window_end and n.limit == 1 for n in plan_nodes(r.q))


# --------------------------------------------------------------------------- stamps

def test_a_group_window_stamped_at_its_start_or_its_time():
    # TUMBLE of an hour: 10:05 and 10:50 in 10:00-11:00 (complete at the 11:10 row, step 3), 11:10 in
    # 11:00-12:00 (complete at the bound 12:00, step 4).
    events = [row("S", "10:05", k="a", x=1), row("S", "10:50", k="a", x=2), row("S", "11:10", k="a", x=3),
              bound("S", "12:00")]
    start = run(S, """SELECT STREAM TUMBLE_START(ROWTIME, INTERVAL '1' HOUR) AS ROWTIME, COUNT(*) AS c FROM S
                      GROUP BY TUMBLE(ROWTIME, INTERVAL '1' HOUR)""", events)
    # stamped with the start; the output bound is the least start of a window still open or openable:
    # the start of the hour containing the clock (10:00 until step 3, then 11:00, then 12:00)
    assert start.table("c") == [(3, "10:00:00", 2), (4, "11:00:00", 1)]
    assert start.bounds == {1: "10:00:00", 3: "11:00:00", 4: "12:00:00"}
    time = run(S, """SELECT STREAM TUMBLE_ROWTIME(ROWTIME, INTERVAL '1' HOUR) AS ROWTIME, COUNT(*) AS c FROM S
                     GROUP BY TUMBLE(ROWTIME, INTERVAL '1' HOUR)""", events)
    # window_time = end - 1 ms; the bound the next end minus 1 ms
    assert time.table("c") == [(3, "10:59:59.999", 2), (4, "11:59:59.999", 1)]
    assert time.bounds == {1: "10:59:59.999", 3: "11:59:59.999", 4: "12:59:59.999"}


# --------------------------------------------------------------------------- shapes

def test_a_hop_shorter_than_its_slide_leaves_gaps():
    # HOP every hour of 30 minutes: windows [h, h:30). 10:10 is in 10:00-10:30 (complete at the 10:40
    # row, step 2); 10:40 falls in no window; 11:20 in 11:00-11:30 (complete at the bound, step 4).
    # After step 2 the next end after 10:40 is 11:30.
    r = run(S, """SELECT STREAM window_start, COUNT(*) AS c
                  FROM TABLE(HOP(TABLE S, DESCRIPTOR(ROWTIME), INTERVAL '1' HOUR, INTERVAL '30' MINUTE))
                  GROUP BY window_start, window_end""",
            [row("S", "10:10", k="a", x=1), row("S", "10:40", k="a", x=1), row("S", "11:20", k="a", x=1),
             bound("S", "12:00")])
    assert r.table("window_start", "c") == [(2, "10:30:00", ts("10:00"), 1), (4, "11:30:00", ts("11:00"), 1)]
    assert r.bounds == {1: "10:30:00", 2: "11:30:00", 4: "12:30:00"}


@pytest.mark.parametrize("args", [
    "TABLE S, DESCRIPTOR(ROWTIME), INTERVAL '1' HOUR, INTERVAL '15' MINUTE",
    "TABLE S, DESCRIPTOR(ROWTIME), INTERVAL '1' HOUR, INTERVAL '75' MINUTE",     # offsets are modulo the size
    "TABLE S, DESCRIPTOR(ROWTIME), INTERVAL '1' HOUR, INTERVAL '-45' MINUTE",
    "DATA => TABLE S, TIMECOL => DESCRIPTOR(ROWTIME), OFFSET => INTERVAL '15' MINUTE, SIZE => INTERVAL '1' HOUR",
])
def test_offsets_and_named_arguments(args):
    # every form is the tumble [h:15, h+1:15): the 10:20 row's window is 10:15-11:15
    r = run(S, f"SELECT STREAM k, window_start, window_end FROM TABLE(TUMBLE({args}))",
            [row("S", "10:20", k="a", x=1), bound("S", "11:15")])
    assert r.table("k", "window_start", "window_end") == [(2, "11:15:00", "a", ts("10:15"), ts("11:15"))]


def test_the_table_can_be_a_view_or_a_query():
    ddl = S + "CREATE VIEW Big AS SELECT STREAM * FROM S WHERE x > 2;"
    events = [row("S", "10:01", k="a", x=1), row("S", "10:02", k="b", x=5), bound("S", "10:10")]
    # only b passes the view's WHERE; its window 10:00-10:10 leaves at the bound (step 3)
    for table in ("TABLE Big", "TABLE (SELECT STREAM * FROM S WHERE x > 2)", "(SELECT STREAM * FROM Big)"):
        r = run(ddl, f"SELECT STREAM k FROM TABLE(TUMBLE({table}, DESCRIPTOR(ROWTIME), INTERVAL '10' MINUTE))",
                events)
        assert r.table("k") == [(3, "10:10:00", "b")], table


def test_a_session_without_keys_is_one_session():
    # gap 10 minutes: 10:00, 10:05 one session [10:00, 10:15); 10:20 opens the next and its clock
    # completes the first (step 3); [10:20, 10:30) completes at the bound 10:30 (step 4)
    r = run(S, """SELECT STREAM k, window_start, window_end
                  FROM TABLE(SESSION(TABLE S, DESCRIPTOR(ROWTIME), INTERVAL '10' MINUTE))""",
            [row("S", "10:00", k="a", x=1), row("S", "10:05", k="b", x=1), row("S", "10:20", k="a", x=1),
             bound("S", "10:30")])
    assert r.table("k", "window_start", "window_end") == [
        (3, "10:15:00", "a", ts("10:00"), ts("10:15")), (3, "10:15:00", "b", ts("10:00"), ts("10:15")),
        (4, "10:30:00", "a", ts("10:20"), ts("10:30"))]


def test_a_late_row_never_reopens_a_window():
    # 10:00-10:10 completes at the 10:12 row (step 2); the 10:05 row is late (its stream's clock is
    # 10:12): refused at insertion; 10:10-10:20 (one row) at the bound 10:20 (step 4)
    r = run(S, """SELECT STREAM TUMBLE_END(ROWTIME, INTERVAL '10' MINUTE) AS ROWTIME, COUNT(*) AS c FROM S
                  GROUP BY TUMBLE(ROWTIME, INTERVAL '10' MINUTE)""",
            [row("S", "10:01", k="a", x=1), row("S", "10:12", k="a", x=1), row("S", "10:05", k="a", x=1),
             bound("S", "10:20")])
    assert [o.status for o in r.outcomes] == ["ok", "ok", "late", "ok"]
    assert r.table("c") == [(2, "10:10:00", 1), (4, "10:20:00", 1)]


# --------------------------------------------------------------------------- sessions in micro-batches

SESSION_EVENTS = [row("S", "09:58", k="c", x=1), row("S", "10:00", k="a", x=2), bound("S", "10:02"),
                  row("S", "10:03", k="a", x=3), row("S", "10:05", k="b", x=4), row("S", "10:07", k="a", x=5),
                  row("S", "10:06", k="b", x=9), row("S", "10:08", k="b", x=6), bound("S", "10:20")]
SESSIONS = """SELECT STREAM SESSION_END(ROWTIME, INTERVAL '4' MINUTE) AS e, k, COUNT(*) AS n, SUM(x) AS s
              FROM S GROUP BY SESSION(ROWTIME, INTERVAL '4' MINUTE), k"""


@pytest.mark.parametrize("engine", ["local", "spark"])
def test_sessions_in_micro_batches_give_the_rows_and_bounds_of_one_event_at_a_time(engine, tmp_path):
    # Gap 4 minutes. On Spark four events a micro-batch, two buckets, no trace (its window's rows
    # are stepped one by one): a session's rows within a batch are pre-combined, and the frontier
    # inside such a run must still be the one of the rows stepped one by one (a GROUP BY over the
    # sessions releases by it).
    # - c: 09:58, closed by the bound 10:02 (step 3): [09:58, 10:02), 1 row.
    # - a: 10:00, 10:03 (steps 2, 4: one run in the first batch); 10:07 is exactly a gap after
    #   10:03: it closes [10:00, 10:07) at its own step (6), 2 rows, 5, and opens [10:07, 10:11),
    #   which the bound 10:20 (step 9) closes.
    # - b: 10:05, 10:08 (steps 5, 8: one run in the second batch, a's 10:07 between them); the
    #   10:06 row (step 7) is late (the clock is 10:07), refused; [10:05, 10:12) at step 9.
    # The sessions' bound, the least of (last + gap) over the open sessions and clock + gap: step
    # 1 10:02 (c); 2 still 10:02; 3 10:04 (a's 10:00 + 4: inside a's run); 4 10:07; 5 10:07; 6
    # 10:09 (b's 10:05 + 4: inside b's run); 8 10:11 (a); 9 nothing open: 10:20 + 4 = 10:24.
    # The GROUP BY over them completes 5-minute periods by that bound: [10:00, 10:05) with c's row
    # at step 4 (10:07; at step 3 it was 10:04), [10:05, 10:10) with a's first at step 8 (10:11),
    # [10:10, 10:15) at step 9.
    import streamsql
    kw = {"batch_events": 4, "buckets": 2} if engine == "spark" else {}
    wb = streamsql.Workbench(tmp_path, engine=engine, trace=False, **kw)
    try:
        outer = f"""SELECT STREAM STEP(ROWTIME BY INTERVAL '5' MINUTE) AS p, COUNT(*) AS sessions, SUM(n) AS n
                    FROM ({SESSIONS}) AS x GROUP BY STEP(ROWTIME BY INTERVAL '5' MINUTE)"""
        r = run(S, SESSIONS, [], wb=wb)
        over = wb.query(outer)
        if engine == "spark":      # the session stage pre-combined: in the log source, and by mapInArrow
            assert r.q.handle.scan_combined and over.handle.precombined == [0]
        outcomes = wb.inject(SESSION_EVENTS)
        r.q.wait(timeout=300)
        over.wait(timeout=300)
        assert [o.status for o in outcomes] == ["ok"] * 6 + ["late", "ok", "ok"]
        first = r.q.start_step
        assert [(o.step - first, hm(o.rowtime), o.values[1:]) for o in r.q.rows] == [
            (3, "10:02:00", ("c", 1, 1)), (6, "10:07:00", ("a", 2, 5)),
            (9, "10:11:00", ("a", 1, 5)), (9, "10:12:00", ("b", 2, 10))]
        assert {s - first: hm(b) for s, b in r.q.bounds.items()} == {
            1: "10:02:00", 3: "10:04:00", 4: "10:07:00", 6: "10:09:00", 8: "10:11:00", 9: "10:24:00"}
        assert [(o.step - over.start_step, hm(o.rowtime), o.values[1:]) for o in over.rows] == [
            (4, "10:05:00", (1, 1)), (8, "10:10:00", (1, 2)), (9, "10:15:00", (2, 3))]
    finally:
        wb.close()


# --------------------------------------------------------------------------- calculator errors

def test_a_refused_row_joins_none_of_its_windows(wb):
    # HOP of 20 minutes every 10: 10:05 is in 09:50-10:10 and 10:00-10:20. The 10:06 row's 10 / x
    # divides by zero: refused at its arrival (step 2), in no window. At the bound 10:30 (step 3)
    # both windows leave with the 10:05 row alone: COUNT 1, SUM(10 / 2) = 5.
    r = run(S, """SELECT STREAM window_end, COUNT(*) AS c, SUM(10 / x) AS s
                  FROM TABLE(HOP(TABLE S, DESCRIPTOR(ROWTIME), INTERVAL '10' MINUTE, INTERVAL '20' MINUTE))
                  GROUP BY window_start, window_end""",
            [row("S", "10:05", k="a", x=2), row("S", "10:06", k="a", x=0), bound("S", "10:30")], wb=wb)
    assert r.table("c", "s") == [(3, "10:10:00", 1, 5), (3, "10:20:00", 1, 5)]
    assert [(e.step - r.q.start_step, e.name) for e in r.q.errors] == [(2, "DIVISION_BY_ZERO")]


def test_a_where_that_can_fail_keeps_the_window_tables_rows_apart():
    # WHERE 10 / x > 1 over the window table sees its rows when their window closes (the bound 10:10,
    # step 4): the x = 0 row fails there, not at its arrival; x = 20 gives 0 (dropped), x = 2 gives 5.
    # The GROUP BY (3.3) over the window's rows stamps its group with the window's end.
    q = """SELECT STREAM window_end, COUNT(*) AS c
           FROM TABLE(TUMBLE(TABLE S, DESCRIPTOR(ROWTIME), INTERVAL '10' MINUTE)) WHERE 10 / x > 1
           GROUP BY window_start, window_end"""
    r = run(S, q, [row("S", "10:01", k="a", x=2), row("S", "10:02", k="a", x=0), row("S", "10:03", k="a", x=20),
                   bound("S", "10:10")])
    kinds = {type(n) for n in plan_nodes(r.q)}
    assert Aggregate in kinds and WindowTable in kinds and WindowAggregate not in kinds
    assert r.table("c") == [(4, "10:10:00", 1)]
    assert [(e.step - r.q.start_step, e.name) for e in r.q.errors] == [(4, "DIVISION_BY_ZERO")]
    # a WHERE that cannot fail goes before the windows: one window aggregation
    fused = run(S, q.replace("10 / x > 1", "x > 1"), [row("S", "10:01", k="a", x=2), bound("S", "10:10")])
    assert any(isinstance(n, WindowAggregate) for n in plan_nodes(fused.q))
    assert fused.table("c") == [(2, "10:10:00", 1)]


# --------------------------------------------------------------------------- what the trace says

def test_a_held_row_names_its_window():
    # the 10:05 row's copy for 10:00-11:00 waits for the clock to reach 11:00; a bound took it to 10:42
    r = run("CREATE STREAM Orders (units INTEGER);",
            "SELECT STREAM units FROM TABLE(TUMBLE(TABLE Orders, DESCRIPTOR(ROWTIME), INTERVAL '1' HOUR))",
            [row("Orders", "10:05", units=3), bound("Orders", "10:42")])
    op = [o for o in r.q.trace[-1].operators if o.operator == "windowtable"][0]
    assert [h.waits_for for h in op.held] == [
        ["the window 10:00-11:00 closes when ORDERS's clock reaches 11:00; the clock is 10:42"]]
    assert [(w.start, w.end, w.rows) for w in op.state.windows] == [(ts("10:00"), ts("11:00"), 1)]
    assert op.state.shape == "TUMBLE of 1 hour"


def test_window_state_is_gone_once_the_windows_close():
    for q in ("""SELECT STREAM COUNT(*) AS c FROM S GROUP BY SESSION(ROWTIME, INTERVAL '5' MINUTE), k""",
              """SELECT STREAM window_end, SUM(x) AS s FROM TABLE(CUMULATE(TABLE S, DESCRIPTOR(ROWTIME),
                 INTERVAL '5' MINUTE, INTERVAL '20' MINUTE)) GROUP BY window_start, window_end""",
              """SELECT STREAM k FROM TABLE(SESSION(TABLE S PARTITION BY k, DESCRIPTOR(ROWTIME), INTERVAL '5' MINUTE))"""):
        r = run(S, q, [row("S", "10:01", k="a", x=1), row("S", "10:03", k="b", x=1), row("S", "10:09", k="a", x=2)])
        assert sum(h.op.state_size() for h in hosts(r.q)) > 0
        more = run(S, q, [row("S", "10:01", k="a", x=1), row("S", "10:03", k="b", x=1), row("S", "10:09", k="a", x=2),
                          bound("S", "11:00")])
        assert sum(h.op.state_size() for h in hosts(more.q)) == 0, q
        assert all(not h.pending for h in hosts(more.q))


# --------------------------------------------------------------------------- refusals

REFUSED = [
    # item by item: what is needed, in one line
    ("SELECT STREAM COUNT(*) FROM S GROUP BY TUMBLE(x, INTERVAL '1' HOUR)",
     "TUMBLE needs the rowtime as its time argument (TUMBLE(ROWTIME, ...)); 'x' is not monotonic in the rowtime"),
    ("SELECT STREAM COUNT(*) FROM S GROUP BY HOP(FLOOR(ROWTIME TO MINUTE), INTERVAL '1' HOUR, INTERVAL '2' HOUR)",
     "HOP windows a stream by its rowtime: write HOP(ROWTIME, ...); 'FLOOR(ROWTIME TO MINUTE)' is monotonic but "
     "not the rowtime (use the align argument to move the windows)"),
    ("SELECT STREAM * FROM TABLE(TUMBLE(TABLE S, DESCRIPTOR(x), INTERVAL '1' HOUR))",
     "TUMBLE windows a stream by its rowtime: write DESCRIPTOR(ROWTIME); 'x' is a column (INTEGER), not the rowtime"),
    ("SELECT STREAM k, ROW_NUMBER() OVER (PARTITION BY k ORDER BY x) AS rn FROM S",
     "ROW_NUMBER on a stream needs a window or a monotonic period in PARTITION BY: PARTITION BY window_start, "
     "window_end of a window table function (TUMBLE, HOP, CUMULATE, SESSION) or of a window aggregation, or a "
     "period such as FLOOR(ROWTIME TO HOUR)"),
    ("SELECT STREAM a.k FROM TABLE(TUMBLE(TABLE S, DESCRIPTOR(ROWTIME), INTERVAL '1' HOUR)) a "
     "JOIN TABLE(TUMBLE(TABLE S, DESCRIPTOR(ROWTIME), INTERVAL '1' HOUR)) b ON a.window_end = b.window_end",
     "A window join joins the rows of the same window: its ON clause needs L.window_start = R.window_start AND "
     "L.window_end = R.window_end (then any keys)"),
    ("SELECT STREAM * FROM TABLE(TUMBLE(TABLE S PARTITION BY k, DESCRIPTOR(ROWTIME), INTERVAL '1' HOUR))",
     "PARTITION BY is only for SESSION windows; TUMBLE windows are the same for every row"),
    ("SELECT STREAM * FROM TABLE(CUMULATE(TABLE S, DESCRIPTOR(ROWTIME), INTERVAL '7' MINUTE, INTERVAL '1' HOUR))",
     "CUMULATE needs a size that is a whole number of steps (INTERVAL '1' HOUR is not a multiple of "
     "INTERVAL '7' MINUTE)"),
    ("SELECT STREAM TUMBLE_END(ROWTIME, INTERVAL '1' HOUR) AS e FROM S",
     "TUMBLE_END needs GROUP BY TUMBLE(...) with the same arguments in the same query"),
    ("SELECT STREAM TUMBLE_END(ROWTIME, INTERVAL '2' HOUR) AS e, COUNT(*) AS c FROM S "
     "GROUP BY TUMBLE(ROWTIME, INTERVAL '1' HOUR)",
     "TUMBLE_END must repeat the GROUP BY's TUMBLE(...) with the same arguments"),
    ("SELECT STREAM COUNT(*) FROM S GROUP BY TUMBLE(ROWTIME, INTERVAL '1' HOUR), HOP(ROWTIME, INTERVAL '1' HOUR, "
     "INTERVAL '2' HOUR)", "A GROUP BY can have only one group window (TUMBLE, HOP or SESSION)"),
    ("SELECT STREAM * FROM TABLE(TUMBLE(TABLE S, DESCRIPTOR(ROWTIME), INTERVAL '0' HOUR))",
     "The size of TUMBLE must be positive"),
    ("SELECT STREAM * FROM TABLE(TUMBLE(TABLE S, DESCRIPTOR(ROWTIME), INTERVAL '1' MONTH))",
     "The size of TUMBLE must be a day-time interval (not months or years)"),
    ("SELECT STREAM * FROM TABLE(TUMBLE(TABLE S, DESCRIPTOR(ROWTIME)))",
     "TUMBLE needs its size: TUMBLE(TABLE s, DESCRIPTOR(ROWTIME), size [, offset])"),
    ("SELECT STREAM * FROM TABLE(SPIN(TABLE S, DESCRIPTOR(ROWTIME), INTERVAL '1' HOUR))",
     "Unknown table function SPIN; the window table functions are TUMBLE, HOP, CUMULATE and SESSION"),
    ("SELECT * FROM TABLE(TUMBLE(TABLE S, DESCRIPTOR(ROWTIME), INTERVAL '1' HOUR))",
     "TUMBLE in FROM needs a stream: use SELECT STREAM (window table functions are not supported in relational "
     "queries)"),
    ("SELECT STREAM k, ROW_NUMBER() OVER (PARTITION BY FLOOR(ROWTIME TO HOUR) ROWS 2 PRECEDING) AS rn FROM S",
     "ROW_NUMBER takes no window frame (ROWS or RANGE): it numbers the whole partition"),
    ("SELECT STREAM k, RANK() OVER (PARTITION BY FLOOR(ROWTIME TO HOUR) ORDER BY x) AS r, "
     "SUM(x) OVER (ROWS 2 PRECEDING) AS s FROM S",
     "RANK cannot be combined with OVER aggregates in one select list; compute them in a sub-query"),
    ("SELECT STREAM CUMULATE(ROWTIME, INTERVAL '1' HOUR) AS c FROM S",
     "CUMULATE is a window: use it as a window table function in FROM (TABLE(CUMULATE(TABLE s, "
     "DESCRIPTOR(ROWTIME), ...)))"),
    ("SELECT STREAM TUMBLE(ROWTIME, INTERVAL '1' HOUR) AS w, COUNT(*) AS c FROM S "
     "GROUP BY TUMBLE(ROWTIME, INTERVAL '1' HOUR)",
     "TUMBLE(...) is the group window; in SELECT use TUMBLE_START(...) or TUMBLE_END(...)"),
]


@pytest.mark.parametrize("sql,message", REFUSED, ids=[m[:40] for _s, m in REFUSED])
def test_refusals_say_what_is_needed(wb_local, sql, message):
    wb_local.execute(S)
    with pytest.raises(SqlError) as e:
        wb_local.query(sql)
    assert e.value.message == message
    # the session stays usable
    assert wb_local.query("SELECT STREAM k FROM S").name


# --------------------------------------------------------------------------- the timeline

def test_the_timeline_draws_each_window_as_a_band_on_its_level():
    # HOP of 3 hours every hour: the 10:17 row is in 08:00-11:00, 09:00-12:00, 10:00-13:00; the 11:02
    # row in 09:00-12:00, 10:00-13:00, 11:00-14:00. The 11:02 row closes 08:00-11:00 (step 2), the
    # bound 12:00 closes 09:00-12:00 (step 3); 10:00-13:00 and 11:00-14:00 are open. Levels: the
    # first free at a window's start, by start: 08:00 -> 0, 09:00 -> 1, 10:00 -> 2, 11:00 -> 0 (free
    # since 11:00); three levels, 6 px apart around the lane's middle.
    from streamsql.widgets.timeline_data import timeline_records
    r = run("CREATE STREAM Orders (units INTEGER);",
            """SELECT STREAM window_end, COUNT(*) AS c FROM TABLE(HOP(TABLE Orders, DESCRIPTOR(ROWTIME),
               INTERVAL '1' HOUR, INTERVAL '3' HOUR)) GROUP BY window_start, window_end""",
            [row("Orders", "10:17", units=1), row("Orders", "11:02", units=2), bound("Orders", "12:00")])
    lanes, recs = timeline_records(r.q)
    bands = sorted((x["what"], x["t"], x["t2"], x["level"], x["band"]) for x in recs
                   if x["what"] in ("window", "open window"))
    assert bands == [("open window", ts("10:00"), ts("13:00"), 2, 6.0), ("open window", ts("11:00"), ts("14:00"), 0, -6.0),
                     ("window", ts("08:00"), ts("11:00"), 0, -6.0), ("window", ts("09:00"), ts("12:00"), 1, 0.0)]
    assert all(x["lane"] == "windowaggregate" for x in recs if x["what"] in ("window", "open window"))
    detail = {x["t"]: x["detail"] for x in recs if x["what"] in ("window", "open window")}
    assert detail[ts("08:00")].startswith("the window 08:00-11:00 (COUNT(*) = 1) closed when ORDERS's clock reached "
                                          "2006-10-10 11:00:00, at step 2")
    assert detail[ts("10:00")].startswith("the window 10:00-13:00 (COUNT(*) = 2) closes when ORDERS's clock reaches "
                                          "2006-10-10 13:00:00; the clock is 2006-10-10 12:00:00")
    # the other marks keep to the lane's middle
    assert all(x["band"] == 0 and x["level"] is None for x in recs if x["what"] not in ("window", "open window"))
