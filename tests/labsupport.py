"""A real JupyterLab and a real browser for the tests that look at what a user sees: JupyterLab
headless on a free 127.0.0.1 port with a token, Debian's Chromium driven by Playwright (never a
downloaded browser). Screenshots go to ``test-output/``."""
from __future__ import annotations

import contextlib
import json
import os
import secrets
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
OUT = ROOT / "test-output"
PANEL = ".jp-NotebookPanel:not(.lm-mod-hidden)"
PROMPTS_JS = """() => [...document.querySelectorAll(
                          '.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-CodeCell .jp-InputArea-prompt')]
                        .map(e => e.textContent.trim())"""


def have_chromium() -> bool:
    return os.access(CHROMIUM, os.X_OK)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _settings(d: Path, windowing: str = "none") -> None:
    """No news or update checks (they would reach the internet and pop up toasts); for tests every
    cell attached and drawn (``windowing`` "none") so that all prompts can be read; a benchmark
    passes JupyterLab's own default, "contentVisibility" (offscreen cells are not drawn)."""
    files = {
        "@jupyterlab/apputils-extension/notification.jupyterlab-settings":
            {"fetchNews": "false", "checkForUpdates": False, "doNotDisturbMode": True},
        "@jupyterlab/notebook-extension/tracker.jupyterlab-settings":
            {"windowingMode": windowing, "autoStartDefaultKernel": True},
    }
    for name, value in files.items():
        p = d / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(json.dumps(value))


@contextlib.contextmanager
def jupyterlab(root: Path, jdir: Path, env: dict | None = None, windowing: str = "none"):
    """A JupyterLab server on 127.0.0.1 serving ``root``; stopped (with its kernels) on exit."""
    _settings(jdir / "user-settings", windowing)
    port, token = free_port(), secrets.token_hex(16)
    env = dict(os.environ, JUPYTER_CONFIG_DIR=str(jdir / "config"), JUPYTER_RUNTIME_DIR=str(jdir / "runtime"),
               JUPYTERLAB_WORKSPACES_DIR=str(jdir / "workspaces"), **(env or {}))
    OUT.mkdir(exist_ok=True)
    log = open(OUT / f"jupyterlab-{root.name}.log", "wb")
    proc = subprocess.Popen(
        [sys.executable, "-m", "jupyterlab", "--no-browser", "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}",
         "--ServerApp.port_retries=0", f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={root}",
         f"--LabApp.user_settings_dir={jdir / 'user-settings'}", f"--LabApp.workspaces_dir={jdir / 'workspaces'}",
         "--LabApp.extension_manager=readonly", "--ServerApp.open_browser=False", "--ServerApp.terminals_enabled=False",
         "--allow-root"],
        cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.time() + 120
        while True:
            try:
                with urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=5) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if proc.poll() is not None or time.time() > deadline:
                raise RuntimeError(f"JupyterLab did not start; see {log.name}")
            time.sleep(0.5)
        yield {"base": base, "token": token, "root": root}
    finally:
        try:   # shuts the kernels (and their Spark) down too
            req = urllib.request.Request(f"{base}/api/shutdown?token={token}", method="POST")
            urllib.request.urlopen(req, timeout=30).close()
            proc.wait(60)
        except Exception:
            proc.terminate()
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
        log.close()


def write_notebook(path: Path, cells: list[str]) -> None:
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, path)


def end_sessions(lab) -> None:
    """Shut the notebooks' kernels (and their Spark) down, so the next test has the machine."""
    auth = {"Authorization": f"token {lab['token']}"}
    with urllib.request.urlopen(urllib.request.Request(f"{lab['base']}/api/sessions", headers=auth), timeout=30) as r:
        sessions = json.loads(r.read())
    for sess in sessions:
        req = urllib.request.Request(f"{lab['base']}/api/sessions/{sess['id']}", method="DELETE", headers=auth)
        urllib.request.urlopen(req, timeout=60).close()


def open_notebook(page, lab, name: str) -> None:
    page.goto(f"{lab['base']}/lab/tree/{name}?reset&token={lab['token']}")     # no tabs of earlier tests
    page.wait_for_selector(".jp-NotebookPanel .jp-Notebook", timeout=120_000)
    page.wait_for_timeout(2000)
    select = page.locator(".jp-Dialog button", has_text="Select")
    if select.count():          # the kernel chooser, in case the preference is not honoured
        select.first.click()
    page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=120_000)


#: the text of the notebook's error outputs (a cell's exception, a warning)
ERRORS_JS = """() => [...document.querySelectorAll(
    '.jp-NotebookPanel .jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]')]
    .map(e => e.innerText).join('\\n---\\n')"""


def run_all(page, n_code: int, timeout: float = 420, name: str = "notebook") -> None:
    """Run every cell and wait until all have run. A cell that raises stops Run All: the rest
    never runs and the kernel stays idle. Then this fails at once (prompts unchanged, kernel idle
    for 10 s: it is idle for a moment between two cells too) with the notebook's error output,
    instead of waiting out ``timeout`` with only the prompts to show."""
    import pytest

    def click_run_all():
        page.keyboard.press("Escape")
        page.locator(".lm-MenuBar-itemLabel", has_text="Run").first.click()
        page.locator(".lm-Menu-itemLabel", has_text="Run All Cells").first.click()
    click_run_all()
    deadline = time.time() + timeout
    again = time.time() + 30            # a busy machine can lose the click: one more, once
    prompts: list[str] = []
    last, still = [], time.time()
    while time.time() < deadline:
        prompts = page.evaluate(PROMPTS_JS)
        if again and time.time() > again:
            again = None
            if all(p in ("[ ]:", "[ ]") for p in prompts):
                click_run_all()
        done = [p for p in prompts if p.startswith("[") and p[1:-2].isdigit()]
        if len(prompts) == n_code and len(done) == n_code:
            break
        if done and kernel_idle(page) and prompts == last:
            if time.time() - still > 10:
                break
        else:
            last, still = prompts, time.time()
        page.wait_for_timeout(500)
    if not (len(prompts) == n_code and len(done) == n_code):
        page.screenshot(path=str(OUT / f"{Path(name).stem}-timeout.png"))
        pytest.fail(f"the notebook did not finish running: prompts {prompts}; its error output: "
                    f"{page.evaluate(ERRORS_JS)[-3000:]}")
    page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=120_000)


def open_and_run_all(page, lab, name: str, n_code: int, timeout: float = 420) -> None:
    """Open notebook ``name`` in JupyterLab, run every cell and wait until all have run."""
    open_notebook(page, lab, name)
    run_all(page, n_code, timeout, name)


def kernel_idle(page) -> bool:
    return page.locator(".jp-Notebook-ExecutionIndicator[data-status='idle']").count() > 0


def retry(page, action, tries: int = 20):
    """Run a Playwright action on an element that a widget may have redrawn a moment ago."""
    for i in range(tries):
        try:
            return action()
        except Exception as e:        # playwright's Error: "Element is not attached to the DOM"
            if "not attached" not in str(e) or i == tries - 1:
                raise
            page.wait_for_timeout(500)


def shot(page, locator, name: str) -> None:
    def shoot():
        locator.scroll_into_view_if_needed()
        page.wait_for_timeout(300)
        locator.screenshot(path=str(OUT / name))
    retry(page, shoot)
