"""Spark's view of the event log: a Python streaming data source named ``streamsql_log``.

Offsets are ``{"step": n}``: the log up to event ``n``. Because every event has one global
step, one offset is a consistent cut across all the streams a query reads, and a restart from a
checkpoint re-reads exactly the same events. The checkpoint of a query of a version-1 workspace
holds ``{"seq": n}`` (:func:`offset_step` reads both); with nothing new to read, a reader answers
the offset it was given as it was given, so that Spark sees no new data in either spelling.
Events of streams the query does not read are not new data: the offset moves past them with the
next event of its own streams, so a query runs a micro-batch only when one of its streams has an
event (an insert into one stream runs only the queries that read it).

Each micro-batch yields the rows that left the query's streams (one column group per stream)
and one *timeline* record: for every event of the range, each stream's bound after it. Bounds
travel as that timeline, not as rows, so every operator bucket can know every input's clock at
every step without the rows being copied to all buckets.

The timeline also carries the batch's *trace window*: the first of the last ``trace_steps`` steps
of the batch that fed one of the query's streams (the steps whose trace records the query keeps;
``NO_TRACE`` when it keeps none). Stages describe their state at those steps only, and rows before
the window can be pre-combined (precombine.py).
"""
from __future__ import annotations

import json

import numpy as np
import pyarrow as pa

from ...log import EventLog, entry_schema, step_value, visible_head
from ...plan import Field
from ...types import SqlType, arrow_type
from .framecode import FrameCode
from .sqltext import spark_type_ddl
from .timeline import NO_TRACE, pack_timeline, trace_start, unpack_timeline  # noqa: F401

NAME = "streamsql_log"
_STEP = pa.schema([pa.field("step", pa.int64())])


def offset_step(offset: dict) -> int:
    """The step of a source offset: ``{"step": n}``, or ``{"seq": n}`` as the checkpoint of a
    version-1 workspace holds it."""
    return int(step_value(offset))


def stream_prefix(k: int) -> str:
    return f"s{k}_"


def source_schema(streams: list[list[Field]], combined: bool = False) -> pa.Schema:
    cols = [pa.field("ev", pa.int8()), pa.field("step", pa.int64()), pa.field("sub", pa.int32()),
            pa.field("src", pa.int32()), pa.field("rowtime", pa.int64()), pa.field("tl", pa.binary())]
    for k, fields in enumerate(streams):
        cols += [pa.field(f"{stream_prefix(k)}c{i}", arrow_type(f.type)) for i, f in enumerate(fields)]
    if combined:   # rows are GROUP BY partials (precombine.ScanCombiner)
        cols += [pa.field("bucket", pa.int32()), pa.field("part", pa.binary())]
    return pa.schema(cols)


def spark_schema_ddl(streams: list[list[Field]], combined: bool = False) -> str:
    cols = ["ev TINYINT", "step BIGINT", "sub INT", "src INT", "rowtime BIGINT", "tl BINARY"]
    for k, fields in enumerate(streams):
        cols += [f"{stream_prefix(k)}c{i} {spark_type_ddl(f.type)}" for i, f in enumerate(fields)]
    if combined:
        cols += ["bucket INT", "part BINARY"]
    return ", ".join(cols)


# --------------------------------------------------------------------------- reading

