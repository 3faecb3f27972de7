-- A WHERE above a UNION ALL whose inputs project with expressions that can fail (ABS, a - 7): the
-- WHERE moves below the merge into each input, and keeps only that input's rows (found by the
-- stream-relation fuzzer: on Spark each input's condition let the other stream's rows through).
--  1 X 10:00 a, 1     v = 1, k = 'a': kept; held, Y has no clock yet
--  2 Y 10:00 b, NULL  v is NULL: kept; Y's clock 10:00 releases both 10:00 rows, X's first
--  3 X 10:01 b, 2     v = 2, k = 'b': dropped
--  4 Y 10:02 c, 4     v = -3, k = 'c': dropped
--  5 X 10:03 a, -3    v = 3, k = 'a': kept; held until Y's clock reaches 10:03
--  6 Y bound 10:05    releases it
CREATE STREAM X (k VARCHAR(3), a INTEGER);
CREATE STREAM Y (k VARCHAR(3), a INTEGER);
SELECT STREAM ROWTIME, k, v
FROM (SELECT STREAM ROWTIME, k, ABS(a) AS v FROM X UNION ALL SELECT STREAM ROWTIME, k, a - 7 AS v FROM Y) AS u
WHERE v IS NULL OR k = 'a';
