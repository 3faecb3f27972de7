"""What statements and queries hand back: :class:`Result`, :class:`LoadResult` and the running
:class:`ContinuousQuery`. A leaf module: the workbench, bulk loads, relational queries and both
runtimes import it, and it imports none of them."""
from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable

import pyarrow as pa

from . import time as sqltime
from .errors import StreamSqlError
from .locks import callout, engine_lock
from .plan import Field, Query, Statement
from .runtime.released import OutputRow, ReleasedBatch
from .runtime.trace_records import TraceHistory
from .types import arrow_type, to_json_value

log = logging.getLogger("streamsql")


@dataclass
class LoadResult:
    """What :meth:`Workbench.load` did: rows accepted, late rows (their steps), steps used."""
    accepted: int
    late_steps: list
    first_step: int
    last_step: int


@dataclass
class Result:
    """What one statement did: a message, and for a SELECT STREAM the started query."""
    statement: Statement
    message: str
    query: "ContinuousQuery | None" = None
    rows: list | None = None


class ContinuousQuery:
    """A running SELECT STREAM: its released rows (with steps), output bound and trace.

    Released rows are kept as Arrow chunks (columns ``step``, ``rowtime``, ``v0..``) so that a
    million-row replay does not become a million Python objects; :attr:`rows` builds
    :class:`OutputRow` objects on first use."""

    def __init__(self, wb, name: str, plan: Query, start_step: int):    # wb: its Workbench
        self.wb = wb
        self.name = name
        self.plan = plan
        self.sql = plan.sql
        #: the last step before the query started: it reads the events after it
        self.start_step = start_step
        #: the clocks of the query's streams when it started (bounds it may rely on at once)
        self.start_clocks: dict[str, int] = {}
        self._bound_steps: list[int] = []          # steps where the output bound changed ...
        self._bound_vals: list[int] = []          # ... and its value after each of them
        self._bounds_dict: dict | None = None
        self.output_bound: int = sqltime.NO_TIME
        #: the last step whose event the query has processed (what it released is in :attr:`rows`)
        self.processed_step = start_step
        self.running = True
        self.error: str | None = None
        #: rows the query's operators refused (T-sort late rows, calculator errors), with the step
        #: that refused each (``OperatorError.step``, ``OperatorError.stream`` its STREAM_NAME), in
        #: step order; they are also rows of ``ERRORS``
        self.errors: list = []
        #: the per-step trace (runtime/trace_records.py): the last ``trace_steps`` StepTrace records
        #: (the workbench's runtime options)
        self.trace = TraceHistory(wb.options.trace_steps)
        self._listeners = _Listeners("release", name)
        self._state_listeners = _Listeners("state", name)
        self._progress_listeners = _Listeners("progress", name)
        self._lock = engine_lock("query")
        self._chunks: list[pa.Table] = []
        self._sinks: list = []                    # FileSink objects (write_to)
        self._rows: list[OutputRow] = []          # materialised prefix of the chunks
        self._materialised = 0                    # chunks already in ``_rows``
        self.row_count = 0
        self.handle: Any = None                   # the runtime's own object
        #: the query's native Spark twin (a :class:`~streamsql.engine.twin.NativeTwin`), once :meth:`native` made one
        self.twin: Any = None
        self.schema = pa.schema([pa.field("step", pa.int64()), pa.field("rowtime", pa.int64())] +
                                [pa.field(f"v{i}", arrow_type(f.type)) for i, f in enumerate(plan.columns)])

    @property
    def engine(self) -> str:
        """The name of the runtime the query runs on (``spark`` or ``local``)."""
        return self.wb.runtime.name

    # ------------------------------------------------------------------ results

    @property
    def columns(self) -> list[str]:
        """Names of the select list's columns (ROWTIME not among them), in order."""
        return [f.name for f in self.plan.columns]

    @property
    def fields(self) -> list[Field]:
        """The select list's columns with their SQL types."""
        return list(self.plan.columns)

    @property
    def rows(self) -> list[OutputRow]:
        """Every row released so far, in release order."""
        with self._lock:
            while self._materialised < len(self._chunks):
                t = self._chunks[self._materialised]
                cols = t.to_pydict()
                n = len(self.plan.columns)
                vals = zip(*[cols[f"v{j}"] for j in range(n)]) if n else ([()] * t.num_rows)
                self._rows.extend(OutputRow(s, r, tuple(v)) for s, r, v in zip(cols["step"], cols["rowtime"], vals))
                self._materialised += 1
            return self._rows

    def table(self) -> pa.Table:
        """Everything released so far as one Arrow table (``step``, ``rowtime``, ``v0..``)."""
        with self._lock:
            return pa.concat_tables(self._chunks) if self._chunks else self.schema.empty_table()

    # ------------------------------------------------------------------ what a runtime hands over

    def deliver(self, batches: Iterable[ReleasedBatch]) -> None:
        """Released rows, bounds and refused rows, event by event (the local runtime)."""
        batches = list(batches)
        errors = []
        for b in batches:
            for stream, e in b.errors:
                e.stream = e.stream or stream
                errors.append(e)
        self.deliver_errors(errors)
        batches = [b for b in batches if b.rows or b.errors or (b.bound is not None and b.bound != self.output_bound)
                   or b.step > self.processed_step]
        rows = [r for b in batches for r in b.rows]
        table = None
        if rows:
            cols = [[r.step for r in rows], [r.rowtime for r in rows]] + \
                   [[r.values[j] for r in rows] for j in range(len(self.plan.columns))]
            table = pa.Table.from_arrays([self._column(c, f) for c, f in zip(cols, self.schema)], schema=self.schema)
        bounds = {b.step: b.bound for b in batches if b.bound is not None}
        self._append(table, bounds, batches)

    def _column(self, vals: list, f: pa.Field) -> pa.Array:
        """Released values as their column's Arrow type; a value of another Python type (a
        DECIMAL where the column is DOUBLE) is stored as the column's type, by the rules of
        engine/values.py, or refused naming the column."""
        try:
            return pa.array(vals, type=f.type)
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, OverflowError):
            if not f.name.startswith("v"):      # step and rowtime are the runtime's own ints
                raise
            from .values import column
            j = int(f.name[1:])
            return column(vals, self.plan.columns[j].type, f"column {self.plan.columns[j].name} of query {self.name}")

    def deliver_errors(self, errors: list) -> None:
        """Rows the query's operators refused (``OperatorError``), in step order."""
        if errors:
            with self._lock:
                self.errors.extend(errors)

    def deliver_table(self, table: pa.Table, bounds) -> None:
        """A released chunk in columns (the Spark sink); ``bounds`` is ``(steps, values)`` of
        the output bound's changes, or a dict."""
        self._append(table if table.num_rows else None, bounds, None)

    def processed_through(self, step: int) -> None:
        """The runtime has processed every event up to ``step`` (whether or not it released)."""
        self.processed_step = max(self.processed_step, step)

    def fail(self, message: str, *, keep_first: bool = False, stopped: bool = True, notify: bool = True) -> None:
        """The runtime's word that the query failed: ``message`` becomes its ``error``
        (``keep_first``: unless it has one already); ``stopped``: it runs no more; ``notify``:
        its state listeners hear of it (a failing wait raises instead)."""
        if not keep_first or self.error is None:
            self.error = message
        if stopped:
            self.running = False
        if notify:
            self._state_changed()

    @property
    def bounds(self) -> dict[int, int]:
        """Step -> the output bound right after it, at every step where it changed."""
        with self._lock:
            if self._bounds_dict is None or len(self._bounds_dict) != len(self._bound_steps):
                self._bounds_dict = dict(zip(self._bound_steps, self._bound_vals))
            return self._bounds_dict

    def write_to(self, path: str | Path, format: str = "parquet") -> None:
        """Write released rows to files in ``path`` (``parquet`` or ``csv``) as they are released:
        through Spark on the Spark engine, with pyarrow on the local one. Rows already released
        are written at once; a reopened workspace carries on where the files stop."""
        sink = self.wb.runtime.file_sink(self, Path(path), format)
        with self._lock:
            self._sinks.append(sink)
            chunks = list(self._chunks)
        sink.write(chunks)
        self.wb.lifecycle.record_sink(self.name, str(path), format)

    def _append(self, table, bounds, batches) -> None:
        if isinstance(bounds, dict):
            order = sorted(bounds)
            steps, vals = order, [bounds[k] for k in order]
        else:
            steps, vals = (list(x) for x in bounds)
        sinks = ()
        with self._lock:
            if table is not None:
                self._chunks.append(table)
                self.row_count += table.num_rows
                sinks = list(self._sinks)
            prev = self.output_bound
            for s, b in zip(steps, vals):
                if b != prev:
                    self._bound_steps.append(s)
                    self._bound_vals.append(b)
                    prev = b
            self.output_bound = prev
            last = steps[-1] if steps else self.processed_step
            if table is not None and table.num_rows:
                last = max(last, table.column("step")[-1].as_py())
            self.processed_step = max(self.processed_step, last)
        for sink in sinks:          # Spark's writers run jobs: never under the query's lock
            sink.write([table])
        self._progressed()
        if not self._listeners:
            return
        if batches is None:
            by: dict[int, list[OutputRow]] = {}
            if table is not None:
                cols = table.to_pydict()
                n = len(self.plan.columns)
                vals = zip(*[cols[f"v{j}"] for j in range(n)]) if n else ([()] * table.num_rows)
                for s, r, v in zip(cols["step"], cols["rowtime"], vals):
                    by.setdefault(s, []).append(OutputRow(s, r, tuple(v)))
            bmap = dict(zip(steps, vals))
            batches = [ReleasedBatch(s, by.get(s, []), bmap.get(s)) for s in sorted(set(by) | set(bmap))]
        for b in batches:
            self._listeners.call(b)

    def output_bound_at(self, step: int) -> int | None:
        """The query's output bound right after event ``step`` (None before it had one)."""
        import bisect
        with self._lock:
            i = bisect.bisect_right(self._bound_steps, step)
            return self._bound_vals[i - 1] if i else None

    def on_release(self, f: Callable[[ReleasedBatch], None]) -> None:
        """Call ``f(batch)`` for every event that released rows or moved the output bound (from
        Spark's sink thread on the Spark engine)."""
        self._listeners.add(f)


    def on_progress(self, f: Callable[[], None]) -> None:
        """Call ``f()`` after every delivery of the runtime, whether it released rows or not
        (a step that only added a trace record or advanced ``processed_step``): live views that
        follow the trace redraw then."""
        self._progress_listeners.add(f)


    def _progressed(self) -> None:
        self._progress_listeners.call()

    def on_state(self, f: Callable[[], None]) -> None:
        """Call ``f()`` when the query stops or fails (views redraw their status)."""
        self._state_listeners.add(f)


    def _state_changed(self) -> None:
        self._state_listeners.call()

    def values(self, row: OutputRow) -> dict:
        """A released row's values by column name, as JSON values (the replay format's ``values``)."""
        return {f.name: to_json_value(v, f.type) for f, v in zip(self.plan.columns, row.values)}

    def to_pandas(self):
        """Released rows: STEP, ROWTIME (as text) and the select list."""
        t = self.table()
        df = t.to_pandas()
        meta = [m if m not in self.columns else f"${m}" for m in ("STEP", "ROWTIME")]   # a column may be named so
        df.columns = meta + self.columns
        df = df.rename(columns={meta[1]: "ROWTIME"}) if meta[1] == "ROWTIME" else df
        df[meta[1]] = [sqltime.format_timestamp(v) for v in df[meta[1]]]
        for f in self.plan.columns:
            if f.type.name == "TIMESTAMP":
                df[f.name] = [sqltime.format_timestamp(v) if v == v and v is not None else None for v in df[f.name]]
        return df

    def wait(self, timeout: float | None = None) -> "ContinuousQuery":
        """Block until the query has processed every event committed so far (and its foreign
        streams have read the files present now). An interrupt (Ctrl-C, the kernel's ■) stops
        the waiting, not the query: it raises ``KeyboardInterrupt`` and the query goes on."""
        try:
            self.wb.wait_readers(self.plan.streams)
            self.wb.runtime.wait(self, timeout)
        except KeyboardInterrupt:
            raise KeyboardInterrupt(f"stopped waiting for query {self.name}; it keeps running (step "
                                    f"{self.processed_step} of {self.wb.last_step} processed)") from None
        if self.error:
            raise StreamSqlError(f"query {self.name} failed: {self.error}")
        return self

    def native(self, delay="0 seconds"):
        """The same query as plain Spark Structured Streaming over the same events, one event per
        micro-batch, with watermarks of ``delay`` (``"10 minutes"``): a
        :class:`~streamsql.engine.twin.NativeTwin` brought up to date, with its comparison beside
        this query's releases. A query Spark cannot express raises a one-line
        :class:`~streamsql.engine.native.NativeUnsupported`."""
        return self.wb.native_twin(self, delay)

    def stop(self) -> None:
        """Stop this query (one that a rerun replaced under the same name is already stopped)."""
        if self.wb.queries.get(self.name) is self:
            self.wb.stop_query(self.name)

    def __repr__(self):
        state = "running" if self.running else "stopped"
        rows = f"{self.row_count} row{'' if self.row_count == 1 else 's'}"
        return f"<ContinuousQuery {self.name} ({state}, {rows}, bound {sqltime.format_timestamp(self.output_bound)})>"


class _Listeners:
    """A query's callbacks of one kind. A callback that raises is logged and the others still
    run: a broken view must not stop the query (nor its stopping)."""

    def __init__(self, kind: str, query: str):
        self.kind, self.query = kind, query
        self._fs: list[Callable] = []

    def __bool__(self) -> bool:
        return bool(self._fs)

    def add(self, f: Callable) -> None:
        self._fs.append(f)

    def call(self, *args) -> None:
        """Each callback, in the order they were added; never while this thread holds an
        engine lock (``locks.callout``: a statement's deliveries are told after the statement)."""
        for f in list(self._fs):
            callout(self._one, f, args)

    def _one(self, f: Callable, args) -> None:
        try:
            f(*args)
        except Exception:  # noqa: BLE001 - see the class doc
            log.exception("%s listener of query %s failed", self.kind, self.query)
