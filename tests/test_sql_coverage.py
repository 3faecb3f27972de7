"""Nothing the dialect accepts is ignored (streamsql/engine/sql/planned.py).

The walk of tests/dialect_walk.py writes a statement for every entry of the tables sqlglot's
parser reads the grammar from (statements, query modifiers, every operator, every function name,
joins, set operations, FROM items, types) and for the dialect's own syntax; the scenario scripts
and the notebooks' ``%%streamsql`` cells add the statements the project really runs. Each one is
analyzed with the arguments of every node of its tree recorded as the planner reads them, and
must come out one of two ways:

- **accepted**, and then the planner read every argument present on every node it planned (an
  argument sqlglot sets whatever was written, such as ``||``'s ``safe``, is marked so in the
  table): nothing was parsed and dropped;
- **refused**, in one line with a position, naming what is refused; a statement the parser
  accepted is never refused with the parser's noise ("Syntax error near ..."), nor is one that
  writes a construct the dialect lacks (``MATCH_RECOGNIZE``, ``FILTER (``, ...).

The acceptance cases of the refusals (each construct named, at its keyword) run on both runtimes.
"""
from __future__ import annotations

import random
import re
from collections import Counter

import pytest
from sqlglot import exp

from dialect_walk import GRAMMAR_SCHEMA, MODIFIERS, construct_names, grammar_probes
from sql_corpus import mutations, scripts
from streamsql.engine.errors import SqlError
from streamsql.engine.sql import _reject_unsupported
from streamsql.engine.sql.context import Env
from streamsql.engine.sql.ddl import analyze_tree
from streamsql.engine.sql.dialect import StreamParser, parse
from streamsql.engine.sql.expressions import _HANDLERS
from streamsql.engine.sql.names import NotAName
from streamsql.engine.sql.planned import IMPLIED, PLAN, PLANNED, check
from streamsql.engine.sql.script import ScriptStatement, split_script
from streamsql.engine.sql.source import Source
from streamsql.engine.workbench import Workbench


class _Reads(dict):
    """A node's arguments, remembering which ones were read (``get`` or ``[]``)."""

    def __init__(self, d):
        super().__init__(d)
        self.read: set = set()

    def get(self, key, default=None):
        self.read.add(key)
        return super().get(key, default)

    def __getitem__(self, key):
        self.read.add(key)
        return super().__getitem__(key)


def _nodes(value):
    for x in (value if isinstance(value, list) else [value]):
        if isinstance(x, exp.Expr):
            yield x


def _instrument(tree: exp.Expr) -> None:
    stack = [tree]
    while stack:
        n = stack.pop()
        n.args = _Reads(n.args)
        for v in dict.values(n.args):
            stack.extend(_nodes(v))


def _unread(tree: exp.Expr) -> list[str]:
    """``Class.argument`` of every argument present on a planned node that the planner never read."""
    out = []
    stack = [tree]
    while stack:
        n = stack.pop()
        entry = PLANNED[type(n)]
        for key, value in dict.items(n.args):
            if value is None or value is False or (isinstance(value, (list, str)) and not value):
                continue
            if entry[key] != IMPLIED and key not in n.args.read:
                out.append(f"{type(n).__name__}.{key}")
            if entry[key] == PLAN:
                stack.extend(_nodes(value))
    return out


def analyze_recorded(text: str, catalog) -> tuple[str, object]:
    """``("accepted", unread arguments)``, or ``("parse" | "refused", SqlError)``."""
    st = ScriptStatement(text, 1, 1)
    source = Source(st.sql, 1, 1, st.sql)
    try:
        _reject_unsupported(source)
        tree = parse(source)
    except SqlError as e:
        return "parse", e
    _instrument(tree)
    try:
        check(tree, source)
        try:
            analyze_tree(tree, Env(catalog, source))
        except NotAName as e:
            raise source.error(f"Syntax error: expected a name, not '{source.snippet(e.node)}'",
                               e.node if isinstance(e.node, exp.Expr) else None) from None
    except SqlError as e:
        return "refused", e
    return "accepted", _unread(tree)


def _writes(text: str, keyword: str) -> bool:
    """Whether ``text`` has ``keyword`` as words of its own (not inside a name)."""
    return re.search(r"(?<![A-Z0-9_$])" + re.escape(keyword) + (r"(?![A-Z0-9_])" if keyword[-1].isalnum() else ""),
                     text.upper()) is not None


