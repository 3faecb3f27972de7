"""The quickstart in a real JupyterLab and a real browser: JupyterLab headless on a free local
port with a token, Debian's Chromium driven by Playwright (never a downloaded browser). It runs
every cell, clicks "Insert row" on the first injector, and checks that the query's table grows
and that the timeline chart is drawn. Screenshots go to test-output/."""
from __future__ import annotations

import re
import shutil
import time
from pathlib import Path

import nbformat
import pytest

from labsupport import (CHROMIUM, CHROMIUM_ARGS, OUT, PANEL, end_sessions, have_chromium, jupyterlab,
                        open_and_run_all, shot as _shot)

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK = ROOT / "notebooks" / "00_quickstart.ipynb"

pytestmark = pytest.mark.skipif(not have_chromium(),
                                reason="Debian's chromium is not installed (scripts/setup.sh --test installs it)")


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """A JupyterLab server on 127.0.0.1 serving a copy of the quickstart (outputs cleared)."""
    yield from serve_lab(tmp_path_factory, NOTEBOOK)


def serve_lab(tmp_path_factory, notebook: Path, env: dict | None = None):
    """A JupyterLab server on 127.0.0.1 serving a copy of ``notebook`` (outputs cleared); ``env``:
    its kernels' environment (tests/engine_support.py's ``env_for``: on the shared engine)."""
    root = tmp_path_factory.mktemp("lab")
    nb = nbformat.read(notebook, as_version=4)
    for c in nb.cells:
        if c.cell_type == "code":
            c.outputs, c.execution_count = [], None
    nbformat.write(nb, root / notebook.name)
    with jupyterlab(root, tmp_path_factory.mktemp("jupyter"), env=env) as lab:
        yield lab


_end_sessions, _open_and_run_all = end_sessions, open_and_run_all


def _rows(page) -> int:
    return int(page.locator(".streamsql-workbench .streamsql-query .streamsql-rows").first.get_attribute("data-rows"))


def test_quickstart_runs_in_jupyterlab_and_the_injector_inserts(lab):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1600})
            n_code = sum(c.cell_type == "code" for c in nbformat.read(NOTEBOOK, as_version=4).cells)
            open_and_run_all(page, lab, NOTEBOOK.name, n_code)

            text = page.locator(".jp-Notebook").inner_text()
            assert "Traceback" not in text
            assert "starting Spark" in text
            assert "SQL error: line 1:24: Column 'NME' not found" in text

            # the start-up line: Spark began at %load_ext (in the background, by default); the
            # live line gives each phase's time and counts the first result from the query
            startup = page.locator(".streamsql-startup").first
            line = startup.inner_text()
            assert re.search(r"Start-up: JVM \d+\.\d s · Spark session \d+\.\d s · plan \d+\.\d s · "
                             r"first batch \d+\.\d s — first result after \d+\.\d s "
                             r"\(.*Spark.* started ahead.* in the background\)", line), line
            _shot(page, startup, "quickstart-startup.png")

            # the composed workbench of `merged`: rows so far, then Insert row on P's injector
            rows = page.locator(".streamsql-workbench .streamsql-query .streamsql-rows").first
            rows.scroll_into_view_if_needed()
            before = _rows(page)
            assert before == 5, page.locator(".streamsql-workbench .streamsql-query").first.inner_text()
            injector = page.locator(".streamsql-workbench .streamsql-injector").first
            assert "P" in injector.locator(".streamsql-inj-title").first.inner_text()
            injector.locator("button", has_text="Insert row").click()
            deadline = time.time() + 120
            while _rows(page) == before and time.time() < deadline:
                page.wait_for_timeout(250)
            assert _rows(page) == before + 1
            table = page.locator(".streamsql-workbench .streamsql-query").first.inner_text()
            assert "2006-10-10 01:08:00" in table.splitlines()[-1] or "p3" in table
            assert "inserted" in injector.locator(".streamsql-message").inner_text()

            # the timeline chart is drawn by JupyterLab's Vega renderer, inside the live widget
            chart = page.locator(".streamsql-workbench .streamsql-timeline .vega-embed").first
            chart.wait_for(state="visible", timeout=60_000)
            drawn = chart.locator("canvas, svg").first
            drawn.wait_for(state="visible", timeout=60_000)
            box = drawn.bounding_box()
            assert box and box["width"] > 300 and box["height"] > 80

            _shot(page, chart, "quickstart-timeline.png")
            join_chart = page.locator(".streamsql-workbench").nth(1).locator(".streamsql-timeline .vega-embed")
            join_chart.locator("canvas, svg").first.wait_for(state="visible", timeout=60_000)
            _shot(page, join_chart, "quickstart-join-timeline.png")
            wb = page.locator(".streamsql-workbench").first
            wb.scroll_into_view_if_needed()
            page.screenshot(path=str(OUT / "quickstart.png"))
        finally:
            browser.close()
            _end_sessions(lab)
    shutil.rmtree(lab["root"] / ".ipynb_checkpoints", ignore_errors=True)


