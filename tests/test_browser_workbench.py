"""The workbench in a real JupyterLab and a real browser, as a student uses it: bursts of clicks
while the kernel is busy insert exactly the typed rows, in click order, each once; the click
returns at once and the row shows when Spark releases it; each workbench fits one 1280×800
screen, with its timeline readable at 10 and at 1,000 events. Screenshots go to test-output/
(the docs show them)."""
from __future__ import annotations

import json
import re
import time

import pytest

from streamsql.widgets.timeline_labels import COVERABLE_LAYERS

from labsupport import (CHROMIUM, CHROMIUM_ARGS, OUT, PANEL, end_sessions, have_chromium, jupyterlab,
                        open_and_run_all, shot, write_notebook)

pytestmark = pytest.mark.skipif(not have_chromium(),
                                reason="Debian's chromium is not installed (scripts/setup.sh --test installs it)")

DDL = ("%%streamsql\nCREATE STREAM S (A INTEGER, V INTEGER);\n"
       "CREATE STREAM T (A INTEGER, W INTEGER)")
QUERIES = {
    "f": "SELECT STREAM ROWTIME, A, V FROM S WHERE V > 0",
    "g": "SELECT STREAM FLOOR(S.ROWTIME TO HOUR) AS ROWTIME, A, COUNT(*) AS C, SUM(V) AS TOTAL\n"
         "FROM S GROUP BY FLOOR(S.ROWTIME TO HOUR), A",
    "o": "SELECT STREAM ROWTIME, A, V,\n"
         "  SUM(V) OVER (PARTITION BY A RANGE INTERVAL '10' MINUTE PRECEDING) AS LAST10\nFROM S",
    "j": "SELECT STREAM ROWTIME, s.A, s.V, t.W\n"
         "FROM S AS s JOIN T OVER (RANGE INTERVAL '5' MINUTE PRECEDING) AS t ON s.A = t.A",
}


def _cells() -> list[str]:
    cells = ["%load_ext streamsql", DDL]
    cells += [f"%%streamsql --name {n} -o {n}q --workbench\n{sql}" for n, sql in QUERIES.items()]
    cells += ["import time\ntime.sleep(1)",                     # run again, longer, to keep the kernel busy
              "import json\nprint(json.dumps([[r['step'], r['stream'], r['kind'], r['rowtime'], r['status'], "
              "r['values']] for r in fq.wb.event_trace]))"]
    return cells


@pytest.fixture(scope="module")
def lab(tmp_path_factory, engine):
    """JupyterLab whose kernels run their queries on the test session's shared engine."""
    from engine_support import env_for
    root = tmp_path_factory.mktemp("labwb")
    with jupyterlab(root, tmp_path_factory.mktemp("jupyterwb"), env=env_for(engine)) as lab:
        yield lab


def _cell(page, i):
    return page.locator(PANEL).locator(".jp-CodeCell").nth(i)


def _run_cell(page, i) -> None:
    """Run cell ``i`` (click into its editor, Ctrl+Enter) without waiting for it."""
    _cell(page, i).locator(".jp-InputArea-editor").click()
    page.keyboard.press("Control+Enter")


def _wait_idle(page, timeout_ms: int = 180_000) -> None:
    page.wait_for_timeout(300)
    page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=timeout_ms)


def _field(inj, name):
    return inj.locator(f'input[data-field="{name}"]')


def _log(page, cell: int) -> list:
    _run_cell(page, cell)
    _wait_idle(page)
    out = _cell(page, cell).locator(".jp-OutputArea-output").last.inner_text()
    return json.loads(out)


def _time_labels(chart) -> list[str]:
    """The rowtime axis's labels of a timeline (not its lanes' or its step strip's)."""
    texts = chart.evaluate("e => Array.from(e.querySelectorAll('svg .role-axis-label text')).map(t => t.textContent)")
    return [t for t in texts if re.fullmatch(r"\d\d:\d\d(:\d\d)?", t)]


