"""Notebook 09 in a real JupyterLab and a real browser (as tests/test_browser_quickstart.py runs
the quickstart): every cell runs, the side-by-side view of the join shows its steps and its one
"why" line, and the timeline has the native twin's lane. Screenshots go to test-output/
(native-view.png, native-timeline.png), to be looked at."""
from __future__ import annotations

import nbformat
import pytest

from labsupport import CHROMIUM, CHROMIUM_ARGS, ROOT, retry as _retry, shot as _shot
from labsupport import end_sessions as _end_sessions, open_and_run_all
from test_browser_quickstart import pytestmark, serve_lab  # noqa: F401 (pytestmark: skip without chromium)

NOTEBOOK = ROOT / "notebooks" / "09_bounds_and_sparks_watermark.ipynb"


@pytest.fixture(scope="module")
def lab09(tmp_path_factory, engine):
    """JupyterLab with notebook 09, its kernel on the test session's shared engine (the
    quickstart's test keeps Spark in the kernel, as a new user's first notebook has it)."""
    from engine_support import env_for
    yield from serve_lab(tmp_path_factory, NOTEBOOK, env=env_for(engine))


@pytest.mark.timeout(1500)
def test_native_view_in_jupyterlab(lab09):
    from playwright.sync_api import sync_playwright
    n_code = sum(c.cell_type == "code" for c in nbformat.read(NOTEBOOK, as_version=4).cells)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            page = browser.new_page(viewport={"width": 1500, "height": 1400})
            open_and_run_all(page, lab09, NOTEBOOK.name, n_code, timeout=700)
            text = page.locator(".jp-Notebook").inner_text()
            assert "Traceback" not in text and "AssertionError" not in text
            outputs = "\n".join(page.locator(".jp-OutputArea-output").all_inner_texts())
            assert outputs.count("✓ both engines did what the rules say") == 2
            view = page.locator(".streamsql-native").first
            _retry(page, view.scroll_into_view_if_needed)
            steps = view.locator("table.streamsql-native-steps")
            assert steps.get_attribute("data-rows") == "9"
            why = view.locator("table.streamsql-native-steps tr.note").first.inner_text()
            assert "the bound of TRADES alone released it at step 6" in why
            _shot(page, view, "native-view.png")
            chart = page.locator(".streamsql-timeline .vega-embed").first
            chart.locator("canvas, svg").first.wait_for(state="visible", timeout=60_000)
            _shot(page, chart, "native-timeline.png")
        finally:
            browser.close()
            _end_sessions(lab09)
