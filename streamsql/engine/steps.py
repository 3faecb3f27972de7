"""What happened at each step, in the forms people read: replay lines (the replay format, semantics section 5)
and the seed's step tables (Step | input streams | Output).

The per-event records themselves are kept by the workbench (``Workbench.event_trace``: each
event's outcome, the stream clock before and after, eclipsed bounds) and by each query
(``ContinuousQuery.trace``: typed step records, ``runtime/trace_records.py``, whose one formatter,
:func:`describe_wait`, is re-exported here).
"""
from __future__ import annotations

import datetime as _dt
import math
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa

from . import time as sqltime
from .catalog import DEFAULT_PRODUCER, Outcome
from .runtime.trace_records import describe_reason, describe_wait  # noqa: F401  (the trace's words)
from .types import format_value, to_json_value


@dataclass
class Step:
    step: int
    outcome: Outcome | None
    rows: list = field(default_factory=list)      # OutputRow released at this step
    bound: int | None = None                      # output bound after the step, when it changed
    errors: list = field(default_factory=list)    # calculator errors at this step (OperatorError)


def steps(query, outcomes: list[Outcome], base: int = 0) -> list[Step]:
    """Join each event's outcome with what the query released and refused at it, by step."""
    by: dict[int, Step] = {}
    for o in outcomes:
        by[o.step - base] = Step(o.step - base, o)
    for e in getattr(query, "errors", []):
        if e.is_calc:
            by.setdefault(e.step - base, Step(e.step - base, None)).errors.append(e)
    for r in query.rows:
        by.setdefault(r.step - base, Step(r.step - base, None)).rows.append(r)
    for s, b in query.bounds.items():
        by.setdefault(s - base, Step(s - base, None)).bound = b
    return [by[k] for k in sorted(by)]


class BoundLines:
    """The bound-line rule of the semantics, section 5, in one place: a bound line is printed when
    the output bound moves past both the last bound line and the last released row. Feed it the
    rows in release order (:meth:`row`) and ask at each step's end (:meth:`line`)."""

    def __init__(self):
        self.last_bound = self.last_row = sqltime.NO_TIME

    def row(self, rowtime: int) -> None:
        self.last_row = max(self.last_row, rowtime)

    def line(self, bound: int | None) -> bool:
        """Whether the output bound after this step gets a line (and, if so, it is the last)."""
        if bound is None or bound <= self.last_bound or bound <= self.last_row:
            return False
        self.last_bound = bound
        return True


def replay_lines(query, outcomes: list[Outcome], base: int = 0, bounds: bool = False,
                 stream_names: dict[str, str] | None = None) -> list[dict]:
    """The replay output of section 5: calculator errors, rows, late rows, refused events and
    (optionally) bound lines, in release order."""
    names = stream_names or {}
    out = []
    lines = BoundLines()
    fields = query.fields
    for st in steps(query, outcomes, base):
        for e in st.errors:
            out.append({"step": st.step, "calc_error": calc_error_line(e, names)})
        for r in st.rows:
            out.append({"step": st.step, "rowtime": sqltime.format_timestamp(r.rowtime),
                        "values": {f.name: to_json_value(v, f.type) for f, v in zip(fields, r.values)}})
            lines.row(r.rowtime)
        o = st.outcome
        if o is not None and o.status == "late":
            out.append({"step": st.step, "late": {"stream": names.get(o.event.stream, o.event.stream),
                                                   "rowtime": sqltime.format_timestamp(o.event.rowtime),
                                                   "clock": sqltime.format_timestamp(o.clock)}})
        elif o is not None and o.status == "error":
            out.append({"step": st.step, "error": o.message})
        if bounds:
            b = query.output_bound_at(st.step + base)
            if lines.line(b):
                out.append({"step": st.step, "bound": sqltime.format_timestamp(b)})
    return out


def calc_error_line(e, names: dict | None = None) -> dict:
    """The ``calc_error`` object of a replay line (the semantics, section 5)."""
    names = names or {}
    return {"rowtime": sqltime.format_timestamp(e.data_rowtime), "name": e.name, "sqlstate": e.sqlstate,
            "stream": names.get(e.stream, e.stream), "message": e.message}


def comparable(v):
    """A replay line (or part of one) as the replay format compares them (the semantics, section 5): keys
    case-insensitively, numbers as numbers."""
    if isinstance(v, dict):
        return {str(k).lower(): comparable(x) for k, x in v.items()}
    if isinstance(v, list):
        return [comparable(x) for x in v]
    if isinstance(v, bool) or v is None or isinstance(v, str):
        return v
    if isinstance(v, (int, float)):
        return float(v)
    return v


