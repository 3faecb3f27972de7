"""Disk full during an append (bad input loses nothing, docs/reliability.md): the append fails with one clear line, the
workbench is exactly as before it, a reader sees the last commit, and once space is back the
session goes on and a reopened workspace holds exactly what was committed (checked in
tests/disk_full_child.py, which runs in its own process). Two honest ways to run out of space:
a real tmpfs of a few MB in a private mount namespace (``unshare``; skipped, with the exact
error, where the machine does not allow it) and RLIMIT_FSIZE (works everywhere: an oversized
write fails with EFBIG, the same way a full disk fails a write part-way)."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from streamsql.engine.workbench import Workbench

CHILD = Path(__file__).resolve().parent / "disk_full_child.py"


def _check(summary: dict, copy: Path) -> None:
    assert summary["failed"] >= 3 and summary["ops"] - summary["failed"] >= 3, summary
    with Workbench(copy, engine="local") as wb:        # the parent reopens the copy too
        assert wb.open_warnings == [] and wb.last_step == summary["events"]
        assert len(wb.queries["rows"].rows) == summary["rows"]


def test_size_limit_during_appends(tmp_path):
    r = subprocess.run([sys.executable, str(CHILD), "rlimit", str(tmp_path / "ws"), str(tmp_path / "copy"), "1"],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    summary = json.loads(r.stdout.strip().splitlines()[-1])
    assert any(k.startswith(("inject", "load")) for k in summary["messages"])    # failed writing a segment
    assert any(k.startswith(("table", "pending")) for k in summary["messages"])  # failed writing catalog.json
    assert all(k.endswith("File too large") for k in summary["messages"]), summary["messages"]
    _check(summary, tmp_path / "copy")


def _unshare() -> list[str]:
    """How to run a command in a private mount namespace here, or skip with the exact reason."""
    if shutil.which("unshare") is None:
        pytest.skip("no unshare command: cannot mount a private tmpfs")
    for cmd in (["unshare", "-m"], ["unshare", "-rm"]):
        r = subprocess.run(cmd + ["sh", "-c", "d=$(mktemp -d) && mount -t tmpfs -o size=1m tmpfs $d && umount $d"],
                           capture_output=True, text=True, timeout=60)
        if r.returncode == 0:
            return cmd
    pytest.skip(f"cannot mount a tmpfs here ({' '.join(cmd)}: {r.stderr.strip()}); the RLIMIT_FSIZE test covers it")


def test_tmpfs_full_during_appends(tmp_path):
    cmd = _unshare()
    mnt = tmp_path / "small"
    mnt.mkdir()
    script = (f'mount -t tmpfs -o size=6m tmpfs "{mnt}" && '
              f'exec "{sys.executable}" "{CHILD}" tmpfs "{mnt / "ws"}" "{tmp_path / "copy"}" 2')
    r = subprocess.run(cmd + ["sh", "-c", script], capture_output=True, text=True, timeout=600,
                       env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))
    assert r.returncode == 0, r.stderr[-3000:]
    summary = json.loads(r.stdout.strip().splitlines()[-1])
    assert all(k.endswith("No space left on device") for k in summary["messages"]), summary["messages"]
    _check(summary, tmp_path / "copy")
