"""This process's own SparkSession, started lazily (or ahead of use, :func:`start_ahead`) with
settings measured for one-event steps.

Points PySpark's workers at this interpreter (through the fork server's launcher in local mode),
and sends the JVM's own output (log4j, Python worker chatter) to a log file instead of the notebook.
"""
from __future__ import annotations

import logging
import os
import signal
import sys
import tempfile
import threading
import time
from pathlib import Path

from ... import environment
from ...locks import engine_lock
from ...startup import READY
from .java import find_java, jit_options
from .waits import SPARK_START

log = logging.getLogger("streamsql.spark")
_lock = engine_lock("spark-session")
_session = None
_log_path: Path | None = None
#: the session was started ahead of use (:func:`start_ahead`) and no caller has had it yet: the
#: first caller still reports the start-up (so a notebook's output does not depend on whether
#: the background start had finished), and may replace it if it asked for another master
_unclaimed = False
_prestart_thread: threading.Thread | None = None
_ready = threading.Event()      # the background start is over (the session is up, or it failed)
#: the last start's phases ``(name, when it began)`` and when the session was up (time.monotonic),
#: so that the first user of a session started ahead can report them
_marks: list[tuple[str, float]] = []
_up_at: float | None = None
#: set by :mod:`.classdata`'s dump run: the driver JVM writes its class-data archive there on exit
DUMP_TO: str | None = None

#: Settings for interactive steps, each measured on one-event steps: one partition and no adaptive
#: plans (a step is a few rows), no empty micro-batches, checkpoint files written directly (a
#: local or POSIX file system only), RocksDB state with changelog checkpoints.
LOW_LATENCY_CONF = {
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.shuffle.partitions": "1",
    "spark.default.parallelism": "1",
    "spark.sql.adaptive.enabled": "false",
    "spark.sql.streaming.noDataMicroBatches.enabled": "false",
    "spark.sql.streaming.pollingDelay": "5ms",
    "spark.sql.streaming.checkpointFileManagerClass":
        "org.apache.spark.sql.execution.streaming.checkpointing.FileSystemBasedCheckpointFileManager",
    "spark.sql.streaming.stateStore.providerClass":
        "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider",
    "spark.sql.streaming.stateStore.rocksdb.changelogCheckpointing.enabled": "true",
    "spark.python.worker.reuse": "true",
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.ansi.enabled": "false",
    "spark.sql.execution.arrow.pyspark.enabled": "true",
    "spark.sql.streaming.minBatchesToRetain": "10",
}

#: Local mode only: the driver listens on the loopback interface. On a cluster the executors
#: connect back to the driver, which then binds where ``SPARK_LOCAL_IP`` (or the host name) says.
LOCAL_ONLY_CONF = {
    "spark.driver.bindAddress": "127.0.0.1",
    "spark.driver.host": "127.0.0.1",
}


