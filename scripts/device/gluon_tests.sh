#!/usr/bin/env bash
# GPU kernel tests under a timeout, so a hang shows as rc 124 instead of eating the device call; by
# default the Gluon kernel's (Gluon, main-loop, poisoned-tile, every-rule and every-codec; not the LM
# head's) on 8 workers. The log names every test's outcome (-v), so a run stopped by its limit can be
# resumed in the next call: DONE="LOG ..." deselects the tests those logs show PASSED.
#   device call, from the repository root or a tree with tests/ and pyproject.toml copied in:
#   TIMEOUT=300 bash scripts/device/gluon_tests.sh     (log: $OUT/$NAME.log; rc, last line, failures printed)
#   SELECT="not 151936" WORKERS=10 TIMEOUT=540 NAME=rest bash scripts/device/gluon_tests.sh      (the whole suite
#   outside the LM head), then in the next call the same with DONE=results/…/rest.log NAME=rest2
# env: SELECT (pytest -k expression), WORKERS, TIMEOUT (s), NAME (log name, default tests), DONE (earlier logs).
set -u
OUT=${OUT:-/tmp/out}
LOG=$OUT/${NAME:-tests}.log
deselect=()
for done_log in ${DONE:-}; do
  # xdist writes "[gw3] [ 12%] PASSED tests/…::id", a single process "tests/…::id PASSED [ 12%]"
  while IFS= read -r test_id; do deselect+=(--deselect "$test_id"); done \
    < <(grep -E '(^| )PASSED( |$)' "$done_log" | grep -oE 'tests/[^ ]+::[^ ]+')
done
[ -z "${DONE:-}" ] || echo "deselected as passed before: $(( ${#deselect[@]} / 2 ))"
timeout "${TIMEOUT:-300}" python3 -m pytest -v -m "gpu and not multigpu" tests/functional/test_kernel_gpu.py \
  -p no:cacheprovider -k "${SELECT:-(gluon or main_loop or poisoned or every_rule or every_codec) and not 151936}" \
  -n "${WORKERS:-8}" --dist loadgroup "${deselect[@]}" -rf --tb=line -W ignore > "$LOG" 2>&1
echo "tests rc $?"; tail -n 1 "$LOG"; grep -cE '(^| )PASSED( |$)' "$LOG" | sed 's/^/passed lines: /'
grep -E '(^| )(FAILED|ERROR)( |$)' "$LOG" | head -8
