"""Foreign streams on the file server: CSV files of a directory, read into a stream.

``CREATE FOREIGN STREAM s (...) SERVER FILE_SERVER OPTIONS ("PARSER" 'CSV', "DIRECTORY" '/data',
"FILENAME_PATTERN" 'trades-.*\\.csv', "SKIP_HEADER" 'true', "SEPARATOR" ',', "CHARACTER_ENCODING"
'UTF-8')``. Reading starts when the first query or pump that reads the stream (directly or through
a view) starts, so that query sees every row. Each runtime has its reader
(``Runtime.foreign_reader``): on Spark, Spark's streaming file source, which also picks up files
added later (:mod:`~streamsql.engine.runtime.spark.foreign`); on the local runtime, the directory
polled when a reader waits (:mod:`~streamsql.engine.runtime.local.foreign`). This module holds
what they share: the options, and the typing, stamping and loading of one file's records. Files are read in name order; each file's rows become events of the
stream (one step each), followed by a bound at the file's last rowtime.

Rows are stamped by the column a view promotes (``SELECT STREAM CAST(ts AS TIMESTAMP) AS ROWTIME,
... FROM s``), or else by their arrival time. A record that does not parse, or whose values do not
fit the stream's columns, goes to the error stream with its file and line number; the rest flows.
"""
from __future__ import annotations

import codecs
import json
import logging
import os
import re
import time as _time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from . import time as sqltime
from .catalog import MAX_EVENT_TIME, MIN_EVENT_TIME
from .errors import SqlError, one_line
from .locks import engine_lock
from .types import arrow_type
from .values import ValueRefused, coerce, column

log = logging.getLogger("streamsql.foreign")

CORRUPT = "_corrupt_record"
#: the most fields a CSV record may have on the Spark engine (more stops the stream's reader)
MAX_CSV_FIELDS = 1 << 20


def check_options(name: str, foreign: dict) -> dict:
    """Validate the OPTIONS of a FILE_SERVER stream; return them normalised."""
    server = (foreign.get("server") or "").upper()
    if server != "FILE_SERVER":
        raise SqlError(f"Foreign stream '{name}': unknown server {foreign.get('server')!r}; only FILE_SERVER is supported")
    opts = {k.upper(): v for k, v in (foreign.get("options") or {}).items()}
    parser = str(opts.get("PARSER", "CSV")).upper()
    if parser != "CSV":
        raise SqlError(f"Foreign stream '{name}': PARSER {parser!r} is not supported; use 'CSV'")
    if "DIRECTORY" not in opts:
        raise SqlError(f"Foreign stream '{name}' needs a DIRECTORY option")
    pattern = opts.get("FILENAME_PATTERN", ".*")
    try:
        re.compile(pattern)
    except re.error as e:
        raise SqlError(f"Foreign stream '{name}': FILENAME_PATTERN {pattern!r} is not a regular expression: {e}")
    known = {"PARSER", "DIRECTORY", "FILENAME_PATTERN", "SKIP_HEADER", "SEPARATOR", "CHARACTER_ENCODING",
             "MAX_FILES_PER_BATCH"}
    unknown = sorted(set(opts) - known)
    if unknown:
        raise SqlError(f"Foreign stream '{name}': unknown option {unknown[0]}; known: {', '.join(sorted(known))}")
    sep = str(opts.get("SEPARATOR", ","))
    if len(sep) != 1 or sep in "\r\n\"":
        raise SqlError(f"Foreign stream '{name}': SEPARATOR must be one character (not a quote or a line end), "
                       f"not {sep!r}")
    encoding = str(opts.get("CHARACTER_ENCODING", "UTF-8"))
    try:
        codecs.lookup(encoding)
    except LookupError:
        raise SqlError(f"Foreign stream '{name}': unknown CHARACTER_ENCODING {encoding!r}") from None
    max_files = str(opts.get("MAX_FILES_PER_BATCH", 64))
    if not max_files.isdigit() or int(max_files) < 1:
        raise SqlError(f"Foreign stream '{name}': MAX_FILES_PER_BATCH must be a whole number of at least 1, "
                       f"not {max_files!r}")
    return {"directory": str(opts["DIRECTORY"]), "pattern": pattern,
            "skip_header": str(opts.get("SKIP_HEADER", "false")).lower() in ("true", "1", "yes"),
            "separator": sep, "encoding": encoding, "max_files": int(max_files)}


