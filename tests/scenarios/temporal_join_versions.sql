-- A temporal join on a stream of price changes (docs/semantics.md, section 3.5.1): each order
-- meets the price of its product valid at the order's rowtime, once the PriceChanges clock has
-- passed that rowtime (a change at that very time could still come until then).
--  1, 2 PriceChanges: product 10 costs 0.25 and product 20 costs 1.5 from 10:00
--  3 order 1 (product 10) at 10:05: waits, the PriceChanges clock is 10:00
--  4 order 2 (product 20) at 10:20: waits
--  5 PriceChanges: product 10 costs 0.35 from 11:00; the clock passes 10:05 and 10:20: order 1
--    meets 0.25 (the new price is not valid at 10:05), order 2 meets 1.5
--  6 order 3 (product 10) at 11:00: waits, a second change at 11:00 could still come
--  7 order 4 (product 30, no price) at 11:10: waits
--  8 PriceChanges strict bound 11:00: the clock passes 11:00, order 3 meets 0.35
--  9 PriceChanges bound 11:15: order 4 meets no version, LEFT JOIN: NULL
CREATE STREAM Orders (orderId INTEGER, productId INTEGER, units INTEGER);
CREATE STREAM PriceChanges (productId INTEGER, unitPrice DOUBLE);
SELECT STREAM o.ROWTIME, o.orderId, o.productId, p.unitPrice
FROM Orders AS o LEFT JOIN PriceChanges FOR SYSTEM_TIME AS OF o.ROWTIME AS p
ON o.productId = p.productId;
