"""The native twin (docs/native.md) on real Spark: three queries (a window join, an hourly GROUP BY, a
UNION ALL) over events one per micro-batch. Every expectation below is worked out by hand from
Spark's rules, not copied from a run:

- Spark's watermark after a step is the minimum over the inputs of the maximum event time seen
  (minus the delay); none until every input has had a row (Spark's 0).
- Each step is one micro-batch; a stateful query adds a no-data batch after a step that moved
  the watermark (Spark's default), and that batch emits what the new watermark completes.
- A stateless query (UNION ALL) emits every row in the batch that reads it and drops nothing.
- An inner interval join emits a pair in the batch where its second row arrives; it drops a row
  whose event time is at or below the watermark in force.
- A window aggregation emits a window once the watermark reaches its end; it drops a row whose
  window has already ended by the watermark in force.

The final content of each side equals the relational result over all rows, less the rows that
side refused: Spark's dropped rows for the twin, the late rows for the query.
"""
from __future__ import annotations

import time
from collections import Counter

import pytest

from streamsql.engine import time as T
from streamsql.engine.native import NativeUnsupported, content

DAY = "2006-10-10 "


def t(hhmm: str) -> int:
    return T.parse_timestamp(DAY + (hhmm if hhmm.count(":") == 2 else hhmm + ":00"))


def inject(wb, events):
    """``(stream, time, values)`` rows and ``(stream, time)`` bounds; late rows are refused
    (LateRowError) and go to the error stream, as the rules say."""
    from streamsql.engine.errors import LateRowError
    for e in events:
        try:
            if len(e) == 2:
                wb.punctuate(e[0], DAY + e[1])
            else:
                wb.insert(e[0], e[2], rowtime=DAY + e[1])
        except LateRowError:
            pass


def observed(twin):
    """Per step: (rows emitted with their batch offset in the step, batches, watermark, dropped)."""
    out = {}
    for s in twin.steps:
        first = s.batches[0].batch
        rows = [(b.batch - first, r.rowtime, r.values) for b in s.batches for r in b.rows]
        out[s.step] = (rows, len(s.batches), s.watermark, s.dropped)
    return out


JOIN_EVENTS = [
    ("Orders", "10:00", {"orderId": 1, "ticker": "ORCL", "amount": 100}),
    ("Orders", "10:03", {"orderId": 2, "ticker": "YHOO", "amount": 25}),
    ("Trades", "10:02", {"orderId": 1, "ticker": "ORCL", "amount": 60}),
    ("Trades", "10:04", {"orderId": 2, "ticker": "YHOO", "amount": 25}),
    ("Trades", "10:07:30", {"orderId": 1, "ticker": "ORCL", "amount": 30}),
    ("Trades", "10:11"),
    ("Orders", "10:10"),
    ("Trades", "10:12", {"orderId": 1, "ticker": "ORCL", "amount": 10}),
    ("Orders", "10:02", {"orderId": 1, "ticker": "ORCL", "amount": 70}),     # late for both
]


