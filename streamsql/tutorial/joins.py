"""Helpers for tutorial notebooks 05-07: seed 002's step tables (streaming joins) transcribed as
data and shown beside the engine's, checks against the shared scenarios, seed 004's (Calcite's)
example tables, the million-trade data set of notebook 07, and the exercises' answer checkers.

Everything here prints plain text with no wall-clock times, ids or timings, so that a notebook's
outputs are the same on every run (what ``pytest --nbval`` compares). Timings are returned as
numbers, for the one notebook cell that prints them.

The seeds' tables are transcribed line by line from ``../shared/seeds/002_*.txt`` and
``004_*.txt``; the expected answers of the exercises are derived by hand from the rules
(``SEMANTICS.md``), and ``tests/test_notebooks_05_07.py`` checks each of them against the engine.
"""
from __future__ import annotations

import json
import re
import threading
import time as _time
from dataclasses import dataclass, field
from pathlib import Path

from ..engine import time as T
from ..engine.catalog import Event
from ..engine.errors import StreamSqlError
from ..engine.operators.describe import JoinState
from ..engine.trace import comparable, replay_lines
from ..engine.types import format_value
# the scenario files, tables and times as the earlier tutorials read and print them
from .basics import Text, _hm, _rel, _table, expected_lines, scenario_dir, scenario_events, scenario_path

__all__ = [
    "Text", "scenario_dir", "scenario_path", "scenario_events", "expected_lines", "SEED_002", "seed_table",
    "beside", "agreement", "check_scenario", "why_held", "check_join_bound_exercise", "check_preceding_query",
    "check_outer_exercise",
    "CalciteTour", "CALCITE", "check_step_query", "check_rejected", "check_running_total",
    "generate_trades", "events_table", "Progress", "replay", "batch_hourly", "batch_matches", "compare_hourly",
    "compare_matches", "hourly_chart", "fills_chart", "zoom", "zoom_events", "check_first_release", "check_fills_query",
]


class Verdict(Text):
    """An exercise checker's answer: shown as its text; ``ok`` is True (correct), False (not
    yet) or None (no answer given)."""
    ok: bool | None = None


def _say(ok: bool | None, text: str) -> Verdict:
    mark = {True: "✓ correct: ", False: "✗ not yet: ", None: "Not answered yet. Hint: "}[ok]
    v = Verdict(mark + text)
    v.ok = ok
    return v


def _blank(answer) -> bool:
    """No answer yet: None, ``...`` (the placeholder of the exercise cells) or empty."""
    if answer is None or answer is Ellipsis:
        return True
    try:
        return not str(answer).strip() or str(answer).strip() == "..." or (hasattr(answer, "__len__") and not len(answer))
    except TypeError:
        return False


def _engine_lines(q) -> list[dict]:
    from ..widgets.steps import event_outcomes
    q.wait()
    return replay_lines(q, event_outcomes(q.wb, q.start_seq), q.start_seq)


def check_scenario(q, name: str) -> Text:
    """Compare what ``q`` released with ``NAME.expected.jsonl`` (the executable form of
    SEMANTICS.md), row for row and step for step, for the events injected so far (steps are
    counted from the query's start: the scenario's event lines)."""
    done = q.wb.last_seq - q.start_seq
    total = len(scenario_events(name))
    exp = [e for e in expected_lines(name) if e["step"] <= done]
    got = _engine_lines(q)
    where = f"{_rel(scenario_dir() / name)}.expected.jsonl"
    upto = "" if done >= total else f" up to step {done} of {total}"
    if [comparable(e) for e in exp] == [comparable(g) for g in got]:
        steps = ", ".join(str(e["step"]) for e in exp) or "none"
        return Text(f"✓ the engine's output equals {where}{upto}: {len(exp)} row{'s' if len(exp) != 1 else ''}, "
                    f"row for row and step for step (released at steps {steps})")
    out = [f"✗ the engine's output differs from {where}{upto}:"]
    out += ["  expected " + json.dumps(e) for e in exp]
    out += ["  engine   " + json.dumps(g) for g in got]
    return Text("\n".join(out))


# --------------------------------------------------------------------------- seed 002: the tables

@dataclass(frozen=True)
class SeedLine:
    """One line of a seed step table: the step it belongs to, and what is in each column."""
    step: int
    orders: str = ""
    trades: str = ""
    output: str = ""


def _lines(spec: str) -> tuple[SeedLine, ...]:
    """``step | orders | trades | output`` lines (an empty step repeats the previous one)."""
    out, step = [], 0
    for line in spec.strip().splitlines():
        s, o, t, r = (c.strip() for c in line.split("|"))
        step = int(s) if s else step
        out.append(SeedLine(step, o, t, r))
    return tuple(out)


@dataclass(frozen=True)
class SeedQuery:
    number: int
    title: str
    sql: str                      # as the seed prints it
    scenario: str                 # the shared scenario that runs it
    lines: tuple[SeedLine, ...]   # the seed's table, line by line
    note: str = ""


SEED_002: dict[int, SeedQuery] = {
    1: SeedQuery(1, "Orders matched within ten minutes", """\
SELECT STREAM
   ROWTIME, o.orderId, o.ticker,
   o.amount AS orderAmount, t.amount AS tradeAmount
 FROM Orders AS o
 JOIN Trades OVER (RANGE INTERVAL '10' MINUTE FOLLOWING) AS t
 ON o.orderId = t.orderId""", "join1_inner_following", _lines("""
1 | 10:00:00 1 ORCL 100 |                      |
  | 10:03:00 2 YHOO 25  |                      |
2 |                     | 10:02:00 1 ORCL 60   |
  |                     |                      | 10:00:00 1 ORCL 100 60
  |                     | 10:04:00 2 YHOO 25   |
  |                     | 10:07:30 1 ORCL 30   |
  |                     |                      | 10:00:00 1 ORCL 100 30
3 |                     | 10:11:00 bound       |
  |                     |                      | 10:03:00 2 YHOO 25 25
4 | 10:10:00 bound      |                      |
5 |                     | 10:12:00 1 ORCL 10   |
""")),
    2: SeedQuery(2, "The same join seen from the Trades stream", """\
SELECT STREAM
   ROWTIME, o.orderId, o.ticker,
   o.amount AS orderAmount, t.amount AS tradeAmount
 FROM Orders OVER (RANGE INTERVAL '10' MINUTE PRECEDING) AS o
 JOIN Trades AS t
 ON o.orderId = t.orderId""", "join2_inner_preceding", _lines("""
1 | 10:00:00 1 ORCL 100 |                      |
  | 10:03:00 2 YHOO 25  |                      |
2 |                     | 10:02:00 1 ORCL 60   |
  |                     | 10:04:00 2 YHOO 25   |
  |                     | 10:07:30 1 ORCL 30   |
  |                     |                      | 10:02:00 1 ORCL 100 60
3 |                     | 10:11:00 bound       |
4 | 10:10:00 bound      |                      |
  |                     |                      | 10:04:00 2 YHOO 25 25
  |                     |                      | 10:07:30 1 ORCL 100 30
5 |                     | 10:12:00 1 ORCL 10   |
""")),
    3: SeedQuery(3, "An outer join, with an unmatched order and an unmatched trade", """\
SELECT STREAM
   ROWTIME, o.orderId, o.ticker, o.amount AS orderAmount,
   t.ticker, t.tradeId, t.amount AS tradeAmount,
 FROM Orders AS o
 OUTER JOIN Trades OVER (RANGE INTERVAL '10' MINUTE FOLLOWING) AS t
 ON o.orderId = t.orderId""", "join3_full_outer", _lines("""
1 | 10:00:00 0 IBM 110  |                      |
  | 10:00:00 1 ORCL 100 |                      |
  | 10:03:00 2 YHOO 25  |                      |
2 |                     | 10:02:00 1 ORCL 60   |
  |                     |                      | 10:00:00 1 ORCL 100 1 ORCL 60
  |                     | 10:04:00 2 YHOO 25   |
  |                     | 10:07:30 1 ORCL 30   |
  |                     |                      | 10:00:00 1 ORCL 100 1 ORCL 30
3 |                     | 10:11:00 bound       |
  |                     |                      | 10:00:00 0 IBM 110 null null null
  |                     |                      | 10:03:00 2 YHOO 25 2 YHOO 25
4 | 10:10:00 bound      |                      |
5 |                     | 10:12:00 1 ORCL 10   |
  |                     |                      | 10:12:00 null null null 1 ORCL 10
"""), note="The seed's select list (t.ticker, t.tradeId, a trailing comma) does not fit its own data: the "
             "scenario selects t.orderId AS tradeOrderId, t.ticker AS tradeTicker, t.amount AS tradeAmount, "
             "which is what the seed's output rows show; OUTER JOIN is FULL OUTER JOIN (SEMANTICS.md 3.5)."),
}


