-- Deduplication over a monotonic period: per product and hour, its largest order(s). RANK gives
-- equal units the same number, so a tie keeps both. Derived by hand from docs/semantics.md 3.7:
-- * Hour 10:00 (PARTITION BY FLOOR(ROWTIME TO HOUR), productId): product 10 has orders 1 (5 units),
--   3 (7), 4 (7): RANK 3 -> 1, 4 -> 1, 1 -> 3; product 20 has 2 (3), 5 (1): 2 -> 1, 5 -> 2.
-- * The hour is complete when the clock reaches 11:00: the 11:00 order (step 6). Released stamped
--   11:00, by partition (product 10, then 20), then number, then arrival: orders 3, 4, 2.
-- * Hour 11:00: product 10's order 6 (rank 1), complete at the bound 12:00 (step 7), stamped 12:00.
CREATE STREAM Orders (productId INTEGER, orderId INTEGER, units INTEGER);
SELECT STREAM productId, orderId, units
FROM (SELECT STREAM productId, orderId, units,
        RANK() OVER (PARTITION BY FLOOR(ROWTIME TO HOUR), productId ORDER BY units DESC) AS r
      FROM Orders)
WHERE r = 1;
