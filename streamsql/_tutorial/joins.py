"""Helpers for tutorial notebook 05 (streaming joins): seed 002's step tables transcribed as
data and shown beside the engine's, checks against the shared scenarios, what a join holds and
why, and the exercises' answer checkers.

Everything here prints plain text with no wall-clock times, ids or timings, so that a notebook's
outputs are the same on every run (what ``pytest --nbval`` compares).

The seed's tables are transcribed line by line from seed 002 (SQLstream's "Streaming Joins"); the expected
answers of the exercises are derived by hand from the rules (the semantics page, ``docs/semantics.md``), and
``tests/test_notebooks_05_07.py`` checks each of them against the engine.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from ..engine.catalog import Event
from ..engine.errors import StreamSqlError
from ..engine.operators.describe import JoinState
from ..engine.steps import comparable, replay_lines
from ..engine.types import format_value
# the scenario files, tables and times as the earlier tutorials read and print them
from .common import (Beside, Text, Verdict, _as_int, _blank, _hm, _rel, _say, _table, digest, expected_lines, run_local,
                     scenario_dir, scenario_events, scenario_path)

__all__ = [
    "Text", "scenario_dir", "scenario_path", "scenario_events", "expected_lines", "SEED_002", "seed_table",
    "beside", "agreement", "check_scenario", "why_held", "check_join_bound_exercise", "check_preceding_query",
    "check_outer_exercise",
]


def _engine_lines(q) -> list[dict]:
    from ..widgets.steps import event_outcomes
    q.wait()
    return replay_lines(q, event_outcomes(q.wb, q.start_step), q.start_step)


def check_scenario(q, name: str) -> Text:
    """Compare what ``q`` released with ``NAME.expected.jsonl`` (the executable form of
    the semantics), row for row and step for step, for the events injected so far (steps are
    counted from the query's start: the scenario's event lines)."""
    done = q.wb.last_step - q.start_step
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
             "which is what the seed's output rows show; OUTER JOIN is FULL OUTER JOIN (the semantics, section 3.5)."),
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
    out = [f"after step {last.step - q.start_step}:"]
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
    """Run ``sql`` over ``events`` on the local runtime (the oracle the Spark runtime is tested
    against); returns the query (its rows and steps count from 1) or raises."""
    return run_local(ddl, sql, events)[0]


#: the digests of the answers derived by hand (``common.digest``; the answers are in the tests)
_ANSWERS = {"05.1": "2a21175934d954289688296f2c57dffc", "05.2": "6dd3a1821aef31b2c7d3685c5381ec0f", "05.3": "dc904e88385fa893520e226d41bc6c21"}


def check_join_bound_exercise(answer) -> Verdict:
    """Exercise 05.1: the step at which query #1 releases the YHOO match when the Trades bound
    of step 6 is 10:10 instead of 10:11."""
    if _blank(answer):
        return _say(None, "order 1 (10:00) can match a trade at any base time from 10:00 to 10:10, both included. "
                          "After a bound at 10:10, can a trade for order 1 still come? Which later event rules it out?")
    a = _as_int(answer)
    if digest("05.1", a) == _ANSWERS["05.1"]:
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
    if digest("05.2", got) == _ANSWERS["05.2"]:
        return _say(True, "2 rows: the 10:02 trade with order 1 at step 3 and the 10:04 trade with order 2 at step 7 "
                          "(the Orders bound); the 10:07:30 trade is 7.5 minutes after order 1, outside the window.")
    if len(got) == 3:
        return _say(False, "3 rows: the 10:07:30 trade still matches order 1 (10:00). Is the window five minutes?")
    return _say(False, f"over the seed's 8 events it released {[(s, t) for s, t, *_ in got]} as (step, rowtime); "
                       "expected 2 rows. Keep query #2's select list and join condition.")




def check_outer_exercise(answer) -> Verdict:
    """Exercise 05.3: the step at which query #3, with a five-minute window, releases the
    unmatched IBM order."""
    if _blank(answer):
        return _say(None, "the IBM order (10:00) is unmatched once no trade can reach its window any more: when the "
                          "Trades clock minus five minutes passes 10:00. Which event moves the Trades clock past 10:05?")
    a = _as_int(answer)
    if digest("05.3", a) == _ANSWERS["05.3"]:
        return _say(True, "step 6: the 10:07:30 trade moves the Trades clock past 10:05, so no trade can match the IBM "
                          "order any more; it is stamped 10:00 and nothing earlier can still come out.")
    if a == 7:
        return _say(False, "that is the answer with the ten-minute window. With five minutes, an earlier event "
                           "already closes IBM's window.")
    return _say(False, "answer with a step number (1-11 of join3_full_outer.events.jsonl).")
