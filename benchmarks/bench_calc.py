"""What the calculator-error checks (the semantics, section 1) cost, beside the same queries without them, in the
same run.

(a) Checked vs unchecked Spark SQL, one process: an arithmetic projection and filter (the
    shared scenario's query with a price * qty product) over ``--events`` rows, replayed from the
    log, with the checks rendered (``try_*`` forms and an error flag per branch) and with the
    unchecked forms (``Workbench(..., check_calc_errors=False)``: wrap-around and NULLs).
(b) The benchmarks' own queries (bench_core's UNION ALL, bench_aggregate's tumbling GROUP BY and
    sliding AVG, bench_join's window join), with this tree vs an engine without the checks
    (``--before``, a git revision: extracted with ``git archive``), each in its own process
    (Spark's workers import the engine), alternating after/before/after/before; best of two.

    .venv/bin/python benchmarks/bench_calc.py [--events 1000000] [--before 42769be] [--json out.json]

Prints events/s and the ratio checked / unchecked (target: >= 0.9, i.e. at most 10 % slower).
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
BASE = 1160442000000
BEFORE = "42769be"       # main just before the function table and the checks

ARITH = """SELECT STREAM ROWTIME, a / b AS q, a * 1000 AS big, CAST(s AS INTEGER) AS c, price * qty AS amount
FROM S WHERE a > 0"""
QUERIES = {
    "union": ("CREATE STREAM P (name VARCHAR(10), v INTEGER); CREATE STREAM Q (name VARCHAR(10), v INTEGER)",
              "SELECT STREAM ROWTIME, name, v FROM P UNION ALL SELECT STREAM ROWTIME, name, v FROM Q"),
    "tumbling": ("CREATE STREAM Trades (ticker VARCHAR(5), price DOUBLE, volume INTEGER)",
                 "SELECT STREAM ticker, COUNT(*) AS trades, SUM(volume) AS volume "
                 "FROM Trades GROUP BY FLOOR(Trades.ROWTIME TO HOUR), ticker"),
    "sliding": ("CREATE STREAM Trades (ticker VARCHAR(5), price DOUBLE, volume INTEGER)",
                "SELECT STREAM ROWTIME, ticker, AVG(price) OVER (PARTITION BY ticker RANGE INTERVAL '1' HOUR "
                "PRECEDING) AS avgPrice FROM Trades"),
    "join": ("CREATE STREAM Orders (orderId INTEGER, amount INTEGER); CREATE STREAM Trades (orderId INTEGER, amount INTEGER)",
             "SELECT STREAM ROWTIME, o.orderId, o.amount AS orderAmount, t.amount AS tradeAmount "
             "FROM Orders AS o JOIN Trades OVER (RANGE INTERVAL '10' MINUTE FOLLOWING) AS t ON o.orderId = t.orderId"),
}


def load(wb, kind: str, n: int) -> None:
    rng = np.random.default_rng(7)
    if kind == "arith":
        wb.load("S", {"ROWTIME": BASE + np.arange(n, dtype=np.int64) * 100,
                      "a": rng.integers(-10, 1000, n).astype(np.int32), "b": rng.integers(1, 50, n).astype(np.int32),
                      "s": [str(i % 997) for i in range(n)], "price": np.round(rng.uniform(1, 200, n), 2),
                      "qty": rng.integers(1, 100, n).astype(np.int32)})
    elif kind == "union":
        half = n // 2
        rt = BASE + np.arange(half, dtype=np.int64) * 20
        wb.load("P", {"ROWTIME": rt, "name": ["p"] * half, "v": np.arange(half, dtype=np.int32)})
        wb.load("Q", {"ROWTIME": rt + 10, "name": ["q"] * half, "v": np.arange(half, dtype=np.int32)})
    elif kind in ("tumbling", "sliding"):
        wb.load("Trades", {"ROWTIME": BASE + np.arange(n, dtype=np.int64) * 100,
                           "ticker": [f"T{i:02d}" for i in rng.integers(0, 20, n)],
                           "price": np.round(rng.uniform(10, 200, n), 2),
                           "volume": rng.integers(1, 1000, n).astype(np.int32)})
    else:   # join: orders and trades alternate 50 ms apart, keys among 1,000
        total = n
        rt = BASE + np.arange(total, dtype=np.int64) * 50
        stream = np.where(np.arange(total) % 2 == 0, "Orders", "Trades").astype(object).tolist() + ["Orders", "Trades"]
        end = int(rt[-1]) + 3_600_000
        wb.load(None, {"STREAM": stream, "ROWTIME": np.concatenate([rt, [end, end]]),
                       "BOUND": np.concatenate([np.zeros(total, bool), [True, True]]),
                       "orderId": np.concatenate([rng.integers(0, 1000, total), [0, 0]]).astype(np.int32),
                       "amount": np.concatenate([rng.integers(1, 500, total), [0, 0]]).astype(np.int32)})


def measure(kinds: list[str], n: int, checked_modes: list[bool]) -> dict:
    """Events/s of each query (best of two runs after a warm-up), on this process's engine."""
    from streamsql import Workbench
    from streamsql.engine.sql import analyze
    out = {}
    for kind in kinds:
        ddl, sql = (("CREATE STREAM S (a INTEGER, b INTEGER, s VARCHAR(10), price DOUBLE, qty INTEGER)", ARITH)
                    if kind == "arith" else QUERIES[kind])
        folder = Path(tempfile.mkdtemp(prefix=f"streamsql-bench-calc-{kind}-"))
        with Workbench(folder / "ws", engine="spark", buckets=2, trace=False, reader="parallel") as wb:
            wb.execute(ddl)
            start = wb.last_step
            load(wb, kind, n)
        for checked in checked_modes:
            # a runtime option, told to the runtime when the workspace opens (given only when off: an
            # engine from before the option, which --before runs, has the checks and no such keyword)
            unchecked = {} if checked else {"check_calc_errors": False}
            with Workbench(folder / "ws", engine="spark", buckets=2, trace=False, reader="parallel", **unchecked) as wb:
                plan = analyze(sql, wb.catalog).query
                times = []
                for run in range(3):
                    t0 = time.perf_counter()
                    q = wb.lifecycle.start(plan, f"{kind}{int(checked)}{run}", start_step=start)
                    q.wait()
                    times.append(time.perf_counter() - t0)
                    rows = q.row_count
                    q.stop()
                out[f"{kind}/{'checked' if checked else 'unchecked'}"] = {"eps": n / min(times[1:]), "rows": rows}
    return out


