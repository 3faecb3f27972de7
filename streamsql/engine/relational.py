"""Relational (non-STREAM) SELECT: a query evaluated once over what exists now, with ordinary SQL
semantics (seed 004, "Converting between streams and relations"; SEMANTICS.md 2, 4).

Its relations are tables (``CREATE TABLE`` + ``INSERT``), ``VALUES`` and a stream's *retained
history*: the rows its stream log holds, within the stream's history window of its clock
(``Workbench.set_history``). A stream without history is refused at analysis (``Cannot convert
stream 'S' to a table``).

Two evaluators run the same plan and give the same rows in the same order: Python closures from
:func:`~streamsql.engine.expr.compile_expr` (``engine="local"``) and a Spark batch query whose
expressions are rendered by :class:`~streamsql.engine.runtime.spark.sqlgen.SparkSql`
(``engine="spark"``). Without ORDER BY, the order is defined anyway, so that the two agree and
FIRST_VALUE/LAST_VALUE mean something: a table in insertion order, history in log order, UNION
ALL inputs one after the other, a join left row by left row (its matches in right order, then the
unmatched right rows), groups in order of first appearance. Each row carries a rowtime (NULL when
the relation has none: tables, VALUES) so that ``ROWTIME`` in a select list, ``AS ROWTIME`` and
GROUP BY on a time key work as in a streaming query.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import pyarrow as pa

from .errors import SqlError
from .expr import CalcError, Expr, compile_expr
from .operators.aggregate import Acc
from .operators.base import encode_ints
from .operators.sort import encode_sort_value, sort_nulls_first
from .operators.timekey import TimeKey, resolve_time_expr, try_time_key
from .plan import (Aggregate, Field, Filter, HistoryScan, Join, Node, Project, Query, SelectStatement, Sort,
                   TableScan, Union, Values)
from .types import ROWTIME_TYPE, arrow_type, to_json_value
from .workbench import Result

Row = tuple  # (rowtime or None, values tuple)


@dataclass
class RelationResult(Result):
    """A relational SELECT's answer: ``columns`` (with ``ROWTIME`` where the select list shows
    it) and ``rows`` (tuples of engine values: timestamps in epoch ms)."""
    columns: list[str] = field(default_factory=list)
    fields: list[Field] = field(default_factory=list)

    def dicts(self) -> list[dict]:
        """Rows as JSON-friendly dicts (timestamps as text)."""
        return [{f.name: to_json_value(v, f.type) for f, v in zip(self.fields, r)} for r in self.rows]

    def to_pandas(self):
        import pandas as pd
        return pd.DataFrame(self.dicts(), columns=self.columns)


def run_relational(wb, stmt: SelectStatement) -> RelationResult:
    """Evaluate a relational query on the workbench's engine. A calculator error in it (SEMANTICS.md
    1) fails the statement with the error's message: a relational query answers once, so there
    is no running query to keep going and no step to put the error at."""
    q: Query = stmt.query
    try:
        if wb.engine == "spark":
            rows = SparkRelational(wb).run_query(q.root)
        else:
            rows = PythonRelational(wb).run_query(q.root)
    except CalcError as err:
        raise SqlError(f"The query cannot be computed: {err.describe()}") from None
    fields = list(q.columns)
    out = [tuple(vals) for _rt, vals in rows]
    if q.rowtime_column is not None:
        k = q.rowtime_column
        fields.insert(k, Field("ROWTIME", ROWTIME_TYPE))
        out = [vals[:k] + (rt,) + vals[k:] for (rt, _), vals in zip(rows, out)]
    n = len(out)
    return RelationResult(stmt, f"{n} row{'s' if n != 1 else ''}", rows=out,
                          columns=[f.name for f in fields], fields=fields)


# --------------------------------------------------------------------------- leaves

def history_rows(wb, stream: str) -> list[Row]:
    """A stream's retained history: the rows that left it (its stream log), oldest first, within
    its history window of its clock."""
    from .log import ROW
    from .runtime.local.driver import read_feeds
    d = wb.catalog.streams.get(stream)
    if d is None or not d.history:
        raise SqlError(f"Cannot convert stream '{stream}' to a table")
    rows = [(e.rowtime, tuple(e.values)) for _seq, feed in read_feeds(wb, [stream], 0, wb.last_seq)
            for e in feed.get(stream, []) if e.kind == ROW]
    if d.history_window is not None:
        lo = wb.catalog.state[stream].bound - d.history_window
        rows = [r for r in rows if r[0] >= lo]
    return rows


def leaf_rows(wb, node: Node) -> list[Row]:
    if isinstance(node, TableScan):
        t = wb.catalog.tables.get(node.table)
        if t is None:
            raise SqlError(f"Table '{node.table}' not found")
        return [(None, tuple(r)) for r in t.rows]
    if isinstance(node, Values):
        return [(None, tuple(r)) for r in node.rows]
    if isinstance(node, HistoryScan):
        return history_rows(wb, node.stream)
    raise TypeError(node)


def _unsupported(node: Node) -> SqlError:
    what = {"Window": "OVER (windowed aggregation)", "StreamScan": "a stream"}.get(type(node).__name__,
                                                                                  type(node).__name__)
    return SqlError(f"{what} is not supported in a relational query yet")


def _period_keys(node: Aggregate) -> list[TimeKey] | None:
    """The monotonic keys whose periods end a group (as in the streaming GROUP BY), or None."""
    e = resolve_time_expr(node.keys[node.time_key], node.input)
    tk = try_time_key(e if e is not None else node.keys[node.time_key])
    if tk is None:
        return None
    return [tk] + [k for i, x in enumerate(node.keys) if i != node.time_key
                   for k in [try_time_key(x, node.input)] if k is not None]


# --------------------------------------------------------------------------- Python

class PythonRelational:
    """The local evaluator: each node becomes a list of ``(rowtime, values)`` in defined order."""

    def __init__(self, wb):
        self.wb = wb

    def run_query(self, node: Node) -> list[Row]:
        return self.run(node)

    def run(self, node: Node) -> list[Row]:
        if isinstance(node, (TableScan, Values, HistoryScan)):
            return leaf_rows(self.wb, node)
        if isinstance(node, Project):
            return self._project(node)
        if isinstance(node, Filter):
            f = compile_expr(node.cond)
            return [(rt, row) for rt, row in self.run(node.input) if f(row, (rt,)) is True]
        if isinstance(node, Union):
            return [r for i in node.inputs_ for r in self.run(i)]
        if isinstance(node, Aggregate):
            return self._aggregate(node)
        if isinstance(node, Join):
            return self._join(node)
        if isinstance(node, Sort):
            return self._sort(node)
        raise _unsupported(node)

    def _project(self, node: Project) -> list[Row]:
        fns = [compile_expr(e) for e in node.exprs]
        rtf = compile_expr(node.rowtime) if node.rowtime is not None else None
        out = []
        for rt, row in self.run(node.input):
            rts = (rt,)
            nrt = rt if rtf is None or rt is None else rtf(row, rts)
            out.append((nrt, tuple(f(row, rts) for f in fns)))
        return out

    def _aggregate(self, node: Aggregate) -> list[Row]:
        key_fns = [compile_expr(k) for k in node.keys]
        accs = [Acc(a) for a in node.aggs]
        arg_fns = [compile_expr(a.arg) if a.arg is not None else None for a in node.aggs]
        groups: dict[tuple, list] = {}
        first_rt: dict[tuple, int | None] = {}
        for i, (rt, row) in enumerate(self.run(node.input)):
            rts = (rt,)
            k = tuple(f(row, rts) for f in key_fns)
            st = groups.get(k)
            if st is None:
                st = groups[k] = [a.init() for a in accs]
                first_rt[k] = rt
            arrival = encode_ints(i)
            for j, (a, f) in enumerate(zip(accs, arg_fns)):
                st[j] = a.add(st[j], None if f is None else f(row, rts), arrival)
        if not node.keys and not groups:
            groups[()] = [a.init() for a in accs]       # an aggregate of nothing is one row
            first_rt[()] = None
        periods = _period_keys(node) if node.time_key is not None else None
        stamp = compile_expr(node.stamp) if node.stamp is not None else None
        out = []
        for k, st in groups.items():
            row = k + tuple(a.final(s) for a, s in zip(accs, st))
            rt = None
            if periods is not None and first_rt[k] is not None:
                rt = min(p.period_end(first_rt[k]) for p in periods)
                if stamp is not None:
                    v = stamp(row, ())
                    rt = None if v is None else int(v)
            out.append((rt, row))
        return out

    def _join(self, node: Join) -> list[Row]:
        left, right = self.run(node.left), self.run(node.right)
        nl, nr = len(node.left.fields), len(node.right.fields)
        lk = [compile_expr(l) for l, _r in node.equi]
        rk = [compile_expr(r) for _l, r in node.equi]
        res = compile_expr(node.residual) if node.residual is not None else None
        index: dict[tuple, list[int]] = {}
        for j, (rt, row) in enumerate(right):
            key = tuple(f(row, (rt,)) for f in rk)
            if None not in key:
                index.setdefault(key, []).append(j)
        matched = [False] * len(right)
        keep_left, keep_right = node.kind in ("LEFT", "FULL"), node.kind in ("RIGHT", "FULL")
        out = []
        for lrt, lrow in left:
            key = tuple(f(lrow, (lrt,)) for f in lk)
            hit = False
            for j in (index.get(key, ()) if None not in key else ()):
                rrt, rrow = right[j]
                if res is not None and res(lrow + rrow, (lrt, rrt)) is not True:
                    continue
                hit = matched[j] = True
                out.append((_later(lrt, rrt), lrow + rrow))
            if not hit and keep_left:
                out.append((lrt, lrow + (None,) * nr))
        if keep_right:
            out += [(rrt, (None,) * nl + rrow) for (rrt, rrow), m in zip(right, matched) if not m]
        return out

    def _sort(self, node: Sort) -> list[Row]:
        fns = [compile_expr(k.expr) for k in node.keys]
        rows = self.run(node.input)

        def key(p):
            i, (rt, row) = p
            return tuple(encode_sort_value(f(row, (rt,)), k) for f, k in zip(fns, node.keys)) + (i,)
        return [r for _i, r in sorted(enumerate(rows), key=key)]


def _later(a, b):
    if a is None:
        return b
    if b is None:
        return a
    return max(a, b)


# --------------------------------------------------------------------------- Spark

class SparkRelational:
    """The Spark evaluator: each node becomes a DataFrame with the values ``c0..``, the rowtime
    ``rt`` (NULL when none) and the row's position ``ix`` (the same order as the Python one)."""

    def __init__(self, wb):
        from .runtime.spark.session import get_session
        self.wb = wb
        self.spark = get_session(wb.master, wb.spark_conf, log_dir=wb.path / "logs",
                                 on_start=getattr(wb, "on_spark_start", None))

    # ------------------------------------------------------------------ entry

    def run_query(self, node: Node) -> list[Row]:
        df = self.run(node)
        n = len(node.fields)
        tbl = df.orderBy("ix").select(*[f"c{j}" for j in range(n)], "rt").toArrow()
        cols = tbl.to_pydict()
        vals = list(zip(*[cols[f"c{j}"] for j in range(n)])) if n else [()] * tbl.num_rows
        return [(None if rt is None else int(rt), tuple(_restore(v, f.type) for v, f in zip(row, node.fields)))
                for rt, row in zip(cols["rt"], vals)]

    def run(self, node: Node):
        try:
            if isinstance(node, (TableScan, Values, HistoryScan)):
                return self._frame(node.fields, leaf_rows(self.wb, node))
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
        except ValueError as e:      # an expression Spark SQL cannot render
            raise SqlError(f"cannot run this relational query on Spark: {e}") from None
        raise _unsupported(node)

    # ------------------------------------------------------------------ helpers

    @staticmethod
    def _sql(e: Expr, col=None, rowtime=None) -> str:
        from .runtime.spark.sqlgen import SparkSql, quote_ident
        return SparkSql(col or (lambda i: quote_ident(f"c{i}")), rowtime or (lambda k: "rt"))(e)

    @staticmethod
    def _flag(e: Expr, col=None, rowtime=None) -> str:
        from .runtime.spark.sqlgen import SparkSql, quote_ident
        return SparkSql(col or (lambda i: quote_ident(f"c{i}")), rowtime or (lambda k: "rt")).flag(e)

    def _check(self, df, fields, exprs, rts, col=None, rowtime=None, width=None) -> None:
        """Raise the calculator error of the first row (in order) where one of ``exprs`` (left
        to right) cannot be computed: Spark finds the row, Python's evaluator says why."""
        from . import functions
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
        row = tuple(_restore(r[j], f.type) for j, f in enumerate(fields))
        times = tuple(None if r[n + k] is None else int(r[n + k]) for k in range(len(rts.split(","))))
        for e in exprs:
            compile_expr(e)(row, times)      # raises the CalcError
        raise SqlError("a calculator error Spark flagged did not reproduce in Python")

    @staticmethod
    def _cast(sql: str, f: Field) -> str:
        from .types import spark_type_ddl
        return f"CAST({sql} AS {spark_type_ddl(f.type)})"

    def _frame(self, fields: list[Field], rows: list[Row]):
        arrays = [pa.array([r[1][j] for r in rows], type=arrow_type(f.type)) for j, f in enumerate(fields)]
        arrays.append(pa.array([r[0] for r in rows], type=pa.int64()))
        arrays.append(pa.array(range(len(rows)), type=pa.int64()))
        names = [f"c{j}" for j in range(len(fields))] + ["rt", "ix"]
        return self.spark.createDataFrame(pa.Table.from_arrays(arrays, names=names))

    def _renumber(self, df, *order):
        """``ix`` := the row's position in ``order`` (one sort over the whole relation)."""
        from pyspark.sql import Window, functions as F
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
        from functools import reduce
        from pyspark.sql import functions as F
        n = len(node.fields)
        parts = [self.run(i).selectExpr(*[f"{self._cast(f'c{j}', node.fields[j])} AS c{j}" for j in range(n)],
                                        "rt", "ix", f"{u} AS u")
                 for u, i in enumerate(node.inputs_)]
        df = reduce(lambda a, b: a.unionByName(b), parts)
        return self._renumber(df, F.col("u"), F.col("ix")).drop("u")

    def _aggregate(self, node: Aggregate):
        from pyspark.sql import functions as F
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
        periods = _period_keys(node) if node.time_key is not None else None
        if periods is not None:
            ends = [_period_end_sql(p, "rtx") for p in periods]
            rt = ends[0] if len(ends) == 1 else f"least({', '.join(ends)})"
            if node.stamp is not None:
                g = g.selectExpr("*", f"CASE WHEN rtx IS NULL THEN NULL ELSE CAST({self._sql(node.stamp)} AS BIGINT) END AS rs")
                rt = "rs"
        return g.selectExpr(*[f"c{j}" for j in range(len(node.fields))], f"CAST({rt} AS BIGINT) AS rt", "ix")

    def _check_sums(self, g, node: Aggregate, nk: int) -> None:
        """A SUM (or AVG) whose total leaves its type's range: NULL from values (the sums are
        exact, see :meth:`_agg_sql`), or an infinity from finite doubles."""
        from .functions.spec import out_of_range
        from .operators.aggregate import Acc
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
            return f"try_cast(sum({d}CAST({x} AS DECIMAL(38,{t.scale or 0}))) AS {_ddl(t)})"
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

    def _join(self, node: Join):
        from pyspark.sql import functions as F
        from .runtime.spark.sqlgen import quote_ident
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
        j = j.selectExpr(*[f"c{i}" for i in range(nl + nr)], "greatest(rt0, rt1) AS rt", "ix0", "ix1")
        return self._renumber(j, F.col("ix0").asc_nulls_last(), F.col("ix1").asc_nulls_first()).drop("ix0", "ix1")

    def _sort(self, node: Sort):
        from pyspark.sql import functions as F
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


