"""Helpers for tutorial notebooks 01-04: the shared scenario files, deterministic text tables
(released rows, clocks, producers, the late-row log), checks of the engine's output against the
seeds' tables, and the exercises' answer checkers.

Everything here prints plain text with no wall-clock times, ids or timings, so that a notebook's
outputs are the same on every run (what ``pytest --nbval`` compares).

The expected answers of the exercises are derived by hand from the rules (the semantics page, ``docs/semantics.md``);
``tests/test_notebooks_01_04.py`` checks each of them against the engine.
"""
from __future__ import annotations

import json
import math
import re
from pathlib import Path

from ..engine import time as sqltime
from ..engine.catalog import Event
from ..engine.errors import StreamSqlError
from ..engine.expr import Call, Rowtime
from ..engine.operators.timekey import TimeKey
from ..engine.sql import split_script
from ..engine.steps import comparable, event_text, replay_lines
from ..engine.types import TIMESTAMP, format_value
# the scenario files, text tables and times, shared with the later tutorials
from .common import Text, _hm, _rel, _table, expected_lines, run_local, scenario_dir, scenario_events, scenario_path, \
    scenario_sql
# calculator errors: the error stream's rows and the check against rows derived by hand (also in 06)
from .common import compare_calc_errors, digest, error_rows

__all__ = [
    "Text", "scenario_dir", "scenario_path", "scenario_sql", "scenario_events", "expected_lines", "show_scenario",
    "play", "engine_lines", "check_scenario", "released", "check_released", "clock_history", "track_producers",
    "late_log", "event_statuses", "side_by_side", "error_rows", "compare_calc_errors",
    "check_filter_query", "check_clock_and_late", "check_log_lines",
    "check_weakest_bound", "check_eclipsed", "check_filter_bounds",
    "check_union_release", "check_producers", "check_ties",
    "check_vwap_at_1030", "check_peers", "check_cascading_query",
]

#: FLOOR(ROWTIME TO HOUR), the hourly groups' key
_HOUR_KEY = Call("FLOOR_TO", (Rowtime(0),), TIMESTAMP.with_nullable(False), arg="HOUR")


# --------------------------------------------------------------------------- scenario files

def describe_event(ev: Event) -> str:
    """``row 03:01 blue``, ``bound 05:00``, ``strict bound 06:59:59.999``, ``P1: attach``."""
    return event_text(ev, kind_first=True)


def show_scenario(name: str) -> Text:
    """A scenario's query and its events, one numbered step per line."""
    rows = [[i, ev.stream, describe_event(ev)] for i, ev in enumerate(scenario_events(name), 1)]
    first = scenario_events(name)[0].rowtime
    day = sqltime.format_timestamp(first)[:10] if first is not None else ""
    return Text(f"{_rel(scenario_dir() / name)}.sql:\n{scenario_sql(name)}\n\n"
                f"{_rel(scenario_dir() / name)}.events.jsonl (times on {day}):\n"
                + _table(["Step", "Stream", "Event"], rows))


def play(wb, name: str, steps: range | tuple | None = None):
    """Inject the events of scenario ``name`` into ``wb`` as one append: all of them, or the
    1-based ``steps`` (``range(1, 6)``: events 1 to 5). Returns their outcomes."""
    events = scenario_events(name)
    if steps is not None:
        events = [events[i - 1] for i in steps]
    return wb.inject(events)


# --------------------------------------------------------------------------- comparing with scenarios

def engine_lines(source, *, bounds: bool = False, base: int | None = None) -> list[dict]:
    """The replay lines (the replay format, semantics section 5) of what ``source`` released: a running query
    (steps counted from the event after ``base``, by default from the query's start), a
    ``ScenarioPlayer`` or the ``ScenarioView`` of ``%streamsql load``."""
    player = getattr(source, "player", None) or (source if hasattr(source, "lines") else None)
    if player is not None:
        player.q.wait()
        return player.lines(bounds)
    from ..widgets.steps import event_outcomes
    q = source
    q.wait()
    base = q.start_step if base is None else base
    return replay_lines(q, event_outcomes(q.wb, base), base, bounds=bounds)


