"""Relational (non-STREAM) SELECT over tables, VALUES and a stream's retained history
(streamsql/engine/relational.py), on both engines: Python for engine="local", a Spark batch query
for engine="spark". Every expected result is computed by hand from the data below (comments say
how); without ORDER BY the order is the documented one (tables and history in insertion order,
groups by first appearance, joins left row by left row, then unmatched right rows)."""
from __future__ import annotations

import pytest

from streamsql.engine import time as T
from streamsql.engine.errors import SqlError
from streamsql.engine.workbench import Workbench

DAY = "2015-02-15 "

# Orders, as in seed 004's relational example (the history of the Orders stream)
ORDERS = [("08:30:00", 10, 1, 3), ("08:45:10", 20, 2, 1), ("09:12:21", 10, 3, 10), ("09:27:44", 30, 4, 2)]

SETUP = """
CREATE STREAM Orders (productId INTEGER, orderId INTEGER, units INTEGER);
CREATE STREAM Shipments (orderId INTEGER);
CREATE TABLE Products (productId INTEGER, name VARCHAR(20));
INSERT INTO Products VALUES (10, 'Beer'), (20, 'Wine'), (30, 'Cheese'), (50, 'Bread'), (NULL, 'Mystery');
CREATE TABLE Sales (region VARCHAR(5), amt INTEGER);
INSERT INTO Sales VALUES ('N', 5), ('S', 3), (NULL, 4), ('N', 5), ('E', 2), ('N', NULL), (NULL, 1), ('E', 9),
                         ('S', 7), ('E', 2), ('W', -7), ('W', 0);
CREATE VIEW HourlyOrderTotals AS
  SELECT FLOOR(rowtime TO HOUR) AS rowtime, productId, COUNT(*) AS c, SUM(units) AS su
  FROM Orders GROUP BY FLOOR(rowtime TO HOUR), productId;
"""


def ts(hms: str) -> int:
    return T.parse_timestamp(DAY + hms)


def load(wb: Workbench, *, setup: bool = True) -> None:
    if setup:
        wb.execute(SETUP)
    for t, p, o, u in ORDERS:
        wb.insert("Orders", {"productId": p, "orderId": o, "units": u}, rowtime=DAY + t)
    wb.set_history("Orders")


@pytest.fixture(scope="module", params=["local", "spark"])
def rel(request, tmp_path_factory):
    if request.param == "spark":
        request.getfixturevalue("spark")
    wb = Workbench(tmp_path_factory.mktemp("rel") / "ws", engine=request.param)
    load(wb)
    yield wb
    wb.close()


