#!/usr/bin/env bash
# The stream-relation fuzzer (tests/fuzz_oracle.py): random (query, events) pairs; each checks that
# the rows a SELECT STREAM released equal the same query without STREAM over the accepted rows,
# on the local runtime and on Spark, and that Spark releases what the local runtime does.
#
#   ./scripts/fuzz.sh --relational N [--spark M] [--seed S] [--jobs J] [--random-config] ...
#
# N local pairs (default 1000), M Spark pairs (default 0); the seed is printed (a new one each
# run unless --seed); a pair that disagrees is saved as a scenario under test-output/fuzz/ and its
# path printed. --random-config draws each Spark round's micro-batch size and buckets (CI: all
# events in one batch, one bucket). Every option: ./scripts/fuzz.sh --help. Exit status 1 on a
# disagreement.
set -euo pipefail
cd "$(dirname "$0")/.."
args=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --relational) args+=(--count "$2"); shift 2 ;;
    *) args+=("$1"); shift ;;
  esac
done
exec nice -n 5 .venv/bin/python tests/fuzz_oracle.py "${args[@]}"
