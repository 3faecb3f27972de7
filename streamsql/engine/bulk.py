"""Loading many rows into a stream column-wise (CSV files, data frames, benchmarks).

Same rules as inserting the rows one by one with the stream's default producer: each row is an
event with its own step; a row below the running clock is late (a late row does not move the
clock, so the clock before row ``i`` is the running maximum of the rows before it); late rows go
to the error stream and the log at powers of ten. Only the checking is vectorised: the rule's
vector form is :mod:`streamsql.engine.lateness`, as the catalog's row form is.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from . import lateness, values
from . import time as sqltime
from .catalog import DEFAULT_PRODUCER, ERROR_STREAM, MAX_EVENT_TIME, MIN_EVENT_TIME, LogEntry, Producer
from .errors import EventError, one_line
from .locks import callout_aside
from .log import entry_schema
from .types import arrow_type, to_json_value

log = logging.getLogger("streamsql.late")


def _as_table(data, stream=None) -> pa.Table:
    if isinstance(data, pa.Table):
        return data
    if isinstance(data, pa.RecordBatch):
        return pa.Table.from_batches([data])
    try:
        import pandas as pd
        if isinstance(data, pd.DataFrame):
            return pa.Table.from_pandas(data, preserve_index=False)
    except ImportError:  # pragma: no cover
        pass
    if isinstance(data, dict):
        try:
            return pa.table(data)
        except (pa.ArrowException, OverflowError, TypeError, ValueError) as e:
            problem = e
        # a column Arrow cannot hold as it is (an int beyond 64 bits): typed by the stream's
        # column, which refuses it by the one parser's rules
        fields = {f.name.upper(): f for f in (stream.fields if stream is not None else [])}
        cols = {}
        for name, vals in data.items():
            try:
                cols[name] = pa.array(vals)
                continue
            except (pa.ArrowException, OverflowError, TypeError, ValueError):
                f = fields.get(str(name).upper())
                if f is None:
                    break
            try:
                cols[name] = values.column(list(vals), f.type, f"column {f.name} of stream {stream.name}")
            except values.ValueRefused as e:
                raise EventError(one_line(str(e), limit=300)) from None
        else:
            try:
                return pa.table(cols)
            except (pa.ArrowException, TypeError, ValueError) as e:      # columns of unequal lengths
                problem = e
        raise EventError(one_line(f"cannot load these columns: {problem}", limit=300)) from None
    raise EventError(f"cannot load {type(data).__name__}: give a pyarrow Table, a pandas DataFrame or a dict of columns")


def _rowtimes(col: pa.ChunkedArray, name: str) -> np.ndarray:
    t = col.type
    try:
        if pa.types.is_timestamp(t):
            out = pc.cast(pc.cast(col, pa.timestamp("ms")), pa.int64()).to_numpy()
        elif pa.types.is_integer(t):
            out = pc.cast(col, pa.int64()).to_numpy()
        elif pa.types.is_string(t) or pa.types.is_large_string(t):
            out = np.array([sqltime.parse_timestamp(v) for v in col.to_pylist()], dtype=np.int64)
        else:
            raise EventError(f"column {name} must hold timestamps or epoch milliseconds, not {t}")
    except (sqltime.TimeFormatError, pa.ArrowException, OverflowError) as e:
        raise EventError(one_line(f"column {name}: {e}", limit=300)) from None
    return out


@dataclass
class CheckedLoad:
    """A load's data, checked and split per stream: nothing has changed yet."""
    table: pa.Table
    names: dict
    rt: np.ndarray
    is_bound: np.ndarray
    errors: list
    error_data: list
    prepared: list          # (StreamDef, row positions, columns)


