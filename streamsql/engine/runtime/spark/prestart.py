"""Starting Spark while the user types: this process's own session, or the Connect session when
the workbench's Spark is reached over Spark Connect, so that it is (nearly) up when the first query
needs it. Nothing is reported here: the first real use reports the start-up, or its error."""
from __future__ import annotations

import logging
from pathlib import Path

from ... import environment
from . import connect, session

log = logging.getLogger("streamsql.spark")

#: ``False`` turns :func:`prestart` off for this process (the environment's
#: ``STREAMSQL_PRESTART=0`` does the same, for every process started from it)
PRESTART = environment.prestart()


def prestart(master: str | None = None, conf: dict | None = None, log_dir: str | Path | None = None,
             remote: str | None = None) -> bool:
    """Start the session in a background thread, so that it is (nearly) up when the first query
    needs it: the user is still typing the query. Returns whether a start began. Nothing is
    reported here and a failure (no Java) is only logged: the first real use starts it again and
    reports it, or the error, as usual."""
    if not PRESTART:
        return False
    over_connect = _prestart_remote(remote, master)
    if over_connect is not None:
        return over_connect
    return session.start_ahead(master, conf, log_dir, then=_warm_quietly)


def _prestart_remote(remote: str | None, master: str | None) -> bool | None:
    """Open the Connect session ahead when the workbench's Spark is reached over Spark Connect
    (None: it is not; this process's own Spark starts ahead instead)."""
    from . import server
    try:
        how = server.mode(remote, master)
    except server.EngineError:      # reported by the first real use, as any failure here
        how = "remote" if remote else "process"
    if how == "process" or (how == "auto" and server.running() is None):
        return None
    # in shared mode the endpoint may start the engine (seconds): in the thread, not here
    return connect.open_ahead(lambda: server.endpoint(remote, master))


def _warm_quietly(spark) -> None:
    try:                    # beside the first query's planning, not before it
        warm_workers(spark)
    except Exception as e:
        log.info("warming Spark's Python workers failed: %s", e)


def _warm(batches):
    import streamsql.engine.runtime.spark.stage  # noqa: F401  (what the stages' workers import)
    yield from batches


def warm_workers(spark) -> None:
    """A tiny pandas job, so that the Python worker daemon and its imports (pandas, pyarrow,
    streamsql's stages) are up before the first micro-batch needs them (workers are reused)."""
    spark.range(1).mapInPandas(_warm, "id long").collect()
