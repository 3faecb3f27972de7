"""Expression translation and typing (SQL rules, as in streamsql.engine.types)."""
import decimal

import pytest

from streamsql.engine import time as T
from streamsql.engine.errors import SqlError
from streamsql.engine.expr import FUNCTIONS, Call, Lit, compile_expr, walk
from streamsql.engine.time import Interval
from test_sql_support import query, show

# Orders: PRODUCTID, ORDERID, UNITS (INTEGER), TICKER VARCHAR(10), AMOUNT INTEGER


def expr(text: str, where: str = ""):
    q = query(f"SELECT STREAM {text} FROM Orders {where}")
    return q.root.exprs[0]


def interval_expr(text: str):
    """An INTERVAL cannot be a column of a query (it is refused at analysis), so intervals are
    typed where they may stand: in a condition."""
    q = query(f"SELECT STREAM units FROM Orders WHERE ({text}) IS NOT NULL")
    return q.root.input.cond.args[0]


def ty(text: str) -> str:
    return str(expr(text).type.with_nullable(True))


def value(text: str):
    e = expr(text)
    return compile_expr(e)((), ())


@pytest.mark.parametrize("text, expected", [
    ("units / 2", "INTEGER"),
    ("units / units", "INTEGER"),
    ("units * 2", "INTEGER"),
    ("units + 3000000000", "BIGINT"),
    ("3000000000", "BIGINT"),
    ("1.5", "DECIMAL(2,1)"),
    ("0.25", "DECIMAL(2,2)"),
    ("1.5E3", "DOUBLE"),
    ("units * 1.5", "DECIMAL(13,1)"),
    ("1.50 + 2.5", "DECIMAL(4,2)"),
    ("units + 1.5E0", "DOUBLE"),
    ("'abc'", "VARCHAR(3)"),
    ("'a' || ticker", "VARCHAR(11)"),
    ("TRUE", "BOOLEAN"),
    ("NULL", "NULL"),
    ("ROWTIME AS t", "TIMESTAMP"),
    ("ROWTIME + INTERVAL '1' MINUTE", "TIMESTAMP"),
    ("CAST(units AS DECIMAL(6, 2))", "DECIMAL(6,2)"),
    ("CAST(units AS VARCHAR(5))", "VARCHAR(5)"),
    ("CASE WHEN units > 1 THEN 1 ELSE 2.5 END", "DECIMAL(11,1)"),
    ("CASE units WHEN 1 THEN 'unit' ELSE 'units' END", "VARCHAR(5)"),
    ("COALESCE(units, 1.5)", "DECIMAL(11,1)"),
    ("NULLIF(units, 0)", "INTEGER"),
    ("CHAR_LENGTH(ticker)", "INTEGER"),
    ("CHARACTER_LENGTH(ticker)", "INTEGER"),
    ("SUBSTRING(ticker FROM 2 FOR 3)", "VARCHAR(10)"),
    ("POSITION('A' IN ticker)", "INTEGER"),
    ("MOD(units, 3)", "INTEGER"),
    ("units % 3", "INTEGER"),
    ("POWER(units, 2)", "DOUBLE"),
    ("SQRT(units)", "DOUBLE"),
    ("ABS(-units)", "INTEGER"),
    ("FLOOR(1.5)", "DECIMAL(2,0)"),
    ("CEIL(units)", "INTEGER"),
    ("CEILING(1.5E0)", "DOUBLE"),
    ("ROUND(1.25, 1)", "DECIMAL(3,2)"),
    ("FLOOR(ROWTIME TO HOUR)", "TIMESTAMP"),
    ("units > 1 AND ticker LIKE 'A%'", "BOOLEAN"),
])
def test_types(text, expected):
    assert ty(text) == expected


@pytest.mark.parametrize("text", ["ROWTIME - TIMESTAMP '2006-01-01 00:00:00'", "INTERVAL '1' HOUR * 2"])
def test_interval_arithmetic_is_typed_interval_and_cannot_be_a_column(text):
    assert str(interval_expr(text).type.with_nullable(True)) == "INTERVAL"
    with pytest.raises(SqlError, match=r"cannot be an INTERVAL \('EXPR\$0'\)"):
        expr(text)


