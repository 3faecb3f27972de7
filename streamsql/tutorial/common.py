"""What the tutorial modules share: text a notebook shows as it is, the scenario files, two
tables side by side, the exercises' verdicts, and running a query on the local runtime.

Everything here prints plain text with no wall-clock times, ids or timings, so that a notebook's
outputs are the same on every run (what ``pytest --nbval`` compares).
"""
from __future__ import annotations

import json
from pathlib import Path

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
