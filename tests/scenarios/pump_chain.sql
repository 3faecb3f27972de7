-- A chain of two pumps (the semantics, section 4: a pump forwards the bounds of its query).
-- p1 copies the big trades of Raw into Big; p2 sums Big per hour and ticker into Hourly; the query
-- reads Hourly. Every row and bound a Raw event causes reaches Hourly at that same step.
-- Derivation (Big's clock = Raw's clock through p1; Hourly's clock = p2's output bound, the end
-- of the hour containing Big's clock; a group is complete when Big's clock reaches the hour's end):
--  1 Raw 10:05 A 20 -> Big 10:05; p2 opens (10:00, A); Hourly bound 11:00          -> bound 11:00
--  2 Raw 10:10 B 5  -> filtered; Big clock 10:10; Hourly bound stays 11:00
--  3 Raw 10:50 A 30 -> Big 10:50; (10:00, A) = 50
--  4 Raw 11:05 B 50 -> Big 11:05: (10:00, A) complete, stamped 11:00; Hourly bound 12:00 -> row, bound 12:00
--  5 Raw bound 12:00 -> Big clock 12:00: (11:00, B) complete, stamped 12:00; bound 13:00 -> row, bound 13:00
CREATE STREAM Raw (ticker VARCHAR(10), amount INTEGER);
CREATE STREAM Big (ticker VARCHAR(10), amount INTEGER);
CREATE STREAM Hourly (ticker VARCHAR(10), total BIGINT);
CREATE PUMP p1 AS INSERT INTO Big SELECT STREAM ROWTIME, ticker, amount FROM Raw WHERE amount > 10;
CREATE PUMP p2 AS INSERT INTO Hourly
  SELECT STREAM ticker, SUM(amount) FROM Big GROUP BY FLOOR(Big.ROWTIME TO HOUR), ticker;
SELECT STREAM ROWTIME, ticker, total FROM Hourly;
