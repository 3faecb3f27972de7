"""The tutorial notebooks under nbval, strict: every cell is rerun in a fresh kernel (Spark
included) and its outputs must equal the stored ones: step tables, released rows, clocks and
the timeline's chart data. Regenerate the stored outputs after an intended change with
``.venv/bin/python tests/test_notebooks.py --update`` and review the diff."""
from __future__ import annotations

import sys
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


#: The nbval runs start in the background as soon as the tests are collected, each on the test
#: session's shared engine, against a copy whose start-up line is the engine's (tests/nbval_pool.py);
#: each test waits for its own.
@pytest.mark.timeout(2400)
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_passes_nbval_strict(path, nbval_pool):
    r = nbval_pool.result(path)
    print(f"{path.name}: nbval ran {nbval_pool.seconds.get(path, 0):.0f} s")
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
