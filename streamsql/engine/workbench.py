"""The Python API the magics, widgets and command line share: a workbench over a workspace.

A workbench owns a catalog, the durable event log of its workspace directory and the running
continuous queries. Injected events get a global sequence number (the *step*), go through the
catalog (late rows, producers), are committed to the log, and reach every running query, which
hands back the rows it released with the step that released them.

The class is a facade: it opens, holds and closes the workspace's parts and keeps the public
API in one place; the logic lives in modules named for what they hold: running statements
(:mod:`~streamsql.engine.statements`), the commit path (:mod:`~streamsql.engine.commits`,
``wb.commits``: appends, bulk loads, error-only commits, undo), the queries' lifecycle
(:mod:`~streamsql.engine.lifecycle`, ``wb.lifecycle``), pumps (:mod:`~streamsql.engine.pumps`),
bulk loads' column-wise checks (:mod:`~streamsql.engine.bulk`) and the per-event trace
(:mod:`~streamsql.engine.steps`).
"""
from __future__ import annotations

import atexit
import logging
import shutil
import weakref
from dataclasses import fields, replace
from pathlib import Path
from typing import Any, Callable, Iterable

import numpy as np
import pyarrow as pa

from . import environment, lateness, statements
from . import time as sqltime
from .catalog import DEFAULT_PRODUCER, Catalog, Event, Outcome, now_ms
from .commits import Commits
from .continuous_query import ContinuousQuery, LoadResult, Result
from .errors import EventError, LateRowError, SqlError, StreamSqlError, WorkspaceError, one_line
from .journal import Journal
from .lifecycle import QueryLifecycle
from .lock import WorkspaceLock
from .locks import engine_rlock
from .log import EventLog
from .runtime.base import Runtime
from .runtime.engines import check_engine, make_runtime, prestart
from .runtime.options import RuntimeOptions
from .runtime_host import WorkbenchHost
from .steps import traced_events as _traced_events, traced_rowtimes as _traced_rowtimes
from .tempdirs import temporary_dir
from .workspace import read_catalog, read_only_error, streams_with_events

log = logging.getLogger("streamsql")

#: the open workbenches on a temporary workspace: removed at exit when nobody closed them (a
#: notebook's kernel, a script that ends), so that /tmp does not fill with abandoned workspaces
_temporary: "weakref.WeakSet[Workbench]" = weakref.WeakSet()


@atexit.register
def _remove_temporary_workspaces() -> None:
    for wb in list(_temporary):
        wb._release()


