"""Windowed aggregation: OVER (the semantics, sections 3 and 3.4).

One output row per input row, stamped with its rowtime and released on arrival. ``RANGE
INTERVAL 'X' PRECEDING`` at t covers [t - X, t], both ends inclusive; ``ROWS n PRECEDING`` holds
up to n + 1 rows; rows with the same rowtime that arrived earlier are in the frame, later ones
are not (peers). Every expected value below is computed by hand from those rules; the frame of
each row is written next to it. Times are on 2006-10-10.
"""
from __future__ import annotations

import pytest

from streamsql.engine.errors import SqlError
from streamsql.engine.operators.window import WindowOp
from test_aggregate_support import bound, op_of, row, run, ts

S = "CREATE STREAM S (k VARCHAR(5), x INTEGER);"
FOLLOWING = ("FOLLOWING is not allowed in a windowed aggregation on a stream: "
             "the frame cannot include rows that have not arrived")


def xs(*pairs, stream="S", k="a"):
    """Rows of S at the given times with the given x values."""
    return [row(stream, t, k=k, x=x) for t, x in pairs]


# --------------------------------------------------------------------------- RANGE / ROWS

def test_range_interval_preceding_inclusive_ends():
    # RANGE INTERVAL '1' HOUR PRECEDING: frames [t - 1h, t], both ends in.
    #   step 1 09:00 x=1: [08:00, 09:00] = {1}            SUM 1  COUNT 1 MIN 1 MAX 1
    #   step 2 09:10 x=2: [08:10, 09:10] = {1, 2}         SUM 3  COUNT 2 MIN 1 MAX 2
    #   step 3 09:59 x=3: [08:59, 09:59] = {1, 2, 3}      SUM 6  COUNT 3 MIN 1 MAX 3
    #   step 4 10:00 x=4: [09:00, 10:00] = {1, 2, 3, 4}   SUM 10 COUNT 4 MIN 1 MAX 4  (09:00 row in)
    #   step 5 bound 10:03: no row, nothing released; output bound = clock 10:03
    #   step 6 10:05 x=5: [09:05, 10:05] = {2, 3, 4, 5}   SUM 14 COUNT 4 MIN 2 MAX 5  (09:00 row out)
    # Each row is released at its own step, stamped with its rowtime.
    r = run(S, """SELECT STREAM x, SUM(x) OVER (RANGE INTERVAL '1' HOUR PRECEDING) AS s,
                         COUNT(*) OVER (RANGE INTERVAL '1' HOUR PRECEDING) AS c,
                         MIN(x) OVER (RANGE INTERVAL '1' HOUR PRECEDING) AS mn,
                         MAX(x) OVER (RANGE INTERVAL '1' HOUR PRECEDING) AS mx FROM S""",
            xs(("09:00", 1), ("09:10", 2), ("09:59", 3), ("10:00", 4)) + [bound("S", "10:03")] + xs(("10:05", 5)))
    assert r.table("x", "s", "c", "mn", "mx") == [
        (1, "09:00:00", 1, 1, 1, 1, 1),
        (2, "09:10:00", 2, 3, 2, 1, 2),
        (3, "09:59:00", 3, 6, 3, 1, 3),
        (4, "10:00:00", 4, 10, 4, 1, 4),
        (6, "10:05:00", 5, 14, 4, 2, 5),
    ]
    assert r.bounds == {1: "09:00:00", 2: "09:10:00", 3: "09:59:00", 4: "10:00:00", 5: "10:03:00",
                        6: "10:05:00"}


def test_vwap_expressions_over_aggregates_and_aggregates_over_expressions():
    # Seed 001's one-hour weighted average: SUM(price * volume) OVER w / SUM(volume) OVER w.
    #   09:00 (100, 1000): 100000 / 1000                              = 100
    #   09:10 (115, 2000): (100000 + 230000) / 3000                   = 110
    #   09:59 (105,  500): (330000 + 52500) / 3500 = 382500 / 3500    = 109.2857142857...
    #   10:00 (110,  500): (382500 + 55000) / 4000 = 437500 / 4000    = 109.375 (09:00 still in)
    #   10:05 (120, 1000): 09:00 row out: (437500 - 100000 + 120000) / (4000 - 1000 + 1000)
    #                      = 457500 / 4000                              = 114.375
    r = run("CREATE STREAM TradeStream (ticker VARCHAR(10), price DOUBLE, volume INTEGER);", """
        SELECT STREAM ticker, SUM(price * volume) OVER lastHour / SUM(volume) OVER lastHour AS vwap
        FROM TradeStream WINDOW lastHour AS (RANGE INTERVAL '1' HOUR PRECEDING)""",
            [row("TradeStream", t, ticker="X", price=p, volume=v) for t, p, v in
             [("09:00", 100.0, 1000), ("09:10", 115.0, 2000), ("09:59", 105.0, 500), ("10:00", 110.0, 500),
              ("10:05", 120.0, 1000)]])
    got = r.table("vwap")
    assert [(s, t) for s, t, _ in got] == [(1, "09:00:00"), (2, "09:10:00"), (3, "09:59:00"), (4, "10:00:00"),
                                           (5, "10:05:00")]
    assert [v for _s, _t, v in got] == pytest.approx([100.0, 110.0, 382500 / 3500, 109.375, 114.375])


