"""Session 45: where each consumer's main loop (the k-loop around its wgmma) spends its Nsight stall samples:
at its slab barrier (the try-wait and its retry branch), issuing and retiring wgmma, or elsewhere.

    tar xzf results/2026-12-06/session45/call2/ncu.tgz -C /tmp
    python3 results/2026-12-06/session45/kloop_waits.py /tmp/ncu/1024x4096_1024_sgdm-bf16_gluon1_*_sass.csv.gz

Per k-loop: its samples (a sample is one warp at one instant, so with equal sampling rates the counts of two
kernels compare as warp-time) at the slab barrier's try-wait and retry branch, at wgmma issue and retire, after a
warpgroup bar.sync (the one before the slab release waits for every warp's wgmma to retire), and the rest (the
loop's own scalar instructions) with its top stall reasons.
"""

import re
import sys

sys.path.insert(0, "scripts")
from sass_stalls import read_rows, sample_count, shares, stall_counts  # noqa: E402

KINDS = ("slab wait", "wgmma", "after bar.sync", "rest")


def main() -> None:
    for path in sys.argv[1:]:
        header, rows = read_rows(path)
        source = header.index("Source")
        text, addresses = [r[source] for _, r in rows], [a for a, _ in rows]
        at = {a: i for i, a in enumerate(addresses)}
        total = sum(sample_count(header, r) for _, r in rows)
        print(f"{path}: {total:.0f} samples")
        for i, t in enumerate(text):
            target = re.search(r"BRA\b.*?0x([0-9a-f]+)", t)
            if not (target and int(target.group(1), 16) < addresses[i] and int(target.group(1), 16) in at):
                continue
            body = range(at[int(target.group(1), 16)], i + 1)
            if len(body) > 120 or not any("HGMMA" in text[j] for j in body):
                continue
            n = [sample_count(header, rows[j][1]) for j in body]
            kind = []
            for j in body:
                if "TRYWAIT" in text[j] or "TRYWAIT" in text[j - 1]:
                    kind.append("slab wait")
                elif re.search(r"HGMMA|DEPBAR|WARPGROUP", text[j]):
                    kind.append("wgmma")
                elif "BAR.SYNC" in text[j - 1]:
                    kind.append("after bar.sync")
                else:
                    kind.append("rest")
            parts = {k: sum(c for c, x in zip(n, kind) if x == k) for k in KINDS}
            rest = stall_counts(header, [rows[j] for j, x in zip(body, kind) if x == "rest"])
            print(f"  k-loop at {hex(addresses[body[0]])}: {sum(n):.0f} samples ({sum(n) / total:.3f}); "
                  + ", ".join(f"{k} {v:.0f}" for k, v in parts.items()) + f" ({shares(rest, 3)})")


if __name__ == "__main__":
    main()