class Workbench:
    """Open a workspace (a directory; when None, a temporary one, removed by :meth:`close` or at
    the process's exit) and run streaming SQL in it.

    ``engine`` is ``"spark"`` (the product: PySpark on ``master``; when None, the environment's
    ``STREAMSQL_MASTER``, else ``local[*]``) or ``"local"`` (in-process, for tests and as the
    oracle). ``buckets`` spreads every stateful
    operator over that many key buckets; ``batch_events`` caps events per Spark micro-batch;
    ``trace=False`` skips the per-event operator trace (for bulk replays), ``trace_steps`` bounds
    how many steps of it each query keeps (the last ones); ``reader="parallel"``
    reads the log with parallel Spark tasks (replays of many events) instead of the driver-side
    reader that gives the quickest one-event steps. ``remote`` is a Spark Connect endpoint
    (``sc://host:15002``) to run on; the workspace must then be on storage that server reads.
    These settings are the runtime's :class:`~streamsql.engine.runtime.options.RuntimeOptions`;
    ``options`` gives them all at once (a keyword argument given besides it wins), and so do the
    rest of its fields as keyword arguments (``check_calc_errors``, ``partition_events``,
    ``on_spark_start``, ``on_spark_phase``). They are read-only attributes of the workbench.

    One process writes a workspace at a time (a lock file names it); ``read_only=True`` opens a
    workspace another process writes: catalog, clocks, history and relational queries, as of
    the last :meth:`refresh`; every write raises a :class:`~streamsql.WorkspaceError`.
    """

    def __init__(self, workspace: str | Path | None = None, *, engine: str = "spark",
                 master: str | None = None, buckets: int = 1, batch_events: int | None = None,
                 durable: bool = True, spark_conf: dict | None = None, trace: bool = True,
                 reader: str = "simple", read_only: bool = False, trace_steps: int = 10_000,
                 remote: str | None = None, options: RuntimeOptions | None = None, **more_options):
        check_engine(engine)
        given = {k: v for k, v in dict(master=master, buckets=buckets, batch_events=batch_events, durable=durable,
                                       spark_conf=spark_conf, trace=trace, reader=reader, trace_steps=trace_steps,
                                       remote=remote).items() if v != _DEFAULTS[k]}
        unknown = sorted(set(more_options) - set(_DEFAULTS))
        if unknown:
            raise TypeError(f"Workbench() got an unexpected keyword argument {unknown[0]!r} (runtime options: "
                            f"{', '.join(_DEFAULTS)})")
        opts = replace(options or RuntimeOptions(), **given, **more_options)
        #: the runtime's settings (read-only: a runtime is told them when it is made), with the
        #: environment's Spark master and Connect endpoint resolved once (docs/engine.md)
        self.options = replace(opts, master=opts.master or environment.master(),
                               remote=opts.remote or environment.remote())
        self._tmp = None
        self._ws_lock: WorkspaceLock | None = None
        self.read_only = bool(read_only)
        if workspace is None:
            if self.read_only:
                raise WorkspaceError("a read-only workbench needs the path of an existing workspace")
            self._tmp = str(temporary_dir("ws"))
            workspace = self._tmp
            _temporary.add(self)
        self.path = Path(workspace).resolve()
        if self.read_only:
            if not (self.path / "catalog.json").is_file():
                raise WorkspaceError(f"no workspace at {self.path} (no catalog.json) to open read-only")
        else:
            try:
                self.path.mkdir(parents=True, exist_ok=True)
            except OSError as e:
                raise WorkspaceError(f"cannot use {self.path} as a workspace: {e.strerror or e}") from None
            self._ws_lock = WorkspaceLock(self.path).acquire()
        try:
            self._open(engine)
        except BaseException:
            self._release()
            raise

    def _open(self, engine) -> None:
        self.engine = engine
        durable = self.durable
        if not self.read_only:   # Spark starts while the workspace opens and the user types
            prestart(engine, self.master, self.spark_conf, self.path / "logs", self.remote)
        self.log = EventLog(self.path, durable=durable, read_only=self.read_only)
        #: every injected event as given, with its outcome (scenarios: ``save_scenario``)
        self.journal = Journal(self.path, durable=durable)
        self.queries: dict[str, ContinuousQuery] = {}
        self.event_trace: list[dict] = []
        #: ``(stream, table)`` per stream of each ``load()``: its events column-wise (see traced_events)
        self.load_trace: list[tuple[str, pa.Table]] = []
        #: held by every change of the catalog, the log and the queries (appends, statements)
        self.lock = engine_rlock("workbench")
        self._runtime: Runtime | None = None      # made on first use (Spark starts lazily)
        self.readers: dict[str, Any] = {}         # foreign stream -> FileReader
        #: the commit path (appends, bulk loads, error-only commits, undo): the public commit API
        self.commits = Commits(self)
        #: start, stop and resume of the continuous queries; their definitions in the catalog
        self.lifecycle = QueryLifecycle(self)
        #: what opening the workspace found wrong and repaired (a torn log tail): one line each
        self.open_warnings: list[str] = []
        if self._ws_lock is not None and self._ws_lock.took_over:
            self.open_warnings.append(self._ws_lock.took_over)
            log.warning("%s", self._ws_lock.took_over)
        self.catalog = self._open_catalog()
        from .pumps import Pumps
        self.pumps = Pumps(self)
        if not self.read_only:     # a reader runs nothing: no pumps, no queries
            self.pumps.resume()
            self.lifecycle.resume()

    # ------------------------------------------------------------------ workspace

    @property
    def catalog_path(self) -> Path:
        """The catalog snapshot: definitions, clocks and the committed step (the commit point)."""
        return self.path / "catalog.json"

    def _open_catalog(self) -> Catalog:
        """The committed catalog and query definitions; the log and the journal are brought
        back to its commit (a torn tail set aside, unless read-only). A new workspace gets an
        empty catalog; a log without a catalog is refused rather than guessed at."""
        p = self.catalog_path
        if not p.exists():
            if any((self.path / "log").glob("*/*.arrow")):
                raise WorkspaceError(f"{self.path} has an event log but no catalog.json: it cannot be opened "
                                     f"(restore catalog.json, or move the folder away to start afresh)")
            c = Catalog()
            self.save_catalog(c)
            return c
        c, defs, counter, journal = read_catalog(p)
        self.lifecycle.restore(defs, counter)
        self.open_warnings += self.log.recover(c.next_step - 1, repair=not self.read_only,
                                               late_committed=c.late_commits)
        if c.late_commits is None:     # made before late commits were numbered: all committed
            c.late_commits = self.log.last_late_number()
        if self.journal.restore(journal, c.next_step - 1, streams_with_events(c), repair=not self.read_only):
            log.info("workspace %s: removed uncommitted journal segments", self.path)
        return c

    def refresh(self) -> None:
        """Read-only workbench: see what the writer has committed since (catalog, clocks, log)."""
        if not self.read_only:
            return
        with self.lock:
            self.open_warnings = []
            self.catalog = self._open_catalog()

    def check_writable(self, what: str) -> None:
        """Raise the WorkspaceError of a write on a read-only workbench (``what`` names it)."""
        if self.read_only:
            raise read_only_error(self.path, what)

    def save_catalog(self, c: Catalog | None = None) -> None:
        """Replace the workspace's catalog snapshot (definitions, clocks, the committed step):
        after a change of definitions (the commit point of an append is ``commits.snapshot``,
        which this is)."""
        self.commits.snapshot(c)

    def close(self) -> None:
        """Stop the queries' runtimes (their definitions stay in the workspace) and release it."""
        for r in list(self.readers.values()):
            r.stop()
        self.readers.clear()
        if self._runtime is not None:
            self._runtime.close()
            self._runtime = None
        self._release()

    def _release(self) -> None:
        """Give up the workspace lock (another process may write it) and a temporary workspace."""
        if self._ws_lock is not None:
            self._ws_lock.release()
            self._ws_lock = None
        if self._tmp:
            shutil.rmtree(self._tmp, ignore_errors=True)
            self._tmp = None
            _temporary.discard(self)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    @property
    def runtime(self) -> Runtime:
        """The runtime every query of this workbench runs on, chosen once by ``engine``."""
        if self._runtime is None:
            self._runtime = make_runtime(self.engine, WorkbenchHost(self), self.options)
        return self._runtime

    @property
    def started_runtime(self) -> Runtime | None:
        """The runtime if something started it, else None: asking must not start Spark."""
        return self._runtime

    # ------------------------------------------------------------------ statements

    def execute(self, sql: str, *, name: str | None = None, replace: bool = False) -> list[Result]:
        """Run one or more statements. A SELECT STREAM starts a continuous query (``name`` names
        the first one; ``replace`` stops a running query of that name first, else the name in
        use is a :class:`~streamsql.NameInUseError`). Errors carry the position in ``sql``; statements
        before the failing one stay done, the failing one changes nothing."""
        return statements.execute(self, sql, name, replace)

    def query(self, sql: str, name: str | None = None, *, replace: bool = False) -> ContinuousQuery:
        """Start the continuous query in ``sql`` (one SELECT STREAM statement)."""
        res = self.execute(sql, name=name, replace=replace)
        qs = [r.query for r in res if r.query is not None]
        if len(qs) != 1:
            raise SqlError("query() needs exactly one SELECT STREAM statement")
        return qs[0]

    # ------------------------------------------------------------------ queries

    def stop_query(self, name: str) -> None:
        """Stop the continuous query ``name``; its released rows stay readable on the query object."""
        with self.lock:
            self.lifecycle.stop(name)

    def start_readers(self, streams) -> None:
        """Foreign streams start reading their files when their first reader (a query or a
        pump) starts."""
        for s in streams:
            d = self.catalog.streams.get(s)
            if d is None or d.foreign is None or s in self.readers:
                continue
            r = self.readers[s] = self.runtime.foreign_reader(s)
            r.start()

    def wait_readers(self, streams=None) -> None:
        """Until the foreign streams (those given, or all) have read the files there are now."""
        for s, r in list(self.readers.items()):
            if streams is None or s in streams:
                r.wait()

    # ------------------------------------------------------------------ appends (the commit path: commits.py)

    def inject(self, events: Iterable[Event]) -> list[Outcome]:
        """Inject events in order as one durable append; returns each event's outcome (nothing
        raises for bad events: see ``Outcome.status``)."""
        self.check_writable("injecting events")
        return self.commits.append(events)

    def load(self, stream: str | None, data, *, rowtime: str = "ROWTIME", chunk: int = 1_000_000,
             progress: Callable[[int, int], None] | None = None) -> "LoadResult":
        """Inject many events at once, each with its own step, as if each stream's default
        producer sent them one by one (same late-row rule, same error stream), but checked and
        written column-wise. ``data``: a pyarrow Table, pandas DataFrame or dict of columns, with
        the stream's columns (matched like SQL identifiers) and a ``rowtime`` column (timestamps
        or epoch milliseconds). With ``stream=None`` a ``STREAM`` column routes each event; a
        boolean ``BOUND`` column marks punctuation. ``progress(done, total)`` is called per chunk.
        """
        self.check_writable("loading events")
        return self.commits.load(stream, data, rowtime, chunk, progress)

    def on_inject(self, f: Callable[[list], None]) -> None:
        """Call ``f(outcomes)`` after every committed append (``inject``, ``insert``, ``punctuate``,
        INSERT statements; ``load`` passes its :class:`LoadResult`)."""
        self.commits.on_inject(f)

    def off_inject(self, f) -> None:
        """Remove a callback added with :meth:`on_inject`."""
        self.commits.off_inject(f)

    # ------------------------------------------------------------------ the per-event trace (steps.py)

    def traced_events(self, after: int = 0, streams=None, last: int | None = None) -> list[dict]:
        """The per-event records (``event_trace``'s form) of the events after step ``after`` on
        ``streams`` (all when None), in step order, bulk loads included; ``last`` keeps only the
        last ones (a loaded million stays columns until asked for)."""
        return _traced_events(self.event_trace, self.load_trace, after, streams, last)

    def traced_rowtimes(self, after: int = 0, streams=None) -> dict[str, np.ndarray]:
        """Rowtimes of the rows that entered each stream after step ``after`` (for a binned view
        of many events)."""
        return _traced_rowtimes(self.event_trace, self.load_trace, after, streams)

    # ------------------------------------------------------------------ one event at a time

    def _one(self, ev: Event) -> Outcome:
        """Inject one event; a late or refused one raises, as the one-event methods promise."""
        o = self.inject([ev])[0]
        if o.status == "late":
            raise LateRowError(o.event.stream, o.event.rowtime, o.clock, o.event.producer, o.producer_clock)
        if o.status == "error":
            raise EventError(o.message)
        return o

    def insert(self, stream: str, values: dict | None = None, *, rowtime=None, producer: str | None = None,
               **kw) -> Outcome:
        """Insert one row. ``rowtime`` None is the stream's clock (see :meth:`default_rowtime`),
        ``"HH:MM[:SS]"`` is on that clock's day, ``"now"`` is the wall clock. Raises
        :class:`LateRowError` (the row went to the error stream) or :class:`EventError`."""
        vals = dict(values or {}, **kw)
        return self._one(Event(stream, "row", self.rowtime_of(stream, rowtime, producer), vals, producer=producer))

    def punctuate(self, stream: str, time, *, strict: bool = False, producer: str | None = None) -> Outcome:
        """Assert that every later row of ``stream`` (from this producer) has rowtime >= ``time``
        (> ``time`` when strict); ``time`` as for :meth:`insert`."""
        if time is None:
            raise EventError(f"punctuate({stream!r}, ...) needs a time: the bound every later row is at or after")
        return self._one(Event(stream, "bound", self.rowtime_of(stream, time, producer), strict=strict, producer=producer))

    def attach(self, stream: str, producer: str) -> Outcome:
        """Attach ``producer`` to ``stream``: from now on the stream waits for that producer's clock too."""
        return self._one(Event(stream, "attach", producer=producer))

    def detach(self, stream: str, producer: str = DEFAULT_PRODUCER) -> Outcome:
        """Detach ``producer`` from ``stream``: it stops holding back the stream's rows."""
        return self._one(Event(stream, "detach", producer=producer))

    def default_rowtime(self, stream: str, producer: str | None = None) -> tuple[int | None, str | None]:
        """``(time, whose)``: what a blank ROWTIME on ``stream`` means, and which stream's clock
        gives it. That is the stream's clock (for ``producer``: the later of the stream's and that
        producer's clock, the earliest rowtime that is not late); for a stream with no clock yet,
        the latest clock of any stream in the workbench; ``(None, None)`` when no stream has one.
        A time of day (``"10:02"``) takes its date from the same clock."""
        with self.lock:
            c = self.catalog
            d = c.stream(stream)
            st = c.state[d.name]
            own = lateness.clock(st, producer or DEFAULT_PRODUCER)
            if own > sqltime.NO_TIME:
                return own, d.name
            best, whose = sqltime.NO_TIME, None
            for name, other in c.streams.items():
                if other.system:
                    continue
                ost = c.state[name]
                t = max([ost.bound] + [p.clock for p in ost.producers.values()])
                if t > best:
                    best, whose = t, name
            return (best, whose) if whose is not None else (None, None)

    def rowtime_of(self, stream: str, t, producer: str | None = None) -> int:
        """A rowtime or bound as given to :meth:`insert` / :meth:`punctuate` or an INSERT
        statement: None (the clock), ``"now"``, a time of day, a timestamp text, epoch ms or a
        datetime."""
        if isinstance(t, str) and t.strip().lower() == "now":
            return now_ms()
        if t is None or (isinstance(t, str) and sqltime.is_time_of_day(t)):
            clock, _whose = self.default_rowtime(stream, producer)
            if clock is None:
                if t is None:
                    raise EventError(f"no stream has a clock yet, so a blank ROWTIME on {stream} has no time to "
                                     f"take: give the first row its full rowtime ('YYYY-MM-DD HH:MM:SS', e.g. "
                                     f"'2006-10-10 10:00:00'), or 'now' for the wall clock")
                raise EventError(f"{t.strip()!r} is a time of day, but no stream has a clock yet to give the date: "
                                 f"write the full timestamp ('YYYY-MM-DD HH:MM:SS', e.g. '2006-10-10 10:00:00')")
            if t is None:
                return clock
            try:
                return sqltime.parse_timestamp(t, day=sqltime.day_of(clock))
            except sqltime.TimeFormatError as e:
                raise EventError(one_line(str(e))) from None
        try:
            return sqltime.parse_timestamp(t)
        except sqltime.TimeFormatError as e:
            raise EventError(one_line(str(e))) from None

    # ------------------------------------------------------------------ history (relational SELECT)

    def set_history(self, stream: str, window_ms: int | None = None, *, enabled: bool = True) -> None:
        """Let relational (non-STREAM) SELECTs read ``stream``'s retained history: its rows within
        ``window_ms`` of the stream's clock (all of them when None); ``enabled=False`` turns it off.
        Without history a relational query on the stream fails with ``Cannot convert stream``."""
        self.check_writable("set_history")
        with self.lock:
            self.catalog.set_history(stream, window_ms, enabled=enabled)
            self.save_catalog()

    def native_twin(self, query, delay="0 seconds"):
        """The native Spark twin of a query (by name or object), brought up to date: see
        :meth:`ContinuousQuery.native <streamsql.ContinuousQuery.native>`."""
        from .twin import twin_of
        q = query
        if isinstance(query, str):
            q = next((x for n, x in self.queries.items() if n.lower() == query.lower()), None)
            if q is None:
                raise StreamSqlError(f"no query named {query}; queries: {', '.join(self.queries) or 'none'}")
        return twin_of(self, q, delay)

    # ------------------------------------------------------------------ scenarios

    def save_scenario(self, prefix: str | Path, query=None, *, from_start: bool = False):
        """Write the query (by name; default the last one started) as a scenario:
        ``prefix.sql`` (what it reads, then the query), ``prefix.events.jsonl`` (the events of
        its streams, from the journal) and ``prefix.expected.jsonl`` (what it released, as
        ``streamsql replay --bounds`` prints it). A query started after events had flowed: see
        :mod:`streamsql.engine.recording`. Returns a
        :class:`~streamsql.engine.recording.SavedScenario`."""
        from .recording import pick_query, save_scenario
        q = pick_query(self, query)
        end = None
        if q.running:                  # everything committed so far (a stopped query: what it saw)
            end = self.last_step
            q.wait()
        return save_scenario(self, prefix, q, scratch=_scratch_workbench, from_start=from_start, end=end)

    # ------------------------------------------------------------------ state

    def clock(self, stream: str) -> int | None:
        """The clock of ``stream`` (epoch milliseconds), or None before its first row or bound."""
        d = self.catalog.stream(stream)
        b = self.catalog.clock(d.name)
        return None if b <= sqltime.NO_TIME else b

    def clocks(self) -> dict[str, int | None]:
        """Every stream's clock by name (None where a stream has none yet)."""
        return {n: (None if st.bound <= sqltime.NO_TIME else st.bound) for n, st in self.catalog.state.items()}

    def streams(self) -> list[dict]:
        """One dict per stream: its columns, clock, producers with their clocks, pending and late rows."""
        out = []
        for n, d in self.catalog.streams.items():
            st = self.catalog.state[n]
            out.append({"name": n, "columns": [(f.name, str(f.type)) for f in d.fields],
                        "clock": None if st.bound <= sqltime.NO_TIME else st.bound,
                        "producers": self.catalog.producer_clocks(n), "pending": len(st.pending),
                        "rows": st.rows_in, "late": st.late_count, "system": d.system})
        return out

    @property
    def last_step(self) -> int:
        """The step (global sequence number) of the last injected event; 0 before any."""
        return self.catalog.next_step - 1

    def last_step_of(self, streams: Iterable[str]) -> int:
        """The last committed step with an event of one of ``streams`` (0: none): a query that
        processed it is up to date, whatever came after into other streams. It never waits for
        the workbench's lock (views ask it while a statement runs), so an append under way may
        count or not yet."""
        c = self.catalog
        end = c.next_step - 1
        defs = c.streams
        return max((self.log.last_step(defs[s].uid, end) for s in streams if s in defs), default=0)


#: each runtime option by name, with its default
_DEFAULTS = {f.name: f.default for f in fields(RuntimeOptions)}
_DEFAULTS["spark_conf"] = None        # the one field with a default_factory: None is "not given"


def _option(name: str) -> property:
    def refuse(wb, value):
        raise AttributeError(f"Workbench.{name} is a runtime option, told to the runtime when the workbench is "
                             f"made: give it as Workbench(..., {name}=...) or in its options=RuntimeOptions(...)")
    return property(lambda wb: getattr(wb.options, name), refuse,
                    doc=f"The runtime option ``{name}`` (read-only: see "
                        f":class:`~streamsql.engine.runtime.options.RuntimeOptions`).")


# wb.master, wb.buckets, ...: the options, read-only (setting one raises: a runtime is told them
# when it is made, so a setting patched on later would silently reach nothing)
for _name in _DEFAULTS:
    setattr(Workbench, _name, _option(_name))


def _scratch_workbench() -> Workbench:
    """A temporary in-process workbench without the trace (a saved scenario's expected lines are
    replayed on one)."""
    return Workbench(None, engine="local", trace=False)
