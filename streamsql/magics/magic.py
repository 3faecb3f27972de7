"""``%%streamsql`` and ``%streamsql``, after JupySQL's ``%%sql``: options first, statements in the
cell (or after the options on the line), ``{{name}}`` interpolation, ``-o VAR`` / ``VAR <<`` to
bind the result, ``%config StreamSql.*`` for defaults. Thin: it parses, calls the engine's
Python API and displays; errors print as one line plus a caret, never a traceback."""
from __future__ import annotations

import re
import sys

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_cell_magic, magics_class, needs_local_scope, no_var_expand
from IPython.core.magic_arguments import argument, magic_arguments
from IPython.display import display
from traitlets import Bool, Enum, Int, Unicode, observe

from .literals import InterpolationError, interpolate
from .warmup import imports_ready
from .session import KernelWorkbench
from . import commands

_BIND = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*<<\s*$")

class CellError(Exception):
    """Raised instead of printed when ``StreamSql.stop_on_error`` is set: IPython shows only
    these lines (no traceback) and a "Run All" stops at the cell."""

    def __init__(self, text: str):
        super().__init__(text)
        self.text = text

    def _render_traceback_(self):
        return self.text.splitlines()


def error_text(e: BaseException) -> str:
    """One line (plus the statement line and a caret when the position is known)."""
    from ..engine.errors import SqlError
    if isinstance(e, SqlError):
        return "SQL error: " + (e.caret() if e.sql and e.line is not None else str(e))
    return f"error: {e}"


def split_options(line: str, parser) -> tuple[str, str]:
    """``(options, rest)``: the leading options the parser knows, and the raw text after them
    (SQL keeps its quotes, which shell-style splitting would eat)."""
    actions = parser._option_string_actions
    tokens = list(re.finditer(r"\S+", line))
    i = 0
    while i < len(tokens):
        tok = tokens[i].group()
        opt = tok.split("=", 1)[0]
        if not tok.startswith("-") or opt not in actions:
            break
        i += 1
        if actions[opt].nargs != 0 and "=" not in tok:
            i += 1
    cut = tokens[i].start() if i < len(tokens) else len(line)
    return line[:cut].strip(), line[cut:].strip()


