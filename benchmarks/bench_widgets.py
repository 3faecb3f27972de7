"""The workbench at the speed of a click, measured as a student meets it: JupyterLab and headless
Chromium on this machine (JupyterLab's default settings, ``--windowing`` to change how it draws
offscreen cells), a notebook with five live workbench views on the embedded local Spark
(a filter, a GROUP BY, an OVER, a join and a UNION ALL, all reading the stream clicked into).

(a) Click to row: type a row in the filter's injector, click Insert row, and time (in the
    browser) until the row is in the filter's live table; median and 95th percentile over
    ``--clicks`` clicks; and until the kernel answered the click (the event committed). A click
    runs the filter's query first and the other four after it (engine/runtime/spark/holds.py).
    Baseline, same run: the engine alone, a row inserted from the kernel to the moment Spark hands
    it to Python (``q.rows``), and to every query caught up, median over the same number of
    inserts: every query at once (a cell's insert), then the filter's first (as a click). The
    browser's share, per click: its renderer's main-thread time (Chrome's ``TaskDuration``) and
    the kernel's messages. The untimed warm-up clicks are followed by 3 s for the other views'
    batches to end.
(b) A cell run right after a click: how long after Ctrl+Enter the cell's code starts (the
    cell prints the kernel's clock; both clocks are this machine's).
(c) 100 clicks in a row (50 ms apart): from the last row visible in the live table to the
    kernel idle again.

``--plain`` measures the engine's part alone: the same queries in a plain process, no browser.

    .venv/bin/python benchmarks/bench_widgets.py [--clicks 30] [--burst 100] [--json docs/benchmarks/widgets-DATE.json]
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from labsupport import CHROMIUM, CHROMIUM_ARGS, PANEL, end_sessions, jupyterlab, open_and_run_all, write_notebook  # noqa: E402

#: the five views; with ``--isolated`` the four besides the filter read T instead of S, so that a
#: click into S runs one query (a lesson whose other views watch other streams)
QUERIES = {
    "f": "SELECT STREAM ROWTIME, A, V FROM S WHERE V > 0",
    "g": "SELECT STREAM FLOOR(S.ROWTIME TO HOUR) AS ROWTIME, A, COUNT(*) AS C, SUM(V) AS TOTAL\n"
         "FROM S GROUP BY FLOOR(S.ROWTIME TO HOUR), A",
    "o": "SELECT STREAM ROWTIME, A, V, SUM(V) OVER (PARTITION BY A RANGE INTERVAL '10' MINUTE PRECEDING) AS L10\n"
         "FROM S",
    "j": "SELECT STREAM ROWTIME, s.A, s.V, t.W\n"
         "FROM S AS s JOIN T OVER (RANGE INTERVAL '5' MINUTE PRECEDING) AS t ON s.A = t.A",
    "u": "SELECT STREAM ROWTIME, A, V FROM S UNION ALL SELECT STREAM ROWTIME, A, W FROM T",
}

ISOLATED = {
    "f": QUERIES["f"],
    "g": "SELECT STREAM FLOOR(T.ROWTIME TO HOUR) AS ROWTIME, A, COUNT(*) AS C, SUM(W) AS TOTAL\n"
         "FROM T GROUP BY FLOOR(T.ROWTIME TO HOUR), A",
    "o": "SELECT STREAM ROWTIME, A, W, SUM(W) OVER (PARTITION BY A RANGE INTERVAL '10' MINUTE PRECEDING) AS L10\n"
         "FROM T",
    "j": "SELECT STREAM ROWTIME, t.A, t.W, u.W AS W2\n"
         "FROM T AS t JOIN U OVER (RANGE INTERVAL '5' MINUTE PRECEDING) AS u ON t.A = u.A",
    "u": "SELECT STREAM ROWTIME, A, W FROM T UNION ALL SELECT STREAM ROWTIME, A, W FROM U",
}


#: the streams the queries read (S is the one clicked into)
DDL = "CREATE STREAM S (A INTEGER, V INTEGER);\nCREATE STREAM T (A INTEGER, W INTEGER);\nCREATE STREAM U (A INTEGER, W INTEGER)"


def cells(queries: dict) -> list[str]:
    return (["%load_ext streamsql", "%%streamsql\n" + DDL]
            + [f"%%streamsql --name {n} -o {n}q --workbench\n{sql}" for n, sql in queries.items()]
            + ["import time\nprint(repr(time.time()))",
            # the baseline: the engine alone, from the kernel
            "import time, statistics, json\n"
            "def engine_latency(n, first=None):\n"
            "    # per insert: to the filter's row in Python, and to every query caught up; first='f':\n"
            "    # inserted as the filter's injector does (its query first)\n"
            "    out, every = [], []\n"
            "    wb = fq.wb\n"
            "    for k in range(n):\n"
            "        before = len(fq.rows)\n"
            "        t = time.perf_counter()\n"
            "        with wb.commits.first(first):\n"
            "            wb.insert('S', {'A': 1, 'V': 1})         # at the stream's clock\n"
            "        while len(fq.rows) == before:\n"
            "            time.sleep(0.002)\n"
            "        out.append(time.perf_counter() - t)\n"
            "        while not all(wb.runtime.caught_up(q) for q in wb.queries.values()):\n"
            "            time.sleep(0.002)\n"
            "        every.append(time.perf_counter() - t)\n"
            "        time.sleep(0.3)\n"
            "    return out, every\n"
            "print('ready')"])

CLICK_JS = """async ([label]) => {
  const panel = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden)');
  const cell = panel.querySelectorAll('.jp-CodeCell')[2];
  const button = cell.querySelector('.streamsql-inj button.streamsql-insert');
  const pending = cell.querySelector('.streamsql-inj .streamsql-pending');
  const table = () => cell.querySelector('.streamsql-rows');
  const seen = () => (table()?.innerText || '').includes(label);
  const t0 = performance.now();
  button.click();
  let ack = null;
  while (!seen() || ack === null) {
    if (ack === null && !pending.textContent.trim()) ack = performance.now() - t0;
    if (seen() && ack === null) ack = performance.now() - t0;
    await new Promise(r => requestAnimationFrame(r));
  }
  return [performance.now() - t0, ack];
}"""


def _at(k: int) -> str:
    """The rowtime of the k-th click: a minute apart from 10:00 (its HH:MM:SS is unique)."""
    return f"2006-10-10 {10 + k // 60:02d}:{k % 60:02d}:00"


def _fill(page, at: str, a: int, v: int) -> None:
    inj = page.locator(PANEL).locator(".jp-CodeCell").nth(2).locator(".streamsql-inj").first
    inj.locator('input[data-field="ROWTIME"]').fill(at)
    inj.locator('input[data-field="A"]').fill(str(a))
    inj.locator('input[data-field="V"]').fill(str(v))


def _run_cell(page, i: int) -> None:
    page.locator(PANEL).locator(".jp-CodeCell").nth(i).locator(".jp-InputArea-editor").click()
    page.keyboard.press("Control+Enter")


def _ran(page, i: int, before: str, timeout: float = 600) -> None:
    """Wait until cell ``i`` has run again (its prompt shows a new count) and the kernel is idle."""
    prompt = page.locator(PANEL).locator(".jp-CodeCell").nth(i).locator(".jp-InputArea-prompt")
    deadline = time.time() + timeout
    while time.time() < deadline:
        now = prompt.inner_text().strip()
        if now != before and re.fullmatch(r"\[\d+\]:", now):
            break
        page.wait_for_timeout(50)
    _idle(page, timeout)


def _prompt(page, i: int) -> str:
    return page.locator(PANEL).locator(".jp-CodeCell").nth(i).locator(".jp-InputArea-prompt").inner_text().strip()


def _idle(page, timeout: float = 300) -> None:
    page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=timeout * 1000)


def _pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


def plain(inserts: int = 15) -> dict:
    """The same queries in this process, no browser, Spark in the process: insert into S until the
    filter's row is in (p50, ms), with one query or all five reading S, without and with the five
    workbench views following them (they redraw; nothing renders them)."""
    os.environ["STREAMSQL_ENGINE"] = "process"
    import streamsql
    from streamsql.widgets.hooks import REDRAWER
    out = {}
    # the first workbench warms Spark's JVM (its code is compiled as it runs): measured, not counted
    for label, queries, views in (("warm-up", QUERIES, False), ("one query", ISOLATED, False),
                                  ("all five queries", QUERIES, False),
                                  ("all five queries, five views", QUERIES, True)):
        wb = streamsql.Workbench(None)
        try:
            wb.execute(DDL)
            wb.insert("S", {"A": 0, "V": 0}, rowtime="2006-10-10 10:00:00")
            qs = [wb.query(sql, name=k) for k, sql in queries.items()]
            for q in qs:
                q.wait()
            shown = [streamsql.workbench(q) for q in qs] if views else []
            REDRAWER.idle(60)
            f, times = qs[0], []
            for k in range(inserts):
                n = f.row_count
                t = time.perf_counter()
                wb.insert("S", {"A": 1, "V": 1 + k})
                while f.row_count == n:
                    time.sleep(0.002)
                times.append(time.perf_counter() - t)
                time.sleep(0.4)
            if label == "warm-up":
                continue
            out[label] = statistics.median(times)
            print(f"  plain process, {label:30} insert to row p50 {out[label] * 1000:.0f} ms", flush=True)
            del shown
        finally:
            wb.close()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--clicks", type=int, default=30)
    ap.add_argument("--burst", type=int, default=100)
    ap.add_argument("--isolated", action="store_true",
                    help="the four other views read other streams (a click into S runs one query)")
    ap.add_argument("--plain", action="store_true",
                    help="only the engine's part: the same queries in this process, no browser (with and without views)")
    ap.add_argument("--windowing", default="contentVisibility",
                    help="JupyterLab's notebook windowing mode: its default (offscreen cells are not drawn), "
                         "or 'none' as the tests use (every cell drawn)")
    ap.add_argument("--warmup", type=int, default=3, help="untimed clicks before (a) (default 3)")
    ap.add_argument("--warmup-keys", action="store_true",
                    help="the untimed clicks insert each key A of the timed ones (by default only A=1: the "
                         "first timed rows of A=0 and A=2 are then the first of their key)")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    if args.plain:
        res = {"machine": {"cpus": os.cpu_count(), "load_before": os.getloadavg()}, "plain_s": plain()}
        if args.json:
            args.json.write_text(json.dumps(res, indent=1))
        return
    from playwright.sync_api import sync_playwright

    result: dict = {"machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                                "load_before": os.getloadavg()}, "views": len(QUERIES)}
    root = Path(tempfile.mkdtemp(prefix="bench-widgets-"))
    jdir = Path(tempfile.mkdtemp(prefix="bench-widgets-jupyter-"))
    CELLS = cells(ISOLATED if args.isolated else QUERIES)
    result["isolated"] = args.isolated
    write_notebook(root / "bench.ipynb", CELLS)
    result["windowing"] = args.windowing
    result["warmup"] = {"clicks": args.warmup, "keys": "A=0,1,2" if args.warmup_keys else "A=1"}
    with jupyterlab(root, jdir, windowing=args.windowing) as lab, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            frames: list[int] = []        # the sizes of the kernel's messages to the page
            page.on("websocket", lambda ws: ws.on("framereceived", lambda f: frames.append(len(f))))
            open_and_run_all(page, lab, "bench.ipynb", len(CELLS), timeout=900)
            page.wait_for_timeout(2000)
            # warm-up: the first rows through each query (first batches are slower)
            k = 0
            for _ in range(args.warmup):
                _fill(page, _at(k), k % 3 if args.warmup_keys else 1, 1000 + k)
                page.evaluate(CLICK_JS, [_at(k)[11:]])[0]
                k += 1
                page.wait_for_timeout(300)
            # the other views' batches of the untimed clicks end before the timed ones start
            page.wait_for_timeout(3000)

            # (a) click to row visible; and the browser's share: its renderer's main-thread time
            # (Chrome's TaskDuration) and the kernel's messages to the page, per click
            cdp = page.context.new_cdp_session(page)
            cdp.send("Performance.enable")

            def main_thread_s() -> float:
                return next(m["value"] for m in cdp.send("Performance.getMetrics")["metrics"]
                            if m["name"] == "TaskDuration")
            busy0, n0, t_a = main_thread_s(), len(frames), time.time()
            clicks, acks = [], []
            for _ in range(args.clicks):
                at = _at(k)
                _fill(page, at, k % 3, 1000 + k)
                row, ack = page.evaluate(CLICK_JS, [at[11:]])
                clicks.append(row / 1000)
                acks.append(ack / 1000)
                k += 1
                page.wait_for_timeout(400)                 # a student's pace: a click, a look
            got = frames[n0:]
            result["browser_per_click"] = {"main_thread_s": (main_thread_s() - busy0) / args.clicks,
                                           "wall_s": (time.time() - t_a) / args.clicks,
                                           "kernel_messages": len(got) / args.clicks,
                                           "kernel_kib": sum(got) / 1024 / args.clicks}
            result["click_to_row_s"] = {"p50": statistics.median(clicks), "p95": _pct(clicks, 95),
                                        "max": max(clicks), "n": len(clicks), "all": clicks}
            result["click_to_answer_s"] = {"p50": statistics.median(acks), "p95": _pct(acks, 95), "all": acks}

            # (b) a cell run right after a click starts within ...
            starts = []
            for _ in range(5):
                at = _at(k)
                _fill(page, at, 1, 1000 + k)
                k += 1
                page.locator(PANEL).locator(".jp-CodeCell").nth(2).locator("button.streamsql-insert").click()
                page.locator(PANEL).locator(".jp-CodeCell").nth(7).locator(".jp-InputArea-editor").click()
                before = _prompt(page, 7)
                sent = time.time()
                page.keyboard.press("Control+Enter")
                _ran(page, 7, before)
                out = page.locator(PANEL).locator(".jp-CodeCell").nth(7).locator(".jp-OutputArea-output").last
                starts.append(float(out.inner_text().strip()) - sent)
                page.wait_for_timeout(500)
            result["cell_start_after_click_s"] = {"p50": statistics.median(starts), "max": max(starts), "all": starts}

            # (c) 100 clicks in a row, then: last row visible -> kernel idle
            inj = page.locator(PANEL).locator(".jp-CodeCell").nth(2).locator(".streamsql-inj").first
            last = None
            t_first = time.time()
            for _ in range(args.burst):
                last = _at(k)
                _fill(page, last, 2, 1000 + k)
                inj.locator("button.streamsql-insert").click()
                k += 1
                page.wait_for_timeout(50)
            t_clicked = time.time()
            label = last[11:]
            page.wait_for_function(
                "([label]) => [...document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-CodeCell')][2]"
                ".querySelector('.streamsql-rows')?.innerText.includes(label)", arg=[label], timeout=300_000,
                polling="raf")
            t_row = time.time()
            _idle(page)
            t_idle = time.time()
            result["burst"] = {"clicks": args.burst, "clicking_s": t_clicked - t_first,
                               "last_row_after_last_click_s": t_row - t_clicked,
                               "idle_after_last_row_s": max(0.0, t_idle - t_row)}

            # the baseline: the engine alone (no browser, no widget), a row inserted from the kernel
            code = (f"res = [engine_latency({args.clicks}, first) for first in (None, 'f')]\n"
                    "print(json.dumps([[statistics.median(x), sorted(x)[int(0.95 * (len(x) - 1))]]\n"
                    "                  for r in res for x in r]))")
            editor = page.locator(PANEL).locator(".jp-CodeCell").nth(7).locator(".jp-InputArea-editor")
            editor.click()
            page.keyboard.press("Control+a")
            page.keyboard.insert_text(code)
            before = _prompt(page, 7)
            page.keyboard.press("Control+Enter")
            _ran(page, 7, before)
            out = page.locator(PANEL).locator(".jp-CodeCell").nth(7).locator(".jp-OutputArea-output").last
            (p50, p95), (e50, e95), (f50, f95), (fe50, fe95) = json.loads(out.inner_text().strip())
            result["engine_insert_to_row_s"] = {"p50": p50, "p95": p95}
            result["engine_insert_to_all_caught_up_s"] = {"p50": e50, "p95": e95}
            result["engine_clicked_first_s"] = {"row": {"p50": f50, "p95": f95},
                                                "all_caught_up": {"p50": fe50, "p95": fe95}}
            result["ratio_click_to_engine_p50"] = result["click_to_row_s"]["p50"] / p50
        finally:
            browser.close()
            end_sessions(lab)
    result["machine"]["load_after"] = os.getloadavg()

    c, e, b = result["click_to_row_s"], result["engine_insert_to_row_s"], result["burst"]
    readers = "one of them reads" if args.isolated else "all five read"
    print(f"five live workbench views on local Spark ({readers} the stream clicked into), {os.cpu_count()} cores, "
          f"load {result['machine']['load_before'][0]:.2f}, JupyterLab windowing {args.windowing}")
    a = result["click_to_answer_s"]
    print(f"(a) click to row visible: p50 {c['p50'] * 1000:.0f} ms, p95 {c['p95'] * 1000:.0f} ms "
          f"(target 300 / 600); engine alone p50 {e['p50'] * 1000:.0f} ms, p95 {e['p95'] * 1000:.0f} ms "
          f"(ratio {result['ratio_click_to_engine_p50']:.2f}x); the kernel's answer to the click "
          f"p50 {a['p50'] * 1000:.0f} ms")
    ea, cf = result["engine_insert_to_all_caught_up_s"], result["engine_clicked_first_s"]
    print(f"    the engine alone, every query at once: row p50 {e['p50'] * 1000:.0f} ms, all five caught up "
          f"p50 {ea['p50'] * 1000:.0f} ms (p95 {ea['p95'] * 1000:.0f}); the clicked view's query first: "
          f"row p50 {cf['row']['p50'] * 1000:.0f} ms (p95 {cf['row']['p95'] * 1000:.0f}), all five caught up "
          f"p50 {cf['all_caught_up']['p50'] * 1000:.0f} ms (p95 {cf['all_caught_up']['p95'] * 1000:.0f})")
    bp = result["browser_per_click"]
    print(f"    the browser, per click (a click every {bp['wall_s']:.2f} s): renderer main thread "
          f"{bp['main_thread_s'] * 1000:.0f} ms; {bp['kernel_messages']:.1f} kernel messages, {bp['kernel_kib']:.1f} KiB")
    s = result["cell_start_after_click_s"]
    print(f"(b) a cell run right after a click starts after {s['p50'] * 1000:.0f} ms (max {s['max'] * 1000:.0f}; "
          "target 100)")
    print(f"(c) {b['clicks']} clicks in {b['clicking_s']:.1f} s: last row {b['last_row_after_last_click_s']:.2f} s "
          f"after the last click, kernel idle {b['idle_after_last_row_s']:.2f} s after it (target 1)")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(result, indent=2) + "\n")
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
