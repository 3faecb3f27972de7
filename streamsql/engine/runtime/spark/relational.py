"""Relational (non-STREAM) queries on the Spark runtime: one Spark batch query whose expressions
are rendered by :class:`~streamsql.engine.runtime.spark.sqlgen.SparkSql`; it gives the rows in
the order :mod:`streamsql.engine.relational` defines (a position column ``ix`` carries it)."""
from __future__ import annotations

from functools import reduce

import pyarrow as pa
from pyspark.sql import Window, functions as F

from ...errors import SqlError
from ... import functions
from ... import time as sqltime
from ...expr import Expr, Rowtime, compile_expr
from ...functions.spec import out_of_range
from ...operators.aggregate import Acc
from ...operators.sort import sort_nulls_first
from ...plan import (Aggregate, AggCall, Field, Filter, HistoryScan, Join, Node, Project, Sort, TableScan, Union, Values,
                     Window as Over, WindowSpec)
from ...relational import Row, period_keys, unsupported, window_stamps
from ...types import arrow_type
from .sqlgen import SparkSql, quote_ident
from .sqltext import spark_type_ddl
from .wire import restore_value


class SparkRelational:
    """The Spark evaluator: each node becomes a DataFrame with the values ``c0..``, the rowtime
    ``rt`` (NULL when none) and the row's position ``ix`` (the same order as the Python one)."""

    def __init__(self, host, spark):
        self.host = host
        self.spark = spark

    # ------------------------------------------------------------------ entry

    def run_query(self, node: Node) -> list[Row]:
        df = self.run(node)
        n = len(node.fields)
        tbl = df.orderBy("ix").select(*[f"c{j}" for j in range(n)], "rt").toArrow()
        cols = tbl.to_pydict()
        vals = list(zip(*[cols[f"c{j}"] for j in range(n)])) if n else [()] * tbl.num_rows
        return [(None if rt is None else int(rt), tuple(restore_value(v, f.type) for v, f in zip(row, node.fields)))
                for rt, row in zip(cols["rt"], vals)]

    def run(self, node: Node):
        try:
            if isinstance(node, (TableScan, Values, HistoryScan)):
                return self._frame(node.fields, self.host.leaf_rows(node))
            if isinstance(node, Project):
                return self._project(node)
            if isinstance(node, Filter):
                df = self.run(node.input)
                self._check(df, node.input.fields, [node.cond], "rt")
                return df.where(self._sql(node.cond))
            if isinstance(node, Union):
                return self._union(node)
            if isinstance(node, Aggregate):
                return self._aggregate(node)
            if isinstance(node, Join):
                return self._join(node)
            if isinstance(node, Sort):
                return self._sort(node)
            if isinstance(node, Over):
                return self._window(node)
        except ValueError as e:      # an expression Spark SQL cannot render
            raise SqlError(f"cannot run this relational query on Spark: {e}") from None
        raise unsupported(node)

    # ------------------------------------------------------------------ helpers

    @staticmethod
    def _sql(e: Expr, col=None, rowtime=None) -> str:
        return SparkSql(col or (lambda i: quote_ident(f"c{i}")), rowtime or (lambda k: "rt"))(e)

    @staticmethod
    def _flag(e: Expr, col=None, rowtime=None) -> str:
        return SparkSql(col or (lambda i: quote_ident(f"c{i}")), rowtime or (lambda k: "rt")).flag(e)

    def _check(self, df, fields, exprs, rts, col=None, rowtime=None, width=None) -> None:
        """Raise the calculator error of the first row (in order) where one of ``exprs`` (left
        to right) cannot be computed: Spark finds the row, Python's evaluator says why."""
        exprs = [e for e in exprs if e is not None]
        if not any(functions.can_fail(e) for e in exprs):
            return
        flag = " OR ".join(self._flag(e, col, rowtime) for e in exprs)
        n = width if width is not None else len(fields)
        bad = df.where(flag).orderBy(*([c for c in ("ix", "ix0", "ix1") if c in df.columns] or ["ix"])).limit(1)
        names = [f"c{j}" for j in range(n)]
        got = bad.selectExpr(*names, *rts.split(",")).collect()
        if not got:
            return
        r = got[0]
        row = tuple(restore_value(r[j], f.type) for j, f in enumerate(fields))
        times = tuple(None if r[n + k] is None else int(r[n + k]) for k in range(len(rts.split(","))))
        for e in exprs:
            compile_expr(e)(row, times)      # raises the CalcError
        raise SqlError("a calculator error Spark flagged did not reproduce in Python")

    @staticmethod
    def _cast(sql: str, f: Field) -> str:
        return f"CAST({sql} AS {spark_type_ddl(f.type)})"

    def _frame(self, fields: list[Field], rows: list[Row]):
        arrays = [pa.array([r[1][j] for r in rows], type=arrow_type(f.type)) for j, f in enumerate(fields)]
        arrays.append(pa.array([r[0] for r in rows], type=pa.int64()))
        arrays.append(pa.array(range(len(rows)), type=pa.int64()))
        names = [f"c{j}" for j in range(len(fields))] + ["rt", "ix"]
        return self.spark.createDataFrame(pa.Table.from_arrays(arrays, names=names))

    def _renumber(self, df, *order):
        """``ix`` := the row's position in ``order`` (one sort over the whole relation)."""
        return df.withColumn("ix", F.row_number().over(Window.orderBy(*order)) - F.lit(1))

    # ------------------------------------------------------------------ nodes

    def _project(self, node: Project):
        df = self.run(node.input)
        before, after = node.exprs[:node.rowtime_at], node.exprs[node.rowtime_at:]
        self._check(df, node.input.fields, before + [node.rowtime] + after, "rt")
        cols = [f"{self._cast(self._sql(e), f)} AS c{j}" for j, (e, f) in enumerate(zip(node.exprs, node.fields))]
        rt = f"CAST({self._sql(node.rowtime)} AS BIGINT)" if node.rowtime is not None else "rt"
        return df.selectExpr(*cols, f"{rt} AS rt", "ix")

    def _union(self, node: Union):
        n = len(node.fields)
        parts = [self.run(i).selectExpr(*[f"{self._cast(f'c{j}', node.fields[j])} AS c{j}" for j in range(n)],
                                        "rt", "ix", f"{u} AS u")
                 for u, i in enumerate(node.inputs_)]
        df = reduce(lambda a, b: a.unionByName(b), parts)
        return self._renumber(df, F.col("u"), F.col("ix")).drop("u")

    def _aggregate(self, node: Aggregate):
        df = self.run(node.input)
        self._check(df, node.input.fields, list(node.keys) + [a.arg for a in node.aggs], "rt")
        nk = len(node.keys)
        pre = [f"{self._sql(k)} AS k{j}" for j, k in enumerate(node.keys)]
        pre += [f"{self._sql(a.arg)} AS a{m}" for m, a in enumerate(node.aggs) if a.arg is not None]
        df = df.selectExpr("*", *pre)
        keys = [f"k{j}" for j in range(nk)]
        for m, a in enumerate(node.aggs):
            if a.fn == "LAST_VALUE" and a.distinct:
                # the distinct value whose first appearance is latest
                part = ", ".join(keys + [f"a{m}"])
                df = df.selectExpr("*", f"IF(a{m} IS NULL, NULL, min(ix) OVER (PARTITION BY {part})) AS fx{m}")
        aggs = [F.expr(self._agg_sql(m, a)).alias(f"v{m}") for m, a in enumerate(node.aggs)]
        aggs += [F.expr(f"count({'DISTINCT ' if a.distinct else ''}a{m})").alias(f"n{m}")
                 for m, a in enumerate(node.aggs) if a.fn in ("SUM", "AVG") and a.arg is not None]
        aggs += [F.expr("min(ix)").alias("ix"), F.expr("max(rt)").alias("rtx")]
        g = df.groupBy(*keys).agg(*aggs) if keys else df.agg(*aggs)
        out = [self._cast(f"k{j}", node.fields[j]) + f" AS c{j}" for j in range(nk)]
        out += [self._cast(f"v{m}", node.fields[nk + m]) + f" AS c{nk + m}" for m in range(len(node.aggs))]
        sums = [f"n{m}" for m, a in enumerate(node.aggs) if a.fn in ("SUM", "AVG") and a.arg is not None]
        g = g.selectExpr(*out, *sums, "rtx", "coalesce(ix, CAST(0 AS BIGINT)) AS ix")
        self._check_sums(g, node, nk)
        rt = "CAST(NULL AS BIGINT)"
        periods = period_keys(node) if node.time_key is not None else None
        if periods is not None:
            ends = [self._sql(p.end_expr(Rowtime(0)), rowtime=lambda k: "rtx") for p in periods]
            rt = ends[0] if len(ends) == 1 else f"least({', '.join(ends)})"
            if node.stamp is not None:
                g = g.selectExpr("*", f"CASE WHEN rtx IS NULL THEN NULL ELSE CAST({self._sql(node.stamp)} AS BIGINT) END AS rs")
                rt = "rs"
        return g.selectExpr(*[f"c{j}" for j in range(len(node.fields))], f"CAST({rt} AS BIGINT) AS rt", "ix")

    def _check_sums(self, g, node: Aggregate, nk: int) -> None:
        """A SUM (or AVG) whose total leaves its type's range: NULL from values (the sums are
        exact, see :meth:`_agg_sql`), or an infinity from finite doubles."""
        checks = {m: a for m, a in enumerate(node.aggs) if a.fn in ("SUM", "AVG") and a.arg is not None}
        if not checks:
            return
        conds = [f"(c{nk + m} IS NULL AND n{m} > 0)" + (f" OR abs(c{nk + m}) = CAST('Infinity' AS DOUBLE)"
                                                        if a.type.is_approx else "")
                 for m, a in checks.items()]
        bad = g.where(" OR ".join(conds)).orderBy("ix").limit(1).collect()
        if bad:
            for m, a in checks.items():
                v = bad[0][f"c{nk + m}"]
                if v is None or (isinstance(v, float) and v in (float("inf"), float("-inf"))):
                    err = out_of_range(a.type)
                    err.text = Acc(a).text
                    raise err

    @staticmethod
    def _agg_sql(m: int, a) -> str:
        x = f"a{m}"
        d = "DISTINCT " if a.distinct else ""
        fn, t = a.fn, a.type
        if fn == "COUNT":
            return "count(1)" if a.arg is None else f"count({d}{x})"
        if fn == "SUM" and (t.is_integer or t.name == "DECIMAL"):
            # exact (Spark's BIGINT sum wraps around): NULL where the total does not fit
            return f"try_cast(sum({d}CAST({x} AS DECIMAL(38,{t.scale or 0}))) AS {spark_type_ddl(t)})"
        if fn == "SUM":
            return f"sum({d}{x})"
        if fn == "AVG":
            if t.is_integer:
                return f"(sum({d}CAST({x} AS DECIMAL(38,0))) DIV count({d}{x}))"
            if t.name == "DECIMAL":
                return f"(sum({d}{x}) / count({d}{x}))"
            return f"avg({d}{x})"
        if fn in ("MIN", "MAX"):
            return f"{fn.lower()}({x})"
        if fn == "FIRST_VALUE":
            return f"min_by({x}, IF({x} IS NULL, NULL, ix))"
        if fn == "LAST_VALUE":
            return f"max_by({x}, fx{m})" if a.distinct else f"max_by({x}, IF({x} IS NULL, NULL, ix))"
        raise SqlError(f"aggregate {fn} is not supported")

    def _window(self, node: Over):
        """OVER as Spark's window functions compute it (standard SQL: a RANGE frame ending at
        CURRENT ROW holds all the row's peers), each frame ordered by the order key, then ``ix``."""
        df = self.run(node.input)
        exprs = [e for c in node.calls
                 for e in [*c.spec.partition_by, c.spec.order_by, c.agg.arg] if e is not None]
        self._check(df, node.input.fields, exprs, "rt")
        n = len(node.input.fields)
        pre = []
        for j, c in enumerate(node.calls):
            pre += [f"{self._sql(e)} AS p{j}_{i}" for i, e in enumerate(c.spec.partition_by)]
            pre.append(f"CAST({self._sql(c.spec.order_by)} AS BIGINT) AS o{j}" if c.spec.order_by is not None
                       else f"rt AS o{j}")
            if c.agg.arg is not None:
                pre.append(f"{self._sql(c.agg.arg)} AS a{j}")
        df = df.selectExpr("*", *pre)
        outs, counts = [], []
        for j, c in enumerate(node.calls):
            w = self._over(j, c.spec)
            outs.append(f"{self._cast(self._window_agg(j, c.agg, w), node.fields[n + j])} AS c{n + j}")
            if c.agg.fn in ("SUM", "AVG") and c.agg.arg is not None:
                counts.append(f"count(a{j}) OVER {w} AS n{j}")
        df = df.selectExpr(*[f"c{i}" for i in range(n)], *outs, *counts, "rt", "ix")
        sums = {j: c.agg for j, c in enumerate(node.calls) if c.agg.fn in ("SUM", "AVG") and c.agg.arg is not None}
        if sums:
            self._check_window_sums(df, sums, n)
        return df.select(*[f"c{i}" for i in range(len(node.fields))], "rt", "ix")

    @staticmethod
    def _over(j: int, spec: WindowSpec) -> str:
        parts = ", ".join(f"p{j}_{i}" for i in range(len(spec.partition_by)))
        head = f"PARTITION BY {parts} " if parts else ""
        lower = "UNBOUNDED PRECEDING" if spec.lower is None else f"{spec.lower} PRECEDING"
        upper = "CURRENT ROW" if spec.upper == 0 else f"{spec.upper} PRECEDING"
        order = f"o{j} ASC NULLS FIRST" + (", ix" if spec.mode == "ROWS" else "")
        return f"({head}ORDER BY {order} {spec.mode} BETWEEN {lower} AND {upper})"

    @staticmethod
    def _window_agg(j: int, a: AggCall, w: str) -> str:
        """One OVER aggregate (Spark has no DISTINCT window aggregate: a set of the frame's
        values stands for it)."""
        x, fn, t = f"a{j}", a.fn, a.type
        exact = t.is_integer or t.name == "DECIMAL"
        dec = f"DECIMAL(38,{t.scale or 0})"
        if fn == "COUNT":
            if a.arg is None:
                return f"count(1) OVER {w}"
            return f"size(collect_set({x}) OVER {w})" if a.distinct else f"count({x}) OVER {w}"
        if fn in ("MIN", "MAX"):
            return f"{fn.lower()}({x}) OVER {w}"
        if fn == "FIRST_VALUE":
            return f"min_by({x}, IF({x} IS NULL, NULL, ix)) OVER {w}"
        if fn == "LAST_VALUE":
            if a.distinct:    # the distinct value whose first appearance in the frame is latest
                return f"try_element_at(array_distinct(collect_list({x}) OVER {w}), -1)"
            return f"max_by({x}, IF({x} IS NULL, NULL, ix)) OVER {w}"
        if a.distinct:
            vals = f"collect_set({'CAST(' + x + ' AS ' + dec + ')' if exact else x}) OVER {w}"
            zero = f"CAST(0 AS {dec})" if exact else "CAST(0 AS DOUBLE)"
            total = f"aggregate({vals}, {zero}, (s, v) -> s + v)"
            size = f"size({vals})"
            if fn == "SUM":
                return f"IF({size} = 0, NULL, try_cast({total} AS {spark_type_ddl(t)}))"
            if t.is_integer:
                return f"IF({size} = 0, NULL, {total} DIV {size})"
            return f"IF({size} = 0, NULL, {total} / {size})"
        if fn == "SUM":
            if exact:     # exact (Spark's BIGINT sum wraps around): NULL where the total does not fit
                return f"try_cast(sum(CAST({x} AS {dec})) OVER {w} AS {spark_type_ddl(t)})"
            return f"sum({x}) OVER {w}"
        if fn == "AVG":
            if t.is_integer:
                return f"(sum(CAST({x} AS DECIMAL(38,0))) OVER {w} DIV count({x}) OVER {w})"
            if t.name == "DECIMAL":
                return f"(sum({x}) OVER {w} / count({x}) OVER {w})"
            return f"avg({x}) OVER {w}"
        raise SqlError(f"aggregate {fn} is not supported")

    def _check_window_sums(self, df, sums: dict, n: int) -> None:
        """A frame's SUM (or AVG) that leaves its type's range fails the query, as in
        :meth:`_check_sums`."""
        conds = [f"(c{n + j} IS NULL AND n{j} > 0)" + (f" OR abs(c{n + j}) = CAST('Infinity' AS DOUBLE)"
                                                       if a.type.is_approx else "")
                 for j, a in sums.items()]
        bad = df.where(" OR ".join(conds)).orderBy("ix").limit(1).collect()
        if bad:
            for j, a in sums.items():
                v = bad[0][f"c{n + j}"]
                if v is None or (isinstance(v, float) and v in (float("inf"), float("-inf"))):
                    err = out_of_range(a.type)
                    err.text = Acc(a).text
                    raise err

    def _join(self, node: Join):
        nl, nr = len(node.left.fields), len(node.right.fields)
        L = self.run(node.left).selectExpr(*[f"c{j}" for j in range(nl)], "rt AS rt0", "ix AS ix0")
        R = self.run(node.right).selectExpr(*[f"c{j} AS c{nl + j}" for j in range(nr)], "rt AS rt1", "ix AS ix1")
        left_sql = lambda e: self._sql(e, rowtime=lambda k: "rt0")
        right_sql = lambda e: self._sql(e, col=lambda i: quote_ident(f"c{nl + i}"), rowtime=lambda k: "rt1")
        # as the Python evaluator: the right side's keys (its index), the left's, then pairs
        self._check(R.selectExpr(*[f"c{nl + j} AS c{j}" for j in range(nr)], "rt1", "ix1"), node.right.fields,
                    [r for _l, r in node.equi], "rt1", rowtime=lambda k: "rt1")
        self._check(L, node.left.fields, [l for l, _r in node.equi], "rt0", rowtime=lambda k: "rt0")
        conds = [f"({left_sql(l)} = {right_sql(r)})" for l, r in node.equi]
        if node.versions is not None:
            R = self._versions(R, node, right_sql)
            conds.append("((vlo IS NULL OR vlo <= rt0) AND (vhi IS NULL OR rt0 < vhi))")
        win = window_stamps(node)
        if win is not None:      # a window join: only pairs whose windows overlap meet
            conds.append(f"(greatest(rt0 - {win.f[0]}, rt1 - {win.f[1]}) <= least(rt0 + {win.p[0]}, rt1 + {win.p[1]}))")
        if node.residual is not None and conds:
            pairs = L.join(R, F.expr(" AND ".join(conds)), "inner")
            self._check(pairs, list(node.left.fields) + list(node.right.fields), [node.residual], "rt0,rt1",
                        rowtime=lambda k: f"rt{k}")
        if node.residual is not None:
            conds.append(f"({self._sql(node.residual, rowtime=lambda k: f'rt{k}')} <=> TRUE)")
        how = {"INNER": "inner", "LEFT": "left_outer", "RIGHT": "right_outer", "FULL": "full_outer"}[node.kind]
        if conds:
            j = L.join(R, F.expr(" AND ".join(conds)), how)
        elif how == "inner":
            j = L.crossJoin(R)
        else:
            j = L.join(R, F.lit(True), how)
        rt = "greatest(rt0, rt1)"
        if win is not None:
            rt = (f"CASE WHEN ix1 IS NULL THEN rt0 + {win.p[0]} WHEN ix0 IS NULL THEN rt1 + {win.p[1]} "
                  f"ELSE greatest(rt0 - {win.f[0]}, rt1 - {win.f[1]}) END")
        j = j.selectExpr(*[f"c{i}" for i in range(nl + nr)], f"{rt} AS rt", "ix0", "ix1")
        return self._renumber(j, F.col("ix0").asc_nulls_last(), F.col("ix1").asc_nulls_first()).drop("ix0", "ix1")

    @staticmethod
    def _versions(R, node: Join, right_sql):
        """The right rows of a temporal join with their validity ``[vlo, vhi)`` (NULL: always,
        for ever), by the rule of operators/temporal.py: without an end column, a version ends
        where the next one of its key starts (equal starts: the later row)."""
        v = node.versions
        R = R.selectExpr("*", f"CAST({right_sql(v.start)} AS BIGINT) AS vlo")
        if v.end is not None:
            return R.selectExpr("*", f"CAST({right_sql(v.end)} AS BIGINT) AS vhi")
        keys = ", ".join(right_sql(r) for _l, r in node.equi)
        part = f"PARTITION BY {keys} " if keys else ""
        return R.selectExpr("*", f"lead(coalesce(vlo, CAST({sqltime.NO_TIME - 1} AS BIGINT))) OVER ({part}ORDER BY vlo ASC NULLS FIRST, ix1) AS vhi")

    def _sort(self, node: Sort):
        df = self.run(node.input)
        self._check(df, node.input.fields, [k.expr for k in node.keys], "rt")
        df = df.selectExpr("*", *[f"{self._sql(k.expr)} AS s{j}" for j, k in enumerate(node.keys)])
        order = []
        for j, k in enumerate(node.keys):
            c = F.col(f"s{j}")
            first = sort_nulls_first(k)
            if k.descending:
                order.append(c.desc_nulls_first() if first else c.desc_nulls_last())
            else:
                order.append(c.asc_nulls_first() if first else c.asc_nulls_last())
        df = self._renumber(df, *order, F.col("ix"))
        return df.drop(*[f"s{j}" for j in range(len(node.keys))])
