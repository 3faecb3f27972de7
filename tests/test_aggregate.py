"""Streaming GROUP BY and SELECT STREAM DISTINCT (the semantics, sections 1, 3 and 3.3).

Every expected table below is derived by hand from the rules; the derivation is written next to
it. Times are on 2006-10-10. ``F`` is the operator's earliest possible stamp, ``present`` the
input clock; a group row leaves when its stamp <= min(present, F) (section 3).
"""
from __future__ import annotations

import pytest

from streamsql.engine.errors import SqlError
from streamsql.engine.operators.aggregate import AggregateOp
from test_aggregate_support import HOUR, MINUTE, bound, op_of, row, run, ts

ORDERS = "CREATE STREAM Orders (productId INTEGER, orderId INTEGER, units INTEGER);"

# Calcite's Orders stream (seed 004)
CALCITE_ORDERS = [
    row("Orders", "10:17:00", productId=30, orderId=5, units=4),    # step 1
    row("Orders", "10:17:05", productId=10, orderId=6, units=1),    # step 2
    row("Orders", "10:18:05", productId=20, orderId=7, units=2),    # step 3
    row("Orders", "10:18:07", productId=30, orderId=8, units=20),   # step 4
    row("Orders", "11:02:00", productId=10, orderId=9, units=6),    # step 5
    row("Orders", "11:04:00", productId=10, orderId=10, units=1),   # step 6
    row("Orders", "11:09:30", productId=40, orderId=11, units=12),  # step 7
    row("Orders", "11:24:11", productId=10, orderId=12, units=4),   # step 8
    bound("Orders", "12:00"),                                        # step 9
]


# --------------------------------------------------------------------------- tumbling windows

def test_tumbling_hour_stamped_with_period_end_released_by_row_and_bound():
    # GROUP BY FLOOR(ROWTIME TO HOUR), productId; no AS ROWTIME, so a group is stamped with the
    # end of its hour. The 10:00 groups are complete when the clock reaches 11:00: the 11:02:00
    # row (step 5) does it. Released together, ordered by key: (10:00, 10), (10:00, 20), (10:00, 30).
    #   10:00/10: rows 6        -> c=1, units=1
    #   10:00/20: row 7         -> c=1, units=2   (the seed's table prints 7: a typo, the row has 2)
    #   10:00/30: rows 5, 8     -> c=2, units=4+20=24
    # The 11:00 groups are complete at clock 12:00: the bound at step 9.
    #   11:00/10: rows 9,10,12  -> c=3, units=6+1+4=11
    #   11:00/40: row 11        -> c=1, units=12
    # Output bound (3.3): the end of the period containing the clock: 11:00 after step 1 (clock
    # 10:17), 12:00 after step 5 (clock 11:02), 13:00 after step 9 (clock 12:00).
    r = run(ORDERS, """
        SELECT STREAM FLOOR(Orders.ROWTIME TO HOUR) AS h, productId, COUNT(*) AS c, SUM(units) AS units
        FROM Orders GROUP BY FLOOR(Orders.ROWTIME TO HOUR), productId""", CALCITE_ORDERS)
    h10, h11 = ts("10:00"), ts("11:00")
    assert r.table("h", "productId", "c", "units") == [
        (5, "11:00:00", h10, 10, 1, 1),
        (5, "11:00:00", h10, 20, 1, 2),
        (5, "11:00:00", h10, 30, 2, 24),
        (9, "12:00:00", h11, 10, 3, 11),
        (9, "12:00:00", h11, 40, 1, 12),
    ]
    assert r.bounds == {1: "11:00:00", 5: "12:00:00", 9: "13:00:00"}
    op = op_of(r.q, AggregateOp)
    assert op.state_size() == 0            # every closed group is deleted


def test_explicit_monotonic_as_rowtime_changes_stamp_and_bound():
    # Calcite's form: FLOOR(rowtime TO HOUR) AS rowtime. Same groups, same completion times
    # (the 10:00 hour is complete at clock 11:00, step 5; the 11:00 hour at the 12:00 bound), but
    # each row is stamped 10:00 / 11:00 instead of 11:00 / 12:00. ROWTIME is not a value column.
    # Output bound (3.3): with the earlier AS ROWTIME stamp, an open group counts as a row that can
    # still be produced at its own stamp, and a future row at clock c joins FLOOR(c TO HOUR):
    #   after step 1 (clock 10:17, group 10:00 open): min(10:00, FLOOR(10:17)) = 10:00
    #   after step 5 (10:00 groups released, 11:00 open): min(11:00, FLOOR(11:02)) = 11:00
    #   after step 9 (nothing open, clock 12:00): FLOOR(12:00) = 12:00
    r = run(ORDERS, """
        SELECT STREAM FLOOR(rowtime TO HOUR) AS rowtime, productId, COUNT(*) AS c, SUM(units) AS units
        FROM Orders GROUP BY FLOOR(rowtime TO HOUR), productId""", CALCITE_ORDERS)
    assert r.q.columns == ["PRODUCTID", "C", "UNITS"]
    assert r.table("productId", "c", "units") == [
        (5, "10:00:00", 10, 1, 1),
        (5, "10:00:00", 20, 1, 2),
        (5, "10:00:00", 30, 2, 24),
        (9, "11:00:00", 10, 3, 11),
        (9, "11:00:00", 40, 1, 12),
    ]
    assert r.bounds == {1: "10:00:00", 5: "11:00:00", 9: "12:00:00"}