def test_bursts_of_clicks_insert_exactly_the_typed_rows_while_the_kernel_is_busy(lab):
    """Ten rows typed and clicked 200 ms apart while a cell keeps the kernel busy, then ten more
    as fast with four live workbenches redrawing: the log holds exactly the typed rows, in click
    order, each once; while the kernel was busy the widget said the clicks were pending, and they
    were applied after the cell: the row the busy cell inserts as its last statement comes before
    every clicked row (JupyterLab may send a click on a kernel subshell, whose thread could run it
    beside the cell; the widgets hand every click to the kernel's main thread)."""
    from playwright.sync_api import sync_playwright

    name = "bursts.ipynb"
    cells = _cells()
    write_notebook(lab["root"] / name, cells)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            open_and_run_all(page, lab, name, len(cells))
            text = page.locator(PANEL).locator(".jp-Notebook").inner_text()
            assert "Traceback" not in text and "SQL error" not in text
            view = _cell(page, 2).locator(".streamsql-workbench").first
            inj = view.locator(".streamsql-inj").first
            typed = []

            def burst(first: int, busy: bool) -> None:
                if busy:                      # a cell that holds the kernel until the clicks are made
                    # (a fixed 8 s sleep ended before ten clicks on a loaded machine)
                    editor = _cell(page, 6).locator(".jp-InputArea-editor")
                    editor.click()
                    page.keyboard.press("Control+a")
                    page.keyboard.type("import pathlib, time\nwhile not pathlib.Path('clicked').exists(): time.sleep(0.1)\n"
                                        "fq.wb.insert('T', {'A': 0, 'W': 0}, rowtime='2006-10-10 13:00:00')")
                    page.keyboard.press("Control+Enter")
                    page.wait_for_timeout(300)
                for k in range(first, first + 10):
                    at, a, v = f"2006-10-10 14:{k:02d}:00", str(k % 3), str(111 * (k + 1))
                    _field(inj, "ROWTIME").fill(at)
                    _field(inj, "A").fill(a)
                    _field(inj, "V").fill(v)
                    inj.locator("button.streamsql-insert").click()
                    typed.append((at, int(a), int(v)))
                    page.wait_for_timeout(200)
                if busy:
                    pending = inj.locator(".streamsql-pending").inner_text()
                    assert re.search(r"\d+ pending \(the kernel is busy\)", pending), pending
                    shot(page, view, "workbench-pending-clicks.png")
                    (lab["root"] / "clicked").touch()         # the busy cell may end now

            burst(0, busy=True)
            _wait_idle(page)
            # the live chart: drawn once, then given new data in place (the same SVG element)
            chart = view.locator(".streamsql-vega").first
            status = view.locator(".streamsql-status").first
            deadline = time.time() + 60
            while "10 rows released" not in status.inner_text() and time.time() < deadline:
                page.wait_for_timeout(200)
            # the chart's shape (its spec) changes when a kind of mark first appears (released
            # rows come after the rows): tag it once its data has not changed for 4 s (1.5 s was
            # too short on a loaded machine: the redraw thread's next drawing, with the released
            # rows' first marks, came after the tag)
            seen, steady = None, 0
            while steady < 16 and time.time() < deadline:
                now = chart.get_attribute("data-points")
                steady = steady + 1 if now == seen and int(now or 0) >= 10 else 0
                seen = now
                page.wait_for_timeout(250)
            chart.evaluate("e => { e.querySelector('svg').streamsqlTag = 'the first drawing'; }")
            points = int(chart.get_attribute("data-points"))
            draws = int(chart.get_attribute("data-draws"))
            burst(10, busy=False)
            _wait_idle(page)
            deadline = time.time() + 60
            while inj.locator(".streamsql-pending").inner_text().strip() and time.time() < deadline:
                page.wait_for_timeout(200)
            assert inj.locator(".streamsql-pending").inner_text().strip() == ""
            assert "step 21: S row at 2006-10-10 14:19:00 inserted" in inj.locator(".streamsql-message").inner_text()

            log = _log(page, 7)
            rows = [(r[3], r[5]["A"], r[5]["V"]) for r in log if r[1] == "S" and r[2] == "row"]
            from streamsql.engine import time as T
            assert [(T.format_timestamp(t), a, v) for t, a, v in rows] == typed      # each once, in order
            assert [r[4] for r in log] == ["ok"] * 21 and [r[0] for r in log] == list(range(1, 22))
            assert [r[1] for r in log] == ["T"] + ["S"] * 20          # the busy cell's row first: the clicks waited

            # every view followed: the filter released all twenty rows, in its live table
            rows_table = view.locator(".streamsql-query .streamsql-rows").first
            deadline = time.time() + 60
            while "20 rows released" not in view.locator(".streamsql-status").first.inner_text() \
                    and time.time() < deadline:
                page.wait_for_timeout(250)
            assert "20 rows released" in view.locator(".streamsql-status").first.inner_text()
            assert rows_table.locator("tbody tr").last.locator("td").all_inner_texts() == [
                "21", "2006-10-10 14:19:00", "1", "2220"]
            deadline = time.time() + 30
            while int(chart.get_attribute("data-points")) <= points and time.time() < deadline:
                page.wait_for_timeout(200)
            assert int(chart.get_attribute("data-points")) > points
            # ten more events of the kinds drawn already: given in place, not drawn ten times over
            # (one new drawing is allowed: on a loaded machine the released rows' first marks, a
            # new kind, can come after the tag; seen twice in full-suite runs at a load of 18)
            redrawn = int(chart.get_attribute("data-draws")) - draws
            assert redrawn <= 1, f"{redrawn} new drawings for ten events"
            if redrawn == 0:
                assert chart.evaluate("e => e.querySelector('svg').streamsqlTag") == "the first drawing"

            # the user zooms in; a late row is a new kind of mark, so the chart gets a new spec
            # (a new SVG): the zoom along rowtime stays
            chart.scroll_into_view_if_needed()
            before = _time_labels(chart)
            box = chart.bounding_box()
            page.mouse.move(box["x"] + box["width"] * 0.4, box["y"] + 50)
            for _ in range(4):
                page.mouse.wheel(0, -200)
                page.wait_for_timeout(150)
            zoomed = _time_labels(chart)
            shot(page, view, "workbench-zoomed.png")
            assert zoomed != before, (before, zoomed)
            _field(inj, "ROWTIME").fill("2006-10-10 14:05:30")
            _field(inj, "A").fill("1")
            _field(inj, "V").fill("7")
            inj.locator("button.streamsql-insert").click()
            deadline = time.time() + 60
            while chart.evaluate("e => e.querySelector('svg').streamsqlTag") == "the first drawing" \
                    and time.time() < deadline:
                page.wait_for_timeout(200)
            assert chart.evaluate("e => e.querySelector('svg').streamsqlTag") is None, "no new spec"
            page.wait_for_timeout(500)
            assert _time_labels(chart) == zoomed

            # a chart scrolled out of sight draws its new data only when it comes back into sight
            _cell(page, len(cells) - 1).scroll_into_view_if_needed()
            page.wait_for_timeout(500)
            assert not chart.evaluate("e => { const r = e.getBoundingClientRect();"
                                      " return r.bottom > 0 && r.top < innerHeight; }")
            hidden = int(chart.get_attribute("data-points"))
            released = view.locator(".streamsql-status").first.inner_text()
            inj.evaluate("""e => {                       // typed and clicked without scrolling to it
                const set = (f, v) => { const i = e.querySelector(`input[data-field="${f}"]`);
                                        i.value = v; i.dispatchEvent(new Event("change")); };
                set("ROWTIME", "2006-10-10 14:30:00"); set("A", "1"); set("V", "8");
                e.querySelector("button.streamsql-insert").click(); }""")
            deadline = time.time() + 60
            while view.locator(".streamsql-status").first.inner_text() == released and time.time() < deadline:
                page.wait_for_timeout(200)
            assert view.locator(".streamsql-status").first.inner_text() != released
            page.wait_for_timeout(1500)                     # its data has reached the browser
            assert int(chart.get_attribute("data-points")) == hidden
            chart.scroll_into_view_if_needed()
            deadline = time.time() + 30
            while int(chart.get_attribute("data-points")) == hidden and time.time() < deadline:
                page.wait_for_timeout(100)
            assert int(chart.get_attribute("data-points")) > hidden
        finally:
            browser.close()
            end_sessions(lab)


