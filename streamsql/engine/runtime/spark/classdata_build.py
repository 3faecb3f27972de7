"""Builds the class-data archive of :mod:`.classdata` (run by ``scripts/setup.sh``): a short
Spark run whose driver JVM dumps the classes it loaded when it exits."""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from ...lock import process_alive
from .classdata import KEEP, archive_path, prune
from .java import find_java

#: the dump run: a session, a Python worker and a small stateful streaming query, so that the
#: classes of a micro-batch are in the archive too; prints the JVM's pid, then exits normally
_DUMP_RUN = """
import sys
from streamsql.engine.runtime.spark import session
session.DUMP_TO = sys.argv[1]
spark = session.get_session()
print(spark.sparkContext._gateway.proc.pid, flush=True)
from streamsql.engine.runtime.spark.prestart import warm_workers
warm_workers(spark)
from streamsql import Workbench
wb = Workbench(None, engine="spark", durable=False)
wb.execute("CREATE STREAM S (k VARCHAR(3), x INTEGER)")
q = wb.query("SELECT STREAM FLOOR(S.ROWTIME TO MINUTE) AS ROWTIME, k, COUNT(*) AS n, SUM(x) AS sx "
             "FROM S GROUP BY FLOOR(S.ROWTIME TO MINUTE), k", name="g")
wb.insert("S", {"k": "a", "x": 1}, rowtime="2006-10-10 10:00:00")
wb.insert("S", {"k": "b", "x": 2}, rowtime="2006-10-10 10:01:00")
q.wait(timeout=300)
wb.close()
"""


def build(timeout: float = 600) -> Path:
    """Makes the archive for the Java that :func:`.java.find_java` picks; returns its path."""
    home, _how = find_java()
    final = archive_path(home)
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = final.with_suffix(f".{os.getpid()}.tmp")
    env = {**os.environ, "STREAMSQL_CDS": "0", "STREAMSQL_PRESTART": "0"}
    r = subprocess.run([sys.executable, "-c", _DUMP_RUN, str(tmp)], capture_output=True, text=True,
                       timeout=timeout, env=env)
    if r.returncode != 0:
        raise RuntimeError(f"the class-data dump run failed:\n{r.stderr[-2000:]}")
    pid = int(r.stdout.split()[0])
    deadline = time.monotonic() + timeout
    while process_alive(pid) and time.monotonic() < deadline:   # the JVM writes the archive as it exits
        time.sleep(0.2)
    if not tmp.is_file() or tmp.stat().st_size == 0:
        raise RuntimeError(f"the JVM wrote no class-data archive ({tmp})")
    os.replace(tmp, final)
    prune()
    return final


if __name__ == "__main__":
    t0 = time.monotonic()
    try:
        p = build()
    except Exception as e:       # the set-up goes on: Spark only starts a little slower
        print(f"note: no class-data archive for Spark's JVM ({e})", file=sys.stderr)
        sys.exit(0)
    print(f"class-data archive for Spark's JVM: {p} ({p.stat().st_size // 2**20} MiB, "
          f"{time.monotonic() - t0:.0f} s; the cache keeps the {KEEP} most recently used)")