def lines_agree(got: list[dict], expected: list[dict]) -> bool:
    """Whether replay lines agree with a scenario's expected lines, as the replay format compares
    them (the semantics, section 5): keys case-insensitively, numbers numerically (to a relative
    1e-9), timestamps as instants; a ``late`` or ``calc_error`` object may carry more keys than
    expected. Bound lines count only when the expected lines have some."""
    if not any("bound" in e for e in expected):
        got = [g for g in got if "bound" not in g]
    return len(got) == len(expected) and all(_line_agrees(_lower(g), _lower(e)) for g, e in zip(got, expected))


def _lower(line: dict) -> dict:
    return {str(k).lower(): ({str(kk).lower(): vv for kk, vv in v.items()} if isinstance(v, dict) else v)
            for k, v in line.items()}


def _line_agrees(got: dict, exp: dict, subset: bool = False) -> bool:
    if not (set(exp) <= set(got) if subset else set(got) == set(exp)):
        return False
    for k, e in exp.items():
        g = got[k]
        if isinstance(e, dict) and isinstance(g, dict):
            if not _line_agrees(g, e, subset=k in ("late", "calc_error")):
                return False
        elif not _same_value(g, e):
            return False
    return True


def _same_value(a, b) -> bool:
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, bool) or isinstance(b, bool):
        return a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return math.isclose(float(a), float(b), rel_tol=1e-9, abs_tol=1e-12)
    ta, tb = _instant(a), _instant(b)
    if ta is not None and tb is not None:
        return ta == tb
    return a == b


def _instant(v):
    """A timestamp string as an instant (``T`` or a space between date and time, a ``Z``)."""
    if not isinstance(v, str):
        return None
    try:
        return _dt.datetime.fromisoformat(v.strip().replace("T", " ").rstrip("Z")).replace(tzinfo=None)
    except ValueError:
        return None


def _short(ms: int | None) -> str:
    return sqltime.show_time(ms, short=True)


def event_text(ev, *, kind_first: bool = False, stream: bool = False) -> str:
    """One event in words, the one describer of the step tables, scenarios and views: ``10:00 1
    ORCL 100``, ``10:11 strict bound``, ``P1: detach`` (a step table's cell); ``kind_first``:
    ``row 10:00 1 ORCL 100``, ``strict bound 10:11`` (a scenario's list); ``stream``: the
    stream's name first."""
    who = f"{ev.stream} " if stream else ""
    who += f"{ev.producer}: " if ev.producer and ev.producer != "default" else ""
    if ev.kind == "row":
        vals = " ".join(format_value(v) for v in (ev.values or {}).values())
        s = f"row {_short(ev.rowtime)} {vals}" if kind_first else f"{_short(ev.rowtime)} {vals}"
    elif ev.kind == "bound":
        b = f"{'strict ' if ev.strict else ''}bound"
        s = f"{b} {_short(ev.rowtime)}" if kind_first else f"{_short(ev.rowtime)} {b}"
    else:
        s = ev.kind
    return f"{who}{s}".rstrip()


def describe_event(o: Outcome, fields=None) -> str:
    """One cell of a step table: the event (:func:`event_text`) and what became of it."""
    s = event_text(o.event)
    if o.status == "late":
        s += f" (late: clock {_short(o.clock)})"
    elif o.status == "error":
        s += " (refused)"
    elif o.status == "eclipsed":
        s += " (eclipsed)"
    return s


def step_table(query, outcomes: list[Outcome], base: int = 0, streams: list[str] | None = None) -> list[list[str]]:
    """Rows of the seed's step table: ``[step, <one cell per input stream>, output]``, with a
    header row first. Output cells list the rows released at the step, ``rowtime values``, after
    the rows refused there for a calculator error (``✗ rowtime ERROR_NAME``)."""
    streams = streams or list(dict.fromkeys(o.event.stream for o in outcomes))
    header = ["Step"] + streams + ["Output"]
    rows = [header]
    fields = query.fields
    for st in steps(query, outcomes, base):
        cells = [""] * len(streams)
        if st.outcome is not None and st.outcome.event.stream in streams:
            cells[streams.index(st.outcome.event.stream)] = describe_event(st.outcome)
        # a row an operator refused (a calculator error) is marked first, as replay prints it
        outs = ["; ".join([f"✗ {_short(e.data_rowtime)} {e.name}" for e in st.errors]
                          + [_short(r.rowtime) + " " + " ".join(format_value(v, f.type) for f, v in zip(fields, r.values))
                             for r in st.rows])]
        rows.append([str(st.step)] + cells + outs)
    return rows


