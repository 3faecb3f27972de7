"""Query planning: identifiers, ROWTIME in the select list, joins, windows, aggregation,
DISTINCT, ORDER BY (and T-sort), UNION ALL, relational queries and stream/table conversion."""
from streamsql.engine import plan as P
from streamsql.engine.expr import Rowtime
from test_sql_support import F, MemoryCatalog, chain, error, names, query, sample_catalog, show

MINUTE = 60_000
HOUR = 60 * MINUTE

JOIN_OT = ("FROM Orders OVER (RANGE INTERVAL '10' MINUTE PRECEDING) AS o\n"
           "JOIN Trades AS t ON o.orderId = t.orderId")


# --------------------------------------------------------------------------- identifiers

def test_unquoted_identifiers_are_case_insensitive_and_upper_cased():
    q = query("select stream Ticker, TICKER as t2, oRdErS.units from orders where UNITS > 1")
    assert names(q.columns) == ["TICKER", "T2", "UNITS"]
    assert q.root.input.input.stream == "ORDERS" and q.root.input.input.alias == "ORDERS"


def test_quoted_identifiers_are_exact():
    c = MemoryCatalog(P.StreamInfo("Mixed", [F("lower", "INTEGER"), F("UPPER", "INTEGER")]))
    q = query('SELECT STREAM "lower", "UPPER", upper AS "Alias" FROM "Mixed" AS "m" WHERE "m"."lower" > 1', c)
    assert names(q.columns) == ["lower", "UPPER", "Alias"]
    assert error('SELECT STREAM lower FROM "Mixed"', c).message == "Column 'LOWER' not found"
    assert error("SELECT STREAM * FROM Mixed", c).message == "Stream or table 'MIXED' not found"
    assert error('SELECT STREAM m.UPPER FROM "Mixed" AS "m"', c).message == "Table 'M' not found"
    assert query('SELECT STREAM * FROM "Mixed" AS M WHERE "M".upper = 1', c).columns


# --------------------------------------------------------------------------- ROWTIME in the select list

def test_rowtime_is_not_a_column_and_star_excludes_it():
    q = query("SELECT STREAM * FROM Orders")
    assert names(q.columns) == ["PRODUCTID", "ORDERID", "UNITS", "TICKER", "AMOUNT"] and q.rowtime_column is None
    q = query("SELECT STREAM ticker, ROWTIME, * FROM Orders")
    assert q.rowtime_column == 1 and len(q.columns) == 6
    q = query("SELECT STREAM o.ROWTIME, o.ticker FROM Orders AS o")
    assert q.rowtime_column == 0 and names(q.columns) == ["TICKER"] and q.root.rowtime is None


def test_rowtime_alias_to_another_name_is_an_ordinary_column():
    q = query("SELECT STREAM o.ROWTIME AS placed, ticker FROM Orders AS o")
    assert q.rowtime_column is None and names(q.columns) == ["PLACED", "TICKER"]
    assert isinstance(q.root.exprs[0], Rowtime) and str(q.columns[0].type) == "TIMESTAMP NOT NULL"


def test_expression_as_rowtime_sets_the_projects_rowtime():
    q = query("SELECT STREAM ticker, ROWTIME + INTERVAL '1' MINUTE AS ROWTIME FROM Orders")
    assert q.rowtime_column == 1 and names(q.columns) == ["TICKER"]
    assert show(q.root.rowtime) == "+(RT0, Interval(months=0, millis=60000))"
    q = query("SELECT STREAM FLOOR(ROWTIME TO MINUTE) AS rowtime, units FROM Orders")
    assert show(q.root.rowtime) == "FLOOR_TO[MINUTE](RT0)" and q.rowtime_column == 0


def test_unaliased_expressions_are_named_by_position():
    q = query("SELECT STREAM ROWTIME, units + 1, (ticker), UPPER(ticker), 5 FROM Orders")
    assert names(q.columns) == ["EXPR$1", "TICKER", "EXPR$3", "EXPR$4"]


def test_stream_keyword_in_subqueries_has_no_effect():
    q = query("SELECT * FROM (SELECT STREAM ticker FROM Orders)")
    assert not q.is_stream and chain(q.root) == ["Project", "Project", "HistoryScan"]
    q = query("SELECT STREAM * FROM (SELECT ticker FROM Orders)")
    assert q.is_stream and chain(q.root) == ["Project", "Project", "StreamScan"]


