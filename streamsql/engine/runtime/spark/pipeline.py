"""A query as one Spark streaming query: the log source, the row-by-row parts as Spark SQL, one
``transformWithStateInPandas`` stage per stateful operator, and the ordered sink.

Every leaf of a stage's input becomes a branch: the rows of its stream (or of the upstream
stage), its WHERE and projections rendered by :mod:`sqlgen`, cast to the merged row type, then
the chain that follows the merge. A branch keeps the stamp its merge orders by (``T``) next to the
rowtime the operator sees (``ort``), so a projection that changes ROWTIME after a merge still
releases rows by the merge's own stamps. Rows go to one key bucket; timelines and upstream
reports go to every bucket.
"""
from __future__ import annotations

import json
from functools import reduce
from pathlib import Path

from ...expr import Expr, monotonicity, NOT_MONOTONIC
from ...plan import Aggregate, Filter, Join, Project, Query, Window
from ...types import spark_type_ddl
from ..plans import build_stages, make_operator, normalize, stream_inputs
from .frames import value_col
from .inputs import InputSpec, LeafSpec
from .sink import Sink
from .source import NAME, stream_prefix
from .sqlgen import SparkSql, quote_ident
from .stage import StageSpec, make_processor


class _Cols:
    """The current column names of a branch while its chain is rendered."""

    def __init__(self, names: list[str], rowtime: str):
        self.names = names
        self.rowtime = rowtime

    def sql(self) -> SparkSql:
        return SparkSql(lambda i: quote_ident(self.names[i]), lambda k: quote_ident(self.rowtime))


def _apply_chain(df, cols: _Cols, chain: list, tag: str, keep: list[str]):
    for depth, node in enumerate(chain):
        r = cols.sql()
        if isinstance(node, Filter):
            df = df.where(r(node.cond))
            continue
        new = [f"{tag}{depth}_{j}" for j in range(len(node.exprs))]
        rt_name = f"{tag}{depth}_rt"
        rt_sql = r(node.rowtime) if node.rowtime is not None else quote_ident(cols.rowtime)
        exprs = [f"{r(e)} AS {quote_ident(n)}" for e, n in zip(node.exprs, new)]
        df = df.selectExpr(*keep, f"{rt_sql} AS {quote_ident(rt_name)}", *exprs)
        cols = _Cols(new, rt_name)
    return df, cols


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
    if isinstance(node, Join):
        from ...plan import TableScan
        if isinstance(node.right, TableScan):
            return [[l for l, _r in node.equi]]
        if isinstance(node.left, TableScan):
            return [[r for _l, r in node.equi]]
        return [[l for l, _r in node.equi], [r for _l, r in node.equi]]
    return [[] for _ in stream_inputs(node)]


_STD = ["ev", "inp", "leaf", "seq", "sub", "T", "Tup", "tie", "ort", "blob", "up"]


