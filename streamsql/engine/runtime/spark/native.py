"""The native twin on Spark: a query as plain Spark Structured Streaming.

Built from the logical plan (:class:`~streamsql.engine.native.NativeShape`), not from SQL text:
each StreamScan is the twin's source filtered to its stream with ``withWatermark`` on its
event time; WHERE and projections are the same expressions rendered by :mod:`.sqlgen` in their
plain forms (no calculator-error checks: plain Spark has none); a GROUP BY is ``groupBy(window())``,
a window aggregation ``groupBy(window())`` (TUMBLE, HOP) or ``groupBy(session_window())`` (SESSION);
a window join is an event-time interval join; UNION ALL is ``union``. It runs in append mode
with Spark's default no-data micro-batches, so a batch that only moves the watermark runs as
Spark would run it.

One source reads every input (one offset per batch, so one step is exactly one micro-batch:
separate sources polled one after another could split a step in two). The driver paces it:
it writes the events, moves ``HEAD`` to the next step and waits with ``processAllAvailable``;
then it reads what the step's batches emitted (``foreachBatch``), their progress (watermark in
force, ``numRowsDroppedByWatermark``) and the watermark after the step (the query's watermark
tracker).
"""
from __future__ import annotations

import os
import shutil
from functools import reduce
from pathlib import Path

import pyarrow as pa

from ...locks import engine_lock
from ...native import NativeBatch, NativeEvent, NativeRow, NativeShape, NativeStep
from ...plan import Aggregate, Filter, Join, Node, Project, StreamScan, Union, WindowAggregate, WindowTable
from ...types import arrow_type
from .sqltext import spark_type_ddl
from .wire import restore_value
from .sink import read_arrow, write_arrow
from .sqlgen import SparkSql

NAME = "streamsql_native"
_registered: set[int] = set()
_conf_lock = engine_lock("native-conf")


def source_schema(shape: NativeShape) -> pa.Schema:
    cols = [pa.field("st", pa.int32()), pa.field("step", pa.int64()), pa.field("rt", pa.timestamp("us", tz="UTC"))]
    for k, s in enumerate(shape.streams):
        cols += [pa.field(f"s{k}_c{i}", arrow_type(f.type)) for i, f in enumerate(_fields(shape, s))]
    return pa.schema(cols)


def _fields(shape: NativeShape, stream: str):
    return next(s.fields for s in shape.scans if s.stream == stream)


def _ddl(schema: pa.Schema, shape: NativeShape) -> str:
    cols = ["st INT", "step BIGINT", "rt TIMESTAMP"]
    for k, s in enumerate(shape.streams):
        cols += [f"s{k}_c{i} {spark_type_ddl(f.type)}" for i, f in enumerate(_fields(shape, s))]
    return ", ".join(cols)


def register(spark) -> None:
    """The twin's source: ``events.arrow`` (every event so far) up to the step in ``HEAD``."""
    if id(spark) in _registered:
        return
    from pyspark.sql.datasource import DataSource, SimpleDataSourceStreamReader

    class _Reader(SimpleDataSourceStreamReader):
        def __init__(self, folder: str):
            self.folder = Path(folder)

        def _head(self) -> int:
            return int((self.folder / "HEAD").read_text())

        def _rows(self, s: int, e: int):
            t = read_arrow(self.folder / "events.arrow")
            step = t.column("step").to_numpy()
            keep = (step > s) & (step <= e)
            t = t.filter(pa.array(keep))
            return t.to_batches() or []

        def initialOffset(self):
            return {"step": int((self.folder / "START").read_text())}

        def read(self, start):
            s = int(start["step"])
            e = max(s, self._head())
            if e == s:
                return iter([]), {"step": s}
            return iter(self._rows(s, e)), {"step": e}

        def readBetweenOffsets(self, start, end):
            return iter(self._rows(int(start["step"]), int(end["step"])))

        def commit(self, end):
            pass

    class _Source(DataSource):
        @classmethod
        def name(cls):
            return NAME

        def schema(self):
            return self.options["ddl"]

        def simpleStreamReader(self, schema):
            return _Reader(self.options["dir"])

    try:
        spark.dataSource.register(_Source)
    except Exception as e:  # already registered on this session (a restarted runtime)
        if "ALREADY_EXISTS" not in str(e):
            raise
    _registered.add(id(spark))


