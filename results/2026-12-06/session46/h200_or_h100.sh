# Sourced by session 46's calls 2, 3 and 5: the environment; on an H200 session 45's call11 (the twins, then the
# grid) runs instead of the rest of the call; on any other card its name goes to $OUT/card.txt and the call goes on.
set -u
OUT=${OUT:-/tmp/out}
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 FORGE_AUTOTUNE=0
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  bash results/2026-12-06/session45/call11.sh; exit
fi
nvidia-smi --query-gpu=name --format=csv,noheader | tee "$OUT/card.txt"
