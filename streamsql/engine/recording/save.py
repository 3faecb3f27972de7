"""``Workbench.save_scenario``: the three files of a saved query (see the package's doc)."""
from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable

from .. import time as sqltime
from ..catalog import ERROR_STREAM
from ..runtime.released import OutputRow
from ..steps import replay_lines
from .closure import closure, ddl
from .errors import SaveError
from .events import EventLines, state_at
from .expected import REPLAY_QUERY, Released, replay_lines_of


@dataclass
class SavedScenario:
    query: str
    sql: Path
    events: Path
    expected: Path
    event_count: int
    line_count: int
    prefix: int = 0               # first events that restore the streams' state (late start)
    from_start: bool = False
    notes: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        stem = str(self.sql)[:-len(".sql")]
        s = (f"Saved query {self.query} as {stem}.sql, .events.jsonl ({self.event_count} event"
             f"{'s' if self.event_count != 1 else ''}) and .expected.jsonl ({self.line_count} line"
             f"{'s' if self.line_count != 1 else ''})")
        return "\n".join([s] + self.notes)


def pick_query(wb, query):
    """The query named ``query`` (case-insensitively; a ContinuousQuery passes), else the last one started."""
    if query is not None and not isinstance(query, str):
        return query
    if not wb.queries:
        raise SaveError("no continuous query to save: run a SELECT STREAM first")
    if query is None:
        return list(wb.queries.values())[-1]
    for n, q in wb.queries.items():
        if n == query or n.lower() == query.lower():
            return q
    raise SaveError(f"no query named {query}; queries: {', '.join(wb.queries)}")


