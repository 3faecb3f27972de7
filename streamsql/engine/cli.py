"""``streamsql replay SQL EVENTS`` and ``streamsql demo``: run a scenario without a notebook.

Prints the lines of SEMANTICS.md section 5 (one JSON object per line, in release order) or,
with ``--format table``, the seed's step table. Errors go to stderr with a non-zero status:
1 for a statement that does not parse or validate, 2 for a malformed events file.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from . import time as T
from .catalog import Event
from .errors import SqlError, StreamSqlError
from .trace import format_table, replay_lines, step_table


class EventsFileError(Exception):
    pass


def read_events(path: str | Path) -> list[Event]:
    """Events of a ``.events.jsonl`` file (blank lines skipped, not counted)."""
    out = []
    for n, line in enumerate(Path(path).read_text().splitlines(), 1):
        if not line.strip():
            continue
        try:
            d = json.loads(line)
        except ValueError as e:
            raise EventsFileError(f"{path}:{n}: not a JSON object: {e}") from None
        out.append(event_from_json(d, f"{path}:{n}"))
    return out


def event_from_json(d: dict, where: str = "event") -> Event:
    if not isinstance(d, dict) or not isinstance(d.get("stream"), str):
        raise EventsFileError(f"{where}: an event needs a \"stream\" name")
    prod = d.get("producer")
    try:
        if d.get("detach"):
            return Event(d["stream"], "detach", producer=prod)
        if d.get("attach"):
            return Event(d["stream"], "attach", producer=prod)
        if "bound" in d:
            return Event(d["stream"], "bound", T.parse_timestamp(d["bound"]), strict=bool(d.get("strict")),
                         producer=prod)
        if "rowtime" in d:
            vals = d.get("values", {})
            if not isinstance(vals, dict):
                raise EventsFileError(f"{where}: \"values\" must be an object")
            return Event(d["stream"], "row", T.parse_timestamp(d["rowtime"]), vals, producer=prod)
    except T.TimeFormatError as e:
        raise EventsFileError(f"{where}: {e}") from None
    raise EventsFileError(f"{where}: an event needs \"rowtime\" (a row), \"bound\", \"attach\" or \"detach\"")


def replay(sql_text: str, events: list[Event], *, engine: str = "spark", bounds: bool = False,
           batch: int | None = None, buckets: int = 1, workspace: str | None = None, fmt: str = "jsonl",
           out=sys.stdout) -> int:
    from .workbench import Workbench
    # a whole file at once is a replay: read the log with parallel tasks
    reader = "parallel" if batch is None else "simple"
    with Workbench(workspace, engine=engine, buckets=buckets, batch_events=batch, trace=False, reader=reader) as wb:
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
        base = wb.last_seq
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
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="streamsql", description="Streaming SQL with exact rowtime bounds.")
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("replay", help="replay an events file through a query and print what it releases")
    r.add_argument("sql", help="statements; the last one is the SELECT STREAM query")
    r.add_argument("events", help="one JSON event per line (SEMANTICS.md section 5)")
    r.add_argument("--bounds", action="store_true", help="also print the query's output bound as it advances")
    r.add_argument("--engine", choices=["spark", "local"], default="spark")
    r.add_argument("--batch", type=int, default=None, metavar="N", help="events per Spark micro-batch (default: all)")
    r.add_argument("--buckets", type=int, default=1, metavar="N", help="key buckets per stateful operator")
    r.add_argument("--workspace", default=None, help="keep the workspace here (default: a temporary one)")
    r.add_argument("--format", choices=["jsonl", "table"], default="jsonl")
    d = sub.add_parser("demo", help="replay the UNION ALL example of seed 000 and print its step table")
    d.add_argument("--engine", choices=["spark", "local"], default="spark")
    a = ap.parse_args(argv)
    try:
        if a.cmd == "demo":
            from .. import scenarios
            demo = scenarios.folder()
            print("UNION ALL of streams P and Q (seed 000, 'Merging Two Streams'):\n")
            print((demo / "union_merge.sql").read_text().strip(), "\n")
            return replay((demo / "union_merge.sql").read_text(), read_events(demo / "union_merge.events.jsonl"),
                          engine=a.engine, fmt="table")
        if a.batch is not None and a.batch < 1:
            ap.error("--batch must be at least 1")
        if a.buckets < 1:
            ap.error("--buckets must be at least 1")
        sql_text = Path(a.sql).read_text()
        events = read_events(a.events)
        return replay(sql_text, events, engine=a.engine, bounds=a.bounds, batch=a.batch, buckets=a.buckets,
                      workspace=a.workspace, fmt=a.format)
    except SqlError as e:
        print(f"error: {a.sql if a.cmd == 'replay' else 'demo'}: {e.caret() if e.sql else e}", file=sys.stderr)
        return 1
    except EventsFileError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except (StreamSqlError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
