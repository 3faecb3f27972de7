"""Statements other than queries: CREATE STREAM / FOREIGN STREAM / TABLE / VIEW / PUMP, DROP,
ALTER PUMP and INSERT ... VALUES, including their type checks and catalog lookups."""
from streamsql.engine import plan as P
from streamsql.engine import time as T
from streamsql.engine.sql import analyze
from test_sql_support import MemoryCatalog, chain, error, names, pos, query, sample_catalog, show, where


def ts(text):
    return T.parse_timestamp(text)


# --------------------------------------------------------------------------- CREATE STREAM / TABLE

def test_create_stream_columns_types_and_positions():
    sql = ('CREATE OR REPLACE STREAM Orders (\n'
           '  orderId INTEGER NOT NULL,\n'
           '  "ticker" VARCHAR(10),\n'
           '  price DECIMAL(6, 2),\n'
           '  ok BOOLEAN NULL,\n'
           '  ts TIMESTAMP,\n'
           '  d DOUBLE PRECISION,\n'
           '  b BIGINT\n'
           ') DESCRIPTION \'orders\'')
    s = analyze(sql, MemoryCatalog())
    assert isinstance(s, P.CreateStream) and s.name == "ORDERS" and s.or_replace and s.foreign is None
    assert [(c.name, str(c.type)) for c in s.columns] == [
        ("ORDERID", "INTEGER NOT NULL"), ("ticker", "VARCHAR(10)"), ("PRICE", "DECIMAL(6,2)"),
        ("OK", "BOOLEAN"), ("TS", "TIMESTAMP"), ("D", "DOUBLE"), ("B", "BIGINT")]
    assert (s.columns[1].position.line, s.columns[1].position.col) == (3, 3)
    assert (s.position.line, s.position.col) == (1, 1) and s.sql == sql


def test_create_stream_rejects_rowtime_duplicates_and_bad_types():
    sql = "CREATE STREAM s (a INTEGER,\n  rowtime TIMESTAMP)"
    e = error(sql, MemoryCatalog())
    assert e.message == "ROWTIME is implicit in every stream; it cannot be declared as a column"
    assert where(e) == pos(sql, "rowtime")
    sql = "CREATE STREAM s (a INTEGER, A VARCHAR(3))"
    e = error(sql, MemoryCatalog())
    assert (e.message, where(e)) == ("Duplicate column 'A'", pos(sql, "A VARCHAR"))
    sql = "CREATE STREAM s (a INTEGER, b BLOB)"
    e = error(sql, MemoryCatalog())
    assert e.message.startswith("Unsupported type BLOB") and where(e) == pos(sql, "BLOB")
    sql = "CREATE STREAM s (a DECIMAL(50, 2))"
    assert error(sql, MemoryCatalog()).message.startswith("Invalid DECIMAL(50,2)")


def test_create_stream_that_exists():
    e = error("CREATE STREAM Orders (a INTEGER)")
    assert e.message == "Stream 'ORDERS' already exists; use CREATE OR REPLACE STREAM" and where(e) == (1, 15)
    assert analyze("CREATE OR REPLACE STREAM Orders (a INTEGER)", sample_catalog()).or_replace
    e = error("CREATE OR REPLACE STREAM Products (a INTEGER)")
    assert e.message == "Cannot replace table 'PRODUCTS' with a stream"


def test_create_foreign_stream():
    sql = """CREATE OR REPLACE FOREIGN STREAM Ticks (ticker VARCHAR(5), price DOUBLE)
SERVER FILE_SERVER
OPTIONS ("PARSER" 'CSV', "DIRECTORY" '/data', "FILENAME_PATTERN" 'x.*\\.csv', "SKIP_HEADER" 'true',
         "SEPARATOR" ',', "CHARACTER_ENCODING" 'UTF-8')"""
    s = analyze(sql, MemoryCatalog())
    assert isinstance(s, P.CreateStream) and s.name == "TICKS"
    assert s.foreign == {"server": "FILE_SERVER", "options": {
        "PARSER": "CSV", "DIRECTORY": "/data", "FILENAME_PATTERN": "x.*\\.csv", "SKIP_HEADER": "true",
        "SEPARATOR": ",", "CHARACTER_ENCODING": "UTF-8"}}
    assert list(s.foreign["options"]) == ["PARSER", "DIRECTORY", "FILENAME_PATTERN", "SKIP_HEADER",
                                          "SEPARATOR", "CHARACTER_ENCODING"]
    e = error("CREATE FOREIGN STREAM t (a INTEGER) OPTIONS (\"PARSER\" 'CSV')", MemoryCatalog())
    assert e.message.startswith("Syntax error: a FOREIGN STREAM needs SERVER")


