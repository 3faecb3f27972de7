"""Sphinx extension: the parts of the documentation the engine itself produces while the site builds.

- ``streamsql-scenario PATH``: a scenario (``PATH.sql`` + ``PATH.events.jsonl``) replayed on the
  local runtime: its SQL, events, step table, replay lines and timeline chart (SVG). When the
  scenario has an ``expected.jsonl``, the replay must agree with it or the build fails.
- ``streamsql-errors``: one statement per line against the sample schema; each must be refused
  by the dialect, and the page shows the message and position the engine gives.
- ``streamsql-schema``: the sample schema those statements run against.
- ``streamsql-magic-options``, ``streamsql-magic-commands``, ``streamsql-config``,
  ``streamsql-cli``: option tables and help texts read from the magics' parser, their
  ``%config`` traits and the command line's argparse parser, so they cannot drift from the code.
- ``streamsql-layers``: the import layers of ``pyproject.toml``'s contract, top to bottom, each
  with the description the directive's body gives it; a layer without one, or a description of
  no layer, fails the build.
- The tutorials are copied from ``notebooks/`` into ``docs/tutorials/`` (gitignored) with their
  stored outputs; each Vega-Lite chart gets an SVG rendering (vl-convert) beside it, since a
  static page has no Vega runtime (and must load nothing from outside the project).
- Autodoc members without a docstring are warnings (errors under ``-W``).
"""
from __future__ import annotations

import json
import re
import shlex
from functools import lru_cache
from pathlib import Path

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

logger = logging.getLogger(__name__)

DOCS = Path(__file__).resolve().parent.parent
ROOT = DOCS.parent
TUTORIALS = DOCS / "tutorials"

#: the schema the SQL reference's error examples run against (the seeds' streams and tables)
SAMPLE_SCHEMA = """\
CREATE STREAM Orders (productId INTEGER, orderId INTEGER, units INTEGER, ticker VARCHAR(10), amount INTEGER);
CREATE STREAM Shipments (orderId INTEGER);
CREATE STREAM Trades (orderId INTEGER, ticker VARCHAR(10), amount INTEGER, price DECIMAL(6,2));
CREATE STREAM P (name VARCHAR(10));
CREATE STREAM Q (name VARCHAR(10));
CREATE TABLE Products (productId INTEGER, name VARCHAR(20));
CREATE TABLE ProductVersions (productId INTEGER, unitPrice DOUBLE, startDate TIMESTAMP, endDate TIMESTAMP);
CREATE VIEW BigOrders AS SELECT STREAM * FROM Orders WHERE units > 100;
CREATE PUMP OldPump STOPPED AS INSERT INTO Q SELECT STREAM name FROM P"""


# --------------------------------------------------------------------------- helpers

def _table(header: list[str], rows: list[list], classes: list[str]) -> nodes.table:
    """A docutils table; a cell is a string (a paragraph) or a list of nodes."""
    table = nodes.table(classes=classes)
    group = nodes.tgroup(cols=len(header))
    table += group
    for _ in header:
        group += nodes.colspec(colwidth=1)

    def row_of(cells):
        row = nodes.row()
        for c in cells:
            entry = nodes.entry()
            if isinstance(c, str):
                entry += nodes.paragraph(text=c) if c else nodes.paragraph()
            else:
                entry.extend(c)
            row += entry
        return row

    head = nodes.thead()
    head += row_of(header)
    group += head
    body = nodes.tbody()
    for r in rows:
        body += row_of(r)
    group += body
    return table


def _code(text: str, language: str = "none") -> nodes.literal_block:
    block = nodes.literal_block(text, text)
    block["language"] = language
    return block


def _svg(spec: dict) -> str:
    """A Vega-Lite spec as inline SVG (no script, nothing loaded from elsewhere)."""
    import vl_convert as vlc
    svg = vlc.vegalite_to_svg(spec, vl_version="5.20")
    return re.sub(r"^<\?xml[^>]*>\s*", "", svg)


