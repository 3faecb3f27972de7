"""What the per-step trace costs on Spark, each figure beside its baseline measured in
the same run: the same query with ``trace=False``.

(a) Bulk load: ``--events`` events (``Workbench.load``) into a stream read by one GROUP BY, until
    the query has processed them all, with ``trace=True`` (the default: the query keeps the trace of
    its last 10,000 steps) and with ``trace=False``. Target: trace=True at >= 0.5x the speed.
(b) Step latency: one injected event to its effect visible in Python, median over ``--steps``
    steps, for the same GROUP BY and for a window join, with ``trace=True`` and ``trace=False``.

    .venv/bin/python benchmarks/bench_trace.py [--events 200000] [--steps 40] [--json out.json]

``STREAMSQL_CODE=<dir>`` runs another checkout's ``streamsql`` package (e.g. the code before the
trace moved into the Spark stages, for the "before" figures in docs/benchmarks-history.md).
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

sys.path.insert(0, os.environ.get("STREAMSQL_CODE") or str(Path(__file__).resolve().parent.parent))

from streamsql import Workbench  # noqa: E402
from streamsql.engine.runtime.spark.session import get_session  # noqa: E402

BASE = 1160442000000  # 2006-10-10 01:00:00
TICKERS = ["ORCL", "IBM", "MSFT", "AAPL", "YHOO", "SAP", "HPQ", "DELL"]
DDL = "CREATE STREAM Trades (ticker VARCHAR(10), amount INTEGER)"
GROUP_BY = """SELECT STREAM FLOOR(ROWTIME TO MINUTE) AS m, ticker, COUNT(*) AS n, SUM(amount) AS total
FROM Trades GROUP BY FLOOR(ROWTIME TO MINUTE), ticker"""
JOIN_DDL = ("CREATE STREAM Orders (orderId INTEGER, ticker VARCHAR(10), amount INTEGER); "
            "CREATE STREAM Fills (orderId INTEGER, ticker VARCHAR(10), amount INTEGER)")
JOIN = """SELECT STREAM ROWTIME, o.orderId, o.ticker, o.amount, f.amount AS filled
FROM Orders OVER (RANGE INTERVAL '10' SECOND PRECEDING) AS o JOIN Fills AS f ON o.orderId = f.orderId"""


def trades(n: int, start: int = 0) -> dict:
    i = np.arange(start, start + n, dtype=np.int64)
    return {"ROWTIME": BASE + i * 100, "ticker": [TICKERS[k % len(TICKERS)] for k in i.tolist()],
            "amount": (i % 97 + 1).astype(np.int32)}


def last_step(q) -> int:
    t = q.trace[-1]
    return t["step"] if isinstance(t, dict) else t.step     # dicts: the code before typed records


# --------------------------------------------------------------------------- (a) bulk load

def bulk(events: int, trace: bool, folder: Path) -> float:
    """Seconds from the start of the load until the query has processed every event."""
    with Workbench(folder, engine="spark", trace=trace) as wb:
        wb.execute(DDL)
        q = wb.query(GROUP_BY)
        t0 = time.perf_counter()
        wb.load("Trades", trades(events))
        q.wait()
        dt = time.perf_counter() - t0
        groups = events // 600 * len(TICKERS)           # 600 events per minute, one group per ticker
        assert q.row_count >= groups - len(TICKERS), (q.row_count, groups)
        if trace:
            assert last_step(q) == events
            assert len(q.trace) == min(events, 10_000) or not hasattr(wb, "trace_steps")
        else:
            assert len(q.trace) == 0
        return dt


# --------------------------------------------------------------------------- (b) latency

def latency_group_by(steps: int, trace: bool, folder: Path) -> float:
    with Workbench(folder, engine="spark", trace=trace) as wb:
        wb.execute(DDL)
        q = wb.query(GROUP_BY)
        lat = []
        for i in range(steps + 10):
            t0 = time.perf_counter()
            # one row per minute: each step closes the previous minute's group
            wb.insert("Trades", {"ticker": "ORCL", "amount": 1 + i}, rowtime=BASE + i * 60_000)
            q.wait()
            assert q.row_count == i
            if trace:
                assert last_step(q) == i + 1
            if i >= 10:
                lat.append(time.perf_counter() - t0)
        return statistics.median(lat)


def latency_join(steps: int, trace: bool, folder: Path) -> float:
    with Workbench(folder, engine="spark", trace=trace) as wb:
        wb.execute(JOIN_DDL)
        q = wb.query(JOIN)
        lat = []
        for i in range(steps + 10):
            t0 = time.perf_counter()
            # an order, then its fill a second later: every fill releases one row
            if i % 2 == 0:
                wb.insert("Orders", {"orderId": i, "ticker": "ORCL", "amount": i}, rowtime=BASE + i * 1000)
            else:
                wb.insert("Fills", {"orderId": i - 1, "ticker": "ORCL", "amount": i}, rowtime=BASE + i * 1000)
            q.wait()
            if trace:
                assert last_step(q) == i + 1
            if i >= 10:
                lat.append(time.perf_counter() - t0)
        assert q.row_count >= (steps + 10) // 2 - 1, q.row_count
        return statistics.median(lat)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--events", type=int, default=200_000)
    ap.add_argument("--steps", type=int, default=40)
    ap.add_argument("--json", default=None)
    a = ap.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="streamsql-bench-trace-"))
    get_session()
    res = {"machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
           "date": time.strftime("%Y-%m-%d"), "events": a.events, "steps": a.steps}
    bulk(2_000, True, folder / "warm1"), bulk(2_000, False, folder / "warm2")      # JVM, workers, caches
    for trace in (False, True):
        best = min(bulk(a.events, trace, folder / f"bulk-{trace}-{k}") for k in range(2))
        res[f"bulk_eps_trace_{trace}"] = a.events / best
    for name, f in (("group_by", latency_group_by), ("join", latency_join)):
        for trace in (False, True):
            res[f"{name}_ms_trace_{trace}"] = f(a.steps, trace, folder / f"lat-{name}-{trace}") * 1000
    ratio = res["bulk_eps_trace_True"] / res["bulk_eps_trace_False"]
    print(f"bulk load of {a.events:,} events through one GROUP BY on Spark:  trace=False "
          f"{res['bulk_eps_trace_False']:,.0f} ev/s   trace=True {res['bulk_eps_trace_True']:,.0f} ev/s "
          f"({ratio:.2f}x)   target >= 0.5x")
    for name in ("group_by", "join"):
        off, on = res[f"{name}_ms_trace_False"], res[f"{name}_ms_trace_True"]
        print(f"step latency, {name} (median of {a.steps}):  trace=False {off:.0f} ms   trace=True {on:.0f} ms "
              f"({on / off:.2f}x)")
    if a.json:
        Path(a.json).write_text(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