@magics_class
class StreamSql(Magics):
    """Streaming SQL in notebooks. Settings (``%config StreamSql.<name> = value``) apply when the
    kernel's workbench opens: at first use and after ``%streamsql reset``."""

    workspace = Unicode(None, allow_none=True, help=(
        "Workspace directory of the kernel's workbench (streams, event log, query checkpoints); "
        "None: a temporary one, removed when the kernel exits.")).tag(config=True)
    engine = Enum(["spark", "local"], "spark", help=(
        "Where SELECT STREAM queries run: 'spark' (PySpark) or 'local' (in-process).")).tag(config=True)
    master = Unicode(None, allow_none=True, help=(
        "Spark master URL (e.g. spark://host:7077); None: the environment's STREAMSQL_MASTER, else "
        "local[*]. On a cluster the workspace must be on storage every worker reads.")).tag(config=True)
    remote = Unicode(None, allow_none=True, help=(
        "A Spark Connect endpoint (sc://host:15002, Databricks, managed Spark); None: the environment's "
        "STREAMSQL_REMOTE, else the shared engine when it is up (streamsql engine start), else Spark in "
        "this kernel. The workspace must be on storage that server reads.")).tag(config=True)
    buckets = Int(1, help="Key buckets per stateful Spark operator.").tag(config=True)
    displaylimit = Int(20, help="Released rows a query view shows (the last ones); --limit overrides.").tag(
        config=True)
    feedback = Bool(True, help="Print each statement's one-line result ('Stream P created').").tag(config=True)
    stop_on_error = Bool(False, help=(
        "Raise a short error (no traceback) instead of printing it, so that 'Run All' stops "
        "at a failing cell.")).tag(config=True)

    def __init__(self, shell=None, **kwargs):
        super().__init__(shell=shell, **kwargs)
        self.kernel = KernelWorkbench(self)
        #: the queries each cell started, by cell (a rerun replaces them)
        self.cell_queries: dict[str, list[str]] = {}
        self._cell = ""                   # the input being run (see cell_key)

    @observe("workspace", "engine", "master", "remote", "buckets")
    def _setting_changed(self, change):
        if getattr(self, "kernel", None) is not None and self.kernel.is_open:
            print(f"StreamSql.{change['name']} applies after %streamsql reset")

    # ------------------------------------------------------------------ the magic

    @no_var_expand
    @needs_local_scope
    @line_cell_magic
    @magic_arguments()
    @argument("line", nargs="*", help=(
        "line magic: a sub-command (" + ", ".join(commands.NAMES) + ") or statements; "
        "cell magic: optionally VAR << to bind the result"))
    @argument("-n", "--name", help="name of the continuous query a SELECT STREAM starts")
    @argument("-l", "--limit", type=int, default=None, help="released rows to show (default: StreamSql.displaylimit)")
    @argument("-o", "--out", metavar="VAR", help="bind the started query (a ContinuousQuery) to VAR")
    @argument("--explain", action="store_true", help="print the logical plan and the Spark plan")
    @argument("--bounds", action="store_true", help="show the output bound as it advances among the rows")
    @argument("-w", "--workbench", action="store_true",
              help="show the full workbench (rows, injectors, timeline, step table) instead of the rows")
    @argument("-q", "--query", metavar="NAME", help="save: the query to save (default: the last one started)")
    @argument("--from-start", action="store_true",
              help="save: every event since the streams were created, even for a query started after some")
    @argument("--all", action="store_true", help="with stop: stop every running query")
    @argument("--delay", metavar="TIME", default=None,
              help="native: the watermark delay of the native Spark twin (default '0 seconds')")
    def streamsql(self, line: str = "", cell: str | None = None, local_ns=None):
        """Run streaming SQL statements, or a workbench sub-command.

        %%streamsql [options] [VAR <<]
        CREATE STREAM ...; INSERT INTO ...; SELECT STREAM ...

        %streamsql [options] STATEMENTS
        %streamsql streams | queries | stop NAME | reset | load PATH | show [NAME] |
                   workbench [NAME] | steps [NAME] | timeline [NAME] | explain [NAME] |
                   save NAME [--query Q] [--from-start] | native [NAME] [--delay TIME] | help

        DDL and INSERT print a one-line result; a SELECT STREAM starts a continuous query and
        shows it live. ``{{name}}`` puts a Python value in as a SQL literal.
        """
        # the engine (its SQL parser, pyarrow) loads after %load_ext, in the background
        imports_ready()
        from ..engine.errors import StreamSqlError
        from ..engine.events import EventsFileError
        from ..engine.sql import starts_statement
        parser = self.streamsql.parser
        ns = dict(self.shell.user_ns)
        ns.update(local_ns or {})
        self._cell = line if cell is None else f"{line}\n{cell}"      # the whole input, for cell_key()
        try:
            opts, rest = split_options(line, parser)
            if cell is None:
                word = rest.split(None, 1)[0].lower() if rest else ""
                if not rest or word in commands.NAMES:
                    args = parser.parse_intermixed_args(_argv(opts, rest))
                    return commands.run(self, args.line or ["help"], args)
                if word.isidentifier() and not starts_statement(rest):
                    raise UsageError(f"unknown sub-command {rest.split(None, 1)[0]}; see %streamsql help "
                                     f"(sub-commands: {', '.join(commands.NAMES)}; or a SQL statement)")
                args = parser.parse_args(_argv(opts))
                return self._statements(rest, args, ns)
            args = parser.parse_args(_argv(opts))
            if rest:
                m = _BIND.match(rest)
                if not m:
                    raise UsageError(f"%%streamsql: unexpected {rest!r} on the magic's line "
                                     "(options, then optionally VAR <<; the statements go in the cell)")
                if args.out:
                    raise UsageError("%%streamsql: give either -o VAR or VAR <<, not both")
                args.out = m.group(1)
            return self._statements(cell, args, ns)
        except (StreamSqlError, EventsFileError, InterpolationError, FileNotFoundError) as e:
            self._fail(error_text(e))
        except KeyboardInterrupt as e:      # the kernel's interrupt during a wait: the queries go on
            self._fail(f"interrupted: {e}" if str(e) else "interrupted")
        except RuntimeError as e:
            if type(e).__name__ != "JavaNotFound":
                raise
            self._fail(error_text(e))
        return None

    # ------------------------------------------------------------------ statements

    def cell_key(self) -> str | None:
        """Which cell is running: JupyterLab (and Notebook 7) send its id with the request; a
        terminal has no cells, so the same text typed again counts as the same cell; a client
        that sends no id (nbclient, nbval) gets none, and nothing is replaced but by name."""
        get_parent = getattr(self.shell, "get_parent", None)
        parent = get_parent() if get_parent is not None else None
        cell_id = ((parent or {}).get("metadata") or {}).get("cellId")
        if cell_id:
            return f"cell {cell_id}"
        if type(self.shell).__name__ == "TerminalInteractiveShell":
            return "text " + (self._cell or "").strip()
        return None

    def _statements(self, sql: str, args, ns: dict):
        from ..engine.errors import SqlError, StreamSqlError
        from ..engine.events import EventsFileError
        from ..engine.paths import check_path_name
        from ..engine.sql import split_script
        sql = interpolate(sql, ns)
        if not sql.strip():
            return None
        if args.name is not None:   # refused before anything runs (the name becomes a folder)
            check_path_name(args.name, "query")
        wb = self.kernel.wb
        key = self.cell_key()
        before = [n for n in self.cell_queries.get(key, []) if n in wb.queries and wb.queries[n].running] \
            if key else []
        queries = []
        results = []
        tables = []                      # relational SELECT answers
        starts = self.kernel.spark_starts
        failure = None
        try:
            for st in split_script(sql):
                # the i-th query of the cell: its --name, else the name this cell gave it before
                i = len(queries)
                name = args.name if i == 0 and args.name else before[i] if i < len(before) else None
                try:
                    done = wb.execute(st.sql, name=name, replace=name is not None)
                except SqlError as e:
                    raise (e.located(sql, st.line - 1, st.col - 1) if e.line is not None else e) from None
                for r in done:
                    results.append(r)
                    if self.feedback:
                        print(r.message)
                    if r.query is not None:
                        queries.append(r.query)
                    elif r.rows is not None and hasattr(r, "to_pandas"):
                        tables.append(r)
                if self.kernel.spark_starts != starts:
                    starts = self.kernel.spark_starts
                    print("Spark is ready.")
        except (StreamSqlError, EventsFileError) as e:
            failure = e
        if failure is None:
            names = [q.name for q in queries]
            for n in before:          # what this cell started before and did not start again
                if n not in names and n in wb.queries and wb.queries[n].running:
                    wb.stop_query(n)
                    print(f"Query {n} stopped (this cell started it before)")
            if key is not None and queries:
                self.cell_queries[key] = names
            if args.out:              # a cell that fails leaves its variable as it was
                self.shell.user_ns[args.out] = queries[0] if queries else tables[-1] if tables else results
        for t in tables:
            self.show_table(t, args)
        for q in queries:
            self.show_query(q, args)
        if failure is not None:
            raise failure
        return None

    def show_table(self, result, args) -> None:
        """A relational SELECT's rows, as a DataFrame (the first ``--limit`` of them)."""
        limit = self.displaylimit if args.limit is None else args.limit
        df = result.to_pandas()
        if len(df) > limit:
            print(f"(first {limit} of {len(df)} rows)")
            df = df.head(limit)
        display(df)

    def show_query(self, q, args) -> None:
        limit = self.displaylimit if args.limit is None else args.limit
        if args.explain:
            from .explain import logical_plan, spark_plan
            print("Logical plan:\n" + logical_plan(q))
            print("\nSpark plan:\n" + spark_plan(q))
        if args.workbench:
            from ..widgets.compose import WorkbenchView      # with the timeline: Altair
            display(WorkbenchView(q, limit=limit, bounds=args.bounds))
        else:
            from ..widgets.live import QueryView
            display(QueryView(q, limit=limit, bounds=args.bounds))

    def _fail(self, text: str) -> None:
        if self.stop_on_error:
            raise CellError(text)
        print(text, file=sys.stderr)


def _argv(*parts: str) -> list[str]:
    from IPython.utils.process import arg_split
    return arg_split(" ".join(p for p in parts if p))

