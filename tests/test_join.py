"""Window joins and stream-table joins (the semantics, sections 3, 3.5 and 3.5.1).

Side i has the window [T - p_i, T + f_i]; a row at r is in it for base times [r - f_i, r + p_i].
Two rows match when the condition holds and those intervals overlap; the pair is stamped
max(r_L - f_L, r_R - f_R). An outer row that never matched is unmatched once the other side's
clock minus its f passes r + p_i, stamped r + p_i. A row leaves when its stamp <= min(clocks)
and <= F, where F is the minimum of (c'_i = clock_i - f_i):
  max(A_L, c'_R), max(A_R, c'_L)    a kept row (A_i = its r - f_i) with a future partner
  max(c'_L, c'_R)                   two future rows
  U_i                               a kept, still unmatched outer row: r + p_i
  clock_i + p_i                     a future outer row of side i, unmatched
Every expected table below is derived by hand from these rules (derivations next to them).
Times are on 2006-10-10; ``e3`` is the third event (step 3).
"""
from __future__ import annotations

import pytest

from streamsql.engine.errors import SqlError
from streamsql.engine.operators.join import JoinOp, LookupJoinOp
from test_aggregate_support import OWNED, bound, hm, op_of, row, run, ts

LR = "CREATE STREAM L (k INTEGER, a INTEGER); CREATE STREAM R (k INTEGER, b INTEGER);"

# The data set of the type x placement grid.
DATA = [
    row("L", "10:00", k=1, a=1),    # e1
    row("L", "10:02", k=2, a=2),    # e2
    row("R", "10:05", k=1, b=10),   # e3
    row("R", "10:15", k=2, b=20),   # e4
    row("L", "10:20", k=2, a=3),    # e5
    bound("R", "10:40"),            # e6
    bound("L", "10:40"),            # e7
]
N = None

# --- placement A: L OVER (RANGE INTERVAL '10' MINUTE PRECEDING), R current row (no OVER)
#   p_L = 10, f_L = 0, p_R = f_R = 0. Match: r_L <= r_R <= r_L + 10, stamp r_R.
#   Pairs: L1-R1 (10:00 <= 10:05 <= 10:10): 10:05. L2-R2: 10:15 > 10:12, no. L3-R2: 10:20 > 10:15, no.
#   Unmatched L at r_L + 10 once clock_R > r_L + 10: L2 at e4 (10:15 > 10:12) -> 10:12; L3 at e6 -> 10:30.
#   Unmatched R at r_R once clock_L > r_R: R2 at e5 (10:20 > 10:15) -> 10:15.
#   INNER: e1 F = max(A_L 10:00, c'_R -inf) = 10:00. e3 pair 10:05 held: present = min(10:02, 10:05).
#     F = 10:05. e4: L1, L2 leave (clock_R 10:15 > 10:10, 10:12); F = max(A_R 10:05, 10:02) = 10:05.
#     e5: clock_L 10:20, R1, R2 leave; present 10:15; F = max(A_L 10:20, 10:15) = 10:20: release 10:05.
#     e6: L3 leaves; F = max(10:20, 10:40) = 10:40.
#   LEFT: + U_L and clock_L + 10. e4: L2's 10:12 candidate, present 10:02. e5: present 10:15,
#     F = min(10:20, U_L 10:30, clock_L+10 10:30) = 10:20: release 10:05 and 10:12. e6: L3's 10:30
#     candidate, present 10:20, F = min(10:40, 10:30) = 10:30. e7: present 10:40: release 10:30.
#   RIGHT: + U_R and clock_R + 0: F = -inf while R has no clock (e1, e2: no bound). e3: 10:05.
#     e5: R2's 10:15 candidate; present 10:15, F = min(10:20, clock_R 10:15) = 10:15: release both.
#     e6: F = max(10:20, 10:40) = 10:40.
#   FULL: e5 present 10:15, F = min(10:20, U_L 10:30, 10:30, clock_R 10:15) = 10:15: release 10:05,
#     10:12, 10:15. e6: L3's 10:30 held (present 10:20), F = min(10:40, clock_L + 10 = 10:30).
#     e7: release 10:30, F = 10:40.
A = ("OVER (RANGE INTERVAL '10' MINUTE PRECEDING)", "")
A_INNER = ([(5, "10:05:00", 1, 10)], {1: "10:00:00", 3: "10:05:00", 5: "10:20:00", 6: "10:40:00"})
A_LEFT = ([(5, "10:05:00", 1, 10), (5, "10:12:00", 2, N), (7, "10:30:00", 3, N)],
          {1: "10:00:00", 3: "10:05:00", 5: "10:20:00", 6: "10:30:00", 7: "10:40:00"})
A_RIGHT = ([(5, "10:05:00", 1, 10), (5, "10:15:00", N, 20)], {3: "10:05:00", 5: "10:15:00", 6: "10:40:00"})
A_FULL = ([(5, "10:05:00", 1, 10), (5, "10:12:00", 2, N), (5, "10:15:00", N, 20), (7, "10:30:00", 3, N)],
          {3: "10:05:00", 5: "10:15:00", 6: "10:30:00", 7: "10:40:00"})

# --- placement B: L current row, R OVER (RANGE INTERVAL '10' MINUTE FOLLOWING) (seed 002 #1)
#   p_L = f_L = 0, p_R = 0, f_R = 10. Match: r_L <= r_R <= r_L + 10, stamp max(r_L, r_R - 10) = r_L.
#   Same pairs as A: L1-R1 stamped 10:00.
#   Unmatched L at r_L once clock_R - 10 > r_L: L2 at e4 (10:05 > 10:02) -> 10:02; L3 at e6 (10:30 > 10:20).
#   Unmatched R at r_R once clock_L > r_R: R2 at e5 -> 10:15.
#   INNER: e1 F = 10:00. e3: pair 10:00, present 10:02, F = min(max(10:00, 09:55), max(A_R 09:55, 10:02),
#     max(10:02, 09:55)) = 10:00: released at once. e4: L1, L2 leave (c'_R 10:05); F = max(A_R 09:55,
#     10:02) = 10:02. e5: R rows leave (clock_L 10:20); F = max(A_L 10:20, 10:05) = 10:20.
#     e6: c'_R = 10:30, L3 leaves: F = 10:30. e7: F = 10:40.
#   LEFT: + U_L = r_L, clock_L. e4: L2's 10:02 candidate: present 10:02, F = min(10:02, clock_L 10:02):
#     released. e6: L3's 10:20: present 10:20, F = min(10:30, clock_L 10:20) = 10:20: released.
#   RIGHT: + U_R = r_R, clock_R: -inf until e3. e4: F = max(A_R 09:55, 10:02) = 10:02. e5: R2's 10:15:
#     present 10:15, F = min(10:20, clock_R 10:15): released. e6: 10:30, e7: 10:40.
#   FULL: e3 10:00 released; e4 L2 (10:02); e5 R2 (10:15); e6 L3 (10:20); e7 F = 10:40.
B = ("", "OVER (RANGE INTERVAL '10' MINUTE FOLLOWING)")
B_INNER = ([(3, "10:00:00", 1, 10)], {1: "10:00:00", 4: "10:02:00", 5: "10:20:00", 6: "10:30:00", 7: "10:40:00"})
B_LEFT = ([(3, "10:00:00", 1, 10), (4, "10:02:00", 2, N), (6, "10:20:00", 3, N)],
          {1: "10:00:00", 4: "10:02:00", 5: "10:20:00", 7: "10:40:00"})
