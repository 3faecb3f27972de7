"""The example queries of the seed documents (000-004) analyze, as written where they are valid.

Deliberately rejected, each with a test below:
- 001 ``... qty FROMTradeStream`` (missing space): no FROM clause (``FROMTradeStream`` is an alias),
  so it is a streaming query over VALUES;
- 001 the GROUP BY over a LEFT JOIN: it refers to ``"OrderStream".ROWTIME`` after aliasing
  the stream as "o" (the alias hides the name), and HAVING uses the ungrouped "o"."amount";
  the corrected query analyzes;
- 001 the moving-average crossing query: an extra ')' and a windowed aggregate in WHERE; a
  corrected query (windows in the inner SELECT, the comparison one level up) analyzes;
- 002 join #3: a comma before FROM (a trailing comma is a syntax error); without it, it analyzes;
- 000 ``VALUES (?, ?)``: bind parameters are a JDBC feature, not SQL text;
- 000 ``rowtime + 100 AS rowtime``: TIMESTAMP + INTEGER has no meaning in SQL (use an INTERVAL);
- 003 has only fragments (its view bodies are cut off); reconstructions of its foreign stream
  and both views analyze.
"""
import pytest

from streamsql.engine import plan as P
from streamsql.engine.sql import analyze
from test_sql_support import (F, MemoryCatalog, chain, error, names, pos, query, sample_catalog, show,
                              where)

HOUR = 3_600_000
MINUTE = 60_000


# --------------------------------------------------------------------------- 000

def test_seed000_named_stream_statements():
    c = sample_catalog()
    c.run("CREATE STREAM foo (x INTEGER, y INTEGER, z INTEGER); INSERT into foo (x, y) VALUES(101, 118)")
    assert isinstance(c.resolve("FOO"), P.StreamInfo)
    q = query("SELECT STREAM * from foo", c)
    assert names(q.columns) == ["X", "Y", "Z"]
    q = query("SELECT STREAM rowtime, (x + y), z from foo where z > 12", c)
    assert names(q.columns) == ["EXPR$1", "Z"] and q.rowtime_column == 0
    assert show(q.root.exprs[0]) == "+($0, $1)"
    stmt = analyze("CREATE STREAM Orders (ticker VARCHAR(10))", MemoryCatalog())
    assert stmt.name == "ORDERS" and str(stmt.columns[0].type) == "VARCHAR(10)"


def test_seed000_rejected_fragments():
    e = error("INSERT INTO Orders (rowtime, ticker) VALUES (?, ?)")
    assert e.message.startswith("Bind parameters")
    e = error("SELECT STREAM rowtime + 100 AS rowtime FROM Orders")
    assert e.message == "Cannot apply '+' to arguments of type TIMESTAMP and INTEGER"
    q = query("SELECT STREAM rowtime + INTERVAL '0.1' SECOND AS rowtime, ticker FROM Orders")
    assert show(q.root.rowtime) == "+(RT0, Interval(months=0, millis=100))"


# --------------------------------------------------------------------------- 001

def test_seed001_stream_keyword():
    q = query("SELECT STREAM ticker, price, qty\nFROM TradeStream")
    assert names(q.columns) == ["TICKER", "PRICE", "QTY"] and q.is_stream
    e = error("SELECT STREAM ticker, price, qty\nFROMTradeStream")
    assert (e.message, where(e)) == ("Cannot stream VALUES", (1, 1))     # no FROM clause at all


def test_seed001_windowed_query():
    sql = """SELECT STREAM
ticker,
AVG(price * volume) OVER (RANGE INTERVAL ' 1' HOUR PRECEDING)
/ SUM(volume) OVER (RANGE INTERVAL ' 1' HOUR PRECEDING) AS weighted_avg
FROM TradeStream"""
    q = query(sql)
    w = q.root.input
    assert isinstance(w, P.Window)
    assert [(c.agg.fn, c.spec.lower) for c in w.calls] == [("AVG", HOUR), ("SUM", HOUR)]
    assert names(q.columns) == ["TICKER", "WEIGHTED_AVG"]


def test_seed001_windowed_join():
    sql = """SELECT STREAM
t.price as trade_price,
s.price as ask_price
FROM TradeStream OVER (RANGE CURRENT ROW) AS t
JOIN AskStream OVER (ROWS CURRENT ROW) as s"""
    q = query(sql)
    j = q.root.input
    assert (j.left_window, j.right_window, j.equi, j.residual) == (P.JoinWindow(0, 0), P.JoinWindow(0, 0), [], None)
    assert [show(e) for e in q.root.exprs] == ["$1", "$5"]


