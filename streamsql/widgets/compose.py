"""The composed workbench: a query's live rows, an injector per input stream, the timeline and
the step table in one widget; or a scenario file with step controls around the same views."""
from __future__ import annotations

import html
from pathlib import Path

import ipywidgets as widgets

from ..engine.steps import event_text
from .form import ClickForm
from .hooks import LiveView, caught_up, settle
from .live import query_key
from .static import StaticMixin, snapshot_html, update_all
from .injector import Injector
from .live import QueryView
from .scenario import Scenario, ScenarioPlayer
from .scrubber import StepScrubber
from .sources import SESSION_QUERY_SOURCES, session_queries  # noqa: F401 (the magics' hook, re-exported)
from .steps import StepTable
from .timeline import TimelineView
from .timeline_spec import timeline_summary
from . import vega


def _section(title: str) -> str:
    """A section's heading in a static snapshot (HTML text: a widget made for its value would be
    sent to the browser and never closed, one per snapshot)."""
    return f'<div style="font-weight:bold;margin-top:6px">{html.escape(title)}</div>'


#: the workbench's parts fit one screen (1280×800): the everyday loop (type, click, see the row
#: released or held and why) above, the timeline, step table and scrubber in tabs below; every
#: part has a fixed height, so nothing moves under the mouse between clicks
MAIN_HEIGHT = "270px"
ROWS_HEIGHT = "160px"
WHY_HEIGHT = "104px"
TABS_HEIGHT = "266px"
#: the injectors' column: a third of the width, at least 300 px (1280 px with the file browser open
#: leaves the output 912 px), at most 430 px; the released rows and what is open get the rest
INJECT_WIDTH, INJECT_MIN, INJECT_SHARE = "430px", "300px", "36%"
TABS = ("Timeline", "Steps", "Back to step")
TIMELINE_WIDTH = 500


def _box(children, **layout) -> widgets.Box:
    return widgets.Box(children, layout=widgets.Layout(**layout))