B_RIGHT = ([(3, "10:00:00", 1, 10), (5, "10:15:00", N, 20)],
           {3: "10:00:00", 4: "10:02:00", 5: "10:15:00", 6: "10:30:00", 7: "10:40:00"})
B_FULL = ([(3, "10:00:00", 1, 10), (4, "10:02:00", 2, N), (5, "10:15:00", N, 20), (6, "10:20:00", 3, N)],
          {3: "10:00:00", 4: "10:02:00", 5: "10:15:00", 6: "10:20:00", 7: "10:40:00"})

# --- placement C: both sides PRECEDING: L OVER (RANGE '5' MINUTE PRECEDING), R OVER (RANGE '10' MINUTE PRECEDING)
#   p_L = 5, p_R = 10, f = 0. Match: r_L - 10 <= r_R <= r_L + 5, stamp max(r_L, r_R).
#   L1-R1: 10:05 <= 10:05: stamp 10:05. L2-R2: 10:15 > 10:07, no. L3-R2: 10:10 <= 10:15 <= 10:25:
#   stamp 10:20, found when L3 arrives (e5). Unmatched: L2 at r + 5 = 10:07 once clock_R > 10:07 (e4).
#   INNER: e3 pair 10:05 held (present 10:02), F = 10:05. e4: L1, L2 leave (clock_R 10:15);
#     F = max(A_R 10:05, 10:02) = 10:05. e5: L3-R2 10:20; R1 leaves (10:20 > 10:15); present 10:15:
#     release 10:05; 10:20 held (present). e6: present 10:20, F = max(A_R 10:15, 10:20) = 10:20:
#     release 10:20. e7: R2 leaves (10:40 > 10:25): F = 10:40.
#   LEFT: L2's 10:07 (e4) leaves with 10:05 at e5 (present 10:15, F = min(10:20, clock_L + 5 = 10:25)).
#   RIGHT: F = -inf until e3 (clock_R + 10 term); R1 and R2 both match: same rows as INNER.
#   FULL: both.
C = ("OVER (RANGE INTERVAL '5' MINUTE PRECEDING)", "OVER (RANGE INTERVAL '10' MINUTE PRECEDING)")
C_INNER = ([(5, "10:05:00", 1, 10), (6, "10:20:00", 3, 20)], {1: "10:00:00", 3: "10:05:00", 5: "10:20:00", 7: "10:40:00"})
C_LEFT = ([(5, "10:05:00", 1, 10), (5, "10:07:00", 2, N), (6, "10:20:00", 3, 20)],
          {1: "10:00:00", 3: "10:05:00", 5: "10:20:00", 7: "10:40:00"})
C_RIGHT = ([(5, "10:05:00", 1, 10), (6, "10:20:00", 3, 20)], {3: "10:05:00", 5: "10:20:00", 7: "10:40:00"})
C_FULL = ([(5, "10:05:00", 1, 10), (5, "10:07:00", 2, N), (6, "10:20:00", 3, 20)],
          {3: "10:05:00", 5: "10:20:00", 7: "10:40:00"})

# --- placement D: L OVER (RANGE INTERVAL '10' MINUTE FOLLOWING), R current row (FOLLOWING on the left)
#   p_L = 0, f_L = 10, p_R = f_R = 0. Match: r_L - 10 <= r_R <= r_L, stamp max(r_L - 10, r_R) = r_R.
#   L1-R1: 10:05 > 10:00, no. L3-R2: 10:10 <= 10:15 <= 10:20: stamp 10:15 (found at e5).
#   Unmatched L at r_L once clock_R > r_L: L1, L2 at e3 (clock_R 10:05) -> 10:00, 10:02; L3 matched.
#   Unmatched R at r_R once clock_L - 10 > r_R: R1 at e5 (10:10 > 10:05) -> 10:05; R2 matched.
#   INNER: e1 F = max(A_L = 10:00 - 10, -inf) = 09:50. e3: L1, L2 leave; F = max(A_R 10:05, c'_L 09:52)
#     = 10:05. e5: pair 10:15, present min(10:20, 10:15); R1 leaves; F = min(max(A_L 10:10, 10:15),
#     max(A_R 10:15, 10:10), max(10:10, 10:15)) = 10:15: released. e6: L3 leaves; F = 10:15.
#     e7: c'_L 10:30, R2 leaves: F = 10:40.
#   LEFT: + U_L, clock_L. e3: 10:00, 10:02 candidates; present 10:02, F = min(10:05, clock_L 10:02):
#     both released. e4: F = min(10:05, 10:02) = 10:02. e5: 10:15 released (F = min(10:15, clock_L 10:20)).
#   RIGHT: + U_R, clock_R: -inf until e3. e5: R1's 10:05 and the 10:15 pair: present 10:15,
#     F = min(10:15, clock_R 10:15): both released. e6: F = min(max(A_R 10:15, 10:10), 10:40) = 10:15.
#   FULL: e3 L1, L2 (present 10:02, F = min(10:05, clock_L 10:02, clock_R 10:05) = 10:02);
#     e5 R1 and the pair; e7: 10:40.
D = ("OVER (RANGE INTERVAL '10' MINUTE FOLLOWING)", "")
D_INNER = ([(5, "10:15:00", 3, 20)], {1: "09:50:00", 3: "10:05:00", 5: "10:15:00", 7: "10:40:00"})
D_LEFT = ([(3, "10:00:00", 1, N), (3, "10:02:00", 2, N), (5, "10:15:00", 3, 20)],
          {1: "09:50:00", 3: "10:02:00", 5: "10:15:00", 7: "10:40:00"})
D_RIGHT = ([(5, "10:05:00", N, 10), (5, "10:15:00", 3, 20)], {3: "10:05:00", 5: "10:15:00", 7: "10:40:00"})
D_FULL = ([(3, "10:00:00", 1, N), (3, "10:02:00", 2, N), (5, "10:05:00", N, 10), (5, "10:15:00", 3, 20)],
          {3: "10:02:00", 5: "10:15:00", 7: "10:40:00"})