def check_load(wb, streams, data, rowtime: str) -> CheckedLoad:
    """The checks of a load, which only raise (:class:`EventError`) and change nothing.
    ``streams``: one StreamDef (every row goes to it) or None (a ``STREAM`` column routes each
    row; the rows of all streams interleave in the table's order, one step each). An optional
    boolean ``BOUND`` column marks punctuation: the row's rowtime is a bound, its values unused."""
    table = _as_table(data, streams)
    names = {n.upper(): n for n in table.column_names}
    n = table.num_rows
    if rowtime.upper() not in names:
        raise EventError(f"no {rowtime} column to load; columns: {', '.join(table.column_names)}")
    rt_col = table.column(names[rowtime.upper()])
    if rt_col.null_count and "ERROR" not in names:
        raise EventError(f"column {rowtime} has NULLs; every event needs a time")
    rt = _rowtimes(rt_col.fill_null(sqltime.NO_TIME) if pa.types.is_integer(rt_col.type) else rt_col, rowtime)
    is_bound = np.zeros(n, dtype=bool)
    if "BOUND" in names:
        is_bound = np.asarray(table.column(names["BOUND"]).fill_null(False).to_numpy(zero_copy_only=False), dtype=bool)
    # rows a reader could not parse (foreign streams): an ERROR message, and ERROR_DATA for the record
    errors = table.column(names["ERROR"]).to_pylist() if "ERROR" in names else [None] * n
    error_data = table.column(names["ERROR_DATA"]).to_pylist() if "ERROR_DATA" in names else [None] * n
    if streams is None:
        if "STREAM" not in names:
            raise EventError("a load without a stream name needs a STREAM column")
        sname = np.asarray(table.column(names["STREAM"]).to_pylist(), dtype=object)
        groups = {}
        for nm in dict.fromkeys(sname.tolist()):
            d = wb.catalog.stream(str(nm))
            groups.setdefault(d.name, (d, []))[1].append(nm)
        parts = [(d, np.nonzero(np.isin(sname, raw))[0]) for d, raw in groups.values()]
    else:
        parts = [(streams, np.arange(n))]
    for d, _pos in parts:
        st = wb.catalog.state[d.name]
        others = [p for p in st.attached() if p != "default"]
        if others or st.pending:
            raise EventError(f"stream {d.name} has other producers attached ({', '.join(others)}); "
                             "bulk load needs the default producer alone: use inject()")
    refused_all = np.array([e is not None for e in errors], dtype=bool) if n else np.zeros(0, dtype=bool)
    outside = np.nonzero(((rt < MIN_EVENT_TIME) | (rt > MAX_EVENT_TIME)) & ~refused_all)[0]
    if len(outside):
        i = int(outside[0])
        raise EventError(f"column {rowtime}: event {i + 1} of the load has time {int(rt[i])}, outside the "
                         f"years 0001 to 9999")
    prepared = [(d, pos, _columns(d, table, names, rowtime, pos, is_bound | refused_all)) for d, pos in parts]
    return CheckedLoad(table, names, rt, is_bound, errors, error_data, prepared)


def apply_load(wb, checked: CheckedLoad, chunk: int, progress) -> tuple:
    """The writes of a checked load. Returns ``(LoadResult, feeds)``; the caller writes HEAD and
    tells the runtime (after the catalog commit here), or undoes the load if this fails."""
    from .continuous_query import LoadResult
    table, names, rt, is_bound = checked.table, checked.names, checked.rt, checked.is_bound
    errors, error_data, n = checked.errors, checked.error_data, table.num_rows
    c = wb.catalog
    step0 = c.next_step
    err_bound0 = c.state[ERROR_STREAM].bound
    accepted, late_steps, errors_out, feeds_src = 0, [], [], []
    for d, pos, cols in checked.prepared:
        a, ls, errs, fs = _load_stream(wb, d, step0 + pos, rt[pos], is_bound[pos], cols, table, names, pos, chunk,
                                       progress, [errors[i] for i in pos], [error_data[i] for i in pos])
        accepted += a
        late_steps += ls
        errors_out += errs
        feeds_src.append(fs)
    c.next_step = step0 + n
    errors_out = _in_step_order(errors_out, err_bound0, c.state[ERROR_STREAM])
    feeds = []
    pumped: dict[str, list] = {}
    if wb.commits.in_process:
        feeds = _merge_feeds(feeds_src, errors_out)
        # in-process queries see each event before the commit (rows a T-sort refuses reach the
        # error stream at their step); then every error row gets its place in step order
        extra: dict = {}
        for step, feed in feeds:
            loaded = {s: len(es) for s, es in feed.items()}
            wb.commits.before_commit(step, feed)
            # what pumps inserted at this step (into their targets' feeds): written below, like
            # the rows and bounds an insert's pumps make
            for s, es in feed.items():
                if s != ERROR_STREAM and len(es) > loaded.get(s, 0):
                    pumped.setdefault(s, []).extend(es[loaded.get(s, 0):])
            if len(feed.get(ERROR_STREAM, ())) > sum(1 for e in errors_out if e.step == step):
                extra[step] = [e for e in feed[ERROR_STREAM] if e not in errors_out]
        if extra:
            errors_out = _in_step_order(errors_out + [e for es in extra.values() for e in es], err_bound0,
                                        c.state[ERROR_STREAM])
    # the rows went to the log chunk by chunk above; what pumps inserted, the error rows and the
    # catalog now (the workbench writes HEAD and tells the runtime once the commit stands). A
    # pump's entries are at steps of its sources' events, never at a loaded event of its target:
    # their segment never takes the name of a chunk's
    wb.commits.write({**pumped, ERROR_STREAM: errors_out})
    return LoadResult(accepted, sorted(late_steps), step0, step0 + n - 1), feeds


