"""Session 45: each k-step of a consumer's later units (not the program's first), from slab_trace.py's raw
traces: the cycles its slab wait took (wait start to return) and the rest of the k-step (return to the next
k-step's wait start: the wgmma issue, the previous group's retire, the warpgroup barrier and the slab release),
step against main loop alone; and the wait of the k-steps issued after 0, 1 or 2 tile fills in the previous 1,500
cycles.

    python3 results/2026-12-06/session45/kstep_split.py results/2026-12-06/session45/call16/slab_trace.pt
"""

import statistics
import sys

import torch

ISSUE, WAIT, RETURN, STORE_READ, FILL = range(5)


def main() -> None:
    raw = torch.load(sys.argv[1])
    for cell in dict.fromkeys(c for c, _ in raw):
        num_k = -(-int(cell.split(":")[1]) // 64)  # (the committed configs' BLOCK_K)
        print(cell)
        for arm in [a for c, a in raw if c == cell]:  # step, main loop alone (and slab_trace.py --vary's)
            waits, rests, after_fills = [], [], {0: [], 1: [], 2: []}
            for p in raw[(cell, arm)]:
                fills = p[:, FILL][p[:, FILL] > 0]
                for s in range(num_k, p.shape[0] - 1):
                    issue, wait, ret, next_wait = (p[s, ISSUE].item(), p[s, WAIT].item(), p[s, RETURN].item(),
                                                   p[s + 1, WAIT].item())
                    if not (wait and ret and next_wait) or (s + 1) % num_k == 0:
                        continue
                    waits.append(ret - wait)
                    rests.append(next_wait - ret)
                    after_fills[min(2, int(((fills > issue - 1500) & (fills <= issue)).sum()))].append(ret - wait)
            mean = lambda xs: f"{statistics.mean(xs):.0f}" if xs else "-"  # noqa: E731
            print(f"  {arm}: per k-step wait {mean(waits)}, rest {mean(rests)}; wait after 0/1/2 fills "
                  + " / ".join(f"{mean(v)} (n={len(v)})" for v in after_fills.values()))


if __name__ == "__main__":
    main()
