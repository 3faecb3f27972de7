"""Foreign streams on the file server: CSV files of a directory, read into a stream.

``CREATE FOREIGN STREAM s (...) SERVER FILE_SERVER OPTIONS ("PARSER" 'CSV', "DIRECTORY" '/data',
"FILENAME_PATTERN" 'trades-.*\\.csv', "SKIP_HEADER" 'true', "SEPARATOR" ',', "CHARACTER_ENCODING"
'UTF-8')``. Reading starts when the first query or pump that reads the stream (directly or through
a view) starts, so that query sees every row. On the Spark engine the files are read by Spark's
streaming file source, which also picks up files added later; on the local engine by pyarrow,
polled when a reader waits. Files are read in name order; each file's rows become events of the
stream (one step each), followed by a bound at the file's last rowtime.

Rows are stamped by the column a view promotes (``SELECT STREAM CAST(ts AS TIMESTAMP) AS ROWTIME,
... FROM s``), or else by their arrival time. A record that does not parse, or whose values do not
fit the stream's columns, goes to the error stream with its file and line number; the rest flows.
"""
from __future__ import annotations

import json
import logging
import os
import re
import threading
import time as _time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from . import time as T
from .errors import SqlError
from .types import arrow_type
from .values import coerce

log = logging.getLogger("streamsql.foreign")

CORRUPT = "_corrupt_record"


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
    return {"directory": str(opts["DIRECTORY"]), "pattern": pattern,
            "skip_header": str(opts.get("SKIP_HEADER", "false")).lower() in ("true", "1", "yes"),
            "separator": str(opts.get("SEPARATOR", ",")), "encoding": str(opts.get("CHARACTER_ENCODING", "UTF-8")),
            "max_files": int(opts.get("MAX_FILES_PER_BATCH", 64))}


