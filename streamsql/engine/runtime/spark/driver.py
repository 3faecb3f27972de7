"""Runs a workbench's continuous queries on Spark: one streaming query each, started lazily on
the process's SparkSession, with its checkpoint and sink state in the query's folder of the
workspace (so a reopened workspace resumes them where they stopped). Everything a query shows
comes from its Spark stages: rows, bounds, rows its operators refuse and the trace."""
from __future__ import annotations

import json
import re
import shutil
import threading
import time
from pathlib import Path

from ...errors import StreamSqlError
from ...paths import under
from ...tempdirs import temporary_dir
from ..base import Runtime
from .holds import Holds
from .pipeline import SparkQuery
from .connect import get_remote_session, is_connect
from .session import get_session
from .source import offset_step
from .waits import QUERY_BATCH


class SparkRuntime(Runtime):
    name = "spark"
    label = "Spark"

    def __init__(self, host, options):
        super().__init__(host, options)
        self.running: dict[str, tuple] = {}
        self._phase = None              # on_phase of a start-up still under way (engine/startup.py)
        self._first: str | None = None  # the query whose first batch ends it
        #: the Spark Connect URL this workbench's Spark is reached at (None: a Spark in this process),
        #: decided on first use (server.endpoint)
        self.url: str | None = None
        self._resolved = False
        self.followers: dict = {}       # query name -> SinkFollower (Spark Connect), else None
        #: query name -> the last step its delivered micro-batches read (from Spark's offset log)
        self.through: dict[str, int] = {}
        self.twins: dict = {}           # query name -> its native twin's Spark query (native.py)
        self._initializing = None       # the last query started, until its sources are initialized
        self.holds = Holds(host.log)    # the clicked view's query first (holds.py)

    def _spark(self, phases: bool = False):
        """The session; ``phases``: a query start, which reports the start-up phases (JVM, Spark
        session, then its plan and first batch) when it is the one that starts Spark."""
        opts = self.options
        on_phase = opts.on_spark_phase if phases else None
        started = []

        def on_start():
            started.append(True)
            if opts.on_spark_start is not None:
                opts.on_spark_start()
        if not self._resolved:
            from .server import endpoint
            self.url = endpoint(opts.remote, opts.master)
            self._resolved = True
        if self.url is not None:
            spark = get_remote_session(self.url, on_start=on_start, on_phase=on_phase)
        else:
            spark = get_session(opts.master, opts.spark_conf,
                                log_dir=None if self.host.read_only else self.host.path / "logs",
                                on_start=on_start, on_phase=on_phase)
        if started and on_phase is not None:
            self._phase = on_phase      # this start goes on with the first query's plan and batch
        return spark

    def _end_startup(self, q) -> None:
        """The first query's first result is in: its start-up line stops (called by a wait and by
        the first delivery, on different threads: a phase that ends twice ends once)."""
        phase = self._phase
        if phase is not None and self._first == q.name:
            self._phase, self._first = None, None
            phase(None)

    def start(self, q, resume: bool = False) -> None:
        spark = self._spark(phases=True)
        if self._phase is not None and self._first is None:
            self._first = q.name
            self._phase("plan")
        folder = under(self.host.path, "queries", q.name)
        if not resume and folder.exists():
            shutil.rmtree(folder)
        folder.mkdir(parents=True, exist_ok=True)
        sq = SparkQuery(spark, self.host, self.options, q, folder)
        self.through.pop(q.name, None)      # a query of that name before this one
        if resume:
            done = self.host.errors_committed_through(q.name)
            for res in sq.sink.history():
                if res.errors and done is not None and res.batch_id > done:
                    # delivered by the sink, but the process died before they reached ERRORS
                    self.host.commit_operator_errors(q, res.errors, res.batch_id)
                q.deliver_errors([e for _s, e in res.errors])
                q.deliver_table(res.rows, res.bounds)
        q.handle = sq

        def on_error(e):
            q.fail(_jvm_trouble(str(e), self.url, self._shared()) or f"{type(e).__name__}: {e}", stopped=False)

        def delivered(res):
            if res.errors:
                # rows an operator refused go to ERRORS, under the workbench's lock, which this
                # thread must not wait for: handed over (runtime/port.py)
                self.host.hand_over_operator_errors(q, res.errors, res.batch_id)
                q.deliver_errors([e for _s, e in res.errors])
            if res.trace is not None:
                q.trace.extend(res.trace.entries())
            q.deliver_table(res.rows, res.bounds)
            self._end_startup(q)        # its first result is in (whether or not anyone waits)
            end = _batch_end(folder, res.batch_id)
            if end is not None:     # after the delivery: "caught up" means the views can show it
                self.through[q.name] = max(self.through.get(q.name, -1), end)
                self.holds.delivered(q.name, self.through[q.name])

        connect = is_connect(spark)
        self._previous_initialized()
        handle = sq.start(delivered, on_error, connect=connect)
        follower = None
        if connect:
            from .follow import SinkFollower

            def failed(e):
                q.fail(self._failure(e), keep_first=True)

            def status():
                if not handle.isActive:
                    e = handle.exception()
                    raise RuntimeError(str(e) if e is not None else "the query stopped in the Spark Connect server")
            follower = SinkFollower(sq.sink, delivered, failed, status)
        # returns before Spark has initialized the sources (0.1-0.2 s, a Python process each):
        # events the user sends meanwhile are in the first micro-batch, which Spark runs for a new
        # query whatever it holds, instead of in a second one; the next start waits for them
        self._initializing = handle
        self.running[q.name] = (q, sq, handle)
        self.followers[q.name] = follower
        if self._phase is not None and self._first == q.name:
            self._phase("first batch")

    def _previous_initialized(self) -> None:
        """Wait until the query started last has initialized its sources (see ``start``)."""
        if self._initializing is not None:
            _sources_initialized(self._initializing)
            self._initializing = None

    def write_head(self, head: int, first: str | None, before: int, streams) -> None:
        """HEAD, holding the other queries back while the clicked view's query reads first
        (holds.py) when that query runs here and reads one of ``streams``."""
        entry = self.running.get(first) if first is not None else None
        if (entry is None or entry[0].error is not None or not set(entry[1].streams) & set(streams)
                or first not in self.through):    # no delivery seen yet, or none it can report
            first = None
        self.holds.publish(head, first, before)

    def notify(self, feeds, head: int) -> None:
        pass  # Spark's source polls the log's HEAD

    def rebuild(self, head: int) -> None:
        """Nothing to undo: Spark's source reads up to HEAD, which a failed append never moved."""

    def wait(self, q, timeout=None) -> None:
        entry = self.running.get(q.name)
        if entry is None:
            return
        _q, sq, handle = entry
        QUERY_BATCH.wait_point()        # this waits for the query's batches to be delivered
        self.holds.release()            # a query held back would look caught up to Spark
        # the blocking Spark call runs in a helper thread: an interrupt of the caller (the kernel's
        # SIGINT) then ends only the waiting, never a py4j call half-way (which would leave the
        # gateway connection out of step) and never Spark's jobs
        done = threading.Event()
        err = []

        def run():
            try:
                # processAllAvailable returns at the first trigger that finds nothing new, which
                # may have read HEAD before the last commit (or a hold's end): until caught up
                # (through Connect the sink's files arrive later: the follower waits for them below)
                remote = self.followers.get(q.name) is not None
                for _ in range(100):
                    handle.processAllAvailable()
                    if remote or self.through.get(q.name) is None or self.caught_up(q):
                        break
            except Exception as e:  # reported below
                err.append(e)
            done.set()
        try:
            threading.Thread(target=run, daemon=True, name=f"streamsql-wait-{q.name}").start()
            deadline = None if timeout is None else time.monotonic() + timeout
            while not done.wait(0.2):
                if deadline is not None and time.monotonic() > deadline:
                    raise TimeoutError(f"query {q.name} did not catch up within {timeout} s")
            if err:
                raise err[0]
            follower = self.followers.get(q.name)
            if follower is not None:      # the sink ran in the server: until its files are read here
                follower.wait_for(sq.sink.committed_batch(),
                                  None if deadline is None else max(0.1, deadline - time.monotonic()))
                if follower.failed is not None:
                    raise RuntimeError(follower.failed)
            self.host.commit_handed_over()      # what a delivery handed over (ERRORS)
            self._end_startup(q)
        except Exception as e:
            self._end_startup(q)
            q.fail(self._failure(e), keep_first=True, notify=False)
            raise StreamSqlError(f"query {q.name} failed: {q.error}") from None

    def caught_up(self, q) -> bool:
        """Whether ``q`` has processed every event of its streams so far, without waiting."""
        entry = self.running.get(q.name)
        if entry is None:
            return True
        # what the delivered batches read (Spark's offset log, in the workspace): no call to the
        # JVM or the Connect server (views ask this every few tens of milliseconds while a click's
        # micro-batches run, and lastProgress is a round trip and a JSON document each time);
        # a server whose checkpoints this process cannot read is asked
        through = self.through.get(q.name)
        if through is not None:
            return through >= self.host.last_step_of(entry[1].streams)
        try:
            progress = entry[2].lastProgress
        except Exception:  # a query that failed or stopped has nothing more to process
            return True
        # events of other streams run no micro-batch (source.py): up to date once the last event
        # of the query's own streams is read
        last = self.host.last_step_of(entry[1].streams)
        if not progress or not progress.get("sources"):
            return last <= q.start_step
        end = progress["sources"][0].get("endOffset")
        end = json.loads(end) if isinstance(end, str) else end
        return (offset_step(end) if end else 0) >= last

    def stop(self, q) -> None:
        self._end_startup(q)
        self.holds.release()
        entry = self.running.pop(q.name, None)
        follower = self.followers.pop(q.name, None)
        self.through.pop(q.name, None)
        if entry and self._initializing is entry[2]:
            self._initializing = None
        if entry:
            QUERY_BATCH.wait_point()    # Spark's stop waits for the batch being delivered
            try:
                entry[2].stop()
            finally:
                if follower is not None:
                    follower.stop()
        twin = self.twins.pop(q.name, None)
        if twin is not None:
            twin.stop()

    def close(self) -> None:
        self._initializing = None
        self.holds.release()
        for name in list(self.twins):
            self.twins.pop(name).stop()
        for name in list(self.running):
            _q, _sq, h = self.running.pop(name)
            follower = self.followers.pop(name, None)
            if follower is not None:
                follower.stop()
            QUERY_BATCH.wait_point()
            try:
                h.stop()
            except Exception:
                pass

    # ------------------------------------------------------------------ the rest of a session

    def relational(self, root) -> list[tuple]:
        from .relational import SparkRelational
        spark = self._spark()
        try:
            return SparkRelational(self.host, spark).run_query(root)
        except Exception as e:
            if not _from_spark(e):
                raise
            raise StreamSqlError(f"Spark could not run this query: {self._failure(e, 'relational')}") from None

    def _shared(self) -> bool:
        """Whether this workbench's Spark is the shared engine (not a Connect URL of the user's)."""
        return self.url is not None and not self.options.remote

    def _failure(self, e: Exception, query: str = "streaming") -> str:
        """One line for a failure Spark raised: through Connect (a server that went away, a JVM out
        of room, the query's own error) or in this process."""
        if self.url is None:
            return _spark_message(e)
        return _connect_message(e, self.url, self._shared(), query)

    def foreign_reader(self, stream: str):
        from .foreign import SparkFileReader
        spark = self._spark()
        if is_connect(spark):
            raise StreamSqlError(f"foreign stream {stream}: foreign streams need Spark in this process (their reader "
                                 f"commits each file from foreachBatch), not a Spark Connect server; "
                                 f"use STREAMSQL_ENGINE=process (docs/engine.md)")
        return SparkFileReader(self.host, stream, spark)

    def file_sink(self, q, path, fmt: str):
        from .sinks import SparkFileSink
        return SparkFileSink(q, path, fmt, self._spark())

    def native_twin(self, q, shape, delay_ms: int, start: int):
        from .native import SparkTwin
        folder = under(self.host.path, "queries", q.name, "native") if not self.host.read_only else None
        if folder is None:
            folder = temporary_dir("native") / q.name
        old = self.twins.pop(q.name, None)
        if old is not None:
            old.stop()
        twin = self.twins[q.name] = SparkTwin(self._spark(), folder, shape, delay_ms, start,
                                              before_start=self._previous_initialized)
        return twin

    def explain(self, q) -> str:
        from .explain import spark_plan
        return spark_plan(q, self.host.path)


