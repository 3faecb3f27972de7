"""Query start: a new query's first released row on a warm engine, per shape, beside a
bare Structured Streaming query (rate source -> ``foreachBatch``) on the same engine, in one run.

Each figure is the time from ``wb.query(...)`` through the events that release a row to the first
released row, median of ``--runs`` fresh queries per shape (after one untimed query of each shape:
the engine is warm). ``typed``: the same events :data:`TYPING` seconds after the query started (a
student typing them), from the first event to the first row. Printed per shape: ``query()`` (plan, Spark's analysis, the source's start),
``first row`` and the ratio to the bare query. ``--fresh`` adds a fresh interpreter's and a fresh
kernel's first row (with the shared engine up and with it down, beside a bare PySpark
``range(1).collect()``): see ``--help``.

    .venv/bin/python benchmarks/bench_query_start.py [--runs 3] [--remote sc://...] [--fresh] [--json out.json]
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DAY = "2006-10-10 "

SHAPES = {     # {n}: a number per run (fresh streams: a query sees only what enters after it starts)
    "filter": ("CREATE STREAM S{n} (k INTEGER, x INTEGER)",
               "SELECT STREAM ROWTIME, k, x FROM S{n} WHERE x > 1",
               [("S{n}", {"k": 1, "x": 5}, "10:00:00")]),
    "GROUP BY": ("CREATE STREAM S{n} (k INTEGER, x INTEGER)",
                 "SELECT STREAM FLOOR(S{n}.ROWTIME TO MINUTE) AS m, k, SUM(x) AS t FROM S{n} "
                 "GROUP BY FLOOR(S{n}.ROWTIME TO MINUTE), k",
                 [("S{n}", {"k": 1, "x": 5}, "10:00:00"), ("S{n}", {"k": 1, "x": 6}, "10:01:00")]),
    "OVER": ("CREATE STREAM S{n} (k INTEGER, x INTEGER)",
             "SELECT STREAM ROWTIME, k, SUM(x) OVER (PARTITION BY k RANGE INTERVAL '1' MINUTE PRECEDING) AS t FROM S{n}",
             [("S{n}", {"k": 1, "x": 5}, "10:00:00")]),
    "join": ("CREATE STREAM A{n} (k INTEGER, x INTEGER); CREATE STREAM B{n} (k INTEGER, y INTEGER)",
             "SELECT STREAM ROWTIME, a.k, a.x, b.y FROM A{n} AS a JOIN B{n} OVER (RANGE INTERVAL '1' MINUTE PRECEDING) AS b "
             "ON a.k = b.k",
             [("B{n}", {"k": 1, "y": 2}, "10:00:00"), ("A{n}", {"k": 1, "x": 5}, "10:00:30"),
              ("B{n}", None, "10:00:30")]),
    "UNION ALL": ("CREATE STREAM A{n} (k INTEGER, x INTEGER); CREATE STREAM B{n} (k INTEGER, x INTEGER)",
                  "SELECT STREAM ROWTIME, k, x FROM A{n} UNION ALL SELECT STREAM ROWTIME, k, x FROM B{n}",
                  [("A{n}", {"k": 1, "x": 5}, "10:00:00"), ("B{n}", {"k": 2, "x": 6}, "10:00:00")]),
}


def _load() -> str:
    try:
        return open("/proc/loadavg").read().split()[:3].__str__()
    except OSError:
        return "?"


def _noop(df, batch_id):
    df.count()


def bare_query(spark) -> float:
    """A rate source -> foreachBatch query on the same session: until its first batch is done
    (its progress; under Spark Connect the function runs in the server)."""
    t0 = time.monotonic()
    sq = (spark.readStream.format("rate").option("rowsPerSecond", 1).load()
          .writeStream.foreachBatch(_noop)
          .option("checkpointLocation", tempfile.mkdtemp(prefix="streamsql-bench-bare-")).start())
    while not sq.recentProgress:
        if time.monotonic() - t0 > 300:
            raise SystemExit("the bare query had no batch within 300 s")
        time.sleep(0.005)
    t = time.monotonic() - t0
    sq.stop()
    return t


#: seconds between the query cell and the first event in the ``typed`` figure (a student typing)
TYPING = 2.0


def shape_run(wb, n: int, shape: str, typing: float = 0.0) -> dict:
    """``first_row``: from ``wb.query`` with the events right after it; with ``typing``, the events
    come that many seconds after the query started and ``typed`` is from the first event."""
    ddl, sql, events = SHAPES[shape]
    wb.execute(ddl.replace("{n}", str(n)))
    t0 = time.monotonic()
    q = wb.query(sql.replace("{n}", str(n)), name=f"q{n}")
    t_query = time.monotonic() - t0
    if typing:
        time.sleep(max(0.0, typing - t_query))
    t_ev = time.monotonic()
    for stream, values, at in events:
        if values is None:
            wb.punctuate(stream.replace("{n}", str(n)), DAY + at)
        else:
            wb.insert(stream.replace("{n}", str(n)), values, rowtime=DAY + at)
    deadline = time.monotonic() + 300
    while not q.rows:
        if q.error:
            raise SystemExit(f"{shape}: {q.error}")
        if time.monotonic() > deadline:
            raise SystemExit(f"{shape}: no row within 300 s")
        time.sleep(0.005)
    t_row = time.monotonic()
    q.stop()
    if typing:
        return {"typed": t_row - t_ev}
    return {"query": t_query, "first_row": t_row - t0}


def warm_engine(a) -> dict:
    import streamsql
    res = {}
    with streamsql.Workbench(tempfile.mkdtemp(prefix="streamsql-bench-qs-"), remote=a.remote) as wb:
        from streamsql.engine.runtime.spark.connect import get_remote_session
        from streamsql.engine.runtime.spark.session import get_session
        spark = None
        n = 0
        for shape in SHAPES:             # one untimed query of each shape: the engine is warm
            n += 1
            shape_run(wb, n, shape)
        url = wb.runtime.url
        spark = get_remote_session(url) if url else get_session(wb.master, wb.spark_conf)
        bare_query(spark)
        res["bare"] = statistics.median(bare_query(spark) for _ in range(a.runs))
        for shape in SHAPES:
            runs = []
            for _ in range(a.runs):
                n += 1
                runs.append(shape_run(wb, n, shape))
            typed = []
            for _ in range(a.runs):
                n += 1
                typed.append(shape_run(wb, n, shape, TYPING)["typed"])
            res[shape] = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
            res[shape]["typed"] = statistics.median(typed)
            print(f"  {shape:10} query() {res[shape]['query']:.2f} s   first row {res[shape]['first_row']:.2f} s"
                  f"   typed {TYPING:.0f} s later: first event to row {res[shape]['typed']:.2f} s"
                  f"   load {_load()}", flush=True)
    return res


FRESH = r"""
import sys, time, tempfile
t0 = time.monotonic()
import streamsql
wb = streamsql.Workbench(tempfile.mkdtemp(prefix="streamsql-bench-fresh-"))
wb.execute("CREATE STREAM S (x INTEGER)")
q = wb.query("SELECT STREAM ROWTIME, x FROM S WHERE x > 1")
wb.insert("S", {"x": 5}, rowtime="2006-10-10 10:00:00")
q.wait(600)
assert [list(r.values) for r in q.rows] == [[5]], q.rows
print("RESULT", time.monotonic() - t0)
wb.close()
"""

BARE = r"""
import time
t0 = time.monotonic()
from pyspark.sql import SparkSession
s = SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false").getOrCreate()
s.range(1).collect()
print("RESULT", time.monotonic() - t0)
"""

KERNEL = r"""
import sys, time, tempfile
from jupyter_client.manager import start_new_kernel
t0 = time.monotonic()
km, kc = start_new_kernel(kernel_name="python3", cwd=tempfile.mkdtemp(prefix="streamsql-bench-kernel-"))
try:
    code = ("import streamsql, tempfile\nwb = streamsql.Workbench(tempfile.mkdtemp())\n"
            "wb.execute('CREATE STREAM S (x INTEGER)')\nq = wb.query('SELECT STREAM ROWTIME, x FROM S WHERE x > 1')\n"
            "wb.insert('S', {'x': 5}, rowtime='2006-10-10 10:00:00')\nq.wait(600)\nassert q.rows, q.rows\nwb.close()")
    r = kc.execute_interactive(code, timeout=600)
    assert r["content"]["status"] == "ok", r["content"]
    print("RESULT", time.monotonic() - t0)
