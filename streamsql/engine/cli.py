"""``streamsql replay SQL EVENTS`` and ``streamsql demo``: run a scenario without a notebook;
``streamsql engine start|status|stop``: the shared engine.

Prints the replay lines (one JSON object per line, in release order: the replay format of the
semantics page, ``docs/semantics.md`` section 5) or,
with ``--format table``, the seed's step table. Errors go to stderr with a non-zero status:
1 for a statement that does not parse or validate, 2 for a malformed events file.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .catalog import Event
from .errors import SqlError, StreamSqlError
from .events import EventsFileError, event_from_json, read_events  # noqa: F401 (the command line's API)
from .replay import replay_into


def replay(sql_text: str, events: list[Event], *, engine: str = "spark", bounds: bool = False,
           batch: int | None = None, buckets: int = 1, workspace: str | None = None, fmt: str = "jsonl",
           master: str | None = None, spark_conf: dict | None = None, out=None, remote: str | None = None) -> int:
    from .workbench import Workbench
    out = out if out is not None else sys.stdout      # looked up now: callers may redirect stdout
    # a whole file at once is a replay: read the log with parallel tasks
    reader = "parallel" if batch is None else "simple"
    with Workbench(workspace, engine=engine, master=master, buckets=buckets, batch_events=batch, trace=False,
                   reader=reader, spark_conf=spark_conf, remote=remote) as wb:
        replay_into(wb, sql_text, events, bounds=bounds, fmt=fmt, out=out)
    return 0


REMOTE_HELP = ("a Spark Connect endpoint, e.g. sc://host:15002 (default: $STREAMSQL_REMOTE, else the shared "
               "engine when it is up, else Spark in this process); the server must read the workspace")
MASTER_HELP = ("Spark master, e.g. spark://host:7077 (default: $STREAMSQL_MASTER, else local[*]); "
               "executors need streamsql importable and the workspace readable")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="streamsql", description="Streaming SQL with exact rowtime bounds.")
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("replay", help="replay an events file through a query and print what it releases")
    r.add_argument("sql", help="statements; the last one is the SELECT STREAM query")
    r.add_argument("events", help="one JSON event per line (the replay format: docs/semantics.md, section 5)")
    r.add_argument("--bounds", action="store_true", help="also print the query's output bound as it advances")
    r.add_argument("--engine", choices=["spark", "local"], default="spark")
    r.add_argument("--batch", type=int, default=None, metavar="N", help="events per Spark micro-batch (default: all)")
    r.add_argument("--buckets", type=int, default=1, metavar="N", help="key buckets per stateful operator")
    r.add_argument("--workspace", default=None, help="keep the workspace here (default: a temporary one; "
                   "on a cluster, a directory every worker can read)")
    r.add_argument("--master", default=None, metavar="URL", help=MASTER_HELP)
    r.add_argument("--remote", default=None, metavar="URL", help=REMOTE_HELP)
    r.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE",
                   help="a Spark setting for this run (repeatable), e.g. spark.executor.memory=2g")
    r.add_argument("--format", choices=["jsonl", "table"], default="jsonl",
                   help="jsonl: a line per released row, late row, refused event and calculator error "
                   "(calc_error); table: the step table, refused rows marked with a cross")
    d = sub.add_parser("demo", help="replay the UNION ALL example of seed 000 and print its step table")
    d.add_argument("--engine", choices=["spark", "local"], default="spark")
    d.add_argument("--master", default=None, metavar="URL", help=MASTER_HELP)
    d.add_argument("--remote", default=None, metavar="URL", help=REMOTE_HELP)
    e = sub.add_parser("engine", help="the shared engine: one warm Spark (a Spark Connect server on 127.0.0.1) "
                       "for every kernel, replay and test session of this user")
    e.add_argument("action", choices=["start", "status", "stop"])
    e.add_argument("--idle", type=float, default=None, metavar="SECONDS",
                   help="stop by itself after this long without a client (default: $STREAMSQL_ENGINE_IDLE, else 3600)")
    a = ap.parse_args(argv)
    try:
        if a.cmd == "engine":
            from .runtime.engines import engine_command
            print(engine_command(a.action, idle=a.idle))
            return 0
        if a.cmd == "demo":
            from .. import scenarios
            demo = scenarios.folder()
            print("UNION ALL of streams P and Q (seed 000, 'Merging Two Streams'):\n")
            print((demo / "union_merge.sql").read_text().strip(), "\n")
            return replay((demo / "union_merge.sql").read_text(), read_events(demo / "union_merge.events.jsonl"),
                          engine=a.engine, master=a.master, fmt="table", remote=a.remote)
        if a.batch is not None and a.batch < 1:
            ap.error("--batch must be at least 1")
        if a.buckets < 1:
            ap.error("--buckets must be at least 1")
        conf = {}
        for kv in a.conf:
            k, eq, v = kv.partition("=")
            if not eq or not k.strip():
                ap.error(f"--conf needs KEY=VALUE, not {kv!r}")
            conf[k.strip()] = v
        sql_text = Path(a.sql).read_text()
        events = read_events(a.events)
        return replay(sql_text, events, engine=a.engine, bounds=a.bounds, batch=a.batch, buckets=a.buckets,
                      workspace=a.workspace, master=a.master, spark_conf=conf or None, fmt=a.format,
                      remote=a.remote)
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
