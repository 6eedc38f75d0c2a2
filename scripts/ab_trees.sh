#!/usr/bin/env bash
# Experiment trees for scripts/device/code_ab.sh, built here before the device call (they travel with
# the working tree): ab_base = HEAD's package, and per patch ab_<name> = HEAD's package with it applied.
#   bash scripts/ab_trees.sh results/2026-12-01/session12/next/cp_async_tile_producer.patch ...
# prints the TREES value for code_ab.sh. Remove the ab_* folders afterwards (they are not ignored).
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
trees="base:ab_base"
rm -rf ab_base && mkdir ab_base && git archive HEAD forge_mcore | tar -x -C ab_base
for patch in "$@"; do
  name=$(basename "$patch" .patch)
  rm -rf "ab_$name" && mkdir "ab_$name" && git archive HEAD forge_mcore | tar -x -C "ab_$name"
  (cd "ab_$name" && patch -p1 -s < "$OLDPWD/$patch")
  trees="$trees $name:ab_$name"
done
echo "TREES=\"$trees\""
