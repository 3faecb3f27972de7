"""The local runtime: runs a query's plan in-process, one injected event at a time.

It is the oracle the Spark runtime is checked against, so it stays literal: every node keeps its
output clock, every stateful node applies the release rule of SEMANTICS.md section 3 after each
event, and nothing is batched, bucketed or skipped.
"""
from __future__ import annotations

import copy
import heapq
from typing import Iterable

from ... import time as T
from ...catalog import LogEntry
from ...log import ROW
from ...operators.base import Candidate, Operator, encode_ints, release_arrival
from ...operators.scalar import RowFunction
from ...plan import Filter, Node, Project, Query, StreamScan, Union
from ..records import OutputRow, ReleasedBatch
from ..tracing import TRACE_HELD, StepTrace, operator_trace
from ...operators.union import UnionOp
from ..plans import make_operator, normalize, stream_inputs

Rows = list  # [(rowtime, arrival, row)]


class _Node:
    clock: int = T.NO_TIME
    name: str = ""

    def label(self) -> str:
        return self.name

    def step(self, seq: int, feed: dict[str, list[LogEntry]]) -> Rows:
        raise NotImplementedError

    def trace(self) -> list:
        return []


class _Scan(_Node):
    def __init__(self, stream: str, clock: int = T.NO_TIME):
        self.stream = stream
        self.name = stream
        self.clock = clock

    def step(self, seq, feed):
        entries = feed.get(self.stream)
        if not entries:
            return []
        self.clock = max(self.clock, entries[-1].clock)
        return [(e.rowtime, encode_ints(seq, i), e.values) for i, e in enumerate(entries) if e.kind == ROW]


class _RowFn(_Node):
    def __init__(self, node: Filter | Project, child: _Node):
        self.fn = RowFunction(node)
        self.child = child
        self.name = type(node).__name__.lower()

    def step(self, seq, feed):
        rows = self.child.step(seq, feed)
        self.clock = self.fn.map_bound(self.child.clock)
        out = []
        for rt, arr, row in rows:
            r = self.fn.apply(rt, row)
            if r is not None:
                out.append((r[0], arr, r[1]))
        return out

    def trace(self):
        return self.child.trace()

    def label(self) -> str:
        return self.child.label()


class _Host(_Node):
    """Hosts a stateful operator and applies the release rule after every event."""

    def __init__(self, op: Operator, children: list[_Node], name: str):
        self.op = op
        self.children = children
        self.name = name
        self.pending: list[Candidate] = []
        self.present = T.NO_TIME
        self.future = T.NO_TIME
        self.clocks: list[int] = [T.NO_TIME] * len(children)
        self.errors: list = []

    def step(self, seq, feed):
        inputs = [c.step(seq, feed) for c in self.children]
        clocks = [c.clock for c in self.children]
        self.clocks = clocks
        cands: list[Candidate] = []
        for ch, rows in enumerate(inputs):
            for rt, arr, row in rows:
                cands += self.op.on_row(ch, seq, rt, row, clocks, arr)
        cands += self.op.on_clocks(seq, clocks)
        take = getattr(self.op, "take_errors", None)
        if take is not None:
            self.errors += take()
        self.pending += cands
        self.present = min(clocks)
        self.future = self.op.future_bound(clocks)
        limit = min(self.present, self.future)
        out, keep = [], []
        for c in self.pending:
            (out if c.stamp <= limit else keep).append(c)
        self.pending = keep
        out.sort(key=lambda c: (c.stamp, c.tie))
        held = min((c.stamp for c in keep), default=T.END_OF_TIME)
        self.clock = min(self.future, held)
        return [(c.stamp, release_arrival(seq, c.stamp, c.tie), c.row) for c in out]

    def trace(self):
        names = [c.label() for c in self.children]
        first = heapq.nsmallest(TRACE_HELD, self.pending, key=lambda c: (c.stamp, c.tie))
        state = self.op.trace_state([self.op.state_view()])
        mine = operator_trace(self.op, self.name, names, list(self.clocks), self.future,
                              [(c.stamp, tuple(c.row)) for c in first], len(self.pending), state)
        return [t for c in self.children for t in c.trace()] + [mine]

    def label(self) -> str:
        return self.name


def _build(node: Node, tables, clocks) -> _Node:
    if isinstance(node, StreamScan):
        return _Scan(node.stream, clocks.get(node.stream, T.NO_TIME))
    if isinstance(node, (Filter, Project)):
        return _RowFn(node, _build(node.input, tables, clocks))
    if isinstance(node, Union):
        return _Host(UnionOp(len(node.inputs_)), [_build(i, tables, clocks) for i in node.inputs_], "union")
    op = make_operator(node, tables)
    return _Host(op, [_build(i, tables, clocks) for i in stream_inputs(node)], type(node).__name__.lower())


class LocalQuery:
    """A running query on the local runtime. Feed it the stream-log entries of each event."""

    def __init__(self, query: Query, tables=None, start_clocks: dict | None = None):
        self.query = query
        self.root = _build(normalize(copy.deepcopy(query.root)), tables or {}, start_clocks or {})
        self.streams = set(query.streams)
        self._hosts = []
        todo = [self.root]
        while todo:
            n = todo.pop()
            if isinstance(n, _Host):
                self._hosts.append(n)
                n.input_stream = n.children[0].label() if n.children else query.streams[0]
                todo += n.children
            elif isinstance(n, _RowFn):
                todo.append(n.child)

    @property
    def output_bound(self) -> int:
        return self.root.clock

    def process(self, seq: int, feed: dict[str, list[LogEntry]]) -> ReleasedBatch:
        if not any(s in self.streams for s in feed):
            return ReleasedBatch(seq, [], self.root.clock)
        rows = self.root.step(seq, feed)
        errors = []
        for h in self._hosts:
            if h.errors:
                errors += [(h.input_stream, e) for e in h.errors]
                h.errors = []
        return ReleasedBatch(seq, [OutputRow(seq, rt, row) for rt, _arr, row in rows], self.root.clock, errors)

    @property
    def refuses_rows(self) -> bool:
        """Whether an operator may refuse rows for the error stream (a T-sort)."""
        return any(hasattr(h.op, "take_errors") for h in self._hosts)

    def process_all(self, events: Iterable[tuple[int, dict[str, list[LogEntry]]]]) -> list[ReleasedBatch]:
        return [self.process(seq, feed) for seq, feed in events]

    def trace(self) -> list:
        """The operators' trace records after the last event (OperatorTrace, inputs first)."""
        return self.root.trace()

    def step_trace(self, b: ReleasedBatch) -> StepTrace:
        """The trace record of the event that gave ``b``."""
        return StepTrace(b.seq, tuple(self.root.trace()), len(b.rows), b.bound)