def test_as_rowtime_later_than_period_end_waits_for_the_present():
    # FLOOR(ROWTIME TO HOUR) + 2 hours AS ROWTIME: the 10:00 group is complete at clock 11:00
    # (step 2) but stamped 12:00, and rule 1 (stamp <= present) holds it until the clock reaches
    # 12:00: the bound at step 4. The 11:00 row opened the 11:00 group (stamp 13:00), which is
    # complete at 12:00 too but waits for 13:00 (step 5).
    # Output bound: min(open stamps, FLOOR(clock)+2h, held stamps):
    #   step 1 (10:30): min(12:00, 12:00) = 12:00; step 2 (11:00): 12:00 held, 13:00 open -> 12:00
    #   step 3 (11:59): unchanged; step 4 (12:00): 10:00 group released; held 13:00, FLOOR(12:00)+2h
    #   = 14:00 -> 13:00; step 5 (13:00): held released, nothing open -> 15:00
    r = run("CREATE STREAM S (k INTEGER);", """
        SELECT STREAM FLOOR(S.ROWTIME TO HOUR) + INTERVAL '2' HOUR AS ROWTIME, COUNT(*) AS c
        FROM S GROUP BY FLOOR(S.ROWTIME TO HOUR)""",
            [row("S", "10:30", k=1), row("S", "11:00", k=1), bound("S", "11:59"), bound("S", "12:00"),
             bound("S", "13:00")])
    assert r.table("c") == [(4, "12:00:00", 1), (5, "13:00:00", 1)]
    assert r.bounds == {1: "12:00:00", 4: "13:00:00", 5: "15:00:00"}


def test_having_filters_groups():
    # Seed 004, "Filtering after aggregation": HAVING COUNT(*) > 2 OR SUM(units) > 10.
    #   10:00: 10 (1, 1) no; 20 (1, 2) no; 30 (2, 24) yes           -> released at step 5
    #   11:00: 10 (3, 11) yes; 40 (1, 12) yes                         -> released at step 9
    # A filter passes bounds: the output bound is the aggregate's (10:00, 11:00, 12:00).
    r = run(ORDERS, """
        SELECT STREAM FLOOR(rowtime TO HOUR) AS rowtime, productId
        FROM Orders GROUP BY FLOOR(rowtime TO HOUR), productId
        HAVING COUNT(*) > 2 OR SUM(units) > 10""", CALCITE_ORDERS)
    assert r.table("productId") == [(5, "10:00:00", 30), (9, "11:00:00", 10), (9, "11:00:00", 40)]
    assert r.bounds == {1: "10:00:00", 5: "11:00:00", 9: "12:00:00"}


def test_having_over_a_subquery_equals_where():
    # The same HAVING written as WHERE over the aggregate (closure property, seed 004).
    r = run(ORDERS, """
        SELECT STREAM rowtime, productId FROM (
          SELECT FLOOR(rowtime TO HOUR) AS rowtime, productId, COUNT(*) AS c, SUM(units) AS su
          FROM Orders GROUP BY FLOOR(rowtime TO HOUR), productId)
        WHERE c > 2 OR su > 10""", CALCITE_ORDERS)
    assert [(s, t, v["PRODUCTID"]) for s, t, v in r.rows] == \
        [(5, "10:00:00", 30), (9, "11:00:00", 10), (9, "11:00:00", 40)]


def test_minute_groups_equal_rowtimes_never_close_a_group():
    # SEMANTICS 3.3: rows 22:49:10 and 22:49:15 under FLOOR(ROWTIME TO MINUTE) give one row
    # stamped 22:50:00.
    #   step 1 22:49:10, step 2 22:49:15: group 22:49 open, clock < 22:50
    #   step 3 bound 22:49:59.999: clock 22:49:59.999 < 22:50 -> nothing
    #   step 4 row 22:50:00: clock reaches 22:50 -> 22:49 group complete: (22:50:00, c=2)
    #   step 5 row 22:50:00 (equal rowtime): clock still 22:50, the 22:50 group stays open
    #   step 6 bound 22:50:00 (equal, eclipsed): nothing
    #   step 7 strict bound 22:50:59.999 = non-strict 22:51:00 -> 22:50 group complete (c=2)
    # Output bound: end of the minute containing the clock: 22:50 (steps 1-3), 22:51 after step 4,
    # 22:52 after step 7.
    r = run("CREATE STREAM S (x INTEGER);", """
        SELECT STREAM FLOOR(S.ROWTIME TO MINUTE) AS m, COUNT(*) AS c FROM S
        GROUP BY FLOOR(S.ROWTIME TO MINUTE)""",
            [row("S", "22:49:10", x=1), row("S", "22:49:15", x=2), bound("S", "22:49:59.999"),
             row("S", "22:50:00", x=3), row("S", "22:50:00", x=4), bound("S", "22:50:00"),
             bound("S", "22:50:59.999", strict=True)])
    assert r.table("m", "c") == [(4, "22:50:00", ts("22:49"), 2), (7, "22:51:00", ts("22:50"), 2)]
    assert r.bounds == {1: "22:50:00", 4: "22:51:00", 7: "22:52:00"}


def test_output_bound_is_end_of_period_containing_the_clock():
    # SEMANTICS 3.3: "02:30 under hourly groups gives 03:00".
    #   step 1 row 02:10: bound = end of 02:00 hour = 03:00
    #   step 2 bound 02:30: still 03:00 (unchanged, so no new entry)
    #   step 3 bound 03:00: the 02:00 group is complete and released at 03:00; bound 04:00
    r = run("CREATE STREAM S (x INTEGER);", """
        SELECT STREAM COUNT(*) AS c FROM S GROUP BY FLOOR(S.ROWTIME TO HOUR)""",
            [row("S", "02:10", x=1), bound("S", "02:30"), bound("S", "03:00")])
    assert r.bounds == {1: "03:00:00", 3: "04:00:00"}
    assert r.q.output_bound_at(r.q.start_step + 2) == ts("03:00")
    assert r.table("c") == [(3, "03:00:00", 1)]