SCREEN_CELLS = [
    "%load_ext streamsql",
    "%%streamsql\nCREATE STREAM Orders (productId INTEGER, units INTEGER);\n"
    "CREATE STREAM Shipments (productId INTEGER, qty INTEGER)",
    "%%streamsql --name hourly -o hourly --workbench\n"
    "SELECT STREAM FLOOR(Orders.ROWTIME TO HOUR) AS ROWTIME, productId, COUNT(*) AS c, SUM(units) AS units\n"
    "FROM Orders GROUP BY FLOOR(Orders.ROWTIME TO HOUR), productId",
    "%%streamsql --name shipped -o shipped --workbench\n"
    "SELECT STREAM ROWTIME, o.productId, o.units, s.qty\n"
    "FROM Orders AS o JOIN Shipments OVER (RANGE INTERVAL '30' MINUTE FOLLOWING) AS s ON o.productId = s.productId",
    "%%streamsql --name sliding -o sliding --workbench\n"
    "SELECT STREAM ROWTIME, productId, units,\n"
    "  SUM(units) OVER (PARTITION BY productId RANGE INTERVAL '1' HOUR PRECEDING) AS lastHour\nFROM Orders",
    # orders of three products through seven hours (the GROUP BY releases 20 rows: three an hour
    # for six hours, two in the seventh) and shipments
    "wb = hourly.wb\n"
    "for h in range(7):\n"
    "    for p in ((10, 20, 30) if h < 6 else (10, 20)):\n"
    "        wb.insert('Orders', {'productId': p, 'units': p // 10 + h}, rowtime=f'2006-10-10 {10 + h:02d}:{p // 2:02d}:00')\n"
    "    wb.insert('Shipments', {'productId': 10 + 10 * (h % 3), 'qty': h + 1}, rowtime=f'2006-10-10 {10 + h:02d}:20:00')\n"
    "wb.punctuate('Orders', '17:00')\n"
    "for q in (hourly, shipped, sliding):\n"
    "    q.wait()",
    "%streamsql native shipped",
]

