-- Seed 004 (Calcite), "Sorting": a streaming ORDER BY whose leading key is monotonic.
-- Derivation (the semantics, 3.1 and 3.6; output stamps as documented in operators/sort.py):
-- * The projection stamps each row FLOOR(rowtime TO hour) and maps the clock the same way, so the
--   sort sees rows at 10:00 (steps 1-4) and 11:00 (steps 5-8) and a clock of 10:00, 11:00, 12:00.
-- * The 10:00 value is complete when the sort's clock reaches 11:00, the end of its period: the
--   11:02 row at step 5. Its four rows leave sorted by units DESC: 20, 4, 2, 1 (the seed's order).
--   All share the rowtime 10:00, so their stamps stay 10:00.
-- * The 11:00 value is complete at the bound 12:00 (step 9): units 12, 6, 4, 1.
-- * Output bound: the earliest buffered rowtime or the sort's clock, whichever is earlier:
--   10:00 after step 1 (printed), 11:00 after step 5 (later than the rows released, printed),
--   12:00 after step 9.
CREATE STREAM Orders (productId INTEGER, orderId INTEGER, units INTEGER);
SELECT STREAM FLOOR(rowtime TO hour) AS rowtime, productId, orderId, units
FROM Orders
ORDER BY FLOOR(rowtime TO hour) ASC, units DESC;
