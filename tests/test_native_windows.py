"""The native twin of window shapes (docs/semantics.md 3.7; docs/native.md): a hop and a session
run beside Spark's own ``window()`` and ``session_window()`` with ``withWatermark`` (delay 0), one
event per micro-batch. Expectations worked out by hand from Spark's rules (tests/test_native.py
states them): the watermark after a step is the maximum event time seen; a step that moves it
gets a no-data batch, which emits the windows (sessions) whose end it reached; a row below the
watermark in force is dropped. Where a bound closes a window here, Spark waits for a later row.
"""
from __future__ import annotations

from test_native import inject, observed, t


def test_hop_twin_window(wb_spark):
    wb = wb_spark
    wb.execute("CREATE STREAM Events (color VARCHAR(10))")
    q = wb.query("SELECT STREAM window_start, window_end, COUNT(*) AS c FROM TABLE(HOP(TABLE Events, "
                 "DESCRIPTOR(ROWTIME), INTERVAL '30' MINUTE, INTERVAL '1' HOUR)) GROUP BY window_start, window_end",
                 name="hops")
    inject(wb, [("Events", "10:10", {"color": "red"}),     # windows 09:30-10:30, 10:00-11:00
                ("Events", "11:00"),                        # bound: closes both here; Spark sees nothing
                ("Events", "11:20", {"color": "red"}),      # 10:30-11:30, 11:00-12:00; Spark's watermark 11:20
                ("Events", "10:50", {"color": "blue"}),     # late here (clock 11:20); below Spark's watermark
                ("Events", "12:00", {"color": "red"})])     # closes 10:30-11:30 and 11:00-12:00 on both sides
    twin = q.native()

    def win(s, e, n):
        return (t(e), (t(s), t(e), n))
    assert observed(twin) == {
        1: ([], 2, t("10:10"), False),
        2: ([], 1, t("10:10"), False),
        3: ([(1, *win("09:30", "10:30", 1)), (1, *win("10:00", "11:00", 1))], 2, t("11:20"), False),
        4: ([], 1, t("11:20"), True),
        # Spark drops a late row per window: the 10:50 row is dropped from 10:00-11:00 (ended by the
        # watermark 11:20) but counted in 10:30-11:30, which had not ended
        5: ([(1, *win("10:30", "11:30", 2)), (1, *win("11:00", "12:00", 1))], 2, t("12:00"), False),
    }
    assert [(r.step, r.values) for r in q.rows] == [(2, win("09:30", "10:30", 1)[1]), (2, win("10:00", "11:00", 1)[1]),
                                                    (5, win("10:30", "11:30", 1)[1]), (5, win("11:00", "12:00", 1)[1])]
    c = twin.comparison
    assert [(r.values[2], r.ours, r.spark) for r in c.differing] == [(1, 2, 3), (1, 2, 3), (2, None, 5), (1, 5, None)]
    assert c.differing[0].why == ("the bound of EVENTS alone released it at step 2; Spark waits until the "
                                  "maximum event time passes 10:30, at step 3 (watermark 11:20)")
    assert c.differing[2].why.endswith("this query rejected the EVENTS row at 10:50 (step 4) as late, into the error "
                                       "stream; Spark dropped it only from the windows its watermark had closed and "
                                       "counted it in the others")


def test_session_twin_session_window(wb_spark):
    wb = wb_spark
    wb.execute("CREATE STREAM Events (color VARCHAR(10))")
    q = wb.query("SELECT STREAM SESSION_START(ROWTIME, INTERVAL '10' MINUTE) AS s, color, COUNT(*) AS c FROM Events "
                 "GROUP BY SESSION(ROWTIME, INTERVAL '10' MINUTE), color", name="sessions")
    inject(wb, [("Events", "10:00", {"color": "red"}),
                ("Events", "10:05", {"color": "red"}),      # red's session [10:00, 10:15)
                ("Events", "10:30", {"color": "blue"}),     # completes red's on both sides (watermark 10:30)
                ("Events", "10:45"),                        # bound: completes blue's [10:30, 10:40) here only
                ("Events", "10:50", {"color": "red"})])     # Spark's watermark 10:50 completes blue's there
    twin = q.native()
    red = (t("10:15"), (t("10:00"), "red", 2))
    blue = (t("10:40"), (t("10:30"), "blue", 1))
    assert observed(twin) == {
        1: ([], 2, t("10:00"), False),
        2: ([], 2, t("10:05"), False),
        3: ([(1, *red)], 2, t("10:30"), False),
        4: ([], 1, t("10:30"), False),
        5: ([(1, *blue)], 2, t("10:50"), False),
    }
    assert [(r.step, r.rowtime, r.values) for r in q.rows] == [(3, *red), (4, *blue)]
    c = twin.comparison
    assert [(r.values, r.ours, r.spark) for r in c.differing] == [(blue[1], 4, 5)]
    assert c.differing[0].why == ("the bound of EVENTS alone released it at step 4; Spark waits until the "
                                  "maximum event time passes 10:40, at step 5 (watermark 10:50)")
