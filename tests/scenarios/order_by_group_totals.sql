-- Sorting the results of a streaming GROUP BY (the semantics, 3.3 and 3.6): hourly totals per product,
-- each hour's groups ordered by their total, largest first.
-- Derivation:
-- * GROUP BY: the 10:00 hour is complete at the 11:02 row (step 5); its groups are stamped 11:00
--   (end of the hour): product 30 (2 orders, 4 + 20 = 24 units), 20 (1, 2), 10 (1, 1). The 11:00
--   hour is complete at the bound 12:00 (step 9), stamped 12:00: product 10 (3, 6 + 1 + 4 = 11),
--   40 (1, 12).
-- * ORDER BY h, su DESC: h is the hour of the GROUP BY's time key; rows of one hour all leave the
--   aggregation at once, after which its output bound is the end of the next hour, so the sort
--   releases them in the same step, by su DESC: 24, 2, 1 and then 12, 11. Stamps are unchanged.
-- * Output bound: the aggregation's (the end of the hour containing the clock): 11:00 after
--   step 1, 12:00 after step 5, 13:00 after step 9.
CREATE STREAM Orders (productId INTEGER, orderId INTEGER, units INTEGER);
SELECT STREAM FLOOR(rowtime TO HOUR) AS h, productId, COUNT(*) AS c, SUM(units) AS su
FROM Orders
GROUP BY FLOOR(rowtime TO HOUR), productId
ORDER BY h, su DESC;