CASES = [
    # seed 004: "print out all existing orders" (SELECT * leaves ROWTIME out, as SELECT STREAM * does)
    ("SELECT * FROM Orders", ["PRODUCTID", "ORDERID", "UNITS"],
     [(10, 1, 3), (20, 2, 1), (10, 3, 10), (30, 4, 2)]),
    # WHERE, and ROWTIME in the select list is the history row's rowtime
    ("SELECT ROWTIME, productId FROM Orders WHERE units > 2", ["ROWTIME", "PRODUCTID"],
     [(ts("08:30:00"), 10), (ts("09:12:21"), 10)]),
    # plain GROUP BY, groups by first appearance: 10 (units 3, 10), 20 (1), 30 (2);
    # AVG of integers truncates: 13 / 2 = 6
    ("SELECT productId, COUNT(*) AS c, SUM(units) AS su, AVG(units) AS a, MIN(orderId) AS lo, "
     "MAX(orderId) AS hi, FIRST_VALUE(orderId) AS f, LAST_VALUE(orderId) AS l FROM Orders GROUP BY productId",
     ["PRODUCTID", "C", "SU", "A", "LO", "HI", "F", "L"],
     [(10, 2, 13, 6, 1, 3, 1, 3), (20, 1, 1, 1, 2, 2, 2, 2), (30, 1, 2, 2, 4, 4, 4, 4)]),
    # GROUP BY a time key with it AS ROWTIME: the hour's start
    ("SELECT FLOOR(ROWTIME TO HOUR) AS ROWTIME, COUNT(*) AS c FROM Orders GROUP BY FLOOR(ROWTIME TO HOUR)",
     ["ROWTIME", "C"], [(ts("08:00:00"), 2), (ts("09:00:00"), 2)]),
    # ... and bare ROWTIME: the end of the period, as in the streaming GROUP BY
    ("SELECT ROWTIME, COUNT(*) AS c FROM Orders GROUP BY FLOOR(ROWTIME TO HOUR)",
     ["ROWTIME", "C"], [(ts("09:00:00"), 2), (ts("10:00:00"), 2)]),
    # seed 004: "the largest number of product #10 ever sold in one hour" over the view: 08:00 has 3,
    # 09:00 has 10
    ("SELECT MAX(su) FROM HourlyOrderTotals WHERE productId = 10", ["EXPR$0"], [(10,)]),
    # stream history joined with a table
    ("SELECT o.orderId, p.name FROM Orders AS o JOIN Products AS p ON o.productId = p.productId",
     ["ORDERID", "NAME"], [(1, "Beer"), (2, "Wine"), (3, "Beer"), (4, "Cheese")]),
    # ROWTIME of a join: the history side's (the table has none)
    ("SELECT ROWTIME, o.orderId, p.name FROM Orders AS o JOIN Products AS p ON o.productId = p.productId "
     "WHERE p.name <> 'Beer'", ["ROWTIME", "ORDERID", "NAME"],
     [(ts("08:45:10"), 2, "Wine"), (ts("09:27:44"), 4, "Cheese")]),
    # LEFT join with a residual condition: Beer matches orders 1 (3 units) and 3 (10); Wine's order 2
    # and Cheese's order 4 have units <= 2; Bread has no order; a NULL key never matches
    ("SELECT p.name, o.orderId FROM Products AS p LEFT JOIN Orders AS o "
     "ON p.productId = o.productId AND o.units > 2", ["NAME", "ORDERID"],
     [("Beer", 1), ("Beer", 3), ("Wine", None), ("Cheese", None), ("Bread", None), ("Mystery", None)]),
    # FULL and RIGHT joins: matches in left order, then the unmatched right rows in table order
    ("SELECT o.orderId, p.name FROM Orders AS o FULL JOIN Products AS p ON o.productId = p.productId",
     ["ORDERID", "NAME"], [(1, "Beer"), (2, "Wine"), (3, "Beer"), (4, "Cheese"), (None, "Bread"), (None, "Mystery")]),
    ("SELECT o.orderId, p.name FROM Orders AS o RIGHT JOIN Products AS p ON o.productId = p.productId",
     ["ORDERID", "NAME"], [(1, "Beer"), (2, "Wine"), (3, "Beer"), (4, "Cheese"), (None, "Bread"), (None, "Mystery")]),
    # ORDER BY: ASC puts NULL last, DESC first (SQL default); explicit NULLS FIRST
    ("SELECT name, productId FROM Products ORDER BY productId", ["NAME", "PRODUCTID"],
     [("Beer", 10), ("Wine", 20), ("Cheese", 30), ("Bread", 50), ("Mystery", None)]),
    ("SELECT name, productId FROM Products ORDER BY productId DESC", ["NAME", "PRODUCTID"],
     [("Mystery", None), ("Bread", 50), ("Cheese", 30), ("Wine", 20), ("Beer", 10)]),
    ("SELECT name, productId FROM Products ORDER BY productId NULLS FIRST, name", ["NAME", "PRODUCTID"],
     [("Mystery", None), ("Beer", 10), ("Wine", 20), ("Cheese", 30), ("Bread", 50)]),
    # UNION (distinct, first appearance) and UNION ALL with ORDER BY
    ("SELECT productId FROM Orders UNION SELECT productId FROM Products", ["PRODUCTID"],
     [(10,), (20,), (30,), (50,), (None,)]),
    ("SELECT productId FROM Orders UNION ALL SELECT productId FROM Products ORDER BY productId", ["PRODUCTID"],
     [(10,), (10,), (10,), (20,), (20,), (30,), (30,), (50,), (None,)]),
    ("SELECT DISTINCT productId FROM Orders", ["PRODUCTID"], [(10,), (20,), (30,)]),
    # HAVING then ORDER BY: products with one order are 20 (1 unit) and 30 (2 units)
    ("SELECT productId, SUM(units) AS su FROM Orders GROUP BY productId HAVING COUNT(*) = 1 ORDER BY su DESC",
     ["PRODUCTID", "SU"], [(30, 2), (20, 1)]),
    # an aggregate of no rows is one row: COUNT 0, SUM NULL
    ("SELECT COUNT(*) AS n, SUM(units) AS s FROM Orders WHERE units > 100", ["N", "S"], [(0, None)]),
    # VALUES with expressions
    ("SELECT a + 1 AS b, UPPER(s) AS u FROM (VALUES (1, 'abc'), (2, 'x')) AS t(a, s)", ["B", "U"],
     [(2, "ABC"), (3, "X")]),
    # no FROM: one row of constants
    ("SELECT 1 + 1 AS two, 'a' || 'b' AS s", ["TWO", "S"], [(2, "ab")]),
    # NULL keys group together; COUNT(*) counts NULLs, COUNT(amt) does not; DISTINCT aggregates;
    # AVG truncates toward zero (-7 / 2 = -3); LAST_VALUE(DISTINCT) is the distinct value that
    # appeared last for the first time (E: 2, 9, 2 -> 9) while LAST_VALUE is the last value (2).
    #   N: 5, 5, NULL   S: 3, 7   NULL: 4, 1   E: 2, 9, 2   W: -7, 0
    ("SELECT region, COUNT(*) AS n, COUNT(amt) AS na, COUNT(DISTINCT amt) AS d, SUM(DISTINCT amt) AS sd, "
     "AVG(amt) AS a, FIRST_VALUE(amt) AS f, LAST_VALUE(amt) AS l, LAST_VALUE(DISTINCT amt) AS ld "
     "FROM Sales GROUP BY region", ["REGION", "N", "NA", "D", "SD", "A", "F", "L", "LD"],
     [("N", 3, 2, 1, 5, 5, 5, 5, 5), ("S", 2, 2, 2, 10, 5, 3, 7, 7), (None, 2, 2, 2, 5, 2, 4, 1, 1),
      ("E", 3, 3, 2, 11, 4, 2, 2, 9), ("W", 2, 2, 2, -7, -3, -7, 0, 0)]),
]


