"""The join and GROUP BY replays of bench_join.py and bench_aggregate.py on ``local[2]`` and on a
two-worker standalone cluster (one core each, on 127.0.0.1, started here with the scripts of the
pyspark wheel: tests/cluster.py), each beside Spark's native query on the same master. One run
prints them side by side with the ratios.

Spark allows one application per process, so each master runs in a subprocess of this script
(``--worker``); both use the same settings: ``spark.sql.shuffle.partitions`` = buckets (so the
buckets can run on different executors), the parallel log reader, ``trace=False``.

    .venv/bin/python benchmarks/bench_cluster.py [--events 1000000] [--trades 1000000] [--buckets 2]
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

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))


def worker(a) -> dict:
    """One master: load each data set, time the native query and ours (best of two)."""
    import bench_aggregate as BA
    import bench_join as BJ
    from streamsql import Workbench
    from streamsql.engine.runtime.spark.session import get_session
    folder = Path(tempfile.mkdtemp(prefix="streamsql-bench-cluster-"))
    conf = {"spark.sql.shuffle.partitions": str(a.buckets), "spark.executor.memory": a.executor_memory}
    spark = get_session(a.master, conf, log_dir=folder / "logs")
    out = {"master": a.master}
    with Workbench(folder / "join", engine="spark", master=a.master, buckets=a.buckets, trace=False,
                   reader="parallel", spark_conf=conf) as wb:
        wb.execute(BJ.DDL)
        start = wb.last_step
        wb.load(None, BJ.events(a.events, a.keys, 1000))
        total = wb.last_step - start
        BJ.native(spark, wb, start, folder / "join", 0)                        # warm-up
        tn, nn = min(BJ.native(spark, wb, start, folder / "join", r) for r in (1, 2))
        to, no = min(BJ.ours(wb, start, r) for r in (1, 2))
        out["join"] = {"events": total, "native_eps": total / tn, "ours_eps": total / to,
                       "native_rows": nn, "our_rows": no}
    with Workbench(folder / "agg", engine="spark", master=a.master, buckets=a.buckets, trace=False,
                   reader="parallel", spark_conf=conf) as wb:
        wb.execute("CREATE STREAM Trades (ticker VARCHAR(5), price DOUBLE, volume INTEGER)")
        start = wb.last_step
        wb.load("Trades", BA.trades(a.trades, a.tickers))
        BA.native(spark, wb, start, folder / "agg", 0)                         # warm-up
        tn, nn = min(BA.native(spark, wb, start, folder / "agg", r) for r in (1, 2))
        BA.run_query(wb, BA.TUMBLING, start, "warm")
        to, no = min(BA.run_query(wb, BA.TUMBLING, start, f"tumbling{r}") for r in (1, 2))
        out["group_by"] = {"events": a.trades, "native_eps": a.trades / tn, "ours_eps": a.trades / to,
                           "native_rows": nn, "our_rows": no}
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--events", type=int, default=1_000_000, help="orders (and as many trades) for the join")
    ap.add_argument("--keys", type=int, default=200_000)
    ap.add_argument("--trades", type=int, default=1_000_000, help="trades for the GROUP BY")
    ap.add_argument("--tickers", type=int, default=20)
    ap.add_argument("--buckets", type=int, default=2)
    ap.add_argument("--executor-memory", default="2g")
    ap.add_argument("--json", default=None)
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--master", default=None, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.worker:
        print(json.dumps(worker(a)))
        return
    from tests.cluster import StandaloneCluster
    args = ["--events", str(a.events), "--keys", str(a.keys), "--trades", str(a.trades), "--tickers", str(a.tickers),
            "--buckets", str(a.buckets), "--executor-memory", a.executor_memory]
    env = dict(os.environ, SPARK_LOCAL_IP="127.0.0.1")

    def run(master: str) -> dict:
        r = subprocess.run([sys.executable, __file__, "--worker", "--master", master, *args],
                           capture_output=True, text=True, env=env)
        if r.returncode != 0:
            sys.exit(f"the run on {master} failed:\n{r.stderr[-3000:]}")
        return json.loads(r.stdout.strip().splitlines()[-1])

    res = {"machine": f"{platform.machine()}, {os.cpu_count()} cores", "date": time.strftime("%Y-%m-%d"),
           "join_orders": a.events, "group_by_trades": a.trades, "buckets": a.buckets}
    res["local"] = run("local[2]")
    with StandaloneCluster(Path(tempfile.mkdtemp(prefix="streamsql-cluster-")), workers=2, cores=1,
                           memory=a.executor_memory) as c:
        res["cluster"] = run(c.url)
    L, C = res["local"], res["cluster"]
    print(f"{res['machine']}; join: {a.events:,} orders + {a.events:,} trades, {a.keys:,} keys; GROUP BY: "
          f"{a.trades:,} trades, {a.tickers} tickers; {a.buckets} buckets = shuffle partitions")
    print(f"{'':44} {'local[2]':>12} {'cluster 2x1':>12} {'cluster/local':>14}")
    for q, native, title in (("join", "native interval join", "window join"),
                             ("group_by", "native groupBy(window)", "tumbling GROUP BY")):
        for k, label in (("native_eps", f"{native} (ev/s)"), ("ours_eps", f"{title} (ev/s)")):
            print(f"  {label:42} {L[q][k]:>12,.0f} {C[q][k]:>12,.0f} {C[q][k] / L[q][k]:>13.2f}x")
        print(f"  {'ours / native':42} {L[q]['ours_eps'] / L[q]['native_eps']:>11.2f}x "
              f"{C[q]['ours_eps'] / C[q]['native_eps']:>11.2f}x")
        assert L[q]["our_rows"] == C[q]["our_rows"], "the two masters released different row counts"
    if a.json:
        Path(a.json).write_text(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
