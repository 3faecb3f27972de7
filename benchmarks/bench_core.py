"""Engine-core benchmarks (step latency and throughput), each beside its baseline measured in the same run.

(a) Step latency: one injected event to its released row visible in Python, median over
    ``--steps`` steps, for a filter and a two-input UNION ALL; the floor is a bare Structured
    Streaming query with a Python data source and foreachBatch, one event per micro-batch.
(b) Replay throughput: ``--events`` events through the UNION ALL on Spark, beside a plain
    stateless Spark query reading the same log.

    .venv/bin/python benchmarks/bench_core.py [--steps 60] [--events 1000000] [--json out.json]
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
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

BASE = 1160442000000  # 2006-10-10 01:00:00


# --------------------------------------------------------------------------- (a) latency

def floor_latency(spark, steps: int, folder: Path) -> float:
    """A bare streaming query: a Python data source over a file the benchmark appends to, a
    filter, foreachBatch collecting the rows. Append one event, wait until it is in Python."""
    from pyspark.sql.datasource import DataSource, SimpleDataSourceStreamReader

    path = folder / "floor.jsonl"
    path.write_text("")

    class Reader(SimpleDataSourceStreamReader):
        def __init__(self, p):
            self.p = p

        def initialOffset(self):
            return {"n": 0}

        def _lines(self):
            with open(self.p) as f:
                return f.read().splitlines()

        def read(self, start):
            lines = self._lines()
            rows = [tuple(json.loads(l)) for l in lines[start["n"]:]]
            return iter(rows), {"n": len(lines)}

        def readBetweenOffsets(self, start, end):
            return iter([tuple(json.loads(l)) for l in self._lines()[start["n"]:end["n"]]])

    class Source(DataSource):
        @classmethod
        def name(cls):
            return "bench_floor"

        def schema(self):
            return "rowtime BIGINT, ticker STRING, amount INT"

        def simpleStreamReader(self, schema):
            return Reader(self.options["path"])

    spark.dataSource.register(Source)
    got = []
    sq = (spark.readStream.format("bench_floor").option("path", str(path)).load().where("amount > 0")
          .writeStream.foreachBatch(lambda df, _id: got.extend(df.collect()))
          .option("checkpointLocation", str(folder / "floor-ck")).start())
    lat = []
    try:
        for i in range(steps + 10):
            t0 = time.perf_counter()
            with open(path, "a") as f:
                f.write(json.dumps([BASE + i * 1000, "ORCL", 1 + i]) + "\n")
                f.flush()
                os.fsync(f.fileno())
            sq.processAllAvailable()
            assert len(got) == i + 1
            if i >= 10:
                lat.append(time.perf_counter() - t0)
    finally:
        sq.stop()
    return statistics.median(lat)


def filter_latency(steps: int, folder: Path) -> float:
    with Workbench(folder / "filter-ws", engine="spark") as wb:
        wb.execute("CREATE STREAM Orders (ticker VARCHAR(10), amount INTEGER)")
        q = wb.query("SELECT STREAM ROWTIME, ticker, amount FROM Orders WHERE amount > 0")
        lat = []
        for i in range(steps + 10):
            t0 = time.perf_counter()
            wb.insert("Orders", {"ticker": "ORCL", "amount": 1 + i}, rowtime=BASE + i * 1000)
            q.wait()
            assert q.row_count == i + 1
            if i >= 10:
                lat.append(time.perf_counter() - t0)
        return statistics.median(lat)


def union_latency(steps: int, folder: Path) -> float:
    """Rows alternate between P and Q with increasing rowtimes, so every event releases exactly
    the previous row (the one waiting for the other input's clock)."""
    with Workbench(folder / "union-ws", engine="spark") as wb:
        wb.execute("CREATE STREAM P (name VARCHAR(10)); CREATE STREAM Q (name VARCHAR(10))")
        q = wb.query("SELECT STREAM ROWTIME, name FROM P UNION ALL SELECT STREAM ROWTIME, name FROM Q")
        lat = []
        for i in range(steps + 10):
            t0 = time.perf_counter()
            wb.insert("P" if i % 2 == 0 else "Q", {"name": f"r{i}"}, rowtime=BASE + i * 1000)
            q.wait()
            assert q.row_count == i, (q.row_count, i)
            if i >= 10:
                lat.append(time.perf_counter() - t0)
        return statistics.median(lat)


# --------------------------------------------------------------------------- (b) throughput

def throughput(events: int, folder: Path) -> tuple[float, float]:
    spark = get_session()
    with Workbench(folder / "thr-ws", engine="spark", trace=False, reader="parallel") as wb:
        wb.execute("CREATE STREAM P (name VARCHAR(10), v INTEGER); CREATE STREAM Q (name VARCHAR(10), v INTEGER)")
        half = events // 2
        rt = BASE + np.arange(half, dtype=np.int64) * 20
        start = wb.last_step
        wb.load("P", {"ROWTIME": rt, "name": ["p"] * half, "v": np.arange(half, dtype=np.int32)})
        wb.load("Q", {"ROWTIME": rt + 10, "name": ["q"] * half, "v": np.arange(half, dtype=np.int32)})
        cat = wb.catalog
        spec = {"root": str(wb.path), "start": start, "max_events": 0, "parallel": True, "parallelism": os.cpu_count() or 2,
                "streams": [{"uid": cat.streams[s].uid,
                             "fields": [{"name": f.name, "type": f.type.to_json()} for f in cat.streams[s].fields]}
                            for s in ("P", "Q")]}
        plan = analyze("SELECT STREAM ROWTIME, name, v FROM P UNION ALL SELECT STREAM ROWTIME, name, v FROM Q",
                       wb.catalog).query

        def stateless(run: int) -> float:
            n = [0]

            def fb(df, _id):
                n[0] += df.toArrow().num_rows
            t0 = time.perf_counter()
            sq = (spark.readStream.format(NAME).option("spec", json.dumps(spec)).load()
                  .where("ev = 0").selectExpr("step", "rowtime", "s0_c0", "s0_c1", "s1_c0", "s1_c1")
                  .writeStream.foreachBatch(fb).option("checkpointLocation", str(folder / f"base-ck{run}")).start())
            sq.processAllAvailable()
            dt = time.perf_counter() - t0
            sq.stop()
            assert n[0] == events, n
            return dt

        def union(run: int) -> float:
            t0 = time.perf_counter()
            q = wb.lifecycle.start(plan, f"u{run}", start_step=start)   # replays the log from ``start``
            q.wait()
            dt = time.perf_counter() - t0
            assert q.row_count == events - 1       # the last Q row waits for P's clock
            q.stop()
            return dt

        stateless(0), union(0)                     # warm up both paths
        base = min(stateless(1), stateless(2))
        uni = min(union(1), union(2))
        return events / base, events / uni


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--events", type=int, default=1_000_000)
    ap.add_argument("--json", default=None)
    a = ap.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="streamsql-bench-"))
    spark = get_session()
    res = {"machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
           "date": time.strftime("%Y-%m-%d")}
    res["floor_ms"] = floor_latency(spark, a.steps, folder) * 1000
    res["filter_ms"] = filter_latency(a.steps, folder) * 1000
    res["union_ms"] = union_latency(a.steps, folder) * 1000
    res["stateless_eps"], res["union_eps"] = throughput(a.events, folder)
    print(f"step latency (median of {a.steps}):  floor {res['floor_ms']:.0f} ms   "
          f"filter {res['filter_ms']:.0f} ms ({res['filter_ms'] / res['floor_ms']:.2f}x floor)   "
          f"union {res['union_ms']:.0f} ms ({res['union_ms'] / res['floor_ms']:.2f}x floor)   target <= 1.5x")
    print(f"replay of {a.events:,} events:  stateless read {res['stateless_eps']:,.0f} ev/s   "
          f"UNION ALL {res['union_eps']:,.0f} ev/s ({res['union_eps'] / res['stateless_eps']:.2f}x)   target >= 0.5x")
    if a.json:
        Path(a.json).write_text(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
