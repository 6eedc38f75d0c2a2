# Sourced by session 47's calls 2, 4, 6, 8, 9 and 10 (their shared first lines, moved here after they ran): the
# environment; on an H200 h200_call1.sh runs instead of the rest of the call; on any other card its name, UUID
# and power limit go to $OUT/card.txt (call 2 wrote its name only) and the call goes on. ``ab`` runs one
# config_ab.py comparison (calls 8 and 10).
set -u
OUT=${OUT:-/tmp/out}
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 FORGE_AUTOTUNE=0
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  bash results/2026-12-06/session47/h200_call1.sh; exit
fi
nvidia-smi --query-gpu=name,uuid,power.limit --format=csv | tee "$OUT/card.txt"
ab() {  # NAME CELLS ARMS VARY: config_ab.py (REFERENCE=winner, five rounds) into $OUT/NAME, its summary printed
  mkdir -p "$OUT/$1"
  OUT=$OUT/$1 REFERENCE=winner ROUNDS=5 CELLS=$2 ARMS=$3 VARY=$4 timeout 200 python3 scripts/device/config_ab.py \
    > "$OUT/$1/ab.log" 2>&1
  echo "== $1 rc $?"; sed -n '/^summary:/,$p' "$OUT/$1/ab.log"
}