# --------------------------------------------------------------------------- joins

def test_join_equi_keys_and_residual():
    q = query("SELECT STREAM ROWTIME, o.ticker, t.price\n" + JOIN_OT.replace(
        "ON o.orderId = t.orderId",
        "ON t.orderId = o.orderId + 1 AND o.ticker = t.ticker AND t.amount > 5 AND o.units < t.amount"))
    j = q.root.input
    assert [(show(a), show(b)) for a, b in j.equi] == [("+($1, 1)", "$0"), ("$3", "$2")]
    assert show(j.residual) == "AND(>($8, 5), <($2, $8))"
    assert names(j.fields) == ["PRODUCTID", "ORDERID", "UNITS", "TICKER", "AMOUNT",
                               "ORDERID", "TRADEID", "TICKER", "AMOUNT", "PRICE"]
    assert [show(e) for e in q.root.exprs] == ["$3", "$9"] and q.rowtime_column == 0


def test_join_side_rowtimes_inside_on_and_above_the_join():
    q = query("SELECT STREAM o.ROWTIME AS placed, t.ROWTIME, ROWTIME, o.ticker\n"
              "FROM Orders OVER (RANGE INTERVAL '10' MINUTE PRECEDING) AS o\n"
              "JOIN Trades AS t ON o.orderId = t.orderId AND o.ROWTIME < t.ROWTIME\n"
              "WHERE o.ROWTIME > TIMESTAMP '2006-10-10 00:00:00'")
    proj = q.root
    filt = proj.input
    j = filt.input
    assert isinstance(j.left, P.Project) and names(j.left.fields)[-1] == "ROWTIME$O"
    assert isinstance(j.left.exprs[-1], Rowtime) and isinstance(j.left.input, P.StreamScan)
    assert isinstance(j.right, P.Project) and names(j.right.fields)[-1] == "ROWTIME$T"
    assert show(j.residual) == "<(RT0, RT1)"
    assert show(filt.cond).startswith("<($5, ") is False and show(filt.cond).startswith(">($5, ")
    assert [show(e) for e in proj.exprs] == ["$5", "$11", "$3"]
    assert names(q.columns) == ["PLACED", "ROWTIME", "TICKER"] and q.rowtime_column == 2   # t.ROWTIME keeps its name
    q = query("SELECT STREAM * " + JOIN_OT)
    assert len(q.columns) == 10     # hidden rowtime columns never show in *
    q = query("SELECT STREAM t.*, o.ROWTIME AS ot " + JOIN_OT)
    assert names(q.columns) == ["ORDERID", "TRADEID", "TICKER", "AMOUNT", "PRICE", "OT"]
    assert [show(e) for e in q.root.exprs] == ["$6", "$7", "$8", "$9", "$10", "$5"]


def test_join_kinds_and_windows():
    def j(sql):
        return query("SELECT STREAM o.ticker " + sql).root.input
    base = "JOIN Trades OVER (RANGE INTERVAL '5' MINUTE FOLLOWING) AS t ON o.orderId = t.orderId"
    assert j("FROM Orders AS o " + base).kind == "INNER"
    assert j("FROM Orders AS o INNER " + base).kind == "INNER"
    assert j("FROM Orders AS o LEFT " + base).kind == "LEFT"
    assert j("FROM Orders AS o RIGHT OUTER " + base).kind == "RIGHT"
    assert j("FROM Orders AS o FULL OUTER " + base).kind == "FULL"
    assert j("FROM Orders AS o OUTER " + base).kind == "FULL"
    x = j("FROM Orders OVER (RANGE BETWEEN INTERVAL '2' MINUTE PRECEDING AND INTERVAL '3' MINUTE FOLLOWING) AS o "
          "JOIN Trades AS t ON o.orderId = t.orderId")
    assert (x.left_window, x.right_window) == (P.JoinWindow(2 * MINUTE, 3 * MINUTE), P.JoinWindow(0, 0))
    x = j("FROM Orders OVER w AS o JOIN Trades OVER (ROWS CURRENT ROW) AS t ON o.orderId = t.orderId "
          "WINDOW w AS (RANGE INTERVAL '1' HOUR PRECEDING)")
    assert (x.left_window, x.right_window) == (P.JoinWindow(HOUR, 0), P.JoinWindow(0, 0))
    x = j("FROM Orders AS o, Trades OVER (RANGE INTERVAL '1' MINUTE PRECEDING) AS t WHERE o.orderId = t.orderId")
    assert isinstance(x, P.Filter)
    x = x.input
    assert x.kind == "INNER" and x.equi == [] and x.residual is None