def _driver_memory_mb() -> int:
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // (1024 * 1024)
    except (ValueError, OSError, AttributeError):
        total = 4096
    return max(1024, min(8192, total // 4))


def _log4j_file() -> Path:
    p = Path(tempfile.gettempdir()) / f"streamsql-log4j2-{os.getuid()}.properties"
    text = ("rootLogger.level = error\nrootLogger.appenderRef.stderr.ref = console\n"
            "appender.console.type = Console\nappender.console.name = console\n"
            "appender.console.target = SYSTEM_ERR\nappender.console.layout.type = PatternLayout\n"
            "appender.console.layout.pattern = %d{HH:mm:ss} %p %c{1}: %m%n\n"
            "logger.py4j.name = py4j\nlogger.py4j.level = error\n")
    if not p.exists() or p.read_text() != text:
        p.write_text(text)
    return p


def get_session(master: str | None = None, conf: dict | None = None, log_dir: str | Path | None = None,
                on_start=None, on_phase=None):
    """The process's SparkSession, started on first use (``on_start`` is called before the
    slow part, so callers can show "starting Spark…"; ``on_phase(name)`` as each start-up
    phase begins: ``"JVM"``, then ``"Spark session"``; see :mod:`streamsql.engine.startup`)."""
    global _session, _log_path, _unclaimed, _marks, _up_at
    t = _prestart_thread
    reported = False
    if t is not None and t.is_alive() and t is not threading.current_thread() and not _ready.is_set():
        # started in the background and still starting: say so now, then wait for it
        reported = True
        if on_start:
            on_start()
        told = _replay(on_phase, up=False)
        SPARK_START.wait_point()
        _ready.wait()
        _replay(on_phase, told)
    with _lock:
        if _session is not None:
            running = _session.sparkContext.master
            if _unclaimed and master and master != running:
                log.info("replacing the Spark session started ahead of use (%s) for master %s", running, master)
                if t is not None and t.is_alive() and t is not threading.current_thread():
                    t.join()     # its warm-up job, stopped half-way, would start a SparkContext again
                _session.stop()
                _session, _unclaimed = None, False
            else:
                if master and master != running:
                    log.warning("Spark already runs on %s in this process; master %s applies in a new process",
                                running, master)
                if _unclaimed and threading.current_thread() is not _prestart_thread:
                    _unclaimed = False
                    if not reported:     # the first user reports the start-up, done ahead of it
                        if on_start:
                            on_start()
                        _replay(on_phase)
                return _session
        if on_start and not reported:
            on_start()
        _marks, _up_at = [], None
        _mark(on_phase, "JVM")
        home, _how = find_java()
        os.environ["JAVA_HOME"] = home
        os.environ["PYSPARK_PYTHON"] = sys.executable
        os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
        master = master or "local[*]"
        local = master.startswith("local")
        if local:
            os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
        from pyspark import SparkConf, SparkContext
        from pyspark.java_gateway import launch_gateway
        from pyspark.sql import SparkSession

        log_dir = Path(log_dir) if log_dir else Path(tempfile.gettempdir())
        log_dir.mkdir(parents=True, exist_ok=True)
        _log_path = log_dir / "spark.log"
        c = SparkConf()
        c.setMaster(master)
        # local mode runs the executors in the driver's JVM: give it room for replays of millions
        # of events (a quarter of the machine's memory, between 1 and 8 GiB)
        c.set("spark.driver.memory", f"{_driver_memory_mb()}m")
        c.set("spark.driver.maxResultSize", "0")
        c.setAppName("streamsql")
        for k, v in {**LOW_LATENCY_CONF, **(LOCAL_ONLY_CONF if local else {}), **(conf or {})}.items():
            c.set(k, str(v))
        # executors start this interpreter unless told otherwise (a cluster whose workers keep
        # streamsql elsewhere: spark_conf={"spark.pyspark.python": ...}); in local mode, through
        # the fork server's launcher (forkserver.py: no cold Python process per query start)
        python = sys.executable
        if local and "spark.pyspark.python" not in (conf or {}):
            python = _fork_launcher()
            os.environ["PYSPARK_PYTHON"] = python
        c.set("spark.pyspark.python", (conf or {}).get("spark.pyspark.python", python))
        c.set("spark.pyspark.driver.python", sys.executable)
        opts = f"-Dlog4j2.configurationFile=file:{_log4j_file()}"
        from .classdata import java_options
        cds = f"-XX:ArchiveClassesAtExit={DUMP_TO}" if DUMP_TO else java_options(home)
        extra = environment.java_options()
        extra = f"{jit_options(extra)} {extra}".strip()
        from .jvmtmp import for_this_process
        tmp = for_this_process()       # Spark's scratch files, removed once this process is gone
        if tmp is not None and "java.io.tmpdir" not in extra:
            extra = f"-Djava.io.tmpdir={tmp} {extra}"
        c.set("spark.driver.extraJavaOptions", f"{opts} {cds} {extra}".strip())
        c.set("spark.executor.extraJavaOptions", opts)
        logf = open(_log_path, "ab")
        gateway = launch_gateway(c, popen_kwargs={"stdout": logf, "stderr": logf})
        _mark(on_phase, "Spark session")
        main = threading.current_thread() is threading.main_thread()
        sigint = signal.getsignal(signal.SIGINT) if main else None
        sc = SparkContext(conf=c, gateway=gateway)
        if main:
            # PySpark's own SIGINT handler cancels every job, which would fail every running
            # continuous query; an interrupt (Ctrl-C, the kernel's ■) only stops the waiting
            signal.signal(signal.SIGINT, sigint)
        sc.setLogLevel("ERROR")
        _session = SparkSession(sc)
        from .source import register
        register(_session)
        _unclaimed = threading.current_thread() is _prestart_thread
        _up_at = time.monotonic()
        return _session


_forkserver = None


def _fork_launcher() -> str:
    """The launcher of this process's fork server (started now, warming up while the JVM
    starts), or this interpreter when it is off (``STREAMSQL_FORKSERVER=0``) or cannot start."""
    global _forkserver
    if not environment.forkserver():
        return sys.executable
    if _forkserver is None or not _forkserver.alive():
        from . import forkserver
        try:
            _forkserver = forkserver.start()
        except (OSError, PermissionError) as e:
            log.info("no fork server for Spark's Python processes: %s", e)
            return sys.executable
        import atexit
        atexit.register(_forkserver.stop)
    return str(_forkserver.launcher)


def _mark(on_phase, name: str) -> None:
    _marks.append((name, time.monotonic()))
    if on_phase:
        on_phase(name)


def _replay(on_phase, told: int = 0, up: bool = True) -> int:
    """Tell ``on_phase`` the phases of a start made ahead after the first ``told``, with the times
    they began, and (``up``) when the session was up; returns how many phases it has been told."""
    marks = list(_marks)
    if on_phase is not None:
        for name, at in marks[told:]:
            on_phase(name, at)
        if up and _up_at is not None:
            on_phase(READY, _up_at)
    return len(marks)


def start_ahead(master: str | None = None, conf: dict | None = None, log_dir: str | Path | None = None,
                then=None) -> bool:
    """Start the session in a background thread, then call ``then(spark)`` there; returns whether
    a start began (not when the session is up or a start is under way). A failure is only logged:
    the first real use starts it again and reports it, or the error, as usual."""
    global _prestart_thread
    if _session is not None or (_prestart_thread is not None and _prestart_thread.is_alive()):
        return False

    def run():
        try:
            with SPARK_START.running():     # a query start meanwhile waits for this
                spark = get_session(master, conf, log_dir)
        except Exception as e:  # reported by the first real use
            log.info("starting Spark ahead of use failed: %s", e)
            return
        finally:
            _ready.set()
        if then is not None:
            then(spark)

    _ready.clear()
    _prestart_thread = threading.Thread(target=run, daemon=True, name="streamsql-spark-prestart")
    _prestart_thread.start()
    return True


def stop_session() -> None:
    """Stop this process's Spark session (the shared engine's server does, as it stops)."""
    global _session, _unclaimed
    t = _prestart_thread
    if t is not None and t.is_alive() and t is not threading.current_thread():
        t.join()
    with _lock:
        if _session is not None:
            _session.stop()
            _session, _unclaimed = None, False
