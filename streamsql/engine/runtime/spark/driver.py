"""Runs a workbench's continuous queries on Spark: one streaming query each, started lazily on
the process's SparkSession, with its checkpoint and sink state in the query's folder of the
workspace (so a reopened workspace resumes them where they stopped). Everything a query shows
comes from its Spark stages: rows, bounds, rows its operators refuse and the trace."""
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
            if res.trace is not None:
                q.trace.extend(res.trace.entries())
            q._deliver_table(res.rows, res.bounds)

        handle = sq.start(delivered, on_error)
        self.running[q.name] = (q, sq, handle)

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