def test_stream_table_join():
    q = query("SELECT STREAM ROWTIME, o.orderId, p.name\nFROM Orders AS o\n"
              "LEFT JOIN Products AS p ON o.productId = p.productId")
    j = q.root.input
    assert (j.kind, j.left_window, j.right_window, j.is_stream) == ("LEFT", None, None, True)
    assert isinstance(j.right, P.TableScan) and j.right.table == "PRODUCTS" and not j.right.is_stream
    assert [(show(a), show(b)) for a, b in j.equi] == [("$0", "$0")]
    assert q.streams == ["ORDERS"] and q.tables == ["PRODUCTS"]
    q = query("SELECT STREAM p.name FROM Products AS p JOIN Orders AS o ON o.productId = p.productId")
    assert q.root.input.kind == "INNER" and isinstance(q.root.input.left, P.TableScan)


def test_three_way_join_nests_left_deep():
    q = query("SELECT STREAM o.ticker, p.name, t.amount\n"
              "FROM Orders AS o\n"
              "JOIN Trades OVER (RANGE INTERVAL '1' MINUTE FOLLOWING) AS t ON o.orderId = t.orderId\n"
              "JOIN Products AS p ON o.productId = p.productId AND o.ROWTIME > t.ROWTIME")
    outer = q.root.input
    assert isinstance(outer.left, P.Join) and isinstance(outer.right, P.TableScan)
    inner = outer.left
    assert (inner.left_window, inner.right_window) == (P.JoinWindow(0, 0), P.JoinWindow(0, MINUTE))
    assert (outer.left_window, outer.right_window) == (None, None)
    # o and t are inside the left input of the outer join: their rowtimes are extra columns
    assert names(inner.left.fields)[-1] == "ROWTIME$O" and names(inner.right.fields)[-1] == "ROWTIME$T"
    assert [(show(a), show(b)) for a, b in outer.equi] == [("$0", "$0")]
    assert show(outer.residual) == ">($5, $11)"
    assert [show(e) for e in q.root.exprs] == ["$3", "$13", "$9"]
    assert q.streams == ["ORDERS", "TRADES"] and q.tables == ["PRODUCTS"]


# --------------------------------------------------------------------------- windows

def window(sql):
    q = query(sql)
    w = q.root.input
    assert isinstance(w, P.Window)
    return q, w


def spec(s):
    return (s.mode, s.lower, s.upper, [show(p) for p in s.partition_by], show(s.order_by))


def test_frames():
    _, w = window("SELECT STREAM SUM(units) OVER (ROWS 3 PRECEDING) AS a,"
                  " SUM(units) OVER (RANGE CURRENT ROW) AS b,"
                  " SUM(units) OVER (ROWS CURRENT ROW) AS c,"
                  " SUM(units) OVER (RANGE BETWEEN INTERVAL '1' MINUTE PRECEDING AND CURRENT ROW) AS d,"
                  " SUM(units) OVER (RANGE BETWEEN INTERVAL '10' MINUTE PRECEDING AND INTERVAL '1' MINUTE PRECEDING) AS e,"
                  " SUM(units) OVER (RANGE UNBOUNDED PRECEDING) AS f,"
                  " SUM(units) OVER (PARTITION BY ticker) AS g,"
                  " SUM(units) OVER (RANGE BETWEEN INTERVAL '1' SECOND PRECEDING AND INTERVAL '0' SECOND PRECEDING) AS h"
                  " FROM Orders")
    assert [spec(c.spec) for c in w.calls] == [
        ("ROWS", 3, 0, [], "None"), ("RANGE", 0, 0, [], "None"), ("ROWS", 0, 0, [], "None"),
        ("RANGE", MINUTE, 0, [], "None"), ("RANGE", 10 * MINUTE, MINUTE, [], "None"),
        ("RANGE", None, 0, [], "None"), ("RANGE", None, 0, ["$3"], "None"), ("RANGE", 1000, 0, [], "None")]