GRID = [
    ("A", A, "JOIN", A_INNER), ("A", A, "INNER JOIN", A_INNER), ("A", A, "LEFT JOIN", A_LEFT),
    ("A", A, "LEFT OUTER JOIN", A_LEFT), ("A", A, "RIGHT JOIN", A_RIGHT), ("A", A, "FULL JOIN", A_FULL),
    ("A", A, "FULL OUTER JOIN", A_FULL), ("A", A, "OUTER JOIN", A_FULL),
    ("B", B, "JOIN", B_INNER), ("B", B, "LEFT JOIN", B_LEFT), ("B", B, "RIGHT JOIN", B_RIGHT),
    ("B", B, "FULL OUTER JOIN", B_FULL), ("B", B, "OUTER JOIN", B_FULL),
    ("C", C, "JOIN", C_INNER), ("C", C, "LEFT JOIN", C_LEFT), ("C", C, "RIGHT JOIN", C_RIGHT),
    ("C", C, "FULL JOIN", C_FULL),
    ("D", D, "JOIN", D_INNER), ("D", D, "LEFT JOIN", D_LEFT), ("D", D, "RIGHT JOIN", D_RIGHT),
    ("D", D, "FULL JOIN", D_FULL),
]


@pytest.mark.parametrize("placement,windows,kind,expected", GRID,
                         ids=[f"{p}-{k.replace(' ', '_')}" for p, _w, k, _e in GRID])
def test_join_type_by_window_placement(placement, windows, kind, expected):
    lw, rw = windows
    r = run(LR, f"SELECT STREAM ROWTIME, l.a, r.b FROM L {lw} AS l {kind} R {rw} AS r ON l.k = r.k", DATA)
    rows, bounds = expected
    assert r.table("a", "b") == rows
    assert r.bounds == bounds


def test_named_windows_on_join_inputs():
    # Placement A and C written with a WINDOW clause: same results as inline.
    r = run(LR, """SELECT STREAM ROWTIME, l.a, r.b FROM L OVER w10 AS l LEFT JOIN R AS r ON l.k = r.k
                   WINDOW w10 AS (RANGE INTERVAL '10' MINUTE PRECEDING)""", DATA)
    assert r.table("a", "b") == A_LEFT[0]
    r = run(LR, """SELECT STREAM ROWTIME, l.a, r.b FROM L OVER w5 AS l FULL JOIN R OVER w10 AS r ON l.k = r.k
                   WINDOW w5 AS (RANGE INTERVAL '5' MINUTE PRECEDING), w10 AS (RANGE INTERVAL '10' MINUTE PRECEDING)""",
            DATA)
    assert r.table("a", "b") == C_FULL[0] and r.bounds == C_FULL[1]


def test_preceding_and_following_on_one_side():
    # L OVER (RANGE BETWEEN INTERVAL '5' MINUTE PRECEDING AND INTERVAL '5' MINUTE FOLLOWING), R current
    # row: p_L = 5, f_L = 5. Match: r_L - 5 <= r_R <= r_L + 5, stamp max(r_L - 5, r_R).
    #   e1 L 10:00 k1; e2 R 10:03 k1: 10:03 in [09:55, 10:05]: stamp max(09:55, 10:03) = 10:03;
    #      present min(10:00, 10:03) = 10:00: held
    #   e3 L bound 10:03: present 10:03; F = min(max(A_L 09:55, c'_R 10:03), max(A_R 10:03, c'_L 09:58),
    #      max(09:58, 10:03)) = 10:03: released at e3.
    r = run(LR, """SELECT STREAM ROWTIME, l.a, r.b FROM L OVER (RANGE BETWEEN INTERVAL '5' MINUTE PRECEDING
                   AND INTERVAL '5' MINUTE FOLLOWING) AS l JOIN R AS r ON l.k = r.k""",
            [row("L", "10:00", k=1, a=1), row("R", "10:03", k=1, b=10), bound("L", "10:03")])
    assert r.table("a", "b") == [(3, "10:03:00", 1, 10)]


# --------------------------------------------------------------------------- seed 002

ORDERS_TRADES = """CREATE STREAM Orders (orderId INTEGER, ticker VARCHAR(10), amount INTEGER);
                   CREATE STREAM Trades (orderId INTEGER, ticker VARCHAR(10), amount INTEGER);"""


def order(t, i, tk, amt):
    return row("Orders", t, orderId=i, ticker=tk, amount=amt)


def trade(t, i, tk, amt):
    return row("Trades", t, orderId=i, ticker=tk, amount=amt)


SEED_EVENTS = [
    order("10:00", 1, "ORCL", 100),     # e1  seed step 1
    order("10:03", 2, "YHOO", 25),      # e2  seed step 1
    trade("10:02", 1, "ORCL", 60),      # e3  seed step 2
    trade("10:04", 2, "YHOO", 25),      # e4  seed step 2
    trade("10:07:30", 1, "ORCL", 30),   # e5  seed step 2
    bound("Trades", "10:11"),           # e6  seed step 3
    bound("Orders", "10:10"),           # e7  seed step 4
    trade("10:12", 1, "ORCL", 10),      # e8  seed step 5
]
SELECT_SEED = "SELECT STREAM ROWTIME, o.orderId, o.ticker, o.amount AS orderAmount, t.amount AS tradeAmount "


def test_seed_002_query_1_step_by_step():
    # Orders current row, Trades OVER (RANGE INTERVAL '10' MINUTE FOLLOWING): stamp = the order's rowtime.
    #   e3: trade 10:02 matches order 1: stamp 10:00; present min(10:03, 10:02); F = max(A_O 10:00,
    #       c'_T 09:52) = 10:00: released (seed step 2).
    #   e4: trade 10:04 matches order 2: stamp 10:03, held: order 1 could still match a trade stamped
    #       10:00 until the Trades clock passes 10:10.
    #   e5: trade 10:07:30 matches order 1: 10:00, released (seed step 2).
    #   e6: Trades bound 10:11: c'_T 10:01 > 10:00, order 1 leaves; F = max(A_O 10:03, 10:01) = 10:03:
    #       the YHOO match is released (seed step 3). e7: no effect (seed step 4). e8: too late for
    #       order 1's window (ended 10:10): no match (seed step 5).
    r = run(ORDERS_TRADES, SELECT_SEED + """FROM Orders AS o
            JOIN Trades OVER (RANGE INTERVAL '10' MINUTE FOLLOWING) AS t ON o.orderId = t.orderId""", SEED_EVENTS)
    assert r.table("orderId", "ticker", "orderAmount", "tradeAmount") == [
        (3, "10:00:00", 1, "ORCL", 100, 60), (5, "10:00:00", 1, "ORCL", 100, 30), (6, "10:03:00", 2, "YHOO", 25, 25)]
    assert r.bounds == {1: "10:00:00", 6: "10:03:00"}


