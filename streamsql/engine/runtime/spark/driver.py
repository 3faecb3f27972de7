"""Runs a workbench's continuous queries on Spark: one streaming query each, started lazily on
the process's SparkSession, with its checkpoint and sink state in the query's folder of the
workspace (so a reopened workspace resumes them where they stopped)."""
from __future__ import annotations

import shutil
import threading

from ...errors import StreamSqlError
from ..base import Runtime
from .pipeline import SparkQuery
from .session import get_session


class SparkRuntime(Runtime):
    name = "spark"

    def __init__(self, wb):
        super().__init__(wb)
        self.running: dict[str, tuple] = {}
        self.shadows: dict = {}

    def _spark(self):
        return get_session(self.wb.master, self.wb.spark_conf, log_dir=self.wb.path / "logs",
                           on_start=getattr(self.wb, "on_spark_start", None))

    def start(self, q, resume: bool = False) -> None:
        spark = self._spark()
        folder = self.wb.path / "queries" / q.name
        if not resume and folder.exists():
            shutil.rmtree(folder)
        folder.mkdir(parents=True, exist_ok=True)
        sq = SparkQuery(spark, self.wb, q, folder, self.wb.batch_events)
        if resume:
            for res in sq.sink.history():
                q._deliver_errors([e for _s, e in res.errors])   # already in ERRORS
                q._deliver_table(res.rows, res.bounds)
        q.handle = sq

        def on_error(e):
            q.error = f"{type(e).__name__}: {e}"
            q._state_changed()

        def delivered(res):
            if res.errors:   # rows an operator refused go to ERRORS before the rows of their batch
                self.wb.commit_operator_errors(q, res.errors)
                q._deliver_errors([e for _s, e in res.errors])
            q._deliver_table(res.rows, res.bounds)

        handle = sq.start(delivered, on_error)
        self.running[q.name] = (q, sq, handle)
        from ..local.query import LocalQuery
        shadow = LocalQuery(q.plan, self.wb.catalog.tables, q.start_clocks)
        if self.wb.trace:
            # the per-operator trace (presents, held rows and why) comes from the local runtime
            # run alongside: it gives the same output, and it sees every event before it is committed
            self.shadows[q.name] = shadow
            if resume:
                from ..local.driver import read_feeds
                for seq, feed in read_feeds(self.wb, q.plan.streams, q.start_seq, self.wb.last_seq):
                    shadow.process(seq, feed)

    @property
    def in_process(self) -> bool:
        return bool(self.shadows)

    def process_inline(self, seq: int, feed, readers_of_errors: bool) -> list:
        """Feed the shadows one event before its commit (rows they refuse come from Spark)."""
        from ..local.driver import step_before_commit
        for name, lq in self.shadows.items():
            q = self.running.get(name, (None,))[0]
            if q is not None:
                step_before_commit(self.wb, q, lq, seq, feed, readers_of_errors)
        return []

    def notify(self, feeds, head: int) -> None:
        pass  # Spark's source polls the log's HEAD

    def wait(self, q, timeout=None) -> None:
        entry = self.running.get(q.name)
        if entry is None:
            return
        _q, sq, handle = entry
        try:
            if timeout is None:
                handle.processAllAvailable()
            else:
                done = threading.Event()
                err = []

                def run():
                    try:
                        handle.processAllAvailable()
                    except Exception as e:  # reported below
                        err.append(e)
                    done.set()
                threading.Thread(target=run, daemon=True).start()
                if not done.wait(timeout):
                    raise TimeoutError(f"query {q.name} did not catch up within {timeout} s")
                if err:
                    raise err[0]
        except Exception as e:
            if q.error is None:
                q.error = _spark_message(e)
            q.running = False
            raise StreamSqlError(f"query {q.name} failed: {q.error}") from None

    def stop(self, q) -> None:
        self.shadows.pop(q.name, None)
        entry = self.running.pop(q.name, None)
        if entry:
            entry[2].stop()

    def close(self) -> None:
        for name in list(self.running):
            _q, _sq, h = self.running.pop(name)
            try:
                h.stop()
            except Exception:
                pass


def _spark_message(e: Exception) -> str:
    s = str(e)
    for line in s.splitlines():
        line = line.strip()
        if line and not line.startswith(("at ", "JVM stacktrace", "==")):
            return line[:500]
    return s[:500]
