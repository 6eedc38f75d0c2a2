"""Session 31's numbers from its CSVs:  python results/2026-12-04/session31/compare.py
1. call 1: three ping-pong consumer warpgroups (three_consumers.patch) against each cell's committed winner,
   AdamW int8 and bf16 (scripts/device/config_ab.py, REFERENCE=winner; bits checked first; '-': other bits,
   not timed: a config that does not fit runs the Triton kernel).
2. call 2: the instruction issue rate against a loop body's size (scripts/device/icache_probe.py), plotted
   into call2/icache_probe.png.
3. call 4: AdamW int8 and bf16 per consumer phase at BT >= 4096 (forge_mcore.bench.timeline).
4. call 5: ping-pong consumers of two warpgroups (two_warpgroup_consumers.patch) against each cell's winner.
The rule loops' stall samples (call 2's Nsight profile):
   python scripts/sass_stalls.py results/2026-12-04/session31/call2/ncu/4096x4096_1024_adamw-int8_gluon1_sass.csv.gz"""
import ast
import csv
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))

def ab_table(title: str, path: str) -> None:
    """Each candidate config's time over the cell's winner, per arm (< 1: slower; '-': other bits, not timed)."""
    print(title)
    tables: dict = {}
    for r in csv.DictReader(open(os.path.join(HERE, path))):
        cfg = ast.literal_eval(r["config"])
        table = tables.setdefault(r["arm"], {}).setdefault(r["cell"], {})
        if r["reference"] == "True":
            table["winner"] = f"{float(r['ms']) * 1e3:.1f} us"
        else:
            fast = " fd" if cfg["fast_division"] else ""
            name = f"w{cfg['num_warps']} s{cfg['num_stages']} k{cfg['block_k']}{fast}"
            table[name] = "-" if r["bits_equal_reference"] != "True" else f"{float(r['speedup']):.3f}"
    for arm, table in tables.items():
        names = list(dict.fromkeys(n for values in table.values() for n in values))
        print(f"  {arm:>10} {'cell':>18}  " + "  ".join(f"{n:>13}" for n in names))
        for cell, values in table.items():
            print(f"  {'':>10} {cell:>18}  " + "  ".join(f"{values.get(n, ''):>13}" for n in names))


ab_table("call 1: three ping-pong consumers (w12) against each cell's winner", "call1/int8/config_ab.csv")
ab_table("", "call1/bf16/config_ab.csv")
ab_table("call 5: two-warpgroup ping-pong consumers (w16) against each cell's winner", "call5/ab/config_ab.csv")

rows = list(csv.DictReader(open(os.path.join(HERE, "call2", "icache_probe.csv"))))
print("\ncall 2: instructions per ns per scheduler against the loop body (KB of SASS, 16 B per instruction)")
for warps in ("4", "8"):
    series = [(float(r["body_kb"]), float(r["instr_per_ns_per_scheduler"])) for r in rows if r["warps"] == warps]
    print(f"  {int(warps) // 4} warp(s) per scheduler: " + ", ".join(f"{kb:g} KB {rate:.2f}" for kb, rate in series))
    plt.plot([kb for kb, _ in series], [rate for _, rate in series], marker="o",
             label=f"{int(warps) // 4} warp(s) per scheduler")
plt.axvline(1133 * 16 / 1024, color="gray", linestyle="--", label="int8 rule loop (1,133 instructions)")
plt.xlabel("loop body (KB of SASS)")
plt.ylabel("instructions / ns / scheduler")
plt.ylim(bottom=0)
plt.title("H200: issue rate of a loop of independent FFMAs against its size")
plt.legend()
plt.savefig(os.path.join(HERE, "call2", "icache_probe.png"), dpi=100, bbox_inches="tight")

print("\ncall 4: AdamW int8 and bf16 per consumer phase (forge_mcore.bench.timeline; cycles are an SM's span, the "
      "median over SMs, and span / step time stands in for the clock)")
for name in ("lm_head", "wide"):
    for r in csv.DictReader(open(os.path.join(HERE, "call4", name, "timeline.csv"))):
        span, ms = float(r["span cycles"]), float(r["step_ms"])
        winner = " (winner)" if r["committed"] == "True" else ""
        loop, rule = float(r["main loop / span"]) * span, float(r["rule + stores issued / span"]) * span
        print(f"  {r['shape']:>12} {r['bt']:>6} {r['arm']:>10} {r['kernel']:>16}{winner:9} {ms:8.3f} ms  span "
              f"{span / 1e6:6.2f} M cycles ({span / ms / 1e6:.3f} per ns)  main loop {loop / 1e6:6.2f} M  "
              f"rule + stores {rule / 1e6:6.3f} M")