def test_partition_and_order_in_either_order_and_hopping_order():
    _, w = window("SELECT STREAM SUM(units) OVER (PARTITION BY ticker ORDER BY ROWTIME ROWS 2 PRECEDING),"
                  " SUM(units) OVER (ORDER BY ROWTIME PARTITION BY ticker ROWS 2 PRECEDING),"
                  " SUM(units) OVER (ORDER BY FLOOR(o.ROWTIME TO HOUR) RANGE INTERVAL '2' HOUR PRECEDING)"
                  " FROM Orders AS o")
    assert len(w.calls) == 2     # the first two windows are the same
    assert spec(w.calls[0].spec) == ("ROWS", 2, 0, ["$3"], "None")
    assert spec(w.calls[1].spec) == ("RANGE", 2 * HOUR, 0, [], "FLOOR_TO[HOUR](RT0)")


def test_named_windows_refinement_and_deduplication():
    q, w = window("SELECT STREAM ticker,\n"
                  "  AVG(units) OVER product (RANGE INTERVAL '10' MINUTE PRECEDING) AS m10,\n"
                  "  AVG(units) OVER (product RANGE INTERVAL '10' MINUTE PRECEDING) AS again,\n"
                  "  MAX(units) OVER last AS mx,\n"
                  "  COUNT(*) OVER last / 2 AS half\n"
                  "FROM Orders\n"
                  "WINDOW product AS (PARTITION BY productId ORDER BY ROWTIME),\n"
                  "       last AS (product ROWS 5 PRECEDING)")
    assert [(c.agg.fn, spec(c.spec)) for c in w.calls] == [
        ("AVG", ("RANGE", 10 * MINUTE, 0, ["$0"], "None")),
        ("MAX", ("ROWS", 5, 0, ["$0"], "None")),
        ("COUNT", ("ROWS", 5, 0, ["$0"], "None"))]
    assert [show(e) for e in q.root.exprs] == ["$3", "$5", "$5", "$6", "/($7, 2)"]
    assert names(w.fields)[-3:] == ["$W0", "$W1", "$W2"]


def test_expressions_inside_and_over_window_aggregates():
    q, w = window("SELECT STREAM SUM(units * amount) OVER w / SUM(amount) OVER w AS avgUnits FROM Orders "
                  "WINDOW w AS (ROWS 10 PRECEDING)")
    assert [show(c.agg.arg) for c in w.calls] == ["*($2, $4)", "$4"]
    assert show(q.root.exprs[0]) == "/($5, $6)" and str(q.columns[0].type) == "BIGINT"


# --------------------------------------------------------------------------- aggregation

def test_group_by_with_stamp_and_bare_rowtime():
    q = query("SELECT STREAM ROWTIME, FLOOR(o.ROWTIME TO HOUR) AS h, ticker, SUM(units) + 1 AS s\n"
              "FROM Orders AS o GROUP BY ticker, FLOOR(ROWTIME TO HOUR)")
    agg = q.root.input
    assert agg.time_key == 1 and agg.stamp is None
    assert [show(k) for k in agg.keys] == ["$3", "FLOOR_TO[HOUR](RT0)"]
    assert [show(e) for e in q.root.exprs] == ["$1", "$0", "+($2, 1)"]
    assert q.rowtime_column == 0 and names(q.columns) == ["H", "TICKER", "S"]
    assert names(agg.fields) == ["TICKER", "$K1", "$A0"]
    q = query("SELECT STREAM FLOOR(ROWTIME TO HOUR) AS ROWTIME, COUNT(*) AS c FROM Orders "
              "GROUP BY FLOOR(ROWTIME TO HOUR)")
    assert show(q.root.input.stamp) == "$0" and q.rowtime_column == 0 and names(q.columns) == ["C"]
    q = query("SELECT STREAM FLOOR(ROWTIME TO HOUR) + INTERVAL '1' HOUR AS ROWTIME, COUNT(*) AS c FROM Orders "
              "GROUP BY FLOOR(ROWTIME TO HOUR)")
    assert show(q.root.input.stamp) == "+($0, Interval(months=0, millis=3600000))"


def test_monotonic_keys():
    for key in ["ROWTIME", "CEIL(ROWTIME TO MINUTE)", "STEP(ROWTIME BY INTERVAL '15' MINUTE)",
                "FLOOR(ROWTIME TO HOUR) - INTERVAL '1' HOUR", "FLOOR(ROWTIME + INTERVAL '30' MINUTE TO DAY)"]:
        q = query(f"SELECT STREAM COUNT(*) FROM Orders GROUP BY ticker, {key}")
        assert q.root.input.time_key == 1, key
    # a monotonic column of a sub-query counts too
    q = query("SELECT STREAM h, COUNT(*) FROM (SELECT STREAM FLOOR(ROWTIME TO HOUR) AS h, ticker FROM Orders) "
              "GROUP BY h, ticker")
    assert q.root.input.time_key == 0