def check_scenario(name: str, source, *, base: int | None = None) -> Text:
    """Print ``NAME.expected.jsonl`` (the seed's table as replay lines) and the same lines
    computed from what the engine released, and whether they agree line for line: every row,
    its rowtime, its values and the step that released it (and the bound lines, when the
    file has them: it was made with ``--bounds``)."""
    exp = expected_lines(name)
    bounds = any("bound" in e for e in exp)
    got = engine_lines(source, bounds=bounds, base=base)
    runtime = getattr(getattr(source, "player", None) or source, "engine", "spark")
    engine = {"spark": "Spark", "local": "the local runtime"}.get(runtime, runtime)
    out = [f"expected  {name}: {_rel(scenario_dir() / name)}.expected.jsonl"
           + (" (made with --bounds)" if bounds else "")]
    out += ["  " + json.dumps(e) for e in exp]
    out.append(f"engine    {name}: what the query released on {engine}" + (", with bound lines" if bounds else ""))
    out += ["  " + json.dumps(g) for g in got]
    if [comparable(e) for e in exp] == [comparable(g) for g in got]:
        out.append(f"✓ the same {len(exp)} lines: row for row and step for step "
                   "(keys compare case-insensitively, as the replay format says)")
    else:
        for i, (e, g) in enumerate(zip(exp, got), 1):
            if comparable(e) != comparable(g):
                out.append(f"✗ line {i} differs: expected {json.dumps(e)}, engine {json.dumps(g)}")
                break
        else:
            out.append(f"✗ {len(got)} lines from the engine, {len(exp)} expected")
    return Text("\n".join(out))


# --------------------------------------------------------------------------- rows and clocks

def released(q, columns: list[str] | None = None) -> Text:
    """The rows ``q`` released so far: ``Step | ROWTIME | columns`` (all, or those named)."""
    q.wait()
    names = [f.name for f in q.fields]
    idx = list(range(len(names))) if columns is None else [names.index(c.upper()) for c in columns]
    rows = [[r.step, sqltime.format_timestamp(r.rowtime)] + [format_value(r.values[i], q.fields[i].type) for i in idx]
            for r in q.rows]
    if not rows:
        return Text(f"(query {q.name} has released no rows)")
    return Text(_table(["Step", "ROWTIME"] + [names[i] for i in idx], rows))


def _same(a, b) -> bool:
    if isinstance(a, float) or isinstance(b, float):
        return a is not None and b is not None and float(a) == float(b)
    return a == b


def check_released(q, expected: list[tuple], columns: list[str] | None = None) -> Text:
    """Compare what ``q`` released with rows derived by hand: ``(step, "HH:MM[:SS]", value, ...)``
    with one value per column in ``columns`` (default: the whole select list). Floats must be
    equal to the last digit."""
    q.wait()
    names = [f.name for f in q.fields]
    idx = list(range(len(names))) if columns is None else [names.index(c.upper()) for c in columns]
    got = [(r.step, _hm(r.rowtime % sqltime.DAY), *[r.values[i] for i in idx]) for r in q.rows]
    want = [(e[0], _hm(sqltime.parse_timestamp(e[1], day=0)), *e[2:]) for e in expected]
    ok = len(got) == len(want) and all(len(g) == len(w) and all(_same(x, y) for x, y in zip(g, w))
                                       for g, w in zip(got, want))
    if ok:
        return Text(f"✓ {len(want)} rows, as derived from the rules: the same steps, rowtimes and values")
    header = ["#", "expected (step, rowtime, values)", "engine", ""]
    rows = []
    for i in range(max(len(got), len(want))):
        w = want[i] if i < len(want) else None
        g = got[i] if i < len(got) else None
        same = w is not None and g is not None and len(w) == len(g) and all(_same(x, y) for x, y in zip(g, w))
        fmt = (lambda t: "" if t is None else " ".join(format_value(v) for v in t))
        rows.append([i + 1, fmt(w), fmt(g), "✓" if same else "✗"])
    return Text("✗ the engine's rows differ from the rows derived by hand:\n" + _table(header, rows))


def clock_history(wb, stream: str, since: int = 0) -> Text:
    """What each event did to a stream's clock: ``Step | Event | Outcome | Clock before | Clock after``
    (from ``wb.event_trace``)."""
    name = wb.catalog.stream(stream).name
    rows = []
    for r in wb.event_trace:
        if r["step"] <= since or r["stream"] != name:
            continue
        ev = Event(r["stream"], r["kind"], r["rowtime"], r["values"], strict=r["strict"], producer=r["producer"])
        rows.append([r["step"], describe_event(ev), r["status"], _hm(r["bound_before"]), _hm(r["bound_after"])])
    return Text(_table(["Step", "Event", "Outcome", "Clock before", "Clock after"], rows))