class _Build:
    """The plan as DataFrames; every frame has value columns ``c0..`` and the event time ``rt``."""

    def __init__(self, src, shape: NativeShape, delay_ms: int):
        self.src = src
        self.shape = shape
        self.delay = f"{delay_ms} milliseconds"

    @staticmethod
    def sql(col, rowtime):
        return SparkSql(col, rowtime, checked=False).render

    def frame(self, n: Node):
        if isinstance(n, StreamScan):
            k = self.shape.streams.index(n.stream)
            return (self.src.where(f"st = {k}")
                    .selectExpr(*[f"s{k}_c{i} AS c{i}" for i in range(len(n.fields))], "rt")
                    .withWatermark("rt", self.delay))
        if isinstance(n, Filter):
            r = self.sql(lambda i: f"c{i}", lambda k: "unix_millis(rt)")
            return self.frame(n.input).where(r(n.cond))
        if isinstance(n, Project):
            r = self.sql(lambda i: f"c{i}", lambda k: "unix_millis(rt)")
            return self.frame(n.input).selectExpr(
                *[f"CAST({r(e)} AS {spark_type_ddl(f.type)}) AS c{j}" for j, (e, f) in enumerate(zip(n.exprs, n.fields))],
                "rt")
        if isinstance(n, Union):
            parts = [self.frame(i).selectExpr(*[f"CAST(c{j} AS {spark_type_ddl(f.type)}) AS c{j}"
                                                for j, f in enumerate(n.fields)], "rt") for i in n.inputs_]
            return reduce(lambda a, b: a.unionByName(b), parts)
        if isinstance(n, Aggregate):
            return self.aggregate(n)
        if isinstance(n, WindowAggregate):
            return self.window_aggregate(n)
        if isinstance(n, WindowTable):
            return self.window_table(n)
        if isinstance(n, Join):
            return self.join(n)
        raise ValueError(f"no native form for {type(n).__name__}")   # native_shape refused it already

    def aggregate(self, a: Aggregate):
        from pyspark.sql import functions as F
        r = self.sql(lambda i: f"c{i}", lambda k: "unix_millis(rt)")
        df = self.frame(a.input)
        keys = [j for j in range(len(a.keys)) if j != a.time_key]
        pre = [f"{r(a.keys[j])} AS k{j}" for j in keys]
        pre += [f"{r(c.arg)} AS a{m}" for m, c in enumerate(a.aggs) if c.arg is not None]
        df = df.selectExpr("*", *pre) if pre else df
        aggs = []
        for m, c in enumerate(a.aggs):
            fn = "count" if c.fn == "COUNT" else c.fn.lower()
            aggs.append(F.expr(f"{fn}({'1' if c.arg is None else f'a{m}'})").alias(f"v{m}"))
        g = df.groupBy(F.window("rt", f"{self.shape.window_ms} milliseconds").alias("w"),
                       *[F.col(f"k{j}") for j in keys]).agg(*aggs)
        nk = len(a.keys)
        out = []
        for j in range(nk):
            v = "unix_millis(w.start)" if j == a.time_key else f"k{j}"
            out.append(f"CAST({v} AS {spark_type_ddl(a.fields[j].type)}) AS c{j}")
        out += [f"CAST(v{m} AS {spark_type_ddl(a.fields[nk + m].type)}) AS c{nk + m}" for m in range(len(a.aggs))]
        return g.selectExpr(*out, "w.end AS rt")

    def _window(self, sh):
        """Spark's own window column for a shape (docs/semantics.md 3.7): ``window()`` for TUMBLE
        and HOP (with its offset as ``startTime``), ``session_window()`` for SESSION."""
        from pyspark.sql import functions as F
        if sh.is_session:
            return F.session_window("rt", f"{sh.gap} milliseconds")
        return F.window("rt", f"{sh.size} milliseconds", f"{sh.slide} milliseconds", f"{sh.offset} milliseconds")

    def window_aggregate(self, a: WindowAggregate):
        """A window aggregation as ``groupBy(window(...) or session_window(...), keys)``."""
        from pyspark.sql import functions as F
        r = self.sql(lambda i: f"c{i}", lambda k: "unix_millis(rt)")
        df = self.frame(a.input)
        keys = [j for j in range(len(a.keys)) if j not in a.window_keys]
        pre = [f"{r(a.keys[j])} AS k{j}" for j in keys]
        pre += [f"{r(c.arg)} AS a{m}" for m, c in enumerate(a.aggs) if c.arg is not None]
        df = df.selectExpr("*", *pre) if pre else df
        aggs = [F.expr(f"{'count' if c.fn == 'COUNT' else c.fn.lower()}({'1' if c.arg is None else f'a{m}'})")
                .alias(f"v{m}") for m, c in enumerate(a.aggs)]
        g = df.groupBy(self._window(a.shape).alias("w"), *[F.col(f"k{j}") for j in keys]).agg(*aggs)
        nk = len(a.keys)
        part = {0: "unix_millis(w.start)", 1: "unix_millis(w.end)", 2: "unix_millis(w.end) - 1"}
        out = [f"CAST({part[a.window_keys[j]] if j in a.window_keys else f'k{j}'} AS {spark_type_ddl(a.fields[j].type)}) "
               f"AS c{j}" for j in range(nk)]
        out += [f"CAST(v{m} AS {spark_type_ddl(a.fields[nk + m].type)}) AS c{nk + m}" for m in range(len(a.aggs))]
        return g.selectExpr(*out, "w.end AS rt")

    def window_table(self, t: WindowTable):
        """A window table's rows: each row with its windows (a hop's ``window()`` gives a row per
        window), stamped with the window's end; Spark emits them as it reads them."""
        n = len(t.input.fields)
        df = self.frame(t.input).selectExpr("*").withColumn("w", self._window(t.shape))
        out = [f"c{i}" for i in range(n)]
        out += [f"unix_millis(w.start) AS c{n}", f"unix_millis(w.end) AS c{n + 1}", f"unix_millis(w.end) - 1 AS c{n + 2}"]
        return df.selectExpr(*out, "w.end AS rt")

    def join(self, j: Join):
        from pyspark.sql import functions as F
        nl, nr = len(j.left.fields), len(j.right.fields)
        L = self.frame(j.left).selectExpr(*[f"c{i}" for i in range(nl)], "rt AS lrt")
        R = self.frame(j.right).selectExpr(*[f"c{i} AS c{nl + i}" for i in range(nr)], "rt AS rrt")
        lw, rw = j.left_window, j.right_window
        left = self.sql(lambda i: f"c{i}", lambda k: "unix_millis(lrt)")
        right = self.sql(lambda i: f"c{nl + i}", lambda k: "unix_millis(rrt)")
        both = self.sql(lambda i: f"c{i}", lambda k: ("unix_millis(lrt)", "unix_millis(rrt)")[k])
        conds = [f"({left(a)} = {right(b)})" for a, b in j.equi]
        if j.residual is not None:
            conds.append(f"({both(j.residual)})")
        # the rows' windows overlap: r - f_r <= l + p_l and l - f_l <= r + p_r (the semantics, section 3.5)
        conds.append(f"rrt >= lrt - {_interval(lw.following + rw.preceding)}")
        conds.append(f"rrt <= lrt + {_interval(lw.preceding + rw.following)}")
        how = {"INNER": "inner", "LEFT": "left_outer", "RIGHT": "right_outer", "FULL": "full_outer"}[j.kind]
        out = L.join(R, F.expr(" AND ".join(conds)), how)
        stamp = (f"CASE WHEN lrt IS NOT NULL AND rrt IS NOT NULL THEN greatest(unix_millis(lrt) - {lw.following}, "
                 f"unix_millis(rrt) - {rw.following}) WHEN rrt IS NULL THEN unix_millis(lrt) + {lw.preceding} "
                 f"ELSE unix_millis(rrt) + {rw.preceding} END")
        return out.selectExpr(*[f"c{i}" for i in range(nl + nr)], f"timestamp_millis({stamp}) AS rt")