def test_join_twin_seed_002_query_1(wb_spark):
    wb = wb_spark
    wb.execute("CREATE STREAM Orders (orderId INTEGER, ticker VARCHAR(10), amount INTEGER);"
               "CREATE STREAM Trades (orderId INTEGER, ticker VARCHAR(10), amount INTEGER)")
    q = wb.query("SELECT STREAM ROWTIME, o.orderId, o.ticker, o.amount AS orderAmount, t.amount AS tradeAmount "
                 "FROM Orders AS o JOIN Trades OVER (RANGE INTERVAL '10' MINUTE FOLLOWING) AS t "
                 "ON o.orderId = t.orderId", name="matched")
    inject(wb, JOIN_EVENTS)
    twin = q.native()
    o100_60, o100_30, y25 = (t("10:00"), (1, "ORCL", 100, 60)), (t("10:00"), (1, "ORCL", 100, 30)), \
        (t("10:03"), (2, "YHOO", 25, 25))
    expected = {
        1: ([], 1, None, False),
        2: ([], 1, None, False),
        # the second row of a pair: joined at once; the watermark rises to min(10:03, 10:02)
        3: ([(0, *o100_60)], 2, t("10:02"), False),
        4: ([(0, *y25)], 2, t("10:03"), False),
        5: ([(0, *o100_30)], 1, t("10:03"), False),          # Orders' maximum is still 10:03
        6: ([], 1, t("10:03"), False),                        # bounds are nothing to Spark
        7: ([], 1, t("10:03"), False),
        8: ([], 1, t("10:03"), False),
        9: ([], 1, t("10:03"), True),                         # 10:02 <= 10:03: dropped
    }
    assert observed(twin) == expected
    steps = {r.values: r.step for r in q.rows}
    assert steps == {o100_60[1]: 3, o100_30[1]: 5, y25[1]: 6}
    c = twin.comparison
    (diff,) = c.differing
    assert (diff.values, diff.ours, diff.spark) == (y25[1], 6, 4)
    assert diff.why == ("the bound of TRADES alone released it at step 6; Spark emits a joined pair as soon "
                        "as both rows are in, at step 4, in no rowtime order")
    assert [s.step for s in c.steps if s.dropped] == [9] and c.steps[8].late_here
    # final content: the relational join over every row but the late 10:02 order (late here,
    # dropped by Spark)
    rows = [e for e in JOIN_EVENTS if len(e) == 3][:-1]
    orders = [(t(e[1]), e[2]) for e in rows if e[0] == "Orders"]
    trades = [(t(e[1]), e[2]) for e in rows if e[0] == "Trades"]
    relational = Counter((ot, (o["orderId"], o["ticker"], o["amount"], tr["amount"]))
                         for ot, o in orders for tt, tr in trades
                         if o["orderId"] == tr["orderId"] and ot <= tt <= ot + 600_000)
    assert content(q.rows) == relational
    assert content(r for s in twin.steps for r in s.rows) == relational


GROUP_EVENTS = [
    ("Events", "03:01", {"color": "blue"}),
    ("Events", "03:15", {"color": "red"}),
    ("Events", "04:00", {"color": "red"}),
    ("Events", "04:06", {"color": "blue"}),
    ("Events", "04:45", {"color": "blue"}),
    ("Events", "05:00"),
    ("Events", "06:15", {"color": "red"}),
    ("Events", "05:30", {"color": "blue"}),        # late for both: its hour ended at 06:00
    ("Events", "07:10", {"color": "red"}),
]