WORKBENCH_CELLS = [
    "%load_ext streamsql",
    "%%streamsql\nCREATE STREAM Orders (orderId INTEGER, ticker VARCHAR(10), price DOUBLE);\n"
    "INSERT INTO Orders (ROWTIME, orderId, ticker, price) VALUES (TIMESTAMP '2006-10-10 10:00:00', 1, 'ORCL', 1.5)",
    "%%streamsql --name orders -o orders --workbench\nSELECT STREAM ROWTIME, orderId, ticker, price FROM Orders",
    "%streamsql queries",
]


def test_workbench_refuses_bad_values_stamps_blank_rowtimes_reruns_and_stops(lab):
    """The injector in the browser: 3.7 in an INTEGER field and 1,5 in a DOUBLE field insert
    nothing and say why inline; a blank ROWTIME on a 2006 stream is stamped at its clock; rerunning
    the query cell leaves one query and no error; Stop stops it. Screenshots in test-output/."""
    from playwright.sync_api import sync_playwright

    name = "workbench_check.ipynb"
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in WORKBENCH_CELLS])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, lab["root"] / name)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1400})
            _open_and_run_all(page, lab, name, len(WORKBENCH_CELLS))
            panel = page.locator(PANEL)
            text = panel.locator(".jp-Notebook").inner_text()
            assert "Traceback" not in text and "SQL error" not in text
            view = panel.locator(".streamsql-workbench").first
            rows = view.locator(".streamsql-query .streamsql-rows").first
            assert rows.get_attribute("data-rows") == "0"
            # the static snapshot stays hidden while the live view is on the page
            assert panel.locator(".streamsql-static").count() >= 1
            assert not panel.locator(".streamsql-static").first.is_visible()

            injector = view.locator(".streamsql-injector").first
            field = lambda label: injector.locator(f'input[data-field="{label}"]').first
            assert field("ORDERID").get_attribute("placeholder") == "INTEGER"
            assert field("PRICE").get_attribute("placeholder") == "DOUBLE"
            assert field("ROWTIME").get_attribute("placeholder") == "2006-10-10 10:00:00 (the clock)"
            field("ORDERID").fill("3.7")
            field("TICKER").fill("IBM")
            field("PRICE").fill("1,5")
            injector.locator("button", has_text="Insert row").click()
            message = injector.locator(".streamsql-message")
            deadline = time.time() + 60
            while "error" not in message.inner_text() and time.time() < deadline:
                page.wait_for_timeout(200)
            said = message.inner_text()
            # the refused fields are outlined
            assert "streamsql-bad" in (field("ORDERID").get_attribute("class") or "")
            assert "streamsql-bad" in (field("PRICE").get_attribute("class") or "")
            assert "column ORDERID (INTEGER): '3.7' is not a whole number" in said, said
            assert "column PRICE (DOUBLE): '1,5' is not a number" in said, said
            assert rows.get_attribute("data-rows") == "0"                   # nothing went in
            assert "late 0" in injector.locator(".streamsql-inj-title").first.inner_text()
            _shot(page, view, "workbench-refused.png")

            # a blank ROWTIME on a stream whose clock is in 2006: the row is stamped at that clock
            field("ORDERID").fill("2")
            field("PRICE").fill("1.5")
            assert field("ROWTIME").input_value() == ""
            injector.locator("button", has_text="Insert row").click()
            deadline = time.time() + 120
            while rows.get_attribute("data-rows") != "1" and time.time() < deadline:
                page.wait_for_timeout(250)
            assert rows.get_attribute("data-rows") == "1"
            # step 2: the refused row took no step
            assert "step 2: ORDERS row at 2006-10-10 10:00:00 inserted" in message.inner_text()
            assert rows.locator("tbody tr").first.locator("td").all_inner_texts() == [
                "2", "2006-10-10 10:00:00", "2", "IBM", "1.5"]
            _shot(page, view, "workbench-inserted.png")

            # rerun the query cell: it replaces its query (one line says so), no error
            panel.locator(".jp-CodeCell").nth(2).locator(".jp-InputArea-editor").click()
            page.keyboard.press("Control+Enter")
            out = panel.locator(".jp-CodeCell").nth(2).locator(".jp-Cell-outputArea")
            out.get_by_text("Query orders replaced: the one running before was stopped").wait_for(timeout=120_000)
            page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=120_000)
            assert "SQL error" not in out.inner_text() and "already running" not in out.inner_text()
            panel.locator(".jp-CodeCell").nth(3).locator(".jp-InputArea-editor").click()
            page.keyboard.press("Control+Enter")
            page.wait_for_timeout(1000)
            page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=120_000)
            listing = panel.locator(".jp-CodeCell").nth(3).locator(".streamsql-queries")
            listing.wait_for(timeout=60_000)
            assert listing.locator("tbody tr").count() == 1                 # one query: the new one
            assert "running" in listing.inner_text()
            _shot(page, panel.locator(".jp-CodeCell").nth(2), "workbench-rerun.png")

            # Stop on the (new) live view
            view = panel.locator(".jp-CodeCell").nth(2).locator(".streamsql-workbench").first
            view.locator("button.streamsql-stop").click()
            status = view.locator(".streamsql-query .streamsql-status").first
            deadline = time.time() + 60
            while "(stopped)" not in status.inner_text() and time.time() < deadline:
                page.wait_for_timeout(250)
            assert "Query orders (stopped)" in status.inner_text()
            assert view.locator("button.streamsql-stop").is_disabled()
            _shot(page, view, "workbench-stopped.png")

            # the (hidden) snapshot beside the live view followed the click
            hidden = panel.locator(".jp-CodeCell").nth(2).locator(".streamsql-static").first
            deadline = time.time() + 60
            while "Query orders (stopped)" not in (hidden.text_content() or "") and time.time() < deadline:
                page.wait_for_timeout(250)
            assert "Query orders (stopped)" in hidden.text_content()

            # saved, then opened again with a new kernel (the widgets' models are gone): the
            # snapshots show the last state, and no "Error displaying widget" line
            page.keyboard.press("Control+s")
            page.wait_for_timeout(2000)
            _end_sessions(lab)
            page.goto(f"{lab['base']}/lab/tree/{name}?reset&token={lab['token']}")
            page.wait_for_selector(f"{PANEL} .jp-Notebook", timeout=120_000)
            static = page.locator(PANEL).locator(".jp-CodeCell").nth(2).locator(".streamsql-static").first
            static.wait_for(state="visible", timeout=120_000)
            page.wait_for_timeout(3000)               # the widget manager gives up on the old models
            assert "Query orders (stopped)" in static.inner_text()
            assert static.locator("svg").count() == 1
            errors = page.get_by_text("Error displaying widget")
            assert all(not errors.nth(i).is_visible() for i in range(errors.count()))
            _shot(page, page.locator(PANEL).locator(".jp-CodeCell").nth(2), "workbench-reopened.png")
        finally:
            browser.close()
            _end_sessions(lab)
    shutil.rmtree(lab["root"] / ".ipynb_checkpoints", ignore_errors=True)