def test_literal_values():
    assert expr("1.50").value == decimal.Decimal("1.50")
    assert expr("-2").value == -2 and expr("-2").type.name == "INTEGER"
    assert expr("1.5E3").value == 1500.0
    assert expr("'it''s'").value == "it's"
    assert expr("TIMESTAMP '2006-10-10 10:00:00'").value == T.parse_timestamp("2006-10-10 10:00:00")
    assert interval_expr("INTERVAL '10' MINUTE").value == Interval(millis=600_000)
    assert interval_expr("INTERVAL '1:30' HOUR TO MINUTE").value == Interval(millis=90 * 60_000)
    assert interval_expr("INTERVAL -'5' SECOND").value == Interval(millis=-5000)
    assert interval_expr("-INTERVAL '2' DAY").value == Interval(millis=-2 * 86_400_000)
    assert interval_expr("INTERVAL ' 1' HOUR").value == Interval(millis=3_600_000)
    assert interval_expr("INTERVAL '2' MONTH").value == Interval(months=2)
    assert expr("CAST('2006-10-10 10:00:00' AS TIMESTAMP)").value == T.parse_timestamp("2006-10-10 10:00:00")


def test_integer_division_truncates_and_concatenation_casts_numbers():
    assert show(expr("units / 2")) == "/($2, 2)"
    assert value("7 / 2") == 3 and value("-7 / 2") == -3
    e = expr("'An order for ' || units || ' units'")
    assert show(e) == "||(||('An order for ', CAST[VARCHAR]($2)), ' units')"
    assert value("'n=' || 42") == "n=42"


def test_string_literals_compared_with_timestamps_become_timestamps():
    q = query("SELECT STREAM ticker FROM Orders WHERE ROWTIME >= '2006-10-10 10:00:00'")
    cond = q.root.input.cond
    assert cond.fn == ">=" and isinstance(cond.args[1], Lit) and cond.args[1].type.name == "TIMESTAMP"
    assert cond.args[1].value == T.parse_timestamp("2006-10-10 10:00:00")
    q = query("SELECT STREAM ticker FROM Orders WHERE ROWTIME BETWEEN '2006-10-10 10:00:00' AND "
              "'2006-10-10 11:00:00'")
    cond = q.root.input.cond
    assert show(cond) == f"AND(>=(RT0, {T.parse_timestamp('2006-10-10 10:00:00')}), " \
                         f"<=(RT0, {T.parse_timestamp('2006-10-10 11:00:00')}))"
    q = query("SELECT STREAM ticker FROM Orders WHERE ROWTIME IN ('2006-10-10 10:00:00')")
    assert q.root.input.cond.args[1].type.name == "TIMESTAMP"


def test_predicates():
    assert show(expr("units NOT BETWEEN 1 AND 5")) == "NOT(AND(>=($2, 1), <=($2, 5)))"
    assert show(expr("units IN (1, 2)")) == "IN($2, 1, 2)"
    assert show(expr("units NOT IN (1, 2)")) == "NOT(IN($2, 1, 2))"
    e = expr("ticker LIKE 'A!%%' ESCAPE '!'")
    assert e.fn == "LIKE" and e.arg == "!"
    assert show(expr("ticker NOT LIKE 'A%'")) == "NOT(LIKE($3, 'A%'))"
    assert show(expr("units IS NULL")) == "IS_NULL($2)"
    assert show(expr("units IS NOT NULL")) == "IS_NOT_NULL($2)"
    assert show(expr("(units > 1) IS TRUE")) == "IS_TRUE(>($2, 1))"
    assert show(expr("(units > 1) IS NOT FALSE")) == "IS_NOT_FALSE(>($2, 1))"
    assert show(expr("NOT (units > 1)")) == "NOT(>($2, 1))"
    assert show(expr("units <> 1")) == "<>($2, 1)" and show(expr("units != 1")) == "<>($2, 1)"


def test_case_forms():
    e = expr("CASE units WHEN 1 THEN 'unit' ELSE 'units' END")
    assert show(e) == "CASE(=($2, 1), 'unit', 'units')"
    e = expr("CASE WHEN units > 10 THEN 'big' WHEN units > 1 THEN 'some' END")
    assert show(e) == "CASE(>($2, 10), 'big', >($2, 1), 'some', None)" and e.type.nullable
    e = expr("CASE WHEN units > 1 THEN 1 ELSE 2.5 END")
    assert show(e) == "CASE(>($2, 1), CAST[DECIMAL](1), Decimal('2.5'))"


