"""Replays scenarios through the command line (``streamsql replay --master URL ...``) in one
process, so that one Spark application on the cluster serves them all (an application takes
seconds to start and gets its executors). Prints one JSON object per scenario: its name, the
exit status and the lines the command printed.

    python tests/cluster_replays.py --master spark://127.0.0.1:7077 [--batch 1] [--buckets 4] BASE...

where each BASE is a scenario path without suffix (``BASE.sql``, ``BASE.events.jsonl``).
"""
from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys

from streamsql.engine.cli import main


def run(base: str, extra: list[str]) -> dict:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(["replay", f"{base}.sql", f"{base}.events.jsonl", "--bounds", *extra])
    return {"base": base, "rc": rc, "lines": out.getvalue().splitlines(), "stderr": err.getvalue()[-2000:]}


def cli(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--master", required=True)
    ap.add_argument("--batch", default="1")
    ap.add_argument("--buckets", default="4")
    ap.add_argument("bases", nargs="+")
    a = ap.parse_args(argv)
    for base in a.bases:
        res = run(base, ["--master", a.master, "--batch", a.batch, "--buckets", a.buckets])
        print(json.dumps(res), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(cli())
