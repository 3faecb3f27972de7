"""Comparison of replay output with a scenario's expected lines, as ../shared/tools/scenario_check.py
does it: keys case-insensitive, numbers with a relative tolerance, timestamps as instants."""
from __future__ import annotations

import datetime as dt
import json
import math
from pathlib import Path


def _ts(v):
    if not isinstance(v, str):
        return None
    try:
        return dt.datetime.fromisoformat(v.strip().replace("T", " ").rstrip("Z"))
    except ValueError:
        return None


def same(a, b) -> bool:
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, bool) or isinstance(b, bool):
        return a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return math.isclose(float(a), float(b), rel_tol=1e-9, abs_tol=1e-12)
    ta, tb = _ts(a), _ts(b)
    if ta is not None and tb is not None:
        return ta == tb
    return a == b


def norm(line: dict) -> dict:
    return {k.lower(): ({kk.lower(): vv for kk, vv in v.items()} if isinstance(v, dict) else v)
            for k, v in line.items()}


def equal(got: dict, exp: dict, subset: bool = False) -> bool:
    if (not set(exp) <= set(got)) if subset else set(got) != set(exp):
        return False
    for k in exp:
        if isinstance(exp[k], dict) and isinstance(got[k], dict):
            if not equal(got[k], exp[k], subset=(k in ("late", "calc_error"))):
                return False
        elif not same(got[k], exp[k]):
            return False
    return True


def load(base: Path) -> tuple[str, Path, list[dict]]:
    sql = Path(str(base) + ".sql").read_text()
    expected = [json.loads(l) for l in Path(str(base) + ".expected.jsonl").read_text().splitlines() if l.strip()]
    return sql, Path(str(base) + ".events.jsonl"), expected


def mismatch(got: list[dict], expected: list[dict]) -> str | None:
    """None when they agree; otherwise a readable diff."""
    if not any("bound" in e for e in expected):
        got = [g for g in got if "bound" not in g]
    ok = len(got) == len(expected) and all(equal(norm(g), norm(e)) for g, e in zip(got, expected))
    if ok:
        return None
    lines = []
    for i in range(max(len(got), len(expected))):
        g = json.dumps(got[i]) if i < len(got) else "-"
        e = json.dumps(expected[i]) if i < len(expected) else "-"
        lines.append(f"expected {e}\n     got {g}")
    return "\n".join(lines)