def test_integer_expression_over_aggregates_truncates():
    # The same with INTEGER price: 382500 / 3500 = 109 (integer division), 437500 / 4000 = 109.
    r = run("CREATE STREAM T (price INTEGER, volume INTEGER);", """
        SELECT STREAM SUM(price * volume) OVER w / SUM(volume) OVER w AS vwap, AVG(price) OVER w AS ap
        FROM T WINDOW w AS (RANGE INTERVAL '1' HOUR PRECEDING)""",
            [row("T", t, price=p, volume=v) for t, p, v in
             [("09:00", 100, 1000), ("09:10", 115, 2000), ("09:59", 105, 500), ("10:00", 110, 500)]])
    # AVG(price) (INTEGER): 100; 215/2 = 107; 320/3 = 106; 430/4 = 107
    assert r.table("vwap", "ap") == [(1, "09:00:00", 100, 100), (2, "09:10:00", 110, 107),
                                     (3, "09:59:00", 109, 106), (4, "10:00:00", 109, 107)]


def test_rows_n_preceding_holds_n_plus_one_rows():
    # ROWS 2 PRECEDING: the row and up to 2 before it.
    #   x = 1: {1} 1;  x = 2: {1, 2} 3;  x = 4: {1, 2, 4} 7;  x = 8: {2, 4, 8} 14;  x = 16: {4, 8, 16} 28
    r = run(S, "SELECT STREAM x, SUM(x) OVER (ROWS 2 PRECEDING) AS s, COUNT(*) OVER (ROWS 2 PRECEDING) AS c FROM S",
            xs(("10:00", 1), ("10:00", 2), ("10:05", 4), ("11:00", 8), ("23:00", 16)))
    assert r.table("s", "c") == [(1, "10:00:00", 1, 1), (2, "10:00:00", 3, 2), (3, "10:05:00", 7, 3),
                                 (4, "11:00:00", 14, 3), (5, "23:00:00", 28, 3)]
    # a ROWS frame keeps its n + 1 rows however old they are: 3 rows + the partition
    assert op_of(r.q, WindowOp).state_size() == 4


def test_range_current_row_peer_rule():
    # RANGE CURRENT ROW: the row's peers (same rowtime) that arrived earlier, and the row itself.
    #   10:00 x=1: {1} = 1;  10:00 x=2: {1, 2} = 3;  10:00 x=4: {1, 2, 4} = 7
    #   10:01 x=8: {8} = 8 (new rowtime: the 10:00 rows are not peers)
    # ROWS CURRENT ROW: only the row: 1, 2, 4, 8.
    r = run(S, """SELECT STREAM x, SUM(x) OVER (RANGE CURRENT ROW) AS rs, SUM(x) OVER (ROWS CURRENT ROW) AS ws,
                                COUNT(*) OVER (RANGE CURRENT ROW) AS rc FROM S""",
            xs(("10:00", 1), ("10:00", 2), ("10:00", 4), ("10:01", 8)))
    assert r.table("rs", "ws", "rc") == [(1, "10:00:00", 1, 1, 1), (2, "10:00:00", 3, 2, 2),
                                         (3, "10:00:00", 7, 4, 3), (4, "10:01:00", 8, 8, 1)]


def test_peer_rule_in_a_sliding_range():
    # RANGE INTERVAL '1' MINUTE PRECEDING with peers at 10:01:
    #   10:00 x=1: {1} = 1
    #   10:01 x=2: [10:00, 10:01] = {1, 2} = 3         (the later 10:01 peer has not arrived: out)
    #   10:01 x=4: {1, 2, 4} = 7                        (the earlier 10:01 peer is in)
    #   10:02 x=8: [10:01, 10:02] = {2, 4, 8} = 14      (10:00 out; both 10:01 rows in)
    r = run(S, "SELECT STREAM x, SUM(x) OVER (RANGE INTERVAL '1' MINUTE PRECEDING) AS s FROM S",
            xs(("10:00", 1), ("10:01", 2), ("10:01", 4), ("10:02", 8)))
    assert r.table("x", "s") == [(1, "10:00:00", 1, 1), (2, "10:01:00", 2, 3), (3, "10:01:00", 4, 7),
                                 (4, "10:02:00", 8, 14)]