def _period_end_sql(p: TimeKey, x: str) -> str:
    """Spark SQL for ``p.period_end(x)`` (see :class:`~streamsql.engine.operators.timekey.TimeKey`)."""
    from .runtime.spark.sqlgen import floor_sql, next_boundary_sql
    if p.kind == "identity":
        return f"({x} + 1)"
    s = f"({x} + CAST({p.shift} AS BIGINT))"
    if p.kind == "FLOOR_TO":
        return f"({next_boundary_sql(floor_sql(s, p.arg), p.arg)} - {p.shift})"
    if p.kind == "CEIL_TO":
        f = floor_sql(s, p.arg)
        return f"(CASE WHEN {f} = {s} THEN {s} ELSE {next_boundary_sql(f, p.arg)} END + 1 - {p.shift})"
    ms = p.arg.millis
    return f"({s} - pmod({s}, CAST({ms} AS BIGINT)) + {ms} - {p.shift})"


def _ddl(t) -> str:
    from .types import spark_type_ddl
    return spark_type_ddl(t)


def _restore(v, t):
    """An Arrow value as the engine's Python value (exact ints, floats for approximate types)."""
    if v is None:
        return None
    if t.is_integer or t.name == "TIMESTAMP":
        return int(v)
    if t.is_approx:
        return float(v)
    return v