def test_replay_bounds_lines_for_hourly_groups():
    # The command line's --bounds output (SEMANTICS 5): a bound line after an event when the output
    # bound is later than the last bound line and the last released row's stamp.
    #   step 1 row 02:10: bound 03:00 -> line
    #   step 2 bound 02:30: still 03:00 -> no line
    #   step 3 bound 03:00: the 02:00 group is released at 03:00, then the bound 04:00 -> row, line
    import io
    import json

    from streamsql.engine.cli import replay
    out = io.StringIO()
    replay("CREATE STREAM S (x INTEGER); SELECT STREAM COUNT(*) AS c FROM S GROUP BY FLOOR(S.ROWTIME TO HOUR)",
           [row("S", "02:10", x=1), bound("S", "02:30"), bound("S", "03:00")], engine="local", bounds=True, out=out)
    assert [json.loads(line) for line in out.getvalue().splitlines()] == [
        {"step": 1, "bound": "2006-10-10 03:00:00"},
        {"step": 3, "rowtime": "2006-10-10 03:00:00", "values": {"C": 1}},
        {"step": 3, "bound": "2006-10-10 04:00:00"},
    ]


def test_bound_alone_before_any_row():
    # No row yet: a bound at 02:30 still tells the output bound: the 02:00 hour could still get
    # a row, released at 03:00 at the earliest.
    r = run("CREATE STREAM S (x INTEGER);", "SELECT STREAM COUNT(*) AS c FROM S GROUP BY FLOOR(S.ROWTIME TO HOUR)",
            [bound("S", "02:30")])
    assert r.rows == [] and r.bounds == {1: "03:00:00"}


# --------------------------------------------------------------------------- other time keys

def test_ceil_to_hour_periods():
    # CEIL(ROWTIME TO HOUR) takes the value 10:00 only at exactly 10:00 (period (09:00, 10:00]),
    # so the period of a row at 10:00 ends at 10:00:00.001, and rows in (10:00, 11:00] share
    # the value 11:00, period ending 11:00:00.001 (the earliest rowtime with the next value).
    #   step 1 10:00 -> group CEIL=10:00 (end 10:00:00.001)
    #   step 2 10:30 -> clock 10:30 >= 10:00:00.001: (10:00:00.001, key 10:00, c=1); group 11:00
    #   step 3 11:00 -> same group (CEIL(11:00) = 11:00); clock 11:00 < 11:00:00.001
    #   step 4 bound 11:00 -> eclipsed; nothing
    #   step 5 strict bound 11:00 = 11:00:00.001 -> (11:00:00.001, key 11:00, c=2)
    r = run("CREATE STREAM S (x INTEGER);", """
        SELECT STREAM CEIL(S.ROWTIME TO HOUR) AS h, COUNT(*) AS c FROM S GROUP BY CEIL(S.ROWTIME TO HOUR)""",
            [row("S", "10:00", x=1), row("S", "10:30", x=1), row("S", "11:00", x=1), bound("S", "11:00"),
             bound("S", "11:00", strict=True)])
    assert r.table("h", "c") == [(2, "10:00:00.001", ts("10:00"), 1), (5, "11:00:00.001", ts("11:00"), 2)]


def test_step_is_epoch_aligned():
    # STEP(ROWTIME BY INTERVAL '7' MINUTE) counts 7-minute steps from the epoch, not from midnight.
    # 2006-10-10 10:00:00 UTC is 1160474400000 ms; 1160474400000 mod 420000 = 120000 (2 min),
    # so STEP(10:00) = 09:58 and the periods are [09:58, 10:05), [10:05, 10:12), ...
    #   step 1 10:00 -> group 09:58 (end 10:05); step 2 10:04:59.999 -> same group
    #   step 3 10:05 -> closes 09:58 group: (10:05, key 09:58, c=2); opens 10:05 group
    #   step 4 bound 10:12 -> (10:12, key 10:05, c=1)
    assert ts("10:00") == 1160474400000 and ts("10:00") % (7 * MINUTE) == 2 * MINUTE
    r = run("CREATE STREAM S (x INTEGER);", """
        SELECT STREAM STEP(S.ROWTIME BY INTERVAL '7' MINUTE) AS s, COUNT(*) AS c FROM S
        GROUP BY STEP(S.ROWTIME BY INTERVAL '7' MINUTE)""",
            [row("S", "10:00", x=1), row("S", "10:04:59.999", x=1), row("S", "10:05", x=1), bound("S", "10:12")])
    assert r.table("s", "c") == [(3, "10:05:00", ts("09:58"), 2), (4, "10:12:00", ts("10:05"), 1)]
    assert r.bounds == {1: "10:05:00", 3: "10:12:00", 4: "10:19:00"}


def test_rowtime_itself_as_key():
    # GROUP BY ROWTIME: the key takes its next value one millisecond later, so the period of a
    # row at t ends at t + 1 ms and the group is stamped t + 1 ms. Equal rowtimes share a group.
    #   step 1 10:00 (a), step 2 10:00 (b): group 10:00 open (clock 10:00 < 10:00:00.001)
    #   step 3 10:01: closes it -> (10:00:00.001, c=2, s=1+2=3)
    #   step 4 bound 10:01:00.001 -> (10:01:00.001, c=1, s=4)
    r = run("CREATE STREAM S (x INTEGER);", """
        SELECT STREAM S.ROWTIME AS t, COUNT(*) AS c, SUM(x) AS s FROM S GROUP BY S.ROWTIME""",
            [row("S", "10:00", x=1), row("S", "10:00", x=2), row("S", "10:01", x=4), bound("S", "10:01:00.001")])
    assert r.table("t", "c", "s") == [(3, "10:00:00.001", ts("10:00"), 2, 3),
                                      (4, "10:01:00.001", ts("10:01"), 1, 4)]