class WorkbenchView(StaticMixin, widgets.VBox):
    """Everything about one query, on one screen. ``injectors=False`` leaves out the injectors (a
    scenario supplies the events); ``player`` numbers the step table by the scenario's lines."""

    def __init__(self, q, *, limit: int = 20, bounds: bool = False, injectors: bool = True, player=None,
                 steps_limit: int | None = 50):
        self.q = q
        self.wb = q.wb
        self.live = QueryView(q, limit=limit, bounds=bounds, held=True)
        self.injectors: dict[str, Injector] = {}
        if injectors:
            for s in q.plan.streams:
                d = self.wb.catalog.streams.get(s)
                if d is not None and not d.system:          # the error stream is written by the engine
                    self.injectors[s] = Injector(self.wb, s, query=q.name)
        self.timeline = TimelineView(q, width=TIMELINE_WIDTH)
        self.steps = StepTable(q, limit=steps_limit, player=player,
                               base=player.base if player is not None else 0)
        # back through the steps (interactive only: the snapshot and the text show the present)
        self.scrubber = StepScrubber(q, limit=limit) if player is None else None
        parts = [self.timeline, self.steps] + ([self.scrubber] if self.scrubber is not None else [])
        if self.scrubber is not None:
            self.scrubber.slider.observe(lambda c: self.steps.highlight_step(self.scrubber.marked_step()),
                                         names="value")
            self.timeline.linked_scrubber = self.scrubber
            self.scrubber.slider.observe(lambda _c: self.timeline.mark(), names="value")

        # the everyday loop: injectors on the left, released rows and what is held or open on the right
        # a reversed column starts scrolled to its end, so the newest rows show
        rows = _box([self.live.table], height=ROWS_HEIGHT, overflow="auto", display="flex",
                    flex_flow="column-reverse")
        self.live.table.layout.margin = "0 0 auto 0"     # short: at the top; long: scrolled to its end
        why = _box([self.live.open_table], height=WHY_HEIGHT, overflow="auto")
        right = widgets.VBox([rows, why], layout=widgets.Layout(flex="1 1 auto", min_width="0", height=MAIN_HEIGHT))
        main = [right]
        if self.injectors:
            inj = list(self.injectors.values())
            if len(inj) == 1:
                left = inj[0]
            else:
                left = widgets.Tab(children=inj, titles=tuple(self.injectors), layout=widgets.Layout(width="100%"))
                left.add_class("streamsql-inject-tabs")         # no wider than its column (injector.css)
            main = [_box([left], flex=f"0 0 {INJECT_SHARE}", min_width=INJECT_MIN, max_width=INJECT_WIDTH,
                         height=MAIN_HEIGHT, overflow="hidden auto", margin="0 10px 0 0"), right]
        self.steps.sticky = True        # its header stays in sight while its box scrolls
        boxes = [_box([self.timeline], height=TABS_HEIGHT, overflow="auto"),
                 # the step table, like the rows, starts scrolled to its newest steps
                 _box([self.steps], height=TABS_HEIGHT, overflow="auto", display="flex", flex_flow="column-reverse")]
        self.steps.layout.margin = "0 0 auto 0"
        if self.scrubber is not None:          # its slider stays put; the panel under it scrolls
            self.scrubber.panel_box.layout.height = f"calc({TABS_HEIGHT} - 44px)"
            boxes.append(_box([self.scrubber], height=TABS_HEIGHT))
        self.tabs = widgets.Tab(children=boxes, titles=TABS[:len(parts)])
        self.tabs.add_class("streamsql-workbench-tabs")
        self.tabs.observe(lambda _c: self._shown_tab(), names="selected_index")
        self._shown_tab()
        top = widgets.VBox([self.live.header_box, widgets.HBox(main, layout=widgets.Layout(width="100%"))])
        top.add_class("streamsql-query")          # the query's own part: status, injectors, rows, why
        super().__init__([top, self.tabs])
        self.add_class("streamsql-workbench")

    def _shown_tab(self) -> None:
        """Only the part in the tab shown redraws; the others catch up when their tab is opened."""
        parts = [self.timeline, self.steps] + ([self.scrubber] if self.scrubber is not None else [])
        for i, p in enumerate(parts):
            p.visible = self.tabs.selected_index == i
            if p.visible:
                p.mark()

    def refresh(self) -> None:
        """Redraw every part from the engine's current state."""
        self.live.refresh()
        self.timeline.refresh()
        self.steps.refresh()
        if self.scrubber is not None:
            self.scrubber.refresh()
        for inj in self.injectors.values():
            inj.refresh()

    def text(self) -> str:
        """The whole view as plain text (the form nbval compares and terminals print)."""
        return "\n\n".join([self.live.text(), timeline_summary(self.q), self.steps.text()])

    def static_parts(self) -> list[str]:
        """The pieces of its static snapshot (HTML), in display order."""
        parts = self.live.static_parts()
        if self.injectors:
            parts += [_section("Inject")] + [p for inj in self.injectors.values() for p in inj.static_parts()]
        parts += [_section("Timeline")] + self.timeline.static_parts()
        parts += [_section("Steps")] + self.steps.static_parts()
        return parts

    def static_key(self):
        return query_key(self.q)

    def static_queries(self) -> list:
        return [self.q]

    def static_html(self) -> str:
        """The view as a static HTML snapshot (what a notebook shows where no kernel runs it)."""
        return snapshot_html(self.static_parts(), f"Workbench of query {self.q.name}")

    def bundle_settle(self) -> None:
        settle(self.wb)
        self.refresh()

    def bundle_extra(self) -> dict:
        return vega.bundle(self.timeline.chart())


