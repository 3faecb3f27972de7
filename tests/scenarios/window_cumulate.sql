-- Cumulating windows (a window table function, as in Flink SQL): every 15 minutes, the units since
-- the top of the hour. Derived by hand from docs/semantics.md 3.7:
-- * CUMULATE(step 15 minutes, size 1 hour): per hour h, the windows [h, h:15), [h, h:30), [h, h:45),
--   [h, h+1). A row is in the windows of its hour that end after it: the 10:1x orders in 10:00-10:30,
--   10:00-10:45, 10:00-11:00 (27 units); 11:02, 11:04 and 11:09:30 in all four 11:00 windows;
--   11:24:11 in 11:00-11:30, 11:00-11:45 and 11:00-12:00.
-- * 10:00-10:15 has no row: never emitted.
-- * At the 11:02 order (step 5) the clock passes 10:30, 10:45 and 11:00: those three windows leave,
--   27 units each, in stamp order. 11:00-11:15 (6 + 1 + 12 = 19) completes at the 11:24:11 order
--   (step 8); 11:00-11:30 (23) at the bound 11:40 (step 9); 11:00-11:45 and 11:00-12:00 (23) at
--   the bound 12:00 (step 10).
-- * Output bound: the next step boundary after the clock: 10:30 (step 1), 11:15 (step 5), 11:30
--   (step 8), 11:45 (step 9), 12:15 (step 10).
CREATE STREAM Orders (productId INTEGER, orderId INTEGER, units INTEGER);
SELECT STREAM window_start, window_end, SUM(units) AS units
FROM TABLE(CUMULATE(TABLE Orders, DESCRIPTOR(ROWTIME), INTERVAL '15' MINUTE, INTERVAL '1' HOUR))
GROUP BY window_start, window_end;