def _chart_node(spec: dict, caption: str | None = None) -> list[nodes.Node]:
    out: list[nodes.Node] = [nodes.raw("", f'<div class="streamsql-chart">{_svg(spec)}</div>', format="html")]
    if caption:
        out.append(nodes.paragraph(text=caption, classes=["streamsql-caption"]))
    return out


# --------------------------------------------------------------------------- scenarios

class Replay:
    """A scenario replayed on the local runtime (the oracle: fast and without Spark)."""

    def __init__(self, base: Path, upto: int | None = None):
        from streamsql.engine.cli import read_events
        from streamsql.engine.workbench import Workbench
        self.base = base
        self.sql = base.with_suffix(".sql").read_text()
        events_path = Path(str(base) + ".events.jsonl")
        self.events_text = "\n".join(l for l in events_path.read_text().splitlines() if l.strip())
        events = read_events(events_path)
        if upto is not None:
            events = events[:upto]
            self.events_text = "\n".join(self.events_text.splitlines()[:upto])
        self.wb = Workbench(None, engine="local")
        results = self.wb.execute(self.sql)
        queries = [r.query for r in results if r.query is not None]
        if len(queries) != 1:
            raise ValueError(f"{base}: the script must end with exactly one SELECT STREAM query")
        self.query = queries[0]
        self.names = {}
        for ev in events:
            try:
                self.names.setdefault(self.wb.catalog.stream(ev.stream).name, ev.stream)
            except Exception:
                pass
        self.first = self.wb.last_step          # steps count from the first event (the script may INSERT)
        self.outcomes = self.wb.inject(events)
        self.query.wait()

    def step_table(self) -> list[list[str]]:
        from streamsql.engine.steps import step_table
        streams = [self.names.get(s, s) for s in self.query.plan.streams]
        for o in self.outcomes:
            o.event.stream = self.names.get(o.event.stream, o.event.stream)
        for s in dict.fromkeys(o.event.stream for o in self.outcomes):
            if s not in streams:
                streams.append(s)
        return step_table(self.query, self.outcomes, self.first, streams)

    def lines(self, bounds: bool) -> list[dict]:
        from streamsql.engine.steps import replay_lines
        return replay_lines(self.query, self.outcomes, self.first, bounds=bounds, stream_names=self.names)

    def mismatch(self) -> str | None:
        """Where the replay disagrees with the scenario's expected output (None: it agrees)."""
        from streamsql.engine.steps import lines_agree
        path = Path(str(self.base) + ".expected.jsonl")
        if not path.exists():
            return None
        expected = [json.loads(l) for l in path.read_text().splitlines() if l.strip()]
        bounds = any("bound" in e for e in expected)
        got = self.lines(bounds)
        if lines_agree(got, expected):
            return None
        return f"replayed {json.dumps(got)} but expected {json.dumps(expected)}"

    def chart_spec(self) -> dict:
        from streamsql.widgets.timeline_spec import timeline_chart
        from streamsql.widgets.vega import spec_of
        return spec_of(timeline_chart(self.query))


@lru_cache(maxsize=None)
def replayed(base: str, upto: int | None) -> Replay:
    return Replay(ROOT / base, upto)


