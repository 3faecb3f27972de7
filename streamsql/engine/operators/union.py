"""UNION ALL: the ordered merge. It holds nothing itself; the release rule (stamp <= present)
makes a row wait until every other input's clock has reached it (the semantics, section 3.2)."""
from __future__ import annotations

from .base import Candidate, Operator, encode_ints


class UnionOp(Operator):
    def __init__(self, n_inputs: int):
        self.n_inputs = n_inputs

    def on_row(self, ch, step, rowtime, row, clocks, arrival):
        return [Candidate(rowtime, union_tie(ch, arrival), row)]


def union_tie(channel: int, arrival: bytes) -> bytes:
    """The tie key of a merged row: its input's position in the query, then its arrival within
    that input (the semantics, section 3.2). Both runtimes build it here: the local one in
    :class:`UnionOp`, the Spark one where a stage input merges its leaves."""
    return encode_ints(channel) + arrival
