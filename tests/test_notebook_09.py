"""Notebook 09's stored outputs (nbval reruns it strictly in tests/test_notebooks.py): it was run,
nothing is hidden from the comparison, its hand-worked expectations were asserted, and it shows
the native twin beside the engine (docs/native.md): both sides per step, Spark's watermark and
late drops, the why lines, the twin's timeline lane, and the one-line error for a query Spark
cannot express."""
from __future__ import annotations

from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
NB09 = ROOT / "notebooks" / "09_bounds_and_sparks_watermark.ipynb"
VEGALITE = "application/vnd.vegalite.v5+json"


def _code():
    return [c for c in nbformat.read(NB09, as_version=4).cells if c.cell_type == "code"]


def _text(cell) -> str:
    return "".join(o.get("text", "") or o.get("data", {}).get("text/plain", "") for o in cell.get("outputs", []))


def test_notebook_09_was_run_with_nothing_hidden():
    code = _code()
    assert all(c.execution_count for c in code), "run the notebook before committing it"
    assert not [o for c in code for o in c.outputs if o.output_type == "error"]
    assert not any("NBVAL_IGNORE_OUTPUT" in c.source or "NBVAL_SKIP" in c.source for c in code)


def test_notebook_09_checks_its_hand_worked_expectations():
    checks = [c for c in _code() if c.source.lstrip().startswith(("from streamsql.engine.time", "twin =", "c =", "ibm ="))
              and "assert" in c.source]
    assert len(checks) == 4
    assert all(_text(c).startswith(("✓", "the bound of TRADES")) for c in checks)


def test_notebook_09_shows_both_sides_and_why():
    text = "\n".join(_text(c) for c in _code())
    assert "Spark emitted (batch)" in text and "Spark watermark after" in text
    assert ("the bound of TRADES alone released it at step 7; Spark waits until the minimum of both inputs' "
            "maximum event times passes 10:10, at step 10 (watermark 10:11)") in text
    assert "ORDERS 10:02 1 ORCL 70 (late: to ERRORS)" in text and "the row, as late" in text
    assert "watermark delay 30 minutes" in text
    assert "error: no native Spark twin: an OVER window (Spark streaming has no sliding windows over rows)" in text
    charts = [o["data"][VEGALITE] for c in _code() for o in c.outputs if VEGALITE in o.get("data", {})]
    whats = {r["what"] for ch in charts for r in ch["data"]["values"]}
    assert {"spark watermark", "spark row", "spark dropped row"} <= whats