def seed_table(n: int) -> Text:
    """Seed 002's table for query #n, as the seed prints it (the step number on a step's first line)."""
    sq = SEED_002[n]
    rows, last = [], None
    for ln in sq.lines:
        rows.append(["" if ln.step == last else ln.step, ln.orders, ln.trades, ln.output])
        last = ln.step
    return Text(_table(["Step", "Orders", "Trades", "Output"], rows))


# --------------------------------------------------------------------------- comparing the tables

def _secs(text: str) -> int:
    h, m, *s = text.split(":")
    return int(h) * 3600 + int(m) * 60 + (int(s[0]) if s else 0)


def _canon(cell: str) -> str:
    """A table cell with its time as ``HH:MM:SS`` (the seed writes 10:00:00, the engine 10:00)."""
    if not cell:
        return ""
    head, _, rest = cell.partition(" ")
    if re.fullmatch(r"\d\d:\d\d(:\d\d)?", head):
        s = _secs(head)
        head = f"{s // 3600:02d}:{s // 60 % 60:02d}:{s % 60:02d}"
    return (head + " " + rest).strip()


def _engine_steps(q) -> list[list[str]]:
    """The engine's step table (``Step | ORDERS | TRADES | Output``) with its header row."""
    from ..widgets.steps import query_step_table
    q.wait()
    return query_step_table(q)


def _engine_rows(table: list[list[str]]) -> list[tuple[int, str]]:
    """``(step, row)`` for each row the engine's table shows released, in release order."""
    out = []
    for r in table[1:]:
        for cell in [c.strip() for c in r[-1].split(";") if c.strip()]:
            out.append((int(r[0]), cell))
    return out


class Beside:
    """Two tables side by side: the seed's and the engine's (text and HTML)."""

    def __init__(self, title: str, left: tuple[str, list[str], list[list]], right: tuple[str, list[str], list[list]],
                 footer: str = ""):
        self.title, self.left, self.right, self.footer = title, left, right, footer

    def text(self) -> str:
        lt = _table(self.left[1], self.left[2]).splitlines()
        rt = _table(self.right[1], self.right[2]).splitlines()
        lw = max(max(map(len, lt)), len(self.left[0]))
        lines = [self.title, f"{self.left[0].ljust(lw)}   ║   {self.right[0]}"]
        for i in range(max(len(lt), len(rt))):
            a = lt[i] if i < len(lt) else ""
            b = rt[i] if i < len(rt) else ""
            lines.append(f"{a.ljust(lw)}   ║   {b}".rstrip())
        if self.footer:
            lines += ["", self.footer]
        return "\n".join(lines)

    def html(self) -> str:
        from ..widgets.render import SCROLL, html_table
        import html as _html
        parts = [f'<div style="font-weight:bold;margin-bottom:4px">{_html.escape(self.title)}</div>',
                 f'<div class="streamsql-scroll" style="{SCROLL}">'
                 '<div style="display:flex;gap:32px;align-items:flex-start;width:max-content">']
        for caption, header, rows in (self.left, self.right):
            parts.append("<div>" + html_table(header, rows, "streamsql-beside", caption=caption) + "</div>")
        parts.append("</div></div>")
        if self.footer:
            parts.append(f'<pre style="margin-top:6px">{_html.escape(self.footer)}</pre>')
        return "".join(parts)

    def _repr_mimebundle_(self, **kwargs):
        return {"text/plain": self.text(), "text/html": self.html()}

    def __repr__(self):
        return self.text()


def beside(n: int, q) -> Beside:
    """Seed 002's table for query #n (left) beside the step table of the engine's query ``q``
    (right): what each stream received at each step and the rows released."""
    sq = SEED_002[n]
    rows, last = [], None
    for ln in sq.lines:
        rows.append(["" if ln.step == last else str(ln.step), ln.orders, ln.trades, ln.output])
        last = ln.step
    eng = _engine_steps(q)
    engine = q.wb.runtime.label
    return Beside(f"Seed 002, join query #{n}: {sq.title}",
                  ("the seed's table", ["Step", "Orders", "Trades", "Output"], rows),
                  (f"streamsql on {engine} (query {q.name}; a step is one event)", eng[0], eng[1:]))


@dataclass
class Agreement:
    """Where the seed's table and the engine's agree: the inputs, and each released row."""
    n: int
    inputs_agree: bool
    extra_events: list[int]                       # engine events beyond the seed's table
    rows: list[dict] = field(default_factory=list)
    seed_events: int = 0                          # input lines in the seed's table

    @property
    def rows_agree(self) -> bool:
        return all(r["engine_step"] is not None and r["seed_step"] is not None for r in self.rows)

    @property
    def steps_agree(self) -> bool:
        return self.rows_agree and all(r["seed_step"] == r["engine_seed_step"] for r in self.rows)

    @property
    def differences(self) -> list[dict]:
        return [r for r in self.rows if r["seed_step"] != r["engine_seed_step"]]

    def text(self) -> str:
        table = []
        for r in self.rows:
            eng = ("not released yet" if r["engine_step"] is None else
                   f"event {r['engine_step']} = "
                   + (f"seed step {r['engine_seed_step']}" if r["engine_seed_step"] is not None
                      else "after the seed's table"))
            seed = "—" if r["seed_step"] is None else f"step {r['seed_step']}"
            mark = "✓" if r["seed_step"] == r["engine_seed_step"] else "✗"
            table.append([r["row"], seed, eng, mark])
        out = [f"Query #{self.n}: the seed's table against the engine's"]
        out.append(("✓" if self.inputs_agree else "✗") + " inputs: the seed's input lines are the engine's events "
                   + f"1-{self.seed_events} in the same order"
                   + (f"; events {', '.join(map(str, self.extra_events))} come after the seed's table"
                      if self.extra_events else ""))
        out.append(_table(["Released row (seed's notation)", "Seed", "Engine", ""], table))
        same = [r for r in self.rows if r["seed_step"] == r["engine_seed_step"]]
        out.append(f"{'✓' if len(same) == len(self.rows) else '✗'} {len(same)} of {len(self.rows)} rows are released "
                   "by the engine at the seed's step, with the seed's rowtime and values")
        return "\n".join(out)

    def _repr_pretty_(self, p, cycle):
        p.text(self.text())

    def __str__(self):
        return self.text()


def agreement(n: int, q) -> Agreement:
    """Compare seed 002's table for query #n with what ``q`` received and released: the k-th
    input line of the seed must be the query's k-th event, and each output row of the seed must
    be released by the engine, with the same rowtime and values, at an event of the same seed
    step (engine events are numbered one by one; a seed step groups several)."""
    sq = SEED_002[n]
    table = _engine_steps(q)
    seed_inputs = [ln for ln in sq.lines if ln.orders or ln.trades]
    events = [r for r in table[1:] if any(c.strip() for c in r[1:-1])]
    ok = len(events) >= len(seed_inputs)
    seed_step_of: dict[int, int] = {}
    for k, ln in enumerate(seed_inputs):
        if k >= len(events):
            ok = False
            break
        ev = events[k]
        cells = dict(zip([h.upper() for h in table[0]], ev))
        ok &= _canon(ln.orders) == _canon(cells.get("ORDERS", "")) and _canon(ln.trades) == _canon(cells.get("TRADES", ""))
        seed_step_of[int(ev[0])] = ln.step
    extra = [int(ev[0]) for ev in events[len(seed_inputs):]]
    seed_rows = [(ln.step, _canon(ln.output)) for ln in sq.lines if ln.output]
    eng_rows = [(s, _canon(r)) for s, r in _engine_rows(table)]
    rows = []
    used = set()
    for step, row in seed_rows:
        hit = next((i for i, (s, r) in enumerate(eng_rows) if r == row and i not in used), None)
        if hit is None:
            rows.append({"row": row, "seed_step": step, "engine_step": None, "engine_seed_step": None})
        else:
            used.add(hit)
            es = eng_rows[hit][0]
            rows.append({"row": row, "seed_step": step, "engine_step": es, "engine_seed_step": seed_step_of.get(es)})
    for i, (s, r) in enumerate(eng_rows):
        if i not in used:
            rows.append({"row": r, "seed_step": None, "engine_step": s, "engine_seed_step": seed_step_of.get(s)})
    return Agreement(n, ok, extra, rows, len(seed_inputs))