def test_seed_002_query_1_state_and_trace():
    # State after each event (rows kept): e1 1, e2 2; e3: the 10:02 trade can match no future order
    # (Orders clock 10:03 > 10:02): dropped at once -> 2; e4, e5: trades kept -> 3, 4; e6: order 1
    # dropped -> 3; e7: Orders clock 10:10 passes both trades -> 1; e8: the 10:12 trade is kept -> 2.
    import streamsql
    wb = streamsql.Workbench(engine="local")
    wb.execute(ORDERS_TRADES)
    q = wb.query(SELECT_SEED + """FROM Orders AS o
                 JOIN Trades OVER (RANGE INTERVAL '10' MINUTE FOLLOWING) AS t ON o.orderId = t.orderId""")
    op = op_of(q, JoinOp)
    sizes, held = [], []
    for ev in SEED_EVENTS:
        wb.inject([ev])
        sizes.append(op.state_size())
        held.append(q.trace[-1].operators[-1].held)
    assert sizes == [1, 2, 2, 3, 4, 3, 1, 2]
    # after e4 and e5 the YHOO match is held; the trace says why: order 1 and the Trades clock
    for h in (held[3], held[4]):
        assert len(h) == 1 and h[0].rowtime == ts("10:03")
        assert h[0].waits_for == [
            "the ORDERS row at 2006-10-10 10:00:00 could still match a TRADES row until the TRADES clock "
            "passes 2006-10-10 10:10:00 (could still produce a row stamped 2006-10-10 10:00:00)"]
    assert held[5] == ()
    wb.close()


def test_seed_002_query_2_step_by_step():
    # Orders OVER (RANGE INTERVAL '10' MINUTE PRECEDING), Trades current row: stamp = the trade's rowtime.
    #   e3: trade 10:02 x order 1: 10:02; present min(10:03, 10:02), F = min(max(10:00, 10:02),
    #       max(A_T 10:02, 10:03)) = 10:02: released (seed step 2).
    #   e4: trade 10:04 x order 2: 10:04 > present 10:03 (the Orders clock): held. e5: 10:07:30 held.
    #   e6: Trades bound: present still 10:03 (seed step 3).
    #   e7: Orders bound 10:10: present 10:10; F = min(max(A_O 10:03, 10:11), max(A_T none),
    #       max(10:10, 10:11)) = 10:10: both released, in stamp order (seed step 4).
    #   e8: trade 10:12: no order at 10:02..10:12 with id 1 left: nothing (seed step 5).
    r = run(ORDERS_TRADES, SELECT_SEED + """FROM Orders OVER (RANGE INTERVAL '10' MINUTE PRECEDING) AS o
            JOIN Trades AS t ON o.orderId = t.orderId""", SEED_EVENTS)
    assert r.table("orderId", "ticker", "orderAmount", "tradeAmount") == [
        (3, "10:02:00", 1, "ORCL", 100, 60), (7, "10:04:00", 2, "YHOO", 25, 25), (7, "10:07:30", 1, "ORCL", 100, 30)]
    # e1 10:00; e3 10:02 (after the release); e4 min(F 10:04, held 10:04); e7 F = 10:10 after release?
    #   F at e7 = min(max(A_O 10:03, c_T 10:11), max(c_O 10:10, c_T 10:11)) = 10:11; e8: 10:12.
    assert r.bounds == {1: "10:00:00", 3: "10:02:00", 4: "10:04:00", 7: "10:11:00", 8: "10:12:00"}
    # "keep this trade in memory until the Orders stream reaches 10:12" (the seed): kept at Orders
    # clock 10:12 (an order at 10:12 could still match), dropped once it passes 10:12.
    op = op_of(r.q, JoinOp)
    assert [k.r for k in op.kept[1]] == [ts("10:12")]
    r.wb.inject([bound("Orders", "10:12")])
    assert [k.r for k in op.kept[1]] == [ts("10:12")]
    r.wb.inject([bound("Orders", "10:12", strict=True)])
    assert list(op.kept[1]) == []


def test_seed_002_query_2_trace_says_which_clock_a_held_row_waits_for():
    # After e4 the 10:04 match is held by rule 1: its stamp is past the present, which is the
    # Orders clock (10:03). After e5 both held rows wait for the Orders clock, and the 10:07:30 one
    # also for rule 2: F = max(A_T 10:04, c_O 10:03) = 10:04 (the kept 10:04 trade could still
    # meet an order at 10:04).
    r = run(ORDERS_TRADES, SELECT_SEED + """FROM Orders OVER (RANGE INTERVAL '10' MINUTE PRECEDING) AS o
            JOIN Trades AS t ON o.orderId = t.orderId""", SEED_EVENTS[:5])
    trace = {t.step - r.q.start_step: t for t in r.q.trace}
    join = [o for o in trace[4].operators if o.operator == "join"][0]
    assert join.inputs == ("ORDERS", "TRADES") and join.present == ts("10:03")
    assert [(h.rowtime, h.waits_for) for h in join.held] == [
        (ts("10:04"), ["ORDERS clock must reach 2006-10-10 10:04:00 (now 2006-10-10 10:03:00)"])]
    join = [o for o in trace[5].operators if o.operator == "join"][0]
    assert [h.waits_for for h in join.held] == [
        ["ORDERS clock must reach 2006-10-10 10:04:00 (now 2006-10-10 10:03:00)"],
        ["ORDERS clock must reach 2006-10-10 10:07:30 (now 2006-10-10 10:03:00)",
         "the TRADES row at 2006-10-10 10:04:00 could still match a ORDERS row until the ORDERS clock passes "
         "2006-10-10 10:04:00 (could still produce a row stamped 2006-10-10 10:04:00)"]]


def test_seed_002_query_3_full_outer_with_the_extra_bounds():
    # Query #1 as OUTER JOIN (= FULL) with an unmatched order (IBM) and trade (10:12), plus the two
    # bounds of scenario join3_full_outer (e10, e11).
    #   e4: 10:02 trade x order 1 -> 10:00; F = min(A_O 10:00 ..., U_O IBM 10:00, ...) = 10:00: released.
    #   e5: YHOO match 10:03 held (order 0 and order 1 could still produce 10:00).
    #   e6: 10:07:30 x order 1 -> 10:00: released.
    #   e7: Trades bound 10:11 (c'_T 10:01 > 10:00): IBM unmatched, stamped 10:00 + 0 = 10:00; order 1
    #       leaves. F = min(max(A_O 10:03, 10:01), clock_O + 0 = 10:03, clock_T + 0 = 10:11) = 10:03:
    #       IBM then YHOO released.
    #   e9: the 10:12 trade matches nothing; it is unmatched only once clock_O - 0 > 10:12.
    #       The seed prints it here; SEMANTICS 3.5 explains why that is unsafe.
    #   e10: Trades bound 10:14: order 2 leaves (10:04 > 10:03). e11: Orders bound 10:13 > 10:12:
    #       the trade is unmatched, stamped 10:12 + p_T (0) = 10:12; present 10:13, F = 10:13: released.
    events = [order("10:00", 0, "IBM", 110)] + SEED_EVENTS + [
        bound("Trades", "10:14"), bound("Orders", "10:13")]
    r = run(ORDERS_TRADES, """SELECT STREAM ROWTIME, o.orderId, o.ticker, o.amount AS orderAmount,
                                   t.orderId AS tradeOrderId, t.ticker AS tradeTicker, t.amount AS tradeAmount
            FROM Orders AS o OUTER JOIN Trades OVER (RANGE INTERVAL '10' MINUTE FOLLOWING) AS t
            ON o.orderId = t.orderId""", events)
    assert r.table("orderId", "ticker", "orderAmount", "tradeOrderId", "tradeTicker", "tradeAmount") == [
        (4, "10:00:00", 1, "ORCL", 100, 1, "ORCL", 60),
        (6, "10:00:00", 1, "ORCL", 100, 1, "ORCL", 30),
        (7, "10:00:00", 0, "IBM", 110, N, N, N),
        (7, "10:03:00", 2, "YHOO", 25, 2, "YHOO", 25),
        (11, "10:12:00", N, N, N, 1, "ORCL", 10),
    ]
    assert op_of(r.q, JoinOp).state_size() == 0


