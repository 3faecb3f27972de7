-- Section 1 and 2 of the rules on one stream: a row is a bound at its own rowtime, a bound weaker
-- than the clock is eclipsed, a strict bound at t is the bound t + 1 ms (so a later row at t is
-- late), a producer cannot move its own bound backwards. Run with --bounds.
CREATE STREAM Orders (ticker VARCHAR(10));
SELECT STREAM ROWTIME, ticker FROM Orders;
