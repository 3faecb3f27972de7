"""What ``%streamsql streams`` and ``%streamsql queries`` show: small tables that print as text
and render as HTML, with nothing run-dependent in them."""
from __future__ import annotations

from ..engine import time as sqltime
from ..widgets.render import html_table, text_table, ts


class Listing:
    def __init__(self, title: str, header: list[str], rows: list[list[str]], css_class: str):
        self.title, self.header, self.rows, self.css_class = title, header, rows, css_class

    def __repr__(self) -> str:
        body = text_table(self.header, self.rows) if self.rows else "(none)"
        return f"{self.title}\n{body}"

    def _repr_html_(self) -> str:
        return html_table(self.header, self.rows, self.css_class, caption=self.title)

    def __len__(self) -> int:
        return len(self.rows)


def streams_listing(wb) -> Listing:
    """Every stream with its columns, clock, producers (each with its own clock), rows that are
    waiting for a slow producer, rows passed on and late rows."""
    rows = []
    for s in wb.streams():
        prods = ", ".join(f"{p} {ts(c)}" for p, c in sorted(s["producers"].items())) or "-"
        cols = (f"{len(s['columns'])} columns (the error stream)" if s["system"]
                else ", ".join(f"{n} {t}" for n, t in s["columns"]))
        name = s["name"] + (" (system)" if s["system"] else "")
        rows.append([name, cols, ts(s["clock"]), prods, str(s["pending"]), str(s["rows"]), str(s["late"])])
    return Listing("Streams", ["Stream", "Columns", "Clock", "Producers", "Pending", "Rows", "Late"], rows,
                   "streamsql-streams")


def queries_listing(wb) -> Listing:
    """Every continuous query: state, engine, inputs, rows released and output bound."""
    rows = []
    for name, q in wb.queries.items():
        state = "failed" if q.error else "running" if q.running else "stopped"
        rows.append([name, state, q.engine, ", ".join(q.plan.streams), str(len(q.rows)),
                     ts(q.output_bound if q.output_bound > sqltime.NO_TIME else None)])
    return Listing("Queries", ["Query", "State", "Engine", "Streams", "Rows", "Output bound"], rows,
                   "streamsql-queries")
