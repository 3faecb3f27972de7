-- Window Top-N: the two largest orders of each hour, over a TUMBLE window table function (Flink's
-- form: ROW_NUMBER in a sub-query, the filter around it). Derived by hand from docs/semantics.md 3.7:
-- * 10:00-11:00 holds orders 5 (4 units), 6 (1), 7 (2), 8 (20); by units descending: 8, 5, 7, 6.
--   The window's rows reach the Top-N when the clock reaches 11:00 (the 11:02 order, step 5); it
--   numbers them then and releases 8 (rn 1) and 5 (rn 2), stamped 11:00.
-- * 11:00-12:00: orders 9 (6), 10 (1), 11 (12), 12 (4): 11 (rn 1), 9 (rn 2), at the bound 12:00 (step 9).
CREATE STREAM Orders (productId INTEGER, orderId INTEGER, units INTEGER);
SELECT STREAM window_end, orderId, units, rn
FROM (SELECT STREAM window_start, window_end, orderId, units,
        ROW_NUMBER() OVER (PARTITION BY window_start, window_end ORDER BY units DESC) AS rn
      FROM TABLE(TUMBLE(TABLE Orders, DESCRIPTOR(ROWTIME), INTERVAL '1' HOUR)))
WHERE rn <= 2;
