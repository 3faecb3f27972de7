"""A saved scenario's expected lines: what the query released and refused, renumbered by the
events file's lines, or (saved from the start) what a query started before the first event
releases, replayed on a fresh in-process workbench."""
from __future__ import annotations

import bisect
import io
import json
import logging
import threading
from typing import Callable

#: the name ``streamsql replay`` gives the one query of a saved scenario (the first unnamed query
#: of a fresh workbench), which its calculator error messages start with
REPLAY_QUERY = "q1"


class Released:
    """What a query released and refused, renumbered by the events file's lines
    (``replay_lines`` reads it like a query)."""

    def __init__(self, fields, rows, bounds: dict[int, int], errors: list | None = None):
        self.fields, self.rows, self.bounds = fields, rows, bounds
        self.errors = errors or []
        self._steps = sorted(bounds)

    def output_bound_at(self, step: int):
        i = bisect.bisect_right(self._steps, step)
        return self.bounds[self._steps[i - 1]] if i else None


class _ThisThread(logging.Filter):
    """Drops the log records of the thread that made it."""

    def __init__(self):
        super().__init__()
        self.thread = threading.get_ident()

    def filter(self, record) -> bool:
        return record.thread != self.thread


def replay_lines_of(scratch: Callable, sql: str, lines: list[dict]) -> list[dict]:
    """Lines ``streamsql replay --bounds --engine local`` prints for these events, on the fresh
    temporary in-process workbench ``scratch()`` opens."""
    from ..events import event_from_json
    from ..replay import replay_into
    out = io.StringIO()
    quiet = _ThisThread()                  # the session already reported these late rows
    late = logging.getLogger("streamsql.late")
    late.addFilter(quiet)
    try:
        with scratch() as tmp:
            replay_into(tmp, sql, [event_from_json(dict(x)) for x in lines], bounds=True, out=out)
    finally:
        late.removeFilter(quiet)
    return [json.loads(x) for x in out.getvalue().splitlines() if x.strip()]


# --------------------------------------------------------------------------- saving