def quoted_catalog():
    return MemoryCatalog(
        P.StreamInfo("OrderStream", [F("orderid", "INTEGER"), F("amount", "INTEGER")]),
        P.StreamInfo("TradeStream", [F("tradeid", "INTEGER"), F("amount", "INTEGER")]))


def test_seed001_group_by_join_as_written_is_rejected():
    sql = """SELECT STREAM "o"."orderid", sum("t"."amount")
FROM "OrderStream" OVER (RANGE CURRENT ROW) AS "o"
LEFT JOIN "TradeStream"
OVER (RANGE INTERVAL '1' HOUR FOLLOWING) AS "t"
ON "o"."orderid" = "t"."tradeid"
GROUP BY FLOOR("OrderStream".ROWTIME TO HOUR),"o"."orderid"
HAVING "o"."amount" <> SUM("t"."amount")"""
    e = error(sql, quoted_catalog())
    assert e.message == "Table 'OrderStream' not found"
    assert where(e) == pos(sql, '"OrderStream".ROWTIME')


def test_seed001_group_by_join_corrected():
    sql = """SELECT STREAM "o"."orderid", sum("t"."amount")
FROM "OrderStream" OVER (RANGE CURRENT ROW) AS "o"
LEFT JOIN "TradeStream"
OVER (RANGE INTERVAL '1' HOUR FOLLOWING) AS "t"
ON "o"."orderid" = "t"."tradeid"
GROUP BY FLOOR(ROWTIME TO HOUR), "o"."orderid", "o"."amount"
HAVING "o"."amount" <> SUM("t"."amount")"""
    q = query(sql, quoted_catalog())
    assert chain(q.root) == ["Project", "Filter", "Aggregate", "Join", "StreamScan"]
    agg = q.root.input.input
    assert [show(k) for k in agg.keys] == ["FLOOR_TO[HOUR](RT0)", "$0", "$1"]
    j = agg.input
    assert (j.kind, j.left_window, j.right_window) == ("LEFT", P.JoinWindow(0, 0), P.JoinWindow(0, HOUR))
    assert names(q.columns) == ["orderid", "EXPR$1"]
    assert show(q.root.input.cond) == "<>($2, $3)"


def test_seed001_moving_average_as_written_is_a_syntax_error():
    sql = """SELECT STREAM
ticker, price, a10, a50
FROM (
SELECT STREAM ticker, price,
avg(price) OVER last10Minutes AS a10,
avg(price) OVER last50Minutes AS a50
FROM Trades)
WHERE first_value(
CASE WHEN a10 < a50 THEN -1 WHEN a10 = a50 THEN 0 ELSE 1 END)) OVER previousRow !=
CASE WHEN a10 < a50 THEN -1 WHEN a10 = a50 THEN 0 ELSE 1 END
WINDOW
last10minutes AS (PARTITION BY ticker RANGE INTERVAL '10' MINUTE PRECEDING),
last50minutes AS (PARTITION BY ticker RANGE INTERVAL '50' MINUTE PRECEDING),
previousRow AS (PARTITION BY ticker ROWS 1 PRECEDING)"""
    e = error(sql)
    assert e.message.startswith("Syntax error near ')'")
    line, col = pos(sql, "))")
    assert where(e) == (line, col + 1)


def test_seed001_moving_average_corrected():
    sql = """SELECT STREAM ticker, price, a10, a50
FROM (
  SELECT STREAM ticker, price, a10, a50, sgn,
         FIRST_VALUE(sgn) OVER previousRow AS prevSgn
  FROM (
    SELECT STREAM ticker, price, a10, a50,
           CASE WHEN a10 < a50 THEN -1 WHEN a10 = a50 THEN 0 ELSE 1 END AS sgn
    FROM (
      SELECT STREAM ticker, price,
             avg(price) OVER last10Minutes AS a10,
             avg(price) OVER last50Minutes AS a50
      FROM Trades
      WINDOW last10minutes AS (PARTITION BY ticker RANGE INTERVAL '10' MINUTE PRECEDING),
             last50minutes AS (PARTITION BY ticker RANGE INTERVAL '50' MINUTE PRECEDING)))
  WINDOW previousRow AS (PARTITION BY ticker ROWS 1 PRECEDING))
WHERE prevSgn <> sgn"""
    q = query(sql)
    assert names(q.columns) == ["TICKER", "PRICE", "A10", "A50"]
    assert chain(q.root)[:4] == ["Project", "Filter", "Project", "Window"]
    inner_window = q.root.input.input.input
    (call,) = inner_window.calls
    assert (call.agg.fn, call.spec.mode, call.spec.lower, call.spec.upper) == ("FIRST_VALUE", "ROWS", 1, 0)


