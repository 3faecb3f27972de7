-- A projection above a UNION ALL that stamps a new ROWTIME (FLOOR) runs after the merge, and may
-- change a column's type: a / 4.0 is a DECIMAL, not the merged INTEGER (found by the
-- stream-relation fuzzer: on Spark the quotient was cast back to the merge's INTEGER, 0.75 -> 0).
--  1 X 10:00:30 a, 1   0.25; held, Y has no clock yet
--  2 Y 10:00:10 b, -2  -0.5; the merge's clock is 10:00:10: released, stamped 10:00
--  3 Y bound 10:01     releases X's 10:00:30 row, stamped 10:00
--  4 X 10:02 a, 3      0.75; held until Y's clock reaches 10:02
--  5 Y bound 10:03     releases it
CREATE STREAM X (k VARCHAR(3), a INTEGER);
CREATE STREAM Y (k VARCHAR(3), a INTEGER);
SELECT STREAM FLOOR(u.ROWTIME TO MINUTE) AS ROWTIME, k, u.a / 4.0 AS q
FROM (SELECT STREAM ROWTIME, k, a FROM X UNION ALL SELECT STREAM ROWTIME, k, a FROM Y) AS u;
