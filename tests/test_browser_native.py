"""Notebook 09 in a real JupyterLab and a real browser (as tests/test_browser_quickstart.py runs
the quickstart): every cell runs, the side-by-side view of the join shows its steps and its one
"why" line, and the timeline has the native twin's lane. Screenshots go to test-output/
(native-view.png, native-timeline.png), to be looked at."""
from __future__ import annotations

import nbformat
import pytest

import time

from labsupport import CHROMIUM, CHROMIUM_ARGS, OUT, PROMPTS_JS, ROOT, retry as _retry, shot as _shot
from labsupport import end_sessions as _end_sessions, kernel_idle, open_notebook
from test_browser_quickstart import pytestmark, serve_lab  # noqa: F401 (pytestmark: skip without chromium)

NOTEBOOK = ROOT / "notebooks" / "09_bounds_and_sparks_watermark.ipynb"


@pytest.fixture(scope="module")
def lab09(tmp_path_factory, engine):
    """JupyterLab with notebook 09, its kernel on the test session's shared engine (the
    quickstart's test keeps Spark in the kernel, as a new user's first notebook has it)."""
    from engine_support import env_for
    yield from serve_lab(tmp_path_factory, NOTEBOOK, env=env_for(engine))


#: the text of the notebook's error outputs (a cell's exception)
ERRORS_JS = """() => [...document.querySelectorAll(
    '.jp-NotebookPanel .jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]')]
    .map(e => e.innerText).join('\\n---\\n')"""


def _run_all(page, lab, n_code: int, timeout: float) -> None:
    """Open the notebook, Run > Run All Cells, and wait until every cell has run. On a busy
    machine the menu click is sometimes lost (no cell starts): then it is clicked again."""
    open_notebook(page, lab, NOTEBOOK.name)
    deadline = time.time() + timeout
    prompts: list[str] = []
    clicked = 0.0
    last, still, done = [], time.time(), []
    while time.time() < deadline:
        prompts = page.evaluate(PROMPTS_JS)
        if all(p == "[ ]:" for p in prompts) and time.time() - clicked > 60:
            page.keyboard.press("Escape")
            page.locator(".lm-MenuBar-itemLabel", has_text="Run").first.click()
            page.locator(".lm-Menu-itemLabel", has_text="Run All Cells").first.click()
            clicked = time.time()
        done = [p for p in prompts if p.startswith("[") and p[1:-2].isdigit()]
        if len(prompts) == n_code and len(done) == n_code:
            break
        # a cell failed: Run All stops there and the rest never runs (the kernel stays idle; it
        # is idle for a moment between two cells too, hence the 10 s)
        if done and kernel_idle(page) and prompts == last:
            if time.time() - still > 10:
                break
        else:
            last, still = prompts, time.time()
        page.wait_for_timeout(1000)
    if not (len(prompts) == n_code and len(done) == n_code):
        page.screenshot(path=str(OUT / "native-timeout.png"))
        pytest.fail(f"the notebook did not finish running: prompts {prompts}; its error output: "
                    f"{page.evaluate(ERRORS_JS)[-3000:]}")
    page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=120_000)


@pytest.mark.timeout(1500)
def test_native_view_in_jupyterlab(lab09):
    from playwright.sync_api import sync_playwright
    n_code = sum(c.cell_type == "code" for c in nbformat.read(NOTEBOOK, as_version=4).cells)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            page = browser.new_page(viewport={"width": 1500, "height": 1400})
            _run_all(page, lab09, n_code, timeout=700)
            text = page.locator(".jp-Notebook").inner_text()
            assert "Traceback" not in text and "AssertionError" not in text
            outputs = "\n".join(page.locator(".jp-OutputArea-output").all_inner_texts())
            assert outputs.count("✓ both engines did what the rules say") == 2
            view = page.locator(".streamsql-native").first
            _retry(page, view.scroll_into_view_if_needed)
            steps = view.locator("table.streamsql-native-steps")
            assert steps.get_attribute("data-rows") == "9"
            why = view.locator(".streamsql-native-why").inner_text()
            assert "the bound of TRADES alone released it at step 6" in why
            _shot(page, view, "native-view.png")
            chart = page.locator(".streamsql-timeline .vega-embed").first
            chart.locator("canvas, svg").first.wait_for(state="visible", timeout=60_000)
            _shot(page, chart, "native-timeline.png")
        finally:
            browser.close()
            _end_sessions(lab09)
