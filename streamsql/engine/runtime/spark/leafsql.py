"""The Spark SQL of a stage input's frame (:mod:`.frames`): per leaf, the rows of its stream or
upstream stage with the leaf's WHERE and projections and the post-merge chain inlined, the
calculator-error flags of those expressions, and the frame's columns; per origin, the rows that
are no rows (timelines, reports, operator errors).

A leaf's row that raises a calculator error is kept, as an operator-error row carrying its
failure (:mod:`.failures`). With the trace on, a stage-fed leaf keeps the rows its WHERE drops
(``drop`` 1: its upstream operator holds them until it lets them go) and every leaf the rows the
post-merge WHERE drops (``drop`` 2: the merge holds them too); ``u<y>_<j>`` carry an upstream
operator's own output values and ``m<i>_<j>`` a merge's (before the post-merge chain), the
values those operators hold (:mod:`.trace_assembly`).
"""
from __future__ import annotations

from typing import Callable

from ...plan import Filter
from .failures import failure_sql
from .framecode import FrameCode
from .frames import value_col
from .sqlgen import SparkSql
from .sqltext import spark_type_ddl

#: the columns every frame row has, before the values
STD_COLUMNS = ["ev", "inp", "leaf", "step", "sub", "T", "Tup", "tie", "ort", "blob", "up"]

#: what a row that is no row (a timeline, a report, an error) has in the standard columns
_META = {"inp": "0", "leaf": "0", "step": "CAST(0 AS BIGINT)", "sub": "0", "T": "CAST(0 AS BIGINT)",
         "Tup": "CAST(0 AS BIGINT)", "tie": "CAST(NULL AS BINARY)", "ort": "CAST(0 AS BIGINT)"}


def ev_sql(code: FrameCode) -> str:
    return f"CAST({int(code)} AS TINYINT)"


class FrameSql:
    """The columns of one stage's input frame and the SQL of its leaves. ``nodes`` are the plan's
    stateful nodes by stage, ``upstream`` the stages feeding this one; ``add_branch(i, lf)``
    registers leaf ``lf`` of input ``i`` as a branch whose rows can fail and returns its number
    (:class:`~.failures.Branch`)."""

    def __init__(self, st, nodes: dict, upstream: list, trace: bool, checked: bool,
                 add_branch: Callable[[int, object], tuple[int, list]]):
        self.st, self.trace, self.checked, self.add_branch = st, trace, checked, add_branch
        # the frame's values are typed as the operator reads them (after the post-merge chain);
        # the merge's own values (``m`` columns) as the merge has them
        self.value_types = [[spark_type_ddl(f.type) for f in inp.out_fields] for inp in st.inputs]
        self.merged_types = [[spark_type_ddl(f.type) for f in inp.fields] for inp in st.inputs]
        self.values = [(value_col(i, m), t) for i, ts in enumerate(self.value_types) for m, t in enumerate(ts)]
        if trace:
            self.values.append(("drop", "TINYINT"))
            self.values += [(f"u{y}_{c}", spark_type_ddl(f.type)) for y in upstream
                            for c, f in enumerate(nodes[y].fields)]
            self.values += [(f"m{i}_{m}", t) for i, ts in enumerate(self.merged_types) if st.inputs[i].post
                            for m, t in enumerate(ts)]

    # ------------------------------------------------------------------ columns

    def pairs(self, fixed: dict, values: dict) -> list[tuple[str, str]]:
        """Every column of the frame with its SQL (NULL where ``values`` has none)."""
        return [(k, fixed[k]) for k in STD_COLUMNS] + [(c, values.get(c, f"CAST(NULL AS {t})")) for c, t in self.values]

    def struct(self, fixed: dict, values: dict) -> str:
        return "named_struct(" + ", ".join(f"'{k}', {v}" for k, v in self.pairs(fixed, values)) + ")"

    def meta_struct(self, code: FrameCode, **fixed: str) -> str:
        """A row that is no row: a timeline (``blob`` the timeline), a report or an error."""
        return self.struct({**_META, "ev": ev_sql(code), **fixed}, {})

    @staticmethod
    def meta_columns(code: FrameCode, **fixed: str) -> dict:
        return {**_META, "ev": ev_sql(code), **fixed}

    # ------------------------------------------------------------------ a leaf

    def leaf(self, i: int, j: int, lf, cols: list[str], rt: str, step: str, sub: str, tup: str,
             tie: str) -> tuple[str, list[tuple[str, str]]]:
        """(condition, columns) of leaf ``j`` of input ``i`` over an origin whose values are the
        SQL ``cols`` and rowtime ``rt``: its chain and the post-merge chain inlined. The condition
        leaves out rows a filter drops (with the trace on, only those of a stream leaf's own
        chain: the others are kept, marked ``drop``)."""
        st = self.st
        chain = _Chain(self.checked)
        cur, cur_rt = chain.run(lf.chain, cols, rt, chain.conds)
        chain_flags = chain.last_where
        merged = [f"CAST(({c}) AS {t})" for c, t in zip(cur, self.merged_types[i])]
        stamp = cur_rt
        chain.last_where = chain_flags
        cur, cur_rt = chain.run(st.inputs[i].post, merged, stamp, chain.post_conds)
        all_flags = chain.last_where
        flags = chain.flags
        ev, blob = ev_sql(FrameCode.ROW), "CAST(NULL AS BINARY)"
        if flags:
            failed = "(" + " OR ".join(flags) + ")"
            branch, origin = self.add_branch(i, lf)
            ev = f"CAST(CASE WHEN {failed} THEN {int(FrameCode.ERROR)} ELSE {int(FrameCode.ROW)} END AS TINYINT)"
            blob = f"CASE WHEN {failed} THEN {failure_sql(branch, origin, cols, rt)} END"
        fixed = {"ev": ev, "inp": f"{i}", "leaf": f"{j}", "step": step, "sub": sub,
                 "T": f"CAST(({stamp}) AS BIGINT)", "Tup": tup, "tie": tie, "ort": f"CAST(({cur_rt}) AS BIGINT)",
                 "blob": blob, "up": "-1"}
        values = {value_col(i, m): f"CAST(({c}) AS {self.value_types[i][m]})" for m, c in enumerate(cur)}
        if not self.trace:
            return _kept(chain.conds + chain.post_conds, flags[:all_flags]), self.pairs(fixed, values)
        # a row a WHERE drops may have no stamp through the projections: it is never used
        # (nor is a failing row: the consumer marks it ``fail``, failures.py)
        fixed["T"] = f"coalesce({fixed['T']}, CAST({tup} AS BIGINT))"
        fixed["ort"] = f"coalesce({fixed['ort']}, CAST({tup} AS BIGINT))"
        if lf.stage is not None:
            values["drop"] = (f"CAST(CASE WHEN NOT ({_all_true(chain.conds)}) THEN 1 "
                              f"WHEN NOT ({_all_true(chain.post_conds)}) THEN 2 ELSE 0 END AS TINYINT)")
            for c in range(len(cols)):
                values[f"u{lf.stage}_{c}"] = cols[c]
            keep = "TRUE"
        else:
            values["drop"] = f"CAST(CASE WHEN NOT ({_all_true(chain.post_conds)}) THEN 2 ELSE 0 END AS TINYINT)"
            keep = _kept(chain.conds, flags[:chain_flags])
        if st.inputs[i].post:
            for m, c in enumerate(merged):
                values[f"m{i}_{m}"] = c
        return keep, self.pairs(fixed, values)


