"""A lesson with four live views never hangs in JupyterLab (docs/design.md, "Threads and locks"):
Restart and Run All, then a burst of ten clicks, three times in a row. The notebook is the lesson
that once hung for good in about half of its runs: live workbenches on a UNION ALL, a window join
and an hourly GROUP BY (and a filter to click into), then one cell of INSERT statements."""
from __future__ import annotations

import re
import time

import pytest

from labsupport import (CHROMIUM, CHROMIUM_ARGS, ERRORS_JS, OUT, PANEL, end_sessions, have_chromium, jupyterlab,
                        open_notebook, run_all, write_notebook)

pytestmark = pytest.mark.skipif(not have_chromium(),
                                reason="Debian's chromium is not installed (scripts/setup.sh --test installs it)")

CELLS = [
    "%load_ext streamsql",
    "%%streamsql\nCREATE STREAM A (v INTEGER); CREATE STREAM B (v INTEGER);\n"
    "CREATE STREAM O (id INTEGER, t VARCHAR(5)); CREATE STREAM TR (id INTEGER, p INTEGER);\n"
    "CREATE STREAM H (k VARCHAR(5), n INTEGER); CREATE STREAM S (a INTEGER, v INTEGER)",
    "%%streamsql --name u --workbench\nSELECT STREAM ROWTIME, v FROM A UNION ALL SELECT STREAM ROWTIME, v FROM B",
    "%%streamsql --name j --workbench\nSELECT STREAM ROWTIME, o.id, t.p FROM O AS o\n"
    "JOIN TR OVER (RANGE INTERVAL '1' MINUTE PRECEDING) AS t ON o.id = t.id",
    "%%streamsql --name g --workbench\nSELECT STREAM FLOOR(ROWTIME TO HOUR) AS h, k, COUNT(*) AS c FROM H\n"
    "GROUP BY FLOOR(ROWTIME TO HOUR), k",
    "%%streamsql --name f -o fq --workbench\nSELECT STREAM ROWTIME, a, v FROM S WHERE v > 0",
    "%%streamsql\n" + ";\n".join(
        f"INSERT INTO {s} (ROWTIME, {c}) VALUES ('2006-10-10 10:0{i}:00', {v})"
        for i, (s, c, v) in enumerate([("A", "v", "1"), ("B", "v", "2"), ("TR", "id, p", "1, 10"),
                                       ("O", "id, t", "1, 'x'"), ("H", "k, n", "'k', 5")])),
]


@pytest.fixture(scope="module")
def lab(tmp_path_factory, engine):
    """JupyterLab whose kernels run their queries on the test session's shared engine."""
    from engine_support import env_for
    root = tmp_path_factory.mktemp("labstress")
    with jupyterlab(root, tmp_path_factory.mktemp("jupyterstress"), env=env_for(engine)) as lab:
        yield lab


def _restart_and_run_all(page) -> None:
    page.keyboard.press("Escape")
    page.locator(".lm-MenuBar-itemLabel", has_text="Kernel").first.click()
    page.locator(".lm-Menu-itemLabel", has_text="Restart Kernel and Run All Cells").first.click()
    page.locator(".jp-Dialog button", has_text="Restart").first.click()
    page.wait_for_timeout(2000)


@pytest.mark.timeout(900)
def test_a_lesson_with_four_live_views_runs_and_takes_clicks_three_times_in_a_row(lab):
    from playwright.sync_api import sync_playwright

    name = "stress.ipynb"
    write_notebook(lab["root"] / name, CELLS)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            open_notebook(page, lab, name)
            for run in range(3):
                t0 = time.monotonic()
                if run == 0:
                    run_all(page, len(CELLS), timeout=300, name=name)
                else:
                    _restart_and_run_all(page)
                    run_all_done(page, len(CELLS), run)
                errors = page.evaluate(ERRORS_JS)
                assert "Traceback" not in errors and "Error" not in errors, errors
                view = page.locator(PANEL).locator(".jp-CodeCell").nth(5).locator(".streamsql-workbench").first
                view.scroll_into_view_if_needed()
                page.screenshot(path=str(OUT / f"stress-run{run + 1}.png"))
                inj = view.locator(".streamsql-inj").first
                for k in range(10):             # a burst: no wait for the rows
                    inj.locator('input[data-field="ROWTIME"]').fill(f"2006-10-10 11:{k:02d}:00")
                    inj.locator('input[data-field="A"]').fill(str(k))
                    inj.locator('input[data-field="V"]').fill(str(k + 1))
                    inj.locator("button.streamsql-insert").click()
                    page.wait_for_timeout(100)
                status = view.locator(".streamsql-status").first
                deadline = time.time() + 120
                while "10 rows released" not in status.inner_text() and time.time() < deadline:
                    page.wait_for_timeout(250)
                assert "10 rows released" in status.inner_text(), f"run {run + 1}: {status.inner_text()}"
                assert page.locator(".jp-Notebook-ExecutionIndicator[data-status='idle']").count()
                print(f"run {run + 1}: {time.monotonic() - t0:.1f} s")
        finally:
            browser.close()
            end_sessions(lab)


def run_all_done(page, n_code: int, run: int, timeout: float = 300) -> None:
    """Until every cell shows the prompt of this run (a restarted kernel numbers from 1 again)."""
    deadline = time.time() + timeout
    prompts = []
    while time.time() < deadline:
        prompts = page.evaluate("""() => [...document.querySelectorAll('.jp-NotebookPanel .jp-InputArea-prompt')]
                                   .map(e => e.innerText.trim())""")
        nums = [int(m.group(1)) for p in prompts if (m := re.fullmatch(r"\[(\d+)\]:", p))]
        if len(nums) == n_code and sorted(nums) == list(range(1, n_code + 1)) and \
                page.locator(".jp-Notebook-ExecutionIndicator[data-status='idle']").count():
            return
        page.wait_for_timeout(500)
    pytest.fail(f"run {run + 1} did not finish (a hang?): prompts {prompts}; "
                f"errors: {page.evaluate(ERRORS_JS)[-2000:]}")