def event_statuses(wb, since: int = 0) -> list[tuple]:
    """``(step, stream, kind, status)`` of each event after step ``since`` (``wb.event_trace``)."""
    return [(r["step"], r["stream"], r["kind"], r["status"]) for r in wb.event_trace if r["step"] > since]


class ProducerTrace:
    """Records, after every injection into ``stream`` (one line per ``insert``, ``punctuate``,
    ``attach``, ``detach`` or ``inject`` call, for its last event on the stream), each attached
    producer's clock, the stream's bound and its pending rows; :meth:`table` lines them up with
    the rows the query released at each step. Create it before the events."""

    def __init__(self, wb, stream: str):
        self.wb = wb
        self.stream = wb.catalog.stream(stream).name
        self.records: list[dict] = []
        self.producers: list[str] = []
        wb.on_inject(self._after)

    def _after(self, outcomes) -> None:
        if not isinstance(outcomes, list):
            return
        info = next(s for s in self.wb.streams() if s["name"] == self.stream)
        for o in outcomes:
            if o.event.stream != self.stream:
                continue
            p = o.event.producer or "default"
            if p not in self.producers:
                self.producers.append(p)
        for p in info["producers"]:
            if p not in self.producers:
                self.producers.append(p)
        last = [o for o in outcomes if o.event.stream == self.stream]
        if last:
            o = last[-1]
            self.records.append({"step": o.step, "event": describe_event(o.event), "status": o.status,
                                 "producers": dict(info["producers"]), "bound": info["clock"],
                                 "pending": info["pending"]})

    def stop(self) -> None:
        self.wb.off_inject(self._after)

    def _released(self, q) -> dict[int, list[str]]:
        by_step: dict[int, list[str]] = {}
        if q is not None:
            q.wait()
            for r in q.rows:
                vals = " ".join(format_value(v, f.type) for f, v in zip(q.fields, r.values))
                by_step.setdefault(r.step, []).append(f"{_hm(r.rowtime)} {vals}")
        return by_step

    def summary(self, step: int, q=None) -> str:
        """One line about ``step``: its outcome, what ``q`` released, the stream bound, pending rows."""
        rec = next((r for r in self.records if r["step"] == step), None)
        if rec is None:
            return "(not recorded)"
        parts = [] if rec["status"] == "ok" else [rec["status"]]
        rel = self._released(q).get(step, [])
        if rel:
            parts.append("released " + "; ".join(rel))
        prods = ", ".join(f"{p} {_hm(c)}" for p, c in rec["producers"].items()) or "none"
        parts.append(f"stream bound {_hm(rec['bound'])}; producers {prods}; pending {rec['pending']}")
        return "; ".join(parts)

    def table(self, q=None) -> Text:
        """``Step | Event | <one clock per producer> | Stream bound | Pending | Released``."""
        by_step = self._released(q)
        rows = []
        for rec in self.records:
            cells = [rec["step"], rec["event"] + ("" if rec["status"] == "ok" else f" ({rec['status']})")]
            for p in self.producers:
                cells.append(_hm(rec["producers"][p]) if p in rec["producers"] else "-")
            cells += [_hm(rec["bound"]), rec["pending"], "; ".join(by_step.get(rec["step"], []))]
            rows.append(cells)
        header = ["Step", "Event"] + [f"{p} clock" for p in self.producers] + ["Stream bound", "Pending"]
        header += ["Released"] if q is not None else [""]
        return Text(_table(header, rows))


def track_producers(wb, stream: str) -> ProducerTrace:
    """Start recording producers' clocks on ``stream`` (see :class:`ProducerTrace`)."""
    return ProducerTrace(wb, stream)


_ASCTIME = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d+ ")


def late_log(wb, contains: str = "streamsql.late") -> Text:
    """The late-row lines of the workspace's log (``logs/streamsql.log``, where ``%%streamsql``
    sends the engine's log), without their wall-clock timestamps."""
    p = Path(wb.path) / "logs" / "streamsql.log"
    if not p.exists():
        return Text("(no log file in this workspace)")
    lines = [_ASCTIME.sub("", line) for line in p.read_text().splitlines() if contains in line]
    return Text("\n".join(lines) if lines else "(no late rows logged)")


def side_by_side(header: list[str], rows: list[list]) -> Text:
    """A plain text table (the step tables' layout)."""
    return Text(_table(header, rows))


# --------------------------------------------------------------------------- exercises: shared parts

