"""Every seed scenario script (streamsql/scenarios, shipped with the package)
analyzes, and its query has the plan the semantics need (node types, fields, keys, windows, join
windows and keys)."""
import pytest

from conftest import SCENARIOS
from streamsql.engine import plan as P
from streamsql.engine.sql import analyze, split_script
from test_sql_support import MemoryCatalog, chain, names, show

MINUTE = 60_000


def scenario(name: str) -> P.Query:
    path = SCENARIOS / f"{name}.sql"
    assert path.exists(), f"scenario {name} is missing: {path}"     # shipped with the package
    stmts = MemoryCatalog().run(path.read_text())
    assert isinstance(stmts[-1], P.SelectStatement)
    return stmts[-1].query


def all_scenarios():
    assert SCENARIOS.exists(), f"the package's scenarios are missing: {SCENARIOS}"
    return sorted(p.stem for p in SCENARIOS.glob("*.sql"))


@pytest.mark.parametrize("name", all_scenarios())
def test_every_scenario_script_analyzes_to_a_streaming_query(name):
    text = (SCENARIOS / f"{name}.sql").read_text()
    catalog = MemoryCatalog()
    stmts = [catalog.apply(analyze(s, catalog, text)) for s in split_script(text)]
    assert all(isinstance(s, P.CreateStream) for s in stmts[:-1])
    q = stmts[-1].query
    assert q.is_stream and q.root.is_stream
    assert q.sql == split_script(text)[-1].sql


def test_filter_trains():
    q = scenario("filter_trains")
    assert chain(q.root) == ["Project", "Filter", "StreamScan"]
    assert names(q.columns) == ["TICKER"] and q.rowtime_column == 0
    f = q.root.input
    assert show(f.cond) == "=($0, 'ORCL')"
    assert q.root.rowtime is None and [show(e) for e in q.root.exprs] == ["$0"]
    assert q.streams == ["ORDERS"] and q.tables == []


def test_group_by_hours():
    q = scenario("group_by_hours")
    assert chain(q.root) == ["Project", "Aggregate", "StreamScan"]
    agg = q.root.input
    assert [show(k) for k in agg.keys] == ["FLOOR_TO[HOUR](RT0)", "$0"]
    assert agg.time_key == 0 and agg.stamp is None and not agg.distinct_rows
    assert [(a.fn, a.arg, a.type.name, a.type.nullable) for a in agg.aggs] == [("COUNT", None, "BIGINT", False)]
    assert names(q.columns) == ["HOURSTART", "COLOR", "C"]
    assert [show(e) for e in q.root.exprs] == ["$0", "$1", "$2"]
    assert [f.type.name for f in q.columns] == ["TIMESTAMP", "VARCHAR", "BIGINT"]
    assert q.rowtime_column is None


def _join(q):
    assert chain(q.root)[:2] == ["Project", "Join"]
    return q.root.input


def test_join1_inner_following():
    q = scenario("join1_inner_following")
    j = _join(q)
    assert j.kind == "INNER"
    assert j.left_window == P.JoinWindow(0, 0)
    assert j.right_window == P.JoinWindow(0, 10 * MINUTE)
    assert [(show(a), show(b)) for a, b in j.equi] == [("$0", "$0")] and j.residual is None
    assert isinstance(j.left, P.StreamScan) and j.left.stream == "ORDERS" and j.left.alias == "O"
    assert isinstance(j.right, P.StreamScan) and j.right.stream == "TRADES" and j.right.alias == "T"
    assert names(j.fields) == ["ORDERID", "TICKER", "AMOUNT", "ORDERID", "TICKER", "AMOUNT"]
    assert names(q.columns) == ["ORDERID", "TICKER", "ORDERAMOUNT", "TRADEAMOUNT"]
    assert [show(e) for e in q.root.exprs] == ["$0", "$1", "$2", "$5"]
    assert q.rowtime_column == 0


def test_join2_inner_preceding():
    q = scenario("join2_inner_preceding")
    j = _join(q)
    assert (j.kind, j.left_window, j.right_window) == ("INNER", P.JoinWindow(10 * MINUTE, 0), P.JoinWindow(0, 0))
    assert [(show(a), show(b)) for a, b in j.equi] == [("$0", "$0")]


def test_join3_full_outer():
    q = scenario("join3_full_outer")
    j = _join(q)
    assert (j.kind, j.left_window, j.right_window) == ("FULL", P.JoinWindow(0, 0), P.JoinWindow(0, 10 * MINUTE))
    assert names(q.columns) == ["ORDERID", "TICKER", "ORDERAMOUNT", "TRADEORDERID", "TRADETICKER", "TRADEAMOUNT"]
    assert [show(e) for e in q.root.exprs] == ["$0", "$1", "$2", "$3", "$4", "$5"]


def test_union_merge():
    q = scenario("union_merge")
    assert isinstance(q.root, P.Union)
    assert [chain(i) for i in q.root.inputs()] == [["Project", "StreamScan"]] * 2
    assert [i.input.stream for i in q.root.inputs()] == ["P", "Q"]
    assert names(q.columns) == ["NAME"] and q.rowtime_column == 0
    assert q.streams == ["P", "Q"]


def test_vwap_sliding():
    q = scenario("vwap_sliding")
    assert chain(q.root) == ["Project", "Window", "StreamScan"]
    w = q.root.input
    assert len(w.calls) == 2
    (c0, c1) = w.calls
    assert (c0.agg.fn, show(c0.agg.arg), c0.agg.type.name) == ("SUM", "*($1, $2)", "DOUBLE")
    assert (c1.agg.fn, show(c1.agg.arg), c1.agg.type.name) == ("SUM", "$2", "BIGINT")
    for c in w.calls:
        assert (c.spec.mode, c.spec.lower, c.spec.upper, c.spec.order_by, c.spec.partition_by) == \
            ("RANGE", 60 * MINUTE, 0, None, [])
    assert names(w.fields) == ["TICKER", "PRICE", "VOLUME", "$W0", "$W1"]
    assert [show(e) for e in q.root.exprs] == ["$0", "/($3, $4)"]
    assert names(q.columns) == ["TICKER", "WEIGHTEDAVG"] and q.columns[1].type.name == "DOUBLE"