# --------------------------------------------------------------------------- conditions and keys

def test_residual_evaluated_per_pair_outer_row_with_only_failing_partners_is_unmatched():
    # Placement A, LEFT, ON l.k = r.k AND r.b > 100: no pair passes the residual, so every L row
    # is unmatched: L1 at 10:10 (clock_R 10:15 > 10:10 at e4), L2 at 10:12 (e4), L3 at 10:30 (e6).
    #   e4: present 10:02 holds them; e5: present 10:15, F = min(max(A_L 10:20, 10:15), U_L 10:30,
    #   clock_L + 10 = 10:30) = 10:20: 10:10 and 10:12 released. e7: 10:30 (as in A_LEFT).
    r = run(LR, """SELECT STREAM ROWTIME, l.a, r.b FROM L OVER (RANGE INTERVAL '10' MINUTE PRECEDING) AS l
                   LEFT JOIN R AS r ON l.k = r.k AND r.b > 100""", DATA)
    assert r.table("a", "b") == [(5, "10:10:00", 1, N), (5, "10:12:00", 2, N), (7, "10:30:00", 3, N)]


def test_residual_keeps_the_passing_partner_only():
    # L 10:00 k1 a=1; R 10:01 k1 b=5; R 10:02 k1 b=50 (placement A, LEFT). Residual r.b > l.a * 10:
    # (1, 5) fails, (1, 50) passes: one match stamped 10:02, and L1 is matched (no unmatched row).
    #   e3 the match: present min(10:00, 10:02) holds it; e4 L bound 10:30: present 10:02,
    #   F = min(max(A_L 10:00, 10:02), max(A_R, 10:30), ..., clock_L + 10 = 10:40) = 10:02: released.
    #   e5 R bound 10:30: L1 leaves (matched): nothing more.
    r = run(LR, """SELECT STREAM ROWTIME, l.a, r.b FROM L OVER (RANGE INTERVAL '10' MINUTE PRECEDING) AS l
                   LEFT JOIN R AS r ON l.k = r.k AND r.b > l.a * 10""",
            [row("L", "10:00", k=1, a=1), row("R", "10:01", k=1, b=5), row("R", "10:02", k=1, b=50),
             bound("L", "10:30"), bound("R", "10:30")])
    assert r.table("a", "b") == [(4, "10:02:00", 1, 50)]


def test_residual_only_condition_and_several_key_columns():
    # ON l.k = r.k AND l.g = r.g: (k, g) must both be equal. A residual that compares rowtimes works
    # too: r.ROWTIME > l.ROWTIME keeps only later trades.
    #   L 10:00 (1, 1) a=1, L 10:00 (1, 2) a=2; R 10:00 (1, 2) b=10, R 10:01 (1, 1) b=20
    #   window: L OVER 10 min PRECEDING, R current row: pairs need 10:00 <= r_R <= 10:10
    #   (k, g) equal: (a=2, b=10) at 10:00, (a=1, b=20) at 10:01; with r.ROWTIME > l.ROWTIME only
    #   (a=1, b=20). Released when clock_L passes: L bound 10:30 (e5).
    ddl = "CREATE STREAM L (k INTEGER, g INTEGER, a INTEGER); CREATE STREAM R (k INTEGER, g INTEGER, b INTEGER);"
    ev = [row("L", "10:00", k=1, g=1, a=1), row("L", "10:00", k=1, g=2, a=2), row("R", "10:00", k=1, g=2, b=10),
          row("R", "10:01", k=1, g=1, b=20), bound("L", "10:30")]
    q = "SELECT STREAM ROWTIME, l.a, r.b FROM L OVER (RANGE INTERVAL '10' MINUTE PRECEDING) AS l JOIN R AS r "
    r1 = run(ddl, q + "ON l.k = r.k AND l.g = r.g", ev)
    # (2, 10) at 10:00: present min(10:00, 10:00) = 10:00, F = min(max(A_L 10:00, 10:00), ...) = 10:00: e3
    # (1, 20) at 10:01: present 10:00 until the L bound (e5)
    assert r1.table("a", "b") == [(3, "10:00:00", 2, 10), (5, "10:01:00", 1, 20)]
    j = op_of(r1.q, JoinOp)
    assert len(j.node.equi) == 2 and j.node.residual is None
    r2 = run(ddl, q + "ON l.k = r.k AND l.g = r.g AND r.ROWTIME > l.ROWTIME", ev)
    assert r2.table("a", "b") == [(5, "10:01:00", 1, 20)]


def test_duplicate_keys_all_pairs_in_discovery_order():
    # Placement A INNER, all rows key 1: L 10:00 a=1, L 10:01 a=2, R 10:05 b=10, R 10:05 b=20.
    # Four pairs, all stamped 10:05 (the trade's rowtime). e3: R(b=10) finds a=1 then a=2 (arrival
    # order); e4: R(b=20) finds a=1, a=2. Held by present (clock_L 10:01) until the L bound (e5).
    # Released together in discovery order.
    r = run(LR, """SELECT STREAM ROWTIME, l.a, r.b FROM L OVER (RANGE INTERVAL '10' MINUTE PRECEDING) AS l
                   JOIN R AS r ON l.k = r.k""",
            [row("L", "10:00", k=1, a=1), row("L", "10:01", k=1, a=2), row("R", "10:05", k=1, b=10),
             row("R", "10:05", k=1, b=20), bound("L", "10:30")])
    assert r.table("a", "b") == [(5, "10:05:00", 1, 10), (5, "10:05:00", 2, 10), (5, "10:05:00", 1, 20),
                                 (5, "10:05:00", 2, 20)]


def test_equal_rowtimes_current_row_windows():
    # L OVER (RANGE CURRENT ROW), R OVER (ROWS CURRENT ROW): p = f = 0, only equal rowtimes match.
    #   e1 L 10:00 a=1; e2 R 10:00 b=10: pair 10:00, present 10:00, F = 10:00: released at e2
    #   e3 L 10:00 a=2: R 10:00 still kept (clock_L 10:00 <= 10:00): pair 10:00 released at e3
    #   e4 R 10:01 b=20: the L rows (window [10:00, 10:00]) cannot match: nothing; they are dropped
    #   (clock_R 10:01 > 10:00); both R rows stay: L's clock is 10:00, an L row at 10:00 or 10:01 may come
    r = run(LR, """SELECT STREAM ROWTIME, l.a, r.b FROM L OVER (RANGE CURRENT ROW) AS l
                   JOIN R OVER (ROWS CURRENT ROW) AS r ON l.k = r.k""",
            [row("L", "10:00", k=1, a=1), row("R", "10:00", k=1, b=10), row("L", "10:00", k=1, a=2),
             row("R", "10:01", k=1, b=20)])
    assert r.table("a", "b") == [(2, "10:00:00", 1, 10), (3, "10:00:00", 2, 10)]
    assert [len(q) for q in op_of(r.q, JoinOp).kept] == [0, 2]