def test_having_and_distinct_aggregates():
    q = query("SELECT STREAM FLOOR(ROWTIME TO HOUR) AS h FROM Orders GROUP BY FLOOR(ROWTIME TO HOUR) "
              "HAVING COUNT(DISTINCT ticker) > 1 AND MAX(units) < 10")
    assert chain(q.root) == ["Project", "Filter", "Aggregate", "StreamScan"]
    agg = q.root.input.input
    assert [(a.fn, a.distinct) for a in agg.aggs] == [("COUNT", True), ("MAX", False)]
    assert show(q.root.input.cond) == "AND(>($1, 1), <($2, 10))"


def test_relational_group_by_needs_no_monotonic_key():
    q = query("SELECT ticker, COUNT(*) FROM Orders GROUP BY ticker")
    agg = q.root.input
    assert not q.is_stream and agg.time_key is None and isinstance(agg.input, P.HistoryScan)
    q = query("SELECT name, COUNT(*) FROM Products GROUP BY name ORDER BY 2 DESC")
    assert isinstance(q.root, P.Sort) and q.root.keys[0].descending and show(q.root.keys[0].expr) == "$1"


def test_streaming_distinct():
    q = query("SELECT STREAM DISTINCT FLOOR(ROWTIME TO MINUTE) AS m, ticker FROM Orders")
    agg = q.root
    assert isinstance(agg, P.Aggregate) and agg.distinct_rows and agg.aggs == []
    assert [show(k) for k in agg.keys] == ["FLOOR_TO[MINUTE](RT0)", "$3"] and agg.time_key == 0
    assert names(q.columns) == ["M", "TICKER"]
    q = query("SELECT DISTINCT name FROM Products")
    assert isinstance(q.root, P.Aggregate) and not q.root.distinct_rows and q.root.time_key is None


# --------------------------------------------------------------------------- ORDER BY

def test_streaming_order_by():
    q = query("SELECT STREAM FLOOR(ROWTIME TO HOUR) AS h, units, ticker FROM Orders "
              "ORDER BY h, units DESC NULLS LAST, 3")
    s = q.root
    assert isinstance(s, P.Sort) and isinstance(s.input, P.Project)
    assert [(show(k.expr), k.descending, k.nulls_first) for k in s.keys] == [
        ("$0", False, None), ("$1", True, False), ("$2", False, None)]
    q = query("SELECT STREAM ROWTIME, ticker FROM Orders ORDER BY ROWTIME, o_units NULLS FIRST".replace(
        "o_units", "ticker"))
    assert [(show(k.expr), k.nulls_first) for k in q.root.keys] == [("RT0", None), ("$0", True)]
    q = query("SELECT STREAM ticker FROM Orders AS o ORDER BY FLOOR(o.ROWTIME TO DAY)")
    assert show(q.root.keys[0].expr) == "FLOOR_TO[DAY](RT0)"


def test_t_sort_sits_under_the_project():
    q = query("SELECT STREAM CAST(ticker AS TIMESTAMP) AS ROWTIME, units FROM Orders WHERE units > 0\n"
              "ORDER BY CAST(ticker AS TIMESTAMP), units WITHIN INTERVAL '1' MINUTE")
    assert chain(q.root) == ["Project", "Sort", "Filter", "StreamScan"]
    s = q.root.input
    assert s.within == MINUTE and show(s.rowtime) == "CAST[TIMESTAMP]($3)"
    assert [show(k.expr) for k in s.keys] == ["CAST[TIMESTAMP]($3)", "$2"]
    assert q.root.rowtime is None and names(q.columns) == ["UNITS"] and q.rowtime_column == 0
    q = query("SELECT STREAM ts AS ROWTIME, units FROM (SELECT STREAM CAST(ticker AS TIMESTAMP) AS ts, units "
              "FROM Orders) ORDER BY ts WITHIN INTERVAL '5' SECOND")
    assert q.root.input.within == 5000 and show(q.root.input.keys[0].expr) == "$0"