def test_range_between_preceding_and_current_row_equals_range_preceding():
    # RANGE BETWEEN INTERVAL '10' MINUTE PRECEDING AND CURRENT ROW is RANGE INTERVAL '10' MINUTE
    # PRECEDING: [t - 10 min, t] with earlier peers.
    #   10:00 x=1: {1} = 1;  10:05 x=2: {1, 2} = 3;  10:10 x=4: [10:00, 10:10] {1, 2, 4} = 7
    #   10:10 x=8: {1, 2, 4, 8} = 15;  10:15 x=16: [10:05, 10:15] {2, 4, 8, 16} = 30
    r = run(S, """SELECT STREAM x,
                     SUM(x) OVER (RANGE BETWEEN INTERVAL '10' MINUTE PRECEDING AND CURRENT ROW) AS a,
                     SUM(x) OVER (RANGE INTERVAL '10' MINUTE PRECEDING) AS b FROM S""",
            xs(("10:00", 1), ("10:05", 2), ("10:10", 4), ("10:10", 8), ("10:15", 16)))
    assert r.table("a", "b") == [(1, "10:00:00", 1, 1), (2, "10:05:00", 3, 3), (3, "10:10:00", 7, 7),
                                 (4, "10:10:00", 15, 15), (5, "10:15:00", 30, 30)]


def test_range_unbounded_preceding_and_default_frame():
    # No frame = RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW: a running total.
    #   1, 1+2 = 3, 3+4 = 7;  per partition k: a: 1, b: 2, a: 1+4 = 5
    r = run(S, """SELECT STREAM x, SUM(x) OVER (RANGE UNBOUNDED PRECEDING) AS s, SUM(x) OVER (PARTITION BY k) AS p
                  FROM S""",
            [row("S", "10:00", k="a", x=1), row("S", "11:00", k="b", x=2), row("S", "23:00", k="a", x=4)])
    assert r.table("s", "p") == [(1, "10:00:00", 1, 1), (2, "11:00:00", 3, 2), (3, "23:00:00", 7, 5)]


# --------------------------------------------------------------------------- named windows, partitions

def test_named_windows_several_per_query_and_partition_by():
    # WINDOW w10 AS (PARTITION BY k RANGE INTERVAL '10' MINUTE PRECEDING), prev AS (PARTITION BY k
    # ROWS 1 PRECEDING), and an inline window without partition.
    #   step 1 10:00 a 1:  w10 a{1}=1      prev a{1}=1       all-2min {1}=1
    #   step 2 10:01 b 10: w10 b{10}=10    prev b{10}=10     all [09:59,10:01] {1,10}=11
    #   step 3 10:05 a 2:  w10 a{1,2}=3    prev a{1,2}=3     all [10:03,10:05] {2}=2
    #   step 4 10:12 a 4:  w10 a[10:02,10:12]{2,4}=6  prev a{2,4}=6  all {4}=4
    #   step 5 10:12 b 20: w10 b[10:02,10:12]{20}=20 (10:01 out)  prev b{10,20}=30  all {4,20}=24
    r = run(S, """SELECT STREAM k, x, SUM(x) OVER w10 AS s10, SUM(x) OVER prev AS sp,
                         SUM(x) OVER (RANGE INTERVAL '2' MINUTE PRECEDING) AS s2
                  FROM S
                  WINDOW w10 AS (PARTITION BY k RANGE INTERVAL '10' MINUTE PRECEDING),
                         prev AS (PARTITION BY k ROWS 1 PRECEDING)""",
            [row("S", "10:00", k="a", x=1), row("S", "10:01", k="b", x=10), row("S", "10:05", k="a", x=2),
             row("S", "10:12", k="a", x=4), row("S", "10:12", k="b", x=20)])
    assert r.table("k", "s10", "sp", "s2") == [
        (1, "10:00:00", "a", 1, 1, 1), (2, "10:01:00", "b", 10, 10, 11), (3, "10:05:00", "a", 3, 3, 2),
        (4, "10:12:00", "a", 6, 6, 4), (5, "10:12:00", "b", 20, 30, 24)]


def test_named_window_refined_in_over_calcite_form():
    # Calcite: WINDOW product AS (ORDER BY rowtime PARTITION BY productId), refined per call with
    # OVER product (RANGE ...). AVG of INTEGER units truncates.
    #   10:00 p10 u=1:  m10 {1} = 1          h1 {1} = 1
    #   10:05 p10 u=4:  m10 {1, 4} = 5/2 = 2 h1 = 2
    #   10:20 p10 u=6:  m10 [10:10,10:20] {6} = 6   h1 {1,4,6} = 11/3 = 3
    #   10:21 p20 u=9:  m10 {9} = 9          h1 {9} = 9
    r = run("CREATE STREAM Orders (productId INTEGER, units INTEGER);", """
        SELECT STREAM productId, units,
               AVG(units) OVER product (RANGE INTERVAL '10' MINUTE PRECEDING) AS m10,
               AVG(units) OVER product (RANGE INTERVAL '1' HOUR PRECEDING) AS h1
        FROM Orders WINDOW product AS (ORDER BY rowtime PARTITION BY productId)""",
            [row("Orders", t, productId=p, units=u) for t, p, u in
             [("10:00", 10, 1), ("10:05", 10, 4), ("10:20", 10, 6), ("10:21", 20, 9)]])
    assert r.table("productId", "m10", "h1") == [(1, "10:00:00", 10, 1, 1), (2, "10:05:00", 10, 2, 2),
                                                 (3, "10:20:00", 10, 6, 3), (4, "10:21:00", 20, 9, 9)]


