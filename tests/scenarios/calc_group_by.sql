-- Calculator errors in a streaming GROUP BY (the semantics, section 1): clauses in SQL's logical order.
-- An aggregate's argument that cannot be computed, or a SUM that would leave its type (SUM(x) of
-- BIGINT), refuses the row from every aggregate (COUNT(*) too); HAVING fails where the group is
-- evaluated, at the step that completes it.
--  1 10:00 a  4/2  x 2**62       group (10:00, a): n 1, q 2, sx 2**62, SUM(a) 4
--  2 10:05 a  3/0                a / b divides by zero: refused
--  3 10:10 a  6/3  x 2**62       SUM(x) would be 2**63: refused (the group keeps 2**62)
--  4 10:20 b  5/1                group (10:00, b): SUM(a) 5
--  5 10:30 b  -5/1               SUM(a) 0
--  6 bound 11:00                 both groups complete, by key: a passes HAVING (100 / 4 = 25 > 1),
--                                b's HAVING divides by zero (the group's row, stamped 11:00)
--  7 11:10 a  2/1  x -1          group (11:00, a)
--  8 bound 12:00                 released: 100 / 2 = 50 > 1
CREATE STREAM S (k VARCHAR(3), a INTEGER, b INTEGER, x BIGINT);
SELECT STREAM FLOOR(S.ROWTIME TO HOUR) AS h, k, COUNT(*) AS n, SUM(a / b) AS q, SUM(x) AS sx
FROM S GROUP BY FLOOR(S.ROWTIME TO HOUR), k
HAVING 100 / SUM(a) > 1;
