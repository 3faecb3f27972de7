-- Sessions per product with a 30-minute gap, as Calcite's group window. Derived by hand from
-- docs/semantics.md 3.7:
-- * Product 10: 10:00, 10:25 (25 min later: same session), 10:50, 11:15: one session
--   [10:00, 11:15 + 30 min = 11:45), 4 orders, 1 + 3 + 5 + 6 = 15 units, growing with each row.
-- * Product 20: 10:10, then 10:40, exactly 30 minutes later: 10:40 opens a new session, and its clock
--   (10:40) completes [10:10, 10:40) at the same step (step 4): 1 order, 2 units. The second session
--   [10:40, 11:10) completes at the bound 11:10 (step 6): 1 order, 4 units.
-- * Product 10's session completes at the bound 12:00 (step 8), stamped 11:45.
-- * Output bound: the least of (last row + 30 min) over the open sessions and clock + 30 min:
--   step 1: 10:30; step 3: product 20's 10:40 (product 10 moved to 10:55); step 4: 10:55 (product 20
--   reopened until 11:10); step 5: 11:10 (product 10 until 11:20); step 6: 11:20; step 7: 11:45;
--   step 8: no session open, clock + 30 min = 12:30.
CREATE STREAM Orders (productId INTEGER, orderId INTEGER, units INTEGER);
SELECT STREAM SESSION_START(ROWTIME, INTERVAL '30' MINUTE) AS sessionStart,
  SESSION_END(ROWTIME, INTERVAL '30' MINUTE) AS sessionEnd,
  productId, COUNT(*) AS c, SUM(units) AS units
FROM Orders
GROUP BY SESSION(ROWTIME, INTERVAL '30' MINUTE), productId;