# --------------------------------------------------------------------------- offset windows

def test_range_offset_window_and_empty_frames():
    # RANGE BETWEEN INTERVAL '10' MINUTE PRECEDING AND INTERVAL '5' MINUTE PRECEDING: [t-10, t-5].
    #   10:00 x=1:  [09:50, 09:55] empty          SUM NULL, COUNT 0
    #   10:03 x=2:  [09:53, 09:58] empty          NULL, 0
    #   10:05 x=4:  [09:55, 10:00] {1}            1, 1   (10:00 at the inclusive end)
    #   10:10 x=8:  [10:00, 10:05] {1, 2, 4}      7, 3   (both ends inclusive)
    #   10:16 x=16: [10:06, 10:11] {8}            8, 1
    #   10:30 x=32: [10:20, 10:25] empty          NULL, 0
    # Released on arrival: every row of an offset frame is already in.
    r = run(S, """SELECT STREAM x, SUM(x) OVER w AS s, COUNT(*) OVER w AS c, COUNT(x) OVER w AS cx, MIN(x) OVER w AS mn
                  FROM S WINDOW w AS (RANGE BETWEEN INTERVAL '10' MINUTE PRECEDING AND INTERVAL '5' MINUTE PRECEDING)""",
            xs(("10:00", 1), ("10:03", 2), ("10:05", 4), ("10:10", 8), ("10:16", 16), ("10:30", 32)))
    assert r.table("s", "c", "cx", "mn") == [
        (1, "10:00:00", None, 0, 0, None), (2, "10:03:00", None, 0, 0, None), (3, "10:05:00", 1, 1, 1, 1),
        (4, "10:10:00", 7, 3, 3, 1), (5, "10:16:00", 8, 1, 1, 8), (6, "10:30:00", None, 0, 0, None)]


def test_rows_offset_window():
    # ROWS BETWEEN 2 PRECEDING AND 1 PRECEDING: the two rows before this one.
    #   x=1: {} NULL/0;  x=2: {1} 1;  x=4: {1, 2} 3;  x=8: {2, 4} 6
    r = run(S, """SELECT STREAM SUM(x) OVER (ROWS BETWEEN 2 PRECEDING AND 1 PRECEDING) AS s,
                                COUNT(*) OVER (ROWS BETWEEN 2 PRECEDING AND 1 PRECEDING) AS c FROM S""",
            xs(("10:00", 1), ("10:00", 2), ("10:01", 4), ("10:02", 8)))
    assert r.table("s", "c") == [(1, "10:00:00", None, 0), (2, "10:00:00", 1, 1), (3, "10:01:00", 3, 2),
                                 (4, "10:02:00", 6, 2)]


def test_zero_offset_is_the_standard_peer_form():
    # SQLstream's "standard" spelling RANGE BETWEEN INTERVAL '1' SECOND PRECEDING AND INTERVAL '0'
    # SECOND PRECEDING: [t - 1 s, t]; a row is released when it arrives, so later peers cannot be in.
    #   10:00 x=1: {1} = 1;  10:00 x=2: {1, 2} = 3;  10:00:01 x=4: {1, 2, 4} = 7;  10:00:02 x=8: {4, 8} = 12
    r = run(S, """SELECT STREAM SUM(x) OVER (RANGE BETWEEN INTERVAL '1' SECOND PRECEDING
                                              AND INTERVAL '0' SECOND PRECEDING) AS s FROM S""",
            xs(("10:00", 1), ("10:00", 2), ("10:00:01", 4), ("10:00:02", 8)))
    assert r.table("s") == [(1, "10:00:00", 1), (2, "10:00:00", 3), (3, "10:00:01", 7), (4, "10:00:02", 12)]