def _say(ok: bool | None, text: str) -> bool | None:
    mark = {True: "✓ correct: ", False: "✗ not yet: ", None: "Not answered yet. Hint: "}[ok]
    print(mark + text)
    return ok


def _ev(stream: str, t: str, **values) -> Event:
    return Event(stream, "row", sqltime.parse_timestamp(t), values)


def _bound(stream: str, t: str, strict: bool = False) -> Event:
    return Event(stream, "bound", sqltime.parse_timestamp(t), strict=strict)


def _column(q, name: str) -> list:
    names = [f.name for f in q.fields]
    return [r.values[names.index(name.upper())] for r in q.rows] if name.upper() in names else None


def _sql_answer(sql, ddl: str, events: list[Event], hint: str):
    """Run the reader's query and return it; after printing why, None when there is no answer
    yet and False when it does not run."""
    if sql is None or not str(sql).strip() or str(sql).strip() == "...":
        return _say(None, hint)
    try:
        q, _ = run_local(ddl, str(sql), events)
    except StreamSqlError as e:
        msg = e.caret() if hasattr(e, "caret") else str(e)
        return _say(False, f"the query does not run: {msg}")
    return q


# --------------------------------------------------------------------------- notebook 01

ORDERS_DDL = "CREATE STREAM Orders (ticker VARCHAR(10), amount INTEGER)"
EX01_ORDERS = [("2006-10-10 10:00:00", "ORCL", 20), ("2006-10-10 10:01:00", "IBM", 80),
               ("2006-10-10 10:01:00", "MSFT", 70), ("2006-10-10 10:02:00", "ORCL", 50),
               ("2006-10-10 10:04:00", "IBM", 10), ("2006-10-10 10:05:00", "ORCL", 120)]

#: the digests of the answers derived by hand (``common.digest``; the answers are in the tests)
_ANSWERS = {
    "01.1": "cbb970300010abf2453910c9de037f0d",
    "01.2 clock": "ca5afa594cd10917e7667109a672bc12",
    "01.2 late": "4a8ad34176c3ff49f30db0ccb0f93954",
    "01.3": "13c13f4d05bee349a06d2404dc2952d5",
    "02.3 row": "f45aed48c1aa42badb9019ab6c0f16e4",
    "02.3 bounds": "6fae10c14061e62077eb9569ce499cf6",
    "03.2 a": "37669b87c9c4e61e3518a7f21bf72bbb",
    "03.2 b": "c22c7dd5c03f8465644a55f5e23539a9",
    "03.2 c": "092a8602c3bbe6e31babff0d52f0dce0",
    "03.2 d": "3db2bd45eee3e12a712828122790273e",
    "03.3": "db935088369ebc193e3473eeda6e70a2",
    "04.2": "74406a12ec25c44cf96609436d5c9dfa",
    "04.3": "57b7ed4c2e7aca7d70f452099b59fd02",
}


def _is(exercise: str, answer) -> bool:
    return digest(exercise, answer) == _ANSWERS[exercise]


def check_filter_query(sql) -> bool | None:
    """Exercise 01.1: the ORCL and IBM orders of at least 50, with ROWTIME, ticker and amount."""
    events = [_ev("Orders", t, ticker=k, amount=a) for t, k, a in EX01_ORDERS]
    q = _sql_answer(sql, ORDERS_DDL, events,
                    "a SELECT STREAM over Orders with a WHERE clause; `ticker IN (...)` or two comparisons "
                    "joined by OR, and `amount >= 50`. Select ROWTIME, ticker, amount.")
    if q is None or q is False:
        return q
    tick, amt = _column(q, "ticker"), _column(q, "amount")
    if tick is None or amt is None:
        return _say(False, f"the query must select the columns TICKER and AMOUNT; it selects {', '.join(q.columns)}")
    got = [(r.step, _hm(r.rowtime), k, a) for r, k, a in zip(q.rows, tick, amt)]
    if _is("01.1", got):
        return _say(True, "3 rows (steps 2, 4 and 6), each released at the step of its own event, "
                          "stamped with its own rowtime.")
    return _say(False, f"over the exercise's 6 orders it released {len(got)} rows "
                       f"{[(s, k, a) for s, _t, k, a in got]} as (step, ticker, amount). Check the comparison "
                       "(at least 50 includes 50) and the tickers.")


#: rows 10:00, 10:05, bound 10:10, rows 10:08, 10:10, 10:09:59, 10:12 on one producer
EX01_CLOCK_EVENTS = [("row", "10:00"), ("row", "10:05"), ("bound", "10:10"), ("row", "10:08"), ("row", "10:10"),
                     ("row", "10:09:59"), ("row", "10:12")]


