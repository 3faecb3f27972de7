-- Seed 004, "Limitations of tumbling and hopping windows": "output, at the top of each hour, the
-- orders for the previous 7,007 seconds". A HOP window table function whose size (7,007 s) is no
-- multiple of its slide (1 hour), aligned 193 s past the hour so that its windows end on the hour
-- (7,007 s = 2 hours - 193 s). Derived by hand from docs/semantics.md 3.7:
-- * Windows [h:03:13, h+2:00:00). A 10:1x order is in 09:03:13-11:00 and 10:03:13-12:00; the 11:02
--   order only in 10:03:13-12:00 (11:02 is before 11:03:13 and after 11:00); 11:04, 11:09:30 and
--   11:24:11 in 10:03:13-12:00 and 11:03:13-13:00.
-- * 09:03:13-11:00: orders 5-8, 27 units, complete at the 11:02 order (step 5), stamped 11:00.
-- * 10:03:13-12:00: all eight, 50 units, complete at the bound 12:00 (step 9).
-- * 11:03:13-13:00: orders 10-12, 1 + 12 + 4 = 17 units, complete at the bound 13:00 (step 10).
-- * Output bound: the least window end after the clock, on the hour: 11:00 from step 1, 12:00 from
--   step 5, 13:00 from step 9, 14:00 from step 10.
CREATE STREAM Orders (productId INTEGER, orderId INTEGER, units INTEGER);
SELECT STREAM window_start, window_end, COUNT(*) AS c, SUM(units) AS units
FROM TABLE(HOP(TABLE Orders, DESCRIPTOR(ROWTIME), INTERVAL '1' HOUR, INTERVAL '7007' SECOND,
               INTERVAL '193' SECOND))
GROUP BY window_start, window_end;
