"""The local runtime: runs a query's plan in-process, one injected event at a time.

It is the oracle the Spark runtime is checked against, so it stays literal: every node keeps its
output bound, every stateful node applies the release rule (the semantics, section 3) after each
event, and nothing is batched, bucketed or skipped.

Rows an operator refuses (calculator errors, a T-sort's late rows) become error records at the
step that brought the row to the operator (the semantics, sections 1 and 5); within a step they are listed
operator by operator, inputs before the operators they feed (post-order), each in processing
order. Every row carries the named stream it came from, which is the error's STREAM_NAME.
"""
from __future__ import annotations

import copy
import heapq
from dataclasses import replace

from ... import time as sqltime
from ...catalog import LogEntry
from ...log import ROW
from ...functions import CalcError
from ...operators.base import Candidate, Operator, Rejected, calc_error
from ...operators.release import limit, output_bound, release_arrival, release_order, split_due, stream_arrival
from ...operators.scalar import RowFunction
from ...plan import Filter, Node, Project, Query, StreamScan, Union
from ..released import OutputRow, ReleasedBatch
from ..trace_records import TRACE_HELD, StepTrace, operator_trace
from ...operators.union import UnionOp
from ..plans import make_operator, normalize, post_order, stream_inputs

Rows = list  # [(rowtime, arrival, row, stream it came from)]


class _Node:
    clock: int = sqltime.NO_TIME
    name: str = ""
    index: int = 0          # post-order position (inputs first): the order of its errors in a step

    def label(self) -> str:
        return self.name

    def origin(self) -> str:
        """The named stream rows of this node come from (the first input's, past a merge)."""
        return self.name

    def take_errors(self) -> list:
        return []

    def step(self, at_step: int, feed: dict[str, list[LogEntry]]) -> Rows:
        raise NotImplementedError

    def trace(self) -> list:
        return []


class _Scan(_Node):
    def __init__(self, stream: str, clock: int = sqltime.NO_TIME):
        self.stream = stream
        self.name = stream
        self.clock = clock

    def step(self, at_step, feed):
        entries = feed.get(self.stream)
        if not entries:
            return []
        self.clock = max(self.clock, entries[-1].clock)
        return [(e.rowtime, stream_arrival(at_step, i), e.values, self.stream) for i, e in enumerate(entries) if e.kind == ROW]


class _RowFn(_Node):
    def __init__(self, node: Filter | Project, child: _Node):
        self.fn = RowFunction(node)
        self.child = child
        self.name = type(node).__name__.lower()
        self.defer = node.defer_errors
        self.errors: list = []

    def step(self, at_step, feed):
        rows = self.child.step(at_step, feed)
        self.clock = self.fn.map_bound(self.child.clock)
        out = []
        apply = self.fn.apply
        for rt, arr, row, src in rows:
            if isinstance(row, Rejected):          # failed below, fails where the merge releases it
                out.append((rt, arr, row, src))
                continue
            try:
                r = apply(rt, row)
            except CalcError as err:
                e = calc_error(err, at_step, rt, self.fn.fields, row)
                e.stream = src
                if self.defer:
                    out.append((rt, arr, Rejected.of(row, e), src))
                else:
                    self.errors.append(e)
                continue
            if r is not None:
                out.append((r[0], arr, r[1], src))
        return out

    def take_errors(self) -> list:
        out, self.errors = self.errors, []
        return out

    def trace(self):
        return self.child.trace()

    def label(self) -> str:
        return self.child.label()

    def origin(self) -> str:
        return self.child.origin()


