#!/usr/bin/env bash
# Session 27, call 4: call 3 again after its ring2 tests failed (per-consumer ready barriers,
# `_ring_ready`), every ring GPU test (two and three buffers) in 170 s. Its archive was named
# call4.tgz like the grid script's own, which it therefore excluded: the grid's rows were lost.
TESTS=ring TESTS_TIMEOUT=170 TAR=call4 bash "$(dirname "$0")/call3.sh"