THOUSAND = ("import datetime\n"
            "t0 = datetime.datetime(2006, 10, 10, 18, 0)\n"
            "for k in range(495):\n"
            "    t = t0 + datetime.timedelta(seconds=20 * k)\n"
            "    wb.insert('Orders', {'productId': 10 * (1 + k % 3), 'units': 1 + k % 7}, rowtime=t)\n"
            "    if k % 2 == 0:\n"
            "        wb.insert('Shipments', {'productId': 10 * (1 + k % 3), 'qty': 2}, rowtime=t)\n"
            "for q in (hourly, shipped, sliding):\n"
            "    q.wait()")

#: every element of an output that runs past the output's right edge, and every box that scrolls
#: sideways (what a student would have to scroll to read)
TOO_WIDE_JS = """area => {
  const right = area.getBoundingClientRect().right + 1, out = [];
  for (const e of area.querySelectorAll('*')) {
    const r = e.getBoundingClientRect();
    if (!r.width) continue;
    const cs = getComputedStyle(e);
    if (r.right > right) out.push(['past the edge', e.tagName, e.className.toString().slice(0, 50), Math.round(r.right - right)]);
    else if (['auto', 'scroll'].includes(cs.overflowX) && e.scrollWidth > e.clientWidth + 1)
      out.push(['scrolls sideways', e.tagName, e.className.toString().slice(0, 50), e.scrollWidth - e.clientWidth]);
  }
  return out.slice(0, 10);
}"""

#: the rows box of a workbench (the scrolling box around the released rows' table): scrolled to
#: its top, its middle and its end, where its header row is, against the box
HEADER_JS = """(view, where) => {
  const table = view.querySelector('table.streamsql-rows');
  let box = table.parentElement;
  while (box && !['auto', 'scroll'].includes(getComputedStyle(box).overflowY)) box = box.parentElement;
  const span = box.scrollHeight - box.clientHeight;
  box.scrollTop = -span * where;                 // a reversed column scrolls with negative tops
  const b = box.getBoundingClientRect(), h = table.querySelector('thead th').getBoundingClientRect();
  return {scrolls: span > 0, boxTop: b.top, boxBottom: b.bottom, top: h.top, bottom: h.bottom, text: table.querySelector('thead').innerText};
}"""


