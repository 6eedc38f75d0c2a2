#!/usr/bin/env bash
# An experiment tree's checks before its A/B (scripts/device/code_ab.sh): the Gluon GPU tests in TREE
# (a package tree with tests/ and pyproject.toml copied in; a hang shows as rc 124), then the bits of
# two AdamW steps (bf16 and int8 states) from TREE against BASE's (scripts/device/step_bits.py).
#   device call, from the repository root:
#   TREE=ab_rules BASE=ab_base OUT=$OUT bash scripts/device/check_tree.sh    (TREE=. : this checkout)
# Writes $OUT/tests/tests.log and $OUT/bits.log; prints their last lines.
set -u
OUT=${OUT:-/tmp/out}
TREE=${TREE:?name the tree to check}
BASE=${BASE:-ab_base}
mkdir -p "$OUT/tests"
(cd "$TREE" && PYTHONPATH=$PWD OUT=$OUT/tests TIMEOUT=${TEST_TIMEOUT:-200} bash "$OLDPWD/scripts/device/gluon_tests.sh")
steps=scripts/device/step_bits.py
timeout 120 python3 $steps save "$BASE" /tmp/bits_base.pt > "$OUT/bits.log" 2>&1
timeout 120 python3 $steps save "$TREE" /tmp/bits_tree.pt >> "$OUT/bits.log" 2>&1
timeout 60 python3 $steps compare /tmp/bits_base.pt /tmp/bits_tree.pt >> "$OUT/bits.log" 2>&1
echo "bits rc $?"; tail -n 4 "$OUT/bits.log" | cut -c1-100