def test_rowtime_minus_constant_as_key():
    # ROWTIME - 1 minute changes value every millisecond too: same periods as ROWTIME, key shifted.
    r = run("CREATE STREAM S (x INTEGER);", """
        SELECT STREAM S.ROWTIME - INTERVAL '1' MINUTE AS t, COUNT(*) AS c FROM S
        GROUP BY S.ROWTIME - INTERVAL '1' MINUTE""",
            [row("S", "10:00", x=1), bound("S", "10:00:00.001")])
    assert r.table("t", "c") == [(2, "10:00:00.001", ts("09:59"), 1)]


@pytest.mark.parametrize("key", ["FLOOR(S.ROWTIME TO HOUR) + INTERVAL '1' HOUR",
                                 "INTERVAL '1' HOUR + FLOOR(S.ROWTIME TO HOUR)",
                                 "FLOOR(S.ROWTIME TO HOUR) - INTERVAL '1' HOUR + INTERVAL '2' HOUR"])
def test_floor_plus_constant_keeps_the_periods(key):
    # Adding a constant to FLOOR(... TO HOUR) changes the key's value (10:00 + 1h = 11:00) but not
    # where it changes: the 10:00-11:00 rows form one group, complete at 11:00, stamped 11:00.
    r = run("CREATE STREAM S (x INTEGER);", f"SELECT STREAM {key} AS h, COUNT(*) AS c FROM S GROUP BY {key}",
            [row("S", "10:10", x=1), row("S", "10:50", x=1), row("S", "11:00", x=1)])
    assert r.table("h", "c") == [(3, "11:00:00", ts("11:00"), 2)]
    assert r.bounds == {1: "11:00:00", 3: "12:00:00"}


def test_floor_of_shifted_rowtime_moves_the_periods():
    # FLOOR((ROWTIME + 30 min) TO HOUR): hours that start at half past. Rows 10:29 (x = 10:59,
    # key 10:00) and 10:30 (x = 11:00, key 11:00). The key-10:00 period is [09:30, 10:30): it
    # ends at 10:30 (the 10:30 row, step 2, closes it). The 11:00 period ends at 11:30.
    r = run("CREATE STREAM S (x INTEGER);", """
        SELECT STREAM FLOOR((S.ROWTIME + INTERVAL '30' MINUTE) TO HOUR) AS h, COUNT(*) AS c FROM S
        GROUP BY FLOOR((S.ROWTIME + INTERVAL '30' MINUTE) TO HOUR)""",
            [row("S", "10:29", x=1), row("S", "10:30", x=1), bound("S", "11:30")])
    assert r.table("h", "c") == [(2, "10:30:00", ts("10:00"), 1), (3, "11:30:00", ts("11:00"), 1)]
    assert r.bounds == {1: "10:30:00", 2: "11:30:00", 3: "12:30:00"}


def test_floor_to_day():
    # Daily groups: complete at the next midnight.
    r = run("CREATE STREAM S (x INTEGER);", """
        SELECT STREAM FLOOR(S.ROWTIME TO DAY) AS d, SUM(x) AS s FROM S GROUP BY FLOOR(S.ROWTIME TO DAY)""",
            [row("S", "10:00", x=1), row("S", "23:59:59.999", x=2), row("S", "2006-10-11 00:00:00", x=5)])
    assert r.table("d", "s") == [(3, "2006-10-11 00:00:00", ts("00:00"), 3)]


def test_two_monotonic_keys_group_completes_with_the_finer_key():
    # GROUP BY FLOOR(ROWTIME TO HOUR), FLOOR(ROWTIME TO MINUTE): the group (10:00, 10:00) can get
    # no more rows once the clock reaches 10:01 (the minute key takes its next value), so it is
    # complete then and stamped 10:01 ("the earliest time the row is complete").
    #   step 1 10:00:10, step 2 10:00:50 -> group (10:00, 10:00)
    #   step 3 10:01:00 -> (10:01, c=2); group (10:00, 10:01)
    #   step 4 bound 10:02 -> (10:02, c=1)
    r = run("CREATE STREAM S (x INTEGER);", """
        SELECT STREAM FLOOR(S.ROWTIME TO HOUR) AS h, FLOOR(S.ROWTIME TO MINUTE) AS m, COUNT(*) AS c FROM S
        GROUP BY FLOOR(S.ROWTIME TO HOUR), FLOOR(S.ROWTIME TO MINUTE)""",
            [row("S", "10:00:10", x=1), row("S", "10:00:50", x=1), row("S", "10:01", x=1), bound("S", "10:02")])
    assert r.table("m", "c") == [(3, "10:01:00", ts("10:00"), 2), (4, "10:02:00", ts("10:01"), 1)]
    assert r.bounds == {1: "10:01:00", 3: "10:02:00", 4: "10:03:00"}


def test_cast_rowtime_to_bigint_key_counts_seconds():
    # CAST(ROWTIME AS BIGINT) is whole seconds since the epoch (non-decreasing, accepted as the
    # monotonic key): its period is one second. 10:00:00 and 10:00:00.500 share the value
    # 1160474400 (complete at 10:00:01); 10:00:01 has the next value.
    r = run("CREATE STREAM S (x INTEGER);", """
        SELECT STREAM CAST(S.ROWTIME AS BIGINT) AS sec, COUNT(*) AS c FROM S GROUP BY CAST(S.ROWTIME AS BIGINT)""",
            [row("S", "10:00:00", x=1), row("S", "10:00:00.500", x=1), row("S", "10:00:01", x=1),
             bound("S", "10:00:02")])
    assert r.table("sec", "c") == [(3, "10:00:01", 1160474400, 2), (4, "10:00:02", 1160474401, 1)]


