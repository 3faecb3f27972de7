"""Every Python and ``%%streamsql`` code block of README.md runs, in order, in a real IPython
kernel (nbclient on a notebook built from the blocks, in an empty folder), and what the README's
comments say the first example gives is what it gives."""
from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from engine_support import env_for

ROOT = Path(__file__).resolve().parent.parent
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)


def readme_blocks() -> list[str]:
    """The code blocks a reader would run in Python or a notebook: ```python blocks, and
    ```sql blocks that are %%streamsql cells (shell blocks are set-up, not Python)."""
    out = []
    for lang, body in FENCE.findall((ROOT / "README.md").read_text()):
        if lang == "python" or (lang == "sql" and body.lstrip().startswith("%")):
            out.append(body.rstrip("\n"))
    return out


#: what the README's comments promise (``q.wait().rows  # [OutputRow(step=1, ...)]``)
CHECKS = """
from streamsql.engine.time import parse_timestamp
rows = q.wait().rows
assert [(r.step, r.rowtime, r.values) for r in rows] == [(1, parse_timestamp("2006-10-10 10:00:00"), ("ORCL", 60))]
assert repr(rows) == "[OutputRow(step=1, rowtime=1160474400000, values=('ORCL', 60))]", repr(rows)
assert big.name == "big" and big.running and big.columns == ["TICKER", "AMOUNT"]
print("README checks passed")
"""


def test_readme_blocks_run_in_order_in_a_kernel(tmp_path, engine):
    blocks = readme_blocks()
    assert len(blocks) >= 3 and any(b.startswith("%%streamsql") for b in blocks)
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(b) for b in blocks + [CHECKS]])
    NotebookClient(nb, timeout=600, kernel_name="python3", allow_errors=True, record_timing=False,
                   resources={"metadata": {"path": str(tmp_path)}}).execute(env=env_for(engine))   # on the shared engine
    for block, cell in zip(blocks + [CHECKS], nb.cells):
        errors = [o for o in cell.outputs if o.output_type == "error"]
        stderr = "".join(o.text for o in cell.outputs if o.output_type == "stream" and o.name == "stderr")
        assert not errors, f"README block failed:\n{block}\n{errors[0].ename}: {errors[0].evalue}"
        assert "error" not in stderr.lower() and "Traceback" not in stderr, f"{block}\n{stderr}"
    assert "README checks passed" in "".join(o.get("text", "") for o in nb.cells[-1].outputs)


def test_the_readme_is_a_landing_page():
    """What it is, the set-up, a short example and links: the manual is the site (docs/)."""
    text = (ROOT / "README.md").read_text()
    assert len(text.splitlines()) <= 130
    assert len(re.findall(r"\]\(docs/[\w/-]+\.md", text)) >= 10


@pytest.mark.parametrize("lang", ["bash"])
def test_shell_blocks_name_real_commands(lang):
    """The set-up commands name files that exist (they are not run here: CI runs them)."""
    for lang_, body in FENCE.findall((ROOT / "README.md").read_text()):
        if lang_ == lang:
            for path in re.findall(r"\./(scripts/[\w.]+)", body):
                assert (ROOT / path).exists(), path
