-- Seed 004 (Calcite), "Sorting": ORDER BY rowtime on a UNION ALL changes nothing, because the
-- merge already releases rows in rowtime order (the semantics, 3.2 and 3.6).
-- Derivation: both branches read Orders, so each branch's clock is the Orders clock and a row
-- passes the merge at the step it arrives. The ORDER BY has no key after ROWTIME, so nothing
-- needs reordering: each row leaves at once, stamped with its rowtime. Products 20 (step 3) and
-- 40 (step 7) are filtered out; the output is the seed's: 10:17:00 (30), 10:17:05 (10),
-- 10:18:07 (30), 11:02 (10), 11:04 (10), 11:24:11 (10).
-- Bounds: the output bound is the Orders clock; a line is printed only where no released row
-- already implies it: steps 3 (10:18:05) and 7 (11:09:30), whose rows were filtered out.
CREATE STREAM Orders (productId INTEGER, orderId INTEGER, units INTEGER);
SELECT STREAM * FROM Orders WHERE productId = 10
UNION ALL
SELECT STREAM * FROM Orders WHERE productId = 30
ORDER BY rowtime;
