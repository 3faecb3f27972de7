"""Replay output against a scenario's expected lines, by the replay format's comparison
(:func:`streamsql.engine.steps.lines_agree`: keys case-insensitive, numbers with a relative
tolerance, timestamps as instants). The tests import it; run as a script it replays scenarios
through a command line and compares (``scripts/scenario_acceptance.sh``):

    python tests/scenario_compare.py [--cmd "streamsql replay"] [--engine spark|local] PATH...

PATH is a ``NAME.sql`` file or a folder of them. Expected files with bound lines are replayed with
``--bounds``. The last line printed is ``N passed, M failed``; the status is 1 when any differs."""
from __future__ import annotations

import argparse
import json
import shlex
import subprocess
import sys
from pathlib import Path

from streamsql.engine.steps import lines_agree


def load(base: Path) -> tuple[str, Path, list[dict]]:
    sql = Path(str(base) + ".sql").read_text()
    expected = [json.loads(l) for l in Path(str(base) + ".expected.jsonl").read_text().splitlines() if l.strip()]
    return sql, Path(str(base) + ".events.jsonl"), expected


def mismatch(got: list[dict], expected: list[dict]) -> str | None:
    """None when they agree (the engine's own rule: ``streamsql.engine.steps.lines_agree``);
    otherwise a readable diff."""
    if lines_agree(got, expected):
        return None
    if not any("bound" in e for e in expected):
        got = [g for g in got if "bound" not in g]
    lines = []
    for i in range(max(len(got), len(expected))):
        g = json.dumps(got[i]) if i < len(got) else "-"
        e = json.dumps(expected[i]) if i < len(expected) else "-"
        lines.append(f"expected {e}\n     got {g}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cmd", default="streamsql replay")
    ap.add_argument("--engine")
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("paths", nargs="+", type=Path)
    a = ap.parse_args(argv)
    files = [f for p in a.paths for f in (sorted(p.glob("*.sql")) if p.is_dir() else [p])]
    passed = failed = 0
    for sql in files:
        base = sql.with_suffix("")
        _sql, events, expected = load(base)
        cmd = shlex.split(a.cmd) + [str(sql), str(events)]
        cmd += ["--bounds"] if any("bound" in e for e in expected) else []
        cmd += ["--engine", a.engine] if a.engine else []
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=a.timeout)
        except subprocess.TimeoutExpired:
            print(f"FAIL {base.name}: no answer in {a.timeout:.0f} s")
            failed += 1
            continue
        try:
            got = [json.loads(x) for x in r.stdout.splitlines() if x.strip().startswith("{")]
        except ValueError as e:
            got, diff = [], f"a line that is no JSON: {e}"
        else:
            diff = mismatch(got, expected) if r.returncode == 0 else f"exit {r.returncode}: {r.stderr.strip()[-500:]}"
        if diff is None:
            passed += 1
            print(f"ok   {base.name}")
        else:
            failed += 1
            print(f"FAIL {base.name}\n{diff}")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
