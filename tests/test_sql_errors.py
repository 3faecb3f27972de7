"""Every validation error: its exact message and the line/column of the offending token in the
whole script (multi-line statements, statements later in a script)."""
import pytest

from streamsql.engine.errors import SqlError
from streamsql.engine.sql import analyze, split_script
from test_sql_support import error, pos, sample_catalog, where

FOLLOWING = ("FOLLOWING is not allowed in a windowed aggregation on a stream: "
             "the frame cannot include rows that have not arrived")
NO_WINDOW = ("A join of two streams needs a window (OVER (RANGE INTERVAL ... PRECEDING or FOLLOWING)) "
             "on at least one side, or two window table functions joined on their windows; without one it "
             "would need unbounded memory")


def check(sql, message, needle, nth=0, catalog=None):
    e = error(sql, catalog)
    assert e.message == message
    assert where(e) == pos(sql, needle, nth), (e.message, where(e))
    assert e.sql == sql
    return e


# --------------------------------------------------------------------------- positions in scripts

def test_error_in_a_later_statement_is_positioned_in_the_whole_script():
    script = ("CREATE STREAM s (a INTEGER);\n"
              "SELECT STREAM a FROM s;\n"
              "  SELECT STREAM a,\n"
              "         b\n"
              "  FROM s")
    stmts = split_script(script)
    cat = sample_catalog()
    cat.apply(analyze(stmts[0], cat, script))
    analyze(stmts[1], cat, script)
    with pytest.raises(SqlError) as info:
        analyze(stmts[2], cat, script)
    e = info.value
    assert (e.message, e.line, e.col) == ("Column 'B' not found", 4, 10)
    assert e.sql == script
    assert e.caret().splitlines()[1:] == ["           b", "           ^"]


def test_error_on_the_first_line_of_a_statement_that_starts_mid_line():
    script = "SELECT STREAM * FROM Orders;   SELECT STREAM nope FROM Orders"
    stmt = split_script(script)[1]
    e = error(None, script=script, stmt=stmt)
    assert (e.message, e.line, e.col) == ("Column 'NOPE' not found", 1, script.index("nope") + 1)


def test_syntax_error_position():
    sql = "SELECT STREAM ticker\nFROM Orders\nWHERE units >"
    e = error(sql)
    assert e.message.startswith("Syntax error")
    sql = "SELECT STREAM ticker FROM Orders WHERE ) units"
    check(sql, "Syntax error near ')'", ")")


def test_unterminated_string():
    sql = "SELECT STREAM ticker FROM Orders\nWHERE ticker = 'ORCL"
    check(sql, "Syntax error: unterminated string, identifier or comment", "'ORCL")


def test_unsupported_statement_at_its_first_token():
    sql = "  UPDATE Orders SET units = 1"
    e = check(sql, e_msg := error(sql).message, "UPDATE")
    assert e_msg.startswith("Unsupported statement UPDATE")
    e = error("CREATE INDEX i ON t (x)")
    assert e.message.startswith("Unsupported statement: CREATE INDEX") and where(e) == (1, 1)
    e = error("DROP SCHEMA x")
    assert e.message.startswith("Unsupported statement: DROP SCHEMA")
    e = error("ALTER TABLE t ADD x INTEGER")
    assert e.message.startswith("Unsupported statement: only ALTER PUMP")


# --------------------------------------------------------------------------- conversions

def test_cannot_convert_stream_to_table():
    check("SELECT *\nFROM   Shipments AS s", "Cannot convert stream 'SHIPMENTS' to a table", "Shipments")


def test_cannot_convert_table_to_stream_through_subquery_and_join_of_tables():
    check("SELECT STREAM * FROM Products", "Cannot convert table 'PRODUCTS' to a stream", "Products")
    sql = "SELECT STREAM name FROM (SELECT * FROM Products WHERE productId > 1)"
    check(sql, "Cannot convert table 'PRODUCTS' to a stream", "Products")
    sql = "SELECT STREAM a.name FROM Products AS a JOIN Products AS b ON a.productId = b.productId"
    check(sql, "Cannot convert table 'PRODUCTS' to a stream", "Products")


def test_cannot_stream_values():
    sql = "SELECT STREAM *\nFROM (VALUES (1, 'abc'))"
    check(sql, "Cannot stream VALUES", "VALUES")
    check("SELECT STREAM 1", "Cannot stream VALUES", "SELECT")


