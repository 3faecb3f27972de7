"""The suite's watchdog (docs/design.md, "Threads and locks"): a test that hangs fails once its
time limit is reached and prints every thread's stack, so that a hang never passes silently nor
eats CI's time. Checked on a real deadlock, in a pytest of its own run with this project's
settings (pyproject.toml) and a short limit."""
from __future__ import annotations

import subprocess
import sys
import time

from conftest import ROOT

DEADLOCK = '''
import threading

def test_two_threads_take_two_locks_in_opposite_orders():
    a, b = threading.Lock(), threading.Lock()
    a_held, b_held = threading.Event(), threading.Event()

    def peer_takes_b_then_a():
        with b:
            b_held.set()
            a_held.wait()
            with a:
                pass
    threading.Thread(target=peer_takes_b_then_a, name="deadlocked-peer", daemon=True).start()
    with a:
        a_held.set()
        b_held.wait()
        with b:
            pass
'''


def test_a_hanging_test_fails_at_its_limit_with_every_threads_stack(tmp_path):
    (tmp_path / "test_hang.py").write_text(DEADLOCK)
    t0 = time.monotonic()
    p = subprocess.run([sys.executable, "-m", "pytest", "-c", str(ROOT / "pyproject.toml"),
                        "--rootdir", str(tmp_path), "-p", "no:cacheprovider", "-o", "timeout=3",
                        str(tmp_path / "test_hang.py")],
                       capture_output=True, text=True, timeout=120, cwd=tmp_path)
    took = time.monotonic() - t0
    out = p.stdout + p.stderr
    assert p.returncode == 1, out
    assert "1 failed" in out and "Timeout" in out, out
    assert "Stack of deadlocked-peer" in out, out                 # the other thread's stack ...
    assert "peer_takes_b_then_a" in out, out
    assert "test_two_threads_take_two_locks_in_opposite_orders" in out, out   # ... and the test's own
    assert took < 60, f"the hang cost {took:.0f} s"
