"""The sub-commands of the line magic ``%streamsql``: list streams and queries, stop a query,
reset the workbench, load a scenario file, show a query's views, help."""
from __future__ import annotations

from IPython.core.error import UsageError

HELP = """\
%%streamsql [--name NAME] [--limit N] [-o VAR] [--explain] [--bounds] [--workbench] [VAR <<]
    Run the statements in the cell. DDL and INSERT print one line each; a SELECT STREAM starts
    a continuous query and shows its released rows live. {{name}} inserts a Python value as a
    SQL literal.
%streamsql STATEMENTS          the same, on one line
%streamsql streams             streams with their clocks, producers, pending and late rows
%streamsql queries             continuous queries with their output bounds and rows
%streamsql stop NAME | --all   stop a query, or every running query
%streamsql reset               stop everything; new empty workspace (Spark keeps running)
%streamsql load PATH           step through a scenario file (NAME.sql + NAME.events.jsonl)
%streamsql show [NAME]         a query's live rows (default: the last query started)
%streamsql workbench [NAME]    rows, injectors, timeline and step table of a query
%streamsql steps [NAME]        a query's step table (Step | input streams | Output)
%streamsql timeline [NAME]     a query's timeline chart
%streamsql explain [NAME]      a query's logical plan and Spark plan
%streamsql save NAME [--query Q] [--from-start]
                               write a query (default: the last one) as a scenario: NAME.sql,
                               NAME.events.jsonl, NAME.expected.jsonl (replay them with
                               `streamsql replay`, step through them with %streamsql load,
                               or practise with streamsql.exercise(NAME))
%streamsql native [NAME] [--delay TIME]
                               the query beside its native Spark twin (plain Structured
                               Streaming, watermark delay TIME, default '0 seconds'): what each
                               released at each step, Spark's watermark, its late drops, and why
%config StreamSql              settings: workspace, engine, master, buckets, displaylimit, ..."""

NAMES = ("streams", "queries", "stop", "reset", "load", "show", "workbench", "steps", "timeline", "explain",
         "help", "save", "native")


def _query(wb, words: list[str]):
    """The query named in ``words`` (case-insensitively), else the last one started."""
    if not wb.queries:
        raise UsageError("no continuous query yet: run a SELECT STREAM first")
    if not words:
        return list(wb.queries.values())[-1]
    name = words[0]
    if name in wb.queries:
        return wb.queries[name]
    for n, q in wb.queries.items():
        if n.lower() == name.lower():
            return q
    raise UsageError(f"no query named {name}; queries: {', '.join(wb.queries)}")


def _save(wb, rest: list[str], args) -> None:
    """``%streamsql save NAME [--query Q] [--from-start]``."""
    if len(rest) != 1:
        raise UsageError("usage: %streamsql save NAME [--query Q] [--from-start] (writes NAME.sql, "
                         "NAME.events.jsonl and NAME.expected.jsonl)")
    q = _query(wb, [args.query] if getattr(args, "query", None) else [])
    print(wb.save_scenario(rest[0], q, from_start=getattr(args, "from_start", False)))
    return None


def stop_and_say(q) -> None:
    """Stop ``q`` and print one line."""
    was = q.running
    q.stop()
    n = len(q.rows)
    print(f"Query {q.name} {'stopped' if was else 'was already stopped'} ({n} row{'s' if n != 1 else ''} released)")


def run(magic, words: list[str], args):
    """Run sub-command ``words[0]`` with the rest of ``words`` and the parsed options."""
    from .. import widgets          # each view loads when asked for (a timeline loads Altair)
    from ..widgets.hooks import settle
    from .explain import logical_plan, spark_plan
    from .listing import queries_listing, streams_listing

    cmd, rest = words[0].lower(), words[1:]
    kernel = magic.kernel
    limit = magic.displaylimit if args.limit is None else args.limit
    if cmd == "help":
        print(HELP)
        return None
    if cmd == "reset":
        print(kernel.reset())
        return None
    if cmd == "load":
        if len(rest) != 1:
            raise UsageError("usage: %streamsql load PATH (NAME.sql, NAME.events.jsonl or NAME)")
        player = widgets.ScenarioPlayer(rest[0], engine=magic.engine, master=magic.master or None,
                                buckets=magic.buckets, on_spark_start=kernel.spark_starting)
        view = widgets.ScenarioView(player, engine=magic.engine, limit=limit, on_spark_start=kernel.spark_starting)
        if args.out:
            magic.shell.user_ns[args.out] = view
        return view
    wb = kernel.wb
    if cmd == "save":
        return _save(wb, rest, args)
    if cmd == "streams":
        settle(wb)
        return streams_listing(wb)
    if cmd == "queries":
        settle(wb)
        return queries_listing(wb)
    if cmd == "stop":
        if args.all and not rest:
            running = [q for q in wb.queries.values() if q.running]
            for q in running:
                stop_and_say(q)
            if not running:
                print("No query is running")
            return None
        if len(rest) != 1 or args.all:
            raise UsageError("usage: %streamsql stop NAME, or %streamsql stop --all")
        stop_and_say(_query(wb, rest))
        return None
    q = _query(wb, rest)
    if args.out:
        magic.shell.user_ns[args.out] = q
    if cmd == "show":
        return widgets.QueryView(q, limit=limit, bounds=args.bounds)
    if cmd == "workbench":
        return widgets.WorkbenchView(q, limit=limit, bounds=args.bounds)
    if cmd == "steps":
        return widgets.StepTable(q, scrubber=widgets.StepScrubber(q))
    if cmd == "timeline":
        return widgets.TimelineView(q, scrubber=widgets.StepScrubber(q))
    if cmd == "native":
        from ..widgets.native import NativeView
        return NativeView(wb.native_twin(q, args.delay or "0 seconds"))
    if cmd == "explain":
        print("Logical plan:\n" + logical_plan(q))
        print("\nSpark plan:\n" + spark_plan(q))
        return None
    raise UsageError(f"unknown sub-command {cmd}; try %streamsql help")
