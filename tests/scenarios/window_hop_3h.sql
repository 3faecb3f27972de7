-- Calcite's hopping window (its reference's HOP example): every hour, the orders of the past three
-- hours. Seed 004's recipe (a sliding OVER over hourly totals) gives the windows ending 11:00 and
-- 12:00 only; a HOP also emits those ending 13:00 and 14:00. Derived by hand from docs/semantics.md 3.7:
-- * HOP(ROWTIME, slide 1 hour, size 3 hours): windows [k h, k h + 3 h). A 10:1x order is in the
--   windows starting 08:00, 09:00 and 10:00 (ending 11:00, 12:00, 13:00); an 11:xx order in those
--   starting 09:00, 10:00, 11:00 (ending 12:00, 13:00, 14:00).
-- * 08:00-11:00: the four 10:1x orders, 4 + 1 + 2 + 20 = 27 units; complete at the 11:02 order (step 5).
-- * 09:00-12:00 and 10:00-13:00: all eight orders, 27 + 6 + 1 + 12 + 4 = 50 units; 11:00-14:00: the
--   four 11:xx orders, 23 units. All three complete at the bound 14:00 (step 9) and leave in stamp
--   order: 12:00, 13:00, 14:00.
CREATE STREAM Orders (productId INTEGER, orderId INTEGER, units INTEGER);
SELECT STREAM HOP_END(ROWTIME, INTERVAL '1' HOUR, INTERVAL '3' HOUR) AS ROWTIME,
  COUNT(*) AS c, SUM(units) AS units
FROM Orders
GROUP BY HOP(ROWTIME, INTERVAL '1' HOUR, INTERVAL '3' HOUR);