class ScenarioView(LiveView, StaticMixin, widgets.VBox):
    """Load a scenario file and step through it: one event forward, or to any step k (going
    back replays from the start). The views below follow the scenario's query. A click (Step,
    Go) injects and returns; the status line and the views follow as the query catches up."""

    priority = 2

    def __init__(self, player: ScenarioPlayer | None = None, *, path: str = "", engine: str = "spark",
                 limit: int = 20, on_spark_start=None):
        self.player = player
        self.engine = engine
        self.limit = limit
        self.on_spark_start = on_spark_start
        self.controls = ClickForm(
            fields=[{"name": "path", "label": "scenario", "placeholder": "scenarios/NAME (.sql / .events.jsonl)",
                     "width": "22em", "enter": "load"},
                    {"name": "k", "label": "step k", "kind": "number", "width": "5em", "enter": "go"}],
            buttons=[{"name": "load", "label": "Load"}, {"name": "restart", "label": "Restart"},
                     {"name": "step", "label": "Step ▶", "primary": True}, {"name": "go", "label": "Go"}],
            on_click=self._clicked,
            values={"path": str(player.scenario.path) if player else path, "k": 0})
        self.path, self.k = self.controls.field("path"), self.controls.field("k")
        self.status = widgets.HTML()
        self.body = widgets.VBox()
        super().__init__([self.controls, self.status, self.body])
        self.add_class("streamsql-scenario")
        self.view: WorkbenchView | None = None
        if player is not None:
            self._bind(player)
        self._show()

    # ------------------------------------------------------------------ actions

    def _clicked(self, name: str, values: dict) -> None:
        """A click, with the fields as they were on screen: it injects and returns at once."""
        if name == "load":
            self.load(values.get("path", ""))
        elif name == "restart":
            self._run(lambda: self.player.goto(0, wait=False))
        elif name == "step":
            self._run(lambda: self.player.step(wait=False))
        elif name == "go":
            try:
                k = int(str(values.get("k", "")).strip())
            except ValueError:
                self._error(ValueError(f"step k: {values.get('k')!r} is not a step number"))
                return
            self._run(lambda: self.player.goto(k, wait=False))

    def load(self, path: str | Path | None = None) -> None:
        """Load the scenario at ``path`` (or the path box) and stand before its first event."""
        if path is not None:
            self.path.value = str(path)
        try:
            player = ScenarioPlayer(Scenario.load(str(self.path.value).strip()), engine=self.engine,
                                    on_spark_start=self.on_spark_start)
        except Exception as e:  # a bad file or statement: say so, keep the old scenario
            self._error(e)
            return
        if self.player is not None:
            self.player.close()
        self.player = player
        self._bind(player)
        self._show()

    def step(self) -> None:
        """Inject the next event of the scenario (and wait for the query: a cell's call)."""
        if self.player is not None:
            self._run(self.player.step)

    def goto(self, k: int) -> None:
        """Be just after step k (and wait for the query: a cell's call)."""
        if self.player is not None:
            self._run(lambda: self.player.goto(k))

    def _run(self, f) -> None:
        if self.player is None:
            return
        try:
            f()
        except Exception as e:
            self._error(e)
            return
        if self.view is not None:
            for part in (self.view.live, self.view.timeline, self.view.steps):
                part.mark()
        self._show()
        update_all()          # a click in JupyterLab: the saved notebook's snapshots follow

    def live_key(self):
        p = self.player
        return None if p is None else (id(p.wb), p.pos, caught_up([p.q])) + query_key(p.q)

    def refresh(self) -> None:
        """Redraw the status line (the views below redraw on their own)."""
        self._show()

    # ------------------------------------------------------------------ display

    def _bind(self, player: ScenarioPlayer) -> None:
        player.on_restart(self._rebind)
        self._rebind(player)

    def _rebind(self, player: ScenarioPlayer) -> None:
        self.view = WorkbenchView(player.q, limit=self.limit, injectors=False, player=player, steps_limit=None)
        self.body.children = [self.view]
        self.follow(queries=[player.q], wb=player.wb)

    def _error(self, e: Exception) -> None:
        msg = e.caret() if hasattr(e, "caret") and getattr(e, "sql", None) else str(e)
        self.status.value = (f'<pre class="streamsql-message" style="color:#b00020">error: '
                             f'{html.escape(msg)}</pre>')

    def status_text(self) -> str:
        """Which scenario is loaded, the step reached and whether the output matches the expected file so far."""
        p = self.player
        if p is None:
            return "No scenario loaded."
        nxt = p.next_event()
        lines = [f"Scenario {p.scenario.name}: step {p.pos} of {p.total}"
                 + (f"; next: {_describe(nxt)}" if nxt else "; all events injected")]
        if not caught_up([p.q]):
            return lines[0] + "\n(the query is catching up with the events so far)"
        ok, why = p.check()
        if ok is not None:
            lines.append(("✓ " if ok else "✗ ") + why)
        return "\n".join(lines)

    def _show(self) -> None:
        p = self.player
        if p is not None:
            self.k.value = p.pos
        self.controls.disabled = ["step"] if p is None or p.pos >= p.total else []
        self.status.value = (f'<pre class="streamsql-status" style="margin:2px 0">'
                             f'{html.escape(self.status_text())}</pre>')

    def text(self) -> str:
        """The status and the query's view as plain text."""
        parts = [self.status_text()]
        if self.view is not None:
            parts.append(self.view.text())
        return "\n\n".join(parts)

    def static_parts(self) -> list[str]:
        """The pieces of its static snapshot (HTML), in display order."""
        parts = [f'<pre class="streamsql-status" style="margin:2px 0">{html.escape(self.status_text())}</pre>']
        return parts + (self.view.static_parts() if self.view is not None else [])

    def static_key(self):
        p = self.player
        return None if p is None else (id(p.wb), p.pos) + query_key(p.q)

    def static_queries(self) -> list:
        return [self.view.q] if self.view is not None else []

    def static_html(self) -> str:
        """The view as a static HTML snapshot (what a notebook shows where no kernel runs it)."""
        name = self.player.scenario.name if self.player is not None else "(none loaded)"
        return snapshot_html(self.static_parts(), f"Scenario {name}")

    def bundle_settle(self) -> None:
        if self.view is not None:
            settle(self.view.wb)
            self.view.refresh()
        self._show()

    def bundle_extra(self) -> dict:
        return vega.bundle(self.view.timeline.chart()) if self.view is not None else {}


