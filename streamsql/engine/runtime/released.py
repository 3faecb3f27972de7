"""What a running query hands back, the same from both runtimes: released rows with the step
(sequence number of the event) that released them, the output bound after each event, and the
rows an operator refused (for the error stream)."""
from __future__ import annotations

from dataclasses import dataclass, field



@dataclass(frozen=True)
class OutputRow:
    """A released row: the step that released it, its rowtime (epoch milliseconds) and the select list's values."""
    step: int
    rowtime: int
    values: tuple


@dataclass
class ReleasedBatch:
    """Rows released by one event (in release order) and the query's output bound after it."""
    step: int
    rows: list[OutputRow] = field(default_factory=list)
    bound: int | None = None
    errors: list = field(default_factory=list)   # (input stream, operators.base.OperatorError) at this step

