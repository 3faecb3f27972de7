"""The commit path of a workbench: how an append of events becomes durable and visible, and how
one that failed is undone.

Every write of events goes through here (``wb.commits``): injections and INSERT statements
(:meth:`Commits.append`), bulk loads (:meth:`Commits.load`, whose column-wise work is
:mod:`~streamsql.engine.bulk`), what pumps insert (inside the step of the event that drives them)
and the rows a Spark stage refused after their event's commit (:meth:`Commits.operator_errors`).
The order of a commit is the log's (:mod:`~streamsql.engine.log`): the stream-log segments, the
catalog snapshot (the commit point, :meth:`Commits.write`), then HEAD and the runtime
(:meth:`Commits.publish`). An append that fails before the catalog is written sends the
workbench back to the workspace's last commit (:meth:`Commits.undo`).

The public API, for bulk loads, pumps, foreign streams and the runtimes' drivers (never the
workbench's private state):

- ``in_process``: whether events must pass through pumps or the runtime before their commit;
- ``before_commit(step, feed)``: pumps and in-process queries see an event before its commit;
- ``write(entries)`` (steps 1 and 2: log segments, catalog) then ``publish(feeds)`` (step 3);
- ``feeds(streams, start, end)``: the committed log entries per event, for what replays the log;
- ``operator_errors(q, errors, batch)``: an error-only commit of rows a stage refused;
- ``on_inject(f)`` / ``off_inject(f)`` / ``announce(what)``: the callbacks after each append.
"""
from __future__ import annotations

import contextlib
import errno
import json
import logging
import threading
from typing import Callable, Iterable

from .catalog import ERROR_STREAM, Event, LogEntry, Outcome
from .errors import WorkspaceError
from .locks import callout
from .log import atomic_write, entries_table, read_feeds
from .steps import event_record
from .workspace import CATALOG_VERSION, read_catalog, read_only_error, streams_with_events

log = logging.getLogger("streamsql")

Feeds = list[tuple[int, dict[str, list[LogEntry]]]]