def test_unknown_relation():
    check("SELECT STREAM * FROM Nope AS n", "Stream or table 'NOPE' not found", "Nope")
    check('SELECT STREAM * FROM "orders"', "Stream or table 'orders' not found", '"orders"')
    check("SELECT STREAM * FROM OldPump", "'OLDPUMP' is a pump, not a stream or table", "OldPump")


# --------------------------------------------------------------------------- names

def test_unknown_and_ambiguous_columns():
    check("SELECT STREAM ticker, nope FROM Orders", "Column 'NOPE' not found", "nope")
    check("SELECT STREAM o.nope FROM Orders AS o", "Column 'NOPE' not found in 'O'", "o.nope")
    check("SELECT STREAM x.ticker FROM Orders AS o", "Table 'X' not found", "x.ticker")
    sql = ("SELECT STREAM ticker FROM Orders AS o\n"
           "JOIN Trades OVER (RANGE INTERVAL '1' MINUTE PRECEDING) AS t ON o.orderId = t.orderId")
    check(sql, "Column 'TICKER' is ambiguous", "ticker")
    sql = ("SELECT STREAM o.ticker FROM Orders AS o\n"
           "JOIN Trades OVER (RANGE INTERVAL '1' MINUTE PRECEDING) AS t ON ROWTIME = t.ROWTIME")
    check(sql, "Column 'ROWTIME' is ambiguous", "ROWTIME =")
    check("SELECT STREAM * FROM Orders AS a JOIN Orders AS a ON a.units = 1",
          "Duplicate relation name 'A' in FROM; use AS to rename one", "Orders", 1)


def test_rowtime_of_a_table_does_not_exist():
    check("SELECT ROWTIME, name FROM Products", "Column 'ROWTIME' not found", "ROWTIME")
    # under STREAM, the conversion is the problem to report
    check("SELECT STREAM ROWTIME, name FROM Products", "Cannot convert table 'PRODUCTS' to a stream", "Products")


# --------------------------------------------------------------------------- types

def test_type_errors_point_at_the_operator():
    sql = "SELECT STREAM ticker\nFROM Orders\nWHERE units + ticker > 2"
    check(sql, "Cannot apply '+' to arguments of type INTEGER and VARCHAR(10)", "+")
    sql = "SELECT STREAM ticker FROM Orders WHERE (units) = ticker"
    check(sql, "Cannot apply '=' to arguments of type INTEGER and VARCHAR(10)", "=")
    sql = "SELECT STREAM ticker FROM Orders WHERE units != 'x'"
    check(sql, "Cannot apply '!=' to arguments of type INTEGER and VARCHAR(1)", "!=")
    sql = "SELECT STREAM ticker FROM Orders WHERE units > 1 AND units"
    check(sql, "Cannot apply 'AND' to arguments of type BOOLEAN and INTEGER", "AND")
    check("SELECT STREAM UPPER(units) FROM Orders", "Cannot apply 'UPPER' to arguments of type INTEGER", "UPPER")
    check("SELECT STREAM SUM(ticker) FROM Orders GROUP BY FLOOR(ROWTIME TO HOUR)",
          "Cannot apply 'SUM' to arguments of type VARCHAR(10)", "SUM")
    check("SELECT STREAM ticker FROM Orders WHERE units BETWEEN 'a' AND 3",
          "Cannot apply 'BETWEEN' to arguments of type INTEGER and VARCHAR(1)", "BETWEEN")
    check("SELECT STREAM ticker FROM Orders WHERE units IN (1, 'a')",
          "Cannot apply 'IN' to arguments of type INTEGER and VARCHAR(1)", "IN")
    check("SELECT STREAM ticker FROM Orders WHERE ticker LIKE 1",
          "Cannot apply 'LIKE' to arguments of type VARCHAR(10) and INTEGER", "LIKE")
    check("SELECT STREAM FLOOR(ticker TO HOUR) FROM Orders",
          "Cannot apply 'FLOOR ... TO HOUR' to arguments of type VARCHAR(10)", "FLOOR")