def _sources_initialized(handle, timeout: float = 60.0) -> None:
    """Wait (bounded) until Spark has initialized the query's sources. Each start spawns a Python
    process that must connect back to the JVM within Spark's fixed 10 s; queries started
    together on a small, busy machine (a cell with several queries) then start one after
    another instead of all failing with "Python worker failed to connect back"."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if not handle.isActive or handle.status.get("message") != "Initializing sources":
                return
        except Exception:  # the query ended: wait() reports why
            return
        time.sleep(0.01)      # each look is one round trip; a query start waits on it


#: what a call to a Spark Connect server that stopped or restarted says (gRPC's status names, and
#: the text of a raw stream that ended, which pyspark does not always wrap)
_GONE = ("UNAVAILABLE", "failed to connect", "Connection refused", "Socket closed", "SESSION_CLOSED",
         "INVALID_HANDLE", "ABORTED", "RPC that terminated", "StatusCode.CANCELLED", "Stream removed",
         "RETRIES_EXCEEDED")


def _is_rpc_error(e: BaseException) -> bool:
    """A raw gRPC error: the channel itself failed, not the query (whose failure pyspark wraps)."""
    try:
        import grpc
    except ImportError:
        return False
    return isinstance(e, grpc.RpcError)


def _connect_message(e: Exception, url: str | None, shared: bool = False, query: str = "streaming") -> str:
    """One line for a query whose Spark Connect server failed it or went away (``shared``: the
    server is the shared engine; ``query``: ``"streaming"`` or ``"relational"``)."""
    s = str(e)
    trouble = _jvm_trouble(s, url, shared)
    if trouble:
        return trouble
    if _is_rpc_error(e) or any(k in s for k in _GONE):
        from .connect import _safe, forget_remote
        if url:
            forget_remote(url)
        then = ("the query stopped at its last committed batch and resumes from there when the workspace is "
                "opened again with an engine up") if query == "streaming" else "run the query again with an engine up"
        return f"the Spark engine at {_safe(url or '?')} went away (stopped?): {then}"
    return _spark_message(e)


#: what a JVM says when it, not a task or the query, is in trouble (then only a restart helps),
#: matched on the JVM's own error classes (never Spark's ``SparkOutOfMemoryError``, which fails a
#: task and leaves the JVM well), and what it ran out of
_JVM_TROUBLE = (
    (re.compile(r"Out of space in CodeCache[^\n\"]*|CodeCache is full[^\n\"]*"), "room for compiled code"),
    (re.compile(r"(?<!\w)(?:java\.lang\.)?OutOfMemoryError: Metaspace"), "memory for classes"),
    (re.compile(r"(?<!\w)(?:java\.lang\.)?OutOfMemoryError: unable to create native thread[^\n\"]*"), "threads"),
    (re.compile(r"(?<!\w)(?:java\.lang\.)?OutOfMemoryError: (?:Java heap space|GC overhead limit exceeded)"),
     "memory"),
)
#: what an error quotes of the user's own (values in quotes, the SQL after "== SQL"): never a cause
_QUOTED = re.compile(r"'[^'\n]*'|== SQL.*", re.S)


def _jvm_trouble(s: str, url: str | None, shared: bool) -> str | None:
    """One line for a failure of the JVM itself, saying which one and how to restart it."""
    s = _QUOTED.sub("''", s)
    for pattern, what in _JVM_TROUBLE:
        m = pattern.search(s)
        if m:
            break
    else:
        return None
    if url is None:
        where, fix = "this process's Spark", "restart the kernel (or the process)"
    elif shared:
        where, fix = ("the shared engine", "restart it (`streamsql engine stop`, then `streamsql engine start`) and "
                      "open the workspace again (a new kernel does)")
    else:
        from .connect import _safe
        where, fix = f"the Spark Connect server at {_safe(url)}", "it needs a restart"
    return (f"{where}: its JVM ran out of {what} ({m.group(0).strip()[:200]}); {fix}. Streaming queries resume "
            f"from their last committed batch")


def _from_spark(e: BaseException) -> bool:
    """An error raised by Spark (the JVM, its Connect server or the channel to it), not by us."""
    if _is_rpc_error(e):
        return True
    from pyspark.errors import PySparkException
    if isinstance(e, PySparkException):
        return True
    try:
        from py4j.protocol import Py4JError
    except ImportError:          # a Connect-only client
        return False
    return isinstance(e, Py4JError)


_EXC_LINE = re.compile(r"^[A-Za-z_][\w.]*(Error|Exception|Exit): ")


def _spark_message(e: Exception) -> str:
    s = str(e)
    trouble = _jvm_trouble(s, None, False)
    if trouble:
        return trouble
    if "Traceback (most recent call last)" in s:
        # a Python worker failed: Spark's headline ends at "Traceback", the cause is the exception line
        head = s.split("Traceback (most recent call last)")[0].strip().splitlines()[-1:]
        cause = [ln.strip() for ln in s.splitlines() if _EXC_LINE.match(ln.strip())]
        if cause:
            return (" ".join(head + cause[-1:]))[:500]
    for line in s.splitlines():
        line = line.strip()
        if line and not line.startswith(("at ", "JVM stacktrace", "==")):
            return line[:500]
    return s[:500]


def _batch_end(folder: Path, batch_id: int) -> int | None:
    """The last step micro-batch ``batch_id`` read: its source's end offset, from Spark's offset
    log in the query's checkpoint (written before the batch ran); None when it cannot be read."""
    try:
        lines = (folder / "checkpoint" / "offsets" / str(int(batch_id))).read_text().splitlines()
        return offset_step(json.loads(lines[2]))
    except (OSError, ValueError, IndexError, KeyError, TypeError):
        return None