class _Host(_Node):
    """Hosts a stateful operator and applies the release rule after every event."""

    def __init__(self, op: Operator, children: list[_Node], name: str):
        self.op = op
        self.children = children
        self.name = name
        self.pending: list[Candidate] = []
        self.present = sqltime.NO_TIME
        self.future = sqltime.NO_TIME
        self.clocks: list[int] = [sqltime.NO_TIME] * len(children)
        self.errors: list = []
        self.merge = isinstance(op, UnionOp)

    def origin(self) -> str:
        return self.children[0].origin() if self.children else self.name

    def take_errors(self) -> list:
        out, self.errors = self.errors, []
        return out

    def step(self, at_step, feed):
        inputs = [c.step(at_step, feed) for c in self.children]
        clocks = [c.clock for c in self.children]
        self.clocks = clocks
        cands: list[Candidate] = []
        take = getattr(self.op, "take_errors", None)
        for ch, rows in enumerate(inputs):
            for rt, arr, row, src in rows:
                new = self.op.on_row(ch, at_step, rt, row, clocks, arr)
                if self.merge:
                    for c in new:
                        c.origin = src
                cands += new
                if take is not None:
                    for e in take():
                        e.stream = src
                        self.errors.append(e)
        cands += self.op.on_clocks(at_step, clocks)
        if take is not None:
            for e in take():
                e.stream = self.children[e.channel].origin()
                self.errors.append(e)
        self.pending += cands
        self.present = min(clocks)
        self.future = self.op.future_bound(clocks)
        out, self.pending = split_due(self.pending, limit(self.present, self.future))
        out.sort(key=release_order)
        self.clock = output_bound(self.future, self.pending, sqltime.END_OF_TIME)
        rows = []
        mine = self.origin()
        for c in out:
            if isinstance(c.row, Rejected):        # a deferred failure, released by the merge now
                self.errors.append(replace(c.row.error, step=at_step))
                continue
            rows.append((c.stamp, release_arrival(at_step, c.stamp, c.tie), c.row, getattr(c, "origin", mine)))
        return rows

    def trace(self):
        names = [c.label() for c in self.children]
        first = heapq.nsmallest(TRACE_HELD, self.pending, key=release_order)
        state = self.op.trace_state([self.op.state_view()])
        mine = operator_trace(self.op, self.name, names, list(self.clocks), self.future,
                              [(c.stamp, tuple(c.row)) for c in first], len(self.pending), state)
        return [t for c in self.children for t in c.trace()] + [mine]

    def label(self) -> str:
        return self.name


def _build(node: Node, tables, clocks, nodes: list, order: dict) -> _Node:
    if isinstance(node, StreamScan):
        n = _Scan(node.stream, clocks.get(node.stream, sqltime.NO_TIME))
    elif isinstance(node, (Filter, Project)):
        n = _RowFn(node, _build(node.input, tables, clocks, nodes, order))
    elif isinstance(node, Union):
        n = _Host(UnionOp(len(node.inputs_)), [_build(i, tables, clocks, nodes, order) for i in node.inputs_],
                  "union")
    else:
        op = make_operator(node, tables)
        n = _Host(op, [_build(i, tables, clocks, nodes, order) for i in stream_inputs(node)],
                  type(node).__name__.lower())
    n.index = order[id(node)]
    nodes.append(n)
    return n


class LocalQuery:
    """A running query on the local runtime. Feed it the stream-log entries of each event.
    ``name`` is the query's, which calculator error messages start with."""

    def __init__(self, query: Query, tables=None, start_clocks: dict | None = None, name: str = ""):
        self.query = query
        self.name = name
        self._nodes: list[_Node] = []
        plan = normalize(copy.deepcopy(query.root))
        self.root = _build(plan, tables or {}, start_clocks or {}, self._nodes, post_order(plan))
        self._nodes.sort(key=lambda n: n.index)
        self.streams = set(query.streams)

    @property
    def output_bound(self) -> int:
        return self.root.clock

    def process(self, step: int, feed: dict[str, list[LogEntry]]) -> ReleasedBatch:
        if not any(s in self.streams for s in feed):
            return ReleasedBatch(step, [], self.root.clock)
        rows = self.root.step(step, feed)
        errors = []
        for n in self._nodes:                    # post-order: inputs before what they feed
            for e in n.take_errors():
                if e.is_calc and self.name:
                    e.message = f"Query {self.name}: {e.message}"
                e.stream = e.stream or n.origin()
                errors.append((e.stream, e))
        return ReleasedBatch(step, [OutputRow(step, rt, row) for rt, _arr, row, _src in rows], self.root.clock, errors)

    def trace(self) -> list:
        """The operators' trace records after the last event (OperatorTrace, inputs first)."""
        return self.root.trace()

    def step_trace(self, b: ReleasedBatch) -> StepTrace:
        """The trace record of the event that gave ``b``."""
        return StepTrace(b.step, tuple(self.root.trace()), len(b.rows), b.bound)