def test_create_table_and_drop():
    c = MemoryCatalog()
    s = c.apply(analyze("CREATE TABLE Prices (ticker VARCHAR(5) NOT NULL, price DOUBLE)", c))
    assert isinstance(s, P.CreateTable) and s.name == "PRICES" and names(s.columns) == ["TICKER", "PRICE"]
    d = analyze("DROP TABLE prices", c)
    assert (d.kind, d.name, d.if_exists) == ("TABLE", "PRICES", False)
    d = analyze("DROP STREAM IF EXISTS nothing", c)
    assert (d.kind, d.name, d.if_exists) == ("STREAM", "NOTHING", True)
    d = analyze("DROP FOREIGN STREAM IF EXISTS \"x\"", c)
    assert (d.kind, d.name) == ("STREAM", "x")
    e = error("DROP VIEW nothing", c)
    assert (e.message, where(e)) == ("View 'NOTHING' not found", (1, 11))
    e = error("DROP STREAM prices", c)
    assert e.message == "'PRICES' is a table, not a stream"


# --------------------------------------------------------------------------- views

def test_create_view_keeps_the_body_text_and_validates_it():
    sql = ("CREATE OR REPLACE VIEW HighUnits (id, u) DESCRIPTION 'big orders' AS\n"
           "  SELECT STREAM orderId, units\n  FROM Orders WHERE units > 10")
    v = analyze(sql, sample_catalog())
    assert isinstance(v, P.CreateView) and v.name == "HIGHUNITS" and v.or_replace
    assert v.column_names == ["ID", "U"]
    assert v.body_sql == "SELECT STREAM orderId, units\n  FROM Orders WHERE units > 10"
    sql = "CREATE VIEW bad AS\nSELECT STREAM nope\nFROM Orders"
    e = error(sql)
    assert (e.message, where(e)) == ("Column 'NOPE' not found", (2, 15))
    e = error("CREATE VIEW v2 (a, b) AS SELECT STREAM units FROM Orders")
    assert e.message == "The column list names 2 columns but the query has 1"


def test_view_expansion_with_column_names_and_rowtime():
    c = sample_catalog()
    c.run("CREATE VIEW Big (id, rowtime, u) AS SELECT orderId, FLOOR(ROWTIME TO MINUTE), units FROM Orders "
          "WHERE units > 10")
    q = query("SELECT STREAM ROWTIME, * FROM Big", c)
    assert names(q.columns) == ["ID", "U"] and q.rowtime_column == 0
    inner = q.root.input
    assert isinstance(inner, P.Project) and show(inner.rowtime) == "FLOOR_TO[MINUTE](RT0)"
    assert q.streams == ["ORDERS"]
    # a view used by a relational query reads the stream's history
    q = query("SELECT id FROM Big", c)
    assert not q.is_stream and isinstance(q.root.input.input.input, P.HistoryScan)


def test_view_cycles_are_detected():
    c = sample_catalog()
    c.add(P.ViewInfo("A", None, "SELECT STREAM * FROM B"))
    c.add(P.ViewInfo("B", None, "SELECT STREAM * FROM a"))
    sql = "SELECT STREAM *\nFROM A"
    e = error(sql, c)
    assert e.message == "View 'A' is defined in terms of itself (A -> B -> A)"
    assert where(e) == (2, 6)
    # replacing a view so that it reads itself through another view is caught at CREATE time
    sql = "CREATE OR REPLACE VIEW B AS SELECT STREAM * FROM A"
    e = error(sql, c)
    line, col = pos(sql, "FROM A")
    assert e.message == "View 'B' is defined in terms of itself (B -> A -> B)" and where(e) == (line, col + 5)


def test_errors_inside_a_view_body_are_reported_at_the_reference():
    c = sample_catalog()
    c.add(P.ViewInfo("V", None, "SELECT STREAM gone FROM Orders"))
    sql = "SELECT STREAM * FROM Orders AS o JOIN V OVER (RANGE CURRENT ROW) ON o.units = 1"
    e = error(sql, c)
    assert e.message == "Column 'GONE' not found (in view 'V')" and where(e) == pos(sql, "V OVER")
    c.add(P.ViewInfo("T", None, "SELECT * FROM Products"))
    e = error("SELECT STREAM * FROM T", c)
    assert (e.message, where(e)) == ("Cannot convert table 'PRODUCTS' to a stream", (1, 22))


