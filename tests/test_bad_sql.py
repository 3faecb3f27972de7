"""Malformed SQL through the whole workbench (docs/reliability.md): the corpus of tests/sql_corpus.py
(every statement of the scenario scripts and notebooks, truncated and mutated) and hypothesis
token soup go through ``Workbench.execute`` on the local runtime. Every one either runs (a
mutation can still be valid SQL) or raises SqlError with a position inside the text and a
one-line message, never another exception; a failed one changes nothing, so after all of them the
original statements still run and each scenario still gives its expected output."""
from __future__ import annotations

import io
import json
import logging
import random
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scenario_compare import load, mismatch
from sql_corpus import JUNK, mutations, scripts
from streamsql.engine.cli import read_events
from streamsql.engine.errors import EventError, LateRowError, SqlError
from streamsql.engine.steps import replay_lines
from streamsql.engine.workbench import Workbench
from test_sql_robustness import TOKENS

ROOT = Path(__file__).resolve().parent.parent


def _fresh(prefix: list[str]) -> Workbench:
    """A local workbench with ``prefix`` run (statements a notebook shows failing are skipped)."""
    wb = Workbench(None, engine="local", durable=False, trace=False)
    for s in prefix:
        try:
            wb.execute(s)
        except (SqlError, EventError, LateRowError):
            pass
    return wb


def _outcome(wb: Workbench, text: str) -> str:
    """'ok', 'sql' (a well-formed SqlError) or 'value' (an INSERT whose values are refused)."""
    try:
        wb.execute(text)
    except SqlError as e:
        assert e.line is not None and e.col is not None, (text, e)
        assert 1 <= e.line <= text.count("\n") + 1 and e.col >= 1, (text, e)
        assert e.sql == text and e.message and "\n" not in e.message, (text, e.message)
        return "sql"
    except (EventError, LateRowError) as e:     # values, not syntax: the typed-value parser's errors
        assert text.lstrip().upper().startswith("INSERT") and "\n" not in str(e), (text, e)
        return "value"
    return "ok"


def test_malformed_statements_raise_positioned_sql_errors_and_change_nothing(caplog):
    caplog.set_level(logging.ERROR, logger="streamsql")
    rng = random.Random(13)          # the seed sql_corpus.corpus() uses: the counts in docs/reliability.md
    counts: Counter = Counter()
    for name, stmts in scripts():
        wb = _fresh([])
        try:
            for i, stmt in enumerate(stmts):
                for m in mutations(stmt, rng):
                    kind = _outcome(wb, m)
                    counts[kind] += 1
                    if kind == "ok":        # it really ran: start again from the statements before
                        wb.close()
                        wb = _fresh(stmts[:i])
                try:                        # the original statement still does what it did
                    wb.execute(stmt)
                except (SqlError, EventError, LateRowError) as e:
                    assert name.startswith("notebooks/"), (name, stmt, e)   # a notebook's demonstrated error
            if name.endswith(".sql"):
                _check_scenario(wb, ROOT / name)
        finally:
            wb.close()
    assert counts["sql"] >= 1500, counts
    print(dict(counts))


def _check_scenario(wb: Workbench, sql_path: Path) -> None:
    """The scenario's events give its expected lines in the workbench the corpus went through."""
    base = sql_path.with_suffix("")
    _sql, events_path, expected = load(base)
    q = [q for q in wb.queries.values() if q.running][-1]
    events = read_events(events_path)
    names = {}
    for ev in events:
        names.setdefault(wb.catalog.stream(ev.stream).name, ev.stream)
    base = wb.last_step
    outcomes = wb.inject(events)
    got = replay_lines(q, outcomes, base, bounds=any("bound" in e for e in expected), stream_names=names)
    got = json.loads(json.dumps(got))
    diff = mismatch(got, expected)
    assert diff is None, (sql_path, diff)


# --------------------------------------------------------------------------- token soup

_SOUP_WB: list[Workbench] = []


def _soup_wb() -> Workbench:
    if not _SOUP_WB:
        wb = Workbench(None, engine="local", durable=False, trace=False)
        wb.execute("""CREATE STREAM Orders (productId INTEGER, orderId INTEGER, units INTEGER, ticker VARCHAR(10),
                                            amount INTEGER);
                      CREATE STREAM Trades (orderId INTEGER, tradeId INTEGER, ticker VARCHAR(10), amount INTEGER,
                                            price DECIMAL(6, 2));
                      CREATE TABLE Products (productId INTEGER, name VARCHAR(20))""")
        wb.set_history("Orders")
        _SOUP_WB.append(wb)
    return _SOUP_WB[0]


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(TOKENS + JUNK), min_size=1, max_size=30))
def test_token_soup_through_the_workbench(tokens):
    wb = _soup_wb()
    _outcome(wb, " ".join(tokens))
    # the session is alive: a good query still starts and runs
    q = wb.query("SELECT STREAM ROWTIME, units FROM Orders WHERE units > 0")
    wb.stop_query(q.name)


def test_session_alive_after_the_soup():
    wb = _soup_wb()
    q = wb.query("SELECT STREAM ROWTIME, ticker, units FROM Orders WHERE units > 1")
    clock = wb.clock("Orders")
    rt = (clock or 1577872800000) + 60_000
    wb.insert("Orders", {"productId": 1, "orderId": 1, "units": 5, "ticker": "ORCL", "amount": 1}, rowtime=rt)
    assert [r.values for r in q.rows] == [("ORCL", 5)]


# --------------------------------------------------------------------------- found by the corpus and by hand

def test_statements_too_deep_to_analyze_are_positioned_sql_errors(wb_local):
    wb_local.execute("CREATE STREAM S (a INTEGER)")
    for text in ["SELECT STREAM " + "(" * 3000 + "1" + ")" * 3000 + " FROM S",
                 "SELECT STREAM a FROM S WHERE " + " AND ".join(["a = 1"] * 3000)]:
        script = "CREATE STREAM T (b INTEGER);\n" + text
        _outcome(wb_local, script)
        assert "T" in wb_local.catalog.streams     # the statement before it ran
        wb_local.execute("DROP STREAM T")
    with pytest.raises(SqlError, match="nested too deeply") as e:
        wb_local.execute("SELECT STREAM " + "(" * 3000 + "1" + ")" * 3000 + " FROM S")
    assert (e.value.line, e.value.col) == (1, 1)


def test_catalog_errors_have_positions_and_the_error_stream_stays(wb_local):
    wb_local.execute("CREATE STREAM S (a INTEGER)")
    wb_local.query("SELECT STREAM ROWTIME, a FROM S", name="reader")
    for text, words in [("-- c\nDROP STREAM ERRORS", "system stream"),
                        ("-- c\nCREATE OR REPLACE STREAM ERRORS (a INTEGER)", "system stream"),
                        ("-- c\nDROP STREAM S", "used by running query"),
                        ("-- c\nCREATE TABLE t (a VARCHAR(1e999))", "not a whole number")]:
        with pytest.raises(SqlError, match=words) as e:
            wb_local.execute(text)
        assert e.value.line == 2 and e.value.col >= 1 and e.value.sql == text
    assert [f.name for f in wb_local.catalog.streams["ERRORS"].fields][:2] == ["ERROR_TIME", "ERROR_LEVEL"]
