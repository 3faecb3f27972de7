"""A query as a Spark streaming DataFrame: the log source, the row-by-row parts as Spark SQL,
and the ordered sink.

Every leaf of the sink's merge becomes a branch: the source rows of its stream, its WHERE and
projections rendered by :mod:`sqlgen`, cast to the merged row type, then the post-merge chain.
Each branch keeps the stamp the merge orders by (``T``) next to the output rowtime (``ort``), so a
projection that changes ROWTIME after a merge still releases rows by the merge's own stamps.
"""
from __future__ import annotations

import json
from pathlib import Path

from ...errors import SqlError
from ...plan import Filter, Project, Query
from ...types import spark_type_ddl
from ..plans import Leaf, build_stages, normalize
from .sink import LeafClock, MergeSink
from .source import NAME, stream_prefix
from .sqlgen import SparkSql, quote_ident


class _Cols:
    """The current column names of a branch while its chain is rendered."""

    def __init__(self, names: list[str], rowtime: str):
        self.names = names
        self.rowtime = rowtime

    def sql(self) -> SparkSql:
        return SparkSql(lambda i: quote_ident(self.names[i]), lambda k: quote_ident(self.rowtime))


def _apply_chain(df, cols: _Cols, chain: list, tag: str, keep_T: bool):
    """Apply Filter/Project nodes. With ``keep_T`` the merge stamp column ``T`` is carried
    unchanged and projections write the output rowtime to ``ort``."""
    for depth, node in enumerate(chain):
        r = cols.sql()
        if isinstance(node, Filter):
            df = df.where(r(node.cond))
            continue
        assert isinstance(node, Project)
        new = [f"{tag}{depth}_{j}" for j in range(len(node.exprs))]
        sel = ["ev", "seq", "sub"] + (["ch", "T"] if keep_T else [])
        rt_name = f"{tag}{depth}_rt"
        rt_sql = r(node.rowtime) if node.rowtime is not None else quote_ident(cols.rowtime)
        exprs = [f"{r(e)} AS {quote_ident(n)}" for e, n in zip(node.exprs, new)]
        df = df.selectExpr(*sel, f"{rt_sql} AS {quote_ident(rt_name)}", *exprs)
        cols = _Cols(new, rt_name)
    return df, cols


class SparkQuery:
    """Builds and starts the streaming query of one :class:`ContinuousQuery`."""

    def __init__(self, spark, wb, q, folder: Path, batch_events: int | None):
        self.spark = spark
        self.q = q
        plan: Query = q.plan
        stages = build_stages(normalize(_copy(plan.root)))
        if len(stages) > 1:
            raise SqlError(f"{type(stages[0].node).__name__} is not supported on the Spark engine yet")
        sink_in = stages[-1].inputs[0]
        streams: list[str] = []
        for lf in sink_in.leaves:
            if lf.stream not in streams:
                streams.append(lf.stream)
        cat = wb.catalog
        spec = {"root": str(wb.path), "start": q.start_seq, "max_events": batch_events or 0,
                "streams": [{"uid": cat.streams[s].uid,
                             "fields": [{"name": f.name, "type": f.type.to_json()} for f in cat.streams[s].fields]}
                            for s in streams]}
        src = spark.readStream.format(NAME).option("spec", json.dumps(spec)).load()
        merged_types = [spark_type_ddl(f.type) for f in sink_in.fields]
        branches = []
        leaf_clocks = []
        for ch, lf in enumerate(sink_in.leaves):
            k = streams.index(lf.stream)
            fields = cat.streams[lf.stream].fields
            df = src.where(f"ev = 0 AND src = {k}")
            cols = _Cols([f"{stream_prefix(k)}c{i}" for i in range(len(fields))], "rowtime")
            df, cols = _apply_chain(df, cols, lf.chain, f"l{ch}_", keep_T=False)
            df = df.selectExpr("ev", "seq", "sub", f"CAST({ch} AS BIGINT) AS ch",
                               f"{quote_ident(cols.rowtime)} AS T", f"{quote_ident(cols.rowtime)} AS ort",
                               *[f"CAST({quote_ident(n)} AS {t}) AS m{j}"
                                 for j, (n, t) in enumerate(zip(cols.names, merged_types))])
            mcols = _Cols([f"m{j}" for j in range(len(merged_types))], "ort")
            df, mcols = _apply_chain(df, mcols, sink_in.post, "p_", keep_T=True)
            df = df.selectExpr("ev", "seq", "sub", "ch", "T",
                               f"{quote_ident(mcols.rowtime)} AS ort",
                               *[f"{quote_ident(n)} AS v{j}" for j, n in enumerate(mcols.names)],
                               "CAST(NULL AS BINARY) AS tl")
            branches.append(df)
            leaf_clocks.append(LeafClock(k, lf.rowtime_maps(), q.start_clocks.get(lf.stream, -(2 ** 62))))
        out_fields = plan.columns
        tl = src.where("ev = 2").selectExpr(
            "ev", "seq", "sub", "CAST(-1 AS BIGINT) AS ch", "CAST(0 AS BIGINT) AS T", "CAST(0 AS BIGINT) AS ort",
            *[f"CAST(NULL AS {spark_type_ddl(f.type)}) AS v{j}" for j, f in enumerate(out_fields)], "tl")
        out = tl
        for b in branches:
            out = out.unionByName(b)
        post_maps = [n.rowtime for n in sink_in.post if isinstance(n, Project) and n.rowtime is not None]
        self.sink = MergeSink(folder / "sink", list(out_fields), leaf_clocks, post_maps, wb.durable)
        self.df = out
        self.folder = folder

    def start(self, on_batches, on_error):
        sink = self.sink

        def foreach(batch_df, batch_id):
            try:
                t = batch_df.toArrow()
                res = sink.process(batch_id, t)
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


def _copy(node):
    import copy
    return copy.deepcopy(node)