def why_held(q) -> Text:
    """The rows the query's operators hold after the last event, each with what it waits for
    (``q.trace[-1].operators[i].held[j].waits_for``), and the rows the join still keeps."""
    q.wait()
    if not q.trace:
        return Text("(no trace: the workbench runs with trace=False)")
    last = q.trace[-1]
    out = [f"after step {last.step - q.start_seq}:"]
    for op in last.operators:
        clocks = ", ".join(f"{n} {_hm(c)}" for n, c in zip(op.inputs, op.clocks))
        out.append(f"  {op.operator}: input clocks {clocks}; output bound {_hm(op.bound)}")
        if isinstance(op.state, JoinState):
            for name, side in zip(op.inputs, op.state.sides):
                out.append(f"    keeps {name} rows at: {', '.join(_hm(t) for t in side.kept) or 'none'}")
        if not op.held:
            out.append("    holds no row")
        for h in op.held:
            vals = " ".join(format_value(v) for v in h.values)
            out.append(f"    holds {_hm(h.rowtime)} {vals}")
            for w in h.waits_for:
                out.append(f"      waits for: {w}")
    return Text("\n".join(out))


# --------------------------------------------------------------------------- exercises of notebook 05

JOIN_DDL = ("CREATE STREAM Orders (orderId INTEGER, ticker VARCHAR(10), amount INTEGER); "
            "CREATE STREAM Trades (orderId INTEGER, ticker VARCHAR(10), amount INTEGER)")


def _run_local(ddl: str, sql: str, events: list[Event]):
    """Run ``sql`` over ``events`` in-process (the local runtime, the oracle the Spark runtime is
    tested against); returns the query (its rows and steps count from 1) or raises."""
    from ..engine.workbench import Workbench
    wb = Workbench(None, engine="local", durable=False)
    try:
        wb.execute(ddl)
        q = wb.query(sql)
        wb.inject(events)
        q.wait()
        return q
    finally:
        wb.close()


def _as_int(answer) -> int | None:
    try:
        return int(str(answer).strip())
    except (TypeError, ValueError):
        return None


#: Exercise 05.1: query #1 with the Trades bound of step 6 at 10:10 instead of 10:11. Order 1
#: (10:00) matches trades in [10:00, 10:10], both ends included, so a bound at 10:10 still allows
#: a trade at 10:10 for it: the YHOO match (stamped 10:03) waits for the 10:12 trade, step 8.
EX05_BOUND_ANSWER = 8


def check_join_bound_exercise(answer) -> Verdict:
    """Exercise 05.1: the step at which query #1 releases the YHOO match when the Trades bound
    of step 6 is 10:10 instead of 10:11."""
    if _blank(answer):
        return _say(None, "order 1 (10:00) can match a trade at any base time from 10:00 to 10:10, both included. "
                          "After a bound at 10:10, can a trade for order 1 still come? Which later event rules it out?")
    a = _as_int(answer)
    if a == EX05_BOUND_ANSWER:
        return _say(True, "step 8. A bound at 10:10 says the next trade is at 10:10 or later, and a trade at "
                          "exactly 10:10 would still match order 1 (its window [10:00, 10:10] includes both ends), "
                          "giving a row stamped 10:00 that must come out before 10:03. The Orders bound (step 7) "
                          "does not help; only the 10:12 trade (step 8) moves the Trades clock past 10:10.")
    if a == 6:
        return _say(False, "at step 6 the Trades clock is 10:10. Is a trade at exactly 10:10 still in order 1's window?")
    if a == 7:
        return _say(False, "step 7 is a bound on Orders; the row waits for a Trades clock past 10:10.")
    return _say(False, "answer with a step number from 1 to 8: the YHOO row waits until no row stamped before "
                       "10:03 can still come out.")


#: Exercise 05.2: query #2 with a five-minute window. Trade 10:02 matches order 1 (10:00, within 5
#: minutes); trade 10:04 matches order 2 (10:03); trade 10:07:30 is 7.5 minutes after order 1: no
#: match. The 10:02 row comes out at step 3 (no order can come before the Orders clock 10:03), the
#: 10:04 row once the Orders clock passes 10:04: the Orders bound 10:10 at step 7.
EX05_PRECEDING_EXPECTED = [(3, "10:02", 1, "ORCL", 100, 60), (7, "10:04", 2, "YHOO", 25, 25)]


def check_preceding_query(sql) -> Verdict:
    """Exercise 05.2: query #2 (stamped with the trade's rowtime) with a five-minute window,
    run over the seed's eight events."""
    if _blank(sql):
        return _say(None, "start from query #2 and change the window of Orders to five minutes; keep its select list "
                          "(ROWTIME, o.orderId, o.ticker, orderAmount, tradeAmount).")
    try:
        q = _run_local(JOIN_DDL, str(sql), scenario_events("join2_inner_preceding"))
    except StreamSqlError as e:
        return _say(False, f"the query does not run: {e.caret() if getattr(e, 'sql', None) else e}")
    got = [(r.step, _hm(r.rowtime), *r.values) for r in q.rows]
    if got == EX05_PRECEDING_EXPECTED:
        return _say(True, "2 rows: the 10:02 trade with order 1 at step 3 and the 10:04 trade with order 2 at step 7 "
                          "(the Orders bound); the 10:07:30 trade is 7.5 minutes after order 1, outside the window.")
    if len(got) == 3:
        return _say(False, "3 rows: the 10:07:30 trade still matches order 1 (10:00). Is the window five minutes?")
    return _say(False, f"over the seed's 8 events it released {[(s, t) for s, t, *_ in got]} as (step, rowtime); "
                       "expected 2 rows. Keep query #2's select list and join condition.")


#: Exercise 05.3: query #3 with a five-minute window. The IBM order (10:00) leaves its window when
#: the Trades clock minus 5 minutes passes 10:00: the 10:07:30 trade, step 6; nothing earlier than
#: 10:00 can still come out then, so it is released at once.
EX05_OUTER_ANSWER = 6


def check_outer_exercise(answer) -> Verdict:
    """Exercise 05.3: the step at which query #3, with a five-minute window, releases the
    unmatched IBM order."""
    if _blank(answer):
        return _say(None, "the IBM order (10:00) is unmatched once no trade can reach its window any more: when the "
                          "Trades clock minus five minutes passes 10:00. Which event moves the Trades clock past 10:05?")
    a = _as_int(answer)
    if a == EX05_OUTER_ANSWER:
        return _say(True, "step 6: the 10:07:30 trade moves the Trades clock past 10:05, so no trade can match the IBM "
                          "order any more; it is stamped 10:00 and nothing earlier can still come out.")
    if a == 7:
        return _say(False, "that is the answer with the ten-minute window. With five minutes, an earlier event "
                           "already closes IBM's window.")
    return _say(False, "answer with a step number (1-11 of join3_full_outer.events.jsonl).")


# --------------------------------------------------------------------------- notebook 06: Calcite's tour (seed 004)

def _seed(spec: str) -> tuple[list[str], list[list[str]]]:
    """A seed 004 table (``a | b`` lines, header first, no rule line) as header and rows."""
    lines = [ln for ln in spec.strip().splitlines() if not set(ln.strip()) <= set("-+")]
    cells = [[c.strip() for c in ln.split("|")] for ln in lines]
    return cells[0], cells[1:]


