"""``--explain``: a query's logical plan as an indented tree, and the plan its runtime runs for
it (``Runtime.explain``: on Spark the physical plan, with the per-run noise taken out, so that
the same query explains the same way every time)."""
from __future__ import annotations

from ..engine import plan as P


def _ms(ms: int) -> str:
    if ms == 0:
        return "0"
    for unit, size in (("DAY", 86_400_000), ("HOUR", 3_600_000), ("MINUTE", 60_000), ("SECOND", 1000)):
        if ms % size == 0:
            return f"{ms // size} {unit}"
    return f"{ms} ms"


def _exprs(es) -> str:
    return ", ".join(map(repr, es))


def _describe(node) -> str:
    if isinstance(node, P.StreamScan):
        return f"StreamScan {node.stream}" + (f" AS {node.alias}" if node.alias else "")
    if isinstance(node, P.TableScan):
        return f"TableScan {node.table}" + (f" AS {node.alias}" if node.alias else "")
    if isinstance(node, P.Project):
        names = [f.name for f in node.fields]
        items = ", ".join(f"{n}={e!r}" for n, e in zip(names, node.exprs))
        return f"Project [{items}]" + (f" ROWTIME={node.rowtime!r}" if node.rowtime is not None else "")
    if isinstance(node, P.Filter):
        return f"Filter {node.cond!r}"
    if isinstance(node, P.Union):
        return f"Union ALL ({len(node.inputs_)} inputs, ordered merge)"
    if isinstance(node, P.Aggregate):
        aggs = ", ".join(f"{a.fn}({'DISTINCT ' if a.distinct else ''}{'*' if a.arg is None else repr(a.arg)})"
                         for a in node.aggs)
        tk = f" time key #{node.time_key}" if node.time_key is not None else ""
        return f"Aggregate keys [{_exprs(node.keys)}]{tk} aggs [{aggs}]" + (" DISTINCT" if node.distinct_rows else "")
    if isinstance(node, P.Window):
        calls = []
        for c in node.calls:
            s = c.spec
            lower = "UNBOUNDED" if s.lower is None else (_ms(s.lower) if s.mode == "RANGE" else str(s.lower))
            calls.append(f"{c.agg.fn}({'*' if c.agg.arg is None else repr(c.agg.arg)}) OVER ({s.mode} {lower} "
                         f"PRECEDING" + (f" PARTITION BY {_exprs(s.partition_by)}" if s.partition_by else "") + ")")
        return f"Window [{', '.join(calls)}]"
    if isinstance(node, P.Join):
        def win(w):
            return "table" if w is None else f"[-{_ms(w.preceding)}, +{_ms(w.following)}]"
        on = " AND ".join(f"{a!r} = {b!r}" for a, b in node.equi)
        if node.residual is not None:
            on = f"{on} AND {node.residual!r}" if on else repr(node.residual)
        if node.versions is not None:
            v = node.versions
            valid = f"[{v.start!r}, {v.end!r})" if v.end is not None else f"from {v.start!r} to the next of its key"
            return f"Join {node.kind} FOR SYSTEM_TIME AS OF the left ROWTIME, versions valid {valid} ON {on or 'TRUE'}"
        return f"Join {node.kind} windows {win(node.left_window)} / {win(node.right_window)} ON {on or 'TRUE'}"
    if isinstance(node, P.Sort):
        keys = ", ".join(f"{k.expr!r}{' DESC' if k.descending else ''}" for k in node.keys)
        return f"Sort [{keys}]" + (f" WITHIN {_ms(node.within)}" if node.within is not None else "")
    return type(node).__name__


def logical_plan(q) -> str:
    """The plan the analyzer produced for the query, one node per line, inputs indented."""
    lines = [f"Query {q.name}: columns ROWTIME, {', '.join(q.columns)}"]

    def walk(node, depth):
        lines.append("  " * depth + _describe(node))
        for child in node.inputs():
            walk(child, depth + 1)
    walk(q.plan.root, 1)
    return "\n".join(lines)


def spark_plan(q) -> str:
    """The plan the query's runtime runs (on Spark: the physical plan of its streaming
    DataFrame), as stable text."""
    return q.wb.runtime.explain(q)
