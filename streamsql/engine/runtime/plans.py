"""From logical plans to what the runtimes execute.

:func:`normalize` rewrites a plan the same way for both runtimes: WHERE clauses and projections
that keep or shift ROWTIME move below UNION ALL (they commute with a merge: same rows, same
timing), and nested UNION ALLs become one, inputs in query order.

:func:`build_stages` cuts a normalized plan into *stages* for the Spark runtime: one per
stateful operator, plus the final *sink* stage. A stage's input is a merge of *leaves*, each leaf
a named stream or an earlier stage seen through a chain of row-by-row nodes, followed by an
optional *post* chain applied to the merged rows.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import SqlError
from ..expr import Call, Lit, Rowtime
from ..operators.base import Operator
from ..plan import Filter, Node, Project, StreamScan, Union
from .. import time as sqltime


def make_operator(node: Node, tables) -> Operator:
    """The operator instance for a stateful plan node (same class in both runtimes)."""
    from ..plan import Aggregate, Window
    if isinstance(node, Aggregate):
        from ..operators.aggregate import AggregateOp
        return AggregateOp(node)
    if isinstance(node, Window):
        from ..operators.window import WindowOp
        return WindowOp(node)
    from ..plan import Join, TableScan
    if isinstance(node, Join):
        from ..operators.join import JoinOp, LookupJoinOp
        from ..operators.temporal import TemporalJoinOp, VersionLookupOp
        for side, other in ((0, node.right), (1, node.left)):
            if isinstance(other, TableScan):
                t = tables.get(other.table)
                rows = list(t.rows) if t is not None else []
                return (VersionLookupOp if node.versions is not None else LookupJoinOp)(node, rows, side)
        return TemporalJoinOp(node) if node.versions is not None else JoinOp(node)
    from ..operators.windowops import window_operator
    op = window_operator(node)
    if op is not None:
        return op
    from ..plan import Sort
    if isinstance(node, Sort) and node.is_stream:
        from ..operators.sort import make_sort_operator
        return make_sort_operator(node)
    raise SqlError(f"{type(node).__name__} is not supported by this version of the engine yet")


def stream_inputs(node: Node) -> list[Node]:
    """The inputs an operator receives events from (a stream-table join has one: the table is
    looked up, not streamed)."""
    from ..plan import Join, TableScan
    if isinstance(node, Join):
        return [i for i in (node.left, node.right) if not isinstance(i, TableScan)]
    return node.inputs()


def input_label(node: Node) -> str:
    """What the trace calls an operator's input: a stream's name through row-by-row nodes, else
    the operator feeding it (``union``, ``aggregate``, ``join``, ...). The first input's label is
    also the ``STREAM_NAME`` of rows the operator refuses."""
    while isinstance(node, (Filter, Project)):
        node = node.input
    if isinstance(node, StreamScan):
        return node.stream
    return type(node).__name__.lower()


# --------------------------------------------------------------------------- normalize

def is_shift(e) -> bool:
    """``ROWTIME`` plus/minus a fixed interval: strictly increasing, so it commutes with a merge."""
    if e is None or isinstance(e, Rowtime):
        return True
    if isinstance(e, Call) and e.fn in ("+", "-") and len(e.args) == 2:
        x, y = e.args
        if isinstance(y, Lit) and isinstance(y.value, sqltime.Interval) and y.value.is_fixed:
            return is_shift(x)
        if e.fn == "+" and isinstance(x, Lit) and isinstance(x.value, sqltime.Interval) and x.value.is_fixed:
            return is_shift(y)
    return False


def normalize(node: Node) -> Node:
    """The plan both runtimes run. A WHERE or projection moved below a UNION ALL keeps where the
    query placed it for calculator errors: it is marked ``defer_errors``, so that a row it fails
    on still goes through the merge and fails when the merge releases it."""
    if isinstance(node, Union):
        ins = []
        for i in node.inputs_:
            n = normalize(i)
            ins.extend(n.inputs_ if isinstance(n, Union) else [n])
        return Union(ins, node.fields)
    if isinstance(node, (Filter, Project)):
        child = normalize(node.input)
        if isinstance(child, Union) and (isinstance(node, Filter) or is_shift(node.rowtime)):
            return Union([normalize(_with_input(node, i, defer=True)) for i in child.inputs_], node.fields)
        return _with_input(node, child)
    for attr in ("input", "left", "right"):
        if hasattr(node, attr) and getattr(node, attr).is_stream:
            setattr(node, attr, normalize(getattr(node, attr)))
    return node


def _with_input(node, child, defer: bool = False):
    """A copy of ``node`` over ``child``; its lists are its own (a node moved below a UNION ALL
    is copied into every input, and an operator's persisted state may hold no list twice)."""
    defer = defer or node.defer_errors
    if isinstance(node, Filter):
        return Filter(child, node.cond, list(node.fields), defer_errors=defer)
    return Project(child, list(node.exprs), list(node.fields), node.rowtime, rowtime_at=node.rowtime_at,
                   defer_errors=defer)


def origin_stream(node: Node) -> str:
    """The named stream a node's rows come from, as error records name it: through row-by-row
    nodes to the stream, past a merge or an operator to its first input's."""
    while not isinstance(node, StreamScan):
        node = node.input if isinstance(node, (Filter, Project)) else (
            node.inputs_[0] if isinstance(node, Union) else stream_inputs(node)[0])
    return node.stream


def post_order(root: Node) -> dict[int, int]:
    """``id(node) -> position`` of every node of a normalized plan, inputs first (a stream-table
    join's table is not a node). Both runtimes list a step's operator errors in this order."""
    out: dict[int, int] = {}

    def walk(n: Node) -> None:
        if isinstance(n, (Filter, Project)):
            walk(n.input)
        elif isinstance(n, Union):
            for i in n.inputs_:
                walk(i)
        elif not isinstance(n, StreamScan):
            for i in stream_inputs(n):
                walk(i)
        out[id(n)] = len(out)
    walk(root)
    return out


# --------------------------------------------------------------------------- stages

@dataclass
class Leaf:
    stream: str | None                   # a named stream ...
    stage: int | None                    # ... or the output of an earlier stage
    chain: list = field(default_factory=list)   # Filter/Project nodes, innermost first

    def rowtime_maps(self) -> list:
        return [n.rowtime for n in self.chain if isinstance(n, Project) and n.rowtime is not None]


@dataclass
class StageInput:
    leaves: list[Leaf]
    post: list = field(default_factory=list)     # Filter/Project applied after the merge
    fields: list = field(default_factory=list)   # fields of the merged rows (before ``post``)
    union: Node | None = None                    # the UNION ALL node the merge is (several leaves)

    @property
    def out_fields(self) -> list:
        """The fields of the rows this input hands its operator: after ``post`` (a projection
        there may change a column's type, such as ``x / 4.0`` over a UNION ALL)."""
        return list(self.post[-1].fields) if self.post else list(self.fields)


@dataclass
class Stage:
    index: int
    node: Node | None                    # the stateful plan node; None for the sink's merge
    inputs: list[StageInput]


def build_stages(root: Node) -> list[Stage]:
    stages: list[Stage] = []

    def leaf(n: Node) -> Leaf:
        chain = []
        while isinstance(n, (Filter, Project)):
            chain.append(n)
            n = n.input
        chain.reverse()
        if isinstance(n, StreamScan):
            return Leaf(n.stream, None, chain)
        if isinstance(n, Union):
            raise SqlError("a UNION ALL under a ROWTIME expression that is not a fixed shift is not "
                           "supported on the Spark engine yet")
        return Leaf(None, stage_of(n), chain)

    def stage_input(n: Node) -> StageInput:
        post = []
        while isinstance(n, (Filter, Project)) and _reaches_union(n):
            post.append(n)
            n = n.input
        post.reverse()
        if isinstance(n, Union):
            return StageInput([leaf(i) for i in n.inputs_], post, list(n.fields), n)
        lf = leaf(n)
        return StageInput([lf], [], list(n.fields))

    def stage_of(n: Node) -> int:
        ins = [stage_input(i) for i in stream_inputs(n)]
        st = Stage(len(stages), n, ins)
        stages.append(st)
        return st.index

    sink_in = stage_input(root)
    stages.append(Stage(len(stages), None, [sink_in]))
    return stages


@dataclass
class TraceHost:
    """One operator of the trace, in the local runtime's order (inputs before their reader):
    ``stage``'s operator, or (``input`` set) the merge of that stage's input (a UNION ALL)."""
    name: str
    inputs: list
    stage: int
    input: int | None = None


def trace_hosts(root: Node, stages: list[Stage]) -> list[TraceHost]:
    """The operators the trace lists for a normalized plan cut into ``stages`` (the local runtime
    builds the same list from the same plan)."""
    by_node = {id(st.node): st.index for st in stages if st.node is not None}
    by_union = {id(inp.union): (st.index, i) for st in stages for i, inp in enumerate(st.inputs)
                if inp.union is not None}
    out: list[TraceHost] = []

    def walk(n: Node) -> None:
        while isinstance(n, (Filter, Project)):
            n = n.input
        if isinstance(n, StreamScan):
            return
        ins = n.inputs_ if isinstance(n, Union) else stream_inputs(n)
        for i in ins:
            walk(i)
        labels = [input_label(i) for i in ins]
        if isinstance(n, Union):
            z, i = by_union[id(n)]
            out.append(TraceHost("union", labels, z, i))
        else:
            out.append(TraceHost(type(n).__name__.lower(), labels, by_node[id(n)]))
    walk(root)
    return out


def _reaches_union(n: Node) -> bool:
    while isinstance(n, (Filter, Project)):
        n = n.input
    return isinstance(n, Union)