#: Seed 004's result tables, transcribed as printed (typos included); ``None``: the seed prints no
#: table for that example, and the expected rows below were derived by hand from its data.
CALCITE: dict[str, tuple[list[str], list[list[str]]]] = {
    "history": _seed("""
  rowtime | productId | orderId | units
 08:30:00 |        10 |       1 |     3
 08:45:10 |        20 |       2 |     1
 09:12:21 |        10 |       3 |    10
 09:27:44 |        30 |       4 |     2
"""),
    "stream": _seed("""
  rowtime | productId | orderId | units
 10:17:00 |        30 |       5 |     4
 10:17:05 |        10 |       6 |     1
 10:18:05 |        20 |       7 |     2
 10:18:07 |        30 |       8 |    20
 11:02:00 |        10 |       9 |     6
 11:04:00 |        10 |      10 |     1
 11:09:30 |        40 |      11 |    12
 11:24:11 |        10 |      12 |     4
"""),
    "filter": _seed("""
  rowtime | productId | orderId | units
 10:17:00 |        30 |       5 |     4
 10:18:07 |        30 |       8 |    20
 11:02:00 |        10 |       9 |     6
 11:09:30 |        40 |      11 |    12
 11:24:11 |        10 |      12 |     4
"""),
    "projection": _seed("""
  rowtime | description
 10:17:00 | An order for 4 units of product #30
 10:17:05 | An order for 1 unit of product #10
 10:18:05 | An order for 2 units of product #20
 10:18:07 | An order for 20 units of product #30
 11:02:00 | An order by 6 units of product #10
 11:04:00 | An order by 1 unit of product #10
 11:09:30 | An order for 12 units of product #40
 11:24:11 | An order by 4 units of product #10
"""),
    "tumbling": _seed("""
  rowtime | productId |       c | units
 10:00:00 |        30 |       2 |    24
 10:00:00 |        10 |       1 |     1
 10:00:00 |        20 |       1 |     7
 11:00:00 |        10 |       3 |    11
 11:00:00 |        40 |       1 |    12
"""),
    "having": _seed("""
  rowtime | productId
 10:00:00 |        30
 11:00:00 |        10
 11:00:00 |        40
"""),
    "order_by": _seed("""
  rowtime | productId | orderId | units
 10:00:00 |        30 |       8 |    20
 10:00:00 |        30 |       5 |     4
 10:00:00 |        20 |       7 |     2
 10:00:00 |        10 |       6 |     1
 11:00:00 |        40 |      11 |    12
 11:00:00 |        10 |       9 |     6
 11:00:00 |        10 |      12 |     4
 11:00:00 |        10 |      10 |     1
"""),
    "union": _seed("""
  rowtime | productId | orderId | units
 10:17:05 |        10 |       6 |     1
 10:17:00 |        30 |       5 |     4
 10:18:07 |        30 |       8 |    20
 11:02:00 |        10 |       9 |     6
 11:04:00 |        10 |      10 |     1
 11:24:11 |        10 |      12 |     4
"""),
    "union_ordered": _seed("""
  rowtime | productId | orderId | units
 10:17:00 |        30 |       5 |     4
 10:17:05 |        10 |       6 |     1
 10:18:07 |        30 |       8 |    20
 11:02:00 |        10 |       9 |     6
 11:04:00 |        10 |      10 |     1
 11:24:11 |        10 |      12 |     4
"""),
}

#: Examples the seed shows without a result table: the rows derived by hand from the eight
#: orders (see the notebook for the derivations).
BY_HAND: dict[str, tuple[list[str], list[list[str]]]] = {
    # every hour, per product, the totals of the hourly groups of the last two hours (09:00 has no
    # streamed orders: the query sees only the orders that arrive after it starts)
    "hopping": _seed("""
  rowtime | productId | su | c
 10:00:00 |        10 |  1 | 1
 10:00:00 |        20 |  2 | 1
 10:00:00 |        30 | 24 | 2
 11:00:00 |        10 | 12 | 4
 11:00:00 |        40 | 12 | 1
"""),
    # units of all products in the hour up to each order, both ends included
    "sliding": _seed("""
  rowtime | productId | units | unitsLastHour
 10:17:00 |        30 |     4 |  4
 10:17:05 |        10 |     1 |  5
 10:18:05 |        20 |     2 |  7
 10:18:07 |        30 |    20 | 27
 11:02:00 |        10 |     6 | 33
 11:04:00 |        10 |     1 | 34
 11:09:30 |        40 |    12 | 46
 11:24:11 |        10 |     4 | 23
"""),
    # per product: integer averages over 10 minutes and 7 days; rows where the first is larger
    "m10_d7": _seed("""
  rowtime | productId | units | m10 | d7
 11:02:00 |        10 |     6 |   6 |  3
 11:04:00 |        10 |     1 |   3 |  2
 11:24:11 |        10 |     4 |   4 |  3
"""),
    # units of all products since the top of the hour
    "cascading": _seed("""
  rowtime | productId | units | unitsSinceTopOfHour
 10:17:00 |        30 |     4 |  4
 10:17:05 |        10 |     1 |  5
 10:18:05 |        20 |     2 |  7
 10:18:07 |        30 |    20 | 27
 11:02:00 |        10 |     6 |  6
 11:04:00 |        10 |     1 |  7
 11:09:30 |        40 |    12 | 19
 11:24:11 |        10 |     4 | 23
"""),
}

#: Where the seed's own tables are wrong, checked by hand against its data.
SEED_004_TYPOS = {
    ("tumbling", ("10:00:00", "20", "1", "7")):
        "the seed prints 7 units for product 20, but its only order of product 20 (10:18:05, order 7) is for 2 units",
    ("projection", ("11:02:00", "An order by 6 units of product #10")):
        "the seed prints 'An order by' in three rows, which its own query ('An order for ') cannot produce",
    ("projection", ("11:04:00", "An order by 1 unit of product #10")): "",
    ("projection", ("11:24:11", "An order by 4 units of product #10")): "",
}

SEED_004_ORDERS = [("10:17:00", 30, 5, 4), ("10:17:05", 10, 6, 1), ("10:18:05", 20, 7, 2), ("10:18:07", 30, 8, 20),
                   ("11:02:00", 10, 9, 6), ("11:04:00", 10, 10, 1), ("11:09:30", 40, 11, 12), ("11:24:11", 10, 12, 4)]
SEED_004_HISTORY = [("08:30:00", 10, 1, 3), ("08:45:10", 20, 2, 1), ("09:12:21", 10, 3, 10), ("09:27:44", 30, 4, 2)]

CALCITE_DDL = """\
CREATE STREAM Orders (productId INTEGER, orderId INTEGER, units INTEGER);
CREATE STREAM Shipments (orderId INTEGER);
CREATE TABLE Products (productId INTEGER, name VARCHAR(20));
INSERT INTO Products (productId, name) VALUES (10, 'Beer'), (20, 'Wine'), (30, 'Cheese'), (40, 'Bread')"""


def _hms(ms: int) -> str:
    d = T.to_datetime(ms)
    return d.strftime("%H:%M:%S")


