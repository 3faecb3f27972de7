"""Which queries have a native Spark twin (docs/native.md), without Spark: the subset read from the
logical plan, the one-line error naming the construct outside it, and watermark delays."""
from __future__ import annotations

import pytest

from streamsql.engine.native import NativeUnsupported, delay_text, native_shape, parse_delay
from streamsql.engine.sql import analyze

DDL = ("CREATE STREAM Orders (orderId INTEGER, ticker VARCHAR(10), amount INTEGER);"
       "CREATE STREAM Trades (orderId INTEGER, ticker VARCHAR(10), amount INTEGER);"
       "CREATE TABLE Names (orderId INTEGER, name VARCHAR(10))")


@pytest.fixture
def plan(wb_local):
    wb_local.execute(DDL)
    return lambda sql: analyze(sql, wb_local.catalog).query


@pytest.mark.parametrize("sql, kind, window", [
    ("SELECT STREAM ROWTIME, orderId FROM Orders WHERE amount > 10 UNION ALL SELECT STREAM ROWTIME, orderId FROM Trades",
     "stateless", None),
    ("SELECT STREAM FLOOR(ROWTIME TO HOUR) AS h, ticker, SUM(amount) AS s, AVG(amount) AS a FROM Orders "
     "GROUP BY FLOOR(ROWTIME TO HOUR), ticker", "aggregate", 3_600_000),
    ("SELECT STREAM STEP(ROWTIME BY INTERVAL '15' MINUTE) AS q, COUNT(*) AS n FROM "
     "(SELECT STREAM ROWTIME, amount FROM Orders UNION ALL SELECT STREAM ROWTIME, amount FROM Trades) "
     "GROUP BY STEP(ROWTIME BY INTERVAL '15' MINUTE)", "aggregate", 900_000),
    ("SELECT STREAM ROWTIME, o.orderId, t.amount FROM Orders OVER (RANGE INTERVAL '5' MINUTE PRECEDING) AS o "
     "FULL OUTER JOIN Trades AS t ON o.orderId = t.orderId", "join", None),
    # window shapes: Spark's window() and session_window()
    ("SELECT STREAM TUMBLE_END(ROWTIME, INTERVAL '15' MINUTE) AS ROWTIME, ticker, COUNT(*) AS n FROM Orders "
     "GROUP BY TUMBLE(ROWTIME, INTERVAL '15' MINUTE), ticker", "aggregate", None),
    ("SELECT STREAM window_end, SUM(amount) AS s FROM TABLE(HOP(TABLE Orders, DESCRIPTOR(ROWTIME), "
     "INTERVAL '1' HOUR, INTERVAL '7007' SECOND)) GROUP BY window_start, window_end", "aggregate", None),
    ("SELECT STREAM ticker, COUNT(*) AS n FROM Orders GROUP BY SESSION(ROWTIME, INTERVAL '5' MINUTE), ticker",
     "aggregate", None),
    ("SELECT STREAM orderId, window_end FROM TABLE(TUMBLE(TABLE Orders, DESCRIPTOR(ROWTIME), INTERVAL '1' HOUR))",
     "stateless", None),
])
def test_native_shapes(plan, sql, kind, window):
    shape = native_shape(plan(sql))
    assert (shape.kind, shape.window_ms) == (kind, window)