def _in_step_order(entries: list, start: int, est) -> list:
    """Error rows of several origins, ordered by step, stamped with a non-decreasing time (each
    one's own time is the clock it violated)."""
    entries = sorted(entries, key=lambda e: e.step)
    t = start
    out = []
    for e in entries:
        t = max(t, e.rowtime)
        vals = (t,) + tuple(e.values[1:])
        out.append(LogEntry(e.step, 0, t, t, vals))
    est.bound = max(est.bound, t)
    return out


def _columns(d, table, names, rowtime, pos, is_bound) -> list:
    take = pa.array(pos, type=pa.int64())
    cols = []
    known = {f.name.upper() for f in d.fields} | {rowtime.upper(), "STREAM", "BOUND", "ERROR", "ERROR_DATA"}
    extra = [nm for nm in table.column_names if nm.upper() not in known]
    if extra and len(names) and "STREAM" not in names:
        raise EventError(f"stream {d.name} has no column {extra[0]!r} (columns: {', '.join(f.name for f in d.fields)})")
    rows_only = ~is_bound[pos]
    for f in d.fields:
        src = names.get(f.name.upper())
        at = arrow_type(f.type)
        if src is None:
            if not f.type.nullable:
                raise EventError(f"column {f.name} of stream {d.name} is NOT NULL and was not given")
            cols.append(pa.nulls(len(pos), at))
            continue
        try:      # as inserting the rows one by one would store them (engine/values.py)
            col = values.column(table.column(src).take(take), f.type, f"column {f.name} of stream {d.name}")
        except values.ValueRefused as e:
            raise EventError(one_line(str(e), limit=300)) from None
        if not f.type.nullable and rows_only.any() and col.filter(pa.array(rows_only)).null_count:
            raise EventError(f"column {f.name} of stream {d.name} is NOT NULL but has NULLs")
        cols.append(col)
    return cols


