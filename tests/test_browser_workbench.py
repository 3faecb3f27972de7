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
    order, each once; while the kernel was busy the widget said the clicks were pending."""
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
                if busy:                      # a cell that holds the kernel for 8 s
                    editor = _cell(page, 6).locator(".jp-InputArea-editor")
                    editor.click()
                    page.keyboard.press("Control+a")
                    page.keyboard.type("import time\ntime.sleep(8)")
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

            burst(0, busy=True)
            _wait_idle(page)
            # the live chart: drawn once, then given new data in place (the same SVG element)
            chart = view.locator(".streamsql-vega").first
            status = view.locator(".streamsql-status").first
            deadline = time.time() + 60
            while "10 rows released" not in status.inner_text() and time.time() < deadline:
                page.wait_for_timeout(200)
            # the chart's shape (its spec) changes when a kind of mark first appears (released
            # rows come after the rows): tag it once its data no longer changes
            seen, steady = None, 0
            while steady < 6 and time.time() < deadline:
                now = chart.get_attribute("data-points")
                steady = steady + 1 if now == seen and int(now or 0) >= 10 else 0
                seen = now
                page.wait_for_timeout(250)
            chart.evaluate("e => { e.querySelector('svg').streamsqlTag = 'the first drawing'; }")
            points = int(chart.get_attribute("data-points"))
            burst(10, busy=False)
            _wait_idle(page)
            deadline = time.time() + 60
            while inj.locator(".streamsql-pending").inner_text().strip() and time.time() < deadline:
                page.wait_for_timeout(200)
            assert inj.locator(".streamsql-pending").inner_text().strip() == ""
            assert "step 20: S row at 2006-10-10 14:19:00 inserted" in inj.locator(".streamsql-message").inner_text()

            log = _log(page, 7)
            rows = [(r[3], r[5]["A"], r[5]["V"]) for r in log if r[1] == "S" and r[2] == "row"]
            from streamsql.engine import time as T
            assert [(T.format_timestamp(t), a, v) for t, a, v in rows] == typed      # each once, in order
            assert [r[4] for r in log] == ["ok"] * 20 and [r[0] for r in log] == list(range(1, 21))

            # every view followed: the filter released all twenty rows, in its live table
            rows_table = view.locator(".streamsql-query .streamsql-rows").first
            deadline = time.time() + 60
            while "20 rows released" not in view.locator(".streamsql-status").first.inner_text() \
                    and time.time() < deadline:
                page.wait_for_timeout(250)
            assert "20 rows released" in view.locator(".streamsql-status").first.inner_text()
            assert rows_table.locator("tbody tr").last.locator("td").all_inner_texts() == [
                "20", "2006-10-10 14:19:00", "1", "2220"]
            deadline = time.time() + 30
            while int(chart.get_attribute("data-points")) <= points and time.time() < deadline:
                page.wait_for_timeout(200)
            assert int(chart.get_attribute("data-points")) > points
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
    "FROM Orders AS o JOIN Shipments OVER (RANGE INTERVAL '30' MINUTE PRECEDING) AS s ON o.productId = s.productId",
    "%%streamsql --name sliding -o sliding --workbench\n"
    "SELECT STREAM ROWTIME, productId, units,\n"
    "  SUM(units) OVER (PARTITION BY productId RANGE INTERVAL '1' HOUR PRECEDING) AS lastHour\nFROM Orders",
    # ten events: orders and shipments through the morning
    "wb = hourly.wb\n"
    "for k, (t, p, u) in enumerate([('10:00', 10, 3), ('10:12', 20, 1), ('10:20', 10, 5), ('10:41', 20, 2),\n"
    "                                ('11:05', 10, 4), ('11:30', 30, 7)]):\n"
    "    wb.insert('Orders', {'productId': p, 'units': u}, rowtime=('2006-10-10 ' if k == 0 else '') + t)\n"
    "for t, p, q in [('10:05', 10, 3), ('10:50', 20, 3), ('11:20', 10, 4)]:\n"
    "    wb.insert('Shipments', {'productId': p, 'qty': q}, rowtime=t)\n"
    "wb.punctuate('Shipments', '11:40')\n"
    "for q in (hourly, shipped, sliding):\n"
    "    q.wait()",
]

THOUSAND = ("import datetime\n"
            "t0 = datetime.datetime(2006, 10, 10, 12, 0)\n"
            "for k in range(495):\n"
            "    t = t0 + datetime.timedelta(seconds=20 * k)\n"
            "    wb.insert('Orders', {'productId': 10 * (1 + k % 3), 'units': 1 + k % 7}, rowtime=t)\n"
            "    if k % 2 == 0:\n"
            "        wb.insert('Shipments', {'productId': 10 * (1 + k % 3), 'qty': 2}, rowtime=t)\n"
            "for q in (hourly, shipped, sliding):\n"
            "    q.wait()")


def test_each_workbench_fits_one_screen_with_10_and_1000_events(lab):
    """A GROUP BY, a join and an OVER workbench at 1280×800: the everyday loop (injector, rows,
    what is held or open and why) and the tabs fit the window, with 10 events and with 1,000 on
    the timeline, whose drawn step labels never overlap. Screenshots for the docs, checked by eye."""
    from playwright.sync_api import sync_playwright

    name = "screens.ipynb"
    write_notebook(lab["root"] / name, SCREEN_CELLS)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            # ten events first; then a new cell adds a thousand
            open_and_run_all(page, lab, name, len(SCREEN_CELLS))
            page.wait_for_timeout(1500)
            for events in (10, 1000):
                if events == 1000:
                    page.locator(PANEL).locator(".jp-Notebook").click()
                    page.keyboard.press("Escape")
                    page.keyboard.press("b")                 # a new cell below the last
                    page.keyboard.press("Enter")
                    page.keyboard.insert_text(THOUSAND)
                    page.keyboard.press("Control+Enter")
                    _wait_idle(page, 600_000)
                    page.wait_for_timeout(2500)
                for i, label in ((2, "groupby"), (3, "join"), (4, "over")):
                    view = _cell(page, i).locator(".streamsql-workbench").first
                    view.scroll_into_view_if_needed()
                    box = view.bounding_box()
                    window = page.locator(f"{PANEL} .jp-WindowedPanel-outer").bounding_box()
                    assert box["height"] <= window["height"], (label, box, window)   # one screen
                    view.locator(".streamsql-vega[data-points]").first.wait_for(state="attached", timeout=60_000)
                    page.wait_for_timeout(500)
                    drawn, overlaps = _labels(view)
                    assert overlaps == [], (label, events, overlaps)
                    assert drawn or events == 1000, (label, events)     # ten events: labelled
                    path = OUT / f"workbench-{label}-{events}.png"
                    _cell(page, i).locator(".streamsql-workbench").first.evaluate(
                        "e => e.scrollIntoView({block: 'start'})")
                    page.wait_for_timeout(400)
                    page.screenshot(path=str(path))
                    assert box["width"] <= 1280
        finally:
            browser.close()
            end_sessions(lab)


LABELS_JS = """e => [...e.querySelectorAll('.streamsql-vega g.mark-text.role-mark text')]
    .filter(t => (t.getAttribute('opacity') ?? t.style.opacity ?? '1') !== '0' && t.textContent.trim())
    .map(t => { const r = t.getBoundingClientRect();
                return [t.textContent, r.left, r.top, r.right, r.bottom]; })"""


def _labels(view) -> tuple[list, list]:
    """The step labels drawn on the live chart (as the browser laid them out), and the pairs of
    them that overlap."""
    boxes = view.evaluate(LABELS_JS)
    out = []
    for i, a in enumerate(boxes):
        for b in boxes[i + 1:]:
            if a[1] < b[3] - 0.5 and b[1] < a[3] - 0.5 and a[2] < b[4] - 0.5 and b[2] < a[4] - 0.5:
                out.append((a[0], b[0]))
    return boxes, out
