"""Temporal joins, ``JOIN v FOR SYSTEM_TIME AS OF s.ROWTIME`` (docs/semantics.md, section 3.5.1):
which version of a versioned table or a changelog stream a row meets, when it is released, the
output bound, the state kept, the relational form, and the forms refused. Expected rows and steps
are derived by hand from the rule; the changelog case is also the scenario
``tests/scenarios/temporal_join_versions`` (replayed on both runtimes by test_scenarios.py)."""
from __future__ import annotations

import pytest

from streamsql.engine.errors import SqlError
from streamsql.engine.operators.temporal import TemporalJoinOp, VersionLookupOp, validity

from test_aggregate_support import bound, hm, op_of, row, run

N = None

# the issue's versioned table: product 10 costs 1 from 10:00 and 2 from 11:00 on
PV = """CREATE STREAM Orders (productId INTEGER, orderId INTEGER);
        CREATE TABLE PV (productId INTEGER, unitPrice INTEGER, startDate TIMESTAMP, endDate TIMESTAMP);
        INSERT INTO PV VALUES (10, 1, TIMESTAMP '2006-10-10 10:00:00', TIMESTAMP '2006-10-10 11:00:00'),
                              (10, 2, TIMESTAMP '2006-10-10 11:00:00', NULL);"""
AS_OF = "FOR SYSTEM_TIME AS OF o.ROWTIME"
PV_ORDERS = [row("Orders", "09:59", productId=10, orderId=1), row("Orders", "10:00", productId=10, orderId=2),
             row("Orders", "10:59:59.999", productId=10, orderId=3), row("Orders", "11:00", productId=10, orderId=4),
             row("Orders", "12:00", productId=10, orderId=5), row("Orders", "12:01", productId=20, orderId=6)]


def test_the_issue_example_meets_the_one_version_valid_at_each_order_on_both_runtimes(wb):
    # [startDate, endDate): 09:59 is before the first version (no row); 10:00 and 10:59:59.999
    # meet price 1; 11:00 (the second version's start, the first's excluded end) and 12:00 meet
    # price 2; product 20 has no version. A lookup: each row at its own step, stamped its rowtime.
    r = run(PV, f"""SELECT STREAM o.ROWTIME, o.orderId, p.unitPrice FROM Orders AS o
                    JOIN PV {AS_OF} AS p ON o.productId = p.productId""", PV_ORDERS, wb=wb)
    assert r.table("orderId", "unitPrice") == [(2, "10:00:00", 2, 1), (3, "10:59:59.999", 3, 1),
                                               (4, "11:00:00", 4, 2), (5, "12:00:00", 5, 2)]
    assert r.bounds == {1: "09:59:00", 2: "10:00:00", 3: "10:59:59.999", 4: "11:00:00", 5: "12:00:00",
                        6: "12:01:00"}
    if wb.engine == "local":
        assert isinstance(op_of(r.q, VersionLookupOp), VersionLookupOp)
    # without FOR SYSTEM_TIME AS OF, each order meets every version of its product
    r = run("", "SELECT STREAM o.orderId, p.unitPrice FROM Orders AS o JOIN PV AS p ON o.productId = p.productId",
            [row("Orders", "12:30", productId=10, orderId=7)], wb=wb)
    assert r.table("orderId", "unitPrice") == [(1, "12:30:00", 7, 1), (1, "12:30:00", 7, 2)]


def test_left_join_and_the_rest_of_the_on_condition_on_a_versioned_table():
    # LEFT: orders with no valid version come out at once with NULLs. The residual p.unitPrice > 1
    # filters the version valid at the order's time, it does not pick another one: order 2
    # (10:30) meets price 1, which fails it, so it gets NULLs although price 2 exists later.
    r = run(PV, f"""SELECT STREAM o.orderId, p.unitPrice FROM Orders AS o
                    LEFT JOIN PV {AS_OF} AS p ON o.productId = p.productId AND p.unitPrice > 1""",
            [row("Orders", "09:00", productId=10, orderId=1), row("Orders", "10:30", productId=10, orderId=2),
             row("Orders", "11:30", productId=10, orderId=3), row("Orders", "11:40", productId=N, orderId=4)])
    assert r.table("orderId", "unitPrice") == [(1, "09:00:00", 1, N), (2, "10:30:00", 2, N), (3, "11:30:00", 3, 2),
                                               (4, "11:40:00", 4, N)]


