"""Aggregation benchmarks (streaming GROUP BY and OVER windows), beside Spark's native aggregation in the same run.

``--events`` trades (``--tickers`` tickers, one every 100 ms of event time, i.e. about 28 hours
for a million) replayed from the event log through:
  - a tumbling per-ticker GROUP BY (hourly COUNT and SUM of volume),
  - a one-hour sliding per-ticker AVG (OVER RANGE INTERVAL '1' HOUR PRECEDING),
  - Spark's native ``withWatermark`` + ``groupBy(window(1 hour), ticker)`` over the same log,
  - a tumbling float AVG (``AVG(price)`` of a DOUBLE, summed exactly and pre-combined in the log
    source) and the same with a ``WHERE price > 50`` before it (filtered and pre-combined in the log source too),
    each beside Spark's native ``avg(price)`` (with the same ``where``) over the same log.
Each is timed twice: started over the loaded log (start-up included: Spark plans the query and
starts its Python workers) and as a query already running when the events are committed.
The sliding window's own reference is Spark's batch window function over the same rows
(``avg(price) OVER (PARTITION BY ticker ORDER BY ts RANGE BETWEEN 3600 PRECEDING AND CURRENT
ROW)``, from a cached in-memory DataFrame, so reading the data is not in its time). The OVER
operator is also timed alone, in-process on the same rows: its batch path (``on_rows_values``)
beside its row-by-row path; both give the sum of the averages, checked against Spark's.
Prints events/s and the ratios; also the state-bound check: state rows of the sliding window
after 10% of the events and after all of them.

    .venv/bin/python benchmarks/bench_aggregate.py [--events 1000000] [--tickers 20] [--buckets 2]
        [--row-path-events N]   # rows for the row-by-row operator timing (default: --events)
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from streamsql import Workbench  # noqa: E402
from streamsql.engine.runtime.spark.session import get_session  # noqa: E402
from streamsql.engine.runtime.spark.source import NAME  # noqa: E402
from streamsql.engine.sql import analyze  # noqa: E402

#: Spark's own queries here are the baselines: the driver JVM runs with both compilers (C1 and C2), at
#: which Spark's JVM-only hot loops are fastest (the default, STREAMSQL_JIT=quick, runs them several
#: times slower; docs/benchmarks-history.md, "The quick compiler"), unless the environment says otherwise
os.environ.setdefault("STREAMSQL_JIT", "full")

BASE = 1160442000000
TUMBLING = """SELECT STREAM ticker, COUNT(*) AS trades, SUM(volume) AS volume
FROM Trades GROUP BY FLOOR(Trades.ROWTIME TO HOUR), ticker"""
FLOAT_AVG = """SELECT STREAM ticker, COUNT(*) AS trades, AVG(price) AS avgPrice
FROM Trades GROUP BY FLOOR(Trades.ROWTIME TO HOUR), ticker"""
FLOAT_AVG_WHERE = """SELECT STREAM ticker, COUNT(*) AS trades, AVG(price) AS avgPrice
FROM Trades WHERE price > 50 GROUP BY FLOOR(Trades.ROWTIME TO HOUR), ticker"""
SLIDING = """SELECT STREAM ROWTIME, ticker,
  AVG(price) OVER (PARTITION BY ticker RANGE INTERVAL '1' HOUR PRECEDING) AS avgPrice
