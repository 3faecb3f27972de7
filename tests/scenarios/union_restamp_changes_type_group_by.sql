-- The same re-stamped projection over a UNION ALL feeding a GROUP BY: the operator reads the
-- quotients as DECIMALs (found with union_restamp_changes_type: on Spark an operator's input was
-- read with the merge's types).
--  1 X 10:00:30 a, 1   0.25
--  2 Y 10:00:10 b, -2  -0.5
--  3 Y bound 10:01
--  4 X 10:02 a, 3      0.75
--  5 Y bound 11:00
--  6 X bound 11:00     the merge's clock reaches 11:00: the 10:00 hour closes, 3 rows, 0.5
CREATE STREAM X (k VARCHAR(3), a INTEGER);
CREATE STREAM Y (k VARCHAR(3), a INTEGER);
SELECT STREAM FLOOR(v.ROWTIME TO HOUR) AS ROWTIME, COUNT(*) AS n, SUM(v.q) AS s
FROM (SELECT STREAM FLOOR(u.ROWTIME TO MINUTE) AS ROWTIME, u.a / 4.0 AS q
      FROM (SELECT STREAM ROWTIME, k, a FROM X UNION ALL SELECT STREAM ROWTIME, k, a FROM Y) AS u) AS v
GROUP BY FLOOR(v.ROWTIME TO HOUR);
