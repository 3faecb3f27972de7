"""The tutorial notebooks under nbval, strict: every cell is rerun in a fresh kernel (Spark
included) and its outputs must equal the stored ones: step tables, released rows, clocks and
the timeline's chart data. Regenerate the stored outputs after an intended change with
``.venv/bin/python tests/test_notebooks.py --update`` and review the diff."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
QUICKSTART = ROOT / "notebooks" / "00_quickstart.ipynb"
VEGALITE = "application/vnd.vegalite.v5+json"


def _texts(nb) -> str:
    out = []
    for c in nb.cells:
        for o in c.get("outputs", []):
            out.append(o.get("text", "") or o.get("data", {}).get("text/plain", ""))
    return "\n".join(out)


def _table_rows(text: str) -> list[list[str]]:
    """Every ``a | b | c`` line of the outputs, as stripped cells."""
    return [[c.strip() for c in line.split("|")] for line in text.splitlines() if " | " in line]


def test_quickstart_stores_the_engine_results_nbval_compares():
    """Stored outputs are what nbval checks against: they must hold the real results (and no
    output hidden from the comparison)."""
    nb = nbformat.read(QUICKSTART, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(c.execution_count for c in code), "run the notebook before committing it (see the module doc)"
    assert not any("NBVAL_IGNORE_OUTPUT" in c.source or "NBVAL_SKIP" in c.source for c in code)
    text = _texts(nb)
    # the seed's UNION ALL table, step for step, and the join's releases
    rows = _table_rows(text)
    assert ["5", "", "01:10 bound", "01:06 p2"] in rows
    assert ["14", "", "10:11 bound", "10:03 2 YHOO 25 25"] in rows
    assert ["17", "10:01 3 IBM 5 (late: clock 10:10)", "", ""] in rows
    assert "starting Spark (local[*])…" in text
    assert "✓ matches union_merge.expected.jsonl up to step 5" in text
    charts = [o["data"][VEGALITE] for c in code for o in c.outputs if VEGALITE in o.get("data", {})]
    assert len(charts) >= 4
    whats = {r["what"] for ch in charts for r in ch["data"]["values"]}
    assert {"row", "bound", "eclipsed bound", "clock", "released row", "held row", "open window"} <= whats


def test_notebooks_read_only_files_shipped_in_the_package():
    """A tutorial copied out of the repository (or opened from an installed package) still runs:
    no cell names a path outside the package, and the helpers find the scenario files inside it."""
    import re
    import streamsql
    from streamsql import scenarios
    from streamsql._tutorial.basics import scenario_dir
    outside = re.compile(r"\.\./|\.\.\\|['\"]/(?:work|home|Users|tmp|var)/|tests/scenarios|shared/scenarios")
    for p in NOTEBOOKS:
        for i, c in enumerate(nbformat.read(p, as_version=4).cells):
            if c.cell_type == "code":
                assert not outside.search(c.source), f"{p.name} cell {i} reads outside the package: {c.source!r}"
    package = Path(streamsql.__file__).resolve().parent
    assert scenario_dir().resolve().is_relative_to(package)
    for name in ("union_merge", "group_by_hours", "filter_trains", "vwap_sliding", "join1_inner_following",
                 "join2_inner_preceding", "join3_full_outer"):
        for ext in (".sql", ".events.jsonl", ".expected.jsonl"):
            assert scenarios.path(name).with_name(name + ext).is_file(), name + ext
    # the files are package data: an installed wheel carries them
    import tomllib
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    assert set(data["streamsql.scenarios"]) == {"*.sql", "*.jsonl"}


WIDGET = "application/vnd.jupyter.widget-view+json"


def test_saved_notebooks_show_static_snapshots_without_a_kernel():
    """``jupyter nbconvert --to html`` of every stored tutorial (no kernel, no widget state):
    each live view's output comes with its static snapshot, and no "Error displaying widget"."""
    import re
    from nbconvert import HTMLExporter
    exporter = HTMLExporter()
    snapshot = re.compile(r'class="[^"]*\bstreamsql-static\b')
    for p in NOTEBOOKS:
        nb = nbformat.read(p, as_version=4)
        views = statics = 0
        for c in nb.cells:
            for o in c.get("outputs", []):
                data = o.get("data", {})
                views += WIDGET in data and not data.get("text/html")      # a live view needing a snapshot
                statics += bool(snapshot.search(data.get("text/html", "")))
        html, _res = exporter.from_notebook_node(nb)
        assert "Error displaying widget" not in html, p.name
        assert statics >= views, f"{p.name}: {views} live views but {statics} static snapshots"
        assert len(snapshot.findall(html)) >= views, p.name
        if any("Timeline" in c.source or "workbench(" in c.source for c in nb.cells if c.cell_type == "code"):
            assert "<svg" in html, f"{p.name}: no timeline drawn as SVG"