class LogReader:
    """Reads one query's streams for a range of events (used by the source and by tests)."""

    def __init__(self, spec: dict):
        self.root = spec["root"]
        self.query = spec.get("query")
        self.streams = [(s["uid"], [Field(f["name"], SqlType.from_json(f["type"])) for f in s["fields"]])
                        for s in spec["streams"]]
        self.log = EventLog(self.root)
        self.combiner = None
        if spec.get("combine"):
            from .precombine import ScanCombiner
            self.combiner = ScanCombiner(spec["combine"])
        self.schema = source_schema([f for _, f in self.streams], self.combiner is not None)
        self.trace_steps = int(spec.get("trace_steps") or 0)

    def head(self) -> int:
        """The last step this query may read (HEAD may hold it back while another reads first)."""
        return visible_head(self.root, self.query)

    def has_events(self, start: int, end: int) -> bool:
        """Whether one of the query's streams has an event in ``(start, end]``: events of other
        streams run no micro-batch (a click into one stream runs only the queries that read it)."""
        return any(self.log.has_entries(uid, start, end) for uid, _f in self.streams)

    def end_of_batch(self, start: int, head: int, max_events: int) -> int:
        """The end of the next micro-batch from ``start`` (``start``: none yet)."""
        if head <= start or not self.has_events(start, head):
            return start
        return min(head, start + max_events) if max_events else head

    def trace_from(self, start: int, end: int) -> int:
        """The trace window of the batch ``(start, end]`` (see the module doc)."""
        if not self.trace_steps:
            return NO_TRACE
        steps = [self.log.read(uid, _STEP, start, end).column("step").to_numpy() for uid, _f in self.streams]
        return trace_start(steps, self.trace_steps)

    def read(self, start: int, end: int, trace_from: int | None = None) -> list[pa.RecordBatch]:
        """The batch ``(start, end]`` (a part of it, with the whole batch's ``trace_from``)."""
        batches = []
        timeline = []
        tables = [self.log.read(uid, entry_schema(fields), start, end) for uid, fields in self.streams]
        if trace_from is None:
            trace_from = (trace_start([t.column("step").to_numpy() for t in tables], self.trace_steps)
                          if self.trace_steps else NO_TRACE)
        for k, (uid, fields) in enumerate(self.streams):
            t = tables[k]
            step = t.column("step").to_numpy() if t.num_rows else np.zeros(0, np.int64)
            clock = t.column("clock").to_numpy() if t.num_rows else np.zeros(0, np.int64)
            if len(step):
                last = np.r_[step[1:] != step[:-1], True]
                timeline.append((step[last], clock[last]))
            else:
                timeline.append((step, clock))
            if not t.num_rows:
                continue
            kind = t.column("kind").to_numpy()
            sub = (np.arange(len(step)) - np.searchsorted(step, step, side="left")).astype(np.int32)
            rows = kind == 0
            if not rows.any():
                continue
            idx = np.nonzero(rows)[0]
            if self.combiner is not None:
                g = self.combiner.combine(step[idx], sub[idx], t.column("rowtime").to_numpy()[idx], t.take(pa.array(idx)),
                                          trace_from)
                n = g.num_rows
                batches.append(self._batch({"ev": pa.array(np.full(n, FrameCode.ROW, np.int8)),
                                            "step": g.column("step"), "sub": g.column("sub"),
                                            "src": pa.array(np.full(n, k, np.int32)), "rowtime": g.column("T"),
                                            "bucket": g.column("bucket"), "part": g.column("part")}, n))
                continue
            n = len(idx)
            cols = {"ev": pa.array(np.full(n, FrameCode.ROW, np.int8)), "step": pa.array(step[idx]),
                    "sub": pa.array(sub[idx]), "src": pa.array(np.full(n, k, np.int32)),
                    "rowtime": pa.array(t.column("rowtime").to_numpy()[idx]),
                    "tl": pa.nulls(n, pa.binary())}
            taken = t.take(pa.array(idx))
            for i, _f in enumerate(fields):
                cols[f"{stream_prefix(k)}c{i}"] = taken.column(f"c{i}")
            batches.append(self._batch(cols, n))
        tl = pack_timeline(start, end, timeline, trace_from)
        batches.append(self._batch({"ev": pa.array([FrameCode.TIMELINE], pa.int8()), "step": pa.array([end], pa.int64()),
                                    "sub": pa.array([0], pa.int32()), "src": pa.array([-1], pa.int32()),
                                    "rowtime": pa.array([0], pa.int64()), "tl": pa.array([tl], pa.binary())}, 1))
        return batches

    def _batch(self, cols: dict, n: int) -> pa.RecordBatch:
        arrays = []
        for f in self.schema:
            a = cols.get(f.name)
            if a is None:
                a = pa.nulls(n, f.type)
            elif isinstance(a, pa.ChunkedArray):
                a = a.combine_chunks()
            arrays.append(a.cast(f.type) if a.type != f.type else a)
        return pa.RecordBatch.from_arrays(arrays, schema=self.schema)