@pytest.mark.parametrize("sql,columns,rows", CASES, ids=[c[0][:60] for c in CASES])
def test_relational_query(rel, sql, columns, rows):
    (r,) = rel.execute(sql)
    assert r.columns == columns
    assert r.rows == rows
    assert r.message == f"{len(rows)} row{'s' if len(rows) != 1 else ''}"


# --------------------------------------------------------------------------- errors (both engines)

@pytest.mark.parametrize("sql,message", [
    ("SELECT * FROM Shipments", "Cannot convert stream 'SHIPMENTS' to a table"),
    ("SELECT STREAM * FROM Products", "Cannot convert table 'PRODUCTS' to a stream"),
    ("SELECT STREAM * FROM (VALUES (1, 'abc'))", "Cannot stream VALUES"),
])
def test_conversion_errors(wb, sql, message):
    load(wb)
    with pytest.raises(SqlError, match=message):
        wb.execute(sql)
    # the session stays usable
    assert wb.execute("SELECT COUNT(*) AS n FROM Orders")[0].rows == [(4,)]


def test_history_can_be_turned_off_again(wb_local):
    load(wb_local)
    wb_local.set_history("Orders", enabled=False)
    with pytest.raises(SqlError, match="Cannot convert stream 'ORDERS' to a table"):
        wb_local.execute("SELECT * FROM Orders")


# --------------------------------------------------------------------------- OVER and window joins

def ts_of(rows):
    return [(T.format_timestamp(r[0]),) + tuple(r[1:]) for r in rows]


