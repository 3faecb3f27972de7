-- Section 2 of the rules (seed 000, "Named Streams and Rowtime Bounds"): with two producers
-- attached, a row leaves the stream only when both producers' clocks have reached it; a row
-- below its own producer's clock is late; a producer that detaches stops holding the stream back.
CREATE STREAM Orders (ticker VARCHAR(10));
SELECT STREAM ROWTIME, ticker FROM Orders;