def test_null_keys_never_match():
    # INNER: L 10:00 k=NULL and R 10:00 k=NULL (current row windows): no output, and neither row is
    # kept (it can never match). FULL: both are unmatched, stamped r + p = 10:00, released once the
    # other clock passes 10:00: L's when clock_R > 10:00 (e3), R's when clock_L > 10:00 (e4).
    ev = [row("L", "10:00", k=None, a=1), row("R", "10:00", k=None, b=10), bound("R", "10:01"), bound("L", "10:01")]
    q = "SELECT STREAM ROWTIME, l.a, r.b FROM L OVER (RANGE CURRENT ROW) AS l {} R AS r ON l.k = r.k"
    inner = run(LR, q.format("JOIN"), ev[:2])
    assert inner.rows == [] and op_of(inner.q, JoinOp).state_size() == 0
    full = run(LR, q.format("FULL JOIN"), ev)
    # e3: L's unmatched row: present min(10:00, 10:01) = 10:00, F = min(c'_L..., U_R 10:00, clock_L 10:00) ok
    # e4: R's unmatched row 10:00
    assert full.table("a", "b") == [(3, "10:00:00", 1, N), (4, "10:00:00", N, 10)]


def test_null_key_rows_do_not_delay_matches():
    # Placement B (R FOLLOWING 10 min), INNER: L 10:00 k=NULL, L 10:05 k=1, R 10:08 k=1.
    #   pair (L 10:05, R 10:08): stamp max(10:05, 09:58) = 10:05; present min(10:05, 10:08) = 10:05.
    #   The NULL-key row can never match, so it is not a kept row: A_L = 10:05 (the k=1 row),
    #   F = min(max(10:05, c'_R 09:58), max(A_R 09:58, 10:05), max(10:05, 09:58)) = 10:05: released at e3.
    r = run(LR, """SELECT STREAM ROWTIME, l.a, r.b FROM L AS l
                   JOIN R OVER (RANGE INTERVAL '10' MINUTE FOLLOWING) AS r ON l.k = r.k""",
            [row("L", "10:00", k=None, a=0), row("L", "10:05", k=1, a=1), row("R", "10:08", k=1, b=10)])
    assert r.table("a", "b") == [(3, "10:05:00", 1, 10)]


# --------------------------------------------------------------------------- composition

def test_join_of_a_stream_with_an_aggregate_of_itself():
    # hourly = per-hour counts of S, released at the end of the hour (no AS ROWTIME: stamped 11:00).
    # S current row JOIN hourly OVER (RANGE INTERVAL '1' HOUR PRECEDING): r_S - 1h <= r_h <= r_S... i.e.
    # match when r_h <= r_S <= r_h + 1h, stamp r_S.
    #   e1 S 10:00 a, e2 S 10:30 a: hourly bound 11:00, no rows: these S rows can match no hourly
    #   row (every future hourly row is stamped >= 11:00 > r_S): dropped.
    #   e3 S 11:00 a: hourly releases (hr=10:00, a, c=2) stamped 11:00 in the same event; the pair
    #   (S 11:00, hourly 11:00) matches: stamp 11:00, present min(11:00, 12:00): released at e3.
    r = run("CREATE STREAM S (k VARCHAR(5), x INTEGER);"
            "CREATE VIEW hourly AS SELECT STREAM FLOOR(S.ROWTIME TO HOUR) AS hr, k, COUNT(*) AS c FROM S "
            "GROUP BY FLOOR(S.ROWTIME TO HOUR), k;",
            "SELECT STREAM ROWTIME, s.k, s.x, h.hr, h.c FROM S AS s "
            "JOIN hourly OVER (RANGE INTERVAL '1' HOUR PRECEDING) AS h ON s.k = h.k",
            [row("S", "10:00", k="a", x=1), row("S", "10:30", k="a", x=2), row("S", "11:00", k="a", x=3)])
    assert r.table("k", "x", "hr", "c") == [(3, "11:00:00", "a", 3, ts("10:00"), 2)]


def test_self_join_rows_of_the_same_event():
    # S OVER (RANGE INTERVAL '1' HOUR PRECEDING) AS a JOIN S AS b ON a.k = b.k: each row also meets
    # itself (same event, both inputs). Stamps max(r_a, r_b) = r_b.
    #   e1 10:00 x=1: (1, 1) @10:00;  e2 10:30 x=2: (1, 2), (2, 2) @10:30;  e3 11:30 x=4: (2, 4) and
    #   (4, 4) @11:30 (10:00 is out of [10:30, 11:30])
    r = run("CREATE STREAM S (k VARCHAR(5), x INTEGER);",
            "SELECT STREAM ROWTIME, a.x, b.x AS bx FROM S OVER (RANGE INTERVAL '1' HOUR PRECEDING) AS a "
            "JOIN S AS b ON a.k = b.k",
            [row("S", "10:00", k="a", x=1), row("S", "10:30", k="a", x=2), row("S", "11:30", k="a", x=4)])
    assert r.table("x", "bx") == [(1, "10:00:00", 1, 1), (2, "10:30:00", 1, 2), (2, "10:30:00", 2, 2),
                                  (3, "11:30:00", 2, 4), (3, "11:30:00", 4, 4)]


def test_join_over_a_union():
    # (A UNION ALL B) OVER (RANGE INTERVAL '10' MINUTE PRECEDING) AS u JOIN C AS c ON u.k = c.k.
    # The union's rows come out merged in rowtime order once both A and B have passed them.
    #   e1 A 10:00 k1 v=1; e2 B 10:02 k1 v=2 (the union releases A's 10:00 row: B's clock 10:02)
    #   e3 C 10:05 k1 w=10: pairs with u 10:00 (e2-released) -> stamp 10:05; u 10:02 is still held in
    #      the union (A's clock is 10:00).
    #   e4 A bound 10:05: the union releases B's 10:02 row: it meets C 10:05 (kept): stamp 10:05.
    #      present of the join = min(union bound, C's clock): union bound = min(A 10:05, B 10:02) = 10:02
    #   e5 B bound 10:05: union bound 10:05, present 10:05, F = min(max(A_u 10:00, 10:05), ...) = 10:05:
    #      both pairs released, in discovery order.
    r = run("CREATE STREAM A (k INTEGER, v INTEGER); CREATE STREAM B (k INTEGER, v INTEGER);"
            "CREATE STREAM C (k INTEGER, w INTEGER);",
            "SELECT STREAM ROWTIME, u.v, c.w FROM (SELECT STREAM * FROM A UNION ALL SELECT STREAM * FROM B) "
            "OVER (RANGE INTERVAL '10' MINUTE PRECEDING) AS u JOIN C AS c ON u.k = c.k",
            [row("A", "10:00", k=1, v=1), row("B", "10:02", k=1, v=2), row("C", "10:05", k=1, w=10),
             bound("A", "10:05"), bound("B", "10:05")])
    assert r.table("v", "w") == [(5, "10:05:00", 1, 10), (5, "10:05:00", 2, 10)]


