"""What a query's operators hold open after the last traced step, as table rows: each GROUP BY
group with its aggregates so far and the clock that will close it, each open window of a window
operator the same way, each OVER partition with the rows its frames still keep, each join side's
kept rows. Read from the typed trace
(``OperatorTrace.state``), never from its words, so both runtimes show the same."""
from __future__ import annotations

from ..engine.operators.describe import AggregateState, JoinState, WindowsState, WindowState
from ..engine.operators.window import window_groups
from ..engine.expr import Col
from ..engine.plan import Aggregate, Project, Window
from ..engine.types import format_value
from .render import ts

HEADER = ["OPERATOR", "OPEN", "SO FAR", "CLOSES"]


def aggregate_nodes(node, kind=Aggregate) -> list:
    """The plan's GROUP BY (or ``kind``) nodes, inputs first (the order of the trace's operators)."""
    out = []
    for child in node.inputs():
        out += aggregate_nodes(child, kind)
    if isinstance(node, kind):
        out.append(node)
    return out


def _column_names(node, out: dict | None = None) -> dict:
    """Internal column names (``$W0``) to the names the query gave them (``SLIDING``), from the
    projections above them."""
    out = {} if out is None else out
    if isinstance(node, Project):
        for e, f in zip(node.exprs, node.fields):
            if isinstance(e, Col) and e.name.startswith("$"):
                out.setdefault(e.name, f.name)
    for child in node.inputs():
        _column_names(child, out)
    return out


def _agg_label(a) -> str:
    """``SUM(units)``, ``COUNT(*)``: the aggregate as the query wrote it."""
    if a.arg is None:
        arg = "*"
    else:
        arg = getattr(a.arg, "text", None) or getattr(a.arg, "name", None) or "..."
    return f"{a.fn}({'DISTINCT ' if a.distinct else ''}{arg})"


def partials_text(node: Aggregate | None, partials: tuple) -> str:
    """``COUNT(*) = 2, SUM(units) = 8``: an open group's aggregates so far."""
    labels = [_agg_label(a) for a in node.aggs] if node is not None else []
    out = []
    for i, (name, value) in enumerate(partials):
        label = labels[i] if i < len(labels) else name
        out.append(f"{label} = {format_value(value)}")
    return ", ".join(out)


def agg_node(q, op, rec=None) -> Aggregate | None:
    """The GROUP BY plan node behind a traced aggregate operator (they come in the same order)."""
    rec = rec if rec is not None else (q.trace[-1] if q.trace else None)
    ops = [o for o in rec.operators if isinstance(o.state, AggregateState)] if rec is not None else []
    nodes = aggregate_nodes(q.plan.root)
    for o, n in zip(ops, nodes):
        if o is op:
            return n
    return None


def open_state_rows(q, rec=None) -> list[list[str]]:
    """Rows of :data:`HEADER` for the query's last traced step, or for the step record ``rec``
    (none without a trace)."""
    trace = getattr(q, "trace", None)
    if rec is None:
        if not trace:
            return []
        rec = trace[-1]
    ops = rec.operators
    nodes = aggregate_nodes(q.plan.root)
    windows = aggregate_nodes(q.plan.root, Window)
    names = _column_names(q.plan.root) if windows else {}
    rows: list[list[str]] = []
    agg_index = win_index = 0
    for op in ops:
        st = op.state
        source = ", ".join(op.inputs) if op.inputs else "its input"
        if isinstance(st, AggregateState):
            node = nodes[agg_index] if agg_index < len(nodes) else None
            agg_index += 1
            for g in st.groups:
                key = ", ".join(g.labels or tuple(format_value(k) for k in g.keys)) or "(one group)"
                rows.append([op.operator, f"group {key}", partials_text(node, g.partials),
                             f"when {source} reaches {ts(g.end)}"])
            if st.group_count > len(st.groups):
                rows.append([op.operator, f"and {st.group_count - len(st.groups)} more groups", "", ""])
        elif isinstance(st, WindowState):
            node = windows[win_index] if win_index < len(windows) else None
            win_index += 1
            groups = window_groups(node) if node is not None else []
            for p in st.partitions:
                if not p.rows:
                    continue
                spec, calls = groups[p.window] if p.window < len(groups) else (None, [])
                types = [e.type for e in spec.partition_by] if spec is not None else []
                key = ", ".join(format_value(v, types[i] if i < len(types) else None)
                                for i, v in enumerate(p.partition))
                since = f" since {ts(p.first)}" if p.first is not None else ""
                n_in = len(node.input.fields) if node is not None else 0
                used = ", ".join(names.get(node.fields[n_in + i].name) or _agg_label(node.calls[i].agg)
                                 for i in calls) if calls else ""
                rows.append([op.operator, f"partition {key}" if key else "all rows",
                             f"{p.rows} row{'s' if p.rows != 1 else ''} kept{since}"
                             + (f" for {used}" if used and len(groups) > 1 else ""),
                             "as rows leave the frame"])
        elif isinstance(st, WindowsState):
            rows += window_rows(op, st, source)
        elif isinstance(st, JoinState):
            for side, js in enumerate(st.sides):
                if not js.kept:
                    continue
                name = op.inputs[side] if side < len(op.inputs) else f"input {side}"
                rows.append([op.operator, f"{name}: {len(js.kept)} row{'s' if len(js.kept) != 1 else ''} kept",
                             f"rowtimes {ts(min(js.kept))} to {ts(max(js.kept))}",
                             f"the earliest when the other side passes {ts(min(js.kept) + js.preceding)}"])
    return rows