# --------------------------------------------------------------------------- 002

def test_seed002_join_queries():
    q1 = query("""SELECT STREAM
   ROWTIME, o.orderId, o.ticker,
   o.amount AS orderAmount, t.amount AS tradeAmount
 FROM Orders AS o
 JOIN Trades OVER (RANGE INTERVAL '10' MINUTE FOLLOWING) AS t
 ON o.orderId = t.orderId""")
    assert q1.root.input.right_window == P.JoinWindow(0, 10 * MINUTE)
    q2 = query("""SELECT STREAM
   ROWTIME, o.orderId, o.ticker,
   o.amount AS orderAmount, t.amount AS tradeAmount
 FROM Orders OVER (RANGE INTERVAL '10' MINUTE PRECEDING) AS o
 JOIN Trades AS t
 ON o.orderId = t.orderId""")
    assert q2.root.input.left_window == P.JoinWindow(10 * MINUTE, 0)


def test_seed002_join3_trailing_comma_rejected_and_fixed_version_analyzes():
    written = """SELECT STREAM
   ROWTIME, o.orderId, o.ticker, o.amount AS orderAmount,
   t.ticker, t.tradeId, t.amount AS tradeAmount,
 FROM Orders AS o
 OUTER JOIN Trades OVER (RANGE INTERVAL '10' MINUTE FOLLOWING) AS t
 ON o.orderId = t.orderId"""
    e = error(written)
    assert e.message == "Syntax error near ',': a select list cannot end with a comma"
    line, col = pos(written, "tradeAmount,")
    assert where(e) == (line, col + len("tradeAmount"))
    q = query(written.replace("tradeAmount,", "tradeAmount"))
    j = q.root.input
    assert j.kind == "FULL"
    assert names(q.columns) == ["ORDERID", "TICKER", "ORDERAMOUNT", "TICKER", "TRADEID", "TRADEAMOUNT"]


# --------------------------------------------------------------------------- 003 (reconstructed)

def test_seed003_reconstructed_foreign_stream_and_views():
    c = MemoryCatalog()
    stmts = c.run("""
CREATE OR REPLACE FOREIGN STREAM "Trades"
( "Ticker" VARCHAR(5), "Shares" INTEGER, "Price" DECIMAL(6,2) )
SERVER FILE_SERVER
OPTIONS ( "PARSER" 'CSV', "DIRECTORY" '/data/', "FILENAME_PATTERN" 'tickers.csv', "SKIP_HEADER" 'true' )
DESCRIPTION 'Contains the equity trades';

CREATE OR REPLACE VIEW "Orders & Shares Trends"
DESCRIPTION 'rolling-period orders and volume trends for TRADES' AS
SELECT STREAM T.ROWTIME AS "orderTime", "Ticker", "Shares", "Price",
  COUNT (*) OVER "last_Hour" AS "ordersPerHour",
  COUNT (*) OVER "last_ten_min" AS "ordersLastTen",
  SUM("Shares") OVER "last_Hour" AS "sharesPerHour",
  SUM("Price" * "Shares") OVER "last_Hour" AS "amtPerHour"
FROM "Trades" AS T
WINDOW "last_Hour" AS (RANGE INTERVAL '1' HOUR PRECEDING),
       "last_ten_min" AS (RANGE INTERVAL '10' MINUTE PRECEDING);

CREATE OR REPLACE VIEW "Orders & Shares Groups"
DESCRIPTION 'rolling-period order groups for TRADES' AS
SELECT STREAM "Ticker", COUNT(*) AS "ordersPerHour"
FROM "Trades"
GROUP BY FLOOR("Trades".ROWTIME TO HOUR), "Ticker";
""")
    fs = stmts[0]
    assert fs.name == "Trades" and fs.foreign == {
        "server": "FILE_SERVER",
        "options": {"PARSER": "CSV", "DIRECTORY": "/data/", "FILENAME_PATTERN": "tickers.csv", "SKIP_HEADER": "true"}}
    assert [str(col.type) for col in fs.columns] == ["VARCHAR(5)", "INTEGER", "DECIMAL(6,2)"]
    q = query('SELECT STREAM * FROM "Orders & Shares Trends"', c)
    assert names(q.columns) == ["orderTime", "Ticker", "Shares", "Price", "ordersPerHour", "ordersLastTen",
                                "sharesPerHour", "amtPerHour"]
    assert q.columns[-1].type.name == "DECIMAL" and q.columns[0].type.name == "TIMESTAMP"
    q = query('SELECT STREAM * FROM "Orders & Shares Groups"', c)
    assert names(q.columns) == ["Ticker", "ordersPerHour"]