def _load_stream(wb, d, steps, rt, bound, cols, table, names, pos, chunk, progress, errors, error_data):
    c = wb.catalog
    st = c.state[d.name]
    prod = st.producers.get(DEFAULT_PRODUCER)
    clock0 = lateness.clock(st, DEFAULT_PRODUCER)
    n = len(rt)
    refused = np.array([e is not None for e in errors], dtype=bool) if n else np.zeros(0, dtype=bool)
    rt = np.where(refused, sqltime.NO_TIME, rt)      # a refused record moves no clock
    # a late row does not move the clock, so the clock before event i is the running maximum
    before = lateness.running_clocks(clock0, rt)
    after = np.maximum(before, rt)
    backwards = bound & (rt < lateness.running_clocks(prod.clock if prod else sqltime.NO_TIME, rt))
    if backwards.any():
        i = int(np.nonzero(backwards)[0][0])
        raise EventError(f"bound {sqltime.format_timestamp(int(rt[i]))} on stream {d.name} (event {i + 1} of the load) "
                         f"is before the producer's clock; a producer's bound cannot move backwards")
    late = lateness.late_rows(before, rt, ~bound & ~refused)
    rows = ~bound & ~late & ~refused
    moves = bound & (rt > before)
    status = np.select([late, refused, bound & ~moves], [1, 2, 3], 0).astype(np.int8)
    wb.journal.record_columns(d, steps, bound, rt, status, before, cols, errors if refused.any() else None)
    schema = entry_schema(d.fields)
    err_entries = []
    for i in np.nonzero(refused)[0]:
        est = c.state[ERROR_STREAM]
        t = max(est.bound, int(before[i]))
        est.bound = t
        est.rows_in += 1
        err_entries.append(LogEntry(int(steps[i]), 0, t, t, (t, "ERROR", "MALFORMED_ROW", errors[i], None,
                                                             error_data[i], d.name, DEFAULT_PRODUCER, int(steps[i]))))
        if lateness.is_power_of_ten(est.rows_in):
            log.warning("malformed record for stream %s (step %d): %s", d.name, int(steps[i]), errors[i])
    late_idx = np.nonzero(late)[0]
    if len(late_idx):
        est = c.state[ERROR_STREAM]
        vals = table.take(pa.array(pos[late_idx], type=pa.int64())).to_pylist()
        for k, i in enumerate(late_idx):
            data = {f.name: to_json_value(vals[k].get(names.get(f.name.upper())), f.type) for f in d.fields}
            t, row = lateness.reject(st, est, d.name, int(rt[i]), int(before[i]), data, DEFAULT_PRODUCER,
                                     int(steps[i]))
            err_entries.append(LogEntry(int(steps[i]), 0, t, t, row))
    idx = np.nonzero(rows | moves)[0]
    kinds = np.where(bound, 1, 0).astype(np.int8)
    for a in range(0, max(len(idx), 1), chunk):
        part = idx[a:a + chunk]
        if not len(part):
            break
        take = pa.array(part, type=pa.int64())
        mask = pa.array(bound[part])
        arrays = [pa.array(steps[part]), pa.array(kinds[part]), pa.array(rt[part]), pa.array(after[part])] + \
                 [pc.if_else(mask, pa.nulls(len(part), col.type), col.take(take)) for col in cols]
        wb.log.write_segments({d.uid: pa.Table.from_arrays(arrays, schema=schema)})
        if progress:        # user code: never under the workbench's lock, yet as the load goes
            callout_aside(progress, min(a + chunk, len(idx)), len(idx))
    if n:
        if prod is None or not prod.attached:
            prod = st.producers[DEFAULT_PRODUCER] = Producer()
        prod.clock = max(prod.clock, int(after[-1]))
        st.bound = max(st.bound, int(after[-1]))
        st.rows_in += int(rows.sum())
        st.bounds_in += int(bound.sum())
    feeds = (d, steps, rt, after, cols, rows, moves)
    if wb.trace:
        wb.load_trace.append(_trace_table(d, steps, rt, bound, before, after, rows, late, refused, cols, errors))
    return int(rows.sum()), [int(steps[i]) for i in late_idx], err_entries, feeds


def _trace_table(d, steps, rt, bound, before, after, rows, late, refused, cols, errors) -> tuple[str, pa.Table]:
    """What each loaded event did, column-wise (``Workbench.traced_events`` reads it): the same
    facts as an ``event_trace`` record, without a Python object per event."""
    status = np.where(refused, "error", np.where(late, "late", np.where(bound & ~(rt > before), "eclipsed", "ok")))
    message = [errors[i] if refused[i] else None for i in range(len(rt))] if refused.any() else None
    t = pa.table({"step": pa.array(steps, pa.int64()), "kind": pa.array(np.where(bound, "bound", "row")),
                  "rowtime": pa.array(rt, pa.int64()), "status": pa.array(status),
                  "clock": pa.array(before, pa.int64()), "after": pa.array(after, pa.int64()),
                  "released": pa.array(rows.astype(np.int64)),
                  "message": pa.array(message if message is not None else [None] * len(rt), pa.string())})
    for f, col in zip(d.fields, cols):
        t = t.append_column(f"v:{f.name}", col)
    return d.name, t


def _merge_feeds(feeds_src, err_entries):
    """Per-event stream-log entries, for runtimes that process events in-process."""
    by_step: dict[int, dict] = {}
    for d, steps, rt, after, cols, rows, moves in feeds_src:
        pylists = [c.to_pylist() for c in cols]
        for i in np.nonzero(rows | moves)[0]:
            s = int(steps[i])
            if rows[i]:
                e = LogEntry(s, 0, int(rt[i]), int(after[i]), tuple(p[i] for p in pylists))
            else:
                e = LogEntry(s, 1, int(after[i]), int(after[i]), None)
            by_step.setdefault(s, {}).setdefault(d.name, []).append(e)
    for e in err_entries:
        by_step.setdefault(e.step, {}).setdefault(ERROR_STREAM, []).append(e)
    return sorted(by_step.items())
