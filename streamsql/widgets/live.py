"""The live view of one continuous query: released rows with their step and rowtime, the query's
output bound and each input stream's clock, redrawn when rows are released or events injected."""
from __future__ import annotations

from types import SimpleNamespace

import ipywidgets as widgets

from ..engine.steps import BoundLines, steps
from ..engine.types import format_value
from .clicks import apply_click
from .hooks import LiveView
from .openstate import HEADER as OPEN_HEADER, HELD_HEADER, held_table, open_state_rows, state_step
from .render import html_lines, html_table, text_table, ts
from .static import StaticMixin, snapshot_html, update_all


def input_clocks(q) -> list[tuple[str, int | None]]:
    """``(stream, clock)`` for each stream the query reads, in query order."""
    out = []
    for s in q.plan.streams:
        try:
            out.append((s, q.wb.clock(s)))
        except Exception:  # a dropped stream has no clock any more
            out.append((s, None))
    return out


def snapshot(q) -> SimpleNamespace:
    """A copy of what a query has released so far (Spark's sink thread appends to ``rows`` and
    ``bounds`` while a view reads them; ``dict()`` of a dict copies it in one step)."""
    bounds = dict(q.bounds)
    return SimpleNamespace(rows=list(q.rows), bounds=bounds, fields=q.fields, output_bound=q.output_bound,
                           errors=list(getattr(q, "errors", [])))


def bound_at(bounds: dict[int, int], step: int) -> int | None:
    """The output bound right after ``step`` (``ContinuousQuery.output_bound_at`` on a copy)."""
    best = None
    for s in sorted(bounds):
        if s > step:
            break
        best = bounds[s]
    return best


def output_entries(q, bounds: bool = False, last: int | None = None) -> tuple[list[dict], int]:
    """Released rows in release order, each step's calculator errors before its rows (as replay
    prints them); with ``bounds``, also a line each time the output bound moves past both the
    last bound line and the last released row (the replay rule). ``last``: only the last ones
    are made (a view of a long query formats twenty rows, not all). Returns them and how many
    there are in all."""
    snap = snapshot(q)
    calc = [e for e in snap.errors if e.is_calc]
    if last is not None and not bounds:          # the last entries need only the last rows
        total = len(snap.rows) + len(calc)
        rows = snap.rows[-last:] if last else []
        since = rows[0].step if len(rows) == last and rows else 0
        snap.rows = rows
        snap.errors = [e for e in calc if e.step >= since][-last:] if last else []
        out, _n = output_entries_of(snap, bounds)
        return out[-last:] if last else [], total
    return output_entries_of(snap, bounds)


def output_entries_of(snap, bounds: bool) -> tuple[list[dict], int]:
    out = []
    lines = BoundLines()
    for st in steps(snap, []):
        for e in st.errors:
            out.append({"step": st.step, "rowtime": e.data_rowtime, "error": e})
        for r in st.rows:
            out.append({"step": st.step, "rowtime": r.rowtime,
                        "cells": [format_value(v, f.type) for f, v in zip(snap.fields, r.values)]})
            lines.row(r.rowtime)
        b = bound_at(snap.bounds, st.step) if bounds else None
        if lines.line(b):
            out.append({"step": st.step, "bound": b})
    return out, len(out)


def inputs_key(q) -> tuple:
    """Changes with every event on the query's input streams (accepted, late, eclipsed, pending,
    a producer attached or detached) and with no other."""
    out = []
    for s in q.plan.streams:
        st = q.wb.catalog.state.get(s)
        if st is None:
            out.append(None)
            continue
        out.append((st.bound, st.rows_in, st.bounds_in, st.eclipsed, st.late_count, len(st.pending),
                    tuple((p, v.clock, v.attached) for p, v in st.producers.items())))
    return tuple(out)


def query_key(q) -> tuple:
    """What a query's views depend on: its deliveries (rows, bound, trace, errors), its state,
    and the events on its input streams (see :class:`~streamsql.widgets.static.StaticMixin`)."""
    trace = getattr(q, "trace", None)
    steps = trace.steps() if trace else []
    return (q.row_count, q.output_bound, q.running, q.error, len(q.errors),
            steps[-1] if steps else None, inputs_key(q))