# --------------------------------------------------------------------------- 004 (Calcite)

def calcite():
    c = sample_catalog()
    c.run("""CREATE VIEW HourlyOrderTotals (rowtime, productId, c, su) AS
  SELECT FLOOR(rowtime TO HOUR),
    productId,
    COUNT(*),
    SUM(units)
  FROM Orders
  GROUP BY FLOOR(rowtime TO HOUR), productId;
CREATE VIEW HourlyTotals AS SELECT * FROM HourlyOrderTotals""")
    return c


CALCITE_VALID = {
    "simple": "SELECT STREAM *\nFROM Orders",
    "relational": "SELECT *\nFROM Orders",
    "filter": "SELECT STREAM *\nFROM Orders\nWHERE units > 3",
    "project": """SELECT STREAM rowtime,
  'An order for ' || units || ' '
    || CASE units WHEN 1 THEN 'unit' ELSE 'units' END
    || ' of product #' || productId AS description
FROM Orders""",
    "tumbling": """SELECT STREAM FLOOR(rowtime TO HOUR) AS rowtime,
  productId,
  COUNT(*) AS c,
  SUM(units) AS units
FROM Orders
GROUP BY FLOOR(rowtime TO HOUR), productId""",
    "having": """SELECT STREAM FLOOR(rowtime TO HOUR) AS rowtime,
  productId
FROM Orders
GROUP BY FLOOR(rowtime TO HOUR), productId
HAVING COUNT(*) > 2 OR SUM(units) > 10""",
    "subquery": """SELECT STREAM rowtime, productId
FROM (
  SELECT FLOOR(rowtime TO HOUR) AS rowtime,
    productId,
    COUNT(*) AS c,
    SUM(units) AS su
  FROM Orders
  GROUP BY FLOOR(rowtime TO HOUR), productId)
WHERE c > 2 OR su > 10""",
    "view_stream": """SELECT STREAM rowtime, productId
FROM HourlyOrderTotals
WHERE c > 2 OR su > 10""",
    "with": """WITH HourlyOrderTotals (rowtime, productId, c, su) AS (
  SELECT FLOOR(rowtime TO HOUR),
    productId,
    COUNT(*),
    SUM(units)
  FROM Orders
  GROUP BY FLOOR(rowtime TO HOUR), productId)
SELECT STREAM rowtime, productId
FROM HourlyOrderTotals
WHERE c > 2 OR su > 10""",
    "view_relational": "SELECT max(su)\nFROM HourlyOrderTotals\nWHERE productId = 10",
    "view_stream_rowtime": "SELECT STREAM rowtime\nFROM HourlyOrderTotals\nWHERE productId = 10",
    "hopping": """SELECT STREAM rowtime,
  productId,
  SUM(su) OVER w AS su,
  SUM(c) OVER w AS c
FROM HourlyTotals
WINDOW w AS (
  ORDER BY rowtime
  PARTITION BY productId
  RANGE INTERVAL '2' HOUR PRECEDING)""",
    "sort": """SELECT STREAM FLOOR(rowtime TO hour) AS rowtime, productId, orderId, units
FROM Orders
ORDER BY FLOOR(rowtime TO hour) ASC, units DESC""",
    "union": """SELECT STREAM *
FROM Orders
WHERE productId = 10
UNION ALL
SELECT STREAM *
FROM Orders
WHERE productId = 30""",
    "union_sorted": """SELECT STREAM *
FROM Orders
WHERE productId = 10
UNION ALL
SELECT STREAM *
FROM Orders
WHERE productId = 30
ORDER BY rowtime""",
    "sliding": """SELECT STREAM rowtime,
  productId,
  units,
  SUM(units) OVER (ORDER BY rowtime RANGE INTERVAL '1' HOUR PRECEDING) unitsLastHour
FROM Orders""",
    "refined": """SELECT STREAM *
FROM (
  SELECT STREAM rowtime,
    productId,
    units,
    AVG(units) OVER product (RANGE INTERVAL '10' MINUTE PRECEDING) AS m10,
    AVG(units) OVER product (RANGE INTERVAL '7' DAY PRECEDING) AS d7
  FROM Orders
  WINDOW product AS (
    ORDER BY rowtime
    PARTITION BY productId))
WHERE m10 > d7""",
    "cascading": """SELECT STREAM rowtime,
  productId,
  units,
  SUM(units) OVER (PARTITION BY FLOOR(rowtime TO HOUR)) AS unitsSinceTopOfHour
FROM Orders""",
}


