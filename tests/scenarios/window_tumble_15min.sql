-- Seed 004 (Calcite), "Limitations of tumbling and hopping windows": a tumbling window of 15 minutes,
-- written as Calcite's group window. Expected lines derived by hand from docs/semantics.md 3.7 and 3.3:
-- * Windows [k*15min, (k+1)*15min). The four 10:1x orders fall in 10:15-10:30; 11:02, 11:04 and
--   11:09:30 in 11:00-11:15; 11:24:11 in 11:15-11:30.
-- * 10:15-10:30 is complete when the clock reaches 10:30: the 11:02 order, step 5. One row per
--   product, stamped 10:30 (TUMBLE_END ... AS ROWTIME), ordered by the keys (window, then product):
--   10 (1 order, 1 unit), 20 (1, 2), 30 (2, 4 + 20 = 24).
-- * 11:00-11:15 completes at the 11:24:11 order (step 8): 10 (2 orders, 6 + 1 = 7), 40 (1, 12).
-- * 11:15-11:30 completes at the bound 12:00 (step 9): 10 (1, 4). The windows 10:30-11:00 and
--   11:30-12:00 have no row and are never emitted.
-- * Output bound: the end of the next window a row can still open, the least window end after the
--   clock. Clock 10:17 (step 1): 10:30. Step 5 (clock 11:02): 11:15, after the 10:30 rows. Step 8
--   (11:24:11): 11:30. Step 9 (12:00): 12:15.
CREATE STREAM Orders (productId INTEGER, orderId INTEGER, units INTEGER);
SELECT STREAM TUMBLE_END(ROWTIME, INTERVAL '15' MINUTE) AS ROWTIME,
  TUMBLE_START(ROWTIME, INTERVAL '15' MINUTE) AS windowStart,
  productId, COUNT(*) AS c, SUM(units) AS units
FROM Orders
GROUP BY TUMBLE(ROWTIME, INTERVAL '15' MINUTE), productId;