def test_conditions_must_be_boolean():
    check("SELECT STREAM ticker FROM Orders\nWHERE units", "WHERE clause must be a BOOLEAN expression, not INTEGER",
          "units")
    sql = ("SELECT STREAM FLOOR(ROWTIME TO HOUR) AS h, COUNT(*) FROM Orders "
           "GROUP BY FLOOR(ROWTIME TO HOUR) HAVING COUNT(*)")
    check(sql, "HAVING clause must be a BOOLEAN expression, not BIGINT", "COUNT(*)", 1)
    sql = ("SELECT STREAM o.ticker FROM Orders AS o JOIN Trades OVER (RANGE CURRENT ROW) AS t "
           "ON o.orderId + t.orderId")
    check(sql, "ON clause must be a BOOLEAN expression, not INTEGER", "o.orderId +")


def test_invalid_literals_and_units():
    check("SELECT STREAM ticker FROM Orders WHERE ROWTIME > 'noon'",
          "Invalid TIMESTAMP literal 'noon': invalid timestamp 'noon'; expected 'YYYY-MM-DD HH:MM:SS[.fff]'", "'noon'")
    e = check("SELECT STREAM FLOOR(ROWTIME TO FORTNIGHT) FROM Orders", error(
        "SELECT STREAM FLOOR(ROWTIME TO FORTNIGHT) FROM Orders").message, "FORTNIGHT")
    assert e.message.startswith("Unknown time unit 'FORTNIGHT'")
    check("SELECT STREAM NOSUCH(units) FROM Orders", "Unknown function NOSUCH", "NOSUCH")


# --------------------------------------------------------------------------- ROWTIME

def test_rowtime_expression_must_be_monotonic():
    sql = "SELECT STREAM\n  CAST(ticker AS TIMESTAMP) AS ROWTIME, units\nFROM Orders"
    check(sql, "ROWTIME expression must be monotonic in the input's ROWTIME", "CAST")
    sql = "SELECT STREAM ROWTIME - (ROWTIME - TIMESTAMP '2006-01-01 00:00:00') AS rowtime FROM Orders"
    check(sql, "ROWTIME expression must be monotonic in the input's ROWTIME", "ROWTIME -")
    sql = ("SELECT STREAM FLOOR(ROWTIME TO HOUR) AS h, MAX(ROWTIME) AS ROWTIME FROM Orders "
           "GROUP BY FLOOR(ROWTIME TO HOUR)")
    check(sql, "ROWTIME expression must be monotonic in the input's ROWTIME", "MAX")
    check("SELECT STREAM units AS ROWTIME FROM Orders", "ROWTIME must be a TIMESTAMP, not INTEGER", "units")


INTERVAL_COLUMN = ("A column of a query cannot be an INTERVAL ('{}'): intervals are only for time arithmetic "
                   "(a TIMESTAMP plus or minus an INTERVAL)")


@pytest.mark.parametrize("sql,name,needle", [
    # found by the stream-relation fuzzer: a stream's INTERVAL column failed every delivery (the
    # INSERT that fed it with a raw ArrowTypeError) and Spark could not compute it at all
    ("SELECT STREAM ROWTIME, s.ROWTIME - o.ROWTIME AS gap FROM Orders OVER (RANGE INTERVAL '1' HOUR PRECEDING) AS o "
     "JOIN Shipments AS s ON o.orderId = s.orderId", "GAP", "s.ROWTIME -"),
    ("SELECT INTERVAL '1' HOUR AS h FROM Products", "H", "INTERVAL"),
    ("SELECT STREAM FLOOR(ROWTIME TO HOUR) AS h, MAX(ROWTIME) - MIN(ROWTIME) AS span FROM Orders "
     "GROUP BY FLOOR(ROWTIME TO HOUR)", "SPAN", "MAX"),
])
def test_no_column_is_an_interval(sql, name, needle):
    check(sql, INTERVAL_COLUMN.format(name), needle)
    # in a condition an interval is fine
    error_free = "SELECT STREAM units FROM Orders WHERE ROWTIME - ROWTIME < INTERVAL '1' MINUTE"
    analyze(error_free, sample_catalog())


# --------------------------------------------------------------------------- aggregation

def test_streaming_aggregation_needs_a_monotonic_key():
    sql = "SELECT STREAM ticker, COUNT(*)\nFROM Orders\nGROUP BY ticker"
    check(sql, "Streaming aggregation requires at least one monotonic expression in GROUP BY clause", "GROUP BY")
    sql = "SELECT STREAM COUNT(*) FROM Orders"
    check(sql, "Streaming aggregation requires at least one monotonic expression in GROUP BY clause", "SELECT")
    sql = "SELECT STREAM ticker FROM Orders GROUP BY ticker, FLOOR(TIMESTAMP '2006-01-01 00:00:00' TO HOUR)"
    check(sql, "Streaming aggregation requires at least one monotonic expression in GROUP BY clause", "GROUP BY")