class _Chain:
    """The WHERE conditions (``conds`` of the leaf's chain, ``post_conds`` after the merge) and
    the calculator-error flags of a leaf's expressions, in evaluation order; ``last_where``: how
    many flags come before the last WHERE run so far."""

    def __init__(self, checked: bool):
        self.checked = checked
        self.conds: list[str] = []
        self.post_conds: list[str] = []
        self.flags: list[str] = []
        self.last_where = 0

    def run(self, nodes, cur: list[str], cur_rt: str, out: list[str]) -> tuple[list[str], str]:
        for node in nodes:
            r = SparkSql(lambda c, cur=cur: f"({cur[c]})", lambda k, cur_rt=cur_rt: f"({cur_rt})", self.checked)
            if isinstance(node, Filter):
                self._flag(r.flag(node.cond))
                out.append(r(node.cond))
                self.last_where = len(self.flags)
                continue
            items = list(node.exprs)
            if node.rowtime is not None:
                items.insert(node.rowtime_at, node.rowtime)
            for e in items:
                self._flag(r.flag(e))
            cur, cur_rt = [r(e) for e in node.exprs], (r(node.rowtime) if node.rowtime is not None else cur_rt)
        return cur, cur_rt

    def _flag(self, flag: str) -> None:
        """Add an expression's error flag, counting only where the filters before it kept the row
        (a row a WHERE drops raises nothing after it)."""
        if flag == "FALSE":
            return
        guard = " AND ".join(f"(({c}) <=> TRUE)" for c in self.conds + self.post_conds)
        self.flags.append(f"({guard} AND {flag})" if guard else flag)


def _kept(conds: list[str], failing: list[str]) -> str:
    """Rows the WHERE conditions ``conds`` keep, and rows failing before the last of them (one
    parenthesized condition: the callers AND it with the row's stream)."""
    c = " AND ".join(f"({x})" for x in conds) or "TRUE"
    return f"(({' OR '.join(failing)}) OR ({c}))" if failing else c


def _all_true(conds: list[str]) -> str:
    return " AND ".join(f"coalesce(({c}), FALSE)" for c in conds) or "TRUE"