def test_group_by_a_monotonic_column_of_a_subquery():
    # h = FLOOR(ROWTIME TO HOUR) computed in a sub-query is monotonic, so GROUP BY h is a tumbling
    # window with the same periods: hour 10 complete at 11:00 (the 11:01 row), hour 11 at 12:00.
    r = run("CREATE STREAM S (x INTEGER);", """
        SELECT STREAM h, COUNT(*) AS c, SUM(x) AS s
        FROM (SELECT STREAM FLOOR(S.ROWTIME TO HOUR) AS h, x FROM S WHERE x > 0) AS t GROUP BY h""",
            [row("S", "10:00", x=1), row("S", "10:30", x=2), row("S", "10:40", x=-1), row("S", "11:01", x=4),
             bound("S", "12:00")])
    assert r.table("h", "c", "s") == [(4, "11:00:00", ts("10:00"), 2, 3), (5, "12:00:00", ts("11:00"), 1, 4)]


def test_group_by_the_time_key_of_an_aggregate_subquery():
    # Inner: hourly counts per k, each group stamped with the end of its hour. Outer: GROUP BY h.
    # Seen from the outer query, h is a function of its input rowtime E: a group stamped E holds
    # rows from before E, so h = FLOOR(E - 1 ms TO HOUR). The outer h = 10:00 period is therefore
    # E in [10:00:00.001, 11:00:00.001): it ends (and its row is stamped) at 11:00:00.001.
    #   e1 a 10:00, e2 b 10:30: inner holds hour 10; its output bound is 11:00, so the outer's clock
    #      is 11:00 and its output bound the end of the period containing it: 11:00:00.001
    #   e3 b 11:01: inner releases (10:00, a, 1), (10:00, b, 1) stamped 11:00, bound 12:00; the
    #      outer clock 12:00 passes 11:00:00.001: (h = 10:00, n = 2) stamped 11:00:00.001; bound
    #      12:00:00.001
    #   e4 bound 13:00: inner releases (11:00, b, 1) stamped 12:00, bound 14:00: (h = 11:00, n = 1)
    #      stamped 12:00:00.001; outer bound 14:00:00.001
    r = run("CREATE STREAM S (k VARCHAR(5));", """
        SELECT STREAM h, SUM(c) AS n
        FROM (SELECT STREAM FLOOR(S.ROWTIME TO HOUR) AS h, k, COUNT(*) AS c FROM S
              GROUP BY FLOOR(S.ROWTIME TO HOUR), k) AS hourly
        GROUP BY h""",
            [row("S", "10:00", k="a"), row("S", "10:30", k="b"), row("S", "11:01", k="b"), bound("S", "13:00")])
    assert r.table("h", "n") == [(3, "11:00:00.001", ts("10:00"), 2), (4, "12:00:00.001", ts("11:00"), 1)]
    assert r.bounds == {1: "11:00:00.001", 3: "12:00:00.001", 4: "14:00:00.001"}


def test_group_by_the_time_key_of_an_as_rowtime_aggregate_subquery():
    # With Calcite's FLOOR(rowtime TO HOUR) AS rowtime inside, the inner rows are stamped with the
    # hour itself, so the outer h is its input rowtime: periods of one millisecond. The h = 10:00
    # group (rows stamped 10:00, released by the inner at e3) is complete once the outer clock
    # passes 10:00, which it has (the inner bound is FLOOR(11:01) = 11:00): stamped 10:00:00.001.
    r = run("CREATE STREAM S (k VARCHAR(5));", """
        SELECT STREAM h, SUM(c) AS n
        FROM (SELECT STREAM FLOOR(S.ROWTIME TO HOUR) AS ROWTIME, FLOOR(S.ROWTIME TO HOUR) AS h, k, COUNT(*) AS c
              FROM S GROUP BY FLOOR(S.ROWTIME TO HOUR), k) AS hourly
        GROUP BY h""",
            [row("S", "10:00", k="a"), row("S", "10:30", k="b"), row("S", "11:01", k="b"), bound("S", "13:00")])
    assert r.table("h", "n") == [(3, "10:00:00.001", ts("10:00"), 2), (4, "11:00:00.001", ts("11:00"), 1)]


# --------------------------------------------------------------------------- keys

def test_groups_released_together_ordered_by_key_nulls_first_code_points():
    # One hour, string keys arriving as b, B, NULL, a, é, a. Released together at 11:00 ordered by
    # key ascending, NULL first, strings by code point: NULL, 'B' (66), 'a' (97), 'b' (98), 'é' (233).
    r = run("CREATE STREAM S (k VARCHAR(5), x INTEGER);", """
        SELECT STREAM k, COUNT(*) AS c FROM S GROUP BY FLOOR(S.ROWTIME TO HOUR), k""",
            [row("S", "10:01", k="b", x=1), row("S", "10:02", k="B", x=1), row("S", "10:03", k=None, x=1),
             row("S", "10:04", k="a", x=1), row("S", "10:05", k="é", x=1), row("S", "10:06", k="a", x=1),
             bound("S", "11:00")])
    assert r.table("k", "c") == [(7, "11:00:00", None, 1), (7, "11:00:00", "B", 1), (7, "11:00:00", "a", 2),
                                 (7, "11:00:00", "b", 1), (7, "11:00:00", "é", 1)]


