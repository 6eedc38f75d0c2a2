#!/usr/bin/env bash
# Session 16, device call 4: the int8 half loop rotating its halves instead of selecting (this tree,
# uncommitted at the time; ab_base = HEAD, the call-3 commit), and int8 states on tall tiles with it
# (ab_tall: this tree with gluon_wgrad.applies allowing int8 on gluon_tall, its tests' expectation
# changed to match). Gluon GPU tests in ab_tall, bits HEAD vs this tree, A/B, sweep ws vs tall in ab_tall.
set -u
OUT=${OUT:-/tmp/out}
export PYTHONUNBUFFERED=1 FORGE_AUTOTUNE=0
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $OUT/gpu.txt
mkdir -p $OUT/tests
(cd ab_tall && PYTHONPATH=$PWD OUT=$OUT/tests TIMEOUT=${TEST_TIMEOUT:-200} bash ../scripts/device/gluon_tests.sh)
export PYTHONPATH=$PWD
timeout 120 python3 scripts/device/step_bits.py save ab_base /tmp/b.pt > $OUT/bits.log 2>&1
timeout 120 python3 scripts/device/step_bits.py save . /tmp/n.pt >> $OUT/bits.log 2>&1
timeout 60 python3 scripts/device/step_bits.py compare /tmp/b.pt /tmp/n.pt >> $OUT/bits.log 2>&1
echo "bits rc $?"; tail -n 4 $OUT/bits.log | cut -c1-80
RUN_TIMEOUT=60 ARGS="--shapes 4096x4096,12288x4096,4096x12288,1024x4096 --bts 512,1024 --arms adamw-int8 --reps 30" \
  bash scripts/device/code_ab.sh > $OUT/ab.txt 2>&1
grep -v "/" $OUT/ab.txt
(cd ab_tall && PYTHONPATH=$PWD timeout ${SWEEP_TIMEOUT:-150} python3 -m forge_mcore.bench.kernel --out $OUT/sw \
  --shapes 4096x4096,12288x4096,4096x12288,1024x4096 --bts 512,1024 --arms adamw-int8 \
  --sweep --sweep-configs all --sweep-kernels gluon_ws,gluon_tall --reps 30 > $OUT/sw.log 2>&1)
echo "sweep rc $?"
python3 - <<'PY'
import ast, collections, csv, os
by = collections.defaultdict(list)
for r in csv.DictReader(open(os.environ.get("OUT", "/tmp/out") + "/sw/sweep.csv")):
    c = ast.literal_eval(r["config"])
    by[(r["shape"], r["bt"])].append((float(r["forge_ms"]), f"{c['kernel']} s{c['num_stages']}"))
for k, v in sorted(by.items()):
    print(*k, " | ".join(f"{n} {ms:.4f}" for ms, n in sorted(v)))
PY
rm -f $OUT/*/kernel_bench.png
cd $OUT && tar czf /tmp/call.tgz . && rm -rf $OUT/* && mv /tmp/call.tgz $OUT/
