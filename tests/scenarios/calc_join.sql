-- A join condition that cannot be computed (the semantics, section 1): the arriving row joins nothing and
-- is not kept.
--  1 Orders id 1, qty 0 at 10:00; 2 Orders id 2, qty 2 at 10:00
--  3 Trades id 1, 50 at 10:01: meets order 1, 50 / 0 divides by zero: the trade is refused
--  4 Trades id 2, 50 at 10:02: meets order 2 (50 / 2 = 25 > 0), stamped 10:02, waits for Orders' clock
--  5 Orders bound 10:05: released
--  6 Trades id 2, 0 at 10:04: 0 / 2 = 0 is not > 0: no match, no error
CREATE STREAM Orders (id INTEGER, qty INTEGER);
CREATE STREAM Trades (id INTEGER, amount INTEGER);
SELECT STREAM ROWTIME, o.id, t.amount / o.qty AS price
FROM Orders OVER (RANGE INTERVAL '5' MINUTE PRECEDING) AS o
JOIN Trades AS t ON o.id = t.id AND t.amount / o.qty > 0;