def test_numeric_keys_order_by_value_and_several_keys():
    # Keys (g INTEGER, k VARCHAR) in GROUP BY order after the time key: ordered by g numerically
    # (-1 < 2 < 10, NULL first), then by k.
    r = run("CREATE STREAM S (g INTEGER, k VARCHAR(5));", """
        SELECT STREAM g, k, COUNT(*) AS c FROM S GROUP BY FLOOR(S.ROWTIME TO HOUR), g, k""",
            [row("S", "10:01", g=10, k="x"), row("S", "10:02", g=2, k="y"), row("S", "10:03", g=-1, k="x"),
             row("S", "10:04", g=2, k="a"), row("S", "10:05", g=None, k="z"), row("S", "10:06", g=2, k=None),
             bound("S", "11:00")])
    assert [(g, k) for _s, _t, g, k, _c in r.table("g", "k", "c")] == \
        [(None, "z"), (-1, "x"), (2, None), (2, "a"), (2, "y"), (10, "x")]


def test_other_keys_only_partition():
    # The ticker only partitions: each hour gives one row per ticker; different tickers never mix.
    r = run("CREATE STREAM T (ticker VARCHAR(5), price INTEGER);", """
        SELECT STREAM ticker, SUM(price) AS s FROM T GROUP BY ticker, FLOOR(T.ROWTIME TO HOUR)""",
            [row("T", "10:00", ticker="X", price=1), row("T", "10:10", ticker="Y", price=10),
             row("T", "10:20", ticker="X", price=2), row("T", "11:00", ticker="Y", price=100),
             bound("T", "12:00")])
    assert r.table("ticker", "s") == [(4, "11:00:00", "X", 3), (4, "11:00:00", "Y", 10),
                                      (5, "12:00:00", "Y", 100)]


# --------------------------------------------------------------------------- aggregate functions

AGGS = """SELECT STREAM COUNT(*) AS n, COUNT(temp) AS ct, SUM(temp) AS s, AVG(temp) AS a,
                        MIN(temp) AS mn, MAX(temp) AS mx, FIRST_VALUE(temp) AS fv, LAST_VALUE(temp) AS lv,
                        SUM(temp) / COUNT(temp) AS d
          FROM W GROUP BY FLOOR(W.ROWTIME TO HOUR)"""


def test_aggregates_sql_typing_and_nulls():
    # Temperatures 29, 32, NULL, 50, 43 in one hour (SEMANTICS 1: SUM/COUNT of 29,32,50,43 is 38).
    #   COUNT(*) = 5 (counts the NULL row), COUNT(temp) = 4, SUM = 154,
    #   AVG = 154 / 4 = 38.5 -> 38 (integer AVG truncates), SUM/COUNT = 154 / 4 -> 38 (INTEGER division)
    #   MIN 29, MAX 50, FIRST_VALUE 29, LAST_VALUE 43 (nulls ignored: the NULL is neither)
    r = run("CREATE STREAM W (temp INTEGER);", AGGS,
            [row("W", "10:00", temp=29), row("W", "10:10", temp=32), row("W", "10:20", temp=None),
             row("W", "10:30", temp=50), row("W", "10:40", temp=43), bound("W", "11:00")])
    assert r.table("n", "ct", "s", "a", "mn", "mx", "fv", "lv", "d") == \
        [(6, "11:00:00", 5, 4, 154, 38, 29, 50, 29, 43, 38)]
    assert [type(v) for v in r.rows[0][2].values()][:4] == [int, int, int, int]


def test_first_and_last_value_skip_leading_and_trailing_nulls():
    # NULL, 7, 8, NULL: FIRST_VALUE 7 and LAST_VALUE 8 (nulls ignored except by COUNT).
    r = run("CREATE STREAM W (temp INTEGER);", AGGS,
            [row("W", "10:00", temp=None), row("W", "10:10", temp=7), row("W", "10:20", temp=8),
             row("W", "10:30", temp=None), bound("W", "11:00")])
    assert r.table("n", "ct", "s", "fv", "lv") == [(5, "11:00:00", 4, 2, 15, 7, 8)]


def test_integer_avg_truncates_toward_zero():
    # -7 and -8: AVG = -15 / 2 = -7.5 -> -7 (toward zero, not the floor -8); SUM/COUNT likewise.
    r = run("CREATE STREAM W (temp INTEGER);", AGGS,
            [row("W", "10:00", temp=-7), row("W", "10:10", temp=-8), bound("W", "11:00")])
    assert r.table("a", "d") == [(3, "11:00:00", -7, -7)]


def test_all_null_group():
    # Only NULLs: COUNT(*) = 2, COUNT(temp) = 0, every other aggregate NULL, SUM/COUNT NULL.
    r = run("CREATE STREAM W (temp INTEGER);", AGGS,
            [row("W", "10:00", temp=None), row("W", "10:10", temp=None), bound("W", "11:00")])
    assert r.table("n", "ct", "s", "a", "mn", "mx", "fv", "lv", "d") == \
        [(3, "11:00:00", 2, 0, None, None, None, None, None, None, None)]


def test_double_and_decimal_aggregates():
    # DOUBLE: AVG(1.0, 2.0) = 1.5 (no truncation); DECIMAL(6,2): SUM(1.25, 2.50) = 3.75,
    # AVG = 1.875 (AVG of DECIMAL(6,2) has scale 6: 1.875000). MIN/MAX of strings by code point.
    import decimal
    r = run("CREATE STREAM W (d DOUBLE, m DECIMAL(6,2), s VARCHAR(5));", """
        SELECT STREAM AVG(d) AS ad, SUM(d) AS sd, SUM(m) AS sm, AVG(m) AS am, MIN(s) AS mn, MAX(s) AS mx
        FROM W GROUP BY FLOOR(W.ROWTIME TO HOUR)""",
            [row("W", "10:00", d=1.0, m="1.25", s="b"), row("W", "10:10", d=2.0, m="2.50", s="B"),
             bound("W", "11:00")])
    (step, t, ad, sd, sm, am, mn, mx), = r.table("ad", "sd", "sm", "am", "mn", "mx")
    assert (step, t, ad, sd) == (3, "11:00:00", 1.5, 3.0)
    assert sm == decimal.Decimal("3.75") and am == decimal.Decimal("1.875")
    assert (mn, mx) == ("B", "b")