def ex01_clock_events() -> list[Event]:
    out = []
    for kind, t in EX01_CLOCK_EVENTS:
        ms = sqltime.parse_timestamp("2006-10-10 " + t)
        out.append(Event("Orders", "row", ms, {"ticker": "X", "amount": 1}) if kind == "row"
                   else Event("Orders", "bound", ms))
    return out


def _time_of(text) -> str | None:
    try:
        return _hm(sqltime.parse_timestamp(str(text), day=sqltime.parse_timestamp("2006-10-10")))
    except (sqltime.TimeFormatError, ValueError):
        return None


def check_clock_and_late(answer) -> bool | None:
    """Exercise 01.2: ``{"clock": "HH:MM", "late": [steps]}``."""
    if not isinstance(answer, dict) or "clock" not in answer or "late" not in answer:
        return _say(None, 'answer with a dict such as {"clock": "10:00", "late": [1, 2]}. The clock is the '
                          "highest rowtime or bound seen; a row is late when its rowtime is below the clock "
                          "(equal is fine).")
    clock = _time_of(answer["clock"])
    try:
        late = sorted(int(s) for s in answer["late"])
    except (TypeError, ValueError):
        return _say(False, "the late steps are a list of step numbers.")
    clock_ok, late_ok = _is("01.2 clock", clock), _is("01.2 late", late)
    if clock_ok and late_ok:
        return _say(True, "the clock ends at 10:12; step 4 (10:08 < 10:10, the bound's clock) and step 6 "
                          "(10:09:59 < 10:10) are late; step 5 (10:10 = the clock) is not.")
    why = []
    if not clock_ok:
        why.append(f"the clock {clock or answer['clock']!r} is not right: which event comes last, and does "
                   "a late row move the clock?")
    if not late_ok:
        why.append("the late steps are not right: after step 3 the clock is 10:10, and a row equal to "
                   "the clock is not late")
    return _say(False, "; ".join(why) + ".")


def check_log_lines(answer) -> bool | None:
    """Exercise 01.3: which late rows (by number) 2,500 late rows put in the log."""
    if answer is None:
        return _say(None, "answer with the list of late-row numbers that are logged, e.g. [1, 2, 3]. "
                          "Logged are the 1st, 10th, 100th, ... late row of a stream.")
    try:
        got = sorted(int(x) for x in answer)
    except (TypeError, ValueError):
        return _say(False, "answer with a list of numbers, e.g. [1, 2, 3].")
    if _is("01.3", got):
        return _say(True, "4 lines: late rows 1, 10, 100 and 1000 (the next would be the 10,000th).")
    return _say(False, "the log keeps the powers of ten only: 10 ** 0, 10 ** 1, ... up to 2,500.")


# --------------------------------------------------------------------------- notebook 02

def check_weakest_bound(answer) -> bool | None:
    """Exercise 02.1: the weakest bound that releases the 06:00 hour: ``("HH:MM[:SS[.fff]]", strict)``."""
    if not (isinstance(answer, tuple) and len(answer) == 2):
        return _say(None, 'answer with a (time, strict) pair such as ("06:30", False). The 06:00 group '
                          "is complete when the input clock reaches the end of its period.")
    t, strict = answer
    try:
        ms = sqltime.bound_value(sqltime.parse_timestamp(str(t), day=sqltime.parse_timestamp("2006-10-10")), bool(strict))
    except (sqltime.TimeFormatError, ValueError) as e:
        return _say(False, f"{t!r} is not a time: {e}")
    # the end of the 06:00 hour's period, by the engine's own rule
    end = TimeKey(_HOUR_KEY).period_end(sqltime.parse_timestamp("2006-10-10 06:00:00"))
    if ms == end:
        other = "strict 06:59:59.999" if not strict else "non-strict 07:00"
        return _say(True, f"it moves the clock to exactly 07:00:00.000, the end of the 06:00 period "
                          f"(the same bound as {other}).")
    if ms > end:
        return _say(False, f"it releases the hour, but a weaker bound would too: it moves the clock to "
                           f"{_hm(ms)}; the hour needs only the end of its period.")
    return _say(False, f"it moves the clock only to {_hm(ms)}: a row still in the 06:00 hour could "
                       "still arrive. Remember that a strict bound at t is the bound t + 1 ms.")