#: notebooks run this many at a time: they mostly wait (on Spark's micro-batches, the kernel), so two
#: at once on two cores take each about as long as one alone (measured: nine notebooks in 526 s of
#: wall time, 1031 s summed); the slowest start first
WORKERS = int(os.environ.get("STREAMSQL_NBVAL_WORKERS", "2"))
SLOW_FIRST = ("07_", "06_", "00_")

#: Every notebook's kernel runs its queries on the test session's shared engine (docs/engine.md):
#: a Connect session each, instead of a JVM and a Spark session each.
#: The one line a kernel prints differently on the shared engine: where its Spark is (the stored
#: outputs are the default's, Spark in the kernel). The expected outputs of a run on the engine are
#: the stored ones with this line, and only it, replaced by the line naming the engine's port, so
#: nbval still compares every output strictly, and a kernel that did not use the engine fails.
IN_PROCESS_LINE = "starting Spark (local[*])…\n"


def engine_line(port: int) -> str:
    return f"connecting to Spark (sc://localhost:{port})…\n"


def expected_on_engine(path: Path, port: int, dest: Path) -> Path:
    """A copy of notebook ``path`` in ``dest`` whose stored start-up line is the engine's."""
    nb = nbformat.read(path, as_version=4)
    n = 0
    for c in nb.cells:
        for o in c.get("outputs", []):
            if o.get("output_type") == "stream" and IN_PROCESS_LINE in o.text:
                o.text = o.text.replace(IN_PROCESS_LINE, engine_line(port))
                n += 1
    assert n <= 1, f"{path.name}: {n} start-up lines (Spark starts once per kernel)"
    dest.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, dest / path.name)
    return dest / path.name


def _nbval(path: Path, procs: list, env: dict) -> subprocess.CompletedProcess:
    # one notebook per run, each in its own kernel (nbval starts one per file), each bounded: a
    # notebook that hangs fails on its own cell within minutes, naming itself
    p = subprocess.Popen([sys.executable, "-m", "pytest", "--nbval", str(path), "-q", "-p", "no:cacheprovider",
                          "--nbval-cell-timeout", "600", "--rootdir", str(ROOT), "-c", str(ROOT / "pyproject.toml"),
                          "-o", "addopts="],
                         cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
                         env=env)
    procs.append(p)
    try:
        out, err = p.communicate(timeout=1200)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, err = p.communicate()
        err += "\n(killed after 1200 s)"
    return subprocess.CompletedProcess(p.args, p.returncode, out, err)


@pytest.fixture(scope="module")
def nbval_runs(request, tmp_path_factory):
    """The selected notebooks' nbval runs, started together (``WORKERS`` at a time) as soon as
    the first of their tests runs; each test then waits for its own. Each runs, on the shared
    engine, a copy whose expected start-up line names the engine (:func:`expected_on_engine`)."""
    wanted = [item.callspec.params["path"] for item in request.session.items
              if getattr(item, "originalname", "") == "test_notebook_passes_nbval_strict"]
    wanted.sort(key=lambda p: next((i for i, s in enumerate(SLOW_FIRST) if p.name.startswith(s)), len(SLOW_FIRST)))
    procs: list = []
    runs = {}
    if wanted:
        from engine_support import env_for
        engine = request.getfixturevalue("engine")
        copies = tmp_path_factory.mktemp("nbval-on-engine")
        pool = ThreadPoolExecutor(max(1, WORKERS), thread_name_prefix="nbval")
        for p in wanted:
            runs[p] = pool.submit(_nbval, expected_on_engine(p, engine.port, copies / p.stem), procs, env_for(engine))
    yield runs
    if wanted:
        pool.shutdown(wait=False, cancel_futures=True)
    for p in procs:            # only the runs this fixture started, each with its kernel (and Spark)
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()


@pytest.mark.timeout(2400)
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_passes_nbval_strict(path, nbval_runs):
    r = nbval_runs[path].result()
    assert r.returncode == 0, r.stdout[-6000:] + r.stderr[-3000:]
    assert " passed" in r.stdout and "failed" not in r.stdout.splitlines()[-1]


def update(paths=NOTEBOOKS) -> None:
    """Rerun each notebook in a fresh kernel and store its outputs (no timings, no widget state)."""
    from nbclient import NotebookClient
    for p in paths:
        p = Path(p).resolve()
        nb = nbformat.read(p, as_version=4)
        NotebookClient(nb, timeout=900, kernel_name="python3", record_timing=False, store_widget_state=False,
                       resources={"metadata": {"path": str(p.parent)}}).execute()
        nbformat.write(nb, p)
        print(f"updated {p.relative_to(ROOT)}")


if __name__ == "__main__":
    if sys.argv[1:2] != ["--update"]:
        sys.exit("usage: tests/test_notebooks.py --update [NOTEBOOK.ipynb ...]")
    update([Path(a) for a in sys.argv[2:]] or NOTEBOOKS)