def format_table(rows: list[list[str]]) -> str:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = []
    for k, r in enumerate(rows):
        lines.append(" | ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
        if k == 0:
            lines.append("-+-".join("-" * w for w in widths))
    return "\n".join(lines)


# ------------------------------------------------------------------ the workbench's per-event records

def event_record(o: Outcome) -> dict:
    """One ``Workbench.event_trace`` record: an injected event, its outcome, and the stream's
    clock before and after it."""
    return {"step": o.step, "stream": o.event.stream, "producer": o.event.producer or DEFAULT_PRODUCER,
            "kind": o.event.kind, "rowtime": o.event.rowtime, "strict": o.event.strict,
            "values": o.event.values, "status": o.status, "message": o.message, "clock": o.clock,
            "bound_before": o.bound_before, "bound_after": o.bound_after, "released": o.released,
            "eclipsed": o.status == "eclipsed"}


def traced_events(event_trace: list[dict], load_trace: list, after: int = 0, streams=None,
                  last: int | None = None) -> list[dict]:
    """``Workbench.traced_events``: the records of ``event_trace`` and of the loads'
    ``load_trace`` tables after step ``after`` on ``streams`` (all when None), in step order;
    ``last`` keeps only the last ones, so that a loaded million becomes records only as asked."""
    keep = None if streams is None else set(streams)
    recs = [r for r in list(event_trace)
            if r["step"] > after and (keep is None or r["stream"] in keep)]
    if last is not None:
        recs = recs[-last:]
    for stream, t in list(load_trace):
        if keep is not None and stream not in keep:
            continue
        steps = t.column("step").to_numpy()
        lo = int(np.searchsorted(steps, after, side="right"))
        if lo >= len(steps):
            continue
        if last is not None:
            lo = max(lo, len(steps) - last)
        recs += load_records(stream, t.slice(lo))
    recs.sort(key=lambda r: r["step"])
    return recs[-last:] if last is not None else recs


def traced_rowtimes(event_trace: list[dict], load_trace: list, after: int = 0,
                    streams=None) -> dict[str, np.ndarray]:
    """``Workbench.traced_rowtimes``: the rowtimes of the rows that entered each stream after
    step ``after``, as arrays (a binned view of many events needs no record per event)."""
    keep = None if streams is None else set(streams)
    out: dict[str, list] = {}
    for r in list(event_trace):
        if r["step"] > after and r["kind"] == "row" and r["status"] == "ok" and (keep is None or r["stream"] in keep):
            out.setdefault(r["stream"], []).append(np.array([r["rowtime"]], dtype=np.int64))
    for stream, t in list(load_trace):
        if keep is not None and stream not in keep:
            continue
        mask = np.asarray(t.column("step").to_numpy() > after) & \
            np.asarray(t.column("kind").to_numpy(zero_copy_only=False) == "row") & \
            np.asarray(t.column("status").to_numpy(zero_copy_only=False) == "ok")
        out.setdefault(stream, []).append(t.column("rowtime").to_numpy()[mask])
    return {s: np.concatenate(parts) for s, parts in out.items()}


def load_records(stream: str, t: pa.Table) -> list[dict]:
    """``event_trace`` records for the events of a load's trace table."""
    cols = t.to_pydict()
    names = [c for c in t.column_names if c.startswith("v:")]
    out = []
    for i in range(t.num_rows):
        row = cols["kind"][i] == "row"
        out.append({"step": cols["step"][i], "stream": stream, "producer": DEFAULT_PRODUCER, "kind": cols["kind"][i],
                    "rowtime": cols["rowtime"][i], "strict": False,
                    "values": {n[2:]: cols[n][i] for n in names} if row else None,
                    "status": cols["status"][i], "message": cols["message"][i],
                    "clock": cols["clock"][i] if cols["status"][i] == "late" else None,
                    "bound_before": cols["clock"][i], "bound_after": cols["after"][i],
                    "released": cols["released"][i], "eclipsed": cols["status"][i] == "eclipsed", "loaded": True})
    return out