def test_select_items_must_be_grouped():
    sql = "SELECT STREAM ticker, units\nFROM Orders\nGROUP BY FLOOR(ROWTIME TO HOUR), ticker"
    check(sql, "Expression 'units' is not being grouped", "units")
    sql = "SELECT STREAM o.ticker, COUNT(*) FROM Orders AS o GROUP BY FLOOR(ROWTIME TO HOUR), units"
    check(sql, "Expression 'o.ticker' is not being grouped", "o.ticker")
    sql = ("SELECT STREAM FLOOR(ROWTIME TO HOUR), COUNT(*) FROM Orders GROUP BY FLOOR(ROWTIME TO HOUR) "
           "HAVING units > 1")
    check(sql, "Expression 'units' is not being grouped", "units")
    sql = "SELECT STREAM * FROM Orders GROUP BY FLOOR(ROWTIME TO HOUR)"
    check(sql, "Expression 'PRODUCTID' is not being grouped", "*")


def test_aggregates_where_they_do_not_belong():
    check("SELECT STREAM ticker FROM Orders WHERE SUM(units) > 1",
          "Aggregate function SUM is not allowed in WHERE", "SUM")
    check("SELECT STREAM COUNT(*) FROM Orders GROUP BY FLOOR(ROWTIME TO HOUR), COUNT(*)",
          "Aggregate function COUNT is not allowed in GROUP BY", "COUNT", 1)
    check("SELECT STREAM FLOOR(ROWTIME TO HOUR), SUM(COUNT(*)) FROM Orders GROUP BY FLOOR(ROWTIME TO HOUR)",
          "Aggregate function COUNT is not allowed in the argument of SUM", "COUNT")


def test_streaming_distinct_needs_a_monotonic_expression():
    sql = "SELECT STREAM DISTINCT ticker, units\nFROM Orders"
    check(sql, "Streaming DISTINCT requires at least one monotonic expression in the select list", "SELECT")


# --------------------------------------------------------------------------- windows

def test_following_is_rejected_at_the_token():
    sql = "SELECT STREAM SUM(units) OVER (RANGE INTERVAL '1' HOUR FOLLOWING) FROM Orders"
    check(sql, FOLLOWING, "FOLLOWING")
    sql = ("SELECT STREAM SUM(units) OVER w FROM Orders\n"
           "WINDOW w AS (ROWS BETWEEN 2 PRECEDING AND UNBOUNDED FOLLOWING)")
    check(sql, FOLLOWING, "FOLLOWING")


def test_range_with_a_number_suggests_rows():
    sql = "SELECT STREAM SUM(units) OVER (RANGE 5 PRECEDING) FROM Orders"
    e = check(sql, error(sql).message, "5")
    assert e.message.startswith("RANGE needs an INTERVAL") and "ROWS n PRECEDING" in e.message
    sql = "SELECT STREAM SUM(units) OVER (ROWS INTERVAL '1' MINUTE PRECEDING) FROM Orders"
    e = check(sql, error(sql).message, "INTERVAL")
    assert e.message.startswith("ROWS needs a number of rows")


def test_window_order_and_names():
    sql = "SELECT STREAM SUM(units) OVER (ORDER BY units ROWS 2 PRECEDING) FROM Orders"
    e = check(sql, error(sql).message, "units ROWS")
    assert e.message.startswith("A window on a stream must be ordered by ROWTIME")
    check("SELECT STREAM SUM(units) OVER nope FROM Orders", "Window 'NOPE' not found", "nope")
    sql = ("SELECT STREAM SUM(units) OVER w (RANGE INTERVAL '1' HOUR PRECEDING) FROM Orders "
           "WINDOW w AS (ROWS 2 PRECEDING)")
    check(sql, "Window 'W' already has a frame", "RANGE")
    sql = ("SELECT STREAM SUM(units) OVER w (PARTITION BY ticker) FROM Orders "
           "WINDOW w AS (PARTITION BY productId)")
    check(sql, "Cannot override PARTITION BY of window 'W'", "(PARTITION", 0)
    sql = ("SELECT STREAM SUM(units) OVER (RANGE BETWEEN INTERVAL '1' MINUTE PRECEDING AND "
           "INTERVAL '2' MINUTE PRECEDING) FROM Orders")
    e = check(sql, error(sql).message, "INTERVAL '2'")
    assert e.message.startswith("A window frame cannot end before it starts")