class FileReader:
    """Reads one foreign stream's directory into the stream."""

    def __init__(self, wb, stream: str):
        self.wb = wb
        self.stream = stream
        d = wb.catalog.streams[stream]
        self.fields = d.fields
        self.opts = check_options(stream, d.foreign)
        self.rowtime_column = d.foreign.get("rowtime_column")
        self.rx = re.compile(self.opts["pattern"])
        self.done: list[str] = list(d.foreign.get("files_done", []))
        self.files_total = 0
        self.rows_loaded = 0
        self.malformed = 0
        self.sq = None
        self._lock = threading.Lock()

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

    # ------------------------------------------------------------------ running

    def start(self) -> None:
        if self.wb.engine == "spark":
            self._start_spark()
        else:
            self.poll()

    def _start_spark(self) -> None:
        from .runtime.spark.session import get_session
        spark = get_session()
        schema = ", ".join([f"`c{i}` STRING" for i in range(len(self.fields))] + [f"`{CORRUPT}` STRING"])
        o = self.opts
        folder = self.wb.path / "foreign" / self.wb.catalog.streams[self.stream].uid
        df = (spark.readStream.schema(schema)
              .option("header", "true" if o["skip_header"] else "false")
              .option("sep", o["separator"]).option("encoding", o["encoding"])
              .option("mode", "PERMISSIVE").option("columnNameOfCorruptRecord", CORRUPT)
              .option("maxFilesPerTrigger", o["max_files"])
              .csv(o["directory"])
              .selectExpr("*", "input_file_name() AS _file"))

        def batch(bdf, _bid):
            t = bdf.toArrow()
            files = sorted(set(t.column("_file").to_pylist()))
            for f in files:
                path = _local_path(f)
                if not self.rx.fullmatch(os.path.basename(path)) or path in self.done:
                    continue
                rows = t.filter(pc.equal(t.column("_file"), f))
                self._load_file(path, [rows.column(f"c{i}").combine_chunks() for i in range(len(self.fields))],
                                rows.column(CORRUPT).to_pylist())
        self.sq = (df.writeStream.foreachBatch(batch).option("checkpointLocation", str(folder / "checkpoint"))
                   .queryName(f"streamsql_foreign_{self.stream}_{id(self)}").start())

    def poll(self) -> int:
        """Local engine: read the files not read yet (pyarrow), in name order."""
        n = 0
        for path in self.listing():
            if path in self.done:
                continue
            o = self.opts
            names = [f"c{i}" for i in range(len(self.fields))]
            lines = _numbered_lines(path, o["encoding"], o["skip_header"])
            cols: list[list] = [[] for _ in names]
            corrupt = []
            for _lineno, text in lines:
                try:
                    parsed = next(iter(__import__("csv").reader([text], delimiter=o["separator"])))
                except Exception:
                    parsed = None
                if parsed is None or len(parsed) != len(names):
                    corrupt.append(text)
                    for c in cols:
                        c.append(None)
                else:
                    corrupt.append(None)
                    for c, v in zip(cols, parsed):
                        c.append(v)
            self._load_file(path, [pa.array(c, pa.string()) for c in cols], corrupt, lines)
            n += 1
        return n

    def wait(self) -> None:
        if self.sq is not None:
            self.sq.processAllAvailable()
        else:
            self.poll()

    def stop(self) -> None:
        if self.sq is not None:
            try:
                self.sq.stop()
            except Exception:
                pass
            self.sq = None

    # ------------------------------------------------------------------ one file

    def _load_file(self, path: str, cols: list, corrupt: list, lines=None) -> None:
        """Type the file's records, stamp them, and load them with a bound after the file."""
        n = len(corrupt)
        if lines is None:
            lines = _numbered_lines(path, self.opts["encoding"], self.opts["skip_header"])
        lineno = [ln for ln, _t in lines]
        texts = [t for _ln, t in lines]
        errors: list = [None] * n
        typed = []
        for i, f in enumerate(self.fields):
            col = cols[i]
            at = arrow_type(f.type)
            if f.type.name == "TIMESTAMP":
                vals, bad = _parse_times(col)
                typed.append(pa.array(vals, pa.int64()))
            else:
                try:
                    typed.append(pc.cast(pc.utf8_trim_whitespace(col) if not f.type.is_string else col, at))
                    bad = []
                except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
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
            rt = np.array([T.NO_TIME if v is None else v for v in times], dtype=np.int64)
        else:
            clock = self.wb.clock(self.stream) or T.NO_TIME
            rt = np.full(n, max(int(_time.time() * 1000), clock), dtype=np.int64)
        error_data = []
        for k in range(n):
            if errors[k] is None:
                error_data.append(None)
            else:
                where = {"file": path, "line": lineno[k] if k < len(lineno) else None,
                         "record": texts[k] if k < len(texts) else corrupt[k]}
                errors[k] = f"{os.path.basename(path)}:{where['line']}: {errors[k]}"
                error_data.append(json.dumps(where))
        good_rt = rt[[e is None for e in errors]] if n else rt
        last = int(good_rt.max()) if len(good_rt) else None
        data = {"ROWTIME": np.concatenate([rt, [last if last is not None else T.NO_TIME]]),
                "BOUND": [False] * n + [last is not None],
                "ERROR": errors + [None], "ERROR_DATA": error_data + [None]}
        for f, col in zip(self.fields, typed):
            col = col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col
            data[f.name] = pa.concat_arrays([col, pa.nulls(1, col.type)])
        table = pa.table(data)
        if last is None:
            table = table.slice(0, n)
        with self._lock:
            if n or last is not None:
                self.wb.load(self.stream, table)
            self.done.append(path)
            self.rows_loaded += sum(1 for e in errors if e is None)
            self.malformed += sum(1 for e in errors if e is not None)
            d = self.wb.catalog.streams[self.stream]
            d.foreign["files_done"] = list(self.done)
            self.wb._commit_catalog()
        log.info("%s: read %s (%d records, %d malformed); %d/%d files", self.stream, path, n,
                 sum(1 for e in errors if e is not None), *self.progress)


def _local_path(uri: str) -> str:
    return uri[len("file://"):] if uri.startswith("file://") else (uri[5:] if uri.startswith("file:") else uri)


def _numbered_lines(path: str, encoding: str, skip_header: bool) -> list[tuple[int, str]]:
    """The file's records with their line numbers (blank lines and the header are not records)."""
    out = []
    with open(path, encoding=encoding, newline="") as f:
        for i, line in enumerate(f, 1):
            text = line.rstrip("\r\n")
            if not text.strip():
                continue
            out.append((i, text))
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
            vals.append(T.parse_timestamp(str(v).strip()))
        except T.TimeFormatError as e:
            vals.append(None)
            bad.append((k, f"not a timestamp: {e}"))
    return vals, bad