FROM Trades"""
SPARK_WINDOW = """SELECT sum(avgPrice), count(*) FROM (
  SELECT avg(price) OVER (PARTITION BY ticker ORDER BY ts RANGE BETWEEN 3600 PRECEDING AND CURRENT ROW) AS avgPrice
  FROM trades_batch)"""


def trades(n: int, tickers: int, seed: int = 7):
    rng = np.random.default_rng(seed)
    return {"ROWTIME": BASE + np.arange(n, dtype=np.int64) * 100,
            "ticker": [f"T{i:02d}" for i in rng.integers(0, tickers, n)],
            "price": np.round(rng.uniform(10, 200, n), 2),
            "volume": rng.integers(1, 1000, n).astype(np.int32)}


def run_query(wb, sql, start, name) -> tuple[float, int]:
    plan = analyze(sql, wb.catalog).query
    t0 = time.perf_counter()
    q = wb.lifecycle.start(plan, name, start_step=start)
    q.wait()
    dt = time.perf_counter() - t0
    n = q.row_count
    q.stop()
    return dt, n


def native_query(spark, wb, start, folder, run, stream="TRADES", aggs=None, where=None):
    """Spark's own windowed aggregation over the stream's log (``aggs``: by default COUNT and SUM
    of volume; ``where`` on ``price``); returns (query, rows counter)."""
    d = wb.catalog.streams[stream]
    spec = {"root": str(wb.path), "start": start, "max_events": 0, "parallel": True, "parallelism": os.cpu_count() or 2,
            "streams": [{"uid": d.uid, "fields": [{"name": f.name, "type": f.type.to_json()} for f in d.fields]}]}
    n = [0]

    def fb(df, _id):
        n[0] += df.toArrow().num_rows
    from pyspark.sql.functions import window
    df = (spark.readStream.format(NAME).option("spec", json.dumps(spec)).load()
          .where("ev = 0").selectExpr("timestamp_millis(rowtime) AS ts", "s0_c0 AS ticker", "s0_c1 AS price",
                                      "s0_c2 AS volume"))
    if where:
        df = df.where(where)
    sq = (df.withWatermark("ts", "0 seconds")
          .groupBy(window("ts", "1 hour"), "ticker")
          .agg(aggs or {"*": "count", "volume": "sum"})
          .writeStream.outputMode("append").foreachBatch(fb)
          .option("checkpointLocation", str(folder / f"native-ck{run}")).start())
    return sq, n


def running(spark, wb, folder, kind: str, run: int, events: int, tickers: int, **native_kw) -> tuple[float, int]:
    """Throughput of a query already running: a fresh stream, a first thousand trades to get the
    query past its start (Spark plans it, starts its Python workers), then ``events`` trades
    loaded at once; timed from their commit to the query having processed them all."""
    name = f"R{run}"
    wb.execute(f"CREATE STREAM {name} (ticker VARCHAR(5), price DOUBLE, volume INTEGER)")
    data = trades(events + 1000, tickers)
    start = wb.last_step
    wb.load(name, {k: v[:1000] for k, v in data.items()})
    if kind == "native":
        spark.conf.set("spark.sql.streaming.noDataMicroBatches.enabled", "true")
        sq, n = native_query(spark, wb, start, folder, f"r{run}", name.upper(), **native_kw)
        wait, stop = sq.processAllAvailable, sq.stop
    else:
        sql = {"tumbling": TUMBLING, "sliding": SLIDING, "float_avg": FLOAT_AVG,
               "float_avg_where": FLOAT_AVG_WHERE}[kind].replace("Trades", name)
        q = wb.lifecycle.start(analyze(sql, wb.catalog).query, f"{kind}_r{run}", start_step=start)
        wait, stop = q.wait, q.stop
    wait()
    wb.load(name, {k: v[1000:] for k, v in data.items()})
    t0 = time.perf_counter()
    wait()
    dt = time.perf_counter() - t0
    rows = n[0] if kind == "native" else q.row_count
    stop()
    spark.conf.set("spark.sql.streaming.noDataMicroBatches.enabled", "false")
    return dt, rows


def native(spark, wb, start, folder, run, **kw) -> tuple[float, int]:
    # Spark emits a window only in the batch after the watermark passes it: let it run that batch
    spark.conf.set("spark.sql.streaming.noDataMicroBatches.enabled", "true")
    t0 = time.perf_counter()
    sq, n = native_query(spark, wb, start, folder, run, **kw)
    sq.processAllAvailable()
    dt = time.perf_counter() - t0
    sq.stop()
    spark.conf.set("spark.sql.streaming.noDataMicroBatches.enabled", "false")
    return dt, n[0]


def state_bound(events: int, tickers: int, folder: Path) -> tuple[int, int]:
    """State rows of the sliding window after 10% and after 100% of the events (local runtime:
    the operator is the same object the Spark buckets host)."""
    with Workbench(folder / "state-ws", engine="local", trace=False) as wb:
        wb.execute("CREATE STREAM Trades (ticker VARCHAR(5), price DOUBLE, volume INTEGER)")
        q = wb.query(SLIDING)
        data = trades(events, tickers)
        tenth = events // 10
        sizes = []
        for lo, hi in ((0, tenth), (tenth, events)):
            wb.load("Trades", {k: v[lo:hi] for k, v in data.items()})
            sizes.append(q.handle.root.child.op.state_size() if hasattr(q.handle.root, "child")
                         else q.handle.root.op.state_size())
        return sizes[0], sizes[1]


def spark_window(spark, data, n: int) -> tuple[float, float]:
    """Spark's batch window function over the first ``n`` trades (cached in memory first): the
    seconds it takes and the sum of the averages it computes."""
    import pandas as pd
    pdf = pd.DataFrame({"ts": data["ROWTIME"][:n] / 1000.0, "ticker": data["ticker"][:n], "price": data["price"][:n]})
    df = spark.createDataFrame(pdf).cache()
    df.count()
    df.createOrReplaceTempView("trades_batch")
    spark.sql(SPARK_WINDOW.replace("trades_batch", "(SELECT * FROM trades_batch LIMIT 20000)")).collect()  # warm-up
    t0 = time.perf_counter()
    total, count = spark.sql(SPARK_WINDOW).collect()[0]
    dt = time.perf_counter() - t0
    df.unpersist()
    assert count == n
    return dt, float(total)


def operator_alone(wb, data, n: int, row_path: bool) -> tuple[float, float]:
    """The sliding query's OVER operator in-process on the first ``n`` trades, one step per
    trade: seconds for the batch path (or the row path) and the sum of the averages."""
    from streamsql.engine.operators.base import encode_ints
    from streamsql.engine.operators.window import WindowOp
    from streamsql.engine.operators.rowbatch import RowBatch, step_rows
    from streamsql.engine.plan import Window
    node = analyze(SLIDING, wb.catalog).query.root
    while not isinstance(node, Window):
        node = node.inputs()[0]
    op = WindowOp(node)
    steps = np.arange(1, n + 1, dtype=np.int64)
    rts = data["ROWTIME"][:n]
    rows = list(zip(data["ticker"][:n], data["price"][:n].tolist(), data["volume"][:n].tolist()))
    batch = RowBatch(steps, rts, rows, [encode_ints(int(i), 0) for i in steps], steps, rts)
    t0 = time.perf_counter()
    if row_path:
        values = [c.row[-1] for c in step_rows(op, batch)]
    else:
        values = op.on_rows_values(batch)[1][0]
    dt = time.perf_counter() - t0
    return dt, float(np.sum(values))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--events", type=int, default=1_000_000)
    ap.add_argument("--tickers", type=int, default=20)
    ap.add_argument("--buckets", type=int, default=2)
    ap.add_argument("--state-events", type=int, default=1_000_000)
    ap.add_argument("--row-path-events", type=int, default=None)
    ap.add_argument("--json", default=None)
    a = ap.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="streamsql-bench-agg-"))
    spark = get_session()
    res = {"machine": f"{platform.machine()}, {os.cpu_count()} cores", "date": time.strftime("%Y-%m-%d"),
           "events": a.events, "tickers": a.tickers, "buckets": a.buckets}
    with Workbench(folder / "ws", engine="spark", buckets=a.buckets, trace=False, reader="parallel") as wb:
        wb.execute("CREATE STREAM Trades (ticker VARCHAR(5), price DOUBLE, volume INTEGER)")
        start = wb.last_step
        wb.load("Trades", trades(a.events, a.tickers))
        native(spark, wb, start, folder, 0)                       # warm-up
        tn, nn = min(native(spark, wb, start, folder, r) for r in (1, 2))
        run_query(wb, TUMBLING, start, "warm")
        tt, nt = min(run_query(wb, TUMBLING, start, f"tumbling{r}") for r in (1, 2))
        ts_, ns = run_query(wb, SLIDING, start, "sliding")
        # float AVG (exact sums, pre-combined), plain and filtered, each beside native avg(price)
        floats = {}
        for key, sql, where in (("float_avg", FLOAT_AVG, None), ("float_avg_where", FLOAT_AVG_WHERE, "price > 50")):
            kw = {"aggs": {"*": "count", "price": "avg"}, "where": where}
            fn_ = min(native(spark, wb, start, folder, f"{key}{r}", **kw) for r in (1, 2))
            ft = min(run_query(wb, sql, start, f"{key}{r}") for r in (1, 2))
            assert ft[1] == fn_[1], (key, ft, fn_)
            # and through queries already running (start-up excluded), as for the tumbling one
            rfn = min(running(spark, wb, folder, "native", f"{key}n{r}", a.events, a.tickers, **kw) for r in (1, 2))
            rft = min(running(spark, wb, folder, key, f"{key}{r}", a.events, a.tickers) for r in (1, 2))
            assert rft[1] == rfn[1], (key, rft, rfn)
            floats[key] = (ft, fn_, rft, rfn)
        # the same, through queries already running (no per-query start-up in the figure)
        rn = min(running(spark, wb, folder, "native", r, a.events, a.tickers) for r in (1, 2))
        rt = min(running(spark, wb, folder, "tumbling", r, a.events, a.tickers) for r in (3, 4))
        # the sliding window's references: Spark's batch window function, and the operator alone
        data = trades(a.events, a.tickers)
        tw, spark_sum = spark_window(spark, data, a.events)
        tb, batch_sum = operator_alone(wb, data, a.events, row_path=False)
        nr = a.row_path_events or a.events
        tr, row_sum = operator_alone(wb, data, nr, row_path=True)
        if nr == a.events:
            assert abs(row_sum - batch_sum) <= 1e-9 * abs(batch_sum), (row_sum, batch_sum)
        assert abs(spark_sum - batch_sum) <= 1e-6 * abs(spark_sum), (spark_sum, batch_sum)
    res.update(spark_window_eps=a.events / tw, operator_batch_eps=a.events / tb, operator_rows_eps=nr / tr)
    res.update(running_native_eps=a.events / rn[0], running_tumbling_eps=a.events / rt[0])
    for key, (ft, fn_, rft, rfn) in floats.items():
        res[f"{key}_eps"], res[f"{key}_native_eps"], res[f"{key}_rows"] = a.events / ft[0], a.events / fn_[0], ft[1]
        res[f"running_{key}_eps"], res[f"running_{key}_native_eps"] = a.events / rft[0], a.events / rfn[0]
    res.update(native_eps=a.events / tn, tumbling_eps=a.events / tt, sliding_eps=a.events / ts_,
               native_rows=nn, tumbling_rows=nt, sliding_rows=ns)
    print(f"{a.events:,} trades, {a.tickers} tickers, {a.buckets} buckets")
    print(f"  native groupBy(window) + watermark : {res['native_eps']:,.0f} ev/s ({nn} groups emitted)")
    print(f"  tumbling GROUP BY                  : {res['tumbling_eps']:,.0f} ev/s "
          f"({res['tumbling_eps'] / res['native_eps']:.2f}x native; target >= 0.5x) ({nt} rows)")
    for key, label in (("float_avg", "tumbling float AVG(price)          "),
                       ("float_avg_where", "  the same, WHERE price > 50       ")):
        ours, theirs = res[f"{key}_eps"], res[f"{key}_native_eps"]
        print(f"  {label}: {ours:,.0f} ev/s, native avg {theirs:,.0f} ev/s ({ours / theirs:.2f}x native; "
              f"target >= 0.5x) ({res[f'{key}_rows']} rows)")
        ours, theirs = res[f"running_{key}_eps"], res[f"running_{key}_native_eps"]
        print(f"  {'':35}  running: {ours:,.0f} ev/s, native {theirs:,.0f} ev/s ({ours / theirs:.2f}x native)")
    print(f"  sliding 1-hour AVG OVER            : {res['sliding_eps']:,.0f} ev/s "
          f"({res['sliding_eps'] / res['native_eps']:.2f}x native; {res['sliding_eps'] / res['spark_window_eps']:.2f}x "
          f"Spark's batch window function; target >= 0.5x the batch window function) ({ns} rows)")
    print(f"  Spark batch window function        : {res['spark_window_eps']:,.0f} rows/s "
          f"(avg OVER RANGE BETWEEN 3600 PRECEDING AND CURRENT ROW, in-memory input)")
    print(f"  OVER operator alone, in-process    : batch path {res['operator_batch_eps']:,.0f} rows/s, row path "
          f"{res['operator_rows_eps']:,.0f} rows/s ({res['operator_batch_eps'] / res['operator_rows_eps']:.1f}x); "
          f"batch path {res['operator_batch_eps'] / res['spark_window_eps']:.1f}x Spark's window function")
    print(f"  running queries (start-up excluded): native {res['running_native_eps']:,.0f} ev/s, tumbling "
          f"{res['running_tumbling_eps']:,.0f} ev/s ({res['running_tumbling_eps'] / res['running_native_eps']:.2f}x "
          f"native; target >= 0.5x) ({rn[1]} and {rt[1]} rows)")
    s1, s2 = state_bound(a.state_events, a.tickers, folder)
    res.update(state_rows_10pct=s1, state_rows_100pct=s2)
    print(f"  sliding window state rows: {s1:,} after {a.state_events // 10:,} events, {s2:,} after "
          f"{a.state_events:,} ({(s2 - s1) / s1 * 100:+.1f}%; bound: within 10%)")
    if a.json:
        Path(a.json).write_text(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
