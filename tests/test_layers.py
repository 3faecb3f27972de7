"""The import rules of the package (pyproject.toml, [tool.importlinter]): faces over the workbench
over the runtimes over operators/sql over plan/expr over time; only the Spark runtime imports
pyspark; no import cycles but the SQL recursion. Checked by import-linter itself, plus a text
scan for the imports a static import graph cannot see (``__import__("pyspark...")``)."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "streamsql"


def test_import_contracts_hold():
    lint = Path(sys.executable).parent / "lint-imports"
    r = subprocess.run([str(lint), "--no-cache"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
    assert "3 kept, 0 broken" in r.stdout


_SPARK_IMPORT = re.compile(r"^\s*(from|import)\s+pyspark\b|__import__\(\s*['\"]pyspark|import_module\(\s*['\"]pyspark",
                           re.MULTILINE)


def test_only_the_spark_runtime_mentions_pyspark_in_code():
    spark = PACKAGE / "engine" / "runtime" / "spark"
    offenders = [str(p.relative_to(ROOT)) for p in PACKAGE.rglob("*.py")
                 if spark not in p.parents and _SPARK_IMPORT.search(p.read_text())]
    assert offenders == []


def test_a_local_workbench_does_not_import_pyspark(tmp_path):
    """The local runtime, relational queries, foreign streams and sinks on it run without Spark."""
    code = f"""
import sys, pathlib
import streamsql
wb = streamsql.Workbench({str(tmp_path / 'ws')!r}, engine="local")
wb.execute("CREATE STREAM S (x INTEGER); CREATE TABLE T (x INTEGER); INSERT INTO T VALUES (1)")
assert wb.execute("SELECT * FROM T")[0].rows == [(1,)]
q = wb.query("SELECT STREAM x FROM S")
q.write_to({str(tmp_path / 'out')!r}, "csv")
wb.insert("S", {{"x": 2}}, rowtime="2006-10-10 10:00:00")
assert [r.values for r in q.rows] == [(2,)]
print(q.wb.runtime.explain(q))
wb.close()
assert not [m for m in sys.modules if m.split(".")[0] == "pyspark"], "pyspark was imported"
"""
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "runs on the local engine" in r.stdout


# --------------------------------------------------------------------------- the docs' diagram

def _design_layers() -> dict[str, str]:
    """The descriptions of the ``streamsql-layers`` block of docs/design.md."""
    sys.path.insert(0, str(ROOT / "docs" / "_ext"))
    from streamsql_docs import described_layers
    text = (ROOT / "docs" / "design.md").read_text()
    body = re.search(r"```\{streamsql-layers\}\n(.*?)```", text, re.S)
    assert body, "docs/design.md has no streamsql-layers block"
    return described_layers(body.group(1).splitlines())


def test_the_design_page_describes_every_layer_of_the_contract_and_no_other():
    sys.path.insert(0, str(ROOT / "docs" / "_ext"))
    from streamsql_docs import contract_layers
    layers, words = contract_layers(), _design_layers()
    assert [x for x in layers if not words.get(x)] == []
    assert [x for x in words if x not in layers] == []


def test_every_engine_module_is_in_a_layer():
    import tomllib
    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    layers = next(c for c in cfg if c["type"] == "layers")["layers"]
    names = [m.strip() for layer in layers for m in layer.split("|")]
    outside = []
    for p in sorted((PACKAGE / "engine").rglob("*.py")):
        if p.name == "__init__.py" and not p.read_text().strip():
            continue            # an empty package marker (runtime/): its modules are placed
        mod = ".".join(p.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
        if mod != "streamsql.engine" and not any(mod == n or mod.startswith(n + ".") for n in names):
            outside.append(mod)
    assert outside == []
