"""Loading many rows into a stream column-wise (CSV files, data frames, benchmarks).

Same rules as inserting the rows one by one with the stream's default producer: each row is an
event with its own step; a row below the running clock is late (a late row does not move the
clock, so the clock before row ``i`` is the running maximum of the rows before it); late rows go
to the error stream and the log at powers of ten. Only the checking is vectorised.
"""
from __future__ import annotations

import logging

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from . import time as T
from .catalog import DEFAULT_PRODUCER, ERROR_STREAM, LogEntry, Producer, _is_power_of_ten
from .errors import EventError
from .log import entry_schema
from .types import arrow_type, dumps_row, to_json_value

log = logging.getLogger("streamsql.late")


def _as_table(data) -> pa.Table:
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
        return pa.table(data)
    raise EventError(f"cannot load {type(data).__name__}: give a pyarrow Table, a pandas DataFrame or a dict of columns")


def _rowtimes(col: pa.ChunkedArray, name: str) -> np.ndarray:
    t = col.type
    if pa.types.is_timestamp(t):
        return pc.cast(pc.cast(col, pa.timestamp("ms")), pa.int64()).to_numpy()
    if pa.types.is_integer(t):
        return pc.cast(col, pa.int64()).to_numpy()
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return np.fromiter((T.parse_timestamp(v) for v in col.to_pylist()), dtype=np.int64, count=len(col))
    raise EventError(f"column {name} must hold timestamps or epoch milliseconds, not {t}")


def load_columns(wb, d, data, rowtime: str, chunk: int, progress) -> "LoadResult":
    from .workbench import LoadResult
    table = _as_table(data)
    names = {n.upper(): n for n in table.column_names}
    if rowtime.upper() not in names:
        raise EventError(f"no {rowtime} column to load into {d.name}; columns: {', '.join(table.column_names)}")
    rt = _rowtimes(table.column(names[rowtime.upper()]), rowtime)
    if rt.dtype != np.int64 or (len(rt) and (pc.any(pc.is_null(table.column(names[rowtime.upper()]))).as_py())):
        raise EventError(f"column {rowtime} has NULLs; every row needs a rowtime")
    known = {f.name.upper() for f in d.fields} | {rowtime.upper()}
    extra = [n for n in table.column_names if n.upper() not in known]
    if extra:
        raise EventError(f"stream {d.name} has no column {extra[0]!r} (columns: {', '.join(f.name for f in d.fields)})")
    cols = []
    for f in d.fields:
        src = names.get(f.name.upper())
        at = arrow_type(f.type)
        if src is None:
            if not f.type.nullable:
                raise EventError(f"column {f.name} of stream {d.name} is NOT NULL and was not given")
            cols.append(pa.nulls(len(rt), at))
            continue
        c = table.column(src)
        try:
            c = pc.cast(c, at) if c.type != at else c
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as e:
            raise EventError(f"column {f.name} of stream {d.name}: cannot store {c.type} values as {f.type}: {e}") from None
        if not f.type.nullable and c.null_count:
            raise EventError(f"column {f.name} of stream {d.name} is NOT NULL but has {c.null_count} NULLs")
        if f.type.is_string and f.type.precision is not None and len(c):
            longest = pc.max(pc.utf8_length(c)).as_py() or 0
            if longest > f.type.precision:
                raise EventError(f"column {f.name} of stream {d.name}: a value is longer than {f.type}")
        cols.append(c.combine_chunks() if isinstance(c, pa.ChunkedArray) else c)

    c = wb.catalog
    st = c.state[d.name]
    prod = st.producers.get(DEFAULT_PRODUCER)
    clock0 = max(st.bound, prod.clock if prod and prod.attached else T.NO_TIME)
    n = len(rt)
    before = np.maximum.accumulate(np.concatenate([[clock0], rt[:-1]])) if n else rt
    late = rt < before
    after = np.maximum(before, rt)
    seq0 = c.next_seq
    seqs = np.arange(seq0, seq0 + n, dtype=np.int64)
    ok = ~late
    schema = entry_schema(d.fields)
    err_entries = []
    late_idx = np.nonzero(late)[0]
    if len(late_idx):
        est = c.state[ERROR_STREAM]
        vals = table.take(pa.array(late_idx)).to_pylist()
        for k, i in enumerate(late_idx):
            st.late_count += 1
            clock = int(before[i])
            data = {f.name: to_json_value(vals[k].get(names.get(f.name.upper())), f.type) for f in d.fields}
            msg = (f"Late row in stream {d.name}: rowtime {T.format_timestamp(int(rt[i]))} is before the stream "
                   f"clock {T.format_timestamp(clock)}")
            t = max(est.bound, clock)
            est.bound = t
            est.rows_in += 1
            err_entries.append(LogEntry(int(seqs[i]), 0, t, t, (t, "WARNING", "LATE_ROW", msg, int(rt[i]),
                                                                 dumps_row(data), d.name, DEFAULT_PRODUCER,
                                                                 int(seqs[i]))))
            if _is_power_of_ten(st.late_count):
                log.warning("late row #%d in stream %s (step %d): rowtime %s is before the stream clock %s",
                            st.late_count, d.name, int(seqs[i]), T.format_timestamp(int(rt[i])),
                            T.format_timestamp(clock))
    idx = np.nonzero(ok)[0]
    for a in range(0, max(len(idx), 1), chunk):
        part = idx[a:a + chunk]
        if not len(part):
            break
        arrays = [pa.array(seqs[part]), pa.array(np.zeros(len(part), np.int8)), pa.array(rt[part]),
                  pa.array(after[part])] + [col.take(pa.array(part)) for col in cols]
        wb.log.write_segments({d.uid: pa.Table.from_arrays(arrays, schema=schema)})
        if progress:
            progress(min(a + chunk, len(idx)), len(idx))
    if err_entries:
        wb.log.write_segments({c.streams[ERROR_STREAM].uid: wb._entries_table(ERROR_STREAM, err_entries)})
    if n:
        if prod is None or not prod.attached:
            prod = st.producers[DEFAULT_PRODUCER] = Producer()
        prod.clock = max(prod.clock, int(after[-1]))
        st.bound = max(st.bound, int(after[-1]))
        st.rows_in += int(ok.sum())
    c.next_seq = seq0 + n
    wb._commit_catalog()
    wb.log.write_head(c.next_seq - 1)
    if any(getattr(rt_, "wants_feeds", True) for rt_ in wb._runtimes.values()):
        feeds = _feeds(d, seqs, rt, after, cols, ok, err_entries)
        for rt_ in wb._runtimes.values():
            rt_.notify(feeds, c.next_seq - 1)
    return LoadResult(int(ok.sum()), [int(seqs[i]) for i in late_idx], seq0, seq0 + n - 1)


def _feeds(d, seqs, rt, after, cols, ok, err_entries):
    """Per-event stream-log entries, for runtimes that process events in-process."""
    pylists = [c.to_pylist() for c in cols]
    errs = {e.seq: e for e in err_entries}
    out = []
    j = 0
    for i in range(len(seqs)):
        s = int(seqs[i])
        if ok[i]:
            out.append((s, {d.name: [LogEntry(s, 0, int(rt[i]), int(after[i]), tuple(p[i] for p in pylists))]}))
        elif s in errs:
            out.append((s, {ERROR_STREAM: [errs[s]]}))
    return out
