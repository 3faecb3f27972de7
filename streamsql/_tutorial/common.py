"""What the tutorial modules share: text a notebook shows as it is, the scenario files, two
tables side by side, the exercises' verdicts, and running a query on the local runtime.

Everything here prints plain text with no wall-clock times, ids or timings, so that a notebook's
outputs are the same on every run (what ``pytest --nbval`` compares).
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

from ..engine import time as sqltime
from ..engine.catalog import Event
from ..engine.events import read_events
from ..widgets.render import short, text_table

_PACKAGE = Path(__file__).resolve().parents[1]


class Text(str):
    """A string that a notebook shows as it is (no quotes), as its ``text/plain`` output."""

    def _repr_pretty_(self, p, cycle):
        p.text(str(self))


_hm = short            # HH:MM[:SS[.fff]] as in the seeds' tables, or "none"
_table = text_table


# --------------------------------------------------------------------------- scenario files

def scenario_dir() -> Path:
    """The scenario files the tutorials play: shipped inside the package (streamsql/scenarios),
    so a notebook copied anywhere still finds them."""
    from .. import scenarios
    return scenarios.folder()


def _rel(p: Path) -> str:
    """A path as the notebooks print it: from the package on, never machine-specific."""
    try:
        return str(Path("streamsql") / Path(p).resolve().relative_to(_PACKAGE))
    except ValueError:
        return Path(p).name


def scenario_path(name: str) -> Path:
    """The stem of scenario ``name`` (``…/group_by_hours``), for ``%streamsql load`` and
    ``streamsql.workbench(scenario=...)``."""
    return scenario_dir() / name


def scenario_sql(name: str) -> str:
    """The statements of ``NAME.sql`` without its comment lines."""
    text = (scenario_dir() / f"{name}.sql").read_text()
    return "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("--")).strip()


def scenario_events(name: str) -> list[Event]:
    """The events of ``NAME.events.jsonl`` (fresh objects: injecting them changes their fields)."""
    return read_events(scenario_dir() / f"{name}.events.jsonl")


def expected_lines(name: str) -> list[dict]:
    p = scenario_dir() / f"{name}.expected.jsonl"
    return [json.loads(line) for line in p.read_text().splitlines() if line.strip()]


# --------------------------------------------------------------------------- two tables side by side

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


# --------------------------------------------------------------------------- exercises

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


def digest(exercise: str, answer) -> str:
    """The digest of ``answer`` to ``exercise`` (of its canonical JSON): checkers keep the digest
    of the answer derived by hand, never the answer, and compare the learner's with it."""
    text = json.dumps([exercise, answer], sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def _as_int(answer) -> int | None:
    try:
        return int(str(answer).strip())
    except (TypeError, ValueError):
        return None


def run_local(ddl: str, sql: str, events: list[Event]):
    """Run ``sql`` over ``events`` in-process (the local runtime, the oracle the Spark runtime
    is tested against); returns ``(query, outcomes)`` or raises ``StreamSqlError``."""
    from ..engine.workbench import Workbench
    wb = Workbench(None, engine="local", durable=False)
    try:
        wb.execute(ddl)
        q = wb.query(sql)
        outs = wb.inject(events)
        q.wait()
        return q, outs
    finally:
        wb.close()


# --------------------------------------------------------------------------- calculator errors

def error_rows(result) -> Text:
    """A relational query's answer on ``ERRORS`` as a text table: timestamps as times of day (the
    step tables' form), messages in full (a DataFrame would cut them)."""
    from ..engine.types import format_value
    rows = [[_hm(v % sqltime.DAY) if f.type.name == "TIMESTAMP" and v is not None else format_value(v, f.type)
             for f, v in zip(result.fields, row)] for row in result.rows]
    if not rows:
        return Text("(no rows)")
    return Text(_table(list(result.columns), rows))


def _same_value(a, b) -> bool:
    if isinstance(a, float) or isinstance(b, float):
        return a is not None and b is not None and float(a) == float(b)
    return a == b


def compare_calc_errors(q, result, rows: list[tuple], errors: list[tuple]) -> Text:
    """Check what query ``q`` did with rows it cannot compute (the semantics, section 1, calculator
    errors) against what was derived by hand. Events are counted from the query's start (1: the
    first event after it started).

    ``rows``: the released rows, ``(event, "HH:MM[:SS]", value, ...)`` (the select list without
    ROWTIME). ``errors``: ``(event, "HH:MM[:SS]", ERROR_NAME, SQLSTATE, expression as written,
    [operand, ...])``. ``result``: a relational query on ``ERRORS`` (columns STEP, ERROR_NAME,
    DATA_ROWTIME and MESSAGE) limited to ``q``'s input, in step order. Also checked: each refused
    row still counts as a bound (the output bound reaches its rowtime at its event), and the
    query is still running."""
    q.wait()
    first = q.start_step
    out = []
    # the released rows: the refused ones are absent, the later ones are there
    got = [(r.step - first, _hm(r.rowtime % sqltime.DAY), *r.values) for r in q.rows]
    want = [(e[0], _hm(sqltime.parse_timestamp(e[1], day=0)), *e[2:]) for e in rows]
    same = len(got) == len(want) and all(len(g) == len(w) and all(_same_value(x, y) for x, y in zip(g, w))
                                         for g, w in zip(got, want))
    events = ", ".join(str(w[0]) for w in want)
    out.append(f"✓ released: the rows of events {events}, with the rowtimes and values derived by hand"
               if same else f"✗ released {got}, derived by hand {want}")
    # the error stream: one row per refused row, at its step, with its kind and message
    cols = {c: i for i, c in enumerate(result.columns)}
    err = [(r[cols["STEP"]] - first, _hm(r[cols["DATA_ROWTIME"]] % sqltime.DAY), r[cols["ERROR_NAME"]], r[cols["MESSAGE"]])
           for r in result.rows]
    wrong = []
    if len(err) != len(errors):
        wrong.append(f"{len(err)} rows in ERRORS, {len(errors)} derived by hand")
    for g, (event, at, name, sqlstate, expr, operands) in zip(err, errors):
        where = f"event {event}"
        if g[:3] != (event, _hm(sqltime.parse_timestamp(at, day=0)), name):
            wrong.append(f"{where}: ERRORS has {g[:3]}")
            continue
        msg = g[3]
        must = [f"Query {q.name}: ", f'"{expr}"', f"(SQLSTATE {sqlstate})"] + list(operands)
        missing = [m for m in must if m not in msg]
        if missing:
            wrong.append(f"{where}: the message {msg!r} does not say {', '.join(missing)}")
    kinds = ", ".join(f"event {e[0]} {e[2]} ({e[3]})" for e in errors)
    out.append(f"✓ ERRORS: {kinds}; each MESSAGE names the query, the expression as written, its operands "
               "and the SQLSTATE" if not wrong else "✗ ERRORS: " + "; ".join(wrong))
    # a refused row still counts as a bound at its rowtime
    late = [(e[0], sqltime.parse_timestamp(e[1], day=0)) for e in errors]
    bounds = {s - first: b % sqltime.DAY for s, b in q.bounds.items()}
    bad = [ev for ev, t in late if bounds.get(ev) != t]
    parts = [f"{_hm(t)} at event {ev}" for ev, t in late]
    at = ", ".join(parts[:-1]) + (" and " if len(parts) > 1 else "") + parts[-1] if parts else "none"
    out.append(f"✓ bounds: the output bound reached {at}: a refused row still counts as a bound"
               if not bad else f"✗ bounds: no output bound at the rowtime of event(s) {bad}: {bounds}")
    out.append(f"✓ the query goes on: {q.name} is still running" if q.running and not q.error
               else f"✗ the query {q.name} stopped: {q.error}")
    return Text("\n".join(out))