def nothing_yet(q) -> bool:
    """Whether a query has nothing to show but its start: no row, no event since it started and
    no clock on its inputs. Its first micro-batch (a second or two on Spark) can change nothing
    its rows and status show, so the view of a query just started is shown without waiting for it
    (the cell's next statement, an INSERT, then goes into that first batch)."""
    try:
        return (not q.rows and q.wb.runtime.caught_up(q)
                and all(q.wb.clock(s) is None for s in q.plan.streams))
    except Exception:       # a dropped stream, a runtime closing: wait as for any query
        return False


def settled(q, timeout: float = 120) -> None:
    """Let a running query catch up with every event so far (errors show in its status)."""
    if q.running:
        try:
            q.wait(timeout)
        except Exception:
            pass


class QueryView(LiveView, StaticMixin, widgets.VBox):
    """Watch a query: rows as they are released (the last ``limit``), its output bound and the
    clocks of its inputs. ``bounds=True`` interleaves the output bound's moves (like ``--bounds``)."""

    priority = 0

    def __init__(self, q, limit: int = 20, bounds: bool = False, held: bool = False):
        """``held``: the table under the rows also lists the rows the operators hold and what
        each waits for, and says so when nothing is held or open (the workbench: its height
        then never changes)."""
        self.q = q
        self.limit = max(0, int(limit))
        self.bounds = bounds
        self.held = held
        self.status = widgets.HTML()
        self.table = widgets.HTML()
        self.open_table = widgets.HTML()
        self.stop_button = widgets.Button(description="Stop", icon="stop", tooltip=f"stop query {q.name}",
                                          layout=widgets.Layout(width="80px"))
        self.stop_button.add_class("streamsql-stop")
        self.stop_button.on_click(lambda _b: apply_click(self.stop))      # after a running cell, like every click
        self.header_box = widgets.HBox([self.status, self.stop_button])
        super().__init__([self.header_box, self.table, self.open_table])
        self.add_class("streamsql-query")
        self.follow(queries=[q], wb=q.wb)
        self.redraw_if_changed()    # the first drawing

    # ------------------------------------------------------------------ content

    def status_lines(self) -> list[str]:
        """The query's state, row count, output bound and input clocks, one line each."""
        q = self.q
        n = len(q.rows)
        state = "running" if q.running else "stopped"
        lines = [f"Query {q.name} ({state}): {n} row{'s' if n != 1 else ''} released, "
                 f"output bound {ts(q.output_bound)}",
                 "Clocks: " + ", ".join(f"{s} {ts(c)}" for s, c in input_clocks(q))]
        if q.error:
            lines.append(f"Error: {q.error}")
        return lines

    def header(self) -> list[str]:
        """The table's column names: STEP, ROWTIME and the select list."""
        return ["STEP", "ROWTIME"] + self.q.columns

    def rows(self) -> tuple[list[list[str]], list[str], int]:
        """The shown table rows, their classes, and how many entries there are in all."""
        entries, total = output_entries(self.q, self.bounds, last=self.limit)
        shown = entries[-self.limit:] if self.limit else []
        ncols = len(self.q.columns)
        rows, classes, self._titles = [], [], []
        for e in shown:
            title = ""
            if "bound" in e:
                rows.append([str(e["step"]), f"bound {ts(e['bound'])}"] + [""] * ncols)
                classes.append("bound")
            elif "error" in e:        # a refused row: marked like a late row, the message as its tooltip
                err = e["error"]
                rows.append([str(e["step"]), ts(e["rowtime"])] + [f"x {err.name}: {err.message}"]
                            + [""] * max(0, ncols - 1))
                classes.append("calc-error")
                title = err.message
            else:
                rows.append([str(e["step"]), ts(e["rowtime"])] + e["cells"])
                classes.append("")
            self._titles.append(title)
        return rows, classes, total

    def open_parts(self) -> tuple[str, list[list[str]]]:
        """The title and rows of the open-state table (groups, partitions, kept join rows)."""
        rows = open_state_rows(self.q)
        return (f"Open after step {state_step(self.q)}: what is still accumulating" if rows else ""), rows

    def _open_html(self) -> str:
        title, rows = self.open_parts()
        if not self.held:
            if not rows:
                return ""
            return f"<div class='streamsql-open-title'><b>{title}</b></div>" + html_table(OPEN_HEADER, rows, "streamsql-open")
        step = state_step(self.q)          # the step table's last step, once the query caught up
        held = held_table(self.q)
        after = f"after step {step}" if step is not None else "yet"
        if not rows and not held:
            return (f"<div class='streamsql-open-title' style='color:#777;font-size:12px'>Nothing held or open "
                    f"{after}: every row that can be released has been.</div>")
        out = []
        if held:
            out.append(f"<div class='streamsql-held-title' style='font-size:12px'><b>Held {after}, and what each "
                       f"waits for</b></div>" + html_table(HELD_HEADER, held, "streamsql-held", sticky=True))
        if rows:
            out.append(f"<div class='streamsql-open-title' style='font-size:12px'><b>{title}</b></div>"
                       + html_table(OPEN_HEADER, rows, "streamsql-open", sticky=True))
        return "".join(out)

    def _footer(self, shown: int, total: int) -> str | None:
        return f"(last {shown} of {total})" if shown < total else None

    def text(self) -> str:
        """The view as plain text (status lines and the last released rows)."""
        rows, _classes, total = self.rows()
        parts = self.status_lines()
        parts.append(text_table(self.header(), rows) if rows else "(no rows released yet)")
        foot = self._footer(len(rows), total)
        if foot:
            parts.append(foot)
        title, open_rows = self.open_parts()
        if open_rows:
            parts += [title, text_table(OPEN_HEADER, open_rows)]
        return "\n".join(parts)

    # ------------------------------------------------------------------ updates

    def stop(self) -> None:
        """Stop the query (what the Stop button does); the rows so far stay."""
        if self.q.running:
            self.q.stop()
        self.stop_button.disabled = True
        self.mark()
        update_all()          # a click in JupyterLab: the saved notebook's snapshots follow

    def live_key(self):
        return query_key(self.q)

    def refresh(self, wait: bool = False) -> None:
        """Redraw from the query's current state; ``wait`` first lets a Spark query catch up with
        every event injected so far (a display in a cell, never a click or a callback)."""
        if wait and self.q.running and not nothing_yet(self.q):
            try:
                self.q.wait(120)
            except Exception:
                pass  # the error is in q.error and shown in the status
        rows, classes, total = self.rows()
        foot = self._footer(len(rows), total)
        table = (html_table(self.header(), rows, "streamsql-rows", row_classes=classes, row_titles=self._titles,
                            merge_from=[2 if c == "calc-error" else None for c in classes], sticky=True)
                 + (f"<div>{foot}</div>" if foot else ""))
        with self.hold_sync():
            self.status.value = html_lines(self.status_lines(), "streamsql-status")
            self.table.value = table
            self.open_table.value = self._open_html()
            self.stop_button.disabled = not self.q.running

    def static_parts(self) -> list[str]:
        """The pieces of its static snapshot (HTML), in display order."""
        rows, classes, total = self.rows()
        foot = self._footer(len(rows), total)
        return [html_lines(self.status_lines(), "streamsql-status"),
                html_table(self.header(), rows, "streamsql-rows", row_classes=classes,
                           merge_from=[2 if c == "calc-error" else None for c in classes])
                + (f"<div>{foot}</div>" if foot else "") + self._open_html()]

    def static_key(self):
        return query_key(self.q)

    def static_queries(self) -> list:
        return [self.q]

    def static_html(self) -> str:
        """The view as a static HTML snapshot (what a notebook shows where no kernel runs it)."""
        return snapshot_html(self.static_parts(), f"Query {self.q.name}")

    def bundle_settle(self) -> None:
        self.refresh(wait=True)
