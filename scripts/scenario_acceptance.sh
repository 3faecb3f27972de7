#!/usr/bin/env bash
# The scenario acceptance checks: replays the seeds' scenarios (streamsql/scenarios) and the
# calculator-error scenario (tests/scenarios) through `streamsql replay` and compares each output
# with its expected file (tests/scenario_compare.py), on both engines, default batching and one
# event per micro-batch, one and four key buckets. Needs the set-up done (scripts/setup.sh).
set -uo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/.venv/bin:$PATH"
S=streamsql/scenarios
CORE="$S/union_merge.sql $S/filter_trains.sql tests/scenarios/calculator_errors.sql"
STATEFUL="$S/group_by_hours.sql $S/vwap_sliding.sql $S/join1_inner_following.sql $S/join2_inner_preceding.sql $S/join3_full_outer.sql"
failed=0
check() {
  echo "--- scenario_compare.py $*"
  python tests/scenario_compare.py "$@" || failed=1
}
for engine in spark local; do
  check --engine "$engine" $CORE
  check --engine "$engine" --cmd "streamsql replay --batch 1" $CORE
  for buckets in 1 4; do
    check --engine "$engine" --cmd "streamsql replay --buckets $buckets" $STATEFUL
    check --engine "$engine" --cmd "streamsql replay --batch 1 --buckets $buckets" $STATEFUL
  done
done
[ "$failed" = 0 ] && echo "all scenario checks passed" || echo "some scenario checks FAILED"
exit "$failed"
