"""The shared engine's process (``streamsql engine start`` runs it in the background; see
:mod:`.server`): a Spark in local mode with Spark Connect's plugin, listening on 127.0.0.1 with a
fresh token, which writes ``engine.json`` once it answers and stops after ``idle`` seconds
without a client (or on SIGTERM: ``streamsql engine stop``)."""
from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
from pathlib import Path

from ... import environment
from .server import ANOTHER, EngineError, alive, info_file, read_info, versions


def _last_client(d: Path) -> float:
    latest = 0.0
    for f in (d / "clients").glob("*"):
        try:
            pid = int(f.name)
            if not alive(pid):
                f.unlink()
                continue
            latest = max(latest, f.stat().st_mtime)
        except (ValueError, OSError):
            continue
    return latest


def stop_orphans(spark, stopping: set) -> list[str]:
    """Stop the queries of client processes that are gone: a kernel killed with SIGKILL cannot
    stop its queries, which would run (polling, and writing their folders) until the Connect
    session's timeout, an hour. Each stop runs in a thread of its own (a stop waits for the
    query's batch); ``stopping`` holds the run ids of those under way. Returns the names stopped."""
    from .pipeline import query_owner
    stopped = []
    try:
        running = list(spark._jsparkSession.sharedState().activeStreamingQueries().values())
    except Exception:  # noqa: BLE001 - a Spark without that map: the session timeout still ends them
        return stopped
    for se in running:
        try:
            name = se.name() or ""
            pid, key = query_owner(name), str(se.runId())
            if pid is not None and key not in stopping and not alive(pid):
                stopping.add(key)
                threading.Thread(target=se.stop, daemon=True, name=f"stop-{name}").start()
                stopped.append(name)
        except Exception:  # noqa: BLE001 - a query that ended meanwhile
            continue
    return stopped


def _hold(d: Path):
    """The directory's lock, held for the server's life: one engine per directory, whoever starts it."""
    import fcntl
    f = open(d / "engine.lock", "a")
    try:
        fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        print(f"streamsql engine: another engine holds {d}", flush=True)
        sys.exit(ANOTHER)
    return f


def serve(d: Path, idle: float) -> None:
    import secrets
    lock = _hold(d)       # released when this process ends
    from .session import get_session, stop_session
    token = secrets.token_urlsafe(32)
    os.environ["SPARK_CONNECT_AUTHENTICATE_TOKEN"] = token
    os.environ[environment.FORK_CONNECT] = "1"     # the fork server warms the foreachBatch runner too
    conf = {"spark.plugins": "org.apache.spark.sql.connect.SparkConnectPlugin",
            "spark.connect.grpc.binding.address": "127.0.0.1",
            "spark.connect.grpc.binding.port": "0",
            "spark.connect.authenticate.token": token,
            "spark.sql.artifact.isolation.enabled": "true"}
    spark = get_session(environment.engine_master(), conf, log_dir=d)
    jvm = spark.sparkContext._jvm
    service = jvm.java.lang.Class.forName("org.apache.spark.sql.connect.service.SparkConnectService$", True,
                                          jvm.Thread.currentThread().getContextClassLoader())
    port = int(service.getField("MODULE$").get(None).server().getPort())   # the port it bound (0: any free one)
    started = time.time()
    tmp = d / f"engine.json.{os.getpid()}"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        json.dump({"pid": os.getpid(), "port": port, "token": token, "versions": versions(),
                   "started": started, "idle": idle}, f)
    os.replace(tmp, info_file(d))
    stopping = []
    signal.signal(signal.SIGTERM, lambda *_: stopping.append(True))
    (d / "clients").mkdir(exist_ok=True)
    orphans: set = set()
    print(f"streamsql engine: pid {os.getpid()} on 127.0.0.1:{port}", flush=True)
    while not stopping:
        time.sleep(1.0)
        for name in stop_orphans(spark, orphans):
            print(f"streamsql engine: stopped query {name}: its client process is gone", flush=True)
        if time.time() - max(started, _last_client(d)) > idle:
            print(f"streamsql engine: no client for {idle:.0f} s, stopping", flush=True)
            break
    try:
        info = read_info(d)
        if info is not None and info.pid == os.getpid():
            info_file(d).unlink(missing_ok=True)
    except EngineError:
        pass
    for q in list(spark.streams.active):
        try:
            q.stop()
        except Exception:
            pass
    stop_session()
    lock.close()


if __name__ == "__main__":
    if len(sys.argv) == 3:
        serve(Path(sys.argv[1]), float(sys.argv[2]))
    else:
        sys.exit("usage: python -m streamsql.engine.runtime.spark.serve ENGINE_DIR IDLE_SECONDS")