def _drawn(page, chart, least: int, timeout: float = 180, other_than: int | None = None) -> int:
    """Wait until the live chart holds at least ``least`` marks (and not ``other_than``, what it
    held before new events) and kept them for 2 s (the timeline redraws once its queries caught
    up); returns how many."""
    chart.wait_for(state="attached", timeout=60_000)
    deadline, seen, since = time.time() + timeout, None, time.time()
    while time.time() < deadline:
        now = int(chart.get_attribute("data-points") or 0)
        if now != seen:
            seen, since = now, time.time()
        elif now >= least and now != other_than and time.time() - since >= 2:
            return now
        page.wait_for_timeout(250)
    raise AssertionError(f"the chart holds {seen} marks, not the {least} or more expected")


def _file_browser(page, open_: bool) -> None:
    """Open or close JupyterLab's file browser (the left sidebar; open is its default)."""
    shown = page.locator(".jp-FileBrowser").first.is_visible()
    if shown != open_:
        page.locator(PANEL).locator(".jp-Notebook").click()
        page.keyboard.press("Escape")
        page.keyboard.press("Control+b")
        page.wait_for_timeout(1200)
    assert page.locator(".jp-FileBrowser").first.is_visible() == open_


def _shoot(page, locator, name: str) -> None:
    """The window, the view at its top (a screenshot of what a student sees)."""
    locator.evaluate("e => e.scrollIntoView({block: 'start'})")
    page.wait_for_timeout(600)
    page.screenshot(path=str(OUT / name))


def test_every_view_fits_1280_px_beside_the_file_browser(lab):
    """At 1280x800, with JupyterLab's file browser open (its default) and closed: a GROUP BY
    workbench with 20 released rows, a join's native twin, and after 1,000 more events the
    workbenches' timelines. No element runs past its output or scrolls sideways; the rows' header
    stays in sight wherever the rows box is scrolled; no two drawn step labels of a timeline
    overlap, nor a label and a mark. Screenshots (file browser open) go to test-output/: the docs
    show them (docs/_static/screens/)."""
    from playwright.sync_api import sync_playwright

    name = "screens.ipynb"
    write_notebook(lab["root"] / name, SCREEN_CELLS)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            open_and_run_all(page, lab, name, len(SCREEN_CELLS))
            page.wait_for_timeout(2500)
            text = page.locator(PANEL).locator(".jp-Notebook").inner_text()
            assert "Traceback" not in text and "error:" not in text, text[-2000:]
            views = {"groupby": 2, "join": 3, "over": 4}
            marks: dict[str, int] = {}
            for events in (20, 1000):
                if events == 1000:
                    page.locator(PANEL).locator(".jp-Notebook").click()
                    page.keyboard.press("Escape")
                    page.keyboard.press("b")                 # a new cell below the last
                    page.keyboard.press("Enter")
                    page.keyboard.insert_text(THOUSAND)
                    page.keyboard.press("Control+Enter")
                    _wait_idle(page, 600_000)
                    page.wait_for_timeout(3000)
                for browser_open in (False, True):          # open last: the screenshots' state
                    _file_browser(page, browser_open)
                    where = "beside the file browser" if browser_open else "without the file browser"
                    for label, i in views.items():
                        view = _cell(page, i).locator(".streamsql-workbench").first
                        view.scroll_into_view_if_needed()
                        chart = view.locator(".streamsql-vega[data-points]").first
                        # after the thousand events: the chart was redrawn with them (the records of the
                        # last 500 steps, older rows binned: not necessarily more marks than before)
                        marks[label] = _drawn(page, chart, 20, other_than=marks.get(label)) if browser_open is False \
                            else _drawn(page, chart, marks[label])
                        out = _cell(page, i).locator(".jp-OutputArea").first
                        assert out.evaluate(TOO_WIDE_JS) == [], (label, events, where)
                        box = view.bounding_box()
                        window = page.locator(f"{PANEL} .jp-WindowedPanel-outer").bounding_box()
                        assert box["height"] <= window["height"], (label, box, window)   # one screen
                        assert view.evaluate(LEGEND_JS) == [], (label, events, where)      # not cut
                        drawn, overlaps = _labels(view)
                        assert overlaps == [], (label, events, where, overlaps)
                        assert drawn or events == 1000, (label, events)     # twenty rows: labelled
                        if browser_open and (label, events) != ("over", 1000):
                            _shoot(page, view, f"workbench-{label}-{events}.png")
                    if events == 20:
                        native = _cell(page, 6).locator(".streamsql-native").first
                        assert _cell(page, 6).locator(".jp-OutputArea").first.evaluate(TOO_WIDE_JS) == [], where
                        steps = native.locator("table.streamsql-native-steps")
                        assert int(steps.get_attribute("data-rows")) == 28          # one row per event
                        # "n rows released at the same step, m at different steps...": m why-lines,
                        # each in a row under the step where its row first shows
                        title = native.locator(".streamsql-native-title").inner_text()
                        differ = int(re.search(r", (\d+) at different steps", title).group(1))
                        notes = steps.locator("tr.note")
                        assert (notes.count() > 0) == (differ > 0) and notes.count() <= differ, title
                        assert sum(t.count("Why ") for t in notes.all_inner_texts()) == differ
                        if browser_open:
                            _shoot(page, native, "native-join.png")
                        # the GROUP BY's 20 rows scroll in their box; the header stays in sight
                        view = _cell(page, 2).locator(".streamsql-workbench").first
                        assert "20 rows released" in view.locator(".streamsql-status").first.inner_text()
                        for at in (0.0, 0.5, 1.0):
                            h = view.evaluate(HEADER_JS, at)
                            assert h["scrolls"] and h["text"].split()[:2] == ["STEP", "ROWTIME"], h
                            assert h["boxTop"] - 1 <= h["top"] and h["bottom"] <= h["boxBottom"], (at, h)
            # the OVER workbench's scrubber: one step back it holds that step, at the end it follows
            view = _cell(page, 4).locator(".streamsql-workbench").first
            view.locator(".streamsql-workbench-tabs .lm-TabBar-tab", has_text="Back to step").click()
            scrubber = view.locator(".streamsql-scrubber").first
            where = scrubber.locator(".streamsql-scrub-where")
            page.wait_for_timeout(1000)
            last = re.fullmatch(r"step (\d+) of (\d+) · following", where.inner_text().strip())
            assert last and last.group(1) == last.group(2), where.inner_text()
            scrubber.locator("button.streamsql-prev").click()
            page.wait_for_timeout(1500)
            back = re.fullmatch(r"step (\d+) of (\d+) · held at step (\d+)", where.inner_text().strip())
            assert back and back.group(1) == back.group(3) and int(back.group(1)) < int(back.group(2)), where.inner_text()
            assert _cell(page, 4).locator(".jp-OutputArea").first.evaluate(TOO_WIDE_JS) == []
            _shoot(page, view, "workbench-over-1000.png")
            scrubber.locator("button.streamsql-next").click()
            page.wait_for_timeout(1500)
            assert where.inner_text().strip().endswith("· following")
        finally:
            browser.close()
            end_sessions(lab)