def test_aggregate_over_a_join():
    # Hourly totals of the seed #2 matches: GROUP BY FLOOR(ROWTIME TO HOUR) over the join (its
    # rows stamped with the trades' rowtimes 10:02, 10:04, 10:07:30, released at e3, e7, e7).
    #   The 10:00 hour is complete when the join's output bound reaches 11:00: after e9, a Trades
    #   bound 11:00 and Orders bound 11:00 (e10): F of the join = 11:00. SUM(tradeAmount) =
    #   60 + 25 + 30 = 115, COUNT 3, stamped 11:00.
    r = run(ORDERS_TRADES, """SELECT STREAM FLOOR(j.ROWTIME TO HOUR) AS h, COUNT(*) AS n, SUM(ta) AS s FROM (
              SELECT STREAM ROWTIME, o.orderId, t.amount AS ta FROM Orders OVER (RANGE INTERVAL '10' MINUTE
              PRECEDING) AS o JOIN Trades AS t ON o.orderId = t.orderId) AS j
            GROUP BY FLOOR(j.ROWTIME TO HOUR)""",
            SEED_EVENTS + [bound("Trades", "11:00"), bound("Orders", "11:00")])
    assert r.table("h", "n", "s") == [(10, "11:00:00", ts("10:00"), 3, 115)]


# --------------------------------------------------------------------------- stream-table joins

PRODUCTS = """CREATE STREAM Orders (productId INTEGER, units INTEGER);
              CREATE TABLE Products (productId INTEGER, name VARCHAR(10));
              INSERT INTO Products VALUES (10, 'Beer'), (20, 'Wine'), (20, 'Cider'), (NULL, 'Nothing');"""


def test_stream_table_inner_lookup_stamped_with_the_stream_row():
    # Each order looks Products up when it arrives; output stamped with the order's rowtime and
    # released at once. Product 20 has two table rows: two output rows, in table order.
    # Product 30 has none: no row (inner). A NULL productId matches nothing (not even the NULL row).
    r = run(PRODUCTS, """SELECT STREAM ROWTIME, o.productId, o.units, p.name FROM Orders AS o
                         JOIN Products AS p ON o.productId = p.productId""",
            [row("Orders", "10:00", productId=10, units=1), row("Orders", "10:05", productId=20, units=2),
             row("Orders", "10:06", productId=30, units=3), row("Orders", "10:07", productId=None, units=4)])
    assert r.table("productId", "units", "name") == [(1, "10:00:00", 10, 1, "Beer"), (2, "10:05:00", 20, 2, "Wine"),
                                                     (2, "10:05:00", 20, 2, "Cider")]
    assert r.bounds == {1: "10:00:00", 2: "10:05:00", 3: "10:06:00", 4: "10:07:00"}
    assert isinstance(op_of(r.q, LookupJoinOp), LookupJoinOp)


def test_stream_table_left_join_emits_unmatched_at_once_and_residual():
    # LEFT: an order without product (30, NULL) is emitted at once with NULLs. The residual
    # o.units > 1 is evaluated per pair: product 10 with units 1 fails -> unmatched, NULL name.
    r = run(PRODUCTS, """SELECT STREAM ROWTIME, o.productId, p.name FROM Orders AS o
                         LEFT JOIN Products AS p ON o.productId = p.productId AND o.units > 1""",
            [row("Orders", "10:00", productId=10, units=1), row("Orders", "10:05", productId=20, units=2),
             row("Orders", "10:06", productId=30, units=3), row("Orders", "10:07", productId=None, units=4)])
    assert r.table("productId", "name") == [(1, "10:00:00", 10, N), (2, "10:05:00", 20, "Wine"),
                                            (2, "10:05:00", 20, "Cider"), (3, "10:06:00", 30, N), (4, "10:07:00", N, N)]


def test_stream_table_with_table_on_the_left():
    # Products RIGHT JOIN Orders preserves the stream (the right side); the table's columns come first.
    r = run(PRODUCTS, """SELECT STREAM ROWTIME, p.name, o.productId FROM Products AS p
                         RIGHT JOIN Orders AS o ON p.productId = o.productId""",
            [row("Orders", "10:00", productId=10, units=1), row("Orders", "10:06", productId=30, units=3)])
    assert r.table("name", "productId") == [(1, "10:00:00", "Beer", 10), (2, "10:06:00", N, 30)]


def test_stream_table_join_errors(wb_local):
    wb_local.execute(PRODUCTS)
    with pytest.raises(SqlError, match="A stream-table join can only preserve the stream side"):
        wb_local.query("SELECT STREAM o.units FROM Orders AS o FULL JOIN Products AS p ON o.productId = p.productId")
    with pytest.raises(SqlError, match="A stream-table join looks up each stream row in the table; "
                                       "it takes no window"):
        wb_local.query("SELECT STREAM o.units FROM Orders OVER (RANGE INTERVAL '1' HOUR PRECEDING) AS o "
                       "JOIN Products AS p ON o.productId = p.productId")


# --------------------------------------------------------------------------- errors

NO_WINDOW = ("A join of two streams needs a window (OVER (RANGE INTERVAL ... PRECEDING or FOLLOWING)) on at "
             "least one side, or two window table functions joined on their windows; without one it would need "
             "unbounded memory")


@pytest.mark.parametrize("kind", ["JOIN", "LEFT JOIN", "FULL OUTER JOIN", "OUTER JOIN"])
def test_stream_stream_join_without_window_is_rejected(wb_local, kind):
    wb_local.execute(ORDERS_TRADES)
    with pytest.raises(SqlError) as e:
        wb_local.query(f"SELECT STREAM o.orderId FROM Orders AS o {kind} Trades AS t ON o.orderId = t.orderId")
    assert str(e.value).endswith(NO_WINDOW)
    assert wb_local.queries == {}


def test_unbounded_join_window_is_rejected(wb_local):
    wb_local.execute(ORDERS_TRADES)
    with pytest.raises(SqlError, match="An UNBOUNDED join window would need unbounded memory"):
        wb_local.query("SELECT STREAM o.orderId FROM Orders OVER (RANGE UNBOUNDED PRECEDING) AS o "
                       "JOIN Trades AS t ON o.orderId = t.orderId")


# --------------------------------------------------------------------------- both runtimes

def test_seed_002_query_2_on_both_runtimes(wb):
    wb.execute(ORDERS_TRADES)
    r = run("", SELECT_SEED + """FROM Orders OVER (RANGE INTERVAL '10' MINUTE PRECEDING) AS o
            JOIN Trades AS t ON o.orderId = t.orderId""", SEED_EVENTS, wb=wb)
    assert r.table("orderId", "tradeAmount") == [(3, "10:02:00", 1, 60), (7, "10:04:00", 2, 25),
                                                 (7, "10:07:30", 1, 30)]
    assert r.bounds == {1: "10:00:00", 3: "10:02:00", 4: "10:04:00", 7: "10:11:00", 8: "10:12:00"}