#: events per partition of the parallel reader (smaller ranges are read by one task)
PARTITION_EVENTS = 100_000


def register(spark) -> None:
    from pyspark.errors import PySparkNotImplementedError
    from pyspark.sql.datasource import (DataSource, DataSourceStreamReader, InputPartition,
                                        SimpleDataSourceStreamReader)

    class _Range(InputPartition):
        def __init__(self, start: int, end: int, trace_from: int):
            self.start, self.end, self.trace_from = start, end, trace_from

    class _Parallel(DataSourceStreamReader):
        """For replays: the range of a micro-batch is split into partitions read by executor
        tasks in parallel (each with its own timeline record; consumers merge them)."""

        def __init__(self, spec: dict):
            self.spec = spec
            self.max_events = int(spec.get("max_events") or 0)
            self.parallelism = max(1, int(spec.get("parallelism") or 2))
            self.reader = None        # made on first use: the driver-side runner's, not pickled

        def __getstate__(self):       # the reader goes to the executors without its log cache
            return {**self.__dict__, "reader": None}

        def initialOffset(self):
            return {"step": int(self.spec["start"])}

        def _reader(self) -> LogReader:
            if self.reader is None:
                self.reader = LogReader(self.spec)
            return self.reader

        def latestOffset(self, start=None, limit=None):
            s = offset_step(start) if start else int(self.spec["start"])
            end = self._reader().end_of_batch(s, self._reader().head(), self.max_events)
            return start if start and end == s else {"step": end}

        def partitions(self, start, end):
            s, e = offset_step(start), offset_step(end)
            if e <= s:
                return []
            size = int(self.spec.get("partition_events") or PARTITION_EVENTS)
            k = max(1, min(self.parallelism * 2, (e - s) // size))
            cuts = [s + (e - s) * i // k for i in range(k + 1)]
            tf = self._reader().trace_from(s, e)
            return [_Range(a, b, tf) for a, b in zip(cuts, cuts[1:]) if b > a]

        def read(self, partition):
            return iter(LogReader(self.spec).read(partition.start, partition.end, partition.trace_from))

        def commit(self, end):
            pass

    class _Reader(SimpleDataSourceStreamReader):
        def __init__(self, spec: dict):
            self.spec = spec
            self.reader = LogReader(spec)
            self.max_events = int(spec.get("max_events") or 0)

        def initialOffset(self):
            return {"step": int(self.spec["start"])}

        def read(self, start):
            s = offset_step(start)
            end = self.reader.end_of_batch(s, self.reader.head(), self.max_events)
            if end == s:
                return iter([]), start
            return iter(self.reader.read(s, end)), {"step": end}

        def readBetweenOffsets(self, start, end):
            return iter(self.reader.read(offset_step(start), offset_step(end)))

        def commit(self, end):
            pass

    class _Source(DataSource):
        @classmethod
        def name(cls):
            return NAME

        def schema(self):
            spec = json.loads(self.options["spec"])
            return spark_schema_ddl([[Field(f["name"], SqlType.from_json(f["type"])) for f in s["fields"]]
                                     for s in spec["streams"]], bool(spec.get("combine")))

        def simpleStreamReader(self, schema):
            return _Reader(json.loads(self.options["spec"]))

        def streamReader(self, schema):
            spec = json.loads(self.options["spec"])
            if not spec.get("parallel"):
                # one-event steps: the simple reader reads in the driver's source process, no task
                raise PySparkNotImplementedError(errorClass="NOT_IMPLEMENTED",
                                                 messageParameters={"feature": "streamReader"})
            return _Parallel(spec)

    spark.dataSource.register(_Source)