class CalciteTour:
    """Seed 004's Orders, played into a workbench: the four orders of the past (the history a
    relational query reads), then for each example the eight orders of the present. A stream
    only moves forward, so each example's orders arrive one day after the previous example's;
    the tables show times of day, as the seed does."""

    DAY = "2015-02-15"

    def __init__(self, wb):
        self.wb = wb
        self.plays = 0

    def day(self, k: int) -> str:
        return T.format_timestamp(T.parse_timestamp(self.DAY) + k * T.DAY)[:10]

    def history(self) -> Text:
        """The four orders before 10:00 of the first day, kept as the stream's history."""
        self.wb.set_history("Orders")
        for t, p, o, u in SEED_004_HISTORY:
            self.wb.insert("Orders", {"productId": p, "orderId": o, "units": u}, rowtime=f"{self.DAY} {t}")
        return Text(f"4 orders inserted on {self.DAY}, from 08:30:00 to 09:27:44; Orders keeps its history")

    def play(self, q, example: str, *, stop: bool = True) -> Beside:
        """Insert the seed's eight orders (the next day), then a bound at 12:00 that closes the
        11:00 hour; show the seed's table for ``example`` beside what ``q`` released, with the
        event that released each row (1-8: the orders, 9: the bound). Then stop ``q``."""
        day = self.day(self.plays)
        self.plays += 1
        first = self.wb.last_seq + 1
        for t, p, o, u in SEED_004_ORDERS:
            self.wb.insert("Orders", {"productId": p, "orderId": o, "units": u}, rowtime=f"{day} {t}")
        self.wb.punctuate("Orders", f"{day} 12:00:00")
        q.wait()
        rows = [[_hms(r.rowtime)] + [format_value(v) for v in r.values] for r in q.rows]
        events = [str(r.step - first + 1) for r in q.rows]
        if stop:
            q.stop()
        label = f"streamsql on {q.wb.runtime.label} (Event: what released the row)"
        return compare_calcite(example, ["ROWTIME"] + q.columns, rows, label, events)

    def table(self, result, example: str) -> Beside:
        """A relational query's answer (``%%streamsql -o VAR`` binds it) beside the seed's table."""
        rows = [[_hms(v) if f.name == "ROWTIME" else format_value(v) for f, v in zip(result.fields, row)]
                for row in result.rows]
        return compare_calcite(example, list(result.columns), rows,
                               f"streamsql on {self.wb.runtime.label} (a relational query)")


def compare_calcite(example: str, header: list[str], rows: list[list[str]], label: str,
                    events: list[str] | None = None) -> Beside:
    """The seed's table (or the rows derived by hand) beside the engine's, and how they compare."""
    by_hand = example not in CALCITE
    want_header, want = (BY_HAND if by_hand else CALCITE)[example]
    mine = [list(r) for r in rows]
    notes = []
    if mine == want:
        verdict = "✓ the same rows, in the same order"
    elif sorted(mine) == sorted(want):
        verdict = "✓ the same rows; the seed lists them in another order"
    else:
        typos = []
        rest_w, rest_m = [r for r in want if r not in mine], [r for r in mine if r not in want]
        for r in rest_w:
            why = SEED_004_TYPOS.get((example, tuple(r)))
            if why is not None:
                typos.append(r)
                if why:
                    notes.append(f"  seed's row {' '.join(r)}: {why}")
        if len(typos) == len(rest_w) and len(rest_m) == len(rest_w):
            same_order = [r for r in want if r not in typos] == [r for r in mine if r not in rest_m]
            verdict = (f"✓ the same rows except {len(typos)} the seed misprints (checked by hand against its data)"
                       + ("" if same_order else "; the seed also lists the rows in another order") + ":")
        else:
            verdict = "✗ the rows differ from the seed's table"
    source = "rows derived by hand from the seed's data (the seed prints no table)" if by_hand else "the seed's table"
    shown = [[e] + r for e, r in zip(events, mine)] if events is not None else mine
    title = f"Seed 004, {example.replace('_', ' ')}"
    if events is not None:
        title += ": events 1-8 are the eight orders, event 9 a bound at 12:00"
    return Beside(title, (source, want_header, want),
                  (label, (["Event"] if events is not None else []) + list(header), shown), "\n".join([verdict] + notes))


# --------------------------------------------------------------------------- exercises of notebook 06

def _calcite_events(day: str = "2015-02-15") -> list[Event]:
    evs = [Event("Orders", "row", T.parse_timestamp(f"{day} {t}"), {"productId": p, "orderId": o, "units": u})
           for t, p, o, u in SEED_004_ORDERS]
    return evs + [Event("Orders", "bound", T.parse_timestamp(f"{day} 12:00:00"))]


def _calcite_query(sql, hint: str):
    """The reader's query run over the eight orders (and a bound at 12:00), or the Verdict that
    says why it could not be."""
    if _blank(sql):
        return _say(None, hint)
    try:
        return _run_local(CALCITE_DDL, str(sql), _calcite_events())
    except StreamSqlError as e:
        return _say(False, f"the query does not run: {e.caret() if getattr(e, 'sql', None) else e}")


def _col(q, name: str):
    names = [f.name for f in q.fields]
    return None if name.upper() not in names else [r.values[names.index(name.upper())] for r in q.rows]


#: Exercise 06.1: units per product per quarter of an hour. The orders of 10:17-10:18 fall in
#: [10:15, 10:30); 11:02 and 11:04 (product 10) and 11:09:30 (product 40) in [11:00, 11:15);
#: 11:24:11 in [11:15, 11:30). As (period start, productId, units):
EX06_STEP_EXPECTED = [("10:15", 10, 1), ("10:15", 20, 2), ("10:15", 30, 24), ("11:00", 10, 7), ("11:00", 40, 12),
                      ("11:15", 10, 4)]


def check_step_query(sql) -> Verdict:
    """Exercise 06.1: total units per product every 15 minutes (a tumbling window FLOOR cannot
    express; STEP can)."""
    q = _calcite_query(sql, "group by a STEP expression of rowtime (periods of 15 minutes) and by productId; select "
                            "productId and SUM(units) AS units.")
    if isinstance(q, Verdict):
        return q
    pid, units = _col(q, "productId"), _col(q, "units")
    if pid is None or units is None:
        return _say(False, f"select the columns PRODUCTID and UNITS; the query selects {', '.join(q.columns)}")
    quarter = 15 * 60_000
    for shift, stamped in ((0, "the start"), (quarter, "the end")):
        got = [(_hm(r.rowtime - shift), p, u) for r, p, u in zip(q.rows, pid, units)]
        if got == EX06_STEP_EXPECTED:
            return _say(True, f"6 rows, stamped with {stamped} of each quarter: the quarters starting 10:15 "
                              "(products 10, 20, 30), 11:00 (10 and 40) and 11:15 (10). Each is released when the Orders clock reaches the "
                              "end of its quarter: the 11:02 order closes 10:15-10:30, 11:24:11 closes 11:00-11:15 "
                              "and the 12:00 bound the last one.")
    got = [(_hm(r.rowtime), p, u) for r, p, u in zip(q.rows, pid, units)]
    return _say(False, f"over the eight orders it released {got} as (rowtime, productId, units); expected 6 rows, "
                       "one per product and quarter of an hour with orders.")


#: Exercise 06.2: which of these does streamsql (like Calcite) refuse?
EX06_QUERIES = {
    "A": "SELECT STREAM * FROM Orders WHERE units > 10",
    "B": "SELECT * FROM Shipments",
    "C": "SELECT STREAM productId, SUM(units) AS units FROM Orders GROUP BY productId",
    "D": "SELECT STREAM FLOOR(rowtime TO HOUR) AS rowtime, productId, COUNT(*) AS c FROM Orders "
         "GROUP BY FLOOR(rowtime TO HOUR), productId",
    "E": "SELECT STREAM * FROM Orders ORDER BY units DESC",
    "F": "SELECT * FROM Products",
    "G": "SELECT STREAM * FROM Products",
}
#: B: a stream without history is not a table; C: no monotonic GROUP BY key; E: ORDER BY must start
#: with a monotonic key; G: a table is not a stream.
EX06_REJECTED = {"B", "C", "E", "G"}


def check_rejected(answer) -> Verdict:
    """Exercise 06.2: the letters of the queries in ``EX06_QUERIES`` that are rejected."""
    if _blank(answer):
        return _say(None, "a streaming query needs streams, and a GROUP BY or ORDER BY on a stream needs a "
                          "monotonic expression first; a relational query needs tables (or a stream's history).")
    got = {str(a).strip().upper() for a in answer}
    if got == EX06_REJECTED:
        return _say(True, "B (Shipments is a stream without history: not a table), C (no monotonic expression in "
                          "GROUP BY), E (ORDER BY must start with a monotonic expression) and G (Products is a "
                          "table: not a stream). A, D and F run.")
    missing, extra = sorted(EX06_REJECTED - got), sorted(got - EX06_REJECTED)
    why = []
    if extra:
        why.append(f"{', '.join(extra)} {'runs' if len(extra) == 1 else 'run'}")
    if missing:
        why.append(f"{len(missing)} rejected {'query is' if len(missing) == 1 else 'queries are'} missing")
    return _say(False, "; ".join(why) + ". Try them in %%streamsql cells.")


