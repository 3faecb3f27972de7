"""Pumps: ``CREATE PUMP p AS INSERT INTO s SELECT STREAM ...`` keeps inserting a query's rows into a
stream, and forwards the query's bounds into it (the semantics, section 4, seed 000).

A started pump is a producer of its target stream, named after the pump: its clock is the pump
query's output bound, so the target waits for it like for any slow producer, and rows the pump
inserts obey the same late-row rule. Pumps run in the workbench process, on the local runtime,
*inside* the step of the event that drives them: the rows and bounds an event causes in a pump's
target enter the target at that same step, so a chain of pumps gives the same steps as one
query would, whichever engine runs the queries that read the targets.
"""
from __future__ import annotations

from dataclasses import dataclass

from . import time as sqltime
from .catalog import Event, LogEntry
from .errors import SqlError, StreamSqlError
from .plan import CreatePump
from .runtime.engines import in_process_query


@dataclass
class PumpRunner:
    name: str
    target: str
    columns: list[str]          # target columns the query's columns go to, in order
    query: object               # the pump's query, stepped in process (runtime.engines.in_process_query)
    sources: set[str]
    last_bound: int = sqltime.NO_TIME


def _graph(pumps: dict) -> dict[str, set[str]]:
    """stream -> streams it feeds through pumps."""
    g: dict[str, set[str]] = {}
    for p in pumps.values():
        for s in p["sources"]:
            g.setdefault(s, set()).add(p["target"])
    return g


def _reaches(g: dict[str, set[str]], a: str, b: str) -> bool:
    seen, todo = set(), [a]
    while todo:
        x = todo.pop()
        if x == b:
            return True
        if x in seen:
            continue
        seen.add(x)
        todo += list(g.get(x, ()))
    return False


class Pumps:
    """The workbench's pumps: definitions live in the catalog, runners here."""

    def __init__(self, wb):
        self.wb = wb
        self.runners: dict[str, PumpRunner] = {}

    # ------------------------------------------------------------------ definitions

    def create(self, stmt: CreatePump) -> str:
        c = self.wb.catalog
        sources = set(stmt.query.streams)
        others = {n: p for n, p in c.pumps.items() if n != stmt.name}
        g = _graph(others)
        for s in sources:
            if s == stmt.target or _reaches(g, stmt.target, s):
                raise SqlError(f"Pump '{stmt.name}' would make a cycle: stream '{stmt.target}' already feeds "
                               f"'{s}', which the pump reads", *stmt.at)
        if stmt.name in c.pumps:
            if not stmt.or_replace:
                raise SqlError(f"Pump '{stmt.name}' already exists; use CREATE OR REPLACE PUMP", *stmt.at)
            self.stop([stmt.name])
            c.pumps.pop(stmt.name)
        target = c.streams[stmt.target]
        cols = stmt.columns or [f.name for f in target.fields]
        cols = [x for x in cols if x != "ROWTIME"]
        c.pumps[stmt.name] = {"name": stmt.name, "target": stmt.target, "columns": cols, "sql": stmt.query.sql,
                              "sources": sorted(sources), "started": False, "start_step": None}
        self.wb.save_catalog()
        if stmt.started:
            self.start([stmt.name])
            return f"Pump {stmt.name} created and started"
        return f"Pump {stmt.name} created (stopped)"

    def order(self, names: list[str]) -> list[str]:
        """Pumps in dependency order: a pump after every pump that feeds a stream it reads."""
        c = self.wb.catalog
        names = list(dict.fromkeys(names))
        out, seen = [], set()

        def visit(n):
            if n in seen:
                return
            seen.add(n)
            for m, p in c.pumps.items():
                if m in names and p["target"] in c.pumps[n]["sources"]:
                    visit(m)
            out.append(n)
        for n in sorted(names):
            visit(n)
        return out

    def expand(self, names: list[str]) -> list[str]:
        c = self.wb.catalog
        out = []
        for n in names:
            if n.endswith(".*"):
                out += list(c.pumps)
            elif n not in c.pumps:
                raise StreamSqlError(f"Pump '{n}' not found")
            else:
                out.append(n)
        return out

    def start(self, names: list[str]) -> list[str]:
        c = self.wb.catalog
        done = []
        for n in self.order(self.expand(names)):
            p = c.pumps[n]
            if p["started"] and n in self.runners:
                continue
            from .sql import analyze
            q = analyze(p["sql"], c).query
            p["started"] = True
            p["start_step"] = self.wb.last_step
            p["start_clocks"] = {s: c.state[s].bound for s in q.streams if s in c.state}
            self.runners[n] = PumpRunner(n, p["target"], p["columns"], in_process_query(q, c.tables, p["start_clocks"]),
                                         set(q.streams))
            self.wb.save_catalog()
            self.wb.attach(p["target"], n)      # the pump holds its target back from now on
            self.wb.start_readers(q.streams)
            done.append(n)
        return done

    def stop(self, names: list[str]) -> list[str]:
        c = self.wb.catalog
        done = []
        for n in reversed(self.order(self.expand(names))):
            p = c.pumps[n]
            if not p["started"]:
                continue
            p["started"] = False
            self.runners.pop(n, None)
            self.wb.save_catalog()
            try:
                self.wb.detach(p["target"], n)  # the target no longer waits for it
            except StreamSqlError:
                pass
            done.append(n)
        return done

    def resume(self) -> None:
        """Rebuild started pumps in a reopened workspace (their past output is in the log)."""
        from .sql import analyze
        c = self.wb.catalog
        for n in self.order([n for n, p in c.pumps.items() if p.get("started")]):
            p = c.pumps[n]
            q = analyze(p["sql"], c).query
            lq = in_process_query(q, c.tables, p.get("start_clocks") or {})
            r = PumpRunner(n, p["target"], p["columns"], lq, set(q.streams))
            for step, feed in self.wb.commits.feeds(sorted(r.sources), p["start_step"], self.wb.last_step):
                b = lq.process(step, feed)
                if b.bound is not None:
                    r.last_bound = b.bound
            self.runners[n] = r

    # ------------------------------------------------------------------ running

    def process_inline(self, step: int, out: dict[str, list[LogEntry]]) -> None:
        """Run every pump on event ``step``; what they release enters their targets at ``step``."""
        if not self.runners:
            return
        c = self.wb.catalog
        for n in self.order(list(self.runners)):
            r = self.runners[n]
            if not any(s in out for s in r.sources):
                continue
            b = r.query.process(step, out)
            for row in b.rows:
                values = dict(zip(r.columns, row.values))
                o = c.apply(Event(r.target, "row", row.rowtime, values, producer=n), step, out)
                if o.status == "error":
                    c.report_pump_error(step, r.target, n, o.message, row.rowtime, values, out)
            if b.bound is not None and b.bound > r.last_bound and b.bound < sqltime.END_OF_TIME:
                c.apply(Event(r.target, "bound", b.bound, producer=n), step, out)
                r.last_bound = b.bound