def _problem(what: str, text: str, kind: str, got, keywords: bool = True) -> str | None:
    if kind == "accepted":
        return f"{what}: {text!r} parsed and planned, but the planner never read {got}" if got else None
    e = got
    if e.line is None or e.col is None or "\n" in e.message or not e.message:
        return f"{what}: {text!r} refused without a one-line positioned message: {e.message!r}"
    if kind == "refused" and e.message.startswith("Syntax error near"):
        return f"{what}: {text!r} parsed but refused with the parser's noise: {e.message}"
    for kw, name in construct_names().items():
        if keywords and _writes(text, kw) and e.message.startswith("Syntax error") and name not in e.message:
            return f"{what}: {text!r} writes {kw} but is refused as a syntax error: {e.message}"
    return None


@pytest.fixture(scope="module")
def grammar_wb():
    wb = Workbench(None, engine="local", durable=False, trace=False)
    wb.execute(GRAMMAR_SCHEMA)
    wb.set_history("PROBE")
    yield wb
    wb.close()


def test_the_grammar_walk_covers_every_table_of_the_parser():
    # a query modifier sqlglot adds gets an example in dialect_walk.MODIFIERS (the walk writes a
    # generic one otherwise, which may not even parse)
    assert {t.name for t in StreamParser.QUERY_MODIFIER_PARSERS} <= set(MODIFIERS)
    # every expression class the dialect translates has an entry of what it plans
    assert set(_HANDLERS) <= set(PLANNED), set(_HANDLERS) - set(PLANNED)


def test_no_accepted_construct_is_dropped_and_every_refusal_names_it(grammar_wb):
    counts: Counter = Counter()
    problems = []
    for what, text in grammar_probes():
        kind, got = analyze_recorded(text, grammar_wb.catalog)
        counts[kind] += 1
        p = _problem(what, text, kind, got)
        if p:
            problems.append(p)
    assert not problems, "\n".join(problems[:40]) + f"\n({len(problems)} problems)"
    # the walk is the whole grammar, not a sample of it
    assert counts["accepted"] >= 120 and counts["refused"] >= 900 and sum(counts.values()) >= 1100, counts
    print(dict(counts))


def test_every_statement_the_project_runs_is_planned_whole():
    """The scenario scripts and the notebooks' cells, in order, each in its own workbench."""
    problems, n = [], 0
    rng = random.Random(38)
    for name, stmts in scripts():
        wb = Workbench(None, engine="local", durable=False, trace=False)
        try:
            for text in stmts:
                # the statement, and a few careless edits of it (tests/sql_corpus.py) that may still parse
                for i, t in enumerate([text] + mutations(text, rng, cuts=0, each=1)):
                    kind, got = analyze_recorded(t, wb.catalog)
                    n += kind == "accepted" and i == 0
                    # an edit can break the statement before the keyword it happens to hold
                    p = _problem(name, t, kind, got, keywords=i == 0)
                    if p:
                        problems.append(p)
                try:
                    wb.execute(text)
                except Exception:   # noqa: BLE001 - a notebook shows some statements failing
                    pass
        finally:
            wb.close()
    assert not problems, "\n".join(problems)
    assert n >= 100, n


# --------------------------------------------------------------------------- named refusals, both runtimes

SCHEMA = """CREATE STREAM Orders (productId INTEGER, orderId INTEGER, units INTEGER);
            CREATE TABLE Products (productId INTEGER, name VARCHAR(20))"""