#: Exercise 06.3: for each order, the units of the same product since the top of the hour.
EX06_RUNNING_EXPECTED = [("10:17:00", 30, 4, 4), ("10:17:05", 10, 1, 1), ("10:18:05", 20, 2, 2),
                         ("10:18:07", 30, 20, 24), ("11:02:00", 10, 6, 6), ("11:04:00", 10, 1, 7),
                         ("11:09:30", 40, 12, 12), ("11:24:11", 10, 4, 11)]


def check_running_total(sql) -> Verdict:
    """Exercise 06.3: a cascading window per product: rowtime, productId, units and, last, the
    units of that product since the top of the hour."""
    q = _calcite_query(sql, "a cascading window whose PARTITION BY has both the hour "
                            "(FLOOR(rowtime TO HOUR)) and the product; select rowtime, productId, units and the sum last.")
    if isinstance(q, Verdict):
        return q
    pid, units = _col(q, "productId"), _col(q, "units")
    if pid is None or units is None:
        return _say(False, f"select the columns PRODUCTID and UNITS; the query selects {', '.join(q.columns)}")
    got = [(_hms(r.rowtime), p, u, r.values[-1]) for r, p, u in zip(q.rows, pid, units)]
    if got == EX06_RUNNING_EXPECTED:
        return _say(True, "8 rows, one per order, each released at once: product 10 goes 1 (10:00 hour), then "
                          "6, 7, 11 (11:00 hour); product 30 goes 4, 24.")
    return _say(False, f"it released {[(t, p, s) for t, p, _u, s in got]} as (rowtime, productId, total); "
                       "expected the totals 4, 1, 2, 24, 6, 7, 12, 11.")


# --------------------------------------------------------------------------- notebook 07: a million trades

TICKERS = ["AAPL", "AMZN", "CSCO", "GOOG", "IBM", "INTC", "MSFT", "ORCL", "SAP", "YHOO"]
DAY0 = T.parse_timestamp("2006-10-10 00:00:00")
HOUR = 3_600_000

SCALE_DDL = """\
CREATE STREAM Orders (orderId INTEGER, ticker VARCHAR(10), amount INTEGER);
CREATE STREAM Trades (orderId INTEGER, ticker VARCHAR(10), price DOUBLE, amount INTEGER)"""

HOURLY_SQL = """\
SELECT STREAM ticker, COUNT(*) AS trades, SUM(amount) AS volume,
       SUM(price * amount) / SUM(amount) AS vwap
FROM Trades
GROUP BY FLOOR(Trades.ROWTIME TO HOUR), ticker"""

MATCHED_SQL = """\
SELECT STREAM ROWTIME, o.orderId, o.ticker, o.amount AS orderAmount,
       t.amount AS tradeAmount, t.price
FROM Orders AS o
JOIN Trades OVER (RANGE INTERVAL '10' MINUTE FOLLOWING) AS t
ON o.orderId = t.orderId"""


def generate_trades(folder, *, trades: int = 1_000_000, orders: int = 250_000, files: int = 10,
                    seed: int = 2006) -> Text:
    """Write a day of synthetic orders and the trades that fill them as CSV files, the same on
    every run (``numpy``'s generator with a fixed seed): ``folder/orders/orders.csv`` and
    ``folder/trades/trades-000.csv`` ... (``files`` files, in time order). Each trade fills a
    random order 0 to 20 minutes after it was placed, at a price that follows a daily curve
    per ticker plus noise."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.csv as pcsv
    rng = np.random.default_rng(seed)
    folder = Path(folder)
    (folder / "trades").mkdir(parents=True, exist_ok=True)
    (folder / "orders").mkdir(parents=True, exist_ok=True)
    tick = np.array(TICKERS)
    o_time = DAY0 + np.sort(rng.integers(0, 24 * HOUR - 20 * 60_000, orders))
    o_tick = rng.integers(0, len(tick), orders)
    o_amount = (rng.integers(1, 100, orders) * 10).astype(np.int32)
    which = rng.integers(0, orders, trades)
    t_time = o_time[which] + rng.integers(0, 20 * 60_000, trades)
    order = np.argsort(t_time, kind="stable")
    t_time, which = t_time[order], which[order]
    hours = (t_time - DAY0) / HOUR
    base = 20.0 + 8.0 * o_tick[which]
    price = np.round(base * (1 + 0.05 * np.sin(hours / 24 * 2 * np.pi + o_tick[which])) +
                     rng.normal(0, 0.2, trades), 2)
    t_amount = (rng.integers(1, 10, trades) * 10).astype(np.int32)

    def ts(ms):
        return pa.array(ms, pa.timestamp("ms"))
    per = -(-trades // files)
    opts = pcsv.WriteOptions(quoting_style="none")
    for k in range(files):
        s = slice(k * per, (k + 1) * per)
        pcsv.write_csv(pa.table({"ts": ts(t_time[s]), "orderId": which[s].astype(np.int32),
                                 "ticker": tick[o_tick[which[s]]], "price": price[s], "amount": t_amount[s]}),
                       folder / "trades" / f"trades-{k:03d}.csv", opts)
    pcsv.write_csv(pa.table({"ts": ts(o_time), "orderId": np.arange(orders, dtype=np.int32), "ticker": tick[o_tick],
                             "amount": o_amount}), folder / "orders" / "orders.csv", opts)
    return Text(f"{trades:,} trades in {files} files trades/trades-000.csv ... trades-{files - 1:03d}.csv, "
                f"{orders:,} orders in orders/orders.csv\n"
                f"orders from {T.format_timestamp(int(o_time[0]))} to {T.format_timestamp(int(o_time[-1]))}, "
                f"trades from {T.format_timestamp(int(t_time[0]))} to {T.format_timestamp(int(t_time[-1]))}")


def read_csv(folder):
    """The orders and the trades, read from the CSV files with pyarrow (``ts`` as epoch ms)."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.csv as pcsv
    folder = Path(folder)
    conv = pcsv.ConvertOptions(column_types={"ts": pa.timestamp("ms"), "orderId": pa.int32(), "amount": pa.int32()})

    def ms(t):
        return t.set_column(0, "ts", pc.cast(t.column("ts"), pa.int64()))
    trades = pa.concat_tables([pcsv.read_csv(p, convert_options=conv)
                               for p in sorted((folder / "trades").glob("trades-*.csv"))])
    orders = pcsv.read_csv(folder / "orders" / "orders.csv", convert_options=conv)
    return ms(orders), ms(trades)


def events_table(folder, *, bound_every: int = 10_000):
    """One table of events for ``Workbench.load(None, ...)``: the orders and the trades merged in
    time order (an order before a trade of the same millisecond), a bound on both streams every
    ``bound_every`` events (at the time of the next event: a producer that has sent everything
    up to then says so), and a final bound on both an hour after the last trade. Columns:
    ``STREAM``, ``ROWTIME``, ``BOUND`` and the streams' columns."""
    import numpy as np
    import pyarrow as pa
    orders, trades = read_csv(folder)
    n_o, n_t = orders.num_rows, trades.num_rows
    rt = np.concatenate([orders.column("ts").to_numpy(), trades.column("ts").to_numpy()])
    src = np.concatenate([np.zeros(n_o, np.int8), np.ones(n_t, np.int8)])
    pos = np.concatenate([np.arange(n_o), np.arange(n_t)])
    order = np.lexsort((src, rt))
    rt, src, pos = rt[order], src[order], pos[order]
    n = len(rt)
    at = np.arange(bound_every, n, bound_every)
    # each bound goes right before event ``at``, Orders' first, then Trades'
    key = np.concatenate([np.arange(n) * 3 + 2, at * 3, at * 3 + 1])
    o2 = np.argsort(key, kind="stable")
    end = int(rt[-1]) + HOUR
    stream = np.concatenate([src, np.zeros(len(at), np.int8), np.ones(len(at), np.int8)])[o2]
    times = np.concatenate([rt, rt[at], rt[at]])[o2]
    bound = np.concatenate([np.zeros(n, bool), np.ones(2 * len(at), bool)])[o2]
    pos = np.concatenate([pos, np.zeros(2 * len(at), np.int64)])[o2]
    stream, times = np.concatenate([stream, [0, 1]]), np.concatenate([times, [end, end]])
    bound, pos = np.concatenate([bound, [True, True]]), np.concatenate([pos, [0, 0]])
    is_o, is_t = (stream == 0) & ~bound, (stream == 1) & ~bound

    def col(name, dtype, null=None):
        o = orders.column(name).to_numpy(zero_copy_only=False) if name in orders.column_names else None
        t = trades.column(name).to_numpy(zero_copy_only=False)
        out = np.empty(len(stream), dtype=dtype)
        out[:] = null if null is not None else 0
        if o is not None:
            out[is_o] = o[pos[is_o]]
        out[is_t] = t[pos[is_t]]
        return out
    tick = col("ticker", object, "")
    return pa.table({"STREAM": np.where(stream == 0, "Orders", "Trades"), "ROWTIME": times, "BOUND": bound,
                     "orderId": col("orderId", np.int32), "ticker": pa.array(np.where(bound, None, tick), pa.string()),
                     "amount": col("amount", np.int32), "price": col("price", np.float64)})