class ScenarioDirective(SphinxDirective):
    """``streamsql-scenario streamsql/scenarios/union_merge`` with ``:show: sql, events,
    table, lines, chart`` (default ``sql, table``), ``:upto: N`` (only the first N events) and
    ``:bounds:`` (bound lines among the replay lines)."""

    required_arguments = 1
    option_spec = {"show": directives.unchanged, "upto": directives.positive_int,
                   "bounds": directives.flag, "caption": directives.unchanged}

    def run(self):
        base = self.arguments[0]
        show = [s.strip() for s in self.options.get("show", "sql, table").split(",") if s.strip()]
        for s in show:
            if s not in ("sql", "events", "table", "lines", "chart"):
                raise self.error(f"streamsql-scenario: unknown part {s!r} in :show:")
        if not (ROOT / (base + ".sql")).exists():
            raise self.error(f"streamsql-scenario: no scenario {base}.sql in the project")
        self.env.note_dependency(str(ROOT / (base + ".sql")))
        self.env.note_dependency(str(ROOT / (base + ".events.jsonl")))
        upto = self.options.get("upto")
        r = replayed(base, upto)
        if upto is None:
            diff = r.mismatch()
            if diff:
                logger.warning(f"scenario {base} disagrees with its expected output: {diff}",
                               location=self.get_location())
        out: list[nodes.Node] = []
        name = Path(base).name
        for part in show:
            if part == "sql":
                out.append(nodes.paragraph(text=f"{name}.sql:"))
                out.append(_code(r.sql.strip(), "sql"))
            elif part == "events":
                out.append(nodes.paragraph(text=f"{name}.events.jsonl" + (f" (first {upto} events)" if upto else "")
                                           + " (line n is step n):"))
                out.append(_code(r.events_text, "json"))
            elif part == "table":
                rows = r.step_table()
                out.append(nodes.paragraph(text="Step table (computed by the engine while this page was built):"))
                out.append(_table(rows[0], rows[1:], ["streamsql-steps"]))
            elif part == "lines":
                lines = r.lines("bounds" in self.options)
                flags = " --bounds" if "bounds" in self.options else ""
                out.append(nodes.paragraph(text=f"streamsql replay {name}.sql {name}.events.jsonl{flags}:"))
                out.append(_code("\n".join(json.dumps(l) for l in lines) or "(no output)", "json"))
            elif part == "chart":
                out.extend(_chart_node(r.chart_spec(), self.options.get("caption")))
        return out


# --------------------------------------------------------------------------- SQL errors

@lru_cache(maxsize=1)
def _sample_workbench():
    from streamsql.engine.workbench import Workbench
    wb = Workbench(None, engine="local")
    wb.execute(SAMPLE_SCHEMA)
    wb.set_history("Orders")
    return wb


class SchemaDirective(SphinxDirective):
    """The sample schema of the error examples, as a SQL block."""

    def run(self):
        return [_code(SAMPLE_SCHEMA + ";\n-- and the history of Orders is retained (Workbench.set_history)", "sql")]


class ErrorsDirective(SphinxDirective):
    """One statement per content line (``\\n`` in a line is a line break); each must be refused,
    when it is checked (SqlError, with its position) or while it runs (another StreamSqlError).
    The examples of a page share one workbench, in page order."""

    has_content = True

    def run(self):
        from streamsql.engine.errors import SqlError, StreamSqlError
        wb = _sample_workbench()
        rows = []
        for line in self.content:
            if not line.strip():
                continue
            sql = line.strip().replace("\\n", "\n")
            try:
                wb.execute(sql)
            except SqlError as e:
                where = f"line {e.line}, column {e.col}" if e.line is not None else ""
                if e.line is not None and "\n" not in sql:
                    where = f"column {e.col}"
                rows.append([[_code(sql, "none")], [nodes.paragraph(text=e.message),
                                                  nodes.paragraph(text=f"at {where}" if where else "")]])
                continue
            except StreamSqlError as e:     # refused while running (a late row, a value out of range)
                rows.append([[_code(sql, "none")], [nodes.paragraph(text=f"{type(e).__name__}: {e}")]])
                continue
            logger.warning(f"streamsql-errors: the dialect accepts {sql!r}; it is no error example",
                           location=self.get_location())
        return [_table(["Statement", "Error (from the engine)"], rows, ["streamsql-errors"])]


# --------------------------------------------------------------------------- magics, %config, CLI