#: the legend labels of a view's charts that run past their chart's edge (the SVG cuts them)
LEGEND_JS = """e => [...e.querySelectorAll('.streamsql-vega svg')].flatMap(svg => {
    const edge = svg.getBoundingClientRect().right + 0.5;
    return [...svg.querySelectorAll('g.role-legend-label text')]
      .filter(t => t.getBoundingClientRect().right > edge).map(t => t.textContent); })"""
LABELS_JS = """e => [...e.querySelectorAll('.streamsql-vega g.mark-text.role-mark text')]
    .filter(t => (t.getAttribute('opacity') ?? t.style.opacity ?? '1') !== '0' && t.textContent.trim())
    .map(t => { const r = t.getBoundingClientRect();
                return [t.textContent, r.left, r.top, r.right, r.bottom]; })"""
#: the point marks of a timeline's rowtime chart: its layers 2 and on (Vega names a mark's SVG group
#: after it: main_layer_2_marks...), not the bars (layers 0 and 1), not the labels (text)
MARKS_JS = """e => [...e.querySelectorAll('.streamsql-vega g.mark-symbol.role-mark, .streamsql-vega g.mark-rect.role-mark')]
    .filter(g => { const m = /main_layer_(\\d+)_marks/.exec(g.getAttribute('class') || ''); return m && +m[1] >= COVERABLE; })
    .flatMap(g => [...g.querySelectorAll('path')])
    .map(p => { const r = p.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; })""".replace(
    "COVERABLE", str(COVERABLE_LAYERS))