def worker(tree: str, kinds: list[str], n: int) -> dict:
    """Run :func:`measure` in a fresh process importing the engine from ``tree``."""
    env = dict(os.environ, PYTHONPATH=tree + os.pathsep + os.environ.get("PYTHONPATH", ""))
    code = (f"import sys, json; sys.path.insert(0, {tree!r}); sys.path.insert(1, {str(ROOT / 'benchmarks')!r}); "
            f"import streamsql; assert streamsql.__file__.startswith({tree!r}), streamsql.__file__; "
            f"import bench_calc; print('RESULT', json.dumps(bench_calc.measure({kinds!r}, {n}, [True])))")
    p = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, cwd=tree)
    for line in p.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:])
    raise RuntimeError(f"worker on {tree} failed:\n{p.stderr[-3000:]}")


def before_tree(rev: str) -> str:
    d = Path(tempfile.mkdtemp(prefix="streamsql-before-"))
    archive = subprocess.run(["git", "archive", rev, "streamsql"], cwd=ROOT, capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(d)], input=archive, check=True)
    return str(d)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--events", type=int, default=1_000_000)
    ap.add_argument("--before", default=BEFORE, help="git revision of the engine without the checks")
    ap.add_argument("--queries", default="union,tumbling,sliding,join")
    ap.add_argument("--json", default=None)
    a = ap.parse_args()
    sys.path.insert(0, str(ROOT))
    res = {"machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
           "date": time.strftime("%Y-%m-%d"), "events": a.events, "before": a.before}
    # (a) the same process, checks rendered or not
    res["arith"] = measure(["arith"], a.events, [True, False])
    c, u = res["arith"]["arith/checked"], res["arith"]["arith/unchecked"]
    print(f"{a.events:,} events, 2 buckets")
    print(f"  arithmetic projection + filter: checked {c['eps']:,.0f} ev/s, unchecked {u['eps']:,.0f} ev/s "
          f"({c['eps'] / u['eps']:.2f}x; target >= 0.9x)")
    # (b) the benchmarks' queries, this tree vs the engine before the checks, alternating
    kinds = a.queries.split(",")
    old = before_tree(a.before)
    runs = {"after": [], "before": []}
    for _ in range(2):
        runs["after"].append(worker(str(ROOT), kinds, a.events))
        runs["before"].append(worker(old, kinds, a.events))
    res["queries"] = {}
    for k in kinds:
        key = f"{k}/checked"
        after = max(r[key]["eps"] for r in runs["after"])
        before = max(r[key]["eps"] for r in runs["before"])
        res["queries"][k] = {"after_eps": after, "before_eps": before, "ratio": after / before,
                             "rows": [runs["after"][0][key]["rows"], runs["before"][0][key]["rows"]]}
        print(f"  {k:9s}: with checks {after:,.0f} ev/s, before ({a.before}) {before:,.0f} ev/s "
              f"({after / before:.2f}x; target >= 0.9x)")
    if a.json:
        Path(a.json).write_text(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