class MagicOptionsDirective(SphinxDirective):
    """The options of ``%%streamsql``, from the magic's own argument parser."""

    def run(self):
        from streamsql.magics.magic import StreamSql
        rows = []
        for a in StreamSql.streamsql.parser._actions:
            if not a.option_strings:
                continue
            opt = ", ".join(a.option_strings) + (f" {a.metavar or a.dest.upper()}" if a.nargs != 0 else "")
            rows.append([[nodes.paragraph("", "", nodes.literal(text=opt))], a.help or ""])
        return [_table(["Option", "What it does"], rows, ["streamsql-options"])]


class MagicCommandsDirective(SphinxDirective):
    """The sub-commands of ``%streamsql``: its own help text."""

    def run(self):
        from streamsql.magics import commands
        return [_code(commands.HELP, "none")]


class ConfigDirective(SphinxDirective):
    """``%config StreamSql.<name>``: every configurable trait with its default and help."""

    def run(self):
        from streamsql.magics.magic import StreamSql
        rows = []
        for name, trait in sorted(StreamSql.class_traits(config=True).items()):
            default = trait.default_value
            rows.append([[nodes.paragraph("", "", nodes.literal(text=f"StreamSql.{name}"))],
                         [nodes.paragraph("", "", nodes.literal(text=repr(default)))],
                         trait.help or ""])
        return [_table(["Setting", "Default", "What it does"], rows, ["streamsql-config"])]


class CliDirective(SphinxDirective):
    """The output of a ``streamsql`` command line, run as a process while building (as a user
    runs it, from the project's root): ``--help`` texts, or ``demo``/``replay --engine local``."""

    required_arguments = 1
    final_argument_whitespace = True

    def run(self):
        import subprocess
        import sys
        argv = shlex.split(self.arguments[0])
        r = subprocess.run([sys.executable, "-m", "streamsql.engine.cli", *argv], cwd=ROOT,
                           capture_output=True, text=True, timeout=300)
        if r.returncode != 0:
            logger.warning(f"streamsql {' '.join(argv)} exited with {r.returncode}: {r.stderr.strip()[-500:]}",
                           location=self.get_location())
        text = r.stdout.rstrip().replace("usage: cli.py", "usage: streamsql").replace("usage: __main__.py",
                                                                                      "usage: streamsql")
        return [_code(f"$ streamsql {' '.join(argv)}\n{text}", "none")]


# --------------------------------------------------------------------------- import layers

def contract_layers(pyproject: Path = ROOT / "pyproject.toml") -> list[str]:
    """The layers of the import contract, top to bottom, each as its modules joined by `` | ``
    without the ``streamsql.`` and ``streamsql.engine.`` prefixes (``commits | queries``)."""
    import tomllib
    cfg = tomllib.loads(pyproject.read_text())["tool"]["importlinter"]["contracts"]
    layers = next(c for c in cfg if c["type"] == "layers")["layers"]

    def short(m: str) -> str:
        m = m.strip()
        for prefix in ("streamsql.engine.", "streamsql."):
            if m.startswith(prefix):
                return m[len(prefix):]
        return m
    return [" | ".join(short(m) for m in layer.split("|")) for layer in layers]


def described_layers(lines: list[str]) -> dict[str, str]:
    """A ``streamsql-layers`` body: ``layer  description`` lines (the layer as
    :func:`contract_layers` writes it, two or more spaces, then the words)."""
    out = {}
    for line in lines:
        if line.strip():
            parts = re.split(r" {2,}", line.strip(), maxsplit=1)
            out[parts[0]] = parts[1] if len(parts) > 1 else ""
    return out


