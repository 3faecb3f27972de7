"""The lifecycle of a workbench's continuous queries: start, stop, resume with the workspace.

The running :class:`~streamsql.engine.continuous_query.ContinuousQuery` objects are ``wb.queries``; their
definitions (SQL, the step they start after, their clocks then, their sinks, whether they run)
are saved with the catalog snapshot, so that reopening the workspace resumes them. Here too is
the bookkeeping of the Spark runtime's error-only commits: per query, the last delivery whose
refused rows are committed, saved in the same snapshot.
"""
from __future__ import annotations

import logging
from pathlib import Path

from .continuous_query import ContinuousQuery
from .errors import NameInUseError, StreamSqlError, WorkspaceError
from .foreign import stamp_rowtime_columns
from .paths import check_path_name
from .plan import Query

log = logging.getLogger("streamsql")


class QueryLifecycle:
    """The continuous queries of workbench ``wb`` (``wb.lifecycle``): see the module."""

    def __init__(self, wb):
        self.wb = wb
        #: per query name, its definition as saved with the catalog
        self.defs: dict[str, dict] = {}
        #: the last number of a generated query name (``q1``, ``q2``, ...)
        self.counter = 0
        #: per query, the last delivery whose refused rows are committed (saved with the catalog)
        self._errors_batch: dict[str, int] = {}

    def restore(self, defs: dict[str, dict], counter: int) -> None:
        """The definitions as a catalog snapshot holds them (on open, or after an undo)."""
        self.defs, self.counter = defs, counter

    def saved(self) -> dict[str, dict]:
        """The definitions to save in the catalog snapshot, with the committed deliveries."""
        for name, b in self._errors_batch.items():
            if name in self.defs:
                self.defs[name]["errors_batch"] = b
        return self.defs

    def in_use(self, name: str) -> list[str]:
        """The running queries that read stream or table ``name`` (which cannot be replaced or
        dropped under them)."""
        return [q.name for q in self.wb.queries.values() if q.running and
                (name in q.plan.streams or name in q.plan.tables)]

    # ------------------------------------------------------------------ start and stop

    def start(self, plan: Query, name: str | None, start_step: int | None = None,
              replace: bool = False) -> ContinuousQuery:
        """Start ``plan`` as query ``name`` (None: the next free ``qN``) from the last committed
        step; ``start_step`` (benchmarks, tests) reads the log from an earlier step, from empty
        clocks. ``replace`` stops a running query of that name first."""
        wb = self.wb
        name = self._free_name(name, replace)
        start = wb.catalog.next_step - 1 if start_step is None else start_step
        q = ContinuousQuery(wb, name, plan, start)
        if start_step is None:
            q.start_clocks = {s: wb.catalog.state[s].bound for s in plan.streams if s in wb.catalog.state}
        if stamp_rowtime_columns(wb.catalog, plan.promoted):
            wb.save_catalog()
        self._errors_batch.pop(name, None)
        wb.runtime.start(q)
        wb.queries[name] = q
        self.defs[name] = {"sql": plan.sql, "start_step": start, "engine": wb.engine,
                           "running": True, "start_clocks": q.start_clocks, "errors_batch": -1}
        wb.save_catalog()
        wb.start_readers(plan.streams)
        return q

    def _free_name(self, name: str | None, replace: bool) -> str:
        """The name a new query gets: a generated one, or ``name`` once no query of that name
        runs (stopped first when ``replace``, else a NameInUseError)."""
        queries = self.wb.queries
        if name is None:
            self.counter += 1
            name = f"q{self.counter}"
            while name in queries:
                self.counter += 1
                name = f"q{self.counter}"
            return name
        check_path_name(name, "query")
        if name in queries and queries[name].running:
            if not replace:
                raise NameInUseError(f"a query named {name} is already running; stop it (stop_query({name!r}), "
                                     f"%streamsql stop {name}) or choose another name")
            self.stop(name)
        return name

    def stop(self, name: str) -> None:
        """``Workbench.stop_query``: the runtime stops the query, its definition says so."""
        wb = self.wb
        wb.check_writable("stop_query")
        q = wb.queries.get(name)
        if q is None:
            raise StreamSqlError(f"no query named {name}; queries: {', '.join(wb.queries) or 'none'}")
        if q.running:
            wb.runtime.stop(q)
            q.running = False
        self.defs.get(name, {})["running"] = False
        wb.save_catalog()
        q._state_changed()

    def stop_unsaved(self) -> None:
        """After an undo: stop the queries a failed statement started (their definitions were
        not committed)."""
        wb = self.wb
        for name, q in list(wb.queries.items()):
            d = self.defs.get(name)
            if q.running and (d is None or not d.get("running")):
                wb.runtime.stop(q)
                q.running = False
                if d is None:
                    del wb.queries[name]

    def record_sink(self, query: str, path: str, fmt: str) -> None:
        """Remember that ``query`` writes its rows to ``path`` (resumed with the workspace)."""
        self.wb.check_writable("write_to")
        self.defs.get(query, {}).setdefault("sinks", []).append([path, fmt])
        self.wb.save_catalog()

    # ------------------------------------------------------------------ a reopened workspace

    def resume(self) -> None:
        """Start again every query that ran when the workspace was last written, from its
        checkpoint; one that cannot (a name or SQL no longer valid, a damaged log segment) is
        marked stopped with a warning, and the workspace opens."""
        for name, d in list(self.defs.items()):
            if d.get("running"):
                self._resume_one(name, d)

    def _resume_one(self, name: str, d: dict) -> None:
        from .sql import analyze
        wb = self.wb
        try:
            check_path_name(name, "query")
        except StreamSqlError as e:   # a workspace made before names were checked
            log.warning("query %s was not resumed: %s", name, e)
            d["running"] = False
            return
        try:
            stmt = analyze(d["sql"], wb.catalog)
        except StreamSqlError as e:
            log.warning("query %s could not be resumed: %s", name, e)
            d["running"] = False
            return
        q = ContinuousQuery(wb, name, stmt.query, d["start_step"])
        q.start_clocks = d.get("start_clocks", {})
        wb.queries[name] = q
        try:
            q._sinks = [wb.runtime.file_sink(q, Path(p), fmt) for p, fmt in d.get("sinks", [])]
            wb.runtime.start(q, resume=True)
        except WorkspaceError as e:   # e.g. a damaged log segment: the query fails, the workspace opens
            wb.runtime.stop(q)
            q.running, q.error = False, str(e)
            wb.open_warnings.append(f"query {name} could not be resumed: {e}")
            log.warning("query %s could not be resumed: %s", name, e)
            return
        wb.start_readers(q.plan.streams)

    # ------------------------------------------------------------------ error-only commits

    def errors_committed(self, name: str, batch: int) -> None:
        """Delivery ``batch`` of query ``name`` has its refused rows committed (saved with the
        next catalog snapshot, which the error-only commit writes)."""
        self._errors_batch[name] = batch

    def errors_committed_through(self, name: str) -> int | None:
        """The last delivery of query ``name`` whose refused rows are in the error stream (-1:
        none yet; None: a workspace made before deliveries were numbered, where all are)."""
        b = self._errors_batch.get(name)
        return b if b is not None else self.defs.get(name, {}).get("errors_batch")