def _interval(ms: int) -> str:
    return f"INTERVAL '{ms // 1000}.{ms % 1000:03d}' SECOND"


class SparkTwin:
    """One running twin: feed it events, one step (one micro-batch, and the no-data batch Spark
    may add) at a time; it returns what each step did."""

    def __init__(self, spark, folder: Path, shape: NativeShape, delay_ms: int, start: int, before_start=None):
        register(spark)
        self.spark = spark
        self.folder = folder
        self.shape = shape
        self.fields = shape.plan.columns
        if folder.exists():
            shutil.rmtree(folder)
        folder.mkdir(parents=True)
        self.schema = source_schema(shape)
        self.events: list[NativeEvent] = []
        self._write_events()
        (folder / "START").write_text(str(start))
        self._head(start)
        self.last_batch = -1
        self.delay_ms = delay_ms
        self.sq = None      # started by the first step (see _start)
        self._before_start = before_start    # the runtime's wait for the last query's sources

    def _start(self) -> None:
        """Start Spark's query once ``HEAD`` holds the first step. Started before, its first
        trigger could see ``HEAD`` still at ``START`` and run an empty batch 0 (an offset never
        committed counts as new data), or not, as the threads happen to run: every batch
        number after it would then differ by one from run to run."""
        if self._before_start is not None:
            self._before_start()
        src = (self.spark.readStream.format(NAME).option("dir", str(self.folder))
               .option("ddl", _ddl(self.schema, self.shape)).load())
        root = _Build(src, self.shape, self.delay_ms).frame(self.shape.plan.root)
        n = len(self.fields)
        out = root.selectExpr(*[f"c{j}" for j in range(n)], "unix_millis(rt) AS rt")

        # each batch's rows go to a file: under Spark Connect this function runs in the server's
        # Python process, not here (so it holds nothing of this object)
        emitted = str(self.folder / "emitted")
        os.makedirs(emitted, exist_ok=True)

        def collect(df, batch_id):
            from streamsql.engine.runtime.spark.sink import write_arrow
            write_arrow(Path(emitted) / f"{batch_id}.arrow", df.toArrow(), False)
        conf = "spark.sql.streaming.noDataMicroBatches.enabled"
        with _conf_lock:      # Spark's default for the twin; the session keeps the project's own setting
            before = self.spark.conf.get(conf)
            self.spark.conf.set(conf, "true")
            try:
                self.sq = (out.writeStream.outputMode("append").foreachBatch(collect)
                           .option("checkpointLocation", str(self.folder / "checkpoint")).start())
            finally:
                self.spark.conf.set(conf, before)

    def _emitted(self, batch_id: int) -> pa.Table | None:
        """What batch ``batch_id`` emitted (its file is written before Spark reports the batch)."""
        f = self.folder / "emitted" / f"{batch_id}.arrow"
        if not f.exists():
            return None
        t = read_arrow(f)
        f.unlink()
        return t

    def _write_events(self) -> None:
        cols = {f.name: [] for f in self.schema}
        streams = self.shape.streams
        for e in self.events:
            if e.kind != "row" or e.stream not in streams:
                continue
            k = streams.index(e.stream)
            for f in self.schema:
                cols[f.name].append(None)
            cols["st"][-1], cols["step"][-1], cols["rt"][-1] = k, e.step, e.rowtime * 1000
            for i, v in enumerate(e.values):
                cols[f"s{k}_c{i}"][-1] = v
        arrays = [pa.array(cols[f.name], type=pa.int64() if f.name == "rt" else f.type) for f in self.schema]
        arrays[2] = arrays[2].cast(pa.timestamp("us", tz="UTC"))
        write_arrow(self.folder / "events.arrow", pa.Table.from_arrays(arrays, schema=self.schema), False)

    def _head(self, step: int) -> None:
        tmp = self.folder / "HEAD.tmp"
        tmp.write_text(str(step))
        os.replace(tmp, self.folder / "HEAD")

    def watermark(self) -> int | None:
        """The watermark after the last batch (Spark's own tracker; 0 means none yet)."""
        if self.sq is None:
            return None
        try:
            wm = int(self.sq._jsq.streamingQuery().watermarkTracker().currentWatermark())
        except Exception:   # no tracker reachable: the last batch's watermark in force
            prog = self.sq.lastProgress or {}
            wm = _ms(prog.get("eventTime", {}).get("watermark"))
        return wm or None

    def feed(self, events: list[NativeEvent]) -> list[NativeStep]:
        out = []
        for e in events:
            self.events.append(e)
            if e.kind == "row":
                self._write_events()
            self._head(e.step)
            if self.sq is None:
                self._start()
            self._catch_up(e.step)
            progress = sorted((p for p in self.sq.recentProgress if p["batchId"] > self.last_batch),
                              key=lambda p: p["batchId"])
            batches = []
            for p in progress:
                b = p["batchId"]
                t = self._emitted(b)
                rows = _rows(t, self.fields, e.step, b) if t is not None else []
                dropped = sum(int(s.get("numRowsDroppedByWatermark") or 0) for s in p.get("stateOperators") or [])
                wm = _ms((p.get("eventTime") or {}).get("watermark")) or None
                batches.append(NativeBatch(b, e.step, bool(batches), wm, rows, dropped))
                self.last_batch = b
            out.append(NativeStep(e, batches, self.watermark(), any(b.dropped for b in batches)))
        return out

    def _catch_up(self, step: int) -> None:
        """Wait until Spark has run the step's batch and any no-data batch after it.
        ``processAllAvailable`` can return on the word of a trigger that read the source before
        ``HEAD`` moved, so wait until the last batch read up to ``step``, then once more: the next
        "no new data" comes only after the no-data batch, if Spark runs one."""
        for _ in range(100):
            self.sq.processAllAvailable()
            if _end_step(self.sq.lastProgress) >= step:
                break
        self.sq.processAllAvailable()

    def stop(self) -> None:
        if self.sq is None:
            return
        try:
            self.sq.stop()
        except Exception:
            pass


def _end_step(progress) -> int:
    """The step the batch of ``progress`` (``lastProgress``) read up to; -1 before any batch."""
    import json
    if not progress or not progress.get("sources"):
        return -1
    end = progress["sources"][0].get("endOffset")
    end = json.loads(end) if isinstance(end, str) else end
    return int(end["step"]) if end else -1


def _ms(iso: str | None) -> int | None:
    if not iso:
        return None
    import datetime as dt
    d = dt.datetime.fromisoformat(iso.replace("Z", "+00:00"))
    return int(d.timestamp() * 1000)


def _rows(t: pa.Table, fields, step: int, batch: int) -> list[NativeRow]:
    cols = t.to_pydict()
    n = len(fields)
    out = []
    for i in range(t.num_rows):
        vals = tuple(restore_value(cols[f"c{j}"][i], fields[j].type) for j in range(n))
        out.append(NativeRow(step, batch, int(cols["rt"][i]), vals))
    # a batch's rows come in no particular order: show them by rowtime, then values (NULLs first)
    out.sort(key=lambda r: (r.rowtime, [(v is not None, str(v)) for v in r.values]))
    return out
