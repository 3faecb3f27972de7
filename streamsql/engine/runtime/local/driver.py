"""Runs a workbench's continuous queries on the local runtime: each committed event is processed
synchronously, before ``insert`` returns. A query resumed in a reopened workspace replays the log
from its start, which rebuilds the same state and the same output."""
from __future__ import annotations

from ..base import Runtime
from .stepper import LocalQuery


def replayed(host, q, head: int) -> LocalQuery:
    """A fresh local query for ``q`` that has processed the log of workspace ``host`` up to
    ``head`` (nothing delivered; its trace cut back to ``head``)."""
    lq = LocalQuery(q.plan, host.catalog.tables, q.start_clocks, q.name)
    for step, feed in host.feeds(q.plan.streams, q.start_step, head):    # start_step < step
        lq.process(step, feed)
    q.trace.drop_after(head)
    return lq


def step_before_commit(trace: bool, q, lq: LocalQuery, step: int, feed, readers_of_errors: bool):
    """Step an in-process query through one event before its commit (and record its trace);
    None when the event is not for it. Queries that read the error stream go in a second
    round, after the errors of this event are known. ``trace``: record the query's trace."""
    from ...catalog import ERROR_STREAM
    if step <= q.start_step or (ERROR_STREAM in lq.streams) != readers_of_errors:
        return None
    if not any(s in lq.streams for s in feed):
        return None
    b = lq.process(step, feed)
    if trace:
        q.trace.append(lq.step_trace(b))
    return b

class LocalRuntime(Runtime):
    name = "local"
    label = "local"

    def __init__(self, host, options):
        super().__init__(host, options)
        self.running: dict[str, tuple] = {}
        self._pending: dict[str, list] = {}    # released batches waiting for the commit

    def start(self, q, resume: bool = False) -> None:
        lq = LocalQuery(q.plan, self.host.catalog.tables, q.start_clocks, q.name)
        q.handle = lq
        self.running[q.name] = (q, lq)
        if resume:
            last = self.host.last_step
            self._feed(q, lq, self.host.feeds(q.plan.streams, q.start_step, last))
            q.processed_through(last)

    @property
    def in_process(self) -> bool:
        return bool(self.running)

    def process_inline(self, step: int, feed, readers_of_errors: bool) -> list:
        """Process one event before its commit; returns rows operators refused."""
        refused = []
        for q, lq in list(self.running.values()):
            b = step_before_commit(self.options.trace, q, lq, step, feed, readers_of_errors)
            if b is None:
                continue
            self._pending.setdefault(q.name, []).append(b)
            refused += [(q, stream, e) for stream, e in b.errors]
        return refused

    def notify(self, feeds, head: int) -> None:
        """After the commit: hand each query what it released. A delivery that fails is that
        query's error (it stops, saying why); the other queries get theirs all the same."""
        pending, self._pending = self._pending, {}
        for q, _lq in list(self.running.values()):
            try:
                q.deliver(pending.pop(q.name, []))
            except Exception as e:      # noqa: BLE001 - whatever it is, it is this query's alone
                self._failed(q, e)
                continue
            q.processed_through(head)

    def _failed(self, q, e: Exception) -> None:
        from ...errors import one_line
        self.stop(q)
        q.fail(one_line(f"its rows could not be delivered: {getattr(e, 'message', None) or e}", limit=300))

    def rebuild(self, head: int) -> None:
        self._pending.clear()
        for name, (q, _old) in list(self.running.items()):
            lq = replayed(self.host, q, head)
            q.handle = lq
            self.running[name] = (q, lq)

    def _feed(self, q, lq: LocalQuery, feeds) -> None:
        out = []
        for step, feed in feeds:
            if step <= q.start_step:
                continue
            b = lq.process(step, feed)
            if self.options.trace and any(s in lq.streams for s in feed):
                q.trace.append(lq.step_trace(b))
            out.append(b)
        q.deliver(out)

    def wait(self, q, timeout=None) -> None:
        return None

    def stop(self, q) -> None:
        self.running.pop(q.name, None)

    def close(self) -> None:
        self.running.clear()

    # ------------------------------------------------------------------ the rest of a session

    def relational(self, root) -> list[tuple]:
        from .relational import PythonRelational
        return PythonRelational(self.host).run(root)

    def foreign_reader(self, stream: str):
        from .foreign import PolledFileReader
        return PolledFileReader(self.host, stream)

    def file_sink(self, q, path, fmt: str):
        from .sinks import ArrowFileSink
        return ArrowFileSink(q, path, fmt)

    def explain(self, q) -> str:
        return f"(query {q.name} runs on the local engine: there is no Spark plan)"
