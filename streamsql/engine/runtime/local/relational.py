"""Relational (non-STREAM) queries on the local runtime: each plan node becomes a list of
``(rowtime, values)`` in the order :mod:`streamsql.engine.relational` defines."""
from __future__ import annotations

from ...expr import compile_expr
from ...operators.aggregate import Acc
from ...operators.base import encode_ints
from ...operators.sort import encode_sort_value
from ...operators.temporal import validity
from ...plan import Aggregate, Filter, HistoryScan, Join, Node, Project, Sort, TableScan, Union, Values, Window
from ...relational import NO_MATCH, Row, frame_bounds, later, period_keys, unsupported, window_stamps


class PythonRelational:
    """The local evaluator: each node becomes a list of ``(rowtime, values)`` in defined order."""

    def __init__(self, host):
        self.host = host

    def run(self, node: Node) -> list[Row]:
        if isinstance(node, (TableScan, Values, HistoryScan)):
            return self.host.leaf_rows(node)
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
        if isinstance(node, Window):
            return self._window(node)
        raise unsupported(node)

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
        periods = period_keys(node) if node.time_key is not None else None
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
        keys = [tuple(f(row, (rt,)) for f in rk) for rt, row in right]
        for j, key in enumerate(keys):
            if None not in key:
                index.setdefault(key, []).append(j)
        valid = self._validity(node, right, keys) if node.versions is not None else None
        matched = [False] * len(right)
        keep_left, keep_right = node.kind in ("LEFT", "FULL"), node.kind in ("RIGHT", "FULL")
        win = window_stamps(node)
        out = []
        for lrt, lrow in left:
            key = tuple(f(lrow, (lrt,)) for f in lk)
            hit = False
            for j in (index.get(key, ()) if None not in key else ()):
                rrt, rrow = right[j]
                if valid is not None and not valid[j][0] <= lrt < valid[j][1]:
                    continue
                stamp = later(lrt, rrt) if win is None else win.pair(lrt, rrt)
                if stamp is NO_MATCH:
                    continue
                if res is not None and res(lrow + rrow, (lrt, rrt)) is not True:
                    continue
                hit = matched[j] = True
                out.append((stamp, lrow + rrow))
            if not hit and keep_left:
                out.append((lrt if win is None else win.left_alone(lrt), lrow + (None,) * nr))
        if keep_right:
            out += [(rrt if win is None else win.right_alone(rrt), (None,) * nl + rrow)
                    for (rrt, rrow), m in zip(right, matched) if not m]
        return out

    @staticmethod
    def _validity(node: Join, right: list[Row], keys: list[tuple]) -> list[tuple[int, int]]:
        """``[lo, hi)`` of each right row of a temporal join (operators/temporal.py's rule)."""
        start = compile_expr(node.versions.start)
        end = compile_expr(node.versions.end) if node.versions.end is not None else None
        return validity(right, [start(row, (rt,)) for rt, row in right], keys,
                        [end(row, (rt,)) for rt, row in right] if end is not None else None)

    def _sort(self, node: Sort) -> list[Row]:
        fns = [compile_expr(k.expr) for k in node.keys]
        rows = self.run(node.input)

        def key(p):
            i, (rt, row) = p
            return tuple(encode_sort_value(f(row, (rt,)), k) for f, k in zip(fns, node.keys)) + (i,)
        return [r for _i, r in sorted(enumerate(rows), key=key)]

    def _window(self, node: Window) -> list[Row]:
        """OVER as standard SQL has it: each row's frame is taken in its partition ordered by
        ROWTIME (or the window's ORDER BY key), then by position; a RANGE frame that ends at
        CURRENT ROW holds all the row's peers (a streaming one only those that arrived before
        it: the semantics, section 3.4)."""
        rows = self.run(node.input)
        calls = node.calls
        part_fns = [[compile_expr(e) for e in c.spec.partition_by] for c in calls]
        order_fns = [compile_expr(c.spec.order_by) if c.spec.order_by is not None else None for c in calls]
        arg_fns = [compile_expr(c.agg.arg) if c.agg.arg is not None else None for c in calls]
        # row by row, each call's partition keys, order key and argument: the first failure is
        # the first row's (as the Spark evaluator finds it)
        evaluated = []
        for rt, row in rows:
            rts = (rt,)
            evaluated.append([(tuple(f(row, rts) for f in pf), rt if of is None else of(row, rts),
                               None if af is None else af(row, rts))
                              for pf, of, af in zip(part_fns, order_fns, arg_fns)])
        results = [[None] * len(calls) for _ in rows]
        for j, call in enumerate(calls):
            acc = Acc(call.agg)
            parts: dict[tuple, list[int]] = {}
            for i, ev in enumerate(evaluated):
                parts.setdefault(ev[j][0], []).append(i)
            for members in parts.values():
                members.sort(key=lambda i: (evaluated[i][j][1] is not None, evaluated[i][j][1] or 0, i))
                orders = [evaluated[i][j][1] for i in members]
                for pos, i in enumerate(members):
                    lo, hi = frame_bounds(call.spec, orders, pos)
                    st = acc.init()
                    for m in members[lo:hi]:
                        st = acc.add(st, evaluated[m][j][2], encode_ints(m))
                    results[i][j] = acc.final(st)
        return [(rt, row + tuple(res)) for (rt, row), res in zip(rows, results)]
