"""Whatever text comes in, analyze either returns a statement or raises SqlError with a position
inside the script (never another exception)."""
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from streamsql.engine import plan as P
from streamsql.engine.errors import SqlError
from streamsql.engine.sql import analyze, split_script
from test_sql_support import sample_catalog

TOKENS = ["SELECT", "STREAM", "*", "FROM", "Orders", "Trades", "Products", "AS", "o", "t", "WHERE",
          "units", "ticker", "ROWTIME", "o.ROWTIME", "t.orderId", "o.orderId", ",", "(", ")", "=", ">",
          "+", "-", "/", "||", "'x'", "1", "2.5", "NULL", "AND", "OR", "NOT", "GROUP BY", "FLOOR",
          "TO", "HOUR", "COUNT(*)", "SUM", "OVER", "RANGE", "ROWS", "INTERVAL '1' MINUTE", "PRECEDING",
          "FOLLOWING", "CURRENT ROW", "JOIN", "ON", "LEFT", "ORDER BY", "WITHIN", "UNION ALL", "DISTINCT",
          "HAVING", "WINDOW w AS", "PARTITION BY", "CASE", "WHEN", "THEN", "ELSE", "END", "CAST", "VARCHAR(3)",
          "TIMESTAMP '2006-10-10 10:00:00'", "INSERT INTO", "VALUES", "CREATE", "VIEW", "PUMP", "\n", ";",
          '"weird"', "--c\n", "/*x*/"]

QUERIES = [
    "SELECT STREAM ROWTIME, ticker FROM Orders WHERE units > 2",
    "SELECT STREAM FLOOR(ROWTIME TO HOUR) AS h, COUNT(*) FROM Orders GROUP BY FLOOR(ROWTIME TO HOUR)",
    "SELECT STREAM o.ticker FROM Orders AS o JOIN Trades OVER (RANGE INTERVAL '1' MINUTE PRECEDING) AS t "
    "ON o.orderId = t.orderId",
    "SELECT STREAM SUM(units) OVER (ROWS 2 PRECEDING) FROM Orders",
]


def _check(text: str) -> None:
    catalog = sample_catalog()
    for stmt in split_script(text):
        try:
            result = analyze(stmt, catalog, text)
        except SqlError as e:
            assert e.line is not None and e.col is not None
            assert 1 <= e.line <= text.count("\n") + 1
            assert e.sql == text
            assert e.message
        else:
            assert isinstance(result, P.Statement)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(TOKENS), min_size=1, max_size=25))
def test_random_token_soup_only_raises_sql_errors(tokens):
    _check(" ".join(tokens))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(QUERIES), st.integers(min_value=0, max_value=200), st.integers(min_value=0, max_value=8))
def test_truncated_and_damaged_queries_only_raise_sql_errors(sql, cut, drop):
    cut = min(cut, len(sql))
    _check(sql[:cut] + sql[cut + drop:])


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=60))
def test_arbitrary_text(text):
    _check(text)
