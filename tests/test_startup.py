"""Spark starts ahead of use: opening a workbench (or loading the magics) starts the
session in the background, the first query still reports the start-up (so a notebook's output
does not depend on how far the background start got), a different master replaces a session no
one has used yet, and ``STREAMSQL_PRESTART=0`` turns it off. Each case runs in a fresh process
(this test process starts its Spark once, in the ``spark`` fixture)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

CHILD = textwrap.dedent("""
    import json, sys
    import streamsql
    from streamsql.engine.runtime.spark import session
    calls = []
    wb = streamsql.Workbench(on_spark_start=lambda: calls.append(["start", False]),
                             on_spark_phase=lambda name, at=None: calls.append([name, at is not None]))
    out = {"thread": session._prestart_thread is not None}
    if sys.argv[1] == "query":
        session._prestart_thread.join(300)
        out["ready_before_use"] = session._session is not None and session._unclaimed
        wb.execute("CREATE STREAM S (x INTEGER)")
        q = wb.query("SELECT STREAM ROWTIME, x FROM S WHERE x > 1")
        wb.insert("S", {"x": 5}, rowtime="2006-10-10 10:00:00")
        wb.insert("S", {"x": 1}, rowtime="2006-10-10 10:01:00")
        q.wait(300)
        out["calls"] = calls
        out["rows"] = [list(r.values) for r in q.rows]
        out["master"] = session._session.sparkContext.master
        out["claimed"] = not session._unclaimed
    elif sys.argv[1] == "master":
        spark = session.get_session("local[1]")
        out["master"] = spark.sparkContext.master
        out["rows"] = spark.range(3).count()
    wb.close()
    print("RESULT " + json.dumps(out))
""")


def child(mode: str, **env) -> dict:
    r = subprocess.run([sys.executable, "-c", CHILD, mode], capture_output=True, text=True, timeout=600,
                       env={**os.environ, "STREAMSQL_PRESTART": "1", **env})
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(next(ln for ln in r.stdout.splitlines() if ln.startswith("RESULT "))[7:])


@pytest.mark.timeout(700)
def test_a_workbench_starts_spark_in_the_background_and_the_first_query_reports_it():
    out = child("query")
    assert out["thread"] and out["ready_before_use"]
    assert out["rows"] == [[5]]
    assert out["master"].startswith("local") and out["claimed"]
    # the start-up is reported once, by the first query, in order: Spark's phases done in the
    # background (with the times they began, then when it was up), the query's plan, its first
    # batch, then the end
    assert out["calls"][0] == ["start", False] and out["calls"].count(["start", False]) == 1
    assert [c for c in out["calls"] if c[0] != "start"] == [
        ["JVM", True], ["Spark session", True], ["ready", True], ["plan", False], ["first batch", False], [None, False]]


@pytest.mark.timeout(700)
def test_another_master_replaces_a_session_no_one_used_and_prestart_can_be_turned_off():
    out = child("master")
    assert out["thread"] and out["master"] == "local[1]" and out["rows"] == 3
    out = child("none", STREAMSQL_PRESTART="0")
    assert out == {"thread": False}


def test_the_driver_jvm_maps_the_class_data_archive_the_set_up_built(spark, tmp_path, monkeypatch):
    """The set-up builds the archive (``scripts/setup.sh``); the session's JVM was started with
    it, and an archive for another JVM or PySpark, or ``STREAMSQL_CDS=0``, is not used."""
    from streamsql.engine.runtime.spark import classdata
    from streamsql.engine.runtime.spark.java import find_java
    home, _ = find_java()
    archive = classdata.archive_path(home)
    jvm = spark.sparkContext._jvm
    args = list(jvm.java.lang.management.ManagementFactory.getRuntimeMXBean().getInputArguments())
    if not archive.is_file():
        pytest.skip(f"no class-data archive at {archive}: scripts/setup.sh builds it")
    assert f"-XX:SharedArchiveFile={archive}" in args, args
    # the archive is valid for this JVM and Spark's class path: a JVM that must share (-Xshare:on)
    # starts with it (a mismatched archive would be ignored by the session's JVM, silently)
    cp = jvm.java.lang.System.getProperty("java.class.path")
    java = str(Path(home) / "bin" / "java")
    r = subprocess.run([java, "-Xshare:on", f"-XX:SharedArchiveFile={archive}", "-cp", cp, "-version"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and "sharing" in r.stderr, r.stderr
    bad = subprocess.run([java, "-Xshare:on", f"-XX:SharedArchiveFile={archive}", "-cp", str(tmp_path), "-version"],
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode != 0 and "mismatch" in bad.stdout + bad.stderr   # the check can fail
    monkeypatch.setenv("STREAMSQL_CDS", "0")
    assert classdata.java_options(home) == ""
    monkeypatch.delenv("STREAMSQL_CDS")
    monkeypatch.setenv("STREAMSQL_CACHE_DIR", str(tmp_path))
    assert classdata.archive_path(home) != archive and classdata.java_options(home) == ""


def test_the_cache_keeps_the_most_recently_used_class_data_archives(tmp_path, monkeypatch):
    """Each environment builds its own 180 MB archive: a start that uses one marks it used, and a
    build removes all but the ``KEEP`` most recently used (never the one a start just used)."""
    from streamsql.engine.runtime.spark import classdata
    from streamsql.engine.runtime.spark.java import find_java
    monkeypatch.setenv("STREAMSQL_CACHE_DIR", str(tmp_path))
    home, _ = find_java()
    mine = classdata.archive_path(home)
    cache = mine.parent
    cache.mkdir(parents=True, exist_ok=True)
    others = [cache / f"spark-classes-{i:016x}.jsa" for i in range(4)]
    for age, p in enumerate([mine] + others):         # ``mine`` the oldest of all
        p.write_bytes(b"x")
        os.utime(p, (1_000_000 - age * 1000, 1_000_000 - age * 1000))
    keep = cache / "vega-library-0.js"
    keep.write_text("other things in the cache stay")
    assert classdata.java_options(home) == f"-XX:SharedArchiveFile={mine} -Xshare:auto"   # used now
    gone = classdata.prune(keep=3)
    assert sorted(gone) == sorted(others[2:])          # the two least recently used
    assert mine.is_file() and others[0].is_file() and others[1].is_file() and keep.is_file()