def window_rows(op, st: WindowsState, source: str) -> list[list[str]]:
    """The open windows of a window operator (the semantics, section 3.7): each with what it holds
    so far and the clock that closes it."""
    from ..engine.runtime.trace_records import window_text
    out = []
    for w in st.windows:
        what = f"window {window_text(w.start, w.end)}" + (f" of {', '.join(w.labels)}" if w.labels else "")
        held = ", ".join(f"{k} = {format_value(v)}" for k, v in w.partials) if w.partials else (
            f"{w.rows} row{'s' if w.rows != 1 else ''}" if w.rows is not None else "")
        out.append([op.operator, what, held, f"when {source} reaches {ts(w.end)}"])
    if st.window_count > len(st.windows):
        out.append([op.operator, f"and {st.window_count - len(st.windows)} more windows", "", ""])
    return out


def state_step(q) -> int | None:
    """The step the query's held and open state is as of, as the step table numbers it: the last
    event on its input streams once a running query has caught up with them (an eclipsed bound
    or a late row is a step of the step table but adds no trace record), else its last traced
    step (None before any)."""
    trace = getattr(q, "trace", None)
    traced = trace[-1].step if trace else None
    try:
        if q.running and q.wb.runtime.caught_up(q):
            events = q.wb.traced_events(q.start_step, q.plan.streams, last=1)
            last = events[-1]["step"] if events else None
            if last is not None and (traced is None or last > traced):
                return last
    except Exception:       # a runtime closing, a dropped stream: what the trace says
        pass
    return traced


def held_rows(q, rec=None) -> list[dict]:
    """Rows the query's operators hold after the last traced step (or the step record ``rec``),
    each with what it waits for (``ContinuousQuery.trace``: ``waits`` the typed records,
    ``waits_for`` in words)."""
    if rec is None:
        if not q.trace:
            return []
        rec = q.trace[-1]
    ops = rec.operators
    out = []
    for i, op in enumerate(ops):
        for h in op.held:
            out.append({"operator": op.operator, "index": i, "root": i == len(ops) - 1,
                        "rowtime": h.rowtime, "values": list(h.values), "waits": h.waits,
                        "waits_for": h.waits_for})
    return out


def held_count(q) -> int:
    """How many rows the query's operators hold in all (the trace lists only the earliest)."""
    if not q.trace:
        return 0
    return sum(op.held_count for op in q.trace[-1].operators)


def held_table(q) -> list[list[str]]:
    rows = []
    for h in held_rows(q):
        rows.append([h["operator"], ts(h["rowtime"]), ", ".join(format_value(v) for v in h["values"]),
                     "; ".join(h["waits_for"])])
    return rows


HELD_HEADER = ["Operator", "ROWTIME", "Row", "Waits for"]
