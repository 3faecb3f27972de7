-- A calculator error after a join (the semantics, sections 1 and 5): the WHERE above the join evaluates a
-- joined row when the join releases it, so a row it cannot compute fails at that step, stamped
-- with the joined row's rowtime; its STREAM_NAME is the join's first input's (Orders).
--  1 Orders id 1, qty 0 at 10:00; 2 Orders id 2, qty 2 at 10:00
--  3 Trades id 1, 50 at 10:01: joins order 1, stamped 10:01; the join holds it (Orders' clock is 10:00)
--  4 Trades id 2, 50 at 10:02: joins order 2, stamped 10:02; held too
--  5 Orders bound 10:05: the join releases both: 50 / 0 divides by zero (an error at step 5, rowtime
--                        10:01); 50 / 2 = 25 > 1: released with price 25
--  6 Trades id 2, 0 at 10:04: joins order 2 and is released at once (Orders' clock is 10:05):
--                        0 / 2 = 0 is not > 1: dropped by the WHERE, no error
CREATE STREAM Orders (id INTEGER, qty INTEGER);
CREATE STREAM Trades (id INTEGER, amount INTEGER);
SELECT STREAM ROWTIME, o.id, t.amount / o.qty AS price
FROM Orders OVER (RANGE INTERVAL '5' MINUTE PRECEDING) AS o
JOIN Trades AS t ON o.id = t.id
WHERE t.amount / o.qty > 1;