OVER_CASES = [
    # sliding window per product: order 3 (09:12:21) has order 1 (08:30, 3 units) within the hour
    # before it; a row window of two rows over all orders counts 1, then 2
    ("SELECT orderId, SUM(units) OVER (PARTITION BY productId RANGE INTERVAL '1' HOUR PRECEDING) AS s, "
     "COUNT(*) OVER (ROWS 1 PRECEDING) AS n FROM Orders", [(1, 3, 1), (2, 1, 2), (3, 13, 2), (4, 2, 2)]),
    # offset window, one to two hours before: only order 3 has one (order 1, 42 minutes earlier
    # is too recent; none is 1-2 hours older); an empty frame gives NULL, COUNT 0
    ("SELECT orderId, FIRST_VALUE(orderId) OVER (RANGE BETWEEN INTERVAL '2' HOUR PRECEDING AND "
     "INTERVAL '30' MINUTE PRECEDING) AS f, COUNT(units) OVER (RANGE BETWEEN INTERVAL '2' HOUR PRECEDING AND "
     "INTERVAL '30' MINUTE PRECEDING) AS n FROM Orders", [(1, None, 0), (2, None, 0), (3, 1, 1), (4, 1, 2)]),
    # hopping: the frame is taken on the hour, so both 08:xx orders see the two of them, both
    # 09:xx orders all four
    ("SELECT orderId, COUNT(*) OVER (ORDER BY FLOOR(ROWTIME TO HOUR) RANGE INTERVAL '1' HOUR PRECEDING) AS n "
     "FROM Orders", [(1, 2), (2, 2), (3, 4), (4, 4)]),
]


@pytest.mark.parametrize("sql,rows", OVER_CASES, ids=[c[0][:60] for c in OVER_CASES])
def test_over_in_a_relational_query(rel, sql, rows):
    assert rel.execute(sql)[0].rows == rows


def test_relational_over_holds_every_peer(wb):
    # standard SQL: a RANGE frame ending at the current row holds all its peers (rows at 10:00
    # are 1 and 2, so both see 3); a streaming OVER holds only the peers that arrived before
    # (the semantics, section 3.4): 1, then 3
    wb.execute("CREATE STREAM P (x INTEGER)")
    wb.set_history("P")
    sql = "SELECT ROWTIME, x, SUM(x) OVER (RANGE INTERVAL '1' MINUTE PRECEDING) AS s FROM P"
    q = wb.query(sql.replace("SELECT", "SELECT STREAM"), name="peers")
    for t, x in (("10:00:00", 1), ("10:00:00", 2), ("10:01:00", 4)):
        wb.insert("P", {"x": x}, rowtime=DAY + t)
    wb.punctuate("P", DAY + "23:00:00")
    q.wait(timeout=300)
    assert ts_of(wb.execute(sql)[0].rows) == [(DAY + "10:00:00", 1, 3), (DAY + "10:00:00", 2, 3),
                                            (DAY + "10:01:00", 4, 7)]
    assert [(T.format_timestamp(o.rowtime), *o.values) for o in q.rows] == [
        (DAY + "10:00:00", 1, 1), (DAY + "10:00:00", 2, 3), (DAY + "10:01:00", 4, 7)]


def test_relational_window_join(wb):
    # Orders (08:30 #1, 08:45:10 #2, 09:12:21 #3, 09:27:44 #4) within the hour before a
    # shipment (08:40 #1, 09:00 #9, 10:30 #3): an order at r is in its window for base times
    # [r, r + 1 h], a shipment for [r, r] only. #1 meets its shipment (stamp 08:40); #3's
    # shipment is 1 h 17 min later. Unmatched orders are stamped r + 1 h, unmatched shipments
    # at their rowtime, after the left rows (the relational order).
    sql = ("SELECT ROWTIME, o.orderId, s.orderId AS shipped FROM Orders OVER (RANGE INTERVAL '1' HOUR PRECEDING) AS o "
           "FULL JOIN Shipments AS s ON o.orderId = s.orderId")
    wb.execute(SETUP)
    q = wb.query(sql.replace("SELECT", "SELECT STREAM"), name="shipped")
    load(wb, setup=False)
    for t, o in (("08:40:00", 1), ("09:00:00", 9), ("10:30:00", 3)):
        wb.insert("Shipments", {"orderId": o}, rowtime=DAY + t)
    wb.set_history("Shipments")
    want = [(DAY + "08:40:00", 1, 1), (DAY + "09:45:10", 2, None), (DAY + "10:12:21", 3, None),
            (DAY + "10:27:44", 4, None), (DAY + "09:00:00", None, 9), (DAY + "10:30:00", None, 3)]
    assert ts_of(wb.execute(sql)[0].rows) == want
    # the streaming query over the same rows released the same rows, in rowtime order
    for s in ("Orders", "Shipments"):
        wb.punctuate(s, DAY + "23:00:00")
    q.wait(timeout=300)
    assert [(T.format_timestamp(o.rowtime), *o.values) for o in q.rows] == sorted(want, key=lambda r: r[0])