def describe_events(table) -> Text:
    import numpy as np
    s = np.asarray(table.column("STREAM").to_pylist(), dtype=object)
    b = table.column("BOUND").to_numpy(zero_copy_only=False)
    rt = table.column("ROWTIME").to_numpy()
    n_o, n_t = int(((s == "Orders") & ~b).sum()), int(((s == "Trades") & ~b).sum())
    return Text(f"{table.num_rows:,} events: {n_o:,} orders, {n_t:,} trades and {int(b.sum()):,} bounds, "
                f"from {T.format_timestamp(int(rt[0]))} to {T.format_timestamp(int(rt[-1]))}")


class Progress:
    """Progress bars (ipywidgets) for a replay: the events loaded into the workspace, then the
    events each query has processed (its last released step). ``text/plain`` is a fixed line,
    so that a notebook's stored output does not depend on how far the bars were when shown."""

    def __init__(self, total: int, queries: list):
        import ipywidgets as widgets
        self.total = total
        self.queries = queries
        style = {"description_width": "110px"}
        layout = widgets.Layout(width="520px")
        self.load_bar = widgets.IntProgress(value=0, min=0, max=total, description="loaded", style=style,
                                            layout=layout)
        self.bars = {q.name: widgets.IntProgress(value=0, min=0, max=total, description=f"query {q.name}",
                                                 style=style, layout=layout) for q in queries}
        self.label = widgets.Label("")
        self.box = widgets.VBox([self.load_bar, *self.bars.values(), self.label])
        self._stop = threading.Event()
        self._loaded = 0

    def loaded(self, done: int, total: int) -> None:
        """``Workbench.load``'s progress callback: ``done`` of ``total`` rows of the stream being
        written (one stream after the other)."""
        if done == total:
            self._loaded += total
            self.load_bar.value = min(self.total, self._loaded)
        else:
            self.load_bar.value = min(self.total, self._loaded + done)

    def _poll(self) -> None:
        while not self._stop.wait(0.25):
            for q in self.queries:
                self.bars[q.name].value = max(0, min(self.total, q.processed_seq - q.start_seq))

    def start(self) -> None:
        threading.Thread(target=self._poll, daemon=True).start()

    def finish(self) -> None:
        self._stop.set()
        self.load_bar.value = self.total
        for bar in self.bars.values():
            bar.value = self.total
        self.label.value = "done"

    def _repr_mimebundle_(self, **kwargs):
        data = self.box._repr_mimebundle_(**kwargs)
        data["text/plain"] = (f"Progress of the replay: {self.total:,} events loaded, then processed by "
                              + ", ".join(q.name for q in self.queries))
        data["text/html"] = f"<div>{data['text/plain']}</div>"      # without a kernel (nbconvert, nbviewer)
        return data


@dataclass
class Replay:
    events: int
    load_seconds: float
    seconds: dict       # query name -> seconds from the start of the load until it had processed all

    def throughput(self) -> Text:
        lines = [f"load into the workspace: {self.events:,} events in {self.load_seconds:.1f} s "
                 f"({self.events / self.load_seconds:,.0f} events/s)"]
        for name, s in self.seconds.items():
            lines.append(f"query {name}: all {self.events:,} events processed {s:.1f} s after the load began "
                         f"({self.events / s:,.0f} events/s)")
        return Text("\n".join(lines))


def replay(wb, table, queries: list, progress: Progress | None = None) -> Replay:
    """Load ``table`` into ``wb`` (the queries are running: Spark processes the events as they
    are committed), then wait until every query has processed every event; times both."""
    if progress is not None:
        progress.start()
    t0 = _time.perf_counter()
    wb.load(None, table, chunk=100_000, progress=progress.loaded if progress is not None else None)
    t1 = _time.perf_counter()
    seconds = {}
    for q in queries:
        q.wait()
        seconds[q.name] = _time.perf_counter() - t0
    if progress is not None:
        progress.finish()
    return Replay(table.num_rows, t1 - t0, seconds)


def batch_hourly(spark, folder) -> list[tuple]:
    """The hourly query as a Spark batch query over the trade files: ``(hour, ticker, trades,
    volume, vwap)`` sorted (:func:`streamsql.engine.runtime.spark.checks.hourly`)."""
    from ..engine.runtime.spark.checks import hourly
    return hourly(spark, Path(folder) / "trades", HOUR)


def batch_matches(spark, folder) -> list[tuple]:
    """The join as a Spark batch query over the CSV files (every order with every trade of the
    same order id in the ten minutes after it, both ends included): ``(rowtime, orderId, ticker,
    orderAmount, tradeAmount, price)`` sorted (:func:`streamsql.engine.runtime.spark.checks.matches`)."""
    from ..engine.runtime.spark.checks import matches
    return matches(spark, Path(folder) / "orders", Path(folder) / "trades")


def _streamed(q) -> list[tuple]:
    t = q.table()
    cols = [t.column("rowtime").to_pylist()] + [t.column(f"v{i}").to_pylist() for i in range(len(q.columns))]
    return list(zip(*cols))


def compare_hourly(q, batch: list[tuple]) -> Text:
    """The streaming hourly rows (stamped with the end of their hour) against the batch query:
    counts and volumes exactly, the VWAP to 1e-9 (a sum of floats depends on its order)."""
    import math
    got = sorted(_streamed(q))
    if len(got) != len(batch):
        return Text(f"✗ {len(got)} hourly rows streamed, {len(batch)} from the batch query")
    for g, b in zip(got, batch):
        if g[:4] != b[:4] or not math.isclose(g[4], b[4], rel_tol=1e-9):
            return Text(f"✗ first difference: streamed {g}, batch {b}")
    return Text(f"✓ equal: the {len(got)} hourly rows of the stream (hour, ticker, trades, volume, VWAP to 1e-9) "
                f"are the Spark batch query's, {sum(r[2] for r in got):,} trades in all")


def compare_matches(q, batch: list[tuple]) -> Text:
    """The streaming join's rows against the batch join, as sorted lists (exactly)."""
    got = sorted(_streamed(q))
    if got == batch:
        return Text(f"✓ equal: the stream's {len(got):,} matches (rowtime, orderId, ticker, amounts, price) are "
                    f"the Spark batch join's, row for row")
    extra = [r for r in got[:1000] if r not in set(batch[:2000])][:1]
    return Text(f"✗ {len(got):,} matches streamed, {len(batch):,} from the batch join" +
                (f"; e.g. streamed only: {extra[0]}" if extra else ""))


def hourly_frame(q):
    """The hourly rows as a pandas frame: ``hour`` (its start), ticker, trades, volume, VWAP in cents."""
    import pandas as pd
    rows = sorted(_streamed(q))
    return pd.DataFrame({"hour": [T.format_timestamp(r[0] - HOUR)[11:16] for r in rows],
                         "ticker": [r[1] for r in rows], "trades": [r[2] for r in rows],
                         "volume": [r[3] for r in rows], "vwap": [round(r[4], 2) for r in rows]})