# --------------------------------------------------------------------------- values in their column's type

PRICES = """CREATE STREAM Orders (productId INTEGER, orderId INTEGER);
            CREATE TABLE Products (productId INTEGER, name VARCHAR(10), unitPrice DOUBLE);
            INSERT INTO Products VALUES (10, 'Beer', 0.25), (30, 'Cheese', 17.0);"""
PRICED = ("SELECT STREAM o.ROWTIME, o.orderId, p.name, p.unitPrice FROM Orders AS o "
          "JOIN Products AS p ON o.productId = p.productId")


def test_decimal_literals_in_a_double_column_join_on_both_runtimes(wb):
    # INSERT stores 0.25 and 17.0 as DOUBLEs (the column's type), so every matching order is
    # joined and delivered: stamped with its own rowtime, released at its own step; o.ROWTIME is
    # the output's ROWTIME (the stream side's, which the joined row carries), shown as ROWTIME.
    wb.execute(PRICES)
    assert wb.catalog.tables["PRODUCTS"].rows == [(10, "Beer", 0.25), (30, "Cheese", 17.0)]
    assert all(type(r[2]) is float for r in wb.catalog.tables["PRODUCTS"].rows)
    every = wb.query("SELECT STREAM * FROM Orders")
    r = run("", PRICED, [row("Orders", "10:00", productId=10, orderId=1), row("Orders", "10:05", productId=20, orderId=2),
                         row("Orders", "10:07", productId=30, orderId=3)], wb=wb)
    assert r.q.columns == ["ORDERID", "NAME", "UNITPRICE"] and r.q.plan.rowtime_column == 0
    assert r.table("orderId", "name", "unitPrice") == [(1, "10:00:00", 1, "Beer", 0.25), (3, "10:07:00", 3, "Cheese", 17.0)]
    assert r.q.error is None and r.q.errors == []
    every.wait(timeout=300)
    assert [(o.step - every.start_step, hm(o.rowtime)) for o in every.rows] == [(1, "10:00:00"), (2, "10:05:00"),
                                                                              (3, "10:07:00")]


def test_the_issues_qualified_rowtime_is_named_rowtime_on_both_runtimes(wb):
    # was EXPR$0: o.ROWTIME is the joined rows' ROWTIME, shown once, by its name
    wb.execute(PRICES)
    r = run("", "SELECT STREAM o.ROWTIME, o.orderId, p.name FROM Orders AS o JOIN Products AS p "
                "ON o.productId = p.productId", [row("Orders", "10:00", productId=30, orderId=1)], wb=wb)
    assert r.q.to_pandas().to_dict("records") == [{"STEP": r.q.start_step + 1, "ROWTIME": "2006-10-10 10:00:00",
                                                   "ORDERID": 1, "NAME": "Cheese"}]


@pytest.mark.parametrize("select,names", [
    ("o.ROWTIME, o.orderId, p.name", ["ROWTIME", "ORDERID", "NAME"]),
    ("p.name, o.ROWTIME", ["NAME", "ROWTIME"]),
    ("o.orderId AS id, ROWTIME, p.unitPrice", ["ID", "ROWTIME", "UNITPRICE"]),
])
def test_qualified_rowtime_keeps_its_name(wb_local, select, names):
    # the stream side's ROWTIME is the joined row's: where the select list shows it is where the
    # output's ROWTIME column goes (relational results and the magics show it so, by name)
    wb_local.execute(PRICES)
    q = wb_local.query(f"SELECT STREAM {select} FROM Orders AS o JOIN Products AS p ON o.productId = p.productId")
    shown = list(q.columns)
    shown.insert(q.plan.rowtime_column, "ROWTIME")
    assert shown == names


def test_a_window_join_side_rowtime_is_a_column_named_rowtime(wb_local):
    # in a window join a side's ROWTIME is not the joined row's: it stays a column, by its name
    wb_local.execute(ORDERS_TRADES)
    q = wb_local.query("SELECT STREAM o.ROWTIME, t.orderId FROM Orders OVER (RANGE INTERVAL '10' MINUTE PRECEDING) "
                       "AS o JOIN Trades AS t ON o.orderId = t.orderId")
    assert q.columns == ["ROWTIME", "ORDERID"] and q.plan.rowtime_column is None


def test_a_delivery_that_fails_is_that_querys_error_alone(tmp_path):
    # A workspace whose catalog was edited by hand holds a text where a table's DOUBLE goes; the
    # join's released row cannot be stored in its column: that query stops with a one-line
    # error naming the column, and the INSERT and the other query are not held back.
    import json
    import streamsql
    ws = tmp_path / "ws"
    wb = streamsql.Workbench(ws, engine="local")
    wb.execute(PRICES)
    wb.close()
    cat = json.loads((ws / "catalog.json").read_text())
    t = next(t for t in cat["catalog"]["tables"] if t["name"] == "PRODUCTS")
    t["rows"][0][2] = "cheap"
    (ws / "catalog.json").write_text(json.dumps(cat))
    wb = streamsql.Workbench(ws, engine="local")
    OWNED.append((wb, str(ws)))
    joined = wb.query(PRICED)
    every = wb.query("SELECT STREAM * FROM Orders")
    wb.insert("Orders", {"productId": 10, "orderId": 1}, rowtime="2006-10-10 10:00:00")
    assert [hm(o.rowtime) for o in every.rows] == ["10:00:00"]          # delivered at its own step
    assert not joined.running and "\n" not in joined.error
    assert "column UNITPRICE of query" in joined.error and "'cheap' is not a number" in joined.error
    wb.insert("Orders", {"productId": 30, "orderId": 2}, rowtime="2006-10-10 10:05:00")
    assert [hm(o.rowtime) for o in every.rows] == ["10:00:00", "10:05:00"]


def test_a_decimal_kept_by_an_older_workspace_is_a_double_again(tmp_path):
    # a workspace written before INSERT typed its values holds {"$d": "0.25"} in the DOUBLE column
    import json
    import streamsql
    ws = tmp_path / "ws"
    wb = streamsql.Workbench(ws, engine="local")
    wb.execute(PRICES)
    wb.close()
    cat = json.loads((ws / "catalog.json").read_text())
    t = next(t for t in cat["catalog"]["tables"] if t["name"] == "PRODUCTS")
    t["rows"][0][2] = {"$d": "0.25"}
    (ws / "catalog.json").write_text(json.dumps(cat))
    wb = streamsql.Workbench(ws, engine="local")
    OWNED.append((wb, str(ws)))
    assert wb.catalog.tables["PRODUCTS"].rows[0] == (10, "Beer", 0.25)
    r = run("", PRICED, [row("Orders", "10:00", productId=10, orderId=1)], wb=wb)
    assert r.table("unitPrice") == [(1, "10:00:00", 0.25)]