class SparkQuery:
    """Builds and starts the streaming query of one :class:`ContinuousQuery`."""

    def __init__(self, spark, wb, q, folder: Path, batch_events: int | None):
        self.spark = spark
        self.q = q
        self.folder = folder
        plan: Query = q.plan
        buckets = max(1, wb.buckets)
        stages = build_stages(normalize(_copy(plan.root)))
        cat = wb.catalog
        streams: list[str] = []
        for st in stages:
            for inp in st.inputs:
                for lf in inp.leaves:
                    if lf.stream is not None and lf.stream not in streams:
                        streams.append(lf.stream)
        self.streams = streams
        spec = {"root": str(wb.path), "start": q.start_seq, "max_events": batch_events or 0,
                "streams": [{"uid": cat.streams[s].uid,
                             "fields": [{"name": f.name, "type": f.type.to_json()} for f in cat.streams[s].fields]}
                            for s in streams]}
        src = spark.readStream.format(NAME).option("spec", json.dumps(spec)).load()
        outs: dict[int, object] = {}
        nodes: dict[int, object] = {}
        self.nodes = nodes
        tables = cat.tables
        for st in stages[:-1]:
            df = self._input_frame(st, src, outs, streams, cat)
            nodes[st.index] = st.node
            n_b = buckets
            sspec = StageSpec(st.index, st.node, [self._input_spec(i, streams, q) for i in st.inputs],
                              [list(i.fields) for i in st.inputs], list(st.node.fields), n_b,
                              {y: (nodes[y], buckets) for y in self._upstream(st)}, tables)
            df = self._bucketed(df, st, n_b)
            out_ddl = ", ".join(["ev TINYINT", "bucket INT", "seq BIGINT", "T BIGINT", "tie BINARY"] +
                                [f"o{j} {spark_type_ddl(f.type)}" for j, f in enumerate(st.node.fields)] +
                                ["blob BINARY"])
            outs[st.index] = df.groupBy("bucket").transformWithStateInPandas(
                make_processor(sspec), out_ddl, "Append", "None")
        sink_stage = stages[-1]
        self.df = self._input_frame(sink_stage, src, outs, streams, cat)
        upstream = {y: (make_operator(nodes[y], tables), buckets) for y in self._upstream(sink_stage)}
        self.sink = Sink(folder / "sink", list(plan.columns), self._input_spec(sink_stage.inputs[0], streams, q),
                         upstream, wb.durable)

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
        parts = [src.where("ev = 2").selectExpr(
            "CAST(2 AS TINYINT) AS ev", "0 AS inp", "0 AS leaf", "seq", "0 AS sub", "CAST(0 AS BIGINT) AS T",
            "CAST(0 AS BIGINT) AS Tup", "CAST(NULL AS BINARY) AS tie", "CAST(0 AS BIGINT) AS ort", "tl AS blob",
            "-1 AS up")]
        for y in self._upstream(st):
            parts.append(outs[y].where("ev = 3").selectExpr(
                "CAST(3 AS TINYINT) AS ev", "0 AS inp", "0 AS leaf", "CAST(0 AS BIGINT) AS seq", "0 AS sub",
                "CAST(0 AS BIGINT) AS T", "CAST(0 AS BIGINT) AS Tup", "CAST(NULL AS BINARY) AS tie",
                "CAST(0 AS BIGINT) AS ort", "blob", f"{y} AS up"))
        for i, inp in enumerate(st.inputs):
            merged = [spark_type_ddl(f.type) for f in inp.fields]
            for j, lf in enumerate(inp.leaves):
                if lf.stream is not None:
                    k = streams.index(lf.stream)
                    n = len(cat.streams[lf.stream].fields)
                    base = src.where(f"ev = 0 AND src = {k}").selectExpr(
                        "seq", "sub", "rowtime AS Tup", "CAST(NULL AS BINARY) AS tie", "rowtime AS rt0",
                        *[f"{stream_prefix(k)}c{c} AS c{c}" for c in range(n)])
                else:
                    n = len(self.nodes[lf.stage].fields)
                    base = outs[lf.stage].where("ev = 0").selectExpr(
                        "seq", "0 AS sub", "T AS Tup", "tie", "T AS rt0", *[f"o{c} AS c{c}" for c in range(n)])
                cols = _Cols([f"c{c}" for c in range(n)], "rt0")
                df, cols = _apply_chain(base, cols, lf.chain, f"l{i}_{j}_", ["seq", "sub", "Tup", "tie"])
                df = df.selectExpr("seq", "sub", "Tup", "tie", f"{quote_ident(cols.rowtime)} AS T",
                                   f"{quote_ident(cols.rowtime)} AS ort",
                                   *[f"CAST({quote_ident(c)} AS {t}) AS m{m}" for m, (c, t) in enumerate(zip(cols.names, merged))])
                mcols = _Cols([f"m{m}" for m in range(len(merged))], "ort")
                df, mcols = _apply_chain(df, mcols, inp.post, f"p{i}_", ["seq", "sub", "Tup", "tie", "T"])
                df = df.selectExpr("CAST(0 AS TINYINT) AS ev", f"{i} AS inp", f"{j} AS leaf", "seq", "CAST(sub AS INT) AS sub",
                                   "T", "Tup", "tie", f"{quote_ident(mcols.rowtime)} AS ort",
                                   "CAST(NULL AS BINARY) AS blob", "-1 AS up",
                                   *[f"{quote_ident(c)} AS {value_col(i, m)}" for m, c in enumerate(mcols.names)])
                parts.append(df)
        return reduce(lambda a, b: a.unionByName(b, allowMissingColumns=True), parts)

    def _bucketed(self, df, st, buckets: int):
        if buckets == 1:
            return df.selectExpr("*", "0 AS bucket")
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
        row_bucket = f"CASE inp {' '.join(cases)} ELSE 0 END"
        return (df.selectExpr("*", f"CASE WHEN ev = 0 THEN array({row_bucket}) ELSE sequence(0, {buckets - 1}) END AS bs")
                  .selectExpr("*", "explode(bs) AS bucket").drop("bs"))

    def start(self, on_batches, on_error):
        sink = self.sink

        def foreach(batch_df, batch_id):
            try:
                res = sink.process(batch_id, batch_df.toArrow())
            except Exception as e:  # surfaces through the query's error, never silently
                on_error(e)
                raise
            if res is not None:
                on_batches(res)

        self.sq = (self.df.writeStream.foreachBatch(foreach)
                   .option("checkpointLocation", str(self.folder / "checkpoint"))
                   .queryName(f"streamsql_{self.q.name}_{id(self)}")
                   .start())
        return self.sq


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
