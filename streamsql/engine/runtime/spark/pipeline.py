"""A query as one Spark streaming query: the log source, the row-by-row parts as Spark SQL, one
``transformWithStateInPandas`` stage per stateful operator, and the ordered sink.

Every leaf of a stage's input becomes a branch: the rows of its stream (or of the upstream
stage), its WHERE and projections rendered by :mod:`sqlgen`, cast to the merged row type, then
the chain that follows the merge. A branch keeps the stamp its merge orders by (``T``) next to the
rowtime the operator sees (``ort``), so a projection that changes ROWTIME after a merge still
releases rows by the merge's own stamps. Rows go to one key bucket; timelines and upstream
reports go to every bucket.

A branch's WHERE and projections also compute a flag (``sqlgen``): TRUE where the row raises a
calculator error (the semantics, section 1), which the Python evaluator would raise in the same place (a
filter that drops the row first means no error). Such a row produces no output: it becomes a
row of the leaf with ``ev`` 4 whose ``blob`` is its *failure* (``failures.py``: the branch and the
row it received); the stage input reading the leaf turns it into the error record and lets it
wait like a row until it fails where the local runtime refuses it. Only the flags of what comes
before a branch's last WHERE are needed to keep a failing row from being filtered out; the others
are computed once, in the projection, next to the values they share sub-expressions with. With
the trace on, rows a WHERE drops are kept too (``drop``, for the trace); a failing row is never a
dropped one.
"""
from __future__ import annotations

import json
import os
import re
from functools import reduce
from pathlib import Path

from ...expr import Expr, monotonicity, NOT_MONOTONIC
from ...plan import Aggregate, Join, Project, Query, Rank, Window, WindowAggregate, WindowTable
from ..plans import build_stages, make_operator, normalize, origin_stream, post_order, stream_inputs, trace_hosts
from .failures import Branch, Failures
from .framecode import FrameCode
from .frames import value_col
from .inputs import InputSpec, LeafSpec
from .leafsql import STD_COLUMNS, FrameSql
from . import precombine
from .sink import Sink
from .source import NAME, stream_prefix
from .sqlgen import SparkSql, quote_ident
from .sqltext import spark_type_ddl
from .stage import StageSpec, make_processor
from .trace_assembly import TraceAssembler
from .waits import QUERY_BATCH


def partition_exprs(node) -> list[list[Expr]]:
    """Per operator input, the expressions whose values pick a row's key bucket."""
    if isinstance(node, Aggregate):
        return [[k for i, k in enumerate(node.keys) if monotonicity(k) == NOT_MONOTONIC]]
    if isinstance(node, Window):
        specs = [c.spec for c in node.calls]
        first = specs[0].partition_by if specs else []
        common = [e for e in first if monotonicity(e) == NOT_MONOTONIC
                  and all(any(repr(e) == repr(x) for x in s.partition_by) for s in specs)]
        return [common]
    if isinstance(node, WindowAggregate):        # a session's keys; else the keys but the window's
        if node.shape.is_session:
            return [list(node.partition)]
        return [[k for i, k in enumerate(node.keys) if i not in node.window_keys and monotonicity(k) == NOT_MONOTONIC]]
    if isinstance(node, WindowTable):            # a session's keys; other windows' rows in one bucket
        return [list(node.partition)]
    if isinstance(node, Rank):
        return [[e for e in node.partition if monotonicity(e) == NOT_MONOTONIC and not _reads_window_end(node, e)]]
    if isinstance(node, Join):
        from ...plan import TableScan
        if isinstance(node.right, TableScan):
            return [[l for l, _r in node.equi]]
        if isinstance(node.left, TableScan):
            return [[r for _l, r in node.equi]]
        return [[l for l, _r in node.equi], [r for _l, r in node.equi]]
    return [[] for _ in stream_inputs(node)]


def _reads_window_end(node: Rank, e: Expr) -> bool:
    """A Rank's time key (its partition's period) picks no bucket: a partition is one period."""
    return e is node.partition[node.time_key]


def query_name(name: str, key: int) -> str:
    """The Spark name of a query: it ends with the pid of the process that started it, so that the
    shared engine can stop the queries of a client that is gone (serve.py, :func:`query_owner`)."""
    return f"streamsql_{name}_{os.getpid()}_{key}"


