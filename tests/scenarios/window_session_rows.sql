-- The sessions of window_session as a SESSION window table function: every order comes out with
-- its session's start and end when the session completes, stamped with the end. Derived by hand
-- from docs/semantics.md 3.7 (the sessions are those derived in window_session.sql):
-- * step 4: product 20's first session [10:10, 10:40): order 2.
-- * step 6: product 20's second session [10:40, 11:10): order 4.
-- * step 8: product 10's session [10:00, 11:45): orders 1, 3, 5, 6, in arrival order.
CREATE STREAM Orders (productId INTEGER, orderId INTEGER, units INTEGER);
SELECT STREAM productId, orderId, window_start, window_end
FROM TABLE(SESSION(TABLE Orders PARTITION BY productId, DESCRIPTOR(ROWTIME), INTERVAL '30' MINUTE));
