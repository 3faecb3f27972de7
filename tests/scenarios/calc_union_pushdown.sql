-- Calculator errors above a UNION ALL (the semantics, sections 1 and 5): the engine moves the WHERE and the
-- projection below the merge, but a row they fail on fails where the merge releases it, as the
-- SQL text places them (the first failing select item, left to right, is the one reported).
--  1 X 10:00:00 7/0        held: Y has no clock yet
--  2 X 10:01:00 8/4        held
--  3 Y 10:00:30 a = 0      dropped by the WHERE (no error); Y's clock 10:00:30 releases X 10:00:
--                          7 / 0 divides by zero (X's row, step 3)
--  4 Y 10:02:00 3000/1     Y's clock 10:02 releases X 10:01: q 2, m 8000000; Y 10:02 waits for X
--  5 X bound 10:05         releases Y 10:02: 3000 * 1000000 is beyond INTEGER (Y's row, step 5)
--  6 Y 10:03:00 5/0        released at once (X's clock is 10:05): 5 / 0
CREATE STREAM X (a INTEGER, b INTEGER);
CREATE STREAM Y (a INTEGER, b INTEGER);
SELECT STREAM ROWTIME, a / b AS q, a * 1000000 AS m
FROM (SELECT STREAM ROWTIME, a, b FROM X UNION ALL SELECT STREAM ROWTIME, a, b FROM Y)
WHERE a <> 0;