def test_functions():
    assert show(expr("FLOOR(ROWTIME TO HOUR)")) == "FLOOR_TO[HOUR](RT0)"
    assert show(expr("CEIL(ROWTIME TO minutes)")) == "CEIL_TO[MINUTE](RT0)"
    assert show(expr("STEP(ROWTIME BY INTERVAL '15' MINUTE)")) == "STEP[INTERVAL '15' MINUTE](RT0)"
    assert expr("STEP(ROWTIME BY INTERVAL '15' MINUTE)").arg == Interval(millis=15 * 60_000)
    assert show(expr("SUBSTRING(ticker FROM 2 FOR 3)")) == "SUBSTRING($3, 2, 3)"
    assert show(expr("SUBSTRING(ticker, 2)")) == "SUBSTRING($3, 2)"
    assert show(expr("TRIM(LEADING 'x' FROM ticker)")) == "TRIM[LEADING]($3, 'x')"
    assert show(expr("TRIM(ticker)")) == "TRIM[BOTH]($3)"
    assert show(expr("POSITION('A' IN ticker)")) == "POSITION('A', $3)"
    assert show(expr("UPPER(ticker)")) == "UPPER($3)" and show(expr("LOWER(ticker)")) == "LOWER($3)"
    assert show(expr("MOD(units, 3)")) == "%($2, 3)"
    assert show(expr("COALESCE(units, 0)")) == "COALESCE($2, 0)"
    assert show(expr("NULLIF(units, 0)")) == "NULLIF($2, 0)"
    assert show(expr("LN(units)")) == "LN($2)" and show(expr("EXP(units)")) == "EXP($2)"
    assert show(expr("CAST(units AS DOUBLE)")) == "CAST[DOUBLE]($2)"
    assert value("TRIM(BOTH 'x' FROM 'xxaxx')") == "a"
    assert value("SUBSTRING('abcdef' FROM 2 FOR 3)") == "bcd"
    assert value("POSITION('c' IN 'abc')") == 3


def test_every_call_uses_a_known_function():
    q = query("SELECT STREAM ROWTIME, 'x' || units, CASE WHEN units IN (1, 2) THEN ABS(units) END, "
              "FLOOR(ROWTIME TO DAY), units BETWEEN 1 AND 2, ticker LIKE 'a%', -units, NOT (units > 2), "
              "COALESCE(NULLIF(units, 1), 0) FROM Orders WHERE units IS NOT NULL")
    for e in q.root.exprs + [q.root.input.cond]:
        for x in walk(e):
            if isinstance(x, Call):
                assert x.fn in FUNCTIONS


def test_aggregate_types():
    q = query("SELECT STREAM FLOOR(ROWTIME TO HOUR), COUNT(*), COUNT(ticker), SUM(units), AVG(units), "
              "SUM(CAST(units AS DECIMAL(6, 2))), AVG(CAST(units AS DECIMAL(6, 2))), SUM(CAST(units AS DOUBLE)), "
              "AVG(CAST(units AS SMALLINT)), MIN(ticker), MAX(units), FIRST_VALUE(units), LAST_VALUE(ticker), "
              "COUNT(DISTINCT ticker) FROM Orders GROUP BY FLOOR(ROWTIME TO HOUR)")
    agg = q.root.input
    got = [(a.fn, str(a.type), a.distinct) for a in agg.aggs]
    assert got == [
        ("COUNT", "BIGINT NOT NULL", False), ("COUNT", "BIGINT NOT NULL", False), ("SUM", "BIGINT", False),
        ("AVG", "INTEGER", False), ("SUM", "DECIMAL(16,2)", False), ("AVG", "DECIMAL(10,6)", False),
        ("SUM", "DOUBLE", False), ("AVG", "SMALLINT", False), ("MIN", "VARCHAR(10)", False),
        ("MAX", "INTEGER", False), ("FIRST_VALUE", "INTEGER", False), ("LAST_VALUE", "VARCHAR(10)", False),
        ("COUNT", "BIGINT NOT NULL", True)]
    assert agg.aggs[0].arg is None and show(agg.aggs[1].arg) == "$3"


def test_integer_average_of_a_ratio_stays_integer():
    q = query("SELECT STREAM FLOOR(ROWTIME TO HOUR) AS h, SUM(units) / COUNT(units) AS a FROM Orders "
              "GROUP BY FLOOR(ROWTIME TO HOUR)")
    assert show(q.root.exprs[1]) == "/($1, $2)" and str(q.columns[1].type) == "BIGINT"