def test_unbounded_offset_window_and_distinct_aggregates():
    # RANGE BETWEEN UNBOUNDED PRECEDING AND INTERVAL '5' MINUTE PRECEDING: every row up to t - 5 min.
    #   10:00 x=1: {} NULL;  10:03 x=2: {} NULL;  10:06 x=1: {1} 1;  10:20 x=4: {1, 2, 1} 4
    # COUNT(DISTINCT x) over RANGE 10 minutes: {1} 1, {1,2} 2, {1,2,1} 2, [10:10,10:20] {4} 1
    # SUM(DISTINCT x) over ROWS 2 PRECEDING: {1} 1, {1,2} 3, {1,2,1} 3, {2,1,4} 7
    r = run(S, """SELECT STREAM SUM(x) OVER (RANGE BETWEEN UNBOUNDED PRECEDING AND INTERVAL '5' MINUTE PRECEDING) AS u,
                         COUNT(DISTINCT x) OVER (RANGE INTERVAL '10' MINUTE PRECEDING) AS cd,
                         SUM(DISTINCT x) OVER (ROWS 2 PRECEDING) AS sd FROM S""",
            xs(("10:00", 1), ("10:03", 2), ("10:06", 1), ("10:20", 4)))
    assert r.table("u", "cd", "sd") == [(1, "10:00:00", None, 1, 1), (2, "10:03:00", None, 2, 3),
                                        (3, "10:06:00", 1, 2, 3), (4, "10:20:00", 4, 1, 7)]


# --------------------------------------------------------------------------- hopping, cascading

def test_hopping_window_frame_on_floor_key():
    # ORDER BY FLOOR(S.ROWTIME TO HOUR) RANGE INTERVAL '1' HOUR PRECEDING: the frame is computed on
    # the hour key h: rows whose h is in [h - 1h, h] (peers = same hour, arrived earlier).
    #   09:10 x=1  h=09: h in [08, 09]: {1} = 1
    #   09:50 x=2  h=09: {1, 2} = 3
    #   10:20 x=4  h=10: h in [09, 10]: {1, 2, 4} = 7
    #   10:40 x=8  h=10: {1, 2, 4, 8} = 15
    #   11:05 x=16 h=11: h in [10, 11]: {4, 8, 16} = 28
    #   12:30 x=32 h=12: h in [11, 12]: {16, 32} = 48
    r = run(S, """SELECT STREAM x, SUM(x) OVER (ORDER BY FLOOR(S.ROWTIME TO HOUR) RANGE INTERVAL '1' HOUR PRECEDING) AS s
                  FROM S""",
            xs(("09:10", 1), ("09:50", 2), ("10:20", 4), ("10:40", 8), ("11:05", 16), ("12:30", 32)))
    assert r.table("s") == [(1, "09:10:00", 1), (2, "09:50:00", 3), (3, "10:20:00", 7), (4, "10:40:00", 15),
                            (5, "11:05:00", 28), (6, "12:30:00", 48)]
    # the hour-11 row (h = 11) can be in frames until h = 12 inclusive: kept; h = 10 rows are gone
    # (no future h >= 12 frame reaches h = 10). State: the partition and rows 16, 32.
    assert op_of(r.q, WindowOp).state_size() == 3


def test_hopping_over_hourly_totals_calcite():
    # Seed 004's hopping window: a sliding 2-hour window over hourly totals.
    #   hourly totals (GROUP BY FLOOR(ROWTIME TO HOUR), productId), released at the end of each hour,
    #   stamped with the hour (AS rowtime): 09:00 p10 su=1; 10:00 p10 su=2; 11:00 p10 su=4, p20 su=8
    #   SUM(su) OVER (PARTITION BY productId RANGE INTERVAL '2' HOUR PRECEDING):
    #     09:00 p10: {1} = 1    (released when the 10:05 row closes hour 9: step 2)
    #     10:00 p10: {1, 2} = 3 (step 3, the 11:10 row)
    #     11:00 p10: [09:00, 11:00] {1, 2, 4} = 7;  11:00 p20: {8} = 8  (both at step 5, the 12:00 bound)
    r = run("CREATE STREAM Orders (productId INTEGER, units INTEGER);", """
        SELECT STREAM rowtime, productId, SUM(su) OVER w AS su
        FROM (SELECT STREAM FLOOR(rowtime TO HOUR) AS rowtime, productId, SUM(units) AS su
              FROM Orders GROUP BY FLOOR(rowtime TO HOUR), productId) AS HourlyTotals
        WINDOW w AS (ORDER BY rowtime PARTITION BY productId RANGE INTERVAL '2' HOUR PRECEDING)""",
            [row("Orders", "09:30", productId=10, units=1), row("Orders", "10:05", productId=10, units=2),
             row("Orders", "11:10", productId=10, units=4), row("Orders", "11:20", productId=20, units=8),
             bound("Orders", "12:00")])
    assert r.table("productId", "su") == [(2, "09:00:00", 10, 1), (3, "10:00:00", 10, 3), (5, "11:00:00", 10, 7),
                                          (5, "11:00:00", 20, 8)]