def test_group_by_twin_hourly(wb_spark):
    wb = wb_spark
    wb.execute("CREATE STREAM Events (color VARCHAR(10))")
    q = wb.query("SELECT STREAM FLOOR(Events.ROWTIME TO HOUR) AS hourStart, color, COUNT(*) AS c "
                 "FROM Events GROUP BY FLOOR(Events.ROWTIME TO HOUR), color", name="hourly")
    inject(wb, GROUP_EVENTS)
    twin = q.native()

    def group(hour, color, n):
        return (t(f"{hour + 1:02d}:00"), (t(f"{hour:02d}:00"), color, n))
    expected = {
        # one input: the watermark is the maximum event time; every rise adds a no-data batch,
        # which emits the windows whose end it reached
        1: ([], 2, t("03:01"), False),
        2: ([], 2, t("03:15"), False),
        3: ([(1, *group(3, "blue", 1)), (1, *group(3, "red", 1))], 2, t("04:00"), False),
        4: ([], 2, t("04:06"), False),
        5: ([], 2, t("04:45"), False),
        6: ([], 1, t("04:45"), False),                # the bound: nothing to Spark
        7: ([(1, *group(4, "blue", 2)), (1, *group(4, "red", 1))], 2, t("06:15"), False),
        8: ([], 1, t("06:15"), True),                  # window 05:00-06:00 ended: dropped
        9: ([(1, *group(6, "red", 1))], 2, t("07:10"), False),
    }
    assert observed(twin) == expected
    ours = {r.values: r.step for r in q.rows}
    assert ours == {group(3, "blue", 1)[1]: 3, group(3, "red", 1)[1]: 3, group(4, "blue", 2)[1]: 6,
                    group(4, "red", 1)[1]: 6, group(6, "red", 1)[1]: 9}
    c = twin.comparison
    assert [(r.values[1], r.ours, r.spark) for r in c.differing] == [("blue", 6, 7), ("red", 6, 7)]
    assert c.differing[0].why == ("the bound of EVENTS alone released it at step 6; Spark waits until the "
                                  "maximum event time passes 05:00, at step 7 (watermark 06:15)")
    relational = Counter()
    for e in GROUP_EVENTS:
        if len(e) == 3 and e[1] != "05:30":
            h = int(e[1][:2])
            relational[(t(f"{h:02d}:00"), e[2]["color"])] += 1
    # both sides complete the hours that ended by 07:10 (the clock, and the watermark): the
    # relational result of those hours, less the late 05:30 row, is on both sides
    expect = Counter({group(h, col, n) for (start, col), n in relational.items()
                      for h in [int(T.format_timestamp(start)[11:13])] if start + 3_600_000 <= t("07:10")})
    assert content(q.rows) == expect
    assert content(r for s in twin.steps for r in s.rows) == expect


UNION_EVENTS = [
    ("P", "01:00", {"name": "p1"}),
    ("P", "01:06", {"name": "p2"}),
    ("Q", "01:02", {"name": "q1"}),
    ("Q", "01:04", {"name": "q2"}),
    ("Q", "01:10"),
    ("P", "01:05", {"name": "p3"}),                # late here (P's clock 01:06); Spark keeps it
]


def test_union_twin_seed_000_merge(wb_spark):
    wb = wb_spark
    wb.execute("CREATE STREAM P (name VARCHAR(10)); CREATE STREAM Q (name VARCHAR(10))")
    q = wb.query("SELECT STREAM ROWTIME, name FROM P UNION ALL SELECT STREAM ROWTIME, name FROM Q", name="merged")
    inject(wb, UNION_EVENTS)
    twin = q.native()
    expected = {
        # no state: every row leaves in the batch that reads it, no no-data batch, no drops
        1: ([(0, t("01:00"), ("p1",))], 1, None, False),
        2: ([(0, t("01:06"), ("p2",))], 1, None, False),
        3: ([(0, t("01:02"), ("q1",))], 1, t("01:02"), False),
        4: ([(0, t("01:04"), ("q2",))], 1, t("01:04"), False),
        5: ([], 1, t("01:04"), False),
        6: ([(0, t("01:05"), ("p3",))], 1, t("01:04"), False),
    }
    assert observed(twin) == expected
    assert [(r.step, r.values) for r in q.rows] == [(3, ("p1",)), (3, ("q1",)), (4, ("q2",)), (5, ("p2",))]
    c = twin.comparison
    whys = {r.values: r.why for r in c.differing}
    assert whys[("p1",)] == ("the Q row at 01:02 released it at step 3; Spark emits a row of a query without "
                             "state as soon as it reads it, at step 1, in no rowtime order")
    assert whys[("p3",)].endswith("this query rejected the P row at 01:05 (step 6) as late, into the error "
                                  "stream, where Spark's watermark let it in")
    every = Counter((t(e[1]), (e[2]["name"],)) for e in UNION_EVENTS if len(e) == 3)
    assert content(r for s in twin.steps for r in s.rows) == every          # Spark dropped nothing
    assert content(q.rows) == every - Counter({(t("01:05"), ("p3",)): 1})   # the late row


