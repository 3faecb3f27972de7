"""Spark batch queries that check a streaming replay against plain Spark (notebook 07): the same
answers computed from the CSV files with ordinary batch SQL, no bounds involved."""
from __future__ import annotations

from pathlib import Path

from pyspark.sql import functions as F

TRADES = "ts TIMESTAMP, orderId INT, ticker STRING, price DOUBLE, amount INT"
ORDERS = "ts TIMESTAMP, orderId INT, ticker STRING, amount INT"


def hourly(spark, trades: Path, hour_ms: int = 3_600_000) -> list[tuple]:
    """Per hour and ticker of the trade files: ``(end of the hour in epoch ms, ticker, trades,
    volume, volume-weighted price)``, sorted."""
    df = spark.read.option("header", "true").schema(TRADES).csv(str(trades))
    rows = (df.groupBy(F.date_trunc("hour", "ts").alias("hour"), "ticker")
            .agg(F.count("*").alias("trades"), F.sum("amount").alias("volume"),
                 (F.sum(F.col("price") * F.col("amount")) / F.sum("amount")).alias("vwap"))
            .toPandas())
    out = [(int(r.hour.value // 1_000_000) + hour_ms, r.ticker, int(r.trades), int(r.volume), float(r.vwap))
           for r in rows.itertuples()]
    return sorted(out)


def matches(spark, orders: Path, trades: Path) -> list[tuple]:
    """Every order with every trade of the same order id in the ten minutes after it, both ends
    included: ``(order rowtime, orderId, ticker, orderAmount, tradeAmount, price)``, sorted."""
    o = spark.read.option("header", "true").schema(ORDERS).csv(str(orders)).alias("o")
    t = spark.read.option("header", "true").schema(TRADES).csv(str(trades)).alias("t")
    j = o.join(t, (o.orderId == t.orderId) & (t.ts >= o.ts) & (t.ts <= o.ts + F.expr("INTERVAL 10 MINUTES")))
    df = j.selectExpr("unix_millis(o.ts) AS rt", "o.orderId", "o.ticker", "o.amount AS oa", "t.amount AS ta",
                      "t.price").toArrow()
    cols = [df.column(i).to_pylist() for i in range(df.num_columns)]
    return sorted(zip(*cols))