class LayersDirective(SphinxDirective):
    """The import layers, drawn from ``pyproject.toml`` with the body's descriptions."""

    has_content = True

    def run(self):
        self.env.note_dependency(str(ROOT / "pyproject.toml"))
        layers = contract_layers()
        words = described_layers(list(self.content))
        for layer in layers:
            if not words.get(layer):
                logger.warning(f"streamsql-layers: layer {layer!r} of pyproject.toml has no description",
                               location=self.get_location())
        for layer in words:
            if layer not in layers:
                logger.warning(f"streamsql-layers: {layer!r} is no layer of pyproject.toml's contract",
                               location=self.get_location())
        width = max(len(x) for x in layers) + 2
        return [_code("\n".join(f"{x:<{width}}{words.get(x, '')}".rstrip() for x in layers), "none")]


# --------------------------------------------------------------------------- tutorials

def _link_semantics(text: str) -> str:
    """A notebook's link to the semantics page (``../docs/semantics.md``, from ``notebooks/``)
    as the site's copy of the notebook (in ``docs/tutorials/``) reaches it."""
    return text.replace("](../docs/", "](../")


def copy_tutorials(app) -> None:
    """Copy the tutorials with their stored outputs; add an SVG beside every Vega-Lite chart."""
    TUTORIALS.mkdir(exist_ok=True)
    wanted = set()
    for src in sorted((ROOT / "notebooks").glob("*.ipynb")):
        nb = json.loads(src.read_text())
        for cell in nb["cells"]:
            if cell["cell_type"] == "markdown":
                text = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
                cell["source"] = _link_semantics(text)
            for out in cell.get("outputs", []):
                data = out.get("data", {})
                spec = data.pop("application/vnd.vegalite.v5+json", None)
                if spec is not None and "image/svg+xml" not in data:
                    data["image/svg+xml"] = _svg(spec)
                data.pop("application/vnd.jupyter.widget-view+json", None)   # needs a live kernel
        text = json.dumps(nb, indent=1, ensure_ascii=False) + "\n"
        dst = TUTORIALS / src.name
        wanted.add(dst.name)
        if not dst.exists() or dst.read_text() != text:
            dst.write_text(text)
    for old in TUTORIALS.glob("*.ipynb"):
        if old.name not in wanted:
            old.unlink()


# --------------------------------------------------------------------------- API reference

def require_docstring(app, what, name, obj, options, lines) -> None:
    """A public member the API reference shows must say what it is for."""
    if lines or what == "module" or name.rsplit(".", 1)[-1].startswith("_"):
        return
    logger.warning(f"undocumented public API member {name} ({what}): add a docstring",
                   type="streamsql", subtype="undocumented")


def resolve_short_names(app, env, node, contnode):
    """A Python reference by a short name (``OutputRow``, ``Workbench.load``) resolves to the one
    documented object whose full name ends with it; anything else stays a broken reference."""
    if node.get("refdomain") != "py":
        return None
    from sphinx.util.nodes import make_refnode
    target = node["reftarget"].lstrip(".~")
    domain = env.get_domain("py")
    hits = {name: entry for name, entry in domain.objects.items()
            if (name == target or name.endswith("." + target)) and not entry.aliased}
    if len(hits) != 1:
        return None
    name, entry = next(iter(hits.items()))
    return make_refnode(app.builder, node["refdoc"], entry.docname, entry.node_id, contnode, name)


def setup(app):
    import logging as pylogging
    pylogging.getLogger("streamsql").setLevel(pylogging.ERROR)   # the scenarios' late rows are on purpose
    app.add_directive("streamsql-scenario", ScenarioDirective)
    app.add_directive("streamsql-errors", ErrorsDirective)
    app.add_directive("streamsql-schema", SchemaDirective)
    app.add_directive("streamsql-magic-options", MagicOptionsDirective)
    app.add_directive("streamsql-magic-commands", MagicCommandsDirective)
    app.add_directive("streamsql-config", ConfigDirective)
    app.add_directive("streamsql-cli", CliDirective)
    app.add_directive("streamsql-layers", LayersDirective)
    app.connect("builder-inited", copy_tutorials)
    app.connect("autodoc-process-docstring", require_docstring)
    app.connect("missing-reference", resolve_short_names)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "1"}