class Commits:
    """The commit path of workbench ``wb`` (``wb.commits``): see the module."""

    def __init__(self, wb):
        self.wb = wb
        self._listeners: list[Callable] = []
        self._local = threading.local()          # .first: see first()

    @property
    def in_process(self) -> bool:
        """Whether events must pass through the runtime or pumps before their commit
        (:meth:`before_commit`)."""
        rt = self.wb.started_runtime
        return bool(self.wb.pumps.runners) or (rt is not None and rt.in_process)

    # ------------------------------------------------------------------ appends

    def append(self, events: Iterable[Event]) -> list[Outcome]:
        """``Workbench.inject``: the events in order as one durable append, each through the
        catalog (its step, late rows, producers), pumps and in-process queries, then committed."""
        wb = self.wb
        with wb.lock:
            c = wb.catalog
            committed = c.next_step - 1
            feeds: Feeds = []
            outcomes: list[Outcome] = []
            try:
                tables = self._apply(events, outcomes, feeds)
                if not outcomes:
                    return outcomes
                wb.journal.record(outcomes, c)
                self.write(tables)
            except BaseException as e:
                self.undo(committed, e, f"the append of {len(outcomes)} event(s)")
            self.publish(feeds, before=committed)
        self.announce(outcomes)
        return outcomes

    def _apply(self, events: Iterable[Event], outcomes: list, feeds: Feeds) -> dict[str, list[LogEntry]]:
        """Each event through the catalog at its step (outcomes and feeds filled in as they come,
        so that a failure knows how far it got); returns the stream-log entries to write."""
        c = self.wb.catalog
        tables: dict[str, list[LogEntry]] = {}
        for ev in events:
            step = c.next_step
            c.next_step += 1
            out: dict[str, list[LogEntry]] = {}
            o = c.apply(ev, step, out)
            outcomes.append(o)
            if out:
                self.before_commit(step, out)
                feeds.append((step, out))
                for s, entries in out.items():
                    tables.setdefault(s, []).extend(entries)
            if self.wb.trace:
                self.wb.event_trace.append(event_record(o))
        return tables

    def load(self, stream: str | None, data, rowtime: str, chunk: int, progress):
        """``Workbench.load``: the bulk load's checks, then its writes (:mod:`~streamsql.engine.bulk`)
        as one append. Data refused while it is checked changes nothing; a failure of the writes
        is undone."""
        from .bulk import apply_load, check_load
        wb = self.wb
        with wb.lock:
            d = wb.catalog.stream(stream) if stream is not None else None
            checked = check_load(wb, d, data, rowtime)
            committed = wb.catalog.next_step - 1
            try:
                res, feeds = apply_load(wb, checked, chunk, progress)
            except BaseException as e:
                self.undo(committed, e, "the load")
            self.publish(feeds)
        self.announce(res)
        return res

    def before_commit(self, step: int, out: dict[str, list[LogEntry]]) -> None:
        """Pumps and queries that run in-process see the event before it is committed, so that
        what pumps insert and rows operators refuse (T-sort late rows) enter their streams at
        the same step. Queries on the error stream itself see it after those rows were added."""
        wb = self.wb
        wb.pumps.process_inline(step, out)
        rt = wb.started_runtime
        for readers_of_errors in ((False, True) if rt is not None else ()):
            for q, stream, err in rt.process_inline(step, out, readers_of_errors):
                wb.catalog.report_operator_error(step, stream, q.name, err, out)

    # ------------------------------------------------------------------ the commit

    def write(self, entries: dict[str, list[LogEntry]]) -> None:
        """Steps 1 and 2 of a commit of the events up to ``catalog.next_step - 1``: the stream-log
        ``entries`` not written yet, then the catalog snapshot (the commit point). A failure here
        leaves the caller to undo the append."""
        wb = self.wb
        c = wb.catalog
        if entries:
            wb.log.write_segments({c.streams[s].uid: entries_table(c.streams[s].fields, es)
                                   for s, es in entries.items() if es})
        self.snapshot()

    def snapshot(self, c=None) -> None:
        """Step 2, the commit point: the workspace's catalog snapshot (``c``, else the current
        catalog, with the queries' definitions and the journal's state) replaces the last one.
        Also what a change of definitions writes (``Workbench.save_catalog``)."""
        wb = self.wb
        if wb.read_only:
            raise read_only_error(wb.path, "writing the catalog")
        c = c or wb.catalog
        wb.journal.before_commit()
        data = {"version": CATALOG_VERSION, "catalog": c.to_json(), "queries": wb.lifecycle.saved(),
                "query_counter": wb.lifecycle.counter, "journal": wb.journal.to_json()}
        atomic_write(wb.catalog_path, json.dumps(data).encode(), wb.durable)

    def publish(self, feeds: Feeds, before: int | None = None) -> None:
        """Step 3, after the catalog commit: HEAD (readers may see the append), then the runtime
        hears of ``feeds`` (``[(step, {stream: entries})]``, the events just committed, after
        step ``before``). Within :meth:`first`, the runtime may run that query first."""
        wb = self.wb
        head = wb.catalog.next_step - 1
        rt = wb.started_runtime
        first = getattr(self._local, "first", None)
        try:
            if rt is None:
                wb.log.write_head(head)
            else:
                rt.write_head(head, first, head if before is None else before,
                              {s for _step, out in feeds for s in out})
        except OSError as e:   # committed all the same: the next commit or open rewrites HEAD
            log.warning("workspace %s: step %d is committed but log/HEAD could not be written (%s); "
                        "Spark queries see it after the next append", wb.path, head, e.strerror or e)
        if rt is not None:
            rt.notify(feeds, head)

    @contextlib.contextmanager
    def first(self, query: str | None):
        """Appends made in this block (on this thread) come from the view of query ``query``
        (its injector): the runtime may run that query before the others
        (:meth:`Runtime.write_head <streamsql.engine.runtime.base.Runtime.write_head>`)."""
        before = getattr(self._local, "first", None)
        self._local.first = query
        try:
            yield
        finally:
            self._local.first = before

    def feeds(self, streams, start: int, end: int) -> Feeds:
        """The committed stream-log entries of ``streams`` with ``start < step <= end``, grouped
        by event (what in-process queries and pumps replay when a workspace reopens)."""
        return read_feeds(self.wb.log, self.wb.catalog, streams, start, end)

    def operator_errors(self, q, errors: list, batch: int | None = None) -> None:
        """Rows a runtime's operator refused after their event was committed (the Spark runtime
        learns them from its stages): ``errors`` are ``(input stream, OperatorError)``. They go to
        the error stream in an error-only commit: no new step; each row keeps the step that
        refused it (its ``STEP`` and its place in the stream log). ``batch``: the runtime's number
        for this delivery, recorded in the same commit
        (:meth:`~streamsql.engine.lifecycle.QueryLifecycle.errors_committed_through`), so that a
        resumed query commits again exactly the deliveries a crash cut off."""
        wb = self.wb
        with wb.lock:
            out: dict[str, list[LogEntry]] = {}
            for stream, err in errors:
                wb.catalog.report_operator_error(err.step, stream, q.name, err, out)
            entries = out.get(ERROR_STREAM, [])
            if entries:
                d = wb.catalog.streams[ERROR_STREAM]
                n = (wb.catalog.late_commits or 0) + 1
                wb.log.write_segments({d.uid: entries_table(d.fields, entries)}, late=n)
                wb.catalog.late_commits = n
            # recorded once its rows are written (a failed write leaves the delivery to redo)
            if batch is not None:
                wb.lifecycle.errors_committed(q.name, batch)
            if entries:
                self.snapshot()

    # ------------------------------------------------------------------ a failed append

    def undo(self, committed: int, e: BaseException, what: str, events: bool = True,
             pumps: bool = True) -> None:
        """An append (or statement) that failed before its commit: the workbench goes back to the
        workspace's last commit (catalog from disk, log tail removed, in-process queries and pumps
        rebuilt from the log) and the error is raised: a write that failed for lack of space is a
        WorkspaceError saying nothing of it was kept."""
        wb = self.wb
        on_disk = read_catalog(wb.catalog_path)[0].next_step - 1 if wb.catalog_path.exists() else 0
        if on_disk != committed:
            # the commit itself happened (only a later fsync failed): it is kept, and the next append
            # writes HEAD and hands the queries what this one released
            raise WorkspaceError(f"workspace {wb.path}: {what} was committed (up to step {on_disk}) but "
                                 f"writing reported an error after it: {e}") from e
        self._back_to(committed)
        rt = wb.started_runtime
        if events and rt is not None:   # queries that saw the events in-process
            rt.rebuild(committed)
        if events or pumps:
            wb.pumps.runners.clear()
            wb.pumps.resume()
        wb.event_trace = [t for t in wb.event_trace if t["step"] <= committed]
        wb.load_trace = [(s, t) for s, t in wb.load_trace
                         if not t.num_rows or t.column("step")[0].as_py() <= committed]
        _raise_undone(wb.path, committed, e, what)

    def _back_to(self, committed: int) -> None:
        """The catalog, query definitions, log and journal as of the last commit; queries the
        failed statement started are stopped."""
        wb = self.wb
        c, defs, counter, journal = read_catalog(wb.catalog_path)
        wb.catalog = c
        wb.lifecycle.restore(defs, counter)
        wb.log.truncate_after(committed)
        wb.journal.restore(journal, committed, streams_with_events(c))
        (wb.path / "catalog.json.tmp").unlink(missing_ok=True)
        wb.lifecycle.stop_unsaved()

    # ------------------------------------------------------------------ listeners

    def on_inject(self, f: Callable[[list], None]) -> None:
        """``Workbench.on_inject``: call ``f`` after every committed append."""
        self._listeners.append(f)

    def off_inject(self, f) -> None:
        """``Workbench.off_inject``: remove a callback added with :meth:`on_inject`."""
        if f in self._listeners:
            self._listeners.remove(f)

    def announce(self, what) -> None:
        """Tell the callbacks of an append once it is committed (outcomes, or a LoadResult), and
        never while this thread holds an engine lock (``locks.callout``: an INSERT statement's
        append is told after the statement); a broken view must not break injection."""
        for f in list(self._listeners):
            callout(_tell, f, what)


def _tell(f: Callable, what) -> None:
    try:
        f(what)
    except Exception:
        log.exception("inject listener failed")


def _raise_undone(path, committed: int, e: BaseException, what: str) -> None:
    """The error of an append that was undone: a failed write says nothing of it was kept."""
    if isinstance(e, OSError):
        log.error("workspace %s: %s failed and was undone: %s", path, what, e)
        full = e.errno in (errno.ENOSPC, errno.EFBIG, errno.EDQUOT)
        raise WorkspaceError(f"{'could not write to' if full else 'failed in'} the workspace {path}: "
                             f"{e.strerror or e}; {what} was undone (nothing of it is in the log, which is "
                             f"as of step {committed}){'; free space and try again' if full else ''}") from None
    raise e