def test_a_table_with_one_timestamp_holds_keyed_versions():
    # One TIMESTAMP column: a version lasts until the next one of its key. Product 10: 1 from
    # 10:00, then two versions from 11:00 (the later row, 3, wins); product 20: a NULL start is
    # valid since always. Product 10's key is the ON equality's right side.
    ddl = """CREATE STREAM Orders (productId INTEGER, orderId INTEGER);
             CREATE TABLE Prices (productId INTEGER, unitPrice INTEGER, since TIMESTAMP);
             INSERT INTO Prices VALUES (10, 1, TIMESTAMP '2006-10-10 10:00:00'), (20, 9, NULL),
                                       (10, 2, TIMESTAMP '2006-10-10 11:00:00'), (10, 3, TIMESTAMP '2006-10-10 11:00:00');"""
    r = run(ddl, f"SELECT STREAM o.orderId, p.unitPrice FROM Orders AS o JOIN Prices {AS_OF} AS p "
                 "ON o.productId = p.productId",
            [row("Orders", "09:00", productId=10, orderId=1), row("Orders", "10:59", productId=10, orderId=2),
             row("Orders", "11:00", productId=10, orderId=3), row("Orders", "11:01", productId=20, orderId=4)])
    assert r.table("orderId", "unitPrice") == [(2, "10:59:00", 2, 1), (3, "11:00:00", 3, 3), (4, "11:01:00", 4, 9)]


CHANGES = """CREATE STREAM Orders (orderId INTEGER, productId INTEGER);
             CREATE STREAM PriceChanges (productId INTEGER, unitPrice DOUBLE);"""
TEMPORAL = (f"SELECT STREAM o.ROWTIME, o.orderId, p.unitPrice FROM Orders AS o {{kind}} PriceChanges {AS_OF} AS p "
            "ON o.productId = p.productId")
CHANGE_EVENTS = [
    row("PriceChanges", "10:00", productId=10, unitPrice=0.25),      # 1
    row("Orders", "10:05", orderId=1, productId=10),                 # 2 waits: the price clock is 10:00
    row("Orders", "10:05", orderId=2, productId=20),                 # 3 waits (no price of 20 yet)
    row("PriceChanges", "10:05", productId=20, unitPrice=1.5),       # 4 clock 10:05: not past 10:05
    bound("PriceChanges", "10:05:00.001"),                           # 5 passes 10:05: orders 1, 2
    row("Orders", "10:30", orderId=3, productId=10),                 # 6 waits
    row("PriceChanges", "10:40", productId=10, unitPrice=0.35),      # 7 passes 10:30: order 3 meets 0.25
    row("Orders", "10:45", orderId=4, productId=10),                 # 8 waits
    bound("Orders", "11:00"),                                        # 9 left clock 11:00
    bound("PriceChanges", "11:00"),                                  # 10 passes 10:45: order 4 meets 0.35
]


@pytest.mark.parametrize("kind", ["JOIN", "LEFT JOIN"])
def test_a_changelog_stream_releases_a_row_once_its_clock_passes_the_rows_time(kind):
    # Order 2 (product 20) at 10:05 meets the 1.5 that starts at 10:05 itself, which arrives after
    # it: that is why a row waits until the version clock is *past* its time. Every row is
    # stamped with the order's rowtime; the bound is min(left clock, earliest waiting row). (On
    # Spark: the scenario temporal_join_versions, in test_scenarios and test_trace_equality.)
    r = run(CHANGES, TEMPORAL.format(kind=kind), CHANGE_EVENTS)
    assert r.table("orderId", "unitPrice") == [(5, "10:05:00", 1, 0.25), (5, "10:05:00", 2, 1.5),
                                               (7, "10:30:00", 3, 0.25), (10, "10:45:00", 4, 0.35)]
    assert r.bounds == {2: "10:05:00", 6: "10:30:00", 8: "10:45:00", 10: "11:00:00"}


