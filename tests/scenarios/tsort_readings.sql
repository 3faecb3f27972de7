-- T-sort (the semantics, section 3.6): readings arrive late and out of order (ROWTIME is the arrival time,
-- ts the measurement time); ORDER BY ts ... WITHIN INTERVAL '1' MINUTE puts them back in ts order.
-- Derivation (W = highest ts seen minus 1 minute; a row is released once ts <= W, and a row with
-- ts < W is late; every ts here is at or before the input clock, so rule 1 never holds a row back):
--  1 ts 10:00:10 A1  W 09:59:10          bound 09:59:10 (printed)
--  2 ts 10:00:05 B2  W 09:59:10          held
--  3 ts 10:00:50 A3  W 09:59:50          bound 09:59:50 (printed)
--  4 ts 10:01:15 B4  W 10:00:15          releases B2 10:00:05, A1 10:00:10; bound 10:00:15 (printed)
--  5 ts 10:00:12 C5  late (10:00:12 < W 10:00:15): refused, for the error stream
--  6 ts NULL     C6  dropped
--  7 ts 10:02:00 A7  W 10:01:00          releases A3 10:00:50; bound 10:01:00 (printed)
--  8 ts 10:01:50 B8  not late (>= W)     held
--  9 ts 10:01:50 C9  not late            held (same ts as B8)
-- 10 ts 10:03:30 A10 W 10:02:30          releases B4 10:01:15, then ts 10:01:50 by val DESC: C9, B8,
--                                        then A7 10:02:00; bound 10:02:30 (printed)
-- 11 bound 10:10 on Readings: ignored by the T-sort (A10 stays held)
-- 12 ts 10:02:30 B12 = W, not late: released at once, stamped 10:02:30 (no new bound line)
CREATE STREAM Readings (ts TIMESTAMP, sensor VARCHAR(5), val INTEGER);
SELECT STREAM ts AS ROWTIME, sensor, val
FROM Readings
ORDER BY ts, val DESC WITHIN INTERVAL '1' MINUTE;
