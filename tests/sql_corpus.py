"""The malformed-SQL corpus of tests/test_bad_sql.py (docs/reliability.md): every statement of the
scenario scripts (streamsql/scenarios, tests/scenarios) and of the notebooks' ``%%streamsql`` cells, truncated at
token boundaries and mutated (a token deleted, doubled, swapped with the next, replaced by or
preceded with a junk token). Deterministic (a fixed seed), so the counts in docs/reliability.md
are reproducible: ``python tests/sql_corpus.py`` prints them."""
from __future__ import annotations

import json
import random
import re
from pathlib import Path

from streamsql.engine.sql import split_script

ROOT = Path(__file__).resolve().parent.parent

#: what a careless edit or a bad paste puts into a statement
JUNK = ["(", ")", ",", ";", "'", '"', "''", "/*", "--", "*", "SELECT", "STREAM", "FROM", "WHERE", "GROUP BY",
        "OVER", "JOIN", "ON", "AS", "ROWTIME", "NULL", "1e999", "99999999999999999999999", "INTERVAL",
        "TIMESTAMP", "'2006-13-45 25:61:00'", "é", "\x00", "$", "?", ":x", "@", "[", "]", "{", "}", "`", "\\",
        "ORDER BY", "UNION ALL", "CAST(", "CASE", "END", ".", "..", "x.y.z", "FLOOR(", "TO", "HOUR",
        "PARTITION BY", "RANGE", "ROWS", "PRECEDING", "FOLLOWING", "-- c\n", "INTERVAL '-1' HOUR",
        "TIMESTAMP 'x'", "((((((((", "CURRENT_ROW", "STEP(", "LIMIT", "DISTINCT", "'it''s'", '"ROWTIME"',
        "0x1F", "-", "+", "/", "%", "||", "<>", "!=", "==", "IS", "NOT", "IN", "BETWEEN", "LIKE", "ALL"]

_TOKEN = re.compile(r"'(?:[^']|'')*'?|\"(?:[^\"]|\"\")*\"?|--[^\n]*|/\*.*?(?:\*/|$)|\w+|\S", re.S)


def scripts() -> list[tuple[str, list[str]]]:
    """(source name, its statements in order): the scenario files, then each notebook's
    ``%%streamsql`` cells as one script."""
    out = []
    for p in sorted([*(ROOT / "streamsql" / "scenarios").glob("*.sql"), *(ROOT / "tests" / "scenarios").glob("*.sql")]):
        out.append((str(p.relative_to(ROOT)), [s.sql for s in split_script(p.read_text())]))
    for nb in sorted((ROOT / "notebooks").glob("*.ipynb")):
        stmts = []
        for c in json.loads(nb.read_text())["cells"]:
            src = "".join(c["source"]) if c["cell_type"] == "code" else ""
            if src.startswith("%%streamsql") and "{{" not in src:
                stmts += [s.sql for s in split_script(src.split("\n", 1)[1] if "\n" in src else "")]
        if stmts:
            out.append((str(nb.relative_to(ROOT)), stmts))
    return out


def tokens(stmt: str) -> list[tuple[int, int]]:
    """(start, end) of each token of ``stmt`` (quoted strings and comments whole)."""
    return [m.span() for m in _TOKEN.finditer(stmt)]


def mutations(stmt: str, rng: random.Random, cuts: int = 8, each: int = 3) -> list[str]:
    """Truncations (at up to ``cuts`` token boundaries) and ``each`` mutations of every kind."""
    spans = tokens(stmt)
    if not spans:
        return []
    out = []
    starts = [a for a, _ in spans[1:]]
    for a in sorted(rng.sample(starts, min(cuts, len(starts)))):
        out.append(stmt[:a])
    for _ in range(each):
        a, b = spans[rng.randrange(len(spans))]
        out.append(stmt[:a] + stmt[b:])                                   # a token deleted
        a, b = spans[rng.randrange(len(spans))]
        out.append(stmt[:b] + " " + stmt[a:b] + stmt[b:])                 # a token doubled
        if len(spans) > 1:
            i = rng.randrange(len(spans) - 1)
            (a1, b1), (a2, b2) = spans[i], spans[i + 1]
            out.append(stmt[:a1] + stmt[a2:b2] + stmt[b1:a2] + stmt[a1:b1] + stmt[b2:])   # two swapped
        a, b = spans[rng.randrange(len(spans))]
        out.append(stmt[:a] + rng.choice(JUNK) + stmt[b:])                # a token replaced by junk
        a, _b = spans[rng.randrange(len(spans))]
        out.append(stmt[:a] + rng.choice(JUNK) + " " + stmt[a:])          # junk inserted
    return [m for m in dict.fromkeys(out) if m.strip() and m != stmt]


def corpus(seed: int = 13) -> list[tuple[str, int, str]]:
    """(source, statement index, mutated text) for every statement of every script."""
    rng = random.Random(seed)
    return [(name, i, m) for name, stmts in scripts() for i, s in enumerate(stmts) for m in mutations(s, rng)]


if __name__ == "__main__":
    c = corpus()
    srcs = scripts()
    print(f"{len(srcs)} scripts, {sum(len(s) for _, s in srcs)} statements, {len(c)} mutated statements")
