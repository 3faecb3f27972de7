"""Where the test suite's time goes: the machine's CPU (all cores, in core-seconds, from
``/proc/stat``) and the wall time of each test, as a pytest plugin; then a summary per module.

    PYTHONPATH=benchmarks .venv/bin/python -m pytest -p suite_cpu      # writes test-output/suite-cpu.tsv
    .venv/bin/python benchmarks/suite_cpu.py test-output/suite-cpu.tsv  # per module, dearest first

CPU is the machine's, not the test's: background work (the shared engine, kernels still ending)
is counted to the test that runs meanwhile. Linux only (``/proc/stat``)."""
from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

_TICK = os.sysconf("SC_CLK_TCK")
_out = None


def _busy() -> float:
    with open("/proc/stat") as f:
        v = list(map(int, f.readline().split()[1:]))
    return (sum(v) - v[3] - v[4]) / _TICK        # all but idle and iowait


def pytest_sessionstart(session):
    global _out
    path = Path(os.environ.get("SUITE_CPU_OUT", Path(str(session.config.rootpath)) / "test-output" / "suite-cpu.tsv"))
    path.parent.mkdir(parents=True, exist_ok=True)
    _out = open(path, "w", buffering=1)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    b0, t0 = _busy(), time.monotonic()
    yield
    _out.write(f"{item.nodeid}\t{time.monotonic() - t0:.2f}\t{_busy() - b0:.2f}\n")


def summary(path: str, top: int = 30) -> None:
    wall: dict[str, float] = {}
    cpu: dict[str, float] = {}
    for line in open(path):
        node, w, c = line.rstrip("\n").split("\t")
        mod = node.split("::")[0]
        wall[mod] = wall.get(mod, 0.0) + float(w)
        cpu[mod] = cpu.get(mod, 0.0) + float(c)
    tw, tc = sum(wall.values()), sum(cpu.values())
    cores = os.cpu_count() or 1
    print(f"{'wall s':>8} {'CPU s':>8} {'cores':>6}  module")
    for mod in sorted(cpu, key=cpu.get, reverse=True)[:top]:
        print(f"{wall[mod]:8.1f} {cpu[mod]:8.1f} {cpu[mod] / max(wall[mod], 1e-9):6.2f}  {mod}")
    print(f"{tw:8.1f} {tc:8.1f} {tc / max(tw, 1e-9):6.2f}  all ({cores} cores: the wall time cannot go below "
          f"{tc / cores:.0f} s with every core busy)")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    summary(sys.argv[1])
