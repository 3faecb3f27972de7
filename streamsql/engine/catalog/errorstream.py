"""The error stream ``ERRORS``: its columns, and the rows the catalog writes to it for a late row,
a row a query's operator refused (a calculator error, a T-sort's late row) and a row a pump could
not insert. Its rowtime is the clock the row violated (made non-decreasing across streams), never
the wall clock; the log gets the 1st, 10th, 100th ... of each kind."""
from __future__ import annotations

import logging

from .. import lateness
from ..plan import Field
from ..types import SqlType, dumps_row, to_json_value
from .definitions import DEFAULT_PRODUCER, Event, LogEntry, StreamDef
from .producers import StreamState

log = logging.getLogger("streamsql.late")
calc_log = logging.getLogger("streamsql.calc")   # calculator errors: the 1st, 10th, ... per query

ERROR_STREAM = "ERRORS"

ERROR_FIELDS = [
    Field("ERROR_TIME", SqlType("TIMESTAMP", nullable=False)),
    Field("ERROR_LEVEL", SqlType("VARCHAR", 10, nullable=False)),
    Field("ERROR_NAME", SqlType("VARCHAR", 40, nullable=False)),
    Field("MESSAGE", SqlType("VARCHAR", nullable=False)),
    Field("DATA_ROWTIME", SqlType("TIMESTAMP")),
    Field("DATA_ROW", SqlType("VARCHAR")),
    Field("STREAM_NAME", SqlType("VARCHAR", 128, nullable=False)),
    Field("PRODUCER", SqlType("VARCHAR", 128)),
    Field("STEP", SqlType("BIGINT", nullable=False)),
]


class ErrorStream:
    """Writes the error stream's rows into a commit's log entries (``out[ERROR_STREAM]``),
    keeping its state (``est``: the error stream's :class:`StreamState`; ``calc_counts``: the
    calculator errors so far, per query, for the log's powers of ten)."""

    def __init__(self, est: StreamState, calc_counts: dict[str, int]):
        self.est = est
        self.calc_counts = calc_counts

    def late_row(self, d: StreamDef, st: StreamState, ev: Event, values: tuple, step: int, clock: int,
                 by_producer: bool, out: dict[str, list[LogEntry]]) -> None:
        """A late row of stream ``d`` (``values``: as typed, or as given when they do not fit)."""
        data = {f.name: to_json_value(v, f.type) for f, v in zip(d.fields, values)}
        t, row = lateness.reject(st, self.est, d.name, ev.rowtime, clock, data, ev.producer or DEFAULT_PRODUCER,
                                 step, by_producer=by_producer)
        out.setdefault(ERROR_STREAM, []).append(LogEntry(step, 0, t, t, row))

    def operator_error(self, step: int, stream: str, producer: str, err, out: dict) -> None:
        """A row a query's operator refused goes to the error stream at the step that refused
        it, stamped with the bound it violated (a calculator error: the row's rowtime)."""
        est = self.est
        t = max(est.bound, err.bound)
        est.bound = t
        est.rows_in += 1
        out.setdefault(ERROR_STREAM, []).append(LogEntry(step, 0, t, t, err.error_values(stream, t, producer)))
        if err.is_calc:
            # the 1st, 10th, 100th ... calculator error of each query; the message names the query,
            # the expression and its operands
            n = self.calc_counts[producer] = self.calc_counts.get(producer, 0) + 1
            if lateness.is_power_of_ten(n):
                calc_log.warning("calculator error #%d (step %d): %s", n, step, err.message)
        elif lateness.is_power_of_ten(est.rows_in):
            log.warning("%s in query %s (step %d): %s", err.name.lower().replace("_", " "), producer, step,
                        err.message)

    def pump_error(self, step: int, target: str, target_bound: int, pump: str, message: str, rowtime: int,
                   values: dict, out: dict) -> None:
        """A row a pump could not insert into its target (it does not fit the target's columns)."""
        est = self.est
        t = max(est.bound, target_bound)
        est.bound = t
        est.rows_in += 1
        data = {k: to_json_value(v) for k, v in values.items()}
        row = (t, "ERROR", "PUMP_ROW_REFUSED", f"Pump {pump} could not insert into {target}: {message}", rowtime,
               dumps_row(data), target, pump, step)
        out.setdefault(ERROR_STREAM, []).append(LogEntry(step, 0, t, t, row))
        log.warning("pump %s (step %d): %s", pump, step, message)