#: rows and bounds of exercise 02.2, one producer: (kind, time, strict)
EX02_ECLIPSE_EVENTS = [("row", "08:00", False), ("bound", "08:00", False), ("bound", "08:30", False),
                       ("row", "08:30", False), ("bound", "08:29:59.999", True), ("bound", "08:30", True),
                       ("bound", "08:30:00.001", False), ("row", "08:40", False)]


def ex02_eclipse_events(stream: str = "Events") -> list[Event]:
    out = []
    for kind, t, strict in EX02_ECLIPSE_EVENTS:
        ms = sqltime.parse_timestamp("2006-10-10 " + t)
        out.append(Event(stream, "row", ms, {"color": "red"}) if kind == "row"
                   else Event(stream, "bound", ms, strict=strict))
    return out


def check_eclipsed(answer) -> bool | None:
    """Exercise 02.2: the steps whose bound is eclipsed (the engine says which are)."""
    if answer is None:
        return _say(None, "answer with the list of steps whose bound carries no new information "
                          "(it is not above the clock when it arrives), e.g. [3]. Turn every strict "
                          "bound into a non-strict one first: strict t = t + 1 ms.")
    try:
        got = sorted(int(x) for x in answer)
    except (TypeError, ValueError):
        return _say(False, "answer with a list of step numbers.")
    _q, outs = run_local("CREATE STREAM Events (color VARCHAR(10))", "SELECT STREAM * FROM Events",
                         ex02_eclipse_events())
    eclipsed = [o.step for o in outs if o.status == "eclipsed"]
    if got == eclipsed:
        return _say(True, "step 2 repeats the row's own bound 08:00; step 5 is strict 08:29:59.999 = 08:30, "
                          "which the row at step 4 already implies; step 7 is 08:30:00.001 = strict 08:30 "
                          "(step 6).")
    extra = [s for s in got if s not in eclipsed]
    missing = [s for s in eclipsed if s not in got]
    parts = []
    if extra:
        parts.append(f"not eclipsed: step {', '.join(map(str, extra))} (a row, or a bound above the clock)")
    if missing:
        parts.append(f"{len(missing)} eclipsed bound{'s are' if len(missing) > 1 else ' is'} missing")
    return _say(False, "; ".join(parts) + ".")


def check_filter_bounds(answer) -> bool | None:
    """Exercise 02.3: filter_trains with ``WHERE ticker = 'MSFT'`` and ``--bounds``."""
    if not isinstance(answer, dict) or "row_step" not in answer or "bound_steps" not in answer:
        return _say(None, 'answer with {"row_step": N, "bound_steps": [...]}. A bound line is printed when '
                          "the output bound passes both the last bound line and the last released row.")
    try:
        row_step, bsteps = int(answer["row_step"]), sorted(int(x) for x in answer["bound_steps"])
    except (TypeError, ValueError):
        return _say(False, "row_step is a number and bound_steps a list of numbers.")
    row_ok = _is("02.3 row", row_step)
    if row_ok and _is("02.3 bounds", bsteps):
        return _say(True, "step 1 drops ORCL but passes its bound (10:00); the MSFT row at step 2 implies "
                          "10:01, so no bound line; steps 3 and 5 are punctuation; step 4 (IBM, 10:02) adds "
                          "nothing to the bound 10:02 of step 3.")
    if not row_ok:
        return _say(False, "the MSFT row is released by the event that brings it: which step is it?")
    return _say(False, "check each step: does the output bound pass both the last bound line and the "
                       "last released row?")


# --------------------------------------------------------------------------- notebook 03

#: seed 000, "UNION ALL and rowtime bounds": which event releases Orders' MSFT 10:04?
EX03_OPTIONS = {
    "a": ("Orders", "bound", "10:06", False),
    "b": ("Trades", "bound", "10:03:30", False),
    "c": ("Trades", "bound", "10:05", False),
    "d": ("Trades", "row", "10:05:30", False),
    "e": ("Trades", "bound", "10:03:59.999", True),
}
UNION_DDL = ("CREATE STREAM Orders (ticker VARCHAR(10));\nCREATE STREAM Trades (ticker VARCHAR(10));")
UNION_SQL = ("SELECT STREAM ROWTIME, ticker FROM Orders UNION ALL SELECT STREAM ROWTIME, ticker FROM Trades")