def test_aggregates_over_expressions():
    # SUM(price * volume) and COUNT(*) over rows (10, 2) and (5, 4): 20 + 20 = 40; expressions over
    # aggregates: SUM(price*volume) / SUM(volume) = 40 / 6 = 6 (INTEGER division).
    r = run("CREATE STREAM T (price INTEGER, volume INTEGER);", """
        SELECT STREAM SUM(price * volume) AS pv, SUM(price * volume) / SUM(volume) AS vwap, COUNT(*) + 1 AS n1
        FROM T GROUP BY FLOOR(T.ROWTIME TO HOUR)""",
            [row("T", "10:00", price=10, volume=2), row("T", "10:30", price=5, volume=4), bound("T", "11:00")])
    assert r.table("pv", "vwap", "n1") == [(3, "11:00:00", 40, 6, 3)]


def test_distinct_aggregates():
    # x = 1, 2, 1, 4, NULL and k = a, a, b, a, NULL in one hour: COUNT(DISTINCT x) = 3 ({1, 2, 4}),
    # SUM(DISTINCT x) = 7, COUNT(DISTINCT k) = 2 (NULL ignored), COUNT(*) = 5.
    r = run("CREATE STREAM S (k VARCHAR(5), x INTEGER);", """
        SELECT STREAM COUNT(DISTINCT x) AS cx, SUM(DISTINCT x) AS sx, COUNT(DISTINCT k) AS ck, COUNT(*) AS n
        FROM S GROUP BY FLOOR(S.ROWTIME TO HOUR)""",
            [row("S", "10:00", k="a", x=1), row("S", "10:03", k="a", x=2), row("S", "10:06", k="b", x=1),
             row("S", "10:20", k="a", x=4), row("S", "10:21", k=None, x=None), bound("S", "11:00")])
    assert r.table("cx", "sx", "ck", "n") == [(6, "11:00:00", 3, 7, 2, 5)]


# --------------------------------------------------------------------------- DISTINCT

def test_select_stream_distinct():
    # SELECT STREAM DISTINCT FLOOR(ROWTIME TO HOUR) AS h, k: a row is emitted at once, stamped with
    # its own rowtime, the first time its values appear within the current hour.
    #   step 1 10:05 a    -> new in hour 10 -> (1, 10:05, 10:00, a)
    #   step 2 10:10 b    -> new            -> (2, 10:10, 10:00, b)
    #   step 3 10:20 a    -> seen
    #   step 4 10:25 NULL -> new (NULL is a value) -> (4, 10:25, 10:00, NULL)
    #   step 5 10:30 NULL -> seen
    #   step 6 11:00 a    -> hour 11: new   -> (6, 11:00, 11:00, a)
    #   step 7 bound 11:30: nothing; output bound = input clock 11:30
    r = run("CREATE STREAM S (k VARCHAR(5));", "SELECT STREAM DISTINCT FLOOR(S.ROWTIME TO HOUR) AS h, k FROM S",
            [row("S", "10:05", k="a"), row("S", "10:10", k="b"), row("S", "10:20", k="a"), row("S", "10:25", k=None),
             row("S", "10:30", k=None), row("S", "11:00", k="a"), bound("S", "11:30")])
    h10, h11 = ts("10:00"), ts("11:00")
    assert r.table("h", "k") == [(1, "10:05:00", h10, "a"), (2, "10:10:00", h10, "b"), (4, "10:25:00", h10, None),
                                 (6, "11:00:00", h11, "a")]
    assert r.bounds[7] == "11:30:00"
    # the hour-10 values are forgotten once the clock passes 11:00; only hour 11's 'a' is kept
    assert op_of(r.q, AggregateOp).state_size() == 1


# --------------------------------------------------------------------------- errors

def test_group_by_without_monotonic_key_is_rejected_at_prepare(wb_local):
    wb_local.execute(ORDERS)
    with pytest.raises(SqlError) as e:
        wb_local.query("SELECT STREAM productId, COUNT(*) AS c, SUM(units) AS units FROM Orders GROUP BY productId")
    assert "Streaming aggregation requires at least one monotonic expression in GROUP BY clause" in str(e.value)
    assert wb_local.queries == {}
    # a constant or a non-time column is not enough either
    for keys in ("productId, FLOOR(units)", "1"):
        with pytest.raises(SqlError, match="Streaming aggregation requires at least one monotonic expression "
                                           "in GROUP BY clause"):
            wb_local.query(f"SELECT STREAM COUNT(*) AS c FROM Orders GROUP BY {keys}")
    # aggregates without GROUP BY on a stream: no monotonic key either
    with pytest.raises(SqlError, match="Streaming aggregation requires at least one monotonic expression"):
        wb_local.query("SELECT STREAM COUNT(*) AS c FROM Orders")
    # the session is still usable
    assert wb_local.query("SELECT STREAM COUNT(*) AS c FROM Orders GROUP BY FLOOR(Orders.ROWTIME TO HOUR)")


def test_group_by_error_message_exact(wb_local):
    wb_local.execute(ORDERS)
    with pytest.raises(SqlError) as e:
        wb_local.query("SELECT STREAM productId, COUNT(*) AS c FROM Orders GROUP BY productId")
    assert e.value.args[0].endswith("Streaming aggregation requires at least one monotonic expression in GROUP BY clause")