_NAMED = re.compile(r"^streamsql_.*_(\d+)_\d+$")


def query_owner(spark_name: str) -> int | None:
    """The pid in a name made by :func:`query_name` (None for any other name)."""
    m = _NAMED.match(spark_name or "")
    return int(m.group(1)) if m else None


class SparkQuery:
    """Builds and starts the streaming query of one :class:`ContinuousQuery`."""

    def __init__(self, spark, host, options, q, folder: Path):
        self.spark = spark
        self.q = q
        self.folder = folder
        #: render calculator-error checks (False only for the benchmark's unchecked baseline)
        self.checked = options.check_calc_errors
        #: how many of a batch's last steps the stages describe for the trace (0: none)
        self.trace = options.trace_steps if options.trace else 0
        plan: Query = q.plan
        buckets = options.buckets
        root = normalize(_copy(plan.root))
        self.order = post_order(root)
        stages = build_stages(root)
        #: the chains of WHERE/projections, numbered as failures name them
        self.branches: list[Branch] = []
        self.failures = Failures(q.name, self.branches)
        cat = host.catalog
        streams: list[str] = []
        for st in stages:
            for inp in st.inputs:
                for lf in inp.leaves:
                    if lf.stream is not None and lf.stream not in streams:
                        streams.append(lf.stream)
        self.streams = streams
        spec = {"root": str(host.path), "query": q.name, "start": q.start_step,
                "max_events": options.batch_events or 0,
                "parallel": options.reader == "parallel", "parallelism": os.cpu_count() or 2,
                "partition_events": options.partition_events, "trace_steps": self.trace,
                "streams": [{"uid": cat.streams[s].uid,
                             "fields": [{"name": f.name, "type": f.type.to_json()} for f in cat.streams[s].fields]}
                            for s in streams]}
        # a query that is one GROUP BY over one stream pre-combines in the log source (precombine.py)
        first = stages[0]
        scan = (isinstance(first.node, (Aggregate, WindowAggregate))
                and precombine.scan_eligible(first.node, first, len(stages), len(streams))
                and all(lf.stream is None for i in stages[-1].inputs for lf in i.leaves))
        if scan:
            spec["combine"] = precombine.scan_spec(first.node, buckets if any(partition_exprs(first.node)) else 1,
                                                   first.inputs[0].leaves[0].chain)
        self.scan_combined = scan
        #: the stages whose rows are pre-combined (precombine.py), by index
        self.precombined: list[int] = []
        src = spark.readStream.format(NAME).option("spec", json.dumps(spec)).load()
        outs: dict[int, object] = {}
        nodes: dict[int, object] = {}
        self.nodes = nodes
        tables = cat.tables
        n_bs: dict[int, int] = {}
        for st in stages[:-1]:
            nodes[st.index] = st.node
            # an operator without a partition key (ORDER BY, T-sort) keeps everything in one
            # bucket; empty buckets would hold its frontier at "no time" for ever
            n_b = buckets if any(partition_exprs(st.node)) else 1
            n_bs[st.index] = n_b
            sspec = StageSpec(st.index, st.node, [self._input_spec(i, streams, q) for i in st.inputs],
                              [i.out_fields for i in st.inputs], list(st.node.fields), n_b,
                              {y: (nodes[y], n_bs[y]) for y in self._upstream(st)}, tables,
                              trace=bool(self.trace),
                              upstream_fields={y: list(nodes[y].fields) for y in self._upstream(st)},
                              channel_streams=[origin_stream(n) for n in stream_inputs(st.node)],
                              leaf_streams=[[lf.stream if lf.stream is not None else origin_stream(nodes[lf.stage])
                                             for lf in inp.leaves] for inp in st.inputs],
                              position=self.order[id(st.node)], failures=self.failures, query_name=q.name,
                              merged_fields=[list(i.fields) for i in st.inputs])
            if scan and st is first:
                # partials, their bucket chosen by the source; timelines to every bucket
                df = src.selectExpr("ev", "bucket AS rb", "step", "sub", "rowtime AS T", "rowtime AS ort", "tl AS blob", "part")
                df = self._spread(df, "rb", n_b).selectExpr(*precombine.COLUMNS, "part", *precombine.RESTORED)
                pre = True
            else:
                df = self._input_frame(st, src, outs, streams, cat)
                pre = isinstance(st.node, (Aggregate, WindowAggregate)) and precombine.eligible(st.node, st)
                df = self._bucketed(df, st, n_b)
                if pre:
                    df = self._combined(df, st.node)
            sspec.precombined = pre
            if pre:
                self.precombined.append(st.index)
            outs[st.index] = self._stateful(df, sspec)
        sink_stage = stages[-1]
        self.df = self._input_frame(sink_stage, src, outs, streams, cat)
        upstream = {y: (make_operator(nodes[y], tables), n_bs[y]) for y in self._upstream(sink_stage)}
        assembler = None
        if self.trace:
            consumer = {y: st.index for st in stages for y in self._upstream(st)}
            assembler = TraceAssembler(trace_hosts(root, stages), {y: make_operator(n, tables) for y, n in nodes.items()},
                                       consumer)
        self.sink = Sink(folder / "sink", list(plan.columns), self._input_spec(sink_stage.inputs[0], streams, q),
                         upstream, options.durable, assembler=assembler, index=sink_stage.index,
                         upstream_fields={y: list(nodes[y].fields) for y in self._upstream(sink_stage)},
                         merged_fields=list(sink_stage.inputs[0].fields), failures=self.failures)

    @staticmethod
    def _stateful(df, sspec: StageSpec):
        out_ddl = ", ".join(["ev TINYINT", "bucket INT", "step BIGINT", "T BIGINT", "tie BINARY"] +
                            [f"o{j} {spark_type_ddl(f.type)}" for j, f in enumerate(sspec.out_fields)] +
                            ["blob BINARY"])
        # parsed by the session (a Connect client has no JVM for PySpark's parse of a DDL string)
        out = df.sparkSession._parse_ddl(out_ddl)
        return df.groupBy("bucket").transformWithStateInPandas(make_processor(sspec), out, "Append", "None")

    @staticmethod
    def _upstream(st) -> list[int]:
        return sorted({lf.stage for i in st.inputs for lf in i.leaves if lf.stage is not None})

    def _input_spec(self, inp, streams, q) -> InputSpec:
        leaves = []
        for lf in inp.leaves:
            if lf.stream is not None:
                leaves.append(LeafSpec(streams.index(lf.stream), None, lf.rowtime_maps(),
                                       q.start_clocks.get(lf.stream, -(2 ** 62))))
            else:
                leaves.append(LeafSpec(None, lf.stage, lf.rowtime_maps()))
        post = [n.rowtime for n in inp.post if isinstance(n, Project) and n.rowtime is not None]
        return InputSpec(leaves, post)

    def _input_frame(self, st, src, outs, streams, cat):
        """One DataFrame per origin (the log source, each upstream stage), each read once: every
        event becomes the rows of the leaves it feeds (``explode`` of an array of structs), so the
        source is scanned once per stage whatever the number of leaves (the SQL of a leaf and the
        frame's columns: :mod:`.leafsql`)."""
        fs = FrameSql(st, self.nodes, self._upstream(st), self.trace, self.checked,
                      lambda i, lf: self._add_branch(st, i, lf, cat))
        frames = []
        stream_leaves = [(i, j, lf) for i, inp in enumerate(st.inputs) for j, lf in enumerate(inp.leaves)
                         if lf.stream is not None]
        per_stream = [streams.index(lf.stream) for _i, _j, lf in stream_leaves]
        if stream_leaves and len(set(per_stream)) == len(per_stream):
            # every stream feeds one leaf: route by a CASE on the stream per column (no explode)
            frames.append(self._switch_frame(src, stream_leaves, streams, cat, fs))
        elif stream_leaves:
            cases = [f"CASE WHEN ev = {FrameCode.TIMELINE:d} THEN "
                     f"{fs.meta_struct(FrameCode.TIMELINE, step='step', blob='tl', up='-1')} END"]
            for i, j, lf in stream_leaves:
                k = streams.index(lf.stream)
                cond, ps = fs.leaf(i, j, lf, self._stream_cols(k, lf, cat), "rowtime", "step", "CAST(sub AS INT)",
                                   "rowtime", "CAST(NULL AS BINARY)")
                cases.append(f"CASE WHEN ev = {FrameCode.ROW:d} AND src = {k} AND {cond} THEN {_struct(ps)} END")
            frames.append(_exploded(src, cases))
        for y in self._upstream(st):
            cases = [f"CASE WHEN ev = {FrameCode.REPORT:d} THEN "
                     f"{fs.meta_struct(FrameCode.REPORT, blob='blob', up=str(y))} END",
                     # operator errors pass on (frames.py)
                     f"CASE WHEN ev = {FrameCode.ERROR:d} THEN "
                     f"{fs.meta_struct(FrameCode.ERROR, step='step', blob='blob', up=str(y))} END"]
            for i, inp in enumerate(st.inputs):
                for j, lf in enumerate(inp.leaves):
                    if lf.stage == y:
                        cond, ps = fs.leaf(i, j, lf, [f"o{c}" for c in range(len(self.nodes[y].fields))], "T", "step",
                                           "0", "T", "tie")
                        cases.append(f"CASE WHEN ev = {FrameCode.ROW:d} AND {cond} THEN {_struct(ps)} END")
            frames.append(_exploded(outs[y], cases))
        return reduce(lambda a, b: a.unionByName(b), frames)

    def _add_branch(self, st, i: int, lf, cat) -> tuple[int, list]:
        """Register leaf ``lf`` of input ``i`` as a branch whose rows can fail (failures.py):
        its number, and the fields of its origin."""
        nodes = list(lf.chain) + list(st.inputs[i].post)
        origin = cat.streams[lf.stream].fields if lf.stream is not None else self.nodes[lf.stage].fields
        stream = lf.stream if lf.stream is not None else origin_stream(self.nodes[lf.stage])
        union = st.inputs[i].union
        self.branches.append(Branch(nodes, list(origin), stream, [self.order[id(n)] for n in nodes],
                                    len(lf.chain), None if union is None else self.order[id(union)]))
        return len(self.branches) - 1, origin

    @staticmethod
    def _stream_cols(k: int, lf, cat) -> list[str]:
        return [f"`{stream_prefix(k)}c{c}`" for c in range(len(cat.streams[lf.stream].fields))]

    @classmethod
    def _switch_frame(cls, src, stream_leaves, streams, cat, fs: FrameSql):
        """The source's rows and timeline records in one projection: each column is a CASE over
        the stream the row came from; rows no leaf wants are filtered out."""
        by_col: dict[str, list[str]] = {}
        conds = [f"ev = {FrameCode.TIMELINE:d}"]
        for i, j, lf in stream_leaves:
            k = streams.index(lf.stream)
            cond, fields = fs.leaf(i, j, lf, cls._stream_cols(k, lf, cat), "rowtime", "step", "CAST(sub AS INT)",
                                   "rowtime", "CAST(NULL AS BINARY)")
            conds.append(f"(ev = {FrameCode.ROW:d} AND src = {k} AND {cond})")
            for name, expr in fields:
                by_col.setdefault(name, []).append(f"WHEN src = {k} THEN {expr}")
        tl = fs.meta_columns(FrameCode.TIMELINE, step="step", blob="tl", up="-1")
        cols = []
        types = dict(fs.values)
        for name in STD_COLUMNS + [c for c, _t in fs.values]:
            whens = " ".join(by_col.get(name, []))
            other = tl.get(name, f"CAST(NULL AS {types.get(name, 'STRING')})")
            cols.append(f"CASE WHEN ev = {FrameCode.TIMELINE:d} THEN {other} {whens} END AS `{name}`" if whens
                        else f"{other} AS `{name}`")
        return src.where(" OR ".join(conds)).selectExpr(*cols)

    @staticmethod
    def _combined(df, node):
        """The rows of a GROUP BY pre-combined by ``mapInArrow`` (precombine.py)."""
        from pyspark.sql.pandas.types import to_arrow_schema
        from pyspark.sql.types import BinaryType, StructField, StructType
        # only what the combiner reads crosses to Python: the keys and the aggregates' arguments
        # (values travel as partials); the columns every stage input has come back as constants
        r = SparkSql(lambda c: quote_ident(value_col(0, c)), lambda k: "ort")
        args = [f"{r(a.arg) if a.arg is not None else 'CAST(NULL AS INT)'} AS pa{c}" for c, a in enumerate(node.aggs)]
        big = precombine.big_sql(node, lambda c: f"pa{c}")
        # with float sums, the input row of a big value (stepped as a row; NULL elsewhere)
        raw = [f"CASE WHEN {big} THEN {quote_ident(value_col(0, j))} END AS rv{j}"
               for j in range(len(node.input.fields))] if big else []
        keys = precombine.group_keys(node)      # a window aggregation's: without its window columns
        df = df.selectExpr(*precombine.COLUMNS, *[f"{r(k)} AS pk{m}" for m, k in enumerate(keys)], *args,
                           *[quote_ident(value_col(0, j)) for j in range(len(node.input.fields))] if big else [])
        if big:
            df = df.selectExpr(*precombine.COLUMNS, *[f"pk{m}" for m in range(len(keys))],
                               *[f"pa{c}" for c in range(len(node.aggs))], *raw)
        schema = StructType(list(df.schema.fields) + [StructField("part", BinaryType())])
        return (df.mapInArrow(precombine.combiner(node, to_arrow_schema(schema)), schema)
                .selectExpr(*precombine.COLUMNS, "part", *precombine.RESTORED))

    @staticmethod
    def _spread(df, row_bucket: str, buckets: int):
        """Each row to the bucket ``row_bucket`` names, operator errors to bucket 0 (which passes
        them on), timelines and reports to every bucket."""
        if buckets == 1:
            return df.selectExpr("*", "0 AS bucket")
        return (df.selectExpr("*", f"CASE WHEN ev = {FrameCode.ROW:d} THEN array({row_bucket}) "
                                   f"WHEN ev = {FrameCode.ERROR:d} THEN array(0) "
                                   f"ELSE sequence(0, {buckets - 1}) END AS bs")
                  .selectExpr("*", "explode(bs) AS bucket").drop("bs"))

    def _bucketed(self, df, st, buckets: int):
        if buckets == 1:
            return self._spread(df, "0", 1)
        keys = partition_exprs(st.node)
        cases = []
        for i, exprs in enumerate(keys):
            if not exprs:
                cases.append(f"WHEN {i} THEN 0")
                continue
            r = SparkSql(lambda c, i=i: quote_ident(value_col(i, c)), lambda k: "ort")
            types = [_hash_type(st.node, i, e) for e in exprs]
            args = ", ".join(f"CAST({r(e)} AS {t})" for e, t in zip(exprs, types))
            cases.append(f"WHEN {i} THEN CAST(pmod(xxhash64({args}), {buckets}) AS INT)")
        return self._spread(df, f"CASE inp {' '.join(cases)} ELSE 0 END", buckets)

    def start(self, on_batches, on_error, connect: bool = False):
        """Start the streaming query. In the driver, ``foreachBatch`` hands each batch's release to
        ``on_batches``; on a Spark Connect server it runs in the server's Python process, so the
        sink only writes its files there and :class:`~.follow.SinkFollower` reads them here."""
        sink = self.sink
        if connect:
            sink.persist_trace = True

            def foreach(batch_df, batch_id):
                sink.process(batch_id, batch_df.toArrow())
        else:
            def foreach(batch_df, batch_id):
                with QUERY_BATCH.running():      # stopping the query waits for this
                    try:
                        res = sink.process(batch_id, batch_df.toArrow())
                    except Exception as e:  # surfaces through the query's error, never silently
                        on_error(e)
                        raise
                    if res is not None:
                        on_batches(res)

        self.sq = (self.df.writeStream.foreachBatch(foreach)
                   .option("checkpointLocation", str(self.folder / "checkpoint"))
                   .queryName(query_name(self.q.name, id(self)))
                   .start())
        return self.sq


def _struct(pairs: list[tuple[str, str]]) -> str:
    return "named_struct(" + ", ".join(f"'{a}', {b}" for a, b in pairs) + ")"


def _exploded(df, cases: list[str]):
    """The rows of the structs ``cases`` makes of each row of ``df`` (NULL: none)."""
    return df.selectExpr(f"explode(array({', '.join(cases)})) AS b").where("b IS NOT NULL").select("b.*")


def _hash_type(node, inp: int, e: Expr) -> str:
    """Join keys of both sides hash through one type, so equal values meet in one bucket."""
    if isinstance(node, Join):
        from ...types import common_type
        for le, re_ in node.equi:
            if le is e or re_ is e:
                ct = common_type(le.type, re_.type)
                return spark_type_ddl(ct) if ct else "STRING"
    return spark_type_ddl(e.type)


def _copy(node):
    import copy
    return copy.deepcopy(node)
