-- A window join: orders and shipments of the same hour, FULL OUTER, on the window and the order.
-- Derived by hand from docs/semantics.md 3.7 and 3.5 (current-row windows on both sides):
-- * Each TUMBLE releases an hour's rows when its own stream's clock reaches the hour's end: Orders'
--   10:00-11:00 rows (orders 5, 6) at its 11:05 row (step 5); Shipments' (5 and 9) at its 11:10 row
--   (step 6). The join can pair a window's rows only when both sides have released it: at step 6,
--   order 5 with shipment 5; order 6 and shipment 9 have no partner in that window, and both sides
--   are past it, so they leave unmatched at the same step, stamped 11:00: the pair first, then the
--   unmatched rows in arrival order (order 6 arrived at the join at step 5, shipment 9 at step 6).
-- * 11:00-12:00: order 7 (Orders releases it at its bound 13:00, step 7) and shipment 6 (Shipments'
--   bound 13:00, step 8): no match; both unmatched at step 8, order 7 first.
CREATE STREAM Orders (orderId INTEGER);
CREATE STREAM Shipments (orderId INTEGER);
SELECT STREAM COALESCE(o.window_end, s.window_end) AS hourEnd, o.orderId, s.orderId AS shipped
FROM TABLE(TUMBLE(TABLE Orders, DESCRIPTOR(ROWTIME), INTERVAL '1' HOUR)) AS o
FULL JOIN TABLE(TUMBLE(TABLE Shipments, DESCRIPTOR(ROWTIME), INTERVAL '1' HOUR)) AS s
ON o.window_start = s.window_start AND o.window_end = s.window_end AND o.orderId = s.orderId;
