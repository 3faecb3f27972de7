"""The Python API the magics, widgets and command line share: a workbench over a workspace.

A workbench owns a catalog, the durable event log of its workspace directory and the running
continuous queries. Injected events get a global sequence number (the *step*), go through the
catalog (late rows, producers), are committed to the log, and reach every running query, which
hands back the rows it released with the step that released them.
"""
from __future__ import annotations

import json
import logging
import shutil
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable

import pyarrow as pa

from . import time as T
from .catalog import (DEFAULT_PRODUCER, Catalog, Event, LogEntry, Outcome, now_ms)
from .errors import EventError, LateRowError, SqlError, StreamSqlError
from .expr import CalcError, compile_expr
from .log import EventLog, atomic_write, entry_schema
from .plan import (AlterPump, CreatePump, CreateStream, CreateTable, CreateView, Drop, Field,
                   InsertValues, Query, SelectStatement, Statement)
from .query import ContinuousQuery, LoadResult, Result
from .runtime.base import Runtime, make_runtime

log = logging.getLogger("streamsql")


class Workbench:
    """Open a workspace (a directory; a temporary one when None) and run streaming SQL in it.

    ``engine`` is ``"spark"`` (the product: PySpark on ``master``, default ``local[*]``) or
    ``"local"`` (in-process, for tests and as the oracle). ``buckets`` spreads every stateful
    operator over that many key buckets; ``batch_events`` caps events per Spark micro-batch;
    ``trace=False`` skips the per-event operator trace (for bulk replays); ``reader="parallel"``
    reads the log with parallel Spark tasks (replays of many events) instead of the driver-side
    reader that gives the quickest one-event steps.
    """

    def __init__(self, workspace: str | Path | None = None, *, engine: str = "spark",
                 master: str | None = None, buckets: int = 1, batch_events: int | None = None,
                 durable: bool = True, spark_conf: dict | None = None, trace: bool = True,
                 reader: str = "simple"):
        if engine not in ("spark", "local"):
            raise ValueError(f"engine must be 'spark' or 'local', not {engine!r}")
        self._tmp = None
        if workspace is None:
            self._tmp = tempfile.mkdtemp(prefix="streamsql-")
            workspace = self._tmp
        self.path = Path(workspace).resolve()
        self.path.mkdir(parents=True, exist_ok=True)
        self.engine = engine
        self.master = master
        self.buckets = max(1, int(buckets))
        self.batch_events = batch_events
        if reader not in ("simple", "parallel"):
            raise ValueError(f"reader must be 'simple' or 'parallel', not {reader!r}")
        self.reader = reader
        self.spark_conf = dict(spark_conf or {})
        self.log = EventLog(self.path, durable=durable)
        self.durable = durable
        #: keep a per-event trace of every query (operator presents, held rows and why)
        self.trace = trace
        self.queries: dict[str, ContinuousQuery] = {}
        self.event_trace: list[dict] = []
        self._lock = threading.RLock()
        self._runtime: Runtime | None = None      # made on first use (Spark starts lazily)
        self.readers: dict[str, Any] = {}         # foreign stream -> FileReader
        self._inject_listeners: list = []
        self._query_counter = 0
        self._query_defs: dict[str, dict] = {}
        self.catalog = self._open_catalog()
        from .pumps import Pumps
        self.pumps = Pumps(self)
        self.pumps.resume()
        self._resume_queries()

    # ------------------------------------------------------------------ workspace

    @property
    def _catalog_path(self) -> Path:
        return self.path / "catalog.json"

    def _open_catalog(self) -> Catalog:
        p = self._catalog_path
        if not p.exists():
            c = Catalog()
            self._commit_catalog(c)
            return c
        j = json.loads(p.read_text())
        c = Catalog.from_json(j["catalog"])
        self._query_defs = j.get("queries", {})
        self._query_counter = j.get("query_counter", 0)
        dropped = self.log.truncate_after(c.next_seq - 1)
        if dropped:
            log.info("workspace %s: removed %d uncommitted log segments", self.path, dropped)
        self.log.write_head(c.next_seq - 1)
        return c

    def _commit_catalog(self, c: Catalog | None = None) -> None:
        c = c or self.catalog
        data = {"version": 1, "catalog": c.to_json(), "queries": self._query_defs,
                "query_counter": self._query_counter}
        atomic_write(self._catalog_path, json.dumps(data).encode(), self.durable)

    def close(self) -> None:
        """Stop the queries' runtimes (their definitions stay in the workspace) and release it."""
        for r in list(self.readers.values()):
            r.stop()
        self.readers.clear()
        if self._runtime is not None:
            self._runtime.close()
            self._runtime = None
        if self._tmp:
            shutil.rmtree(self._tmp, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    @property
    def runtime(self) -> Runtime:
        """The runtime every query of this workbench runs on, chosen once by ``engine``."""
        if self._runtime is None:
            self._runtime = make_runtime(self.engine, self)
        return self._runtime

    @property
    def in_process(self) -> bool:
        """Whether events must pass through the runtime (and pumps) before their commit."""
        return self._runtime is not None and self._runtime.in_process

    def record_sink(self, query: str, path: str, fmt: str) -> None:
        """Remember that ``query`` writes its rows to ``path`` (resumed with the workspace)."""
        self._query_defs.get(query, {}).setdefault("sinks", []).append([path, fmt])
        self._commit_catalog()

    # ------------------------------------------------------------------ statements

    def execute(self, sql: str, *, name: str | None = None) -> list[Result]:
        """Run one or more statements. A SELECT STREAM starts a continuous query (``name`` names
        the first one). Errors carry the position in ``sql``; statements before the failing one
        stay done, the failing one changes nothing."""
        from .sql import analyze, split_script
        results = []
        for st in split_script(sql):
            stmt = analyze(st, self.catalog, script=sql)
            results.append(self._run(stmt, name))
            if results[-1].query is not None:
                name = None
        return results

    def query(self, sql: str, name: str | None = None) -> ContinuousQuery:
        """Start the continuous query in ``sql`` (one SELECT STREAM statement)."""
        res = self.execute(sql, name=name)
        qs = [r.query for r in res if r.query is not None]
        if len(qs) != 1:
            raise SqlError("query() needs exactly one SELECT STREAM statement")
        return qs[0]

    def _in_use(self, name: str) -> list[str]:
        return [q.name for q in self.queries.values() if q.running and
                (name in q.plan.streams or name in q.plan.tables)]

    def _run(self, stmt: Statement, name: str | None) -> Result:
        with self._lock:
            c = self.catalog
            if isinstance(stmt, CreateStream):
                if stmt.foreign is not None:
                    from .foreign import check_options
                    try:
                        check_options(stmt.name, stmt.foreign)
                    except SqlError as e:
                        raise SqlError(e.message, *(_pos(stmt))) from None
                fields = [Field(col.name, col.type) for col in stmt.columns]
                c.create_stream(stmt.name, fields, or_replace=stmt.or_replace, sql=stmt.sql,
                                in_use=self._in_use(stmt.name),
                                foreign=dict(stmt.foreign) if stmt.foreign is not None else None)
                self._commit_catalog()
                return Result(stmt, f"Stream {stmt.name} created")
            if isinstance(stmt, CreateTable):
                c.create_table(stmt.name, [Field(col.name, col.type) for col in stmt.columns],
                               or_replace=stmt.or_replace, sql=stmt.sql, in_use=self._in_use(stmt.name))
                self._commit_catalog()
                return Result(stmt, f"Table {stmt.name} created")
            if isinstance(stmt, CreateView):
                from .sql import analyze
                try:   # a streaming body may stamp a foreign stream with a column (col AS ROWTIME)
                    promoted = analyze(stmt.body_sql, c).query.promoted
                except SqlError:   # a relational body over streams: valid (the analyzer checked it)
                    promoted = {}
                self._promote(promoted, stmt)
                c.create_view(stmt.name, stmt.column_names, stmt.body_sql, or_replace=stmt.or_replace,
                              sql=stmt.sql)
                self._commit_catalog()
                return Result(stmt, f"View {stmt.name} created")
            if isinstance(stmt, Drop):
                if stmt.kind == "PUMP" and stmt.name in c.pumps:
                    self.pumps.stop([stmt.name])
                if stmt.kind == "STREAM":
                    feeding = [n for n, p in c.pumps.items() if p["target"] == stmt.name or stmt.name in p["sources"]]
                    if feeding:
                        raise SqlError(f"Stream '{stmt.name}' is used by pump{'s' if len(feeding) > 1 else ''} "
                                       f"{', '.join(feeding)}; drop {'them' if len(feeding) > 1 else 'it'} first",
                                       *(_pos(stmt)))
                d = c.drop(stmt.kind, stmt.name, if_exists=stmt.if_exists, in_use=self._in_use(stmt.name))
                if d is not None and stmt.kind == "STREAM":
                    self.log.drop_stream(d.uid)
                self._commit_catalog()
                return Result(stmt, f"{stmt.kind.title()} {stmt.name} dropped")
            if isinstance(stmt, InsertValues):
                return self._insert_values(stmt)
            if isinstance(stmt, SelectStatement):
                if not stmt.query.is_stream:
                    # relational SELECT (issue 7): evaluated at once over tables, VALUES and history
                    from .relational import run_relational
                    return run_relational(self, stmt)
                q = self._start_query(stmt.query, name)
                return Result(stmt, f"Query {q.name} started", query=q)
            if isinstance(stmt, CreatePump):
                return Result(stmt, self.pumps.create(stmt))
            if isinstance(stmt, AlterPump):
                done = (self.pumps.start if stmt.action == "START" else self.pumps.stop)(stmt.names)
                verb = "started" if stmt.action == "START" else "stopped"
                return Result(stmt, f"Pump{'s' if len(done) != 1 else ''} {', '.join(done) or '(none)'} {verb}"
                              if done else f"No pump to {stmt.action.lower()}")
            raise SqlError(f"unsupported statement {type(stmt).__name__}", *(_pos(stmt)))

    def _insert_values(self, stmt: InsertValues) -> Result:
        c = self.catalog
        if stmt.target in c.tables:
            t = c.tables[stmt.target]
            rows = []
            for i, vals in enumerate(stmt.rows):
                by = _row_values(stmt, i, vals)
                rows.append(tuple(by.get(f.name) for f in t.fields))
            c.insert_table_rows(stmt.target, rows)
            self._commit_catalog()
            return Result(stmt, f"{len(rows)} row{'s' if len(rows) != 1 else ''} inserted into {stmt.target}")
        events = []
        for i, vals in enumerate(stmt.rows):
            by = _row_values(stmt, i, vals)
            rt = by.pop("ROWTIME", None)
            events.append(Event(stmt.target, "row", rt if rt is not None else now_ms(), by))
        outcomes = self.inject(events)
        bad = [o for o in outcomes if o.status in ("late", "error")]
        ok = len(outcomes) - len(bad)
        if bad:
            o = bad[0]
            raise (LateRowError(o.event.stream, o.event.rowtime, o.clock) if o.status == "late"
                   else EventError(o.message))
        return Result(stmt, f"{ok} row{'s' if ok != 1 else ''} inserted into {stmt.target}")

    # ------------------------------------------------------------------ queries

    def _promote(self, promoted: dict, stmt=None) -> None:
        """A view (or query) stamps a foreign stream's rows with one of its columns."""
        for s, col in promoted.items():
            f = self.catalog.streams[s].foreign
            cur = f.get("rowtime_column")
            if cur is not None and cur != col:
                raise SqlError(f"Foreign stream '{s}' is already stamped by column {cur}; it cannot also be "
                               f"stamped by {col}", *(_pos(stmt) if stmt is not None else ()))
            if cur is None and f.get("files_done"):
                raise SqlError(f"Foreign stream '{s}' has already been read with arrival times; stamp it with "
                               f"{col} before its first reader starts", *(_pos(stmt) if stmt is not None else ()))
            f["rowtime_column"] = col
        if promoted:
            self._commit_catalog()

    def _start_readers(self, streams) -> None:
        """Foreign streams start reading their files when their first reader starts."""
        from .foreign import FileReader
        for s in streams:
            d = self.catalog.streams.get(s)
            if d is None or d.foreign is None or s in self.readers:
                continue
            r = self.readers[s] = FileReader(self, s)
            r.start()

    def wait_readers(self, streams=None) -> None:
        """Until the foreign streams (those given, or all) have read the files there are now."""
        for s, r in list(self.readers.items()):
            if streams is None or s in streams:
                r.wait()

    def _start_query(self, plan: Query, name: str | None, start_seq: int | None = None) -> ContinuousQuery:
        if name is None:
            self._query_counter += 1
            name = f"q{self._query_counter}"
            while name in self.queries:
                self._query_counter += 1
                name = f"q{self._query_counter}"
        elif name in self.queries and self.queries[name].running:
            raise SqlError(f"a query named {name} is already running; stop it or choose another name")
        # ``start_seq`` (benchmarks, tests): read the log from an earlier step, from empty clocks
        start = self.catalog.next_seq - 1 if start_seq is None else start_seq
        q = ContinuousQuery(self, name, plan, start, self.engine)
        if start_seq is None:
            q.start_clocks = {s: self.catalog.state[s].bound for s in plan.streams if s in self.catalog.state}
        self._promote(plan.promoted)
        self.runtime.start(q)
        self.queries[name] = q
        self._query_defs[name] = {"sql": plan.sql, "start_seq": start, "engine": self.engine,
                                  "running": True, "start_clocks": q.start_clocks}
        self._commit_catalog()
        self._start_readers(plan.streams)
        return q

    def stop_query(self, name: str) -> None:
        q = self.queries.get(name)
        if q is None:
            raise StreamSqlError(f"no query named {name}; queries: {', '.join(self.queries) or 'none'}")
        if q.running:
            self.runtime.stop(q)
            q.running = False
        self._query_defs.get(name, {})["running"] = False
        self._commit_catalog()
        q._state_changed()

    def _resume_queries(self) -> None:
        for name, d in list(self._query_defs.items()):
            if not d.get("running"):
                continue
            from .sql import analyze
            try:
                stmt = analyze(d["sql"], self.catalog)
            except StreamSqlError as e:
                log.warning("query %s could not be resumed: %s", name, e)
                d["running"] = False
                continue
            q = ContinuousQuery(self, name, stmt.query, d["start_seq"], d.get("engine", self.engine))
            q.start_clocks = d.get("start_clocks", {})
            self.queries[name] = q
            from .sinks import FileSink
            q._sinks = [FileSink(q, Path(p), fmt) for p, fmt in d.get("sinks", [])]
            self.runtime.start(q, resume=True)
            self._start_readers(q.plan.streams)

    # ------------------------------------------------------------------ injection

    def inject(self, events: Iterable[Event]) -> list[Outcome]:
        """Inject events in order as one durable append; returns each event's outcome (nothing
        raises for bad events: see ``Outcome.status``)."""
        with self._lock:
            c = self.catalog
            feeds: list[tuple[int, dict[str, list[LogEntry]]]] = []
            outcomes = []
            tables: dict[str, list[LogEntry]] = {}
            for ev in events:
                seq = c.next_seq
                c.next_seq += 1
                out: dict[str, list[LogEntry]] = {}
                o = c.apply(ev, seq, out)
                outcomes.append(o)
                if out:
                    self._process_inline(seq, out)
                if out:
                    feeds.append((seq, out))
                    for s, entries in out.items():
                        tables.setdefault(s, []).extend(entries)
                if self.trace:
                    self._trace_event(o)
            if not outcomes:
                return outcomes
            self.log.write_segments({c.streams[s].uid: self._entries_table(s, es) for s, es in tables.items()})
            self._commit_catalog()
            self.log.write_head(c.next_seq - 1)
            if self._runtime is not None:
                self._runtime.notify(feeds, c.next_seq - 1)
        self._injected(outcomes)
        return outcomes

    def on_inject(self, f: Callable[[list], None]) -> None:
        """Call ``f(outcomes)`` after every committed append (``inject``, ``insert``, ``punctuate``,
        INSERT statements; ``load`` passes its :class:`LoadResult`)."""
        self._inject_listeners.append(f)

    def off_inject(self, f) -> None:
        if f in self._inject_listeners:
            self._inject_listeners.remove(f)

    def _injected(self, what) -> None:
        for f in list(self._inject_listeners):
            try:
                f(what)
            except Exception:  # a broken view must not break injection
                log.exception("inject listener failed")

    def _process_inline(self, seq: int, out: dict[str, list[LogEntry]]) -> None:
        """Queries that run in-process see the event before it is committed, so that rows their
        operators refuse (T-sort late rows) reach the error stream at the same step. Queries on
        the error stream itself see it after those rows were added."""
        self.pumps.process_inline(seq, out)
        for readers_of_errors in (False, True):
            if self._runtime is None:
                continue
            for q, stream, err in self._runtime.process_inline(seq, out, readers_of_errors):
                self.catalog.report_operator_error(seq, stream, q.name, err, out)

    def load(self, stream: str | None, data, *, rowtime: str = "ROWTIME", chunk: int = 1_000_000,
             progress: Callable[[int, int], None] | None = None) -> "LoadResult":
        """Inject many events at once, each with its own step, as if each stream's default
        producer sent them one by one (same late-row rule, same error stream), but checked and
        written column-wise. ``data``: a pyarrow Table, pandas DataFrame or dict of columns, with
        the stream's columns (matched like SQL identifiers) and a ``rowtime`` column (timestamps
        or epoch milliseconds). With ``stream=None`` a ``STREAM`` column routes each event; a
        boolean ``BOUND`` column marks punctuation. ``progress(done, total)`` is called per chunk.
        """
        from .bulk import load_columns
        with self._lock:
            d = self.catalog.stream(stream) if stream is not None else None
            res = load_columns(self, d, data, rowtime, chunk, progress)
        self._injected(res)
        return res

    def _entries_table(self, stream: str, entries: list[LogEntry]) -> pa.Table:
        d = self.catalog.streams[stream]
        schema = entry_schema(d.fields)
        n = len(d.fields)
        cols = [[e.seq for e in entries], [e.kind for e in entries], [e.rowtime for e in entries],
                [e.clock for e in entries]]
        for i in range(n):
            cols.append([None if e.values is None else e.values[i] for e in entries])
        return pa.Table.from_arrays([pa.array(col, type=f.type) for col, f in zip(cols, schema)], schema=schema)

    def _trace_event(self, o: Outcome) -> None:
        self.event_trace.append({
            "step": o.seq, "stream": o.event.stream, "producer": o.event.producer or DEFAULT_PRODUCER,
            "kind": o.event.kind, "rowtime": o.event.rowtime, "strict": o.event.strict,
            "values": o.event.values, "status": o.status, "message": o.message, "clock": o.clock,
            "bound_before": o.bound_before, "bound_after": o.bound_after, "released": o.released,
            "eclipsed": o.status == "eclipsed"})

    def _one(self, ev: Event) -> Outcome:
        o = self.inject([ev])[0]
        if o.status == "late":
            raise LateRowError(o.event.stream, o.event.rowtime, o.clock, o.event.producer, o.producer_clock)
        if o.status == "error":
            raise EventError(o.message)
        return o

    def insert(self, stream: str, values: dict | None = None, *, rowtime=None, producer: str | None = None,
               **kw) -> Outcome:
        """Insert one row; ``rowtime`` defaults to the current time. Raises
        :class:`LateRowError` (the row went to the error stream) or :class:`EventError`."""
        vals = dict(values or {}, **kw)
        rt = now_ms() if rowtime is None else self._time(stream, rowtime)
        return self._one(Event(stream, "row", rt, vals, producer=producer))

    def punctuate(self, stream: str, time, *, strict: bool = False, producer: str | None = None) -> Outcome:
        """Assert that every later row of ``stream`` (from this producer) has rowtime >= ``time``
        (> ``time`` when strict)."""
        return self._one(Event(stream, "bound", self._time(stream, time), strict=strict, producer=producer))

    def attach(self, stream: str, producer: str) -> Outcome:
        return self._one(Event(stream, "attach", producer=producer))

    def detach(self, stream: str, producer: str = DEFAULT_PRODUCER) -> Outcome:
        return self._one(Event(stream, "detach", producer=producer))

    def _time(self, stream: str, t) -> int:
        """A time given as text; short ``HH:MM[:SS]`` is on the day of the stream's clock."""
        if isinstance(t, str) and "-" not in t.strip()[:5]:
            try:
                d = self.catalog.stream(stream)
                clock = self.catalog.clock(d.name)
            except EventError:
                clock = T.NO_TIME
            if clock <= T.NO_TIME:
                raise EventError(f"{t!r} is a time of day, but stream {stream} has no clock yet to give "
                                 f"the date: write the full timestamp ('YYYY-MM-DD HH:MM:SS')")
            return T.parse_timestamp(t, day=T.day_of(clock))
        try:
            return T.parse_timestamp(t)
        except T.TimeFormatError as e:
            raise EventError(str(e)) from None

    # ------------------------------------------------------------------ history (issue 7, relational SELECT)

    def set_history(self, stream: str, window_ms: int | None = None, *, enabled: bool = True) -> None:
        """Let relational (non-STREAM) SELECTs read ``stream``'s retained history: its rows within
        ``window_ms`` of the stream's clock (all of them when None); ``enabled=False`` turns it off.
        Without history a relational query on the stream fails with ``Cannot convert stream``."""
        with self._lock:
            self.catalog.set_history(stream, window_ms, enabled=enabled)
            self._commit_catalog()

    # ------------------------------------------------------------------ state

    def clock(self, stream: str) -> int | None:
        d = self.catalog.stream(stream)
        b = self.catalog.clock(d.name)
        return None if b <= T.NO_TIME else b

    def clocks(self) -> dict[str, int | None]:
        return {n: (None if st.bound <= T.NO_TIME else st.bound) for n, st in self.catalog.state.items()}

    def streams(self) -> list[dict]:
        out = []
        for n, d in self.catalog.streams.items():
            st = self.catalog.state[n]
            out.append({"name": n, "columns": [(f.name, str(f.type)) for f in d.fields],
                        "clock": None if st.bound <= T.NO_TIME else st.bound,
                        "producers": self.catalog.producer_clocks(n), "pending": len(st.pending),
                        "rows": st.rows_in, "late": st.late_count, "system": d.system})
        return out

    @property
    def last_seq(self) -> int:
        return self.catalog.next_seq - 1


def _row_values(stmt: InsertValues, i: int, vals) -> dict:
    """Row ``i`` of an INSERT's VALUES by column; a calculator error in it is the statement's."""
    try:
        return {col: compile_expr(e)((), ()) for col, e in zip(stmt.columns, vals)}
    except CalcError as err:
        p = stmt.row_positions[i] if i < len(stmt.row_positions) else stmt.position
        msg = err.describe()
        raise SqlError(msg[:1].upper() + msg[1:], *((p.line, p.col) if p else ())) from None


def _pos(stmt: Statement) -> tuple:
    p = getattr(stmt, "position", None)
    return (p.line, p.col) if p else ()