NAMED = [
    ("SELECT STREAM * FROM Orders MATCH_RECOGNIZE (PARTITION BY productId ORDER BY ROWTIME "
     "MEASURES A.units AS u PATTERN (A B*) DEFINE B AS B.units > A.units)", "MATCH_RECOGNIZE is not supported", 29),
    ("SELECT STREAM * FROM Orders MATCH_RECOGNIZE (PATTERN (A) DEFINE A AS units > 1)",
     "MATCH_RECOGNIZE is not supported", 29),
    ("SELECT * FROM Products PIVOT (COUNT(*) FOR name IN ('Beer'))", "PIVOT is not supported", 24),
    ("SELECT * FROM Products UNPIVOT (v FOR k IN (productId))", "PIVOT is not supported", 24),
    ("SELECT STREAM * FROM Orders, LATERAL (SELECT 1)", "LATERAL is not supported", 30),
    ("SELECT STREAM * FROM Orders QUALIFY units > 1", "QUALIFY is not supported", 29),
    ("SELECT STREAM * FROM Orders TABLESAMPLE BERNOULLI (10)", "TABLESAMPLE is not supported", 29),
    ("SELECT STREAM ROW_NUMBER() OVER (ORDER BY ROWTIME) AS n FROM Orders",
     "ROW_NUMBER on a stream needs a window or a monotonic period in PARTITION BY", 15),
    ("SELECT STREAM LAG(units) OVER (ORDER BY ROWTIME) AS n FROM Orders", "Unsupported window function LAG", 15),
    ("SELECT STREAM SUM(units) FILTER (WHERE units > 1) OVER (ROWS 2 PRECEDING) AS n FROM Orders",
     "FILTER (WHERE ...) on an aggregate is not supported", 26),
    ("SELECT name FROM Products GROUP BY GROUPING SETS ((name), ())", "GROUPING SETS is not supported", 36),
    ("SELECT name FROM Products GROUP BY ROLLUP (name)", "ROLLUP is not supported", 36),
    ("SELECT name FROM Products GROUP BY CUBE (name)", "CUBE is not supported", 36),
    ("SELECT name FROM Products LIMIT 1", "LIMIT, OFFSET and FETCH are not supported", 27),
    ("SELECT name FROM Products FETCH FIRST 1 ROWS ONLY", "LIMIT, OFFSET and FETCH are not supported", 27),
    ("SELECT STREAM units FROM Orders LIMIT 1", "LIMIT, OFFSET and FETCH cannot be used in a streaming query", 33),
    ("SELECT TRY_CAST(name AS INTEGER) FROM Products", "Unsupported function TRY_CAST", 8),
    ("SELECT CAST(name AS VARCHAR FORMAT 'x') FROM Products", "CAST ... FORMAT is not supported", 36),
    ("SELECT * EXCLUDE (name) FROM Products", "SELECT * EXCEPT / EXCLUDE is not supported", 19),
    ("INSERT INTO Products VALUES (1, 'x') RETURNING name", "INSERT ... RETURNING is not supported", 38),
    ("SELECT name FROM Products UNION BY NAME SELECT name FROM Products", "BY NAME is not supported", 33),
    ("SELECT name FROM Products FOR UPDATE", "FOR UPDATE / FOR SHARE is not supported", 27),
]


def _refused(wb, sql, message, col):
    with pytest.raises(SqlError) as e:
        wb.execute(sql)
    assert e.value.message.startswith(message), e.value.message
    assert "\n" not in e.value.message and (e.value.line, e.value.col) == (1, col), (e.value.line, e.value.col)
    assert wb.queries == {}


@pytest.mark.parametrize("sql,message,col", NAMED, ids=[m.split(" is")[0] for _s, m, _c in NAMED])
def test_a_construct_the_dialect_lacks_is_refused_by_name_at_its_keyword(wb_local, sql, message, col):
    wb_local.execute(SCHEMA)
    _refused(wb_local, sql, message, col)
    wb_local.execute("SELECT STREAM units FROM Orders")       # the session goes on


def test_the_issues_match_recognize_is_refused_by_name_on_both_runtimes(wb):
    # was "Syntax error near 'ORDER BY': Expecting )"
    wb.execute(SCHEMA)
    _refused(wb, *NAMED[0])
    wb.execute("INSERT INTO Orders (ROWTIME, productId, orderId, units) VALUES ('2006-10-10 10:00:00', 10, 1, 2)")
    assert wb.catalog.state["ORDERS"].rows_in == 1          # the session goes on


def test_the_description_of_a_definition_is_planned():
    from streamsql.engine.sql import analyze
    wb = Workbench(None, engine="local", durable=False, trace=False)
    try:
        wb.execute(SCHEMA)
        for sql in ("CREATE STREAM s (a INTEGER) DESCRIPTION 'why'", "CREATE TABLE t (a INTEGER) DESCRIPTION 'why'",
                    "CREATE VIEW v DESCRIPTION 'why' AS SELECT STREAM units FROM Orders",
                    "CREATE PUMP p STOPPED DESCRIPTION 'why' AS INSERT INTO Orders SELECT STREAM * FROM Orders"):
            assert analyze(sql, wb.catalog).description == "why"
    finally:
        wb.close()
