"""Window-join benchmark, beside Spark's native stream-stream interval join.

``--events`` orders and as many trades (random order ids), interleaved in time, a bound on each
stream every ``--bound-every`` events, replayed from the event log through

    SELECT STREAM ... FROM Orders AS o
    JOIN Trades OVER (RANGE INTERVAL '10' MINUTE FOLLOWING) AS t ON o.orderId = t.orderId

on Spark, and through Spark's native interval join (both inputs with 10-minute watermarks,
``tts BETWEEN ots AND ots + 10 minutes``) reading the same log. Prints events/s, the ratio, and
the peak number of rows the join kept in state (which the window bounds). Both read the log with
the same source and parallel reader (the native join one source per side, each reading its own
stream's segments; ours one source reading both streams), and each is warmed up by one full run
before the timed one.

    .venv/bin/python benchmarks/bench_join.py [--events 1000000] [--keys 200000] [--buckets 2]
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
JOIN = """SELECT STREAM ROWTIME, o.orderId, o.amount AS orderAmount, t.amount AS tradeAmount
FROM Orders AS o JOIN Trades OVER (RANGE INTERVAL '10' MINUTE FOLLOWING) AS t
ON o.orderId = t.orderId"""
DDL = ("CREATE STREAM Orders (orderId INTEGER, amount INTEGER); "
       "CREATE STREAM Trades (orderId INTEGER, amount INTEGER)")


def events(n: int, keys: int, bound_every: int, seed: int = 11) -> dict:
    """Orders and trades alternate, 50 ms apart; each bound is the stream's next row time."""
    rng = np.random.default_rng(seed)
    total = 2 * n
    stream = np.where(np.arange(total) % 2 == 0, "Orders", "Trades").astype(object)
    rt = BASE + np.arange(total, dtype=np.int64) * 50
    bound = np.zeros(total, dtype=bool)
    ids = rng.integers(0, keys, total).astype(np.int32)
    amount = rng.integers(1, 500, total).astype(np.int32)
    # every ``bound_every`` events per stream, add a bound (the stream's next rowtime)
    b_pos = np.arange(bound_every * 2, total, bound_every * 2)
    ins = np.concatenate([b_pos, b_pos])
    order = np.argsort(np.concatenate([np.arange(total), ins]), kind="stable")
    stream = np.concatenate([stream, np.array(["Orders"] * len(b_pos) + ["Trades"] * len(b_pos), dtype=object)])[order]
    rt = np.concatenate([rt, rt[b_pos], rt[b_pos] + 50])[order]
    bound = np.concatenate([bound, np.ones(2 * len(b_pos), dtype=bool)])[order]
    ids = np.concatenate([ids, np.zeros(2 * len(b_pos), np.int32)])[order]
    amount = np.concatenate([amount, np.zeros(2 * len(b_pos), np.int32)])[order]
    # finally both streams are punctuated past the last window, so every match is released
    end = rt[-1] + 3_600_000
    return {"STREAM": stream.tolist() + ["Orders", "Trades"], "ROWTIME": np.concatenate([rt, [end, end]]),
            "BOUND": np.concatenate([bound, [True, True]]), "orderId": np.concatenate([ids, [0, 0]]).astype(np.int32),
            "amount": np.concatenate([amount, [0, 0]]).astype(np.int32)}


def native(spark, wb, start, folder, run) -> tuple[float, int]:
    from pyspark.sql.functions import expr
    cat = wb.catalog

    def src(stream: str):
        """One side: the same log source and parallel reader as ours, reading that stream's
        segments only (each side reads its stream once; ours reads both streams once)."""
        spec = {"root": str(wb.path), "start": start, "max_events": 0, "parallel": True,
                "parallelism": os.cpu_count() or 2,
                "streams": [{"uid": cat.streams[stream].uid,
                             "fields": [{"name": f.name, "type": f.type.to_json()} for f in cat.streams[stream].fields]}]}
        return spark.readStream.format(NAME).option("spec", json.dumps(spec)).load().where("ev = 0")
    o = src("ORDERS").selectExpr("timestamp_millis(rowtime) AS ots", "s0_c0 AS oid", "s0_c1 AS oamt") \
        .withWatermark("ots", "10 minutes")
    t = src("TRADES").selectExpr("timestamp_millis(rowtime) AS tts", "s0_c0 AS tid", "s0_c1 AS tamt") \
        .withWatermark("tts", "10 minutes")
    n = [0]

    def fb(df, _id):
        n[0] += df.toArrow().num_rows
    t0 = time.perf_counter()
    sq = (o.join(t, expr("oid = tid AND tts >= ots AND tts <= ots + interval 10 minutes"))
          .writeStream.foreachBatch(fb).option("checkpointLocation", str(folder / f"native-ck{run}")).start())
    sq.processAllAvailable()
    dt = time.perf_counter() - t0
    sq.stop()
    return dt, n[0]