def test_cascading_window_resets_each_hour_and_forgets_closed_periods():
    # SUM(x) OVER (PARTITION BY FLOOR(ROWTIME TO HOUR)): a running total per hour.
    #   10:10 x=1: 1;  10:50 x=2: 3;  11:00 x=4: new hour: 4;  11:30 x=8: 12
    # The 10:00 partition is deleted once the clock reaches 11:00 (step 3); after the 12:00 bound
    # (step 5) no partition is left.
    r = run(S, "SELECT STREAM x, SUM(x) OVER (PARTITION BY FLOOR(S.ROWTIME TO HOUR)) AS s FROM S",
            xs(("10:10", 1), ("10:50", 2), ("11:00", 4), ("11:30", 8)))
    assert r.table("s") == [(1, "10:10:00", 1), (2, "10:50:00", 3), (3, "11:00:00", 4), (4, "11:30:00", 12)]
    op = op_of(r.q, WindowOp)
    assert [p.partition for p in op.trace_state([op.state_view()]).partitions] == [(ts("11:00"),)]
    r.wb.inject([bound("S", "12:00")])
    assert op.state_size() == 0


def test_cascading_with_other_partition_keys_and_count():
    #   PARTITION BY FLOOR(ROWTIME TO HOUR), k
    #   10:10 a: COUNT 1;  10:20 b: 1;  10:30 a: 2;  11:05 a: 1 (new hour)
    r = run(S, "SELECT STREAM k, COUNT(*) OVER (PARTITION BY FLOOR(S.ROWTIME TO HOUR), k) AS c FROM S",
            [row("S", "10:10", k="a", x=0), row("S", "10:20", k="b", x=0), row("S", "10:30", k="a", x=0),
             row("S", "11:05", k="a", x=0)])
    assert r.table("k", "c") == [(1, "10:10:00", "a", 1), (2, "10:20:00", "b", 1), (3, "10:30:00", "a", 2),
                                 (4, "11:05:00", "a", 1)]
    assert op_of(r.q, WindowOp).state_size() == 1


def test_cascading_on_a_subquery_column_forgets_closed_periods():
    # The hour computed in a sub-query (h = FLOOR(ROWTIME TO HOUR)) partitions the same way, and
    # its closed periods are forgotten too.
    r = run(S, """SELECT STREAM x, SUM(x) OVER (PARTITION BY h) AS s
                  FROM (SELECT STREAM FLOOR(S.ROWTIME TO HOUR) AS h, x FROM S) AS t""",
            xs(("10:10", 1), ("10:50", 2), ("11:00", 4)) + [bound("S", "12:00")])
    assert r.table("s") == [(1, "10:10:00", 1), (2, "10:50:00", 3), (3, "11:00:00", 4)]
    assert op_of(r.q, WindowOp).state_size() == 0


# --------------------------------------------------------------------------- nulls, MIN/MAX/FIRST/LAST

def test_nulls_in_rows_frame():
    # ROWS 2 PRECEDING over x = NULL, 5, NULL, -8:
    #   {NULL}:        COUNT(*) 1, COUNT(x) 0, SUM NULL, AVG NULL, MIN NULL, MAX NULL, FIRST NULL, LAST NULL
    #   {NULL,5}:      2, 1, 5, 5, 5, 5, 5, 5
    #   {NULL,5,NULL}: 3, 1, 5, 5, 5, 5, 5, 5
    #   {5,NULL,-8}:   3, 2, -3, AVG -3/2 = -1.5 -> -1 (toward zero), MIN -8, MAX 5, FIRST 5, LAST -8
    r = run(S, """SELECT STREAM COUNT(*) OVER w AS n, COUNT(x) OVER w AS cx, SUM(x) OVER w AS s, AVG(x) OVER w AS a,
                         MIN(x) OVER w AS mn, MAX(x) OVER w AS mx, FIRST_VALUE(x) OVER w AS f, LAST_VALUE(x) OVER w AS l
                  FROM S WINDOW w AS (ROWS 2 PRECEDING)""",
            xs(("10:00", None), ("10:01", 5), ("10:02", None), ("10:03", -8)))
    assert r.table("n", "cx", "s", "a", "mn", "mx", "f", "l") == [
        (1, "10:00:00", 1, 0, None, None, None, None, None, None),
        (2, "10:01:00", 2, 1, 5, 5, 5, 5, 5, 5),
        (3, "10:02:00", 3, 1, 5, 5, 5, 5, 5, 5),
        (4, "10:03:00", 3, 2, -3, -1, -8, 5, 5, -8)]


def test_min_max_first_last_in_a_sliding_range():
    # RANGE INTERVAL '2' MINUTE PRECEDING over 5, 3, 4, 1, 6 at 10:00, 10:01, ... 10:04:
    #   10:00 {5}:      MIN 5 MAX 5 FIRST 5 LAST 5
    #   10:01 {5,3}:    3 5 5 3
    #   10:02 {5,3,4}:  3 5 5 4      (10:00 still in: inclusive)
    #   10:03 {3,4,1}:  1 4 3 1
    #   10:04 {4,1,6}:  1 6 4 6
    r = run(S, """SELECT STREAM MIN(x) OVER w AS mn, MAX(x) OVER w AS mx, FIRST_VALUE(x) OVER w AS f,
                         LAST_VALUE(x) OVER w AS l FROM S WINDOW w AS (RANGE INTERVAL '2' MINUTE PRECEDING)""",
            xs(("10:00", 5), ("10:01", 3), ("10:02", 4), ("10:03", 1), ("10:04", 6)))
    assert [v[2:] for v in r.table("mn", "mx", "f", "l")] == [(5, 5, 5, 5), (3, 5, 5, 3), (3, 5, 5, 4), (1, 4, 3, 1),
                                                              (1, 6, 4, 6)]


