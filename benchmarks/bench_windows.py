"""Window shapes (docs/semantics.md 3.7) beside Spark's own window aggregation, in the same run.

``--events`` trades (``--tickers`` tickers, one every 100 ms of event time: about 28 hours for a
million) replayed from the event log through one window aggregation per shape, each beside
Spark's native ``withWatermark("ts", "0 seconds")`` + ``groupBy(window(...) or session_window(...),
ticker)`` in append mode over the same log (COUNT and SUM of volume on both sides):

  - the tumbling ``GROUP BY FLOOR(ROWTIME TO HOUR), ticker`` (as in bench_aggregate.py)
    and ``TUMBLE`` of an hour (window table function)        vs ``window(ts, "1 hour")``
  - ``HOP`` of 7,007 s every hour, aligned to end on the hour   vs ``window(ts, "7007 seconds", "1 hour", "193 seconds")``
  - ``CUMULATE`` of an hour by 15 minutes                    vs ``window(ts, "1 hour", "15 minutes")``: Spark has no
                                                               cumulating window; a hop with as many windows per row
                                                               (four) is the nearest native work
  - ``SESSION`` per ticker, gap ``--gap`` seconds (group window) vs ``session_window(ts, gap)`` (the gap is
                                                               no multiple of the trades' 100 ms, so both make the same sessions)

Each is timed **cold** (started over the loaded log: the time includes Spark planning the query
and starting its Python workers) and **running** (already running over a fresh stream when the
events are committed; timed from their commit until everything is processed), best of two, and
both sides must emit the same number of rows. Prints events/s and the ratio per shape, and the
machine's load average before and after (the machine may be shared: the baseline runs in the
same run, right beside each shape).

    .venv/bin/python benchmarks/bench_windows.py [--events 1000000] [--tickers 20] [--buckets 2]
        [--gap 5.05] [--shapes tumbling,tumble,hop,cumulate,session] [--json FILE]
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

# Spark's own queries are the baselines: both JIT compilers (see bench_aggregate.py)
os.environ.setdefault("STREAMSQL_JIT", "full")

BASE = 1160442000000

AGGS = "COUNT(*) AS trades, SUM(volume) AS volume"
SHAPES = {
    "tumbling": (f"SELECT STREAM ticker, {AGGS} FROM {{s}} GROUP BY FLOOR({{s}}.ROWTIME TO HOUR), ticker",
                 ("window", "1 hour", None, None)),
    "tumble": (f"SELECT STREAM window_start, window_end, ticker, {AGGS} FROM TABLE(TUMBLE(TABLE {{s}}, "
               f"DESCRIPTOR(ROWTIME), INTERVAL '1' HOUR)) GROUP BY window_start, window_end, ticker",
               ("window", "1 hour", None, None)),
    "hop": (f"SELECT STREAM window_start, window_end, ticker, {AGGS} FROM TABLE(HOP(TABLE {{s}}, DESCRIPTOR(ROWTIME), "
            f"INTERVAL '1' HOUR, INTERVAL '7007' SECOND, INTERVAL '193' SECOND)) GROUP BY window_start, window_end, ticker",
            ("window", "7007 seconds", "1 hour", "193 seconds")),
    "cumulate": (f"SELECT STREAM window_start, window_end, ticker, {AGGS} FROM TABLE(CUMULATE(TABLE {{s}}, "
                 f"DESCRIPTOR(ROWTIME), INTERVAL '15' MINUTE, INTERVAL '1' HOUR)) GROUP BY window_start, window_end, ticker",
                 ("window", "1 hour", "15 minutes", None)),
    "session": (f"SELECT STREAM SESSION_END({{s}}.ROWTIME, INTERVAL '{{gap}}' SECOND) AS e, ticker, {AGGS} FROM {{s}} "
                f"GROUP BY SESSION({{s}}.ROWTIME, INTERVAL '{{gap}}' SECOND), ticker",
                ("session", "{gap_ms} milliseconds", None, None)),
}


def trades(n: int, tickers: int, seed: int = 7):
    rng = np.random.default_rng(seed)
    return {"ROWTIME": BASE + np.arange(n, dtype=np.int64) * 100,
            "ticker": [f"T{i:02d}" for i in rng.integers(0, tickers, n)],
            "price": np.round(rng.uniform(10, 200, n), 2),
            "volume": rng.integers(1, 1000, n).astype(np.int32)}


def ours(wb, shape: str, stream: str, gap: int, start: int, name: str):
    sql = SHAPES[shape][0].format(s=stream, gap=gap)
    return wb.lifecycle.start(analyze(sql, wb.catalog).query, name, start_step=start)


def native_query(spark, wb, shape: str, gap: int, start: int, folder: Path, run: str, stream: str):
    """Spark's own window aggregation of the shape over the stream's log; (query, rows counter)."""
    from pyspark.sql import functions as F
    d = wb.catalog.streams[stream]
    spec = {"root": str(wb.path), "start": start, "max_events": 0, "parallel": True, "parallelism": os.cpu_count() or 2,
            "streams": [{"uid": d.uid, "fields": [{"name": f.name, "type": f.type.to_json()} for f in d.fields]}]}
    n = [0]

    def fb(df, _id):
        n[0] += df.toArrow().num_rows
    kind, size, slide, offset = SHAPES[shape][1]
    ts = F.col("ts")
    if kind == "session":
        w = F.session_window(ts, size.format(gap_ms=round(gap * 1000)))
    elif slide is None:
        w = F.window(ts, size)
    else:
        w = F.window(ts, size, slide, offset) if offset else F.window(ts, size, slide)
    df = (spark.readStream.format(NAME).option("spec", json.dumps(spec)).load()
          .where("ev = 0").selectExpr("timestamp_millis(rowtime) AS ts", "s0_c0 AS ticker", "s0_c2 AS volume"))
    sq = (df.withWatermark("ts", "0 seconds").groupBy(w, "ticker").agg({"*": "count", "volume": "sum"})
          .writeStream.outputMode("append").foreachBatch(fb)
          .option("checkpointLocation", str(folder / f"native-{shape}-{run}")).start())
    return sq, n


def cold(spark, wb, shape, gap, start, folder, run, native: bool) -> tuple[float, int]:
    """Started over the loaded log: seconds until everything is processed, and rows emitted."""
    if native:
        # Spark emits a window in the batch after the watermark passes it: let it run that batch
        spark.conf.set("spark.sql.streaming.noDataMicroBatches.enabled", "true")
        t0 = time.perf_counter()
        sq, n = native_query(spark, wb, shape, gap, start, folder, run, "TRADES")
        sq.processAllAvailable()
        dt = time.perf_counter() - t0
        sq.stop()
        spark.conf.set("spark.sql.streaming.noDataMicroBatches.enabled", "false")
        return dt, n[0]
    t0 = time.perf_counter()
    q = ours(wb, shape, "Trades", gap, start, f"{shape}_c{run}")
    q.wait()
    dt = time.perf_counter() - t0
    rows = q.row_count
    q.stop()
    return dt, rows


def running(spark, wb, shape, gap, folder, run, events, tickers, native: bool) -> tuple[float, int]:
    """Already running over a fresh stream (a first thousand trades got it past its start) when
    ``events`` trades are committed at once: seconds from the commit until all are processed."""
    name = f"R{shape}{run}{'n' if native else ''}"
    wb.execute(f"CREATE STREAM {name} (ticker VARCHAR(5), price DOUBLE, volume INTEGER)")
    data = trades(events + 1000, tickers)
    start = wb.last_step
    wb.load(name, {k: v[:1000] for k, v in data.items()})
    if native:
        spark.conf.set("spark.sql.streaming.noDataMicroBatches.enabled", "true")
        sq, n = native_query(spark, wb, shape, gap, start, folder, f"r{run}", name.upper())
        wait, stop = sq.processAllAvailable, sq.stop
    else:
        q = ours(wb, shape, name, gap, start, f"{shape}_r{run}")
        wait, stop = q.wait, q.stop
    wait()
    wb.load(name, {k: v[1000:] for k, v in data.items()})
    t0 = time.perf_counter()
    wait()
    dt = time.perf_counter() - t0
    rows = n[0] if native else q.row_count
    stop()
    spark.conf.set("spark.sql.streaming.noDataMicroBatches.enabled", "false")
    return dt, rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--events", type=int, default=1_000_000)
    ap.add_argument("--tickers", type=int, default=20)
    ap.add_argument("--buckets", type=int, default=2)
    # 5.05 s: trades are 100 ms apart, so no two rows of a ticker are exactly one gap apart, where
    # Spark's session_window() keeps the later row in the session and the semantics open a new one
    ap.add_argument("--gap", type=float, default=5.05, help="session gap, seconds")
    ap.add_argument("--shapes", default=",".join(SHAPES))
    ap.add_argument("--no-running", action="store_true", help="cold runs only")
    ap.add_argument("--json", default=None)
    a = ap.parse_args()
    shapes = [s for s in a.shapes.split(",") if s]
    folder = Path(tempfile.mkdtemp(prefix="streamsql-bench-windows-"))
    spark = get_session()
    load0 = os.getloadavg()
    res = {"machine": f"{platform.machine()}, {os.cpu_count()} cores", "date": time.strftime("%Y-%m-%d %H:%M"),
           "events": a.events, "tickers": a.tickers, "buckets": a.buckets, "gap_s": a.gap,
           "loadavg_before": [round(x, 2) for x in load0], "shapes": {}}
    print(f"{a.events:,} trades, {a.tickers} tickers, {a.buckets} buckets; load average before: "
          f"{', '.join(f'{x:.2f}' for x in load0)} ({os.cpu_count()} cores)")
    with Workbench(folder / "ws", engine="spark", buckets=a.buckets, trace=False, reader="parallel") as wb:
        wb.execute("CREATE STREAM Trades (ticker VARCHAR(5), price DOUBLE, volume INTEGER)")
        start = wb.last_step
        wb.load("Trades", trades(a.events, a.tickers))
        cold(spark, wb, "tumbling", a.gap, start, folder, "w", native=True)        # warm-up, both sides
        cold(spark, wb, "tumbling", a.gap, start, folder, "w", native=False)
        for shape in shapes:
            nat = min(cold(spark, wb, shape, a.gap, start, folder, r, native=True) for r in (1, 2))
            mine = min(cold(spark, wb, shape, a.gap, start, folder, r, native=False) for r in (1, 2))
            assert mine[1] == nat[1], (shape, "cold", mine, nat)
            row = {"rows": mine[1], "cold_eps": a.events / mine[0], "cold_native_eps": a.events / nat[0]}
            if not a.no_running:
                rn = min(running(spark, wb, shape, a.gap, folder, r, a.events, a.tickers, native=True) for r in (1, 2))
                rm = min(running(spark, wb, shape, a.gap, folder, r, a.events, a.tickers, native=False) for r in (1, 2))
                assert rm[1] == rn[1], (shape, "running", rm, rn)
                row.update(running_eps=a.events / rm[0], running_native_eps=a.events / rn[0])
            res["shapes"][shape] = row
            line = (f"  {shape:9} cold {row['cold_eps']:>10,.0f} ev/s, native {row['cold_native_eps']:>10,.0f}: "
                    f"{row['cold_eps'] / row['cold_native_eps']:.2f}x")
            if "running_eps" in row:
                line += (f" | running {row['running_eps']:>10,.0f} ev/s, native {row['running_native_eps']:>10,.0f}: "
                         f"{row['running_eps'] / row['running_native_eps']:.2f}x")
            print(line + f"  ({row['rows']:,} rows both)", flush=True)
    load1 = os.getloadavg()
    res["loadavg_after"] = [round(x, 2) for x in load1]
    print(f"load average after: {', '.join(f'{x:.2f}' for x in load1)}; target: every ratio >= 1.00x")
    if a.json:
        Path(a.json).write_text(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
