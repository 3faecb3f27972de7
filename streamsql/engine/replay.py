"""Replaying a script and its events on a workbench and printing the lines of the semantics
section 5 (or the step table): shared by ``streamsql replay`` and by saved sessions, which check
what they wrote by replaying it; the caller opens the workbench, so this module needs none."""
from __future__ import annotations

import json

from .catalog import Event
from .errors import SqlError, StreamSqlError
from .steps import format_table, replay_lines, step_table


def replay_into(wb, sql_text: str, events: list[Event], *, bounds: bool = False, fmt: str = "jsonl",
                out) -> None:
    """Run ``sql_text`` (ending with one SELECT STREAM) on ``wb``, inject ``events``, wait, print."""
    results = wb.execute(sql_text)
    queries = [r.query for r in results if r.query is not None]
    if len(queries) != 1:
        raise SqlError(f"the script must end with exactly one SELECT STREAM query (found {len(queries)})")
    q = queries[0]
    names = {}
    for ev in events:
        try:
            canon = wb.catalog.stream(ev.stream).name
            names.setdefault(canon, ev.stream)
        except StreamSqlError:
            pass
    base = wb.last_step
    outcomes = wb.inject(events)
    q.wait()
    if fmt == "table":
        streams = [names.get(s, s) for s in q.plan.streams]
        for o in outcomes:
            o.event.stream = names.get(o.event.stream, o.event.stream)
        for s in dict.fromkeys(o.event.stream for o in outcomes):
            if s not in streams:
                streams.append(s)
        print(format_table(step_table(q, outcomes, base, streams)), file=out)
    else:
        for line in replay_lines(q, outcomes, base, bounds=bounds, stream_names=names):
            print(json.dumps(line), file=out)
    out.flush()