def test_last_value_when_latest_values_are_null():
    # RANGE INTERVAL '1' MINUTE PRECEDING over 7 (10:00), NULL (10:00:30), NULL (10:01:10):
    #   10:00 {7}: LAST 7;  10:00:30 {7, NULL}: LAST 7 (nulls ignored);  10:01:10 [10:00:10, ...]
    #   {NULL, NULL}: LAST NULL, FIRST NULL, COUNT(x) 0, COUNT(*) 2
    r = run(S, """SELECT STREAM LAST_VALUE(x) OVER w AS l, FIRST_VALUE(x) OVER w AS f, COUNT(x) OVER w AS c,
                         COUNT(*) OVER w AS n FROM S WINDOW w AS (RANGE INTERVAL '1' MINUTE PRECEDING)""",
            xs(("10:00", 7), ("10:00:30", None), ("10:01:10", None)))
    assert [v[2:] for v in r.table("l", "f", "c", "n")] == [(7, 7, 1, 1), (7, 7, 1, 2), (None, None, 0, 2)]


def test_double_sums_after_rows_leave():
    # DOUBLE values 0.1, 0.2, 0.3 in a 1-minute frame: sums 0.1, 0.3, 0.5 (0.1 left), then only 0.4
    r = run("CREATE STREAM D (v DOUBLE);", "SELECT STREAM SUM(v) OVER (RANGE INTERVAL '1' MINUTE PRECEDING) AS s FROM D",
            [row("D", "10:00", v=0.1), row("D", "10:00:30", v=0.2), row("D", "10:01:10", v=0.3),
             row("D", "10:05", v=0.4)])
    assert [v for _s, _t, v in r.table("s")] == pytest.approx([0.1, 0.3, 0.5, 0.4])


# --------------------------------------------------------------------------- state

def test_rows_that_left_every_frame_are_dropped():
    # RANGE INTERVAL '1' HOUR PRECEDING, PARTITION BY k. A row at r is in frames up to r + 1h:
    # once the clock passes r + 1h no future frame (start = clock - 1h) reaches it.
    # state_size = retained rows + one per partition.
    #   after a 10:00, a 10:50, b 10:20:           a: 2 rows, b: 1 row     -> 3 + 2 = 5
    #   bound 11:00 (a future row at 11:00 still reaches 10:00: inclusive)  -> 5
    #   strict bound 11:00 (= 11:00:00.001):        a's 10:00 row dropped    -> 4
    #   strict bound 11:20:                          b forgotten              -> 2
    #   strict bound 11:50:                          a forgotten              -> 0
    #   a at 12:00 x=100: frame [11:00, 12:00] = {100}
    r = run(S, "SELECT STREAM k, SUM(x) OVER (PARTITION BY k RANGE INTERVAL '1' HOUR PRECEDING) AS s FROM S",
            [row("S", "10:00", k="a", x=1), row("S", "10:20", k="b", x=2), row("S", "10:50", k="a", x=4)])
    op = op_of(r.q, WindowOp)
    sizes = [op.state_size()]
    for ev in (bound("S", "11:00"), bound("S", "11:00", strict=True), bound("S", "11:20", strict=True),
               bound("S", "11:50", strict=True)):
        r.wb.inject([ev])
        sizes.append(op.state_size())
    assert sizes == [5, 5, 4, 2, 0]
    r.wb.inject([row("S", "12:00", k="a", x=100)])
    assert r.q.rows[-1].values == ("a", 100)


def test_a_row_still_in_the_last_frame_is_dropped_by_the_clock_without_changing_results():
    # Rows a 10:00 x=1 and a 10:30 x=2 (frame of 10:30: {1, 2}). Strict bound 11:00 drops the
    # 10:00 row from state; the next row a 11:10 x=4 has frame [10:10, 11:10] = {2, 4} = 6.
    r = run(S, "SELECT STREAM SUM(x) OVER (RANGE INTERVAL '1' HOUR PRECEDING) AS s, "
               "MIN(x) OVER (RANGE INTERVAL '1' HOUR PRECEDING) AS m FROM S",
            xs(("10:00", 1), ("10:30", 2)) + [bound("S", "11:00", strict=True)] + xs(("11:10", 4)))
    assert r.table("s", "m") == [(1, "10:00:00", 1, 1), (2, "10:30:00", 3, 1), (4, "11:10:00", 6, 2)]
    assert op_of(r.q, WindowOp).state_size() == 3