def stamp_rowtime_columns(catalog, promoted: dict, pos: tuple = ()) -> bool:
    """A view (or query) stamps a foreign stream's rows with one of its columns (``promoted``:
    stream -> column): one column per stream, chosen before its first reader starts (rows read
    before were stamped by arrival). Errors at ``pos`` (line, col). Returns whether anything was
    newly stamped, for the caller to save the catalog."""
    changed = False
    for s, col in promoted.items():
        f = catalog.streams[s].foreign
        cur = f.get("rowtime_column")
        if cur is not None and cur != col:
            raise SqlError(f"Foreign stream '{s}' is already stamped by column {cur}; it cannot also be "
                           f"stamped by {col}", *pos)
        if cur is None and f.get("files_done"):
            raise SqlError(f"Foreign stream '{s}' has already been read with arrival times; stamp it with "
                           f"{col} before its first reader starts", *pos)
        if cur is None:
            f["rowtime_column"] = col
            changed = True
    return changed


class FileReader:
    """Reads one foreign stream's directory into the stream (a runtime's subclass finds the
    files and splits their records into columns; :meth:`load_file` does the rest)."""

    def __init__(self, host, stream: str):
        #: the workspace (a :class:`~streamsql.engine.runtime.port.RuntimeHost`): the stream's
        #: definition and clock, the load of each file and the catalog it is recorded in
        self.host = host
        self.stream = stream
        d = host.catalog.streams[stream]
        self.fields = d.fields
        self.opts = check_options(stream, d.foreign)
        self.rowtime_column = d.foreign.get("rowtime_column")
        self.rx = re.compile(self.opts["pattern"])
        self.done: list[str] = list(d.foreign.get("files_done", []))
        self.rows_loaded = 0
        self.malformed = 0
        self._lock = engine_lock("foreign-reader")

    # ------------------------------------------------------------------ progress

    def listing(self) -> list[str]:
        p = Path(self.opts["directory"])
        if not p.is_dir():
            return []
        return sorted(str(f) for f in p.iterdir() if f.is_file() and self.rx.fullmatch(f.name))

    @property
    def progress(self) -> tuple[int, int]:
        """(files read, files seen in the directory)."""
        total = max(len(self.listing()), len(self.done))
        return len(self.done), total

    # ------------------------------------------------------------------ running (each runtime's reader)

    def start(self) -> None:
        """Begin reading: the files there now, and (where the runtime can) files added later."""
        raise NotImplementedError

    def wait(self) -> None:
        """Until the files present now have been read."""
        raise NotImplementedError

    def stop(self) -> None:
        """Stop reading (what was read stays in the stream)."""

    # ------------------------------------------------------------------ one file

    def load_file(self, path: str, cols: list, corrupt: list, lines=None) -> None:
        """Type the file's records, stamp them, and load them with a bound after the file."""
        n = len(corrupt)
        if lines is None:
            lines = numbered_lines(path, self.opts["encoding"], self.opts["skip_header"])
        lineno = [ln for ln, _t, _p in lines]
        texts = [t for _ln, t, _p in lines]
        errors: list = [problem for _ln, _t, problem in lines][:n] + [None] * max(0, n - len(lines))
        typed = []
        for i, f in enumerate(self.fields):
            col = cols[i]
            at = arrow_type(f.type)
            if f.type.name == "TIMESTAMP":
                vals, bad = _parse_times(col)
                typed.append(pa.array(vals, pa.int64()))
            else:
                try:      # every value as engine/values.py reads it (a 'nan' is no DOUBLE)
                    typed.append(column(col, f.type, f"column {f.name}"))
                    bad = []
                except ValueRefused:
                    vals, bad = [], []
                    for k, v in enumerate(col.to_pylist()):
                        try:
                            vals.append(None if v is None or (v == "" and not f.type.is_string)
                                        else coerce(v, f.type, where=f"column {f.name}"))
                        except ValueError as e:
                            vals.append(None)
                            bad.append((k, str(e)))
                    typed.append(pa.array(vals, at))
            for k, msg in bad:
                if errors[k] is None and corrupt[k] is None:
                    errors[k] = msg if isinstance(msg, str) else f"column {f.name}: cannot read {col[k].as_py()!r}"
        for k in range(n):
            if corrupt[k] is not None and errors[k] is None:
                errors[k] = f"malformed CSV record ({len(self.fields)} fields expected)"
        for i, f in enumerate(self.fields):
            if f.type.is_string and f.type.precision is not None and n:
                longer = pc.greater(pc.utf8_length(typed[i]), f.type.precision).to_pylist()
                for k in [k for k, x in enumerate(longer) if x]:
                    if errors[k] is None:
                        errors[k] = f"column {f.name}: {str(typed[i][k].as_py())[:40]!r} is longer than {f.type}"
            if not f.type.nullable:
                for k, v in enumerate(typed[i].to_pylist()):
                    if v is None and errors[k] is None:
                        errors[k] = f"column {f.name} is NOT NULL but the record has no value"
        refused = pa.array([e is not None for e in errors], pa.bool_())
        if n and any(e is not None for e in errors):
            typed = [pc.if_else(refused, pa.nulls(n, c.type), c) for c in typed]
        # stamp: the promoted column, or the arrival time
        if self.rowtime_column is not None:
            idx = [f.name for f in self.fields].index(self.rowtime_column)
            if self.fields[idx].type.name == "TIMESTAMP":
                times = typed[idx].to_pylist()
            else:  # CAST(col AS TIMESTAMP): the text is read as a timestamp
                times, bad = _parse_times(cols[idx])
                for k, msg in bad:
                    if errors[k] is None:
                        errors[k] = f"column {self.rowtime_column} (the rowtime): {msg}"
            for k, v in enumerate(times):
                if v is None and errors[k] is None:
                    errors[k] = f"column {self.rowtime_column} (the rowtime) is empty"
            rt = np.array([sqltime.NO_TIME if v is None else v for v in times], dtype=np.int64)
        else:
            clock = self.host.clock(self.stream) or sqltime.NO_TIME
            rt = np.full(n, max(int(_time.time() * 1000), clock), dtype=np.int64)
        for k in range(n):
            if errors[k] is None and not MIN_EVENT_TIME <= rt[k] <= MAX_EVENT_TIME:
                errors[k] = "the rowtime is outside the years 0001 to 9999"
        error_data = []
        for k in range(n):
            if errors[k] is None:
                error_data.append(None)
            else:
                where = {"file": path, "line": lineno[k] if k < len(lineno) else None,
                         "record": texts[k] if k < len(texts) else corrupt[k]}
                errors[k] = one_line(f"{os.path.basename(path)}:{where['line']}: {errors[k]}", limit=300)
                error_data.append(json.dumps(where))
        good_rt = rt[[e is None for e in errors]] if n else rt
        last = int(good_rt.max()) if len(good_rt) else None
        data = {"ROWTIME": np.concatenate([rt, [last if last is not None else sqltime.NO_TIME]]),
                "BOUND": [False] * n + [last is not None],
                "ERROR": errors + [None], "ERROR_DATA": error_data + [None]}
        for f, col in zip(self.fields, typed):
            col = col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col
            data[f.name] = pa.concat_arrays([col, pa.nulls(1, col.type)])
        table = pa.table(data)
        if last is None:
            table = table.slice(0, n)
        with self.host.lock, self._lock:      # the workbench's first (the load takes it): the written order
            if n or last is not None:
                self.host.load(self.stream, table)
            self.done.append(path)
            self.rows_loaded += sum(1 for e in errors if e is None)
            self.malformed += sum(1 for e in errors if e is not None)
            d = self.host.catalog.streams[self.stream]
            d.foreign["files_done"] = list(self.done)
            self.host.save_catalog()
        log.info("%s: read %s (%d records, %d malformed); %d/%d files", self.stream, path, n,
                 sum(1 for e in errors if e is not None), *self.progress)