def test_left_join_on_a_changelog_stream_releases_a_row_without_version_with_nulls():
    r = run(CHANGES, TEMPORAL.format(kind="LEFT JOIN"),
            [row("Orders", "10:00", orderId=1, productId=30), row("PriceChanges", "10:00", productId=30, unitPrice=2.0),
             bound("PriceChanges", "10:01"), row("Orders", "10:02", orderId=2, productId=40),
             bound("PriceChanges", "10:03")])
    # order 1 meets the change at 10:00 (valid at 10:00); order 2's product never had a price
    assert r.table("orderId", "unitPrice") == [(3, "10:00:00", 1, 2.0), (5, "10:02:00", 2, N)]
    r = run(CHANGES, TEMPORAL.format(kind="JOIN"),
            [row("Orders", "10:02", orderId=2, productId=40), bound("PriceChanges", "10:03")])
    assert r.table("orderId") == []


def test_the_state_keeps_one_version_per_key_and_the_trace_says_who_waits():
    # 200 price changes of one product while the orders' clock moves along: the join keeps only
    # the version valid at the left clock and the later ones, not the 200
    events = []
    for i in range(200):
        t = f"{10 + i // 60:02d}:{i % 60:02d}"
        events += [row("PriceChanges", t, productId=10, unitPrice=float(i)), row("Orders", t, orderId=i, productId=10)]
    r = run(CHANGES, TEMPORAL.format(kind="JOIN"), events + [bound("PriceChanges", "14:00")])
    assert len(r.rows) == 200 and all(v["UNITPRICE"] == float(v["ORDERID"]) for _s, _t, v in r.rows)
    op = op_of(r.q, TemporalJoinOp)
    assert op.state_size() == 1 and op.waiting == type(op.waiting)()
    # a row waiting for the version clock: the state lists it, the reason names both clocks
    r = run(CHANGES, TEMPORAL.format(kind="JOIN"), [row("Orders", "10:05", orderId=1, productId=10)])
    st = [o for o in r.q.trace[-1].operators if o.operator == "join"][0]
    assert st.state.waiting == (r.q.trace[-1].bound,) and st.future == st.state.waiting[0]
    op = op_of(r.q, TemporalJoinOp)
    from streamsql.engine.runtime.trace_records import describe_reason
    why = describe_reason(op.frontier_reason(st.state, st.clocks, ["ORDERS", "PRICECHANGES"]))
    assert why.startswith("the ORDERS row at 2006-10-10 10:05:00 meets the PRICECHANGES version valid then "
                          "once the PRICECHANGES clock passes 2006-10-10 10:05:00"), why


def test_validity_of_keyed_and_period_versions():
    # keyed: a runs until b starts; b and c start together, c (later) wins: b is empty; d (key 2,
    # NULL start) is valid since always and, the last of its key, for ever
    (a, b, c, d) = validity(list("abcd"), [10, 20, 20, None], [(1,), (1,), (1,), (2,)], None)
    assert a == (10, 20) and b == (20, 20) and c[0] == 20 and c[1] > 10**15 and d[0] < 0 and d[1] > 10**15
    # a period: [start, end), NULL end for ever
    assert validity(["x", "y"], [10, 20], None, [30, None])[0] == (10, 30)
    assert validity(["x", "y"], [10, 20], None, [30, None])[1][1] > 10**15


def test_relational_temporal_join_on_both_runtimes(wb):
    # the same rule over the retained history: orders at 10:30, 11:00 and 11:31 (product 20)
    wb.execute(PV + "CREATE STREAM PriceChanges (productId INTEGER, unitPrice INTEGER);")
    wb.set_history("Orders")
    wb.set_history("PriceChanges")
    wb.inject([row("PriceChanges", "09:00", productId=10, unitPrice=5), row("PriceChanges", "11:00", productId=10, unitPrice=6),
               row("Orders", "10:30", productId=10, orderId=1), row("Orders", "11:00", productId=10, orderId=2),
               row("Orders", "11:31", productId=20, orderId=3)])
    got = {}
    for v in ("PV", "PriceChanges"):
        res = wb.execute(f"SELECT o.ROWTIME, o.orderId, p.unitPrice FROM Orders AS o LEFT JOIN {v} {AS_OF} AS p "
                         "ON o.productId = p.productId")[0]
        got[v] = [(hm(t), i, p) for t, i, p in res.rows]
    assert got == {"PV": [("10:30:00", 1, 1), ("11:00:00", 2, 2), ("11:31:00", 3, N)],
                   "PriceChanges": [("10:30:00", 1, 5), ("11:00:00", 2, 6), ("11:31:00", 3, N)]}