def test_offset_window_state_keeps_rows_not_yet_in_the_frame():
    # Offset [t-10, t-5]: a 10:00 row enters frames at 10:05 and leaves after 10:10.
    #   rows 10:00 x=1, 10:02 x=2; strict bound 10:10 drops 10:00; row 10:12 x=4: [10:02, 10:07] = {2}
    r = run(S, """SELECT STREAM SUM(x) OVER (RANGE BETWEEN INTERVAL '10' MINUTE PRECEDING AND INTERVAL '5' MINUTE
                  PRECEDING) AS s FROM S""",
            xs(("10:00", 1), ("10:02", 2)) + [bound("S", "10:10", strict=True)] + xs(("10:12", 4)))
    assert r.table("s") == [(1, "10:00:00", None), (2, "10:02:00", None), (4, "10:12:00", 2)]


def test_state_bound_one_million_events_through_a_one_hour_sliding_window():
    # State is bounded by the windows: 1,000,000 events (100 tickers, the clock advancing ~0.9 s
    # per event on average, so ~4,000 rows per hour) through AVG OVER (PARTITION BY ticker RANGE INTERVAL '1'
    # HOUR PRECEDING). The operator is driven directly (as a runtime would: on_row, then on_clocks).
    # The state after 1,000,000 events is within 10% of the state after 100,000: about one hour of
    # rows plus one entry per ticker.
    import random

    from streamsql.engine.operators.base import encode_ints
    r = run("CREATE STREAM T (ticker VARCHAR(5), price DOUBLE);",
            "SELECT STREAM ticker, AVG(price) OVER (PARTITION BY ticker RANGE INTERVAL '1' HOUR PRECEDING) AS a FROM T",
            [])
    op = op_of(r.q, WindowOp)
    rng = random.Random(1)
    t, sizes = ts("00:00"), {}
    for i in range(1, 1_000_001):
        t += rng.choice((0, 500, 1000, 2000))
        op.on_row(0, i, t, ("T%d" % rng.randrange(100), 15.0), [t], encode_ints(i, 0))
        op.on_clocks(i, [t])
        if i in (100_000, 1_000_000):
            sizes[i] = op.state_size()
    rows_per_hour = 3600 / 0.875 + 100
    assert abs(sizes[1_000_000] - sizes[100_000]) <= 0.1 * sizes[100_000], sizes
    assert 0.8 * rows_per_hour < sizes[1_000_000] < 1.2 * rows_per_hour, sizes


# --------------------------------------------------------------------------- errors

@pytest.mark.parametrize("over", [
    "(RANGE INTERVAL '1' HOUR FOLLOWING)",
    "(ROWS 2 FOLLOWING)",
    "(RANGE BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING)",
    "(ROWS BETWEEN CURRENT ROW AND 1 FOLLOWING)",
    "(RANGE BETWEEN INTERVAL '1' HOUR PRECEDING AND INTERVAL '1' MINUTE FOLLOWING)",
    "w",
])
def test_following_is_rejected(wb_local, over):
    wb_local.execute(S)
    with pytest.raises(SqlError) as e:
        wb_local.query(f"SELECT STREAM SUM(x) OVER {over} AS s FROM S WINDOW w AS (ROWS UNBOUNDED FOLLOWING)"
                       if over == "w" else f"SELECT STREAM SUM(x) OVER {over} AS s FROM S")
    assert str(e.value).endswith(FOLLOWING)
    assert wb_local.queries == {}


# --------------------------------------------------------------------------- both runtimes

def test_sliding_example_on_both_runtimes(wb):
    wb.execute(S)
    r = run("", """SELECT STREAM k, SUM(x) OVER (PARTITION BY k RANGE INTERVAL '1' HOUR PRECEDING) AS s,
                          COUNT(*) OVER (ROWS 1 PRECEDING) AS c FROM S""",
            [row("S", "09:00", k="a", x=1), row("S", "09:30", k="b", x=2), row("S", "10:00", k="a", x=4),
             bound("S", "10:30"), row("S", "10:45", k="a", x=8)], wb=wb)
    # a: 09:00 {1}=1; b: {2}=2; a 10:00 [09:00,10:00] {1,4}=5; a 10:45 [09:45,10:45] {4,8}=12
    # ROWS 1 PRECEDING over all rows: 1, 2, 2, 2
    assert r.table("k", "s", "c") == [(1, "09:00:00", "a", 1, 1), (2, "09:30:00", "b", 2, 2),
                                      (3, "10:00:00", "a", 5, 2), (5, "10:45:00", "a", 12, 2)]
    assert r.bounds == {1: "09:00:00", 2: "09:30:00", 3: "10:00:00", 4: "10:30:00", 5: "10:45:00"}
