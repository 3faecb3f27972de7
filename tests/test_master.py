"""Where the Spark master comes from: ``Workbench(master=...)``, ``%config StreamSql.master``,
``--master`` on the command line, else ``STREAMSQL_MASTER`` in the environment, else local[*].
(That the Spark runtime really runs there is tests/test_cluster.py's job.)"""
from __future__ import annotations

import subprocess
import sys

from IPython import get_ipython
from IPython.testing.globalipapp import start_ipython
from IPython.utils.capture import capture_output

from streamsql import Workbench


def test_the_environment_gives_the_default_master(tmp_path, monkeypatch):
    monkeypatch.setenv("STREAMSQL_MASTER", "spark://example:7077")
    with Workbench(tmp_path / "a", engine="local") as wb:
        assert wb.master == "spark://example:7077"
    with Workbench(tmp_path / "b", engine="local", master="local[3]") as wb:
        assert wb.master == "local[3]"                        # an explicit master wins
    monkeypatch.delenv("STREAMSQL_MASTER")
    with Workbench(tmp_path / "c", engine="local") as wb:
        assert wb.master is None                              # local[*]


def test_config_master_reaches_the_kernels_workbench(monkeypatch):
    monkeypatch.delenv("STREAMSQL_MASTER", raising=False)
    ip = start_ipython() or get_ipython()      # started once per process (other test files too)
    ip.run_line_magic("load_ext", "streamsql")
    magic = ip.find_magic("streamsql").__self__
    try:
        ip.run_line_magic("config", "StreamSql.engine = 'local'")
        ip.run_line_magic("config", "StreamSql.master = 'spark://127.0.0.1:7077'")
        with capture_output():
            ip.run_line_magic("streamsql", "reset")
        assert magic.kernel.wb.master == "spark://127.0.0.1:7077"
        with capture_output() as c:
            magic.kernel.spark_starting()
        assert c.stdout == "starting Spark (spark://127.0.0.1:7077)…\n"
        monkeypatch.setenv("STREAMSQL_MASTER", "spark://from-env:7077")
        ip.run_line_magic("config", "StreamSql.master = None")
        with capture_output():
            ip.run_line_magic("streamsql", "reset")
        assert magic.kernel.wb.master == "spark://from-env:7077"
    finally:
        ip.run_line_magic("config", "StreamSql.master = None")
        with capture_output():
            ip.run_line_magic("streamsql", "reset")


def test_cli_options_for_a_cluster_are_checked():
    r = subprocess.run([sys.executable, "-m", "streamsql.engine.cli", "replay", "q.sql", "e.jsonl", "--conf", "novalue"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "--conf needs KEY=VALUE, not 'novalue'" in r.stderr
    r = subprocess.run([sys.executable, "-m", "streamsql.engine.cli", "demo", "--help"], capture_output=True, text=True,
                       timeout=60)
    assert "--master URL" in r.stdout and "STREAMSQL_MASTER" in r.stdout