def numbered_lines(path: str, encoding: str, skip_header: bool) -> list[tuple[int, str, str | None]]:
    """The file's records with their line numbers (blank lines and the header are not records)
    and, for a line that is not text in ``encoding`` (or holds NUL bytes: a binary file such as
    Parquet in the directory), why it cannot be a record; its text is then shown with
    replacement characters."""
    out = []
    with open(path, "rb") as f:
        data = f.read()
    for i, raw in enumerate(data.split(b"\n"), 1):
        raw = raw.rstrip(b"\r")
        problem = None
        try:
            text = raw.decode(encoding)
        except UnicodeDecodeError as e:
            text = raw.decode(encoding, errors="replace")
            problem = f"not {encoding} text (byte 0x{raw[e.start]:02x} at column {e.start + 1})"
        if problem is None and "\x00" in text:
            problem = "not text (it holds NUL bytes: a binary file?)"
        if not text.strip():
            continue
        out.append((i, text[:1000] if problem else text, problem))
    return out[1:] if skip_header and out else out


def _parse_times(col) -> tuple[list, list]:
    """Epoch milliseconds of timestamp texts; ``bad`` lists ``(index, message)``."""
    try:
        ts = pc.cast(pc.utf8_trim_whitespace(col), pa.timestamp("ms"))
        return pc.cast(ts, pa.int64()).to_pylist(), []
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        pass
    vals, bad = [], []
    for k, v in enumerate(col.to_pylist()):
        if v is None or not str(v).strip():
            vals.append(None)
            continue
        try:
            vals.append(sqltime.parse_timestamp(str(v).strip()))
        except sqltime.TimeFormatError as e:
            vals.append(None)
            bad.append((k, f"not a timestamp: {e}"))
    return vals, bad
