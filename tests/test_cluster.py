"""The Spark runtime on a real standalone cluster: one master and two workers of one core each on
127.0.0.1, started with the scripts of the pyspark wheel (tests/cluster.py). Replays run in
subprocesses (``streamsql replay --master spark://...``): one Spark application per process, and
this process's own (local) session stays out of the way.

1. Every scenario (streamsql/scenarios and tests/scenarios), four events per micro-batch (several batches per scenario,
   several steps in a batch) and four buckets: the lines the command prints are the local
   runtime's, bounds included. (One event per micro-batch took 13 minutes of CI's 40 on two
   cores; batch sizes 1, 7 and all are checked against the local runtime on local Spark by
   tests/test_runtimes_agree.py.)
2. An executor killed (``kill -9``) in the middle of replaying 200,000 events through a GROUP BY
   over a join: Spark reruns the lost tasks (visible in its event log) and the output is a clean
   run's, with no row lost or repeated.
"""
from __future__ import annotations

import io
import json
import os
import random
import signal
import subprocess
import sys
import time
import urllib.request
from datetime import datetime, timezone
from pathlib import Path

import pytest

from conftest import ALL_SCENARIOS

from streamsql.engine.cli import replay
from streamsql.engine.events import read_events

from cluster import StandaloneCluster, alive, cmdline, free_port

pytestmark = pytest.mark.cluster

ROOT = Path(__file__).resolve().parent.parent
HERE = Path(__file__).parent
SCENARIOS = ALL_SCENARIOS
STREAMSQL = str(Path(sys.executable).parent / "streamsql")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    c = StandaloneCluster(tmp_path_factory.mktemp("cluster"), workers=2, cores=1, memory="1g")
    c.start(timeout=240)
    try:
        yield c
    finally:
        c.stop()
    assert not any(alive(p) for p in c.stopped), "a cluster process outlived the cluster"


def _env() -> dict:
    # the driver binds where the executors reach it; everything here is on 127.0.0.1
    return dict(os.environ, SPARK_LOCAL_IP="127.0.0.1")


def _local_lines(base: Path) -> list[str]:
    out = io.StringIO()
    replay(base.with_suffix(".sql").read_text(), read_events(f"{base}.events.jsonl"), engine="local",
           bounds=True, out=out)
    return out.getvalue().splitlines()


@pytest.mark.timeout(900)
def test_every_scenario_on_the_cluster_equals_the_local_runtime(cluster):
    r = subprocess.run([sys.executable, str(HERE / "cluster_replays.py"), "--master", cluster.url,
                        "--batch", "4", "--buckets", "4", *map(str, SCENARIOS)],
                       capture_output=True, text=True, env=_env(), timeout=840, cwd=ROOT)
    assert r.returncode == 0, r.stderr[-3000:]
    got = {Path(d["base"]).name: d for d in map(json.loads, r.stdout.splitlines())}
    assert sorted(got) == sorted(b.name for b in SCENARIOS)
    for base in SCENARIOS:
        d = got[base.name]
        assert d["rc"] == 0, (base.name, d["stderr"])
        want = _local_lines(base)
        assert want, base.name
        assert d["lines"] == want, base.name


# --------------------------------------------------------------------------- an executor killed

KILL_SQL = """CREATE STREAM Orders (orderId INTEGER, ticker VARCHAR(10), amount INTEGER);
CREATE STREAM Trades (orderId INTEGER, amount INTEGER);
SELECT STREAM ticker, COUNT(*) AS fills, SUM(tradeAmount) AS filled
FROM (SELECT STREAM ROWTIME, o.ticker, t.amount AS tradeAmount
      FROM Orders AS o JOIN Trades OVER (RANGE INTERVAL '10' MINUTE FOLLOWING) AS t
      ON o.orderId = t.orderId) AS m
GROUP BY FLOOR(m.ROWTIME TO MINUTE), ticker
"""
EVENTS = 200_000
BATCH = 10_000


def _ts(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]


def write_events(path: Path, n: int = EVENTS, seed: int = 5) -> None:
    """Orders and trades alternating 50 ms apart (random order ids, so about one trade in four
    matches an order within its ten minutes), then a bound on both an hour after the last."""
    rng = random.Random(seed)
    base = 1160474400000                       # 2006-10-10 10:00:00
    tickers = ["ORCL", "IBM", "SAP", "MSFT", "AAPL"]
    with open(path, "w") as f:
        for i in range(n):
            if i % 2 == 0:
                ev = {"stream": "Orders", "rowtime": _ts(base + 50 * i),
                      "values": {"orderId": rng.randrange(20_000), "ticker": rng.choice(tickers),
                                 "amount": rng.randrange(1, 500)}}
            else:
                ev = {"stream": "Trades", "rowtime": _ts(base + 50 * i),
                      "values": {"orderId": rng.randrange(20_000), "amount": rng.randrange(1, 500)}}
            f.write(json.dumps(ev) + "\n")
        end = _ts(base + 50 * n + 3_600_000)
        f.write(json.dumps({"stream": "Orders", "bound": end}) + "\n")
        f.write(json.dumps({"stream": "Trades", "bound": end}) + "\n")