def ex03_union_events(option: str | None = None) -> list[Event]:
    """The seed's four rows (and its Orders bound 10:06), then option ``option``'s event."""
    d = "2006-10-10 "
    evs = [_ev("Orders", d + "10:01", ticker="ORCL"), _ev("Orders", d + "10:04", ticker="MSFT"),
           _ev("Trades", d + "10:02", ticker="YHOO"), _ev("Trades", d + "10:03", ticker="IBM")]
    if option is not None:
        s, kind, t, strict = EX03_OPTIONS[option]
        evs.append(_ev(s, d + t, ticker="IBM") if kind == "row" else _bound(s, d + t, strict))
    return evs


def _releases_msft(option: str) -> bool:
    """Whether option ``option``'s event releases Orders' MSFT 10:04 (the engine says)."""
    q, _ = run_local(UNION_DDL, UNION_SQL, ex03_union_events(option))
    return any(r.step == 5 and r.values[0] == "MSFT" for r in q.rows)


def check_union_release(answer) -> bool | None:
    """Exercise 03.1: the options (letters) whose event releases MSFT 10:04."""
    if answer is None:
        return _say(None, 'answer with the set of letters, e.g. {"a"}. The union may release MSFT 10:04 '
                          "only once no Trades row earlier than 10:04 can still arrive.")
    got = sorted(str(x).strip().lower() for x in answer)
    releasing = [o for o in sorted(EX03_OPTIONS) if _releases_msft(o)]
    if got == releasing:
        return _say(True, "(c) and (d) bring the Trades clock past 10:04, and so does (e): strict 10:03:59.999 "
                          "is 10:04:00.000. (a) moves the wrong stream; (b) still allows a Trades row at "
                          "10:03:45.")
    wrong = [x for x in got if x not in releasing]
    if wrong:
        return _say(False, f"{', '.join(wrong)} would not release it: which stream's clock must reach 10:04?")
    return _say(False, "some options that release it are missing (remember strict t = t + 1 ms).")


#: exercise 03.2: P1 and P2 attached; rows a..d; answer: the step at which each row leaves the stream
EX03_PRODUCER_EVENTS = [("P1", "attach", None, None), ("P2", "attach", None, None), ("P1", "row", "10:00", "a"),
                        ("P2", "row", "10:02", "b"), ("P1", "row", "10:04", "c"), ("P2", "bound", "10:05", None),
                        ("P1", "row", "10:06", "d"), ("P2", "detach", None, None)]


def ex03_producer_events(stream: str = "S") -> list[Event]:
    out = []
    for p, kind, t, name in EX03_PRODUCER_EVENTS:
        ms = sqltime.parse_timestamp("2006-10-10 " + t) if t else None
        if kind == "row":
            out.append(Event(stream, "row", ms, {"name": name}, producer=p))
        else:
            out.append(Event(stream, kind, ms, producer=p))
    return out


def check_producers(answer) -> bool | None:
    """Exercise 03.2: ``{"a": step, "b": step, "c": step, "d": step}``."""
    if not isinstance(answer, dict) or sorted(map(str, answer)) != ["a", "b", "c", "d"]:
        return _say(None, 'answer with {"a": step, "b": step, "c": step, "d": step}. A row leaves the stream '
                          "when every attached producer's clock is at least its rowtime.")
    try:
        got = {str(k): int(v) for k, v in answer.items()}
    except (TypeError, ValueError):
        return _say(False, "each value is a step number.")
    wrong = sorted(k for k in got if not _is(f"03.2 {k}", got[k]))
    if not wrong:
        return _say(True, "a leaves at 4 (P2 reaches 10:02), b at 5 (P1 reaches 10:04), c at 6 (P2's bound "
                          "10:05), d at 8 (P2 detaches; its clock 10:05 held d at 10:06 back).")
    return _say(False, f"row{'s' if len(wrong) > 1 else ''} {', '.join(wrong)}: after each step, take the "
                       "minimum of the attached producers' clocks; a row leaves once it is at or below it.")


def check_ties(answer) -> bool | None:
    """Exercise 03.3: Q's 01:00 row arrives, then P's 01:00 row: the output order of the two rows."""
    if answer is None:
        return _say(None, 'answer with the order of the two 01:00 rows in the output, e.g. ["Q", "P"]. '
                          "Rows released together leave by rowtime; ties follow a rule of the operator.")
    got = [str(x).strip().upper() for x in answer]
    if _is("03.3", got):
        return _say(True, "both are released together at step 2 (P's row brings P's clock to 01:00); equal "
                          "stamps leave in the query's input order: P before Q, whatever the arrival order.")
    return _say(False, "both rows leave at the same step; for equal stamps UNION ALL keeps the order of its "
                       "inputs in the query, not the arrival order.")