def save_scenario(wb, prefix: str | Path, query=None, *, scratch: Callable, from_start: bool = False,
                  end: int | None = None) -> SavedScenario:
    """Write ``prefix.sql``, ``prefix.events.jsonl`` and ``prefix.expected.jsonl`` (the package's
    doc) with the events up to step ``end`` (default: the last one the query processed);
    ``scratch()`` opens the temporary in-process workbench an expected output is replayed on."""
    # what the scenario holds is read under the workbench's lock; the replays of its expected
    # output run on a scratch workbench after it, never holding two workbenches' locks at once
    with wb.lock:
        q = pick_query(wb, query)
        if end is None:
            if q.running:
                end = wb.last_step
                q.wait()
            else:   # a Spark query's sink knows the last step it read; the query, the last with output
                sink = getattr(getattr(q.handle, "sink", None), "processed_step", None)
                end = max(q.processed_step, sink or 0)
        cl = closure(wb, q)
        c = wb.catalog
        for s in cl.streams:
            if s == ERROR_STREAM:
                raise SaveError(f"cannot save query {q.name}: it reads the error stream {ERROR_STREAM}, whose rows "
                                "come from every stream of the workspace")
            if c.streams[s].foreign is not None:
                raise SaveError(f"cannot save query {q.name}: stream {s} is read from files (a foreign stream); "
                                "a scenario holds streams fed by events")
        for p in cl.pumps:
            if not c.pumps[p]["started"]:
                raise SaveError(f"cannot save query {q.name}: pump {p}, which feeds it, is stopped")
        uids = {c.streams[s].uid: s for s in cl.streams}
        j = wb.journal
        old = [uids[u] for u in j.untracked if u in uids]
        start = 0 if from_start else q.start_step
        pump_producers = {(c.pumps[p]["target"], p) for p in cl.pumps}
        events = [e for e in j.events(set(uids), 0, end)
                  if not (e.kind in ("attach", "detach") and (e.stream, e.producer) in pump_producers)]
        before = [e for e in events if e.step <= q.start_step]     # the query did not see these
        events = [e for e in events if e.step > start]
        if old:   # their history, hence their state when the query started, is partly unknown
            raise SaveError(f"cannot save query {q.name}: stream{'s' if len(old) > 1 else ''} {', '.join(old)} had "
                            f"events before the workspace's event journal began (step {j.since})")
        if j.since > start:
            raise SaveError(f"cannot save query {q.name}: it needs the events after step {start}, and the "
                            f"workspace's event journal began at step {j.since}")
        for p in cl.pumps:
            early = [e.step for e in before + events if e.step <= c.pumps[p]["start_step"]]
            if early:
                raise SaveError(f"cannot save query {q.name}: pump {p} started at step {c.pumps[p]['start_step']}, after "
                                f"events had entered the streams it reads or feeds (step {early[0]})")
        if before and cl.pumps and not from_start:
            raise SaveError(f"cannot save query {q.name} as it ran: it started at step {start}, after events had "
                            f"entered its streams, and pump{'s' if len(cl.pumps) > 1 else ''} {', '.join(cl.pumps)} "
                            f"hold{'' if len(cl.pumps) > 1 else 's'} state no events can restore; save with from_start=True (%streamsql save NAME "
                            "--from-start) to save every event and what a query started before them releases")

        out = EventLines(wb, cl.streams)
        notes = []
        if before and not from_start:
            states = state_at(wb, cl.streams, before, q)
            for s in cl.streams:
                out.add_state(s, states[s])
        n_prefix = len(out.lines)
        skipped = [e.step for e in events if not out.add_journaled(e)]
        if skipped:
            notes.append(f"left out {len(skipped)} refused event{'s' if len(skipped) > 1 else ''} with no time "
                         f"(step {', '.join(map(str, skipped[:5]))}{', ...' if len(skipped) > 5 else ''})")
        statements = ddl(wb, cl) + [q.sql]
        head = [f"-- Query {q.name}, saved from a streamsql workbench after step {end}."]
        if from_start and before:
            head.append(f"-- The query started at step {q.start_step}; these are every event since its streams were created, "
                        "and the expected output is what a query started before them releases.")
        elif before:
            head.append(f"-- The query started at step {start}, after {len(before)} event"
                        f"{'s' if len(before) > 1 else ''} on its streams: the first {n_prefix} event"
                        f"{'s' if n_prefix != 1 else ''} of the events file put the streams in the state the query "
                        "found them in; its own output follows.")
        sql = "\n".join(head) + "\n" + ";\n\n".join(statements) + ";\n"
        q_bounds, q_rows, q_errors = dict(q.bounds), list(q.rows), list(q.errors)

    if from_start and before:
        expected = replay_lines_of(scratch, sql, out.lines)
        notes.append(f"query {q.name} started at step {q.start_step}, after {len(before)} event"
                     f"{'s' if len(before) > 1 else ''} on its streams: saved from their creation; the expected "
                     "output is that of a query started before them")
    else:
        step_of = {s: i + 1 for i, s in enumerate(out.steps) if s is not None}
        bounds = {}
        if n_prefix:
            pre = replay_lines_of(scratch, sql, out.lines[:n_prefix])
            bounds = {x["step"]: sqltime.parse_timestamp(x["bound"]) for x in pre if "bound" in x}
            notes.append(f"query {q.name} started at step {start}, after {len(before)} event"
                         f"{'s' if len(before) > 1 else ''} on its streams: the first {n_prefix} event"
                         f"{'s' if n_prefix != 1 else ''} restore their state then")
        for s, b in q_bounds.items():
            if s in step_of:
                bounds[step_of[s]] = b
        rows = []
        for r in q_rows:
            if r.step not in step_of:
                raise SaveError(f"cannot save query {q.name}: it released a row at step {r.step}, which is not an "
                                "event of its streams")
            rows.append(OutputRow(step_of[r.step], r.rowtime, r.values))
        errors = []
        own = f"Query {q.name}: "
        for e in q_errors:
            if not e.is_calc:
                continue
            if e.step not in step_of:
                raise SaveError(f"cannot save query {q.name}: it refused a row at step {e.step}, which is not an "
                                "event of its streams")
            # the message names the query as the replay names it
            msg = f"Query {REPLAY_QUERY}: {e.message[len(own):]}" if e.message.startswith(own) else e.message
            errors.append(replace(e, step=step_of[e.step], message=msg))
        expected = replay_lines(Released(q.fields, rows, bounds, errors), out.outcomes, 0, bounds=True,
                                stream_names={s: out.name(s) for s in cl.streams})

    stem = Path(prefix).expanduser()
    paths = [stem.with_name(stem.name + ext) for ext in (".sql", ".events.jsonl", ".expected.jsonl")]
    texts = [sql, "".join(json.dumps(x) + "\n" for x in out.lines), "".join(json.dumps(x) + "\n" for x in expected)]
    try:
        stem.parent.mkdir(parents=True, exist_ok=True)
        for p, text in zip(paths, texts):
            p.write_text(text)
    except OSError as e:
        raise SaveError(f"cannot write the scenario {stem}: {e.strerror or e}") from None
    return SavedScenario(q.name, *paths, len(out.lines), len(expected), n_prefix, from_start, notes)