def ours(wb, start, run) -> tuple[float, int]:
    plan = analyze(JOIN, wb.catalog).query
    t0 = time.perf_counter()
    q = wb.lifecycle.start(plan, f"join{run}", start_step=start)
    q.wait()
    dt = time.perf_counter() - t0
    n = q.row_count
    q.stop()
    return dt, n


def peak_state(n: int, keys: int, bound_every: int, folder: Path) -> tuple[int, int]:
    """Peak rows kept by the join operator (local runtime: the same operator the Spark buckets
    host), sampled after every 20,000 events; and the rows one window can hold at this event rate."""
    with Workbench(folder / "state-ws", engine="local", trace=False) as wb:
        wb.execute(DDL)
        q = wb.query(JOIN)
        op = q.handle.root.child.op if hasattr(q.handle.root, "child") else q.handle.root.op
        peak = [0]
        q.on_release(lambda b: None)
        data = events(n, keys, bound_every)
        step = 20_000
        total = len(data["ROWTIME"])
        for a in range(0, total, step):
            wb.load(None, {k: v[a:a + step] for k, v in data.items()})
            peak[0] = max(peak[0], op.state_size())
        window_rows = 10 * 60 * 1000 // 50   # rows of both streams arriving within one 10-minute window
        return peak[0], window_rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--events", type=int, default=1_000_000, help="orders (and as many trades)")
    ap.add_argument("--keys", type=int, default=200_000)
    ap.add_argument("--bound-every", type=int, default=1000)
    ap.add_argument("--buckets", type=int, default=2)
    ap.add_argument("--state-events", type=int, default=200_000)
    ap.add_argument("--json", default=None)
    a = ap.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="streamsql-bench-join-"))
    spark = get_session()
    res = {"machine": f"{platform.machine()}, {os.cpu_count()} cores", "date": time.strftime("%Y-%m-%d"),
           "orders": a.events, "trades": a.events, "keys": a.keys, "buckets": a.buckets}
    with Workbench(folder / "ws", engine="spark", buckets=a.buckets, trace=False, reader="parallel") as wb:
        wb.execute(DDL)
        start = wb.last_step
        wb.load(None, events(a.events, a.keys, a.bound_every))
        total = wb.last_step - start
        # each warmed up alike by a first full run (not timed), then timed in the second
        native(spark, wb, start, folder, 0)
        tn, nn = native(spark, wb, start, folder, 1)
        ours(wb, start, 0)
        to, no = ours(wb, start, 1)
    res.update(events_total=total, native_eps=total / tn, ours_eps=total / to, native_rows=nn, our_rows=no)
    print(f"{a.events:,} orders + {a.events:,} trades ({total:,} events with bounds), {a.keys:,} keys, "
          f"{a.buckets} buckets")
    print(f"  native interval join + watermarks : {res['native_eps']:,.0f} ev/s ({nn:,} matches)")
    print(f"  window join                       : {res['ours_eps']:,.0f} ev/s "
          f"({res['ours_eps'] / res['native_eps']:.2f}x native; target >= 0.5x) ({no:,} matches)")
    peak, window = peak_state(a.state_events, a.keys, a.bound_every, folder)
    res.update(peak_state_rows=peak, window_rows=window)
    print(f"  peak rows kept in state: {peak:,} (one 10-minute window holds {window:,} rows of both streams)")
    if a.json:
        Path(a.json).write_text(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