# --------------------------------------------------------------------------- notebook 04

#: exercise 04.1: a row at 10:30 (price 100, volume 2000) after vwap_sliding's events
EX04_VWAP_ROW = ("2006-10-10 10:30:00", {"ticker": "X", "price": 100.0, "volume": 2000})


def _vwap_at_1030() -> float:
    """The weighted average the engine gives the exercise's row (vwap_sliding's query)."""
    statements = [s.sql for s in split_script(scenario_sql("vwap_sliding"))]
    row = Event("TradeStream", "row", sqltime.parse_timestamp(EX04_VWAP_ROW[0]), dict(EX04_VWAP_ROW[1]))
    q, _ = run_local(";\n".join(statements[:-1]), statements[-1], scenario_events("vwap_sliding") + [row])
    return q.rows[-1].values[-1]


def check_vwap_at_1030(answer) -> bool | None:
    """Exercise 04.1: the weighted average of a row at 10:30 (price 100, volume 2000) after vwap_sliding."""
    if answer is None:
        return _say(None, "answer with a number. Which rows are in [09:30, 10:30]? Then "
                          "SUM(price * volume) / SUM(volume).")
    try:
        v = float(answer)
    except (TypeError, ValueError):
        return _say(False, "answer with a number.")
    want = _vwap_at_1030()
    if v == want:
        return _say(True, "the frame [09:30, 10:30] holds the rows of 09:59, 10:00, 10:05 and 10:30: "
                          "427500 / 4000 = 106.875.")
    if math.isclose(v, want, rel_tol=1e-3):
        return _say(False, "close: give all the digits (the engine prints them all).")
    return _say(False, "which rows are in [09:30, 10:30]? 09:00 and 09:10 are out; both ends are inclusive.")


EX04_PEER_EVENTS = [("10:00", 1), ("10:00", 2), ("10:00", 4), ("10:01", 8)]


def check_peers(answer) -> bool | None:
    """Exercise 04.2: ``COUNT(*) OVER (RANGE INTERVAL '1' MINUTE PRECEDING)`` of four rows."""
    if answer is None:
        return _say(None, "answer with the four counts, e.g. [1, 1, 1, 1]. Rows with the same rowtime that "
                          "arrived earlier are in the frame; later ones are not.")
    try:
        got = [int(x) for x in answer]
    except (TypeError, ValueError):
        return _say(False, "answer with a list of four numbers.")
    if _is("04.2", got):
        return _say(True, "each 10:00 row sees only the 10:00 rows that arrived before it (1, 2, 3); the 10:01 "
                          "row's frame [10:00, 10:01] holds all four. Standard SQL would say 3, 3, 3, 4.")
    if got == [3, 3, 3, 4]:
        return _say(False, "that is the SQL standard's answer (all peers); streamsql releases each row when it "
                           "arrives, so later peers cannot be in its frame.")
    return _say(False, "write out each row's frame [t - 1 minute, t] with the peers that arrived before it.")


TRADES_DDL = "CREATE STREAM Trades (ticker VARCHAR(10), shares INTEGER)"
EX04_TRADES = [("2006-10-10 09:10", "ORCL", 10), ("2006-10-10 09:20", "IBM", 20), ("2006-10-10 09:40", "ORCL", 30),
               ("2006-10-10 10:00", "ORCL", 40), ("2006-10-10 10:05", "IBM", 50), ("2006-10-10 10:30", "ORCL", 60)]


def check_cascading_query(sql) -> bool | None:
    """Exercise 04.3: per ticker, the shares traded so far in the current hour, as ``total``."""
    events = [_ev("Trades", t, ticker=k, shares=s) for t, k, s in EX04_TRADES]
    q = _sql_answer(sql, TRADES_DDL, events,
                    "SUM(shares) OVER (PARTITION BY ...) AS total, with the hour (FLOOR(Trades.ROWTIME TO HOUR)) "
                    "and the ticker in the PARTITION BY.")
    if q is None or q is False:
        return q
    total = _column(q, "total")
    if total is None:
        return _say(False, f"name the running sum TOTAL; the query selects {', '.join(q.columns)}.")
    if _is("04.3", total):
        return _say(True, "10, 20, 40, then 40 (10:00 starts a new hour for ORCL), 50, 100.")
    return _say(False, f"over the exercise's 6 trades it gives {total}. Does the sum restart at 10:00, and is "
                       "each ticker counted apart?")