def test_non_monotonic_as_rowtime_is_rejected(wb_local):
    wb_local.execute(ORDERS)
    with pytest.raises(SqlError, match="ROWTIME expression must be monotonic"):
        wb_local.query("SELECT STREAM MAX(Orders.ROWTIME) - INTERVAL '1' HOUR * productId AS ROWTIME, productId "
                       "FROM Orders GROUP BY FLOOR(Orders.ROWTIME TO HOUR), productId")


def test_distinct_without_monotonic_expression_is_rejected(wb_local):
    wb_local.execute(ORDERS)
    with pytest.raises(SqlError, match="Streaming DISTINCT requires at least one monotonic expression in the select list"):
        wb_local.query("SELECT STREAM DISTINCT productId FROM Orders")


# --------------------------------------------------------------------------- both runtimes

def test_tumbling_example_on_both_runtimes(wb):
    # The first worked example again, on the Spark runtime too (the fixture runs both).
    wb.execute(ORDERS)
    r = run("", """
        SELECT STREAM FLOOR(Orders.ROWTIME TO HOUR) AS h, productId, COUNT(*) AS c, SUM(units) AS units
        FROM Orders GROUP BY FLOOR(Orders.ROWTIME TO HOUR), productId""", CALCITE_ORDERS, wb=wb)
    assert r.table("productId", "c", "units") == [
        (5, "11:00:00", 10, 1, 1), (5, "11:00:00", 20, 1, 2), (5, "11:00:00", 30, 2, 24),
        (9, "12:00:00", 10, 3, 11), (9, "12:00:00", 40, 1, 12)]
    assert r.bounds == {1: "11:00:00", 5: "12:00:00", 9: "13:00:00"}


# --------------------------------------------------------------------------- Spark runtime (pre-combined GROUP BY)

def test_spark_group_by_with_null_values(wb_spark):
    # Rows (k NULL, x 1) at 10:00 and (k 'a', x NULL) at 10:05, one hour: COUNT(*) = 2, SUM(x) = 1
    # (the NULL is ignored), released at the 11:00 bound (step 3), stamped 11:00.
    r = run("CREATE STREAM S (k VARCHAR(3), x INTEGER);",
            "SELECT STREAM COUNT(*) AS n, SUM(x) AS s FROM S GROUP BY FLOOR(S.ROWTIME TO HOUR)",
            [row("S", "10:00", k=None, x=1), row("S", "10:05", k="a", x=None), bound("S", "11:00")], wb=wb_spark)
    assert r.table("n", "s") == [(3, "11:00:00", 2, 1)]


def test_spark_two_monotonic_keys(wb_spark):
    # Same derivation as test_two_monotonic_keys_group_completes_with_the_finer_key.
    r = run("CREATE STREAM S (x INTEGER);", """
        SELECT STREAM FLOOR(S.ROWTIME TO HOUR) AS h, FLOOR(S.ROWTIME TO MINUTE) AS m, COUNT(*) AS c FROM S
        GROUP BY FLOOR(S.ROWTIME TO HOUR), FLOOR(S.ROWTIME TO MINUTE)""",
            [row("S", "10:00:10", x=1), row("S", "10:00:50", x=1), row("S", "10:01", x=1), bound("S", "10:02")],
            wb=wb_spark)
    assert r.table("m", "c") == [(3, "10:01:00", ts("10:00"), 2), (4, "10:02:00", ts("10:01"), 1)]


def test_spark_group_by_a_monotonic_column_of_a_subquery(wb_spark):
    # Same derivation as test_group_by_a_monotonic_column_of_a_subquery.
    r = run("CREATE STREAM S (x INTEGER);", """
        SELECT STREAM h, COUNT(*) AS c, SUM(x) AS s
        FROM (SELECT STREAM FLOOR(S.ROWTIME TO HOUR) AS h, x FROM S WHERE x > 0) AS t GROUP BY h""",
            [row("S", "10:00", x=1), row("S", "10:30", x=2), row("S", "10:40", x=-1), row("S", "11:01", x=4),
             bound("S", "12:00")], wb=wb_spark)
    assert r.table("h", "c", "s") == [(4, "11:00:00", ts("10:00"), 2, 3), (5, "12:00:00", ts("11:00"), 1, 4)]


@pytest.mark.parametrize("key", ["ROWTIME", "ROWTIME + INTERVAL '5' SECOND", "FLOOR(ROWTIME TO HOUR)",
                                 "FLOOR(ROWTIME + INTERVAL '90' SECOND TO MINUTE)", "CEIL(ROWTIME TO DAY)",
                                 "FLOOR(ROWTIME TO MONTH)", "FLOOR(ROWTIME TO WEEK)",
                                 "STEP(ROWTIME BY INTERVAL '15' MINUTE)",
                                 "FLOOR(ROWTIME TO HOUR) + INTERVAL '1' HOUR"])
def test_the_period_end_as_an_expression_is_the_period_end(key):
    """One rule for both runtimes: the Spark relational GROUP BY renders ``TimeKey.end_expr``
    through the function table; its value is ``period_end``'s."""
    import random
    from streamsql.engine import time as T
    from streamsql.engine.expr import Rowtime, compile_expr
    from streamsql.engine.operators.timekey import TimeKey
    from streamsql.engine.sql import analyze
    from test_sql_support import MemoryCatalog
    cat = MemoryCatalog()
    cat.run("CREATE STREAM S (x INTEGER)")
    q = analyze(f"SELECT STREAM {key} AS k FROM S", cat).query
    tk = TimeKey(q.root.exprs[0])
    end = compile_expr(tk.end_expr(Rowtime(0)))
    rng = random.Random(7)
    for _ in range(3000):
        t = rng.randrange(T.parse_timestamp("1990-01-01"), T.parse_timestamp("2030-01-01"))
        t -= t % (60_000 if rng.random() < 0.3 else 1)
        assert end((), (t,)) == tk.period_end(t), (key, T.format_timestamp(t))