def test_batch_numbers_do_not_depend_on_when_the_first_step_comes(wb_spark):
    """A twin opened before any event, then updated: Spark's query starts with the first step,
    so its batch 0 reads that step. (Started at once, its first trigger ran an empty batch 0 over
    the start offset whenever it came before the first step: a race, seen as notebook 09's batch
    numbers one higher under load.)"""
    wb = wb_spark
    wb.execute("CREATE STREAM Events (color VARCHAR(10))")
    q = wb.query("SELECT STREAM FLOOR(Events.ROWTIME TO HOUR) AS hourStart, color, COUNT(*) AS c "
                 "FROM Events GROUP BY FLOOR(Events.ROWTIME TO HOUR), color", name="hourly")
    twin = q.native()
    assert twin.steps == []
    time.sleep(1.0)            # time enough for a query already started to run a trigger
    inject(wb, GROUP_EVENTS[:3])
    twin.update()
    # one input: a data batch, then the no-data batch its new watermark asks for, per step
    assert [[b.batch for b in s.batches] for s in twin.steps] == [[0, 1], [2, 3], [4, 5]]
    assert [(r.values[1:], r.spark, r.batch) for r in twin.comparison.rows] == [
        (("blue", 1), 3, 5), (("red", 1), 3, 5)]


def test_delay_holds_the_watermark_back(wb_spark):
    wb = wb_spark
    wb.execute("CREATE STREAM Events (color VARCHAR(10))")
    q = wb.query("SELECT STREAM FLOOR(Events.ROWTIME TO HOUR) AS hourStart, color, COUNT(*) AS c "
                 "FROM Events GROUP BY FLOOR(Events.ROWTIME TO HOUR), color", name="hourly")
    inject(wb, GROUP_EVENTS)
    twin = q.native("30 minutes")
    wm = {s.step: s.watermark for s in twin.steps}
    assert wm[7] == t("05:45") and wm[9] == t("06:40")
    # 05:30 falls in the 05:00 window, which a 05:45 watermark has not closed: Spark keeps it
    assert not any(s.dropped for s in twin.steps)
    # the 03:00 hour ends at 04:00: 04:06 - 30 min = 03:36 is short of it, 04:45 - 30 min passes it
    emitted = {r.values: r.step for s in twin.steps for r in s.rows}
    assert emitted == {(t("03:00"), "blue", 1): 5, (t("03:00"), "red", 1): 5, (t("04:00"), "blue", 2): 7,
                       (t("04:00"), "red", 1): 7, (t("05:00"), "blue", 1): 9}


def test_outside_the_subset_is_one_line_and_the_session_goes_on(wb_spark):
    wb = wb_spark
    wb.execute("CREATE STREAM S (price INTEGER)")
    q = wb.query("SELECT STREAM ROWTIME, SUM(price) OVER (RANGE INTERVAL '1' HOUR PRECEDING) AS s FROM S", name="w")
    with pytest.raises(NativeUnsupported) as e:
        q.native()
    assert str(e.value) == ("no native Spark twin: an OVER window (Spark streaming has no sliding windows over "
                            "rows)")
    f = wb.query("SELECT STREAM ROWTIME, price FROM S WHERE price > 1", name="f")
    wb.punctuate("S", "2006-10-10 10:00:00", strict=True)
    with pytest.raises(NativeUnsupported, match=r"^no native Spark twin: a strict bound \(step 1, stream S\)"):
        f.native()
    wb.insert("S", {"price": 5}, rowtime="2006-10-10 10:01:00")
    assert [r.values for r in f.wait().rows] == [(5,)]
    with pytest.raises(NativeUnsupported, match="watermark delay"):
        f.native("soon")


def test_local_engine_has_no_twin(wb_local):
    wb_local.execute("CREATE STREAM S (price INTEGER)")
    q = wb_local.query("SELECT STREAM ROWTIME, price FROM S", name="f")
    with pytest.raises(NativeUnsupported, match="runs on the Spark engine"):
        q.native()