def test_relational_window_needs_two_rowtimes(wb_local):
    load(wb_local)
    with pytest.raises(SqlError, match=r"A window \(OVER\) is only allowed on a stream joined with a stream"):
        wb_local.execute("SELECT o.orderId FROM Orders AS o JOIN Products OVER (RANGE INTERVAL '1' HOUR PRECEDING) "
                         "AS p ON o.productId = p.productId")


# --------------------------------------------------------------------------- history window

def history_window_checks(wb):
    # window 1 hour of the clock: at 09:27:44 the history starts at 08:27:44 (all four rows);
    # after a bound at 09:45:00 it starts at 08:45:00 (orders 2, 3, 4); the window is inclusive
    # (08:45:10 - 09:45:10 after a bound at 09:45:10 still holds order 2)
    load(wb)
    wb.set_history("Orders", T.HOUR)
    assert wb.execute("SELECT orderId FROM Orders")[0].rows == [(1,), (2,), (3,), (4,)]
    wb.punctuate("Orders", DAY + "09:45:00")
    assert wb.execute("SELECT orderId FROM Orders")[0].rows == [(2,), (3,), (4,)]
    wb.punctuate("Orders", DAY + "09:45:10")
    assert wb.execute("SELECT orderId FROM Orders")[0].rows == [(2,), (3,), (4,)]
    wb.punctuate("Orders", DAY + "09:45:10", strict=True)
    assert wb.execute("SELECT orderId FROM Orders")[0].rows == [(3,), (4,)]


def test_history_window_local(wb_local):
    history_window_checks(wb_local)


def test_history_window_spark(wb_spark):
    history_window_checks(wb_spark)


def test_history_setting_survives_reopen(tmp_path):
    with Workbench(tmp_path / "ws", engine="local") as wb:
        load(wb)
        wb.set_history("Orders", T.HOUR)
    with Workbench(tmp_path / "ws", engine="local") as wb:
        d = wb.catalog.streams["ORDERS"]
        assert (d.history, d.history_window) == (True, T.HOUR)
        assert wb.execute("SELECT COUNT(*) AS n FROM Orders")[0].rows == [(4,)]


def test_error_stream_history_shows_late_rows(wb_local):
    # a late row (09:00 after the clock reached 09:27:44) is in the error stream's history
    load(wb_local)
    with pytest.raises(Exception):
        wb_local.insert("Orders", {"productId": 10, "orderId": 9, "units": 1}, rowtime=DAY + "09:00:00")
    wb_local.set_history("ERRORS")
    (r,) = wb_local.execute("SELECT STREAM_NAME, DATA_ROWTIME, ERROR_NAME FROM ERRORS")
    assert r.rows == [("ORDERS", ts("09:00:00"), "LATE_ROW")]
    assert r.dicts() == [{"STREAM_NAME": "ORDERS", "DATA_ROWTIME": DAY + "09:00:00", "ERROR_NAME": "LATE_ROW"}]


def test_result_to_pandas(wb_local):
    load(wb_local)
    (r,) = wb_local.execute("SELECT ROWTIME, orderId FROM Orders WHERE productId = 30")
    df = r.to_pandas()
    assert list(df.columns) == ["ROWTIME", "ORDERID"]
    assert df.values.tolist() == [[DAY + "09:27:44", 4]]