def test_with_items_are_like_views():
    sql = """WITH big AS (SELECT STREAM * FROM Orders WHERE units > 10),
     bigger (u) AS (SELECT units FROM big WHERE units > 100)
SELECT STREAM u FROM bigger"""
    q = query(sql)
    assert names(q.columns) == ["U"]
    assert chain(q.root) == ["Project", "Project", "Filter", "Project", "Filter", "StreamScan"]
    assert show(q.root.input.input.cond) == ">($2, 100)" and show(q.root.input.input.input.input.cond) == ">($2, 10)"
    e = error("WITH w AS (SELECT STREAM nope FROM Orders) SELECT STREAM * FROM Orders")
    assert (e.message, where(e)) == ("Column 'NOPE' not found", (1, 26))


# --------------------------------------------------------------------------- pumps

def test_create_pump():
    c = sample_catalog()
    sql = ("CREATE OR REPLACE PUMP copy STOPPED AS\n"
           "INSERT INTO P (ROWTIME, name)\n"
           "SELECT STREAM ROWTIME, ticker FROM Orders WHERE units > 1")
    p = analyze(sql, c)
    assert isinstance(p, P.CreatePump) and (p.name, p.target, p.columns, p.started, p.or_replace) == \
        ("COPY", "P", ["ROWTIME", "NAME"], False, True)
    assert p.query.is_stream and names(p.query.columns) == ["TICKER"] and p.query.rowtime_column == 0
    assert p.query.sql == "SELECT STREAM ROWTIME, ticker FROM Orders WHERE units > 1"
    p = analyze("CREATE PUMP p2 AS INSERT INTO Q SELECT STREAM ticker FROM Orders", c)
    assert p.started and p.columns is None


def test_create_pump_checks_columns():
    c = sample_catalog()
    sql = "CREATE PUMP pmp AS INSERT INTO P SELECT STREAM ticker, units FROM Orders"
    e = error(sql, c)
    assert e.message == "The pump's query has 2 columns but the target 'P' has 1"
    sql = "CREATE PUMP pmp AS INSERT INTO P SELECT STREAM units FROM Orders"
    e = error(sql, c)
    assert e.message == "Cannot assign to target column 'NAME' of type VARCHAR(10) from source of type INTEGER"
    assert where(e) == pos(sql, "units")
    sql = "CREATE PUMP pmp AS INSERT INTO P (name, ROWTIME) SELECT STREAM ROWTIME, ticker FROM Orders"
    e = error(sql, c)
    assert e.message == ("ROWTIME is at position 2 of the target columns but the query's select list "
                         "has it at position 1")
    e = error("CREATE PUMP pmp AS INSERT INTO P SELECT ticker FROM Orders", c)
    assert e.message == "A pump runs a streaming query: write INSERT INTO ... SELECT STREAM ..."
    e = error("CREATE PUMP pmp AS INSERT INTO Products SELECT STREAM productId, ticker FROM Orders", c)
    assert e.message == "A pump inserts into a stream; 'PRODUCTS' is a table"
    e = error("CREATE PUMP OldPump AS INSERT INTO P SELECT STREAM ticker FROM Orders", c)
    assert e.message == "Pump 'OLDPUMP' already exists; use CREATE OR REPLACE PUMP"


def test_alter_pump():
    c = sample_catalog()
    a = analyze("ALTER PUMP oldpump STOP", c)
    assert isinstance(a, P.AlterPump) and (a.names, a.action) == (["OLDPUMP"], "STOP")
    c.add(P.PumpInfo("other", "Q"))
    a = analyze('ALTER PUMP OldPump, "other" START', c)
    assert (a.names, a.action) == (["OLDPUMP", "other"], "START")
    a = analyze('ALTER PUMP "Trading".* START', c)
    assert a.names == ["Trading.*"]
    a = analyze("ALTER PUMP trading.* STOP", c)
    assert a.names == ["TRADING.*"]
    e = error("ALTER PUMP nope START", c)
    assert (e.message, where(e)) == ("Pump 'NOPE' not found", (1, 12))


