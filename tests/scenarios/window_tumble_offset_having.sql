-- A TUMBLE window table function of one hour aligned 15 minutes past the hour, aggregated per
-- window and product, with HAVING. Derived by hand from docs/semantics.md 3.7 and 3.3:
-- * Windows [h:15, h+1:15). Orders 5-11 (10:17:00 to 11:09:30) are in 10:15-11:15, order 12
--   (11:24:11) in 11:15-12:15.
-- * 10:15-11:15 completes at the 11:24:11 order (step 8). Per product: 10: orders 6, 9, 10 (3 orders,
--   8 units: kept, COUNT(*) > 1); 20: order 7 (1, 2: dropped by HAVING); 30: orders 5, 8 (2, 24:
--   kept); 40: order 11 (1, 12: kept, SUM > 10). Ordered by window, then product: 10, 30, 40.
-- * 11:15-12:15 completes at the bound 12:30 (step 9): product 10, 1 order, 4 units: dropped.
CREATE STREAM Orders (productId INTEGER, orderId INTEGER, units INTEGER);
SELECT STREAM window_start, productId, SUM(units) AS units
FROM TABLE(TUMBLE(TABLE Orders, DESCRIPTOR(ROWTIME), INTERVAL '1' HOUR, INTERVAL '15' MINUTE))
GROUP BY window_start, window_end, productId
HAVING COUNT(*) > 1 OR SUM(units) > 10;
