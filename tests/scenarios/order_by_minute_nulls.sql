-- ORDER BY a monotonic leading key whose groups span several rowtimes, with an explicit
-- NULLS LAST (the semantics, section 3.6; output stamps as documented in operators/sort.py).
-- Derivation:
-- * The 09:00 minute is complete when the clock reaches 09:01:00: the 09:01:05 row (step 5).
--   Sorted by price DESC NULLS LAST, then ticker: MSFT 25 (09:00:30), AAPL 20 (09:00:40),
--   ORCL 20 (09:00:10), IBM NULL (09:00:20).
-- * Stamps: each row's rowtime raised to the running maximum in that order, so they never
--   decrease: 09:00:30, 09:00:40, 09:00:40, 09:00:40. ROWTIME in the select list shows the stamp;
--   the input's rowtime is kept as column T (Trades.ROWTIME, computed before the sort).
-- * The 09:01 minute is complete at the bound 09:02 (step 6): ORCL 30 stamped 09:01:05.
-- * Output bound: the earliest buffered rowtime or the clock: 09:00:10 after step 1 (printed),
--   09:01:05 after step 5 (later than the rows released, printed), 09:02:00 after step 6.
CREATE STREAM Trades (ticker VARCHAR(5), price INTEGER);
SELECT STREAM ROWTIME, ticker, price, Trades.ROWTIME AS t
FROM Trades
ORDER BY FLOOR(ROWTIME TO MINUTE), price DESC NULLS LAST, ticker;
