"""What a row of a Spark stage's frame is: the ``ev`` column's codes, in one place. The source
writes rows and timelines; stages add their reports and the rows their operators refused."""
from __future__ import annotations

from enum import IntEnum


class FrameCode(IntEnum):
    """The ``ev`` of a frame row (an ``int8`` / ``TINYINT`` column)."""
    ROW = 0         # a row of a stream, or one an upstream operator emitted
    TIMELINE = 2    # a source batch's timeline record: every stream's clock after every step
    REPORT = 3      # an upstream stage's report (its frontier, its trace)
    ERROR = 4       # a row an operator refused (or a leaf's row that failed: ``up`` -1)