@pytest.mark.parametrize("sql, construct", [
    ("SELECT STREAM ROWTIME, SUM(amount) OVER (RANGE INTERVAL '1' HOUR PRECEDING) AS s FROM Orders", "an OVER window"),
    ("SELECT STREAM FLOOR(ROWTIME TO HOUR) AS h, amount FROM Orders ORDER BY FLOOR(ROWTIME TO HOUR), amount",
     "ORDER BY"),
    ("SELECT STREAM DISTINCT FLOOR(ROWTIME TO HOUR) AS h, ticker FROM Orders", "SELECT STREAM DISTINCT"),
    ("SELECT STREAM FLOOR(ROWTIME TO HOUR) AS h, FIRST_VALUE(amount) AS f FROM Orders GROUP BY FLOOR(ROWTIME TO HOUR)",
     "FIRST_VALUE"),
    ("SELECT STREAM FLOOR(ROWTIME TO HOUR) AS h, COUNT(DISTINCT ticker) AS n FROM Orders GROUP BY FLOOR(ROWTIME TO HOUR)",
     "COUNT(DISTINCT ...)"),
    ("SELECT STREAM CEIL(ROWTIME TO HOUR) AS h, COUNT(*) AS n FROM Orders GROUP BY CEIL(ROWTIME TO HOUR)",
     "a CEIL period key"),
    ("SELECT STREAM FLOOR(ROWTIME TO MONTH) AS m, COUNT(*) AS n FROM Orders GROUP BY FLOOR(ROWTIME TO MONTH)",
     "a FLOOR period key"),
    ("SELECT STREAM ROWTIME + INTERVAL '1' MINUTE AS ROWTIME, orderId FROM Orders", "an AS ROWTIME projection"),
    ("SELECT STREAM ROWTIME, o.orderId, n.name FROM Orders AS o JOIN Names AS n ON o.orderId = n.orderId",
     "a join with a table"),
    ("SELECT STREAM FLOOR(ROWTIME TO HOUR) AS h, COUNT(*) AS n FROM Orders GROUP BY FLOOR(ROWTIME TO HOUR) UNION ALL "
     "SELECT STREAM FLOOR(ROWTIME TO HOUR) AS h, COUNT(*) AS n FROM Trades GROUP BY FLOOR(ROWTIME TO HOUR)",
     "a UNION ALL of GROUP BY or join results"),
    ("SELECT STREAM FLOOR(j.ROWTIME TO HOUR) AS h, COUNT(*) AS n FROM (SELECT STREAM ROWTIME, o.orderId FROM Orders "
     "AS o JOIN Trades OVER (RANGE INTERVAL '10' MINUTE FOLLOWING) AS t ON o.orderId = t.orderId) AS j "
     "GROUP BY FLOOR(j.ROWTIME TO HOUR)", "a GROUP BY over a JOIN"),
    ("SELECT STREAM window_end, COUNT(*) AS n FROM TABLE(CUMULATE(TABLE Orders, DESCRIPTOR(ROWTIME), "
     "INTERVAL '15' MINUTE, INTERVAL '1' HOUR)) GROUP BY window_start, window_end", "a CUMULATE window"),
    ("SELECT STREAM window_end, COUNT(*) AS n FROM TABLE(HOP(TABLE Orders, DESCRIPTOR(ROWTIME), "
     "INTERVAL '1' HOUR, INTERVAL '30' MINUTE)) GROUP BY window_start, window_end", "a HOP shorter than its slide"),
    ("SELECT STREAM orderId FROM TABLE(SESSION(TABLE Orders PARTITION BY ticker, DESCRIPTOR(ROWTIME), "
     "INTERVAL '5' MINUTE))", "a SESSION window table's rows"),
    ("SELECT STREAM * FROM (SELECT STREAM orderId, ROW_NUMBER() OVER (PARTITION BY window_start, window_end "
     "ORDER BY amount DESC) AS rn FROM TABLE(TUMBLE(TABLE Orders, DESCRIPTOR(ROWTIME), INTERVAL '1' HOUR))) "
     "WHERE rn <= 2", "a ROW_NUMBER Top-N"),
    ("SELECT STREAM TUMBLE_START(ROWTIME, INTERVAL '1' HOUR) AS ROWTIME, COUNT(*) AS n FROM Orders "
     "GROUP BY TUMBLE(ROWTIME, INTERVAL '1' HOUR)", "a window aggregation stamped at its window's start or time"),
    ("SELECT STREAM window_end, ticker, COUNT(*) AS n FROM TABLE(SESSION(TABLE Orders PARTITION BY ticker, "
     "DESCRIPTOR(ROWTIME), INTERVAL '5' MINUTE)) GROUP BY window_start, window_end, ticker, amount",
     "a session grouped by more than its session keys"),
])
def test_outside_the_subset(plan, sql, construct):
    with pytest.raises(NativeUnsupported) as e:
        native_shape(plan(sql))
    msg = str(e.value)
    assert msg.startswith(f"no native Spark twin: {construct} (") and "\n" not in msg


@pytest.mark.parametrize("text, ms", [("0 seconds", 0), ("10 minutes", 600_000), ("10min", 600_000),
                                      ("1 hour", 3_600_000), ("90s", 90_000), ("250 ms", 250), (5000, 5000)])
def test_delays(text, ms):
    assert parse_delay(text) == ms


@pytest.mark.parametrize("bad", ["soon", "-5 minutes", "10 parsecs", -1, True, "1.5 hours"])
def test_bad_delays_are_one_line(bad):
    with pytest.raises(NativeUnsupported, match="watermark delay"):
        parse_delay(bad)


def test_delay_text():
    assert [delay_text(x) for x in (0, 1000, 600_000, 3_600_000, 90_000, 250)] == \
        ["0 seconds", "1 second", "10 minutes", "1 hour", "90 seconds", "250 milliseconds"]