def _labels(view) -> tuple[list, list]:
    """The step labels drawn on the live chart (as the browser laid them out), and the pairs of
    them that overlap, or a label and a point mark (1 px of anti-aliasing allowed)."""
    boxes = view.evaluate(LABELS_JS)
    marks = view.evaluate(MARKS_JS)
    out = []

    def meet(a, b, slack):
        return a[0] < b[2] - slack and b[0] < a[2] - slack and a[1] < b[3] - slack and b[1] < a[3] - slack
    for i, a in enumerate(boxes):
        for b in boxes[i + 1:]:
            if meet(a[1:], b[1:], 0.5):
                out.append((a[0], b[0]))
        for m in marks:
            if meet(a[1:], m, 1.0):
                out.append((a[0], "a mark"))
    return boxes, out


#: the seed's eight orders (notebook 10) into a hop of 7,007 s emitted hourly and sessions per
#: product: window views whose bands, open windows and tables must fit too
WINDOW_CELLS = [
    "%load_ext streamsql",
    "%%streamsql\nCREATE STREAM Orders (productId INTEGER, orderId INTEGER, units INTEGER)",
    "%%streamsql --name hops -o hops --workbench\n"
    "SELECT STREAM window_start, window_end, COUNT(*) AS c, SUM(units) AS units\n"
    "FROM TABLE(HOP(TABLE Orders, DESCRIPTOR(ROWTIME),\n"
    "               INTERVAL '1' HOUR, INTERVAL '7007' SECOND, INTERVAL '193' SECOND))\n"
    "GROUP BY window_start, window_end",
    "%%streamsql --name sessions -o sessions --workbench\n"
    "SELECT STREAM SESSION_START(ROWTIME, INTERVAL '30' MINUTE) AS sessionStart,\n"
    "  productId, COUNT(*) AS c, SUM(units) AS units\n"
    "FROM Orders\nGROUP BY SESSION(ROWTIME, INTERVAL '30' MINUTE), productId",
    "wb = hops.wb\n"
    "for t, p, o, u in [('10:17:00', 30, 5, 4), ('10:17:05', 10, 6, 1), ('10:18:05', 20, 7, 2),\n"
    "                   ('10:18:07', 30, 8, 20), ('11:02:00', 10, 9, 6), ('11:04:00', 10, 10, 1),\n"
    "                   ('11:09:30', 40, 11, 12), ('11:24:11', 10, 12, 4)]:\n"
    "    wb.insert('Orders', {'productId': p, 'orderId': o, 'units': u}, rowtime='2015-02-15 ' + t)\n"
    "for q in (hops, sessions):\n"
    "    q.wait()",
]


def test_window_workbenches_fit_1280_px_beside_the_file_browser(lab):
    """A hop's and a session's workbench after the seed's eight orders, at 1280x800 beside the
    file browser: nothing runs past its output, the legend is whole, no step label overlaps a
    label or a mark, and the open windows say what closes them. Screenshots for the docs."""
    from playwright.sync_api import sync_playwright

    name = "windows.ipynb"
    write_notebook(lab["root"] / name, WINDOW_CELLS)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            open_and_run_all(page, lab, name, len(WINDOW_CELLS))
            page.wait_for_timeout(2500)
            text = page.locator(PANEL).locator(".jp-Notebook").inner_text()
            assert "Traceback" not in text and "error:" not in text, text[-2000:]
            _file_browser(page, True)
            for label, i, released in (("hop", 2, "1 row released"), ("session", 3, "3 rows released")):
                view = _cell(page, i).locator(".streamsql-workbench").first
                view.scroll_into_view_if_needed()
                status = view.locator(".streamsql-status").first
                deadline = time.time() + 60
                while released not in status.inner_text() and time.time() < deadline:
                    page.wait_for_timeout(250)
                assert released in status.inner_text(), (label, status.inner_text())
                chart = view.locator(".streamsql-vega[data-points]").first
                _drawn(page, chart, 8)
                assert _cell(page, i).locator(".jp-OutputArea").first.evaluate(TOO_WIDE_JS) == [], label
                assert view.evaluate(LEGEND_JS) == [], label
                drawn, overlaps = _labels(view)
                assert drawn and overlaps == [], (label, overlaps)
                assert "when ORDERS reaches" in view.inner_text(), label     # what closes an open window
                _shoot(page, view, f"workbench-{label}-8.png")
        finally:
            browser.close()