# --------------------------------------------------------------------------- INSERT

def test_insert_values_are_typed_constants():
    sql = ("INSERT INTO Orders (ROWTIME, orderId, ticker, units)\n"
           "VALUES ('2006-10-10 10:00:00', 1, 'ORCL', 2 * 5),\n"
           "       (TIMESTAMP '2006-10-10 10:01:00.5', -2, 'A' || 'B', NULL)")
    s = analyze(sql, sample_catalog())
    assert isinstance(s, P.InsertValues) and s.target == "ORDERS"
    assert s.columns == ["ROWTIME", "ORDERID", "TICKER", "UNITS"]
    r0, r1 = s.rows
    assert r0[0].value == ts("2006-10-10 10:00:00") and r0[0].type.name == "TIMESTAMP"
    assert r1[0].value == ts("2006-10-10 10:01:00.500")
    assert r1[1].value == -2 and show(r0[3]) == "*(2, 5)" and show(r1[2]) == "||('A', 'B')"
    assert [(p.line, p.col) for p in s.row_positions] == [(2, 8), (3, 8)]


def test_insert_without_column_list_uses_all_columns():
    s = analyze("INSERT INTO P VALUES ('x'), ('y')", sample_catalog())
    assert s.columns == ["NAME"] and [r[0].value for r in s.rows] == ["x", "y"]


def test_insert_type_mismatches():
    sql = "INSERT INTO Orders (amount) VALUES ('abc')"
    e = error(sql)
    assert e.message == "Cannot assign to target column 'AMOUNT' of type INTEGER from source of type VARCHAR(3)"
    assert where(e) == pos(sql, "'abc'")
    sql = "INSERT INTO Orders (ticker, units)\nVALUES ('a', 1),\n       ('b', TRUE)"
    e = error(sql)
    assert e.message == "Cannot assign to target column 'UNITS' of type INTEGER from source of type BOOLEAN"
    assert where(e) == (3, 14)
    e = error("INSERT INTO Orders (ROWTIME) VALUES (5)")
    assert e.message == "Cannot assign to target column 'ROWTIME' of type TIMESTAMP from source of type INTEGER"
    e = error("INSERT INTO Orders (ROWTIME) VALUES ('soon')")
    assert e.message.startswith("Cannot assign to target column 'ROWTIME' of type TIMESTAMP from source of "
                                "type VARCHAR(4): 'soon' is not a timestamp")
    e = error("INSERT INTO Orders (ROWTIME) VALUES (NULL)")
    assert e.message == "Cannot assign NULL to target column 'ROWTIME' of type TIMESTAMP NOT NULL"
    e = error("INSERT INTO Orders (ticker) VALUES (1.5)")
    assert e.message == "Cannot assign to target column 'TICKER' of type VARCHAR(10) from source of type DECIMAL(2,1)"


def test_insert_target_and_column_errors():
    sql = "INSERT INTO Nope VALUES (1)"
    e = error(sql)
    assert (e.message, where(e)) == ("Stream or table 'NOPE' not found", (1, 13))
    sql = "INSERT INTO Orders (ticker, colour) VALUES ('a', 'red')"
    e = error(sql)
    assert (e.message, where(e)) == ("Column 'COLOUR' not found in stream 'ORDERS'", pos(sql, "colour"))
    e = error("INSERT INTO Products (ROWTIME, name) VALUES ('2006-10-10 10:00:00', 'x')")
    assert e.message == "Column 'ROWTIME' not found in table 'PRODUCTS'"
    sql = "INSERT INTO Orders (ticker, units) VALUES ('a', 1), ('b')"
    e = error(sql)
    assert (e.message, where(e)) == ("INSERT has 2 target columns but this row has 1 values", pos(sql, "('b')"))
    e = error("INSERT INTO Orders (units) VALUES (units + 1)")
    assert e.message == "VALUES may only contain constant expressions"
    sql = "INSERT INTO Orders (ticker) SELECT ticker FROM Orders"
    e = error(sql)
    assert e.message.startswith("INSERT ... SELECT runs continuously and needs a pump: CREATE PUMP")
    assert where(e) == (1, 1)


def test_insert_into_a_view_is_refused():
    c = sample_catalog().add(P.ViewInfo("V", None, "SELECT STREAM * FROM P"))
    assert error("INSERT INTO V VALUES ('x')", c).message == "Cannot insert into view 'V'"