def test_relational_order_by_has_no_monotonic_rule():
    q = query("SELECT name FROM Products ORDER BY name DESC")
    assert isinstance(q.root, P.Sort) and not q.root.is_stream and q.root.keys[0].descending


# --------------------------------------------------------------------------- UNION ALL

def test_union_all_flattens_and_widens_types():
    q = query("SELECT STREAM name FROM P UNION ALL SELECT STREAM name FROM Q "
              "UNION ALL SELECT STREAM CAST(units AS VARCHAR(20)) AS name FROM Orders")
    u = q.root
    assert isinstance(u, P.Union) and len(u.inputs()) == 3
    assert str(q.columns[0].type) == "VARCHAR(20)" and q.streams == ["P", "Q", "ORDERS"]
    q = query("SELECT STREAM units FROM Orders UNION ALL SELECT STREAM CAST(units AS BIGINT) FROM Orders")
    assert str(q.columns[0].type) == "BIGINT"
    first = q.root.inputs()[0]
    assert isinstance(first, P.Project) and show(first.exprs[0]) == "CAST[BIGINT]($0)"
    assert q.streams == ["ORDERS"]


def test_relational_union():
    q = query("SELECT name FROM Products UNION ALL SELECT ticker FROM Orders")
    assert isinstance(q.root, P.Union) and not q.is_stream
    assert [type(i.input).__name__ for i in q.root.inputs()] == ["TableScan", "HistoryScan"]
    q = query("SELECT name FROM Products UNION SELECT name FROM Products")
    assert isinstance(q.root, P.Aggregate) and isinstance(q.root.input, P.Union)


# --------------------------------------------------------------------------- sources read

def test_streams_and_tables_are_listed_in_query_order_through_views():
    c = sample_catalog()
    c.add(P.ViewInfo("V", None, "SELECT STREAM * FROM Trades"))
    q = query("SELECT STREAM o.ticker FROM V AS t JOIN Orders OVER (RANGE CURRENT ROW) AS o ON o.orderId = t.orderId "
              "JOIN Products AS p ON p.productId = o.productId", c)
    assert q.streams == ["TRADES", "ORDERS"] and q.tables == ["PRODUCTS"]


# --------------------------------------------------------------------------- relations

def test_values_and_selects_without_from_are_relations():
    q = query("VALUES (1, 'a'), (2.5, 'bb')")
    assert isinstance(q.root, P.Values) and not q.is_stream
    assert [str(f.type) for f in q.columns] == ["DECIMAL(11,1) NOT NULL", "VARCHAR(2) NOT NULL"]
    assert [str(v) for v in q.root.rows[0]] == ["1.0", "a"]
    q = query("SELECT a + 1 AS b FROM (VALUES (1), (2)) AS v (a)")
    assert names(q.columns) == ["B"] and chain(q.root) == ["Project", "Values"]
    assert names(q.root.input.fields) == ["A"]
    q = query("SELECT 1 + 1, 'x' || 2")
    assert chain(q.root) == ["Project", "Values"] and q.root.input.rows == [()]


def test_subquery_alias_renames_columns():
    q = query("SELECT STREAM a, b FROM (SELECT STREAM ticker, units FROM Orders) AS s (a, b) WHERE s.b > 1")
    assert names(q.columns) == ["A", "B"]
    renamed = q.root.input.input
    assert isinstance(renamed, P.Project) and names(renamed.fields) == ["A", "B"]


def test_with_items_shadow_catalog_names_and_work_with_union():
    q = query("WITH Products AS (SELECT STREAM productId, ticker AS name FROM Orders)\n"
              "SELECT STREAM name FROM Products UNION ALL SELECT STREAM name FROM P")
    assert q.is_stream and isinstance(q.root, P.Union) and q.tables == [] and q.streams == ["ORDERS", "P"]


def test_relational_aggregate_without_group_by_and_limits():
    q = query("SELECT COUNT(*), MAX(name) FROM Products HAVING COUNT(*) > 0")
    assert chain(q.root) == ["Project", "Filter", "Aggregate", "TableScan"]
    assert q.root.input.input.keys == [] and q.root.input.input.time_key is None
    assert error("SELECT name FROM Products LIMIT 3").message == "LIMIT, OFFSET and FETCH are not supported"
    assert error("SELECT name FROM Products ORDER BY 2").message == \
        "ORDER BY position 2 is not in the select list (1 to 1)"