def _get(url: str):
    try:
        with urllib.request.urlopen(url, timeout=5) as r:
            return json.loads(r.read())
    except (OSError, ValueError):
        return None


def _busy_executor(ui: int) -> str | None:
    """The id of an executor running a task now (the application's REST API), or None."""
    apps = _get(f"http://127.0.0.1:{ui}/api/v1/applications")
    if not apps:
        return None
    execs = _get(f"http://127.0.0.1:{ui}/api/v1/applications/{apps[0]['id']}/executors") or []
    busy = [e["id"] for e in execs if e["id"] != "driver" and e.get("activeTasks", 0) > 0]
    return busy[0] if busy else None


def _executor_pid(cluster, executor_id: str) -> int | None:
    for pid in cluster.executor_pids():
        args = cmdline(pid).split()
        if "--executor-id" in args and args[args.index("--executor-id") + 1] == executor_id:
            return pid
    return None


def _task_ends(event_dir: Path) -> list[dict]:
    """The task-end records of Spark's event log (plain JSON lines: compression and rolling off)."""
    out = []
    for f in event_dir.rglob("*"):
        if not f.is_file() or f.name.startswith(".") or f.name.startswith("appstatus"):
            continue
        for line in f.read_text().splitlines():
            try:
                d = json.loads(line)
            except ValueError:          # the last line of a log still being written
                continue
            if d.get("Event") == "SparkListenerTaskEnd":
                out.append(d)
    return out


@pytest.mark.timeout(900)
def test_a_killed_executor_loses_and_repeats_nothing(cluster, tmp_path, spark):
    sql, events = tmp_path / "q.sql", tmp_path / "events.jsonl"
    sql.write_text(KILL_SQL)
    write_events(events)
    # the clean run: the same replay on Spark in this process (local mode, all events in one
    # micro-batch: batching changes nothing), nothing killed
    t0 = time.time()
    out = io.StringIO()
    replay(KILL_SQL, read_events(events), engine="spark", buckets=2, out=out)
    clean = out.getvalue().splitlines()
    assert len(clean) > 500
    print(f"clean run: {time.time() - t0:.0f} s, {len(clean)} lines")

    t0 = time.time()
    ws, event_log, ui = tmp_path / "ws", tmp_path / "spark-events", free_port()
    event_log.mkdir()
    proc = subprocess.Popen(
        [STREAMSQL, "replay", str(sql), str(events), "--master", cluster.url, "--batch", str(BATCH),
         "--buckets", "2", "--workspace", str(ws), "--conf", "spark.ui.enabled=true",
         "--conf", f"spark.ui.port={ui}", "--conf", "spark.eventLog.enabled=true",
         "--conf", f"spark.eventLog.dir={event_log}", "--conf", "spark.eventLog.compress=false",
         "--conf", "spark.eventLog.rolling.enabled=false"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env())
    try:
        # once a few micro-batches are through, kill the executor that is running a task; the
        # task may end between the look and the kill (they take 0.1 to 1.3 s): then no task was
        # lost, and another busy executor is killed a few micro-batches later (at most 4 kills)
        commits = ws / "queries" / "q1" / "checkpoint" / "commits"
        deadline = time.time() + 600
        kills: list = []
        while True:
            victim = None
            while victim is None:
                assert time.time() < deadline, "the replay never got going"
                assert proc.poll() is None, proc.communicate()[1][-3000:]
                done = len([p for p in commits.iterdir() if p.name.isdigit()]) if commits.exists() else 0
                if done >= 3 + 3 * len(kills):
                    ex = _busy_executor(ui)
                    victim = _executor_pid(cluster, ex) if ex is not None else None
                if victim is None:
                    time.sleep(0.02)
            print(f"killing executor {ex} (pid {victim}) after {done} micro-batches, {time.time() - t0:.0f} s in")
            os.kill(victim, signal.SIGKILL)
            kills.append((ex, done))
            t = time.time()
            while alive(victim) and time.time() - t < 30:
                time.sleep(0.1)
            assert not alive(victim), f"executor pid {victim} survived kill -9"
            time.sleep(3)
            lost_now = [e for e in _task_ends(event_log) if e["Task End Reason"].get("Reason") == "ExecutorLostFailure"]
            if lost_now or len(kills) >= 4 or done + 6 >= EVENTS // BATCH:
                break
        stdout, stderr = proc.communicate(timeout=600)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, stderr[-3000:]
    print(f"cluster run done {time.time() - t0:.0f} s in")
    assert done < EVENTS // BATCH, "the executor was killed after the replay's last micro-batch"
    print(f"kills (executor, micro-batches done): {kills}")
    # Spark saw the executor go and ran its tasks again
    ends = _task_ends(event_log)
    lost = [e for e in ends if e["Task End Reason"].get("Reason") == "ExecutorLostFailure"]
    assert lost, f"no task failed with the executor lost: {[e['Task End Reason'] for e in ends][:5]}"
    ok = {(e["Stage ID"], e["Task Info"]["Index"]) for e in ends if e["Task End Reason"].get("Reason") == "Success"}
    rerun = [(e["Stage ID"], e["Task Info"]["Index"]) for e in lost]
    assert all(k in ok for k in rerun), f"lost tasks {rerun} never succeeded afterwards"
    assert stdout.splitlines() == clean
