

def test_a_row_at_exactly_the_gap_opens_a_session_here_and_extends_spark_s(wb_spark):
    # 10:10 and 10:40 are 30 minutes apart: here two sessions, [10:10, 10:40) (released by the
    # 10:40 row's clock, step 2) and [10:40, 11:10) (by the bound 11:10, step 3); Spark's
    # session_window() keeps both rows in one session [10:10, 11:10), which its watermark passes
    # only with the 11:15 row (step 4)
    wb = wb_spark
    wb.execute("CREATE STREAM Events (color VARCHAR(10))")
    q = wb.query("SELECT STREAM SESSION_START(ROWTIME, INTERVAL '30' MINUTE) AS s, COUNT(*) AS c FROM Events "
                 "GROUP BY SESSION(ROWTIME, INTERVAL '30' MINUTE), color", name="gap")
    inject(wb, [("Events", "10:10", {"color": "red"}), ("Events", "10:40", {"color": "red"}),
                ("Events", "11:10"), ("Events", "11:15", {"color": "blue"})])
    twin = q.native()
    c = twin.comparison
    assert [(r.rowtime, r.values, r.ours, r.spark) for r in c.rows] == [
        (t("10:40"), (t("10:10"), 1), 2, None), (t("11:10"), (t("10:40"), 1), 3, None),
        (t("11:10"), (t("10:10"), 2), None, 4)]
    assert c.rows[0].why.endswith("Spark has no such session: its session_window() keeps a row at exactly the last "
                                  "one plus the gap in that session, where this query starts a new one")
    assert c.rows[2].why.endswith("this query has no such session: a row at exactly the last one plus the gap opens "
                                  "a new session here (the semantics, section 3.7)")