def _describe(ev) -> str:
    return event_text(ev, kind_first=True, stream=True)


def workbench(query=None, *, scenario: str | Path | None = None, engine: str = "spark", limit: int = 20,
              bounds: bool = False, on_spark_start=None):
    """The composed workbench view of a running query (``streamsql.workbench(q)``), or of a
    scenario file to step through (``streamsql.workbench(scenario="scenarios/union_merge")``)."""
    if scenario is not None:
        if query is not None:
            raise TypeError("workbench() takes a query or scenario=PATH, not both")
        player = ScenarioPlayer(scenario, engine=engine, on_spark_start=on_spark_start)
        return ScenarioView(player, engine=engine, limit=limit, on_spark_start=on_spark_start)
    return WorkbenchView(resolve_query(query), limit=limit, bounds=bounds)


def resolve_query(query):
    """A :class:`ContinuousQuery`, or the query of that name in this session (the magics'
    workbench), matched like SQL names; a clear error for anything else."""
    from ..engine.continuous_query import ContinuousQuery
    if isinstance(query, ContinuousQuery):
        return query
    if query is None:
        raise TypeError("workbench() needs a query: a ContinuousQuery (from %%streamsql -o VAR or "
                        "Workbench.query) or the name of a query of this session, or scenario=PATH")
    if not isinstance(query, str):
        raise TypeError(f"workbench() takes a ContinuousQuery or a query name, not {type(query).__name__} "
                        f"{query!r:.60}")
    queries = session_queries()
    found = queries.get(query) or next((q for n, q in queries.items() if n.upper() == query.upper()), None)
    if found is None:
        names = ", ".join(queries) or "none yet (start one with %%streamsql, or pass the ContinuousQuery itself)"
        raise UnknownQueryError(f"no query named {query!r} in this session; queries: {names}")
    return found


class UnknownQueryError(ValueError):
    """``workbench(NAME)`` of a query this session does not have: shown in a notebook as its one
    line, not as a traceback through the library."""

    def _render_traceback_(self):
        return [f"{type(self).__name__}: {self}"]