OPEN_CELLS = [
    "%load_ext streamsql",
    "%%streamsql\nCREATE STREAM Orders (productId INTEGER, units INTEGER)",
    "%%streamsql --name totals --workbench\nSELECT STREAM FLOOR(Orders.ROWTIME TO HOUR) AS ROWTIME, productId,\n"
    "       COUNT(*) AS c, SUM(units) AS units\nFROM Orders GROUP BY FLOOR(Orders.ROWTIME TO HOUR), productId",
    "%%streamsql\nINSERT INTO Orders (ROWTIME, productId, units) VALUES\n"
    "  (TIMESTAMP '2006-10-10 10:00:00', 10, 3), (TIMESTAMP '2006-10-10 10:20:00', 10, 5)",
]


def test_group_by_workbench_shows_the_open_group_and_scrubs_back(lab):
    """What a query holds, in the browser: after two rows, nothing is released, and the GROUP BY's
    workbench shows the open group, its COUNT and SUM so far and the clock that closes it (from
    Spark's typed trace). The step scrubber: its handle dragged back to step 1 (the group then
    held one row), the arrow key forward, the button back; Stop stops the query. Screenshots in test-output/."""
    from playwright.sync_api import sync_playwright

    name = "open_group_check.ipynb"
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in OPEN_CELLS])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, lab["root"] / name)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1400})
            _open_and_run_all(page, lab, name, len(OPEN_CELLS))
            view = page.locator(PANEL).locator(".jp-CodeCell").nth(2).locator(".streamsql-workbench").first
            table = view.locator(".streamsql-query .streamsql-open").first
            table.wait_for(state="visible", timeout=120_000)
            deadline = time.time() + 120
            while "SUM(units) = 8" not in table.inner_text() and time.time() < deadline:
                page.wait_for_timeout(250)
            cells = table.locator("tbody tr").first.locator("td").all_inner_texts()
            assert cells == ["aggregate", "group 2006-10-10 10:00:00, 10", "COUNT(*) = 2, SUM(units) = 8",
                             "when ORDERS reaches 2006-10-10 11:00:00"], cells
            assert table.locator("tbody tr").count() == 1
            assert "Open after step 2" in view.locator(".streamsql-open-title").first.inner_text()
            assert view.locator(".streamsql-query .streamsql-rows").first.get_attribute("data-rows") == "0"
            _shot(page, view, "workbench-open-group.png")

            # back to step 1 with the scrubber (the button, then the arrow keys),
            # in the workbench's "Back to step" tab
            view.locator(".streamsql-workbench-tabs .lm-TabBar-tab", has_text="Back to step").click()
            scrub = view.locator(".streamsql-scrubber").first
            scrub.wait_for(state="visible", timeout=30_000)
            panel = scrub.locator(".streamsql-scrub-status").first
            assert panel.inner_text().startswith("After step 2: ORDERS 10:20 10 5")
            # drag the slider's handle to the left end of its track
            handle = scrub.locator(".noUi-handle").first
            track = scrub.locator(".noUi-target").first
            hb, tb = handle.bounding_box(), track.bounding_box()
            page.mouse.move(hb["x"] + hb["width"] / 2, hb["y"] + hb["height"] / 2)
            page.mouse.down()
            page.mouse.move(tb["x"] - 20, hb["y"] + hb["height"] / 2, steps=12)
            page.mouse.up()
            deadline = time.time() + 30
            while "After step 1" not in panel.inner_text() and time.time() < deadline:
                page.wait_for_timeout(200)
            said = scrub.inner_text()
            assert "After step 1: ORDERS 10:00 10 3" in said and "Clocks: ORDERS 2006-10-10 10:00:00" in said, said
            assert "COUNT(*) = 1, SUM(units) = 3" in said and "0 rows released up to here" in said, said
            _shot(page, scrub, "workbench-scrubbed-to-step-1.png")
            scrub.locator(".noUi-handle").first.focus()
            page.keyboard.press("ArrowRight")
            deadline = time.time() + 30
            while "After step 2" not in panel.inner_text() and time.time() < deadline:
                page.wait_for_timeout(200)
            assert "COUNT(*) = 2, SUM(units) = 8" in scrub.inner_text()
            scrub.locator("button.streamsql-prev").click()
            deadline = time.time() + 30
            while "After step 1" not in panel.inner_text() and time.time() < deadline:
                page.wait_for_timeout(200)
            assert "After step 1" in panel.inner_text()
            # the query went on as it was; Stop stops it
            view.locator("button.streamsql-stop").first.click()
            status = view.locator(".streamsql-query .streamsql-status").first
            deadline = time.time() + 60
            while "(stopped)" not in status.inner_text() and time.time() < deadline:
                page.wait_for_timeout(250)
            assert "Query totals (stopped): 0 rows released" in status.inner_text()
        finally:
            browser.close()