def test_join_of_streams_needs_a_window_at_the_join_keyword():
    sql = ("SELECT STREAM o.ticker\n"
           "FROM Orders AS o\n"
           "  LEFT OUTER JOIN Trades AS t ON o.orderId = t.orderId")
    check(sql, NO_WINDOW, "JOIN")
    sql = "SELECT STREAM * FROM Orders OVER (RANGE INTERVAL '1' MINUTE PRECEDING) AS o"
    e = check(sql, error(sql).message, "(RANGE")
    assert e.message.startswith("A window on a FROM item")


def test_join_windows_are_checked():
    sql = ("SELECT STREAM o.ticker FROM Orders AS o JOIN Products OVER (RANGE CURRENT ROW) AS p "
           "ON o.productId = p.productId")
    check(sql, "A window (OVER) is only allowed on a stream joined with a stream", "(RANGE")
    sql = ("SELECT STREAM o.ticker FROM Orders AS o JOIN Trades OVER (ROWS 5 PRECEDING) AS t "
           "ON o.orderId = t.orderId")
    check(sql, "A join window is a RANGE of time; ROWS is only allowed as ROWS CURRENT ROW", "5")
    sql = ("SELECT STREAM o.ticker FROM Orders AS o JOIN Trades OVER (RANGE UNBOUNDED PRECEDING) AS t "
           "ON o.orderId = t.orderId")
    check(sql, "An UNBOUNDED join window would need unbounded memory", "UNBOUNDED")
    sql = ("SELECT STREAM p.name FROM Products AS p LEFT JOIN Orders AS o ON o.productId = p.productId")
    e = check(sql, error(sql).message, "JOIN")
    assert e.message.startswith("A stream-table join can only preserve the stream side")


# --------------------------------------------------------------------------- ORDER BY, UNION

def test_streaming_order_by_must_start_with_a_monotonic_expression():
    sql = "SELECT STREAM ticker, units\nFROM Orders\nORDER BY units, ROWTIME"
    check(sql, "Streaming ORDER BY must start with monotonic expression", "ORDER BY")
    sql = "SELECT STREAM ticker FROM Orders ORDER BY ROWTIME DESC"
    check(sql, "Streaming ORDER BY must start with monotonic expression", "ORDER BY")
    sql = "SELECT STREAM ticker FROM Orders ORDER BY ROWTIME LIMIT 5"
    check(sql, "LIMIT, OFFSET and FETCH cannot be used in a streaming query", "LIMIT")
    sql = "SELECT STREAM ticker FROM Orders ORDER BY nope"
    check(sql, "Column 'NOPE' not found", "nope")


def test_t_sort_errors():
    sql = "SELECT STREAM ticker FROM Orders ORDER BY ROWTIME WITHIN INTERVAL '1' MINUTE"
    check(sql, "ORDER BY ... WITHIN needs an expression AS ROWTIME in the select list", "ORDER BY")
    sql = ("SELECT STREAM CAST(ticker AS TIMESTAMP) AS ROWTIME, units FROM Orders "
           "ORDER BY units WITHIN INTERVAL '1' MINUTE")
    check(sql, "ORDER BY ... WITHIN must start with the expression the select list gives AS ROWTIME", "units", 1)


def test_union_errors():
    sql = "SELECT STREAM name FROM P UNION SELECT STREAM name FROM Q"
    check(sql, "UNION on streams must be UNION ALL", "UNION")
    sql = "SELECT STREAM name FROM P UNION ALL SELECT STREAM name, name FROM Q"
    check(sql, "Column count mismatch in UNION ALL: 1 and 2 columns", "SELECT", 1)
    sql = "SELECT STREAM name FROM P UNION ALL SELECT STREAM units FROM Orders"
    check(sql, "Column 'NAME' of UNION ALL has incompatible types VARCHAR(10) and INTEGER", "SELECT", 1)
    sql = "SELECT STREAM ROWTIME, name FROM P UNION ALL SELECT STREAM name FROM Q"
    check(sql, "Every branch of UNION ALL must show ROWTIME at the same position of its select list",
          "SELECT", 1)
    sql = "SELECT STREAM name FROM P INTERSECT SELECT STREAM name FROM Q"
    check(sql, "INTERSECT is not supported", "INTERSECT")