@pytest.mark.parametrize("name", sorted(CALCITE_VALID))
def test_seed004_valid_queries_analyze(name):
    q = query(CALCITE_VALID[name], calcite())
    assert q.is_stream == ("STREAM" in CALCITE_VALID[name])
    assert q.streams == ["ORDERS"]


def test_seed004_plans():
    c = calcite()
    q = query(CALCITE_VALID["relational"], c)
    assert chain(q.root) == ["Project", "HistoryScan"] and not q.root.is_stream
    q = query(CALCITE_VALID["tumbling"], c)
    agg = q.root.input
    assert show(agg.stamp) == "$0" and q.rowtime_column == 0
    assert names(q.columns) == ["PRODUCTID", "C", "UNITS"]
    q = query(CALCITE_VALID["having"], c)
    assert chain(q.root) == ["Project", "Filter", "Aggregate", "StreamScan"]
    assert show(q.root.input.cond) == "OR(>($2, 2), >($3, 10))"
    q = query(CALCITE_VALID["view_relational"], c)
    assert chain(q.root) == ["Project", "Aggregate", "Filter", "Project", "Aggregate", "HistoryScan"]
    assert q.root.input.time_key is None and q.root.input.keys == []
    q = query(CALCITE_VALID["hopping"], c)
    (c0, c1) = q.root.input.calls
    assert (c0.spec.lower, show(c0.spec.partition_by[0]), c0.spec.order_by) == (2 * HOUR, "$0", None)
    q = query(CALCITE_VALID["sort"], c)
    assert isinstance(q.root, P.Sort)
    assert [(show(k.expr), k.descending) for k in q.root.keys] == [("FLOOR_TO[HOUR](RT0)", False), ("$2", True)]
    assert show(q.root.input.rowtime) == "FLOOR_TO[HOUR](RT0)"
    q = query(CALCITE_VALID["union_sorted"], c)
    assert chain(q.root)[:2] == ["Sort", "Union"] and show(q.root.keys[0].expr) == "RT0"
    q = query(CALCITE_VALID["sliding"], c)
    assert names(q.columns) == ["PRODUCTID", "UNITS", "UNITSLASTHOUR"]
    q = query(CALCITE_VALID["refined"], c)
    w = q.root.input.input.input      # Project, Filter, (sub-query) Project, Window
    assert isinstance(w, P.Window)
    assert [(x.spec.lower, show(x.spec.partition_by[0])) for x in w.calls] == [(10 * MINUTE, "$0"), (7 * 24 * HOUR, "$0")]
    q = query(CALCITE_VALID["cascading"], c)
    (call,) = q.root.input.calls
    assert [show(p) for p in call.spec.partition_by] == ["FLOOR_TO[HOUR](RT0)"]
    assert (call.spec.lower, call.spec.upper) == (None, 0)


def test_seed004_validation_errors():
    sql = "SELECT * FROM Shipments"
    e = error(sql)
    assert (e.message, where(e)) == ("Cannot convert stream 'SHIPMENTS' to a table", (1, 15))
    e = error("SELECT STREAM * FROM Products")
    assert (e.message, where(e)) == ("Cannot convert table 'PRODUCTS' to a stream", (1, 22))
    sql = "SELECT STREAM productId,\n  COUNT(*) AS c,\n  SUM(units) AS units\nFROM Orders\nGROUP BY productId"
    e = error(sql)
    assert (e.message, where(e)) == ("Streaming aggregation requires at least one monotonic expression in GROUP BY clause",
                                     (5, 1))
    e = error("SELECT STREAM * FROM (VALUES (1, 'abc'))")
    assert (e.message, where(e)) == ("Cannot stream VALUES", (1, 23))