def hourly_chart(q):
    """Hourly VWAP per ticker (Altair; the data rounded to cents, so the chart is the same on
    every run)."""
    import altair as alt
    df = hourly_frame(q)
    return (alt.Chart(df).mark_line(point=True)
            .encode(x=alt.X("hour:O", title="hour (UTC)"), y=alt.Y("vwap:Q", title="VWAP", scale=alt.Scale(zero=False)),
                    color=alt.Color("ticker:N"), tooltip=["hour", "ticker", "trades", "volume", "vwap"])
            .properties(width=560, height=280, title="Hourly volume-weighted average price, streamed"))


def fills_frame(q):
    """Matched trades per hour of the order (the join's rowtime) and their share of all trades."""
    import pandas as pd
    t = q.table()
    hours = (pd.Series(t.column("rowtime").to_numpy()) - DAY0) // HOUR
    counts = hours.value_counts().sort_index()
    return pd.DataFrame({"hour": [f"{int(h):02d}:00" for h in counts.index], "matches": counts.values.astype(int)})


def fills_chart(q):
    import altair as alt
    df = fills_frame(q)
    return (alt.Chart(df).mark_bar()
            .encode(x=alt.X("hour:O", title="hour of the order (UTC)"), y=alt.Y("matches:Q", title="trades matched"),
                    tooltip=["hour", "matches"])
            .properties(width=560, height=200, title="Orders matched by a trade within ten minutes, per hour"))


# --------------------------------------------------------------------------- exercises of notebook 07

def first_release_step(table) -> int:
    """The step that releases the first hourly rows: the first Trades event (row or bound) at or
    after 01:00, which closes the hour 00:00-01:00 (steps count the table's events from 1)."""
    import numpy as np
    s = np.asarray(table.column("STREAM").to_pylist(), dtype=object)
    rt = table.column("ROWTIME").to_numpy()
    return int(np.nonzero((s == "Trades") & (rt >= DAY0 + HOUR))[0][0]) + 1


def check_first_release(answer, table) -> Verdict:
    """Exercise 07.1: the step at which the hourly query releases its first rows (steps count
    the loaded events from 1)."""
    if _blank(answer):
        return _say(None, "the 00:00 groups are complete when the Trades clock reaches 01:00. Find the first event of "
                          "the table on Trades (a row or a bound) whose ROWTIME is 01:00 or later; its step is its "
                          "position in the table, counting from 1.")
    truth = first_release_step(table)
    a = _as_int(answer)
    if a == truth:
        return _say(True, f"step {truth:,}: the first Trades event at or after 01:00 closes the 00:00 hour of every "
                          "ticker, and their 10 rows are released together, ordered by ticker.")
    if a is not None and a == truth - 1:
        return _say(False, "one too early: steps count from 1, positions in a table from 0.")
    return _say(False, "not that step. An Orders event does not move the Trades clock; a bound on Trades does.")


FILLS_COLUMNS = ("ticker", "fills", "filled")


def _sample(table, minutes: int = 20):
    """The events of the first ``minutes`` minutes, and a bound on both streams an hour later."""
    import numpy as np
    import pyarrow as pa
    rt = table.column("ROWTIME").to_numpy()
    n = int(np.searchsorted(rt, DAY0 + minutes * 60_000))
    head = table.slice(0, n)
    end = pa.table({"STREAM": ["Orders", "Trades"], "ROWTIME": [DAY0 + 2 * HOUR] * 2, "BOUND": [True, True],
                    "orderId": pa.array([0, 0], pa.int32()), "ticker": pa.array([None, None], pa.string()),
                    "amount": pa.array([0, 0], pa.int32()), "price": [0.0, 0.0]})
    return pa.concat_tables([head, end.cast(head.schema)])


def expected_fills(table, minutes: int = 20) -> list[tuple]:
    """Per ticker, the matches of the sample's orders (every trade of the same order id within
    ten minutes after the order, both ends included) and their traded amount; computed with
    pandas, independently of the engine."""
    df = _sample(table, minutes).to_pandas()
    ev = df[~df["BOUND"]]
    o = ev[ev["STREAM"] == "Orders"][["ROWTIME", "orderId", "ticker"]]
    t = ev[ev["STREAM"] == "Trades"][["ROWTIME", "orderId", "amount"]]
    m = o.merge(t, on="orderId", suffixes=("_o", "_t"))
    m = m[(m["ROWTIME_t"] >= m["ROWTIME_o"]) & (m["ROWTIME_t"] <= m["ROWTIME_o"] + 600_000)]
    g = m.groupby("ticker").agg(fills=("amount", "size"), filled=("amount", "sum")).reset_index()
    return sorted((r.ticker, int(r.fills), int(r.filled)) for r in g.itertuples())


def check_fills_query(sql, table) -> Verdict:
    """Exercise 07.2: per ticker and hour, how many trades matched an order within ten minutes
    (``fills``) and their total amount (``filled``), run on the first 20 minutes of the data."""
    if _blank(sql):
        return _say(None, "put the join in a sub-query (SELECT ROWTIME, o.ticker, t.amount ... FROM Orders AS o JOIN "
                          "Trades OVER (...) AS t ON ...) and GROUP BY FLOOR(m.ROWTIME TO HOUR), ticker on top; "
                          "select ticker, COUNT(*) AS fills, SUM(amount) AS filled.")
    try:
        from ..engine.workbench import Workbench
        wb = Workbench(None, engine="local", durable=False, trace=False)
        try:
            wb.execute(SCALE_DDL)
            q = wb.query(str(sql))
            wb.load(None, _sample(table))
            q.wait()
        finally:
            wb.close()
    except StreamSqlError as e:
        return _say(False, f"the query does not run: {e.caret() if getattr(e, 'sql', None) else e}")
    cols = [c.lower() for c in q.columns]
    if not set(FILLS_COLUMNS) <= set(cols):
        return _say(False, f"select the columns ticker, fills and filled; the query selects {', '.join(q.columns)}")
    ix = [cols.index(c) for c in FILLS_COLUMNS]
    got = sorted(tuple(r.values[i] for i in ix) for r in q.rows)
    want = expected_fills(table)
    if got == want:
        return _say(True, f"{len(want)} rows (one per ticker: the sample's orders all fall in the hour 00:00), "
                          f"{sum(w[1] for w in want):,} matches in all, as pandas computes them from the same events.")
    return _say(False, f"{len(got)} rows, {sum(g[1] for g in got) if got and isinstance(got[0][1], int) else '?'} "
                       f"matches; pandas finds {len(want)} rows and {sum(w[1] for w in want):,} matches. Is the "
                       "window ten minutes FOLLOWING on Trades, and is every row of the join counted?")


def zoom(table, orders: int = 4):
    """A few orders and their trades out of the big table (order ids below ``orders``), with a
    bound on both streams an hour after the last of them: small enough to follow in the
    workbench."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc
    keep = pc.and_(pc.invert(table.column("BOUND")), pc.less(table.column("orderId"), orders))
    part = table.filter(keep)
    end = int(np.max(part.column("ROWTIME").to_numpy())) + HOUR
    tail = pa.table({"STREAM": ["Orders", "Trades"], "ROWTIME": [end, end], "BOUND": [True, True],
                     "orderId": pa.array([0, 0], pa.int32()), "ticker": pa.array([None, None], pa.string()),
                     "amount": pa.array([0, 0], pa.int32()), "price": [0.0, 0.0]})
    return pa.concat_tables([part, tail.cast(part.schema)])


def zoom_events(table, orders: int = 4) -> list[Event]:
    """:func:`zoom` as a list of events, for ``Workbench.inject``: unlike a bulk load, injected
    events are traced one by one (``Workbench.event_trace``), so the workbench's step table and
    timeline show every input."""
    out = []
    for r in zoom(table, orders).to_pylist():
        if r["BOUND"]:
            out.append(Event(r["STREAM"], "bound", r["ROWTIME"]))
        elif r["STREAM"] == "Orders":
            out.append(Event("Orders", "row", r["ROWTIME"], {"orderId": r["orderId"], "ticker": r["ticker"],
                                                             "amount": r["amount"]}))
        else:
            out.append(Event("Trades", "row", r["ROWTIME"], {"orderId": r["orderId"], "ticker": r["ticker"],
                                                             "price": r["price"], "amount": r["amount"]}))
    return out