finally:
    kc.stop_channels(); km.shutdown_kernel(now=True)
"""


def child(code: str, env: dict) -> float:
    # not PySpark's Connect mode of this process (set once it opened a Connect session)
    env = {k: v for k, v in env.items() if not k.startswith(("SPARK_CONNECT_", "SPARK_REMOTE"))}
    t = time.monotonic()
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT, timeout=900)
    if r.returncode:
        raise SystemExit(r.stderr[-3000:])
    line = next(ln for ln in r.stdout.splitlines() if ln.startswith("RESULT "))
    float(line[7:])
    return time.monotonic() - t


def fresh(a) -> dict:
    from streamsql.engine.runtime.spark import server
    base = {**os.environ, "STREAMSQL_PRESTART": "1"}
    was_up = server.running() is not None
    res = {"bare PySpark range(1).collect()": statistics.median(child(BARE, base) for _ in range(a.runs))}
    for mode in ("engine down (in-process Spark)", "engine up"):
        env = dict(base)
        if mode == "engine up":
            server.start(wait=True)
            env["STREAMSQL_ENGINE"] = "shared"
        else:
            env["STREAMSQL_ENGINE"] = "process"
        res[f"interpreter, {mode}"] = statistics.median(child(FRESH, env) for _ in range(a.runs))
        res[f"kernel, {mode}"] = statistics.median(child(KERNEL, env) for _ in range(a.runs))
        for k in (f"interpreter, {mode}", f"kernel, {mode}"):
            print(f"  {k:45} {res[k]:.2f} s   load {_load()}", flush=True)
    if not was_up:
        server.stop()
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--remote", default=None, help="a Spark Connect endpoint (default: as STREAMSQL_ENGINE says)")
    ap.add_argument("--shared", action="store_true", help="the warm queries through the shared engine "
                    "(started if down, in STREAMSQL_ENGINE_DIR)")
    ap.add_argument("--fresh", action="store_true", help="also fresh interpreters and kernels, engine up and down")
    ap.add_argument("--baseline", action="store_true", help="also the warm queries without the fork server "
                    "(STREAMSQL_FORKSERVER=0, in a child process: Spark's per-query Python processes start cold)")
    ap.add_argument("--json", default=None)
    a = ap.parse_args()
    res = {"machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
           "date": time.strftime("%Y-%m-%d %H:%M"), "runs": a.runs, "remote": a.remote, "load_before": _load()}
    started_engine = False
    if a.shared:
        from streamsql.engine.runtime.spark import server
        started_engine = server.running() is None
        a.remote = server.start().url
    elif not a.remote:
        os.environ.setdefault("STREAMSQL_ENGINE", "process")
    where = "the shared engine" if a.shared else (a.remote.split(";")[0] if a.remote else "Spark in this process")
    res["engine"] = where
    print(f"warm engine ({where}), median of {a.runs} fresh queries per shape; load {_load()}")
    res["warm"] = warm_engine(a)
    if a.baseline and not a.remote:
        out = Path(tempfile.mkdtemp(prefix="streamsql-bench-base-")) / "base.json"
        print("baseline: the same without the fork server, in a child process", flush=True)
        r = subprocess.run([sys.executable, __file__, "--runs", str(a.runs), "--json", str(out)],
                           env={**os.environ, "STREAMSQL_FORKSERVER": "0", "STREAMSQL_ENGINE": "process"},
                           cwd=ROOT, timeout=3600)
        if r.returncode == 0:
            res["without fork server"] = json.loads(out.read_text())["warm"]
    bare = res["warm"].get("bare")
    if bare:
        print(f"  {'bare SS':10} first batch {bare:.2f} s (rate source -> foreachBatch, same engine)")
    base = res.get("without fork server")
    for shape in SHAPES:
        w = res["warm"][shape]
        target = 0.5 if shape in ("filter", "UNION ALL") else 1.0
        ratio = f"{w['first_row'] / bare:.1f}x bare" if bare else ""
        was = (f"   without the fork server {base[shape]['first_row']:.2f} s ({base[shape]['first_row'] / base['bare']:.1f}x "
               f"its bare {base['bare']:.2f} s)") if base else ""
        print(f"{shape:10} first row {w['first_row']:.2f} s {ratio:>12}   target <= {target} s "
              f"{'met' if w['first_row'] <= target else 'NOT met'}{was}")
    if a.fresh:
        res["fresh"] = fresh(a)
    res["load_after"] = _load()
    print(f"load after: {res['load_after']}")
    if a.fresh:
        f = res["fresh"]
        bare = f["bare PySpark range(1).collect()"]
        for k, v in f.items():
            print(f"{k:45} {v:6.2f} s  {v / bare:5.2f}x bare PySpark"
                  + ("   target <= 3 s (moonshot 2 s) " + ("met" if v <= 3 else "NOT met") if "engine up" in k else ""))
    if a.json:
        Path(a.json).write_text(json.dumps(res, indent=1))
    if started_engine:        # the engine this run started (an engine that was up stays up)
        server.stop()


if __name__ == "__main__":
    main()
