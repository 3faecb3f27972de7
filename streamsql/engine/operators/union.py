"""UNION ALL: the ordered merge. It holds nothing itself; the release rule (stamp <= present)
makes a row wait until every other input's clock has reached it (the semantics, section 3.2)."""
from __future__ import annotations

from .base import Candidate, Operator, encode_ints


class UnionOp(Operator):
    def __init__(self, n_inputs: int):
        self.n_inputs = n_inputs

    def on_row(self, ch, seq, rowtime, row, clocks, arrival):
        # ties: inputs in query order, then arrival order within an input
        return [Candidate(rowtime, encode_ints(ch) + arrival, row)]