@pytest.mark.parametrize("sql,words", [
    (f"SELECT STREAM * FROM Orders AS o RIGHT JOIN PV {AS_OF} AS p ON o.productId = p.productId",
     "A temporal join (FOR SYSTEM_TIME AS OF) keeps the rows on its left: RIGHT JOIN is not supported"),
    (f"SELECT STREAM * FROM Orders AS o FULL JOIN PV {AS_OF} AS p ON o.productId = p.productId",
     "FULL JOIN is not supported, use JOIN or LEFT JOIN"),
    ("SELECT STREAM * FROM Orders AS o JOIN PV FOR SYSTEM_TIME AS OF TIMESTAMP '2006-10-10 10:00:00' AS p "
     "ON o.productId = p.productId",
     "FOR SYSTEM_TIME AS OF takes the ROWTIME of the rows on the left (JOIN t FOR SYSTEM_TIME AS OF s.ROWTIME), "
     "not 'TIMESTAMP '2006-10-10 10:00:00''"),
    ("SELECT STREAM * FROM Orders AS o JOIN PV FOR SYSTEM_TIME AS OF p.startDate AS p ON o.productId = p.productId",
     "takes the ROWTIME of the rows on the left"),
    ("SELECT STREAM * FROM Orders AS o JOIN PV FOR SYSTEM_TIME BETWEEN o.ROWTIME AND o.ROWTIME AS p "
     "ON o.productId = p.productId", "FOR SYSTEM_TIME BETWEEN is not supported"),
    ("SELECT STREAM * FROM Orders AS o JOIN PV FOR VERSION AS OF 3 AS p ON o.productId = p.productId",
     "FOR VERSION AS OF is not supported"),
    ("SELECT STREAM * FROM Orders AS o JOIN Flat FOR SYSTEM_TIME AS OF o.ROWTIME AS p ON o.productId = p.productId",
     "FOR SYSTEM_TIME AS OF needs a versioned table: one TIMESTAMP column (when each version starts) or two "
     "(when it starts and when it ends); table 'FLAT' has none"),
    ("SELECT STREAM * FROM Orders AS o JOIN Three FOR SYSTEM_TIME AS OF o.ROWTIME AS p ON o.productId = p.productId",
     "table 'THREE' has 3 (A, B, C)"),
    (f"SELECT STREAM * FROM PV {AS_OF} AS p JOIN Orders AS o ON o.productId = p.productId",
     "FOR SYSTEM_TIME AS OF belongs to the table a row joins: JOIN t FOR SYSTEM_TIME AS OF s.ROWTIME"),
    ("SELECT * FROM PV FOR SYSTEM_TIME AS OF TIMESTAMP '2006-10-10 10:00:00'",
     "FOR SYSTEM_TIME AS OF belongs to the table a row joins"),
    (f"SELECT STREAM * FROM Orders AS o JOIN (SELECT * FROM PV) {AS_OF} AS p ON o.productId = p.productId",
     "FOR SYSTEM_TIME AS OF reads a table or a stream by its name, not a sub-query"),
    ("SELECT STREAM * FROM Orders OVER (RANGE INTERVAL '1' HOUR PRECEDING) AS o JOIN Orders "
     f"{AS_OF} AS p ON o.productId = p.productId", "A temporal join (FOR SYSTEM_TIME AS OF) takes no window (OVER)"),
])
def test_forms_refused_in_one_line_naming_them(wb_local, sql, words):
    wb_local.execute(PV + """CREATE TABLE Flat (productId INTEGER, unitPrice INTEGER);
                            CREATE TABLE Three (productId INTEGER, a TIMESTAMP, b TIMESTAMP, c TIMESTAMP);""")
    with pytest.raises(SqlError) as e:
        wb_local.execute(sql)
    msg = e.value.message
    assert "\n" not in msg and e.value.line == 1 and e.value.col is not None
    assert words in msg, msg
    assert wb_local.queries == {}
